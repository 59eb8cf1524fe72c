#!/bin/sh
# rdma-core's ibv_rc_pingpong, Debian's binary unmodified, between two dpverbs processes
# through dpv-run: each owns one end of a veth pair of this run's own (net_af_packet), with
# an IPv4 address from its configuration; they exchange QPNs, PSNs and GIDs over TCP on
# 127.0.0.1, connect an RC QP each (RTR resolves the peer: no ARP for GID index 0, ARP for
# index 1) and ping-pong 4096-byte SENDs (four 1024-byte packets each) over the veth pair,
# the client checking every byte received (-c).
set -u
run=$1
pass=0; fail=0
check() { if eval "$2"; then pass=$((pass + 1)); else fail=$((fail + 1)); echo "FAIL: $1"; fi; }
command -v ibv_rc_pingpong > /dev/null || { echo "ibv_rc_pingpong missing (ibverbs-utils)"; exit 77; }
a=dpvra$$; b=dpvrb$$
dir=$(mktemp -d)
srv=
cleanup() {
	[ -n "$srv" ] && kill "$srv" 2>/dev/null
	wait 2>/dev/null
	ip link del "$a" 2>/dev/null
	rm -rf "$dir"
}
trap cleanup EXIT
"$(dirname "$0")/../veth_pair.sh" "$a" "$b" || exit 1
for i in "$a" "$b"; do
	sysctl -qw net.ipv6.conf."$i".disable_ipv6=1
	ip link set "$i" up
done
printf 'port_addr = net_af_packet0 10.78.0.1\n' > "$dir/a.conf"
printf 'port_addr = net_af_packet0 10.78.0.2\n' > "$dir/b.conf"
quiet='--log-level=lib.eal:warning --log-level=lib.telemetry:warning --log-level=pmd.net.af_packet:error'
port=$((20000 + $$ % 10000))
for g in 0 1; do
	args="-d dpv_net_af_packet0 -g $g -s 4096 -n 50 -p $((port + g))"
	DPV_CONFIG=$dir/a.conf DPV_EAL_ARGS="--vdev=net_af_packet0,iface=$a $quiet" \
		timeout 100 "$run" ibv_rc_pingpong $args > "$dir/server$g" 2>&1 &
	srv=$!
	sleep 2
	DPV_CONFIG=$dir/b.conf DPV_EAL_ARGS="--vdev=net_af_packet0,iface=$b $quiet" \
		timeout 100 "$run" ibv_rc_pingpong $args -c 127.0.0.1 > "$dir/client$g" 2>&1
	crc=$?
	wait "$srv"
	src=$?
	srv=
	check "-g $g: client exits 0 (every datagram received and checked)" "[ $crc -eq 0 ]"
	check "-g $g: server exits 0" "[ $src -eq 0 ]"
	check "-g $g: client: 50 iterations" "grep -q '^50 iters in' '$dir/client$g'"
	check "-g $g: server: 50 iterations" "grep -q '^50 iters in' '$dir/server$g'"
done
check "-g 0: link-local GIDs on both sides" \
	"grep -q 'local address:.*GID fe80::' '$dir/client0' && grep -q 'remote address:.*GID fe80::' '$dir/client0'"
check "-g 1: IPv4 GIDs on both sides" \
	"grep -q 'local address:.*GID ::ffff:10.78.0.2' '$dir/client1' && grep -q 'remote address:.*GID ::ffff:10.78.0.1' '$dir/client1'"
[ $fail -eq 0 ] || for g in 0 1; do
	echo "--- server -g $g"; cat "$dir/server$g"; echo "--- client -g $g"; cat "$dir/client$g"
done
echo "rc_pingpong: $pass checks passed, $fail failed"
[ $fail -eq 0 ]
