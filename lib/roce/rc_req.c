/* SPDX-License-Identifier: BSD-3-Clause */
/* The requester: send WRs cut into packets of the path MTU (FIRST/MIDDLE/LAST or ONLY), PSNs
 * assigned when a WR starts, READ and atomics bounded by max_rd_atomic, fences, the PSN
 * window, AckReq on the last packet of a message and periodically, and go-back-N: sending
 * again from any PSN, even inside a message (a READ then asks for the rest only). */
#include <errno.h>

#include "rc_priv.h"

/* the opcode of a packet per WR opcode: ONLY, FIRST, MIDDLE, LAST (RC numbering) */
static const uint8_t seg_opcode[DPV_RC_WR_SEND_INV + 1][4] = {
	[DPV_RC_WR_WRITE] = { DPV_ROCE_WRITE_ONLY, DPV_ROCE_WRITE_FIRST, DPV_ROCE_WRITE_MIDDLE,
			      DPV_ROCE_WRITE_LAST },
	[DPV_RC_WR_WRITE_IMM] = { DPV_ROCE_WRITE_ONLY_IMM, DPV_ROCE_WRITE_FIRST,
				  DPV_ROCE_WRITE_MIDDLE, DPV_ROCE_WRITE_LAST_IMM },
	[DPV_RC_WR_SEND] = { DPV_ROCE_SEND_ONLY, DPV_ROCE_SEND_FIRST, DPV_ROCE_SEND_MIDDLE,
			     DPV_ROCE_SEND_LAST },
	[DPV_RC_WR_SEND_IMM] = { DPV_ROCE_SEND_ONLY_IMM, DPV_ROCE_SEND_FIRST,
				 DPV_ROCE_SEND_MIDDLE, DPV_ROCE_SEND_LAST_IMM },
	[DPV_RC_WR_READ] = { DPV_ROCE_READ_REQUEST },
	[DPV_RC_WR_CMP_SWP] = { DPV_ROCE_CMP_SWAP },
	[DPV_RC_WR_FETCH_ADD] = { DPV_ROCE_FETCH_ADD },
	[DPV_RC_WR_SEND_INV] = { DPV_ROCE_SEND_ONLY_INV, DPV_ROCE_SEND_FIRST, DPV_ROCE_SEND_MIDDLE,
				 DPV_ROCE_SEND_LAST_INV },
};

int dpv__rc_wr_check(const struct dpv_rc_config *cfg, const struct dpv_rc_send_wr *wr)
{
	if ((wr->opcode > DPV_RC_WR_FETCH_ADD && wr->opcode != DPV_RC_WR_SEND_INV) ||
	    wr->length > DPV_RC_MAX_MSG)
		return -EINVAL;
	/* UC has no SEND with IETH on the wire (IBA 9.2; rxe fails such a WR) */
	if (cfg->uc && (wr_is_rd_atomic(wr->opcode) || wr->opcode == DPV_RC_WR_SEND_INV))
		return -EINVAL;
	if ((wr->opcode == DPV_RC_WR_CMP_SWP || wr->opcode == DPV_RC_WR_FETCH_ADD) &&
	    (wr->length != 8 || (wr->remote_addr & 7) != 0))
		return -EINVAL;
	/* a READ's responses take one PSN each: keep every PSN comparison within 2^23 */
	if (wr->opcode == DPV_RC_WR_READ && rc_npkts(wr->length, cfg->mtu) > (1u << 22))
		return -EINVAL;
	return 0;
}

int dpv__rc_post_send(struct dpv_rc *rc, const struct dpv_rc_send_wr *wr, uint64_t now)
{
	struct dpv_rc_swqe *w;
	int ret = dpv__rc_wr_check(&rc->cfg, wr);

	if (ret < 0)
		return ret;
	if (rc->sq_tail - rc->sq_head >= rc->cfg.max_send_wr)
		return -ENOMEM;
	w = sq_at(rc, rc->sq_tail++);
	w->wr = *wr;
	w->state = SWQE_POSTED;
	if (rc->err) {
		dpv__rc_complete_send(rc, DPV_RC_WC_WR_FLUSH_ERR);
		return 0;
	}
	dpv__rc_req_progress(rc, now);
	return 0;
}

/* Whether the WR at sq_cur may start: READ/atomics within max_rd_atomic, a FENCE after every
 * earlier READ/atomic is answered (IBA 10.8.3.3; rxe waits for every earlier WR). */
static bool can_start(const struct dpv_rc *rc, const struct dpv_rc_swqe *w)
{
	if (wr_is_rd_atomic(w->wr.opcode) && rc->req.rd_atomic >= rc->rd_atomic_max)
		return false;
	return !(w->wr.flags & DPV_RC_SEND_FENCE) || rc->req.rd_atomic == 0;
}

static void start(struct dpv_rc *rc, struct dpv_rc_swqe *w)
{
	uint32_t n = w->wr.opcode == DPV_RC_WR_CMP_SWP || w->wr.opcode == DPV_RC_WR_FETCH_ADD ?
		     1 : rc_npkts(w->wr.length, rc->cfg.mtu);

	w->first_psn = rc->req.next_psn;
	w->last_psn = psn_add(w->first_psn, n - 1);
	w->state = SWQE_STARTED;
	rc->req.next_psn = psn_add(w->last_psn, 1);
	rc->req.psn = w->first_psn;
	if (wr_is_rd_atomic(w->wr.opcode))
		rc->req.rd_atomic++;
}

/* Headers and payload of the packet at req.psn of @w; *@last when it ends the message. */
static void build(struct dpv_rc *rc, const struct dpv_rc_swqe *w, struct dpv_roce_hdrs *h,
		  struct dpv_rc_payload *pl, bool *last)
{
	const struct dpv_rc_send_wr *wr = &w->wr;
	uint32_t mtu = rc->cfg.mtu, k = (uint32_t)dpv__psn_diff(rc->req.psn, w->first_psn);
	uint64_t off = (uint64_t)k * mtu;
	bool first = k == 0;
	int seg;

	DPV_ASSERT(wr->opcode < sizeof(seg_opcode) / sizeof(seg_opcode[0]));
	*last = rc->req.psn == w->last_psn || wr_is_rd_atomic(wr->opcode);
	seg = first && *last ? 0 : first ? 1 : *last ? 3 : 2;
	dpv__rc_hdrs_init(rc, h, seg_opcode[wr->opcode][wr_is_rd_atomic(wr->opcode) ? 0 : seg] |
			  (rc->cfg.uc ? DPV_ROCE_UC : DPV_ROCE_RC), rc->req.psn);
	h->xrceth.srqn = wr->xrc_srqn;   /* written only for XRC opcodes */
	*pl = (struct dpv_rc_payload){ .src = DPV_RC_PAYLOAD_NONE };
	switch (wr->opcode) {
	case DPV_RC_WR_READ:
		/* a retry from inside the READ asks for the rest only (as rxe's req_retry) */
		h->reth.va = wr->remote_addr + off;
		h->reth.rkey = wr->rkey;
		h->reth.len = (uint32_t)(wr->length - off);
		return;
	case DPV_RC_WR_CMP_SWP:
	case DPV_RC_WR_FETCH_ADD:
		h->atomic.va = wr->remote_addr;
		h->atomic.rkey = wr->rkey;
		h->atomic.swap_add = wr->opcode == DPV_RC_WR_CMP_SWP ? wr->swap : wr->compare_add;
		h->atomic.compare = wr->opcode == DPV_RC_WR_CMP_SWP ? wr->compare_add : 0;
		return;
	}
	pl->len = (uint32_t)(wr->length - off < mtu ? wr->length - off : mtu);
	if (pl->len != 0) {
		pl->src = DPV_RC_PAYLOAD_WR;
		pl->handle = wr->handle;
		pl->offset = (uint32_t)off;
	}
	if (first && (wr->opcode == DPV_RC_WR_WRITE || wr->opcode == DPV_RC_WR_WRITE_IMM)) {
		h->reth.va = wr->remote_addr;
		h->reth.rkey = wr->rkey;
		h->reth.len = wr->length;
	}
	if (*last && (wr->opcode == DPV_RC_WR_SEND_IMM || wr->opcode == DPV_RC_WR_WRITE_IMM))
		h->imm = wr->imm;
	if (*last && wr->opcode == DPV_RC_WR_SEND_INV)
		h->ieth_rkey = wr->inv_rkey;
	h->bth.se = *last && (wr->flags & DPV_RC_SEND_SOLICITED) &&
		    wr->opcode != DPV_RC_WR_WRITE;
}

/* AckReq on the last packet of a message, every DPV_RC_ACKREQ_EVERY packets, and on the
 * packet that fills the window (the requester waits for its ACK). */
static bool ack_req(struct dpv_rc *rc, bool last)
{
	if (rc->cfg.uc)
		return false;
	if (last || ++rc->req.noack >= DPV_RC_ACKREQ_EVERY ||
	    dpv__psn_diff(rc->req.psn, rc->comp.psn) + 1 >= DPV_RC_MAX_UNACKED) {
		rc->req.noack = 0;
		return true;
	}
	return false;
}

/* After the packet at req.psn went out: PSNs, the timer, the next packet or WR. */
static void sent(struct dpv_rc *rc, struct dpv_rc_swqe *w, bool last, uint64_t now)
{
	uint32_t end = w->wr.opcode == DPV_RC_WR_READ ? psn_add(w->last_psn, 1) :
		       psn_add(rc->req.psn, 1);

	if (dpv__psn_diff(end, rc->req.sent_max) > 0)
		rc->req.sent_max = end;
	else
		rc->stats.retransmits++;
	rc->req.psn = end;
	if (!rc->cfg.uc && rc->timeout_ns != 0 && rc->comp.ack_deadline == DPV_RC_NEVER)
		rc->comp.ack_deadline = now + rc->timeout_ns;
	if (!last)
		return;
	rc->sq_cur++;
	if (rc->cfg.uc) {	/* nothing to wait for: done once on the wire */
		rc->comp.psn = end;
		dpv__rc_complete_send(rc, DPV_RC_WC_SUCCESS);
	}
}

/* Emit one packet of the WR at sq_cur. false: stop sending for now. */
static bool send_one(struct dpv_rc *rc, struct dpv_rc_swqe *w, uint64_t now)
{
	struct dpv_roce_hdrs h;
	struct dpv_rc_payload pl;
	bool last;
	int ret;

	build(rc, w, &h, &pl, &last);
	h.bth.ackreq = ack_req(rc, last);
	ret = dpv__rc_emit(rc, &h, &pl);
	if (ret == -ENOBUFS)
		return false;
	if (ret == -EFAULT) {
		/* the gather list cannot be read: this WR fails once the ones before it are done */
		w->state = SWQE_FAILED;
		w->status = DPV_RC_WC_LOC_PROT_ERR;
		if (rc->sq_head == rc->sq_cur)
			dpv__rc_enter_error(rc, true, w->status);
		return false;
	}
	sent(rc, w, last, now);
	return true;
}

void dpv__rc_req_progress(struct dpv_rc *rc, uint64_t now)
{
	while (!rc->err && !rc->comp.rnr_wait && rc->sq_cur != rc->sq_tail) {
		struct dpv_rc_swqe *w = sq_at(rc, rc->sq_cur);

		if (w->state == SWQE_FAILED)
			return;
		if (w->state == SWQE_POSTED) {
			if (rc->req.sqd || !can_start(rc, w))
				return;
			start(rc, w);
		}
		if (!rc->cfg.uc &&
		    dpv__psn_diff(rc->req.psn, rc->comp.psn) >= DPV_RC_MAX_UNACKED)
			return;
		if (!send_one(rc, w, now))
			return;
	}
}

void dpv__rc_set_sqd(struct dpv_rc *rc, bool on, uint64_t now)
{
	rc->req.sqd = on;
	if (!on)
		dpv__rc_req_progress(rc, now);
}

bool dpv__rc_sq_drained(const struct dpv_rc *rc)
{
	return rc->sq_head == rc->sq_tail || sq_at(rc, rc->sq_head)->state == SWQE_POSTED;
}

void dpv__rc_req_rewind(struct dpv_rc *rc, uint32_t psn)
{
	uint32_t i;

	for (i = rc->sq_head; i != rc->sq_tail; i++) {
		struct dpv_rc_swqe *w = sq_at(rc, i);

		if (w->state != SWQE_STARTED)
			break;
		if (dpv__psn_diff(psn, w->last_psn) <= 0) {
			rc->sq_cur = i;
			/* inside a READ: from the first response not received */
			rc->req.psn = dpv__psn_diff(psn, w->first_psn) < 0 ? w->first_psn : psn;
			return;
		}
	}
	rc->sq_cur = i;
	rc->req.psn = rc->req.next_psn;
}
