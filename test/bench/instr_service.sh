#!/bin/sh
# SPDX-License-Identifier: BSD-3-Clause
# instr_service.sh DPV_BENCH [dpv-bench options]: instructions per WR on each side of a
# service-mode QP (dpv-bench -p service, the EAL with lcores 0 and 1), counted by valgrind
# --tool=callgrind as the difference of a 200k-WR and a 400k-WR run, as instr_per_wr.sh does:
#   poster   what the posting thread's ibv_post_send and ibv_poll_cq calls took (inclusive);
#   service  what the calls of the QP's send work took (FN, inclusive: dpv__raw_progress,
#            which port_service calls only for a QP with work to do), on the service lcore
#            or in a poller that helps it (dpv__service_qp_help: under valgrind, which runs
#            one thread at a time, the poster helps; its help is counted here, not above).
# Valgrind runs one thread at a time, so the thread that waits for the other spins or sleeps:
# whole-thread totals would count the waiting; these count only the calls that do the work
# (and a poster's failed posts while the SQ is full, said as "stuck" per 1000 WRs: each
# costs about a hundred instructions). cg_calls.py reads the callgrind files.
set -u
bench=$1
shift
fn=${FN:-dpv__raw_progress}
here=$(dirname "$0")
command -v valgrind >/dev/null || { echo "valgrind not found"; exit 77; }
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

# "posting-instructions service-instructions stuck" of a run of $1 WRs
count() {
	n=$1
	shift
	DPV_EAL_ARGS="--vdev=net_null0 -l 0,1 --no-huge -m 512 --log-level=lib.eal:error" \
		valgrind --tool=callgrind --separate-threads=yes \
		--callgrind-out-file="$tmp/cg.$n" "$bench" -p service "$@" -n "$n" \
		-t 100000 2>/dev/null > "$tmp/out.$n"
	stuck=$(awk '/^stuck/ {print $2}' "$tmp/out.$n")
	cat "$tmp"/cg.$n-* > "$tmp/all.$n"
	python3 "$here/cg_calls.py" "$tmp/all.$n" dpv_post_send dpv_poll_cq "$fn" \
		dpv__service_qp_help |
		awk -v s="${stuck:-0}" '{v[NR] = $3} END {print v[1] + v[2] - v[4], v[3], s}'
}
a=$(count 200000 "$@")
b=$(count 400000 "$@")
echo "$a $b" | awk -v fn="$fn" '{
	d = 200000
	printf "poster  (ibv_post_send + ibv_poll_cq): %.1f instructions per WR (stuck %.2f per 1000 WRs)\n",
		($4 - $1) / d, ($6 - $3) / d * 1000
	printf "service (%s): %.1f instructions per WR\n", fn, ($5 - $2) / d }'
