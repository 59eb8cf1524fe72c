/* The verbs core's objects: devices, contexts, PDs, MRs, CQs, QPs and their send queues.
 * Private to libdpverbs. Internal functions return 0 or a negative errno; the ibv_* entry
 * points convert to rdma-core's convention (positive errno, or NULL with errno). */
#ifndef DPV_VERBS_PRIV_H
#define DPV_VERBS_PRIV_H

#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>
#include <sys/queue.h>

#include <infiniband/verbs.h>
#include <rte_branch_prediction.h>
#include <rte_common.h>
#include <rte_cycles.h>
#include <rte_log.h>
#include "dpv_lock.h"

#include "dpv_driver.h"
#include "dpv_engine.h"
#include "dpverbs.h"
#include "wr_check.h"

#define container_of_safe(ptr, type, member) \
	((ptr) == NULL ? NULL : (type *)((char *)(ptr) - offsetof(type, member)))

extern int dpv_logtype_verbs;
#define VERBS_LOG(level, fmt, ...) \
	rte_log(RTE_LOG_ ## level, dpv_logtype_verbs, "dpverbs: " fmt "\n", ##__VA_ARGS__)

/* ---- devices and contexts ---- */

struct dpv_flow;

struct dpv_device {
	struct ibv_device ibdev;
	const struct dpv_driver_ops *ops;
	struct dpv_port *port;
	struct dpv_port_caps caps;
	int index;                 /* in the driver's port order */
	int open_count;            /* contexts open on this device */
	/* receive steering: rules by priority, and the receive progress of the port */
	pthread_rwlock_t flows_lock;
	TAILQ_HEAD(, dpv_flow) flows;
	dpv_spinlock_t rx_lock;
	uint64_t rx_frames, rx_unsteered, rx_no_wqe;
	/* service mode (qp_service.c): the port's service-mode QPs, driven by a service lcore */
	pthread_mutex_t svc_mutex;     /* adding and removing QPs, the lcore assignment */
	dpv_spinlock_t svc_lock;       /* the array; held by the service lcore for a round */
	unsigned int svc_want;         /* control paths waiting for svc_lock: the service yields */
	struct dpv_qp **svc_qps;
	unsigned int nb_svc_qp, svc_cap;
	bool svc_attached;             /* a service lcore runs the port's work */
	unsigned int svc_lcore;
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
	/* asynchronous events, readable through context.async_fd (an eventfd) */
	pthread_mutex_t async_lock;
	STAILQ_HEAD(, dpv_async_event) async_events;
	struct dpv_mr_table *mrs;
	struct dpv_objset pds, tds, flows;  /* PDs (parent domains too), TDs, ibv_create_flow's */
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
int dpv_objset_add(struct dpv_context *ctx, struct dpv_objset *s, void *obj);
void dpv_objset_del(struct dpv_context *ctx, struct dpv_objset *s, void *obj);
/* Destroy whatever @ctx still holds (ibv_close_device), in dependency order. */
void dpv_context_release(struct dpv_context *ctx);
/* The flow ops of the context: dpv_create_flow / dpv_destroy_flow, tracked in ctx->flows. */
struct ibv_flow *dpv_create_flow_tracked(struct ibv_qp *qp, struct ibv_flow_attr *attr);
int dpv_destroy_flow_tracked(struct ibv_flow *flow);

/* Start DPDK if needed and list the devices (also used by dpv-devinfo through ibv_*). */
int dpv_devices_scan(struct dpv_device ***list, int *n);
void dpv_context_ops_init(struct verbs_context *vctx);
/* What the device reports, given the port's offload policy. */
bool dpv_device_ip_csum(const struct dpv_port_caps *caps);
uint32_t dpv_device_max_tso(const struct dpv_port_caps *caps);
int dpv_query_device_ex(struct ibv_context *context, const struct ibv_query_device_ex_input *in,
			struct ibv_device_attr_ex *attr, size_t attr_size);
int dpv_query_port(struct ibv_context *context, uint8_t port_num, struct ibv_port_attr *attr,
		   size_t attr_len);
void dpv_async_event_post(struct dpv_context *ctx, const struct ibv_async_event *ev);
int dpv_async_init(struct dpv_context *ctx);
void dpv_async_fini(struct dpv_context *ctx);

/* ---- protection domains and thread domains ---- */

struct dpv_td {
	struct ibv_td ibtd;
	int refs;
};

struct dpv_pd {
	struct ibv_pd ibpd;
	int refs;                  /* MRs, QPs and parent domains using it */
	struct dpv_pd *parent;     /* parent domain: the PD it stands for */
	struct dpv_td *td;         /* parent domain: its thread domain (lock-free QPs) */
};

static inline struct dpv_pd *to_dpd(struct ibv_pd *p)
{
	return container_of_safe(p, struct dpv_pd, ibpd);
}

/* The PD a QP or MR really belongs to (a parent domain stands for its PD). */
static inline struct dpv_pd *dpv_pd_base(struct dpv_pd *pd)
{
	return pd->parent != NULL ? pd->parent : pd;
}

/* ---- memory regions ---- */

struct dpv_range;

struct dpv_mr {
	struct ibv_mr ibmr;
	struct dpv_pd *pd;
	uint64_t iova;             /* address the application names in SGEs */
	uint8_t *va;
	uint64_t length;
	unsigned int access;
	int refs;                  /* in-flight WRs using it */
	unsigned int nb_ranges;
	struct dpv_range **ranges; /* DMA ranges it holds a reference on */
};

struct dpv_mr_table {
	dpv_spinlock_t lock;
	uint32_t size;
	uint32_t free_hint;
	struct dpv_mr **slot;      /* lkey index -> MR */
	uint8_t *gen;              /* lkey generation, so that a stale lkey does not match */
};

int dpv_mr_table_init(struct dpv_context *ctx);
void dpv_mr_table_fini(struct dpv_context *ctx);
/* The MR of @lkey in @pd containing [addr, addr + len), or NULL (a protection error). */
struct dpv_mr *dpv_mr_lookup(struct dpv_context *ctx, struct dpv_pd *pd, uint32_t lkey,
			     uint64_t addr, uint32_t len, uint8_t **va);

/* DMA range registry: page-rounded, reference-counted, never overlapping. */
int dpv_range_acquire(struct dpv_context *ctx, void *va, uint64_t len, struct dpv_mr *mr);
void dpv_range_release(struct dpv_context *ctx, struct dpv_mr *mr);
void dpv_ranges_release_all(void);
/* DMA-map (or unmap) [va, va + len) on every present port that needs it (device.c). */
int dpv_devices_dma_map(void *va, uint64_t len, bool map);

/* ---- completion queues ---- */

struct dpv_qp;

struct dpv_cqe {
	struct ibv_wc wc;
	struct dpv_qp *qp;
	uint32_t sq_index;         /* send CQE: SQ slot freed when the CQE is polled */
	bool is_send;
	bool solicited;            /* wakes a CQ armed for solicited completions only */
};

struct dpv_channel {
	struct ibv_comp_channel ibch;
	pthread_mutex_t lock;
	TAILQ_HEAD(, dpv_cq) fired;        /* CQs with an event not yet read */
	TAILQ_HEAD(, dpv_cq) cqs;          /* every CQ on it: ibv_get_cq_event drives them */
};

struct dpv_cq {
	struct ibv_cq ibcq;
	dpv_spinlock_t lock;       /* the CQE ring */
	struct dpv_cqe *ring;
	uint32_t size;             /* ring entries: cqe + 1 */
	uint32_t head, tail;       /* tail: next written, head: next polled */
	bool armed, solicited_only;
	bool overrun;
	bool fired;                /* on its channel's fired list */
	TAILQ_ENTRY(dpv_cq) fired_next;
	TAILQ_ENTRY(dpv_cq) channel_next;
	pthread_mutex_t qps_lock;  /* the QPs that complete into it, progressed by polling */
	TAILQ_HEAD(, dpv_qp) qps;
	TAILQ_HEAD(, dpv_qp) rqps;         /* QPs receiving into it: polling drives their port */
	int nb_qp;
	unsigned int events_pending;   /* events returned by ibv_get_cq_event, not yet acked */
	uint32_t id;                   /* for telemetry (/dpverbs/cq,<id>) */
	uint64_t completions;          /* CQEs written */
	TAILQ_ENTRY(dpv_cq) all_next;  /* every CQ of the process (telemetry.c) */
};

static inline struct dpv_cq *to_dcq(struct ibv_cq *c)
{
	return container_of_safe(c, struct dpv_cq, ibcq);
}

/* Append a completion (CQ lock taken inside); a full CQ is an overrun (IBV_EVENT_CQ_ERR). */
int dpv_cq_push(struct dpv_cq *cq, const struct dpv_cqe *cqe);
/* @n completions in order under one lock; -ENOSPC (and IBV_EVENT_CQ_ERR) if they overran. */
int dpv_cq_push_many(struct dpv_cq *cq, const struct dpv_cqe *cqe, unsigned int n);
void dpv_cq_attach_qp(struct dpv_cq *cq, struct dpv_qp *qp);
void dpv_cq_detach_qp(struct dpv_cq *cq, struct dpv_qp *qp);
/* Drop every completion of @qp still in @cq. */
void dpv_cq_clean(struct dpv_cq *cq, struct dpv_qp *qp);
int dpv_poll_cq(struct ibv_cq *ibcq, int n, struct ibv_wc *wc);
int dpv_req_notify_cq(struct ibv_cq *ibcq, int solicited_only);

/* ---- queue pairs ---- */

struct dpv_wqe {
	uint64_t wr_id;
	void *frame;               /* built by the driver, not yet taken by it */
	uint32_t byte_len;
	uint8_t opcode;            /* enum ibv_wc_opcode */
	uint8_t signaled;
	uint8_t status;            /* enum ibv_wc_status decided at post time */
	uint8_t released;          /* set by dpv_tx_released */
	uint8_t nb_mr;             /* MRs it holds a reference on, in mrs[] */
	uint8_t deferred;          /* service mode: checked, built by the service lcore later */
	struct dpv_mr **mrs;       /* its max_sge slots of dpv_sq.mrs */
};

/* Service mode: what the service lcore builds a WR's frame from, besides its slot's gather
 * list and data copy. Kept out of struct dpv_wqe, whose ring the direct path walks (40 bytes
 * a slot: 1024 of them fit in L1; measured 8 % slower at 56). */
struct dpv_tx_desc {
	uint32_t flags;            /* enum dpv_tx_flags */
	uint16_t nseg, mss, tso_hdr_len;
};

/* The cursors sit on cache lines of their writers' own: in service mode the posting thread
 * writes post (per WR) and head (once per list), the service lcore sent and done, the polling
 * thread freed. A line another core reads while its owner writes it moves at every write
 * (measured: publishing head per WR cost ~1 us per WR between the two vCPUs here). */
struct dpv_sq {
	struct dpv_wqe *wqe;
	uint32_t size, mask;       /* slots: a power of two >= max_wr */
	uint32_t max_wr;
	uint32_t max_sge;
	struct dpv_mr **mrs;       /* max_sge per slot: the MRs a WR uses until it completes */
	uint32_t post __rte_cache_aligned;   /* next slot to post (the posting thread's) */
	uint32_t head __rte_cache_aligned;   /* post, published at the end of each list */
	uint32_t sent __rte_cache_aligned;   /* next slot to hand to the driver */
	uint32_t done;             /* next slot to complete */
	uint32_t freed __rte_cache_aligned;  /* slots before it are free (ibv_poll_cq moves it) */
	/* service mode: each slot's gather list (max_sge entries) and a copy of its inline data
	 * and TSO header (data_stride bytes), the descriptor the service lcore builds from */
	struct dpv_tx_desc *desc;
	struct dpv_tx_seg *desc_seg;
	uint8_t *desc_data;
	uint32_t data_stride;
};

struct dpv_rwqe {
	uint64_t wr_id;
	uint16_t nsge;
};

/* The receive queue: WQEs in post order, each with its max_sge scatter entries. */
struct dpv_rq {
	struct dpv_rwqe *wqe;
	struct ibv_sge *sge;
	uint32_t size, mask, max_wr, max_sge;
	uint32_t head, tail;       /* tail: next to fill */
};

/* Stages whose TSC cycles a QP counts when the configuration has cycle_stats = 1. */
enum { DPV_CYC_VALIDATE, DPV_CYC_BUILD, DPV_CYC_BURST, DPV_CYC_COMPLETE, DPV_CYC_STAGES };
extern bool dpv_cycles_on;

static inline bool dpv_cycles(void)
{
	return __atomic_load_n(&dpv_cycles_on, __ATOMIC_RELAXED);
}

static inline uint64_t dpv_cyc_start(void)
{
	return unlikely(dpv_cycles()) ? rte_rdtsc() : 0;
}

struct dpv_qp {
	struct ibv_qp ibqp;
	struct dpv_context *ctx;
	struct dpv_pd *pd;
	struct dpv_cq *scq, *rcq;
	TAILQ_ENTRY(dpv_qp) scq_next;
	TAILQ_ENTRY(dpv_qp) rcq_next;
	struct dpv_rq rq;
	int nb_flows;
	enum ibv_qp_state state;
	enum ibv_qp_type type;
	bool sq_sig_all;
	bool lockless;             /* created in a thread domain */
	dpv_spinlock_t lock;
	/* Service mode: the posting thread (under lock) checks WRs, builds frames and publishes
	 * sq.head; the service lcore (under svc_lock) hands them to the port and completes them.
	 * Control operations (modify, destroy) take both. */
	bool service;
	bool svc_listed;           /* on its device's service array */
	dpv_spinlock_t svc_lock __rte_cache_aligned;   /* not on the line of lock */
	struct ibv_qp_cap cap;
	struct dpv_wr_limits lim;     /* what ibv_post_send checks against */
	uint8_t port_num;
	uint32_t qkey, sq_psn;
	uint16_t pkey_index;
	struct dpv_txq *txq;
	struct dpv_sq sq;
	uint64_t tx_wrs, tx_bytes;                 /* the posting thread's */
	uint64_t tx_frames __rte_cache_aligned;    /* the sending thread's (service lcore) */
	uint64_t tx_errors;
	uint64_t tx_completed;     /* WRs completed (signaled or not, errors and flushes too) */
	uint64_t rx_wrs __rte_cache_aligned, rx_completed;
	uint64_t cyc[DPV_CYC_STAGES];      /* with cycle_stats: TSC cycles per stage */
	TAILQ_ENTRY(dpv_qp) all_next;      /* every QP of the process (telemetry.c) */
};

static inline void dpv_cyc_add(struct dpv_qp *qp, int stage, uint64_t start)
{
	if (unlikely(dpv_cycles()))
		qp->cyc[stage] += rte_rdtsc() - start;
}

static inline struct dpv_qp *to_dqp(struct ibv_qp *q)
{
	return container_of_safe(q, struct dpv_qp, ibqp);
}

static inline void dpv_qp_lock(struct dpv_qp *qp)
{
	if (!qp->lockless)
		dpv_spinlock_lock(&qp->lock);
}

static inline void dpv_qp_unlock(struct dpv_qp *qp)
{
	if (!qp->lockless)
		dpv_spinlock_unlock(&qp->lock);
}

/* Control-path lock of a QP: its lock, and for a service-mode QP its service lock too (the
 * service lcore is kept out while the QP changes). */
static inline void dpv_qp_lock_ctl(struct dpv_qp *qp)
{
	dpv_qp_lock(qp);
	if (qp->service)
		dpv_spinlock_lock(&qp->svc_lock);
}

static inline void dpv_qp_unlock_ctl(struct dpv_qp *qp)
{
	if (qp->service)
		dpv_spinlock_unlock(&qp->svc_lock);
	dpv_qp_unlock(qp);
}

/* The QP's state as another thread may be changing it (the service lcore moves a QP to SQE). */
static inline enum ibv_qp_state dpv_qp_state(const struct dpv_qp *qp)
{
	return __atomic_load_n(&qp->state, __ATOMIC_RELAXED);
}

static inline void dpv_qp_set_state(struct dpv_qp *qp, enum ibv_qp_state s)
{
	__atomic_store_n(&qp->state, s, __ATOMIC_RELAXED);
	qp->ibqp.state = s;
}

/* Every QP and CQ of the process, for the telemetry endpoints (telemetry.c). */
void dpv_telemetry_qp(struct dpv_qp *qp, bool add);
void dpv_telemetry_cq(struct dpv_cq *cq, bool add);
/* The QPs and CQs of @ctx (telemetry.c's registry): a malloc'ed array of *n, or NULL. */
struct dpv_qp **dpv_registry_qps(struct dpv_context *ctx, unsigned int *n);
struct dpv_cq **dpv_registry_cqs(struct dpv_context *ctx, unsigned int *n);
/* Call @fn on every device with an open context (its port started); device list locked. */
void dpv_devices_foreach_open(void (*fn)(struct dpv_device *dev, void *arg), void *arg);

/* Service mode (qp_service.c). */
void dpv_device_service_init(struct dpv_device *dev);
/* Put a service-mode QP on its port's service lcore (at RESET -> INIT); control lock held.
 * -ENODEV when there is no lcore to use. */
int dpv_service_qp_add(struct dpv_qp *qp);
/* Take it off; when this returns the service lcore no longer touches it. */
void dpv_service_qp_del(struct dpv_qp *qp);

/* Check a state transition's attribute mask (the table of qp_state.c). */
int dpv_qp_check_transition(enum ibv_qp_type type, enum ibv_qp_state cur,
			    enum ibv_qp_state next, int attr_mask);

int dpv_sq_init(struct dpv_sq *sq, uint32_t max_wr, uint32_t max_sge);
/* The MR slots of the WQE at @index. */
static inline struct dpv_mr **dpv_sq_mrs(struct dpv_sq *sq, uint32_t index)
{
	return &sq->mrs[(size_t)(index & sq->mask) * sq->max_sge];
}
void dpv_sq_fini(struct dpv_qp *qp);
/* Room for service-mode descriptors (inline data up to @max_inline, TSO headers up to
 * @max_hdr); -ENOMEM. The SQ must be empty. */
int dpv_sq_desc_init(struct dpv_sq *sq, uint32_t max_inline, uint32_t max_hdr);
void dpv_wqe_put_mrs(struct dpv_wqe *w);
/* Hand queued frames to the driver, reap, and write completions; QP lock held. */
void dpv_sq_progress(struct dpv_qp *qp);
/* Complete every WR not yet handed to the driver with FLUSH_ERR; QP lock held. */
void dpv_sq_flush(struct dpv_qp *qp);
/* Forget every WR (RESET): flush frames, wait for the driver to give back what it holds,
 * free slots, no completion; QP lock held. Returns false if the driver kept buffers (then the
 * SQ memory must not be freed). */
bool dpv_sq_reset(struct dpv_qp *qp);
/* Receive side (rq.c, flow.c). */
int dpv_rq_init(struct dpv_rq *rq, uint32_t max_wr, uint32_t max_sge);
void dpv_rq_fini(struct dpv_rq *rq);
/* ERR: every posted receive WQE completes with FLUSH_ERR; RESET: forgotten. QP lock held. */
void dpv_rq_flush(struct dpv_qp *qp);
void dpv_rq_reset(struct dpv_qp *qp);
int dpv_post_recv(struct ibv_qp *ibqp, struct ibv_recv_wr *wr, struct ibv_recv_wr **bad_wr);
/* Receive what the port has and steer it to QPs (called by polling a receive CQ). */
void dpv_port_rx_poll(struct dpv_device *dev);
/* The QPs a received frame goes to (at most @max); the device's flows_lock held for reading. */
int dpv_flows_classify(struct dpv_device *dev, const uint8_t *h, uint32_t len,
		       struct dpv_qp **out, int max);
struct ibv_flow *dpv_create_flow(struct ibv_qp *qp, struct ibv_flow_attr *attr);
int dpv_destroy_flow(struct ibv_flow *flow);
void dpv_device_flows_init(struct dpv_device *dev);
void dpv_qp_mcast_detach_all(struct dpv_qp *qp);

/* Free the SQs of destroyed QPs the ports held buffers of (after the ports are closed). */
void dpv_qp_zombies_free(void);
int dpv_post_send(struct ibv_qp *ibqp, struct ibv_send_wr *wr, struct ibv_send_wr **bad_wr);

/* Context op slots implemented in pd.c and qp.c. */
struct ibv_pd *dpv_alloc_parent_domain(struct ibv_context *context,
				       struct ibv_parent_domain_init_attr *attr);
struct ibv_td *dpv_alloc_td(struct ibv_context *context, struct ibv_td_init_attr *attr);
int dpv_dealloc_td(struct ibv_td *td);
struct ibv_qp *dpv_create_qp_ex(struct ibv_context *context, struct ibv_qp_init_attr_ex *attr);

/* Errno helpers for the entry points. */
static inline void *dpv_fail_ptr(int neg_errno)
{
	errno = -neg_errno;
	return NULL;
}

#endif
