#!/usr/bin/python3
# SPDX-License-Identifier: BSD-3-Clause
"""check_ud_pcap.py PCAP FRAMES: the capture of test_ud_wire's veth, read by tools we did not
write. Every RoCEv2 frame dpverbs sent (UDP to 4791, not from inject_roce.py's MAC) must
- be one of FRAMES frames (the datagrams the test sends over the wire),
- decode in tshark as InfiniBand over UDP 4791 without a malformed-packet mark: a UD SEND
  ONLY (0x64) or SEND ONLY WITH IMMEDIATE (0x65) with DETH (and ImmDt), the ICRC tshark
  shows equal to the frame's last 4 bytes,
- carry the ICRC scapy computes (scapy.contrib.roce, IPv4) and the one computed here from
  IBA A17.3.3 (check_roce_pcap.py, IPv4 and IPv6),
- have IPv4 DF and a right header checksum, UDP checksum 0, a source port in 0xC000-0xFFFF.
The injected frames check the checker: scapy's ICRC differs exactly for the corrupted ones.
Exit 77 (skipped) without scapy or tshark."""
import os
import struct
import subprocess
import sys

try:
    from scapy.all import IP, UDP, Ether, IPv6, raw, rdpcap
    from scapy.contrib.roce import BTH
except ImportError:
    print("scapy missing: apt-get install python3-scapy")
    sys.exit(77)

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), '..', 'unit'))
from check_roce_pcap import icrc_here  # noqa: E402

INJECTED = '02:99:99:99:99:99'
checks = fails = 0


def check(cond, what):
    global checks, fails
    checks += 1
    if not cond:
        fails += 1
        print('FAIL ' + what)


def tshark_rows(pcap):
    fields = ['frame.number', 'eth.src', 'infiniband.bth.opcode', 'infiniband.deth.q_key',
              'infiniband.deth.srcqp', 'infiniband.immdt', 'infiniband.invariant.crc',
              '_ws.malformed']
    # Wireshark 4.0's Mellanox EoIB heuristic throws on a UD payload of 0 bytes (its own bug:
    # "Malformed Packet: Mellanox EoIB" and no ICRC shown): it is no part of RoCE, so off
    cmd = ['tshark', '-r', pcap, '-d', 'udp.port==4791,infiniband',
           '--disable-heuristic', 'mellanox_eoib', '-Y', 'udp.dstport==4791',
           '-T', 'fields', '-E', 'separator=|', '-E', 'occurrence=f']
    for f in fields:
        cmd += ['-e', f]
    out = subprocess.run(cmd, capture_output=True, text=True, check=True).stdout
    return {int(r[0]): dict(zip(fields, r)) for r in (line.split('|') for line in
                                                       out.splitlines())}


def scapy_icrc(frame):
    q = Ether(frame)
    q[BTH].icrc = None
    return raw(q)[-4:]


def main():
    if subprocess.run(['which', 'tshark'], capture_output=True).returncode != 0:
        print("tshark missing: apt-get install tshark")
        return 77
    pcap, want = sys.argv[1], int(sys.argv[2])
    rows = tshark_rows(pcap)
    ours = injected = bad_icrc_seen = 0
    for i, pkt in enumerate(rdpcap(pcap), 1):
        if UDP not in pkt or pkt[UDP].dport != 4791:
            continue
        f = raw(pkt)
        v6 = IPv6 in pkt
        l3 = raw(pkt[IPv6] if v6 else pkt[IP])
        mine = struct.pack('<I', icrc_here(l3[:-4], v6))
        if pkt.src == INJECTED:
            injected += 1
            # whole IPv4 frames with an ICRC (not the truncated ones)
            if not v6 and pkt[IP].len == len(l3) >= 20 + 8 + 12 + 4 and BTH in pkt:
                bad_icrc_seen += scapy_icrc(f) != f[-4:]
            continue
        ours += 1
        t = rows.get(i, {})
        op = int(t.get('infiniband.bth.opcode', '') or '-1', 0)
        check(op in (0x64, 0x65) and t.get('_ws.malformed', '') == '',
              f"frame {i}: tshark opcode {t.get('infiniband.bth.opcode')} malformed "
              f"{t.get('_ws.malformed')!r}")
        check(t.get('infiniband.deth.srcqp', '') != '', f"frame {i}: tshark decodes no DETH")
        check((op == 0x65) == (t.get('infiniband.immdt', '') != ''), f"frame {i}: ImmDt")
        crc = t.get('infiniband.invariant.crc', '')
        check(crc != '' and struct.pack('>I', int(crc, 0)) == f[-4:],
              f"frame {i}: tshark ICRC {crc} != {f[-4:].hex()}")
        check(mine == f[-4:], f"frame {i}: ICRC {f[-4:].hex()}, computed here {mine.hex()}")
        if not v6:
            check(scapy_icrc(f) == f[-4:], f"frame {i}: scapy ICRC {scapy_icrc(f).hex()} "
                  f"!= {f[-4:].hex()}")
            ip = pkt[IP]
            again = IP(raw(ip))
            del again.chksum
            check(ip.flags == 'DF' and IP(raw(again)).chksum == ip.chksum and ip.ihl == 5,
                  f"frame {i}: IPv4 DF / checksum")
        u = pkt[UDP]
        check(u.chksum == 0 and 0xC000 <= u.sport <= 0xFFFF,
              f"frame {i}: UDP checksum {u.chksum} source port {u.sport}")
    check(ours == want, f"{ours} RoCE frames from dpverbs on the wire, {want} expected")
    check(injected > 0 and bad_icrc_seen == 1,
          f"{injected} injected frames, scapy saw {bad_icrc_seen} IPv4 ICRCs wrong (1 was)")
    print(f"{ours} frames of dpverbs, {injected} injected: {checks - fails} checks passed, "
          f"{fails} failed")
    return 1 if fails else 0


if __name__ == '__main__':
    sys.exit(main())
