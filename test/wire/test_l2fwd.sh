#!/bin/sh
# SPDX-License-Identifier: BSD-3-Clause
# examples/l2fwd_verbs between two net_pcap ports: 64 frames of 60..1514 bytes made by scapy go
# in through one device's QP and out through the other's, each identical but for the swapped
# MAC addresses, in order (scapy compares).
set -u
prog=$(realpath "$1")
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
unset DPV_EAL_ARGS
cd "$dir"
/usr/bin/python3 -c '
from scapy.all import IP, UDP, Ether, Raw, wrpcap
wrpcap("in.pcap", [Ether(src="02:00:00:00:00:01", dst="02:00:00:00:00:02") / IP() /
                   UDP(sport=i) / Raw(bytes((i + k) & 255 for k in range(18 + i * 23)))
                   for i in range(64)])'
"$prog" -n 64 > out.txt 2>&1
rc=$?
cat out.txt
/usr/bin/python3 -c '
import sys
from scapy.all import rdpcap
i = [bytes(p) for p in rdpcap("in.pcap")]
o = [bytes(p) for p in rdpcap("out.pcap")]
good = sum(1 for a, b in zip(i, o) if b == a[6:12] + a[0:6] + a[12:])
bad = len(i) - good
print(f"l2fwd: {good} passed, {bad} failed")
sys.exit(0 if bad == 0 and len(o) == len(i) else 1)' || rc=1
exit $rc
