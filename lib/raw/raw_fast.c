/* SPDX-License-Identifier: BSD-3-Clause */
/* The RAW_PACKET SEND fast path, chosen when a direct-mode QP enters RTS: the common WR — a
 * SEND of a few SGEs, inline or copied, with or without IP_CSUM — is checked by one mask test
 * and a few compares, copied straight into an mbuf of the QP's stash (MR lookup inline), and
 * its slot written; the list goes to the port in one burst and the completions of the WRs
 * the port took are written in one go (a copied frame holds no application memory, so its WR
 * may complete as soon as it is sent). Anything else — other opcodes or flags, a full SQ, a
 * frame to attach without a copy, an SGE outside its MR, a WR still queued from before — goes
 * to the generic path of raw_send.c from that WR on, which gives every answer of the man
 * page; so the fast path only ever accepts WRs the generic path would accept the same way. */
#include <errno.h>
#include <string.h>

#include <rte_branch_prediction.h>
#include <rte_mbuf.h>
#include <rte_memcpy.h>

#include "raw_priv.h"

#define FAST_FLAGS (IBV_SEND_SIGNALED | IBV_SEND_INLINE | IBV_SEND_IP_CSUM)
#define FAST_SGE 4                 /* SGEs a WR may have on the fast path */
#define FAST_BURST 32
/* Service mode: how far ahead each side asks for the other core's cache lines (a descriptor
 * and the data ring were last written, or read, on the other core: the transfers of several
 * lines overlap instead of stalling one after the other): SVC_AHEAD slots of descriptors,
 * as many pieces of data (one per frame up to 128 bytes) */
#define SVC_AHEAD 8

/* Ask for the descriptor line of @slot when it starts a line (four descriptors to a line)
 * and the data line at @data_pos, for writing (the posting thread) or for reading. */
static inline void svc_prefetch(const struct dpv_sq *sq, uint32_t slot, uint32_t data_pos,
				bool write)
{
	const void *d = sq->desc_data + (data_pos < sq->data_cap ? data_pos : 0);
	const void *desc = &sq->desc[slot & sq->mask];

	if (write) {
		/* PREFETCHW (ownership: the service lcore has the line shared); a NOP on CPUs
		 * without it. __builtin_prefetch(p, 1) emits a plain read prefetch in this build */
#if defined(__x86_64__)
		__asm__ volatile("prefetchw %0" : : "m"(*(const char *)d));
		if ((slot & 3) == 0)
			__asm__ volatile("prefetchw %0" : : "m"(*(const char *)desc));
#else
		__builtin_prefetch(d, 1, 3);
		if ((slot & 3) == 0)
			__builtin_prefetch(desc, 1, 3);
#endif
	} else {
		rte_prefetch0(d);
		if ((slot & 3) == 0)
			rte_prefetch0(desc);
	}
}

/* Copy the WR's gather list into @dst. False if an SGE is outside its MR: the generic path
 * then completes the WR with LOC_PROT_ERR. */
static __rte_always_inline bool gather_copy(struct dpv_qp *qp, const struct ibv_send_wr *wr, uint8_t *dst,
			       bool inl)
{
	for (int i = 0; i < wr->num_sge; i++) {
		const struct ibv_sge *sge = &wr->sg_list[i];
		uint8_t *va = (uint8_t *)(uintptr_t)sge->addr;

		if (!inl && sge->length != 0 &&
		    dpv__mr_lookup(qp->ctx, qp->pd, sge->lkey, sge->addr, sge->length, &va) == NULL)
			return false;
		rte_memcpy(dst, va, sge->length);
		dst += sge->length;
	}
	return true;
}

/* Is @wr the fast path's to take (@r: its QP's limits)? Its length in *@len. */
static __rte_always_inline bool fast_wr(const struct dpv_qp *qp, const struct dpv_raw_qp *r,
					const struct ibv_send_wr *wr, uint32_t *len)
{
	uint32_t f = wr->send_flags;
	uint64_t l;

	if (unlikely(((wr->opcode ^ IBV_WR_SEND) | (f & ~FAST_FLAGS)) != 0 ||
		     (unsigned int)wr->num_sge - 1u >= r->fast_sge || wr->sg_list == NULL))
		return false;
	l = wr->sg_list[0].length;
	for (int i = 1; i < wr->num_sge; i++)
		l += wr->sg_list[i].length;
	/* one compare per WR: the limits were folded when the QP entered RTS */
	if (unlikely(l - DPV_ETH_HLEN >= (f & IBV_SEND_INLINE ? r->fast_span_inline :
							     r->fast_span_copy)))
		return false;
	if (unlikely((f & IBV_SEND_IP_CSUM) &&
		     !dpv__tx_ip_csum_allowed(qp->txh->caps, qp->txh->ctl)))   /* read-only */
		return false;
	*len = (uint32_t)l;
	return true;
}

/* Copy @wr's bytes (@len of them) to @dst. False if an SGE is outside its MR. */
static __rte_always_inline bool fast_copy(struct dpv_qp *qp, const struct ibv_send_wr *wr, uint8_t *dst,
			     uint32_t len)
{
	bool inl = wr->send_flags & IBV_SEND_INLINE;

	if (wr->num_sge == 1 && inl) {
		rte_memcpy(dst, (void *)(uintptr_t)wr->sg_list[0].addr, len);
		return true;
	}
	return gather_copy(qp, wr, dst, inl);
}

/* @wr's gather list as lib/offload takes it: each SGE's bytes (MR lookup inline). False if
 * an SGE is outside its MR. */
static inline bool fast_segs(struct dpv_qp *qp, const struct ibv_send_wr *wr,
			     struct dpv_tx_seg *seg)
{
	bool inl = wr->send_flags & IBV_SEND_INLINE;

	for (int i = 0; i < wr->num_sge; i++) {
		const struct ibv_sge *sge = &wr->sg_list[i];
		uint8_t *va = (uint8_t *)(uintptr_t)sge->addr;

		if (!inl && sge->length != 0 &&
		    dpv__mr_lookup(qp->ctx, qp->pd, sge->lkey, sge->addr, sge->length, &va) == NULL)
			return false;
		seg[i] = (struct dpv_tx_seg){ va, sge->length };
	}
	return true;
}

/* The frame of @wr, or NULL when the WR is not the fast path's to take. */
static __rte_always_inline struct rte_mbuf *fast_frame(struct dpv_qp *qp,
						       const struct dpv_raw_qp *r,
						       const struct ibv_send_wr *wr,
						       uint32_t *len_out)
{
	struct dpv_txh *h = qp->txh;
	uint32_t f = wr->send_flags, len;
	struct rte_mbuf *m;

	if (!fast_wr(qp, r, wr, &len))
		return NULL;
	m = dpv__tx_mbuf(h, &h->build);
	if (unlikely(m == NULL))
		return NULL;
	if (f & IBV_SEND_IP_CSUM) {
		struct dpv_tx_seg seg[FAST_SGE];

		if (unlikely(!fast_segs(qp, wr, seg))) {
			rte_pktmbuf_free(m);
			return NULL;
		}
		dpv__tx_copy_csum(h, m, seg, (uint16_t)wr->num_sge, len);   /* summed as copied */
	} else {
		if (unlikely(!fast_copy(qp, wr, rte_pktmbuf_mtod(m, uint8_t *), len))) {
			rte_pktmbuf_free(m);
			return NULL;
		}
		m->data_len = (uint16_t)len;
		m->pkt_len = len;
	}
	*len_out = len;
	return m;
}

/* Hand @n frames of @bytes to the port; those it does not take stay in their slots for the
 * generic path's next kick, in order. */
static void fast_burst(struct dpv_qp *qp, struct rte_mbuf **pkts, const uint32_t *lens,
		       uint16_t n, uint64_t bytes)
{
	struct dpv_txh *h = qp->txh;
	uint16_t took = dpv__tx_pkts_burst(h, pkts, n);

	if (unlikely(took != n)) {
		bytes = 0;
		for (uint16_t i = 0; i < took; i++)
			bytes += lens[i];
	}
	h->cnt.bytes += bytes;
	h->cnt.frames += took;
	qp->tx_frames += took;
	qp->sq.sent += took;
}

/* Completions of the list: when nothing older is still outstanding, the signaled WRs of the
 * slots the port took ([@first, sent), all released) complete at once; else in order through
 * the SQ walk. */
static void fast_complete(struct dpv_qp *qp, uint32_t first, const uint32_t *sig, unsigned int ns)
{
	struct dpv_sq *sq = &qp->sq;
	unsigned int k = 0;

	if (sq->done != first) {
		dpv__sq_complete(qp);
		return;
	}
	while (k < ns && sig[k] - first < sq->sent - first)
		k++;
	if (k != 0)
		dpv__cq_push_sends(qp->scq, qp, sig, k);
	qp->tx_completed += sq->sent - sq->done;
	__atomic_store_n(&sq->done, sq->sent, __ATOMIC_RELAXED);
}

/* What the fast path built since the last flush: frames, their lengths, signaled slots. */
struct fast_list {
	uint32_t first;            /* the slot of its first WR */
	uint16_t n;
	unsigned int ns;
	uint64_t bytes;
	struct rte_mbuf *pkts[FAST_BURST];
	uint32_t lens[FAST_BURST], sig[FAST_BURST];
};

/* Publish the list's WRs, send their frames, complete what the port took. */
static void fast_flush(struct dpv_qp *qp, struct fast_list *l)
{
	struct dpv_sq *sq = &qp->sq;
	uint32_t posted = sq->post - sq->head;

	qp->tx_wrs += posted;
	qp->tx_bytes += l->bytes;
	qp->txh->cnt.copied += posted;
	__atomic_store_n(&sq->head, sq->post, __ATOMIC_RELEASE);
	fast_burst(qp, l->pkts, l->lens, l->n, l->bytes);
	fast_complete(qp, l->first, l->sig, l->ns);
	l->first = sq->post;
	l->n = 0;
	l->ns = 0;
	l->bytes = 0;
}

int dpv__raw_post_send_fast(struct dpv_qp *qp, struct ibv_send_wr *wr, struct ibv_send_wr **bad_wr)
{
	struct dpv_sq *sq = &qp->sq;
	const struct dpv_raw_qp *r = to_rawqp(qp);      /* once a list */
	/* in locals: the WQE's byte fields may alias anything, the compiler would reload them */
	struct dpv_wqe *const ring = sq->wqe;
	const uint32_t mask = sq->mask;
	const uint8_t sig_all = qp->sq_sig_all;
	struct fast_list l;
	uint32_t room, post;
	int rc = 0;

	dpv__qp_lock(qp);
	if (unlikely(dpv__qp_state(qp) != IBV_QPS_RTS || sq->sent != sq->head || dpv__cycles()))
		goto generic;
	post = sq->post;
	l.first = post;
	l.n = 0;
	l.ns = 0;
	l.bytes = 0;
	room = sq->max_wr - (post - __atomic_load_n(&sq->freed, __ATOMIC_ACQUIRE));
	for (; wr != NULL && room != 0; wr = wr->next, room--) {
		struct dpv_wqe *w = &ring[post & mask];
		uint32_t len;
		struct rte_mbuf *m = fast_frame(qp, r, wr, &len);
		uint8_t sig;

		if (m == NULL)
			break;
		sig = sig_all | !!(wr->send_flags & IBV_SEND_SIGNALED);
		w->wr_id = wr->wr_id;
		w->frame = m;
		w->byte_len = len;
		w->opcode = IBV_WC_SEND;
		w->signaled = sig;
		w->status = IBV_WC_SUCCESS;
		w->released = 1;           /* copied: no application memory in the frame */
		w->nb_mr = 0;
		if (sig)
			l.sig[l.ns++] = post;
		l.lens[l.n] = len;
		l.bytes += len;
		sq->post = ++post;
		l.pkts[l.n++] = m;
		if (unlikely(l.n == FAST_BURST)) {
			fast_flush(qp, &l);
			if (sq->sent != sq->head) {
				wr = wr->next;     /* the port is full: the rest queues behind */
				break;
			}
		}
	}
	if (l.n != 0)
		fast_flush(qp, &l);
generic:
	if (wr != NULL)
		rc = dpv__raw_post_list(qp, wr, bad_wr);
	dpv__qp_unlock(qp);
	return rc;
}

/* ---- service mode: the same WRs, posted by one thread and sent by the service lcore ---- */

/* The posting thread's side: each fast WR's bytes are copied into its slot's data and its
 * descriptor written (16 bytes); the head is published once per list. Only lines of the
 * posting thread are written, and the service lcore reads them a burst at a time. */
int dpv__raw_post_send_svc(struct dpv_qp *qp, struct ibv_send_wr *wr,
			   struct ibv_send_wr **bad_wr)
{
	struct dpv_sq *sq = &qp->sq;
	const struct dpv_raw_qp *r = to_rawqp(qp);      /* once a list */
	struct dpv_svc_desc *const desc = sq->desc;
	const uint32_t mask = sq->mask;
	const unsigned int sig_all = qp->sq_sig_all ? DPV_SVC_SIGNALED : 0;
	uint32_t post, pos, room, len;
	uint64_t bytes = 0;
	int rc = 0;

	dpv__qp_lock(qp);
	if (unlikely(dpv__qp_state(qp) != IBV_QPS_RTS || dpv__cycles()))
		goto generic;
	post = sq->post;
	pos = sq->data_post;
	room = sq->max_wr - (post - __atomic_load_n(&sq->freed, __ATOMIC_ACQUIRE));
	for (; wr != NULL && room != 0; wr = wr->next, room--) {
		struct dpv_svc_desc *d = &desc[post & mask];
		uint32_t f = wr->send_flags, at;

		svc_prefetch(sq, post + SVC_AHEAD, pos + SVC_AHEAD * DPV_SVC_DATA_ALIGN, true);
		if (!fast_wr(qp, r, wr, &len))
			break;
		at = dpv__sq_data_at(sq, pos, len);
		if (!fast_copy(qp, wr, sq->desc_data + at, len))
			break;
		pos = dpv__sq_data_end(at, len);
		d->wr_id = wr->wr_id;
		d->len = len;
		d->meta = dpv__svc_meta(DPV_SVC_COPY | sig_all |
					(f & (DPV_SVC_SIGNALED | DPV_SVC_IP_CSUM)),
					IBV_WC_SEND, IBV_WC_SUCCESS, 0);
		bytes += len;
		post++;
	}
	if (post != sq->post) {
		qp->tx_wrs += post - sq->post;
		qp->tx_bytes += bytes;
		sq->post = post;
		sq->data_post = pos;
		__atomic_store_n(&sq->head, post, __ATOMIC_RELEASE);
	}
generic:
	if (wr != NULL)
		rc = dpv__raw_post_list(qp, wr, bad_wr);
	dpv__qp_unlock(qp);
	return rc;
}

/* The WQE of the descriptor at @slot: the CQE is written from it, or the generic kick sends
 * its frame @m later (the port was full). */
static void svc_wqe(struct dpv_sq *sq, const struct dpv_svc_desc *d, uint32_t slot,
		    struct rte_mbuf *m)
{
	struct dpv_wqe *w = &sq->wqe[slot & sq->mask];

	w->wr_id = d->wr_id;
	w->frame = m;
	w->byte_len = d->len;
	w->opcode = (uint8_t)dpv__svc_opcode(d);
	w->signaled = dpv__svc_flags(d) & DPV_SVC_SIGNALED;
	w->status = IBV_WC_SUCCESS;
	w->released = 1;
	w->nb_mr = 0;
}

/* A frame from its slot's data into an mbuf's: whole cache lines (the slot's data is a
 * whole number of them, the mbuf's room checked), no size dispatch for small frames. */
static inline void svc_copy(uint8_t *dst, const uint8_t *src, uint32_t len, uint32_t room)
{
	if (unlikely(RTE_ALIGN_CEIL(len, RTE_CACHE_LINE_SIZE) > room)) {
		rte_memcpy(dst, src, len);
		return;
	}
	for (uint32_t off = 0; off < len; off += RTE_CACHE_LINE_SIZE)
		rte_mov64(dst + off, src + off);
}

/* The signaled slots of a round's bursts, completed in one CQ push at its end (or when full):
 * the CQ's lines move to the polling thread once per round, not once per burst. */
struct svc_round {
	uint32_t first;            /* the round's first slot: everything before it completed */
	unsigned int ns;
	uint32_t sig[8 * FAST_BURST];
};

/* One burst of the copy descriptors from sent on (nothing older outstanding): frames built
 * as the direct fast path builds them, one tx_burst, the cursors moved once; the signaled
 * slots noted in @r. Returns false when the rest must wait for a later round (the port full,
 * no mbufs) or is not for this path. */
static bool svc_burst(struct dpv_qp *qp, uint32_t head, struct svc_round *r)
{
	struct dpv_sq *sq = &qp->sq;
	struct dpv_txh *h = qp->txh;
	const struct dpv_svc_desc *const desc = sq->desc;
	const uint32_t mask = sq->mask, first = sq->sent, small = h->small_max;
	struct rte_mbuf *pkts[FAST_BURST];
	uint32_t lens[FAST_BURST], slot = first;
	unsigned int n = 0, ns0 = r->ns;
	uint64_t bytes = 0;

	for (uint32_t i = 0; i < SVC_AHEAD && first + i != head; i++)
		svc_prefetch(sq, first + i, sq->data_built + i * DPV_SVC_DATA_ALIGN, false);
	for (; n < FAST_BURST && slot != head; slot++) {
		const struct dpv_svc_desc *d = &desc[slot & mask];
		unsigned int flags = dpv__svc_flags(d);
		uint32_t len = d->len;
		const uint8_t *data;
		struct rte_mbuf *m;

		if (slot + SVC_AHEAD - head > SVC_AHEAD)   /* slot + SVC_AHEAD before head */
			svc_prefetch(sq, slot + SVC_AHEAD,
				     sq->data_built + SVC_AHEAD * DPV_SVC_DATA_ALIGN, false);
		if (!(flags & DPV_SVC_COPY))
			break;
		m = dpv__tx_mbuf(h, &h->build);
		if (unlikely(m == NULL))
			break;
		data = dpv__sq_data_take(sq, len);
		if (flags & DPV_SVC_IP_CSUM) {
			struct dpv_tx_seg one = { data, len };

			dpv__tx_copy_csum(h, m, &one, 1, len);
		} else {
			svc_copy(rte_pktmbuf_mtod(m, uint8_t *), data, len, small);
			m->data_len = (uint16_t)len;
			m->pkt_len = len;
		}
		if (flags & DPV_SVC_SIGNALED)
			r->sig[r->ns++] = slot;
		lens[n] = len;
		bytes += len;
		pkts[n++] = m;
	}
	if (n == 0)
		return false;
	h->cnt.copied += n;
	fast_burst(qp, pkts, lens, (uint16_t)n, bytes);
	sq->built = first + n;
	for (unsigned int k = ns0; k < r->ns; k++)  /* what the CQEs are written from */
		svc_wqe(sq, &desc[r->sig[k] & mask], r->sig[k], NULL);
	for (uint32_t s = sq->sent; s != sq->built; s++)
		svc_wqe(sq, &desc[s & mask], s, pkts[s - first]);
	return n == FAST_BURST && sq->sent == sq->built;
}

bool dpv__raw_service_send(struct dpv_qp *qp)
{
	struct dpv_sq *sq = &qp->sq;
	uint32_t head = __atomic_load_n(&sq->head, __ATOMIC_ACQUIRE);
	struct svc_round r;

	if (unlikely(to_rawqp(qp)->pace.kbps != 0 || dpv__cycles()))
		return false;                     /* the generic kick asks the pacer */
	if (sq->sent == head || sq->built != sq->sent || sq->done != sq->sent)
		return sq->sent == head;
	r.first = sq->sent;
	r.ns = 0;
	while (sq->sent != head && svc_burst(qp, head, &r)) {
		if (r.ns > RTE_DIM(r.sig) - FAST_BURST) {
			fast_complete(qp, r.first, r.sig, r.ns);
			r.first = sq->sent;
			r.ns = 0;
		}
	}
	if (sq->sent != r.first)
		fast_complete(qp, r.first, r.sig, r.ns);
	return sq->sent == head;
}
