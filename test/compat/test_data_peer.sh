#!/bin/sh
# SPDX-License-Identifier: BSD-3-Clause
# test_data_peer.sh DPV_RUN DATA_PEER: test/vm/data_peer between two dpverbs processes through
# dpv-run, each on one end of a veth pair of this run's own (net_af_packet, an IPv4 address
# from its configuration, GID index 1), the TCP exchange on 127.0.0.1. The oracle of the
# pingpong and perftest tests, which check no payload: each operation's bytes are checked by
# the side they reach, both ways (data_peer.c): SENDs on RC, UC, UD (also from the link-local
# GID 0), an SRQ and XRC (every receive completion's status, opcode, byte_len and QP, UD's
# source QPN and GRH, every byte, nothing after a message's end), RC and UC WRITEs (every byte
# in its slot, nothing outside), RC READs (every byte read), FETCH_AND_ADD and CMP_AND_SWAP
# (the original values returned, the target's final values). Both sides must print
# "data_peer: passed".
run=$1 prog=$2
. "$(dirname "$0")/lib.sh"
pair_up tad 10.74.0
port=$((22000 + $$ % 10000))
PAIR_TIMEOUT=120
# one NAME ARGS...: data_peer ARGS on both sides; both pass every check
one() {
	name=$1; shift
	port=$((port + 1))
	run_pair "$name" "$prog" -p $port "$@" -- "$prog" -p $port "$@" 127.0.0.1
	check "$name: the server passed" "grep -q '^data_peer: passed (server)' '$out.srv'"
	check "$name: the client passed" "grep -q '^data_peer: passed (client)' '$out.cli'"
	grep -h '^FAIL' "$out.srv" "$out.cli" | sed "s/^/$name: /"
}
one "rc send" -g 1 -t rc -o send -s 4096 -n 50
one "uc send" -g 1 -t uc -o send -s 4096 -n 50
one "ud send" -g 1 -t ud -o send -s 1024 -n 50
one "ud send, GID 0" -g 0 -t ud -o send -s 512 -n 50
one "srq send" -g 1 -t srq -o send -s 2500 -n 50
one "xrc send" -g 1 -t xrc -o send -s 4096 -n 50
one "rc write" -g 1 -t rc -o write -s 8192 -n 50
one "uc write" -g 1 -t uc -o write -s 4096 -n 50
one "rc read" -g 1 -t rc -o read -s 8192 -n 50
one "rc fetch_and_add" -g 1 -t rc -o fa -n 50
one "rc cmp_and_swap" -g 1 -t rc -o cs -n 50
finish data_peer
