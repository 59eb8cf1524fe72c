/* SPDX-License-Identifier: BSD-3-Clause */
/* fork(): a child of a process that started DPDK cannot use it, so it is told once and
 * refused; the parent's DPDK memory is MADV_DONTFORK, so a child calling rte_* anyway
 * faults instead of corrupting the parent's pools and queues. doc/api.md, "fork". */

#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include <rte_eal.h>
#include <rte_errno.h>
#include <rte_memory.h>

#include "dpv_engine.h"

bool dpv__forked;
static pid_t eal_pid;              /* the process that started the EAL; 0 before */
static bool told;

static void fork_child(void)
{
	if (eal_pid != 0)
		dpv__forked = true;
}

/* A fork through pthread_atfork's handler, or a clone that skipped it (syscall(SYS_fork)). */
bool dpv__fork_child_check(void)
{
	pid_t owner = __atomic_load_n(&eal_pid, __ATOMIC_ACQUIRE);

	if (!dpv__forked && owner != 0 && getpid() != owner)
		dpv__forked = true;
	return dpv__forked;
}

int dpv__fork_refuse(void)
{
	int saved = errno;

	if (!told) {
		told = true;
		fprintf(stderr, "dpverbs: a child of a process that started DPDK cannot use its "
			"devices; exec a new program or start DPDK in the child only\n");
	}
	errno = saved;
	return -ENODEV;
}

/* Linux marks every mapping in the range and says ENOMEM when there are holes between them:
 * @holes_ok for a VA reservation whose unused parts DPDK may have unmapped. */
static void dontfork(void *va, size_t len, bool holes_ok)
{
	if (va != NULL && len > 0 && madvise(va, len, MADV_DONTFORK) != 0 &&
	    !(holes_ok && errno == ENOMEM))
		ENGINE_LOG(WARNING, "madvise(MADV_DONTFORK) of DPDK memory [%p, +%zu) failed: %s; "
			   "a forked child that calls rte_* could write into it", va, len,
			   strerror(errno));
}

/* The VA reservation of a memseg list, whatever part of it is mapped. */
static int msl_dontfork(const struct rte_memseg_list *msl, void *arg)
{
	(void)arg;
	if (!msl->external)
		dontfork(msl->base_va, msl->len, true);
	return 0;
}

/* ... and the parts of it that are mapped, in case the kernel stopped at a hole. */
static int contig_dontfork(const struct rte_memseg_list *msl, const struct rte_memseg *ms,
			   size_t len, void *arg)
{
	(void)arg;
	if (!msl->external)
		dontfork(ms->addr, len, false);
	return 0;
}

/* Hugepages DPDK maps later (into the reservation) are new mappings: marked as they come. */
static void mem_event(enum rte_mem_event type, const void *addr, size_t len, void *arg)
{
	const struct rte_memseg_list *msl = rte_mem_virt2memseg_list(addr);

	(void)arg;
	if (type == RTE_MEM_EVENT_ALLOC && msl != NULL && !msl->external)
		dontfork((void *)(uintptr_t)addr, len, false);
}

/* Files of the runtime directory mapped shared (the config, memseg metadata) when the EAL
 * keeps its configuration in files (not --in-memory). */
static void runtime_files_dontfork(void)
{
	const char *dir = rte_eal_get_runtime_dir();
	size_t n = dir != NULL ? strlen(dir) : 0;
	char line[1024], path[1024];
	FILE *f = n > 0 ? fopen("/proc/self/maps", "re") : NULL;
	unsigned long start, end;

	while (f != NULL && fgets(line, sizeof(line), f) != NULL) {
		if (sscanf(line, "%lx-%lx %*s %*s %*s %*s %1023s", &start, &end, path) != 3)
			continue;
		if (strncmp(path, dir, n) == 0 && path[n] == '/')
			dontfork((void *)start, end - start, false);
	}
	if (f != NULL)
		fclose(f);
}

static void register_atfork(void)
{
	if (pthread_atfork(NULL, NULL, fork_child) != 0)
		ENGINE_LOG(WARNING, "pthread_atfork failed: a forked child is recognized by its "
			   "pid only");
}

void dpv__fork_eal_started(void)
{
	static pthread_once_t once = PTHREAD_ONCE_INIT;

	pthread_once(&once, register_atfork);
	__atomic_store_n(&eal_pid, getpid(), __ATOMIC_RELEASE);
	/* --legacy-mem and --no-huge map everything at start: no events, nothing to miss */
	if (rte_mem_event_callback_register("dpverbs-dontfork", mem_event, NULL) != 0 &&
	    rte_errno != ENOTSUP)
		ENGINE_LOG(WARNING, "no memory event callback (%s): hugepages DPDK maps from now "
			   "on stay visible to forked children", rte_strerror(rte_errno));
	rte_memseg_list_walk(msl_dontfork, NULL);
	rte_memseg_contig_walk(contig_dontfork, NULL);
	runtime_files_dontfork();
}
