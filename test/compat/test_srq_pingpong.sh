#!/bin/sh
# rdma-core's ibv_srq_pingpong, Debian's binary unmodified, between two dpverbs processes
# through dpv-run, set up as test_rc_pingpong.sh: each owns one end of a veth pair of this
# run's own (net_af_packet) with an IPv4 address from its configuration; they exchange QPNs,
# PSNs and GIDs over TCP on 127.0.0.1 and connect 16 RC QPs each, all of whose receives come
# from one shared receive queue per side (ibv_create_srq, ibv_post_srq_recv: 500 WQEs
# refilled as they complete), and ping-pong 4096-byte SENDs (four 1024-byte packets) on every
# QP over the veth pair with a RoCE v2 GID (-g 1): 200 exchanges in all, spread over the QPs,
# the client checking every byte (-c); then
# the same sleeping on completion events (-e).
set -u
run=$1
pass=0; fail=0
check() { if eval "$2"; then pass=$((pass + 1)); else fail=$((fail + 1)); echo "FAIL: $1"; fi; }
command -v ibv_srq_pingpong > /dev/null || { echo "ibv_srq_pingpong missing (ibverbs-utils)"; exit 77; }
a=dpvsa$$; b=dpvsb$$
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
printf 'port_addr = net_af_packet0 10.79.0.1\n' > "$dir/a.conf"
printf 'port_addr = net_af_packet0 10.79.0.2\n' > "$dir/b.conf"
quiet='--log-level=lib.eal:warning --log-level=lib.telemetry:warning --log-level=pmd.net.af_packet:error'
port=$((20000 + ($$ + 5000) % 10000))
k=0
for mode in poll events; do
	extra=; [ $mode = events ] && extra=-e
	args="-d dpv_net_af_packet0 -g 1 -s 4096 -n 200 -p $((port + k)) $extra"
	k=$((k + 1))
	DPV_CONFIG=$dir/a.conf DPV_EAL_ARGS="--vdev=net_af_packet0,iface=$a $quiet" \
		timeout 100 "$run" ibv_srq_pingpong $args > "$dir/server$mode" 2>&1 &
	srv=$!
	sleep 2
	DPV_CONFIG=$dir/b.conf DPV_EAL_ARGS="--vdev=net_af_packet0,iface=$b $quiet" \
		timeout 100 "$run" ibv_srq_pingpong $args -c 127.0.0.1 > "$dir/client$mode" 2>&1
	crc=$?
	wait "$srv"
	src=$?
	srv=
	check "$mode: client exits 0 (every message received and checked)" "[ $crc -eq 0 ]"
	check "$mode: server exits 0" "[ $src -eq 0 ]"
	check "$mode: client: 200 iterations" "grep -q '^200 iters in' '$dir/client$mode'"
	check "$mode: server: 200 iterations" "grep -q '^200 iters in' '$dir/server$mode'"
	check "$mode: 16 QPs connected, RoCE v2 GIDs" \
		"[ \$(grep -c 'local address:.*GID ::ffff:10.79.0.2' '$dir/client$mode') -eq 16 ]"
done
[ $fail -eq 0 ] || for mode in poll events; do
	echo "--- server $mode"; cat "$dir/server$mode"; echo "--- client $mode"; cat "$dir/client$mode"
done
echo "srq_pingpong: $pass checks passed, $fail failed"
[ $fail -eq 0 ]
