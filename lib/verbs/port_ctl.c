/* SPDX-License-Identifier: BSD-3-Clause */
/* What tools such as dpv-testpmd need beyond the verbs queries: a port's DPDK extended
 * statistics, the offloads forced to software one by one, and the occupancy and counters of
 * one QP and one CQ (snapshots, taken under the object's lock). */
#include <errno.h>
#include <string.h>

#include <rte_cycles.h>

#include "verbs_device.h"
#include "verbs_fork.h"
#include "verbs_cq.h"
#include "verbs_qp.h"

DPV_EXPORT int dpv_query_port_xstats(struct ibv_context *context, struct dpv_xstat *xstats,
				     unsigned int *n)
{
	struct dpv_context *ctx = to_dctx(context);
	int rc;

	DPV_FORK_REFUSE(ENODEV);
	if (ctx == NULL || n == NULL || (xstats == NULL && *n != 0))
		return EINVAL;
	if (ctx->dev->ops->port_xstats == NULL)
		return EOPNOTSUPP;
	/* the driver's entries have the public struct's layout */
	RTE_BUILD_BUG_ON(sizeof(struct dpv_xstat) != sizeof(struct dpv_port_xstat));
	rc = ctx->dev->ops->port_xstats(ctx->dev->port, (struct dpv_port_xstat *)xstats, *n);
	if (rc < 0)
		return -rc;
	*n = (unsigned int)rc;
	return 0;
}

DPV_EXPORT int dpv_set_offload_software(struct ibv_context *context, uint32_t offloads)
{
	struct dpv_context *ctx = to_dctx(context);
	const uint32_t all = DPV_OFFLOAD_IPV4_CKSUM | DPV_OFFLOAD_TCP_CKSUM |
			     DPV_OFFLOAD_UDP_CKSUM | DPV_OFFLOAD_TCP_TSO;

	DPV_FORK_REFUSE(ENODEV);
	if (ctx == NULL || (offloads & ~all))
		return EINVAL;
	__atomic_store_n(&ctx->dev->offload.sw_forced, offloads, __ATOMIC_RELAXED);
	return 0;
}

DPV_EXPORT int dpv_query_qp_counters(struct ibv_qp *ibqp, struct dpv_qp_counters *c)
{
	struct dpv_qp *qp = dpv__qp_target(ibqp);

	DPV_FORK_REFUSE(ENODEV);
	if (qp == NULL || c == NULL)
		return EINVAL;
	memset(c, 0, sizeof(*c));
	dpv__qp_lock_ctl(qp);           /* a service-mode QP's service lcore kept out too */
	c->state = dpv__qp_state(qp);
	c->port_num = qp->port_num;
	c->sq_size = qp->sq.max_wr;
	c->sq_used = qp->sq.head - qp->sq.freed;
	c->sq_unsent = qp->sq.head - qp->sq.sent;
	c->sq_in_flight = qp->sq.sent - qp->sq.done;
	c->rq_size = qp->rq.max_wr;
	c->rq_posted = qp->rq.head - qp->rq.tail;
	c->nb_flows = (uint32_t)qp->nb_flows;
	c->tx_wrs = qp->tx_wrs;
	c->tx_bytes = qp->tx_bytes;
	c->tx_frames = qp->tx_frames;
	c->tx_errors = qp->tx_errors;
	c->tx_completed = qp->tx_completed;
	c->rx_wrs = qp->rx_wrs;
	c->rx_completed = qp->rx_completed;
	c->progress = qp->service ? DPV_PROGRESS_SERVICE : DPV_PROGRESS_DIRECT;
	c->service_lcore = qp->svc_listed ? (int)qp->ctx->dev->svc_lcore : -1;
	c->cycles_validate = qp->cyc[DPV_CYC_VALIDATE];
	c->cycles_build = qp->cyc[DPV_CYC_BUILD];
	c->cycles_burst = qp->cyc[DPV_CYC_BURST];
	c->cycles_complete = qp->cyc[DPV_CYC_COMPLETE];
	c->cycles_recv_post = qp->cyc[DPV_CYC_RECV_POST];
	c->tsc_hz = rte_get_tsc_hz();
	dpv__qp_unlock_ctl(qp);
	return 0;
}

DPV_EXPORT int dpv_query_cq_counters(struct ibv_cq *ibcq, struct dpv_cq_counters *c)
{
	struct dpv_cq *cq = to_dcq(ibcq);

	DPV_FORK_REFUSE(ENODEV);
	if (cq == NULL || c == NULL)
		return EINVAL;
	memset(c, 0, sizeof(*c));
	pthread_mutex_lock(&cq->qps_lock);
	c->nb_qp = (uint32_t)cq->nb_qp;
	pthread_mutex_unlock(&cq->qps_lock);
	dpv__spinlock_lock(&cq->lock);
	c->size = (uint32_t)cq->ibcq.cqe;
	c->pending = (cq->tail + cq->size - cq->head) % cq->size;
	c->armed = cq->armed;
	c->overrun = cq->overrun;
	c->cycles_poll = cq->cyc_poll;
	c->polled = cq->polled;
	dpv__spinlock_unlock(&cq->lock);
	return 0;
}
