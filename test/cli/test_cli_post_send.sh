#!/bin/sh
# SPDX-License-Identifier: BSD-3-Clause
# dpv-testpmd's post send on net_pcap: the completion of a good frame (status, opcode,
# byte_len) and the frame on the wire; the ibv_post_send errno table by hand: a frame too
# short, a QP in INIT, a frame above the MTU (EINVAL), an lkey no MR has (LOC_PROT_ERR
# completion, QP in SQE, back to RTS); a list from a pcap file; TSO and IP_CSUM through it;
# a service-mode QP (qp create ... mode service) sending the same frame.
set -u
tpmd=$1
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
. "$(dirname "$0")/lib.sh"

udp=ffffffffffff02000000000108004500002e000100004011000001020304050607080009000900160000
udp=${udp}000102030405060708090a0b0c0d0e0f1011
tcp=020000000002020000000001080045000028000100004006000001020304050607080400005000000001
tcp=${tcp}000000005018010000000000

/usr/bin/python3 - "$dir/list.pcap" <<'PY' 2>/dev/null
import sys
from scapy.all import Ether, IP, UDP, Raw, wrpcap
wrpcap(sys.argv[1], [Ether(dst='02:00:00:00:00:02') / IP(dst='10.0.0.2') / UDP(dport=9) /
                     Raw(bytes(range(i + 1))) for i in range(5)])
PY

run post --vdev=net_pcap0,tx_pcap="$dir/wire.pcap" -- <<EOF2
qp create raw 0
post send 0 hex $udp signaled
post send 0 hex 0102030405 signaled
post send 0 hex $udp signaled pad 1515
post send 0 hex $udp signaled pad 1514
qp modify 0 reset
qp modify 0 init
post send 0 hex $udp signaled
qp modify 0 rtr
qp modify 0 rts
post send 0 hex $udp lkey 0xdead
show qp 0
post send 0 hex $udp signaled
qp modify 0 rts
post send 0 file $dir/list.pcap signaled ip_csum
post send 0 hex $tcp signaled tso 1000 pad 3054
show port stats 0
quit
EOF2
check "exit status 0 (got $rc)" "[ $rc -eq 0 ]"
o=$(out_of post "post send 0 hex $udp signaled")
check "a good frame: SUCCESS, SEND, byte_len 60 ($o)" \
	"echo '$o' | grep -q 'completion: wr_id 1 status SUCCESS (success) opcode SEND byte_len 60'"
o=$(out_of post "post send 0 hex 0102030405 signaled")
check "5 bytes: EINVAL, bad_wr the first WR ($o)" \
	"echo '$o' | grep -q 'ibv_post_send: EINVAL .*bad_wr: WR 0 (wr_id 2); 0 WR(s) before it posted'"
o=$(out_of post "post send 0 hex $udp signaled pad 1515")
check "1515 bytes on an MTU of 1500: EINVAL ($o)" "echo '$o' | grep -q 'ibv_post_send: EINVAL'"
o=$(out_of post "post send 0 hex $udp signaled pad 1514")
check "1514 bytes: SUCCESS ($o)" "echo '$o' | grep -q 'status SUCCESS .* byte_len 1514'"
o=$(out_of post "qp modify 0 init")
check "RESET to INIT ($o)" "[ '$o' = 'QP 0: init' ]"
o=$(sed -n '/qp modify 0 init/,/qp modify 0 rtr/p' "$dir/post.out" | grep ibv_post_send)
check "a QP in INIT: EINVAL ($o)" "echo '$o' | grep -q 'ibv_post_send: EINVAL'"
o=$(out_of post "post send 0 hex $udp lkey 0xdead")
check "lkey 0xdead: posted, unsignaled, LOC_PROT_ERR completion ($o)" \
	"echo '$o' | grep -q 'status LOC_PROT_ERR (local protection error)'"
o=$(out_of post "show qp 0")
check "the QP is in SQE after it, one execution error counted" \
	"echo '$o' | grep -q 'state sqe' && echo '$o' | grep -q 'errors 1, completed'"
o=$(sed -n '/show qp 0/,/qp modify 0 rts/p' "$dir/post.out" | grep completion)
check "posted in SQE: flushed (WR_FLUSH_ERR) ($o)" "echo '$o' | grep -q WR_FLUSH_ERR"
o=$(out_of post "post send 0 file $dir/list.pcap signaled ip_csum")
check "a pcap of 5 frames: one list, 5 completions" \
	"echo '$o' | grep -q 'posted 5 WR(s)' && [ \$(echo '$o' | grep -c 'status SUCCESS') = 5 ]"
o=$(out_of post "post send 0 hex $tcp signaled tso 1000 pad 3054")
check "TSO of 3000 bytes, mss 1000: one TSO completion ($o)" \
	"echo '$o' | grep -q 'status SUCCESS (success) opcode TSO'"
n=$(tshark -r "$dir/wire.pcap" 2>/dev/null | wc -l)
check "the wire: 1 + 1 + 5 + 3 frames (got $n)" "[ '$n' = 10 ]"
st=$(fields "$dir/wire.pcap" frame.len udp.checksum.status | sed -n 3,7p | cut -f2 | sort -u)
check "the pcap list went out with good UDP checksums (ip_csum) ($st)" "[ '$st' = 1 ]"
seg=$(fields "$dir/wire.pcap" frame.len ip.checksum.status tcp.checksum.status | tail -3 | sort -u | tr '\t' ,)
check "three 1054-byte segments, IPv4 and TCP checksums good ($seg)" "[ '$seg' = '1054,1,1' ]"

# the same WR through a service-mode QP: a service lcore sends it, the same frame on the wire
run svc --vdev=net_pcap0,tx_pcap="$dir/svc.pcap" -l 0,1 -- <<EOF2
qp create raw 0 mode service
post send 0 hex $udp signaled
show qp 0
qp create raw 0 mode fast
EOF2
o=$(out_of svc "post send 0 hex $udp signaled")
check "service mode: SUCCESS, SEND, byte_len 60 ($o)" \
	"echo '$o' | grep -q 'status SUCCESS (success) opcode SEND byte_len 60'"
check "show qp: service mode on lcore 1" "grep -q 'progress: service mode, service lcore 1' '$dir/svc.out'"
check "an unknown mode: the error names the values" \
	"grep -q 'qp create: mode needs a value (direct or service), e.g. mode service' '$dir/svc.out'"
check "the same frame on the wire as from the direct QP" \
	"[ \"\$(tshark -r $dir/svc.pcap -x 2>/dev/null)\" = \"\$(tshark -r $dir/wire.pcap -c 1 -x 2>/dev/null)\" ]"
finish cli_post_send
