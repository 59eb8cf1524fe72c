/* SPDX-License-Identifier: BSD-3-Clause */
/* dpverbs: the offloads a port can do and where they run, shared by <dpverbs.h> and by the
 * verbs-free layers inside dpverbs (lib/offload). Included by <dpverbs.h>; applications need
 * not include it themselves. */
#ifndef DPVERBS_OFFLOAD_H
#define DPVERBS_OFFLOAD_H

#ifdef __cplusplus
extern "C" {
#endif

/** Offloads a port can do; dpverbs backs each of them in software where the port cannot. */
enum dpv_offload {
	DPV_OFFLOAD_IPV4_CKSUM = 1 << 0,
	DPV_OFFLOAD_TCP_CKSUM  = 1 << 1,
	DPV_OFFLOAD_UDP_CKSUM  = 1 << 2,
	DPV_OFFLOAD_TCP_TSO    = 1 << 3,
};

/** Where a port's offloads (IP_CSUM, TSO) run. */
enum dpv_offload_policy {
	DPV_OFFLOAD_POLICY_AUTO = 0,     /* the port where it produces the contract's frames, else software */
	DPV_OFFLOAD_POLICY_SOFTWARE = 1, /* always software (for comparison) */
	DPV_OFFLOAD_POLICY_HARDWARE = 2, /* never software: IP_CSUM/TSO the port cannot do fail
					  * with EINVAL, as on mlx5 without the offload */
};

#ifdef __cplusplus
}
#endif

#endif
