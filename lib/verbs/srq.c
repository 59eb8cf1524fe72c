/* SPDX-License-Identifier: BSD-3-Clause */
/* Shared receive queues. A QP created with an SRQ keeps a small ring of its own; when a
 * message needs a WQE the SRQ's oldest moves into it (dpv__srq_take) and is that QP's work
 * from then on, flushed with it at ERR. The limit, once armed, fires SRQ_LIMIT_REACHED once
 * when a take leaves fewer WQEs, and disarms (the man page; rxe and mlx5). */

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "verbs_base.h"
#include "verbs_device.h"
#include "verbs_async.h"
#include "verbs_pd.h"
#include "verbs_fork.h"
#include "verbs_cq.h"
#include "verbs_ring.h"
#include "verbs_qp.h"
#include "verbs_srq.h"

#define MAX_SRQ_SGE 30

static void post_event(struct dpv_context *ctx, enum ibv_event_type type, void *element)
{
	struct ibv_async_event ev = { .event_type = type };

	if (type == IBV_EVENT_SRQ_LIMIT_REACHED)
		ev.element.srq = element;
	else
		ev.element.qp = element;
	dpv__async_event_post(ctx, &ev);
}

int dpv__srq_take(struct dpv_qp *qp, struct dpv_srq *srq)
{
	struct dpv_rq *from = &srq->rq, *to = &qp->rq;
	uint32_t fs, ts;
	bool fire = false;

	dpv__qp_assert_locked(qp);
	if (to->head - to->tail >= to->max_wr)
		return -ENOSPC;
	dpv__spinlock_lock(&srq->lock);
	if (from->tail == from->head) {
		dpv__spinlock_unlock(&srq->lock);
		return -ENOENT;
	}
	DPV_ASSERT(from->head - from->tail <= from->size);   /* posted WQEs fit the ring */
	fs = from->tail & from->mask;
	ts = to->head & to->mask;
	to->wqe[ts].wr_id = from->wqe[fs].wr_id;
	dpv__rq_set_sges(to, ts, dpv__rq_sges(from, fs), from->wqe[fs].nsge);
	from->tail++;
	to->head++;
	if (srq->limit != 0 && from->head - from->tail < srq->limit) {
		srq->limit = 0;
		fire = true;
	}
	dpv__spinlock_unlock(&srq->lock);
	if (fire)
		post_event(srq->ctx, IBV_EVENT_SRQ_LIMIT_REACHED, &srq->ibsrq);
	return 0;
}

void dpv__srq_qp_error(struct dpv_qp *qp)
{
	dpv__qp_event(qp, IBV_EVENT_QP_LAST_WQE_REACHED);   /* every handle of a shared QP */
}

#define KNOWN_SRQ_MASK (IBV_SRQ_INIT_ATTR_TYPE | IBV_SRQ_INIT_ATTR_PD | IBV_SRQ_INIT_ATTR_XRCD | \
			IBV_SRQ_INIT_ATTR_CQ | IBV_SRQ_INIT_ATTR_TM)

static int check_srq_attr(struct dpv_context *ctx, const struct ibv_srq_init_attr_ex *a)
{
	enum ibv_srq_type type = a->comp_mask & IBV_SRQ_INIT_ATTR_TYPE ? a->srq_type :
				 IBV_SRQT_BASIC;

	if (a->comp_mask & ~(uint32_t)KNOWN_SRQ_MASK || !(a->comp_mask & IBV_SRQ_INIT_ATTR_PD) ||
	    a->pd == NULL || a->pd->context != &ctx->vctx.context)
		return -EINVAL;
	if (type == IBV_SRQT_TM || (a->comp_mask & IBV_SRQ_INIT_ATTR_TM))
		return -EOPNOTSUPP;          /* tag matching: not (doc/semantics.md) */
	if (type != IBV_SRQT_BASIC && type != IBV_SRQT_XRC)
		return -EINVAL;
	if (type == IBV_SRQT_XRC &&
	    ((a->comp_mask & (IBV_SRQ_INIT_ATTR_XRCD | IBV_SRQ_INIT_ATTR_CQ)) !=
	     (IBV_SRQ_INIT_ATTR_XRCD | IBV_SRQ_INIT_ATTR_CQ) || a->xrcd == NULL || a->cq == NULL ||
	     a->xrcd->context != &ctx->vctx.context || a->cq->context != &ctx->vctx.context))
		return -EINVAL;
	if (a->attr.max_wr == 0 || a->attr.max_wr > dpv__config()->max_qp_wr ||
	    a->attr.max_sge > MAX_SRQ_SGE)
		return -EINVAL;
	return 0;
}

static void srq_free(struct dpv_srq *srq)
{
	dpv__rq_fini(&srq->rq);
	free(srq);
}

struct ibv_srq *dpv_create_srq_ex(struct ibv_context *context, struct ibv_srq_init_attr_ex *a)
{
	struct dpv_context *ctx = to_dctx(context);
	struct dpv_srq *srq;
	int rc = a == NULL ? -EINVAL : check_srq_attr(ctx, a);

	DPV_FORK_REFUSE(NULL);
	if (rc != 0)
		return dpv__fail_ptr(rc);
	srq = calloc(1, sizeof(*srq));
	if (srq == NULL)
		return dpv__fail_ptr(-ENOMEM);
	srq->ctx = ctx;
	srq->pd = dpv__pd_base(to_dpd(a->pd));
	srq->type = a->comp_mask & IBV_SRQ_INIT_ATTR_TYPE ? a->srq_type : IBV_SRQT_BASIC;
	dpv__spinlock_init(&srq->lock);
	rc = dpv__rq_init(&srq->rq, to_dpd(a->pd), DPV_RES_SRQ, a->attr.max_wr,
			  RTE_MAX(a->attr.max_sge, 1u));
	if (rc == 0 && srq->type == IBV_SRQT_XRC) {
		srq->cq = to_dcq(a->cq);
		rc = dpv__xrcd_srq_add(a->xrcd, srq);
	}
	if (rc == 0)
		rc = dpv__objset_add(ctx, &ctx->srqs, srq);
	if (rc != 0) {
		if (srq->xrcd != NULL)
			dpv__xrcd_srq_del(srq);
		srq_free(srq);
		return dpv__fail_ptr(rc);
	}
	/* written back as verbs does: the ring may hold more than asked */
	a->attr.max_wr = srq->rq.max_wr;
	a->attr.max_sge = srq->rq.max_sge;
	srq->ibsrq = (struct ibv_srq){ .context = context, .srq_context = a->srq_context,
				       .pd = a->pd, .handle = srq->srq_num };
	pthread_mutex_init(&srq->ibsrq.mutex, NULL);
	pthread_cond_init(&srq->ibsrq.cond, NULL);
	__atomic_fetch_add(&srq->pd->refs, 1, __ATOMIC_RELEASE);
	if (srq->cq != NULL)
		dpv__cq_attach_qp(srq->cq);
	return &srq->ibsrq;
}

/* ibv_create_srq(3): a basic SRQ; attr->attr gets the max_wr and max_sge it has (srq_limit is
 * not armed by creation: ibv_modify_srq arms it). */
DPV_EXPORT struct ibv_srq *ibv_create_srq(struct ibv_pd *pd, struct ibv_srq_init_attr *attr)
{
	struct ibv_srq_init_attr_ex ex = { 0 };
	struct ibv_srq *srq;

	if (pd == NULL || attr == NULL)
		return dpv__fail_ptr(-EINVAL);
	ex.srq_context = attr->srq_context;
	ex.attr = attr->attr;
	ex.comp_mask = IBV_SRQ_INIT_ATTR_PD;
	ex.pd = pd;
	srq = dpv_create_srq_ex(pd->context, &ex);
	if (srq != NULL)
		attr->attr = ex.attr;
	return srq;
}

/* Resize to @max_wr (not below what is posted): the WQEs kept in order. */
static int srq_resize(struct dpv_srq *srq, uint32_t max_wr)
{
	struct dpv_rq *old = &srq->rq, nrq;
	uint32_t n = old->head - old->tail;
	int rc;

	dpv__lock_assert_held(&srq->lock);
	if (max_wr < n)
		return -EINVAL;
	rc = dpv__rq_init(&nrq, old->buf_pd, old->buf_type, max_wr, old->max_sge);
	if (rc != 0)
		return rc;
	for (uint32_t i = 0; i < n; i++) {
		uint32_t s = (old->tail + i) & old->mask;

		nrq.wqe[i].wr_id = old->wqe[s].wr_id;
		dpv__rq_set_sges(&nrq, i, dpv__rq_sges(old, s), old->wqe[s].nsge);
	}
	nrq.head = n;
	dpv__rq_fini(old);
	*old = nrq;
	return 0;
}

/* ibv_modify_srq(3): IBV_SRQ_MAX_WR resizes (EINVAL below the WQEs posted or above the
 * device's max_srq_wr), IBV_SRQ_LIMIT arms the limit (EINVAL above max_wr; 0 disarms). */
DPV_EXPORT int ibv_modify_srq(struct ibv_srq *ibsrq, struct ibv_srq_attr *attr, int mask)
{
	struct dpv_srq *srq = to_dsrq(ibsrq);
	int rc = 0;

	DPV_FORK_REFUSE(ENODEV);
	if (srq == NULL || attr == NULL || (mask & ~(IBV_SRQ_MAX_WR | IBV_SRQ_LIMIT)))
		return EINVAL;
	if ((mask & IBV_SRQ_MAX_WR) &&
	    (attr->max_wr == 0 || attr->max_wr > dpv__config()->max_qp_wr))
		return EINVAL;
	dpv__spinlock_lock(&srq->lock);
	if ((mask & IBV_SRQ_LIMIT) &&
	    attr->srq_limit > ((mask & IBV_SRQ_MAX_WR) ? attr->max_wr : srq->rq.max_wr))
		rc = -EINVAL;
	if (rc == 0 && (mask & IBV_SRQ_MAX_WR))
		rc = srq_resize(srq, attr->max_wr);
	if (rc == 0 && (mask & IBV_SRQ_LIMIT))
		srq->limit = attr->srq_limit;
	if (rc == 0 && (mask & IBV_SRQ_MAX_WR))
		attr->max_wr = srq->rq.max_wr;
	dpv__spinlock_unlock(&srq->lock);
	return -rc;
}

DPV_EXPORT int ibv_query_srq(struct ibv_srq *ibsrq, struct ibv_srq_attr *attr)
{
	struct dpv_srq *srq = to_dsrq(ibsrq);

	DPV_FORK_REFUSE(ENODEV);
	if (srq == NULL || attr == NULL)
		return EINVAL;
	dpv__spinlock_lock(&srq->lock);
	attr->max_wr = srq->rq.max_wr;
	attr->max_sge = srq->rq.max_sge;
	attr->srq_limit = srq->limit;
	dpv__spinlock_unlock(&srq->lock);
	return 0;
}

/* The context's post_srq_recv op: the checks of ibv_post_recv (EINVAL for a bad num_sge,
 * ENOMEM when max_wr WQEs are posted), *bad_wr the first WR not posted. */
int dpv_post_srq_recv(struct ibv_srq *ibsrq, struct ibv_recv_wr *wr, struct ibv_recv_wr **bad_wr)
{
	struct dpv_srq *srq = to_dsrq(ibsrq);
	struct dpv_rq *rq = &srq->rq;
	struct ibv_recv_wr *unused;
	int rc = 0;

	if (bad_wr == NULL)
		bad_wr = &unused;
	if (wr == NULL) {
		*bad_wr = NULL;
		return EINVAL;
	}
	if (dpv__fork_child()) {
		*bad_wr = wr;
		return -dpv__fork_refuse();
	}
	dpv__spinlock_lock(&srq->lock);
	for (; wr != NULL; wr = wr->next) {
		uint32_t slot = rq->head & rq->mask;

		if (wr->num_sge < 0 || (uint32_t)wr->num_sge > rq->max_sge ||
		    (wr->num_sge > 0 && wr->sg_list == NULL)) {
			rc = EINVAL;
			break;
		}
		if (rq->head - rq->tail >= rq->max_wr) {
			rc = ENOMEM;
			break;
		}
		rq->wqe[slot].wr_id = wr->wr_id;
		dpv__rq_set_sges(rq, slot, wr->sg_list, (uint32_t)wr->num_sge);
		rq->head++;
	}
	dpv__spinlock_unlock(&srq->lock);
	if (rc != 0)
		*bad_wr = wr;
	return rc;
}

/* ibv_destroy_srq(3): EBUSY while a QP uses it; its WQEs are dropped without completions. */
DPV_EXPORT int ibv_destroy_srq(struct ibv_srq *ibsrq)
{
	struct dpv_srq *srq = to_dsrq(ibsrq);

	DPV_FORK_NOOP(0);
	if (srq == NULL)
		return EINVAL;
	if (__atomic_load_n(&srq->users, __ATOMIC_ACQUIRE) != 0 ||
	    (srq->xrcd != NULL && dpv__xrcd_srq_retire(srq) != 0))
		return EBUSY;
	if (srq->xrcd != NULL)
		dpv__xrcd_srq_del(srq);      /* and the receive side no longer finds it */
	if (srq->cq != NULL)
		dpv__cq_detach_qp(srq->cq, NULL);
	dpv__objset_del(srq->ctx, &srq->ctx->srqs, srq);
	DPV_REF_PUT(&srq->pd->refs);
	pthread_mutex_destroy(&srq->ibsrq.mutex);
	pthread_cond_destroy(&srq->ibsrq.cond);
	srq_free(srq);
	return 0;
}

int dpv_get_srq_num(struct ibv_srq *ibsrq, uint32_t *srq_num)
{
	struct dpv_srq *srq = to_dsrq(ibsrq);

	DPV_FORK_REFUSE(ENODEV);
	if (srq == NULL || srq_num == NULL || srq->type != IBV_SRQT_XRC)
		return EINVAL;
	*srq_num = srq->srq_num;
	return 0;
}

unsigned int dpv__release_srqs(struct dpv_context *ctx)
{
	unsigned int done = 0;

	for (;;) {
		struct ibv_srq *s = NULL;

		pthread_mutex_lock(&ctx->lock);
		if (ctx->srqs.n != 0)
			s = &((struct dpv_srq *)ctx->srqs.obj[ctx->srqs.n - 1])->ibsrq;
		pthread_mutex_unlock(&ctx->lock);
		if (s == NULL || ibv_destroy_srq(s) != 0)
			return done;
		done++;
	}
}
