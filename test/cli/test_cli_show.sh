#!/bin/sh
# SPDX-License-Identifier: BSD-3-Clause
# dpv-testpmd's show commands against net_null, net_pcap and net_tap: devices, port info,
# TX offloads (the tap offers checksums and TSO, the others run them in software) and how
# csum set moves them; QP and CQ depths as verbs wrote them back; flows; statistics and their
# clearing; port stop/start/reset.
set -u
tpmd=$1
dir=$(mktemp -d)
trap "[ -n \"${KEEP:-}\" ] || rm -rf $dir" EXIT
. "$(dirname "$0")/lib.sh"
ifname=dpvs$$
ports="--vdev=net_null0 --vdev=net_pcap0,tx_pcap=$dir/p.pcap --vdev=net_tap_s0,iface=$ifname"

udp=ffffffffffff02000000000108004500002e000100004011000001020304050607080009000900160000
udp=${udp}000102030405060708090a0b0c0d0e0f1011
tcp=020000000002020000000001080045000028000100004006000001020304050607080400005000000001
tcp=${tcp}000000005018010000000000
sed "s/UDP/$udp/; s/TCP/$tcp/" > "$dir/show.in" <<'EOF2'
show device
show port info 1
show port tx_offload capabilities 0
show port 2 tx_offload capabilities
csum set all sw 2
show port tx_offload capabilities 2
csum set ip hw 2
show port 2 tx_offload capabilities
csum policy hw 2
show port info 2
csum policy auto 2
csum set all hw 2
csum set udp sw 2
qp create raw 2
post send 0 hex UDP signaled ip_csum
post send 0 hex TCP signaled ip_csum pad 200
show port stats 2
qp destroy 0
qp create raw 0 sq 100 rq 10 inline 64
show qp 0
show cq 0
flow create 0 priority 1 eth dst is 02:00:00:00:00:01 / ipv4 dst is 10.0.0.2 / udp dst is 4789 / end
flow list
show qp 0
flow destroy 0
flow list
set fwd txonly
start count 8
wait
stop
show port stats 0
show port xstats 0
clear port stats 0
show port stats 0
show port xstats 0
port stop 1
show device
port start 1
show port info 1
port reset 0
show qp
port stop 1
show port info all
EOF2
run show $ports -- < "$dir/show.in"
check "exit status 0 (got $rc)" "[ $rc -eq 0 ]"
o=$(out_of show "show device")
check "show device: 3 devices, named after their ports" \
	"echo '$o' | grep -q '^3 verbs device(s)' && echo '$o' | grep -q '^0: dpv_net_null0 on DPDK port 0' &&
	 echo '$o' | grep -q '^1: dpv_net_pcap0' && echo '$o' | grep -q '^2: dpv_net_tap_s0'"
check "show device: limits and caps" \
	"echo '$o' | grep -q 'max_qp_wr 32768, max_sge 30' && echo '$o' | grep -q 'max_tso 262144 (RAW_PACKET), raw_packet_caps IP_CSUM'"
check "show device: the EAL arguments with dpverbs' additions" "echo '$o' | grep -q 'EAL arguments: .*--no-pci'"
o=$(out_of show "show port info 1")
check "port info: net_pcap driver, MTU 1500, largest frame 1514, zero-copy" \
	"echo '$o' | grep -q 'driver net_pcap' && echo '$o' | grep -q 'MTU: *1500 (largest frame 1514)' &&
	 echo '$o' | grep -q 'zero-copy from MRs'"
o=$(out_of show "show port tx_offload capabilities 0")
check "net_null: no offload, all four in software" \
	"[ \$(echo '$o' | grep -c 'port offers: no   runs in: software') = 4 ]"
o=$(out_of show "show port 2 tx_offload capabilities")
check "net_tap (testpmd's word order): the port offers IPV4_CKSUM and TCP_TSO, they run in hardware" \
	"echo '$o' | grep -q 'IPV4_CKSUM   port offers: yes  runs in: hardware' &&
	 echo '$o' | grep -q 'TCP_TSO      port offers: yes  runs in: hardware'"
o=$(out_of show "show port tx_offload capabilities 2")
check "csum set all sw: everything in software on the tap, the policy still auto" \
	"echo '$o' | grep -q 'policy auto' && [ \$(echo '$o' | grep -c 'runs in: software') = 4 ]"
sed -n '/csum set ip hw 2/,/csum policy hw 2/p' "$dir/show.out" > "$dir/iphw.txt"
check "csum set ip hw: the IPv4 checksum in the port again, the rest in software" \
	"grep -q 'IPV4_CKSUM   port offers: yes  runs in: hardware' '$dir/iphw.txt' &&
	 [ \$(grep -c 'runs in: software' '$dir/iphw.txt') = 3 ]"
o=$(out_of show "show port info 2")
check "csum policy hw: policy hardware" "echo '$o' | grep -q 'offload policy: *hardware'"
o=$(sed -n '/show.cmd> show port stats 2/,/show.cmd> qp destroy 0/p' "$dir/show.out")
check "csum set udp sw: a UDP frame checksummed in software, a TCP one by the tap" \
	"echo '$o' | grep -q 'csum by the port: *1$' && echo '$o' | grep -q 'csum in software: *1$'"
o=$(out_of show "show qp 0")
check "show qp: RTS, SQ rounded to 128, RQ 16, max_inline_data 64" \
	"echo '$o' | grep -q 'state rts' && echo '$o' | grep -q 'SQ: 128 WRs' &&
	 echo '$o' | grep -q 'RQ: 16 WQEs' && echo '$o' | grep -q 'max_inline_data 64'"
o=$(out_of show "show cq 0")
check "show cq: 111 entries, one QP ($o)" "[ '$o' = 'CQ 0: 111 entries, 0 pending, 1 QP(s)' ]"
check "flow create: flow 0 on QP 0" "grep -q '^flow 0 on QP 0: priority 1 eth dst is' '$dir/show.out'"
o=$(sed -n '/show.cmd> flow list/,/show.cmd> show qp 0/p' "$dir/show.out" | head -2 | tail -1)
check "flow list shows it ($o)" "echo '$o' | grep -q '^flow 0: QP 0: priority 1 eth'"
o=$(sed -n '/flow list/,/flow destroy/p' "$dir/show.out" | grep 'flows')
check "show qp counts the flow ($o)" "echo '$o' | grep -q 'flows 1,'"
check "flow destroy, then flow list is empty" "grep -q '^no flow: flow create' '$dir/show.out'"
o=$(out_of show "show port stats 0")
check "show port stats: the 8 frames txonly sent" "echo '$o' | grep -q 'tx frames: *8$'"
o=$(out_of show "show port xstats 0")
check "show port xstats: net_null's tx_good_packets 8" "echo '$o' | grep -q 'tx_good_packets *8$'"
o=$(sed -n '/clear port stats 0/,$p' "$dir/show.out" | grep -e 'tx frames:' -e 'tx_good_packets' | tr -s ' ' | sed 's/^ //')
check "after clear port stats: 0 and 0 ($o)" "[ \"\$(echo '$o' | tr '\n' ' ')\" = 'tx frames: 0 tx_good_packets 0 ' ]"
check "port stop 1: stopped, show device says how to start it" \
	"grep -q '^port 1 stopped' '$dir/show.out' && grep -q '^1: dpv_net_pcap0 (stopped: port start 1)' '$dir/show.out'"
check "port start 1, then its info again" \
	"grep -q '^port 1 started' '$dir/show.out' && [ \$(grep -c 'driver net_pcap' '$dir/show.out') = 2 ]"
check "port reset 0: its QP gone" \
	"grep -q '^port 0 reset' '$dir/show.out' && grep -q '^no QP: qp create raw <port>' '$dir/show.out'"

o=$(out_of show "show port info all")
check "show port info all: ports 0 and 2, port 1 stopped" \
	"echo '$o' | grep -q '^port 0: dpv_net_null0' && echo '$o' | grep -q '^port 1 is stopped (port start 1)' &&
	 echo '$o' | grep -q '^port 2: dpv_net_tap_s0'"

run bad_port $ports -- <<'EOF2'
qp create raw 7
EOF2
check "no port 7: names the ports there are, exit 1" \
	"[ $rc -eq 1 ] && grep -q 'error: there is no port 7: ports are 0..2 (show device)' '$dir/bad_port.out'"
run hw $ports -- <<'EOF2'
csum set tcp hw 0
EOF2
check "csum set tcp hw on net_null: refused, naming the fix" \
	"grep -q 'error: port 0 (net_null) has no TCP_CKSUM offload: .*use csum set tcp sw 0 (nothing was changed)' '$dir/hw.out'"
run stopped $ports -- <<'EOF2'
port stop 0
qp create raw 0
EOF2
check "a stopped port: qp create says port start" "grep -q 'error: port 0 is stopped: port start 0' '$dir/stopped.out'"
check "no tap interface left" "! ip link show $ifname > /dev/null 2>&1"
finish cli_show
