/* SPDX-License-Identifier: BSD-3-Clause */
/* The send queue of a QP, shared by every transport: a ring of posted WRs with four cursors.
 *   freed <= done <= sent <= head
 * [freed, done): completed, slot held until the application polls the completion of the last
 *                signaled WR at or after it (then ibv_poll_cq moves freed);
 * [done, sent):  executed by the transport, waiting for it to release the WR (RAW: the port
 *                gave back its buffers; RC: acknowledged);
 * [sent, head):  posted, not yet executed (port queue full, or the QP in SQD).
 * Completions are written in order. In service mode the service side alone writes the WQEs,
 * from descriptors: [sent, built) built, [built, head) still descriptors. */

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include <rte_common.h>
#include <rte_cycles.h>

#include "verbs_base.h"
#include "verbs_pd.h"
#include "verbs_mr.h"
#include "verbs_cq.h"
#include "verbs_ring.h"
#include "verbs_qp.h"

int dpv__sq_init(struct dpv_sq *sq, struct dpv_pd *pd, uint32_t max_wr, uint32_t max_sge)
{
	dpv__ring_geometry(max_wr, max_sge, &sq->size, &sq->mask, &sq->max_wr, &sq->max_sge);
	sq->buf_pd = pd;
	sq->wqe = dpv__qbuf_alloc(pd, sq->size * sizeof(*sq->wqe), DPV_RES_SQ, &sq->wqe_custom);
	sq->mrs = calloc((size_t)sq->size * sq->max_sge, sizeof(*sq->mrs));
	sq->post = sq->head = sq->sent = sq->done = sq->built = sq->freed = 0;
	sq->data_post = sq->data_built = 0;
	if (sq->wqe == NULL || sq->mrs == NULL) {
		dpv__qbuf_free(pd, sq->wqe, DPV_RES_SQ, sq->wqe_custom);
		free(sq->mrs);
		sq->wqe = NULL;
		sq->mrs = NULL;
		return -ENOMEM;
	}
	for (uint32_t i = 0; i < sq->size; i++)
		sq->wqe[i].mrs = dpv__sq_mrs(sq, i);
	return 0;
}

void dpv__sq_fini(struct dpv_qp *qp)
{
	struct dpv_sq *sq = &qp->sq;

	dpv__qbuf_free(sq->buf_pd, sq->wqe, DPV_RES_SQ, sq->wqe_custom);
	free(sq->mrs);
	free(sq->desc);
	free(sq->desc_tx);
	free(sq->desc_seg);
	free(sq->desc_data);
	sq->wqe = NULL;
	sq->mrs = NULL;
	sq->desc = NULL;
	sq->desc_tx = NULL;
	sq->desc_seg = NULL;
	sq->desc_data = NULL;
}

int dpv__sq_desc_init(struct dpv_sq *sq, uint32_t data)
{
	if (sq->desc != NULL)
		return 0;
	/* every slot's largest data, and one more for the end of the ring a wrap leaves */
	sq->data_max = RTE_ALIGN_CEIL(RTE_MAX(data, 1u), DPV_SVC_DATA_ALIGN);
	sq->data_cap = (sq->size + 1) * sq->data_max;
	sq->desc = aligned_alloc(RTE_CACHE_LINE_SIZE,
				 RTE_ALIGN_CEIL(sq->size * sizeof(*sq->desc), RTE_CACHE_LINE_SIZE));
	sq->desc_tx = calloc(sq->size, sizeof(*sq->desc_tx));
	sq->desc_seg = calloc((size_t)sq->size * sq->max_sge, sizeof(*sq->desc_seg));
	sq->desc_data = aligned_alloc(DPV_SVC_DATA_ALIGN, sq->data_cap);
	if (sq->desc == NULL || sq->desc_tx == NULL || sq->desc_seg == NULL ||
	    sq->desc_data == NULL) {
		free(sq->desc);
		free(sq->desc_tx);
		free(sq->desc_seg);
		free(sq->desc_data);
		sq->desc = NULL;
		sq->desc_tx = NULL;
		sq->desc_seg = NULL;
		sq->desc_data = NULL;
		return -ENOMEM;
	}
	memset(sq->desc, 0, sq->size * sizeof(*sq->desc));
	return 0;
}

/* The WR no longer uses its MRs: they may be deregistered. */
void dpv__wqe_put_mrs(struct dpv_wqe *w)
{
	for (uint8_t i = 0; i < w->nb_mr; i++)
		DPV_REF_PUT(&w->mrs[i]->refs);
	w->nb_mr = 0;
}

void dpv__wqe_release(void *wqe)
{
	struct dpv_wqe *w = wqe;

	dpv__wqe_put_mrs(w);
	__atomic_store_n(&w->released, 1, __ATOMIC_RELEASE);
}

/* The completions of [done, sent) up to the first WR not released, written under one CQ
 * lock per batch. */
void dpv__sq_complete(struct dpv_qp *qp)
{
	struct dpv_sq *sq = &qp->sq;
	uint32_t slots[32], done = sq->done;
	unsigned int n = 0;
	uint64_t t0 = dpv__cyc_start();

	dpv__qp_assert_sq_locked(qp);
	DPV_ASSERT(sq->sent - done <= sq->size);     /* [done, sent) fits the ring */
	while (done != sq->sent) {
		struct dpv_wqe *w = &sq->wqe[done & sq->mask];

		if (!__atomic_load_n(&w->released, __ATOMIC_ACQUIRE))
			break;
		if (w->signaled || w->status != IBV_WC_SUCCESS) {
			slots[n++] = done;
			if (n == RTE_DIM(slots)) {
				dpv__cq_push_sends(qp->scq, qp, slots, n);
				n = 0;
			}
		}
		done++;
	}
	if (n != 0)
		dpv__cq_push_sends(qp->scq, qp, slots, n);
	qp->tx_completed += done - sq->done;
	__atomic_store_n(&sq->done, done, __ATOMIC_RELAXED);  /* read by progress, unlocked */
	dpv__cyc_add(qp, DPV_CYC_COMPLETE, t0);
	if (unlikely(__atomic_load_n(&qp->sq_draining, __ATOMIC_RELAXED)))
		dpv__qp_sqd_check(qp);
}

bool dpv__sq_wait_released(struct dpv_qp *qp, void (*reap)(struct dpv_qp *qp))
{
	struct dpv_sq *sq = &qp->sq;

	for (int tries = 0; tries < 10000; tries++) {
		uint32_t i = sq->done;

		while (i != sq->sent && __atomic_load_n(&sq->wqe[i & sq->mask].released,
							__ATOMIC_ACQUIRE))
			i++;
		if (i == sq->sent)
			return true;
		reap(qp);
		rte_delay_us_sleep(100);
	}
	VERBS_LOG(WARNING, "QP %#x: the port still holds %u sent WRs after 1 s; their MRs stay "
		  "referenced", qp->ibqp.qp_num, sq->sent - sq->done);
	return false;
}

void dpv__sq_clear(struct dpv_sq *sq)
{
	sq->post = sq->sent = sq->built = 0;
	sq->data_post = sq->data_built = 0;
	__atomic_store_n(&sq->head, 0, __ATOMIC_RELAXED);   /* head and done: read unlocked */
	__atomic_store_n(&sq->done, 0, __ATOMIC_RELAXED);
	__atomic_store_n(&sq->freed, 0, __ATOMIC_RELEASE);
}
