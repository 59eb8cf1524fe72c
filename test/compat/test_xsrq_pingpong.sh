#!/bin/sh
# SPDX-License-Identifier: BSD-3-Clause
# rdma-core's ibv_xsrq_pingpong, Debian's binary unmodified, between two dpverbs processes
# through dpv-run, set up as test_rc_pingpong.sh: each owns one end of a veth pair of this
# run's own (net_af_packet) with an IPv4 address from its configuration. Each side opens an
# XRC domain (on /tmp/xrc_domain, O_CREAT), an XRC SRQ on it (ibv_create_srq_ex,
# ibv_get_srq_num), an XRC_RECV QP on the domain and an XRC_SEND QP; they exchange QPNs, PSNs,
# SRQ numbers and GIDs over TCP on 127.0.0.1 and ping-pong 4096-byte SENDs whose
# remote_srqn names the peer's SRQ, over the veth pair with a RoCE v2 GID (-g 1), polling and
# sleeping on events (-e): both print "success" and exit 0 (the tool checks no payload; the
# bytes of XRC SENDs are compat_data_peer's to check). The capture of the polling run on the
# client's veth end (dumpcap, read by tshark: both from the tshark packages the set-up
# installs; missing, the test fails) must show the server's XRC SENDs, each naming the
# client's SRQ number in its XRCETH four bytes after the BTH, and XRC ACKs back.
run=$1
. "$(dirname "$0")/lib.sh"
require ibverbs-utils ibv_xsrq_pingpong
check "dumpcap and tshark installed (apt-get install tshark; ./dpv.sh does)" \
	"command -v dumpcap > /dev/null && command -v tshark > /dev/null"
cap=
had_domain=false; [ -e /tmp/xrc_domain ] && had_domain=true   # the tool's domain file
at_exit '$had_domain || rm -f /tmp/xrc_domain'
at_exit '[ -n "$cap" ] && kill "$cap" 2>/dev/null'
pair_up dpvx 10.80.0
port=$((20000 + ($$ + 7000) % 10000))
k=0
for mode in poll events; do
	extra=; [ $mode = events ] && extra=-e
	args="-d dpv_net_af_packet0 -g 1 -s 4096 -n 20 -p $((port + k)) $extra"
	k=$((k + 1))
	if [ $mode = poll ] && command -v dumpcap > /dev/null && command -v tshark > /dev/null; then
		# what the client's end sees (dumpcap: tshark's capture engine, without its CPU
		# cost while the pingpong runs; an XRC sender retries for only 7 x 67 ms)
		dumpcap -q -i "$b" -w "$dir/cap.pcap" -f 'udp port 4791' 2> /dev/null &
		cap=$!
		sleep 2
	fi
	run_pair $mode stdbuf -oL ibv_xsrq_pingpong $args -- stdbuf -oL ibv_xsrq_pingpong $args 127.0.0.1
	if [ -n "$cap" ]; then
		sleep 1
		kill "$cap"; wait "$cap" 2>/dev/null; cap=
	fi
	check "$mode: client: success" "grep -q '^success' '$out.cli'"
	check "$mode: server: success" "grep -q '^success' '$out.srv'"
	check "$mode: IPv4 GIDs on both sides" \
		"grep -q 'local:.*GID ::ffff:10.80.0.2' '$out.cli' && grep -q 'remote:.*GID ::ffff:10.80.0.1' '$out.cli'"
done
check "capture: dumpcap wrote the polling run's capture" "[ -s '$dir/cap.pcap' ]"
if [ -s "$dir/cap.pcap" ]; then
	# the client's SRQ number, as it printed it (hex); every XRC SEND the server sent names it
	srqn=$(sed -n 's/.*local:.*SRQN \([0-9a-f]*\),.*/\1/p' "$dir/poll.cli")
	tshark -r "$dir/cap.pcap" -T fields -e udp.payload 2> /dev/null > "$dir/payloads"
	# BTH opcode: byte 0; XRCETH: bytes 12-15 (reserved byte, then the 24-bit SRQ number)
	sends=$(grep -c '^a[0-4]' "$dir/payloads")
	named=$(grep '^a[0-4]' "$dir/payloads" | cut -c27-32 | grep -c "^$srqn$")
	acks=$(grep -c '^b1' "$dir/payloads")
	check "capture: XRC SENDs from the server (opcodes 0xA0-0xA4): $sends" "[ $sends -ge 20 ]"
	check "capture: each names the client's SRQ $srqn in its XRCETH ($named of $sends)" \
		"[ $named -eq $sends ]"
	check "capture: XRC ACKs (0xB1) from the client's XRC_RECV QP: $acks" "[ $acks -ge 1 ]"
fi
finish xsrq_pingpong
