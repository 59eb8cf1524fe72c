#!/bin/sh
# bench_recv.sh DPV_BENCH: 64-byte frames received through verbs (an ALL_DEFAULT flow, WQEs
# reposted in lists of the burst size) beside dpdk-testpmd --forward-mode=rxonly, one lcore,
# each ROUNDS times alternating; prints per-second medians and the ratio. net_null is the
# source for both (it makes frames on every rx_burst; on a net_ring loopback testpmd rxonly
# has nobody to send). Then ns per frame by stage (cycle_stats = 1; the counters' own rdtsc
# calls are in the figures, a few ns per burst). Not a test: it never fails on a number.
set -u
bench=$1
secs=${DPV_BENCH_SECONDS:-4}
rounds=${DPV_BENCH_ROUNDS:-3}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

median() { sort -n | awk '{v[NR]=$1} END {if (NR == 0) print 0; else if (NR % 2) print v[(NR+1)/2]; else printf "%.3f\n", (v[NR/2]+v[NR/2+1])/2}'; }

testpmd_run() {
	timeout -s INT $((secs + 2)) dpdk-testpmd -l 0-1 --no-pci --vdev="$1" --in-memory \
		--file-prefix=dpv-bench-tpmd-$$ --log-level=lib.eal:error -- \
		--forward-mode=rxonly --burst="$2" --nb-cores=1 --stats-period=1 \
		--auto-start --no-lsc-interrupt 2>/dev/null |
		awk '/Rx-pps:/ {n++; if (n > 1) printf "%.3f\n", $2 / 1e6}'
	rm -rf "/var/run/dpdk/dpv-bench-tpmd-$$"
}

dpv_run() {
	DPV_EAL_ARGS="--vdev=$1 -l 1 --log-level=lib.eal:error" \
		"$bench" -m recv -b "$2" -t "$secs" 2>/dev/null | awk '/^Mpps/ {print $2}' | tail -n +2
}

if ! command -v dpdk-testpmd >/dev/null; then
	echo "dpdk-testpmd not found (package dpdk-dev): no reference to compare with"
	exit 77
fi
printf "%-40s %10s %10s %7s\n" "receive case (64 B)" "dpverbs" "testpmd" "ratio"
for vdev in net_null0 net_null0,copy=1; do
	for burst in 8 32; do
		: > "$tmp/d"; : > "$tmp/t"
		for r in $(seq "$rounds"); do
			dpv_run "$vdev" "$burst" >> "$tmp/d"
			testpmd_run "$vdev" "$burst" >> "$tmp/t"
		done
		d=$(median < "$tmp/d"); t=$(median < "$tmp/t")
		printf "%-40s %10s %10s %7s\n" "$vdev burst $burst" "$d" "$t" \
			"$(awk -v a="$d" -v b="$t" 'BEGIN {printf "%.2f", (b > 0 ? a / b : 0)}')"
	done
done

printf 'cycle_stats = 1\n' > "$tmp/cycles.conf"
for vdev in net_null0 net_null0,copy=1; do
	DPV_CONFIG=$tmp/cycles.conf DPV_EAL_ARGS="--vdev=$vdev -l 1 --log-level=lib.eal:error" \
		"$bench" -m recv -b 32 -t "$secs" -y 2>/dev/null | sed -n "s/^stages/$vdev burst 32: stages/p"
done
