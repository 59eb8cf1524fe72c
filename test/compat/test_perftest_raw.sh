#!/bin/sh
# SPDX-License-Identifier: BSD-3-Clause
# perftest's RAW_PACKET tools, Debian's binaries unmodified, one-sided on vdevs through
# dpv-run: raw_ethernet_bw sends its frames (tshark counts them in the pcap its net_pcap port
# wrote, with the MACs asked for) and exits 0 (it failed closing its context while dpverbs'
# ibv_close_device refused); raw_ethernet_fs_rate creates and destroys its flows and reports.
run=$1
. "$(dirname "$0")/lib.sh"
for t in raw_ethernet_bw raw_ethernet_fs_rate; do
	check "$t installed (apt-get install perftest; ./dpv.sh does)" "command -v $t > /dev/null"
done
macs='-B 02:00:00:00:00:01 -E 02:00:00:00:00:02'

DPV_EAL_ARGS="--vdev=net_pcap0,tx_pcap=$dir/bw.pcap $QUIET" \
	timeout 120 "$run" raw_ethernet_bw -d dpv_net_pcap0 -P $macs -n 1000 -s 128 > "$dir/bw" 2>&1
rc=$?
check "raw_ethernet_bw --client exits 0 (rc $rc)" "[ $rc -eq 0 ]"
check "raw_ethernet_bw reports 128-byte messages, 1000 iterations and a rate" \
	"grep -Eq '^ *128[[:space:]]+1000([[:space:]]+[0-9.]+){3}' '$dir/bw'"
check "raw_ethernet_bw: no 'Failed to close'" "! grep -qi 'failed' '$dir/bw'"
n=$(tshark -r "$dir/bw.pcap" 2>/dev/null | wc -l)
check "tshark reads 1000 frames from the port's pcap (got $n)" "[ '$n' = 1000 ]"
m=$(tshark -r "$dir/bw.pcap" -T fields -e eth.src -e eth.dst -e frame.len 2>/dev/null | sort -u | tr '\t' ' ')
# perftest's -s counts the 4-byte FCS the NIC appends: 124 bytes leave the application
check "every frame 02:00:00:00:00:01 -> 02:00:00:00:00:02, 124 bytes + FCS (got $m)" \
	"[ '$m' = '02:00:00:00:00:01 02:00:00:00:00:02 124' ]"

DPV_EAL_ARGS="--vdev=net_null0 $QUIET" \
	timeout 120 "$run" raw_ethernet_fs_rate -d dpv_net_null0 -P $macs -n 200 > "$dir/fs" 2>&1
rc=$?
check "raw_ethernet_fs_rate exits 0 (rc $rc)" "[ $rc -eq 0 ]"
check "raw_ethernet_fs_rate reports 200 flows and a flow rate" \
	"grep -Eq '^200([[:space:]]+[0-9.]+){5}' '$dir/fs'"
finish "perftest raw"
