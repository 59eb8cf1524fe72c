/* ibv_post_send: walk the list in order, check each WR (wr_check.c's table), take an SQ slot,
 * have the driver build its frame, and ring the doorbell once for the whole list. */
#include <errno.h>
#include <string.h>

#include <rte_branch_prediction.h>

#include "verbs_priv.h"

#define PEEK_LEN 22     /* Ethernet + two VLAN tags + the next ethertype */

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
		if (!inl && dpv_mr_lookup(qp->ctx, qp->pd, sge->lkey, sge->addr, take, &va) == NULL)
			return NULL;
		memcpy(buf + *len, va, take);
		*len += take;
	}
	return buf;
}

/* Note @mr among the WR's MRs (once, however many SGEs name it). */
static void note_mr(struct dpv_wqe *w, uint8_t *nb, struct dpv_mr *mr)
{
	for (uint8_t i = 0; i < *nb; i++)
		if (w->mrs[i] == mr)
			return;
	w->mrs[(*nb)++] = mr;
}

/* The gather list as the driver sees it: zero-length SGEs dropped, non-inline SGEs checked
 * against their MR (a failure is an execution error, reported by a completion) and their MRs
 * noted in w->mrs (@nb_mr of them). */
static int gather(struct dpv_qp *qp, const struct ibv_send_wr *wr, struct dpv_wqe *w,
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
			mr = dpv_mr_lookup(qp->ctx, qp->pd, sge->lkey, sge->addr, sge->length, &va);
			if (unlikely(mr == NULL))
				return IBV_WC_LOC_PROT_ERR;
			note_mr(w, nb_mr, mr);
		}
		seg[*nseg].addr = va;
		seg[(*nseg)++].len = sge->length;
	}
	return IBV_WC_SUCCESS;
}

/* A frame that still points into MRs holds them until the driver releases it (so that
 * ibv_dereg_mr says EBUSY meanwhile); a copied one was released while it was built. */
static void hold_mrs(struct dpv_wqe *w, uint8_t nb_mr)
{
	if (__atomic_load_n(&w->released, __ATOMIC_ACQUIRE))
		return;
	for (uint8_t i = 0; i < nb_mr; i++)
		__atomic_fetch_add(&w->mrs[i]->refs, 1, __ATOMIC_ACQUIRE);
	w->nb_mr = nb_mr;
}

/* Service mode: keep what the service lcore needs to build the frame in the slot — the gather
 * list is there already; inline data and the TSO header are copied now (the application may
 * reuse them when ibv_post_send returns). The WR holds its MRs until it is released. */
static void sq_defer(struct dpv_qp *qp, const struct ibv_send_wr *wr, struct dpv_wqe *w,
		     struct dpv_tx_seg *seg, const struct dpv_tx_wr *twr, uint8_t nb_mr)
{
	struct dpv_sq *sq = &qp->sq;
	uint8_t *data = sq->desc_data + (size_t)(sq->post & sq->mask) * sq->data_stride;
	struct dpv_tx_desc *d = &sq->desc[sq->post & sq->mask];
	uint32_t off = 0;

	*d = (struct dpv_tx_desc){ .flags = twr->flags, .nseg = twr->nseg, .mss = twr->mss,
				   .tso_hdr_len = twr->tso_hdr_len };
	if (twr->flags & DPV_TX_INLINE) {
		for (uint16_t i = 0; i < twr->nseg; i++) {
			memcpy(data + off, seg[i].addr, seg[i].len);
			off += seg[i].len;
		}
		seg[0] = (struct dpv_tx_seg){ data, off };
		d->nseg = off ? 1 : 0;
	}
	if (twr->flags & DPV_TX_TSO)
		memcpy(data + off, wr->tso.hdr, twr->tso_hdr_len);
	w->deferred = 1;
	hold_mrs(w, nb_mr);
}

/* Direct mode: the driver builds the frame now. A frame the port cannot carry fails when the
 * WR executes, as on hardware. */
static int build_now(struct dpv_qp *qp, struct dpv_wqe *w, const struct dpv_tx_wr *twr,
		     uint8_t nb_mr)
{
	int rc = qp->ctx->dev->ops->tx_build(qp->txq, twr, &w->frame);

	if (rc == 0)
		hold_mrs(w, nb_mr);
	if (rc == -EMSGSIZE) {
		w->status = IBV_WC_LOC_LEN_ERR;
		w->frame = NULL;
		rc = 0;
	}
	return rc;
}

static int sq_post_one(struct dpv_qp *qp, const struct ibv_send_wr *wr, uint32_t len)
{
	struct dpv_sq *sq = &qp->sq;
	struct dpv_wqe *w = &sq->wqe[sq->post & sq->mask];
	struct dpv_tx_seg local[32];
	struct dpv_tx_seg *seg = qp->service ?
				 &sq->desc_seg[(size_t)(sq->post & sq->mask) * sq->max_sge] : local;
	struct dpv_tx_wr twr = { .seg = seg, .wqe = w };
	uint8_t nb_mr = 0;
	int rc = 0;

	*w = (struct dpv_wqe){
		.wr_id = wr->wr_id,
		.opcode = dpv_wr_wc_opcode(wr->opcode),
		.signaled = qp->sq_sig_all || (wr->send_flags & IBV_SEND_SIGNALED),
		.byte_len = len,
		.mrs = w->mrs,
	};
	/* In SQE and ERR the WR is accepted and flushed by the next progress. */
	enum ibv_qp_state state = dpv_qp_state(qp);

	if (state == IBV_QPS_RTS || state == IBV_QPS_SQD) {
		w->status = gather(qp, wr, w, seg, &twr.nseg, &nb_mr);
		if (w->status == IBV_WC_SUCCESS) {
			twr.len = w->byte_len;
			twr.flags = (wr->send_flags & IBV_SEND_INLINE ? DPV_TX_INLINE : 0) |
				    (wr->send_flags & IBV_SEND_IP_CSUM ? DPV_TX_IP_CSUM : 0);
			if (wr->opcode == IBV_WR_TSO) {
				twr.flags |= DPV_TX_TSO;
				twr.tso_hdr = wr->tso.hdr;
				twr.tso_hdr_len = wr->tso.hdr_sz;
				twr.mss = wr->tso.mss;
			}
			if (qp->service)
				sq_defer(qp, wr, w, seg, &twr, nb_mr);
			else
				rc = build_now(qp, w, &twr, nb_mr);
		}
	}
	if (rc == 0) {
		sq->post++;                       /* published with the list, by post_send */
		qp->tx_wrs++;
		qp->tx_bytes += w->byte_len;
	}
	return rc;
}

static int post_one(struct dpv_qp *qp, const struct ibv_send_wr *wr)
{
	uint8_t peek[PEEK_LEN];
	const uint8_t *l2 = NULL;
	uint32_t l2_len = 0;
	uint64_t len = 0, t0 = dpv_cyc_start();
	int rc;

	if (likely(wr->num_sge >= 0 && (uint32_t)wr->num_sge <= qp->lim.max_send_sge))
		len = dpv_wr_length(wr);
	rc = dpv_wr_check_basic(&qp->lim, wr, len);
	if (unlikely(rc != 0))
		return rc;
	if (unlikely(qp->sq.post - __atomic_load_n(&qp->sq.freed, __ATOMIC_ACQUIRE) >=
		     qp->sq.max_wr))
		return -ENOMEM;
	if (unlikely(len > qp->lim.max_frame) && qp->type == IBV_QPT_RAW_PACKET &&
	    wr->opcode == IBV_WR_SEND)
		l2 = frame_peek(qp, wr, peek, &l2_len);
	rc = dpv_wr_check_shape(&qp->lim, wr, len, l2, l2_len);
	dpv_cyc_add(qp, DPV_CYC_VALIDATE, t0);
	if (likely(rc == 0)) {
		t0 = dpv_cyc_start();
		rc = sq_post_one(qp, wr, (uint32_t)len);
		dpv_cyc_add(qp, DPV_CYC_BUILD, t0);
	}
	return rc;
}

int dpv_post_send(struct ibv_qp *ibqp, struct ibv_send_wr *wr, struct ibv_send_wr **bad_wr)
{
	struct dpv_qp *qp = to_dqp(ibqp);
	uint32_t posted = 0;
	int rc = 0;

	enum ibv_qp_state state;

	dpv_qp_lock(qp);
	state = dpv_qp_state(qp);
	if (state == IBV_QPS_RESET || state == IBV_QPS_INIT || state == IBV_QPS_RTR)
		rc = -EINVAL;
	while (rc == 0 && wr != NULL) {
		rc = post_one(qp, wr);
		if (rc != 0)
			break;
		posted++;
		wr = wr->next;
	}
	if (posted != 0) {
		/* a service lcore reads the WQEs once it sees the new head */
		__atomic_store_n(&qp->sq.head, qp->sq.post, __ATOMIC_RELEASE);
		if (!qp->service)
			dpv_sq_progress(qp);      /* one doorbell for the whole list */
	}
	dpv_qp_unlock(qp);
	if (rc != 0)
		*bad_wr = wr;
	return -rc;
}
