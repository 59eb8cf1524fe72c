/* Progress does not depend on which CQ the application polls: polling any CQ of a context,
 * or waiting in ibv_get_cq_event, progresses every QP of that context (transmit reaping and
 * completions, and later transport timers) and receives what its device's port has. A send
 * completion therefore never waits for the application to poll some other CQ (a zero-copy
 * frame looped back on net_ring is freed only when the port's receive side takes it). */
#include <rte_mbuf.h>

#include "verbs_priv.h"

#define RX_BURST 32
/* room for a burst and, with fault injection, its duplicates and released frames */
#define RX_ROOM (2 * RX_BURST)
_Static_assert(RX_ROOM <= 64, "port_rx's taken mask has 64 bits");

void dpv__context_qp_add(struct dpv_context *ctx, struct dpv_qp *qp)
{
	dpv__spinlock_lock(&ctx->qps_lock);
	TAILQ_INSERT_TAIL(&ctx->qps, qp, ctx_next);
	dpv__spinlock_unlock(&ctx->qps_lock);
}

void dpv__context_qp_del(struct dpv_context *ctx, struct dpv_qp *qp)
{
	dpv__spinlock_lock(&ctx->qps_lock);
	TAILQ_REMOVE(&ctx->qps, qp, ctx_next);
	dpv__spinlock_unlock(&ctx->qps_lock);
}

/* A burst of the port's frames to each transport (dpv_rx_transports), then freed in bulk.
 * One receiver at a time: a thread that finds the port busy does not wait. A port nobody
 * receives from is not polled. */
void dpv__port_rx_poll(struct dpv_device *dev)
{
	struct rte_mbuf *frames[RX_ROOM];
	uint16_t n;

	if (__atomic_load_n(&dev->rx_users, __ATOMIC_RELAXED) == 0 ||
	    !dpv__spinlock_trylock(&dev->rx_lock))
		return;
	n = dev->ops->rx_burst(dev->port, frames, RX_BURST);
	if (unlikely(__atomic_load_n(&dev->fault_on[0], __ATOMIC_RELAXED))) {
		n = dpv__fault_apply(&dev->fault[0], frames, n, RX_ROOM, NULL);
		if (!dpv__fault_rates_on(&dev->fault[0].r) && dev->fault[0].nb_held == 0)
			__atomic_store_n(&dev->fault_on[0], false, __ATOMIC_RELAXED);
	}
	if (n > 0) {
		uint64_t taken = 0;

		for (int i = 0; dpv_rx_transports[i] != NULL; i++)
			dpv_rx_transports[i]->port_rx(dev, frames, n, &taken);
		dev->rx_frames += n;
	}
	dpv__spinlock_unlock(&dev->rx_lock);
	if (n > 0)
		rte_pktmbuf_free_bulk(frames, n);
}

/* A QP in a thread domain has no lock: its application promised that one thread at a time
 * uses it, and that covers its own CQs only. Another thread polling an unrelated CQ of the
 * context must not progress it. */
static bool may_progress(const struct dpv_qp *qp, const struct dpv_cq *cq,
			 const struct ibv_comp_channel *ch)
{
	if (!qp->lockless)
		return true;
	if (cq != NULL)
		return qp->scq == cq || qp->rcq == cq;
	return ch != NULL && (qp->scq->ibcq.channel == ch || qp->rcq->ibcq.channel == ch);
}

void dpv__context_progress(struct dpv_context *ctx, const struct dpv_cq *cq,
			  const struct ibv_comp_channel *ch)
{
	struct dpv_qp *qp;

	dpv__spinlock_lock(&ctx->qps_lock);
	TAILQ_FOREACH(qp, &ctx->qps, ctx_next) {
		/* every WR posted has completed: nothing to do (a racy look: what a post adds at
		 * this moment is seen by the next poll, and the post itself progresses it); a
		 * service-mode QP's service lcore does this (the look at its cursor would cost a
		 * cache line from that core per poll), unless it gets no CPU */
		if ((!qp->service && __atomic_load_n(&qp->sq.done, __ATOMIC_RELAXED) ==
				     __atomic_load_n(&qp->sq.head, __ATOMIC_RELAXED)) ||
		    !may_progress(qp, cq, ch))
			continue;
		/* a QP another thread holds is being posted to (or changed): that thread
		 * progresses it; waiting here would stall this poll's receive side behind it */
		if (!dpv__qp_trylock(qp))
			continue;
		if (!qp->service)
			qp->ops->progress(qp);
		else
			dpv__service_qp_help(qp);
		dpv__qp_unlock(qp);
	}
	dpv__spinlock_unlock(&ctx->qps_lock);
	if (__atomic_load_n(&ctx->dev->rx_users, __ATOMIC_RELAXED) != 0)
		dpv__port_rx_poll(ctx->dev);
	dpv__timers_poll(&ctx->dev->timers);
}
