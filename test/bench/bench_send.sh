#!/bin/sh
# SPDX-License-Identifier: BSD-3-Clause
# bench_send.sh DPV_BENCH: 64-byte RAW_PACKET SENDs through verbs to net_null beside
# dpdk-testpmd --forward-mode=txonly on net_null, each case run ROUNDS times alternating with
# testpmd (same lcore); prints per-second medians and ratios:
#   - inline and non-inline, burst 1/8/32, direct mode (and inline in a thread domain);
#   - service mode (the posting thread on lcore 1, the service lcore on lcore 0);
#   - 1500 B zero-copy vs inline;
#   - TSC cycles per WR by stage (cycle_stats = 1);
#   - Mpps vs burst size 1..64 for dpverbs and testpmd, plotted with gnuplot to
#     $DPV_BENCH_PLOT (default bench-burst.png in the current directory).
# Not a test: it never fails on a number. DPV_BENCH_SECONDS, DPV_BENCH_ROUNDS shorten it.
set -u
bench=$1
rounds=${DPV_BENCH_ROUNDS:-3}
plot=${DPV_BENCH_PLOT:-bench-burst.png}
. "$(dirname "$0")/bench_lib.sh"

# testpmd: forwarding on lcore 1, its stats every second; the first sample is the ramp-up.
testpmd_run() {
	tpmd_rates Tx-pps "-l 0-1 --vdev=net_null0" \
		"--forward-mode=txonly --txpkts=$1 --burst=$2 --nb-cores=1"
}

# dpv-bench on lcore 1 too, so both run on the same core; EAL_LCORES adds a service lcore.
dpv_run() {
	DPV_EAL_ARGS="--vdev=net_null0 -l ${EAL_LCORES:-1} --log-level=lib.eal:error" \
		"$bench" "$@" -t "$secs" 2>/dev/null | awk '/^Mpps/ {print $2}' | tail -n +2
}

# one row: dpverbs case (arguments for dpv-bench) beside testpmd at @burst
row() {
	name=$1 size=$2 burst=$3
	shift 3
	: > "$tmp/d"; : > "$tmp/t"
	for r in $(seq "$rounds"); do
		dpv_run -s "$size" -b "$burst" "$@" >> "$tmp/d"
		testpmd_run "$size" "$burst" >> "$tmp/t"
	done
	d=$(median < "$tmp/d"); t=$(median < "$tmp/t")
	printf "%-40s %10s %10s %7s\n" "$name" "$d" "$t" "$(ratio "$d" "$t")"
	echo "$burst $d $t" >> "$tmp/rows.$(echo "$name" | cut -d' ' -f1)"
}

if ! command -v dpdk-testpmd >/dev/null; then
	echo "dpdk-testpmd not found (package dpdk-dev): no reference to compare with"
	exit 77
fi
printf "%-40s %10s %10s %7s\n" "case (64 B, net_null, 1 lcore)" "dpverbs" "testpmd" "ratio"
for burst in 1 2 4 8 16 32 64; do
	row "inline burst $burst" 64 "$burst" -m inline
done
for burst in 1 8 32; do
	row "non-inline burst $burst" 64 "$burst" -m zc
done
row "thread-domain inline burst 32" 64 32 -m inline -d
EAL_LCORES=1,0 row "service inline burst 8" 64 8 -m inline -p service
EAL_LCORES=1,0 row "service inline burst 32" 64 32 -m inline -p service

: > "$tmp/i"; : > "$tmp/z"
for r in $(seq "$rounds"); do
	dpv_run -m inline -s 1500 -b 32 >> "$tmp/i"
	dpv_run -m zc -s 1500 -b 32 >> "$tmp/z"
done
i=$(median < "$tmp/i"); z=$(median < "$tmp/z")
printf "%-40s %10s %10s %7s\n" "1500 B zero-copy vs inline, burst 32" "$z" "$i" "$(ratio "$z" "$i")"

printf 'cycle_stats = 1\n' > "$tmp/cycles.conf"
for mode in inline zc; do
	DPV_CONFIG=$tmp/cycles.conf DPV_EAL_ARGS="--vdev=net_null0 -l 1 --log-level=lib.eal:error" \
		"$bench" -m "$mode" -b 32 -t "$secs" -y 2>/dev/null | sed -n "s/^cycles/$mode burst 32: cycles/p"
done

if command -v gnuplot >/dev/null; then
	for f in inline non-inline service; do sort -n "$tmp/rows.$f" > "$tmp/$f.dat"; done
	gnuplot <<EOF
set terminal pngcairo size 800,500 noenhanced
set output "$plot"
set title "64-byte sends to net_null, one lcore (medians of $rounds x ${secs} s)"
set xlabel "burst (WRs per ibv_post_send / packets per tx_burst)"
set ylabel "Mpps"
set logscale x 2
set key top left
set grid
plot "$tmp/inline.dat" using 1:2 with linespoints title "dpverbs, inline, direct", \
     "$tmp/non-inline.dat" using 1:2 with linespoints title "dpverbs, non-inline, direct", \
     "$tmp/service.dat" using 1:2 with linespoints title "dpverbs, inline, service mode", \
     "$tmp/inline.dat" using 1:3 with linespoints title "dpdk-testpmd txonly"
EOF
	echo "plot: $plot"
else
	echo "gnuplot not found (package gnuplot-nox): no plot"
fi
