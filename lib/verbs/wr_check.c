/* SPDX-License-Identifier: BSD-3-Clause */
/* The ibv_post_send(3) checks as tables: which opcodes a QP type takes, and what each opcode
 * allows. See doc/semantics.md for the table this implements. */
#include <errno.h>
#include <stddef.h>

#include "dpv_offload.h"
#include "wr_check.h"

#define UD  (1u << IBV_QPT_UD)
#define UC  (1u << IBV_QPT_UC)
#define RC  (1u << IBV_QPT_RC)
#define RAW (1u << IBV_QPT_RAW_PACKET)
#define XRC (1u << IBV_QPT_XRC_SEND)

struct opcode_rule {
	uint32_t qp_types;         /* the man page's table */
	uint8_t wc_opcode;
	bool solicited;            /* IBV_SEND_SOLICITED allowed */
	bool inline_data;          /* IBV_SEND_INLINE allowed */
	bool atomic;               /* 8-byte operand at an 8-aligned remote address */
};

static const struct opcode_rule opcodes[] = {
	[IBV_WR_SEND]                 = { UD | UC | RC | XRC | RAW, IBV_WC_SEND, true, true },
	[IBV_WR_SEND_WITH_IMM]        = { UD | UC | RC | XRC, IBV_WC_SEND, true, true },
	[IBV_WR_RDMA_WRITE]           = { UC | RC | XRC, IBV_WC_RDMA_WRITE, false, true },
	[IBV_WR_RDMA_WRITE_WITH_IMM]  = { UC | RC | XRC, IBV_WC_RDMA_WRITE, true, true },
	[IBV_WR_RDMA_READ]            = { RC | XRC, IBV_WC_RDMA_READ, false, false },
	[IBV_WR_ATOMIC_CMP_AND_SWP]   = { RC | XRC, IBV_WC_COMP_SWAP, false, false, true },
	[IBV_WR_ATOMIC_FETCH_AND_ADD] = { RC | XRC, IBV_WC_FETCH_ADD, false, false, true },
	[IBV_WR_LOCAL_INV]            = { UC | RC | XRC, IBV_WC_LOCAL_INV, false, false },
	[IBV_WR_BIND_MW]              = { UC | RC | XRC, IBV_WC_BIND_MW, false, false },
	[IBV_WR_SEND_WITH_INV]        = { UC | RC | XRC, IBV_WC_SEND, true, true },
	[IBV_WR_TSO]                  = { UD | RAW, IBV_WC_TSO, false, true },
};

#define NB_OPCODES (sizeof(opcodes) / sizeof(opcodes[0]))
#define KNOWN_FLAGS (IBV_SEND_FENCE | IBV_SEND_SIGNALED | IBV_SEND_SOLICITED | \
		     IBV_SEND_INLINE | IBV_SEND_IP_CSUM)

static const struct opcode_rule *rule_of(const struct dpv_wr_limits *lim, unsigned int opcode)
{
	if (opcode >= NB_OPCODES || opcodes[opcode].qp_types == 0 ||
	    !(opcodes[opcode].qp_types & (1u << lim->qp_type)))
		return NULL;
	return &opcodes[opcode];
}

uint64_t dpv__wr_length(const struct ibv_send_wr *wr)
{
	uint64_t len = 0;

	if (wr->sg_list == NULL)
		return 0;            /* num_sge > 0 with no list: dpv__wr_check_basic says EINVAL */
	for (int i = 0; i < wr->num_sge; i++)
		len += wr->sg_list[i].length;
	return len;
}

int dpv__wr_check_basic(const struct dpv_wr_limits *lim, const struct ibv_send_wr *wr,
		       uint64_t len)
{
	const struct opcode_rule *r = rule_of(lim, wr->opcode);
	unsigned int f = wr->send_flags;

	if (r == NULL || (f & ~(unsigned int)KNOWN_FLAGS))
		return -EINVAL;
	if ((f & IBV_SEND_FENCE) && lim->qp_type != IBV_QPT_RC && lim->qp_type != IBV_QPT_XRC_SEND)
		return -EINVAL;
	if ((f & IBV_SEND_SOLICITED) && !r->solicited)
		return -EINVAL;
	if ((f & IBV_SEND_INLINE) && !r->inline_data)
		return -EINVAL;
	if ((f & IBV_SEND_IP_CSUM) && !lim->ip_csum)
		return -EINVAL;
	if (wr->num_sge < 0 || (uint32_t)wr->num_sge > lim->max_send_sge ||
	    (wr->num_sge > 0 && wr->sg_list == NULL))
		return -EINVAL;
	if ((f & IBV_SEND_INLINE) && len > lim->max_inline_data)
		return -EINVAL;
	return 0;
}

/* VLAN tags at the start of a frame (at most two), from the bytes that can be read. */
static unsigned int vlan_tags(const uint8_t *l2, uint32_t len)
{
	struct dpv_hdr_info info;

	if (l2 == NULL)
		return 0;
	dpv__hdr_parse(l2, len, &info);
	return info.vlans;
}

static int check_tso(const struct dpv_wr_limits *lim, const struct ibv_send_wr *wr, uint64_t len,
		     struct dpv_hdr_info *info)
{
	struct dpv_hdr_info local;

	if (info == NULL)
		info = &local;
	if (wr->tso.hdr == NULL || wr->tso.hdr_sz < DPV_ETH_HLEN || wr->tso.hdr_sz > lim->max_tso_header ||
	    wr->tso.mss == 0 || len > lim->max_tso)
		return -EINVAL;
	return dpv__tso_hdr_check(wr->tso.hdr, wr->tso.hdr_sz, info);
}

int dpv__wr_check_shape(const struct dpv_wr_limits *lim, const struct ibv_send_wr *wr,
		       uint64_t len, const uint8_t *l2, uint32_t l2_len,
		       struct dpv_hdr_info *tso_info)
{
	if (lim->frame_sends && wr->opcode == IBV_WR_SEND) {
		if (len < DPV_ETH_HLEN ||
		    len > lim->max_frame + DPV_VLAN_HLEN * (uint64_t)vlan_tags(l2, l2_len))
			return -EINVAL;
		return 0;
	}
	if (wr->opcode == IBV_WR_TSO)
		return check_tso(lim, wr, len, tso_info);
	if (rule_of(lim, wr->opcode) == NULL)
		return -EINVAL;
	if (opcodes[wr->opcode].atomic)
		return len != 8 || (wr->wr.atomic.remote_addr & 7) ? -EINVAL : 0;
	return 0;
}

enum ibv_wc_opcode dpv__wr_wc_opcode(enum ibv_wr_opcode opcode)
{
	return (unsigned int)opcode < NB_OPCODES ? opcodes[opcode].wc_opcode : IBV_WC_SEND;
}

/* Each IBV_QP_EX_WITH_* bit and the ibv_post_send opcode its builder makes. */
static const struct {
	uint64_t op;
	enum ibv_wr_opcode opcode;
} send_ops[] = {
	{ IBV_QP_EX_WITH_RDMA_WRITE, IBV_WR_RDMA_WRITE },
	{ IBV_QP_EX_WITH_RDMA_WRITE_WITH_IMM, IBV_WR_RDMA_WRITE_WITH_IMM },
	{ IBV_QP_EX_WITH_SEND, IBV_WR_SEND },
	{ IBV_QP_EX_WITH_SEND_WITH_IMM, IBV_WR_SEND_WITH_IMM },
	{ IBV_QP_EX_WITH_RDMA_READ, IBV_WR_RDMA_READ },
	{ IBV_QP_EX_WITH_ATOMIC_CMP_AND_SWP, IBV_WR_ATOMIC_CMP_AND_SWP },
	{ IBV_QP_EX_WITH_ATOMIC_FETCH_AND_ADD, IBV_WR_ATOMIC_FETCH_AND_ADD },
	{ IBV_QP_EX_WITH_LOCAL_INV, IBV_WR_LOCAL_INV },
	{ IBV_QP_EX_WITH_BIND_MW, IBV_WR_BIND_MW },
	{ IBV_QP_EX_WITH_SEND_WITH_INV, IBV_WR_SEND_WITH_INV },
	{ IBV_QP_EX_WITH_TSO, IBV_WR_TSO },
};

uint64_t dpv__wr_send_ops(enum ibv_qp_type qp_type)
{
	struct dpv_wr_limits lim = { .qp_type = qp_type };
	uint64_t ops = 0;

	for (size_t i = 0; i < sizeof(send_ops) / sizeof(send_ops[0]); i++)
		if (rule_of(&lim, send_ops[i].opcode) != NULL)
			ops |= send_ops[i].op;
	return ops;
}
