/* The verbs core's objects: devices, contexts, PDs, MRs, CQs, QPs and their send queues.
 * Private to libdpverbs. The name tells the error convention (as libuv's uv_ and uv__):
 *   ibv_*, dpv_*   entry points — the exported API of <dpverbs.h> and the implementations of
 *                  the verbs context ops that ibv_* inlines call — follow rdma-core: 0 or a
 *                  positive errno, NULL with errno, -1 with errno where the man page says so;
 *   dpv__*         internal functions: 0 or a negative errno (constructors: NULL and errno).
 * File-local functions have no prefix and follow the internal convention. */
#ifndef DPV_VERBS_PRIV_H
#define DPV_VERBS_PRIV_H

#include <errno.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>
#include <sys/queue.h>
#include <sys/stat.h>
#if defined(__SSE4_1__)
#include <smmintrin.h>
#endif

#include <infiniband/verbs.h>
#include <rte_branch_prediction.h>
#include <rte_common.h>
#include <rte_cycles.h>
#include <rte_log.h>
#include "dpv_lock.h"

#include "dpv_driver.h"
#include "dpv_engine.h"
#include "dpv_fault.h"
#include "dpv_timer.h"
#include "dpv_tx.h"
#include "dpverbs.h"
#include "wr_check.h"

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

/* Stages of a port's receive side whose TSC cycles it counts with cycle_stats = 1. */
enum { DPV_RXC_BURST, DPV_RXC_CLASSIFY, DPV_RXC_COPY, DPV_RXC_CQE, DPV_RXC_FREE,
       DPV_RXC_STAGES };

/* ---- devices and contexts ---- */

struct dpv_cq;

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

struct dpv_flow;
struct dpv_steer;
struct dpv_roce_port;
struct dpv_qp;
struct dpv_mcast;
struct rte_ring;

/* The QP numbers of a device, one space for every QP type (as a NIC has): QPN -> QP in O(1)
 * for the RoCE receive demux. QPNs 0 and 1 are reserved (SMI, GSI). qpn.c. */
struct dpv_qpn_table {
	dpv_spinlock_t lock;       /* allocation */
	uint32_t size;             /* entries; 0 until the first QP */
	uint32_t hint;             /* where the next search starts (freed numbers wait a round) */
	struct dpv_qp **qp;        /* NULL: free */
};

/* What the RoCE receive path dropped, and what RoCE sent without the wire (per device;
 * dpv_port_stats). The rx_* ones are counted under the device's rx_lock. */
struct dpv_roce_counters {
	uint64_t rx;               /* RoCEv2 frames to the port's GIDs (or its groups) taken */
	uint64_t rx_bad_icrc;      /* dropped: ICRC wrong */
	uint64_t rx_malformed;     /* dropped: lengths, BTH version, opcode, P_Key */
	uint64_t rx_no_qp;         /* dropped: no receiving QP of that number (or group) */
	uint64_t rx_bad_qkey;      /* dropped: Q_Key of another QP */
	uint64_t tx_loopback;      /* frames to the port's own GIDs given to its receive side */
	uint64_t tx_oversize;      /* UD messages above the path MTU: nothing sent (atomic) */
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
	/* receive steering: rules by priority (changed under flows_mutex), compiled into the
	 * table bursts read (lib/raw/steer.c), and the receive progress of the port */
	pthread_mutex_t flows_mutex;
	TAILQ_HEAD(, dpv_flow) flows;
	struct dpv_steer *steer;
	int sniffers;              /* SNIFFER rules in that table (atomic; the loopback's ICRC) */
	struct dpv_rxq *rxqs;      /* the port's receive queues, once it started */
	uint16_t nb_rxq;
	struct dpv_qp **rxq_owner; /* the QP a queue is steered to in hardware (flows_mutex) */
	/* transports without port_rx_queue get a device's frames one burst at a time */
	dpv_spinlock_t rx_lock;
	/* what transports without port_rx_queue count (under rx_lock), beside the queues' own */
	uint64_t rx_unsteered, rx_no_wqe;
	int rx_users;              /* receivers on the port (RAW: flows); none: it is not polled */
	/* frames a transport looped back to its own port (RoCE to its own GIDs): received with
	 * the port's next burst, before its frames (created with the first RoCE QP) */
	struct rte_ring *loop;
#ifdef DPV_TSAN
	dpv_spinlock_t loop_lock;  /* ThreadSanitizer builds only: dpv__device_loopback */
#endif
	int roce_qps;              /* RoCE QPs of the port: while there is none, RoCE takes no
				    * frame (RAW_PACKET's steering sees them all) */
	struct dpv_qpn_table qpns;
	struct dpv_roce_counters roce_cnt;
	TAILQ_HEAD(dpv_mcast_list, dpv_mcast) mcasts;   /* UD group attachments (lib/roce),
							 * changed under rx_lock */
	int nb_mcast;              /* ... how many (__atomic: the send side looks unlocked) */
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

struct dpv_async_event {
	STAILQ_ENTRY(dpv_async_event) next;
	struct ibv_async_event ev;
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
/* The open context whose cmd_fd is the open file @st (fstat of a descriptor), or NULL. */
struct dpv_context *dpv__context_by_file(const struct stat *st);
/* The MR of @ctx whose handle (its lkey) is @handle, in @pd; NULL (EINVAL) if none. */
struct dpv_mr *dpv__mr_by_handle(struct dpv_context *ctx, struct ibv_pd *pd, uint32_t handle);
/* Destroy whatever @ctx still holds (ibv_close_device), in dependency order. */
void dpv__context_release(struct dpv_context *ctx);
/* The flow ops of the context: dpv__create_flow / dpv__destroy_flow, tracked in ctx->flows. */
struct ibv_flow *dpv_create_flow_tracked(struct ibv_qp *qp, struct ibv_flow_attr *attr);
int dpv_destroy_flow_tracked(struct ibv_flow *flow);

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
void dpv__async_event_post(struct dpv_context *ctx, const struct ibv_async_event *ev);
/* A port event (@type: GID_CHANGE ...) on port 1 of every open context of @dev. */
void dpv__device_event(struct dpv_device *dev, enum ibv_event_type type);
int dpv__async_init(struct dpv_context *ctx);
void dpv__async_fini(struct dpv_context *ctx);

/* ---- protection domains and thread domains ---- */

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

/* A zeroed, cache-aligned ring of @size bytes for a queue: from @pd's allocator when @pd is a
 * parent domain with one (resource_type @type, enum dpv_alloc_resource; *@custom true), else
 * dpverbs' own (the allocator answered IBV_ALLOCATOR_USE_DEFAULT, or there is none). NULL:
 * out of memory (or the allocator's pointer not 8-byte aligned: given back). */
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

/* ---- memory regions ---- */

struct dpv_range;

/* The ranges one holder (an MR) holds a reference on, in a range set (range.c). */
struct dpv_range_refs {
	unsigned int nb;
	struct dpv_range **r;
};

struct dpv_mr {
	struct ibv_mr ibmr;
	struct dpv_pd *pd;
	uint64_t iova;             /* address the application names in SGEs */
	uint8_t *va;
	uint64_t length;
	unsigned int access;
	int refs;                  /* in-flight WRs using it */
	struct dpv_mr *rkey_next;  /* its bucket of the context's rkey hash */
	struct dpv_range_refs dma;    /* its DMA ranges (range.c) */
	struct dpv_range_refs nofork; /* its MADV_DONTFORK ranges, with ibv_fork_init (fork.c) */
};

struct dpv_mr_table {
	dpv_spinlock_t lock;
	uint32_t size;
	uint32_t free_hint;
	struct dpv_mr **slot;      /* lkey index -> MR */
	uint8_t *gen;              /* lkey generation, so that a stale lkey does not match */
	struct dpv_mr **rkey_hash; /* rkey -> MR (remote access), chained, under lock */
	struct dpv_mw **mw_hash;   /* rkey -> memory window, the same buckets, under lock */
	uint32_t nb_mw;
	/* moves (from 1) each time an MR leaves the table: a receive WQE checked against the
	 * table at an older value is checked again (struct dpv_rwqe) */
	uint64_t dereg_gen;
};
#define DPV_RKEY_BUCKETS 4096

/* The bucket of an rkey in both hashes: by its index (the 24 bits above the 8-bit tag that
 * ibv_inc_rkey changes), so that a window keeps its bucket when it is bound again and an
 * index is unique in the context, MR or window. */
static inline uint32_t dpv__rkey_bucket(uint32_t rkey)
{
	uint32_t index = rkey >> 8;

	return (index ^ index >> 12) & (DPV_RKEY_BUCKETS - 1);
}

struct dpv_qp;

/* A memory window (mw.c): its key grants a peer [iova, iova + length) of an MR with the
 * window's access flags, while bound. Under the MR table's lock. */
struct dpv_mw {
	struct ibv_mw ibmw;
	struct dpv_pd *pd;
	uint32_t key;              /* the key of the current binding (or the last one) */
	bool bound;                /* key grants access (a zero-length type 1 binding: not) */
	struct dpv_mr *mr;         /* bound: the MR, which it holds (ibv_dereg_mr: EBUSY) */
	uint64_t iova, length;
	unsigned int access;
	const struct dpv_qp *qp;   /* type 2: the only QP whose peer may use the key */
	struct dpv_mw *rkey_next;  /* its bucket of mw_hash */
};

/* A random rkey whose index no MR or window of the table has; the table lock held. */
uint32_t dpv__rkey_new(struct dpv_mr_table *t);
/* Whether an MR or window of the table has @rkey's index; the table lock held. */
bool dpv__rkey_index_taken(struct dpv_mr_table *t, uint32_t rkey);
/* The window bound under @rkey that grants @qp's peer @access on [iova, iova + len), or NULL;
 * the table lock held. */
struct dpv_mr *dpv__mw_by_rkey(struct dpv_mr_table *t, const struct dpv_qp *qp, uint32_t rkey,
			       uint64_t iova, uint64_t len, unsigned int access);
/* Execute a BIND_MW WR posted on @qp (type 1 through ibv_bind_mw, type 2 directly): the
 * status it completes with, IBV_WC_SUCCESS or IBV_WC_MW_BIND_ERR. */
enum ibv_wc_status dpv__mw_bind(struct dpv_qp *qp, const struct ibv_send_wr *wr);
/* Invalidate @rkey, a type 2 window of @qp's PD (@remote: a SEND_WITH_INV received on @qp,
 * and the window must be bound to @qp). 0, or -EINVAL when it names no such bound window
 * (an MR's key, a type 1 window, an old key, another PD's). */
int dpv__mw_invalidate(struct dpv_qp *qp, uint32_t rkey, bool remote);
/* ibv_close_device: every window of the context deallocated (before its MRs); how many. */
unsigned int dpv__mw_release_all(struct dpv_context *ctx);
/* @qp is being destroyed: the type 2 windows bound to it are invalidated. */
void dpv__mw_qp_gone(struct dpv_qp *qp);
struct ibv_mw *dpv_alloc_mw(struct ibv_pd *pd, enum ibv_mw_type type);
int dpv_bind_mw(struct ibv_qp *qp, struct ibv_mw *mw, struct ibv_mw_bind *bind);
int dpv_dealloc_mw(struct ibv_mw *mw);

/* The MR of @rkey (an MR's, or a window's bound in @qp's PD) that grants @qp's peer @access
 * (IBV_ACCESS_REMOTE_*) on [iova, iova + len), or NULL; the context's MR table lock must be
 * held (ibv_dereg_mr and the window verbs take it) while the MR is used. */
struct dpv_mr *dpv__mr_by_rkey(const struct dpv_qp *qp, uint32_t rkey, uint64_t iova,
			       uint64_t len, unsigned int access);

int dpv__mr_table_init(struct dpv_context *ctx);
void dpv__mr_table_fini(struct dpv_context *ctx);
#define LKEY_INDEX_BITS 24
#define LKEY_INDEX_MASK ((1u << LKEY_INDEX_BITS) - 1)

/* @mr if it contains [addr, addr + len) (*@va: where that is), else NULL. */
static inline struct dpv_mr *dpv__mr_range(struct dpv_mr *mr, uint64_t addr, uint32_t len,
					  uint8_t **va)
{
	if (unlikely(addr < mr->iova || len > mr->length || addr - mr->iova > mr->length - len))
		return NULL;
	*va = mr->va + (addr - mr->iova);
	return mr;
}

/* The MR of @lkey in @pd containing [addr, addr + len), or NULL (a protection error). Inline:
 * every non-inline SGE of every send and receive looks its MR up. */
static inline struct dpv_mr *dpv__mr_lookup(struct dpv_context *ctx, struct dpv_pd *pd,
					   uint32_t lkey, uint64_t addr, uint32_t len,
					   uint8_t **va)
{
	struct dpv_mr_table *t = ctx->mrs;
	uint32_t i = lkey & LKEY_INDEX_MASK;
	struct dpv_mr *mr;

	if (unlikely(i >= t->size))
		return NULL;
	mr = __atomic_load_n(&t->slot[i], __ATOMIC_ACQUIRE);
	if (unlikely(mr == NULL || mr->ibmr.lkey != lkey || mr->pd != pd))
		return NULL;
	return dpv__mr_range(mr, addr, len, va);
}

/* A set of page-rounded, reference-counted ranges that never overlap (range.c): @add makes a
 * new range so (0 or a negative errno), @del undoes it when its last reference goes (@live
 * false: at shutdown, the devices are gone). */
struct dpv_range_set {
	pthread_mutex_t lock;
	struct dpv_range **ranges;     /* sorted by start */
	unsigned int nb, cap;
	int (*add)(uintptr_t start, uintptr_t end);
	void (*del)(uintptr_t start, uintptr_t end, bool live);
};
/* Give @h a reference on every range of the pages of [va, va + len), adding the gaps. */
int dpv__rangeset_hold(struct dpv_range_set *s, const void *va, uint64_t len,
		       struct dpv_range_refs *h);
void dpv__rangeset_drop(struct dpv_range_set *s, struct dpv_range_refs *h);
/* The same without a holder: the references of a hold are dropped by naming the same bytes. */
int dpv__rangeset_hold_anon(struct dpv_range_set *s, const void *va, uint64_t len);
void dpv__rangeset_drop_anon(struct dpv_range_set *s, const void *va, uint64_t len);
void dpv__rangeset_clear(struct dpv_range_set *s, bool live);
unsigned int dpv__rangeset_count(struct dpv_range_set *s);
/* Do the pages of [va, va + len) lie in one memseg list of DPDK's own heap? */
bool dpv__in_dpdk_heap(const void *va, uint64_t len);

/* DMA range registry (a range set): what an MR needs mapped for the NICs. */
int dpv__range_acquire(struct dpv_context *ctx, void *va, uint64_t len, struct dpv_mr *mr);
void dpv__range_release(struct dpv_context *ctx, struct dpv_mr *mr);
void dpv__ranges_release_all(void);
/* Fork protection (fork.c): with ibv_fork_init, the pages of every MR outside DPDK's heap
 * are MADV_DONTFORK while an MR holds them; without it, the first MR makes ibv_fork_init too
 * late (EINVAL). */
int dpv__fork_mr_hold(struct dpv_mr *mr);
void dpv__fork_mr_drop(struct dpv_mr *mr);
/* ibv_dontfork_range / ibv_dofork_range: 0 or a negative errno. */
int dpv__fork_range(void *base, size_t size, bool dontfork);
/* RDMAV_FORK_SAFE / IBV_FORK_SAFE: ibv_fork_init at the first device list, as rdma-core. */
void dpv__fork_env_init(void);
/* In a forked child (dpv__fork_child): verbs refuse with ENODEV, releases succeed doing
 * nothing. */
#define DPV_FORK_REFUSE(ret) do { \
	if (dpv__fork_child()) { \
		errno = -dpv__fork_refuse(); \
		return ret; \
	} \
} while (0)
#define DPV_FORK_NOOP(ret) do { \
	if (dpv__fork_child()) \
		return ret; \
} while (0)

/* DMA-map (or unmap) [va, va + len) on every present port that needs it (device.c). */
int dpv__devices_dma_map(void *va, uint64_t len, bool map);

/* ---- completion queues ---- */

struct dpv_qp;

struct dpv_cqe {
	struct ibv_wc wc;
	struct dpv_qp *qp;
	uint32_t sq_index;         /* send CQE: SQ slot freed when the CQE is polled */
	bool is_send;
	bool solicited;            /* wakes a CQ armed for solicited completions only */
};

/* When a completion was written (a CQ created with a timestamp wc_flag keeps one per ring
 * entry, beside the ring: the 64-byte CQE stays one cache line). */
struct dpv_cqe_ts {
	uint64_t tsc;              /* the TSC: hca_core_clock counts it (device.c) */
	uint64_t wall_ns;          /* CLOCK_REALTIME, with _WALLCLOCK only */
};

struct dpv_channel {
	struct ibv_comp_channel ibch;
	pthread_mutex_t lock;
	TAILQ_HEAD(, dpv_cq) fired;        /* CQs with an event not yet read */
	TAILQ_HEAD(, dpv_cq) cqs;          /* every CQ on it */
	unsigned int linger;               /* short naps left in ibv_get_cq_event (cq.c) */
};

/* struct ibv_cq is the head of struct ibv_cq_ex (verbs.h's ibv_cq_ex_to_cq is a cast), so
 * every CQ carries the extended one: a CQ of ibv_create_cq_ex is the same object as any other,
 * polled from the same ring (cq_ex.c). */
struct dpv_cq {
	union {
		struct ibv_cq ibcq;
		struct ibv_cq_ex cqx;      /* set up by ibv_create_cq_ex only */
	};
	dpv_spinlock_t lock;       /* the CQE ring */
	struct dpv_cqe *ring;
	struct dpv_pd *buf_pd;     /* ibv_create_cq_ex's parent domain (held), or NULL */
	bool ring_custom;          /* ring came from its allocator */
	uint32_t size;             /* ring entries: cqe + 1 */
	uint32_t head, tail;       /* tail: next written, head: next polled */
	bool armed, solicited_only;
	bool overrun;
	bool fired;                /* on its channel's fired list */
	TAILQ_ENTRY(dpv_cq) fired_next;
	TAILQ_ENTRY(dpv_cq) channel_next;
	pthread_mutex_t qps_lock;  /* nb_qp */
	int nb_qp;                 /* QPs completing into it */
	unsigned int events_pending;   /* events returned by ibv_get_cq_event, not yet acked */
	uint32_t id;                   /* for telemetry (/dpverbs/cq,<id>) */
	unsigned int polls;            /* polls that found completions (progress every 16th) */
	/* the port's receive queues that fed it lately (bit q: queue q; learnt by the receive
	 * path in rxq_seen, taken over by its poller in rxq_home, which polls them at every
	 * round), and each queue's poll count when its poller last looked (progress.c) */
	uint64_t rxq_home;
	unsigned int rx_rounds;
	uint32_t rxq_polls[64];
	uint64_t rxq_seen __rte_cache_aligned;
	uint64_t completions;          /* CQEs written */
	uint64_t cyc_poll, polled;     /* with cycle_stats: ibv_poll_cq's cycles, CQEs taken */
	TAILQ_ENTRY(dpv_cq) all_next;  /* every CQ of the process (telemetry.c) */
	/* ibv_cq_ex: the completion ibv_start_poll/ibv_next_poll took (the ibv_wc_read_*
	 * accessors read it), and the poll session's lock (start_poll to end_poll) */
	struct ibv_wc cur;
	struct dpv_cqe_ts cur_ts;
	uint64_t wc_flags;             /* the IBV_WC_EX_WITH_* fields asked for */
	/* completion timestamps (ibv_create_cq_ex with a timestamp wc_flag): ts[i] is when
	 * ring[i] was written; NULL without. Never earlier than the one before (last_tsc). */
	struct dpv_cqe_ts *ts;
	bool ts_wall;
	uint64_t last_tsc;
	bool single_threaded;          /* IBV_CREATE_CQ_ATTR_SINGLE_THREADED: no session lock */
	dpv_spinlock_t poll_lock;
};

_Static_assert(sizeof(struct dpv_cqe) == 64, "a completion fills one cache line");

static inline struct dpv_cq *to_dcq(struct ibv_cq *c)
{
	return container_of_safe(c, struct dpv_cq, ibcq);
}

/* Append a completion (CQ lock taken inside); a full CQ is an overrun (IBV_EVENT_CQ_ERR). */
int dpv__cq_push(struct dpv_cq *cq, const struct dpv_cqe *cqe);
/* The send completions of @qp's SQ slots @slots[0..@n), in that order, written in place
 * under one CQ lock from the WQEs (the one writer of send CQEs); -ENOSPC as below. */
int dpv__cq_push_sends(struct dpv_cq *cq, struct dpv_qp *qp, const uint32_t *slots,
		       unsigned int n);
/* @n completions in order under one lock; -ENOSPC (and IBV_EVENT_CQ_ERR) if they overran. */
int dpv__cq_push_many(struct dpv_cq *cq, const struct dpv_cqe *cqe, unsigned int n);
/* Successful receive completions (IBV_WC_RECV) of one QP written in place, as a burst is
 * delivered (the receive fast path): dpv__cq_recv_open takes the CQ lock and returns how many
 * fit; dpv__cq_recv_put writes one (at most that many); dpv__cq_recv_close publishes them,
 * fires an armed CQ and releases the lock: -ENOSPC (and IBV_EVENT_CQ_ERR) if @wanted
 * completions did not all fit. */
struct dpv_cq_recv {
	struct dpv_cq *cq;
	struct dpv_qp *qp;
	struct dpv_cqe *ring, *end;   /* the ring and its end */
	struct dpv_cqe *at;           /* the next to write */
	uint32_t from;                /* the tail when it was opened */
	uint32_t qp_num;
#if defined(__SSE4_1__)
	__m128i line1;                /* CQE bytes 16-31: byte_len 0, qp_num (dpv__cq_recv_put) */
	__m128i line3;                /* bytes 48-63: qp, sq_index 0, is_send and solicited false */
#endif
};
unsigned int dpv__cq_recv_open(struct dpv_cq *cq, struct dpv_qp *qp, struct dpv_cq_recv *w);
int dpv__cq_recv_close(struct dpv_cq_recv *w, unsigned int wanted);
void dpv__cq_attach_qp(struct dpv_cq *cq);
void dpv__cq_detach_qp(struct dpv_cq *cq, struct dpv_qp *qp);
/* Drop every completion of @qp still in @cq. */
void dpv__cq_clean(struct dpv_cq *cq, struct dpv_qp *qp);
int dpv_poll_cq(struct ibv_cq *ibcq, int n, struct ibv_wc *wc);
/* A CQ as ibv_create_cq makes it (checked arguments), its ring from parent domain @pd's
 * allocator if @pd (held until it is destroyed) has one; NULL and errno. */
struct dpv_cq *dpv__cq_create(struct ibv_context *context, int cqe, void *cq_context,
			      struct ibv_comp_channel *channel, int comp_vector, struct dpv_pd *pd);
/* Before taking completions: progress the context as dpv_poll_cq does (when the CQ is empty,
 * and every 16th poll anyway). */
void dpv__cq_poll_progress(struct dpv_cq *cq);
/* Take the oldest completion into @wc (its SQ slots freed, as dpv_poll_cq), and its
 * timestamps into cq->cur_ts when the CQ keeps them; -ENOENT if none. */
int dpv__cq_pop(struct dpv_cq *cq, struct ibv_wc *wc);
/* Keep completion timestamps (TSC, and CLOCK_REALTIME too if @wall) from now on: a new CQ
 * only, before any QP uses it; -ENOMEM. */
int dpv__cq_timestamps(struct dpv_cq *cq, bool wall);
/* The device's completion clock in kHz (ibv_device_attr_ex.hca_core_clock): the TSC's. */
uint64_t dpv__core_clock_khz(void);
/* The context's create_cq_ex op (cq_ex.c). */
struct ibv_cq_ex *dpv_create_cq_ex(struct ibv_context *context, struct ibv_cq_init_attr_ex *attr);
int dpv_req_notify_cq(struct ibv_cq *ibcq, int solicited_only);

/* ---- queue pairs ---- */

/* A posted send WR. It completes (in order) once its transport set released: RAW when no
 * frame holds its memory any more, RC (later) when acknowledged. */
struct dpv_wqe {
	uint64_t wr_id;
	void *frame;               /* the transport's: RAW's built frame not yet sent */
	uint32_t byte_len;
	uint8_t opcode;            /* enum ibv_wc_opcode */
	uint8_t signaled;
	uint8_t status;            /* enum ibv_wc_status decided at post time */
	uint8_t released;          /* the transport is done with it (dpv__wqe_release) */
	uint8_t nb_mr;             /* MRs it holds a reference on, in mrs[] */
	struct dpv_mr **mrs;       /* its max_sge slots of dpv_sq.mrs */
};

/* Service mode: a posted WR as the posting thread hands it to the service lcore, 16 bytes
 * (four to a cache line). The posting thread writes a slot's descriptor, data, gather list
 * and MRs, and nothing else of the SQ but post and head; the service side writes the WQE
 * ring (from the descriptors, when it takes them), sent, done and built: no cache line is
 * written from both cores. */
struct dpv_svc_desc {
	uint64_t wr_id;
	uint32_t len;              /* byte_len */
	/* dpv__svc_meta(): enum dpv_svc_flags, enum ibv_wc_opcode, the enum ibv_wc_status decided
	 * while posting, the MRs it holds (DPV_SVC_BUILD) in its slot's mrs; one 32-bit store
	 * (byte stores may alias anything: the posting loop would reload the QP after each) */
	uint32_t meta;
};

static inline uint32_t dpv__svc_meta(unsigned int flags, unsigned int opcode,
				     unsigned int status, unsigned int nb_mr)
{
	return flags | opcode << 8 | status << 16 | nb_mr << 24;
}

static inline unsigned int dpv__svc_flags(const struct dpv_svc_desc *d)
{
	return d->meta & 0xff;
}

static inline unsigned int dpv__svc_opcode(const struct dpv_svc_desc *d)
{
	return d->meta >> 8 & 0xff;
}

static inline unsigned int dpv__svc_status(const struct dpv_svc_desc *d)
{
	return d->meta >> 16 & 0xff;
}

static inline unsigned int dpv__svc_nb_mr(const struct dpv_svc_desc *d)
{
	return d->meta >> 24;
}

enum dpv_svc_flags {
	/* SIGNALED and IP_CSUM are the send_flags bits: the fast path takes them with a mask */
	DPV_SVC_SIGNALED = IBV_SEND_SIGNALED,
	DPV_SVC_IP_CSUM = IBV_SEND_IP_CSUM,        /* with DPV_SVC_COPY */
	DPV_SVC_COPY = 1 << 5,     /* the whole frame is in the slot's data: copied into an mbuf */
	DPV_SVC_BUILD = 1 << 6,    /* lib/offload builds it from the slot's dpv_tx_desc */
	/* neither COPY nor BUILD: no frame, the WR completes with its status */
};

/* Service mode, DPV_SVC_BUILD: what lib/offload builds the frame from, besides the slot's
 * gather list and data copy (inline data, then the TSO header). */
struct dpv_tx_desc {
	uint32_t flags;            /* enum dpv_tx_flags */
	uint16_t nseg, mss, tso_hdr_len;
	struct dpv_hdr_info tso_info;      /* the TSO header as the post-time check parsed it */
};

/* The cursors sit on cache lines of their writers' own: in service mode the posting thread
 * writes post (per WR) and head (once per list), the service lcore sent, done and built (once
 * per burst), the polling thread freed. A line another core reads while its owner writes it
 * moves at every write (measured: publishing head per WR cost ~1 us per WR between the two
 * vCPUs here). The fields before them are read-only once the QP is set up. */
struct dpv_sq {
	struct dpv_wqe *wqe;
	struct dpv_pd *buf_pd;     /* the parent domain whose allocator gave wqe, if it did */
	bool wqe_custom;
	uint32_t size, mask;       /* slots: a power of two >= max_wr */
	uint32_t max_wr;
	uint32_t max_sge;
	struct dpv_mr **mrs;       /* max_sge per slot: the MRs a WR uses until it completes */
	/* service mode: each slot's descriptor, its gather list (max_sge entries) and build
	 * parameters (DPV_SVC_BUILD); and a ring of the slots' data — the frame (DPV_SVC_COPY),
	 * or copies of inline data and the TSO header —, packed in post order in pieces of
	 * DPV_SVC_DATA_ALIGN bytes, at most data_max bytes a slot, data_cap bytes in all (room for
	 * every slot's largest and a wrap) */
	uint32_t data_max, data_cap;
	struct dpv_svc_desc *desc;
	struct dpv_tx_desc *desc_tx;
	struct dpv_tx_seg *desc_seg;
	uint8_t *desc_data;
	uint32_t post __rte_cache_aligned;   /* next slot to post (the posting thread's) */
	uint32_t data_post;        /* service mode: where the next posted slot's data goes */
	uint32_t head __rte_cache_aligned;   /* post, published at the end of each list */
	uint32_t sent __rte_cache_aligned;   /* next slot to hand to the driver */
	uint32_t done;             /* next slot to complete */
	uint32_t built;            /* service mode: [sent, built) taken into WQEs, frames built */
	uint32_t data_built;       /* service mode: where the data of the slot at built is */
	uint32_t freed __rte_cache_aligned;  /* slots before it are free (ibv_poll_cq moves it) */
};

/* A slot's data starts on a pair of cache lines of its own: the CPU fetches lines in aligned
 * pairs (the adjacent-line prefetcher), and a service lcore reading the last frame of a list
 * must not pull in the line where the posting thread writes the next list's first frame
 * (measured: packed on single lines, 64-byte non-inline lists of 8 ran at half the rate). */
#define DPV_SVC_DATA_ALIGN 128u

/* Service mode: where @need bytes of slot data go when the data ring's cursor is at @pos
 * (a slot's data never wraps around the ring's end); the cursor then moves to
 * dpv__sq_data_end(). Both sides run these on the same lengths in the same order, the
 * posting thread with data_post, the service side with data_built, so a descriptor needs no
 * offset. */
static inline uint32_t dpv__sq_data_at(const struct dpv_sq *sq, uint32_t pos, uint32_t need)
{
	return pos + RTE_ALIGN_CEIL(need, DPV_SVC_DATA_ALIGN) > sq->data_cap ? 0 : pos;
}

static inline uint32_t dpv__sq_data_end(uint32_t at, uint32_t need)
{
	return at + RTE_ALIGN_CEIL(need, DPV_SVC_DATA_ALIGN);
}

/* The service side takes the data of the descriptor at built (@need bytes): where it is. */
static inline const uint8_t *dpv__sq_data_take(struct dpv_sq *sq, uint32_t need)
{
	uint32_t at = dpv__sq_data_at(sq, sq->data_built, need);

	sq->data_built = dpv__sq_data_end(at, need);
	return sq->desc_data + at;
}

/* A posted receive WQE, 32 bytes: its first scatter entry is here, beside its wr_id, so that
 * a frame's WQE is one read (the receive fast path, lib/raw/raw_recv.c). */
struct dpv_rwqe {
	uint64_t wr_id;
	struct ibv_sge sge;        /* sge[0] when nsge > 0 */
	uint16_t nsge;
};
_Static_assert(sizeof(struct dpv_rwqe) == 32, "two receive WQEs per cache line");

/* The receive queue: WQEs in post order, each with its max_sge scatter entries: in the WQE
 * when max_sge is 1, else in rows of @sge (whose first entry the WQE repeats). */
struct dpv_rq {
	struct dpv_rwqe *wqe;
	struct dpv_pd *buf_pd;     /* the parent domain whose allocator gave wqe, if it did */
	uint64_t buf_type;         /* DPV_RES_RQ or DPV_RES_SRQ */
	bool wqe_custom;
	struct ibv_sge *sge;       /* NULL when max_sge is 1 */
	uint32_t size, mask, max_wr, max_sge;
	uint32_t head, tail;       /* tail: next to fill */
};

/* The scatter list of the WQE in @slot (masked). */
static inline struct ibv_sge *dpv__rq_sges(const struct dpv_rq *rq, uint32_t slot)
{
	return rq->sge == NULL ? &rq->wqe[slot].sge : &rq->sge[(size_t)slot * rq->max_sge];
}

/* Post @nsge (at most max_sge) entries @sg into WQE @slot (masked). */
static inline void dpv__rq_set_sges(struct dpv_rq *rq, uint32_t slot, const struct ibv_sge *sg,
				    uint32_t nsge)
{
	if (nsge > 0)
		rq->wqe[slot].sge = sg[0];
	if (rq->sge != NULL)
		for (uint32_t i = 0; i < nsge; i++)
			rq->sge[(size_t)slot * rq->max_sge + i] = sg[i];
	rq->wqe[slot].nsge = (uint16_t)nsge;
}

struct dpv_qp;

/* A transport: what a QP type means on the wire, chosen once at ibv_create_qp. Every op
 * runs with the QP's lock held unless it says otherwise; ops return 0 or a negative errno. */
struct dpv_transport_ops {
	const char *name;
	/* Check the type's creation attributes and set qp->lim (the QP is not yet visible). */
	int (*create)(struct dpv_qp *qp, struct ibv_qp_init_attr_ex *attr);
	/* Undo create and everything later transitions set up (QP lock not held). */
	void (*destroy)(struct dpv_qp *qp);
	/* Before the QP enters @next (control lock held): set up what that state needs. */
	int (*prepare_state)(struct dpv_qp *qp, enum ibv_qp_state next);
	/* Walk and post a list (QP lock taken inside: the fast path may avoid it). */
	int (*post_send)(struct dpv_qp *qp, struct ibv_send_wr *wr, struct ibv_send_wr **bad_wr);
	/* Send-side progress: hand queued frames out, reap, complete. */
	void (*progress)(struct dpv_qp *qp);
	/* ERR: every WR not yet executed completes with FLUSH_ERR. */
	void (*flush)(struct dpv_qp *qp);
	/* RESET: forget every WR; false if buffers are still held (the SQ must then stay). */
	bool (*reset)(struct dpv_qp *qp);
	/* Frames received on a port, for the transport to take (no lock held). A transport
	 * counts its receivers on the device (dpv__device_rx_users): a port nobody receives
	 * from is not polled (net_null makes frames on every burst). Bit i of *@taken set:
	 * frame i was consumed by a transport earlier in dpv_rx_transports (RoCE, ARP/ND);
	 * a later one sets the bits of what it consumes and leaves taken frames alone, except
	 * that RAW_PACKET's SNIFFER flows still get a copy of them. */
	void (*port_rx)(struct dpv_device *dev, struct rte_mbuf **pkts, uint16_t n,
			uint64_t *taken);
	/* The same, told the receive queue @q the burst came from; it may run for different
	 * queues of one device at once (the transport guards what their bursts share), which
	 * port_rx never does (the device's rx_lock). Used instead of port_rx when set. */
	void (*port_rx_queue)(struct dpv_device *dev, struct dpv_rxq *q, struct rte_mbuf **pkts,
			      uint16_t n, uint64_t *taken);
	/* Optional, with port_rx: true while a burst of @dev would find nothing to do here
	 * (read without any lock, on every burst): the burst skips port_rx and the rx_lock it
	 * takes (an atomic per burst; RoCE and ARP/ND on a port that has no RoCE QP and no
	 * address). Whoever changes what it reads and then waits for rx_lock to be let go
	 * still finds every burst that saw the old value holding it. */
	bool (*port_rx_idle)(const struct dpv_device *dev);
	/* ibv_attach_mcast (@attach) and ibv_detach_mcast on a QP of this type (no lock held);
	 * @gid NULL, detaching: every group of the QP (ibv_destroy_qp, before the receive side
	 * lets go of the QP: no frame reaches it through a group afterwards). */
	int (*mcast)(struct dpv_qp *qp, const union ibv_gid *gid, bool attach);
	/* Service mode: may this transport's QPs be progressed by a service lcore? */
	bool service;
	/* Optional (NULL: the core's attributes only). Check and keep the attributes of @mask
	 * that the core does not keep (RC/UC: the path, PSNs, timers), before the QP enters its
	 * next state (control lock held). */
	int (*modify)(struct dpv_qp *qp, const struct ibv_qp_attr *attr, int mask);
	/* Optional: fill what modify kept into @attr (ibv_query_qp; control lock held). */
	void (*query)(struct dpv_qp *qp, struct ibv_qp_attr *attr);
	/* Optional: in SQD, is every WR the transport started done? (NULL: every WR it executed,
	 * [done, sent), has completed; RAW and UD start nothing in SQD.) QP lock held. */
	bool (*sq_drained)(struct dpv_qp *qp);
};

extern const struct dpv_transport_ops dpv_raw_transport;
extern const struct dpv_transport_ops dpv_ud_transport;
/* RC and UC over RoCEv2 (lib/roce/rc_qp.c): the RC/UC engine behind verbs QPs. */
extern const struct dpv_transport_ops dpv_rc_transport;
/* ARP and IPv6 ND of a port with addresses (lib/roce/roce_neigh.c): only .port_rx. */
extern const struct dpv_transport_ops dpv_roce_neigh_transport;
/* Transports that take received frames, NULL-terminated, in the order they see a burst. */
extern const struct dpv_transport_ops *const dpv_rx_transports[];

/* Stages whose TSC cycles a QP counts when the configuration has cycle_stats = 1. */
enum { DPV_CYC_VALIDATE, DPV_CYC_BUILD, DPV_CYC_BURST, DPV_CYC_COMPLETE, DPV_CYC_RECV_POST,
       DPV_CYC_STAGES };
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

struct dpv_wr_batch;

/* Packet pacing (IBV_QP_RATE_LIMIT, ibv_modify_qp_rate_limit): a token bucket of bytes the
 * transport takes a WR's length from before handing its frames to the port, refilled from
 * the TSC; kbps 0: no pacing. Changed under the QP's control lock; used by whoever kicks
 * the SQ (the posting thread, a poller, the service lcore), under the QP's (service) lock. */
struct dpv_pace {
	uint32_t kbps;
	uint32_t burst;            /* bytes the bucket holds when full */
	double per_tsc;            /* bytes one TSC cycle adds */
	double tokens;             /* below 0 after a WR longer than what was left */
	uint64_t last;             /* TSC of the last refill */
};
/* The rates ibv_query_device_ex reports in packet_pacing_caps (kbps). */
#define DPV_PACE_MIN_KBPS 1u
#define DPV_PACE_MAX_KBPS 400000000u     /* 400 Gb/s */

/* struct ibv_qp is the head of struct ibv_qp_ex: a QP created with
 * IBV_QP_INIT_ATTR_SEND_OPS_FLAGS hands out the extended one (qp_ex.c). */
struct dpv_qp {
	union {
		struct ibv_qp ibqp;
		struct ibv_qp_ex qpx;      /* its wr_* ops set when wr_batch is */
	};
	struct dpv_wr_batch *wr_batch;     /* the ibv_wr_* API's WRs between start and complete */
	const struct dpv_transport_ops *ops;
	/* the list poster: ops->post_send, or a faster one the transport picks for a state */
	int (*post_send)(struct dpv_qp *qp, struct ibv_send_wr *wr, struct ibv_send_wr **bad_wr);
	struct dpv_context *ctx;
	struct dpv_pd *pd;
	struct dpv_cq *scq, *rcq;
	TAILQ_ENTRY(dpv_qp) ctx_next;      /* on its context's list (progress) */
	struct dpv_rq rq;          /* with an SRQ: the WQEs it took from it (srq.c) */
	struct dpv_srq *srq;       /* created with one: its receives come from there; XRC_RECV:
				    * the SRQ of the message under way (lib/roce/rc_glue.c) */
	struct dpv_xrcd *xrcd;     /* XRC_RECV: its domain */
	struct dpv_cq *own_rcq;    /* the recv_cq it was created with (XRC_RECV: none) */
	bool no_rq;                /* set by the transport's create: no receive queue of its own
				    * to post to (XRC: receives come from the SRQs messages name) */
	/* Handles of a shared XRC_RECV QP (ibv_open_qp, qp_open.c), under that file's lock. On a
	 * QP: the open handles it counts (its creator's too, unless own_closed) and the openers'
	 * list. On an opener (a hollow struct dpv_qp): the QP it opens (NULL once that is gone),
	 * its context and its XRC domain handle (xrcd). */
	bool opener, own_closed;
	int handles;
	struct dpv_qp *real;
	TAILQ_HEAD(, dpv_qp) openers;
	TAILQ_ENTRY(dpv_qp) open_next;
	int nb_flows;
	enum ibv_qp_state state;
	enum ibv_qp_type type;
	bool sq_sig_all;
	bool lockless;             /* created in a thread domain */
	/* RTS -> SQD: WRs started before it are still going out (ibv_query_qp's sq_draining);
	 * IBV_EVENT_SQ_DRAINED when they are done, if EN_SQD_ASYNC_NOTIFY asked for it */
	bool sq_draining, sqd_notify;
	/* Service mode: the posting thread (under lock) checks WRs, writes their descriptors and
	 * publishes sq.head; the service lcore (under svc_lock) builds the frames, hands them to
	 * the port and completes them. Control operations (modify, destroy) take both. */
	bool service;
	bool svc_listed;           /* on its device's service array */
	/* each lock on a line of its own: the posting thread writes lock per list, the service
	 * lcore svc_lock per round, and both read state and service above every time */
	dpv_spinlock_t lock __rte_cache_aligned;
	dpv_spinlock_t svc_lock __rte_cache_aligned;
	struct ibv_qp_cap cap;
	struct dpv_wr_limits lim;     /* what ibv_post_send checks against */
	uint8_t port_num;
	uint32_t qkey, sq_psn;
	uint16_t pkey_index;
	struct dpv_txh *txh;       /* RAW: its transmitter */
	struct dpv_pace pace;      /* RAW: packet pacing */
	void *priv;                /* the transport's own state (UD: struct dpv_ud_qp) */
	uint32_t fast_sge;         /* RAW fast path: SGEs a WR may have there (max_send_sge, <= 4) */
	/* ... and the frame sizes it takes, INLINE or not: 14 + [0, span) bytes (0: none) */
	uint64_t fast_span_inline, fast_span_copy;
	struct dpv_sq sq;
	uint64_t tx_wrs, tx_bytes;                 /* the posting thread's */
	/* service mode: what pollers saw of the service lcore (dpv__service_qp_help) */
	uint64_t help_rounds, help_seen, help_checked;
	bool helping;
	uint64_t tx_frames __rte_cache_aligned;    /* the sending thread's (service lcore) */
	uint64_t tx_errors;
	uint64_t tx_completed;     /* WRs completed (signaled or not, errors and flushes too) */
	uint64_t rx_wrs __rte_cache_aligned, rx_completed;
	uint64_t cyc[DPV_CYC_STAGES];      /* with cycle_stats: TSC cycles per stage */
	TAILQ_ENTRY(dpv_qp) all_next;      /* every QP of the process (telemetry.c) */
};

static inline void dpv__cyc_add(struct dpv_qp *qp, int stage, uint64_t start)
{
	if (unlikely(dpv__cycles()))
		qp->cyc[stage] += rte_rdtsc() - start;
}

static inline struct dpv_qp *to_dqp(struct ibv_qp *q)
{
	return container_of_safe(q, struct dpv_qp, ibqp);
}

/* The QP a verb acts on: @q's own, or the one @q opened (ibv_open_qp; NULL when that QP is
 * gone). The posting verbs use to_dqp: an opener's post_send forwards, its receive queue is
 * refused as an XRC_RECV QP's. */
static inline struct dpv_qp *dpv__qp_target(struct ibv_qp *q)
{
	struct dpv_qp *qp = to_dqp(q);

	return qp != NULL && qp->opener ? __atomic_load_n(&qp->real, __ATOMIC_ACQUIRE) : qp;
}

static inline void dpv__qp_lock(struct dpv_qp *qp)
{
	if (!qp->lockless)
		dpv__spinlock_lock(&qp->lock);
}

/* 1 if taken (or lock-free), 0 if another thread holds it. */
static inline int dpv__qp_trylock(struct dpv_qp *qp)
{
	return qp->lockless || dpv__spinlock_trylock(&qp->lock);
}

static inline void dpv__qp_unlock(struct dpv_qp *qp)
{
	if (!qp->lockless)
		dpv__spinlock_unlock(&qp->lock);
}

/* Control-path lock of a QP: its lock, and for a service-mode QP its service lock too (the
 * service lcore is kept out while the QP changes). */
static inline void dpv__qp_lock_ctl(struct dpv_qp *qp)
{
	dpv__qp_lock(qp);
	if (qp->service)
		dpv__spinlock_lock(&qp->svc_lock);
}

static inline void dpv__qp_unlock_ctl(struct dpv_qp *qp)
{
	if (qp->service)
		dpv__spinlock_unlock(&qp->svc_lock);
	dpv__qp_unlock(qp);
}

/* The calling thread holds @qp's lock (dpv_lock.h's dpv__lock_assert_held). A QP of a thread
 * domain has no lock (dpv__qp_lock does nothing): its single thread is the application's
 * promise, nothing to check. */
static inline void dpv__qp_assert_locked(const struct dpv_qp *qp)
{
#if DPV_ASSERTS
	if (!qp->lockless)
		dpv__lock_assert_held(&qp->lock);
#else
	(void)qp;
#endif
}

/* ... the lock that guards its send queue's completion side: the service lock of a
 * service-mode QP (the service lcore holds only that one), else the QP lock. */
static inline void dpv__qp_assert_sq_locked(const struct dpv_qp *qp)
{
#if DPV_ASSERTS
	if (qp->service)
		dpv__lock_assert_held(&qp->svc_lock);
	else
		dpv__qp_assert_locked(qp);
#else
	(void)qp;
#endif
}

/* ... and its control lock (dpv__qp_lock_ctl). */
static inline void dpv__qp_assert_ctl_locked(const struct dpv_qp *qp)
{
	dpv__qp_assert_locked(qp);
#if DPV_ASSERTS
	if (qp->service)
		dpv__lock_assert_held(&qp->svc_lock);
#endif
}

/* The QP whose control lock this thread holds in ibv_modify_qp (qp.c): an RC/UC/XRC modify
 * resolving its peer polls the port, and a frame for that same QP found then is dropped (as
 * lost: the peer retransmits) rather than waited for under a lock this thread holds. */
extern __thread struct dpv_qp *dpv_ctl_qp;

/* The QP's state as another thread may be changing it (the service lcore moves a QP to SQE). */
static inline enum ibv_qp_state dpv__qp_state(const struct dpv_qp *qp)
{
	return __atomic_load_n(&qp->state, __ATOMIC_RELAXED);
}

static inline void dpv__qp_set_state(struct dpv_qp *qp, enum ibv_qp_state s)
{
	__atomic_store_n(&qp->state, s, __ATOMIC_RELAXED);
	qp->ibqp.state = s;
}

/* One completion written in place: every field of @e (the CQE writer of sends and receives;
 * field by field: a CQE built on the stack and copied stalls on store forwarding, measured:
 * 40 % of the receive path). */
static inline void dpv__cqe_fill(struct dpv_cqe *e, struct dpv_qp *qp, uint64_t wr_id,
				 enum ibv_wc_status status, enum ibv_wc_opcode opcode,
				 uint32_t len, unsigned int flags)
{
	uint32_t qp_num = qp->ibqp.qp_num;   /* read before the stores below, which may alias */

	e->wc.wr_id = wr_id;
	e->wc.status = status;
	e->wc.opcode = opcode;
	e->wc.vendor_err = 0;
	e->wc.byte_len = len;
	e->wc.imm_data = 0;
	e->wc.qp_num = qp_num;
	e->wc.src_qp = 0;
	e->wc.wc_flags = flags;
	e->wc.pkey_index = 0;
	e->wc.slid = 0;
	e->wc.sl = 0;
	e->wc.dlid_path_bits = 0;
	e->qp = qp;
	e->sq_index = 0;
	e->is_send = false;
	e->solicited = false;
}

/* One successful receive completion written into entry @e of @w's ring (dpv__cq_recv_put
 * moves on to the next; a writer that knows how far the ring goes on walks it itself). */
static inline void dpv__cq_recv_fill(const struct dpv_cq_recv *w, struct dpv_cqe *e,
				     uint64_t wr_id, uint32_t len, unsigned int flags)
{
#if defined(__SSE4_1__)
	/* dpv__cqe_fill's fields in four 16-byte stores (the ring's entries are aligned), two
	 * of them dpv__cq_recv_open's templates, and three 4- or 8-byte ones over them: fewer
	 * instructions than the 13 stores the compiler makes of the struct */
	__m128i *v = (__m128i *)(void *)e;

	_Static_assert(offsetof(struct ibv_wc, opcode) == 12 &&
		       offsetof(struct ibv_wc, qp_num) == 28 && offsetof(struct dpv_cqe, qp) == 48 &&
		       offsetof(struct dpv_cqe, sq_index) == 56 &&
		       offsetof(struct dpv_cqe, is_send) == 60 && IBV_WC_SUCCESS == 0,
		       "the CQE layout dpv__cq_recv_fill writes");
	_mm_store_si128(v, _mm_set_epi64x((long long)IBV_WC_RECV << 32, 0));
	_mm_store_si128(v + 1, w->line1);
	_mm_store_si128(v + 2, _mm_setzero_si128());
	_mm_store_si128(v + 3, w->line3);
	e->wc.wr_id = wr_id;
	e->wc.byte_len = len;
	e->wc.wc_flags = flags;
#else
	/* dpv__cqe_fill's fields, with the QP number the writer read once */
	e->wc = (struct ibv_wc){ .wr_id = wr_id, .status = IBV_WC_SUCCESS, .opcode = IBV_WC_RECV,
				 .byte_len = len, .qp_num = w->qp_num, .wc_flags = flags };
	e->qp = w->qp;
	e->sq_index = 0;
	e->is_send = false;
	e->solicited = false;
#endif
}

static inline void dpv__cq_recv_put(struct dpv_cq_recv *w, uint64_t wr_id, uint32_t len,
				    unsigned int flags)
{
	struct dpv_cqe *e = w->at;

	dpv__cq_recv_fill(w, e, wr_id, len, flags);
	w->at = e + 1 == w->end ? w->ring : e + 1;
}

/* Every QP and CQ of the process, for the telemetry endpoints (telemetry.c). */
void dpv__telemetry_qp(struct dpv_qp *qp, bool add);
void dpv__telemetry_cq(struct dpv_cq *cq, bool add);
/* The QPs and CQs of @ctx (telemetry.c's registry): a malloc'ed array of *n, or NULL. */
struct dpv_qp **dpv__registry_qps(struct dpv_context *ctx, unsigned int *n);
struct dpv_cq **dpv__registry_cqs(struct dpv_context *ctx, unsigned int *n);
/* Call @fn on every device with an open context (its port started); device list locked. */
void dpv__devices_foreach_open(void (*fn)(struct dpv_device *dev, void *arg), void *arg);

/* Service mode (qp_service.c). */
void dpv__device_service_init(struct dpv_device *dev);
/* Put a service-mode QP on its port's service lcore (at RESET -> INIT); control lock held.
 * -ENODEV when there is no lcore to use. */
int dpv__service_qp_add(struct dpv_qp *qp);
/* Take it off; when this returns the service lcore no longer touches it. */
void dpv__service_qp_del(struct dpv_qp *qp);
/* A poller of a service-mode QP's context (QP lock held): if the QP's service lcore runs but
 * made no round for a while (the OS gave its CPU to others), do its work for this QP. */
void dpv__service_qp_help(struct dpv_qp *qp);

/* Check a state transition's attribute mask (the table of qp_state.c). */
int dpv__qp_check_transition(enum ibv_qp_type type, enum ibv_qp_state cur,
			    enum ibv_qp_state next, int attr_mask);

/* A WR ring's geometry (SQ and RQ alike): a power of two >= @max_wr slots, at least one; the
 * max_wr written back (0 stays 0: no queue); at least one SGE per slot. */
static inline void dpv__ring_geometry(uint32_t max_wr, uint32_t max_sge, uint32_t *size,
				     uint32_t *mask, uint32_t *out_wr, uint32_t *out_sge)
{
	*size = rte_align32pow2(max_wr > 0 ? max_wr : 1);
	*mask = *size - 1;
	*out_wr = max_wr > 0 ? *size : 0;
	*out_sge = max_sge > 0 ? max_sge : 1;
}

/* The send queue's rings; the WQE ring from @pd's allocator if it is a parent domain with
 * one (dpv__qbuf_alloc); -ENOMEM. */
int dpv__sq_init(struct dpv_sq *sq, struct dpv_pd *pd, uint32_t max_wr, uint32_t max_sge);
/* The MR slots of the WQE at @index. */
static inline struct dpv_mr **dpv__sq_mrs(struct dpv_sq *sq, uint32_t index)
{
	return &sq->mrs[(size_t)(index & sq->mask) * sq->max_sge];
}
void dpv__sq_fini(struct dpv_qp *qp);
/* Room for service-mode descriptors with at most @data bytes of data per slot (a frame the
 * posting thread copies; inline data and a TSO header); -ENOMEM. The SQ must be empty. */
int dpv__sq_desc_init(struct dpv_sq *sq, uint32_t data);
void dpv__wqe_put_mrs(struct dpv_wqe *w);
/* The transport is done with @w (any thread): its MRs are let go, it may complete. */
void dpv__wqe_release(void *w);
/* Write the completions of [done, sent) in order, up to the first WR not yet released;
 * QP lock held (service mode: its service lock). */
void dpv__sq_complete(struct dpv_qp *qp);
/* Wait (bounded) until every WR in [done, sent) is released, calling @reap meanwhile; false
 * if some never were. */
bool dpv__sq_wait_released(struct dpv_qp *qp, void (*reap)(struct dpv_qp *qp));
/* Forget every WR (RESET): cursors back to 0. */
void dpv__sq_clear(struct dpv_sq *sq);
/* Receive side (rq.c, flow.c). */
/* A receive ring; its WQEs from @pd's allocator (resource @type) as dpv__sq_init's. */
int dpv__rq_init(struct dpv_rq *rq, struct dpv_pd *pd, uint64_t type, uint32_t max_wr,
		 uint32_t max_sge);
void dpv__rq_fini(struct dpv_rq *rq);
/* ERR: every posted receive WQE completes with FLUSH_ERR; RESET: forgotten. QP lock held. */
void dpv__rq_flush(struct dpv_qp *qp);
void dpv__rq_reset(struct dpv_qp *qp);
int dpv_post_recv(struct ibv_qp *ibqp, struct ibv_recv_wr *wr, struct ibv_recv_wr **bad_wr);
/* One receive completion of @qp, into its CQ (or into @batch, pushed by dpv__rq_batch_flush). */
struct dpv_cqe_batch {
	struct dpv_cq *cq;
	unsigned int n;
	struct dpv_cqe e[32];
};
void dpv__rq_complete(struct dpv_qp *qp, uint64_t wr_id, enum ibv_wc_status status, uint32_t len,
		     unsigned int flags, struct dpv_cqe_batch *batch);
void dpv__rq_batch_flush(struct dpv_cqe_batch *b);
/* A successful receive completion with what a datagram tells (UD): the sender's QP number,
 * the immediate data (wire order, as verbs' imm_data) and whether it asks for a solicited
 * event; @flags as wc_flags. */
void dpv__rq_complete_from(struct dpv_qp *qp, uint64_t wr_id, uint32_t len, unsigned int flags,
			   uint32_t src_qp, uint32_t imm, bool solicited,
			   struct dpv_cqe_batch *batch);

/* ---- shared receive queues (srq.c) and XRC domains (xrcd.c) ---- */

/* An SRQ: a ring of receive WQEs (struct dpv_rq, as a QP's own) that the QPs created with it
 * (or, XRC, the messages naming it) take from, one WQE when a message needs one; the WQE
 * moves into the taking QP's own ring and is that QP's work from then on. */
struct dpv_srq {
	struct ibv_srq ibsrq;
	struct dpv_context *ctx;
	enum ibv_srq_type type;
	uint32_t srq_num;          /* XRC SRQs: the number an XRCETH names (ibv_get_srq_num) */
	struct dpv_pd *pd;
	struct dpv_xrcd *xrcd;     /* XRC SRQs: their domain */
	struct dpv_cq *cq;         /* XRC SRQs: where their receives complete */
	dpv_spinlock_t lock;       /* the ring and the limit */
	struct dpv_rq rq;
	uint32_t limit;            /* armed limit (IBV_EVENT_SRQ_LIMIT_REACHED), 0: not armed */
	int users;                 /* (__atomic) QPs created with it: ibv_destroy_srq is EBUSY */
};

static inline struct dpv_srq *to_dsrq(struct ibv_srq *s)
{
	return container_of_safe(s, struct dpv_srq, ibsrq);
}

/* Move the oldest WQE of @srq into @qp's own ring (where the transport fills and completes
 * it); the SRQ's limit event when that took it below its armed limit. QP lock held. -ENOENT:
 * the SRQ is empty; -ENOSPC: @qp's ring is full. */
int dpv__srq_take(struct dpv_qp *qp, struct dpv_srq *srq);

/* Is there a receive WQE for the next message of @qp: its own, or one taken from its SRQ? */
static inline bool dpv__rq_ready(struct dpv_qp *qp)
{
	if (qp->rq.tail != qp->rq.head)
		return true;
	return qp->srq != NULL && dpv__srq_take(qp, qp->srq) == 0;
}

/* A QP with an SRQ entered ERR: IBV_EVENT_QP_LAST_WQE_REACHED (no further WQE will be taken
 * from the SRQ by it). */
void dpv__srq_qp_error(struct dpv_qp *qp);
/* Context ops (srq.c). */
struct ibv_srq *dpv_create_srq_ex(struct ibv_context *context, struct ibv_srq_init_attr_ex *a);
int dpv_post_srq_recv(struct ibv_srq *srq, struct ibv_recv_wr *wr, struct ibv_recv_wr **bad_wr);
int dpv_get_srq_num(struct ibv_srq *srq, uint32_t *srq_num);
/* ibv_close_device: destroy what the application left (after its QPs). */
unsigned int dpv__release_srqs(struct dpv_context *ctx);

/* An ibv_open_xrcd handle; handles of one inode share a domain (xrcd.c). */
struct dpv_xrc_domain;
struct dpv_xrcd {
	struct ibv_xrcd ibxrcd;
	struct dpv_context *ctx;
	struct dpv_xrc_domain *domain;
	int users;                 /* SRQs and QPs created with this handle (ibv_close_xrcd: EBUSY) */
};

static inline struct dpv_xrcd *to_dxrcd(struct ibv_xrcd *x)
{
	return container_of_safe(x, struct dpv_xrcd, ibxrcd);
}

struct ibv_xrcd *dpv_open_xrcd(struct ibv_context *context, struct ibv_xrcd_init_attr *a);
/* Shared XRC_RECV QPs (qp_open.c). The open_qp op; a new QP's handle count (its creator's);
 * ibv_destroy_qp's first step: 1 when it closed the handle and the QP stays (or went with
 * it), 0 when the caller destroys the QP; the QP about to be destroyed regardless (its
 * context is closing): its openers let go of it (their verbs EINVAL from then on); an
 * asynchronous event of the QP to every open handle; ibv_close_device: the context's
 * handles closed, how many. */
struct ibv_qp *dpv_open_qp(struct ibv_context *context, struct ibv_qp_open_attr *a);
void dpv__qp_open_init(struct dpv_qp *qp);
int dpv__qp_handle_close(struct dpv_qp *qp);
void dpv__qp_open_orphan(struct dpv_qp *qp);
void dpv__qp_event(struct dpv_qp *qp, enum ibv_event_type type);
unsigned int dpv__release_qp_opens(struct dpv_context *ctx);
int dpv_close_xrcd(struct ibv_xrcd *xrcd);
/* Do two handles name the same domain? */
bool dpv__xrcd_same(const struct dpv_xrcd *a, const struct dpv_xrcd *b);
/* A QP starts (+1) or stops (-1) using @x. */
void dpv__xrcd_use(struct dpv_xrcd *x, int delta);
/* Give XRC SRQ @srq a number in domain @x (-ENOSPC); take it back (the receive side no longer
 * holds @srq when this returns). */
int dpv__xrcd_srq_add(struct ibv_xrcd *x, struct dpv_srq *srq);
void dpv__xrcd_srq_del(struct dpv_srq *srq);
/* ibv_destroy_srq of an XRC SRQ: unpublished, unless an XRC_RECV QP holds it (-EBUSY). */
int dpv__xrcd_srq_retire(struct dpv_srq *srq);
/* The XRC SRQ numbered @srq_num on @dev, or NULL (receive side, under the device's rx_lock). */
struct dpv_srq *dpv__xrc_srq_lookup(struct dpv_device *dev, uint32_t srq_num);
unsigned int dpv__release_xrcds(struct dpv_context *ctx);

/* A QP draining in SQD whose transport says it is drained: IBV_EVENT_SQ_DRAINED (if asked
 * for), sq_draining cleared. Called by dpv__sq_complete; QP lock held. */
void dpv__qp_sqd_check(struct dpv_qp *qp);

/* A transport moves the QP to ERR on an execution error: state, then both queues flushed
 * (the SQ under the service lock of a service-mode QP); QP lock held. */
void dpv__qp_fail(struct dpv_qp *qp);

/* Progress (progress.c): receive what @dev's port has and give it to the transports; every
 * QP of @ctx (those in a thread domain only from their own CQs, @polled, or a CQ on
 * @waited) and the port of its device, as polling any of its CQs does. */
void dpv__port_rx_poll(struct dpv_device *dev);
/* Receive queue @q of @dev's port, one burst if nobody else polls it now. */
void dpv__rxq_poll(struct dpv_device *dev, struct dpv_rxq *q);
/* The port's timers (RC's ACK and RNR timers), unless a receive queue is held by a poller
 * that made no progress since the last look: returns how many fired. */
unsigned int dpv__device_timers_poll(struct dpv_device *dev);
/* Set by a thread that polls ports only now and then (the keeper, a resolve waiting for a
 * reply): its polls deliver, but never make it a queue's poller, to which the threads
 * polling CQs would then leave the queue (progress.c, cq_rx_poll). */
extern __thread bool dpv__rx_visiting;
/* The receive path delivered frames of queue @q to @cq: @cq's poller learns where they come
 * from (a line written only when a queue is new to it). */
static inline void dpv__cq_rxq_seen(struct dpv_cq *cq, const struct dpv_rxq *q)
{
	uint64_t bit = 1ull << (q->id & 63);

	if (!(__atomic_load_n(&cq->rxq_seen, __ATOMIC_RELAXED) & bit))
		__atomic_fetch_or(&cq->rxq_seen, bit, __ATOMIC_RELAXED);
}
/* The port's receive queues' poll counts, summed (someone polled the port since). */
uint32_t dpv__device_rx_polls(struct dpv_device *dev);
/* The port's receive queues' counters, summed (and the device's own, for transports that
 * count there). */
void dpv__device_rx_stats(struct dpv_device *dev, uint64_t *frames, uint64_t *unsteered,
			  uint64_t *no_wqe, uint64_t *cyc);
/* Set up @dev's receive queues once its port started. -ENOMEM. */
int dpv__device_rx_init(struct dpv_device *dev);
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
void dpv__context_progress(struct dpv_context *ctx, struct dpv_cq *polled,
			  const struct ibv_comp_channel *waited);
void dpv__context_qp_add(struct dpv_context *ctx, struct dpv_qp *qp);
void dpv__context_qp_del(struct dpv_context *ctx, struct dpv_qp *qp);
/* Wait until no thread is inside @dev's receive side (a burst holds its queue's lock while it
 * works, a transport without port_rx_queue the rx_lock too): what was unpublished before (a
 * steering table, a QP number) is no longer seen by anyone. Not from a receive path. */
void dpv__device_rx_quiesce(struct dpv_device *dev);
struct ibv_flow *dpv__create_flow(struct ibv_qp *qp, struct ibv_flow_attr *attr);
int dpv__destroy_flow(struct ibv_flow *flow);
void dpv__device_flows_init(struct dpv_device *dev);
void dpv__qp_mcast_detach_all(struct dpv_qp *qp);
/* RAW_PACKET's ibv_attach_mcast/ibv_detach_mcast (a flow per group MAC). */
int dpv__raw_mcast(struct dpv_qp *qp, const union ibv_gid *gid, bool attach);

/* QP numbers (qpn.c). A free QPN of @dev, found from then on by dpv__qpn_lookup (the QP's
 * lock and type must be set up: the receive side may lock it at once), or -ENOSPC when all
 * are taken; take QPN @qpn of @qp back (the receive side no longer holds @qp when this
 * returns). */
int dpv__qpn_alloc(struct dpv_device *dev, struct dpv_qp *qp);
void dpv__qpn_free(struct dpv_device *dev, struct dpv_qp *qp, uint32_t qpn);
#define DPV_MAX_QP 65536
/* What ibv_query_device reports and lib/roce enforces: AHs per context, multicast groups
 * with UD QPs per port, UD QPs per group. */
#define DPV_MAX_AH 65536
#define DPV_MAX_MCAST_GRP 256
#define DPV_MAX_MCAST_QP_ATTACH 56
/* READ/atomics an RC QP may have outstanding, as requester and as responder */
#define DPV_MAX_RD_ATOM 16
/* ibv_query_port's max_msg_sz: the largest RC/UC message (lib/roce's DPV_RC_MAX_MSG, which
 * rc_glue.c asserts is the same); UD messages are bounded by the MTU, RAW ones by a frame. */
#define DPV_MAX_MSG_SZ (1u << 31)
/* ibv_query_device's vendor_id: 0xffffff, no IEEE OUI (rxe's; no hardware vendor's) */
#define DPV_VENDOR_ID 0xffffffu

/* The QP numbered @qpn on @dev, or NULL; for the receive side, which holds the device's
 * rx_lock (dpv__qpn_free waits for it). */
static inline struct dpv_qp *dpv__qpn_lookup(struct dpv_device *dev, uint32_t qpn)
{
	struct dpv_qpn_table *t = &dev->qpns;

	if (unlikely(qpn >= __atomic_load_n(&t->size, __ATOMIC_ACQUIRE)))
		return NULL;
	return __atomic_load_n(&t->qp[qpn], __ATOMIC_ACQUIRE);
}

/* Loopback (progress.c): the ring of frames @dev's port receives from itself, created once;
 * -ENOMEM. dpv__device_loopback hands it frames (multi-producer), returns how many it took
 * (a full ring takes fewer: the caller keeps the rest, as when a port queue is full). */
int dpv__device_loop_init(struct dpv_device *dev);
unsigned int dpv__device_loopback(struct dpv_device *dev, struct rte_mbuf **m, unsigned int n);
/* Free what the ring still holds, and the ring (the ports are closing). */
void dpv__device_loop_fini(struct dpv_device *dev);
/* The mbuf flag (a registered dynamic ol_flags bit; 0 before the first ibv_open_device, or
 * when DPDK has no bit left) of a RoCE frame built for the loopback ring without its ICRC: it
 * never reaches a wire, so nothing can corrupt it on the way (doc/roce.md, "Loopback"). */
extern uint64_t dpv__loop_no_icrc;
/* Register that flag (once a process; at every ibv_open_device, so that the memory DPDK keeps
 * for it is there from the first open on, as the EAL's is). Without it nothing is left out. */
void dpv__loop_flag_init(void);
/* May a frame for @dev's own loopback be built without its ICRC now? Only when nobody could
 * see or damage it: no SNIFFER rule on the port (they get RoCE frames too, whole) and no
 * receive fault injection (corruption must die on the ICRC). The receive side checks again
 * (a sniffer or a fault that arrived meanwhile): dpv__roce_port_rx. */
static inline bool dpv__device_loop_icrc_skip(struct dpv_device *dev)
{
	return dpv__loop_no_icrc != 0 && !__atomic_load_n(&dev->fault_on[0], __ATOMIC_RELAXED) &&
	       __atomic_load_n(&dev->sniffers, __ATOMIC_RELAXED) == 0;
}

/* Free the SQs of destroyed QPs the ports held buffers of (after the ports are closed). */
void dpv__qp_zombies_free(void);
int dpv_post_send(struct ibv_qp *ibqp, struct ibv_send_wr *wr, struct ibv_send_wr **bad_wr);
/* RoCEv2 port state (lib/roce/roce_addr.c): made with the device (its configured addresses
 * added), told when the port starts and stops; -ENOMEM. The GID table itself is read through
 * lib/roce/dpv_roce.h. */
int dpv__roce_port_init(struct dpv_device *dev);
void dpv__roce_port_start(struct dpv_device *dev, bool started);

/* RAW_PACKET (lib/raw): receive steering of the device, and its QPs' send paths. */
void dpv__raw_port_rx(struct dpv_device *dev, struct dpv_rxq *q, struct rte_mbuf **pkts,
		      uint16_t n, uint64_t *taken);

int dpv__raw_post_list(struct dpv_qp *qp, struct ibv_send_wr *wr, struct ibv_send_wr **bad_wr);
int dpv__raw_post_send(struct dpv_qp *qp, struct ibv_send_wr *wr, struct ibv_send_wr **bad_wr);
int dpv__raw_post_send_fast(struct dpv_qp *qp, struct ibv_send_wr *wr,
			   struct ibv_send_wr **bad_wr);
/* Service mode: the posting thread's fast path (descriptors), and the service lcore's
 * (bursts of them built, sent and completed in one go; the generic kick takes the rest:
 * false when some of what was posted when it started is left to it). */
int dpv__raw_post_send_svc(struct dpv_qp *qp, struct ibv_send_wr *wr,
			   struct ibv_send_wr **bad_wr);
bool dpv__raw_service_send(struct dpv_qp *qp);
void dpv__raw_progress(struct dpv_qp *qp);
void dpv__raw_flush(struct dpv_qp *qp);
bool dpv__raw_reset(struct dpv_qp *qp);

/* Context op slots implemented in pd.c and qp.c. */
struct ibv_pd *dpv_alloc_parent_domain(struct ibv_context *context,
				       struct ibv_parent_domain_init_attr *attr);
struct ibv_td *dpv_alloc_td(struct ibv_context *context, struct ibv_td_init_attr *attr);
int dpv_dealloc_td(struct ibv_td *td);
struct ibv_qp *dpv_create_qp_ex(struct ibv_context *context, struct ibv_qp_init_attr_ex *attr);
int dpv_modify_qp_rate_limit(struct ibv_qp *qp, struct ibv_qp_rate_limit_attr *attr);
/* Packet pacing (pace.c): set the rate (0: none) and bucket size (0: 1 ms at the rate, at
 * least one frame of the QP); -EINVAL
 * outside packet_pacing_caps. How many of the @n WRs @w[] (in SQ order) may go to the port now. */
int dpv__pace_set(struct dpv_qp *qp, uint32_t kbps, uint32_t burst);
uint16_t dpv__pace_take(struct dpv_pace *p, struct dpv_wqe *const *w, uint16_t n);
/* The same at TSC @now (the unit test's clock): the bucket refilled for the time since the
 * last refill (none if @now is not later), then WRs taken while it is above 0. */
uint16_t dpv__pace_take_at(struct dpv_pace *p, uint64_t now, struct dpv_wqe *const *w,
			   uint16_t n);
/* Give back what dpv__pace_take took for @n WRs the port did not take after all. */
void dpv__pace_refund(struct dpv_pace *p, struct dpv_wqe *const *w, uint16_t n);

/* The ibv_wr_* API (qp_ex.c): check @send_ops_flags against the QP type's opcodes
 * (-EOPNOTSUPP for an operation the type has not) and set up the QP's ibv_qp_ex; undo it. */
int dpv__qp_ex_init(struct dpv_qp *qp, uint64_t send_ops_flags);
void dpv__qp_ex_fini(struct dpv_qp *qp);

/* Errno helpers for the entry points. */
static inline void *dpv__fail_ptr(int neg_errno)
{
	errno = -neg_errno;
	return NULL;
}

#endif
