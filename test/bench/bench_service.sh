#!/bin/sh
# SPDX-License-Identifier: BSD-3-Clause
# bench_service.sh DPV_BENCH: service mode beside direct mode, 64-byte RAW_PACKET SENDs to
# net_null, inline and non-inline, bursts 8 and 32. Each case runs ROUNDS times (default 5)
# in each mode, alternating direct and service, DPV_BENCH_SECONDS (default 4) each; a run's
# rate is the median of its per-second rates (the first second dropped). Prints per case the
# median of the runs with their spread (min-max) for both modes and the ratio of the medians.
# The EAL gets lcores 1 and 0 in both modes: the posting thread on lcore 1, the service lcore
# on lcore 0 (idle in direct mode). Not a test: it never fails on a number.
set -u
bench=$1
rounds=${DPV_BENCH_ROUNDS:-5}
. "$(dirname "$0")/bench_lib.sh"

run() {
	DPV_EAL_ARGS="--vdev=net_null0 -l 1,0 --log-level=lib.eal:error" \
		"$bench" "$@" -s 64 -t "$secs" 2>/dev/null | awk '/^Mpps/ {print $2}' |
		tail -n +2 | median
}

printf "%-22s %22s %22s %6s\n" "case (64 B, net_null)" "direct Mpps (spread)" \
	"service Mpps (spread)" "ratio"
for mode in inline zc; do
	for burst in 8 32; do
		: > "$tmp/d"; : > "$tmp/s"
		for r in $(seq "$rounds"); do
			run -m "$mode" -b "$burst" -p direct >> "$tmp/d"
			run -m "$mode" -b "$burst" -p service >> "$tmp/s"
		done
		d=$(median < "$tmp/d"); s=$(median < "$tmp/s")
		printf "%-22s %8s (%11s) %8s (%11s) %6s\n" \
			"$([ "$mode" = zc ] && echo non-inline || echo inline), burst $burst" \
			"$d" "$(spread < "$tmp/d")" "$s" "$(spread < "$tmp/s")" \
			"$(awk -v a="$s" -v b="$d" 'BEGIN {printf "%.2f", (b > 0 ? a / b : 0)}')"
	done
done
