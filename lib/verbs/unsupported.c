/* SPDX-License-Identifier: BSD-3-Clause */
/* Verbs entry points dpverbs does not implement (yet): each fails cleanly with EOPNOTSUPP, as
 * a provider without the feature does, so that programs written for rdma-core link and run.
 * Also the small helpers that need no device. */
#include <errno.h>
#include <string.h>

#include <infiniband/verbs.h>

#include "dpv_engine.h"

#define PTR_UNSUP(type, call) \
	DPV_EXPORT type *call { errno = EOPNOTSUPP; return NULL; }
#define INT_UNSUP(call) \
	DPV_EXPORT int call { return EOPNOTSUPP; }

INT_UNSUP(ibv_resolve_eth_l2_from_gid(struct ibv_context *context, struct ibv_ah_attr *attr,
				      uint8_t eth_mac[6], uint16_t *vid))
PTR_UNSUP(struct ibv_dm, ibv_import_dm(struct ibv_context *context, uint32_t dm_handle))
DPV_EXPORT void ibv_unimport_dm(struct ibv_dm *dm) { }
INT_UNSUP(ibv_query_ece(struct ibv_qp *qp, struct ibv_ece *ece))
INT_UNSUP(ibv_set_ece(struct ibv_qp *qp, struct ibv_ece *ece))
PTR_UNSUP(struct ibv_mr, ibv_reg_dmabuf_mr(struct ibv_pd *pd, uint64_t offset, size_t length,
					   uint64_t iova, int fd, int access))

/* ibv_rereg_mr(3) reports failure as IBV_REREG_MR_ERR_* with errno set. */
DPV_EXPORT int ibv_rereg_mr(struct ibv_mr *mr, int flags, struct ibv_pd *pd, void *addr,
			    size_t length, int access)
{
	errno = EOPNOTSUPP;
	return IBV_REREG_MR_ERR_INPUT;
}

/* Sends leave in order, but nothing promises in-order data placement: 0, as most providers. */
DPV_EXPORT int ibv_query_qp_data_in_order(struct ibv_qp *qp, enum ibv_wr_opcode op,
					  uint32_t flags)
{
	return 0;
}

/* ibv_get_pkey_index(3): the index of @pkey in the port's table (one entry: 0xFFFF at 0), or
 * -1 with errno set (EINVAL: no such context or port; ENOENT: not in the table). */
DPV_EXPORT int ibv_get_pkey_index(struct ibv_context *context, uint8_t port_num, __be16 pkey)
{
	if (context == NULL || port_num != 1) {
		errno = EINVAL;
		return -1;
	}
	if (pkey != 0xffff) {
		errno = ENOENT;
		return -1;
	}
	return 0;
}

static const struct { enum ibv_rate rate; int mult, mbps; } rates[] = {
	{ IBV_RATE_2_5_GBPS, 1, 2500 }, { IBV_RATE_5_GBPS, 2, 5000 },
	{ IBV_RATE_10_GBPS, 4, 10000 }, { IBV_RATE_20_GBPS, 8, 20000 },
	{ IBV_RATE_30_GBPS, 12, 30000 }, { IBV_RATE_40_GBPS, 16, 40000 },
	{ IBV_RATE_60_GBPS, 24, 60000 }, { IBV_RATE_80_GBPS, 32, 80000 },
	{ IBV_RATE_120_GBPS, 48, 120000 }, { IBV_RATE_14_GBPS, 5, 14062 },
	{ IBV_RATE_56_GBPS, 22, 56250 }, { IBV_RATE_112_GBPS, 45, 112500 },
	{ IBV_RATE_168_GBPS, 67, 168750 }, { IBV_RATE_25_GBPS, 10, 25781 },
	{ IBV_RATE_100_GBPS, 40, 103125 }, { IBV_RATE_200_GBPS, 80, 206250 },
	{ IBV_RATE_300_GBPS, 120, 309375 }, { IBV_RATE_28_GBPS, 11, 28125 },
	{ IBV_RATE_50_GBPS, 20, 53125 }, { IBV_RATE_400_GBPS, 160, 425000 },
	{ IBV_RATE_600_GBPS, 240, 637500 },
};

DPV_EXPORT int ibv_rate_to_mult(enum ibv_rate rate)
{
	for (size_t i = 0; i < sizeof(rates) / sizeof(rates[0]); i++)
		if (rates[i].rate == rate)
			return rates[i].mult;
	return -1;
}

DPV_EXPORT int ibv_rate_to_mbps(enum ibv_rate rate)
{
	for (size_t i = 0; i < sizeof(rates) / sizeof(rates[0]); i++)
		if (rates[i].rate == rate)
			return rates[i].mbps;
	return -1;
}
