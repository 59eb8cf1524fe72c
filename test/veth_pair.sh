#!/bin/sh
# veth_pair.sh A B: create the veth pair A <-> B for two processes that each open one end with
# DPDK's net_af_packet. That PMD joins a PACKET_FANOUT group numbered (pid ^ ifindex) & 0xffff,
# and groups are per network namespace: two processes whose numbers collide cannot both join
# (the second port fails to probe with EINVAL). Consecutive ifindexes (i, i + 1) and pids
# close together collide often (whenever pid1 ^ pid2 == i ^ (i + 1): 1, 3, 7...). So the two
# ends get ifindexes that differ in bit 15 only: then the pids would have to differ in exactly
# that bit. Ifindexes are picked at random above 65536; a taken one is tried again.
# Both ends come up with IPv6 off, so that the kernel sends nothing of its own (router
# solicitations, ND) into a test's traffic.
set -u
a=$1 b=$2
up() {
	for i in "$a" "$b"; do
		sysctl -qw net.ipv6.conf."$i".disable_ipv6=1
		ip link set "$i" up
	done
	return 0
}
for try in 1 2 3 4 5 6 7 8; do
	base=$(( ( ($(od -An -N4 -tu4 /dev/urandom) % 16000) + 2 ) * 65536 + ($$ % 32768) ))
	if ip link add "$a" index "$base" type veth peer name "$b" index $((base | 32768)) \
		2>/dev/null; then
		up
		exit 0
	fi
done
# an ip without "index" (or no free index found): the kernel's own numbers
ip link add "$a" type veth peer name "$b" && up
