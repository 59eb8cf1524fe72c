/* SPDX-License-Identifier: BSD-3-Clause */
/* Completion queues and channels. Polling a CQ first drives progress on every QP of its
 * context (progress.c), so completions arrive even when the application stops posting. A
 * channel is an eventfd plus the list of CQs that fired. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <fcntl.h>
#include <poll.h>
#include <sys/eventfd.h>
#include <time.h>
#include <unistd.h>

#include "verbs_priv.h"

static uint32_t cq_count(const struct dpv_cq *cq)
{
	return (cq->tail + cq->size - cq->head) % cq->size;
}

DPV_EXPORT struct ibv_comp_channel *ibv_create_comp_channel(struct ibv_context *context)
{
	struct dpv_context *ctx = to_dctx(context);
	struct dpv_channel *ch;

	DPV_FORK_REFUSE(NULL);
	if (ctx == NULL)
		return dpv__fail_ptr(-EINVAL);
	ch = calloc(1, sizeof(*ch));
	if (ch == NULL)
		return dpv__fail_ptr(-ENOMEM);
	ch->ibch.fd = eventfd(0, EFD_CLOEXEC | EFD_SEMAPHORE);
	if (ch->ibch.fd < 0) {
		int err = errno;

		free(ch);
		return dpv__fail_ptr(-err);
	}
	ch->ibch.context = context;
	pthread_mutex_init(&ch->lock, NULL);
	TAILQ_INIT(&ch->fired);
	TAILQ_INIT(&ch->cqs);
	if (dpv__objset_add(ctx, &ctx->channels, ch) != 0) {   /* ibv_close_device frees it */
		close(ch->ibch.fd);
		pthread_mutex_destroy(&ch->lock);
		free(ch);
		return dpv__fail_ptr(-ENOMEM);
	}
	pthread_mutex_lock(&ctx->lock);
	ctx->nb_channel++;
	pthread_mutex_unlock(&ctx->lock);
	return &ch->ibch;
}

DPV_EXPORT int ibv_destroy_comp_channel(struct ibv_comp_channel *channel)
{
	struct dpv_channel *ch = container_of_safe(channel, struct dpv_channel, ibch);
	struct dpv_context *ctx;

	DPV_FORK_NOOP(0);
	if (ch == NULL)
		return EINVAL;
	if (__atomic_load_n(&channel->refcnt, __ATOMIC_ACQUIRE) != 0)
		return EBUSY;
	ctx = to_dctx(channel->context);
	dpv__objset_del(ctx, &ctx->channels, ch);
	pthread_mutex_lock(&ctx->lock);
	ctx->nb_channel--;
	pthread_mutex_unlock(&ctx->lock);
	close(channel->fd);
	pthread_mutex_destroy(&ch->lock);
	free(ch);
	return 0;
}

/* A zeroed ring of @n completions, each on a cache line of its own (64 bytes), from @pd's
 * allocator if it has one (*@custom then true). */
static struct dpv_cqe *ring_alloc(struct dpv_pd *pd, uint32_t n, bool *custom)
{
	return dpv__qbuf_alloc(pd, (size_t)n * sizeof(struct dpv_cqe), DPV_RES_CQ, custom);
}

/* The armed CQ fires once on its channel. */
static void cq_fire(struct dpv_cq *cq)
{
	struct dpv_channel *ch = container_of_safe(cq->ibcq.channel, struct dpv_channel, ibch);
	uint64_t one = 1;

	dpv__lock_assert_held(&cq->lock);
	cq->armed = false;
	if (ch == NULL)
		return;
	pthread_mutex_lock(&ch->lock);
	if (!cq->fired) {
		cq->fired = true;
		TAILQ_INSERT_TAIL(&ch->fired, cq, fired_next);
		if (write(ch->ibch.fd, &one, sizeof(one)) != sizeof(one))
			VERBS_LOG(ERR, "completion channel fd: %s", strerror(errno));
	}
	pthread_mutex_unlock(&ch->lock);
}

struct dpv_cq *dpv__cq_create(struct ibv_context *context, int cqe, void *cq_context,
			      struct ibv_comp_channel *channel, int comp_vector, struct dpv_pd *pd)
{
	struct dpv_context *ctx = to_dctx(context);
	struct dpv_cq *cq;

	if (ctx == NULL || cqe < 1 || (unsigned int)cqe > dpv__config()->max_cqe ||
	    comp_vector < 0 || comp_vector >= context->num_comp_vectors ||
	    (channel != NULL && channel->context != context))
		return dpv__fail_ptr(-EINVAL);
	/* its cache-aligned members (the receive path's rxq_seen) aligned for real */
	cq = aligned_alloc(RTE_CACHE_LINE_SIZE, RTE_ALIGN_CEIL(sizeof(*cq), RTE_CACHE_LINE_SIZE));
	if (cq == NULL)
		return dpv__fail_ptr(-ENOMEM);
	memset(cq, 0, sizeof(*cq));
	cq->size = (uint32_t)cqe + 1;
	cq->ring = ring_alloc(pd, cq->size, &cq->ring_custom);
	if (cq->ring == NULL) {
		free(cq);
		return dpv__fail_ptr(-ENOMEM);
	}
	cq->buf_pd = pd;
	if (pd != NULL)                   /* its allocator frees the ring: it stays till then */
		__atomic_fetch_add(&pd->refs, 1, __ATOMIC_RELEASE);
	dpv__spinlock_init(&cq->lock);
	dpv__spinlock_init(&cq->poll_lock);
	pthread_mutex_init(&cq->qps_lock, NULL);
	cq->ibcq.context = context;
	cq->ibcq.channel = channel;
	cq->ibcq.cq_context = cq_context;
	cq->ibcq.cqe = cqe;
	pthread_mutex_init(&cq->ibcq.mutex, NULL);
	pthread_cond_init(&cq->ibcq.cond, NULL);
	if (channel != NULL) {
		struct dpv_channel *ch = container_of_safe(channel, struct dpv_channel, ibch);

		__atomic_fetch_add(&channel->refcnt, 1, __ATOMIC_RELEASE);
		pthread_mutex_lock(&ch->lock);
		TAILQ_INSERT_TAIL(&ch->cqs, cq, channel_next);
		pthread_mutex_unlock(&ch->lock);
	}
	pthread_mutex_lock(&ctx->lock);
	ctx->nb_cq++;
	pthread_mutex_unlock(&ctx->lock);
	dpv__telemetry_cq(cq, true);
	return cq;
}

DPV_EXPORT struct ibv_cq *ibv_create_cq(struct ibv_context *context, int cqe, void *cq_context,
					struct ibv_comp_channel *channel, int comp_vector)
{
	struct dpv_cq *cq;

	DPV_FORK_REFUSE(NULL);
	cq = dpv__cq_create(context, cqe, cq_context, channel, comp_vector, NULL);
	return cq == NULL ? NULL : &cq->ibcq;
}

DPV_EXPORT int ibv_destroy_cq(struct ibv_cq *ibcq)
{
	struct dpv_cq *cq = to_dcq(ibcq);
	struct dpv_channel *ch;
	struct dpv_context *ctx;

	DPV_FORK_NOOP(0);
	if (cq == NULL)
		return EINVAL;
	pthread_mutex_lock(&cq->qps_lock);
	if (cq->nb_qp != 0) {
		pthread_mutex_unlock(&cq->qps_lock);
		return EBUSY;
	}
	pthread_mutex_unlock(&cq->qps_lock);
	dpv__telemetry_cq(cq, false);
	ch = container_of_safe(ibcq->channel, struct dpv_channel, ibch);
	if (ch != NULL) {
		pthread_mutex_lock(&ch->lock);
		if (cq->fired) {
			uint64_t n;

			TAILQ_REMOVE(&ch->fired, cq, fired_next);
			/* take back its count (>= 1, so this read does not block) */
			if (read(ch->ibch.fd, &n, sizeof(n)) != sizeof(n))
				VERBS_LOG(ERR, "completion channel fd: %s", strerror(errno));
		}
		TAILQ_REMOVE(&ch->cqs, cq, channel_next);
		pthread_mutex_unlock(&ch->lock);
		DPV_REF_PUT(&ibcq->channel->refcnt);
	}
	ctx = to_dctx(ibcq->context);
	pthread_mutex_lock(&ctx->lock);
	ctx->nb_cq--;
	pthread_mutex_unlock(&ctx->lock);
	dpv__qbuf_free(cq->buf_pd, cq->ring, DPV_RES_CQ, cq->ring_custom);
	if (cq->buf_pd != NULL)
		DPV_REF_PUT(&cq->buf_pd->refs);
	free(cq->ts);
	free(cq);
	return 0;
}

DPV_EXPORT int ibv_resize_cq(struct ibv_cq *ibcq, int cqe)
{
	struct dpv_cq *cq = to_dcq(ibcq);
	struct dpv_cqe *ring, *old;
	struct dpv_cqe_ts *ts, *old_ts;
	bool custom, old_custom;
	uint32_t n;

	DPV_FORK_REFUSE(ENODEV);
	if (cq == NULL || cqe < 1 || (unsigned int)cqe > dpv__config()->max_cqe)
		return EINVAL;
	ring = ring_alloc(cq->buf_pd, (uint32_t)cqe + 1, &custom);
	ts = cq->ts != NULL ? calloc((uint32_t)cqe + 1, sizeof(*ts)) : NULL;
	if (ring == NULL || (cq->ts != NULL && ts == NULL)) {
		dpv__qbuf_free(cq->buf_pd, ring, DPV_RES_CQ, custom);
		free(ts);
		return ENOMEM;
	}
	dpv__spinlock_lock(&cq->lock);
	n = cq_count(cq);
	if (n > (uint32_t)cqe) {
		dpv__spinlock_unlock(&cq->lock);
		dpv__qbuf_free(cq->buf_pd, ring, DPV_RES_CQ, custom);
		free(ts);
		return EINVAL;     /* as the kernel: fewer entries than completions waiting */
	}
	for (uint32_t i = 0; i < n; i++) {
		ring[i] = cq->ring[(cq->head + i) % cq->size];
		if (ts != NULL)
			ts[i] = cq->ts[(cq->head + i) % cq->size];
	}
	old = cq->ring;
	old_custom = cq->ring_custom;
	old_ts = cq->ts;
	cq->ring = ring;
	cq->ring_custom = custom;
	cq->ts = ts;
	cq->size = (uint32_t)cqe + 1;
	__atomic_store_n(&cq->head, 0, __ATOMIC_RELAXED);
	__atomic_store_n(&cq->tail, n, __ATOMIC_RELAXED);
	ibcq->cqe = cqe;
	dpv__spinlock_unlock(&cq->lock);
	dpv__qbuf_free(cq->buf_pd, old, DPV_RES_CQ, old_custom);
	free(old_ts);
	return 0;
}

/* The ring index after @i (no division: the ring has cqe + 1 entries, any number). */
static inline uint32_t cq_next(const struct dpv_cq *cq, uint32_t i)
{
	return i + 1 == cq->size ? 0 : i + 1;
}

int dpv__cq_timestamps(struct dpv_cq *cq, bool wall)
{
	cq->ts = calloc(cq->size, sizeof(*cq->ts));
	if (cq->ts == NULL)
		return -ENOMEM;
	cq->ts_wall = wall;
	return 0;
}

uint64_t dpv__core_clock_khz(void)
{
	return rte_get_tsc_hz() / 1000;
}

/* Timestamp the @n completions from ring index @from (CQ lock held): one clock reading a
 * push, never going back within a CQ (cores' TSCs may differ by a few cycles). */
static void cq_stamp(struct dpv_cq *cq, uint32_t from, unsigned int n)
{
	struct dpv_cqe_ts t = { .tsc = rte_rdtsc() };

	if (t.tsc < cq->last_tsc)
		t.tsc = cq->last_tsc;
	cq->last_tsc = t.tsc;
	if (cq->ts_wall) {
		struct timespec now;

		clock_gettime(CLOCK_REALTIME, &now);
		t.wall_ns = (uint64_t)now.tv_sec * 1000000000u + (uint64_t)now.tv_nsec;
	}
	for (unsigned int k = 0; k < n; k++) {
		cq->ts[from] = t;
		from = cq_next(cq, from);
	}
}

/* After a push of @n, @i of which fitted from ring index @from: timestamp, count, fire an
 * armed CQ, report an overrun; releases the CQ lock the caller took. */
static int push_done(struct dpv_cq *cq, uint32_t from, unsigned int i, unsigned int n, bool fire)
{
	bool overrun_now = false;

	dpv__lock_assert_held(&cq->lock);
	if (unlikely(cq->ts != NULL))
		cq_stamp(cq, from, i);

	cq->completions += i;
	if (i < n) {
		overrun_now = !cq->overrun;
		cq->overrun = true;
	}
	if (cq->armed && fire)
		cq_fire(cq);
	dpv__spinlock_unlock(&cq->lock);
	if (overrun_now) {
		struct ibv_async_event ev = { .element.cq = &cq->ibcq, .event_type = IBV_EVENT_CQ_ERR };

		VERBS_LOG(ERR, "CQ %p overrun: a completion found it full (%d entries); poll it "
			  "more often or make it larger", (void *)cq, cq->ibcq.cqe);
		dpv__async_event_post(to_dctx(cq->ibcq.context), &ev);
	}
	return i < n ? -ENOSPC : 0;
}

int dpv__cq_push_many(struct dpv_cq *cq, const struct dpv_cqe *cqe, unsigned int n)
{
	bool fire = false;
	unsigned int i;
	uint32_t from;

	dpv__spinlock_lock(&cq->lock);
	from = cq->tail;
	for (i = 0; i < n && cq_next(cq, cq->tail) != cq->head; i++) {
		cq->ring[cq->tail] = cqe[i];
		__atomic_store_n(&cq->tail, cq_next(cq, cq->tail), __ATOMIC_RELAXED);
		fire |= !cq->solicited_only || cqe[i].wc.status != IBV_WC_SUCCESS ||
			cqe[i].solicited;
	}
	return push_done(cq, from, i, n, fire);
}

int dpv__cq_push_sends(struct dpv_cq *cq, struct dpv_qp *qp, const uint32_t *slots,
		       unsigned int n)
{
	bool fire = false;
	unsigned int i;
	uint32_t from;

	dpv__spinlock_lock(&cq->lock);
	from = cq->tail;
	for (i = 0; i < n && cq_next(cq, cq->tail) != cq->head; i++) {
		const struct dpv_wqe *w = &qp->sq.wqe[slots[i] & qp->sq.mask];
		struct dpv_cqe *e = &cq->ring[cq->tail];

		dpv__cqe_fill(e, qp, w->wr_id, w->status, w->opcode, w->byte_len, 0);
		e->sq_index = slots[i];
		e->is_send = true;
		__atomic_store_n(&cq->tail, cq_next(cq, cq->tail), __ATOMIC_RELAXED);
		fire |= !cq->solicited_only || w->status != IBV_WC_SUCCESS;
	}
	return push_done(cq, from, i, n, fire);
}

/* Free entries of the ring (one always stays empty); CQ lock held. */
static inline uint32_t cq_room(const struct dpv_cq *cq)
{
	return cq->head > cq->tail ? cq->head - cq->tail - 1 : cq->size - 1 - (cq->tail - cq->head);
}

unsigned int dpv__cq_recv_open(struct dpv_cq *cq, struct dpv_qp *qp, struct dpv_cq_recv *w)
{
	dpv__spinlock_lock(&cq->lock);
	w->cq = cq;
	w->qp = qp;
	w->qp_num = qp->ibqp.qp_num;
	w->ring = cq->ring;
	w->end = cq->ring + cq->size;
	w->from = cq->tail;
	w->at = cq->ring + cq->tail;
#if defined(__SSE4_1__)
	w->line1 = _mm_set_epi32((int)w->qp_num, 0, 0, 0);
	w->line3 = _mm_set_epi64x(0, (long long)(uintptr_t)qp);
#endif
	return cq_room(cq);
}

int dpv__cq_recv_close(struct dpv_cq_recv *w, unsigned int wanted)
{
	struct dpv_cq *cq = w->cq;
	uint32_t tail = (uint32_t)(w->at - w->ring);
	unsigned int written = (tail + cq->size - w->from) % cq->size;

	__atomic_store_n(&cq->tail, tail, __ATOMIC_RELAXED);
	/* a receive is never solicited on a RAW_PACKET QP: a CQ armed for solicited ones stays */
	return push_done(cq, w->from, written, wanted, written > 0 && !cq->solicited_only);
}

int dpv__cq_push(struct dpv_cq *cq, const struct dpv_cqe *cqe)
{
	return dpv__cq_push_many(cq, cqe, 1);
}

void dpv__cq_attach_qp(struct dpv_cq *cq)
{
	pthread_mutex_lock(&cq->qps_lock);
	cq->nb_qp++;
	pthread_mutex_unlock(&cq->qps_lock);
}

/* Also drops the QP's completions still in the CQ (as mlx5's CQ clean at destroy/reset). */
void dpv__cq_detach_qp(struct dpv_cq *cq, struct dpv_qp *qp)
{
	pthread_mutex_lock(&cq->qps_lock);
	cq->nb_qp--;
	pthread_mutex_unlock(&cq->qps_lock);
	dpv__cq_clean(cq, qp);
}

void dpv__cq_clean(struct dpv_cq *cq, struct dpv_qp *qp)
{
	uint32_t keep = 0, n;

	dpv__spinlock_lock(&cq->lock);
	n = cq_count(cq);
	for (uint32_t i = 0; i < n; i++) {
		struct dpv_cqe *e = &cq->ring[(cq->head + i) % cq->size];

		if (e->qp == qp)
			continue;
		if (cq->ts != NULL)
			cq->ts[(cq->head + keep) % cq->size] = cq->ts[(cq->head + i) % cq->size];
		cq->ring[(cq->head + keep++) % cq->size] = *e;
	}
	__atomic_store_n(&cq->tail, (cq->head + keep) % cq->size, __ATOMIC_RELAXED);
	dpv__spinlock_unlock(&cq->lock);
}

#define PROGRESS_EVERY 16

static inline bool cq_empty(const struct dpv_cq *cq)
{
	return __atomic_load_n(&cq->head, __ATOMIC_RELAXED) ==
	       __atomic_load_n(&cq->tail, __ATOMIC_RELAXED);
}

static void cq_progress(struct dpv_cq *cq)
{
	dpv__context_progress(to_dctx(cq->ibcq.context), cq, NULL);
}

void dpv__cq_poll_progress(struct dpv_cq *cq)
{
	/* Progress when the CQ is empty, and every PROGRESS_EVERY polls anyway: a CQ that never
	 * runs empty must not starve the context's other work (racing counts are harmless). */
	if (cq_empty(cq)) {
		cq_progress(cq);
	} else {
		unsigned int polls = __atomic_load_n(&cq->polls, __ATOMIC_RELAXED) + 1;

		__atomic_store_n(&cq->polls, polls, __ATOMIC_RELAXED);
		if (polls % PROGRESS_EVERY == 0)
			cq_progress(cq);
	}
}

/* CQ lock held: the oldest completion is the application's (and its timestamps, into @ts
 * if not NULL); the SQ slots of its WR and of the unsignaled ones before it are free now. */
static inline void cq_take(struct dpv_cq *cq, struct ibv_wc *wc, struct dpv_cqe_ts *ts)
{
	const struct dpv_cqe *e = &cq->ring[cq->head];

	*wc = e->wc;
	if (ts != NULL && cq->ts != NULL)
		*ts = cq->ts[cq->head];
	if (e->is_send)
		__atomic_store_n(&e->qp->sq.freed, e->sq_index + 1, __ATOMIC_RELEASE);
	__atomic_store_n(&cq->head, cq_next(cq, cq->head), __ATOMIC_RELAXED);
}

int dpv__cq_pop(struct dpv_cq *cq, struct ibv_wc *wc)
{
	int rc = -ENOENT;

	if (cq_empty(cq))
		return -ENOENT;
	dpv__spinlock_lock(&cq->lock);
	if (cq->head != cq->tail) {
		cq_take(cq, wc, &cq->cur_ts);
		rc = 0;
	}
	dpv__spinlock_unlock(&cq->lock);
	return rc;
}

int dpv_poll_cq(struct ibv_cq *ibcq, int n, struct ibv_wc *wc)
{
	struct dpv_cq *cq = to_dcq(ibcq);
	uint64_t t0;
	int got = 0;

	DPV_FORK_REFUSE(-ENODEV);
	if (n < 0)
		return -EINVAL;
	dpv__cq_poll_progress(cq);
	/* An empty CQ is told without its lock: a thread polling in a loop must not keep the
	 * lock away from the service lcore that writes its completions. */
	if (cq_empty(cq))
		return 0;
	t0 = dpv__cyc_start();
	dpv__spinlock_lock(&cq->lock);
	{
		uint32_t head = cq->head, tail = cq->tail, size = cq->size;

		/* in runs that do not wrap around the ring's end: no index arithmetic per entry */
		while (got < n && head != tail) {
			uint32_t run = RTE_MIN((uint32_t)(n - got), (tail > head ? tail : size) - head);
			const struct dpv_cqe *e = &cq->ring[head], *end = e + run;
			struct ibv_wc *to = wc + got;

			for (; e != end; e++, to++) {
				*to = e->wc;
				if (unlikely(e->is_send))
					__atomic_store_n(&e->qp->sq.freed, e->sq_index + 1,
							 __ATOMIC_RELEASE);
			}
			got += (int)run;
			head += run;
			if (head == size)
				head = 0;
		}
		__atomic_store_n(&cq->head, head, __ATOMIC_RELAXED);
	}
	if (unlikely(dpv__cycles())) {
		cq->polled += (unsigned int)got;
		dpv__cyc_lap(&cq->cyc_poll, t0);
	}
	dpv__spinlock_unlock(&cq->lock);
	return got;
}

/* Arming a CQ that holds completions fires at once, so that the usual
 * "arm, then poll until empty" loop can never miss a wake-up. */
int dpv_req_notify_cq(struct ibv_cq *ibcq, int solicited_only)
{
	struct dpv_cq *cq = to_dcq(ibcq);

	DPV_FORK_REFUSE(ENODEV);
	dpv__spinlock_lock(&cq->lock);
	cq->armed = true;
	cq->solicited_only = solicited_only != 0;
	if (cq->head != cq->tail && !solicited_only)
		cq_fire(cq);
	dpv__spinlock_unlock(&cq->lock);
	return 0;
}

/* Drive the QPs of the channel's context: their completions (and events) may be waiting for
 * a PMD to give back buffers, which happens only when someone asks. */
static void channel_progress(struct dpv_channel *ch)
{
	dpv__context_progress(to_dctx(ch->ibch.context), NULL, &ch->ibch);
}

/* Naps between two progress calls of a waiting thread: short for WAIT_LINGER naps after an
 * event (a ping-pong's next completion is that close), a millisecond otherwise; a frame
 * that arrives during a nap is received at the next progress (or by the progress thread). */
#define WAIT_BUSY_NS 50000
#define WAIT_LINGER 2000            /* ~0.1 s of short naps */

/* Wait for the channel's fd to be readable, driving progress meanwhile. A non-blocking fd
 * does not wait: -EAGAIN. */
static int channel_wait(struct dpv_channel *ch)
{
	const struct timespec busy = { 0, WAIT_BUSY_NS };
	struct pollfd p = { .fd = ch->ibch.fd, .events = POLLIN };

	for (;;) {
		unsigned int linger;
		int r = poll(&p, 1, 0);

		if (r == 1)
			return 0;
		if (r < 0 && errno != EINTR)
			return -errno;
		if (fcntl(ch->ibch.fd, F_GETFL) & O_NONBLOCK)
			return -EAGAIN;
		channel_progress(ch);
		/* racy between threads waiting on one channel: at worst a nap of the other kind */
		linger = __atomic_load_n(&ch->linger, __ATOMIC_RELAXED);
		if (linger > 0) {
			__atomic_store_n(&ch->linger, linger - 1, __ATOMIC_RELAXED);
			r = ppoll(&p, 1, &busy, NULL);
		} else {
			r = poll(&p, 1, 1);
		}
		if (r == 1)
			return 0;
	}
}

/* An event whose CQ has been polled empty since it fired is stale (its completion was
 * returned already): it is not delivered, the CQ is armed again and the wait goes on, so a
 * program may count on a completion after each event (rc_pingpong -t -e does). */

static bool event_stale(struct dpv_cq *cq)
{
	bool stale;

	dpv__spinlock_lock(&cq->lock);
	stale = cq->head == cq->tail;
	if (stale)
		cq->armed = true;
	dpv__spinlock_unlock(&cq->lock);
	return stale;
}

/* As rdma-core: 0, or -1 with errno (EAGAIN on a non-blocking channel fd with no event). */
DPV_EXPORT int ibv_get_cq_event(struct ibv_comp_channel *channel, struct ibv_cq **cq_out,
				void **cq_context)
{
	struct dpv_channel *ch = container_of_safe(channel, struct dpv_channel, ibch);
	struct dpv_cq *cq;
	uint64_t n;

	DPV_FORK_REFUSE(-1);
	int rc;

	if (ch == NULL || cq_out == NULL || cq_context == NULL) {
		errno = EINVAL;
		return -1;
	}
	do {
		rc = channel_wait(ch);
		if (rc != 0) {
			errno = -rc;
			return -1;
		}
		if (read(channel->fd, &n, sizeof(n)) != sizeof(n))
			return -1;
		pthread_mutex_lock(&ch->lock);
		cq = TAILQ_FIRST(&ch->fired);
		if (cq != NULL) {
			TAILQ_REMOVE(&ch->fired, cq, fired_next);
			cq->fired = false;
		}
		pthread_mutex_unlock(&ch->lock);
		if (cq == NULL) {
			errno = EAGAIN;
			return -1;
		}
	} while (event_stale(cq));
	__atomic_store_n(&ch->linger, WAIT_LINGER, __ATOMIC_RELAXED);
	*cq_out = &cq->ibcq;
	*cq_context = cq->ibcq.cq_context;
	return 0;
}

DPV_EXPORT void ibv_ack_cq_events(struct ibv_cq *cq, unsigned int nevents)
{
	DPV_FORK_NOOP();
	pthread_mutex_lock(&cq->mutex);
	cq->comp_events_completed += nevents;
	pthread_cond_signal(&cq->cond);
	pthread_mutex_unlock(&cq->mutex);
}
