#!/bin/sh
# SPDX-License-Identifier: BSD-3-Clause
# The main job on the wire: raw_txgen's frames as tshark (not dpverbs) reads them from the
# pcap file its net_pcap port wrote; checksums computed for IBV_SEND_IP_CSUM and only then;
# the file complete after the last close; nothing left behind by the process.
set -u
txgen=$1
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
. "$(dirname "$0")/../lib/check.sh"
unset DPV_EAL_ARGS

"$txgen" -c -n 100 -s 200 -o "$dir/csum.pcap" > "$dir/out.txt" 2>&1 &
pid=$!
wait $pid
check "raw_txgen -c exits 0" "[ $? -eq 0 ]"
check "it reports 100 frames on the wire" "grep -q '^100 frames in' '$dir/out.txt'"
check "no runtime dir left (/var/run/dpdk/dpv-$pid)" "[ ! -e /var/run/dpdk/dpv-$pid ]"
check "no hugepage file left" "! ls /dev/hugepages 2>/dev/null | grep -q 'dpv-$pid'"

ts() { tshark -r "$1" -o ip.check_checksum:TRUE -o udp.check_checksum:TRUE "$@" 2>/dev/null; }
n=$(tshark -r "$dir/csum.pcap" 2>/dev/null | wc -l)
check "tshark reads 100 frames (got $n)" "[ '$n' = 100 ]"
lens=$(tshark -r "$dir/csum.pcap" -T fields -e frame.len 2>/dev/null | sort -u)
check "every frame is 200 bytes (got $lens)" "[ '$lens' = 200 ]"
st=$(tshark -r "$dir/csum.pcap" -o ip.check_checksum:TRUE -o udp.check_checksum:TRUE \
	-T fields -e ip.checksum.status -e udp.checksum.status 2>/dev/null | sort -u | tr '\t' ,)
check "IPv4 and UDP checksums good in every frame (status: $st)" "[ '$st' = '1,1' ]"
first=$(tshark -r "$dir/csum.pcap" -Y 'frame.number == 6' -T fields -e data.data 2>/dev/null | cut -c1-6)
check "frame 6 carries its payload (2f3031..., got $first)" "[ '$first' = 2f3031 ]"

"$txgen" -n 10 -s 60 -o "$dir/plain.pcap" > "$dir/out2.txt" 2>&1
check "raw_txgen without -c exits 0" "[ $? -eq 0 ]"
st=$(tshark -r "$dir/plain.pcap" -o ip.check_checksum:TRUE -T fields -e ip.checksum.status \
	2>/dev/null | sort -u)
check "without IP_CSUM the IPv4 checksum stays as posted (bad, got $st)" "[ '$st' = 0 ]"
n=$(tshark -r "$dir/plain.pcap" 2>/dev/null | wc -l)
check "10 frames of 60 bytes (got $n)" "[ '$n' = 10 ]"

"$txgen" -n 0 > /dev/null 2>&1
check "bad arguments exit 2" "[ $? -eq 2 ]"
finish "raw_txgen wire"
