#!/bin/sh
# SPDX-License-Identifier: BSD-3-Clause
# dpv-testpmd's port faults between two net_pcap ports (port 0 reads 40 scapy frames, io
# forwards what it receives to port 1's pcap): half dropped on receive — what leaves plus what
# show port faults counts as dropped is 40; every frame corrupted — each frame leaves with
# exactly one byte inverted in its second half; faults off — the frames leave unchanged; bad
# specs refused with a message saying what is allowed.
set -u
tpmd=$1
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
. "$(dirname "$0")/lib.sh"

in_pcap 40 "IP(src='10.0.0.1', dst='10.0.0.2') / UDP(sport=1000 + i, dport=9) / Raw(bytes([i]) * 100)"
hex() { tshark -r "$1" -T fields -e frame.number -x 2>/dev/null; }

for spec in "drop 50% seed 3" "corrupt 1.0" "off"; do
	name=$(echo "$spec" | cut -d' ' -f1)
	run "$name" $(pcap_ports "$name") -- <<EOF2
port faults 0 rx $spec
set fwd io
start
wait 2
stop
show port faults 0
EOF2
	check "$name: exit status 0 (got $rc)" "[ $rc -eq 0 ]"
done
check "port faults answers what it set" \
	"grep -q '^port 0 rx faults: drop 500000 dup 0 reorder 0 corrupt 0 ppm, seed 3$' '$dir/drop.out'"
n=$(/usr/bin/python3 -c "from scapy.all import rdpcap; print(len(rdpcap('$dir/drop.pcap')))" 2>/dev/null)
d=$(awk '/^port 0 rx faults/ { for (i = 1; i < NF; i++) if ($i == "dropped") print $(i + 1) }' "$dir/drop.out")
check "drop 50%: $n frames left, $d counted dropped, 40 in all, some of each" \
	"[ -n '$n' ] && [ -n '$d' ] && [ \$(($n + $d)) = 40 ] && [ '$d' -gt 5 ] && [ '$n' -gt 5 ]"
r=$(/usr/bin/python3 - "$dir/in.pcap" "$dir/corrupt.pcap" <<'PY' 2>&1
import sys
from scapy.all import rdpcap
a, b = [bytes(p) for p in rdpcap(sys.argv[1])], [bytes(p) for p in rdpcap(sys.argv[2])]
ok = len(a) == len(b) == 40
for x, y in zip(a, b):
    d = [i for i in range(len(x)) if x[i] != y[i]]
    ok = ok and len(x) == len(y) and len(d) == 1 and d[0] >= len(x) // 2 and x[d[0]] ^ y[d[0]] == 0xff
print('ok' if ok else 'bad: %d in, %d out' % (len(a), len(b)))
PY
)
check "corrupt 1.0: 40 frames, each with one byte of its second half inverted ($r)" "[ '$r' = ok ]"
check "corrupt: counted" "grep -q 'corrupted 40$' '$dir/corrupt.out'"
check "off: the frames leave unchanged" "[ \"\$(hex $dir/off.pcap)\" = \"\$(hex $dir/in.pcap)\" ]"

run bad --vdev=net_null0 -- <<'EOF2'
port faults 0 rx drop 150%
EOF2
check "a rate above 100%: exit 1, the message names the forms" \
	"[ $rc -eq 1 ] && grep -q \"port faults: drop '150%' is not a fraction (1.5%, 0.015, 15000ppm)\" '$dir/bad.out'"
run bad2 --vdev=net_null0 -- <<'EOF2'
port faults 0 tx lose 1%
EOF2
check "an unknown fault: exit 1, the known ones listed" \
	"[ $rc -eq 1 ] && grep -q \"port faults: unknown 'lose' (drop, dup, reorder, corrupt, seed, off)\" '$dir/bad2.out'"
finish cli_faults
