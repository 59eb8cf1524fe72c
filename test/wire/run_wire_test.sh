#!/bin/sh
# SPDX-License-Identifier: BSD-3-Clause
# run_wire_test.sh PROGRAM [VDEV_EXTRA]: run a wire test program on a net_pcap port, then
# compare what the port wrote with what the program expected (check_wire.py, with scapy).
set -u
prog=$1
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
here=$(dirname "$0")
DPV_EAL_ARGS="--vdev=net_pcap0,tx_pcap=$dir/wire.pcap --log-level=lib.eal:error --log-level=lib.telemetry:error ${DPV_EAL_EXTRA:-}" \
	"$prog" "$dir/expected.txt"
rc=$?
/usr/bin/python3 "$here/check_wire.py" "$dir/wire.pcap" "$dir/expected.txt" || rc=1
[ -n "${DPV_TEST_KEEP:-}" ] && cp "$dir/wire.pcap" "$DPV_TEST_KEEP"
exit $rc
