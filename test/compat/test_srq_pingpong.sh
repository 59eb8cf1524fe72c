#!/bin/sh
# SPDX-License-Identifier: BSD-3-Clause
# rdma-core's ibv_srq_pingpong, Debian's binary unmodified, between two dpverbs processes
# through dpv-run, set up as test_rc_pingpong.sh: each owns one end of a veth pair of this
# run's own (net_af_packet) with an IPv4 address from its configuration; they exchange QPNs,
# PSNs and GIDs over TCP on 127.0.0.1 and connect 16 RC QPs each, all of whose receives come
# from one shared receive queue per side (ibv_create_srq, ibv_post_srq_recv: 500 WQEs
# refilled as they complete), and ping-pong 4096-byte SENDs (four 1024-byte packets) on every
# QP over the veth pair with a RoCE v2 GID (-g 1): 200 exchanges in all, spread over the QPs;
# then the same sleeping on completion events (-e).
# -c on both sides is rdma-core v44's check: the client writes 0 into the first byte of each
# page it sends, the server checks that byte of the last message it received and prints
# "invalid data in page N" (exit 0 all the same: the script greps for it); given to the client
# alone it checks nothing. One byte of each 4 KiB: the payload's bytes are compat_data_peer's
# to check (data_peer, every byte of RC, UC, UD, SRQ and XRC SENDs).
run=$1
. "$(dirname "$0")/lib.sh"
require ibverbs-utils ibv_srq_pingpong
pair_up dpvs 10.79.0
port=$((20000 + ($$ + 5000) % 10000))
k=0
for mode in poll events; do
	extra=; [ $mode = events ] && extra=-e
	args="-d dpv_net_af_packet0 -g 1 -s 4096 -n 200 -p $((port + k)) $extra"
	k=$((k + 1))
	run_pair $mode ibv_srq_pingpong $args -c -- ibv_srq_pingpong $args -c 127.0.0.1
	check "$mode: the server's -c: no invalid data" "! grep -q 'invalid data' '$out.srv'"
	check "$mode: client: 200 iterations" "grep -q '^200 iters in' '$out.cli'"
	check "$mode: server: 200 iterations" "grep -q '^200 iters in' '$out.srv'"
	check "$mode: 16 QPs connected, RoCE v2 GIDs" \
		"[ \$(grep -c 'local address:.*GID ::ffff:10.79.0.2' '$out.cli') -eq 16 ]"
done
finish srq_pingpong
