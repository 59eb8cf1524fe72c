/* SPDX-License-Identifier: BSD-3-Clause */
/* Queue pairs (qp.c, qp_state.c, qp_ex.c, qp_open.c, qp_service.c, qpn.c): struct dpv_qp and its locks and state, QP numbers, service mode,
 * shared XRC_RECV QPs and the ibv_wr_* API. */
#ifndef DPV_VERBS_QP_H
#define DPV_VERBS_QP_H

#include <stdbool.h>
#include <stdint.h>
#include <sys/queue.h>

#include <infiniband/verbs.h>
#include <rte_cycles.h>
#include "dpv_lock.h"
#include "dpv_tx.h"
#include "verbs_base.h"
#include "verbs_cq.h"
#include "verbs_device.h"
#include "verbs_pace.h"
#include "verbs_pd.h"
#include "verbs_ring.h"
#include "verbs_transport.h"
#include "wr_check.h"

struct dpv_srq;
struct dpv_xrcd;
struct rte_mbuf;

/* Stages whose TSC cycles a QP counts when the configuration has cycle_stats = 1. */
enum { DPV_CYC_VALIDATE, DPV_CYC_BUILD, DPV_CYC_BURST, DPV_CYC_COMPLETE, DPV_CYC_RECV_POST,
       DPV_CYC_STAGES };

struct dpv_wr_batch;

/* struct ibv_qp is the head of struct ibv_qp_ex: a QP created with
 * IBV_QP_INIT_ATTR_SEND_OPS_FLAGS hands out the extended one (qp_ex.c). What a transport keeps
 * of its own is behind priv; the rest is the core's, by concern. */
struct dpv_qp {
	/* What it is: its handle, transport and objects (fixed at ibv_create_qp). */
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
				    * the SRQ of the message under way (lib/roce/rc_verbs.c) */
	struct dpv_xrcd *xrcd;     /* XRC_RECV: its domain */
	struct dpv_cq *own_rcq;    /* the recv_cq it was created with (XRC_RECV: none) */
	bool no_rq;                /* set by the transport's create: no receive queue of its own
				    * to post to (XRC: receives come from the SRQs messages name) */

	/* Open handles and references. Of a shared XRC_RECV QP (ibv_open_qp, qp_open.c), under
	 * that file's lock: on a QP, the open handles it counts (its creator's too, unless
	 * own_closed) and the openers' list; on an opener (a hollow struct dpv_qp), the QP it
	 * opens (NULL once that is gone), its context and its XRC domain handle (xrcd). And the
	 * flows that steer to it (RAW_PACKET's ibv_create_flow, under the device's flows_mutex):
	 * ibv_destroy_qp is EBUSY while there are any. */
	bool opener, own_closed;
	int handles;
	struct dpv_qp *real;
	TAILQ_HEAD(, dpv_qp) openers;
	TAILQ_ENTRY(dpv_qp) open_next;
	int nb_flows;

	/* State (qp.c, qp_state.c). */
	enum ibv_qp_state state;
	enum ibv_qp_type type;
	unsigned int qpt_flags;    /* its type's DPV_QPT_* (verbs_transport.h) */
	bool sq_sig_all;
	bool lockless;             /* created in a thread domain */
	/* RTS -> SQD: WRs started before it are still going out (ibv_query_qp's sq_draining);
	 * IBV_EVENT_SQ_DRAINED when they are done, if EN_SQD_ASYNC_NOTIFY asked for it */
	bool sq_draining, sqd_notify;

	/* Service mode (qp_service.c): the posting thread (under lock) checks WRs, writes their
	 * descriptors and publishes sq.head; the service lcore (under svc_lock) builds the
	 * frames, hands them to the port and completes them. Control operations (modify,
	 * destroy) take both. */
	bool service;
	bool svc_listed;           /* on its device's service array */

	/* Locks, each on a line of its own: the posting thread writes lock per list, the service
	 * lcore svc_lock per round, and both read state and service above every time. */
	dpv_spinlock_t lock __rte_cache_aligned;
	dpv_spinlock_t svc_lock __rte_cache_aligned;

	/* Attributes: creation's, and those ibv_modify_qp keeps for every type. */
	struct ibv_qp_cap cap;
	struct dpv_wr_limits lim;     /* what ibv_post_send checks against */
	uint8_t port_num;
	uint32_t qkey, sq_psn;
	uint16_t pkey_index;

	/* The transport's: its transmitter on the port (every transport opens one, lib/offload),
	 * its own state (RAW: struct dpv_raw_qp, UD: struct dpv_ud_qp, RC/UC: struct
	 * dpv_rc_qp), and the send queue it fills and completes (sq.c). */
	struct dpv_txh *txh;
	void *priv;
	struct dpv_sq sq;

	/* Statistics (dpv_query_qp_counters, telemetry.c), each on the line of the thread that
	 * writes it. */
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
#if DPV_LOCK_CHECKS
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
#if DPV_LOCK_CHECKS
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
#if DPV_LOCK_CHECKS
	if (qp->service)
		dpv__lock_assert_held(&qp->svc_lock);
#endif
}

/* A receiver about to deliver a frame to @qp takes its lock: false (nothing taken) when
 * this thread holds the QP's control lock in ibv_modify_qp (qp.c). An RC/UC/XRC modify that
 * resolves its peer polls the port, and a frame for that same QP found then is dropped (as
 * lost: the peer retransmits) rather than waited for under a lock this thread holds. */
bool dpv__qp_rx_hold(struct dpv_qp *qp);

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

/* One completion written in place: every field of @e (the CQE writer of sends and receives),
 * field by field: a CQE built on the stack and copied stalls on store forwarding. */
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

/* A QP draining in SQD whose transport says it is drained: IBV_EVENT_SQ_DRAINED (if asked
 * for), sq_draining cleared. Called by dpv__sq_complete; QP lock held. */
void dpv__qp_sqd_check(struct dpv_qp *qp);

/* A transport moves the QP to ERR on an execution error: state, then both queues flushed
 * (the SQ under the service lock of a service-mode QP); QP lock held. */
void dpv__qp_fail(struct dpv_qp *qp);

/* QP numbers (qpn.c). A free QPN of @dev, found from then on by dpv__qpn_lookup (the QP's
 * lock and type must be set up: the receive side may lock it at once), or -ENOSPC when all
 * are taken; take QPN @qpn of @qp back (the receive side no longer holds @qp when this
 * returns). */
int dpv__qpn_alloc(struct dpv_device *dev, struct dpv_qp *qp);
void dpv__qpn_free(struct dpv_device *dev, struct dpv_qp *qp, uint32_t qpn);
#define DPV_MAX_QP 65536

/* The QP numbered @qpn on @dev, or NULL; for the receive side, which holds the device's
 * rx_lock (dpv__qpn_free waits for it). */
static inline struct dpv_qp *dpv__qpn_lookup(struct dpv_device *dev, uint32_t qpn)
{
	struct dpv_qpn_table *t = &dev->qpns;

	if (unlikely(qpn >= __atomic_load_n(&t->size, __ATOMIC_ACQUIRE)))
		return NULL;
	return __atomic_load_n(&t->qp[qpn], __ATOMIC_ACQUIRE);
}

/* Free the SQs of destroyed QPs the ports held buffers of (after the ports are closed). */
void dpv__qp_zombies_free(void);
int dpv_post_send(struct ibv_qp *ibqp, struct ibv_send_wr *wr, struct ibv_send_wr **bad_wr);

/* Context op slots (qp.c). */
struct ibv_qp *dpv_create_qp_ex(struct ibv_context *context, struct ibv_qp_init_attr_ex *attr);
int dpv_modify_qp_rate_limit(struct ibv_qp *qp, struct ibv_qp_rate_limit_attr *attr);

/* The ibv_wr_* API (qp_ex.c): check @send_ops_flags against the QP type's opcodes
 * (-EOPNOTSUPP for an operation the type has not) and set up the QP's ibv_qp_ex; undo it. */
int dpv__qp_ex_init(struct dpv_qp *qp, uint64_t send_ops_flags);
void dpv__qp_ex_fini(struct dpv_qp *qp);

#endif
