/* RAW_PACKET receive: a burst of the port's frames is classified by the device's flows
 * (flow.c) and each frame scattered into the next receive WQE of every QP it is steered to
 * (each SGE checked against an MR of the QP's PD with local write access, when the frame
 * lands, as hardware checks); completions IBV_WC_RECV with byte_len and IBV_WC_IP_CSUM_OK. A
 * frame larger than the WQE: IBV_WC_LOC_LEN_ERR; an SGE outside its MR: IBV_WC_LOC_PROT_ERR;
 * either moves the QP to ERR. No WQE: dropped, counted. */
#include <string.h>

#include <rte_common.h>
#include <rte_mbuf.h>

#include "dpv_offload.h"
#include "verbs_priv.h"

#define RX_FANOUT 16

/* Scatter @frame into the next WQE of @qp; QP lock held. Its completion goes into @b. */
static void rq_deliver(struct dpv_qp *qp, struct dpv_device *dev, struct rte_mbuf *frame,
		       struct dpv_cqe_batch *b)
{
	struct dpv_rq *rq = &qp->rq;
	uint32_t len = rte_pktmbuf_pkt_len(frame), off = 0, room = 0;
	struct dpv_rwqe *w;
	struct ibv_sge *sge;
	enum ibv_wc_status st = IBV_WC_SUCCESS;

	if (!dpv__rq_ready(qp)) {       /* its own WQE, or one from its SRQ */
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
		mr = dpv__mr_lookup(qp->ctx, qp->pd, sge[i].lkey, sge[i].addr, take, &va);
		if (mr == NULL || !(mr->access & IBV_ACCESS_LOCAL_WRITE)) {
			st = IBV_WC_LOC_PROT_ERR;
			break;
		}
		const void *p = rte_pktmbuf_read(frame, off, take, va);

		if (p != va)
			memcpy(va, p, take);
		off += take;
	}
	rq->tail++;
	if (st != IBV_WC_SUCCESS) {
		dpv__rq_batch_flush(b);   /* what came before, then the error, then the flushes */
		dpv__rq_complete(qp, w->wr_id, st, 0, 0, NULL);
		dpv__qp_fail(qp);
		return;
	}
	dpv__rq_complete(qp, w->wr_id, st, len, dpv__rx_csum_ok(frame) ? IBV_WC_IP_CSUM_OK : 0, b);
}

static bool receiving(const struct dpv_qp *qp)
{
	enum ibv_qp_state s = dpv__qp_state(qp);

	return s == IBV_QPS_RTR || s == IBV_QPS_RTS || s == IBV_QPS_SQD || s == IBV_QPS_SQE;
}

/* Deliver @frame to the @k QPs it was steered to. The lock of a QP that takes one frame after
 * another stays held (*held) until a frame goes elsewhere; its completions are pushed before
 * that lock is let go (a RESET in between must not find them later in the CQ). */
static void rx_dispatch(struct dpv_device *dev, struct rte_mbuf *frame, struct dpv_qp **to,
			int k, struct dpv_qp **held, struct dpv_cqe_batch *b)
{
	for (int j = 0; j < k; j++) {
		if (to[j] != *held) {
			if (*held != NULL) {
				dpv__rq_batch_flush(b);
				dpv__qp_unlock(*held);
			}
			*held = to[j];
			dpv__qp_lock(to[j]);
		}
		if (receiving(to[j]))
			rq_deliver(to[j], dev, frame, b);
	}
}

void dpv__raw_port_rx(struct dpv_device *dev, struct rte_mbuf **frames, uint16_t n,
		      uint64_t *taken)
{
	struct dpv_cqe_batch batch = { .n = 0 };
	struct dpv_qp *held = NULL;

	pthread_rwlock_rdlock(&dev->flows_lock);
	for (uint16_t i = 0; i < n; i++) {
		struct dpv_qp *to[RX_FANOUT];
		bool other = *taken >> i & 1;
		int k = dpv__flows_classify(dev, rte_pktmbuf_mtod(frames[i], const uint8_t *),
					   rte_pktmbuf_data_len(frames[i]), other, to, RX_FANOUT);

		if (k == 0 && !other)
			dev->rx_unsteered++;
		rx_dispatch(dev, frames[i], to, k, &held, &batch);
	}
	dpv__rq_batch_flush(&batch);
	if (held != NULL)
		dpv__qp_unlock(held);
	pthread_rwlock_unlock(&dev->flows_lock);
}
