/* SPDX-License-Identifier: BSD-3-Clause */
/* RAW_PACKET sends, the generic path: walk the list in order, check each WR (the verbs core's
 * table, then this port's offload policy), take an SQ slot, have lib/offload build its frame
 * (direct mode) or keep a descriptor for the service lcore (service mode), and hand the
 * frames of [sent, head) to the port once per list. A WR completes when no frame holds its
 * memory any more (dpv__wqe_release). raw_fast.c takes the common case before this. */
#include <errno.h>
#include <string.h>

#include <rte_branch_prediction.h>

#include "raw_priv.h"

#define PEEK_LEN 22     /* Ethernet + two VLAN tags + the next ethertype */
#define BURST_MAX 64

/* The frame's first bytes, for the VLAN count of the frame-size check. */
static const uint8_t *frame_peek(struct dpv_qp *qp, const struct ibv_send_wr *wr, uint8_t *buf,
				 uint32_t *len)
{
	bool inl = wr->send_flags & IBV_SEND_INLINE;

	*len = 0;
	for (int i = 0; i < wr->num_sge && *len < PEEK_LEN; i++) {
		const struct ibv_sge *sge = &wr->sg_list[i];
		uint32_t take = RTE_MIN(sge->length, PEEK_LEN - *len);
		uint8_t *va = (uint8_t *)(uintptr_t)sge->addr;

		if (take == 0)
			continue;
		if (!inl && dpv__mr_lookup(qp->ctx, qp->pd, sge->lkey, sge->addr, take, &va) == NULL)
			return NULL;
		memcpy(buf + *len, va, take);
		*len += take;
	}
	return buf;
}

/* Note @mr among the WR's MRs (once, however many SGEs name it). */
static void note_mr(struct dpv_mr **mrs, uint8_t *nb, struct dpv_mr *mr)
{
	for (uint8_t i = 0; i < *nb; i++)
		if (mrs[i] == mr)
			return;
	mrs[(*nb)++] = mr;
}

/* The gather list as lib/offload sees it: zero-length SGEs dropped, non-inline SGEs checked
 * against their MR (a failure is an execution error, reported by a completion) and their MRs
 * noted in the slot's @mrs (@nb_mr of them). */
static int gather(struct dpv_qp *qp, const struct ibv_send_wr *wr, struct dpv_mr **mrs,
		  struct dpv_tx_seg *seg, uint16_t *nseg, uint8_t *nb_mr)
{
	bool inl = wr->send_flags & IBV_SEND_INLINE;

	*nseg = 0;
	for (int i = 0; i < wr->num_sge; i++) {
		const struct ibv_sge *sge = &wr->sg_list[i];
		uint8_t *va = (uint8_t *)(uintptr_t)sge->addr;
		struct dpv_mr *mr;

		if (sge->length == 0)
			continue;
		if (!inl) {
			mr = dpv__mr_lookup(qp->ctx, qp->pd, sge->lkey, sge->addr, sge->length, &va);
			if (unlikely(mr == NULL))
				return IBV_WC_LOC_PROT_ERR;
			note_mr(mrs, nb_mr, mr);
		}
		seg[*nseg].addr = va;
		seg[(*nseg)++].len = sge->length;
	}
	return IBV_WC_SUCCESS;
}

/* A frame that still points into MRs holds them until it is released (so that ibv_dereg_mr
 * says EBUSY meanwhile); a copied one was released while it was built. */
static void hold_mrs(struct dpv_wqe *w, uint8_t nb_mr)
{
	if (__atomic_load_n(&w->released, __ATOMIC_ACQUIRE))
		return;
	for (uint8_t i = 0; i < nb_mr; i++)
		__atomic_fetch_add(&w->mrs[i]->refs, 1, __ATOMIC_ACQUIRE);
	w->nb_mr = nb_mr;
}

/* The slot data a DPV_SVC_BUILD descriptor has: its inline data, then its TSO header. */
static inline uint32_t svc_data_len(bool inl, uint32_t len, uint16_t hdr_len)
{
	return (inl ? len : 0) + hdr_len;
}

/* Service mode: what lib/offload builds the frame from, kept in the slot — the gather list
 * is there already; inline data and the TSO header are copied now (the application may
 * reuse them when ibv_post_send returns). The WR holds its MRs until it is released. */
static void svc_defer(struct dpv_qp *qp, uint32_t slot, struct dpv_tx_seg *seg,
		      const struct dpv_tx_req *req, uint8_t nb_mr)
{
	struct dpv_sq *sq = &qp->sq;
	uint32_t need = svc_data_len(req->flags & DPV_TX_INLINE, req->len, req->tso_hdr_len);
	uint32_t at = dpv__sq_data_at(sq, sq->data_post, need);
	uint8_t *data = sq->desc_data + at;
	struct dpv_tx_desc *t = &sq->desc_tx[slot & sq->mask];
	struct dpv_mr **mrs = dpv__sq_mrs(sq, slot);
	uint32_t off = 0;

	sq->data_post = dpv__sq_data_end(at, need);

	*t = (struct dpv_tx_desc){ .flags = req->flags, .nseg = req->nseg, .mss = req->mss,
				   .tso_hdr_len = req->tso_hdr_len };
	if (req->flags & DPV_TX_TSO)
		t->tso_info = *req->tso_info;
	if (req->flags & DPV_TX_INLINE) {
		for (uint16_t i = 0; i < req->nseg; i++) {
			memcpy(data + off, seg[i].addr, seg[i].len);
			off += seg[i].len;
		}
		seg[0] = (struct dpv_tx_seg){ data, off };
		t->nseg = off ? 1 : 0;
	}
	if (req->flags & DPV_TX_TSO)
		memcpy(data + off, req->tso_hdr, req->tso_hdr_len);
	for (uint8_t i = 0; i < nb_mr; i++)
		__atomic_fetch_add(&mrs[i]->refs, 1, __ATOMIC_ACQUIRE);
}

/* Direct mode: the frame is built now. One the port cannot carry fails when the WR
 * executes, as on hardware. */
static int build_now(struct dpv_qp *qp, struct dpv_wqe *w, const struct dpv_tx_req *req,
		     uint8_t nb_mr)
{
	int rc = dpv__tx_build(qp->txh, req, &w->frame);

	if (rc == 0)
		hold_mrs(w, nb_mr);
	if (rc == -EMSGSIZE) {
		w->status = IBV_WC_LOC_LEN_ERR;
		w->frame = NULL;
		rc = 0;
	}
	return rc;
}

static uint32_t req_flags(const struct ibv_send_wr *wr)
{
	return (wr->send_flags & IBV_SEND_INLINE ? DPV_TX_INLINE : 0) |
	       (wr->send_flags & IBV_SEND_IP_CSUM ? DPV_TX_IP_CSUM : 0) |
	       (wr->opcode == IBV_WR_TSO ? DPV_TX_TSO : 0);
}

/* The request of a checked WR whose gather list is in @seg (TSO: its header too). */
static void wr_req(const struct ibv_send_wr *wr, const struct dpv_hdr_info *tso_info,
		   struct dpv_tx_req *req)
{
	req->flags = req_flags(wr);
	if (req->flags & DPV_TX_TSO) {
		req->tso_hdr = wr->tso.hdr;
		req->tso_hdr_len = wr->tso.hdr_sz;
		req->tso_info = tso_info;
		req->mss = wr->tso.mss;
	}
}

/* Direct mode: the WQE of a checked WR, its frame built. */
static int sq_post_direct(struct dpv_qp *qp, const struct ibv_send_wr *wr, uint32_t len,
			  const struct dpv_hdr_info *tso_info)
{
	struct dpv_sq *sq = &qp->sq;
	struct dpv_wqe *w = &sq->wqe[sq->post & sq->mask];
	struct dpv_tx_seg seg[32];
	struct dpv_tx_req req = { .seg = seg, .owner = w, .len = len };
	enum ibv_qp_state state = dpv__qp_state(qp);
	uint8_t nb_mr = 0;

	*w = (struct dpv_wqe){
		.wr_id = wr->wr_id,
		.opcode = dpv__wr_wc_opcode(wr->opcode),
		.signaled = qp->sq_sig_all || (wr->send_flags & IBV_SEND_SIGNALED),
		.byte_len = len,
		.mrs = w->mrs,
	};
	/* In SQE and ERR the WR is accepted and flushed by the next progress. */
	if (state != IBV_QPS_RTS && state != IBV_QPS_SQD)
		return 0;
	w->status = gather(qp, wr, w->mrs, seg, &req.nseg, &nb_mr);
	if (w->status != IBV_WC_SUCCESS)
		return 0;
	wr_req(wr, tso_info, &req);
	return build_now(qp, w, &req, nb_mr);
}

/* Service mode: the descriptor of a checked WR (the service lcore takes it into a WQE and
 * builds its frame). In SQE and ERR it is accepted and completes with WR_FLUSH_ERR. */
static void sq_post_service(struct dpv_qp *qp, const struct ibv_send_wr *wr, uint32_t len,
			    const struct dpv_hdr_info *tso_info)
{
	struct dpv_sq *sq = &qp->sq;
	uint32_t slot = sq->post;
	struct dpv_svc_desc *d = &sq->desc[slot & sq->mask];
	struct dpv_tx_seg *seg = &sq->desc_seg[(size_t)(slot & sq->mask) * sq->max_sge];
	struct dpv_tx_req req = { .seg = seg, .len = len };
	enum ibv_qp_state state = dpv__qp_state(qp);
	unsigned int flags = qp->sq_sig_all || (wr->send_flags & IBV_SEND_SIGNALED) ?
			     DPV_SVC_SIGNALED : 0;
	unsigned int status = IBV_WC_WR_FLUSH_ERR;
	uint8_t nb_mr = 0;

	if (state == IBV_QPS_RTS || state == IBV_QPS_SQD) {
		status = gather(qp, wr, dpv__sq_mrs(sq, slot), seg, &req.nseg, &nb_mr);
		if (status == IBV_WC_SUCCESS) {
			wr_req(wr, tso_info, &req);
			svc_defer(qp, slot, seg, &req, nb_mr);
			flags |= DPV_SVC_BUILD;
		} else {
			nb_mr = 0;                /* fails when it executes, holding nothing */
		}
	}
	d->wr_id = wr->wr_id;
	d->len = len;
	d->meta = dpv__svc_meta(flags, dpv__wr_wc_opcode(wr->opcode), status, nb_mr);
}

static int sq_post_one(struct dpv_qp *qp, const struct ibv_send_wr *wr, uint32_t len,
		       const struct dpv_hdr_info *tso_info)
{
	int rc = 0;

	if (qp->service)
		sq_post_service(qp, wr, len, tso_info);
	else
		rc = sq_post_direct(qp, wr, len, tso_info);
	if (rc == 0) {
		qp->sq.post++;                    /* published with the list */
		qp->tx_wrs++;
		qp->tx_bytes += len;
	}
	return rc;
}

/* What this port's offload policy refuses while posting, whatever the progress mode: an
 * IP_CSUM or TSO WR the HARDWARE policy cannot give the port (EINVAL, as mlx5 without the
 * offload). */
static int check_offload(struct dpv_qp *qp, const struct ibv_send_wr *wr, uint64_t len,
			 const struct dpv_hdr_info *tso_info)
{
	const struct dpv_device *d = qp->ctx->dev;

	/* software backs everything under the other policies: no gather list to lay out */
	if (dpv__offload_policy_of(&d->offload) != DPV_OFFLOAD_POLICY_HARDWARE)
		return 0;
	if ((wr->send_flags & IBV_SEND_IP_CSUM) && !dpv__tx_ip_csum_allowed(&d->caps, &d->offload))
		return -EINVAL;
	if (wr->opcode == IBV_WR_TSO) {
		struct dpv_tx_seg seg[32];
		struct dpv_tx_req req = { .seg = seg, .len = (uint32_t)len, .tso_hdr = wr->tso.hdr,
					  .tso_hdr_len = wr->tso.hdr_sz, .mss = wr->tso.mss,
					  .tso_info = tso_info };

		for (int i = 0; i < wr->num_sge && i < 32; i++)
			if (wr->sg_list[i].length != 0)
				seg[req.nseg++] = (struct dpv_tx_seg){
					(void *)(uintptr_t)wr->sg_list[i].addr, wr->sg_list[i].length };
		if (!dpv__tx_tso_allowed(&d->caps, &d->offload, &req))
			return -EINVAL;
	}
	return 0;
}

static int post_one(struct dpv_qp *qp, const struct ibv_send_wr *wr, void *arg)
{
	uint8_t peek[PEEK_LEN];
	const uint8_t *l2 = NULL;
	uint32_t l2_len = 0;
	uint64_t len = 0, t0 = dpv__cyc_start();
	struct dpv_hdr_info tso_info;
	int rc;

	(void)arg;
	if (likely(wr->num_sge >= 0 && (uint32_t)wr->num_sge <= qp->lim.max_send_sge))
		len = dpv__wr_length(wr);
	rc = dpv__wr_check_basic(&qp->lim, wr, len);
	if (unlikely(rc != 0))
		return rc;
	if (unlikely(qp->sq.post - __atomic_load_n(&qp->sq.freed, __ATOMIC_ACQUIRE) >=
		     qp->sq.max_wr))
		return -ENOMEM;
	if (unlikely(len > qp->lim.max_frame) && wr->opcode == IBV_WR_SEND)
		l2 = frame_peek(qp, wr, peek, &l2_len);
	rc = dpv__wr_check_shape(&qp->lim, wr, len, l2, l2_len, &tso_info);
	if (rc == 0 && (wr->send_flags & IBV_SEND_IP_CSUM || wr->opcode == IBV_WR_TSO))
		rc = check_offload(qp, wr, len, &tso_info);
	dpv__cyc_add(qp, DPV_CYC_VALIDATE, t0);
	if (likely(rc == 0)) {
		t0 = dpv__cyc_start();
		rc = sq_post_one(qp, wr, (uint32_t)len, &tso_info);
		dpv__cyc_add(qp, DPV_CYC_BUILD, t0);
	}
	return rc;
}

/* Direct mode: the list's frames go to the port now; service mode: the service lcore takes
 * them when it sees the new head. */
static void doorbell(struct dpv_qp *qp)
{
	if (!qp->service)
		dpv__raw_progress(qp);
}

/* The list from @wr on (QP lock held); 0 or a negative errno with *bad_wr set. */
int dpv__raw_post_list(struct dpv_qp *qp, struct ibv_send_wr *wr, struct ibv_send_wr **bad_wr)
{
	return dpv__post_list(qp, wr, bad_wr, post_one, NULL, doorbell);
}

int dpv__raw_post_send(struct dpv_qp *qp, struct ibv_send_wr *wr, struct ibv_send_wr **bad_wr)
{
	int rc;

	dpv__qp_lock(qp);
	rc = dpv__raw_post_list(qp, wr, bad_wr);
	dpv__qp_unlock(qp);
	return rc;
}

/* Service side: the WR at @slot (= built) taken from its descriptor into its WQE and, with
 * @build, its frame built. False when it must wait (no mbufs now); a WR whose frame cannot be
 * built fails as it executes. */
static bool svc_take(struct dpv_qp *qp, uint32_t slot, bool build)
{
	struct dpv_sq *sq = &qp->sq;
	const struct dpv_svc_desc *d = &sq->desc[slot & sq->mask];
	const struct dpv_tx_desc *t = &sq->desc_tx[slot & sq->mask];
	struct dpv_wqe *w = &sq->wqe[slot & sq->mask];
	unsigned int flags = dpv__svc_flags(d);
	uint32_t need = flags & DPV_SVC_COPY ? d->len :
			flags & DPV_SVC_BUILD ? svc_data_len(t->flags & DPV_TX_INLINE, d->len,
							   t->tso_hdr_len) : 0;
	uint32_t data_built = sq->data_built;
	const uint8_t *data = dpv__sq_data_take(sq, need);
	struct dpv_tx_seg one = { data, d->len };
	struct dpv_tx_req req = { .seg = &one, .nseg = 1, .len = d->len, .owner = w,
				  .flags = DPV_TX_INLINE |
					   (flags & DPV_SVC_IP_CSUM ? DPV_TX_IP_CSUM : 0) };
	int rc;

	w->wr_id = d->wr_id;
	w->byte_len = d->len;
	w->opcode = (uint8_t)dpv__svc_opcode(d);
	w->signaled = flags & DPV_SVC_SIGNALED;
	w->status = (uint8_t)dpv__svc_status(d);
	w->nb_mr = (uint8_t)dpv__svc_nb_mr(d);
	w->released = 0;
	w->frame = NULL;
	if (!build || !(flags & (DPV_SVC_COPY | DPV_SVC_BUILD)))
		return true;
	if (flags & DPV_SVC_BUILD)
		req = (struct dpv_tx_req){
			.seg = &sq->desc_seg[(size_t)(slot & sq->mask) * sq->max_sge],
			.nseg = t->nseg, .flags = t->flags, .len = d->len, .owner = w, .mss = t->mss,
			/* the header follows the inline data in the slot's copy */
			.tso_hdr = data + (t->flags & DPV_TX_INLINE ? d->len : 0),
			.tso_hdr_len = t->tso_hdr_len, .tso_info = &t->tso_info,
		};
	rc = dpv__tx_build(qp->txh, &req, &w->frame);
	if (rc == -ENOMEM || rc == -ENOBUFS) {
		sq->data_built = data_built;      /* taken again next round */
		return false;
	}
	if (rc != 0) {
		w->frame = NULL;
		w->status = rc == -EMSGSIZE ? IBV_WC_LOC_LEN_ERR : IBV_WC_LOC_QP_OP_ERR;
	}
	return true;
}

/* Hand [sent, head) to the port in bursts until it stops taking frames, the QP's pacer holds
 * the rest, or up to a WR that failed when it executed: that one completes in error and the
 * QP goes to SQE. */
static void sq_kick(struct dpv_qp *qp)
{
	struct dpv_sq *sq = &qp->sq;
	void *frames[BURST_MAX];
	struct dpv_wqe *wqes[BURST_MAX];
	struct dpv_pace *pace = &to_rawqp(qp)->pace;
	uint32_t head = __atomic_load_n(&sq->head, __ATOMIC_ACQUIRE);

	while (sq->sent != head && dpv__qp_state(qp) == IBV_QPS_RTS) {
		uint16_t n = 0, took;
		struct dpv_wqe *w;
		bool wait = false;

		while (n < BURST_MAX && sq->sent + n != head) {
			w = &sq->wqe[(sq->sent + n) & sq->mask];
			if (qp->service && sq->sent + n == sq->built) {
				if (!svc_take(qp, sq->built, true)) {
					wait = true;  /* no mbufs: the rest waits for the next round */
					break;
				}
				sq->built++;
			}
			if (w->frame == NULL)
				break;
			wqes[n] = w;
			frames[n++] = w->frame;
		}
		if (unlikely(pace->kbps != 0) && n != 0) {
			uint16_t may = dpv__pace_take(pace, wqes, n);

			if (may == 0)
				return;               /* the pacer holds them: a later kick */
			wait |= may < n;
			n = may;
		}
		uint64_t t0 = dpv__cyc_start();

		took = n ? dpv__tx_burst(qp->txh, frames, n) : 0;
		dpv__cyc_add(qp, DPV_CYC_BURST, t0);
		for (uint16_t i = 0; i < took; i++)
			wqes[i]->frame = NULL;
		sq->sent += took;
		qp->tx_frames += took;
		if (unlikely(pace->kbps != 0) && took < n)
			dpv__pace_refund(pace, wqes + took, n - took);   /* they wait */
		if (took < n || wait)
			return;
		if (n == 0) {
			/* the WR at sent failed when it executed (no frame), or was posted while
			 * the QP was in SQE or ERR (a service-mode QP's, flushed now) */
			w = &sq->wqe[sq->sent & sq->mask];
			dpv__wqe_release(w);
			sq->sent++;
			if (w->status != IBV_WC_WR_FLUSH_ERR) {
				qp->tx_errors++;
				dpv__qp_set_state(qp, IBV_QPS_SQE);
			}
		}
	}
}

/* Every WR not yet handed to the port completes with FLUSH_ERR. */
static void sq_flush_unsent(struct dpv_qp *qp)
{
	struct dpv_sq *sq = &qp->sq;
	uint32_t head = __atomic_load_n(&sq->head, __ATOMIC_ACQUIRE);

	for (; sq->sent != head; sq->sent++) {
		struct dpv_wqe *w = &sq->wqe[sq->sent & sq->mask];

		if (qp->service && sq->sent == sq->built)
			svc_take(qp, sq->built++, false);
		if (w->frame != NULL)
			dpv__tx_drop(w->frame);
		w->frame = NULL;
		w->status = IBV_WC_WR_FLUSH_ERR;
		dpv__wqe_release(w);
	}
}

/* Reap only when something sent is still held by the port. */
static void sq_reap(struct dpv_qp *qp)
{
	if (qp->sq.done != qp->sq.sent && qp->txh != NULL)
		dpv__tx_reap(qp->txh);
}

void dpv__raw_progress(struct dpv_qp *qp)
{
	enum ibv_qp_state state = dpv__qp_state(qp);

	if (state == IBV_QPS_RTS) {
		/* service mode: the fast bursts first; what was posted meanwhile waits for the
		 * next round rather than for the generic kick */
		if (!qp->service || !dpv__raw_service_send(qp))
			sq_kick(qp);
		state = dpv__qp_state(qp);
	}
	if (state == IBV_QPS_SQE || state == IBV_QPS_ERR)
		sq_flush_unsent(qp);
	sq_reap(qp);
	dpv__sq_complete(qp);
}

void dpv__raw_flush(struct dpv_qp *qp)
{
	sq_flush_unsent(qp);
	dpv__sq_complete(qp);
}

bool dpv__raw_reset(struct dpv_qp *qp)
{
	sq_flush_unsent(qp);
	if (!dpv__sq_wait_released(qp, sq_reap))
		return false;
	dpv__sq_clear(&qp->sq);
	return true;
}
