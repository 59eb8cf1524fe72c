#!/bin/sh
# SPDX-License-Identifier: BSD-3-Clause
# dpv-testpmd's transmit engines on net_pcap, read back by tshark: txonly frames of the set
# length, with IP_CSUM (good IPv4 and UDP checksums) and without (IPv4 checksum written by
# the engine, no UDP checksum), in two SGEs; the tso engine: every WR cut into mss-sized
# segments with good checksums, sequence numbers and IP IDs running on; inline sends.
set -u
tpmd=$1
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
. "$(dirname "$0")/lib.sh"

run tx --vdev=net_pcap0,tx_pcap="$dir/tx.pcap" -- <<EOF2
set fwd txonly
set txpkts 100
set txflags ip_csum
start count 5
wait
stop
set txflags none
set txpkts 60,40
start count 3
wait
stop
set txflags inline signaled-every 2
set txpkts 128
start count 4
wait
stop
show port stats 0
EOF2
check "exit status 0 (got $rc)" "[ $rc -eq 0 ]"
check "first run: 5 WRs, 1 completion (the last of the burst), 5 frames on the wire" \
	"grep -q 'port 0: rx 0, tx WRs 5, completions 1, errors 0, SQ full 0; wire: 5 frames, 500 bytes' '$dir/tx.out'"
check "signaled-every 2: 4 WRs, 2 completions" \
	"grep -q 'tx WRs 4, completions 2, errors 0.*wire: 4 frames, 512 bytes' '$dir/tx.out'"
f=$(fields "$dir/tx.pcap" frame.len ip.checksum.status udp.checksum.status ip.src ip.dst udp.dstport)
n=$(echo "$f" | wc -l)
check "12 frames (got $n)" "[ '$n' = 12 ]"
a=$(echo "$f" | head -5 | sort -u | tr '\t' ,)
check "IP_CSUM: 100 bytes, IPv4 and UDP checksums good, 198.18.0.1 > 198.18.0.2:9 ($a)" \
	"[ '$a' = '100,1,1,198.18.0.1,198.18.0.2,9' ]"
b=$(echo "$f" | sed -n 6,8p | sort -u | tr '\t' ,)
check "without: IPv4 checksum good (the engine's), UDP checksum absent, 2 SGEs make 100 bytes ($b)" \
	"[ '$b' = '100,1,3,198.18.0.1,198.18.0.2,9' ]"
c=$(echo "$f" | tail -4 | cut -f1 | sort -u)
check "inline: 128-byte frames ($c)" "[ '$c' = 128 ]"
o=$(out_of tx "show port stats 0")
check "show port stats: 12 frames, 5 checksummed in software, 3 copied WRs" \
	"echo '$o' | grep -q 'tx frames: *12$' && echo '$o' | grep -q 'csum in software: *5$'"

run tso --vdev=net_pcap0,tx_pcap="$dir/tso.pcap" -- <<EOF2
set fwd tso
start
tso set 1000 0
set txpkts 3000
set txflags ip_csum
start count 4
wait
stop
set txpkts 1000,1500
set txflags none
start count 2
wait
stop
show port stats 0
EOF2
check "tso without tso set refused, naming the fix" \
	"grep -q 'error: forwarding mode tso needs a segment size on port 0: tso set 1448 0' '$dir/tso.out'"
check "and the script stopped there (exit 1)" "[ $rc -eq 1 ] && ! grep -q 'wait' '$dir/tso.out'"
sed -i 2d "$dir/tso.cmd"
"$tpmd" --vdev=net_pcap0,tx_pcap="$dir/tso.pcap" $QUIET -- --cmdline-file="$dir/tso.cmd" > "$dir/tso.out" 2>&1
check "then it runs (exit $?)" "[ $? -eq 0 ]"
f=$(fields "$dir/tso.pcap" frame.len ip.checksum.status tcp.checksum.status tcp.seq_raw ip.id tcp.flags.push)
n=$(echo "$f" | wc -l)
check "4 WRs x 3 segments + 2 WRs x 3 segments (got $n)" "[ '$n' = 18 ]"
st=$(echo "$f" | cut -f1-3 | sort | uniq -c | awk '{print $1 "x" $2 "," $3 "," $4}' | tr '\n' ' ')
check "segments of 1054 bytes and one of 554, checksums good ($st)" \
	"[ '$st' = '16x1054,1,1 2x554,1,1 ' ]"
seq=$(echo "$f" | head -12 | cut -f4 | tr '\n' ' ')
check "sequence numbers 0, 1000 ... 11000 ($seq)" \
	"[ '$seq' = '0 1000 2000 3000 4000 5000 6000 7000 8000 9000 10000 11000 ' ]"
ids=$(echo "$f" | head -4 | cut -f5 | tr '\n' ' ')
check "IP IDs 1, 2, 3, 4 ($ids)" "[ '$ids' = '0x0001 0x0002 0x0003 0x0004 ' ]"
psh=$(echo "$f" | head -3 | cut -f6 | tr '\n' ' ')
check "PSH on the last segment of a WR only ($psh)" "[ '$psh' = '0 0 1 ' ]"
o=$(out_of tso "show port stats 0")
check "show port stats: 6 TSO WRs in software, 18 segments" \
	"echo '$o' | grep -q 'tso in software: *6 (18 segments)'"
run verbose --vdev=net_null0 -- <<'EOF2'
set verbose 2
set fwd txonly
set txflags signaled-every 1
start count 3
wait
stop
EOF2
n=$(grep -c '^port 0: completion of WR [0-2]: SEND$' "$dir/verbose.out")
check "set verbose 2, signaled-every 1: each of the 3 completions printed ($n)" "[ '$n' = 3 ]"
finish cli_txonly_tso
