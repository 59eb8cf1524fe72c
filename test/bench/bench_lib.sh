# SPDX-License-Identifier: BSD-3-Clause
# Shared by the bench scripts: $secs (DPV_BENCH_SECONDS, default 4 s a run), a scratch
# directory $tmp removed at exit, medians and ratios of figures, dpdk-testpmd's rates.
secs=${DPV_BENCH_SECONDS:-4}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

# the median of the numbers on stdin, one a line (0 when there are none)
median() { sort -n | awk '{v[NR]=$1} END {if (NR == 0) print 0; else if (NR % 2) print v[(NR+1)/2]; else printf "%.3f\n", (v[NR/2]+v[NR/2+1])/2}'; }
# A / B to two places (0 when B is 0)
ratio() { awk -v a="$1" -v b="$2" 'BEGIN {printf "%.2f", (b > 0 ? a / b : 0)}'; }
# the lowest and highest of the numbers on stdin, "lo-hi"
spread() { sort -n | awk 'NR == 1 {lo = $1} {hi = $1} END {printf "%s-%s", lo, hi}'; }

# tpmd_rates FIELD EAL_ARGS APP_ARGS: dpdk-testpmd for $secs s (in memory, stats every second,
# started at once); its FIELD (Rx-pps or Tx-pps) in Mpps each second but the first (the
# ramp-up), one a line
tpmd_rates() {
	# shellcheck disable=SC2086
	timeout -s INT $((secs + 2)) dpdk-testpmd --no-pci $2 --in-memory \
		--file-prefix=dpv-bench-tpmd-$$ --log-level=lib.eal:error -- $3 --stats-period=1 \
		--auto-start --no-lsc-interrupt 2>/dev/null |
		awk -v f="$1:" '$0 ~ f {n++; if (n > 1) printf "%.3f\n", $2 / 1e6}'
	rm -rf "/var/run/dpdk/dpv-bench-tpmd-$$"     # testpmd leaves its runtime directory
}
