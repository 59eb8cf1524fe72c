/* SPDX-License-Identifier: BSD-3-Clause */
/* The RC/UC engine's common part: set-up, receive queue, the dispatch of received packets to
 * the responder (requests) or the completer (responses), timers, and the move to ERR with its
 * flush. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "rc_priv.h"

/* IBA 9.7.5.2.8 table 45 (and verbs' enum ibv_rnr_timer / rdma-core's ibv_rnr_timer) in
 * microseconds x 100: code 0 is the longest wait. (rxe's table says 61410 for 61.44 ms.) */
static const uint32_t rnr_10us[32] = {
	65536, 1, 2, 3, 4, 6, 8, 12, 16, 24, 32, 48, 64, 96, 128, 192, 256, 384, 512, 768,
	1024, 1536, 2048, 3072, 4096, 6144, 8192, 12288, 16384, 24576, 32768, 49152,
};

uint64_t dpv__rc_rnr_ns(uint8_t code)
{
	return (uint64_t)rnr_10us[code & 31] * 10000;
}

static uint32_t pow2_at_least(uint32_t n)
{
	uint32_t p = 1;

	while (p < n)
		p <<= 1;
	return p;
}

static int config_check(const struct dpv_rc_config *c, const struct dpv_rc_ops *ops)
{
	if (c->mtu < 256 || c->mtu > 4096 || (c->mtu & (c->mtu - 1)) != 0)
		return -EINVAL;
	if (c->timeout > 31 || c->retry_cnt > 7 || c->rnr_retry > 7 || c->min_rnr_timer > 31)
		return -EINVAL;
	if (c->max_send_wr == 0 || c->max_recv_wr == 0 || c->max_send_wr > (1u << 24) ||
	    c->max_recv_wr > (1u << 24))
		return -EINVAL;
	if (ops == NULL || ops->emit == NULL || ops->wr_write == NULL || ops->recv_write == NULL ||
	    ops->mem_check == NULL || ops->mem_write == NULL || ops->mem_atomic == NULL ||
	    ops->send_done == NULL || ops->recv_done == NULL || ops->qp_error == NULL)
		return -EINVAL;
	return 0;
}

static void requester_reset(struct dpv_rc *rc)
{
	const struct dpv_rc_config *c = &rc->cfg;
	uint32_t psn = c->sq_psn & DPV_ROCE_PSN_MASK;

	rc->timeout_ns = c->timeout ? 4096ull << c->timeout : 0;
	rc->rd_atomic_max = c->max_rd_atomic ? c->max_rd_atomic : 1;
	rc->req.psn = rc->req.next_psn = rc->req.sent_max = rc->comp.psn = psn;
	rc->comp.retry_left = c->retry_cnt;
	rc->comp.rnr_left = c->rnr_retry;
}

int dpv__rc_init(struct dpv_rc *rc, const struct dpv_rc_config *cfg,
		 const struct dpv_rc_ops *ops, void *ctx)
{
	int ret = config_check(cfg, ops);
	uint32_t nsq, nrq;

	if (ret < 0)
		return ret;
	memset(rc, 0, sizeof(*rc));
	rc->cfg = *cfg;
	rc->cfg.qpn &= DPV_ROCE_QPN_MASK;
	rc->cfg.dest_qpn &= DPV_ROCE_QPN_MASK;
	if (rc->cfg.pkey == 0)
		rc->cfg.pkey = DPV_ROCE_PKEY_DEFAULT;
	rc->ops = ops;
	rc->ctx = ctx;
	nsq = pow2_at_least(cfg->max_send_wr);
	nrq = pow2_at_least(cfg->max_recv_wr);
	rc->sq = calloc(nsq, sizeof(*rc->sq));
	rc->rq = calloc(nrq, sizeof(*rc->rq));
	rc->resp.res = calloc(cfg->max_dest_rd_atomic ? cfg->max_dest_rd_atomic : 1,
			      sizeof(*rc->resp.res));
	if (rc->sq == NULL || rc->rq == NULL || rc->resp.res == NULL) {
		dpv__rc_fini(rc);
		return -ENOMEM;
	}
	rc->sq_mask = nsq - 1;
	rc->rq_mask = nrq - 1;
	requester_reset(rc);
	rc->comp.ack_deadline = rc->comp.rnr_deadline = DPV_RC_NEVER;
	rc->resp.psn = rc->resp.ack_psn = cfg->rq_psn & DPV_ROCE_PSN_MASK;
	return 0;
}

void dpv__rc_fini(struct dpv_rc *rc)
{
	free(rc->sq);
	free(rc->rq);
	free(rc->resp.res);
	rc->sq = NULL;
	rc->rq = NULL;
	rc->resp.res = NULL;
}

int dpv__rc_set_retry(struct dpv_rc *rc, const struct dpv_rc_config *cfg)
{
	if (cfg->timeout > 31 || cfg->retry_cnt > 7 || cfg->rnr_retry > 7)
		return -EINVAL;
	rc->cfg.timeout = cfg->timeout;
	rc->cfg.retry_cnt = cfg->retry_cnt;
	rc->cfg.rnr_retry = cfg->rnr_retry;
	rc->cfg.max_rd_atomic = cfg->max_rd_atomic;
	rc->timeout_ns = cfg->timeout ? 4096ull << cfg->timeout : 0;
	rc->rd_atomic_max = cfg->max_rd_atomic ? cfg->max_rd_atomic : 1;
	/* the retries left of the WR under way: no more than the new count allows */
	if (rc->comp.retry_left > cfg->retry_cnt)
		rc->comp.retry_left = cfg->retry_cnt;
	if (cfg->rnr_retry != 7 && rc->comp.rnr_left > cfg->rnr_retry)
		rc->comp.rnr_left = cfg->rnr_retry;
	return 0;
}

int dpv__rc_set_requester(struct dpv_rc *rc, const struct dpv_rc_config *cfg)
{
	int r;

	if (rc->sq_tail != 0)
		return -EBUSY;
	r = dpv__rc_set_retry(rc, cfg);
	if (r != 0)
		return r;
	rc->cfg.sq_psn = cfg->sq_psn;
	requester_reset(rc);
	return 0;
}

int dpv__rc_post_recv(struct dpv_rc *rc, uint64_t handle, uint32_t length)
{
	struct dpv_rc_rwqe *w;

	if (rc->rq_tail - rc->rq_head >= rc->cfg.max_recv_wr)
		return -ENOMEM;
	if (rc->err) {
		struct dpv_rc_recv_cqe c = { .handle = handle, .status = DPV_RC_WC_WR_FLUSH_ERR,
					     .opcode = DPV_RC_WC_RECV };

		rc->ops->recv_done(rc->ctx, &c);
		return 0;
	}
	w = rq_at(rc, rc->rq_tail++);
	w->handle = handle;
	w->length = length;
	return 0;
}

void dpv__rc_hdrs_init(const struct dpv_rc *rc, struct dpv_roce_hdrs *h, uint8_t opcode,
		       uint32_t psn)
{
	memset(h, 0, sizeof(*h));
	h->bth.opcode = opcode | (rc->cfg.xrc ? DPV_ROCE_XRC : 0);   /* RC's are 0x00-0x1F */
	h->bth.pkey = rc->cfg.pkey;
	h->bth.dqpn = rc->cfg.dest_qpn;
	h->bth.psn = psn & DPV_ROCE_PSN_MASK;
}

int dpv__rc_emit(struct dpv_rc *rc, const struct dpv_roce_hdrs *h,
		 const struct dpv_rc_payload *pl)
{
	int ret = rc->ops->emit(rc->ctx, h, pl);

	if (ret == -ENOBUFS || ret == -EAGAIN) {
		rc->tx_stalled = true;
		rc->stats.tx_stalls++;
		return -ENOBUFS;
	}
	if (ret == -EFAULT)
		return ret;
	rc->stats.pkts_sent++;
	return 0;	/* anything else: as if lost on the wire */
}

static uint8_t wc_opcode(uint8_t wr_opcode)
{
	static const uint8_t map[] = {
		[DPV_RC_WR_WRITE] = DPV_RC_WC_RDMA_WRITE,
		[DPV_RC_WR_WRITE_IMM] = DPV_RC_WC_RDMA_WRITE,
		[DPV_RC_WR_SEND] = DPV_RC_WC_SEND,
		[DPV_RC_WR_SEND_IMM] = DPV_RC_WC_SEND,
		[DPV_RC_WR_READ] = DPV_RC_WC_RDMA_READ,
		[DPV_RC_WR_CMP_SWP] = DPV_RC_WC_COMP_SWAP,
		[DPV_RC_WR_FETCH_ADD] = DPV_RC_WC_FETCH_ADD,
		[DPV_RC_WR_SEND_INV] = DPV_RC_WC_SEND,
	};

	DPV_ASSERT(wr_opcode < sizeof(map) / sizeof(map[0]));   /* wr_check let no other in */
	return map[wr_opcode];
}

void dpv__rc_complete_send(struct dpv_rc *rc, uint8_t status)
{
	struct dpv_rc_swqe *w = sq_at(rc, rc->sq_head);
	struct dpv_rc_send_cqe c = { .handle = w->wr.handle, .status = status,
				     .opcode = wc_opcode(w->wr.opcode),
				     .byte_len = status == DPV_RC_WC_SUCCESS ? w->wr.length : 0 };

	DPV_ASSERT(rc->sq_head != rc->sq_tail);      /* a WR to complete */
	if (w->state != SWQE_POSTED && wr_is_rd_atomic(w->wr.opcode)) {
		DPV_ASSERT(rc->req.rd_atomic > 0);   /* it counted this one when it started */
		rc->req.rd_atomic--;
	}
	if (rc->sq_cur == rc->sq_head)
		rc->sq_cur++;
	rc->sq_head++;
	rc->ops->send_done(rc->ctx, &c);
}

static void flush(struct dpv_rc *rc)
{
	while (rc->sq_head != rc->sq_tail)
		dpv__rc_complete_send(rc, DPV_RC_WC_WR_FLUSH_ERR);
	while (rc->rq_head != rc->rq_tail) {
		struct dpv_rc_rwqe *w = rq_at(rc, rc->rq_head++);
		struct dpv_rc_recv_cqe c = { .handle = w->handle,
					     .status = DPV_RC_WC_WR_FLUSH_ERR,
					     .opcode = DPV_RC_WC_RECV };

		rc->ops->recv_done(rc->ctx, &c);
	}
	rc->sq_cur = rc->sq_tail;
	rc->comp.ack_deadline = rc->comp.rnr_deadline = DPV_RC_NEVER;
	rc->comp.rnr_wait = false;
	rc->resp.rd = NULL;
	rc->resp.ack_due = false;
	rc->tx_stalled = false;
}

void dpv__rc_enter_error(struct dpv_rc *rc, bool fail_head, uint8_t status)
{
	if (rc->err)
		return;
	rc->err = true;
	if (fail_head && rc->sq_head != rc->sq_tail)
		dpv__rc_complete_send(rc, status);
	rc->ops->qp_error(rc->ctx);
	flush(rc);
}

void dpv__rc_set_error(struct dpv_rc *rc)
{
	if (rc->err)
		return;
	rc->err = true;
	flush(rc);
}

void dpv__rc_rx(struct dpv_rc *rc, const struct dpv_roce_hdrs *h, const uint8_t *payload,
		uint32_t len, uint64_t now)
{
	const struct dpv_roce_opinfo *op = dpv__roce_opinfo(h->bth.opcode);
	uint8_t transport = rc->cfg.uc ? DPV_ROCE_UC : rc->cfg.xrc ? DPV_ROCE_XRC : DPV_ROCE_RC;

	if (rc->err || op->name == NULL || (h->bth.opcode & 0xE0) != transport ||
	    (h->bth.dqpn & DPV_ROCE_QPN_MASK) != rc->cfg.qpn ||
	    (len != 0 && (!(op->flags & DPV_ROCE_F_PAYLOAD) || payload == NULL)) ||
	    len > rc->cfg.mtu) {
		rc->stats.dropped++;
		return;
	}
	rc->stats.pkts_rcvd++;
	if (op->flags & DPV_ROCE_F_REQ)
		dpv__rc_resp_rx(rc, h, payload, len);
	else
		dpv__rc_comp_rx(rc, h, payload, len, now);
	dpv__rc_req_progress(rc, now);
}

void dpv__rc_tick(struct dpv_rc *rc, uint64_t now)
{
	if (rc->err)
		return;
	rc->tx_stalled = false;
	dpv__rc_resp_progress(rc);
	dpv__rc_comp_tick(rc, now);
	dpv__rc_req_progress(rc, now);
}

uint64_t dpv__rc_next_deadline(const struct dpv_rc *rc)
{
	uint64_t d = rc->comp.ack_deadline;

	if (rc->err)
		return DPV_RC_NEVER;
	if (rc->tx_stalled || rc->resp.rd != NULL || rc->resp.ack_due)
		return 0;
	if (rc->comp.rnr_wait && rc->comp.rnr_deadline < d)
		d = rc->comp.rnr_deadline;
	return d;
}
