/* SPDX-License-Identifier: BSD-3-Clause */
/* mbuf pools, one per NUMA socket, created when a port or lcore of that socket first needs one. */
#include <errno.h>
#include <pthread.h>
#include <stdio.h>

#include <numa.h>
#include <rte_errno.h>
#include <rte_lcore.h>
#include <rte_mbuf.h>
#include <rte_mempool.h>

#include "dpv_engine.h"

static pthread_mutex_t pool_lock = PTHREAD_MUTEX_INITIALIZER;
/* [0]: mbufs with data room; [1]: mbufs without, for attaching external buffers */
static struct rte_mempool *pools[2][RTE_MAX_NUMA_NODES];

int dpv__socket_of_caller(void)
{
	int cpu, node;

	if (rte_lcore_id() != LCORE_ID_ANY && rte_socket_id() != (unsigned int)SOCKET_ID_ANY)
		return (int)rte_socket_id();
	if (numa_available() < 0)
		return 0;
	cpu = sched_getcpu();
	node = cpu < 0 ? 0 : numa_node_of_cpu(cpu);
	return node < 0 || node >= RTE_MAX_NUMA_NODES ? 0 : node;
}

#ifdef DPV_TSAN
void AnnotateBenignRaceSized(const char *file, int line, const volatile void *mem, long size,
			     const char *desc);

static void tsan_chunk(struct rte_mempool *mp, void *opaque, struct rte_mempool_memhdr *memhdr,
		       unsigned int mem_idx)
{
	(void)mp, (void)opaque, (void)mem_idx;
	AnnotateBenignRaceSized(__FILE__, __LINE__, memhdr->addr, (long)memhdr->len,
				"mempool object, handed between threads inside DPDK");
}

void dpv__tsan_pool(struct rte_mempool *mp)
{
	if (mp != NULL)
		rte_mempool_mem_iter(mp, tsan_chunk, NULL);
}
#endif

static struct rte_mempool *pool_create(int socket, int ext)
{
	const struct dpv_config *cfg = dpv__config();
	uint16_t room = ext ? 0 : (uint16_t)cfg->mbuf_data_room;
	char name[RTE_MEMPOOL_NAMESIZE];
	struct rte_mempool *mp;

	snprintf(name, sizeof(name), ext ? "dpv_ext_s%d" : "dpv_mbuf_s%d", socket);
	mp = rte_pktmbuf_pool_create(name, cfg->mbufs_per_socket, cfg->mbuf_cache, 0, room,
				     socket);
	if (mp == NULL && socket != 0) {
		/* A socket without memory of its own (no hugepages there): use any socket's. */
		ENGINE_LOG(WARNING, "no memory for an mbuf pool on NUMA socket %d: %s; using any "
			   "socket (cross-socket traffic). Fix: reserve hugepages on node %d",
			   socket, rte_strerror(rte_errno), socket);
		mp = rte_pktmbuf_pool_create(name, cfg->mbufs_per_socket, cfg->mbuf_cache, 0,
					     room, SOCKET_ID_ANY);
	}
	if (mp == NULL)
		ENGINE_LOG(ERR, "cannot create an mbuf pool of %u mbufs of %u bytes: %s "
			   "(lower mbufs_per_socket in the configuration, or reserve more hugepages)",
			   cfg->mbufs_per_socket, cfg->mbuf_data_room, rte_strerror(rte_errno));
	dpv__tsan_pool(mp);
	return mp;
}

static struct rte_mempool *pool_get(int socket, int ext)
{
	struct rte_mempool *mp;

	if (socket < 0 || socket >= RTE_MAX_NUMA_NODES)
		socket = dpv__socket_of_caller();
	mp = __atomic_load_n(&pools[ext][socket], __ATOMIC_ACQUIRE);
	if (mp != NULL)
		return mp;
	pthread_mutex_lock(&pool_lock);
	if (pools[ext][socket] == NULL)
		__atomic_store_n(&pools[ext][socket], pool_create(socket, ext), __ATOMIC_RELEASE);
	mp = pools[ext][socket];
	pthread_mutex_unlock(&pool_lock);
	if (mp == NULL)
		errno = ENOMEM;
	return mp;
}

struct rte_mempool *dpv__pool_get(int socket)
{
	return pool_get(socket, 0);
}

struct rte_mempool *dpv__pool_ext_get(int socket)
{
	return pool_get(socket, 1);
}

void dpv__pools_release(void)
{
	pthread_mutex_lock(&pool_lock);
	for (int k = 0; k < 2; k++)
		for (int i = 0; i < RTE_MAX_NUMA_NODES; i++) {
			struct rte_mempool *mp = pools[k][i];

			if (mp == NULL)
				continue;
			/* mbufs still out (a PMD that never freed them): keep the pool */
			if (rte_mempool_in_use_count(mp) != 0) {
				ENGINE_LOG(WARNING, "pool %s still has %u mbufs in use; not freed",
					   mp->name, rte_mempool_in_use_count(mp));
				continue;
			}
			rte_mempool_free(mp);
			pools[k][i] = NULL;
		}
	pthread_mutex_unlock(&pool_lock);
}
