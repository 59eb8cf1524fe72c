#!/bin/sh
# SPDX-License-Identifier: BSD-3-Clause
# run_netns_test.sh PROGRAM: a net_tap port whose interface is moved into a network namespace
# of this test's own, with 10.99.0.1/24 and fd00:99::1/64 and UDP sockets on ports 7777 and
# 7778 there. PROGRAM sends UDP datagrams to both; the kernel delivers only those with good
# checksums. Counts: 20 IPv4 and 20 IPv6 on 7777 (IP_CSUM), none on 7778 (no IP_CSUM).
set -u
. "$(dirname "$0")/../lib/net.sh"
prog=$1
dir=$(mktemp -d)
ns=dpvns$$
ifname=dpvn$$
lpid=
cleanup() {
	[ -n "$lpid" ] && kill "$lpid" 2>/dev/null
	net_cleanup
	rm -rf "$dir"
}
trap cleanup EXIT
prog_start "--vdev=net_tap_n0,iface=$ifname $TAP_QUIET" "$prog" "$dir/mac"
netns_add "$ns"
netns_move "$ns" "$ifname" 10.99.0.1/24 fd00:99::1/64
ip netns exec "$ns" cat /sys/class/net/"$ifname"/address > "$dir/mac"
ip netns exec "$ns" /usr/bin/python3 -c '
import select, socket, sys, time
socks = {}
for fam, addr in ((socket.AF_INET, "10.99.0.1"), (socket.AF_INET6, "fd00:99::1")):
    for port in (7777, 7778):
        s = socket.socket(fam, socket.SOCK_DGRAM)
        s.bind((addr, port))
        socks[s] = (fam == socket.AF_INET6 and "v6" or "v4", port)
count = {k: 0 for k in socks.values()}
open(sys.argv[1], "w").close()
end = time.time() + 20
while time.time() < end:
    r, _, _ = select.select(list(socks), [], [], 0.2)
    for s in r:
        s.recv(2048)
        count[socks[s]] += 1
    try:
        open(sys.argv[2]).close()
        break
    except OSError:
        pass
print(" ".join("%s:%d=%d" % (k[0], k[1], v) for k, v in sorted(count.items())))
' "$dir/listening" "$dir/stop" > "$dir/counts" &
lpid=$!
wait_file "$dir/listening" 100
touch "$dir/go"
while kill -0 $ppid 2>/dev/null && [ ! -e "$dir/done" ]; do sleep 0.05; done
sleep 1
touch "$dir/stop"
wait "$lpid"; lpid=
touch "$dir/close"
wait $ppid
rc=$?
cat "$dir/prog.out" | grep -v -e '^EAL' -e TELEMETRY
counts=$(cat "$dir/counts")
echo "received: $counts"
[ "$counts" = "v4:7777=20 v4:7778=0 v6:7777=20 v6:7778=0" ] || { echo "FAIL: expected v4:7777=20 v4:7778=0 v6:7777=20 v6:7778=0"; rc=1; }
exit $rc
