/* SPDX-License-Identifier: BSD-3-Clause */
/* Devices (one per port of the driver) and the contexts open on them: what a port's receive
 * queues, QP numbers, transmitters, steering and timers hang on, the objects a context keeps
 * for ibv_close_device, and the device's fault injection (device.c, context.c,
 * context_objects.c, faults.c). */
#ifndef DPV_VERBS_DEVICE_H
#define DPV_VERBS_DEVICE_H

#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>
#include <sys/queue.h>
#include <sys/types.h>

#include <infiniband/verbs.h>
#include "dpv_driver.h"
#include "dpv_engine.h"       /* DPV_TSAN: struct dpv_device's layout depends on it */
#include "dpv_fault.h"
#include "dpv_lock.h"
#include "dpv_timer.h"
#include "dpv_tx.h"
#include "dpverbs.h"
#include "verbs_base.h"

struct dpv_async_event;
struct dpv_cq;
struct dpv_mr_table;
struct dpv_qp;
struct dpv_roce_port;
struct dpv_raw_port;
struct rte_mbuf;
struct rte_ring;

/* Stages of a port's receive side whose TSC cycles it counts with cycle_stats = 1. */
enum { DPV_RXC_BURST, DPV_RXC_CLASSIFY, DPV_RXC_COPY, DPV_RXC_CQE, DPV_RXC_FREE,
       DPV_RXC_STAGES };

/* A receive queue of a port, as dpverbs polls it: by one thread at a time (whoever takes its
 * lock; the others skip it), its counters written by that thread alone. On a cache line of
 * its own: threads polling different queues share no written line. */
struct dpv_rxq {
	dpv_spinlock_t lock;
	uint16_t id;
	uint32_t polls;                    /* polls so far (others read it: cq_rx_poll) */
	uint32_t stall_polls;              /* polls at the last stall look (rx_stalled) */
	uint64_t frames, unsteered, no_wqe;
	uint64_t cyc[DPV_RXC_STAGES];      /* with cycle_stats: TSC cycles per receive stage */
	/* the thread that polled it last (pthread_self): written when it changes, read by every
	 * poller, so on a line of its own */
	uintptr_t poller __rte_cache_aligned;
} __rte_cache_aligned;

/* The QP numbers of a device, one space for every QP type (as a NIC has): QPN -> QP in O(1)
 * for the RoCE receive demux. QPNs 0 and 1 are reserved (SMI, GSI). qpn.c. */
struct dpv_qpn_table {
	dpv_spinlock_t lock;       /* allocation */
	uint32_t size;             /* entries; 0 until the first QP */
	uint32_t hint;             /* where the next search starts (freed numbers wait a round) */
	struct dpv_qp **qp;        /* NULL: free */
};

/* Frames a port's receive side takes from a queue in one burst, and the most a transport's
 * port_rx may be given at once (with fault injection, a burst's duplicates and frames held
 * back before): at most 64, transports mark what they consume in a 64-bit mask. */
#define DPV_RX_BURST 32
#define DPV_RX_MAX 64

struct dpv_device {
	struct ibv_device ibdev;
	const struct dpv_driver_ops *ops;
	struct dpv_port *port;
	struct dpv_port_caps caps;
	int index;                 /* in the driver's port order */
	int open_count;            /* contexts open on this device */
	bool raw_loop;             /* RAW local loopback on (dpv__device_raw_loop_update) */
	dpv_spinlock_t raw_loop_lock;
	struct dpv_offload_ctl offload;   /* the port's offload policy (lib/offload) */
	struct dpv_timer_list timers;     /* run by whoever progresses the port (progress.c) */
	/* fault injection (faults.c): [0] receive, under rx_lock; [1] transmit, its own lock */
	struct dpv_fault_dir fault[2];
	uint64_t fault_seed[2];
	bool fault_on[2];
	/* the transmitters of its QPs, for the port's counters */
	dpv_spinlock_t txhs_lock;
	TAILQ_HEAD(, dpv_txh) txhs;
	struct dpv_tx_counters txhs_gone;  /* counters of closed transmitters */
	struct dpv_raw_port *raw;  /* RAW_PACKET's rules and steering (lib/raw, its init hook) */
	int sniffers;              /* RAW's SNIFFER rules (atomic): RoCE's loopback keeps its ICRC */
	struct dpv_rxq *rxqs;      /* the port's receive queues, once it started */
	uint16_t nb_rxq;
	/* transports without port_rx_queue get a device's frames one burst at a time */
	dpv_spinlock_t rx_lock;
	/* what transports without port_rx_queue count (under rx_lock), beside the queues' own */
	uint64_t rx_unsteered, rx_no_wqe;
	int rx_users;              /* receivers on the port (RAW: flows); none: it is not polled */
	/* frames a transport looped back to its own port (RoCE to its own GIDs): received with
	 * the port's next burst, before its frames (created with the first RoCE QP) */
	struct rte_ring *loop;
	/* the progress thread polls the port (nobody else does): frames looped back kick it
	 * (progress_thread.c; __atomic) */
	bool progress_owned;
#ifdef DPV_TSAN
	dpv_spinlock_t loop_lock;  /* ThreadSanitizer builds only: dpv__device_loopback */
#endif
	struct dpv_qpn_table qpns;
	/* service mode (qp_service.c): the port's service-mode QPs, driven by a service lcore */
	pthread_mutex_t svc_mutex;     /* adding and removing QPs, the lcore assignment */
	dpv_spinlock_t svc_lock;       /* the array; held by the service lcore for a round */
	unsigned int svc_want;         /* control paths waiting for svc_lock: the service yields */
	struct dpv_qp **svc_qps;
	unsigned int nb_svc_qp, svc_cap;
	bool svc_attached;             /* a service lcore runs the port's work */
	unsigned int svc_lcore;
	struct dpv_roce_port *roce;    /* addresses, GID table, neighbours (lib/roce) */
};

/* Objects of a context nothing else lists (context_objects.c), so that ibv_close_device can
 * free what the application left: a small array, changed under the context's lock. */
struct dpv_objset {
	void **obj;
	unsigned int n, cap;
};

struct dpv_context {
	struct verbs_context vctx;          /* ibv_context inside; handed to the application */
	struct dpv_device *dev;
	TAILQ_ENTRY(dpv_context) open_next; /* every open context (port events) */
	pthread_mutex_t lock;
	int nb_pd, nb_cq, nb_qp, nb_channel, nb_td;
	/* its QPs: polling any CQ of the context progresses them all (progress.c) */
	dpv_spinlock_t qps_lock;
	TAILQ_HEAD(, dpv_qp) qps;
	/* asynchronous events, readable through context.async_fd (an eventfd) */
	pthread_mutex_t async_lock;
	STAILQ_HEAD(, dpv_async_event) async_events;
	struct dpv_mr_table *mrs;
	struct dpv_objset pds, tds, flows;  /* PDs (parent domains too), TDs, ibv_create_flow's */
	struct dpv_objset channels;         /* completion channels */
	struct dpv_objset ahs;              /* address handles (lib/roce) */
	struct dpv_objset srqs, xrcds;      /* SRQs and XRC domains (srq.c, xrcd.c) */
	struct dpv_objset qp_opens;         /* ibv_open_qp's handles (qp_open.c) */
	/* context.cmd_fd: a memfd of its own (dup(2) works on it; its inode names this context
	 * for ibv_import_device); ibv_import_device's not yet closed (under the device lock) */
	dev_t cmd_dev;
	ino_t cmd_ino;
	int imports;
	uint32_t pd_handles;                /* the last PD handle given (ibv_import_pd) */
};

static inline struct dpv_context *to_dctx(struct ibv_context *c)
{
	return container_of_safe(c, struct dpv_context, vctx.context);
}

static inline struct dpv_device *to_ddev(struct ibv_device *d)
{
	return container_of_safe(d, struct dpv_device, ibdev);
}

/* Record @obj in (or drop it from) one of @ctx's object sets; -ENOMEM. Takes ctx->lock. */
int dpv__objset_add(struct dpv_context *ctx, struct dpv_objset *s, void *obj);
void dpv__objset_del(struct dpv_context *ctx, struct dpv_objset *s, void *obj);

/* Destroy whatever @ctx still holds (ibv_close_device), in dependency order. */
void dpv__context_release(struct dpv_context *ctx);
/* A snapshot of a set, newest first (the destroy functions change the set while a caller
 * walks it): an array to free(), NULL when empty. */
void **dpv__objset_take(struct dpv_context *ctx, struct dpv_objset *s, unsigned int *n);

/* Start DPDK if needed and list the devices (also used by dpv-devinfo through ibv_*). */
int dpv__devices_scan(struct dpv_device ***list, int *n);
void dpv__context_ops_init(struct verbs_context *vctx);
/* What the device reports, given the port's offload policy. */
bool dpv__device_ip_csum(const struct dpv_device *dev);
uint32_t dpv__device_max_tso(const struct dpv_device *dev);
/* Open a transmitter on @dev's port for a QP (counted in the port's statistics), close it. */
int dpv__device_txh_open(struct dpv_device *dev, struct dpv_txh *h, void (*released)(void *));
void dpv__device_txh_close(struct dpv_device *dev, struct dpv_txh *h);
/* The port's transmit counters: every transmitter's, closed ones included. */
void dpv__device_port_stats(struct dpv_device *dev, struct dpv_port_stats *st);
int dpv_query_device_ex(struct ibv_context *context, const struct ibv_query_device_ex_input *in,
			struct ibv_device_attr_ex *attr, size_t attr_size);
int dpv_query_port(struct ibv_context *context, uint8_t port_num, struct ibv_port_attr *attr,
		   size_t attr_len);
int dpv_query_rt_values(struct ibv_context *context, struct ibv_values_ex *values);

/* What ibv_query_device reports and lib/roce enforces: AHs per context, multicast groups
 * with UD QPs per port, UD QPs per group. */
#define DPV_MAX_AH 65536
#define DPV_MAX_MCAST_GRP 256
#define DPV_MAX_MCAST_QP_ATTACH 56
/* READ/atomics an RC QP may have outstanding, as requester and as responder */
#define DPV_MAX_RD_ATOM 16
/* ibv_query_port's max_msg_sz: the largest RC/UC message (lib/roce's DPV_RC_MAX_MSG, which
 * rc_verbs.c asserts is the same); UD messages are bounded by the MTU, RAW ones by a frame. */
#define DPV_MAX_MSG_SZ (1u << 31)
/* ibv_query_device's vendor_id: 0xffffff, no IEEE OUI (rxe's; no hardware vendor's) */
#define DPV_VENDOR_ID 0xffffffu

/* DMA-map (or unmap) [va, va + len) on every present port that needs it (device.c). */
int dpv__devices_dma_map(void *va, uint64_t len, bool map);

/* Call @fn on every device with an open context (its port started); device list locked. */
void dpv__devices_foreach_open(void (*fn)(struct dpv_device *dev, void *arg), void *arg);

/* Fault injection (faults.c): the configured faults at port start, the held frames freed at
 * port stop, and the transmit side for the transports' frames: returns how many of the
 * (possibly changed) @n frames in @pkts (room for @cap) to hand to the port. */
void dpv__device_faults_start(struct dpv_device *dev);
void dpv__device_faults_stop(struct dpv_device *dev);
uint16_t dpv__device_fault_tx(struct dpv_device *dev, struct rte_mbuf **pkts, uint16_t n,
			      uint16_t cap);
/* RAW local loopback (lib/raw/raw_qp.c): on while two contexts or more have @dev open and
 * something receives on its port (else nothing would take the copies out of the loopback
 * ring). Called after either count changed; the last call, under the lock, sees both. */
static inline void dpv__device_raw_loop_update(struct dpv_device *dev)
{
	dpv__spinlock_lock(&dev->raw_loop_lock);
	__atomic_store_n(&dev->raw_loop,
			 __atomic_load_n(&dev->open_count, __ATOMIC_ACQUIRE) >= 2 &&
			 __atomic_load_n(&dev->rx_users, __ATOMIC_ACQUIRE) > 0, __ATOMIC_RELAXED);
	dpv__spinlock_unlock(&dev->raw_loop_lock);
}

/* A transport gained (+1) or lost (-1) a receiver on @dev. */
static inline void dpv__device_rx_users(struct dpv_device *dev, int delta)
{
	__atomic_fetch_add(&dev->rx_users, delta, __ATOMIC_RELEASE);
	dpv__device_raw_loop_update(dev);
}

#endif
