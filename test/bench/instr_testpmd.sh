#!/bin/sh
# SPDX-License-Identifier: BSD-3-Clause
# instr_testpmd.sh [size] [burst] [txonly|rxonly] [vdev]: instructions per packet of
# dpdk-testpmd --forward-mode=txonly to net_null, or rxonly from it (the speed references),
# counted by valgrind --tool=callgrind as instr_per_wr.sh counts dpverbs: the difference of two
# runs (15 s and 30 s of forwarding under valgrind) divided by the difference of the packets
# they moved, so start-up and teardown cancel out.
set -u
size=${1:-64}
burst=${2:-32}
mode=${3:-txonly}
vdev=${4:-net_null0}
case $mode in
txonly) count=TX-packets ;;
rxonly) count=RX-packets ;;
*) echo "mode: txonly or rxonly"; exit 2 ;;
esac
command -v valgrind >/dev/null || { echo "valgrind not found"; exit 77; }
command -v dpdk-testpmd >/dev/null || { echo "dpdk-testpmd not found"; exit 77; }
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
run() {
	# testpmd forwards until a line arrives on its standard input
	(sleep "$1"; echo) | valgrind --tool=callgrind --callgrind-out-file="$tmp/cg.$1" \
		dpdk-testpmd -l 0-1 --no-pci --no-huge -m 1024 --vdev="$vdev" \
		--file-prefix="dpv-cg-$$-$1" --log-level=lib.eal:error -- --forward-mode="$mode" \
		--txpkts="$size" --burst="$burst" --nb-cores=1 --no-lsc-interrupt --auto-start \
		--total-num-mbufs=8192 2>/dev/null |
		awk -v c="$count" '$0 ~ c {p = $2} END {print p}'
	rm -rf "/var/run/dpdk/dpv-cg-$$-$1"
}
p1=$(run 15)
p2=$(run 30)
i1=$(awk '/^summary:/ {print $2}' "$tmp/cg.15")
i2=$(awk '/^summary:/ {print $2}' "$tmp/cg.30")
awk -v a="$i1" -v b="$i2" -v p="$p1" -v q="$p2" -v m="$mode" 'BEGIN {
	if (q - p <= 0) { print "testpmd moved no packets"; exit 1 }
	printf "testpmd %s instructions per packet: %.1f\n", m, (b - a) / (q - p) }'
