/* SPDX-License-Identifier: BSD-3-Clause */
/* Memory windows and invalidation, with rxe's rules (IBA 10.6.7, o10-36/37): a second rkey
 * onto part of an MW_BIND MR, granting a peer exactly its range and flags. Type 1 is bound
 * with ibv_bind_mw and unbound by binding zero bytes; type 2 by a BIND_MW WR, usable only
 * by that QP's peer, unbound by LOCAL_INV or a SEND_WITH_INV received on that QP. Each bind
 * changes the key's low byte, so an old key never reaches a new binding. Windows share the
 * MR table's rkey buckets and lock; WRs run under the QP's lock. doc/semantics.md. */
#include <errno.h>
#include <stdlib.h>

#include "verbs_base.h"
#include "verbs_device.h"
#include "verbs_pd.h"
#include "verbs_mr.h"
#include "verbs_fork.h"
#include "verbs_qp.h"

#define MW_ACCESS (IBV_ACCESS_REMOTE_READ | IBV_ACCESS_REMOTE_WRITE | IBV_ACCESS_REMOTE_ATOMIC)
/* What a bind may name: the remote flags, and LOCAL_WRITE, which a window has no use for
 * (it grants peers only) and rxe and mlx5 accept and ignore; pyverbs' tests pass it. */
#define MW_BIND_ACCESS (MW_ACCESS | IBV_ACCESS_LOCAL_WRITE)

static struct dpv_mw **mw_bucket(struct dpv_mr_table *t, uint32_t rkey)
{
	return &t->mw_hash[dpv__rkey_bucket(rkey)];
}

/* The window whose current key is @rkey exactly (an older tag names nothing). */
static struct dpv_mw *mw_find(struct dpv_mr_table *t, uint32_t rkey)
{
	struct dpv_mw *mw = *mw_bucket(t, rkey);

	while (mw != NULL && mw->key != rkey)
		mw = mw->rkey_next;
	return mw;
}

struct dpv_mr *dpv__mw_by_rkey(struct dpv_mr_table *t, const struct dpv_qp *qp, uint32_t rkey,
			       uint64_t iova, uint64_t len, unsigned int access)
{
	struct dpv_mw *mw;

	dpv__lock_assert_held(&t->lock);
	mw = mw_find(t, rkey);
	if (mw == NULL || !mw->bound || mw->pd != qp->pd || (mw->access & access) != access)
		return NULL;
	if (mw->ibmw.type == IBV_MW_TYPE_2 && mw->qp != qp)
		return NULL;
	if (iova < mw->iova || len > mw->length || iova - mw->iova > mw->length - len)
		return NULL;
	return mw->mr;
}

/* The window lets go of its MR; its key grants nothing from now on. */
static void unbind(struct dpv_mw *mw)
{
	if (mw->mr != NULL)
		DPV_REF_PUT(&mw->mr->refs);
	mw->mr = NULL;
	mw->bound = false;
	mw->qp = NULL;
	mw->length = 0;
	mw->access = 0;
}

/* The MR a bind names, if it is still registered in this table (not a dangling pointer). */
static struct dpv_mr *bind_mr(struct dpv_mr_table *t, struct ibv_mr *ibmr)
{
	struct dpv_mr *mr = container_of_safe(ibmr, struct dpv_mr, ibmr);
	uint32_t i;

	if (mr == NULL)
		return NULL;
	i = ibmr->lkey & LKEY_INDEX_MASK;
	return i < t->size && t->slot[i] == mr ? mr : NULL;
}

/* rxe's rxe_check_bind_mw and the checks before it: 0 or -EINVAL. */
static int bind_check(const struct dpv_qp *qp, const struct dpv_mw *mw, const struct dpv_mr *mr,
		      uint32_t rkey, const struct ibv_mw_bind_info *b)
{
	unsigned int access = b->mw_access_flags;

	if (mw->pd != qp->pd)                        /* C10-72 (rxe checks type 2 only) */
		return -EINVAL;
	if ((rkey ^ mw->key) & ~0xffu || rkey == mw->key)   /* only a new tag */
		return -EINVAL;
	if (access & ~(unsigned int)MW_BIND_ACCESS)  /* ZERO_BASED windows: not supported */
		return -EINVAL;
	if (mw->ibmw.type == IBV_MW_TYPE_2 && (mw->bound || b->length == 0))
		return -EINVAL;                      /* o10-37.2.30, o10-37.2.40 */
	if (b->length == 0)
		return 0;                            /* type 1: unbinds */
	if (mr == NULL || mr->pd != qp->pd || !(mr->access & IBV_ACCESS_MW_BIND) ||
	    (mr->access & IBV_ACCESS_ZERO_BASED))
		return -EINVAL;                      /* C10-73 */
	if ((access & (IBV_ACCESS_REMOTE_WRITE | IBV_ACCESS_REMOTE_ATOMIC)) &&
	    !(mr->access & IBV_ACCESS_LOCAL_WRITE))
		return -EINVAL;                      /* C10-74 */
	if (b->addr < mr->iova || b->length > mr->length ||
	    b->addr - mr->iova > mr->length - b->length)
		return -EINVAL;                      /* C10-75 */
	return 0;
}

enum ibv_wc_status dpv__mw_bind(struct dpv_qp *qp, const struct ibv_send_wr *wr)
{
	struct dpv_mr_table *t = qp->ctx->mrs;
	struct dpv_mw *mw = container_of_safe(wr->bind_mw.mw, struct dpv_mw, ibmw);
	const struct ibv_mw_bind_info *b = &wr->bind_mw.bind_info;
	struct dpv_mr *mr;
	int rc = -EINVAL;

	if (mw == NULL || mw->ibmw.context != qp->ibqp.context)
		return IBV_WC_MW_BIND_ERR;
	dpv__spinlock_lock(&t->lock);
	mr = bind_mr(t, b->mr);
	if (mw_find(t, mw->key) == mw)               /* not deallocated */
		rc = bind_check(qp, mw, mr, wr->bind_mw.rkey, b);
	if (rc == 0) {
		unbind(mw);
		mw->key = wr->bind_mw.rkey;
		mw->ibmw.rkey = mw->key;
		if (b->length != 0) {
			__atomic_fetch_add(&mr->refs, 1, __ATOMIC_ACQUIRE);
			mw->mr = mr;
			mw->iova = b->addr;
			mw->length = b->length;
			mw->access = b->mw_access_flags & MW_ACCESS;
			mw->qp = mw->ibmw.type == IBV_MW_TYPE_2 ? qp : NULL;
			mw->bound = true;
		}
	}
	dpv__spinlock_unlock(&t->lock);
	return rc == 0 ? IBV_WC_SUCCESS : IBV_WC_MW_BIND_ERR;
}

int dpv__mw_invalidate(struct dpv_qp *qp, uint32_t rkey, bool remote)
{
	struct dpv_mr_table *t = qp->ctx->mrs;
	struct dpv_mw *mw;
	int rc = -EINVAL;

	dpv__spinlock_lock(&t->lock);
	mw = mw_find(t, rkey);
	/* o10-37.2.26: never a type 1 window; an MR's key is no fast-registered MR's */
	if (mw != NULL && mw->bound && mw->ibmw.type == IBV_MW_TYPE_2 && mw->pd == qp->pd &&
	    (!remote || mw->qp == qp)) {
		unbind(mw);
		rc = 0;
	}
	dpv__spinlock_unlock(&t->lock);
	return rc;
}

void dpv__mw_qp_gone(struct dpv_qp *qp)
{
	struct dpv_mr_table *t = qp->ctx->mrs;

	dpv__spinlock_lock(&t->lock);
	for (uint32_t b = 0; t->nb_mw != 0 && b < DPV_RKEY_BUCKETS; b++)
		for (struct dpv_mw *mw = t->mw_hash[b]; mw != NULL; mw = mw->rkey_next)
			if (mw->bound && mw->qp == qp)
				unbind(mw);
	dpv__spinlock_unlock(&t->lock);
}

unsigned int dpv__mw_release_all(struct dpv_context *ctx)
{
	struct dpv_mr_table *t = ctx->mrs;
	unsigned int done = 0;

	for (uint32_t b = 0; b < DPV_RKEY_BUCKETS; b++) {
		struct dpv_mw *mw;

		dpv__spinlock_lock(&t->lock);
		while ((mw = t->mw_hash[b]) != NULL) {
			dpv__spinlock_unlock(&t->lock);
			done += dpv_dealloc_mw(&mw->ibmw) == 0;
			dpv__spinlock_lock(&t->lock);
		}
		dpv__spinlock_unlock(&t->lock);
	}
	return done;
}

/* ibv_alloc_mw(3): a window of @type, unbound, with a random key. */
struct ibv_mw *dpv_alloc_mw(struct ibv_pd *ibpd, enum ibv_mw_type type)
{
	struct dpv_pd *pd = to_dpd(ibpd);
	struct dpv_mr_table *t;
	struct dpv_mw *mw;

	DPV_FORK_REFUSE(NULL);
	if (pd == NULL || (type != IBV_MW_TYPE_1 && type != IBV_MW_TYPE_2))
		return dpv__fail_ptr(-EINVAL);
	mw = calloc(1, sizeof(*mw));
	if (mw == NULL)
		return dpv__fail_ptr(-ENOMEM);
	t = to_dctx(ibpd->context)->mrs;
	mw->pd = dpv__pd_base(pd);
	mw->ibmw.context = ibpd->context;
	mw->ibmw.pd = ibpd;
	mw->ibmw.type = type;
	dpv__spinlock_lock(&t->lock);
	mw->key = dpv__rkey_new(t);
	mw->ibmw.rkey = mw->key;
	mw->ibmw.handle = mw->key >> 8;
	mw->rkey_next = *mw_bucket(t, mw->key);
	*mw_bucket(t, mw->key) = mw;
	t->nb_mw++;
	dpv__spinlock_unlock(&t->lock);
	__atomic_fetch_add(&mw->pd->refs, 1, __ATOMIC_RELEASE);
	return &mw->ibmw;
}

/* ibv_bind_mw(3): executed at once; on failure the WR completes with MW_BIND_ERR and
 * mw->rkey stays as it was. */

int dpv_bind_mw(struct ibv_qp *qp, struct ibv_mw *mw, struct ibv_mw_bind *bind)
{
	struct ibv_send_wr wr = { .opcode = IBV_WR_BIND_MW }, *bad;

	DPV_FORK_REFUSE(ENODEV);
	if (qp == NULL || mw == NULL || bind == NULL || mw->type != IBV_MW_TYPE_1)
		return EINVAL;
	wr.wr_id = bind->wr_id;
	wr.send_flags = bind->send_flags;
	wr.bind_mw.mw = mw;
	wr.bind_mw.rkey = ibv_inc_rkey(mw->rkey);
	wr.bind_mw.bind_info = bind->bind_info;
	return ibv_post_send(qp, &wr, &bad);
}

/* ibv_dealloc_mw(3): a bound window is unbound first (its MR may then be deregistered). */
int dpv_dealloc_mw(struct ibv_mw *ibmw)
{
	struct dpv_mw *mw = container_of_safe(ibmw, struct dpv_mw, ibmw), **p;
	struct dpv_mr_table *t;

	DPV_FORK_NOOP(0);
	if (mw == NULL)
		return EINVAL;
	t = to_dctx(ibmw->context)->mrs;
	dpv__spinlock_lock(&t->lock);
	unbind(mw);
	for (p = mw_bucket(t, mw->key); *p != mw; p = &(*p)->rkey_next)
		;
	*p = mw->rkey_next;
	t->nb_mw--;
	dpv__spinlock_unlock(&t->lock);
	DPV_REF_PUT(&mw->pd->refs);
	free(mw);
	return 0;
}
