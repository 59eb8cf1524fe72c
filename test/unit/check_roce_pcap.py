#!/usr/bin/python3
# SPDX-License-Identifier: BSD-3-Clause
"""check_roce_pcap.py TEST_ROCE_WIRE: run the unit test with a pcap and an expectation file
(the fields it wrote, one frame a line), then read every frame back with tools we did not
write and compare field by field:
- scapy (scapy.contrib.roce): Ethernet/VLAN, IPv4 (TOS, TTL, DF, ID, header checksum) or
  IPv6 (traffic class, flow label, hop limit), UDP (ports, length, checksum 0), BTH, AETH,
  and the ICRC scapy computes (IPv4; scapy has none for IPv6);
- tshark's InfiniBand dissector (RoCEv2 on UDP 4791): BTH and every extension header it knows
  (DETH, RETH, AtomicETH, AETH, AtomicAckETH, ImmDt, IETH), payload + pad length, ICRC;
- an ICRC computed here with zlib.crc32 over the masked pseudo-header of IBA A17.3.3, IPv4
  and IPv6, and XRCETH with the headers after it (tshark 4.0 does not dissect XRC) decoded
  here from the IBA layout.
Exit 77 (meson: skipped) when scapy or tshark is missing."""
import os
import struct
import subprocess
import sys
import tempfile
import zlib

try:
    from scapy.all import IP, UDP, Dot1Q, Ether, IPv6, raw, rdpcap
    from scapy.contrib.roce import AETH, BTH
except ImportError:
    print("scapy missing: apt-get install python3-scapy")
    sys.exit(77)

checks = fails = 0


def check(cond, frame, what):
    global checks, fails
    checks += 1
    if not cond:
        fails += 1
        print(f"FAIL frame {frame}: {what}")


# IBA 9.2: the extension headers of each operation (the 5 low bits of the opcode)
OPS = {0: [], 1: [], 2: [], 3: ['imm'], 4: [], 5: ['imm'], 6: ['reth'], 7: [], 8: [],
       9: ['imm'], 10: ['reth'], 11: ['reth', 'imm'], 12: ['reth'], 13: ['aeth'], 14: [],
       15: ['aeth'], 16: ['aeth'], 17: ['aeth'], 18: ['aeth', 'atomicack'], 19: ['atomic'],
       20: ['atomic'], 22: ['ieth'], 23: ['ieth']}
RESPONSES = {13, 14, 15, 16, 17, 18}
LEN = {'deth': 8, 'xrceth': 4, 'reth': 16, 'atomic': 28, 'aeth': 4, 'atomicack': 8, 'imm': 4,
       'ieth': 4}


def ext_headers(opcode):
    tr, op = opcode & 0xE0, opcode & 0x1F
    if tr == 0x60:
        return ['deth'] + OPS[op]
    if tr == 0xA0 and op not in RESPONSES:
        return ['xrceth'] + OPS[op]
    return OPS[op]


def icrc_here(l3, v6):
    """zlib's CRC-32 of 8 bytes of 0xFF, then IP/UDP/BTH with the variant fields set to ones,
    then the rest up to the ICRC; on the wire least significant byte first."""
    m = bytearray(l3)
    if v6:
        m[0] |= 0x0F
        m[1:4] = b'\xff\xff\xff'
        m[7] = 0xFF
        ip = 40
    else:
        m[1] = 0xFF
        m[8] = 0xFF
        m[10:12] = b'\xff\xff'
        ip = 20
    m[ip + 6:ip + 8] = b'\xff\xff'
    m[ip + 8 + 4] = 0xFF
    return zlib.crc32(b'\xff' * 8 + bytes(m)) & 0xFFFFFFFF


def parse_ext_here(bth_tail, names):
    """Decode extension headers from their IBA layout (big-endian fields)."""
    out, off = {}, 0
    for n in names:
        b = bth_tail[off:off + LEN[n]]
        if n == 'deth':
            out['qkey'], out['sqpn'] = struct.unpack('>II', b)
        elif n == 'xrceth':
            out['srqn'] = struct.unpack('>I', b)[0] & 0xFFFFFF
        elif n == 'reth':
            out['va'], out['rkey'], out['dmalen'] = struct.unpack('>QII', b)
        elif n == 'atomic':
            out['ava'], out['arkey'], out['swap'], out['cmp'] = struct.unpack('>QIQQ', b)
        elif n == 'aeth':
            v = struct.unpack('>I', b)[0]
            out['syndrome'], out['msn'] = v >> 24, v & 0xFFFFFF
        elif n == 'atomicack':
            out['orig'] = struct.unpack('>Q', b)[0]
        elif n == 'imm':
            out['imm'] = struct.unpack('>I', b)[0]
        elif n == 'ieth':
            out['ieth'] = struct.unpack('>I', b)[0]
        off += LEN[n]
    return out, off


def check_scapy(i, frame, e):
    p = Ether(frame)
    check((Dot1Q in p) == bool(e['vlan']), i, 'VLAN tag')
    v6 = IPv6 in p
    if v6:
        ip = p[IPv6]
        check(ip.tc == e['tc'] and ip.fl == e['fl'] and ip.hlim == e['hop'] and ip.nh == 17,
              i, f"IPv6 tc/fl/hlim {ip.tc}/{ip.fl}/{ip.hlim}")
        check(ip.plen == len(ip.payload), i, 'IPv6 payload length')
    else:
        ip = p[IP]
        again = ip.copy()
        del again.chksum
        check(ip.tos == e['tc'] and ip.ttl == e['hop'] and ip.flags == 'DF' and ip.frag == 0
              and ip.id == e['ipid'] and ip.ihl == 5, i, 'IPv4 TOS/TTL/DF/ID')
        check(IP(raw(again)).chksum == ip.chksum, i, 'IPv4 header checksum')
        check(ip.len == len(raw(ip)), i, 'IPv4 total length')
    u = p[UDP]
    check(u.sport == e['sport'] and u.dport == 4791 and u.chksum == 0 and
          u.len == len(raw(u)), i, f"UDP {u.sport}->{u.dport} len {u.len} csum {u.chksum}")
    check(0xC000 <= u.sport <= 0xFFFF, i, 'source port in 0xC000-0xFFFF')
    b = p[BTH]
    got = (b.opcode, b.solicited, b.migreq, b.padcount, b.version, b.pkey, b.fecn, b.becn,
           b.resv6, b.dqpn, b.ackreq, b.resv7, b.psn)
    want = (e['opcode'], e['se'], e['mig'], e['pad'], 0, e['pkey'], e['fecn'], e['becn'], 0,
            e['dqpn'], e['ackreq'], 0, e['psn'])
    check(got == want, i, f"BTH {got} != {want}")
    if AETH in p:
        check((p[AETH].syndrome, p[AETH].msn) == (e['syndrome'], e['msn']), i, 'AETH')
    l3 = raw(ip)
    mine = icrc_here(l3[:-4], v6)
    check(mine == e['icrc'] and frame[-4:] == struct.pack('<I', mine), i,
          f"ICRC here {mine:08x}, written {e['icrc']:08x}")
    if not v6:
        q = Ether(frame)
        q[BTH].icrc = None
        check(raw(q)[-4:] == frame[-4:], i, f"scapy ICRC {raw(q)[-4:].hex()} != "
              f"{frame[-4:].hex()}")
    names = ext_headers(e['opcode'])
    bth_tail = raw(b)[12:-4]
    ext, hl = parse_ext_here(bth_tail, names)
    for k, v in ext.items():
        check(v == e[k], i, f"{k} = {v}, wrote {e[k]}")
    check(len(bth_tail) - hl == e['paylen'] + e['pad'], i, 'payload + pad length')
    return v6


TSHARK_FIELDS = ['infiniband.bth.opcode', 'infiniband.bth.se', 'infiniband.bth.m',
                 'infiniband.bth.padcnt', 'infiniband.bth.tver', 'infiniband.bth.p_key',
                 'infiniband.bth.destqp', 'infiniband.bth.a', 'infiniband.bth.psn',
                 'infiniband.deth.q_key', 'infiniband.deth.srcqp', 'infiniband.reth.va',
                 'infiniband.reth.r_key', 'infiniband.reth.dmalen',
                 'infiniband.atomiceth.swapdt', 'infiniband.atomiceth.cmpdt',
                 'infiniband.aeth.syndrome', 'infiniband.aeth.msn',
                 'infiniband.atomicacketh.origremdt', 'infiniband.immdt', 'infiniband.ieth',
                 'data.len', 'infiniband.invariant.crc', 'udp.srcport', 'udp.dstport']


def num(s):
    s = s.split(',')[0]
    if s in ('', 'False'):
        return 0
    if s == 'True':
        return 1
    return int(s, 0)


def check_tshark(i, t, e):
    bth = [num(t[f'infiniband.bth.{k}']) for k in
           ('opcode', 'se', 'm', 'padcnt', 'tver', 'p_key', 'destqp', 'a', 'psn')]
    want = [e['opcode'], e['se'], e['mig'], e['pad'], 0, e['pkey'], e['dqpn'], e['ackreq'],
            e['psn']]
    check(bth == want, i, f"tshark BTH {bth} != {want}")
    check(num(t['udp.srcport']) == e['sport'] and num(t['udp.dstport']) == 4791, i,
          'tshark UDP ports')
    names = ext_headers(e['opcode'])
    if e['opcode'] & 0xE0 == 0xA0:
        return      # tshark 4.0 names XRC opcodes but decodes none of their headers
    tf = {'qkey': 'deth.q_key', 'sqpn': 'deth.srcqp', 'syndrome': 'aeth.syndrome',
          'msn': 'aeth.msn', 'orig': 'atomicacketh.origremdt', 'imm': 'immdt', 'ieth': 'ieth'}
    want = {}
    for n in names:
        want.update({'reth': {'va': 'reth.va', 'rkey': 'reth.r_key', 'dmalen': 'reth.dmalen'},
                     'atomic': {'ava': 'reth.va', 'arkey': 'reth.r_key',
                                'swap': 'atomiceth.swapdt', 'cmp': 'atomiceth.cmpdt'}}
                    .get(n, {k: v for k, v in tf.items()
                             if v.startswith({'imm': 'immdt', 'ieth': 'ieth'}.get(n, n))}))
    for k, f in want.items():
        s = t['infiniband.' + f].split(',')[0]
        v = int(s, 16) if f in ('immdt', 'ieth') else num(s)
        check(v == e[k], i, f"tshark {f} = {v}, wrote {e[k]}")
    check(num(t['data.len']) == e['paylen'] + e['pad'], i,
          f"tshark payload+pad {t['data.len']} != {e['paylen']} + {e['pad']}")
    crc = num(t['infiniband.invariant.crc'])
    check(crc == struct.unpack('>I', struct.pack('<I', e['icrc']))[0], i,
          f"tshark ICRC {crc:08x}")


def tshark_rows(pcap):
    cmd = ['tshark', '-r', pcap, '-d', 'udp.port==4791,infiniband', '-T', 'fields',
           '-E', 'separator=|', '-E', 'occurrence=f']
    for f in TSHARK_FIELDS:
        cmd += ['-e', f]
    out = subprocess.run(cmd, capture_output=True, text=True, check=True).stdout
    return [dict(zip(TSHARK_FIELDS, line.split('|'))) for line in out.splitlines()]


def main():
    if subprocess.run(['which', 'tshark'], capture_output=True).returncode != 0:
        print("tshark missing: apt-get install tshark")
        return 77
    with tempfile.TemporaryDirectory() as d:
        pcap, exp = os.path.join(d, 'roce.pcap'), os.path.join(d, 'roce.expect')
        subprocess.run([sys.argv[1], pcap, exp], check=True, stdout=subprocess.DEVNULL)
        frames = [bytes(f) for f in rdpcap(pcap)]
        expect = [{k: int(v) for k, v in (kv.split('=') for kv in line.split())}
                  for line in open(exp)]
        rows = tshark_rows(pcap)
    check(len(frames) == len(expect) == len(rows) and frames, 0,
          f"{len(frames)} frames, {len(expect)} expectations, {len(rows)} tshark rows")
    v6 = 0
    for i, (f, e, t) in enumerate(zip(frames, expect, rows), 1):
        v6 += check_scapy(i, f, e)
        check_tshark(i, t, e)
    print(f"{len(frames)} frames ({len(frames) - v6} IPv4, {v6} IPv6): "
          f"{checks} checks passed or failed, {fails} failed")
    print(f"{checks - fails} passed, {fails} failed")
    return 1 if fails else 0


if __name__ == '__main__':
    sys.exit(main())
