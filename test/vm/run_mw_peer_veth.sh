#!/bin/sh
# SPDX-License-Identifier: BSD-3-Clause
# run_mw_peer_veth.sh DPV_RUN MW_PEER: mw_peer (a type 2 window bound by one side, READ,
# WRITTEN and invalidated with SEND_WITH_INV by the other, then a WRITE through the dead key)
# between two dpverbs processes through dpv-run, each on one end of a veth pair of this run's
# own (net_af_packet, an IPv4 address from its configuration), the TCP exchange on 127.0.0.1;
# twice: the listening side owns the window, then the connecting side. Then, on fresh QP
# pairs, the owner's LOCAL_INV and a SEND_WITH_INV of a key that names nothing. Both sides'
# output is shown. The same binary runs
# on rxe in the soft-RoCE VM test (run_rxe_test.sh rc).
set -u
. "$(dirname "$0")/../lib/net.sh"
run=$1 prog=$2
. "$(dirname "$0")/../lib/check.sh"
[ "$(id -u)" = 0 ] || { echo "SKIP: the veth pair needs root"; exit 77; }
dir=$(mktemp -d)
srv=
cleanup() {
	[ -n "$srv" ] && kill "$srv" 2>/dev/null
	wait 2>/dev/null
	net_cleanup
	rm -rf "$dir"
}
trap cleanup EXIT
veth_up mwp   # $a, $b: up, IPv6 off
printf 'port_addr = net_af_packet0 10.79.0.1\n' > "$dir/a.conf"
printf 'port_addr = net_af_packet0 10.79.0.2\n' > "$dir/b.conf"
quiet='--log-level=lib.eal:warning --log-level=lib.telemetry:warning --log-level=pmd.net.af_packet:error'
port=$((20000 + $$ % 10000))
for own in server client; do
	DPV_CONFIG=$dir/a.conf DPV_EAL_ARGS="--vdev=net_af_packet0,iface=$a $quiet" \
		timeout 100 "$run" "$prog" -g 1 -p $port -o $own > "$dir/server.$own" 2>&1 &
	srv=$!
	DPV_CONFIG=$dir/b.conf DPV_EAL_ARGS="--vdev=net_af_packet0,iface=$b $quiet" \
		timeout 100 "$run" "$prog" -g 1 -p $port -o $own 127.0.0.1 > "$dir/client.$own" 2>&1
	crc=$?
	wait "$srv"
	src=$?
	srv=
	port=$((port + 1))
	o=server u=client orc=$src urc=$crc
	[ $own = client ] && o=client u=server orc=$crc urc=$src
	check "the $own owns: the owner ($o) exits 0" "[ $orc -eq 0 ]"
	check "the $own owns: the user ($u) exits 0" "[ $urc -eq 0 ]"
	check "the $own owns: the owner passed" "grep -q '^mw_peer: passed (owner)' '$dir/$o.$own'"
	check "the $own owns: the user passed" "grep -q '^mw_peer: passed (user)' '$dir/$u.$own'"
	check "the $own owns: WITH_INV and the key in the owner's receive completion" \
		"grep -q '^ok: receive completion' '$dir/$o.$own'"
	check "the $own owns: the WRITE through the invalidated key: REM_ACCESS_ERR" \
		"grep -q '^ok: RDMA WRITE through the invalidated key: completion remote access error' '$dir/$u.$own'"
	check "the $own owns: READ after the owner's LOCAL_INV: REM_ACCESS_ERR" \
		"grep -q \"^ok: RDMA READ through the key invalidated by the owner's LOCAL_INV: completion remote access error\" '$dir/$u.$own'"
	check "the $own owns: SEND_WITH_INV of a key naming nothing: REM_INV_REQ_ERR" \
		"grep -q '^ok: SEND_WITH_INV of a key naming nothing: completion remote invalid request error' '$dir/$u.$own'"
	for f in "$dir"/*."$own"; do echo "--- $(basename "$f")"; grep -v -e "^EAL:" -e "^TELEMETRY:" "$f"; done
done
finish "mw_peer"
