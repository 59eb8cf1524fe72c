/* The DMA range registry. Memory outside DPDK's heap must be registered with
 * rte_extmem_register and DMA-mapped for each device before a NIC can read it. DPDK has a
 * fixed number of memseg lists, VFIO a fixed number of user maps, neither can unmap part of a
 * map, and VFIO silently skips an overlapping map; so ranges here are page-rounded, never
 * overlap, are shared by every MR that touches them (reference-counted), and are unmapped
 * exactly as they were mapped. An MR that covers registered pages and new ones takes a
 * reference on the old ranges and registers only the gaps. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <rte_eal.h>
#include <rte_errno.h>
#include <rte_memory.h>

#include "verbs_priv.h"

struct dpv_range {
	uintptr_t start, end;
	int refs;
};

static pthread_mutex_t range_lock = PTHREAD_MUTEX_INITIALIZER;
static struct dpv_range **ranges;      /* sorted by start */
static unsigned int nb_ranges, cap_ranges;

static bool in_dpdk_heap(uintptr_t start, uintptr_t end)
{
	const struct rte_memseg_list *a = rte_mem_virt2memseg_list((void *)start);
	const struct rte_memseg_list *b = rte_mem_virt2memseg_list((void *)(end - 1));

	return a != NULL && a == b && !a->external;
}

static int range_map(struct dpv_context *ctx, struct dpv_range *r, bool map)
{
	return dpv__devices_dma_map((void *)r->start, r->end - r->start, map);
}

static struct dpv_range *range_new(struct dpv_context *ctx, uintptr_t start, uintptr_t end)
{
	struct dpv_range *r = calloc(1, sizeof(*r));
	long page = sysconf(_SC_PAGESIZE);

	if (r == NULL)
		return NULL;
	r->start = start;
	r->end = end;
	if (rte_extmem_register((void *)start, end - start, NULL, 0, page) != 0) {
		VERBS_LOG(ERR, "cannot register [%#lx, %#lx) with DPDK: %s (DPDK has %d memseg "
			  "lists; register fewer, larger MRs)", (unsigned long)start,
			  (unsigned long)end, rte_strerror(rte_errno), RTE_MAX_MEMSEG_LISTS);
		free(r);
		return NULL;
	}
	if (range_map(ctx, r, true) != 0) {
		/* VFIO's reason does not reach rte_errno: name the two usual ones */
		VERBS_LOG(ERR, "cannot DMA-map [%#lx, %#lx) for %s through the IOMMU. Either the "
			  "locked-memory limit is too small for the pages VFIO pins (fix: ulimit -l "
			  "unlimited, or run as root), or, with IOVA as VA, the IOMMU cannot reach "
			  "the address: one of 39 bits (many Intel VT-d units) cannot map memory "
			  "above 512 GiB, where malloc and mmap place it (fix: an IOMMU of 48 bits, "
			  "or MR memory below 512 GiB; doc/vfio.md)", (unsigned long)start,
			  (unsigned long)end, ctx->dev->ibdev.name);
		rte_extmem_unregister((void *)start, end - start);
		free(r);
		return NULL;
	}
	return r;
}

/* @ctx NULL: the ports are gone already, nothing to unmap. */
static void range_free(struct dpv_context *ctx, struct dpv_range *r)
{
	if (ctx != NULL)
		range_map(ctx, r, false);
	rte_extmem_unregister((void *)r->start, r->end - r->start);
	free(r);
}

static int ranges_insert(struct dpv_range *r)
{
	unsigned int i = 0;

	if (nb_ranges == cap_ranges) {
		unsigned int cap = cap_ranges ? cap_ranges * 2 : 16;
		struct dpv_range **grown = realloc(ranges, cap * sizeof(*ranges));

		if (grown == NULL)
			return -ENOMEM;
		ranges = grown;
		cap_ranges = cap;
	}
	while (i < nb_ranges && ranges[i]->start < r->start)
		i++;
	memmove(&ranges[i + 1], &ranges[i], (nb_ranges - i) * sizeof(*ranges));
	ranges[i] = r;
	nb_ranges++;
	return 0;
}

static void ranges_remove(struct dpv_range *r)
{
	for (unsigned int i = 0; i < nb_ranges; i++)
		if (ranges[i] == r) {
			memmove(&ranges[i], &ranges[i + 1], (nb_ranges - i - 1) * sizeof(*ranges));
			nb_ranges--;
			return;
		}
}

/* Give @mr a reference on @r (growing its list). */
static int mr_hold(struct dpv_mr *mr, struct dpv_range *r)
{
	struct dpv_range **grown = realloc(mr->ranges, (mr->nb_ranges + 1) * sizeof(*grown));

	if (grown == NULL)
		return -ENOMEM;
	mr->ranges = grown;
	mr->ranges[mr->nb_ranges++] = r;
	r->refs++;
	return 0;
}

static void mr_drop_all(struct dpv_context *ctx, struct dpv_mr *mr)
{
	for (unsigned int i = 0; i < mr->nb_ranges; i++) {
		struct dpv_range *r = mr->ranges[i];

		if (--r->refs == 0) {
			ranges_remove(r);
			range_free(ctx, r);
		}
	}
	free(mr->ranges);
	mr->ranges = NULL;
	mr->nb_ranges = 0;
}

/* Cover [start, end) with existing ranges and new ones for the gaps. */
static int cover(struct dpv_context *ctx, struct dpv_mr *mr, uintptr_t start, uintptr_t end)
{
	uintptr_t pos = start;
	unsigned int i = 0;
	int rc = 0;

	while (rc == 0 && pos < end) {
		struct dpv_range *r;

		while (i < nb_ranges && ranges[i]->end <= pos)
			i++;
		if (i < nb_ranges && ranges[i]->start <= pos) {
			r = ranges[i];                     /* pos lies in an existing range */
		} else {
			uintptr_t gap_end = i < nb_ranges && ranges[i]->start < end ?
					    ranges[i]->start : end;

			r = range_new(ctx, pos, gap_end);
			if (r == NULL)
				return -ENOMEM;
			rc = ranges_insert(r);
			if (rc != 0) {
				range_free(ctx, r);
				return rc;
			}
		}
		rc = mr_hold(mr, r);
		if (rc != 0) {
			if (r->refs == 0) {
				ranges_remove(r);
				range_free(ctx, r);
			}
			return rc;
		}
		pos = r->end;
	}
	return rc;
}

int dpv__range_acquire(struct dpv_context *ctx, void *va, uint64_t len, struct dpv_mr *mr)
{
	long page = sysconf(_SC_PAGESIZE);
	uintptr_t start = RTE_ALIGN_FLOOR((uintptr_t)va, (uintptr_t)page);
	uintptr_t end = RTE_ALIGN_CEIL((uintptr_t)va + len, (uintptr_t)page);
	unsigned int mode = dpv__config()->mr_dma_map;
	int rc;

	if (mode == 0 || (mode == 1 && !ctx->dev->caps.needs_dma_map))
		return 0;
	if (in_dpdk_heap(start, end))
		return 0;
	/* IOVA as PA: malloc'd pages may move under a NIC; such MRs are sent by copy. */
	if (rte_eal_iova_mode() == RTE_IOVA_PA)
		return 0;
	pthread_mutex_lock(&range_lock);
	rc = cover(ctx, mr, start, end);
	if (rc != 0)
		mr_drop_all(ctx, mr);
	pthread_mutex_unlock(&range_lock);
	return rc;
}

void dpv__range_release(struct dpv_context *ctx, struct dpv_mr *mr)
{
	pthread_mutex_lock(&range_lock);
	mr_drop_all(ctx, mr);
	pthread_mutex_unlock(&range_lock);
}

/* At shutdown: whatever MRs the application leaked. */
void dpv__ranges_release_all(void)
{
	pthread_mutex_lock(&range_lock);
	for (unsigned int i = 0; i < nb_ranges; i++)
		range_free(NULL, ranges[i]);
	free(ranges);
	ranges = NULL;
	nb_ranges = cap_ranges = 0;
	pthread_mutex_unlock(&range_lock);
}

/* For tests and tools: how many ranges are registered. */
DPV_EXPORT unsigned int dpv_dma_range_count(void)
{
	unsigned int n;

	pthread_mutex_lock(&range_lock);
	n = nb_ranges;
	pthread_mutex_unlock(&range_lock);
	return n;
}
