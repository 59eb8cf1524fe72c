#!/bin/sh
# SPDX-License-Identifier: BSD-3-Clause
# run_veth_test.sh PROGRAM: two ports joined by a wire — net_af_packet on each end of a veth
# pair of this run's own — for a receive test that sends on the first device and receives on
# the second (DPV_TEST_RX_DEVICE). IPv6 is off on both ends so that the kernel sends nothing of
# its own (router solicitations) into the test's traffic.
set -u
. "$(dirname "$0")/../lib/net.sh"
prog=$1
trap net_cleanup EXIT
veth_up dpv   # $a, $b: up, IPv6 off
DPV_TEST_RX_DEVICE=dpv_net_af_packet1 \
DPV_EAL_ARGS="--vdev=net_af_packet0,iface=$a --vdev=net_af_packet1,iface=$b $AF_PACKET_QUIET" \
	"$prog"
