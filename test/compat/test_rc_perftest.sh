#!/bin/sh
# perftest's RC tools, Debian's binaries unmodified, between two dpverbs processes through
# dpv-run on the ends of a veth pair of this run's own (net_af_packet), each port with an
# IPv4 address from its configuration, GID index 1 (ARP resolves the peer at RTR): RDMA
# WRITE, READ and SEND bandwidth, WRITE, READ and SEND latency, atomics. The passive side of the
# bandwidth tests and both sides of ib_write_lat poll no CQ: the library's keeper drives
# their responders (doc/roce.md, "RC and UC queue pairs"). Checked: both processes exit 0 and
# the client reports its result line; the figures are printed, not judged.
# The local ACK timeout is perftest's -u 18 (1.07 s, 8 tries) rather than its default 14
# (67 ms): a passive side's keeper is a normal thread, and on a shared 2-CPU machine running
# other tests (or VMs) it was seen to wake 0.3-1.6 s late; at 67 ms the peer then ran out of
# retries (IBV_WC_RETRY_EXC_ERR, as a RoCE NIC's requester does when its peer stops
# answering). doc/roce.md, "The keeper".
set -u
run=$1
pass=0; fail=0
check() { if eval "$2"; then pass=$((pass + 1)); else fail=$((fail + 1)); echo "FAIL: $1"; fi; }
command -v ib_write_bw > /dev/null || { echo "perftest missing"; exit 77; }
a=dpvta$$; b=dpvtb$$
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
if [ "$(nproc)" -ge 2 ]; then ccpu=1; else ccpu=0; fi
port=$((30000 + $$ % 10000))
one() {
	tool=$1; n=$2; shift 2
	port=$((port + 1))
	DPV_CONFIG=$dir/a.conf DPV_EAL_ARGS="--vdev=net_af_packet0,iface=$a,framecnt=8192 -l 0 --in-memory $quiet" \
		timeout 100 "$run" "$tool" -d dpv_net_af_packet0 -x 1 -u 18 -p $port "$@" > "$dir/$tool.srv" 2>&1 &
	srv=$!
	sleep 2
	DPV_CONFIG=$dir/b.conf DPV_EAL_ARGS="--vdev=net_af_packet0,iface=$b,framecnt=8192 -l $ccpu --in-memory $quiet" \
		timeout 100 "$run" "$tool" -d dpv_net_af_packet0 -x 1 -u 18 -p $port "$@" 127.0.0.1 > "$dir/$tool.cli" 2>&1
	crc=$?
	wait "$srv"
	src=$?
	srv=
	check "$tool: client exits 0" "[ $crc -eq 0 ]"
	check "$tool: server exits 0" "[ $src -eq 0 ]"
	check "$tool: the client's result line" "grep -qE '^ *[0-9]+ +$n ' '$dir/$tool.cli'"
	grep -E -B1 '^ *[0-9]+ +[0-9]+ ' "$dir/$tool.cli" | sed "s/^/$tool: /"
	[ $crc -eq 0 ] && [ $src -eq 0 ] || { echo "--- server"; cat "$dir/$tool.srv";
		echo "--- client"; cat "$dir/$tool.cli"; }
}
one ib_write_bw 2000 -n 2000 -s 4096
one ib_read_bw 2000 -n 2000 -s 4096
one ib_send_bw 2000 -n 2000 -s 4096
one ib_atomic_bw 2000 -n 2000
one ib_write_lat 500 -n 500 -s 64
one ib_read_lat 500 -n 500 -s 64
one ib_send_lat 500 -n 500 -s 64
echo "rc_perftest: $pass checks passed, $fail failed"
[ $fail -eq 0 ]
