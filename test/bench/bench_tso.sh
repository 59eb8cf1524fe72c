#!/bin/sh
# SPDX-License-Identifier: BSD-3-Clause
# bench_tso.sh TSO_PIPELINE GSO_REF: software TSO throughput (Gbit/s of segments, headers
# included, 60 KiB per WR, mss 1448, one core, to net_null): dpverbs' segmenter through verbs
# (tso_pipeline) beside rte_gso_segment + DPDK's software checksums (gso-ref), alternating,
# three rounds; medians and the ratio. Not a test: it never fails on a number.
set -u
pipeline=$1; ref=$2
rounds=${DPV_BENCH_ROUNDS:-3}
median() { sort -n | awk '{v[NR]=$1} END {if (NR % 2) print v[(NR+1)/2]; else printf "%.3f\n", (v[NR/2]+v[NR/2+1])/2}'; }
: > /tmp/dpv-bench-tso.$$; : > /tmp/dpv-bench-gso.$$
for r in $(seq "$rounds"); do
	DPV_EAL_ARGS="--vdev=net_null0 -l 1 --log-level=lib.eal:error" \
		"$pipeline" -n 61440 -r 40000 -w 61440 -m 1448 2>/dev/null |
		sed -n 's/.*, \([0-9.]*\) Gbit\/s/\1/p' >> /tmp/dpv-bench-tso.$$
	"$ref" -l 1 --no-pci --vdev=net_null0 --in-memory --file-prefix=dpv-gso-$$ \
		--log-level=lib.eal:error -- -t 4 2>/dev/null | awk '/^Gbps/ {print $2}' | tail -n +2 |
		median >> /tmp/dpv-bench-gso.$$
	rm -rf "/var/run/dpdk/dpv-gso-$$"            # gso-ref leaves its runtime directory
done
d=$(median < /tmp/dpv-bench-tso.$$); g=$(median < /tmp/dpv-bench-gso.$$)
rm -f /tmp/dpv-bench-tso.$$ /tmp/dpv-bench-gso.$$
printf "%-44s %8s %8s %6s\n" "software TSO, 60 KiB WRs, mss 1448 (Gbit/s)" dpverbs rte_gso ratio
printf "%-44s %8s %8s %6s\n" "net_null, one core" "$d" "$g" \
	"$(awk -v a="$d" -v b="$g" 'BEGIN {printf "%.2f", (b > 0 ? a / b : 0)}')"
