/* SPDX-License-Identifier: BSD-3-Clause */
/* ibv_fork_init and fork protection, rdma-core's contract: once enabled, every MR's pages are
 * MADV_DONTFORK while an MR holds them; after the first MR it is too late (EINVAL). DPDK's
 * memory is DONTFORK always (engine/fork.c). doc/api.md, "fork". */

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

#include "verbs_mr.h"
#include "verbs_fork.h"

static pthread_mutex_t fork_lock = PTHREAD_MUTEX_INITIALIZER;
static bool fork_on;            /* ibv_fork_init succeeded */
static bool too_late;           /* an MR (or a fork range) came first */

static int nofork_add(uintptr_t start, uintptr_t end)
{
	return madvise((void *)start, end - start, MADV_DONTFORK) == 0 ? 0 : -errno;
}

/* The application may have unmapped the pages already: nothing to undo then. */
static void nofork_del(uintptr_t start, uintptr_t end, bool live)
{
	(void)live;
	madvise((void *)start, end - start, MADV_DOFORK);
}

static struct dpv_range_set nofork_set = {
	.lock = PTHREAD_MUTEX_INITIALIZER, .add = nofork_add, .del = nofork_del,
};

/* Set, and not "0" (rdma-core's reading of its variables). */
static bool env_on(const char *name)
{
	const char *v = getenv(name);

	return v != NULL && strcmp(v, "0") != 0;
}

static void env_init(void)
{
	int rc;

	if (!env_on("RDMAV_FORK_SAFE") && !env_on("IBV_FORK_SAFE"))
		return;
	rc = ibv_fork_init();
	if (rc != 0)
		fprintf(stderr, "dpverbs: RDMAV_FORK_SAFE/IBV_FORK_SAFE is set, but fork protection "
			"could not be turned on: %s\n", strerror(rc));
}

void dpv__fork_env_init(void)
{
	static pthread_once_t once = PTHREAD_ONCE_INIT;

	pthread_once(&once, env_init);
}

/* Is protection on? If not, it is too late from now on. */
static bool protecting(void)
{
	bool on;

	dpv__fork_env_init();
	pthread_mutex_lock(&fork_lock);
	on = fork_on;
	too_late = too_late || !on;
	pthread_mutex_unlock(&fork_lock);
	return on;
}

/* DPDK's heap is DONTFORK as a whole: an MR inside it must not turn that off when it goes. */
int dpv__fork_mr_hold(struct dpv_mr *mr)
{
	if (!protecting() || dpv__in_dpdk_heap(mr->va, mr->length))
		return 0;
	return dpv__rangeset_hold(&nofork_set, mr->va, mr->length, &mr->nofork);
}

void dpv__fork_mr_drop(struct dpv_mr *mr)
{
	if (mr->nofork.nb > 0)
		dpv__rangeset_drop(&nofork_set, &mr->nofork);
}

int dpv__fork_range(void *base, size_t size, bool dontfork)
{
	if (!protecting() || base == NULL || size == 0 || dpv__in_dpdk_heap(base, size))
		return 0;
	if (!dontfork) {
		dpv__rangeset_drop_anon(&nofork_set, base, size);
		return 0;
	}
	return dpv__rangeset_hold_anon(&nofork_set, base, size);
}

DPV_EXPORT int ibv_fork_init(void)
{
	int rc = 0;

	pthread_mutex_lock(&fork_lock);
	if (!fork_on && too_late)
		rc = EINVAL;
	else
		fork_on = true;
	pthread_mutex_unlock(&fork_lock);
	return rc;
}

DPV_EXPORT enum ibv_fork_status ibv_is_fork_initialized(void)
{
	bool on;

	dpv__fork_env_init();
	pthread_mutex_lock(&fork_lock);
	on = fork_on;
	pthread_mutex_unlock(&fork_lock);
	return on ? IBV_FORK_ENABLED : IBV_FORK_DISABLED;
}

/* rdma-core: 0, or -1 when madvise failed. Without ibv_fork_init, nothing (and fork_init is
 * then too late). */
DPV_EXPORT int ibv_dontfork_range(void *base, size_t size)
{
	int rc = dpv__fork_range(base, size, true);

	if (rc == 0)
		return 0;
	errno = -rc;
	return -1;
}

DPV_EXPORT int ibv_dofork_range(void *base, size_t size)
{
	return dpv__fork_range(base, size, false);
}
