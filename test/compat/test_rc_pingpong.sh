#!/bin/sh
# SPDX-License-Identifier: BSD-3-Clause
# rdma-core's ibv_rc_pingpong, Debian's binary unmodified, between two dpverbs processes
# through dpv-run: each owns one end of a veth pair of this run's own (net_af_packet), with
# an IPv4 address from its configuration; they exchange QPNs, PSNs and GIDs over TCP on
# 127.0.0.1, connect an RC QP each (RTR resolves the peer: no ARP for GID index 0, ARP for
# index 1) and ping-pong 4096-byte SENDs (four 1024-byte packets each) over the veth pair.
# -c on both sides is rdma-core v44's check: the client writes 0 into the first byte of each
# page it sends, the server checks that byte of the last message it received and prints
# "invalid data in page N" (exit 0 all the same: the script greps for it); given to the client
# alone it checks nothing. One byte of each 4 KiB: the payload's bytes are compat_data_peer's
# to check (data_peer, every byte of RC, UC, UD, SRQ and XRC SENDs).
run=$1
. "$(dirname "$0")/lib.sh"
require ibverbs-utils ibv_rc_pingpong
pair_up dpvr 10.78.0
pingpong_gids ibv_rc_pingpong 4096 10.78.0
finish rc_pingpong
