#!/bin/sh
# bench_send.sh DPV_BENCH: 64-byte RAW_PACKET SENDs through verbs to net_null, inline and
# non-inline, burst 1/8/32, beside dpdk-testpmd --forward-mode=txonly on net_null, each case
# run ROUNDS times alternating with testpmd; prints per-second medians and the ratios.
# Not a test: it never fails on a number. DPV_BENCH_SECONDS, DPV_BENCH_ROUNDS shorten it.
set -u
bench=$1
secs=${DPV_BENCH_SECONDS:-4}
rounds=${DPV_BENCH_ROUNDS:-3}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

median() { sort -n | awk '{v[NR]=$1} END {if (NR == 0) print 0; else if (NR % 2) print v[(NR+1)/2]; else printf "%.3f\n", (v[NR/2]+v[NR/2+1])/2}'; }

# testpmd: forwarding on lcore 1, its stats every second; the first sample is the ramp-up.
testpmd_run() {
	timeout -s INT $((secs + 2)) dpdk-testpmd -l 0-1 --no-pci --vdev=net_null0 --in-memory \
		--file-prefix=dpv-bench-tpmd-$$ --log-level=lib.eal:error -- \
		--forward-mode=txonly --txpkts="$1" --burst="$2" --nb-cores=1 --stats-period=1 \
		--auto-start --no-lsc-interrupt 2>/dev/null |
		awk '/Tx-pps:/ {n++; if (n > 1) printf "%.3f\n", $2 / 1e6}'
	rm -rf "/var/run/dpdk/dpv-bench-tpmd-$$"     # testpmd leaves its runtime directory
}

# dpv-bench on lcore 1 too, so both run on the same core.
dpv_run() {
	DPV_EAL_ARGS="--vdev=net_null0 -l 1 --log-level=lib.eal:error" \
		"$bench" -m "$1" -s "$2" -b "$3" -t "$secs" 2>/dev/null | awk '/^Mpps/ {print $2}' | tail -n +2
}

if ! command -v dpdk-testpmd >/dev/null; then
	echo "dpdk-testpmd not found (package dpdk-dev): no reference to compare with"
	exit 77
fi
printf "%-34s %10s %10s %7s\n" "case (64 B, net_null)" "dpverbs" "testpmd" "ratio"
for burst in 1 8 32; do
	for mode in inline zc; do
		: > "$tmp/d"; : > "$tmp/t"
		for r in $(seq "$rounds"); do
			dpv_run "$mode" 64 "$burst" >> "$tmp/d"
			testpmd_run 64 "$burst" >> "$tmp/t"
		done
		d=$(median < "$tmp/d"); t=$(median < "$tmp/t")
		name=$([ "$mode" = inline ] && echo "inline" || echo "non-inline")
		printf "%-34s %10s %10s %7s\n" "$name burst $burst" "$d" "$t" \
			"$(awk -v a="$d" -v b="$t" 'BEGIN {printf "%.2f", (b > 0 ? a / b : 0)}')"
	done
done
: > "$tmp/i"; : > "$tmp/z"
for r in $(seq "$rounds"); do
	dpv_run inline 1500 32 >> "$tmp/i"
	dpv_run zc 1500 32 >> "$tmp/z"
done
i=$(median < "$tmp/i"); z=$(median < "$tmp/z")
printf "%-34s %10s %10s %7s\n" "1500 B zero-copy vs inline" "$z" "$i" \
	"$(awk -v a="$z" -v b="$i" 'BEGIN {printf "%.2f", (b > 0 ? a / b : 0)}')"
