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
 * completions of different QPs on one CQ come QP by QP within a burst. */
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

static unsigned int csum_flag(struct rx_burst *b, unsigned int i)
{
	const struct rte_mbuf *m = b->frames[i];
	uint64_t bit = 1ull << i;

	/* no word from the port and an EtherType that is neither IPv4 nor a VLAN tag: no
	 * checksum to vouch for (the common non-IP case, without a call) */
	if (!(m->ol_flags & (RTE_MBUF_F_RX_IP_CKSUM_MASK | RTE_MBUF_F_RX_L4_CKSUM_MASK)) &&
	    !(b->c.parsed & bit) && !dpv__may_be_ipv4(rte_pktmbuf_mtod(m, const uint8_t *),
						      rte_pktmbuf_data_len(m)))
		return 0;
	if (!(b->csum_known & bit)) {
		b->csum_known |= bit;
		if (dpv__rx_csum_ok_parsed(b->frames[i], b->c.parsed & bit ? &b->c.info[i] : NULL))
			b->csum_good |= bit;
	}
	return b->csum_good & bit ? IBV_WC_IP_CSUM_OK : 0;
}

/* Where frame @frame (@len bytes) lands in WQE @w with scatter list @sge when it is the common
 * case, one SGE and one mbuf: *@va, checked (or an error status); NULL in *@va otherwise.
 * *@mr: the MR the previous WQE's SGE was in (the RQ's buffers are usually in one MR: the
 * lkey's table entry is not read again for every frame). */
static enum ibv_wc_status place(struct dpv_qp *qp, const struct dpv_rwqe *w,
				const struct ibv_sge *sge, const struct rte_mbuf *frame,
				uint32_t len, uint8_t **va, struct dpv_mr **mr)
{
	*va = NULL;
	if (unlikely(w->nsge != 1 || frame->nb_segs != 1 || len == 0))
		return IBV_WC_SUCCESS;
	if (unlikely(len > sge->length))
		return IBV_WC_LOC_LEN_ERR;
	if (*mr == NULL || (*mr)->ibmr.lkey != sge->lkey) {
		*mr = dpv__mr_lookup(qp->ctx, qp->pd, sge->lkey, sge->addr, len, va);
		if (unlikely(*mr == NULL || !((*mr)->access & IBV_ACCESS_LOCAL_WRITE))) {
			*mr = NULL;
			return IBV_WC_LOC_PROT_ERR;
		}
		return IBV_WC_SUCCESS;
	}
	return dpv__mr_range(*mr, sge->addr, len, va) ? IBV_WC_SUCCESS : IBV_WC_LOC_PROT_ERR;
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

/* The frames of one QP in a burst: where each lands. */
struct rx_take {
	unsigned int n;                   /* frames with a WQE, in order */
	enum ibv_wc_status err;           /* frame n, if not SUCCESS, fails with it */
	uint8_t frame[DPV_RX_MAX];        /* index in the burst */
	uint8_t *va[DPV_RX_MAX];          /* where it lands (NULL: scatter in general) */
	struct dpv_rx_done done[DPV_RX_MAX];     /* its completion */
};

/* The WQEs @mask's frames take, in order, where they land and what their completions say,
 * each destination prefetched: the copies that follow find their lines on the way in (the
 * buffers of a deep RQ are seldom in the cache) instead of missing one after the other.
 * Stops at the first frame that cannot land (its status in t->err). */
static void qp_place(struct rx_burst *b, struct dpv_qp *qp, uint64_t mask, struct rx_take *t)
{
	const struct dpv_rq *rq = &qp->rq;
	const struct dpv_rwqe *wqe = rq->wqe;
	const struct ibv_sge *sges = rq->sge;
	uint32_t tail = rq->tail, head = rq->head, ring = rq->mask, max_sge = rq->max_sge;
	struct dpv_mr *mr = NULL;
	unsigned int n = 0;

	t->err = IBV_WC_SUCCESS;
	for (; mask != 0; mask &= mask - 1) {
		unsigned int i = (unsigned int)__builtin_ctzll(mask);
		const struct rte_mbuf *frame = b->frames[i];
		uint32_t slot = tail & ring, len = rte_pktmbuf_pkt_len(frame);

		if (tail == head) {
			/* a QP with an SRQ takes the SRQ's oldest WQE into its own ring */
			if (qp->srq == NULL || dpv__srq_take(qp, qp->srq) != 0) {
				dpv__count(&b->q->no_wqe, 1);
				continue;
			}
			head = rq->head;
		}
		t->err = place(qp, &wqe[slot], &sges[(size_t)slot * max_sge], frame, len, &t->va[n],
			       &mr);
		if (unlikely(t->err != IBV_WC_SUCCESS))
			break;
		if (t->va[n] != NULL)
			rte_prefetch0(t->va[n]);
		t->frame[n] = (uint8_t)i;
		t->done[n] = (struct dpv_rx_done){ wqe[slot].wr_id, len, csum_flag(b, i) };
		n++;
		tail++;
	}
	t->n = n;
}

/* Frames @mask of the burst (in order) into @qp's WQEs, their completions into its CQ, all
 * under its lock (a RESET after it must not find them later in the CQ). An execution error:
 * what came before, then the error, then the QP's flush. */
static void qp_take(struct rx_burst *b, struct dpv_qp *qp, uint64_t mask)
{
	struct dpv_rq *rq = &qp->rq;
	struct rx_take t;
	unsigned int k;

	dpv__qp_lock(qp);
	if (!receiving(qp)) {
		dpv__qp_unlock(qp);
		return;
	}
	qp_place(b, qp, mask, &t);
	for (k = 0; k < t.n; k++) {
		const struct rte_mbuf *frame = b->frames[t.frame[k]];

		if (likely(t.va[k] != NULL)) {
			rte_memcpy(t.va[k], rte_pktmbuf_mtod(frame, const void *), t.done[k].byte_len);
		} else {
			uint32_t slot = (rq->tail + k) & rq->mask;
			enum ibv_wc_status st = scatter(qp, &rq->wqe[slot],
							&rq->sge[(size_t)slot * rq->max_sge],
							frame, t.done[k].byte_len);

			if (unlikely(st != IBV_WC_SUCCESS)) {
				t.n = k;          /* this one fails; the ones after it do not land */
				t.err = st;
				break;
			}
		}
	}
	rq->tail += t.n;
	b->t = dpv__cyc_lap(&b->q->cyc[DPV_RXC_COPY], b->t);
	if (t.n > 0) {
		dpv__cq_push_recvs(qp->rcq, qp, t.done, t.n);
		dpv__cq_rxq_seen(qp->rcq, b->q);
		qp->rx_completed += t.n;
	}
	if (unlikely(t.err != IBV_WC_SUCCESS)) {
		dpv__rq_complete(qp, rq->wqe[rq->tail++ & rq->mask].wr_id, t.err, 0, 0, NULL);
		dpv__qp_fail(qp);
	}
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
