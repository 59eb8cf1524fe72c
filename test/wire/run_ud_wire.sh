#!/bin/sh
# SPDX-License-Identifier: BSD-3-Clause
# run_ud_wire.sh PROGRAM: UD between two ports on a wire — net_af_packet on both ends of a veth
# pair of this run's own (qdisc_bypass=0, so that the capture on the second end sees what both
# send) — while dumpcap captures it and inject_roce.py sends crafted frames from the kernel's
# side once the program says where (DPV_TEST_DIR/info); then check_ud_pcap.py reads the
# capture. IPv6 is off on both ends so that the kernel sends nothing of its own.
set -u
. "$(dirname "$0")/../lib/net.sh"
prog=$1
here=$(dirname "$0")
dir=$(mktemp -d)
cap=
inj=
cleanup() {
	[ -n "$inj" ] && kill "$inj" 2>/dev/null
	[ -n "$cap" ] && kill "$cap" 2>/dev/null
	wait 2>/dev/null
	net_cleanup
	rm -rf "$dir"
}
trap cleanup EXIT
for t in dumpcap tshark; do
	command -v $t >/dev/null || { echo "$t missing"; exit 77; }
done
/usr/bin/python3 -c 'import scapy.contrib.roce' 2>/dev/null || { echo "scapy missing"; exit 77; }
veth_up dpu   # $a, $b: up, IPv6 off
dumpcap -q -P -i "$b" -w "$dir/wire.pcap" 2>"$dir/dumpcap.log" &
cap=$!
wait_line "Capturing on" "$dir/dumpcap.log" 100
sleep 0.5
/usr/bin/python3 "$here/inject_roce.py" "$dir" "$a" &
inj=$!
DPV_TEST_DIR=$dir \
DPV_EAL_ARGS="--vdev=net_af_packet0,iface=$a,qdisc_bypass=0 --vdev=net_af_packet1,iface=$b,qdisc_bypass=0 $AF_PACKET_QUIET" \
	"$prog"
rc=$?
wait "$inj" || rc=1
inj=
sleep 0.5
kill -INT "$cap"
wait "$cap"
cap=
# 60 exchanges (3 GIDs x 5 sizes x SEND / SEND_WITH_IMM x both ways), one multicast datagram,
# one after the transmit faults (the 5 they dropped never reached the wire)
/usr/bin/python3 "$here/check_ud_pcap.py" "$dir/wire.pcap" 62 || rc=1
[ -n "${DPV_TEST_KEEP:-}" ] && cp "$dir/wire.pcap" "$DPV_TEST_KEEP"
exit $rc
