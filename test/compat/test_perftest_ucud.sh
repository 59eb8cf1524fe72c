#!/bin/sh
# SPDX-License-Identifier: BSD-3-Clause
# perftest's SEND and WRITE tools over UC and UD QPs (-c UC, -c UD, where perftest offers
# them), Debian's binaries unmodified, between two dpverbs processes through dpv-run on the
# ends of a veth pair of this run's own (net_af_packet), GID index 1 (RoCE v2, IPv4).
# With -e (UD bandwidth, and RC latency) both sides wait in ibv_get_cq_event instead of
# polling. Checked: both processes exit 0 and the client reports its result line and
# connection type; the figures are printed, not judged. No tool looks at a payload, and a UC
# WRITE completes at its sender whether or not it arrived: for ib_write_bw and ib_write_lat
# -c UC the server's QP counters (dpverbs' debug line when the QP goes) must show every WRITE
# packet received (2000 x 4 of 1 KiB; 500) and none dropped. The bytes of UC WRITEs and SENDs
# are compat_data_peer's to check.
# UC and UD are unreliable: a receiver that counts its receive completions (ib_send_bw's
# server) waits forever for a lost message. On the veth the only place a frame is lost is the
# receiving port's af_packet ring when its process does not run for a while (a shared
# machine): each port gets framecnt=8192 and every bandwidth test sends fewer frames than
# that (ib_send_bw -c UC: 1000 messages of 4 packets; -c UD: 2000 datagrams), so the ring
# holds them all whatever the scheduler does (doc/compat.md, "UC and UD bandwidth").
run=$1
. "$(dirname "$0")/lib.sh"
require perftest ib_send_bw
pair_up dpvu 10.75.0
perftest_up 31000
one() {
	tool=$1; c=$2; n=$3; shift 3
	ev=$(echo " $*" | grep -o ' -e$\| -e ')    # completion events (ibv_get_cq_event)
	name="$tool -c $c${ev% }"
	perftest_one "$name" "$tool" "$n" -c "$c" "$@"
	check "$name: the client's connection type" "grep -q 'Connection type : $c' '$out.cli'"
}
# uc_rcvd NAME PACKETS: the server's UC QP received every WRITE packet and dropped none (its
# RC engine's counters, logged at debug level when the QP is destroyed)
uc_rcvd() {
	line=$(grep -a 'packets sent, .* received,' "$out.srv" | head -1)
	echo "$1: the server's QP: ${line#*QP}"
	check "$1: the server's QP received $2 packets, dropped none" \
		"echo '$line' | grep -q ' $2 received, .* 0 dropped'"
}
one ib_send_bw UC 1000 -n 1000 -s 4096
eal_a0=$eal_a
eal_a="$eal_a --log-level=lib.dpverbs.verbs:debug"
one ib_write_bw UC 2000 -n 2000 -s 4096
uc_rcvd "ib_write_bw -c UC" 8000
one ib_send_lat UC 500 -n 500 -s 64
one ib_write_lat UC 500 -n 500 -s 64
uc_rcvd "ib_write_lat -c UC" 500
eal_a=$eal_a0
one ib_send_bw UD 2000 -n 2000 -s 1024
one ib_send_lat UD 500 -n 500 -s 64
one ib_send_bw UD 1000 -n 1000 -s 1024 -e
one ib_send_lat RC 200 -n 200 -s 64 -e
finish perftest_ucud
