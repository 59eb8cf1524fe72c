/* Receive queues: ibv_post_recv, and the delivery of steered frames into receive WQEs. A
 * frame is scattered into the next WQE's SGEs (each checked against an MR of the QP's PD with
 * local write access, when the frame lands, as hardware checks); completions IBV_WC_RECV with
 * byte_len and IBV_WC_IP_CSUM_OK. A frame larger than the WQE: IBV_WC_LOC_LEN_ERR; an SGE
 * outside its MR: IBV_WC_LOC_PROT_ERR; either moves the QP to ERR. No WQE: dropped, counted. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include <rte_common.h>

#include "verbs_priv.h"

#define RX_BURST 32
#define RX_FANOUT 16

int dpv_rq_init(struct dpv_rq *rq, uint32_t max_wr, uint32_t max_sge)
{
	rq->size = rte_align32pow2(max_wr > 0 ? max_wr : 1);
	rq->mask = rq->size - 1;
	rq->max_wr = max_wr > 0 ? rq->size : 0;
	rq->max_sge = max_sge > 0 ? max_sge : 1;
	rq->head = rq->tail = 0;
	rq->wqe = calloc(rq->size, sizeof(*rq->wqe));
	rq->sge = calloc((size_t)rq->size * rq->max_sge, sizeof(*rq->sge));
	if (rq->wqe == NULL || rq->sge == NULL) {
		dpv_rq_fini(rq);
		return -ENOMEM;
	}
	return 0;
}

void dpv_rq_fini(struct dpv_rq *rq)
{
	free(rq->wqe);
	free(rq->sge);
	rq->wqe = NULL;
	rq->sge = NULL;
}

static void rq_complete(struct dpv_qp *qp, uint64_t wr_id, enum ibv_wc_status status,
			uint32_t len, unsigned int flags)
{
	struct dpv_cqe cqe = {
		.wc = { .wr_id = wr_id, .status = status, .opcode = IBV_WC_RECV, .byte_len = len,
			.qp_num = qp->ibqp.qp_num, .wc_flags = flags },
		.qp = qp,
	};

	dpv_cq_push(qp->rcq, &cqe);
}

void dpv_rq_flush(struct dpv_qp *qp)
{
	struct dpv_rq *rq = &qp->rq;

	for (; rq->tail != rq->head; rq->tail++)
		rq_complete(qp, rq->wqe[rq->tail & rq->mask].wr_id, IBV_WC_WR_FLUSH_ERR, 0, 0);
}

void dpv_rq_reset(struct dpv_qp *qp)
{
	qp->rq.head = qp->rq.tail = 0;
}

int dpv_post_recv(struct ibv_qp *ibqp, struct ibv_recv_wr *wr, struct ibv_recv_wr **bad_wr)
{
	struct dpv_qp *qp = to_dqp(ibqp);
	struct dpv_rq *rq = &qp->rq;
	int rc = 0;

	dpv_qp_lock(qp);
	if (qp->state == IBV_QPS_RESET)
		rc = EINVAL;
	for (; rc == 0 && wr != NULL; wr = rc == 0 ? wr->next : wr) {
		struct dpv_rwqe *w;

		if (wr->num_sge < 0 || (uint32_t)wr->num_sge > rq->max_sge ||
		    (wr->num_sge > 0 && wr->sg_list == NULL)) {
			rc = EINVAL;
			break;
		}
		if (rq->head - rq->tail >= rq->max_wr) {
			rc = ENOMEM;
			break;
		}
		w = &rq->wqe[rq->head & rq->mask];
		w->wr_id = wr->wr_id;
		w->nsge = (uint16_t)wr->num_sge;
		memcpy(&rq->sge[(size_t)(rq->head & rq->mask) * rq->max_sge], wr->sg_list,
		       (size_t)wr->num_sge * sizeof(*wr->sg_list));
		rq->head++;
	}
	if (qp->state == IBV_QPS_ERR)
		dpv_rq_flush(qp);           /* accepted, then flushed */
	dpv_qp_unlock(qp);
	if (rc != 0)
		*bad_wr = wr;
	return rc;
}

/* Scatter @frame into the next WQE of @qp; QP lock held. */
static void rq_deliver(struct dpv_qp *qp, struct dpv_device *dev, void *frame)
{
	struct dpv_rq *rq = &qp->rq;
	uint32_t len = dev->ops->rx_len(frame), off = 0, room = 0;
	struct dpv_rwqe *w;
	struct ibv_sge *sge;
	enum ibv_wc_status st = IBV_WC_SUCCESS;

	if (rq->tail == rq->head) {
		dev->rx_no_wqe++;
		return;
	}
	w = &rq->wqe[rq->tail & rq->mask];
	sge = &rq->sge[(size_t)(rq->tail & rq->mask) * rq->max_sge];
	for (uint16_t i = 0; i < w->nsge; i++)
		room += sge[i].length;
	if (len > room)
		st = IBV_WC_LOC_LEN_ERR;
	for (uint16_t i = 0; st == IBV_WC_SUCCESS && i < w->nsge && off < len; i++) {
		uint32_t take = RTE_MIN(sge[i].length, len - off);
		uint8_t *va;
		struct dpv_mr *mr;

		if (take == 0)
			continue;
		mr = dpv_mr_lookup(qp->ctx, qp->pd, sge[i].lkey, sge[i].addr, take, &va);
		if (mr == NULL || !(mr->access & IBV_ACCESS_LOCAL_WRITE)) {
			st = IBV_WC_LOC_PROT_ERR;
			break;
		}
		dev->ops->rx_read(frame, off, va, take);
		off += take;
	}
	rq->tail++;
	if (st != IBV_WC_SUCCESS) {
		rq_complete(qp, w->wr_id, st, 0, 0);
		qp->state = qp->ibqp.state = IBV_QPS_ERR;
		dpv_sq_flush(qp);
		dpv_rq_flush(qp);
		return;
	}
	rq_complete(qp, w->wr_id, st, len, dev->ops->rx_csum_ok(frame) ? IBV_WC_IP_CSUM_OK : 0);
}

static bool receiving(const struct dpv_qp *qp)
{
	return qp->state == IBV_QPS_RTR || qp->state == IBV_QPS_RTS || qp->state == IBV_QPS_SQD ||
	       qp->state == IBV_QPS_SQE;
}

void dpv_port_rx_poll(struct dpv_device *dev)
{
	void *frames[RX_BURST];
	uint16_t n;

	if (dpv_spinlock_trylock(&dev->rx_lock)) {      /* one receiver at a time, never wait */
		n = dev->ops->rx_burst(dev->port, frames, RX_BURST);
		pthread_rwlock_rdlock(&dev->flows_lock);
		for (uint16_t i = 0; i < n; i++) {
			struct dpv_qp *to[RX_FANOUT];
			uint32_t hl;
			const uint8_t *h = dev->ops->rx_head(frames[i], &hl);
			int k = dpv_flows_classify(dev, h, hl, to, RX_FANOUT);

			dev->rx_frames++;
			if (k == 0)
				dev->rx_unsteered++;
			for (int j = 0; j < k; j++) {
				dpv_qp_lock(to[j]);
				if (receiving(to[j]))
					rq_deliver(to[j], dev, frames[i]);
				dpv_qp_unlock(to[j]);
			}
			dev->ops->rx_free(frames[i]);
		}
		pthread_rwlock_unlock(&dev->flows_lock);
		dpv_spinlock_unlock(&dev->rx_lock);
	}
}
