#!/bin/sh
# test_perftest_wire.sh DPV_RUN: perftest's RAW_PACKET tools, Debian's binaries unmodified,
# as two processes — a server and a client, each through dpv-run with a port of its own —
# on the two ends of a veth pair (net_af_packet; the kernel carries the frames):
# - raw_ethernet_lat: both exit 0, the client reports 1000 ping-pongs and a latency;
# - raw_ethernet_bw client -> server: the server exits 0 only once it received every frame
#   (it counts them, perftest's run_iter_bw_server), reports them, and the kernel counted as
#   many on the server's end of the veth;
# - raw_ethernet_burst_lat: perftest 4.5 runs it only with packet pacing
#   (--rate_limit_type=PP, which dpverbs' RAW_PACKET QPs have) and needs -Q 1 (its loop counts
#   send completions, which perftest signals every cq_mod-th WR otherwise); unpaced, and with
#   the client paced at 1 MiB/s (the server stays unpaced: it exits once it has all the pings,
#   and a paced pong still queued then would be lost).
# Each server gets its own CPU (-l): two busy-polling processes pinned to one CPU take turns
# at the scheduler's tick. The client starts once the server printed its header (stdbuf: line
# buffered) and had a second to post its receives: raw Ethernet has no handshake.
set -u
run=$1
pass=0; fail=0
check() { if eval "$2"; then pass=$((pass + 1)); else fail=$((fail + 1)); echo "FAIL: $1"; fi; }
dir=$(mktemp -d)
a=dpvpa$$; b=dpvpb$$
# the processes' DPDK runtime directories are named here, so that one a timeout killed
# (no exit handler runs) is removed too
sprefix=dpvpw$$-s; cprefix=dpvpw$$-c
cleanup() {
	ip link del "$a" 2>/dev/null
	rm -rf "$dir" /var/run/dpdk/"$sprefix" /var/run/dpdk/"$cprefix"
}
trap cleanup EXIT
for t in raw_ethernet_lat raw_ethernet_bw raw_ethernet_burst_lat stdbuf; do
	check "$t installed (apt-get install perftest; ./dpv.sh does)" "command -v $t > /dev/null"
done
"$(dirname "$0")/../veth_pair.sh" "$a" "$b" || { echo "FAIL: veth pair (root?)"; exit 1; }
for i in "$a" "$b"; do
	sysctl -qw net.ipv6.conf."$i".disable_ipv6=1   # the kernel sends nothing of its own
	ip link set "$i" up
done
ma=$(cat /sys/class/net/"$a"/address); mb=$(cat /sys/class/net/"$b"/address)
if [ "$(nproc)" -ge 2 ]; then scpu=0; ccpu=1; else scpu=0; ccpu=0; fi
quiet='--log-level=lib.eal:warning --log-level=lib.telemetry:warning --log-level=pmd.net.af_packet:error'
# Each port's kernel ring holds 8192 frames (net_af_packet's default: 512): more than a run
# sends, so the kernel drops none while a process is not polling (starting up, or descheduled
# on a loaded machine: burst_lat's client may have all its pongs in flight at once).
seal="--vdev=net_af_packet0,iface=$a,framecnt=8192 -l $scpu --file-prefix=$sprefix --in-memory $quiet"
ceal="--vdev=net_af_packet0,iface=$b,framecnt=8192 -l $ccpu --file-prefix=$cprefix --in-memory $quiet"

# pair NAME TOOL "SERVER ARGS" "CLIENT ARGS": the server in the background, the client once
# the server is ready; sets src and crc (exit codes) and leaves NAME.srv, NAME.cli
pair() {
	name=$1 tool=$2
	DPV_EAL_ARGS="$seal" timeout 120 "$run" stdbuf -oL "$tool" -d dpv_net_af_packet0 --server \
		-B "$ma" -E "$mb" $3 > "$dir/$name.srv" 2>&1 &
	spid=$!
	for i in $(seq 600); do
		grep -q '#bytes' "$dir/$name.srv" 2>/dev/null && break
		kill -0 $spid 2>/dev/null || break
		sleep 0.1
	done
	sleep 1
	DPV_EAL_ARGS="$ceal" timeout 120 "$run" stdbuf -oL "$tool" -d dpv_net_af_packet0 --client \
		-B "$mb" -E "$ma" $4 > "$dir/$name.cli" 2>&1
	crc=$?
	wait $spid
	src=$?
	[ $crc -eq 0 ] && [ $src -eq 0 ] || { echo "--- $name server:"; cat "$dir/$name.srv";
		echo "--- $name client:"; cat "$dir/$name.cli"; }
}
# the result line: size, iterations, then numbers (a latency line's first four: min, max,
# typical, average; perftest prints its standard deviation as -nan when the spread is large)
result() { grep -E "^ *$1[[:space:]]+$2([[:space:]]+[0-9.]+){$3}" "$dir/$4"; }

pair lat raw_ethernet_lat "-n 1000" "-n 1000"
check "raw_ethernet_lat: server and client exit 0 (rc $src, $crc)" "[ $src -eq 0 ] && [ $crc -eq 0 ]"
check "raw_ethernet_lat: the client reports 1000 ping-pongs of 64 bytes" "result 64 1000 4 lat.cli > /dev/null"
echo "raw_ethernet_lat: $(result 64 1000 4 lat.cli | awk '{print "t_typical " $5 " us, t_avg " $6 " us"}')"

rx0=$(cat /sys/class/net/"$a"/statistics/rx_packets)
pair bw raw_ethernet_bw "-n 5000 -s 64" "-n 5000 -s 64"
rx=$(( $(cat /sys/class/net/"$a"/statistics/rx_packets) - rx0 ))
check "raw_ethernet_bw: server and client exit 0 (rc $src, $crc)" "[ $src -eq 0 ] && [ $crc -eq 0 ]"
check "raw_ethernet_bw: the server reports the 5000 frames it received" "result 64 5000 3 bw.srv > /dev/null"
check "raw_ethernet_bw: the client reports 5000 frames sent" "result 64 5000 3 bw.cli > /dev/null"
check "the kernel counted 5000 frames into the server's end of the veth (got $rx)" "[ $rx -eq 5000 ]"
echo "raw_ethernet_bw: client $(result 64 5000 3 bw.cli | awk '{print $5}') Mpps, server $(result 64 5000 3 bw.srv | awk '{print $5}') Mpps"

# burst_lat's client may post all its pings before it reads a pong: its receive queue (-r)
# holds every pong, so that none is dropped for want of a WQE while the client is away
pp='--rate_limit_type=PP --rate_units=M --burst_size=16 -Q 1 -r 2048'
pair burst raw_ethernet_burst_lat "-n 1000 $pp" "-n 1000 $pp"
check "raw_ethernet_burst_lat (PP, unpaced): exit 0 (rc $src, $crc)" "[ $src -eq 0 ] && [ $crc -eq 0 ]"
check "raw_ethernet_burst_lat: the client reports 1000 iterations" "result 64 1000 4 burst.cli > /dev/null"
pair paced raw_ethernet_burst_lat "-n 1000 $pp" "-n 1000 $pp --rate_limit=1"
check "raw_ethernet_burst_lat, client paced at 1 MiB/s: exit 0 (rc $src, $crc)" "[ $src -eq 0 ] && [ $crc -eq 0 ]"
check "raw_ethernet_burst_lat paced: the client reports 1000 iterations" "result 64 1000 4 paced.cli > /dev/null"
echo "raw_ethernet_burst_lat: t_typical $(result 64 1000 4 burst.cli | awk '{print $5}') us unpaced, $(result 64 1000 4 paced.cli | awk '{print $5}') us paced"
echo "perftest wire: $pass checks passed, $fail failed"
[ $fail -eq 0 ]
