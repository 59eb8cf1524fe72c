#!/bin/sh
# SPDX-License-Identifier: BSD-3-Clause
# instr_per_wr.sh DPV_BENCH [dpv-bench options]: instructions per WR of a dpv-bench case,
# counted by valgrind --tool=callgrind as the difference of a 200k-WR and a 400k-WR run (start
# and teardown cancel out). Unlike Mpps, the count does not depend on what else the machine is
# doing: use it to compare two builds of the fast path. Prints the functions that changed most
# (with what was inlined into them from headers).
# With -m recv the count is per received frame (dpv-bench stops after that many frames), on
# one receive queue (as testpmd's default); DPV_BENCH_VDEV names the port (net_null0).
set -u
bench=$1
shift
command -v valgrind >/dev/null || { echo "valgrind not found"; exit 77; }
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
printf 'queues_per_port = 1\n' > "$tmp/q1.conf"
conf=
case " $* " in *" -m recv "*) conf=$tmp/q1.conf ;; esac
count() {
	n=$1
	shift
	DPV_CONFIG=$conf DPV_EAL_ARGS="--vdev=${DPV_BENCH_VDEV:-net_null0} -l 0 --no-huge -m 512 --log-level=lib.eal:error" \
		valgrind --tool=callgrind --callgrind-out-file="$tmp/cg.$n" "$bench" "$@" -n "$n" \
		-t 100000 > /dev/null 2>&1
	callgrind_annotate "$tmp/cg.$n" 2>/dev/null |
		awk '/^ *[0-9,]+ \( *[0-9.]+%\)  [^ ]+:[^ ]+/ {v=$1; gsub(",","",v);
		     for (i = 2; i <= NF; i++) if ($i ~ /:/) { n = $i; break }; sub(/.*:/, "", n);
		     print n, v}' |
		awk '{s[$1] += $2} END {for (f in s) print f, s[f]}' | sort -k1,1 > "$tmp/f.$n"
	awk '/^(summary|totals):/ {print $2; exit}' "$tmp/cg.$n"
}
a=$(count 200000 "$@")
b=$(count 400000 "$@")
unit=WR
case " $* " in *" -m recv "*) unit=frame ;; esac
awk -v a="$a" -v b="$b" -v u="$unit" 'BEGIN {printf "instructions per %s: %.1f\n", u, (b - a) / 200000}'
join "$tmp/f.200000" "$tmp/f.400000" |
	awk '{d = ($3 - $2) / 200000; if (d >= 1) printf "  %7.1f  %s\n", d, $1}' | sort -rn | head -15
