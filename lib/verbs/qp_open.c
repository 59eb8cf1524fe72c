/* SPDX-License-Identifier: BSD-3-Clause */
/* ibv_open_qp(3): more handles on an XRC_RECV QP, as the kernel's ib_open_qp. A handle is a
 * hollow struct dpv_qp whose verbs act on the real QP (dpv__qp_target). The QP counts its
 * handles, its creator's included, and goes with the last one; its async events go to every
 * handle, each on its own context. Within one process (doc/semantics.md, "XRC"). */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "verbs_base.h"
#include "verbs_device.h"
#include "verbs_async.h"
#include "verbs_fork.h"
#include "verbs_qp.h"
#include "verbs_srq.h"

#define OPEN_ATTR_NEEDED (IBV_QP_OPEN_ATTR_NUM | IBV_QP_OPEN_ATTR_XRCD | IBV_QP_OPEN_ATTR_TYPE)

/* The handles of every shared QP: the lists, counts and links between them. */
static pthread_mutex_t open_lock = PTHREAD_MUTEX_INITIALIZER;

/* A handle posts what its QP would refuse anyway, through the QP (NULL once it is gone). */
static int handle_post_send(struct dpv_qp *h, struct ibv_send_wr *wr, struct ibv_send_wr **bad)
{
	struct dpv_qp *qp = __atomic_load_n(&h->real, __ATOMIC_ACQUIRE);

	if (qp == NULL) {
		*bad = wr;
		return -EINVAL;
	}
	return qp->post_send(qp, wr, bad);
}

/* The open_qp op; NULL and errno as the kernel: EINVAL (a missing NUM/XRCD/TYPE bit, not
 * XRC_RECV, another device's XRC domain, no such QP), EOPNOTSUPP, ENOMEM. */

struct ibv_qp *dpv_open_qp(struct ibv_context *context, struct ibv_qp_open_attr *a)
{
	struct dpv_context *ctx = to_dctx(context);
	struct dpv_qp *qp, *h;
	struct dpv_xrcd *x;

	DPV_FORK_REFUSE(NULL);
	if (ctx == NULL || a == NULL)
		return dpv__fail_ptr(-EINVAL);
	if (a->comp_mask & ~(uint32_t)(IBV_QP_OPEN_ATTR_RESERVED - 1))
		return dpv__fail_ptr(-EOPNOTSUPP);
	if ((a->comp_mask & OPEN_ATTR_NEEDED) != OPEN_ATTR_NEEDED || a->xrcd == NULL ||
	    a->qp_type != IBV_QPT_XRC_RECV)
		return dpv__fail_ptr(-EINVAL);
	x = to_dxrcd(a->xrcd);
	if (x->ctx->dev != ctx->dev)
		return dpv__fail_ptr(-EINVAL);
	h = aligned_alloc(RTE_CACHE_LINE_SIZE, RTE_ALIGN_CEIL(sizeof(*h), RTE_CACHE_LINE_SIZE));
	if (h == NULL)
		return dpv__fail_ptr(-ENOMEM);
	memset(h, 0, sizeof(*h));
	pthread_mutex_lock(&open_lock);
	qp = dpv__qpn_lookup(ctx->dev, a->qp_num);
	if (qp == NULL || qp->opener || !(qp->qpt_flags & DPV_QPT_XRC_TARGET) ||
	    !dpv__xrcd_same(qp->xrcd, x) || qp->handles == 0) {
		pthread_mutex_unlock(&open_lock);
		free(h);
		return dpv__fail_ptr(-EINVAL);
	}
	h->opener = true;
	h->no_rq = true;            /* ibv_post_recv on a handle: EINVAL (rq.c) */
	h->real = qp;
	h->ctx = ctx;
	h->xrcd = x;
	h->type = IBV_QPT_XRC_RECV;
	h->qpt_flags = qp->qpt_flags;
	h->ops = qp->ops;
	h->post_send = handle_post_send;
	dpv__spinlock_init(&h->lock);
	dpv__spinlock_init(&h->svc_lock);
	h->ibqp = (struct ibv_qp){
		.context = context, .qp_num = qp->ibqp.qp_num, .handle = qp->ibqp.qp_num,
		.state = qp->state, .qp_type = IBV_QPT_XRC_RECV,
		.qp_context = a->comp_mask & IBV_QP_OPEN_ATTR_CONTEXT ? a->qp_context : NULL,
	};
	pthread_mutex_init(&h->ibqp.mutex, NULL);
	pthread_cond_init(&h->ibqp.cond, NULL);
	TAILQ_INSERT_TAIL(&qp->openers, h, open_next);
	qp->handles++;
	pthread_mutex_unlock(&open_lock);
	dpv__xrcd_use(x, 1);         /* ibv_close_xrcd of it: EBUSY while the handle is open */
	if (dpv__objset_add(ctx, &ctx->qp_opens, h) != 0) {
		ibv_destroy_qp(&h->ibqp);
		return dpv__fail_ptr(-ENOMEM);
	}
	return &h->ibqp;
}

void dpv__qp_open_init(struct dpv_qp *qp)
{
	TAILQ_INIT(&qp->openers);
	qp->handles = 1;             /* its creator's */
}

int dpv__qp_handle_close(struct dpv_qp *qp)
{
	struct dpv_qp *real;
	bool last = false;

	pthread_mutex_lock(&open_lock);
	if (!qp->opener) {
		/* the creator's handle: the QP goes unless other handles hold it */
		if (qp->own_closed || TAILQ_EMPTY(&qp->openers)) {
			qp->handles = 0;     /* being destroyed: ibv_open_qp finds nothing */
			pthread_mutex_unlock(&open_lock);
			return 0;
		}
		qp->own_closed = true;
		qp->handles--;
		pthread_mutex_unlock(&open_lock);
		return 1;
	}
	real = qp->real;
	if (real != NULL) {
		TAILQ_REMOVE(&real->openers, qp, open_next);
		last = --real->handles == 0;
	}
	pthread_mutex_unlock(&open_lock);
	dpv__objset_del(qp->ctx, &qp->ctx->qp_opens, qp);
	dpv__xrcd_use(qp->xrcd, -1);
	pthread_mutex_destroy(&qp->ibqp.mutex);
	pthread_cond_destroy(&qp->ibqp.cond);
	free(qp);
	if (last)                    /* its creator's handle went before: the QP goes now */
		ibv_destroy_qp(&real->ibqp);
	return 1;
}

void dpv__qp_open_orphan(struct dpv_qp *qp)
{
	struct dpv_qp *h;

	pthread_mutex_lock(&open_lock);
	while ((h = TAILQ_FIRST(&qp->openers)) != NULL) {
		TAILQ_REMOVE(&qp->openers, h, open_next);
		__atomic_store_n(&h->real, NULL, __ATOMIC_RELEASE);
		qp->handles--;
	}
	qp->own_closed = true;
	pthread_mutex_unlock(&open_lock);
}

void dpv__qp_event(struct dpv_qp *qp, enum ibv_event_type type)
{
	struct ibv_async_event ev = { .event_type = type, .element.qp = &qp->ibqp };
	struct dpv_qp *h;

	pthread_mutex_lock(&open_lock);
	if (!qp->own_closed)
		dpv__async_event_post(qp->ctx, &ev);
	TAILQ_FOREACH(h, &qp->openers, open_next) {
		ev.element.qp = &h->ibqp;
		dpv__async_event_post(h->ctx, &ev);
	}
	pthread_mutex_unlock(&open_lock);
}

unsigned int dpv__release_qp_opens(struct dpv_context *ctx)
{
	unsigned int done = 0;

	for (;;) {
		struct dpv_qp *h = NULL;

		pthread_mutex_lock(&ctx->lock);
		if (ctx->qp_opens.n != 0)
			h = ctx->qp_opens.obj[ctx->qp_opens.n - 1];
		pthread_mutex_unlock(&ctx->lock);
		if (h == NULL || ibv_destroy_qp(&h->ibqp) != 0)
			return done;
		done++;
	}
}
