/* SPDX-License-Identifier: BSD-3-Clause */
/* What every part of the verbs core uses: its log type, container_of_safe, a counter with one
 * writer, the errno helper of the entry points and the cycle-statistics switch.
 * The name tells the error convention (as libuv's uv_ and uv__):
 *   ibv_*, dpv_*   entry points — the exported API of <dpverbs.h> and the implementations of
 *                  the verbs context ops that ibv_* inlines call — follow rdma-core: 0 or a
 *                  positive errno, NULL with errno, -1 with errno where the man page says so;
 *   dpv__*         internal functions: 0 or a negative errno (constructors: NULL and errno).
 * File-local functions have no prefix and follow the internal convention. */
#ifndef DPV_VERBS_BASE_H
#define DPV_VERBS_BASE_H

#include <errno.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <rte_branch_prediction.h>
#include <rte_common.h>
#include <rte_cycles.h>
#include <rte_log.h>

#define container_of_safe(ptr, type, member) \
	((ptr) == NULL ? NULL : (type *)((char *)(ptr) - offsetof(type, member)))

extern int dpv_logtype_verbs;
#define VERBS_LOG(level, fmt, ...) \
	rte_log(RTE_LOG_ ## level, dpv_logtype_verbs, "dpverbs: " fmt "\n", ##__VA_ARGS__)

/* A counter with one writer at a time (serialized by a lock) that others read without it. */
static inline void dpv__count(uint64_t *c, uint64_t n)
{
	__atomic_store_n(c, *c + n, __ATOMIC_RELAXED);
}

/* Errno helpers for the entry points. */
static inline void *dpv__fail_ptr(int neg_errno)
{
	errno = -neg_errno;
	return NULL;
}

extern bool dpv_cycles_on;

static inline bool dpv__cycles(void)
{
	return __atomic_load_n(&dpv_cycles_on, __ATOMIC_RELAXED);
}

static inline uint64_t dpv__cyc_start(void)
{
	return unlikely(dpv__cycles()) ? rte_rdtsc() : 0;
}

/* With cycle statistics: add the cycles since @since to *@acc and return now (the start of
 * the next stage); 0 without. */
static inline uint64_t dpv__cyc_lap(uint64_t *acc, uint64_t since)
{
	uint64_t t;

	if (likely(!dpv__cycles()))
		return 0;
	t = rte_rdtsc();
	dpv__count(acc, t - since);
	return t;
}

#endif
