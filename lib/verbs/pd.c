/* SPDX-License-Identifier: BSD-3-Clause */
/* Protection domains, thread domains and parent domains. A QP created on a parent domain with
 * a thread domain takes no lock: the application promises one thread at a time. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "verbs_base.h"
#include "verbs_device.h"
#include "verbs_pd.h"
#include "verbs_fork.h"

static void ctx_count(struct dpv_context *ctx, int *counter, int delta)
{
	pthread_mutex_lock(&ctx->lock);
	*counter += delta;
	pthread_mutex_unlock(&ctx->lock);
}

/* A zeroed object of @size, kept in @set of @ctx (freed at close if the application leaves
 * it) and counted in *@counter; NULL when out of memory. */
static void *ctx_object_new(struct dpv_context *ctx, size_t size, struct dpv_objset *set,
			    int *counter)
{
	void *obj = calloc(1, size);

	if (obj == NULL)
		return NULL;
	if (dpv__objset_add(ctx, set, obj) != 0) {
		free(obj);
		return NULL;
	}
	ctx_count(ctx, counter, 1);
	return obj;
}

DPV_EXPORT struct ibv_pd *ibv_alloc_pd(struct ibv_context *context)
{
	struct dpv_context *ctx = to_dctx(context);
	struct dpv_pd *pd;

	DPV_FORK_REFUSE(NULL);
	if (ctx == NULL)
		return dpv__fail_ptr(-EINVAL);
	pd = ctx_object_new(ctx, sizeof(*pd), &ctx->pds, &ctx->nb_pd);
	if (pd == NULL)
		return dpv__fail_ptr(-ENOMEM);
	pd->ibpd.context = context;
	/* a handle of its own in the context, for ibv_import_pd (1, 2, ...; 0 is none) */
	pd->ibpd.handle = __atomic_add_fetch(&ctx->pd_handles, 1, __ATOMIC_RELAXED);
	return &pd->ibpd;
}

/* ibv_import_pd(3): the PD (not a parent domain) of @context whose handle is @pd_handle —
 * the same ibv_pd, as ibv_import_device gives the same context; EINVAL if it has none. */
DPV_EXPORT struct ibv_pd *ibv_import_pd(struct ibv_context *context, uint32_t pd_handle)
{
	struct dpv_context *ctx = to_dctx(context);
	struct ibv_pd *found = NULL;

	DPV_FORK_REFUSE(NULL);
	if (ctx == NULL)
		return dpv__fail_ptr(-EINVAL);
	pthread_mutex_lock(&ctx->lock);
	for (unsigned int i = 0; i < ctx->pds.n && found == NULL; i++) {
		struct dpv_pd *pd = ctx->pds.obj[i];

		if (pd->parent == NULL && pd_handle != 0 && pd->ibpd.handle == pd_handle)
			found = &pd->ibpd;
	}
	pthread_mutex_unlock(&ctx->lock);
	return found != NULL ? found : dpv__fail_ptr(-EINVAL);
}

/* ibv_unimport_pd(3): the PD stays as it is (it is the original one; ibv_dealloc_pd
 * deallocates it). */
DPV_EXPORT void ibv_unimport_pd(struct ibv_pd *pd)
{
	(void)pd;
}

DPV_EXPORT int ibv_dealloc_pd(struct ibv_pd *ibpd)
{
	struct dpv_pd *pd = to_dpd(ibpd);
	struct dpv_context *ctx;

	DPV_FORK_NOOP(0);
	if (pd == NULL)
		return EINVAL;
	ctx = to_dctx(ibpd->context);
	pthread_mutex_lock(&ctx->lock);
	if (__atomic_load_n(&pd->refs, __ATOMIC_ACQUIRE) != 0) {
		pthread_mutex_unlock(&ctx->lock);
		VERBS_LOG(DEBUG, "ibv_dealloc_pd: %d MRs, QPs or parent domains still use it",
			  pd->refs);
		return EBUSY;
	}
	ctx->nb_pd--;
	pthread_mutex_unlock(&ctx->lock);
	dpv__objset_del(ctx, &ctx->pds, pd);
	if (pd->parent != NULL)
		DPV_REF_PUT(&pd->parent->refs);
	if (pd->td != NULL)
		DPV_REF_PUT(&pd->td->refs);
	free(pd);
	return 0;
}

struct ibv_td *dpv_alloc_td(struct ibv_context *context, struct ibv_td_init_attr *attr)
{
	struct dpv_context *ctx = to_dctx(context);
	struct dpv_td *td;

	DPV_FORK_REFUSE(NULL);
	if (attr == NULL || attr->comp_mask != 0)
		return dpv__fail_ptr(-EINVAL);
	td = ctx_object_new(ctx, sizeof(*td), &ctx->tds, &ctx->nb_td);
	if (td == NULL)
		return dpv__fail_ptr(-ENOMEM);
	td->ibtd.context = context;
	return &td->ibtd;
}

int dpv_dealloc_td(struct ibv_td *ibtd)
{
	struct dpv_td *td = container_of_safe(ibtd, struct dpv_td, ibtd);
	struct dpv_context *ctx;

	DPV_FORK_NOOP(0);
	if (td == NULL)
		return EINVAL;
	if (__atomic_load_n(&td->refs, __ATOMIC_ACQUIRE) != 0)
		return EBUSY;
	ctx = to_dctx(ibtd->context);
	ctx_count(ctx, &ctx->nb_td, -1);
	dpv__objset_del(ctx, &ctx->tds, td);
	free(td);
	return 0;
}

struct ibv_pd *dpv_alloc_parent_domain(struct ibv_context *context,
				       struct ibv_parent_domain_init_attr *attr)
{
	struct dpv_context *ctx = to_dctx(context);
	struct dpv_pd *pd;

	DPV_FORK_REFUSE(NULL);
	if (attr == NULL || attr->pd == NULL || attr->pd->context != context)
		return dpv__fail_ptr(-EINVAL);
	if (attr->comp_mask & ~(uint32_t)(IBV_PARENT_DOMAIN_INIT_ATTR_ALLOCATORS |
					  IBV_PARENT_DOMAIN_INIT_ATTR_PD_CONTEXT))
		return dpv__fail_ptr(-EINVAL);
	/* the program's allocator takes the queues' rings (dpv__qbuf_alloc): both functions */
	if ((attr->comp_mask & IBV_PARENT_DOMAIN_INIT_ATTR_ALLOCATORS) &&
	    (attr->alloc == NULL || attr->free == NULL))
		return dpv__fail_ptr(-EINVAL);
	if (to_dpd(attr->pd)->parent != NULL)
		return dpv__fail_ptr(-EINVAL);
	pd = ctx_object_new(ctx, sizeof(*pd), &ctx->pds, &ctx->nb_pd);
	if (pd == NULL)
		return dpv__fail_ptr(-ENOMEM);
	pd->ibpd.context = context;
	if (attr->comp_mask & IBV_PARENT_DOMAIN_INIT_ATTR_ALLOCATORS) {
		pd->alloc = attr->alloc;
		pd->free = attr->free;
	}
	if (attr->comp_mask & IBV_PARENT_DOMAIN_INIT_ATTR_PD_CONTEXT)
		pd->pd_context = attr->pd_context;
	pd->parent = to_dpd(attr->pd);
	__atomic_fetch_add(&pd->parent->refs, 1, __ATOMIC_RELEASE);
	if (attr->td != NULL) {
		pd->td = container_of_safe(attr->td, struct dpv_td, ibtd);
		__atomic_fetch_add(&pd->td->refs, 1, __ATOMIC_RELEASE);
	}
	return &pd->ibpd;
}

void *dpv__qbuf_alloc(struct dpv_pd *pd, size_t size, uint64_t type, bool *custom)
{
	size_t len = RTE_ALIGN_CEIL(RTE_MAX(size, (size_t)1), RTE_CACHE_LINE_SIZE);
	void *p;

	*custom = false;
	if (pd != NULL && pd->alloc != NULL) {
		p = pd->alloc(&pd->ibpd, pd->pd_context, len, RTE_CACHE_LINE_SIZE, type);
		if (p == NULL)
			return NULL;
		if (p != IBV_ALLOCATOR_USE_DEFAULT) {
			if ((uintptr_t)p % 8 != 0) {       /* our rings need at least this */
				pd->free(&pd->ibpd, pd->pd_context, p, type);
				return NULL;
			}
			*custom = true;
			__atomic_fetch_add(&pd->refs, 1, __ATOMIC_RELEASE);   /* until freed */
			memset(p, 0, len);
			return p;
		}
	}
	p = aligned_alloc(RTE_CACHE_LINE_SIZE, len);
	if (p != NULL)
		memset(p, 0, len);
	return p;
}

void dpv__qbuf_free(struct dpv_pd *pd, void *p, uint64_t type, bool custom)
{
	if (p == NULL)
		return;
	if (!custom) {
		free(p);
		return;
	}
	pd->free(&pd->ibpd, pd->pd_context, p, type);
	DPV_REF_PUT(&pd->refs);
}
