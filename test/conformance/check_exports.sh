#!/bin/sh
# SPDX-License-Identifier: BSD-3-Clause
# libdpverbs exports the verbs API and dpv_* only: no DPDK symbol leaks into applications,
# and neither library variant links rdma-core's libibverbs or a shared librte_*.
set -u
so=$1; a=$2
. "$(dirname "$0")/../lib/check.sh"
leaks=$(nm -D --defined-only "$so" | awk '{print $3}' | grep -v -e '^ibv_' -e '^dpv_' -e '^_ibv_' | head -5)
check "shared library exports only ibv_*/dpv_* (leaks: $leaks)" '[ -z "$leaks" ]'
for sym in ibv_get_device_list ibv_open_device ibv_reg_mr ibv_reg_mr_iova2 ibv_create_qp \
           ibv_modify_qp ibv_create_cq ibv_get_cq_event dpv_init dpv_query_port_info \
           dpv_query_port_xstats dpv_query_qp_counters dpv_query_cq_counters \
           dpv_set_offload_software dpv_qp_set_progress dpv_service_lcore_start \
           dpv_service_lcore_stop dpv_thread_register dpv_thread_unregister; do
	check "exports $sym" "nm -D --defined-only '$so' | grep -qw $sym"
done
check "no rte_ symbol exported" '! nm -D --defined-only "$so" | grep -q " rte_"'
check "NEEDED has no libibverbs/librte" '! objdump -p "$so" | grep NEEDED | grep -q -e libibverbs -e librte_'
sleaks=$(nm -g --defined-only "$a" | awk 'NF==3 && $2 ~ /[TDBRC]/ {print $3}' | grep -v -e '^ibv_' -e '^dpv_' -e '^_ibv_' | head -5)
check "static library defines only ibv_*/dpv_* globals (leaks: $sleaks)" '[ -z "$sleaks" ]'
finish "exports"
