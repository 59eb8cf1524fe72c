/* SPDX-License-Identifier: BSD-3-Clause */
/* Completion queues and completion channels (cq.c, cq_ex.c): the CQE ring, the writers of
 * send and receive completions, polling (plain and ibv_cq_ex), events and timestamps. */
#ifndef DPV_VERBS_CQ_H
#define DPV_VERBS_CQ_H

#include <pthread.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/queue.h>
#if defined(__SSE4_1__)
#include <smmintrin.h>
#endif

#include <infiniband/verbs.h>
#include "dpv_lock.h"
#include "verbs_base.h"
#include "verbs_device.h"

struct dpv_pd;
struct dpv_qp;

struct dpv_cqe {
	struct ibv_wc wc;
	struct dpv_qp *qp;
	uint32_t sq_index;         /* send CQE: SQ slot freed when the CQE is polled */
	bool is_send;
	bool solicited;            /* wakes a CQ armed for solicited completions only */
};

/* When a completion was written; kept beside the ring, so a CQE stays one cache line. */
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

/* Every CQ carries an ibv_cq_ex (ibv_cq_ex_to_cq is a cast): one object and ring for both. */
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
	/* receive queues that fed it lately (bit q: queue q): learnt in rxq_seen by the
	 * receive path, taken into rxq_home by the poller (progress.c) */
	uint64_t rxq_home;
	unsigned int rx_rounds;
	uint32_t rxq_polls[64];
	uint64_t rxq_seen __rte_cache_aligned;
	uint64_t completions;          /* CQEs written */
	uint64_t cyc_poll, polled;     /* with cycle_stats: ibv_poll_cq's cycles, CQEs taken */
	TAILQ_ENTRY(dpv_cq) all_next;  /* every CQ of the process (telemetry.c) */
	/* ibv_cq_ex: the completion the poll session took, and the session's lock */
	struct ibv_wc cur;
	struct dpv_cqe_ts cur_ts;
	uint64_t wc_flags;             /* the IBV_WC_EX_WITH_* fields asked for */
	/* timestamps: ts[i] is when ring[i] was written (NULL: none); monotonic (last_tsc) */
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
/* Receive completions of one QP written in place as a burst is delivered: _open takes the
 * CQ lock and returns how many fit; _put writes one; _close publishes them, fires an armed
 * CQ and unlocks: -ENOSPC (and IBV_EVENT_CQ_ERR) if @wanted did not all fit. */
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

/* One successful receive completion written into entry @e of @w's ring. */
static inline void dpv__cq_recv_fill(const struct dpv_cq_recv *w, struct dpv_cqe *e,
				     uint64_t wr_id, uint32_t len, unsigned int flags)
{
#if defined(__SSE4_1__)
	/* four aligned 16-byte stores (two from _open's templates) and three small ones over
	 * them: fewer instructions than the 13 stores the compiler makes of the struct */
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

/* The receive path delivered frames of queue @q to @cq (written only when @q is new). */

static inline void dpv__cq_rxq_seen(struct dpv_cq *cq, const struct dpv_rxq *q)
{
	uint64_t bit = 1ull << (q->id & 63);

	if (!(__atomic_load_n(&cq->rxq_seen, __ATOMIC_RELAXED) & bit))
		__atomic_fetch_or(&cq->rxq_seen, bit, __ATOMIC_RELAXED);
}

#endif
