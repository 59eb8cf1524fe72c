#!/bin/sh
# SPDX-License-Identifier: BSD-3-Clause
# bench_recv_queues.sh DPV_BENCH: receive on one queue by one thread against two queues by two
# threads, the flows of each queue to a QP of its own (a thread with its own context, CQ and
# QP: dpv-bench -T). The port is net_pcap replaying a pcap file per receive queue from memory
# (infinite_rx), each file the 64-byte UDP frames of 64 flows to one MAC: what RSS gives a
# real port. Beside it dpdk-testpmd rxonly with as many queues and forwarding cores. Prints the
# wall-clock rates (sums) and CPU ns per frame, medians of ROUNDS runs. Then the same over one
# port queue spread in software (rx_spread) over one or two queues. On a machine with
# fewer free cores than threads the two-thread figures say how the threads share, not how
# they scale. Not a test: it never fails on a number.
set -u
bench=$1
rounds=${DPV_BENCH_ROUNDS:-3}
. "$(dirname "$0")/bench_lib.sh"

command -v dpdk-testpmd >/dev/null || { echo "dpdk-testpmd not found"; exit 77; }
# the pcap files: 64 UDP flows to 02:00:00:00:00:0a + queue (dpv-bench -T's rules)
python3 - "$tmp" <<'PY'
import struct, sys
for q in range(2):
    with open("%s/q%d.pcap" % (sys.argv[1], q), "wb") as f:
        f.write(struct.pack("<IHHiIII", 0xa1b2c3d4, 2, 4, 0, 0, 65535, 1))
        for i in range(64):
            eth = bytes([2, 0, 0, 0, 0, 0x0a + q, 2, 0, 0, 0, 0, 1, 8, 0])
            ip = bytes([0x45, 0, 0, 46, 0, 0, 0x40, 0, 64, 17, 0, 0, 10, 0, 0, 1, 10, 0, 0, 10 + q])
            udp = struct.pack(">HHHH", 1000 + i, 9000, 26, 0)
            frame = eth + ip + udp + bytes(18)
            f.write(struct.pack("<IIII", 0, i, len(frame), len(frame)) + frame)
PY
# the spread rows' file: one queue, no RSS (rx_spread = 2 spreads it over queues_per_port
# software queues); thread t's 64 flows to 02:00:00:00:00:0a + t chosen among UDP source ports
# so that dpverbs' flow hash (ethdev_spread.c) puts them on software queue t of 2 (f2.pcap) —
# as one picks flows per queue with RSS — and, for one queue, thread 0's flows alone (f1.pcap)
python3 - "$tmp" <<'PY'
import struct, sys
M = 0xffffffff
def qof(src, dst, sport, dport, n):
    a = struct.unpack("<I", bytes(src))[0] ^ struct.unpack("<I", bytes(dst))[0]
    h = ((a * 0x9e3779b1) ^ ((((sport ^ dport) << 8) | 17) * 0x85ebca77)) & M
    h ^= h >> 15
    h = (h * 0xc2b2ae3d) & M
    h ^= h >> 13
    return ((h | 1) * n) >> 32
for n in (1, 2):
    with open("%s/f%d.pcap" % (sys.argv[1], n), "wb") as f:
        f.write(struct.pack("<IHHiIII", 0xa1b2c3d4, 2, 4, 0, 0, 65535, 1))
        frames = [[] for _ in range(n)]
        src, dst = [10, 0, 0, 1], [10, 0, 0, 10]
        sport = 1000
        while min(len(x) for x in frames) < 64:
            q = qof(src, dst, sport, 9000, n)
            if len(frames[q]) < 64:
                eth = bytes([2, 0, 0, 0, 0, 0x0a + q, 2, 0, 0, 0, 0, 1, 8, 0])
                ip = bytes([0x45, 0, 0, 46, 0, 0, 0x40, 0, 64, 17, 0, 0] + src + dst)
                frames[q].append(eth + ip + struct.pack(">HHHH", sport, 9000, 26, 0) + bytes(18))
            sport += 1
        for i in range(64):
            for q in range(n):
                fr = frames[q][i]
                f.write(struct.pack("<IIII", 0, i, len(fr), len(fr)) + fr)
PY
vdev() {
	v="net_pcap0"
	for q in $(seq 0 $(($1 - 1))); do v="$v,rx_pcap=$tmp/q$q.pcap"; done
	echo "$v,infinite_rx=1"
}

printf "%-34s %10s %12s\n" "64 B, queues = threads" "Mpps" "CPU ns/frame"
for n in 1 2; do
	: > "$tmp/d"; : > "$tmp/dc"; : > "$tmp/t"
	for r in $(seq "$rounds"); do
		DPV_EAL_ARGS="--vdev=$(vdev $n) -l 0-1 --log-level=lib.eal:error" \
			"$bench" -m recv -T "$n" -t "$secs" 2>/dev/null > "$tmp/out"
		awk '/^Mpps/ {print $2}' "$tmp/out" | tail -n +2 | median >> "$tmp/d"
		awk '/^cpu-ns/ {print $2}' "$tmp/out" >> "$tmp/dc"
		tpmd_rates Rx-pps "--lcores=0@0,1@0,2@1 --vdev=$(vdev $n)" \
			"--forward-mode=rxonly --rxq=$n --txq=$n --nb-cores=$n" | median >> "$tmp/t"
	done
	printf "%-34s %10s %12s\n" "dpverbs, $n queue(s), $n thread(s)" "$(median < "$tmp/d")" \
		"$(median < "$tmp/dc")"
	printf "%-34s %10s %12s\n" "testpmd rxonly, $n queue(s), $n core(s)" "$(median < "$tmp/t")" "-"
done

# a port without RSS, one hardware queue: n software queues (rx_spread = 2) by n threads
printf "%-34s %10s %12s\n" "64 B, one port queue, spread" "Mpps" "CPU ns/frame"
for n in 1 2; do
	: > "$tmp/d"; : > "$tmp/dc"
	printf "queues_per_port = %d\nrx_spread = 2\n" "$n" > "$tmp/conf"
	for r in $(seq "$rounds"); do
		DPV_CONFIG="$tmp/conf" DPV_EAL_ARGS="--vdev=net_pcap0,rx_pcap=$tmp/f$n.pcap,infinite_rx=1 -l 0-1 --log-level=lib.eal:error" \
			"$bench" -m recv -T "$n" -t "$secs" 2>/dev/null > "$tmp/out"
		awk '/^Mpps/ {print $2}' "$tmp/out" | tail -n +2 | median >> "$tmp/d"
		awk '/^cpu-ns/ {print $2}' "$tmp/out" >> "$tmp/dc"
	done
	printf "%-34s %10s %12s\n" "dpverbs, $n sw queue(s), $n thread(s)" "$(median < "$tmp/d")" \
		"$(median < "$tmp/dc")"
done
