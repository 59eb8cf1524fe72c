#!/bin/sh
# SPDX-License-Identifier: BSD-3-Clause
# rdma-core's pingpongs, Debian's binaries unmodified, in the modes the other compat tests do
# not run, between two dpverbs processes through dpv-run on the ends of a veth pair of this
# run's own (net_af_packet), GID index 1 (RoCE v2 over IPv4: ARP resolves the peer), QP
# numbers exchanged over TCP on 127.0.0.1, -c on both sides (the server checks the first byte
# of each page of the last message it received: one byte; the payload is compat_data_peer's):
# - ibv_uc_pingpong: UC QPs (no ACKs), 4096-byte SENDs of four packets each;
# - -e with ibv_rc_pingpong, ibv_uc_pingpong and ibv_ud_pingpong: each waits in
#   ibv_get_cq_event, acks with ibv_ack_cq_events and re-arms with ibv_req_notify_cq;
# - ibv_rc_pingpong -t (ibv_create_cq_ex with completion timestamps, ibv_start_poll /
#   ibv_next_poll / ibv_wc_read_completion_ts), -N (ibv_qp_ex: ibv_wr_start / ibv_wr_send /
#   ibv_wr_set_sge / ibv_wr_complete), and the three together: -t -e takes an event without
#   a completion behind it as an error (ENOENT from ibv_start_poll), so a stale event must
#   never reach it (doc/compat.md);
# - the options of device features dpverbs lacks, one process each on net_null: -o, -O and
#   -o -P (on-demand paging) and -j (device memory) must fail as rdma-core's tools fail on a
#   device without them (rxe): exit 1 with rc_pingpong's own message.
run=$1
. "$(dirname "$0")/lib.sh"
require ibverbs-utils ibv_rc_pingpong ibv_uc_pingpong ibv_ud_pingpong
pair_up dpvm 10.76.0
eal_a="$eal_a -l 0"; eal_b="$eal_b -l $ccpu"
PAIR_TIMEOUT=60
port=$((21000 + $$ % 10000))
# pair NAME TOOL OPTIONS...: server and client, both must exit 0 after 50 iterations
pair() {
	name=$1; tool=$2; shift 2
	port=$((port + 1))
	args="-d dpv_net_af_packet0 -g 1 -n 50 -c -p $port $*"
	run_pair "$name" $tool $args -- $tool $args 127.0.0.1
	check "$name: client: 50 iterations" "grep -q '^50 iters in' '$out.cli'"
	check "$name: server: 50 iterations" "grep -q '^50 iters in' '$out.srv'"
	check "$name: the server's -c: no invalid data" "! grep -q 'invalid data' '$out.srv'"
	grep -h -a 'iters in' "$out.cli" | sed "s/^/$name: /"
}
pair "uc" ibv_uc_pingpong
check "uc: RoCE v2 IPv4 GIDs on both sides" \
	"grep -q 'local address:.*GID ::ffff:10.76.0.2' '$out.cli' && grep -q 'remote address:.*GID ::ffff:10.76.0.1' '$out.cli'"
pair "uc -e" ibv_uc_pingpong -e
pair "rc -e" ibv_rc_pingpong -e
pair "ud -e" ibv_ud_pingpong -e
pair "rc -t" ibv_rc_pingpong -t
check "rc -t: receive completion timestamps" \
	"grep -Eq '^Average receive completion clock cycles = [0-9]' '$out.cli'"
pair "rc -N" ibv_rc_pingpong -N
pair "rc -t -N -e" ibv_rc_pingpong -t -N -e
# device features dpverbs does not have: refused before any connection, as on rxe
refuse() {
	name=$1; msg=$2; shift 2
	DPV_EAL_ARGS="--vdev=net_null0 $QUIET" timeout 60 "$run" ibv_rc_pingpong -d dpv_net_null0 \
		"$@" > "$dir/refuse" 2>&1
	rc=$?
	check "$name: exits 1" "[ $rc -eq 1 ]"
	check "$name: '$msg'" "grep -q \"$msg\" '$dir/refuse'"
	[ $rc -eq 1 ] || cat -v "$dir/refuse"
}
refuse "rc -o" "The device isn't ODP capable" -o
refuse "rc -O" "The device isn't ODP capable" -O
refuse "rc -o -P" "The device isn't ODP capable" -o -P
refuse "rc -j" "Device doesn't support dm allocation" -j
finish pingpong_modes
