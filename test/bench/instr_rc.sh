#!/bin/sh
# SPDX-License-Identifier: BSD-3-Clause
# instr_rc.sh BENCH_RC DPV_RUN [OP [SIZE]]: instructions per RC message (OP write or send,
# SIZE bytes, 64 by default) between two QPs of one port through its RoCE loopback
# (bench-rc on net_ring0), counted by valgrind --tool=callgrind as the difference of a run of
# 2N and one of N messages (start, connection and teardown cancel out). Both sides' work is
# in the count: post, frames, the responder, the ACK, the completion. Unlike msg/s, it does
# not depend on what else the machine does: use it to compare two builds of the RC path.
set -u
bench=$1 run=$2 op=${3:-write} size=${4:-64}
N=${DPV_INSTR_MSGS:-20000}
command -v valgrind >/dev/null || { echo "valgrind not found"; exit 77; }
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
# no progress thread: its looks, as callgrind schedules it, would be counted with the messages
printf 'port_addr = net_ring0 10.5.0.1\nprogress_thread = 0\n' > "$tmp/loop.conf"
count() {
	DPV_CONFIG=$tmp/loop.conf \
	DPV_EAL_ARGS="--vdev=net_ring0 -l 0 --no-huge -m 512 --log-level=lib.eal:error" \
		"$run" valgrind --tool=callgrind --callgrind-out-file="$tmp/cg.$1" \
		"$bench" -d dpv_net_ring0 -x 1 -o "$op" -s "$size" -n "$1" > "$tmp/out.$1" 2>&1 ||
		{ echo "FAIL: bench-rc -n $1 under valgrind:"; tail -5 "$tmp/out.$1"; exit 1; }
	awk '/^(summary|totals):/ {print $2; exit}' "$tmp/cg.$1"
}
a=$(count "$N") || exit 1
b=$(count $((2 * N))) || exit 1
echo "$a $b $N" | awk -v op="$op" -v s="$size" \
	'{ printf "rc %s %s B: %.1f instructions per message (callgrind, %d vs %d messages)\n",
	   op, s, ($2 - $1) / $3, 2 * $3, $3 }'
