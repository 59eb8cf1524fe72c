/* SPDX-License-Identifier: BSD-3-Clause */
/* XRC domains and XRC SRQ numbers. fd -1 opens a new private domain; a file opens its
 * inode's domain on the device, shared by every open in the process (O_CREAT, O_EXCL as the
 * kernel's uverbs); nothing is shared across processes (doc/semantics.md). The SRQ number
 * table is what the RoCE receive side reads to find the SRQ an XRCETH names. */

#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <sys/stat.h>

#include "verbs_base.h"
#include "verbs_device.h"
#include "verbs_fork.h"
#include "verbs_srq.h"
#include "verbs_progress.h"

#define MAX_XRC_SRQ 65536

/* A domain: what the handles of one inode (or one fd -1 open) share. */
struct dpv_xrc_domain {
	struct dpv_device *dev;
	dev_t st_dev;
	ino_t st_ino;
	bool inode;                /* opened from a file */
	int opens;                 /* handles */
	int users;                 /* SRQs and QPs in it */
	TAILQ_ENTRY(dpv_xrc_domain) next;
};

static pthread_mutex_t xrc_lock = PTHREAD_MUTEX_INITIALIZER;
static TAILQ_HEAD(, dpv_xrc_domain) domains = TAILQ_HEAD_INITIALIZER(domains);
static struct dpv_srq *srq_nums[MAX_XRC_SRQ];   /* 0 unused */
static uint32_t srq_hint = 1;

static struct dpv_xrc_domain *find_domain(struct dpv_device *dev, const struct stat *st)
{
	struct dpv_xrc_domain *d;

	TAILQ_FOREACH(d, &domains, next)
		if (d->inode && d->dev == dev && d->st_dev == st->st_dev && d->st_ino == st->st_ino)
			return d;
	return NULL;
}

static struct ibv_xrcd *open_xrcd(struct dpv_context *ctx, struct ibv_xrcd_init_attr *a)
{
	struct dpv_xrc_domain *d = NULL;
	struct dpv_xrcd *x;
	struct stat st;

	if (a->fd != -1) {
		if (fstat(a->fd, &st) != 0)
			return dpv__fail_ptr(-EBADF);
		d = find_domain(ctx->dev, &st);
		if ((d == NULL && !(a->oflags & O_CREAT)) || (d != NULL && (a->oflags & O_EXCL)))
			return dpv__fail_ptr(-EINVAL);
	}
	x = calloc(1, sizeof(*x));
	if (x == NULL)
		return dpv__fail_ptr(-ENOMEM);
	if (d == NULL) {
		d = calloc(1, sizeof(*d));
		if (d == NULL) {
			free(x);
			return dpv__fail_ptr(-ENOMEM);
		}
		d->dev = ctx->dev;
		d->inode = a->fd != -1;
		if (d->inode) {
			d->st_dev = st.st_dev;
			d->st_ino = st.st_ino;
		}
		TAILQ_INSERT_TAIL(&domains, d, next);
	}
	d->opens++;
	x->domain = d;
	x->ctx = ctx;
	x->ibxrcd.context = &ctx->vctx.context;
	return &x->ibxrcd;
}

/* The context's open_xrcd op (ibv_open_xrcd(3)): comp_mask must hold FD and OFLAGS. */
struct ibv_xrcd *dpv_open_xrcd(struct ibv_context *context, struct ibv_xrcd_init_attr *a)
{
	struct dpv_context *ctx = to_dctx(context);
	struct ibv_xrcd *x;

	DPV_FORK_REFUSE(NULL);
	if (ctx == NULL || a == NULL ||
	    (a->comp_mask & (IBV_XRCD_INIT_ATTR_FD | IBV_XRCD_INIT_ATTR_OFLAGS)) !=
	    (IBV_XRCD_INIT_ATTR_FD | IBV_XRCD_INIT_ATTR_OFLAGS))
		return dpv__fail_ptr(-EINVAL);
	if (a->comp_mask & ~(uint32_t)(IBV_XRCD_INIT_ATTR_RESERVED - 1))
		return dpv__fail_ptr(-EOPNOTSUPP);
	pthread_mutex_lock(&xrc_lock);
	x = open_xrcd(ctx, a);
	pthread_mutex_unlock(&xrc_lock);
	if (x != NULL && dpv__objset_add(ctx, &ctx->xrcds, to_dxrcd(x)) != 0) {
		dpv_close_xrcd(x);
		return dpv__fail_ptr(-ENOMEM);
	}
	return x;
}

/* The context's close_xrcd op: EBUSY while an SRQ or QP of this handle uses it. */
int dpv_close_xrcd(struct ibv_xrcd *ibx)
{
	struct dpv_xrcd *x = to_dxrcd(ibx);
	struct dpv_xrc_domain *d;

	DPV_FORK_NOOP(0);
	if (x == NULL)
		return EINVAL;
	pthread_mutex_lock(&xrc_lock);
	if (x->users != 0) {
		pthread_mutex_unlock(&xrc_lock);
		return EBUSY;
	}
	d = x->domain;
	if (--d->opens == 0) {
		TAILQ_REMOVE(&domains, d, next);
		free(d);
	}
	pthread_mutex_unlock(&xrc_lock);
	dpv__objset_del(x->ctx, &x->ctx->xrcds, x);
	free(x);
	return 0;
}

bool dpv__xrcd_same(const struct dpv_xrcd *a, const struct dpv_xrcd *b)
{
	return a != NULL && b != NULL && a->domain == b->domain;
}

void dpv__xrcd_use(struct dpv_xrcd *x, int delta)
{
	pthread_mutex_lock(&xrc_lock);
	x->users += delta;
	pthread_mutex_unlock(&xrc_lock);
}

int dpv__xrcd_srq_add(struct ibv_xrcd *ibx, struct dpv_srq *srq)
{
	int rc = -ENOSPC;

	pthread_mutex_lock(&xrc_lock);
	for (uint32_t i = 0; i < MAX_XRC_SRQ - 1; i++) {
		uint32_t n = (srq_hint + i) % (MAX_XRC_SRQ - 1) + 1;

		if (srq_nums[n] == NULL) {
			srq->srq_num = n;
			srq->xrcd = to_dxrcd(ibx);
			srq->xrcd->users++;
			__atomic_store_n(&srq_nums[n], srq, __ATOMIC_RELEASE);
			srq_hint = n + 1;
			rc = 0;
			break;
		}
	}
	pthread_mutex_unlock(&xrc_lock);
	return rc;
}

int dpv__xrcd_srq_retire(struct dpv_srq *srq)
{
	pthread_mutex_lock(&xrc_lock);
	__atomic_store_n(&srq_nums[srq->srq_num], NULL, __ATOMIC_RELEASE);
	pthread_mutex_unlock(&xrc_lock);
	/* an XRC_RECV QP binds to it only on the receive side, under rx_lock: once that is let
	 * go, the users count says whether one still holds it */
	dpv__device_rx_quiesce(srq->ctx->dev);
	if (__atomic_load_n(&srq->users, __ATOMIC_ACQUIRE) == 0)
		return 0;
	__atomic_store_n(&srq_nums[srq->srq_num], srq, __ATOMIC_RELEASE);
	return -EBUSY;
}

void dpv__xrcd_srq_del(struct dpv_srq *srq)
{
	pthread_mutex_lock(&xrc_lock);
	__atomic_store_n(&srq_nums[srq->srq_num], NULL, __ATOMIC_RELEASE);
	srq->xrcd->users--;
	pthread_mutex_unlock(&xrc_lock);
	dpv__device_rx_quiesce(srq->ctx->dev);   /* the receive side no longer holds it */
}

struct dpv_srq *dpv__xrc_srq_lookup(struct dpv_device *dev, uint32_t srq_num)
{
	struct dpv_srq *srq;

	dpv__lock_assert_held(&dev->rx_lock);
	if (srq_num == 0 || srq_num >= MAX_XRC_SRQ)
		return NULL;
	srq = __atomic_load_n(&srq_nums[srq_num], __ATOMIC_ACQUIRE);
	return srq != NULL && srq->ctx->dev == dev ? srq : NULL;
}

unsigned int dpv__release_xrcds(struct dpv_context *ctx)
{
	unsigned int done = 0;

	for (;;) {
		struct ibv_xrcd *x = NULL;

		pthread_mutex_lock(&ctx->lock);
		if (ctx->xrcds.n != 0)
			x = &((struct dpv_xrcd *)ctx->xrcds.obj[ctx->xrcds.n - 1])->ibxrcd;
		pthread_mutex_unlock(&ctx->lock);
		if (x == NULL || dpv_close_xrcd(x) != 0)
			return done;
		done++;
	}
}
