/* SPDX-License-Identifier: BSD-3-Clause */
/* Page-range registries: page-rounded, reference-counted, never overlapping ranges shared by
 * every holder (MR); a holder references the ranges it covers and adds only the gaps, and a
 * range is undone exactly as made at its last reference. Used for DMA (here) and fork
 * protection (fork.c).
 *
 * DMA: memory outside DPDK's heap is rte_extmem_register'ed and mapped for each device.
 * Memseg lists and VFIO maps are few, neither unmaps part of a map, and VFIO silently skips
 * an overlapping map: hence ranges that never overlap and are unmapped as mapped. */

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <rte_eal.h>
#include <rte_errno.h>
#include <rte_memory.h>

#include "dpv_engine.h"
#include "verbs_base.h"
#include "verbs_device.h"
#include "verbs_mr.h"

struct dpv_range {
	uintptr_t start, end;
	int refs;
};

static struct dpv_range *range_new(struct dpv_range_set *s, uintptr_t start, uintptr_t end)
{
	struct dpv_range *r = calloc(1, sizeof(*r));

	if (r == NULL)
		return NULL;
	r->start = start;
	r->end = end;
	if (s->add(start, end) != 0) {
		free(r);
		return NULL;
	}
	return r;
}

static void range_free(struct dpv_range_set *s, struct dpv_range *r, bool live)
{
	s->del(r->start, r->end, live);
	free(r);
}

static int ranges_insert(struct dpv_range_set *s, struct dpv_range *r)
{
	unsigned int i = 0;

	if (s->nb == s->cap) {
		unsigned int cap = s->cap ? s->cap * 2 : 16;
		struct dpv_range **grown = realloc(s->ranges, cap * sizeof(*grown));

		if (grown == NULL)
			return -ENOMEM;
		s->ranges = grown;
		s->cap = cap;
	}
	while (i < s->nb && s->ranges[i]->start < r->start)
		i++;
	memmove(&s->ranges[i + 1], &s->ranges[i], (s->nb - i) * sizeof(*s->ranges));
	s->ranges[i] = r;
	s->nb++;
	return 0;
}

static void ranges_remove(struct dpv_range_set *s, struct dpv_range *r)
{
	for (unsigned int i = 0; i < s->nb; i++)
		if (s->ranges[i] == r) {
			memmove(&s->ranges[i], &s->ranges[i + 1], (s->nb - i - 1) * sizeof(*s->ranges));
			s->nb--;
			return;
		}
}

/* Give @h a reference on @r (growing its list). */
static int hold(struct dpv_range_refs *h, struct dpv_range *r)
{
	struct dpv_range **grown = realloc(h->r, (h->nb + 1) * sizeof(*grown));

	if (grown == NULL)
		return -ENOMEM;
	h->r = grown;
	h->r[h->nb++] = r;
	r->refs++;
	return 0;
}

static void unref(struct dpv_range_set *s, struct dpv_range *r, bool live)
{
	if (--r->refs == 0) {
		ranges_remove(s, r);
		range_free(s, r, live);
	}
}

static void drop_all(struct dpv_range_set *s, struct dpv_range_refs *h, bool live)
{
	for (unsigned int i = 0; i < h->nb; i++)
		unref(s, h->r[i], live);
	free(h->r);
	h->r = NULL;
	h->nb = 0;
}

/* The range that holds @pos, or a new one from @pos to the next range (or @end). */
static struct dpv_range *range_at(struct dpv_range_set *s, unsigned int *i, uintptr_t pos,
				  uintptr_t end)
{
	struct dpv_range *r;
	uintptr_t gap_end;

	while (*i < s->nb && s->ranges[*i]->end <= pos)
		(*i)++;
	if (*i < s->nb && s->ranges[*i]->start <= pos)
		return s->ranges[*i];
	gap_end = *i < s->nb && s->ranges[*i]->start < end ? s->ranges[*i]->start : end;
	r = range_new(s, pos, gap_end);
	if (r != NULL && ranges_insert(s, r) != 0) {
		range_free(s, r, true);
		r = NULL;
	}
	return r;
}

/* Cover [start, end) with existing ranges and new ones for the gaps. */
static int cover(struct dpv_range_set *s, struct dpv_range_refs *h, uintptr_t start,
		 uintptr_t end)
{
	uintptr_t pos = start;
	unsigned int i = 0;

	while (pos < end) {
		struct dpv_range *r = range_at(s, &i, pos, end);

		if (r == NULL)
			return -ENOMEM;
		if (hold(h, r) != 0) {
			if (r->refs == 0) {
				ranges_remove(s, r);
				range_free(s, r, true);
			}
			return -ENOMEM;
		}
		pos = r->end;
	}
	return 0;
}

static void page_round(const void *va, uint64_t len, uintptr_t *start, uintptr_t *end)
{
	uintptr_t page = (uintptr_t)sysconf(_SC_PAGESIZE);

	*start = RTE_ALIGN_FLOOR((uintptr_t)va, page);
	*end = RTE_ALIGN_CEIL((uintptr_t)va + len, page);
}

int dpv__rangeset_hold(struct dpv_range_set *s, const void *va, uint64_t len,
		       struct dpv_range_refs *h)
{
	uintptr_t start, end;
	int rc;

	page_round(va, len, &start, &end);
	pthread_mutex_lock(&s->lock);
	rc = cover(s, h, start, end);
	if (rc != 0)
		drop_all(s, h, true);
	pthread_mutex_unlock(&s->lock);
	return rc;
}

void dpv__rangeset_drop(struct dpv_range_set *s, struct dpv_range_refs *h)
{
	pthread_mutex_lock(&s->lock);
	drop_all(s, h, true);
	pthread_mutex_unlock(&s->lock);
}

/* A reference on every range in the pages of [va, va + len), no holder keeping the list:
 * for the ibv_dontfork_range / ibv_dofork_range pairs, which name the same bytes twice. */
int dpv__rangeset_hold_anon(struct dpv_range_set *s, const void *va, uint64_t len)
{
	struct dpv_range_refs h = { 0 };
	int rc = dpv__rangeset_hold(s, va, len, &h);

	free(h.r);
	return rc;
}

void dpv__rangeset_drop_anon(struct dpv_range_set *s, const void *va, uint64_t len)
{
	uintptr_t start, end;

	page_round(va, len, &start, &end);
	pthread_mutex_lock(&s->lock);
	for (unsigned int i = 0; i < s->nb;) {
		struct dpv_range *r = s->ranges[i];
		unsigned int nb = s->nb;

		if (r->start < end && r->end > start)
			unref(s, r, true);
		i += s->nb == nb;              /* removed: the next one moved to i */
	}
	pthread_mutex_unlock(&s->lock);
}

void dpv__rangeset_clear(struct dpv_range_set *s, bool live)
{
	pthread_mutex_lock(&s->lock);
	for (unsigned int i = 0; i < s->nb; i++)
		range_free(s, s->ranges[i], live);
	free(s->ranges);
	s->ranges = NULL;
	s->nb = s->cap = 0;
	pthread_mutex_unlock(&s->lock);
}

unsigned int dpv__rangeset_count(struct dpv_range_set *s)
{
	unsigned int n;

	pthread_mutex_lock(&s->lock);
	n = s->nb;
	pthread_mutex_unlock(&s->lock);
	return n;
}

/* ---- the DMA set ---- */

static bool in_dpdk_heap(uintptr_t start, uintptr_t end)
{
	const struct rte_memseg_list *a = rte_mem_virt2memseg_list((void *)start);
	const struct rte_memseg_list *b = rte_mem_virt2memseg_list((void *)(end - 1));

	return a != NULL && a == b && !a->external;
}

bool dpv__in_dpdk_heap(const void *va, uint64_t len)
{
	uintptr_t start, end;

	page_round(va, len, &start, &end);
	return in_dpdk_heap(start, end);
}

static int dma_add(uintptr_t start, uintptr_t end)
{
	long page = sysconf(_SC_PAGESIZE);

	if (rte_extmem_register((void *)start, end - start, NULL, 0, page) != 0) {
		VERBS_LOG(ERR, "cannot register [%#lx, %#lx) with DPDK: %s (DPDK has %d memseg "
			  "lists; register fewer, larger MRs)", (unsigned long)start,
			  (unsigned long)end, rte_strerror(rte_errno), RTE_MAX_MEMSEG_LISTS);
		return -ENOMEM;
	}
	if (dpv__devices_dma_map((void *)start, end - start, true) != 0) {
		/* VFIO's reason does not reach rte_errno: name the two usual ones */
		VERBS_LOG(ERR, "cannot DMA-map [%#lx, %#lx) through the IOMMU. Either the "
			  "locked-memory limit is too small for the pages VFIO pins (fix: ulimit -l "
			  "unlimited, or run as root), or, with IOVA as VA, the IOMMU cannot reach "
			  "the address: one of 39 bits (many Intel VT-d units) cannot map memory "
			  "above 512 GiB, where malloc and mmap place it (fix: an IOMMU of 48 bits, "
			  "or MR memory below 512 GiB; doc/vfio.md)", (unsigned long)start,
			  (unsigned long)end);
		rte_extmem_unregister((void *)start, end - start);
		return -ENOMEM;
	}
	return 0;
}

/* @live false: the ports are gone already, nothing to unmap. */
static void dma_del(uintptr_t start, uintptr_t end, bool live)
{
	if (live)
		dpv__devices_dma_map((void *)start, end - start, false);
	rte_extmem_unregister((void *)start, end - start);
}

static struct dpv_range_set dma_set = {
	.lock = PTHREAD_MUTEX_INITIALIZER, .add = dma_add, .del = dma_del,
};

int dpv__range_acquire(struct dpv_context *ctx, void *va, uint64_t len, struct dpv_mr *mr)
{
	unsigned int mode = dpv__config()->mr_dma_map;

	if (mode == 0 || (mode == 1 && !ctx->dev->caps.needs_dma_map))
		return 0;
	if (dpv__in_dpdk_heap(va, len))
		return 0;
	/* IOVA as PA: malloc'd pages may move under a NIC; such MRs are sent by copy. */
	if (rte_eal_iova_mode() == RTE_IOVA_PA)
		return 0;
	return dpv__rangeset_hold(&dma_set, va, len, &mr->dma);
}

void dpv__range_release(struct dpv_context *ctx, struct dpv_mr *mr)
{
	(void)ctx;
	dpv__rangeset_drop(&dma_set, &mr->dma);
}

/* At shutdown: whatever MRs the application leaked. */
void dpv__ranges_release_all(void)
{
	dpv__rangeset_clear(&dma_set, false);
}

/* For tests and tools: how many ranges are registered. */
DPV_EXPORT unsigned int dpv_dma_range_count(void)
{
	return dpv__rangeset_count(&dma_set);
}
