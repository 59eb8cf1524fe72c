#!/bin/sh
# SPDX-License-Identifier: BSD-3-Clause
# perftest's RC tools, Debian's binaries unmodified, between two dpverbs processes through
# dpv-run on the ends of a veth pair of this run's own (net_af_packet), each port with an
# IPv4 address from its configuration, GID index 1 (ARP resolves the peer at RTR): RDMA
# WRITE, READ and SEND bandwidth, WRITE, READ and SEND latency, atomics. The passive side of the
# bandwidth tests and both sides of ib_write_lat poll no CQ: the library's keeper drives
# their responders (doc/roce-rc.md, "RC and UC queue pairs"). Checked: both processes exit 0 and
# the client reports its result line; the figures are printed, not judged. perftest checks
# no payload: the bytes of RC WRITE, READ, SEND and the atomics' values are compat_data_peer's.
# The local ACK timeout is perftest's -u 18 (1.07 s, 8 tries) rather than its default 14
# (67 ms): a passive side's keeper is a normal thread, and on a shared 2-CPU machine running
# other tests (or VMs) it was seen to wake 0.3-1.6 s late; at 67 ms the peer then ran out of
# retries (IBV_WC_RETRY_EXC_ERR, as a RoCE NIC's requester does when its peer stops
# answering). doc/roce-addressing.md, "Neighbours".
run=$1
. "$(dirname "$0")/lib.sh"
require perftest ib_write_bw
pair_up dpvt 10.79.0
perftest_up 30000
one() {
	tool=$1; n=$2; shift 2
	perftest_one "$tool" "$tool" "$n" -u 18 "$@"
}
one ib_write_bw 2000 -n 2000 -s 4096
one ib_read_bw 2000 -n 2000 -s 4096
one ib_send_bw 2000 -n 2000 -s 4096
one ib_atomic_bw 2000 -n 2000
one ib_write_lat 500 -n 500 -s 64
one ib_read_lat 500 -n 500 -s 64
one ib_send_lat 500 -n 500 -s 64
finish rc_perftest
