#!/bin/sh
# SPDX-License-Identifier: BSD-3-Clause
# dpv-testpmd's receiving engines between two net_pcap ports (port 0 reads 10 scapy frames
# with wrong checksums, port 1 writes what leaves): io sends them unchanged, mac rewrites the
# addresses, csum sends them with IP_CSUM (checksums right, the wrong ones counted), rxonly
# takes them; capture writes what a port receives; a QP of post recv gets what its flow
# steers.
set -u
tpmd=$1
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
. "$(dirname "$0")/lib.sh"

in_pcap 10 "IP(src='10.0.0.1', dst='10.0.0.2', chksum=0x1234) /
	UDP(sport=1000 + i, dport=4789, chksum=0x4321) / Raw(b'x' * (20 + i))"
hex() { tshark -r "$1" -x 2>/dev/null | cut -c1-54; }

for mode in io mac csum rxonly; do
	run $mode $(pcap_ports $mode) -- <<EOF2
set fwd $mode
start count 10
wait 5
stop
show port info 1
EOF2
	check "$mode: exit status 0 (got $rc)" "[ $rc -eq 0 ]"
	check "$mode: port 0 received 10 frames" "grep -q '^port 0: rx 10,' '$dir/$mode.out'"
done
check "io: port 1 sent 10, all completed" \
	"grep -q '^port 1: rx 0, tx WRs 10, completions 10, errors 0' '$dir/io.out'"
check "io: the frames leave unchanged" "[ \"\$(hex $dir/io.pcap)\" = \"\$(hex $dir/in.pcap)\" ]"
mac1=$(out_of mac "show port info 1" | awk '/MAC:/ {print $2}')
m=$(fields "$dir/mac.pcap" eth.src eth.dst | sort -u | tr '\t' ,)
check "mac: source the sending port's MAC, destination its peer 02:00:00:00:00:01 ($m)" \
	"[ '$m' = '$mac1,02:00:00:00:00:01' ]"
c=$(fields "$dir/csum.pcap" ip.checksum.status udp.checksum.status | sort | uniq -c | awk '{print $1 "x" $2 "," $3}')
check "csum: 10 frames out, IPv4 and UDP checksums right ($c)" "[ '$c' = '10x1,1' ]"
check "csum: the 10 wrong checksums received counted" "grep -q 'bad checksums 10' '$dir/csum.out'"
n=$(tshark -r "$dir/rxonly.pcap" 2>/dev/null | wc -l)
check "rxonly: nothing sent ($n frames)" "[ '$n' = 0 ]"

run cap --vdev=net_pcap0,rx_pcap="$dir/in.pcap",tx_pcap=/dev/null -- <<EOF2
capture start 0 $dir/cap.pcap
capture start 0 $dir/cap2.pcap
wait 1
capture stop 0
capture stop 0
EOF2
check "capture: a second capture of the port refused, naming the fix" \
	"grep -q 'error: port 0 is captured already (to $dir/cap.pcap): capture stop 0' '$dir/cap.out'"
sed -i 2d "$dir/cap.cmd"
sed -i '$d' "$dir/cap.cmd"
"$tpmd" --vdev=net_pcap0,rx_pcap="$dir/in.pcap",tx_pcap=/dev/null $QUIET -- \
	--cmdline-file="$dir/cap.cmd" > "$dir/cap.out" 2>&1
check "capture: exit 0 and 10 frames reported ($?)" \
	"[ $? -eq 0 ] && grep -q 'capture of port 0: 10 frames to' '$dir/cap.out'"
check "capture: the file holds what port 0 received, byte for byte" \
	"[ \"\$(hex $dir/cap.pcap)\" = \"\$(hex $dir/in.pcap)\" ]"
run recv --vdev=net_pcap0,rx_pcap="$dir/in.pcap",tx_pcap=/dev/null -- <<'EOF2'
qp create raw 0 rq 8
post recv 0 4
flow create 0 eth / ipv4 dst is 10.0.0.2 / udp dst is 4789 / end
poll 0
show qp 0
show port stats 0
EOF2
o=$(out_of recv "poll 0")
check "a user QP with a flow and 4 WQEs: 4 receive completions of 62..65 bytes, no IP_CSUM_OK" \
	"[ \$(echo '$o' | grep -c 'completion: recv wr_id [0-3] status SUCCESS (success) opcode RECV byte_len 6[2-5] qp_num') = 4 ]"
check "the frames' first bytes shown" "echo '$o' | grep -q '  frame: 0200000000bb 0200000000aa 0800 45'"
check "the other 6 frames dropped for want of a WQE" "grep -q 'rx no WQE: *6$' '$dir/recv.out'"
finish cli_forward
