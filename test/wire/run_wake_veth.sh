#!/bin/sh
# SPDX-License-Identifier: BSD-3-Clause
# run_wake_veth.sh PROGRAM: test_wake's two processes (the program forks), each with
# net_af_packet on one end of a veth pair of this run's own (IPv6 off on both ends, so that
# the kernel sends nothing of its own into the test's traffic). The pair is removed
# afterwards.
set -u
. "$(dirname "$0")/../lib/net.sh"
trap net_cleanup EXIT
veth_up hpw   # $a, $b: up, IPv6 off
DPV_WAKE_IFACE_A=$a DPV_WAKE_IFACE_B=$b timeout 200 "$1"
