#!/bin/sh
# SPDX-License-Identifier: BSD-3-Clause
# The doc/cli.md walkthrough as a test: dpv-testpmd's tso engine sends TSO WRs with IP_CSUM
# to a net_tap port, tshark captures where the Linux kernel receives them: every WR cut into
# mss-sized segments (by the tap's own TSO, counted as such), checksums right. The prompt is
# fed through a pipe, so that the capture runs before the sending starts.
set -u
tpmd=$1
dir=$(mktemp -d)
ifname=dpvc$$
pid=; tpid=
cleanup() {
	[ -n "$tpid" ] && kill "$tpid" 2>/dev/null
	[ -n "$pid" ] && kill "$pid" 2>/dev/null
	[ -n "${KEEP:-}" ] || rm -rf "$dir"
}
trap cleanup EXIT
. "$(dirname "$0")/lib.sh"
wait_for() { for i in $(seq 200); do grep -q "$1" "$2" 2>/dev/null && return 0; sleep 0.05; done; return 1; }

mkfifo "$dir/in"
"$tpmd" --vdev=net_tap_c0,iface=$ifname $QUIET -- -i < "$dir/in" > "$dir/out" 2>&1 &
pid=$!
exec 3> "$dir/in"
echo "show port info 0" >&3
wait_for "tso segment size" "$dir/out"
# the segments carry the port's MAC, which the tap shares with the kernel: filter on TCP
tshark -i $ifname -p -f tcp -w "$dir/wire.pcap" > "$dir/tshark.out" 2>&1 &
tpid=$!
wait_for "Capturing on" "$dir/tshark.out"
sleep 0.3
cat >&3 <<'EOF2'
set fwd tso
tso set 1400 0
set txpkts 5000
set txflags ip_csum
start count 6
wait
stop
show port stats 0
EOF2
wait_for "tso by the port" "$dir/out"
# the capture has all 24 segments (or 10 s went by): a loaded machine may write them late
for i in $(seq 100); do
	[ "$(tshark -r "$dir/wire.pcap" 2>/dev/null | wc -l)" -ge 24 ] && break
	sleep 0.1
done
sleep 0.2
kill -INT $tpid; wait $tpid 2>/dev/null; tpid=
echo quit >&3
exec 3>&-
wait $pid
check "dpv-testpmd exit 0 ($?)" "[ $? -eq 0 ]"
pid=
check "6 TSO WRs posted, the last completed, 6 frames handed to the port" \
	"grep -q '^port 0: rx 0, tx WRs 6, completions 1, errors 0, SQ full 0; wire: 6 frames' '$dir/out'"
check "the tap segmented them (tso by the port: 6)" "grep -q 'tso by the port: *6$' '$dir/out'"
f=$(fields "$dir/wire.pcap" frame.len ip.checksum.status tcp.checksum.status ip.src tcp.dstport)
n=$(echo "$f" | grep -c .)
check "the kernel received 6 x 4 segments (got $n)" "[ '$n' = 24 ]"
st=$(echo "$f" | sort | uniq -c | awk '{print $1 "x" $2 "," $3 "," $4 "," $5 "," $6}' | tr '\n' ' ')
check "3 x 1454 + 1 x 854 bytes per WR, IPv4 and TCP checksums right ($st)" \
	"[ '$st' = '18x1454,1,1,198.18.0.1,80 6x854,1,1,198.18.0.1,80 ' ]"
seq=$(fields "$dir/wire.pcap" tcp.seq_raw | tail -1)
check "the last segment's sequence number is 5 x 5000 + 3 x 1400 ($seq)" "[ '$seq' = 29200 ]"
check "no tap interface left" "! ip link show $ifname > /dev/null 2>&1"
[ $fail -eq 0 ] || { cat "$dir/out"; tail -3 "$dir/tshark.out"; }
finish cli_tso_tap
