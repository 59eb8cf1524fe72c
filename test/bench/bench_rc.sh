#!/bin/sh
# SPDX-License-Identifier: BSD-3-Clause
# bench_rc.sh BENCH_RC DPV_RUN: RC RDMA WRITE and SEND message rate and bandwidth, 64 B, 4 KiB
# and 64 KiB messages, on this host:
#   loopback - bench-rc (test/bench/bench_rc.c) through dpv-run: two QPs of one port
#              (net_ring0, 10.5.0.1 from the configuration) through the
#              port's RoCE loopback, lists of 16, at most 128 outstanding, one thread on CPU 0;
#   veth     - perftest's ib_write_bw and ib_send_bw (Debian's, unmodified) through dpv-run,
#              two processes on the ends of a veth pair of this run's own (net_af_packet),
#              IPv4 GIDs, perftest's defaults (128 outstanding, a completion every 100).
#              ib_send_bw: both sides poll their CQs, the server on CPU 0, the client on 1.
#              ib_write_bw: the server polls nothing, so its responder runs on a service lcore
#              (progress = 1, CPU 1), the client on CPU 0 (doc/roce-rc.md, "A passive target").
#              Needs root (the veth pair) and perftest: left out with a line otherwise.
# DPV_BENCH_ROUNDS runs of each (3), medians. Prints one table; never judges a figure; exits 1
# when a run failed (a bad completion, a tool's exit code, no result line).
bench=$1 run=$2
ROUNDS=${DPV_BENCH_ROUNDS:-3}
. "$(dirname "$0")/../compat/lib.sh"
res=$dir/results      # lines: CASE SIZE MSG_PER_S MB_PER_S

median() { sort -n | awk '{ v[NR] = $1 } END { if (NR) print v[int((NR + 1) / 2)]; else print "-" }'; }

loopback() {
	op=$1 size=$2 n=$3
	for r in $(seq "$ROUNDS"); do
		line=$(DPV_CONFIG=$dir/loop.conf DPV_EAL_ARGS="--vdev=net_ring0 -l 0 $QUIET" \
			"$run" "$bench" -d dpv_net_ring0 -x 1 -o "$op" -s "$size" -n "$n")
		check "loopback $op $size B round $r: a result line" "[ -n \"\$line\" ]"
		[ -n "$line" ] || continue
		echo "$line"
		set -- $line
		# rc OP SIZE B: N messages in T s: R msg/s, M MB/s (DEV, path MTU P)
		echo "loopback_$op $size ${10} ${12}" >> "$res"
	done
}

veth() {
	tool=$1 size=$2 n=$3
	printf 'port_addr = net_af_packet0 10.81.0.1\n' > "$dir/a.conf"
	if [ "$tool" = ib_write_bw ]; then
		echo "progress = 1" >> "$dir/a.conf"
		eal_a="$base_a -l 0,1" eal_b="$base_b -l 0"
	else
		eal_a="$base_a -l 0" eal_b="$base_b -l 1"
	fi
	for r in $(seq "$ROUNDS"); do
		port=$((port + 1))
		args="-d dpv_net_af_packet0 -x 1 -u 18 -s $size -n $n -p $port"
		run_pair "$tool $size B round $r" "$tool" $args -- "$tool" $args 127.0.0.1
		line=$(grep -E "^ *$size +$n +[0-9]" "$out.cli" | head -1)
		check "$tool $size B round $r: the client's result line" "[ -n \"\$line\" ]"
		[ -n "$line" ] || continue
		set -- $line
		# #bytes #iterations BW-peak BW-average[MB/s] MsgRate[Mpps]
		echo "veth_$tool $size $(echo "$5" | awk '{ printf "%.0f", $1 * 1e6 }') $4" >> "$res"
	done
}

: > "$res"
printf 'port_addr = net_ring0 10.5.0.1\n' > "$dir/loop.conf"
for s in 64:1000000 4096:200000 65536:20000; do
	loopback write "${s%%:*}" "${s#*:}"
	loopback send "${s%%:*}" "${s#*:}"
done
if [ "$(id -u)" != 0 ]; then
	echo "veth: left out (root makes the veth pair)"
elif ! command -v ib_write_bw > /dev/null; then
	echo "veth: left out (perftest is not installed)"
else
	pair_up dpvr 10.81.0
	base_a="$eal_a,framecnt=8192 --in-memory" base_b="$eal_b,framecnt=8192 --in-memory"
	PAIR_READY="Waiting for client"
	port=$((32000 + $$ % 10000))
	for s in 64:20000 4096:20000 65536:2000; do
		veth ib_write_bw "${s%%:*}" "${s#*:}"
		veth ib_send_bw "${s%%:*}" "${s#*:}"
	done
fi

echo
echo "RC, medians of $ROUNDS runs (msg/s, MB/s of payload):"
printf '%-22s %8s %12s %10s\n' case size msg/s MB/s
for c in loopback_write loopback_send veth_ib_write_bw veth_ib_send_bw; do
	for s in 64 4096 65536; do
		m=$(awk -v c=$c -v s=$s '$1 == c && $2 == s { print $3 }' "$res" | median)
		b=$(awk -v c=$c -v s=$s '$1 == c && $2 == s { print $4 }' "$res" | median)
		[ "$m" = - ] || printf '%-22s %8s %12s %10s\n' "$c" "$s" "$m" "$b"
	done
done
finish rc_rates
