/* SPDX-License-Identifier: BSD-3-Clause */
/* What a context holds, and freeing what the application left at ibv_close_device, as
 * rdma-core does (the kernel destroys a closing context's objects): flows, QPs, AHs, MRs, CQs
 * and their channels, parent domains, PDs, TDs — each before what it depends on. QPs and CQs
 * come from the telemetry registry, MRs from the MR table, the rest (completion channels too,
 * whether a CQ uses them or not) from the context's object sets kept here. */
#include <errno.h>
#include <stdlib.h>

#include "verbs_priv.h"

int dpv__objset_add(struct dpv_context *ctx, struct dpv_objset *s, void *obj)
{
	int rc = 0;

	pthread_mutex_lock(&ctx->lock);
	if (s->n == s->cap) {
		unsigned int cap = s->cap != 0 ? 2 * s->cap : 8;
		void **v = realloc(s->obj, cap * sizeof(*v));

		if (v != NULL) {
			s->obj = v;
			s->cap = cap;
		}
	}
	if (s->n < s->cap)
		s->obj[s->n++] = obj;
	else
		rc = -ENOMEM;
	pthread_mutex_unlock(&ctx->lock);
	return rc;
}

void dpv__objset_del(struct dpv_context *ctx, struct dpv_objset *s, void *obj)
{
	pthread_mutex_lock(&ctx->lock);
	for (unsigned int i = s->n; i-- > 0;)      /* the newest first: freed in LIFO order */
		if (s->obj[i] == obj) {
			s->obj[i] = s->obj[--s->n];
			break;
		}
	pthread_mutex_unlock(&ctx->lock);
}

void **dpv__objset_take(struct dpv_context *ctx, struct dpv_objset *s, unsigned int *n)
{
	void **v;

	pthread_mutex_lock(&ctx->lock);
	*n = s->n;
	v = s->n != 0 ? malloc(s->n * sizeof(*v)) : NULL;
	for (unsigned int i = 0; v != NULL && i < s->n; i++)
		v[i] = s->obj[s->n - 1 - i];         /* newest first */
	if (v == NULL)
		*n = 0;
	pthread_mutex_unlock(&ctx->lock);
	return v;
}

static unsigned int release_qps(struct dpv_context *ctx)
{
	unsigned int n, done = 0;
	struct dpv_qp **v = dpv__registry_qps(ctx, &n);

	for (unsigned int i = 0; i < n; i++) {
		dpv__qp_open_orphan(v[i]);   /* the context goes: so do its QPs, shared or not */
		done += ibv_destroy_qp(&v[i]->ibqp) == 0;
	}
	free(v);
	return done;
}

static unsigned int release_mrs(struct dpv_context *ctx)
{
	struct dpv_mr_table *t = ctx->mrs;
	unsigned int done = 0;

	for (uint32_t i = 0; i < t->size; i++) {
		struct dpv_mr *mr;

		dpv__spinlock_lock(&t->lock);
		mr = t->slot[i];
		dpv__spinlock_unlock(&t->lock);
		if (mr != NULL)
			done += ibv_dereg_mr(&mr->ibmr) == 0;
	}
	return done;
}

static unsigned int release_cqs(struct dpv_context *ctx)
{
	unsigned int n, done = 0;
	struct dpv_cq **v = dpv__registry_cqs(ctx, &n);

	for (unsigned int i = 0; i < n; i++)
		done += ibv_destroy_cq(&v[i]->ibcq) == 0;
	free(v);
	return done;
}

/* Every completion channel, once the CQs that used them are gone: those CQs used and those
 * no CQ used (their memory and eventfd would stay otherwise). */
static unsigned int release_channels(struct dpv_context *ctx)
{
	unsigned int n, done = 0;
	void **v = dpv__objset_take(ctx, &ctx->channels, &n);

	for (unsigned int i = 0; i < n; i++)
		done += ibv_destroy_comp_channel(v[i]) == 0;
	free(v);
	return done;
}

/* Parent domains before the PDs they stand for. */
static unsigned int release_pds(struct dpv_context *ctx)
{
	unsigned int n, done = 0;
	void **v = dpv__objset_take(ctx, &ctx->pds, &n);

	for (int parents = 1; parents >= 0; parents--)
		for (unsigned int i = 0; i < n; i++) {
			struct ibv_pd *pd = v[i];

			if (pd != NULL && (to_dpd(pd)->parent != NULL) == parents &&
			    ibv_dealloc_pd(pd) == 0) {
				v[i] = NULL;
				done++;
			}
		}
	free(v);
	return done;
}

static unsigned int release_tds(struct dpv_context *ctx)
{
	unsigned int n, done = 0;
	void **v = dpv__objset_take(ctx, &ctx->tds, &n);

	for (unsigned int i = 0; i < n; i++)
		done += dpv_dealloc_td(v[i]) == 0;
	free(v);
	return done;
}

void dpv__context_release(struct dpv_context *ctx)
{
	unsigned int flows = 0, qps, srqs, ahs = 0, mrs, cqs, chans, pds, tds;

	for (int i = 0; dpv__device_hooks[i] != NULL; i++)      /* RAW: flows */
		if (dpv__device_hooks[i]->release_before_qps != NULL)
			flows += dpv__device_hooks[i]->release_before_qps(ctx);
	qps = dpv__release_qp_opens(ctx);   /* handles of other QPs first: they may end them */
	qps += release_qps(ctx);
	srqs = dpv__release_srqs(ctx) + dpv__release_xrcds(ctx);   /* after their QPs */
	for (int i = 0; dpv__device_hooks[i] != NULL; i++)      /* RoCE: AHs */
		if (dpv__device_hooks[i]->release_after_qps != NULL)
			ahs += dpv__device_hooks[i]->release_after_qps(ctx);
	dpv__mw_release_all(ctx);          /* they hold MRs */
	mrs = release_mrs(ctx);
	cqs = release_cqs(ctx);
	chans = release_channels(ctx);
	pds = release_pds(ctx);
	tds = release_tds(ctx);
	if (flows + qps + srqs + ahs + mrs + cqs + chans + pds + tds != 0)
		VERBS_LOG(DEBUG, "ibv_close_device(%s): the application left %u flows, %u QPs, "
			  "%u SRQs and XRC domains, "
			  "%u AHs, %u MRs, %u CQs, %u completion channels, %u PDs and %u TDs: "
			  "destroyed", ctx->dev->ibdev.name, flows, qps, srqs, ahs, mrs, cqs, chans, pds,
			  tds);
	pthread_mutex_lock(&ctx->lock);
	if (ctx->nb_pd || ctx->nb_cq || ctx->nb_qp || ctx->nb_channel || ctx->nb_td)
		VERBS_LOG(DEBUG, "ibv_close_device(%s): %d PDs, %d CQs, %d QPs, %d completion "
			  "channels and %d TDs could not be destroyed; their memory stays allocated",
			  ctx->dev->ibdev.name, ctx->nb_pd, ctx->nb_cq, ctx->nb_qp, ctx->nb_channel,
			  ctx->nb_td);
	pthread_mutex_unlock(&ctx->lock);
	free(ctx->pds.obj);
	free(ctx->tds.obj);
	free(ctx->flows.obj);
	free(ctx->channels.obj);
	free(ctx->ahs.obj);
	free(ctx->srqs.obj);
	free(ctx->xrcds.obj);
	free(ctx->qp_opens.obj);
}
