#!/bin/sh
# SPDX-License-Identifier: BSD-3-Clause
# The drop-in libibverbs.so.1 exports every symbol@version of the system's rdma-core
# libibverbs.so.1 (default and old versions alike) and nothing else; it needs neither
# libibverbs nor a shared librte_*, so a binary linked against rdma-core resolves every
# symbol to dpverbs.
set -u
ours=$1; sys=${DPV_SYSTEM_LIBIBVERBS:-/usr/lib/x86_64-linux-gnu/libibverbs.so.1}
. "$(dirname "$0")/../lib/check.sh"
dir=$(mktemp -d); trap 'rm -rf "$dir"' EXIT
# "name version" for every defined function or object, "(V)" marking a non-default version
syms() { objdump -T "$1" | awk '$0 ~ / D[FO] / && $0 !~ /\*UND\*|\*ABS\*/ {print $NF, $(NF-1)}' | sort; }
check "soname is libibverbs.so.1" "objdump -p '$ours' | grep -q 'SONAME *libibverbs.so.1$'"
check "system library $sys present" "[ -e '$sys' ]"
syms "$sys" > "$dir/sys"; syms "$ours" > "$dir/ours"
missing=$(comm -23 "$dir/sys" "$dir/ours" | head -5 | tr '\n' ' ')
extra=$(comm -13 "$dir/sys" "$dir/ours" | head -5 | tr '\n' ' ')
n=$(wc -l < "$dir/sys")
check "every one of the $n symbol@version of $sys exported (missing: $missing)" "[ -z '$missing' ]"
check "nothing else exported (extra: $extra)" "[ -z '$extra' ]"
check "IBVERBS_1.0 versions beside the 1.1 defaults (ibv_get_device_list)" \
	"grep -qx 'ibv_get_device_list (IBVERBS_1.0)' '$dir/ours' && grep -qx 'ibv_get_device_list IBVERBS_1.1' '$dir/ours'"
nodes=$(objdump -T "$ours" | awk '/\*ABS\*/ {print $NF}' | sort | tr '\n' ' ')
check "version nodes IBVERBS_1.0 … 1.14 and PRIVATE_34 ($nodes)" \
	"[ \$(echo '$nodes' | wc -w) = 13 ] && echo '$nodes' | grep -q IBVERBS_PRIVATE_34"
check "NEEDED has no libibverbs and no librte_" \
	"! objdump -p '$ours' | grep NEEDED | grep -q -e libibverbs -e librte_"
finish "symbols"
