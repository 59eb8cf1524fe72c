#!/bin/sh
# SPDX-License-Identifier: BSD-3-Clause
# The same TSO WRs through net_pcap (software TSO and checksums) and through net_tap (the
# port's TSO and checksums where dpverbs uses them): the two captures hold the same frames,
# byte for byte, a TCP or IPv4 checksum of 0x0000 and 0xFFFF counting as the same value.
# (The tap run ends with one more WR, the recovery after a LOC_LEN_ERR: not compared.)
set -u
prog=$1
here=$(dirname "$0")
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
DPV_TEST_TAP=1 DPV_TEST_KEEP=$dir/sw.pcap sh "$here/run_wire_test.sh" "$prog" > "$dir/sw.out" 2>&1 ||
	{ cat "$dir/sw.out"; echo "FAIL: the net_pcap run"; exit 1; }
DPV_TEST_KEEP=$dir/hw.pcap sh "$here/run_tap_test.sh" "$prog" > "$dir/hw.out" 2>&1 ||
	{ cat "$dir/hw.out"; echo "FAIL: the net_tap run"; exit 1; }
grep -h "TSO WRs" "$dir/sw.out" "$dir/hw.out"
/usr/bin/python3 - "$dir/sw.pcap" "$dir/hw.pcap" "$here/check_wire.py" <<'PY'
import sys
sys.argv, script = sys.argv[:3], sys.argv[3]
exec(open(script).read().replace('if __name__ == "__main__":', "if False:"))
sw = [bytes(p) for p in rdpcap(sys.argv[1])]
hw = [bytes(p) for p in rdpcap(sys.argv[2])]
same = sum(1 for a, b in zip(sw, hw) if same_modulo_ffff(a, b))
ok = len(hw) >= len(sw) and same == len(sw)
print(f"software frames {len(sw)}, tap frames {len(hw)}, identical {same}")
print(f"sw vs hw: {same} passed, {len(sw) - same + (0 if len(hw) >= len(sw) else 1)} failed")
sys.exit(0 if ok else 1)
PY
