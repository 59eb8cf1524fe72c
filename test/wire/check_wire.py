#!/usr/bin/python3
# SPDX-License-Identifier: BSD-3-Clause
"""Compare the frames of a pcap file (read with scapy) with an expectation file.

Each expectation line is "raw <hex>": the frame must be exactly these bytes; or
"csum <hex>": these bytes with the IPv4 header and TCP/UDP checksums scapy computes (the
checksum fields are compared modulo the one's-complement equivalence of 0 and 0xFFFF for TCP
and IPv4); or "tso <mss> <header hex> <payload hex>": the segments the TSO contract makes of
them, built here by scapy; or "ip <hex>": these bytes with only the IPv4 header checksum
computed (a fragment's L4 checksum stays as it was). Prints one line per failure and "N passed, N failed".

check_wire.py --same A.pcap B.pcap: the frames of two captures are the same, in order (checksum
fields compared modulo 0/0xFFFF, as above)."""
import sys

from scapy.all import IP, IPv6, TCP, UDP, Ether, Raw, rdpcap


def with_ip_checksum(raw):
    pkt = Ether(raw)
    del pkt[IP].chksum
    return bytes(Ether(bytes(pkt)))


def with_checksums(raw):
    pkt = Ether(raw)
    for layer in (IP, TCP, UDP):
        if layer in pkt:
            del pkt[layer].chksum
    return bytes(Ether(bytes(pkt)))


def tso_segments(mss, hdr, payload):
    """Segment i: payload [i*mss, (i+1)*mss); IPv4 ID + i, lengths, TCP seq + i*mss, FIN and
    PSH on the last only, CWR on the first only; checksums computed by scapy."""
    n = max(1, -(-len(payload) // mss))
    out = []
    for i in range(n):
        p = Ether(hdr)
        if IP in p:
            p[IP].id = (p[IP].id + i) & 0xFFFF
            p[IP].len = None
            p[IP].chksum = None
        if IPv6 in p:
            p[IPv6].plen = None
        tcp = p[TCP]
        tcp.seq = (tcp.seq + i * mss) & 0xFFFFFFFF
        flags = int(tcp.flags)
        if i != n - 1:
            flags &= ~0x09
        if i != 0:
            flags &= ~0x80
        tcp.flags = flags
        tcp.chksum = None
        tcp.remove_payload()
        tcp.add_payload(Raw(payload[i * mss:(i + 1) * mss]))
        out.append(bytes(p))
    return out


def same_modulo_ffff(a, b):
    if len(a) != len(b):
        return False
    diff = [i for i in range(len(a)) if a[i] != b[i]]
    if not diff:
        return True
    pkt = Ether(a)
    # allowed: a TCP or IPv4 checksum field written as 0x0000 where 0xFFFF is computed, or back
    offsets = []
    if IP in pkt:
        l3 = len(pkt) - len(pkt[IP])
        offsets.append(l3 + 10)
        if TCP in pkt:
            offsets.append(len(pkt) - len(pkt[TCP]) + 16)
    if IPv6 in pkt and TCP in pkt:
        offsets.append(len(pkt) - len(pkt[TCP]) + 16)
    for off in offsets:
        pair = {bytes(a[off:off + 2]), bytes(b[off:off + 2])}
        if pair == {b"\x00\x00", b"\xff\xff"}:
            diff = [i for i in diff if i not in (off, off + 1)]
    return not diff


def report(i, want, got):
    diff = next((k for k in range(min(len(want), len(got))) if want[k] != got[k]),
                min(len(want), len(got)))
    lo = max(0, diff - 16)
    print(f"FAIL: frame {i} ({len(got)} bytes, {len(want)} expected) differs at byte {diff}:"
          f" expected ..{want[lo:diff + 16].hex()}.. got ..{got[lo:diff + 16].hex()}..")


def same(a_file, b_file):
    a = [bytes(p) for p in rdpcap(a_file)]
    b = [bytes(p) for p in rdpcap(b_file)]
    passed, failed = 0, 0 if len(a) == len(b) else 1
    if failed:
        print(f"FAIL: {len(a)} frames in {a_file}, {len(b)} in {b_file}")
    for i, (got, want) in enumerate(zip(a, b)):
        if same_modulo_ffff(got, want):
            passed += 1
        else:
            failed += 1
            report(i, want, got)
    print(f"same frames: {passed} passed, {failed} failed")
    return 1 if failed else 0


def main():
    if sys.argv[1] == "--same":
        return same(sys.argv[2], sys.argv[3])
    frames = [bytes(p) for p in rdpcap(sys.argv[1])]
    expected = []
    for line in open(sys.argv[2]):
        f = line.split()
        if not f:
            continue
        if f[0] == "tso":
            pay = b"" if f[3] == "-" else bytes.fromhex(f[3])
            expected += [["csum", s.hex()] for s in tso_segments(int(f[1]), bytes.fromhex(f[2]), pay)]
        else:
            expected.append(f)
    passed = failed = 0
    if len(frames) != len(expected):
        print(f"FAIL: {len(frames)} frames on the wire, {len(expected)} expected")
        failed += 1
    for i, (exp, got) in enumerate(zip(expected, frames)):
        kind, data = exp[0], bytes.fromhex(exp[1])
        want = data if kind == "raw" else with_ip_checksum(data) if kind == "ip" else with_checksums(data)
        if kind == "csum" and len(got) < 60 and len(want) < 60:
            got = got[:len(want)]
        if (kind == "raw" and got == want) or (kind != "raw" and same_modulo_ffff(got, want)):
            passed += 1
        else:
            failed += 1
            report(i, want, got)
    print(f"wire: {passed} passed, {failed} failed")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
