#!/bin/sh
# SPDX-License-Identifier: BSD-3-Clause
# run_roce_neigh_netns.sh PROGRAM: dpverbs on net_af_packet at one end of a veth pair with
# 10.97.0.2 and fd00:97::2 (port_addr in a configuration of its own), the Linux kernel at the
# other end in a namespace with 10.97.0.1/24 and fd00:97::1/64, tshark capturing there.
# PROGRAM (test_roce_neigh_wire) resolves the kernel's two addresses; then the namespace's
# neighbour table is flushed and a datagram to each of dpverbs' addresses makes the kernel
# resolve them. Checked: dpverbs got the kernel interface's MAC for both; the kernel's table
# has dpverbs' MAC for both; the capture decodes (tshark) as ARP request/reply and ICMPv6
# NS/NA from dpverbs with the right fields and good ICMPv6 checksums.
set -u
. "$(dirname "$0")/../lib/net.sh"
prog=$1
dir=$(mktemp -d)
ns=dpvrn$$; a=dpvra$$; b=dpvrb$$
cap_pid=; ppid=
. "$(dirname "$0")/../lib/check.sh"
cleanup() {
	[ -n "$cap_pid" ] && kill "$cap_pid" 2>/dev/null
	[ -n "$ppid" ] && kill "$ppid" 2>/dev/null
	net_cleanup
	rm -rf "$dir"
}
trap cleanup EXIT
veth_add "$a" "$b" || exit 1
# the kernel's end on dpverbs' side stays silent: no IPv6 (no router solicitation, no ND)
sysctl -qw net.ipv6.conf."$a".disable_ipv6=1
ip link set "$a" up
netns_add "$ns"
netns_move "$ns" "$b" 10.97.0.1/24 fd00:97::1/64
kmac=$(ip netns exec "$ns" cat /sys/class/net/"$b"/address)

ip netns exec "$ns" tshark -i "$b" -f "arp or icmp6" -w "$dir/cap.pcapng" > "$dir/tshark.log" 2>&1 &
cap_pid=$!
wait_line "Capturing on" "$dir/tshark.log" 100

printf 'port_addr = net_af_packet0 10.97.0.2 fd00:97::2\n' > "$dir/dpv.conf"
export DPV_TEST_READY=$dir/ready DPV_TEST_GO=$dir/go DPV_TEST_DONE=$dir/done DPV_TEST_CLOSE=$dir/close
DPV_CONFIG="$dir/dpv.conf" \
DPV_EAL_ARGS="--vdev=net_af_packet0,iface=$a $AF_PACKET_QUIET" \
	"$prog" "$dir/result" > "$dir/prog.out" 2>&1 &
ppid=$!
wait_file "$dir/ready" 200
touch "$dir/go"
for i in $(seq 400); do [ -e "$dir/done" ] || ! kill -0 "$ppid" 2>/dev/null && break; sleep 0.05; done

# the kernel learned dpverbs' MACs from its requests: forget them, so that it must ask
ip -n "$ns" neigh flush dev "$b"
ip netns exec "$ns" /usr/bin/python3 -c '
import socket
for fam, addr in ((socket.AF_INET, "10.97.0.2"), (socket.AF_INET6, "fd00:97::2")):
    socket.socket(fam, socket.SOCK_DGRAM).sendto(b"hello", (addr, 9))
'
for i in $(seq 50); do
	ip -n "$ns" neigh show dev "$b" > "$dir/neigh"
	[ "$(grep -c -e REACHABLE -e STALE -e DELAY "$dir/neigh")" -ge 2 ] && break
	sleep 0.1
done
touch "$dir/close"
wait "$ppid"; rc=$?; ppid=
sleep 0.5
kill -INT "$cap_pid"; wait "$cap_pid"; cap_pid=
grep -v -e '^EAL' -e TELEMETRY "$dir/prog.out"
check "the program passed (exit $rc)" "[ $rc -eq 0 ]"

own=$(awk '$1 == "own" {print $2}' "$dir/result")
check "dpverbs resolved 10.97.0.1 to the kernel's MAC $kmac" "grep -qx 'v4 $kmac' '$dir/result'"
check "dpverbs resolved fd00:97::1 to the kernel's MAC $kmac" "grep -qx 'v6 $kmac' '$dir/result'"
echo "kernel's neighbours:"; cat "$dir/neigh"
check "the kernel resolved 10.97.0.2 to dpverbs' MAC $own" \
	"grep -E '^10\.97\.0\.2 .*lladdr $own (REACHABLE|STALE|DELAY)' '$dir/neigh' > /dev/null"
check "the kernel resolved fd00:97::2 to dpverbs' MAC $own" \
	"grep -E '^fd00:97::2 .*lladdr $own (REACHABLE|STALE|DELAY)' '$dir/neigh' > /dev/null"

t() { tshark -r "$dir/cap.pcapng" -Y "$1" -T fields -E separator=' ' $2 2>/dev/null; }
echo "captured:"; tshark -r "$dir/cap.pcapng" 2>/dev/null
check "ARP request from dpverbs: who has 10.97.0.1, tell 10.97.0.2" \
	"t 'arp.opcode == 1 && eth.src == $own' '-e eth.dst -e arp.src.hw_mac -e arp.src.proto_ipv4 -e arp.dst.proto_ipv4' | grep -qx 'ff:ff:ff:ff:ff:ff $own 10.97.0.2 10.97.0.1'"
check "ARP reply from dpverbs: 10.97.0.2 is at $own, to the kernel" \
	"t 'arp.opcode == 2 && eth.src == $own' '-e eth.dst -e arp.src.hw_mac -e arp.src.proto_ipv4 -e arp.dst.hw_mac -e arp.dst.proto_ipv4' | grep -qx '$kmac $own 10.97.0.2 $kmac 10.97.0.1'"
check "NS from dpverbs for fd00:97::1: solicited-node, hop limit 255, its MAC, checksum good" \
	"t 'icmpv6.type == 135 && eth.src == $own' '-e eth.dst -e ipv6.src -e ipv6.dst -e ipv6.hlim -e icmpv6.nd.ns.target_address -e icmpv6.opt.linkaddr -e icmpv6.checksum.status' | grep -qx '33:33:ff:00:00:01 fd00:97::2 ff02::1:ff00:1 255 fd00:97::1 $own 1'"
nssrc=$(t "icmpv6.type == 135 && eth.src == $kmac && icmpv6.nd.ns.target_address == fd00:97::2" '-e ipv6.src' | head -1)
check "the kernel solicited fd00:97::2 (from $nssrc)" "[ -n '$nssrc' ]"
check "NA from dpverbs to the kernel: target fd00:97::2, solicited, override, its MAC, checksum good" \
	"t 'icmpv6.type == 136 && eth.src == $own' '-e eth.dst -e ipv6.src -e ipv6.dst -e ipv6.hlim -e icmpv6.nd.na.target_address -e icmpv6.nd.na.flag.r -e icmpv6.nd.na.flag.s -e icmpv6.nd.na.flag.o -e icmpv6.opt.linkaddr -e icmpv6.checksum.status' | grep -qx '$kmac fd00:97::2 $nssrc 255 fd00:97::2 0 1 1 $own 1'"
check "nothing from dpverbs is malformed or flagged by tshark" \
	"[ -z \"\$(t 'eth.src == $own && (_ws.malformed || _ws.expert.severity >= warning)' '-e frame.number')\" ]"
finish "roce_neigh_netns"
