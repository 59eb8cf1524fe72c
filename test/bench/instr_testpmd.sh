#!/bin/sh
# instr_testpmd.sh [size] [burst]: instructions per packet of dpdk-testpmd --forward-mode=txonly
# to net_null (the speed reference), counted by valgrind --tool=callgrind as instr_per_wr.sh
# counts dpverbs: the difference of two runs (15 s and 30 s of forwarding under valgrind)
# divided by the difference of the packets they sent, so start-up and teardown cancel out.
set -u
size=${1:-64}
burst=${2:-32}
command -v valgrind >/dev/null || { echo "valgrind not found"; exit 77; }
command -v dpdk-testpmd >/dev/null || { echo "dpdk-testpmd not found"; exit 77; }
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
run() {
	# testpmd forwards until a line arrives on its standard input
	(sleep "$1"; echo) | valgrind --tool=callgrind --callgrind-out-file="$tmp/cg.$1" \
		dpdk-testpmd -l 0-1 --no-pci --no-huge -m 1024 --vdev=net_null0 \
		--file-prefix="dpv-cg-$$-$1" --log-level=lib.eal:error -- --forward-mode=txonly \
		--txpkts="$size" --burst="$burst" --nb-cores=1 --no-lsc-interrupt --auto-start \
		--total-num-mbufs=8192 2>/dev/null |
		awk '/TX-packets/ {p = $2} END {print p}'
	rm -rf "/var/run/dpdk/dpv-cg-$$-$1"
}
p1=$(run 15)
p2=$(run 30)
i1=$(awk '/^summary:/ {print $2}' "$tmp/cg.15")
i2=$(awk '/^summary:/ {print $2}' "$tmp/cg.30")
awk -v a="$i1" -v b="$i2" -v p="$p1" -v q="$p2" 'BEGIN {
	if (q - p <= 0) { print "testpmd sent no packets"; exit 1 }
	printf "testpmd txonly instructions per packet: %.1f\n", (b - a) / (q - p) }'
