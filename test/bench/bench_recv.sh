#!/bin/sh
# SPDX-License-Identifier: BSD-3-Clause
# bench_recv.sh DPV_BENCH: 64-byte frames received through verbs (an ALL_DEFAULT flow, WQEs
# reposted in lists of the burst size) beside dpdk-testpmd --forward-mode=rxonly, one lcore,
# each ROUNDS times alternating; prints per-second medians and the ratio. net_null is the
# source for both (it makes frames on every rx_burst; on a net_ring loopback testpmd rxonly
# has nobody to send). Beside the wall-clock rates, CPU time per frame (what a frame costs
# when the machine is shared: the wall clock counts the time others had the CPU): dpv-bench's
# own (process CPU time over its receive loop), testpmd's from perf stat task-clock over a
# 3 s and a 6 s run (the difference, so start-up cancels out). One receive queue on both sides
# (queues_per_port = 1: testpmd's default; each net_null queue makes frames of its own).
# A row with the QP's frames taken by 4 NORMAL rules on destination MACs (dpv-bench -f 4, the
# exact-match hash) instead of an ALL_DEFAULT rule. Then ns per frame by stage
# (cycle_stats = 1; each stage's share of the wall-clock time scaled to the CPU time; the
# counters' own rdtsc calls are in the figures, a few ns per burst).
# The CPU ns per frame of each case, dpverbs beside testpmd, plotted with gnuplot to
# $DPV_BENCH_RECV_PLOT (default bench-recv.png in the current directory).
# Not a test: it never fails on a number.
set -u
bench=$1
rounds=${DPV_BENCH_ROUNDS:-3}
plot=${DPV_BENCH_RECV_PLOT:-bench-recv.png}
. "$(dirname "$0")/bench_lib.sh"

testpmd_run() {
	tpmd_rates Rx-pps "-l 0-1 --vdev=$1" "--forward-mode=rxonly --burst=$2 --nb-cores=1"
}

# testpmd's CPU ns per packet: task-clock and packets of a 6 s run minus those of a 3 s one
testpmd_cpu() {
	for t in 3 6; do
		p=$(perf stat -x, -e task-clock -o "$tmp/stat.$t" timeout -s INT "$t" \
			sh -c "$(command -v dpdk-testpmd) -l 0-1 --no-pci --vdev=$1 --in-memory \
			--file-prefix=dpv-bench-tpmd-$$ --log-level=lib.eal:error -- \
			--forward-mode=rxonly --burst=$2 --nb-cores=1 --stats-period=1 --auto-start \
			--no-lsc-interrupt" 2>/dev/null | awk '/RX-packets:/ {p = $2} END {print p + 0}')
		rm -rf "/var/run/dpdk/dpv-bench-tpmd-$$"
		echo "$p $(awk -F, '/task-clock/ {print $1}' "$tmp/stat.$t")"
	done | awk 'NR == 1 {p = $1; c = $2} NR == 2 {if ($1 > p) printf "%.2f\n", ($2 - c) * 1e6 / ($1 - p)}'
}

dpv_run() {
	DPV_CONFIG=$tmp/q1.conf DPV_EAL_ARGS="--vdev=$1 -l 1 --log-level=lib.eal:error" \
		"$bench" -m recv -b "$2" -t "$secs" $flows 2>/dev/null > "$tmp/out"
	awk '/^Mpps/ {print $2}' "$tmp/out" | tail -n +2 | median >> "$tmp/d"
	awk '/^cpu-ns/ {print $2}' "$tmp/out" >> "$tmp/dc"
}

if ! command -v dpdk-testpmd >/dev/null; then
	echo "dpdk-testpmd not found (package dpdk-dev): no reference to compare with"
	exit 77
fi
printf 'queues_per_port = 1\n' > "$tmp/q1.conf"
printf 'queues_per_port = 1\ncycle_stats = 1\n' > "$tmp/cycles.conf"
cpu=1
command -v perf >/dev/null && perf stat -e task-clock true >/dev/null 2>&1 || cpu=0
printf "%-30s %8s %8s %6s | %s\n" "receive case (64 B)" dpverbs testpmd ratio \
	"CPU ns/frame: dpverbs testpmd ratio"
for row in "net_null0 8" "net_null0 32" "net_null0,copy=1 8" "net_null0,copy=1 32" \
	   "net_null0 32 -f4"; do
	set -- $row
	vdev=$1 burst=$2 flows=${3:-}
	{
		: > "$tmp/d"; : > "$tmp/t"; : > "$tmp/dc"; : > "$tmp/tc"
		for r in $(seq "$rounds"); do
			dpv_run "$vdev" "$burst"
			testpmd_run "$vdev" "$burst" | median >> "$tmp/t"
			[ $cpu = 1 ] && testpmd_cpu "$vdev" "$burst" >> "$tmp/tc"
		done
		d=$(median < "$tmp/d"); t=$(median < "$tmp/t")
		dc=$(median < "$tmp/dc"); tc=$(median < "$tmp/tc")
		printf "%-30s %8s %8s %6s | %8s %8s %6s\n" "$vdev burst $burst${flows:+ MAC rules}" \
			"$d" "$t" "$(ratio "$d" "$t")" "$dc" "$tc" "$(ratio "$tc" "$dc")"
		label="burst $burst"
		case $vdev in *copy=1*) label="copy=1, $label" ;; esac
		[ -n "$flows" ] && label="$label, MAC rules"
		printf '"%s" %s %s\n' "$label" "${dc:-0}" "${tc:-0}" >> "$tmp/plot.dat"
	}
done

if command -v gnuplot >/dev/null; then
	gnuplot <<EOF
set terminal pngcairo size 1000,500 noenhanced
set output "$plot"
set title "64-byte frames received from net_null, one lcore: CPU ns per frame (medians of $rounds)"
set ylabel "CPU ns per frame (lower is better)"
set style data histograms
set style histogram clustered gap 1
set style fill solid 0.8 border -1
set key outside bottom center horizontal
set xtics scale 0
set grid ytics
set yrange [0:*]
plot "$tmp/plot.dat" using 2:xtic(1) title "dpverbs (ibv_poll_cq + ibv_post_recv)", \\
     "" using 3 title "dpdk-testpmd rxonly"
EOF
	echo "plot: $plot"
else
	echo "gnuplot not found (package gnuplot-nox): no plot"
fi

for vdev in net_null0 net_null0,copy=1; do
	DPV_CONFIG=$tmp/cycles.conf DPV_EAL_ARGS="--vdev=$vdev -l 1 --log-level=lib.eal:error" \
		"$bench" -m recv -b 32 -t "$secs" -y 2>/dev/null | sed -n "s/^stages/$vdev burst 32: stages/p"
done
