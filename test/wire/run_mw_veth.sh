#!/bin/sh
# SPDX-License-Identifier: BSD-3-Clause
# run_mw_veth.sh PROGRAM: a two-process wire test (test_mw_wire, test_srq_wire: the program
# forks), each process with net_af_packet on one end of a veth pair of this run's own (IPv6
# off on both ends, so that the kernel sends nothing of its own into the test's traffic).
# The pair is removed afterwards.
set -u
. "$(dirname "$0")/../lib/net.sh"
trap net_cleanup EXIT
veth_up dpvm   # $a, $b: up, IPv6 off
DPV_MW_IFACE_A=$a DPV_MW_IFACE_B=$b timeout 100 "$1"
