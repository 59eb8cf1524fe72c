#!/bin/sh
# SPDX-License-Identifier: BSD-3-Clause
# run_tap_test.sh PROGRAM: run a wire test program on a net_tap port and compare what the Linux
# kernel received on the tap interface (captured by tshark) with what the program expected
# (check_wire.py). The port's own offloads (rte_gso TSO, checksums) are used where dpverbs
# judges they give the contract's frames; the comparison is the same as on net_pcap.
set -u
prog=$1
here=$(dirname "$0")
dir=$(mktemp -d)
ifname=dpvt$$
tpid=
# a burst of segments outruns the kernel's input backlog (1000 frames by default): widen it
# for the run, and put it back after
backlog=$(sysctl -n net.core.netdev_max_backlog)
sysctl -qw net.core.netdev_max_backlog=100000
cleanup() {
	[ -n "$tpid" ] && kill "$tpid" 2>/dev/null
	sysctl -qw net.core.netdev_max_backlog="$backlog"
	rm -rf "$dir"
}
trap cleanup EXIT
export DPV_TEST_READY=$dir/ready DPV_TEST_GO=$dir/go DPV_TEST_TAP=1
export DPV_TEST_DONE=$dir/done DPV_TEST_CLOSE=$dir/close
DPV_EAL_ARGS="--vdev=net_tap_w0,iface=$ifname --log-level=lib.eal:error --log-level=pmd.net.tap:critical --log-level=lib.telemetry:error ${DPV_EAL_EXTRA:-}" \
	"$prog" "$dir/expected.txt" > "$dir/prog.out" 2>&1 &
ppid=$!
for i in $(seq 200); do [ -e "$dir/ready" ] && break; sleep 0.05; done
# the kernel's own frames (IPv6 router solicitations...) carry the interface's address
own=$(cat /sys/class/net/"$ifname"/address)
tshark -i "$ifname" -p -B 64 -f "not ether src $own" -w "$dir/wire.pcap" > "$dir/tshark.out" 2>&1 &
tpid=$!
for i in $(seq 200); do grep -q "Capturing on" "$dir/tshark.out" 2>/dev/null && break; sleep 0.05; done
sleep 0.3
touch "$dir/go"
# when the program is done sending: wait until the capture stops growing, stop it, and only
# then let the program close the port (which deletes the interface)
while kill -0 $ppid 2>/dev/null && [ ! -e "$dir/done" ]; do sleep 0.05; done
last=-1
for i in $(seq 100); do
	size=$(stat -c %s "$dir/wire.pcap" 2>/dev/null || echo 0)
	[ "$size" = "$last" ] && break
	last=$size
	sleep 0.3
done
kill -INT "$tpid" 2>/dev/null; wait "$tpid" 2>/dev/null; tpid=
touch "$dir/close"
wait $ppid
rc=$?
cat "$dir/prog.out"
tail -2 "$dir/tshark.out"
/usr/bin/python3 "$here/check_wire.py" "$dir/wire.pcap" "$dir/expected.txt" || rc=1
[ -n "${DPV_TEST_KEEP:-}" ] && cp "$dir/wire.pcap" "$DPV_TEST_KEEP"
exit $rc
