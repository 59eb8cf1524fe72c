#!/bin/sh
# SPDX-License-Identifier: BSD-3-Clause
# rdma-core's ibv_ud_pingpong, Debian's binary unmodified, between two dpverbs processes
# through dpv-run: each owns one end of a veth pair of this run's own (net_af_packet), with
# an IPv4 address from its configuration; they exchange QPNs over TCP on 127.0.0.1 and
# ping-pong UD datagrams over the veth pair.
# -c on both sides is rdma-core v44's check: the client writes 0 into the first byte of each
# page it sends, the server checks that byte of the last message it received and prints
# "invalid data in page N" (exit 0 all the same: the script greps for it); given to the client
# alone it checks nothing. One byte of each 4 KiB (here the first of the 512, after the GRH):
# the payload's bytes are compat_data_peer's to check (data_peer, every byte of RC, UC, UD,
# SRQ and XRC SENDs).
# GID index 0 (link-local: the MAC inside, no ARP), then 1 (IPv4): there the server resolves
# the client's address while the client waits on its TCP socket, polling nothing — the
# library's keeper answers the ARP request (doc/roce-addressing.md, "Neighbours").
run=$1
. "$(dirname "$0")/lib.sh"
require ibverbs-utils ibv_ud_pingpong
pair_up dpvu 10.77.0
pingpong_gids ibv_ud_pingpong 512 10.77.0
finish ud_pingpong
