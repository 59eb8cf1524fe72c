/* SPDX-License-Identifier: BSD-3-Clause */
/* The extended CQ: ibv_start_poll / next / end and the ibv_wc_read_* accessors over the
 * ring and progress of ibv_poll_cq (cq.c): one CQ, polled either way. */
#include <errno.h>

#include "verbs_base.h"
#include "verbs_pd.h"
#include "verbs_fork.h"
#include "verbs_cq.h"

/* The wc_flags fields dpverbs has: struct ibv_wc's and the timestamps (TSC, CLOCK_REALTIME). */
#define CQ_EX_TS_FLAGS (IBV_WC_EX_WITH_COMPLETION_TIMESTAMP | \
			IBV_WC_EX_WITH_COMPLETION_TIMESTAMP_WALLCLOCK)
#define CQ_EX_WC_FLAGS (IBV_WC_EX_WITH_BYTE_LEN | IBV_WC_EX_WITH_IMM | IBV_WC_EX_WITH_QP_NUM | \
			IBV_WC_EX_WITH_SRC_QP | IBV_WC_EX_WITH_SLID | IBV_WC_EX_WITH_SL | \
			IBV_WC_EX_WITH_DLID_PATH_BITS | CQ_EX_TS_FLAGS)
#define CQ_EX_KNOWN_MASK (IBV_CQ_INIT_ATTR_MASK_FLAGS | IBV_CQ_INIT_ATTR_MASK_PD)

static inline struct dpv_cq *cqx_of(struct ibv_cq_ex *c)
{
	return to_dcq(ibv_cq_ex_to_cq(c));
}

/* Take the next completion into the CQ's current one; the fields verbs.h reads directly
 * (wr_id, status) are written into the ibv_cq_ex. */
static int cqx_advance(struct dpv_cq *cq)
{
	int rc = dpv__cq_pop(cq, &cq->cur);

	if (rc != 0)
		return ENOENT;
	cq->cqx.wr_id = cq->cur.wr_id;
	cq->cqx.status = cq->cur.status;
	return 0;
}

static int cqx_start_poll(struct ibv_cq_ex *c, struct ibv_poll_cq_attr *attr)
{
	struct dpv_cq *cq = cqx_of(c);

	DPV_FORK_REFUSE(ENODEV);
	if (attr == NULL || attr->comp_mask != 0)
		return EINVAL;                  /* as mlx5: no poll attribute is defined */
	dpv__cq_poll_progress(cq);
	/* one poll session at a time (the current completion lives in the CQ); the ring's lock
	 * is not held across it, so a program may post between start and end */

	if (!cq->single_threaded)
		dpv__spinlock_lock(&cq->poll_lock);
	if (cqx_advance(cq) != 0) {
		/* ibv_create_cq_ex(3): after ENOENT, ibv_end_poll must not be called */
		if (!cq->single_threaded)
			dpv__spinlock_unlock(&cq->poll_lock);
		return ENOENT;
	}
	return 0;
}

static int cqx_next_poll(struct ibv_cq_ex *c)
{
	return cqx_advance(cqx_of(c));
}

static void cqx_end_poll(struct ibv_cq_ex *c)
{
	struct dpv_cq *cq = cqx_of(c);

	if (!cq->single_threaded)
		dpv__spinlock_unlock(&cq->poll_lock);
}

static enum ibv_wc_opcode read_opcode(struct ibv_cq_ex *c) { return cqx_of(c)->cur.opcode; }
static uint32_t read_vendor_err(struct ibv_cq_ex *c) { return cqx_of(c)->cur.vendor_err; }
static uint32_t read_byte_len(struct ibv_cq_ex *c) { return cqx_of(c)->cur.byte_len; }
static __be32 read_imm_data(struct ibv_cq_ex *c) { return cqx_of(c)->cur.imm_data; }
static uint32_t read_qp_num(struct ibv_cq_ex *c) { return cqx_of(c)->cur.qp_num; }
static uint32_t read_src_qp(struct ibv_cq_ex *c) { return cqx_of(c)->cur.src_qp; }
static unsigned int read_wc_flags(struct ibv_cq_ex *c) { return cqx_of(c)->cur.wc_flags; }
static uint32_t read_slid(struct ibv_cq_ex *c) { return cqx_of(c)->cur.slid; }
static uint8_t read_sl(struct ibv_cq_ex *c) { return cqx_of(c)->cur.sl; }
static uint8_t read_dlid_path_bits(struct ibv_cq_ex *c) { return cqx_of(c)->cur.dlid_path_bits; }

/* When the current completion was written: 0 on a CQ created without the flag (as the
 * accessor of a field not asked for, its value is undefined by verbs). */
static uint64_t read_completion_ts(struct ibv_cq_ex *c) { return cqx_of(c)->cur_ts.tsc; }
static uint64_t read_completion_wallclock_ns(struct ibv_cq_ex *c)
{
	return cqx_of(c)->cur_ts.wall_ns;
}

/* Fields a CQ cannot be created with (creation says EOPNOTSUPP); present so that no
 * accessor is ever a NULL pointer. */
static uint16_t read_none_u16(struct ibv_cq_ex *c) { (void)c; return 0; }
static uint32_t read_none_u32(struct ibv_cq_ex *c) { (void)c; return 0; }
static void read_none_tm(struct ibv_cq_ex *c, struct ibv_wc_tm_info *tm)
{
	(void)c;
	if (tm != NULL)
		*tm = (struct ibv_wc_tm_info){ 0 };
}

static int check_cq_attr(const struct ibv_cq_init_attr_ex *a)
{
	if (a->comp_mask & ~(uint32_t)CQ_EX_KNOWN_MASK)
		return -EINVAL;
	if ((a->comp_mask & IBV_CQ_INIT_ATTR_MASK_FLAGS) &&
	    (a->flags & ~(uint32_t)(IBV_CREATE_CQ_ATTR_SINGLE_THREADED |
				    IBV_CREATE_CQ_ATTR_IGNORE_OVERRUN)))
		return -EINVAL;
	if ((a->comp_mask & IBV_CQ_INIT_ATTR_MASK_FLAGS) &&
	    (a->flags & IBV_CREATE_CQ_ATTR_IGNORE_OVERRUN))
		return -EOPNOTSUPP;
	if (a->wc_flags & ~(uint64_t)CQ_EX_WC_FLAGS)
		return -EOPNOTSUPP;             /* a field no completion of dpverbs carries */
	return 0;
}

struct ibv_cq_ex *dpv_create_cq_ex(struct ibv_context *context, struct ibv_cq_init_attr_ex *a)
{
	struct dpv_pd *pd = NULL;
	struct dpv_cq *cq;
	int rc = a == NULL ? -EINVAL : check_cq_attr(a);

	DPV_FORK_REFUSE(NULL);
	if (rc != 0)
		return dpv__fail_ptr(rc);
	if (a->cqe > (uint32_t)INT32_MAX)
		return dpv__fail_ptr(-EINVAL);
	/* IBV_CQ_INIT_ATTR_MASK_PD: a parent domain of this context, whose allocator (if it has
	 * one) gives the ring; a plain PD is EINVAL (as mlx5) */
	if ((a->comp_mask & IBV_CQ_INIT_ATTR_MASK_PD) && a->parent_domain != NULL) {
		pd = to_dpd(a->parent_domain);
		if (pd->parent == NULL || a->parent_domain->context != context)
			return dpv__fail_ptr(-EINVAL);
	}
	cq = dpv__cq_create(context, (int)a->cqe, a->cq_context, a->channel, (int)a->comp_vector,
			    pd);
	if (cq == NULL)
		return NULL;
	if ((a->wc_flags & CQ_EX_TS_FLAGS) &&
	    dpv__cq_timestamps(cq, a->wc_flags & IBV_WC_EX_WITH_COMPLETION_TIMESTAMP_WALLCLOCK)) {
		ibv_destroy_cq(&cq->ibcq);
		return dpv__fail_ptr(-ENOMEM);
	}
	cq->wc_flags = a->wc_flags;
	cq->single_threaded = (a->comp_mask & IBV_CQ_INIT_ATTR_MASK_FLAGS) &&
			      (a->flags & IBV_CREATE_CQ_ATTR_SINGLE_THREADED);
	cq->cqx.start_poll = cqx_start_poll;
	cq->cqx.next_poll = cqx_next_poll;
	cq->cqx.end_poll = cqx_end_poll;
	cq->cqx.read_opcode = read_opcode;
	cq->cqx.read_vendor_err = read_vendor_err;
	cq->cqx.read_byte_len = read_byte_len;
	cq->cqx.read_imm_data = read_imm_data;
	cq->cqx.read_qp_num = read_qp_num;
	cq->cqx.read_src_qp = read_src_qp;
	cq->cqx.read_wc_flags = read_wc_flags;
	cq->cqx.read_slid = read_slid;
	cq->cqx.read_sl = read_sl;
	cq->cqx.read_dlid_path_bits = read_dlid_path_bits;
	cq->cqx.read_completion_ts = read_completion_ts;
	cq->cqx.read_cvlan = read_none_u16;
	cq->cqx.read_flow_tag = read_none_u32;
	cq->cqx.read_tm_info = read_none_tm;
	cq->cqx.read_completion_wallclock_ns = read_completion_wallclock_ns;
	return &cq->cqx;
}
