/* Protection domains, thread domains and parent domains. A QP created on a parent domain with
 * a thread domain takes no lock: the application promises one thread at a time. */
#include <errno.h>
#include <stdlib.h>

#include "verbs_priv.h"

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
	return &pd->ibpd;
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
		__atomic_fetch_sub(&pd->parent->refs, 1, __ATOMIC_RELEASE);
	if (pd->td != NULL)
		__atomic_fetch_sub(&pd->td->refs, 1, __ATOMIC_RELEASE);
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
	/* Queue memory lives in hugepages; custom allocators have nothing to allocate. */
	if (attr->comp_mask & IBV_PARENT_DOMAIN_INIT_ATTR_ALLOCATORS)
		return dpv__fail_ptr(-EOPNOTSUPP);
	if (to_dpd(attr->pd)->parent != NULL)
		return dpv__fail_ptr(-EINVAL);
	pd = ctx_object_new(ctx, sizeof(*pd), &ctx->pds, &ctx->nb_pd);
	if (pd == NULL)
		return dpv__fail_ptr(-ENOMEM);
	pd->ibpd.context = context;
	pd->parent = to_dpd(attr->pd);
	__atomic_fetch_add(&pd->parent->refs, 1, __ATOMIC_RELEASE);
	if (attr->td != NULL) {
		pd->td = container_of_safe(attr->td, struct dpv_td, ibtd);
		__atomic_fetch_add(&pd->td->refs, 1, __ATOMIC_RELEASE);
	}
	return &pd->ibpd;
}
