#!/bin/sh
# SPDX-License-Identifier: BSD-3-Clause
# rdma-core's device tools, Debian's binaries unmodified, on dpverbs through dpv-run: the
# devices and every attribute ibv_devinfo -v prints, the port of the vdev given, GIDs with
# their type; the dynamic linker loads dpverbs' libibverbs.so.1 and never the system's.
run=$1
. "$(dirname "$0")/lib.sh"
for t in ibv_devices ibv_devinfo; do
	check "$t installed (apt-get install ibverbs-utils; ./dpv.sh does)" "command -v $t > /dev/null"
done

DPV_EAL_ARGS="--vdev=net_null0 $QUIET" "$run" ibv_devices > "$dir/devices" 2>&1
check "dpv-run ibv_devices exits 0" "[ $? -eq 0 ]"
check "ibv_devices lists dpv_net_null0 with a GUID" \
	"grep -Eq '^ +dpv_net_null0[[:space:]]+[0-9a-f]{16}' '$dir/devices'"

DPV_EAL_ARGS="--vdev=net_pcap0,tx_pcap=$dir/out.pcap $QUIET" "$run" ibv_devinfo -v > "$dir/v" 2>&1
check "dpv-run ibv_devinfo -v exits 0 (it crashed with LD_PRELOAD)" "[ $? -eq 0 ]"
check "ibv_devinfo -v: hca_id dpv_net_pcap0" "grep -q 'hca_id:.*dpv_net_pcap0' '$dir/v'"
check "ibv_devinfo -v: firmware names the PMD" "grep -q 'fw_ver:.*net_pcap' '$dir/v'"
check "ibv_devinfo -v: port 1 PORT_ACTIVE, Ethernet" \
	"grep -q 'state:.*PORT_ACTIVE' '$dir/v' && grep -q 'link_layer:.*Ethernet' '$dir/v'"
check "ibv_devinfo -v: GID 0 link-local, RoCE v2" \
	"grep -Eq 'GID\[ *0\]:[[:space:]]*fe80::.*, RoCE v2' '$dir/v'"
check "ibv_devinfo -v: 16 GID entries, no address (none configured)" \
	"grep -q 'gid_tbl_len:.*16' '$dir/v' && ! grep -q 'GID\[ *1\]' '$dir/v'"

# the port's addresses from the configuration, as the GIDs rxe would give them
printf 'port_addr = net_null0 10.9.8.7 fd00::7\n' > "$dir/addr.conf"
DPV_CONFIG="$dir/addr.conf" DPV_EAL_ARGS="--vdev=net_null0 $QUIET" "$run" ibv_devinfo -v \
	> "$dir/addr" 2>&1
check "ibv_devinfo -v: GID 1 ::ffff:10.9.8.7, RoCE v2 (configured IPv4)" \
	"grep -Eq 'GID\[ *1\]:[[:space:]]*::ffff:10.9.8.7, RoCE v2' '$dir/addr'"
check "ibv_devinfo -v: GID 2 fd00::7, RoCE v2 (configured IPv6)" \
	"grep -Eq 'GID\[ *2\]:[[:space:]]*fd00::7, RoCE v2' '$dir/addr'"
check "ibv_devinfo -v: RAW_PACKET TSO capability" "grep -q 'SUPPORT_RAW_PACKET' '$dir/v'"

env -u DPV_EAL_ARGS "$run" ibv_devinfo > "$dir/default" 2>&1
check "dpv-run without DPV_EAL_ARGS: its net_null port" "grep -q 'hca_id:.*dpv_net_null0' '$dir/default'"

# which libibverbs the dynamic linker loads (both ldd and at run time)
lib=$(dirname "$run")
LD_LIBRARY_PATH=$lib ldd "$(command -v ibv_devinfo)" > "$dir/ldd" 2>&1
check "ldd under dpv-run's path resolves libibverbs.so.1 to $lib" \
	"grep 'libibverbs.so.1 =>' '$dir/ldd' | grep -q '$lib/libibverbs.so.1'"
DPV_EAL_ARGS="--vdev=net_null0 $QUIET" LD_DEBUG=libs "$run" ibv_devinfo > "$dir/ld" 2>&1
rc=$?
check "LD_DEBUG: dpverbs' libibverbs.so.1 initialised" \
	"grep 'calling init:' '$dir/ld' | grep -q '$lib/libibverbs.so.1'"
check "LD_DEBUG: the system's libibverbs never loaded" \
	"! grep -E 'calling init:|trying file=' '$dir/ld' | grep libibverbs | grep -qv '$lib/'"
check "LD_DEBUG: no rdma-core provider plugin (libmlx5-rdmav34.so…) loaded" \
	"! grep 'calling init:' '$dir/ld' | grep -q rdmav"
check "ibv_devinfo under LD_DEBUG still exits 0 (rc $rc)" "[ $rc -eq 0 ]"
check "ibv_devinfo under LD_DEBUG still shows dpv_net_null0" "grep -q 'hca_id:.*dpv_net_null0' '$dir/ld'"
finish tools
