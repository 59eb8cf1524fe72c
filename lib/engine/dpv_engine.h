/* SPDX-License-Identifier: BSD-3-Clause */
/* The engine: starting DPDK (EAL arguments, hugepages, shutdown), runtime configuration and the
 * per-NUMA-socket mbuf pools. Private to libdpverbs.
 * Functions return 0 or a negative errno unless they say otherwise. */
#ifndef DPV_ENGINE_H
#define DPV_ENGINE_H

#include <stdbool.h>
#include <stdint.h>
#include <rte_log.h>

struct rte_mempool;

#define DPV_EXPORT __attribute__((visibility("default")))

#define DPV_CONFIG_MAX_ADDRS 64

/* Runtime configuration; defaults in config/dpverbs.conf, see doc/configuration.md. */
struct dpv_config {
	unsigned int mbufs_per_socket;   /* mbufs in each socket's pool */
	unsigned int mbuf_cache;         /* per-lcore mempool cache */
	unsigned int mbuf_data_room;     /* data room of one mbuf, headroom included */
	unsigned int tx_desc;            /* TX descriptors per queue (clamped to the port's range) */
	unsigned int rx_desc;            /* RX descriptors per queue */
	unsigned int queues_per_port;    /* TX/RX queue pairs configured on each port */
	unsigned int rx_spread;          /* 0: the port's receive queues as they are, 1: a
					  * software hash where it has too few or no RSS, 2: always */
	unsigned int max_qp_wr;          /* largest max_send_wr/max_recv_wr a QP may ask */
	unsigned int max_inline_data;    /* largest max_inline_data a QP may ask */
	unsigned int max_tso_header;     /* TSO header room when a QP does not ask */
	unsigned int max_cqe;            /* largest CQ */
	unsigned int max_mr;             /* MR table size (lkeys) */
	unsigned int mr_dma_map;         /* 0: never, 1: when a port DMAs (PCI), 2: always */
	unsigned int tx_copy_max;        /* non-inline frames up to this size are copied */
	unsigned int offload_policy;     /* enum dpv_offload_policy of every port at start */
	unsigned int progress;           /* enum dpv_progress of a new QP */
	unsigned int progress_thread;    /* 1: the library progresses ports nobody polls */
	unsigned int cycle_stats;        /* 1: QPs count TSC cycles per stage (dpv_query_qp_stats) */
	/* fault injection on every port (doc/faults.md), parts per million of frames */
	unsigned int fault_drop_ppm, fault_dup_ppm, fault_reorder_ppm, fault_corrupt_ppm;
	unsigned int fault_dirs;         /* 1: receive, 2: transmit, 3: both */
	unsigned int fault_seed;
	/* RoCEv2 neighbours (lib/roce/roce_neigh.c) */
	unsigned int resolve_timeout_ms; /* how long resolving a peer's MAC may wait */
	unsigned int resolve_probes;     /* ARP requests / solicitations sent within that time */
	unsigned int neigh_reachable_ms; /* a learned MAC is used this long, then asked again */
	/* RoCEv2 addresses of ports (port_addr lines), in file order; a file that has none
	 * leaves none (the list is not inherited from the defaults) */
	unsigned int nb_port_addrs;
	struct dpv_config_addr {
		char port[64];           /* ethdev name (dpv_port_info.name) or verbs device name */
		int family;              /* AF_INET or AF_INET6 */
		uint8_t addr[16];        /* network order; IPv4 in the first 4 bytes */
	} port_addrs[DPV_CONFIG_MAX_ADDRS];
};

/* The configuration in force (loaded once, before the EAL starts). */
const struct dpv_config *dpv__config(void);
/* Parse a key = value file into @cfg (keys not in the file keep their value). */
int dpv__config_parse(const char *path, struct dpv_config *cfg);
/* The compiled-in defaults (equal to config/dpverbs.conf). */
void dpv__config_defaults(struct dpv_config *cfg);
/* An IP address as text, "a.b.c.d" or IPv6: AF_INET (4 bytes in @addr) or AF_INET6 (16), or
 * -EINVAL for anything else, and for addresses a port cannot own: unspecified, loopback,
 * multicast, IPv4 broadcast, IPv4-mapped IPv6 (write the IPv4 address). */
int dpv__ip_parse(const char *text, uint8_t addr[16]);
/* (Re)load from $DPV_CONFIG or the installed file; an error keeps the defaults. */
int dpv__config_load_checked(void);

/* Start the EAL with the application's arguments (dpv_init) or with DPV_EAL_ARGS. */
int dpv__eal_start(int argc, char **argv);
/* Start the EAL from DPV_EAL_ARGS unless it runs already; the lazy path of every verbs call. */
int dpv__eal_ensure(void);
bool dpv__eal_running(void);
/* The arguments the EAL was started with, after dpverbs' additions (for logs and tools). */
const char *dpv__eal_args_used(void);
/* Run @fn before the EAL is cleaned up at exit (verbs closes its ports there). */
void dpv__eal_at_stop(void (*fn)(void));

/* fork (fork.c): true in a child of a process that started the EAL (an atfork handler sets
 * it); verbs refuse such a child (ENODEV) and its exit leaves the parent's state alone. */
extern bool dpv__forked;
static inline bool dpv__fork_child(void)
{
	return __builtin_expect(__atomic_load_n(&dpv__forked, __ATOMIC_RELAXED), 0);
}
/* The same, also for a child the atfork handler did not see (a getpid(): control paths). */
bool dpv__fork_child_check(void);
/* Say once on stderr why a forked child cannot use the devices; -ENODEV (errno untouched). */
int dpv__fork_refuse(void);
/* The EAL runs: remember its pid, watch for forks, keep DPDK's memory out of children. */
void dpv__fork_eal_started(void);

/* Remove what dead dpverbs processes left (leftovers.c). */
void dpv__leftovers_clean(void);

/* Service lcores (service.c). A work item is called over and over with the lcore's work list
 * locked; it returns 0 when it found nothing to do (an idle lcore then yields). */
struct dpv_service_work {
	unsigned int (*fn)(void *arg);
	void *arg;
};

struct dpv_service_info {
	unsigned int lcore, socket;
	bool running;
	unsigned int nb_work;
	uint64_t rounds;
};

/* Give @w to a service lcore on NUMA @socket (another with a warning), starting one if
 * needed; -ENODEV (logged with the fix) when the EAL has no worker lcore to use. */
int dpv__service_work_add(int socket, const struct dpv_service_work *w, unsigned int *lcore);
/* Take @w off @lcore; when it returns, the lcore no longer runs it. */
void dpv__service_work_del(unsigned int lcore, const struct dpv_service_work *w);
/* Stop every service lcore (at exit, before the ports close). */
void dpv__service_stop_all(void);
/* Service lcores in use (at most @max written); returns how many there are. */
int dpv__service_info(struct dpv_service_info *out, int max);
/* Is @lcore's loop running? *@rounds: its rounds so far (still while running: the OS does
 * not run it). Any thread, no lock. */
bool dpv__service_rounds(unsigned int lcore, uint64_t *rounds);

/* Under ThreadSanitizer, no race reports on @mp's objects: DPDK is not instrumented, so every
 * reuse of an mbuf across threads would look like a race (test/tsan.supp). */

#if defined(__SANITIZE_THREAD__)
#define DPV_TSAN 1
#elif defined(__has_feature)
#if __has_feature(thread_sanitizer)
#define DPV_TSAN 1
#endif
#endif
#ifdef DPV_TSAN
void dpv__tsan_pool(struct rte_mempool *mp);
#else
static inline void dpv__tsan_pool(struct rte_mempool *mp) { (void)mp; }
#endif
/* The mbuf pool of a NUMA socket (SOCKET_ID_ANY: the caller's), created on first use. */
struct rte_mempool *dpv__pool_get(int socket);
/* The same for mbufs without data room, to attach external (MR) buffers to. */
struct rte_mempool *dpv__pool_ext_get(int socket);
/* Free every pool; only when no port or queue uses them any more. */
void dpv__pools_release(void);
/* NUMA socket of the calling thread (libnuma), 0 where NUMA is not available. */
int dpv__socket_of_caller(void);

extern int dpv_logtype_engine;
#define ENGINE_LOG(level, fmt, ...) \
	rte_log(RTE_LOG_ ## level, dpv_logtype_engine, "dpverbs: " fmt "\n", ##__VA_ARGS__)

#endif
