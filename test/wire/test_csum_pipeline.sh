#!/bin/sh
# SPDX-License-Identifier: BSD-3-Clause
# examples/csum_pipeline: 99 frames (IPv4/UDP, IPv4/TCP, IPv6/UDP, all with wrong checksums)
# made by scapy, received through a RAW_PACKET QP from net_pcap, rewritten and sent with
# IP_CSUM; tshark reads what came out: every frame, MACs swapped, TTL/hop limit one less,
# every checksum right.
set -u
prog=$(realpath "$1")
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
. "$(dirname "$0")/../lib/check.sh"
unset DPV_EAL_ARGS
cd "$dir"
/usr/bin/python3 - <<'PY'
from scapy.all import IP, IPv6, TCP, UDP, Ether, Raw, wrpcap
frames = []
for i in range(99):
    l2 = Ether(src="02:00:00:00:00:01", dst="02:00:00:00:00:02")
    if i % 3 == 0:
        p = l2 / IP(src="10.0.0.1", dst="10.0.0.2", ttl=64, chksum=0x1234) / UDP(sport=1000 + i, dport=53, chksum=0x5555) / Raw(bytes(range(i % 50 + 1)))
    elif i % 3 == 1:
        p = l2 / IP(src="10.0.0.1", dst="10.0.0.2", ttl=64, chksum=0) / TCP(sport=2000, dport=80, seq=i, chksum=0x7777) / Raw(b"x" * (i + 10))
    else:
        p = l2 / IPv6(src="fd00::1", dst="fd00::2", hlim=64) / UDP(sport=3000, dport=4000, chksum=0x9999) / Raw(b"y" * i)
    frames.append(p)
wrpcap("in.pcap", frames)
PY
"$prog" -i in.pcap -o out.pcap -n 99 > out.txt 2>&1
check "the pipeline forwards 99 ($(tail -1 out.txt))" "grep -q 'received 99, forwarded 99' out.txt"
# dst,src,ttl,hlim,ip status,tcp status,udp status (status 1 = good)
tshark -r out.pcap -o ip.check_checksum:TRUE -o tcp.check_checksum:TRUE \
	-o udp.check_checksum:TRUE -T fields -E separator=, -e eth.dst -e eth.src -e ip.ttl \
	-e ipv6.hlim -e ip.checksum.status -e tcp.checksum.status -e udp.checksum.status \
	2>/dev/null | sort | uniq -c | awk '{print $1, $2}' > fields.txt
cat fields.txt
check "33 IPv4/UDP: swapped, TTL 63, checksums good" "grep -qx '33 02:00:00:00:00:01,02:00:00:00:00:02,63,,1,,1' fields.txt"
check "33 IPv4/TCP: swapped, TTL 63, checksums good" "grep -qx '33 02:00:00:00:00:01,02:00:00:00:00:02,63,,1,1,' fields.txt"
check "33 IPv6/UDP: swapped, hop limit 63, checksum good" "grep -qx '33 02:00:00:00:00:01,02:00:00:00:00:02,,63,,,1' fields.txt"
n=$(tshark -r out.pcap 2>/dev/null | wc -l)
check "99 frames out (got $n)" "[ '$n' = 99 ]"
finish "csum_pipeline"
