/* SPDX-License-Identifier: BSD-3-Clause */
/* Receive queues of every transport: ibv_post_recv, the WQE ring, completions (one CQ lock
 * per batch) and flush. What lands in a WQE is the transport's business. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include <rte_common.h>

#include "dpv_engine.h"
#include "verbs_base.h"
#include "verbs_pd.h"
#include "verbs_cq.h"
#include "verbs_ring.h"
#include "verbs_qp.h"


int dpv__rq_init(struct dpv_rq *rq, struct dpv_pd *pd, uint64_t type, uint32_t max_wr,
		 uint32_t max_sge)
{
	dpv__ring_geometry(max_wr, max_sge, &rq->size, &rq->mask, &rq->max_wr, &rq->max_sge);
	rq->head = rq->tail = 0;
	rq->buf_pd = pd;
	rq->buf_type = type;
	rq->wqe = dpv__qbuf_alloc(pd, rq->size * sizeof(*rq->wqe), type, &rq->wqe_custom);
	rq->sge = rq->max_sge == 1 ? NULL : calloc((size_t)rq->size * rq->max_sge, sizeof(*rq->sge));
	if (rq->wqe == NULL || (rq->max_sge > 1 && rq->sge == NULL)) {
		dpv__rq_fini(rq);
		return -ENOMEM;
	}
	return 0;
}

void dpv__rq_fini(struct dpv_rq *rq)
{
	dpv__qbuf_free(rq->buf_pd, rq->wqe, rq->buf_type, rq->wqe_custom);
	free(rq->sge);
	rq->wqe = NULL;
	rq->sge = NULL;
}

void dpv__rq_batch_flush(struct dpv_cqe_batch *b)
{
	if (b->n > 0)
		dpv__cq_push_many(b->cq, b->e, b->n);
	b->n = 0;
}

void dpv__rq_complete(struct dpv_qp *qp, uint64_t wr_id, enum ibv_wc_status status, uint32_t len,
		     unsigned int flags, struct dpv_cqe_batch *b)
{
	qp->rx_completed++;
	if (b == NULL) {
		struct dpv_cqe cqe;

		dpv__cqe_fill(&cqe, qp, wr_id, status, IBV_WC_RECV, len, flags);
		dpv__cq_push(qp->rcq, &cqe);
		return;
	}
	if (b->cq != qp->rcq || b->n == RTE_DIM(b->e))
		dpv__rq_batch_flush(b);
	b->cq = qp->rcq;
	dpv__cqe_fill(&b->e[b->n++], qp, wr_id, status, IBV_WC_RECV, len, flags);
}

void dpv__rq_complete_from(struct dpv_qp *qp, uint64_t wr_id, uint32_t len, unsigned int flags,
			   uint32_t src_qp, uint32_t imm, bool solicited, struct dpv_cqe_batch *b)
{
	struct dpv_cqe one, *e = &one;

	qp->rx_completed++;
	if (b != NULL) {
		if (b->cq != qp->rcq || b->n == RTE_DIM(b->e))
			dpv__rq_batch_flush(b);
		b->cq = qp->rcq;
		e = &b->e[b->n++];
	}
	dpv__cqe_fill(e, qp, wr_id, IBV_WC_SUCCESS, IBV_WC_RECV, len, flags);
	e->wc.src_qp = src_qp;
	e->wc.imm_data = imm;
	e->solicited = solicited;
	if (b == NULL)
		dpv__cq_push(qp->rcq, e);
}

void dpv__rq_flush(struct dpv_qp *qp)
{
	struct dpv_rq *rq = &qp->rq;

	dpv__qp_assert_locked(qp);
	for (; rq->tail != rq->head; rq->tail++)
		dpv__rq_complete(qp, rq->wqe[rq->tail & rq->mask].wr_id, IBV_WC_WR_FLUSH_ERR, 0, 0,
				NULL);
}

void dpv__rq_reset(struct dpv_qp *qp)
{
	qp->rq.head = qp->rq.tail = 0;
}

int dpv_post_recv(struct ibv_qp *ibqp, struct ibv_recv_wr *wr, struct ibv_recv_wr **bad_wr)
{
	struct dpv_qp *qp = to_dqp(ibqp);
	struct dpv_rq *rq = &qp->rq;
	struct ibv_recv_wr *unused;
	uint64_t t0 = dpv__cyc_start();
	struct dpv_rwqe *wqe;
	const struct ibv_sge *rows;
	uint32_t head, end, ring, max_sge;
	int rc = 0;

	if (bad_wr == NULL)
		bad_wr = &unused;           /* the man page wants one; a program without is not hurt */
	if (wr == NULL) {
		*bad_wr = NULL;
		return EINVAL;
	}
	if (dpv__fork_child()) {
		*bad_wr = wr;
		return -dpv__fork_refuse();
	}
	/* one lock for the list; the WQEs are published (head) once, at its end */
	dpv__qp_lock(qp);
	head = rq->head;
	end = rq->tail + rq->max_wr;       /* the head that finds the RQ full */
	wqe = rq->wqe;
	rows = rq->sge;
	ring = rq->mask;
	max_sge = rq->max_sge;
	if (dpv__qp_state(qp) == IBV_QPS_RESET || qp->srq != NULL || qp->no_rq)
		rc = EINVAL;                 /* receives come from an SRQ (XRC: the one named) */
	/* in locals: ring stores cannot alias them. The common WR (one SGE, max_sge 1) first;
	 * the general loop after it finds what is wrong with a WR */

	if (likely(rc == 0 && rows == NULL)) {
		for (; wr != NULL; wr = wr->next) {
			struct dpv_rwqe *w = &wqe[head & ring];

			if (unlikely(wr->num_sge != 1 || wr->sg_list == NULL || head == end))
				break;
			w->sge = *wr->sg_list;
			w->nsge = 1;
			w->wr_id = wr->wr_id;
			head++;
		}
	}
	for (; rc == 0 && wr != NULL; wr = wr->next) {
		uint32_t slot = head & ring, nsge = (uint32_t)wr->num_sge;  /* < 0: huge */
		const struct ibv_sge *sl = wr->sg_list;

		if (unlikely(nsge > max_sge || (nsge > 0 && sl == NULL))) {
			rc = EINVAL;
			break;
		}
		if (unlikely(head == end)) {
			rc = ENOMEM;
			break;
		}
		if (likely(nsge == 1 && rows == NULL)) {
			wqe[slot].sge = *sl;
			wqe[slot].nsge = 1;
		} else {
			dpv__rq_set_sges(rq, slot, sl, nsge);
		}
		wqe[slot].wr_id = wr->wr_id;
		head++;
	}
	qp->rx_wrs += head - rq->head;
	rq->head = head;
	if (dpv__qp_state(qp) == IBV_QPS_ERR)
		dpv__rq_flush(qp);           /* accepted, then flushed */
	dpv__cyc_add(qp, DPV_CYC_RECV_POST, t0);
	dpv__qp_unlock(qp);
	if (rc != 0)
		*bad_wr = wr;
	return rc;
}
