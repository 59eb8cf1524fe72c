/* SPDX-License-Identifier: BSD-3-Clause */
/* Progress does not depend on which CQ the application polls: polling any CQ of a context,
 * or waiting in ibv_get_cq_event, progresses every QP of that context (transmit reaping and
 * completions, and later transport timers) and receives what its device's port has. A send
 * completion therefore never waits for the application to poll some other CQ (a zero-copy
 * frame looped back on net_ring is freed only when the port's receive side takes it). The
 * port's receive queues are polled each by one thread at a time (dpv__rxq_poll); polling a CQ
 * keeps to the queues that feed it and those no other thread polls (cq_rx_poll). */
#include <errno.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include <stdio.h>

#include <rte_mbuf.h>
#include <rte_ring.h>

#include "dpv_engine.h"
#include "verbs_base.h"
#include "verbs_device.h"
#include "verbs_cq.h"
#include "verbs_qp.h"
#include "verbs_progress.h"
#include "verbs_transport.h"

#define RX_BURST DPV_RX_BURST
/* room for a burst and, with fault injection, its duplicates and released frames */
#define RX_ROOM DPV_RX_MAX
_Static_assert(RX_ROOM <= 64 && RX_ROOM >= 2 * RX_BURST, "a receiver's taken mask has 64 bits");
#define LOOP_RING 1024
#define LOOP_BURST (RX_BURST / 2)   /* the port's own frames get the rest of a burst */

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

int dpv__device_loop_init(struct dpv_device *dev)
{
	static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
	char name[RTE_RING_NAMESIZE];
	struct rte_ring *r;
	int rc = 0;

	pthread_mutex_lock(&lock);
	if (__atomic_load_n(&dev->loop, __ATOMIC_ACQUIRE) == NULL) {
		snprintf(name, sizeof(name), "dpv_loop_%p", (void *)dev);
		/* HTS sync (C11 atomics in the inline ring code): senders of any thread, receivers
		 * of any thread in turn; ThreadSanitizer sees its ordering, which the default mode's
		 * inline assembly hides */
		r = rte_ring_create(name, LOOP_RING, dev->caps.socket_id,
				    RING_F_MP_HTS_ENQ | RING_F_MC_HTS_DEQ);
		if (r != NULL)
			__atomic_store_n(&dev->loop, r, __ATOMIC_RELEASE);
		else
			rc = -ENOMEM;
	}
	pthread_mutex_unlock(&lock);
	return rc;
}

unsigned int dpv__device_loopback(struct dpv_device *dev, struct rte_mbuf **m, unsigned int n)
{
	struct rte_ring *r = __atomic_load_n(&dev->loop, __ATOMIC_ACQUIRE);
	unsigned int took;

	if (r == NULL)
		return 0;
#ifdef DPV_TSAN
	/* An HTS producer waits on the ring's 64-bit head/tail word, which the previous producer
	 * released by a 32-bit store to its tail half: correct on the CPU, but TSan keys
	 * synchronization by address and misses it (a false race in __rte_ring_dequeue_elems).
	 * Under TSan only, producers take turns on a lock it sees. */
	dpv__spinlock_lock(&dev->loop_lock);
#endif
	took = rte_ring_enqueue_burst(r, (void **)m, n, NULL);
#ifdef DPV_TSAN
	dpv__spinlock_unlock(&dev->loop_lock);
#endif
	/* a port's frames to itself raise no interrupt; a port someone else polls is left to
	 * them (no syscall per burst) */
	if (took > 0 && __atomic_load_n(&dev->progress_owned, __ATOMIC_RELAXED))
		dpv__progress_kick();
	return took;
}

void dpv__device_loop_fini(struct dpv_device *dev)
{
	struct rte_ring *r = dev->loop;
	void *m;

	if (r == NULL)
		return;
	while (rte_ring_dequeue(r, &m) == 0)
		rte_pktmbuf_free(m);
	rte_ring_free(r);
	dev->loop = NULL;
}

int dpv__device_rx_init(struct dpv_device *dev)
{
	uint16_t nb_tx, nb_rx;

	dev->ops->port_queues(dev->port, &nb_tx, &nb_rx);
	nb_rx = RTE_MAX(nb_rx, (uint16_t)1);
	if (dev->rxqs != NULL && dev->nb_rxq == nb_rx)
		return 0;                      /* the port started again as before */
	free(dev->rxqs);                   /* no context open: nobody polls */
	dev->nb_rxq = 0;
	dev->rxqs = aligned_alloc(RTE_CACHE_LINE_SIZE, nb_rx * sizeof(*dev->rxqs));
	if (dev->rxqs == NULL)
		return -ENOMEM;
	memset(dev->rxqs, 0, nb_rx * sizeof(*dev->rxqs));
	for (uint16_t q = 0; q < nb_rx; q++) {
		dpv__spinlock_init(&dev->rxqs[q].lock);
		dev->rxqs[q].id = q;
	}
	__atomic_store_n(&dev->nb_rxq, nb_rx, __ATOMIC_RELEASE);
	return 0;
}

void dpv__device_rx_stats(struct dpv_device *dev, uint64_t *frames, uint64_t *unsteered,
			  uint64_t *no_wqe, uint64_t *cyc)
{
	*frames = 0;
	*unsteered = __atomic_load_n(&dev->rx_unsteered, __ATOMIC_RELAXED);
	*no_wqe = __atomic_load_n(&dev->rx_no_wqe, __ATOMIC_RELAXED);
	for (int s = 0; s < DPV_RXC_STAGES; s++)
		cyc[s] = 0;
	for (uint16_t i = 0; i < __atomic_load_n(&dev->nb_rxq, __ATOMIC_ACQUIRE); i++) {
		const struct dpv_rxq *q = &dev->rxqs[i];

		*frames += __atomic_load_n(&q->frames, __ATOMIC_RELAXED);
		*unsteered += __atomic_load_n(&q->unsteered, __ATOMIC_RELAXED);
		*no_wqe += __atomic_load_n(&q->no_wqe, __ATOMIC_RELAXED);
		for (int s = 0; s < DPV_RXC_STAGES; s++)
			cyc[s] += __atomic_load_n(&q->cyc[s], __ATOMIC_RELAXED);
	}
}

uint32_t dpv__device_rx_polls(struct dpv_device *dev)
{
	uint32_t sum = 0;

	for (uint16_t i = 0; i < __atomic_load_n(&dev->nb_rxq, __ATOMIC_ACQUIRE); i++)
		sum += __atomic_load_n(&dev->rxqs[i].polls, __ATOMIC_RELAXED);
	return sum;
}

/* The mbufs of a received burst freed: those the receive path leaves as the port gave them
 * (one segment, a direct buffer, no other reference: the common case) go back to their pool
 * in one put, the rest through rte_pktmbuf_free (a chain, an attached or shared buffer). What
 * rte_pktmbuf_free_bulk does, without its per-mbuf bookkeeping for mbufs that need none. */
static void rx_frames_free(struct rte_mbuf **m, unsigned int n)
{
	struct rte_mempool *pool = m[0]->pool;
	uint64_t odd = 0;
	unsigned int k = 0;

	/* first without a branch per mbuf: is every one of them as the port gave it? (refcnt
	 * and nb_segs, side by side, both 1: one 32-bit word) */
	_Static_assert(offsetof(struct rte_mbuf, nb_segs) == offsetof(struct rte_mbuf, refcnt) + 2 &&
		       sizeof(((struct rte_mbuf *)0)->refcnt) == 2 &&
		       sizeof(((struct rte_mbuf *)0)->nb_segs) == 2, "refcnt, then nb_segs");
	for (unsigned int i = 0; i < n; i++) {
		const struct rte_mbuf *x = m[i];
		uint32_t one_one;

		memcpy(&one_one, &x->refcnt, sizeof(one_one));
		odd |= ((uintptr_t)x->pool ^ (uintptr_t)pool) | (uintptr_t)x->next |
		       (x->ol_flags & (RTE_MBUF_F_INDIRECT | RTE_MBUF_F_EXTERNAL)) |
		       (one_one ^ (1u | 1u << 16));
	}
	if (likely(odd == 0)) {
		rte_mempool_put_bulk(pool, (void **)m, n);
		return;
	}
	for (unsigned int i = 0; i < n; i++) {
		struct rte_mbuf *x = m[i];

		if (likely(x->pool == pool && rte_mbuf_refcnt_read(x) == 1 &&
			   RTE_MBUF_DIRECT(x) && x->next == NULL && x->nb_segs == 1))
			m[k++] = x;        /* rte_pktmbuf_prefree_seg would leave it as it is */
		else
			rte_pktmbuf_free(x);
	}
	if (k > 0)
		rte_mempool_put_bulk(pool, (void **)m, k);
}

/* A burst of receive queue @q to each port receiver (verbs_transport.h, in order), then freed in
 * bulk: first, on queue 0, what the port looped back to itself (at most half a burst: taken
 * with one queue's frames, one poller at a time, they are given in the order they were
 * sent), then the queue's frames; receive faults act on them all. One poller per queue: a
 * thread that finds it busy does not wait. Transports that cannot take bursts of several
 * queues at once get them one at a time (rx_lock). */
__thread bool dpv__rx_visiting;

void dpv__rxq_poll(struct dpv_device *dev, struct dpv_rxq *q)
{
	struct rte_mbuf *frames[RX_ROOM];
	struct rte_ring *loop = __atomic_load_n(&dev->loop, __ATOMIC_ACQUIRE);
	uint16_t n = 0, nl;
	uint64_t t;

	if (!dpv__spinlock_trylock(&q->lock))
		return;
	__atomic_store_n(&q->polls, q->polls + 1, __ATOMIC_RELAXED);
	if (q->poller != (uintptr_t)pthread_self() && !dpv__rx_visiting)  /* when it changes */
		__atomic_store_n(&q->poller, (uintptr_t)pthread_self(), __ATOMIC_RELAXED);
	t = dpv__cyc_start();
	if (unlikely(loop != NULL) && q->id == 0)
		n = (uint16_t)rte_ring_dequeue_burst(loop, (void **)frames, LOOP_BURST, NULL);
	nl = n;
	n += dev->ops->rx_burst(dev->port, q->id, frames + n, RX_BURST - n);
	dpv__cyc_lap(&q->cyc[DPV_RXC_BURST], t);
	dpv__count(&q->frames, n - nl);
	if (unlikely(__atomic_load_n(&dev->fault_on[0], __ATOMIC_RELAXED))) {
		/* the device's fault state (frames held back to reorder) one queue at a time */
		dpv__spinlock_lock(&dev->rx_lock);
		n = dpv__fault_apply(&dev->fault[0], frames, n, RX_ROOM, NULL);
		if (!dpv__fault_rates_on(&dev->fault[0].r) && dev->fault[0].nb_held == 0)
			__atomic_store_n(&dev->fault_on[0], false, __ATOMIC_RELAXED);
		dpv__spinlock_unlock(&dev->rx_lock);
	}
	if (n > 0) {
		uint64_t taken = 0;

		for (int i = 0; dpv__port_receivers[i] != NULL; i++) {
			const struct dpv_port_receiver *r = dpv__port_receivers[i];

			if (r->rx_queue != NULL) {
				r->rx_queue(dev, q, frames, n, &taken);
			} else if (r->idle == NULL || !r->idle(dev)) {
				dpv__spinlock_lock(&dev->rx_lock);
				r->rx(dev, frames, n, &taken);
				dpv__spinlock_unlock(&dev->rx_lock);
			}
		}
		t = dpv__cyc_start();
		rx_frames_free(frames, n);
		dpv__cyc_lap(&q->cyc[DPV_RXC_FREE], t);
	}
	dpv__spinlock_unlock(&q->lock);
}

/* Every receive queue of the port, once. A port nobody receives from is not polled. */
void dpv__port_rx_poll(struct dpv_device *dev)
{
	uint16_t nb = __atomic_load_n(&dev->nb_rxq, __ATOMIC_ACQUIRE);

	if (__atomic_load_n(&dev->rx_users, __ATOMIC_RELAXED) == 0)
		return;
	for (uint16_t i = 0; i < nb; i++)
		dpv__rxq_poll(dev, &dev->rxqs[i]);
}

/* Is a receive queue of @dev held by a poller that has made no progress since the last look?
 * That thread was descheduled in the middle of a burst, and the frames it holds may be the
 * very acknowledgements an RC timer would give up waiting for: a local ACK timeout counts
 * only time during which the receive side was served, as a NIC's does (doc/performance.md,
 * "Descheduled pollers"). A thread polling a queue without pause takes its lock again and
 * again (its poll count moves): it never looks stalled for longer than one look. */
static bool rx_stalled(struct dpv_device *dev)
{
	uint16_t nb = __atomic_load_n(&dev->nb_rxq, __ATOMIC_ACQUIRE);
	bool stalled = false;

	for (uint16_t i = 0; i < nb; i++) {
		struct dpv_rxq *q = &dev->rxqs[i];
		uint32_t polls = __atomic_load_n(&q->polls, __ATOMIC_RELAXED);

		if (polls == __atomic_load_n(&q->stall_polls, __ATOMIC_RELAXED))
			stalled |= dpv__spinlock_is_locked(&q->lock);
		else
			__atomic_store_n(&q->stall_polls, polls, __ATOMIC_RELAXED);
	}
	return stalled;
}

unsigned int dpv__device_timers_poll(struct dpv_device *dev)
{
	/* nothing armed (RAW only): one load, as before; with a timer armed the look runs on
	 * every progress, so a stall is seen from its start, not from the next deadline */
	if (__atomic_load_n(&dev->timers.next, __ATOMIC_RELAXED) == UINT64_MAX || rx_stalled(dev))
		return 0;
	return dpv__timers_poll(&dev->timers);
}

/* Polling @cq: the receive queues that fed it lately (its home) and those this thread polls
 * anyway or nobody does; a queue another thread polls is left to it while that thread goes on
 * polling it (its poll count is read, one such queue every round in turn). The home is what
 * the receive path marked in rxq_seen over the last RX_HOME_ROUNDS rounds. So threads whose
 * QPs' flows land on different queues (RSS, or rules steered to queues of their own) keep to
 * their own queues: they read where another thread polls (a line written when that changes)
 * and one poll count per round, but take no lock of another's queue and deliver none of its
 * frames; one thread polling several CQs polls every queue at every round, and a queue whose
 * thread stopped is taken over. A visitor's polls (the progress thread's, a resolve's:
 * dpv__rx_visiting) never make it a queue's poller: a CQ's thread would otherwise leave its
 * queue to a thread that looks only now and then. */
#define RX_HOME_ROUNDS 64

static void cq_rx_poll(struct dpv_device *dev, struct dpv_cq *cq)
{
	unsigned int round = __atomic_load_n(&cq->rx_rounds, __ATOMIC_RELAXED);
	uint64_t home = __atomic_load_n(&cq->rxq_home, __ATOMIC_RELAXED);
	uint16_t nb = __atomic_load_n(&dev->nb_rxq, __ATOMIC_ACQUIRE);
	uintptr_t me = (uintptr_t)pthread_self();

	if (__atomic_load_n(&dev->rx_users, __ATOMIC_RELAXED) == 0)
		return;
	__atomic_store_n(&cq->rx_rounds, round + 1, __ATOMIC_RELAXED);
	if (nb > 64) {
		dpv__port_rx_poll(dev);
		return;
	}
	if (round % RX_HOME_ROUNDS == 0)
		__atomic_store_n(&cq->rxq_home, home = __atomic_exchange_n(&cq->rxq_seen, 0,
									  __ATOMIC_RELAXED),
				 __ATOMIC_RELAXED);
	for (uint16_t i = 0; i < nb; i++) {
		struct dpv_rxq *q = &dev->rxqs[i];
		uintptr_t poller = __atomic_load_n(&q->poller, __ATOMIC_RELAXED);
		uint32_t polls, *last;

		if ((home >> i & 1) || poller == me || poller == 0) {
			dpv__rxq_poll(dev, q);
			continue;
		}
		if (i != round % nb)
			continue;                 /* another thread's: looked at in turn */
		/* still polled since @cq last looked? Else nobody does: take it over */
		polls = __atomic_load_n(&q->polls, __ATOMIC_RELAXED);
		last = &cq->rxq_polls[i];
		if (polls == __atomic_load_n(last, __ATOMIC_RELAXED))
			dpv__rxq_poll(dev, q);
		__atomic_store_n(last, __atomic_load_n(&q->polls, __ATOMIC_RELAXED),
				 __ATOMIC_RELAXED);
	}
}

void dpv__device_rx_quiesce(struct dpv_device *dev)
{
	uint16_t nb = __atomic_load_n(&dev->nb_rxq, __ATOMIC_ACQUIRE);

	for (uint16_t i = 0; i < nb; i++) {
		dpv__spinlock_lock(&dev->rxqs[i].lock);
		dpv__spinlock_unlock(&dev->rxqs[i].lock);
	}
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

void dpv__context_progress(struct dpv_context *ctx, struct dpv_cq *cq,
			  const struct ibv_comp_channel *ch)
{
	struct dpv_qp *qp;

	dpv__spinlock_lock(&ctx->qps_lock);
	TAILQ_FOREACH(qp, &ctx->qps, ctx_next) {
		/* every WR posted has completed: nothing to do (a racy look: what a post adds at
		 * this moment is seen by the next poll, and the post itself progresses it); a
		 * service-mode QP's service lcore does this (the look at its cursor would cost a
		 * cache line from that core per poll), unless it gets no CPU */
		if ((!__atomic_load_n(&qp->service, __ATOMIC_RELAXED) &&
		     __atomic_load_n(&qp->sq.done, __ATOMIC_RELAXED) ==
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
	if (cq != NULL)
		cq_rx_poll(ctx->dev, cq);
	else
		dpv__port_rx_poll(ctx->dev);
	dpv__device_timers_poll(ctx->dev);
}
