/* SPDX-License-Identifier: BSD-3-Clause */
/* UD sends: each WR is checked with the verbs core's table, then executed while it is posted
 * (as RAW's direct mode does): its address handle's path, the QP's UDP source port and PSN,
 * and the payload make one RoCEv2 frame (SEND ONLY [WITH IMMEDIATE], DETH), or one per
 * segment for TSO, copied into pool mbufs while the ICRC is computed over the copy. A
 * message above the path MTU emits nothing and completes successfully (IBA C10-93.1.1, as
 * rxe). Progress hands the frames out in order: to the port in bursts, or to the port's
 * loopback ring when the destination is one of its own GIDs. A WR completes once all its
 * frames are handed out (a copy holds no application memory). */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include <rte_mbuf.h>

#include "dpv_offload.h"
#include "roce_ud.h"
#include "verbs_post.h"

#define UD_BURST 64
#define QKEY_CONTROLLED 0x80000000u     /* remote_qkey with it: the QP's own Q_Key */

/* ---- executing a WR: its frames ---- */

/* What every frame of a WR shares, and the QP's counters it advances. */
struct ud_msg {
	struct dpv_qp *qp;
	struct dpv_roce_path path;
	struct dpv_roce_hdrs hd;
	uint32_t mtu;
};

static void msg_init(struct ud_msg *m, struct dpv_qp *qp, const struct ibv_send_wr *wr,
		     const struct dpv_ah *ah)
{
	struct dpv_ud_qp *ud = to_udqp(qp);
	uint32_t qkey = wr->wr.ud.remote_qkey;

	m->qp = qp;
	m->path = ah->path;
	m->path.sport = ud->sport;
	m->path.icrc_skip = ah->loopback && dpv__device_loop_icrc_skip(qp->ctx->dev);
	m->mtu = dpv__ud_path_mtu(qp->ctx->dev);
	memset(&m->hd, 0, sizeof(m->hd));
	m->hd.bth.opcode = DPV_ROCE_UD | (wr->opcode == IBV_WR_SEND_WITH_IMM ?
					  DPV_ROCE_SEND_ONLY_IMM : DPV_ROCE_SEND_ONLY);
	m->hd.bth.se = wr->send_flags & IBV_SEND_SOLICITED;
	m->hd.bth.pkey = DPV_ROCE_PKEY_DEFAULT;
	m->hd.bth.dqpn = wr->wr.ud.remote_qpn & DPV_ROCE_QPN_MASK;
	m->hd.deth.qkey = qkey & QKEY_CONTROLLED ? qp->qkey : qkey;
	m->hd.deth.sqpn = qp->ibqp.qp_num;
	m->hd.imm = wr->imm_data;
}

/* The PSN of the next packet (a message above the MTU takes one too, as rxe). */
static uint32_t next_psn(struct dpv_qp *qp)
{
	struct dpv_ud_qp *ud = to_udqp(qp);
	uint32_t psn = ud->psn;

	ud->psn = (psn + 1) & DPV_ROCE_PSN_MASK;
	return psn;
}

static void oversize(struct ud_msg *m)
{
	next_psn(m->qp);
	__atomic_fetch_add(&m->qp->ctx->dev->roce->cnt.tx_oversize, 1, __ATOMIC_RELAXED);
}

static int one_frame(struct ud_msg *m, const uint8_t *pre, uint32_t pre_len,
		     struct dpv_roce_cursor *c, uint32_t len, struct rte_mbuf **out)
{
	m->hd.bth.psn = next_psn(m->qp);
	m->path.ip_id = to_udqp(m->qp)->ip_id++;
	return dpv__roce_frame_mbuf(m->qp->txh, &m->path, &m->hd, pre, pre_len, c, len, out);
}

static void frames_put(struct dpv_ud_frames *f)
{
	struct rte_mbuf **m = dpv__ud_frames_of(f);

	for (uint32_t i = f->next; i < f->n; i++)
		rte_pktmbuf_free(m[i]);
	if (f->n > 1)
		free(f->many);
	f->many = NULL;
	f->n = f->next = f->looped = 0;
}

/* The raw sum of the next @len bytes at @c (the cursor itself does not move). */
static uint16_t chunk_sum(struct dpv_roce_cursor c, uint32_t len)
{
	uint16_t sum = 0;
	uint32_t off = 0;

	while (off < len) {
		const uint8_t *p;
		uint32_t k = dpv__roce_cursor_next(&c, len - off, &p);

		if (k == 0)
			break;
		sum = dpv__cksum_cont(sum, p, k, off);
		off += k;
	}
	return sum;
}

/* UD TSO: segment i is one message carrying the WR's header as RAW TSO's segment i has it
 * (lengths, IPv4 ID and checksum, TCP sequence, flags, checksum), then up to mss bytes. */
static int tso_frames(struct ud_msg *m, const struct ibv_send_wr *wr, struct dpv_roce_cursor *c,
		      uint32_t len, const struct dpv_hdr_info *info, struct dpv_ud_frames *f)
{
	uint32_t mss = wr->tso.mss, hl = wr->tso.hdr_sz, nmsg = dpv__tso_segments(len, mss);
	uint16_t base = dpv__tso_csum_base(wr->tso.hdr, info);
	struct rte_mbuf **out = &f->one;
	uint8_t h[512];
	int rc = 0;

	if (hl > sizeof(h))
		return -EINVAL;                   /* max_tso_header is at most 512 */
	if (nmsg > 1 && (out = f->many = malloc(nmsg * sizeof(*out))) == NULL)
		return -ENOMEM;
	for (uint32_t i = 0; i < nmsg && rc == 0; i++) {
		uint32_t chunk = RTE_MIN(mss, len - i * mss);

		if (hl + chunk > m->mtu) {
			oversize(m);
			for (uint32_t k = chunk; k > 0;) {
				const uint8_t *p;
				uint32_t t = dpv__roce_cursor_next(c, k, &p);

				if (t == 0)
					break;
				k -= t;
			}
			continue;
		}
		memcpy(h, wr->tso.hdr, hl);
		dpv__tso_header(h, info, i, nmsg, chunk, mss);
		dpv__tso_csum(h, info, base, chunk, chunk_sum(*c, chunk));
		rc = one_frame(m, h, hl, c, chunk, &out[f->n]);
		if (rc == 0)
			f->n++;
	}
	if (f->n <= 1 && nmsg > 1) {            /* one frame or none: kept in f->one */
		struct rte_mbuf *only = f->n ? out[0] : NULL;

		free(f->many);
		f->many = NULL;
		f->one = only;
	}
	if (rc != 0)
		frames_put(f);
	return rc;
}

/* The gather list with each non-inline SGE checked against an MR of the QP's PD. */
static int gather(struct dpv_qp *qp, const struct ibv_send_wr *wr, struct dpv_tx_seg *seg,
		  uint16_t *nseg)
{
	bool inl = wr->send_flags & IBV_SEND_INLINE;

	*nseg = 0;
	for (int i = 0; i < wr->num_sge; i++) {
		const struct ibv_sge *sge = &wr->sg_list[i];
		uint8_t *va = (uint8_t *)(uintptr_t)sge->addr;

		if (sge->length == 0)
			continue;
		if (!inl && dpv__mr_lookup(qp->ctx, qp->pd, sge->lkey, sge->addr, sge->length,
					   &va) == NULL)
			return IBV_WC_LOC_PROT_ERR;
		seg[*nseg].addr = va;
		seg[(*nseg)++].len = sge->length;
	}
	return IBV_WC_SUCCESS;
}

/* Execute @wr into @f: 0 with *@status (an execution error is a completion), or -ENOMEM
 * when there are no mbufs now (nothing posted). */
static int execute(struct dpv_qp *qp, const struct ibv_send_wr *wr, uint64_t len,
		   const struct dpv_hdr_info *tso, struct dpv_ud_frames *f, uint8_t *status)
{
	struct dpv_ah *ah = to_dah(wr->wr.ud.ah);
	struct dpv_tx_seg seg[32];
	struct dpv_roce_cursor c = { .seg = seg };
	struct ud_msg m;
	int rc = 0;

	if (ah->pd != qp->pd) {
		*status = IBV_WC_LOC_QP_OP_ERR;        /* as rxe: the AH of another PD */
		return 0;
	}
	*status = gather(qp, wr, seg, &c.nseg);
	if (*status != IBV_WC_SUCCESS)
		return 0;
	msg_init(&m, qp, wr, ah);
	f->loop = ah->loopback;
	f->mcast_loop = ah->mcast && dpv__ud_mcast_any(qp->ctx->dev);
	if (wr->opcode == IBV_WR_TSO) {
		rc = tso_frames(&m, wr, &c, (uint32_t)len, tso, f);
		qp->txh->cnt.tso_sw++;
		qp->txh->cnt.tso_segments_sw += f->n;
	} else if (len > m.mtu) {
		oversize(&m);
	} else {
		rc = one_frame(&m, NULL, 0, &c, (uint32_t)len, &f->one);
		f->n = rc == 0;
		qp->txh->cnt.copied++;
	}
	if (rc == -EINVAL) {                        /* headers the codec refused (GID families) */
		*status = IBV_WC_LOC_QP_OP_ERR;
		rc = 0;
	}
	return rc == -ENOBUFS ? -ENOMEM : rc;
}

/* ---- posting ---- */

static int sq_post_one(struct dpv_qp *qp, const struct ibv_send_wr *wr, uint64_t len,
		       const struct dpv_hdr_info *tso)
{
	struct dpv_sq *sq = &qp->sq;
	uint32_t slot = sq->post & sq->mask;
	struct dpv_wqe *w = &sq->wqe[slot];
	struct dpv_ud_frames *f = &to_udqp(qp)->frames[slot];
	enum ibv_qp_state state = dpv__qp_state(qp);

	dpv__roce_wqe_init(qp, w, wr, len);
	*f = (struct dpv_ud_frames){ 0 };
	/* In SQE and ERR the WR is accepted, and flushed by the next progress. */
	if (state == IBV_QPS_RTS || state == IBV_QPS_SQD) {
		int rc = execute(qp, wr, len, tso, f, &w->status);

		if (rc != 0)
			return rc;
	} else {
		w->status = IBV_WC_WR_FLUSH_ERR;
	}
	w->frame = f;
	dpv__wqe_release(w);                        /* copies: nothing of the WR is held */
	sq->post++;
	qp->tx_wrs++;
	qp->tx_bytes += len;
	return 0;
}

static int post_one(struct dpv_qp *qp, const struct ibv_send_wr *wr, void *arg)
{
	struct dpv_hdr_info tso_info;
	uint64_t len;
	int rc = dpv__roce_wr_check(qp, wr, &len, &tso_info);

	(void)arg;
	if (unlikely(rc != 0))
		return rc;
	/* a UD WR names its destination: no AH, or one of another device, is refused */
	if (unlikely(wr->wr.ud.ah == NULL || wr->wr.ud.ah->context != &qp->ctx->vctx.context))
		return -EINVAL;
	return sq_post_one(qp, wr, len, &tso_info);
}

int dpv__ud_post_send(struct dpv_qp *qp, struct ibv_send_wr *wr, struct ibv_send_wr **bad_wr)
{
	int rc;

	dpv__qp_lock(qp);
	rc = dpv__post_list(qp, wr, bad_wr, post_one, NULL, dpv__ud_progress);
	dpv__qp_unlock(qp);
	return rc;
}

/* ---- progress: frames out in order ---- */

/* A multicast frame also goes to the port's own receive side (QPs of this port attached to
 * the group), once, sharing the mbuf with the wire. */
static void loop_copy(struct dpv_device *dev, struct rte_mbuf *m)
{
	rte_pktmbuf_refcnt_update(m, 1);
	if (dpv__device_loopback(dev, &m, 1) == 0)
		rte_pktmbuf_refcnt_update(m, -1);
}

/* The frames of the WR at sent, to the port's loopback ring; false if the ring was full. */
static bool kick_loop(struct dpv_qp *qp, struct dpv_ud_frames *f)
{
	struct dpv_device *dev = qp->ctx->dev;
	unsigned int took = dpv__device_loopback(dev, dpv__ud_frames_of(f) + f->next,
						 f->n - f->next);

	f->next += took;
	__atomic_fetch_add(&dev->roce->cnt.tx_loopback, took, __ATOMIC_RELAXED);
	return f->next == f->n;
}

/* Hand @cnt frames to the port; how many it took, in order. With transmit faults on
 * (doc/faults.md) every frame goes to the injector, and what comes out of it and the port
 * then refuses is lost, as on a wire (@pk has room for the injector's duplicates). */
static uint32_t burst_out(struct dpv_qp *qp, void **pk, uint32_t cnt)
{
	struct dpv_device *dev = qp->ctx->dev;
	uint16_t m, sent;

	if (likely(!__atomic_load_n(&dev->fault_on[1], __ATOMIC_ACQUIRE)))
		return cnt != 0 ? dpv__tx_burst(qp->txh, pk, (uint16_t)cnt) : 0;
	m = dpv__device_fault_tx(dev, (struct rte_mbuf **)pk, (uint16_t)cnt, 2 * UD_BURST);
	sent = m != 0 ? dpv__tx_burst(qp->txh, pk, m) : 0;
	for (uint16_t i = sent; i < m; i++)
		rte_pktmbuf_free(pk[i]);
	return cnt;
}

/* One burst of the frames of the WRs from sent that go to the wire; false if the port did not
 * take them all. */
static bool kick_wire(struct dpv_qp *qp, uint32_t head)
{
	struct dpv_sq *sq = &qp->sq;
	struct dpv_ud_qp *ud = to_udqp(qp);
	void *pk[2 * UD_BURST];
	uint32_t cnt = 0, took, slot;

	for (slot = sq->sent; slot != head && cnt < UD_BURST; slot++) {
		struct dpv_ud_frames *f = &ud->frames[slot & sq->mask];
		struct rte_mbuf **m = dpv__ud_frames_of(f);
		uint32_t i;

		if (sq->wqe[slot & sq->mask].status != IBV_WC_SUCCESS || f->loop)
			break;
		for (i = f->next; i < f->n && cnt < UD_BURST; i++) {
			if (f->mcast_loop && i >= f->looped) {
				loop_copy(qp->ctx->dev, m[i]);
				f->looped = i + 1;
			}
			pk[cnt++] = m[i];
		}
		if (i < f->n)
			break;
	}
	took = burst_out(qp, pk, cnt);
	qp->tx_frames += took;
	for (uint32_t left = took; sq->sent != head; sq->sent++) {
		struct dpv_ud_frames *f = &ud->frames[sq->sent & sq->mask];
		uint32_t k;

		if (sq->wqe[sq->sent & sq->mask].status != IBV_WC_SUCCESS || f->loop)
			break;
		k = RTE_MIN(f->n - f->next, left);
		f->next += k;
		left -= k;
		if (f->next < f->n)
			break;
		frames_put(f);                     /* all handed out: only the array goes */
	}
	return took == cnt;
}

/* Hand [sent, head) out until the port (or the loopback ring) stops taking frames, or up to
 * a WR that failed when it executed: that one completes in error and the QP goes to SQE. */
static void ud_kick(struct dpv_qp *qp)
{
	struct dpv_sq *sq = &qp->sq;
	uint32_t head = __atomic_load_n(&sq->head, __ATOMIC_ACQUIRE);

	while (sq->sent != head && dpv__qp_state(qp) == IBV_QPS_RTS) {
		struct dpv_wqe *w = &sq->wqe[sq->sent & sq->mask];
		struct dpv_ud_frames *f = &to_udqp(qp)->frames[sq->sent & sq->mask];

		if (w->status == IBV_WC_WR_FLUSH_ERR) {     /* posted in SQE or ERR */
			sq->sent++;
		} else if (w->status != IBV_WC_SUCCESS) {
			frames_put(f);
			sq->sent++;
			qp->tx_errors++;
			dpv__qp_set_state(qp, IBV_QPS_SQE);
		} else if (f->loop) {
			if (!kick_loop(qp, f))
				return;
			frames_put(f);
			sq->sent++;
		} else if (!kick_wire(qp, head)) {
			return;
		}
	}
}

/* Every WR not yet handed out completes with FLUSH_ERR (one that failed keeps its error). */
static void flush_unsent(struct dpv_qp *qp)
{
	struct dpv_sq *sq = &qp->sq;
	uint32_t head = __atomic_load_n(&sq->head, __ATOMIC_ACQUIRE);

	for (; sq->sent != head; sq->sent++) {
		struct dpv_wqe *w = &sq->wqe[sq->sent & sq->mask];

		frames_put(&to_udqp(qp)->frames[sq->sent & sq->mask]);
		if (w->status == IBV_WC_SUCCESS)
			w->status = IBV_WC_WR_FLUSH_ERR;
	}
}

void dpv__ud_progress(struct dpv_qp *qp)
{
	enum ibv_qp_state state = dpv__qp_state(qp);

	if (state == IBV_QPS_RTS) {
		ud_kick(qp);
		state = dpv__qp_state(qp);
	}
	if (state == IBV_QPS_SQE || state == IBV_QPS_ERR)
		flush_unsent(qp);
	dpv__sq_complete(qp);
}

void dpv__ud_flush(struct dpv_qp *qp)
{
	flush_unsent(qp);
	dpv__sq_complete(qp);
}

bool dpv__ud_reset(struct dpv_qp *qp)
{
	flush_unsent(qp);
	dpv__sq_clear(&qp->sq);
	return true;
}

void dpv__ud_frames_free(struct dpv_qp *qp)
{
	struct dpv_ud_qp *ud = to_udqp(qp);

	for (uint32_t i = 0; ud->frames != NULL && i < qp->sq.size; i++)
		frames_put(&ud->frames[i]);
}
