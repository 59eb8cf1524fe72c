#!/bin/sh
# SPDX-License-Identifier: BSD-3-Clause
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
run=$1
. "$(dirname "$0")/lib.sh"
# the processes' DPDK runtime directories are named here, so that one a timeout killed
# (no exit handler runs) is removed too
sprefix=dpvpw$$-s; cprefix=dpvpw$$-c
at_exit 'rm -rf /var/run/dpdk/"$sprefix" /var/run/dpdk/"$cprefix"'
for t in raw_ethernet_lat raw_ethernet_bw raw_ethernet_burst_lat stdbuf; do
	check "$t installed (apt-get install perftest; ./dpv.sh does)" "command -v $t > /dev/null"
done
pair_up dpvp
ma=$(cat /sys/class/net/"$a"/address); mb=$(cat /sys/class/net/"$b"/address)
# Each port's kernel ring holds 8192 frames (net_af_packet's default: 512): more than a run
# sends, so the kernel drops none while a process is not polling (starting up, or descheduled
# on a loaded machine: burst_lat's client may have all its pongs in flight at once).
eal_a="$eal_a,framecnt=8192 -l 0 --file-prefix=$sprefix --in-memory"
eal_b="$eal_b,framecnt=8192 -l $ccpu --file-prefix=$cprefix --in-memory"
PAIR_TIMEOUT=120 PAIR_READY='#bytes'

# pair NAME TOOL "SERVER ARGS" "CLIENT ARGS": the server, then the client once the server
# printed its header; leaves NAME.srv, NAME.cli
pair() {
	run_pair "$1" stdbuf -oL "$2" -d dpv_net_af_packet0 --server -B "$ma" -E "$mb" $3 -- \
		stdbuf -oL "$2" -d dpv_net_af_packet0 --client -B "$mb" -E "$ma" $4
}
# the result line: size, iterations, then numbers (a latency line's first four: min, max,
# typical, average; perftest prints its standard deviation as -nan when the spread is large)
result() { grep -E "^ *$1[[:space:]]+$2([[:space:]]+[0-9.]+){$3}" "$dir/$4"; }

pair lat raw_ethernet_lat "-n 1000" "-n 1000"
check "raw_ethernet_lat: the client reports 1000 ping-pongs of 64 bytes" "result 64 1000 4 lat.cli > /dev/null"
echo "raw_ethernet_lat: $(result 64 1000 4 lat.cli | awk '{print "t_typical " $5 " us, t_avg " $6 " us"}')"

rx0=$(cat /sys/class/net/"$a"/statistics/rx_packets)
pair bw raw_ethernet_bw "-n 5000 -s 64" "-n 5000 -s 64"
rx=$(( $(cat /sys/class/net/"$a"/statistics/rx_packets) - rx0 ))
check "raw_ethernet_bw: the server reports the 5000 frames it received" "result 64 5000 3 bw.srv > /dev/null"
check "raw_ethernet_bw: the client reports 5000 frames sent" "result 64 5000 3 bw.cli > /dev/null"
check "the kernel counted 5000 frames into the server's end of the veth (got $rx)" "[ $rx -eq 5000 ]"
echo "raw_ethernet_bw: client $(result 64 5000 3 bw.cli | awk '{print $5}') Mpps, server $(result 64 5000 3 bw.srv | awk '{print $5}') Mpps"

# burst_lat's client may post all its pings before it reads a pong: its receive queue (-r)
# holds every pong, so that none is dropped for want of a WQE while the client is away
pp='--rate_limit_type=PP --rate_units=M --burst_size=16 -Q 1 -r 2048'
pair burst raw_ethernet_burst_lat "-n 1000 $pp" "-n 1000 $pp"
check "raw_ethernet_burst_lat: the client reports 1000 iterations" "result 64 1000 4 burst.cli > /dev/null"
pair paced raw_ethernet_burst_lat "-n 1000 $pp" "-n 1000 $pp --rate_limit=1"
check "raw_ethernet_burst_lat paced: the client reports 1000 iterations" "result 64 1000 4 paced.cli > /dev/null"
echo "raw_ethernet_burst_lat: t_typical $(result 64 1000 4 burst.cli | awk '{print $5}') us unpaced, $(result 64 1000 4 paced.cli | awk '{print $5}') us paced"
finish "perftest wire"
