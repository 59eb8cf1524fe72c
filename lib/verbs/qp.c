/* SPDX-License-Identifier: BSD-3-Clause */
/* Queue pairs, shared by every QP type: creation (capabilities checked and written back as
 * verbs does), the state machine of ibv_modify_qp, queries and destruction. What a type means
 * on the wire is its transport's (struct dpv_transport_ops, registered with its types); the
 * type is looked up once, at creation, and the core goes by that entry's ops and flags. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "verbs_priv.h"

#define MAX_SGE 30
#define MAX_TSO_HEADER_LIMIT 512

bool dpv_cycles_on;
/* the QP whose control lock this thread holds in modify() (dpv__qp_rx_hold) */
static __thread struct dpv_qp *ctl_qp;

/* Destroyed QPs whose port still held sent buffers: their SQ stays (the buffers' callbacks
 * write into it) until the ports are closed at exit. */
static pthread_mutex_t zombies_lock = PTHREAD_MUTEX_INITIALIZER;
static TAILQ_HEAD(, dpv_qp) zombies = TAILQ_HEAD_INITIALIZER(zombies);

void dpv__qp_zombies_free(void)
{
	struct dpv_qp *qp;

	pthread_mutex_lock(&zombies_lock);
	while ((qp = TAILQ_FIRST(&zombies)) != NULL) {
		TAILQ_REMOVE(&zombies, qp, ctx_next);
		dpv__sq_fini(qp);
		free(qp);
	}
	pthread_mutex_unlock(&zombies_lock);
}

#define KNOWN_COMP_MASK (IBV_QP_INIT_ATTR_PD | IBV_QP_INIT_ATTR_XRCD | \
			 IBV_QP_INIT_ATTR_CREATE_FLAGS | IBV_QP_INIT_ATTR_MAX_TSO_HEADER | \
			 IBV_QP_INIT_ATTR_IND_TABLE | IBV_QP_INIT_ATTR_RX_HASH | \
			 IBV_QP_INIT_ATTR_SEND_OPS_FLAGS)

/* XRC_RECV: an XRC domain, no PD, no CQs, no queues; XRC_SEND: no receive side. */
static int check_xrc_attr(struct dpv_context *ctx, const struct ibv_qp_init_attr_ex *a,
			  const struct dpv_qp_type *t)
{
	bool tgt = t->flags & DPV_QPT_XRC_TARGET;

	if (tgt != !!(a->comp_mask & IBV_QP_INIT_ATTR_XRCD) ||
	    (tgt && (a->xrcd == NULL || a->xrcd->context != &ctx->vctx.context)))
		return -EINVAL;
	if (!tgt && (!(a->comp_mask & IBV_QP_INIT_ATTR_PD) || a->pd == NULL ||
		     a->pd->context != &ctx->vctx.context))
		return -EINVAL;
	if (a->srq != NULL || (!tgt && (a->send_cq == NULL ||
					a->send_cq->context != &ctx->vctx.context)))
		return -EINVAL;
	return 0;
}

static int check_init_attr(struct dpv_context *ctx, const struct ibv_qp_init_attr_ex *a,
			   const struct dpv_qp_type *t)
{
	const struct dpv_config *cfg = dpv__config();
	bool xrc = t != NULL && (t->flags & (DPV_QPT_XRC_TARGET | DPV_QPT_NO_RECV));
	int rc;

	if (a->comp_mask & ~(uint32_t)KNOWN_COMP_MASK)
		return -EINVAL;
	if (!xrc && (!(a->comp_mask & IBV_QP_INIT_ATTR_PD) || a->pd == NULL ||
		     a->pd->context != &ctx->vctx.context || (a->comp_mask & IBV_QP_INIT_ATTR_XRCD)))
		return -EINVAL;
	if (a->comp_mask & (IBV_QP_INIT_ATTR_IND_TABLE | IBV_QP_INIT_ATTR_RX_HASH) ||
	    ((a->comp_mask & IBV_QP_INIT_ATTR_CREATE_FLAGS) && a->create_flags != 0))
		return -EOPNOTSUPP;
	if (t == NULL)
		return -EOPNOTSUPP;          /* DRIVER: not (see doc/semantics.md) */
	if (xrc && (rc = check_xrc_attr(ctx, a, t)) != 0)
		return rc;
	if (!xrc && a->srq != NULL && (a->srq->context != &ctx->vctx.context ||
			       to_dsrq(a->srq)->type != IBV_SRQT_BASIC))
		return -EINVAL;
	if (!xrc && (a->send_cq == NULL || a->recv_cq == NULL ||
		     a->send_cq->context != &ctx->vctx.context ||
		     a->recv_cq->context != &ctx->vctx.context))
		return -EINVAL;
	if (a->cap.max_send_wr > cfg->max_qp_wr || a->cap.max_recv_wr > cfg->max_qp_wr ||
	    a->cap.max_send_sge > MAX_SGE || a->cap.max_recv_sge > MAX_SGE ||
	    a->cap.max_inline_data > cfg->max_inline_data)
		return -EINVAL;
	if ((a->comp_mask & IBV_QP_INIT_ATTR_MAX_TSO_HEADER) &&
	    a->max_tso_header > MAX_TSO_HEADER_LIMIT)
		return -EINVAL;
	return 0;
}

/* The QP's own receive ring; with an SRQ, a few slots for the WQEs it takes from there (one
 * per message being received: UD takes one at a time, RC/UC one per SEND under way, RAW one
 * per frame of a burst, DPV_RX_MAX), with the SRQ's scatter entries. */
static int rq_init(struct dpv_qp *qp, struct dpv_pd *pd, const struct ibv_qp_init_attr_ex *a,
		   const struct dpv_qp_type *t)
{
	struct dpv_srq *srq = to_dsrq(a->srq);

	if (t->flags & DPV_QPT_XRC_TARGET)       /* WQEs of the SRQs its requests name */
		return dpv__rq_init(&qp->rq, NULL, DPV_RES_RQ, 4, MAX_SGE);
	if (srq == NULL)
		return dpv__rq_init(&qp->rq, pd, DPV_RES_RQ, a->cap.max_recv_wr,
				    RTE_MAX(a->cap.max_recv_sge, 1u));
	qp->srq = srq;
	return dpv__rq_init(&qp->rq, NULL, DPV_RES_RQ, t->srq_wqes, srq->rq.max_sge);
}

static void qp_limits(struct dpv_qp *qp, const struct ibv_qp_init_attr_ex *a)
{
	qp->lim = (struct dpv_wr_limits){
		.qp_type = a->qp_type,
		.max_send_sge = qp->cap.max_send_sge,
		.max_inline_data = qp->cap.max_inline_data,
		.max_tso_header = a->comp_mask & IBV_QP_INIT_ATTR_MAX_TSO_HEADER ?
				  a->max_tso_header : dpv__config()->max_tso_header,
		.max_tso = dpv__device_max_tso(qp->ctx->dev),
		.max_frame = qp->ctx->dev->caps.max_frame,
	};
}

struct ibv_qp *dpv_create_qp_ex(struct ibv_context *context, struct ibv_qp_init_attr_ex *a)
{
	struct dpv_context *ctx = to_dctx(context);
	const struct dpv_qp_type *t = a == NULL ? NULL : dpv__qp_type_find(a->qp_type);
	bool tgt = t != NULL && (t->flags & DPV_QPT_XRC_TARGET);
	struct dpv_pd *pd;
	struct dpv_qp *qp;
	int rc = a == NULL ? -EINVAL : check_init_attr(ctx, a, t), qpn = -1;

	DPV_FORK_REFUSE(NULL);
	if (rc != 0)
		return dpv__fail_ptr(rc);
	pd = tgt ? NULL : to_dpd(a->pd);   /* XRC_RECV: the SRQs' */
	qp = aligned_alloc(RTE_CACHE_LINE_SIZE, RTE_ALIGN_CEIL(sizeof(*qp), RTE_CACHE_LINE_SIZE));
	if (qp != NULL)
		memset(qp, 0, sizeof(*qp));
	if (qp == NULL)
		return dpv__fail_ptr(-ENOMEM);
	qp->ctx = ctx;
	dpv__qp_open_init(qp);
	qp->pd = pd != NULL ? dpv__pd_base(pd) : NULL;
	qp->lockless = pd != NULL && pd->td != NULL;
	if (tgt) {
		qp->xrcd = to_dxrcd(a->xrcd);
		a->cap = (struct ibv_qp_cap){ 0 };      /* no queue of its own to post to */
	}
	dpv__spinlock_init(&qp->lock);
	dpv__spinlock_init(&qp->svc_lock);
	qp->service = dpv__config()->progress == DPV_PROGRESS_SERVICE &&
		      t->ops->service;
	__atomic_store_n(&dpv_cycles_on, dpv__config()->cycle_stats != 0, __ATOMIC_RELAXED);
	qp->type = a->qp_type;
	qp->qpt_flags = t->flags;
	qp->state = IBV_QPS_RESET;
	qp->sq_sig_all = a->sq_sig_all != 0;
	rc = dpv__sq_init(&qp->sq, pd, a->cap.max_send_wr, RTE_MAX(a->cap.max_send_sge, 1u));
	if (rc == 0 && (rc = rq_init(qp, pd, a, t)) != 0)
		dpv__sq_fini(qp);
	if (rc != 0) {
		free(qp);
		return dpv__fail_ptr(rc);
	}
	/* Written back as verbs does: the SQ may hold more than asked. */
	a->cap.max_send_wr = qp->sq.max_wr;
	a->cap.max_send_sge = RTE_MAX(a->cap.max_send_sge, 1u);
	a->cap.max_recv_wr = qp->srq != NULL ? 0 : qp->rq.max_wr;
	a->cap.max_recv_sge = qp->srq != NULL ? 0 : RTE_MAX(a->cap.max_recv_sge, 1u);
	qp->cap = a->cap;
	qp_limits(qp, a);
	qp->scq = to_dcq(a->send_cq);
	qp->rcq = to_dcq(a->recv_cq);
	qp->ops = t->ops;
	qp->post_send = qp->ops->post_send;
	rc = qp->ops->create(qp, a);
	if (rc == 0) {
		if (a->comp_mask & IBV_QP_INIT_ATTR_SEND_OPS_FLAGS)
			rc = dpv__qp_ex_init(qp, a->send_ops_flags);
		/* the last step: from here on the receive side may find it (in RESET) */
		if (rc == 0 && (qpn = dpv__qpn_alloc(ctx->dev, qp)) < 0) {
			rc = qpn;
			dpv__qp_ex_fini(qp);
		}
		if (rc != 0)
			qp->ops->destroy(qp);
	}
	if (rc != 0) {
		dpv__rq_fini(&qp->rq);
		dpv__sq_fini(qp);
		free(qp);
		return dpv__fail_ptr(rc);
	}
	qp->ibqp = (struct ibv_qp){
		.context = context, .qp_context = a->qp_context, .pd = pd != NULL ? a->pd : NULL,
		.send_cq = a->send_cq, .recv_cq = a->recv_cq, .srq = a->srq,
		.qp_num = (uint32_t)qpn,
		.state = IBV_QPS_RESET, .qp_type = a->qp_type,
	};
	qp->ibqp.handle = qp->ibqp.qp_num;
	pthread_mutex_init(&qp->ibqp.mutex, NULL);
	pthread_cond_init(&qp->ibqp.cond, NULL);
	if (qp->scq != NULL)
		dpv__cq_attach_qp(qp->scq);
	if (qp->rcq != NULL && qp->rcq != qp->scq)
		dpv__cq_attach_qp(qp->rcq);
	qp->own_rcq = qp->rcq;
	dpv__context_qp_add(ctx, qp);
	if (qp->srq != NULL)
		__atomic_fetch_add(&qp->srq->users, 1, __ATOMIC_RELEASE);
	if (qp->xrcd != NULL)
		dpv__xrcd_use(qp->xrcd, 1);
	if (pd != NULL) {
		__atomic_fetch_add(&qp->pd->refs, 1, __ATOMIC_RELEASE);
		if (pd != qp->pd)
			__atomic_fetch_add(&pd->refs, 1, __ATOMIC_RELEASE);
	}
	pthread_mutex_lock(&ctx->lock);
	ctx->nb_qp++;
	pthread_mutex_unlock(&ctx->lock);
	dpv__telemetry_qp(qp, true);
	return &qp->ibqp;
}

/* The context's post_send op (ibv_post_send is an inline call of it): the QP's transport. */
int dpv_post_send(struct ibv_qp *ibqp, struct ibv_send_wr *wr, struct ibv_send_wr **bad_wr)
{
	struct dpv_qp *qp = to_dqp(ibqp);
	struct ibv_send_wr *unused;

	if (unlikely(bad_wr == NULL))
		bad_wr = &unused;           /* the man page wants one; a program without is not hurt */
	if (unlikely(wr == NULL)) {
		*bad_wr = NULL;
		return EINVAL;
	}
	if (dpv__fork_child()) {
		*bad_wr = wr;
		return -dpv__fork_refuse();
	}
	return -__atomic_load_n(&qp->post_send, __ATOMIC_RELAXED)(qp, wr, bad_wr);
}

DPV_EXPORT struct ibv_qp *ibv_create_qp(struct ibv_pd *pd, struct ibv_qp_init_attr *attr)
{
	struct ibv_qp_init_attr_ex ex = { 0 };
	struct ibv_qp *qp;

	if (pd == NULL || attr == NULL)
		return dpv__fail_ptr(-EINVAL);
	memcpy(&ex, attr, sizeof(*attr));
	ex.comp_mask = IBV_QP_INIT_ATTR_PD;
	ex.pd = pd;
	qp = dpv_create_qp_ex(pd->context, &ex);
	if (qp != NULL)
		attr->cap = ex.cap;
	return qp;
}

DPV_EXPORT int ibv_destroy_qp(struct ibv_qp *ibqp)
{
	struct dpv_qp *qp = to_dqp(ibqp);
	struct dpv_pd *pd;
	struct dpv_context *ctx;
	bool drained;

	DPV_FORK_NOOP(0);
	if (qp == NULL)
		return EINVAL;
	if (qp->nb_flows != 0)
		return EBUSY;                /* flows steer to it: destroy them first */
	if (dpv__qp_handle_close(qp))    /* a handle of a shared QP others still hold */
		return 0;
	ctx = qp->ctx;
	dpv__telemetry_qp(qp, false);
	qp->ops->mcast(qp, NULL, false);     /* its multicast groups */
	dpv__service_qp_del(qp);             /* the service lcore lets go of it */
	dpv__context_qp_del(ctx, qp);        /* and progress */
	dpv__qpn_free(ctx->dev, qp, ibqp->qp_num);   /* and the receive side */
	dpv__qp_lock_ctl(qp);
	drained = qp->ops->reset(qp);
	dpv__qp_unlock_ctl(qp);
	qp->ops->destroy(qp);            /* XRC_RECV: lets go of the SRQ it was receiving into */
	if (qp->scq != NULL)
		dpv__cq_detach_qp(qp->scq, qp);
	if (qp->own_rcq != NULL && qp->own_rcq != qp->scq)
		dpv__cq_detach_qp(qp->own_rcq, qp);
	dpv__qp_ex_fini(qp);
	pd = to_dpd(ibqp->pd);
	if (qp->srq != NULL)
		DPV_REF_PUT(&qp->srq->users);
	if (qp->xrcd != NULL)
		dpv__xrcd_use(qp->xrcd, -1);
	if (pd != NULL) {
		DPV_REF_PUT(&qp->pd->refs);
		if (pd != qp->pd)
			DPV_REF_PUT(&pd->refs);
	}
	pthread_mutex_lock(&ctx->lock);
	ctx->nb_qp--;
	pthread_mutex_unlock(&ctx->lock);
	/* A port that never gave back its buffers may still call back into the SQ. */
	dpv__rq_fini(&qp->rq);
	if (drained) {
		dpv__sq_fini(qp);
		free(qp);
	} else {
		pthread_mutex_lock(&zombies_lock);
		TAILQ_INSERT_TAIL(&zombies, qp, ctx_next);
		pthread_mutex_unlock(&zombies_lock);
	}
	return 0;
}

/* Attributes this QP type keeps; the state machine table has already said they are allowed
 * (IBV_QP_RATE_LIMIT: RAW_PACKET into or in RTS; @burst the pacer's bucket, 0: default). */
static int apply_attrs(struct dpv_qp *qp, const struct ibv_qp_attr *a, int mask, uint32_t burst)
{
	int rc;

	if ((mask & IBV_QP_PORT) && a->port_num != 1)
		return -EINVAL;
	if ((mask & IBV_QP_PKEY_INDEX) && a->pkey_index != 0)
		return -EINVAL;
	if (mask & IBV_QP_RATE_LIMIT) {
		rc = qp->ops->rate_limit != NULL ?
		     qp->ops->rate_limit(qp, a->rate_limit, burst) : -EINVAL;
		if (rc != 0)
			return rc;
	}
	if (qp->ops->modify != NULL) {
		rc = qp->ops->modify(qp, a, mask);
		if (rc != 0)
			return rc;
	}
	if (mask & IBV_QP_PORT)
		qp->port_num = a->port_num;
	if (mask & IBV_QP_PKEY_INDEX)
		qp->pkey_index = a->pkey_index;
	if (mask & IBV_QP_QKEY)
		qp->qkey = a->qkey;
	if (mask & IBV_QP_SQ_PSN)
		qp->sq_psn = a->sq_psn;
	return 0;
}

static int enter_state(struct dpv_qp *qp, enum ibv_qp_state next)
{
	int rc = qp->ops->prepare_state(qp, next);

	if (rc != 0)
		return rc;
	if (next == IBV_QPS_RESET && qp->state != IBV_QPS_RESET) {
		qp->ops->reset(qp);
		dpv__rq_reset(qp);
		if (qp->scq != NULL)
			dpv__cq_clean(qp->scq, qp);
		if (qp->rcq != NULL && qp->rcq != qp->scq)
			dpv__cq_clean(qp->rcq, qp);
	}
	if (next == IBV_QPS_ERR && qp->state != IBV_QPS_ERR) {
		dpv__qp_set_state(qp, next);
		qp->ops->flush(qp);
		dpv__rq_flush(qp);
		if (qp->srq != NULL || qp->xrcd != NULL)   /* XRC_RECV: from SRQs only */
			dpv__srq_qp_error(qp);
		return 0;
	}
	dpv__qp_set_state(qp, next);
	if (next == IBV_QPS_ERR) {
		qp->ops->flush(qp);
		dpv__rq_flush(qp);
	} else if (next == IBV_QPS_RTS) {
		__atomic_store_n(&qp->sq_draining, false, __ATOMIC_RELAXED);
		qp->ops->progress(qp);   /* WRs queued in SQD go out now */
	} else if (next == IBV_QPS_SQD) {
		qp->ops->progress(qp);   /* drained already: the event at once */
	}
	return 0;
}

void dpv__qp_sqd_check(struct dpv_qp *qp)
{
	struct ibv_async_event ev = { .element.qp = &qp->ibqp,
				      .event_type = IBV_EVENT_SQ_DRAINED };

	dpv__qp_assert_sq_locked(qp);
	if (qp->state != IBV_QPS_SQD) {
		__atomic_store_n(&qp->sq_draining, false, __ATOMIC_RELAXED);
		return;
	}
	if (qp->ops->sq_drained != NULL ? !qp->ops->sq_drained(qp) :
	    __atomic_load_n(&qp->sq.done, __ATOMIC_RELAXED) !=
	    __atomic_load_n(&qp->sq.sent, __ATOMIC_ACQUIRE))
		return;
	__atomic_store_n(&qp->sq_draining, false, __ATOMIC_RELAXED);
	if (qp->sqd_notify)
		dpv__async_event_post(qp->ctx, &ev);
}

void dpv__qp_fail(struct dpv_qp *qp)
{
	dpv__qp_assert_locked(qp);
	dpv__qp_set_state(qp, IBV_QPS_ERR);
	if (qp->service)                 /* the SQ is the service lcore's */
		dpv__spinlock_lock(&qp->svc_lock);
	qp->ops->flush(qp);
	if (qp->service)
		dpv__spinlock_unlock(&qp->svc_lock);
	dpv__rq_flush(qp);
	if (qp->srq != NULL || qp->xrcd != NULL)   /* XRC_RECV: from SRQs only */
		dpv__srq_qp_error(qp);
}

bool dpv__qp_rx_hold(struct dpv_qp *qp)
{
	if (qp == ctl_qp)
		return false;
	dpv__qp_lock(qp);
	return true;
}

static int modify(struct dpv_qp *qp, const struct ibv_qp_attr *attr, int mask, uint32_t burst)
{
	enum ibv_qp_state cur, next;
	int rc;

	dpv__qp_lock_ctl(qp);
	ctl_qp = qp;
	cur = qp->state;
	next = mask & IBV_QP_STATE ? attr->qp_state : cur;
	rc = (mask & IBV_QP_CUR_STATE) && attr->cur_qp_state != cur ? -EINVAL :
	     dpv__qp_check_transition(qp->type, cur, next, mask);
	if (rc == 0)
		rc = apply_attrs(qp, attr, mask, burst);
	if (rc == 0 && cur == IBV_QPS_RTS && next == IBV_QPS_SQD) {
		__atomic_store_n(&qp->sq_draining, true, __ATOMIC_RELAXED);
		qp->sqd_notify = (mask & IBV_QP_EN_SQD_ASYNC_NOTIFY) && attr->en_sqd_async_notify;
	}
	if (rc == 0)
		rc = enter_state(qp, next);
	ctl_qp = NULL;
	dpv__qp_unlock_ctl(qp);
	return rc;
}

DPV_EXPORT int ibv_modify_qp(struct ibv_qp *ibqp, struct ibv_qp_attr *attr, int mask)
{
	struct dpv_qp *qp = dpv__qp_target(ibqp);

	DPV_FORK_REFUSE(ENODEV);
	if (qp == NULL || attr == NULL)
		return EINVAL;
	return -modify(qp, attr, mask, 0);
}

/* ibv_modify_qp_rate_limit(3): IBV_QP_RATE_LIMIT of a QP in RTS (an RTS -> RTS modify, as
 * mlx5 issues it), with the pacer's bucket size; typical_pkt_sz is a hint dpverbs does not
 * need. A burst or packet size without a rate, or comp_mask bits: EINVAL, as mlx5. */
int dpv_modify_qp_rate_limit(struct ibv_qp *ibqp, struct ibv_qp_rate_limit_attr *attr)
{
	struct dpv_qp *qp = dpv__qp_target(ibqp);
	struct ibv_qp_attr a = { 0 };

	DPV_FORK_REFUSE(ENODEV);
	if (qp == NULL || attr == NULL || attr->comp_mask != 0 ||
	    ((attr->max_burst_sz != 0 || attr->typical_pkt_sz != 0) && attr->rate_limit == 0))
		return EINVAL;
	a.rate_limit = attr->rate_limit;
	return -modify(qp, &a, IBV_QP_RATE_LIMIT, attr->max_burst_sz);
}

DPV_EXPORT int ibv_query_qp(struct ibv_qp *ibqp, struct ibv_qp_attr *attr, int attr_mask,
			    struct ibv_qp_init_attr *init_attr)
{
	struct dpv_qp *qp = dpv__qp_target(ibqp);

	DPV_FORK_REFUSE(ENODEV);
	if (qp == NULL || attr == NULL || init_attr == NULL)
		return EINVAL;
	memset(attr, 0, sizeof(*attr));
	memset(init_attr, 0, sizeof(*init_attr));
	dpv__qp_lock_ctl(qp);
	attr->qp_state = attr->cur_qp_state = qp->state;
	attr->port_num = qp->port_num;
	attr->qkey = qp->qkey;
	attr->sq_psn = qp->sq_psn;
	attr->pkey_index = qp->pkey_index;
	attr->cap = qp->cap;
	attr->sq_draining = qp->state == IBV_QPS_SQD &&
			    __atomic_load_n(&qp->sq_draining, __ATOMIC_RELAXED);
	if (qp->ops->query != NULL)
		qp->ops->query(qp, attr);
	dpv__qp_unlock_ctl(qp);
	init_attr->qp_context = ibqp->qp_context;
	init_attr->send_cq = ibqp->send_cq;
	init_attr->recv_cq = ibqp->recv_cq;
	init_attr->srq = ibqp->srq;
	init_attr->cap = qp->cap;
	init_attr->qp_type = qp->type;
	init_attr->sq_sig_all = qp->sq_sig_all;
	return 0;
}

/* Multicast groups are the transport's (RAW: a flow per group MAC; UD: RoCE groups). */
DPV_EXPORT int ibv_attach_mcast(struct ibv_qp *ibqp, const union ibv_gid *gid, uint16_t lid)
{
	struct dpv_qp *qp = dpv__qp_target(ibqp);

	DPV_FORK_REFUSE(ENODEV);
	return qp == NULL || gid == NULL ? EINVAL : -qp->ops->mcast(qp, gid, true);
}

DPV_EXPORT int ibv_detach_mcast(struct ibv_qp *ibqp, const union ibv_gid *gid, uint16_t lid)
{
	struct dpv_qp *qp = dpv__qp_target(ibqp);

	DPV_FORK_REFUSE(ENODEV);
	return qp == NULL || gid == NULL ? EINVAL : -qp->ops->mcast(qp, gid, false);
}
