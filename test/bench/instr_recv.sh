#!/bin/sh
# SPDX-License-Identifier: BSD-3-Clause
# instr_recv.sh DPV_BENCH [vdev] [burst]: instructions per received 64-byte frame, dpverbs
# (dpv-bench -m recv: an ALL_DEFAULT flow, WQEs reposted in lists of the burst) beside
# dpdk-testpmd --forward-mode=rxonly on the same port, both counted by valgrind's callgrind as
# the difference of two runs (instr_per_wr.sh, instr_testpmd.sh), so neither start-up nor the
# machine's load counts; prints both, their ratio, and dpverbs' functions by instructions per
# frame. Not a test: it never fails on a number.
set -u
bench=$1
vdev=${2:-net_null0}
burst=${3:-32}
here=$(dirname "$0")
command -v valgrind >/dev/null || { echo "valgrind not found"; exit 77; }
command -v dpdk-testpmd >/dev/null || { echo "dpdk-testpmd not found"; exit 77; }
d=$(DPV_BENCH_VDEV=$vdev sh "$here/instr_per_wr.sh" "$bench" -m recv -b "$burst")
t=$(sh "$here/instr_testpmd.sh" 64 "$burst" rxonly "$vdev")
echo "$d"
echo "$t"
a=$(echo "$d" | awk '/^instructions per frame/ {print $4}')
b=$(echo "$t" | awk '/instructions per packet/ {print $NF}')
awk -v a="$a" -v b="$b" -v v="$vdev" -v n="$burst" 'BEGIN {
	if (a > 0) printf "%s burst %s: testpmd/dpverbs instructions per frame %.3f\n", v, n, b / a }'
