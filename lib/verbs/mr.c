/* SPDX-License-Identifier: BSD-3-Clause */
/* Memory regions. An lkey indexes the context's MR table (index in the low 24 bits, a
 * generation above, so that a stale lkey never names a newer MR); an rkey is random, because
 * it is a security boundary once peers can name it, its index (the bits above the low byte)
 * unique among the context's MRs and memory windows, and found through a hash of the table
 * (RC/UC remote access, dpv__mr_by_rkey; windows: mw.c). */
#include <errno.h>
#include <stdlib.h>
#include <sys/random.h>
#include <unistd.h>

#include <rte_random.h>

#include "verbs_base.h"
#include "verbs_device.h"
#include "verbs_pd.h"
#include "verbs_mr.h"
#include "verbs_fork.h"
#include "verbs_qp.h"


#define KNOWN_ACCESS (IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE | \
		      IBV_ACCESS_REMOTE_READ | IBV_ACCESS_REMOTE_ATOMIC | IBV_ACCESS_MW_BIND | \
		      IBV_ACCESS_ZERO_BASED | IBV_ACCESS_ON_DEMAND | IBV_ACCESS_HUGETLB | \
		      IBV_ACCESS_OPTIONAL_RANGE)

int dpv__mr_table_init(struct dpv_context *ctx)
{
	struct dpv_mr_table *t = calloc(1, sizeof(*t));
	uint32_t size = dpv__config()->max_mr;

	if (t == NULL)
		return -ENOMEM;
	t->slot = calloc(size, sizeof(*t->slot));
	t->gen = calloc(size, sizeof(*t->gen));
	t->rkey_hash = calloc(DPV_RKEY_BUCKETS, sizeof(*t->rkey_hash));
	t->mw_hash = calloc(DPV_RKEY_BUCKETS, sizeof(*t->mw_hash));
	if (t->slot == NULL || t->gen == NULL || t->rkey_hash == NULL || t->mw_hash == NULL) {
		free(t->slot);
		free(t->gen);
		free(t->rkey_hash);
		free(t->mw_hash);
		free(t);
		return -ENOMEM;
	}
	t->size = size;
	dpv__spinlock_init(&t->lock);
	ctx->mrs = t;
	return 0;
}

void dpv__mr_table_fini(struct dpv_context *ctx)
{
	free(ctx->mrs->slot);
	free(ctx->mrs->gen);
	free(ctx->mrs->rkey_hash);
	free(ctx->mrs->mw_hash);
	free(ctx->mrs);
}

static struct dpv_mr **rkey_bucket(struct dpv_mr_table *t, uint32_t rkey)
{
	return &t->rkey_hash[dpv__rkey_bucket(rkey)];
}

static struct dpv_mr *rkey_find(struct dpv_mr_table *t, uint32_t rkey)
{
	struct dpv_mr *mr = *rkey_bucket(t, rkey);

	while (mr != NULL && mr->ibmr.rkey != rkey)
		mr = mr->rkey_next;
	return mr;
}

static uint32_t random_rkey(void)
{
	uint32_t rkey;

	if (getrandom(&rkey, sizeof(rkey), 0) != sizeof(rkey))
		rkey = (uint32_t)rte_rand();
	return rkey;
}

bool dpv__rkey_index_taken(struct dpv_mr_table *t, uint32_t rkey)
{
	uint32_t b = dpv__rkey_bucket(rkey);

	dpv__lock_assert_held(&t->lock);
	for (struct dpv_mr *mr = t->rkey_hash[b]; mr != NULL; mr = mr->rkey_next)
		if (mr->ibmr.rkey >> 8 == rkey >> 8)
			return true;
	for (struct dpv_mw *mw = t->mw_hash[b]; mw != NULL; mw = mw->rkey_next)
		if (mw->key >> 8 == rkey >> 8)
			return true;
	return false;
}

uint32_t dpv__rkey_new(struct dpv_mr_table *t)
{
	uint32_t rkey;

	do
		rkey = random_rkey();
	while (dpv__rkey_index_taken(t, rkey));
	return rkey;
}

struct dpv_mr *dpv__mr_by_rkey(const struct dpv_qp *qp, uint32_t rkey, uint64_t iova,
			       uint64_t len, unsigned int access)
{
	struct dpv_mr *mr;

	dpv__lock_assert_held(&qp->ctx->mrs->lock);
	mr = rkey_find(qp->ctx->mrs, rkey);

	if (mr == NULL)
		return dpv__mw_by_rkey(qp->ctx->mrs, qp, rkey, iova, len, access);
	if (mr->pd != qp->pd || (mr->access & access) != access)
		return NULL;
	if (iova < mr->iova || len > mr->length || iova - mr->iova > mr->length - len)
		return NULL;
	return mr;
}

/* An lkey slot and a random rkey no other MR of the context has. */
static int table_insert(struct dpv_mr_table *t, struct dpv_mr *mr)
{
	int rc = -ENOMEM;

	dpv__spinlock_lock(&t->lock);
	mr->ibmr.rkey = dpv__rkey_new(t);
	mr->rkey_next = *rkey_bucket(t, mr->ibmr.rkey);
	*rkey_bucket(t, mr->ibmr.rkey) = mr;
	for (uint32_t n = 0; n < t->size; n++) {
		uint32_t i = (t->free_hint + n) % t->size;

		if (t->slot[i] == NULL) {
			t->slot[i] = mr;
			t->free_hint = i + 1;
			mr->ibmr.lkey = ((uint32_t)++t->gen[i] << LKEY_INDEX_BITS) | i;
			rc = 0;
			break;
		}
	}
	if (rc != 0)
		*rkey_bucket(t, mr->ibmr.rkey) = mr->rkey_next;
	dpv__spinlock_unlock(&t->lock);
	return rc;
}

struct dpv_mr *dpv__mr_by_handle(struct dpv_context *ctx, struct ibv_pd *pd, uint32_t handle)
{
	struct dpv_mr_table *t = ctx->mrs;
	struct dpv_mr *mr;
	uint32_t i = handle & LKEY_INDEX_MASK;

	dpv__spinlock_lock(&t->lock);
	mr = i < t->size ? t->slot[i] : NULL;
	if (mr != NULL && (mr->ibmr.handle != handle || mr->ibmr.pd != pd))
		mr = NULL;
	dpv__spinlock_unlock(&t->lock);
	return mr;
}

static void table_remove(struct dpv_mr_table *t, struct dpv_mr *mr)
{
	struct dpv_mr **p;

	dpv__spinlock_lock(&t->lock);
	for (p = rkey_bucket(t, mr->ibmr.rkey); *p != mr; p = &(*p)->rkey_next)
		;
	*p = mr->rkey_next;
	t->slot[mr->ibmr.lkey & LKEY_INDEX_MASK] = NULL;
	dpv__spinlock_unlock(&t->lock);
}

static int check_access(unsigned int access)
{
	if (access & ~(unsigned int)KNOWN_ACCESS)
		return -EINVAL;
	/* Remote write and atomic need local write (ibv_reg_mr(3)). */
	if ((access & (IBV_ACCESS_REMOTE_WRITE | IBV_ACCESS_REMOTE_ATOMIC)) &&
	    !(access & IBV_ACCESS_LOCAL_WRITE))
		return -EINVAL;
	if (access & IBV_ACCESS_ON_DEMAND)
		return -EOPNOTSUPP;
	return 0;
}

static struct ibv_mr *reg_mr(struct ibv_pd *ibpd, void *addr, size_t length, uint64_t iova,
			     unsigned int access)
{
	struct dpv_pd *pd = to_dpd(ibpd);
	struct dpv_context *ctx;
	struct dpv_mr *mr;
	long page = sysconf(_SC_PAGESIZE);
	int rc;

	DPV_FORK_REFUSE(NULL);
	if (pd == NULL || length == 0 || (addr == NULL && length != 0))
		return dpv__fail_ptr(-EINVAL);
	rc = check_access(access);
	if (rc != 0)
		return dpv__fail_ptr(rc);
	/* The kernel's rule: the iova keeps the address's offset in its page. */
	if ((iova & (page - 1)) != ((uintptr_t)addr & (page - 1)))
		return dpv__fail_ptr(-EINVAL);
	if (iova + length < iova || (uintptr_t)addr + length < (uintptr_t)addr)
		return dpv__fail_ptr(-EINVAL);
	ctx = to_dctx(ibpd->context);
	mr = calloc(1, sizeof(*mr));
	if (mr == NULL)
		return dpv__fail_ptr(-ENOMEM);
	mr->pd = dpv__pd_base(pd);
	mr->va = addr;
	mr->iova = iova;
	mr->length = length;
	mr->access = access;
	rc = dpv__fork_mr_hold(mr);
	if (rc == 0 && (rc = dpv__range_acquire(ctx, addr, length, mr)) != 0)
		dpv__fork_mr_drop(mr);
	if (rc == 0 && (rc = table_insert(ctx->mrs, mr)) != 0) {
		dpv__range_release(ctx, mr);
		dpv__fork_mr_drop(mr);
	}
	if (rc != 0) {
		free(mr);
		return dpv__fail_ptr(rc);
	}
	mr->ibmr.context = ibpd->context;
	mr->ibmr.pd = ibpd;
	mr->ibmr.addr = addr;
	mr->ibmr.length = length;
	mr->ibmr.handle = mr->ibmr.lkey;
	__atomic_fetch_add(&mr->pd->refs, 1, __ATOMIC_RELEASE);
	return &mr->ibmr;
}

#undef ibv_reg_mr
DPV_EXPORT struct ibv_mr *ibv_reg_mr(struct ibv_pd *pd, void *addr, size_t length, int access)
{
	return reg_mr(pd, addr, length, (uintptr_t)addr, (unsigned int)access);
}

#undef ibv_reg_mr_iova
DPV_EXPORT struct ibv_mr *ibv_reg_mr_iova(struct ibv_pd *pd, void *addr, size_t length,
					  uint64_t iova, int access)
{
	return reg_mr(pd, addr, length, iova, (unsigned int)access);
}

DPV_EXPORT struct ibv_mr *ibv_reg_mr_iova2(struct ibv_pd *pd, void *addr, size_t length,
					   uint64_t iova, unsigned int access)
{
	return reg_mr(pd, addr, length, iova, access);
}

/* ibv_import_mr(3): the MR of @pd whose handle (its lkey) is @mr_handle — the same ibv_mr,
 * as ibv_import_pd gives the same PD; EINVAL if there is none. */
DPV_EXPORT struct ibv_mr *ibv_import_mr(struct ibv_pd *pd, uint32_t mr_handle)
{
	struct dpv_mr *mr;

	DPV_FORK_REFUSE(NULL);
	if (pd == NULL)
		return dpv__fail_ptr(-EINVAL);
	mr = dpv__mr_by_handle(to_dctx(pd->context), pd, mr_handle);
	return mr != NULL ? &mr->ibmr : dpv__fail_ptr(-EINVAL);
}

/* ibv_unimport_mr(3): the MR stays registered (ibv_dereg_mr deregisters it). */
DPV_EXPORT void ibv_unimport_mr(struct ibv_mr *mr)
{
	(void)mr;
}

DPV_EXPORT int ibv_dereg_mr(struct ibv_mr *ibmr)
{
	struct dpv_mr *mr = container_of_safe(ibmr, struct dpv_mr, ibmr);
	struct dpv_context *ctx;

	DPV_FORK_NOOP(0);
	if (mr == NULL)
		return EINVAL;
	if (__atomic_load_n(&mr->refs, __ATOMIC_ACQUIRE) != 0)
		return EBUSY;
	ctx = to_dctx(ibmr->context);
	table_remove(ctx->mrs, mr);
	dpv__range_release(ctx, mr);
	dpv__fork_mr_drop(mr);
	DPV_REF_PUT(&mr->pd->refs);
	free(mr);
	return 0;
}
