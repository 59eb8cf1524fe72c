#!/bin/sh
# SPDX-License-Identifier: BSD-3-Clause
# run_recv_netns.sh PROGRAM: a net_tap port whose interface is moved into a namespace of this
# test's own (10.98.0.1/24); once PROGRAM is ready to receive, the namespace sends it UDP: one
# datagram through a socket, two frames through a packet socket (scapy), one of them with a
# wrong checksum, and one datagram to another port.
set -u
. "$(dirname "$0")/../lib/net.sh"
prog=$1
dir=$(mktemp -d)
ns=dpvrx$$
ifname=dpvr$$
cleanup() {
	net_cleanup
	rm -rf "$dir"
}
trap cleanup EXIT
prog_start "--vdev=net_tap_r0,iface=$ifname $TAP_QUIET" "$prog"
netns_add "$ns"
netns_move "$ns" "$ifname" 10.98.0.1/24
ip -n "$ns" neigh add 10.98.0.2 lladdr 02:00:00:00:00:02 dev "$ifname"
touch "$dir/go"
while kill -0 $ppid 2>/dev/null && [ ! -e "$dir/done" ]; do sleep 0.05; done
ip netns exec "$ns" /usr/bin/python3 - "$ifname" <<'PY'
import socket, sys
from scapy.all import IP, UDP, Ether, Raw, sendp
ifname = sys.argv[1]
s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
s.sendto(b"socket datagram", ("10.98.0.2", 7777))
s.sendto(b"other port", ("10.98.0.2", 7778))
l2 = Ether(src=open("/sys/class/net/%s/address" % ifname).read().strip(), dst="02:00:00:00:00:02")
good = l2 / IP(src="10.98.0.1", dst="10.98.0.2") / UDP(sport=4242, dport=7777) / Raw(b"goodsum")
bad = l2 / IP(src="10.98.0.1", dst="10.98.0.2") / UDP(sport=4242, dport=7777, chksum=0x1234) / Raw(b"badsum")
sendp([good, bad], iface=ifname, verbose=False)
PY
touch "$dir/close"
wait $ppid
rc=$?
grep -v -e '^EAL' -e TELEMETRY "$dir/prog.out"
exit $rc
