/* The send queue of a QP: a ring of WQEs with four cursors.
 *   freed <= done <= sent <= head
 * [freed, done): completed, slot held until the application polls the completion of the last
 *                signaled WR at or after it (then ibv_poll_cq moves freed);
 * [done, sent):  handed to the driver, waiting for it to release the WR's buffers;
 * [sent, head):  posted, frame built, not yet taken by the driver (port queue full, or the QP
 *                in SQD).
 * Completions are written in order, so a CQE always follows the release of every earlier WR. */
#include <errno.h>
#include <stdlib.h>

#include <rte_common.h>
#include <rte_cycles.h>

#include "verbs_priv.h"

#define BURST_MAX 64

int dpv_sq_init(struct dpv_sq *sq, uint32_t max_wr, uint32_t max_sge)
{
	sq->size = rte_align32pow2(max_wr > 0 ? max_wr : 1);
	sq->mask = sq->size - 1;
	sq->max_wr = max_wr > 0 ? sq->size : 0;
	sq->max_sge = max_sge > 0 ? max_sge : 1;
	sq->wqe = calloc(sq->size, sizeof(*sq->wqe));
	sq->mrs = calloc((size_t)sq->size * sq->max_sge, sizeof(*sq->mrs));
	sq->post = sq->head = sq->sent = sq->done = sq->freed = 0;
	if (sq->wqe == NULL || sq->mrs == NULL) {
		free(sq->wqe);
		free(sq->mrs);
		return -ENOMEM;
	}
	for (uint32_t i = 0; i < sq->size; i++)
		sq->wqe[i].mrs = dpv_sq_mrs(sq, i);
	return 0;
}

void dpv_sq_fini(struct dpv_qp *qp)
{
	free(qp->sq.wqe);
	free(qp->sq.mrs);
	free(qp->sq.desc);
	free(qp->sq.desc_seg);
	free(qp->sq.desc_data);
	qp->sq.wqe = NULL;
	qp->sq.mrs = NULL;
	qp->sq.desc = NULL;
	qp->sq.desc_seg = NULL;
	qp->sq.desc_data = NULL;
}

int dpv_sq_desc_init(struct dpv_sq *sq, uint32_t max_inline, uint32_t max_hdr)
{
	if (sq->desc_seg != NULL)
		return 0;
	sq->data_stride = RTE_ALIGN_CEIL(max_inline + max_hdr, RTE_CACHE_LINE_SIZE);
	sq->desc = calloc(sq->size, sizeof(*sq->desc));
	sq->desc_seg = calloc((size_t)sq->size * sq->max_sge, sizeof(*sq->desc_seg));
	sq->desc_data = sq->data_stride ?
			aligned_alloc(RTE_CACHE_LINE_SIZE, (size_t)sq->size * sq->data_stride) : NULL;
	if (sq->desc == NULL || sq->desc_seg == NULL || (sq->data_stride && sq->desc_data == NULL)) {
		free(sq->desc);
		free(sq->desc_seg);
		free(sq->desc_data);
		sq->desc = NULL;
		sq->desc_seg = NULL;
		sq->desc_data = NULL;
		return -ENOMEM;
	}
	return 0;
}

/* Service lcore: build the frame of a WR the posting thread only checked. Returns false when
 * it must wait (no mbufs now); a WR that cannot be built fails as it executes. */
static bool sq_build_deferred(struct dpv_qp *qp, struct dpv_wqe *w, uint32_t slot)
{
	struct dpv_sq *sq = &qp->sq;
	uint8_t *data = sq->desc_data + (size_t)(slot & sq->mask) * sq->data_stride;
	const struct dpv_tx_desc *d = &sq->desc[slot & sq->mask];
	struct dpv_tx_wr twr = {
		.seg = &sq->desc_seg[(size_t)(slot & sq->mask) * sq->max_sge], .nseg = d->nseg,
		.flags = d->flags, .len = w->byte_len, .wqe = w, .mss = d->mss,
		/* the header follows the inline data in the slot's copy */
		.tso_hdr = data + (d->flags & DPV_TX_INLINE ? w->byte_len : 0),
		.tso_hdr_len = d->tso_hdr_len,
	};
	int rc = qp->ctx->dev->ops->tx_build(qp->txq, &twr, &w->frame);

	if (rc == -ENOMEM || rc == -ENOBUFS)
		return false;
	w->deferred = 0;
	if (rc != 0) {
		w->frame = NULL;
		w->status = rc == -EMSGSIZE ? IBV_WC_LOC_LEN_ERR : IBV_WC_LOC_QP_OP_ERR;
	}
	return true;
}

/* The WR no longer uses its MRs: they may be deregistered. */
void dpv_wqe_put_mrs(struct dpv_wqe *w)
{
	for (uint8_t i = 0; i < w->nb_mr; i++)
		__atomic_fetch_sub(&w->mrs[i]->refs, 1, __ATOMIC_RELEASE);
	w->nb_mr = 0;
}

void dpv_tx_released(struct dpv_wqe *wqe)
{
	dpv_wqe_put_mrs(wqe);
	__atomic_store_n(&wqe->released, 1, __ATOMIC_RELEASE);
}

/* Hand [sent, head) to the driver in bursts until it stops taking frames, or up to a WR that
 * failed when it executed: that one completes in error and the QP goes to SQE. */
static void sq_kick(struct dpv_qp *qp)
{
	struct dpv_sq *sq = &qp->sq;
	void *frames[BURST_MAX];
	struct dpv_wqe *wqes[BURST_MAX];
	uint32_t head = __atomic_load_n(&sq->head, __ATOMIC_ACQUIRE);

	while (sq->sent != head && dpv_qp_state(qp) == IBV_QPS_RTS) {
		uint16_t n = 0, took;
		struct dpv_wqe *w;
		bool wait = false;

		while (n < BURST_MAX && sq->sent + n != head) {
			w = &sq->wqe[(sq->sent + n) & sq->mask];
			if (w->deferred && !sq_build_deferred(qp, w, sq->sent + n)) {
				wait = true;          /* no mbufs: the rest waits for the next round */
				break;
			}
			if (w->frame == NULL)
				break;
			wqes[n] = w;
			frames[n++] = w->frame;
		}
		uint64_t t0 = dpv_cyc_start();

		took = n ? qp->ctx->dev->ops->tx_burst(qp->txq, frames, n) : 0;
		dpv_cyc_add(qp, DPV_CYC_BURST, t0);
		for (uint16_t i = 0; i < took; i++)
			wqes[i]->frame = NULL;
		sq->sent += took;
		qp->tx_frames += took;
		if (took < n || wait)
			return;
		if (n == 0) {
			/* the WR at sent failed when it executed (no frame) */
			w = &sq->wqe[sq->sent & sq->mask];
			dpv_tx_released(w);
			sq->sent++;
			qp->tx_errors++;
			dpv_qp_set_state(qp, IBV_QPS_SQE);
		}
	}
}

/* Every WR not yet handed to the driver completes with FLUSH_ERR. */
static void sq_flush_unsent(struct dpv_qp *qp)
{
	struct dpv_sq *sq = &qp->sq;
	uint32_t head = __atomic_load_n(&sq->head, __ATOMIC_ACQUIRE);

	for (; sq->sent != head; sq->sent++) {
		struct dpv_wqe *w = &sq->wqe[sq->sent & sq->mask];

		if (w->frame != NULL)
			qp->ctx->dev->ops->tx_drop(w->frame);
		w->frame = NULL;
		w->deferred = 0;
		w->status = IBV_WC_WR_FLUSH_ERR;
		dpv_tx_released(w);
	}
}

static void sq_complete(struct dpv_qp *qp)
{
	struct dpv_sq *sq = &qp->sq;
	uint64_t t0 = dpv_cyc_start();

	while (sq->done != sq->sent) {
		struct dpv_wqe *w = &sq->wqe[sq->done & sq->mask];
		struct dpv_cqe cqe;

		if (!__atomic_load_n(&w->released, __ATOMIC_ACQUIRE))
			break;
		if (w->signaled || w->status != IBV_WC_SUCCESS) {
			cqe = (struct dpv_cqe){
				.wc = { .wr_id = w->wr_id, .status = w->status, .opcode = w->opcode,
					.byte_len = w->byte_len, .qp_num = qp->ibqp.qp_num },
				.qp = qp, .sq_index = sq->done, .is_send = true,
			};
			dpv_cq_push(qp->scq, &cqe);
		}
		sq->done++;
		qp->tx_completed++;
	}
	dpv_cyc_add(qp, DPV_CYC_COMPLETE, t0);
}

void dpv_sq_progress(struct dpv_qp *qp)
{
	enum ibv_qp_state state = dpv_qp_state(qp);

	if (state == IBV_QPS_RTS) {
		sq_kick(qp);
		state = dpv_qp_state(qp);
	}
	if (state == IBV_QPS_SQE || state == IBV_QPS_ERR)
		sq_flush_unsent(qp);
	if (qp->sq.done != qp->sq.sent && qp->txq != NULL)
		qp->ctx->dev->ops->tx_reap(qp->txq);
	sq_complete(qp);
}

void dpv_sq_flush(struct dpv_qp *qp)
{
	sq_flush_unsent(qp);
	sq_complete(qp);
}

/* Wait (bounded) until the driver released every WR it was handed. */
static bool sq_wait_driver(struct dpv_qp *qp)
{
	struct dpv_sq *sq = &qp->sq;

	for (int tries = 0; tries < 10000; tries++) {
		uint32_t i = sq->done;

		while (i != sq->sent && __atomic_load_n(&sq->wqe[i & sq->mask].released,
							__ATOMIC_ACQUIRE))
			i++;
		if (i == sq->sent)
			return true;
		qp->ctx->dev->ops->tx_reap(qp->txq);
		rte_delay_us_sleep(100);
	}
	VERBS_LOG(WARNING, "QP %#x: the port still holds %u sent WRs after 1 s; their MRs stay "
		  "referenced", qp->ibqp.qp_num, sq->sent - sq->done);
	return false;
}

bool dpv_sq_reset(struct dpv_qp *qp)
{
	struct dpv_sq *sq = &qp->sq;
	bool drained;

	sq_flush_unsent(qp);
	drained = sq_wait_driver(qp);
	if (drained) {
		sq->post = sq->head = sq->sent = sq->done = 0;
		__atomic_store_n(&sq->freed, 0, __ATOMIC_RELEASE);
	}
	return drained;
}
