/* SPDX-License-Identifier: BSD-3-Clause */
/* The drop-in libibverbs.so.1's own pieces (compat/): what rdma-core exports beyond the verbs
 * API dpverbs implements in lib/verbs. Functions here follow rdma-core's conventions, since
 * only rdma-core's callers use them. */
#ifndef DPV_COMPAT_H
#define DPV_COMPAT_H

#include <rte_log.h>

extern int dpv_logtype_compat;
#define DPV_COMPAT_LOG(level, fmt, ...) \
	rte_log(RTE_LOG_ ## level, dpv_logtype_compat, "dpverbs: " fmt "\n", ##__VA_ARGS__)

#endif
