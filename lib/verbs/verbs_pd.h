/* SPDX-License-Identifier: BSD-3-Clause */
/* Protection domains, parent domains and thread domains (pd.c), and the queue rings a parent
 * domain's allocator may give. */
#ifndef DPV_VERBS_PD_H
#define DPV_VERBS_PD_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <infiniband/verbs.h>
#include "verbs_base.h"

struct dpv_td {
	struct ibv_td ibtd;
	int refs;
};

struct dpv_pd {
	struct ibv_pd ibpd;
	int refs;                  /* MRs, QPs, CQs and parent domains using it */
	struct dpv_pd *parent;     /* parent domain: the PD it stands for */
	struct dpv_td *td;         /* parent domain: its thread domain (lock-free QPs) */
	/* parent domain: the program's allocator for queue rings (dpv__qbuf_alloc), and the
	 * pd_context both take */
	void *(*alloc)(struct ibv_pd *pd, void *pd_context, size_t size, size_t alignment,
		       uint64_t resource_type);
	void (*free)(struct ibv_pd *pd, void *pd_context, void *ptr, uint64_t resource_type);
	void *pd_context;
};

/* A zeroed, cache-aligned queue ring of @size bytes: from @pd's parent-domain allocator
 * (resource @type; *@custom true) unless it answers IBV_ALLOCATOR_USE_DEFAULT or there is
 * none. NULL: out of memory (or the allocator's pointer misaligned: given back). */

void *dpv__qbuf_alloc(struct dpv_pd *pd, size_t size, uint64_t type, bool *custom);
/* Give back what dpv__qbuf_alloc gave (@custom as it said); NULL is nothing. */
void dpv__qbuf_free(struct dpv_pd *pd, void *p, uint64_t type, bool custom);

static inline struct dpv_pd *to_dpd(struct ibv_pd *p)
{
	return container_of_safe(p, struct dpv_pd, ibpd);
}

/* The PD a QP or MR really belongs to (a parent domain stands for its PD). */
static inline struct dpv_pd *dpv__pd_base(struct dpv_pd *pd)
{
	return pd->parent != NULL ? pd->parent : pd;
}

/* Context op slots (pd.c). */
struct ibv_pd *dpv_alloc_parent_domain(struct ibv_context *context,
				       struct ibv_parent_domain_init_attr *attr);
struct ibv_td *dpv_alloc_td(struct ibv_context *context, struct ibv_td_init_attr *attr);
int dpv_dealloc_td(struct ibv_td *td);

#endif
