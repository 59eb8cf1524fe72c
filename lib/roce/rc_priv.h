/* SPDX-License-Identifier: BSD-3-Clause */
/* What the parts of the RC/UC engine share (lib/roce/rc_*.c): the queue entries, PSN
 * arithmetic, and the calls between requester (rc_req.c), completer (rc_comp.c), responder
 * (rc_resp.c) and the common part (rc_engine.c). Never included outside lib/roce. */
#ifndef DPV_RC_PRIV_H
#define DPV_RC_PRIV_H

#include "dpv_assert.h"
#include "rc_engine.h"

enum { SWQE_POSTED, SWQE_STARTED, SWQE_FAILED };

struct dpv_rc_swqe {
	struct dpv_rc_send_wr wr;
	uint32_t first_psn, last_psn;	/* once STARTED */
	uint8_t state;
	uint8_t status;			/* FAILED: what it completes with */
};

struct dpv_rc_rwqe {
	uint64_t handle;
	uint32_t length;
};

enum { RES_FREE, RES_READ, RES_ATOMIC };

/* A responder resource (IBA 9.7.5.2.6): what a READ asked for, so that a duplicate is
 * answered again from it, or an atomic's result, so that a duplicate is never executed. */
struct dpv_rc_res {
	uint8_t type;
	uint32_t first_psn, last_psn;
	uint32_t rkey, length;		/* READ: the request */
	uint64_t va;
	uint64_t orig;			/* ATOMIC: the value before */
	uint32_t cur_psn, resid;	/* READ: the responses still to send */
	uint64_t cur_va;
};

static inline uint32_t psn_add(uint32_t psn, uint32_t n)
{
	return (psn + n) & DPV_ROCE_PSN_MASK;
}

/* Packets of a message of @len bytes (a zero-length one still takes a packet). */
static inline uint32_t rc_npkts(uint32_t len, uint32_t mtu)
{
	return len == 0 ? 1 : (uint32_t)(((uint64_t)len + mtu - 1) / mtu);
}

static inline bool wr_is_rd_atomic(uint8_t opcode)
{
	return opcode == DPV_RC_WR_READ || opcode == DPV_RC_WR_CMP_SWP ||
	       opcode == DPV_RC_WR_FETCH_ADD;
}

static inline struct dpv_rc_swqe *sq_at(const struct dpv_rc *rc, uint32_t i)
{
	return &rc->sq[i & rc->sq_mask];
}

static inline struct dpv_rc_rwqe *rq_at(const struct dpv_rc *rc, uint32_t i)
{
	return &rc->rq[i & rc->rq_mask];
}

/* BTH of a packet of this QP: @opcode, @psn, P_Key and destination QP from the config. */
void dpv__rc_hdrs_init(const struct dpv_rc *rc, struct dpv_roce_hdrs *h, uint8_t opcode,
		       uint32_t psn);

/* ops->emit, counted; -ENOBUFS/-EAGAIN mark the engine stalled. */
int dpv__rc_emit(struct dpv_rc *rc, const struct dpv_roce_hdrs *h,
		 const struct dpv_rc_payload *pl);

/* Complete the oldest send WR with @status. */
void dpv__rc_complete_send(struct dpv_rc *rc, uint8_t status);

/* The QP goes to ERR by itself: the oldest send WR completes with @status when @fail_head,
 * qp_error is called, everything else is flushed. Does nothing when already in ERR. */
void dpv__rc_enter_error(struct dpv_rc *rc, bool fail_head, uint8_t status);

/* requester (rc_req.c): send what the windows allow; resend from @psn on */
void dpv__rc_req_progress(struct dpv_rc *rc, uint64_t now);
void dpv__rc_req_rewind(struct dpv_rc *rc, uint32_t psn);

/* completer (rc_comp.c): a response packet; the timers */
void dpv__rc_comp_rx(struct dpv_rc *rc, const struct dpv_roce_hdrs *h, const uint8_t *payload,
		     uint32_t len, uint64_t now);
void dpv__rc_comp_tick(struct dpv_rc *rc, uint64_t now);

/* responder (rc_resp.c): a request packet; READ responses still to send */
void dpv__rc_resp_rx(struct dpv_rc *rc, const struct dpv_roce_hdrs *h, const uint8_t *payload,
		     uint32_t len);
void dpv__rc_resp_progress(struct dpv_rc *rc);

#endif
