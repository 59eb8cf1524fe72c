#!/bin/sh
# SPDX-License-Identifier: BSD-3-Clause
# The README's example: its one frame, byte for byte, in the pcap file tshark reads.
set -u
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
. "$(dirname "$0")/../lib/check.sh"
DPV_EAL_ARGS="--vdev=net_pcap0,tx_pcap=$dir/hello.pcap --log-level=lib.eal:error" "$1" > "$dir/out" 2>&1
check "hello exits 0" "[ $? -eq 0 ]"
check "hello reports success" "grep -q 'sent 64 bytes on dpv_net_pcap0: success' '$dir/out'"
bytes=$(tshark -r "$dir/hello.pcap" -T fields -e frame.len -e eth.type -e data.data 2>/dev/null)
want=$(printf '64\t0x88b5\t68656c6c6f%090d' 0)
check "one 64-byte frame: ethertype 0x88b5, 'hello' then zeros (got $bytes)" "[ \"\$bytes\" = \"$want\" ]"
finish "hello wire"
