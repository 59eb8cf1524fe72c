/* SPDX-License-Identifier: BSD-3-Clause */
/* The RC/UC/XRC verbs transport: what the RC/UC engine asks of a verbs QP (struct dpv_rc_ops)
 * and what a QP hands it:
 *   posting    a send WR is checked with the verbs core's table, its gather list (or its
 *              INLINE bytes) kept in the SQ slot, its MRs held until it completes, and
 *              given to the engine, which sends what its windows allow; receive WQEs are
 *              given to it as they are found posted;
 *   emit       a packet becomes one frame on the QP's path (its payload copied from the WR's
 *              SGEs, lkeys checked each time, or from the MR an rkey names), handed to the
 *              port through the transmit fault layer, or to the loopback ring for a GID of
 *              the port itself; no mbuf or no room: the engine offers it again later;
 *   memory     remote access through the context's rkey hash (PD, range, access flag) under
 *              the MR table's lock, so an MR cannot go while its bytes are copied; atomics
 *              under one lock of the process, atomic to each other across QPs and devices;
 *   completion send WRs complete in order through the shared SQ code (CQEs for signaled WRs
 *              and errors), receive WQEs into the receive CQ; qp_error takes the QP to ERR
 *              once the engine's call returned (the engine must not be called back);
 *   receive    a frame the demux found for the QP, from its peer, to the engine.
 * Everything runs under the QP's lock. */
#include <errno.h>
#include <string.h>

#include <rte_mbuf.h>

#include "roce_rc.h"
#include "verbs_post.h"

#define INLINE_NSGE UINT16_MAX          /* nsge of a slot whose bytes are in inl */
#define TX_ROOM 16                      /* a frame and what the fault layer adds */

static dpv_spinlock_t atomic_lock = DPV_SPINLOCK_INITIALIZER;

/* ---- a WR's and a WQE's memory ---- */

static const struct ibv_sge *slot_sge(struct dpv_qp *qp, uint32_t slot)
{
	return &to_rcqp(qp)->sge[(size_t)slot * qp->sq.max_sge];
}

/* The segments of @len bytes at @off of send WR @handle; -EFAULT for an lkey that does not
 * cover them (deregistered since, or wrong from the start). */
static int wr_segs(struct dpv_qp *qp, uint64_t handle, uint32_t off, uint32_t len,
		   struct dpv_tx_seg *seg, uint16_t *nseg)
{
	struct dpv_rc_qp *rq = to_rcqp(qp);
	uint32_t slot = (uint32_t)handle & qp->sq.mask;
	const struct ibv_sge *sge = slot_sge(qp, slot);
	uint16_t n = rq->nsge[slot];

	*nseg = 0;
	if (n == INLINE_NSGE) {
		seg[0].addr = rq->inl + (size_t)slot * qp->cap.max_inline_data + off;
		seg[0].len = len;
		*nseg = len != 0;
		return 0;
	}
	for (uint16_t i = 0; i < n && len > 0; i++) {
		uint32_t skip = RTE_MIN(off, sge[i].length), take;
		uint8_t *va;

		off -= skip;
		take = RTE_MIN(sge[i].length - skip, len);
		if (take == 0)
			continue;
		if (dpv__mr_lookup(qp->ctx, qp->pd, sge[i].lkey, sge[i].addr + skip, take,
				   &va) == NULL)
			return -EFAULT;
		seg[*nseg].addr = va;
		seg[(*nseg)++].len = take;
		len -= take;
	}
	return len == 0 ? 0 : -EFAULT;
}

/* Write @len bytes at @off of a scatter list; -EFAULT for an SGE outside its MR or without
 * local write access. */
static int scatter(struct dpv_qp *qp, const struct ibv_sge *sge, uint16_t n, uint32_t off,
		   const uint8_t *data, uint32_t len)
{
	for (uint16_t i = 0; i < n && len > 0; i++) {
		uint32_t skip = RTE_MIN(off, sge[i].length), take;
		struct dpv_mr *mr;
		uint8_t *va;

		off -= skip;
		take = RTE_MIN(sge[i].length - skip, len);
		if (take == 0)
			continue;
		mr = dpv__mr_lookup(qp->ctx, qp->pd, sge[i].lkey, sge[i].addr + skip, take, &va);
		if (mr == NULL || !(mr->access & IBV_ACCESS_LOCAL_WRITE))
			return -EFAULT;
		memcpy(va, data, take);
		data += take;
		len -= take;
	}
	return len == 0 ? 0 : -EFAULT;
}

/* ---- the engine's callbacks ---- */

/* Hand the gathered frames out, in order: to the port (through the transmit fault layer when
 * faults are on: what it lets out and the port then refuses is lost, as on a wire), or to the
 * loopback ring for the port itself. What the port or the ring has no room for stays, first
 * in line. */
static void tx_flush(struct dpv_qp *qp)
{
	struct dpv_rc_qp *rq = to_rcqp(qp);
	struct dpv_device *dev = qp->ctx->dev;
	uint16_t n = rq->ntx, sent;

	if (n == 0)
		return;
	if (rq->av.loopback) {                  /* to the port itself: never on the wire */
		sent = (uint16_t)dpv__device_loopback(dev, rq->tx, n);
		__atomic_fetch_add(&dev->roce->cnt.tx_loopback, sent, __ATOMIC_RELAXED);
	} else if (likely(!__atomic_load_n(&dev->fault_on[1], __ATOMIC_ACQUIRE))) {
		sent = dpv__tx_burst(qp->txh, (void **)rq->tx, n);
		qp->tx_frames += sent;
	} else {
		for (uint16_t i = 0; i < n; i++) {
			struct rte_mbuf *pk[TX_ROOM] = { rq->tx[i] };
			uint16_t k = dpv__device_fault_tx(dev, pk, 1, TX_ROOM);
			uint16_t out = k != 0 ? dpv__tx_burst(qp->txh, (void **)pk, k) : 0;

			for (uint16_t j = out; j < k; j++)
				rte_pktmbuf_free(pk[j]);
			qp->tx_frames += out;
		}
		sent = n;
	}
	rq->ntx = (uint16_t)(n - sent);
	if (rq->ntx != 0)
		memmove(rq->tx, rq->tx + sent, rq->ntx * sizeof(rq->tx[0]));
}

/* One frame more for the port; -ENOBUFS when the batch is full and the port takes none. */
static int xmit(struct dpv_qp *qp, struct rte_mbuf *m)
{
	struct dpv_rc_qp *rq = to_rcqp(qp);

	if (rq->ntx == DPV_RC_TX_BATCH) {
		tx_flush(qp);
		if (rq->ntx == DPV_RC_TX_BATCH) {
			rte_pktmbuf_free(m);
			return -ENOBUFS;
		}
	}
	rq->tx[rq->ntx++] = m;
	return 0;
}

void dpv__rc_tx_drop(struct dpv_qp *qp)
{
	struct dpv_rc_qp *rq = to_rcqp(qp);

	rte_pktmbuf_free_bulk(rq->tx, rq->ntx);
	rq->ntx = 0;
}

static int cb_emit(void *ctx, const struct dpv_roce_hdrs *h, const struct dpv_rc_payload *pl)
{
	struct dpv_qp *qp = ctx;
	struct dpv_rc_qp *rq = to_rcqp(qp);
	struct dpv_mr_table *t = qp->ctx->mrs;
	struct dpv_tx_seg seg[32];
	struct dpv_roce_path path = rq->av.path;
	struct dpv_roce_cursor c;
	struct rte_mbuf *m;
	uint16_t nseg = 0;
	int rc = 0;

	if (pl->src == DPV_RC_PAYLOAD_WR && pl->len != 0) {
		rc = wr_segs(qp, pl->handle, pl->offset, pl->len, seg, &nseg);
	} else if (pl->src == DPV_RC_PAYLOAD_MEM && pl->len != 0) {
		struct dpv_mr *mr;

		dpv__spinlock_lock(&t->lock);          /* held until the bytes are copied */
		mr = dpv__mr_by_rkey(qp, pl->rkey, pl->va, pl->len, IBV_ACCESS_REMOTE_READ);
		if (mr == NULL) {
			dpv__spinlock_unlock(&t->lock);
			return -EFAULT;
		}
		seg[0].addr = mr->va + (pl->va - mr->iova);
		seg[0].len = pl->len;
		nseg = 1;
	}
	if (rc != 0)
		return rc;
	path.ip_id = rq->ip_id++;
	path.icrc_skip = rq->av.loopback && dpv__device_loop_icrc_skip(qp->ctx->dev);
	c = (struct dpv_roce_cursor){ .seg = seg, .nseg = nseg };
	rc = dpv__roce_frame_mbuf(qp->txh, &path, h, NULL, 0, &c,
				  pl->src == DPV_RC_PAYLOAD_NONE ? 0 : pl->len, &m);
	if (pl->src == DPV_RC_PAYLOAD_MEM && pl->len != 0)
		dpv__spinlock_unlock(&t->lock);
	if (rc == -ENOMEM || rc == -ENOBUFS)
		return -ENOBUFS;
	if (rc != 0)
		return 0;                        /* headers the codec refused: lost */
	return xmit(qp, m);
}

static int cb_wr_write(void *ctx, uint64_t handle, uint32_t off, const void *data,
			 uint32_t len)
{
	struct dpv_qp *qp = ctx;
	uint32_t slot = (uint32_t)handle & qp->sq.mask;

	return scatter(qp, slot_sge(qp, slot), to_rcqp(qp)->nsge[slot], off, data, len);
}

static int cb_recv_write(void *ctx, uint64_t handle, uint32_t off, const void *data,
			   uint32_t len)
{
	struct dpv_qp *qp = ctx;
	struct dpv_rq *r = &qp->rq;
	uint32_t slot = (uint32_t)handle & r->mask;

	return scatter(qp, dpv__rq_sges(r, slot), r->wqe[slot].nsge, off, data, len);
}

static int cb_mem_check(void *ctx, uint32_t rkey, uint64_t va, uint32_t len, uint32_t access)
{
	struct dpv_qp *qp = ctx;
	struct dpv_mr_table *t = qp->ctx->mrs;
	struct dpv_mr *mr;

	dpv__spinlock_lock(&t->lock);
	mr = dpv__mr_by_rkey(qp, rkey, va, len, access);
	dpv__spinlock_unlock(&t->lock);
	return mr != NULL ? 0 : -EACCES;
}

static int cb_mem_write(void *ctx, uint32_t rkey, uint64_t va, const void *data, uint32_t len)
{
	struct dpv_qp *qp = ctx;
	struct dpv_mr_table *t = qp->ctx->mrs;
	struct dpv_mr *mr;

	dpv__spinlock_lock(&t->lock);
	mr = dpv__mr_by_rkey(qp, rkey, va, len, IBV_ACCESS_REMOTE_WRITE);
	if (mr != NULL)
		memcpy(mr->va + (va - mr->iova), data, len);
	dpv__spinlock_unlock(&t->lock);
	return mr != NULL ? 0 : -EACCES;
}

static int cb_mem_atomic(void *ctx, uint32_t rkey, uint64_t va, uint8_t opcode,
			   uint64_t compare_add, uint64_t swap, uint64_t *orig)
{
	struct dpv_qp *qp = ctx;
	struct dpv_mr_table *t = qp->ctx->mrs;
	struct dpv_mr *mr;
	uint64_t v;

	dpv__spinlock_lock(&t->lock);
	mr = dpv__mr_by_rkey(qp, rkey, va, 8, IBV_ACCESS_REMOTE_ATOMIC);
	if (mr != NULL) {
		uint8_t *p = mr->va + (va - mr->iova);

		dpv__spinlock_lock(&atomic_lock);
		memcpy(&v, p, 8);
		*orig = v;
		if (opcode == DPV_RC_WR_FETCH_ADD)
			v += compare_add;
		else if (v == compare_add)
			v = swap;
		memcpy(p, &v, 8);
		dpv__spinlock_unlock(&atomic_lock);
	}
	dpv__spinlock_unlock(&t->lock);
	return mr != NULL ? 0 : -EACCES;
}

static int cb_mem_invalidate(void *ctx, uint32_t rkey)
{
	return dpv__mw_invalidate(ctx, rkey, true) == 0 ? 0 : -EACCES;
}

static void cb_send_done(void *ctx, const struct dpv_rc_send_cqe *c)
{
	struct dpv_qp *qp = ctx;
	struct dpv_wqe *w = &qp->sq.wqe[(uint32_t)c->handle & qp->sq.mask];

	w->status = c->status;
	w->opcode = c->opcode;
	dpv__wqe_release(w);
}

static void cb_recv_done(void *ctx, const struct dpv_rc_recv_cqe *c)
{
	struct dpv_qp *qp = ctx;
	struct dpv_rq *r = &qp->rq;
	struct dpv_rwqe *w = &r->wqe[(uint32_t)c->handle & r->mask];
	struct dpv_cqe e;

	dpv__sq_complete(qp);             /* send completions the engine gave before, first */
	dpv__cqe_fill(&e, qp, w->wr_id, c->status, c->opcode, c->byte_len,
		      c->with_imm ? IBV_WC_WITH_IMM : 0);
	e.wc.src_qp = to_rcqp(qp)->attr.dest_qp_num;
	e.wc.imm_data = c->imm;
	if (c->with_inv) {
		e.wc.wc_flags |= IBV_WC_WITH_INV;
		e.wc.invalidated_rkey = c->inv_rkey;
	}
	e.solicited = c->solicited;
	dpv__cq_push(qp->rcq, &e);
	qp->rx_completed++;
	r->tail++;
}

static void cb_qp_error(void *ctx)
{
	to_rcqp((struct dpv_qp *)ctx)->failed = true;   /* acted on once the engine returns */
}

const struct dpv_rc_ops dpv_rc_verbs_ops = {
	.emit = cb_emit,
	.wr_write = cb_wr_write,
	.recv_write = cb_recv_write,
	.mem_check = cb_mem_check,
	.mem_write = cb_mem_write,
	.mem_atomic = cb_mem_atomic,
	.mem_invalidate = cb_mem_invalidate,
	.send_done = cb_send_done,
	.recv_done = cb_recv_done,
	.qp_error = cb_qp_error,
};

/* ---- driving the engine ---- */

/* What follows every call into the engine but the handing out of frames. */
static void after_call(struct dpv_qp *qp)
{
	struct dpv_rc_qp *rq = to_rcqp(qp);

	if (rq->failed) {
		rq->failed = false;
		dpv__qp_fail(qp);
	}
	dpv__sq_complete(qp);
}

void dpv__rc_after(struct dpv_qp *qp)
{
	after_call(qp);
	tx_flush(qp);
	dpv__rc_timer_update(qp);
}

void dpv__rc_rx_done(struct dpv_qp *qp)
{
	struct dpv_rc_qp *rq = to_rcqp(qp);

	if (rq != NULL && rq->eng_on) {
		dpv__rc_rx_flush(&rq->eng);
		dpv__rc_after(qp);
	}
}

void dpv__rc_feed_rq(struct dpv_qp *qp)
{
	struct dpv_rc_qp *rq = to_rcqp(qp);
	struct dpv_rq *r = &qp->rq;

	if (!rq->eng_on || rq->eng.err)
		return;
	for (; rq->rq_fed != r->head; rq->rq_fed++) {
		uint32_t slot = rq->rq_fed & r->mask;
		const struct ibv_sge *sge = dpv__rq_sges(r, slot);
		uint64_t len = 0;

		for (uint16_t i = 0; i < r->wqe[slot].nsge; i++)
			len += sge[i].length;
		if (dpv__rc_post_recv(&rq->eng, rq->rq_fed,
				      (uint32_t)RTE_MIN(len, (uint64_t)UINT32_MAX)) != 0)
			break;
	}
}

/* The WR holds the MRs of its SGEs until it completes (ibv_dereg_mr: EBUSY meanwhile), as
 * its bytes are read again for every retransmission; an lkey that names no MR holds nothing
 * (the engine completes the WR with LOC_PROT_ERR when it reads it). */
static void hold_mrs(struct dpv_qp *qp, struct dpv_wqe *w, const struct ibv_send_wr *wr)
{
	for (int i = 0; i < wr->num_sge; i++) {
		const struct ibv_sge *sge = &wr->sg_list[i];
		struct dpv_mr *mr;
		uint8_t *va;

		if (sge->length == 0)
			continue;
		mr = dpv__mr_lookup(qp->ctx, qp->pd, sge->lkey, sge->addr, sge->length, &va);
		if (mr == NULL)
			continue;
		__atomic_fetch_add(&mr->refs, 1, __ATOMIC_ACQUIRE);
		w->mrs[w->nb_mr++] = mr;
	}
}

/* Keep @wr's gather list (or its INLINE bytes) in SQ slot @slot. */
static void keep_wr(struct dpv_qp *qp, uint32_t slot, const struct ibv_send_wr *wr)
{
	struct dpv_rc_qp *rq = to_rcqp(qp);

	if (wr->send_flags & IBV_SEND_INLINE) {
		uint8_t *d = rq->inl + (size_t)slot * qp->cap.max_inline_data;

		for (int i = 0; i < wr->num_sge; i++) {
			memcpy(d, (const void *)(uintptr_t)wr->sg_list[i].addr,
			       wr->sg_list[i].length);
			d += wr->sg_list[i].length;
		}
		rq->nsge[slot] = INLINE_NSGE;
		return;
	}
	memcpy(&rq->sge[(size_t)slot * qp->sq.max_sge], wr->sg_list,
	       (size_t)wr->num_sge * sizeof(*wr->sg_list));
	rq->nsge[slot] = (uint16_t)wr->num_sge;
}

static void engine_wr(const struct ibv_send_wr *wr, uint64_t handle, uint64_t len,
		      struct dpv_rc_send_wr *e)
{
	bool atomic = wr->opcode == IBV_WR_ATOMIC_CMP_AND_SWP ||
		      wr->opcode == IBV_WR_ATOMIC_FETCH_AND_ADD;

	*e = (struct dpv_rc_send_wr){
		.handle = handle,
		.opcode = (uint8_t)wr->opcode,
		.flags = (uint8_t)(wr->send_flags & (IBV_SEND_FENCE | IBV_SEND_SIGNALED |
						     IBV_SEND_SOLICITED | IBV_SEND_INLINE)),
		.length = (uint32_t)RTE_MIN(len, (uint64_t)UINT32_MAX),   /* above the limit */
		.remote_addr = atomic ? wr->wr.atomic.remote_addr : wr->wr.rdma.remote_addr,
		.rkey = atomic ? wr->wr.atomic.rkey : wr->wr.rdma.rkey,
		.imm = wr->imm_data,
		.inv_rkey = wr->invalidate_rkey,
		.compare_add = wr->wr.atomic.compare_add,
		.swap = wr->wr.atomic.swap,
		.xrc_srqn = wr->qp_type.xrc.remote_srqn & DPV_ROCE_QPN_MASK,
	};
}

/* BIND_MW and LOCAL_INV touch only this context's key table: executed when posted (their
 * effect on a peer's later access is the same as at their turn in the queue; rxe runs them
 * at their turn), and complete after every earlier WR. A failure is a local error: the WR
 * completes with it and the QP goes to ERR (dpv__rc_after), as rxe's do_local_ops. */
static void run_local(struct dpv_qp *qp, struct dpv_wqe *w, const struct ibv_send_wr *wr)
{
	struct dpv_rc_qp *rq = to_rcqp(qp);

	if (!rq->eng_on || rq->eng.err)
		w->status = IBV_WC_WR_FLUSH_ERR;
	else if (wr->opcode == IBV_WR_BIND_MW)
		w->status = dpv__mw_bind(qp, wr);
	else
		w->status = dpv__mw_invalidate(qp, wr->invalidate_rkey, false) == 0 ?
			    IBV_WC_SUCCESS : IBV_WC_LOC_QP_OP_ERR;
	if (w->status != IBV_WC_SUCCESS && w->status != IBV_WC_WR_FLUSH_ERR)
		rq->failed = true;
	dpv__wqe_release(w);
}

_Static_assert(DPV_RC_MAX_MSG == DPV_MAX_MSG_SZ, "ibv_query_port's max_msg_sz is RC's limit");

static int post_one(struct dpv_qp *qp, const struct ibv_send_wr *wr, void *list_now)
{
	uint64_t now = *(const uint64_t *)list_now;
	struct dpv_rc_qp *rq = to_rcqp(qp);
	struct dpv_sq *sq = &qp->sq;
	uint32_t slot = sq->post & sq->mask;
	struct dpv_wqe *w = &sq->wqe[slot];
	struct dpv_rc_send_wr e;
	uint64_t len;
	int rc = dpv__roce_wr_check(qp, wr, &len, NULL);

	if (rc != 0)
		return rc;
	dpv__roce_wqe_init(qp, w, wr, len);
	if (wr->opcode == IBV_WR_BIND_MW || wr->opcode == IBV_WR_LOCAL_INV) {
		run_local(qp, w, wr);
		goto posted;
	}
	engine_wr(wr, sq->post, len, &e);
	if (!rq->eng_on) {                  /* posted in ERR before RTR: the engine's check */
		const struct dpv_rc_config c = { .uc = qp->type == IBV_QPT_UC, .mtu = 4096 };

		rc = dpv__rc_wr_check(&c, &e);
		if (rc != 0)
			return rc;
	}
	keep_wr(qp, slot, wr);
	if (!(wr->send_flags & IBV_SEND_INLINE))
		hold_mrs(qp, w, wr);
	if (rq->eng_on) {
		/* checks what the verbs table leaves to the transport (UC's opcodes, the
		 * message size); may complete the WR at once (ERR) */
		rc = dpv__rc_post_send(&rq->eng, &e, now);
		if (rc != 0) {
			dpv__wqe_put_mrs(w);
			return rc;
		}
	} else {
		w->status = IBV_WC_WR_FLUSH_ERR;
		dpv__wqe_release(w);
	}
posted:
	sq->post++;
	sq->sent = sq->post;                      /* the engine has it */
	__atomic_store_n(&sq->head, sq->post, __ATOMIC_RELEASE);
	qp->tx_wrs++;
	qp->tx_bytes += len;
	return 0;
}

int dpv__rc_post_send_list(struct dpv_qp *qp, struct ibv_send_wr *wr,
			   struct ibv_send_wr **bad_wr)
{
	uint64_t now = dpv__rc_now();
	int rc;

	dpv__qp_lock(qp);
	rc = dpv__post_list(qp, wr, bad_wr, post_one, &now, dpv__rc_after);
	dpv__qp_unlock(qp);
	return rc;
}

void dpv__rc_xrc_unbind(struct dpv_qp *qp, bool force)
{
	dpv__qp_assert_locked(qp);
	if (qp->type != IBV_QPT_XRC_RECV || qp->srq == NULL ||
	    (!force && qp->rq.head != qp->rq.tail))
		return;
	/* the SRQ's CQ stays attached to the SRQ, which cannot go while a QP is bound to it */
	DPV_REF_PUT(&qp->srq->users);
	qp->srq = NULL;
	qp->pd = NULL;
	qp->rcq = NULL;
}

/* XRC_RECV: the XRC SRQ request @fr names, if it is in the QP's XRC domain, becomes the QP's
 * for the message the request belongs to: its WQEs, its PD for every memory check, its CQ
 * for the completion (mlx5's XRC target takes all three from the SRQ). A QP holding a WQE of
 * one SRQ refuses a request naming another. False: refuse it. */
static bool xrc_bind(struct dpv_qp *qp, const struct dpv_roce_frame *fr)
{
	struct dpv_srq *srq = dpv__xrc_srq_lookup(qp->ctx->dev, fr->h.xrceth.srqn);

	if (srq == NULL || !dpv__xrcd_same(srq->xrcd, qp->xrcd) || srq->ctx != qp->ctx)
		return false;
	if (qp->srq == srq)
		return true;
	if (qp->rq.head != qp->rq.tail)
		return false;
	dpv__rc_xrc_unbind(qp, false);
	__atomic_fetch_add(&srq->users, 1, __ATOMIC_ACQUIRE);
	qp->srq = srq;
	qp->pd = srq->pd;
	qp->rcq = srq->cq;
	return true;
}

/* Which transport's opcodes a QP takes, and whether it answers requests (XRC_SEND does not)
 * or responses (XRC_RECV does not). */
static bool opcode_ok(const struct dpv_qp *qp, uint8_t opcode)
{
	bool req = dpv__roce_opinfo(opcode)->flags & DPV_ROCE_F_REQ;

	switch (qp->type) {
	case IBV_QPT_UC:
		return (opcode & 0xE0) == DPV_ROCE_UC;
	case IBV_QPT_XRC_SEND:
		return (opcode & 0xE0) == DPV_ROCE_XRC && !req;
	case IBV_QPT_XRC_RECV:
		return (opcode & 0xE0) == DPV_ROCE_XRC && req;
	default:
		DPV_WARN_ONCE(qp->type != IBV_QPT_RC, "RC/UC/XRC receive on a QP of type %d",
			      qp->type);
		return (opcode & 0xE0) == DPV_ROCE_RC;
	}
}

enum dpv_ud_rx dpv__rc_deliver(struct dpv_qp *qp, const uint8_t *f,
			       const struct dpv_roce_frame *fr)
{
	struct dpv_rc_qp *rq = to_rcqp(qp);
	enum ibv_qp_state s = dpv__qp_state(qp);

	dpv__qp_assert_locked(qp);
	if (rq == NULL || !rq->eng_on || s == IBV_QPS_RESET || s == IBV_QPS_INIT ||
	    s == IBV_QPS_ERR)
		return DPV_UD_RX_NO_QP;
	if (!opcode_ok(qp, fr->h.bth.opcode))
		return DPV_UD_RX_BAD_OPCODE;
	/* from the peer only (as rxe's check_addr): the engine sees no addresses */
	if (memcmp(fr->sgid, rq->av.path.dgid, 16) != 0 ||
	    memcmp(fr->dgid, rq->av.path.sgid, 16) != 0)
		return DPV_UD_RX_NO_QP;
	if (qp->type == IBV_QPT_XRC_RECV && !xrc_bind(qp, fr)) {
		dpv__rc_resp_reject(&rq->eng, &fr->h);   /* XRC domain violation: invalid request */
		dpv__rc_after(qp);
		dpv__rc_xrc_unbind(qp, false);
		return DPV_UD_RX_DELIVERED;
	}
	/* with an SRQ: a WQE from there when this packet starts a message that needs one */
	if (qp->srq != NULL && qp->rq.head == qp->rq.tail &&
	    dpv__rc_resp_wants_wqe(&rq->eng, &fr->h))
		dpv__srq_take(qp, qp->srq);
	dpv__rc_feed_rq(qp);
	dpv__rc_rx(&rq->eng, &fr->h, f + fr->payload_off, fr->payload_len, dpv__rc_now());
	after_call(qp);                         /* the rest once the burst is done with it */
	dpv__rc_xrc_unbind(qp, false);
	return DPV_UD_RX_DELIVERED;
}
