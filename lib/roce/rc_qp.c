/* SPDX-License-Identifier: BSD-3-Clause */
/* The RC and UC transports over RoCEv2: the ops table, the attributes of each transition
 * (checked, kept for ibv_query_qp, given to the engine), what each state sets up, and the
 * QP's timer. The path is resolved when RTR's address vector is given (dpv__roce_resolve may
 * ask ARP/ND: ibv_modify_qp fails with EHOSTUNREACH when nobody answers); the engine is set
 * up at INIT -> RTR with the responder's attributes, given the requester's at RTR -> RTS,
 * told ERR (everything flushed) and freed at RESET. Direct progress only: the posting thread
 * and the receive side drive the engine under the QP's lock, the timer does the rest. */
#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "roce_port.h"
#include "roce_rc.h"

/* ---- the clock and the timer ---- */

uint64_t dpv__rc_now(void)
{
	uint64_t tsc = rte_rdtsc(), hz = rte_get_tsc_hz();

	return tsc / hz * 1000000000ull + tsc % hz * 1000000000ull / hz;
}

static uint64_t ns_to_tsc(uint64_t ns)
{
	uint64_t hz = rte_get_tsc_hz();

	return ns / 1000000000ull * hz + ns % 1000000000ull * hz / 1000000000ull;
}

/* A QP's timer lives in a record that is never freed (recycled): the timer list may still
 * hand a record to its callback after the QP is gone; the callback then finds no QP. */
struct dpv_rc_timer {
	struct dpv_timer t;
	struct dpv_qp *qp;               /* NULL: free (under timers_lock) */
	struct dpv_device *dev;
	struct dpv_rc_timer *next_free;
};

static dpv_spinlock_t timers_lock = DPV_SPINLOCK_INITIALIZER;
static struct dpv_rc_timer *timers_free;

static void timer_fire(struct dpv_timer *t, void *arg)
{
	struct dpv_rc_timer *rec = arg;
	struct dpv_qp *qp;

	dpv__spinlock_lock(&timers_lock);
	qp = rec->qp;
	if (qp != NULL)
		dpv__qp_lock(qp);        /* destroy waits for it after it let go of the record */
	dpv__spinlock_unlock(&timers_lock);
	if (qp == NULL)
		return;
	if (to_rcqp(qp)->eng_on) {
		dpv__rc_feed_rq(qp);
		dpv__rc_tick(&to_rcqp(qp)->eng, dpv__rc_now());
		dpv__rc_after(qp);
	}
	dpv__qp_unlock(qp);
}

static struct dpv_rc_timer *timer_get(struct dpv_qp *qp)
{
	struct dpv_rc_timer *rec;

	dpv__spinlock_lock(&timers_lock);
	rec = timers_free;
	if (rec != NULL)
		timers_free = rec->next_free;
	dpv__spinlock_unlock(&timers_lock);
	if (rec == NULL && (rec = calloc(1, sizeof(*rec))) == NULL)
		return NULL;
	dpv__timer_init(&rec->t, timer_fire, rec);
	rec->dev = qp->ctx->dev;
	__atomic_store_n(&rec->qp, qp, __ATOMIC_RELEASE);
	return rec;
}

static void timer_put(struct dpv_rc_timer *rec)
{
	dpv__timer_cancel(&rec->dev->timers, &rec->t);
	dpv__spinlock_lock(&timers_lock);
	rec->qp = NULL;
	rec->next_free = timers_free;
	timers_free = rec;
	dpv__spinlock_unlock(&timers_lock);
}

void dpv__rc_timer_update(struct dpv_qp *qp)
{
	struct dpv_rc_qp *rq = to_rcqp(qp);
	struct dpv_rc_timer *rec = rq->timer;
	uint64_t d = rq->ntx != 0 ? 0 : rq->eng_on ? dpv__rc_next_deadline(&rq->eng) : DPV_RC_NEVER;

	if (d == DPV_RC_NEVER) {
		if (dpv__timer_armed(&rec->t))
			dpv__timer_cancel(&rec->dev->timers, &rec->t);
		return;
	}
	/* 0: at the next progress; an allocation failure leaves it to the next call */
	(void)dpv__timer_arm(&rec->dev->timers, &rec->t, d == 0 ? rte_rdtsc() : ns_to_tsc(d));
}

/* ---- creation ---- */

static void rc_free(struct dpv_rc_qp *rq)
{
	free(rq->sge);
	free(rq->nsge);
	free(rq->inl);
	free(rq);
}

static int rc_create(struct dpv_qp *qp, struct ibv_qp_init_attr_ex *a)
{
	struct dpv_rc_qp *rq;
	size_t slots = qp->sq.size;
	int rc;

	rc = dpv__device_loop_init(qp->ctx->dev);
	if (rc != 0)
		return rc;
	rq = calloc(1, sizeof(*rq));
	if (rq == NULL)
		return -ENOMEM;
	rq->sge = calloc(slots * qp->sq.max_sge, sizeof(*rq->sge));
	rq->nsge = calloc(slots, sizeof(*rq->nsge));
	rq->inl = qp->cap.max_inline_data ? malloc(slots * qp->cap.max_inline_data) : NULL;
	qp->priv = rq;
	rq->timer = rq->sge && rq->nsge && (rq->inl || !qp->cap.max_inline_data) ?
		    timer_get(qp) : NULL;
	if (rq->timer == NULL) {
		rc_free(rq);
		qp->priv = NULL;
		return -ENOMEM;
	}
	qp->lim.ip_csum = false;
	qp->lim.frame_sends = false;
	/* XRC QPs receive only into the XRC SRQs their requests name: ibv_post_recv refuses */
	qp->no_rq = qp->type == IBV_QPT_XRC_SEND || qp->type == IBV_QPT_XRC_RECV;
	/* its timer and the receive side run on other threads than the application's: a QP in
	 * a thread domain keeps its lock all the same */
	qp->lockless = false;
	qp->post_send = dpv__rc_post_send_list;
	__atomic_fetch_add(&qp->ctx->dev->roce->qps, 1, __ATOMIC_RELEASE);
	return 0;
}

/* The protocol engine's counters of @qp, at debug level when its engine goes (destroy, RESET):
 * what a user who sees a retry or RNR error needs to tell loss from a peer that answers late. */
static void rc_log_stats(const struct dpv_qp *qp, const struct dpv_rc_qp *rq)
{
	const struct dpv_rc_stats *st = &rq->eng.stats;

	VERBS_LOG(DEBUG, "QP %u: %" PRIu64 " packets sent, %" PRIu64 " received, %" PRIu64
		  " retransmitted, %" PRIu64 " timeouts, sequence NAKs %" PRIu64 " sent %"
		  PRIu64 " received, RNR NAKs %" PRIu64 " sent %" PRIu64 " received, %" PRIu64
		  " implied NAKs, %" PRIu64 " duplicates, %" PRIu64 " dropped, %" PRIu64
		  " tx stalls", qp->ibqp.qp_num, st->pkts_sent, st->pkts_rcvd,
		  st->retransmits, st->timeouts, st->seq_naks_sent, st->seq_naks_rcvd,
		  st->rnr_naks_sent, st->rnr_naks_rcvd, st->implied_naks, st->dup_requests,
		  st->dropped, st->tx_stalls);
	VERBS_LOG(DEBUG, "QP %u: requester next PSN %#x, highest sent %#x, oldest unacked %#x, "
		  "retries left %u%s; responder expects %#x, acknowledged %#x%s%s%s",
		  qp->ibqp.qp_num, rq->eng.req.psn, rq->eng.req.sent_max, rq->eng.comp.psn,
		  rq->eng.comp.retry_left, rq->eng.err ? ", in error" : "", rq->eng.resp.psn,
		  rq->eng.resp.ack_psn, rq->eng.resp.rd != NULL ? ", answering a READ" : "",
		  rq->eng.resp.nak_sent ? ", sequence NAK sent" : "",
		  rq->eng.resp.in_msg ? ", inside a message" : "");
}

static void rc_destroy(struct dpv_qp *qp)
{
	struct dpv_rc_qp *rq = to_rcqp(qp);

	if (rq == NULL)
		return;
	timer_put(rq->timer);
	dpv__qp_lock(qp);                /* a timer callback that found the QP is done */
	dpv__qp_unlock(qp);
	dpv__roce_rx_user(qp, &rq->rx_user, false);
	dpv__mw_qp_gone(qp);             /* its type 2 windows (IBA: invalidated with it) */
	DPV_REF_PUT(&qp->ctx->dev->roce->qps);
	if (rq->eng_on) {
		rc_log_stats(qp, rq);
		dpv__rc_fini(&rq->eng);
	}
	dpv__rc_tx_drop(qp);
	dpv__roce_txh_close(qp);
	rc_free(rq);
	qp->priv = NULL;
}

/* ---- attributes ---- */

#define REMOTE_ACCESS (IBV_ACCESS_REMOTE_WRITE | IBV_ACCESS_REMOTE_READ | \
		       IBV_ACCESS_REMOTE_ATOMIC)

static int check_attrs(struct dpv_qp *qp, const struct ibv_qp_attr *a, int mask)
{
	if ((mask & IBV_QP_ACCESS_FLAGS) &&
	    (a->qp_access_flags & ~(unsigned int)(REMOTE_ACCESS | IBV_ACCESS_LOCAL_WRITE)))
		return -EINVAL;
	if ((mask & IBV_QP_PATH_MTU) && dpv__roce_mtu_bytes(a->path_mtu) == 0)
		return -EINVAL;
	if ((mask & IBV_QP_DEST_QPN) && a->dest_qp_num > DPV_ROCE_QPN_MASK)
		return -EINVAL;
	if ((mask & IBV_QP_TIMEOUT) && a->timeout > 31)
		return -EINVAL;
	if ((mask & IBV_QP_RETRY_CNT) && a->retry_cnt > 7)
		return -EINVAL;
	if ((mask & IBV_QP_RNR_RETRY) && a->rnr_retry > 7)
		return -EINVAL;
	if ((mask & IBV_QP_MIN_RNR_TIMER) && a->min_rnr_timer > 31)
		return -EINVAL;
	if ((mask & IBV_QP_MAX_QP_RD_ATOMIC) && a->max_rd_atomic > DPV_MAX_RD_ATOM)
		return -EINVAL;
	if ((mask & IBV_QP_MAX_DEST_RD_ATOMIC) && a->max_dest_rd_atomic > DPV_MAX_RD_ATOM)
		return -EINVAL;
	if ((mask & IBV_QP_ALT_PATH) || (mask & IBV_QP_PATH_MIG_STATE))
		return -EOPNOTSUPP;              /* no alternate path */
	if ((mask & IBV_QP_AV) && qp->state == IBV_QPS_SQD)
		return -EOPNOTSUPP;              /* a new path for a live QP: not yet */
	return 0;
}

static void engine_config(struct dpv_qp *qp, struct dpv_rc_config *c);

static int rc_modify(struct dpv_qp *qp, const struct ibv_qp_attr *a, int mask)
{
	struct dpv_rc_qp *rq = to_rcqp(qp);
	struct ibv_qp_attr *k = &rq->attr;
	int rc = check_attrs(qp, a, mask);

	if (rc == 0 && (mask & IBV_QP_AV)) {
		struct dpv_ah av = { 0 };

		rc = dpv__roce_av_resolve(qp->ctx->dev, &a->ah_attr, &av);
		if (rc == 0 && av.mcast)
			rc = -EINVAL;            /* a connection to a group */
		if (rc == 0) {
			rq->av = av;
			k->ah_attr = a->ah_attr;
		}
	}
	if (rc != 0)
		return rc;
	if (mask & IBV_QP_ACCESS_FLAGS)
		k->qp_access_flags = a->qp_access_flags;
	if (mask & IBV_QP_PATH_MTU)
		k->path_mtu = a->path_mtu;
	if (mask & IBV_QP_DEST_QPN)
		k->dest_qp_num = a->dest_qp_num;
	if (mask & IBV_QP_RQ_PSN)
		k->rq_psn = a->rq_psn & DPV_ROCE_PSN_MASK;
	if (mask & IBV_QP_SQ_PSN)
		k->sq_psn = a->sq_psn & DPV_ROCE_PSN_MASK;
	if (mask & IBV_QP_TIMEOUT)
		k->timeout = a->timeout;
	if (mask & IBV_QP_RETRY_CNT)
		k->retry_cnt = a->retry_cnt;
	if (mask & IBV_QP_RNR_RETRY)
		k->rnr_retry = a->rnr_retry;
	if (mask & IBV_QP_MIN_RNR_TIMER)
		k->min_rnr_timer = a->min_rnr_timer;
	if (mask & IBV_QP_MAX_QP_RD_ATOMIC)
		k->max_rd_atomic = a->max_rd_atomic;
	if (mask & IBV_QP_MAX_DEST_RD_ATOMIC)
		k->max_dest_rd_atomic = a->max_dest_rd_atomic;
	if (rq->eng_on) {                /* RTR/RTS -> RTS: what the responder reads each time */
		rq->eng.cfg.access = k->qp_access_flags & REMOTE_ACCESS;
		rq->eng.cfg.min_rnr_timer = k->min_rnr_timer;
	}
	if (rq->eng_on && qp->state == IBV_QPS_SQD &&
	    (mask & (IBV_QP_TIMEOUT | IBV_QP_RETRY_CNT | IBV_QP_RNR_RETRY |
		     IBV_QP_MAX_QP_RD_ATOMIC))) {
		struct dpv_rc_config c;      /* SQD -> SQD: the requester's new limits */

		engine_config(qp, &c);
		return dpv__rc_set_retry(&rq->eng, &c);
	}
	return 0;
}

static void rc_query(struct dpv_qp *qp, struct ibv_qp_attr *a)
{
	const struct ibv_qp_attr *k = &to_rcqp(qp)->attr;

	a->qp_access_flags = k->qp_access_flags;
	a->path_mtu = k->path_mtu;
	a->dest_qp_num = k->dest_qp_num;
	a->rq_psn = k->rq_psn;
	a->sq_psn = k->sq_psn;
	a->ah_attr = k->ah_attr;
	a->timeout = k->timeout;
	a->retry_cnt = k->retry_cnt;
	a->rnr_retry = k->rnr_retry;
	a->min_rnr_timer = k->min_rnr_timer;
	a->max_rd_atomic = k->max_rd_atomic;
	a->max_dest_rd_atomic = k->max_dest_rd_atomic;
	a->path_mig_state = IBV_MIG_MIGRATED;
}

/* ---- states ---- */

static void engine_config(struct dpv_qp *qp, struct dpv_rc_config *c)
{
	const struct ibv_qp_attr *k = &to_rcqp(qp)->attr;
	int port_mtu = dpv__roce_active_mtu(qp->ctx->dev->caps.mtu);

	*c = (struct dpv_rc_config){
		.uc = qp->type == IBV_QPT_UC,
		.xrc = qp->type == IBV_QPT_XRC_SEND || qp->type == IBV_QPT_XRC_RECV,
		.mtu = dpv__roce_mtu_bytes(RTE_MIN((int)k->path_mtu, port_mtu)),
		.qpn = qp->ibqp.qp_num,
		.dest_qpn = k->dest_qp_num,
		.sq_psn = k->sq_psn,
		.rq_psn = k->rq_psn,
		.pkey = DPV_ROCE_PKEY_DEFAULT,
		.timeout = k->timeout,
		.retry_cnt = k->retry_cnt,
		.rnr_retry = k->rnr_retry,
		.min_rnr_timer = k->min_rnr_timer,
		.max_rd_atomic = k->max_rd_atomic,
		.max_dest_rd_atomic = k->max_dest_rd_atomic,
		.access = k->qp_access_flags & REMOTE_ACCESS,
		.max_send_wr = RTE_MAX(qp->sq.max_wr, 1u),
		.max_recv_wr = RTE_MAX(qp->rq.max_wr, 1u),
	};
}

static int rc_prepare_state(struct dpv_qp *qp, enum ibv_qp_state next)
{
	struct dpv_rc_qp *rq = to_rcqp(qp);
	struct dpv_rc_config c;
	int rc = 0;

	if (next != IBV_QPS_RESET && next != IBV_QPS_ERR)
		rc = dpv__roce_txh_open(qp);
	if (rc != 0)
		return rc;
	if (qp->state == IBV_QPS_INIT && next == IBV_QPS_RTR) {
		engine_config(qp, &c);
		if (c.mtu == 0)
			return -EINVAL;          /* the port's MTU is below 256 */
		rc = dpv__rc_init(&rq->eng, &c, &dpv_rc_verbs_ops, qp);
		if (rc != 0)
			return rc;
		rq->eng_on = true;
		rq->av.path.sport = dpv__roce_udp_sport(rq->av.path.flow_label,
							 qp->ibqp.qp_num, c.dest_qpn);
	}
	if (qp->state == IBV_QPS_RTR && next == IBV_QPS_RTS) {
		engine_config(qp, &c);
		rc = dpv__rc_set_requester(&rq->eng, &c);
		if (rc != 0)
			return rc;
	}
	/* SQD: no new WR starts; back in RTS the queue goes on (what was posted meanwhile) */
	if (rq->eng_on && (next == IBV_QPS_SQD || qp->state == IBV_QPS_SQD) &&
	    next != IBV_QPS_ERR && next != IBV_QPS_RESET) {
		dpv__rc_set_sqd(&rq->eng, next == IBV_QPS_SQD, dpv__rc_now());
		dpv__rc_timer_update(qp);
	}
	dpv__roce_rx_user(qp, &rq->rx_user, next != IBV_QPS_RESET);
	return 0;
}

/* Send WRs the engine never saw (posted in ERR before RTR) complete flushed. */
static void flush_unreleased(struct dpv_qp *qp)
{
	struct dpv_sq *sq = &qp->sq;

	for (uint32_t i = sq->done; i != sq->sent; i++) {
		struct dpv_wqe *w = &sq->wqe[i & sq->mask];

		if (!w->released) {
			w->status = IBV_WC_WR_FLUSH_ERR;
			dpv__wqe_release(w);
		}
	}
}

static void rc_flush(struct dpv_qp *qp)
{
	struct dpv_rc_qp *rq = to_rcqp(qp);

	if (rq->eng_on && !rq->eng.err)
		dpv__rc_set_error(&rq->eng);     /* every WR and fed receive WQE, in order */
	flush_unreleased(qp);
	dpv__sq_complete(qp);
	dpv__rc_timer_update(qp);
	dpv__rc_xrc_unbind(qp, false);   /* XRC_RECV: the WQE it held is flushed */
}

static bool rc_reset(struct dpv_qp *qp)
{
	struct dpv_rc_qp *rq = to_rcqp(qp);

	if (rq->eng_on) {
		rc_log_stats(qp, rq);
		dpv__rc_fini(&rq->eng);
		rq->eng_on = false;
	}
	rq->failed = false;
	dpv__rc_tx_drop(qp);
	dpv__rc_xrc_unbind(qp, true);    /* what it held is forgotten */
	dpv__rc_timer_update(qp);
	for (uint32_t i = qp->sq.done; i != qp->sq.sent; i++)
		dpv__wqe_put_mrs(&qp->sq.wqe[i & qp->sq.mask]);
	dpv__sq_clear(&qp->sq);
	rq->rq_fed = 0;
	return true;
}

static void rc_progress(struct dpv_qp *qp)
{
	dpv__sq_complete(qp);
}

static bool rc_sq_drained(struct dpv_qp *qp)
{
	struct dpv_rc_qp *rq = to_rcqp(qp);

	return !rq->eng_on || dpv__rc_sq_drained(&rq->eng);
}

/* A packet the RoCE demux (roce_rx.c) found for @qp; its answers wait for rx_done. */
static int rc_deliver(struct dpv_qp *qp, const uint8_t *f, const void *fr,
		      struct dpv_cqe_batch *b)
{
	return dpv__rc_deliver(qp, f, fr);
}

static int rc_mcast(struct dpv_qp *qp, const union ibv_gid *gid, bool attach)
{
	return gid == NULL ? 0 : -EINVAL;        /* groups are UD's */
}

static const struct dpv_transport_ops dpv_rc_transport = {
	.name = "rc",
	.create = rc_create,
	.destroy = rc_destroy,
	.prepare_state = rc_prepare_state,
	.post_send = dpv__rc_post_send_list,
	.progress = rc_progress,
	.flush = rc_flush,
	.reset = rc_reset,
	.mcast = rc_mcast,
	.service = false,
	.modify = rc_modify,
	.query = rc_query,
	.sq_drained = rc_sq_drained,
	.deliver = rc_deliver,
	.rx_done = dpv__rc_rx_done,
};

/* One transport, four types: XRC_SEND has no receive side, XRC_RECV no queues of its own. */
static const struct dpv_qp_type rc_types[] = {
	{ IBV_QPT_RC, 0, 4, &dpv_rc_transport },
	{ IBV_QPT_UC, 0, 4, &dpv_rc_transport },
	{ IBV_QPT_XRC_SEND, DPV_QPT_NO_RECV, 4, &dpv_rc_transport },
	{ IBV_QPT_XRC_RECV, DPV_QPT_XRC_TARGET, 4, &dpv_rc_transport },
};
DPV_QP_TYPES_REGISTER(rc, rc_types)
