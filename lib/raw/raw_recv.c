/* SPDX-License-Identifier: BSD-3-Clause */
/* RAW_PACKET receive, a burst of one receive queue at a time (bursts of different queues may
 * run at once: what they share is the read-only steering table and the QPs' and CQs' locks):
 * the frames are classified by the device's steering table (steer.c), then each QP that gets
 * some takes them in one go: its lock once, each frame
 * scattered into its next receive WQE (each SGE checked against an MR of the QP's PD with local
 * write access, when the frame lands, as hardware checks), its completions written into its CQ
 * under one CQ lock. Completions IBV_WC_RECV with byte_len and IBV_WC_IP_CSUM_OK. A frame
 * larger than the WQE: IBV_WC_LOC_LEN_ERR; an SGE outside its MR: IBV_WC_LOC_PROT_ERR; either
 * moves the QP to ERR. A QP with an SRQ takes a WQE from it for each frame that finds its own
 * ring empty (dpv__srq_take). No WQE: dropped, counted. A QP gets its frames in the order they came;
 * completions of different QPs on one CQ come QP by QP within a burst. The common frame (one
 * mbuf, a WQE of one SGE in the MR of the WQE before it) takes one pass (qp_fast); whatever
 * else comes, from the first such frame on, the general two passes (qp_general). */
#include <string.h>

#include <rte_common.h>
#include <rte_mbuf.h>
#include <rte_memcpy.h>
#include <rte_prefetch.h>

#include "raw_priv.h"

/* A burst being delivered. */
struct rx_burst {
	struct dpv_device *dev;
	struct dpv_rxq *q;                /* the receive queue it came from (its counters) */
	struct rte_mbuf **frames;
	struct dpv_rx_class c;
	uint64_t csum_known, csum_good;   /* IBV_WC_IP_CSUM_OK, worked out once per frame */
	uint64_t t;                       /* cycle statistics: the current stage's start */
};

/* IBV_WC_IP_CSUM_OK or 0 for frame @i, the general case (noinline: off the fast path). */
static __rte_noinline unsigned int csum_flag_slow(struct rx_burst *b, unsigned int i,
						  const struct rte_mbuf *m)
{
	uint64_t bit = 1ull << i;

	if (!(b->csum_known & bit)) {
		b->csum_known |= bit;
		if (dpv__rx_csum_ok_parsed(m, b->c.parsed & bit ? &b->c.info[i] : NULL))
			b->csum_good |= bit;
	}
	return b->csum_good & bit ? IBV_WC_IP_CSUM_OK : 0;
}

/* IBV_WC_IP_CSUM_OK or 0 for frame @i, whose bytes start at @h; @parsed: the burst's
 * b->c.parsed. No word from the port, not parsed, and an EtherType that is neither IPv4 nor
 * a VLAN tag: no checksum to vouch for (the common non-IP case, without a call). */
static inline unsigned int csum_flag(struct rx_burst *b, unsigned int i, const struct rte_mbuf *m,
				     const uint8_t *h, uint64_t parsed)
{
	if (likely(!(m->ol_flags & (RTE_MBUF_F_RX_IP_CKSUM_MASK | RTE_MBUF_F_RX_L4_CKSUM_MASK)) &&
		   !((parsed >> i) & 1)) && !dpv__may_be_ipv4(h, rte_pktmbuf_data_len(m)))
		return 0;
	return csum_flag_slow(b, i, m);
}

/* The MR the RQ's SGEs were last found in (the RQ's buffers are usually in one MR: the
 * lkey's table entry is not read again for every frame), as plain bounds. */
struct rx_window {
	uint64_t lkey;                    /* > UINT32_MAX: none yet */
	uint64_t iova, length;
	uint8_t *va;
};

/* @sge's MR into @w; false if it has none in @qp's PD with local write access. */
static bool window_load(struct dpv_qp *qp, const struct ibv_sge *sge, uint32_t len,
			struct rx_window *w)
{
	uint8_t *va;
	struct dpv_mr *mr = dpv__mr_lookup(qp->ctx, qp->pd, sge->lkey, sge->addr, len, &va);

	if (mr == NULL || !(mr->access & IBV_ACCESS_LOCAL_WRITE))
		return false;
	*w = (struct rx_window){ sge->lkey, mr->iova, mr->length, mr->va };
	return true;
}

/* Where a frame of @len bytes lands in WQE @w with scatter list @sge when it is the common
 * case, one SGE and one mbuf (@segs), checked; NULL otherwise: scatter in general, or an
 * error (*@err set). */
static inline uint8_t *place(struct dpv_qp *qp, const struct dpv_rwqe *w,
			     const struct ibv_sge *sge, uint16_t segs, uint32_t len,
			     struct rx_window *win, enum ibv_wc_status *err)
{
	uint64_t off;

	if (unlikely(w->nsge != 1 || segs != 1 || len == 0))
		return NULL;
	if (unlikely(len > sge->length)) {
		*err = IBV_WC_LOC_LEN_ERR;
		return NULL;
	}
	if (unlikely(sge->lkey != win->lkey) && !window_load(qp, sge, len, win)) {
		*err = IBV_WC_LOC_PROT_ERR;
		return NULL;
	}
	off = sge->addr - win->iova;     /* below iova: wraps, and fails the test */
	if (unlikely(off > win->length || len > win->length - off)) {
		*err = IBV_WC_LOC_PROT_ERR;
		return NULL;
	}
	return win->va + off;
}

/* Copy a frame of @len bytes: up to 128 bytes (the common small frame) in a few 16-byte
 * moves that may overlap, without a call; longer ones by rte_memcpy. Never writes past
 * @len: the rest of the WQE's buffer is the application's. */
static inline void copy_frame(uint8_t *dst, const uint8_t *src, uint32_t len)
{
	if (len >= 32 && len <= 64) {
		memcpy(dst, src, 32);
		memcpy(dst + len - 32, src + len - 32, 32);
	} else if (len > 64 && len <= 128) {
		memcpy(dst, src, 64);
		memcpy(dst + len - 64, src + len - 64, 64);
	} else if (len >= 16 && len < 32) {
		memcpy(dst, src, 16);
		memcpy(dst + len - 16, src + len - 16, 16);
	} else {
		rte_memcpy(dst, src, len);
	}
}

/* Scatter @frame (@len bytes) into WQE @w with scatter list @sge, in general (several SGEs,
 * a chain of mbufs); the completion's status. */
static enum ibv_wc_status scatter(struct dpv_qp *qp, const struct dpv_rwqe *w,
				  const struct ibv_sge *sge, const struct rte_mbuf *frame,
				  uint32_t len)
{
	uint32_t off = 0, room = 0;

	for (uint16_t i = 0; i < w->nsge; i++)
		room += sge[i].length;
	if (len > room)
		return IBV_WC_LOC_LEN_ERR;
	for (uint16_t i = 0; i < w->nsge && off < len; i++) {
		uint32_t take = RTE_MIN(sge[i].length, len - off);
		const void *p;
		uint8_t *va;
		struct dpv_mr *mr;

		if (take == 0)
			continue;
		mr = dpv__mr_lookup(qp->ctx, qp->pd, sge[i].lkey, sge[i].addr, take, &va);
		if (mr == NULL || !(mr->access & IBV_ACCESS_LOCAL_WRITE))
			return IBV_WC_LOC_PROT_ERR;
		p = rte_pktmbuf_read(frame, off, take, va);
		if (p != va)
			memcpy(va, p, take);
		off += take;
	}
	return IBV_WC_SUCCESS;
}

static bool receiving(const struct dpv_qp *qp)
{
	enum ibv_qp_state s = dpv__qp_state(qp);

	return s == IBV_QPS_RTR || s == IBV_QPS_RTS || s == IBV_QPS_SQD || s == IBV_QPS_SQE;
}

/* Where a frame of a burst lands, and what its completion says. */
struct rx_land {
	uint8_t *va;                      /* NULL: scatter in general */
	const uint8_t *src;               /* its bytes (the first mbuf's) */
	uint64_t wr_id;
	uint32_t len;
	uint16_t wc_flags;
	uint8_t frame;                    /* index in the burst */
};

/* The frames of one QP in a burst. */
struct rx_take {
	unsigned int n;                   /* frames with a WQE, in order */
	enum ibv_wc_status err;           /* frame n, if not SUCCESS, fails with it */
	struct rx_land at[DPV_RX_MAX];
};

/* The WQEs @mask's frames take, in order, where they land and what their completions say,
 * each destination prefetched: the copies that follow find their lines on the way in (the
 * buffers of a deep RQ are seldom in the cache) instead of missing one after the other.
 * Stops at the first frame that cannot land (its status in t->err). */
static void qp_place(struct rx_burst *b, struct dpv_qp *qp, uint64_t mask, struct rx_take *t)
{
	const struct dpv_rq *rq = &qp->rq;
	const struct dpv_rwqe *wqe = rq->wqe;
	struct rte_mbuf *const *frames = b->frames;
	const uint32_t ring = rq->mask;
	uint32_t pos = rq->tail, head = rq->head;
	struct rx_window win = { .lkey = UINT64_MAX };
	enum ibv_wc_status err = IBV_WC_SUCCESS;
	struct rx_land *l = t->at;
	const uint64_t parsed = b->c.parsed;

	for (; mask != 0; mask &= mask - 1) {
		unsigned int i = (unsigned int)__builtin_ctzll(mask);
		const struct rte_mbuf *frame = frames[i];
		const uint8_t *src = rte_pktmbuf_mtod(frame, const uint8_t *);
		uint32_t slot = pos & ring, len = rte_pktmbuf_pkt_len(frame);

		if (unlikely(pos == head)) {
			/* a QP with an SRQ takes the SRQ's oldest WQE into its own ring */
			if (qp->srq == NULL || dpv__srq_take(qp, qp->srq) != 0) {
				dpv__count(&b->q->no_wqe, 1);
				continue;
			}
			head = rq->head;
		}
		l->va = place(qp, &wqe[slot], dpv__rq_sges(rq, slot), frame->nb_segs, len, &win,
			      &err);
		if (likely(l->va != NULL))
			rte_prefetch0(l->va);
		else if (unlikely(err != IBV_WC_SUCCESS))
			break;
		l->src = src;
		l->wr_id = wqe[slot].wr_id;
		l->len = len;
		l->wc_flags = (uint16_t)csum_flag(b, i, frame, src, parsed);
		l->frame = (uint8_t)i;
		l++;
		pos++;
	}
	t->err = err;
	t->n = (unsigned int)(l - t->at);
}

/* The frames of @t into their WQEs and their completions into @qp's CQ, one after the other
 * (the CQ lock taken before the copies: its atomic does not wait for their stores to drain);
 * stops at a frame that fails to scatter (t->n, t->err). Completions that do not fit are
 * lost, the CQ overrun (the WQEs are used, as on hardware). */
static void qp_land(struct rx_burst *b, struct dpv_qp *qp, struct rx_take *t)
{
	struct dpv_rq *rq = &qp->rq;
	struct dpv_cq_recv opened, w;
	unsigned int fit = dpv__cq_recv_open(qp->rcq, qp, &opened), n = t->n;

	w = opened;                       /* a copy whose address stays here: in registers */
	for (unsigned int k = 0; k < n; k++) {
		const struct rx_land *l = &t->at[k];

		if (likely(l->va != NULL)) {
			copy_frame(l->va, l->src, l->len);
		} else {
			uint32_t slot = (rq->tail + k) & rq->mask;
			enum ibv_wc_status st = scatter(qp, &rq->wqe[slot],
							dpv__rq_sges(rq, slot),
							b->frames[l->frame], l->len);

			if (unlikely(st != IBV_WC_SUCCESS)) {
				n = k;            /* this one fails; the ones after it do not land */
				t->err = st;
				break;
			}
		}
		if (likely(k < fit))
			dpv__cq_recv_put(&w, l->wr_id, l->len, l->wc_flags);
	}
	t->n = n;
	b->t = dpv__cyc_lap(&b->q->cyc[DPV_RXC_COPY], b->t);
	opened.at = w.at;
	dpv__cq_recv_close(&opened, n);
}

/* What qp_fast needs through a burst, in locals (nothing takes their address). */
struct rx_fast {
	struct rte_mbuf *const *frames;
	const struct dpv_rwqe *ring, *end;   /* the RQ's WQEs */
	uint64_t lkey, iova, length;          /* the MR window (rx_window) */
	uint8_t *va;
	uint64_t parsed;
};

/* Where qp_fast's loop is: the next frame (the k-th taken; left: the frames not yet taken)
 * and its WQE. */
struct rx_fast_at {
	unsigned int k;
	uint64_t left;
	const struct dpv_rwqe *d;
};

/* The next WQE of the ring after @d. */
static inline const struct dpv_rwqe *fast_next(const struct rx_fast *f, const struct dpv_rwqe *d)
{
	return d + 1 == f->end ? f->ring : d + 1;
}

/* Does frame @m of @len bytes fail to land the common way in WQE @d, whose SGE is at @off
 * in the window (wrapped if below it)? The common way: one mbuf, not empty, no longer than
 * the WQE's one SGE, which lies in the window. */
static __rte_always_inline bool fast_misfits(const struct rx_fast *f, const struct dpv_rwqe *d,
					     const struct rte_mbuf *m, uint32_t len, uint64_t off)
{
	return unlikely(d->nsge != 1 || m->nb_segs != 1 || len - 1 >= d->sge.length ||
			d->sge.lkey != f->lkey || off > f->length || len > f->length - off);
}

/* Frames from @at on, up to the @n-th, each into the next WQE, its completion through @w,
 * while they are the common case and need no checksum look (a call in this loop would put
 * its values on the stack: qp_fast makes it). Returns with @at at the first other frame.
 * @plain: the burst's frames 0..n-1 (no bit to look for), none parsed by the steering (no
 * bit to test). In runs that wrap around neither the RQ's nor the CQ's end: no wrap test per
 * frame. */
static __rte_always_inline void fast_loop(struct rx_burst *b, const struct rx_fast *f,
					  struct rx_fast_at *at, unsigned int n,
					  struct dpv_cq_recv *w, bool plain)
{
	unsigned int k = at->k;
	uint64_t left = at->left;
	const struct dpv_rwqe *d = at->d;
	struct dpv_cqe *e = w->at;

	while (k < n) {
		unsigned int lim = k + (unsigned int)RTE_MIN((size_t)(n - k),
				       RTE_MIN((size_t)(f->end - d), (size_t)(w->end - e)));

		for (; k < lim; k++, d++, e++) {
			unsigned int i = plain ? k : (unsigned int)__builtin_ctzll(left);
			const struct rte_mbuf *m = f->frames[i];
			uint32_t len = rte_pktmbuf_pkt_len(m);
			uint64_t off = d->sge.addr - f->iova;
			const uint8_t *src = rte_pktmbuf_mtod(m, const uint8_t *);

			if (fast_misfits(f, d, m, len, off))
				break;
			if (unlikely((m->ol_flags & (RTE_MBUF_F_RX_IP_CKSUM_MASK |
						     RTE_MBUF_F_RX_L4_CKSUM_MASK)) ||
				     (!plain && (f->parsed >> i & 1)) || dpv__may_be_ipv4(src, len)))
				break;                            /* csum_flag's general case */
			copy_frame(f->va + off, src, len);
			dpv__cq_recv_fill(w, e, d->wr_id, len, 0);
			if (!plain)
				left &= left - 1;
		}
		if (d == f->end)
			d = f->ring;
		if (e == w->end)
			e = w->ring;
		if (k < lim)
			break;                    /* stopped at a frame */
	}
	w->at = e;
	at->k = k;
	at->left = plain ? (k < 64 ? left & ~0ull << k : 0) : left;
	at->d = d;
}

/* The first frames of @mask that land the common way: each in one mbuf, into the next WQE,
 * whose one SGE (in the WQE: one read) holds it and lies in the MR of the first WQE's
 * (rx_window: plain bounds, no lkey table entry per frame), its completion fitting in the
 * CQ. The CQ lock is taken first (its atomic then waits for no copy's stores to drain),
 * then each frame checked, copied and completed in one loop, no record per frame. No
 * prefetch of the destinations: a pass of them before the copies, which the two passes of
 * qp_general gain from, made this one-pass loop slower (doc/performance.md, "The copy=1
 * case, a third step"). Stops at the first frame that is anything else: the frames it
 * leaves, for qp_general. */
static uint64_t qp_fast(struct rx_burst *b, struct dpv_qp *qp, uint64_t mask)
{
	struct dpv_rq *rq = &qp->rq;
	const uint32_t tail = rq->tail;
	const struct dpv_rwqe *first = &rq->wqe[tail & rq->mask];
	unsigned int n = RTE_MIN((unsigned int)__builtin_popcountll(mask), rq->head - tail);
	struct dpv_cq_recv opened, w;
	struct rx_window win;
	struct rx_fast f;
	struct rx_fast_at at;
	bool plain;

	dpv__qp_assert_locked(qp);    /* once a burst: the QP's ring is ours */
	if (n == 0 || first->nsge != 1 || !window_load(qp, &first->sge, 0, &win))
		return mask;                  /* the MR's bounds: each frame is checked below */
	f = (struct rx_fast){ b->frames, rq->wqe, rq->wqe + rq->size, win.lkey, win.iova,
			      win.length, win.va, b->c.parsed };
	n = RTE_MIN(n, dpv__cq_recv_open(qp->rcq, qp, &opened));
	w = opened;                       /* a copy whose address stays here: in registers */
	plain = (mask & (mask + 1)) == 0 && (f.parsed & mask) == 0;   /* frames 0.. of the burst */
	at = (struct rx_fast_at){ 0, mask, first };
	for (;;) {
		const struct rte_mbuf *m;
		const uint8_t *src;
		unsigned int i;
		uint32_t len;
		uint64_t off;

		if (plain)
			fast_loop(b, &f, &at, n, &w, true);
		else
			fast_loop(b, &f, &at, n, &w, false);
		if (at.k == n)
			break;
		/* a frame that stopped the loop: the common case but for its checksum flag? */
		i = (unsigned int)__builtin_ctzll(at.left);
		m = f.frames[i];
		len = rte_pktmbuf_pkt_len(m);
		off = at.d->sge.addr - f.iova;
		if (fast_misfits(&f, at.d, m, len, off))
			break;
		src = rte_pktmbuf_mtod(m, const uint8_t *);
		copy_frame(f.va + off, src, len);
		dpv__cq_recv_put(&w, at.d->wr_id, len, csum_flag(b, i, m, src, f.parsed));
		at.k++;
		at.left &= at.left - 1;
		at.d = fast_next(&f, at.d);
	}
	b->t = dpv__cyc_lap(&b->q->cyc[DPV_RXC_COPY], b->t);
	opened.at = w.at;
	dpv__cq_recv_close(&opened, at.k);
	if (at.k > 0) {
		rq->tail = tail + at.k;
		qp->rx_completed += at.k;
		dpv__cq_rxq_seen(qp->rcq, b->q);
	}
	return at.left;
}

/* Frames @mask of the burst (in order) into @qp's WQEs, in general: SRQ, scatter lists,
 * chained mbufs, WQEs checked as their frames land, a full CQ. An execution error: what
 * came before, then the error, then the QP's flush. */
static void qp_general(struct rx_burst *b, struct dpv_qp *qp, uint64_t mask)
{
	struct dpv_rq *rq = &qp->rq;
	struct rx_take t;

	dpv__qp_assert_locked(qp);
	qp_place(b, qp, mask, &t);
	if (t.n > 0) {
		qp_land(b, qp, &t);
		rq->tail += t.n;
		if (t.n > 0)
			dpv__cq_rxq_seen(qp->rcq, b->q);
		qp->rx_completed += t.n;
	}
	if (unlikely(t.err != IBV_WC_SUCCESS)) {
		dpv__rq_complete(qp, rq->wqe[rq->tail++ & rq->mask].wr_id, t.err, 0, 0, NULL);
		dpv__qp_fail(qp);
	}
}

/* Frames @mask of the burst (in order) into @qp's WQEs, their completions into its CQ, all
 * under its lock (a RESET after it must not find them later in the CQ). */
static void qp_take(struct rx_burst *b, struct dpv_qp *qp, uint64_t mask)
{
	dpv__qp_lock(qp);
	if (!receiving(qp)) {
		dpv__qp_unlock(qp);
		return;
	}
	mask = qp_fast(b, qp, mask);
	if (unlikely(mask != 0))
		qp_general(b, qp, mask);
	b->t = dpv__cyc_lap(&b->q->cyc[DPV_RXC_CQE], b->t);
	dpv__qp_unlock(qp);
}

/* The QPs of a burst, each with the frames it gets. */
#define RX_GROUPS 32
struct rx_groups {
	unsigned int n;
	struct dpv_qp *qp[RX_GROUPS];
	uint64_t mask[RX_GROUPS];
};

static void groups_deliver(struct rx_burst *b, struct rx_groups *g)
{
	for (unsigned int j = 0; j < g->n; j++)
		qp_take(b, g->qp[j], g->mask[j]);
	g->n = 0;
}

/* Add frame @i to the group of each QP of @s (their indices into @at); false if groups had
 * to be delivered on the way (then @at is not all valid). */
static bool groups_add(struct rx_burst *b, struct rx_groups *g, const struct dpv_rx_set *s,
		       unsigned int i, uint8_t *at)
{
	bool whole = true;

	for (unsigned int q = 0; q < s->n; q++) {
		unsigned int j = 0;

		while (j < g->n && g->qp[j] != s->qp[q])
			j++;
		if (j == g->n) {
			if (g->n == RX_GROUPS) {
				groups_deliver(b, g);    /* earlier frames first: order kept */
				j = 0;
				whole = false;
			}
			g->qp[j] = s->qp[q];
			g->mask[j] = 0;
			g->n = j + 1;
		}
		g->mask[j] |= 1ull << i;
		at[q] = (uint8_t)j;
	}
	return whole;
}

/* Each QP takes all of its frames at once, QPs in the order of their first frame. A frame for
 * a set naming a QP twice goes frame by frame (the QP takes it twice, in order). */
static void deliver(struct rx_burst *b, uint16_t n)
{
	struct rx_groups g;
	const struct dpv_rx_set *last = NULL;
	uint8_t at[DPV_RX_FANOUT];            /* the groups of last's QPs */

	if (b->c.uniform != NULL && !b->c.uniform->dup) {    /* the whole burst to the same QPs */
		for (unsigned int q = 0; q < b->c.uniform->n; q++)
			qp_take(b, b->c.uniform->qp[q], n < 64 ? (1ull << n) - 1 : ~0ull);
		return;
	}
	g.n = 0;
	for (unsigned int i = 0; i < n; i++) {
		const struct dpv_rx_set *s = b->c.to[i];

		if (s == NULL)
			continue;
		if (s == last && g.n > 0) {
			for (unsigned int q = 0; q < s->n; q++)
				g.mask[at[q]] |= 1ull << i;
			continue;
		}
		if (unlikely(s->dup)) {
			groups_deliver(b, &g);
			for (unsigned int q = 0; q < s->n; q++)
				qp_take(b, s->qp[q], 1ull << i);
			last = NULL;
			continue;
		}
		last = groups_add(b, &g, s, i, at) ? s : NULL;
	}
	groups_deliver(b, &g);
}

void dpv__raw_port_rx(struct dpv_device *dev, struct dpv_rxq *q, struct rte_mbuf **frames,
		      uint16_t n, uint64_t *taken)
{
	struct rx_burst b;

	b.dev = dev;
	b.q = q;
	b.frames = frames;
	b.csum_known = b.csum_good = 0;
	b.t = dpv__cyc_start();
	dpv__count(&q->unsteered, dpv__steer_classify(dev, q->id, frames, n, *taken, &b.c));
	b.t = dpv__cyc_lap(&q->cyc[DPV_RXC_CLASSIFY], b.t);
	deliver(&b, n);
}

/* Last of the port receivers: what ARP/ND and RoCE left goes to RAW_PACKET's flows. */
static const struct dpv_port_receiver raw_receiver = {
	.name = "raw_packet",
	.order = 100,
	.rx_queue = dpv__raw_port_rx,
};
DPV_PORT_RECEIVER_REGISTER(raw, raw_receiver)
