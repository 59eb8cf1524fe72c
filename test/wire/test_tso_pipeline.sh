#!/bin/sh
# SPDX-License-Identifier: BSD-3-Clause
# examples/tso_pipeline: a generated stream and a file, sent as TSO WRs on the embedded
# net_pcap port; --verify reads the capture back; tshark checks every checksum.
set -u
prog=$1
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
. "$(dirname "$0")/../lib/check.sh"
unset DPV_EAL_ARGS
cd "$dir"
"$prog" -n 1000003 -m 1000 --verify > out1 2>&1
check "generated stream verified (exit $?)" "grep -q 'verify: .* 1000003 payload bytes of 1000003, 0 bad' out1"
st=$(tshark -r tso_pipeline.pcap -o ip.check_checksum:TRUE -o tcp.check_checksum:TRUE \
	-T fields -e ip.checksum.status -e tcp.checksum.status 2>/dev/null | sort -u | tr '\t' ,)
check "tshark: every IPv4 and TCP checksum good ($st)" "[ '$st' = '1,1' ]"
head -c 300000 /dev/urandom > stream.bin
"$prog" -f stream.bin -m 1448 -w 10000 --verify > out2 2>&1
check "a file, 10000-byte WRs, verified" "grep -q 'verify: .* 300000 payload bytes of 300000, 0 bad' out2"
n=$(tshark -r tso_pipeline.pcap 2>/dev/null | wc -l)
check "30 WRs of 7 segments (got $n)" "[ '$n' = 210 ]"
"$prog" -m 0 > /dev/null 2>&1
check "bad arguments exit 2" "[ $? -eq 2 ]"
finish "tso_pipeline"
