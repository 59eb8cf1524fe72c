/* SPDX-License-Identifier: BSD-3-Clause */
/* The completer: ACKs (coalesced or not: an ACK of PSN p acknowledges everything up to p),
 * NAKs (PSN sequence error: go back N; RNR: wait the time the NAK names, then resend;
 * invalid request / remote access / remote operational error: the WR fails and the QP goes
 * to ERR), READ responses and atomic ACKs (which acknowledge every earlier PSN too), implied
 * NAKs (an acknowledgement past a READ/atomic that got no answer), and the local ACK timer.
 * WRs complete in order, only once acknowledged or answered. Responses are untrusted: one
 * for a PSN never sent, or that does not fit the WR it names, is dropped. */
#include "rc_priv.h"

/* Progress: the oldest unacknowledged PSN moves to @psn. The retry counters start again and
 * the timer counts from now, if anything is still unacknowledged. An RNR wait ends: the
 * packet it was for got in after all (a copy of it). */
static void advance(struct dpv_rc *rc, uint32_t psn, uint64_t now)
{
	rc->comp.psn = psn;
	rc->comp.rnr_wait = false;
	rc->comp.rnr_deadline = DPV_RC_NEVER;
	rc->comp.retry_left = rc->cfg.retry_cnt;
	rc->comp.rnr_left = rc->cfg.rnr_retry;
	rc->comp.retried = false;
	rc->comp.ack_deadline = rc->timeout_ns != 0 && rc->req.sent_max != rc->comp.psn ?
				now + rc->timeout_ns : DPV_RC_NEVER;
}

/* Send again from the oldest unacknowledged PSN, retry_cnt times at most. A NAK or an implied
 * NAK starts one retry per progress (the packets in flight behind the lost one bring more);
 * a timeout always does. @count: the counter of what caused it, counted when it does. */
static void retry(struct dpv_rc *rc, uint64_t now, bool timeout, uint64_t *count)
{
	if (!timeout && rc->comp.retried)
		return;
	(*count)++;
	if (rc->comp.retry_left == 0) {
		dpv__rc_enter_error(rc, true, DPV_RC_WC_RETRY_EXC_ERR);
		return;
	}
	rc->comp.retry_left--;
	rc->comp.retried = true;
	dpv__rc_req_rewind(rc, rc->comp.psn);
	if (rc->timeout_ns != 0)
		rc->comp.ack_deadline = now + rc->timeout_ns;
}

static struct dpv_rc_swqe *head(struct dpv_rc *rc)
{
	struct dpv_rc_swqe *w;

	if (rc->sq_head == rc->sq_tail)
		return NULL;
	w = sq_at(rc, rc->sq_head);
	return w->state == SWQE_STARTED ? w : NULL;
}

/* Everything up to PSN @q is acknowledged: complete the WRs wholly at or below it. false when
 * a READ/atomic below it has no answer (its answer was lost: an implied NAK, retried). */
static bool ack_upto(struct dpv_rc *rc, uint32_t q, uint64_t now)
{
	struct dpv_rc_swqe *w;

	while ((w = head(rc)) != NULL) {
		if (dpv__psn_diff(q, w->last_psn) < 0) {
			if (!wr_is_rd_atomic(w->wr.opcode) && dpv__psn_diff(q, rc->comp.psn) >= 0)
				advance(rc, psn_add(q, 1), now);
			return true;
		}
		if (wr_is_rd_atomic(w->wr.opcode)) {
			retry(rc, now, false, &rc->stats.implied_naks);
			return false;
		}
		advance(rc, psn_add(w->last_psn, 1), now);
		dpv__rc_complete_send(rc, DPV_RC_WC_SUCCESS);
	}
	return true;
}

static uint8_t nak_status(uint8_t syndrome)
{
	switch (syndrome) {
	case DPV_AETH_NAK_INV_REQ:
		return DPV_RC_WC_REM_INV_REQ_ERR;
	case DPV_AETH_NAK_REM_ACCESS:
		return DPV_RC_WC_REM_ACCESS_ERR;
	default:	/* remote operational error, invalid RD request, reserved codes */
		return DPV_RC_WC_REM_OP_ERR;
	}
}

static void rnr_nak(struct dpv_rc *rc, uint8_t syndrome, uint64_t now)
{
	rc->stats.rnr_naks_rcvd++;
	if (rc->comp.rnr_wait)
		return;		/* a copy of the one we wait for */
	if (rc->comp.rnr_left == 0) {
		dpv__rc_enter_error(rc, true, DPV_RC_WC_RNR_RETRY_EXC_ERR);
		return;
	}
	if (rc->cfg.rnr_retry != 7)
		rc->comp.rnr_left--;
	rc->comp.rnr_wait = true;
	rc->comp.rnr_deadline = now + dpv__rc_rnr_ns(syndrome & 0x1F);
	rc->comp.ack_deadline = DPV_RC_NEVER;
	dpv__rc_req_rewind(rc, rc->comp.psn);
}

/* ACK, RNR NAK or NAK with PSN @p. */
static void ack(struct dpv_rc *rc, const struct dpv_roce_hdrs *h, uint32_t p, uint64_t now)
{
	uint8_t syn = h->aeth.syndrome, type = syn & DPV_AETH_TYPE_MASK;
	struct dpv_rc_swqe *w;

	if (type == DPV_AETH_ACK) {
		ack_upto(rc, p, now);
		return;
	}
	if (type != DPV_AETH_RNR_NAK && type != DPV_AETH_NAK) {
		rc->stats.dropped++;
		return;
	}
	/* a NAK acknowledges what came before the PSN it names */
	if (!ack_upto(rc, psn_add(p, DPV_ROCE_PSN_MASK), now) || p != rc->comp.psn ||
	    (w = head(rc)) == NULL) {
		rc->stats.dropped++;
		return;
	}
	if (type == DPV_AETH_RNR_NAK) {
		rnr_nak(rc, syn, now);
	} else if (syn == DPV_AETH_NAK_PSN_SEQ) {
		rc->stats.seq_naks_rcvd++;
		if (!rc->comp.rnr_wait)
			retry(rc, now, false, &rc->stats.seq_retries);
	} else {
		dpv__rc_enter_error(rc, true, nak_status(syn));
	}
}

/* A READ response of PSN @p: its bytes go to the READ WR at the head, in order, each packet
 * the size the MTU and the remaining length say it must have. */
static void read_resp(struct dpv_rc *rc, const struct dpv_roce_hdrs *h, const uint8_t *payload,
		      uint32_t len, uint32_t p, uint64_t now)
{
	uint32_t f = dpv__roce_opinfo(h->bth.opcode)->flags, mtu = rc->cfg.mtu, k, want;
	struct dpv_rc_swqe *w;
	uint64_t off;
	bool last;

	if ((f & DPV_ROCE_F_AETH) && (h->aeth.syndrome & DPV_AETH_TYPE_MASK) != DPV_AETH_ACK)
		goto drop;
	if (!ack_upto(rc, psn_add(p, DPV_ROCE_PSN_MASK), now))
		return;
	w = head(rc);
	if (w == NULL || w->wr.opcode != DPV_RC_WR_READ || dpv__psn_diff(p, w->last_psn) > 0)
		goto drop;
	if (p != rc->comp.psn) {
		/* a response missing before this one: ask again from it */
		if (dpv__psn_diff(p, rc->comp.psn) > 0)
			retry(rc, now, false, &rc->stats.implied_naks);
		goto drop;
	}
	k = (uint32_t)dpv__psn_diff(p, w->first_psn);
	off = (uint64_t)k * mtu;
	last = w->wr.length - off <= mtu;
	want = last ? (uint32_t)(w->wr.length - off) : mtu;
	/* after a retry from inside the READ, rxe answers with MIDDLE/LAST, the IBA's wording
	 * allows FIRST/ONLY: both are taken, but never a MIDDLE/LAST at its first PSN */
	if (len != want || !(f & DPV_ROCE_F_LAST) != !last || (k == 0 && !(f & DPV_ROCE_F_FIRST)))
		goto drop;
	if (len != 0 && rc->ops->wr_write(rc->ctx, w->wr.handle, (uint32_t)off, payload, len) < 0) {
		dpv__rc_enter_error(rc, true, DPV_RC_WC_LOC_PROT_ERR);
		return;
	}
	advance(rc, psn_add(p, 1), now);
	if (last)
		dpv__rc_complete_send(rc, DPV_RC_WC_SUCCESS);
	return;
drop:
	rc->stats.dropped++;
}

static void atomic_ack(struct dpv_rc *rc, const struct dpv_roce_hdrs *h, uint32_t p,
		       uint64_t now)
{
	uint64_t orig = h->atomic_ack.orig;
	struct dpv_rc_swqe *w;

	if ((h->aeth.syndrome & DPV_AETH_TYPE_MASK) != DPV_AETH_ACK) {
		rc->stats.dropped++;
		return;
	}
	if (!ack_upto(rc, psn_add(p, DPV_ROCE_PSN_MASK), now))
		return;
	w = head(rc);
	if (w == NULL || p != rc->comp.psn || p != w->first_psn ||
	    (w->wr.opcode != DPV_RC_WR_CMP_SWP && w->wr.opcode != DPV_RC_WR_FETCH_ADD)) {
		rc->stats.dropped++;
		return;
	}
	if (rc->ops->wr_write(rc->ctx, w->wr.handle, 0, &orig, sizeof(orig)) < 0) {
		dpv__rc_enter_error(rc, true, DPV_RC_WC_LOC_PROT_ERR);
		return;
	}
	advance(rc, psn_add(p, 1), now);
	dpv__rc_complete_send(rc, DPV_RC_WC_SUCCESS);
}

void dpv__rc_comp_rx(struct dpv_rc *rc, const struct dpv_roce_hdrs *h, const uint8_t *payload,
		     uint32_t len, uint64_t now)
{
	uint32_t p = h->bth.psn & DPV_ROCE_PSN_MASK, before = rc->comp.psn;

	/* UC has no responses; below the oldest unacknowledged PSN there is nothing left to
	 * learn; at or past the highest PSN sent it answers nothing we asked */
	if (rc->cfg.uc || dpv__psn_diff(p, rc->comp.psn) < 0 ||
	    dpv__psn_diff(p, rc->req.sent_max) >= 0) {
		rc->stats.dropped++;
		return;
	}
	switch (h->bth.opcode & 0x1F) {
	case DPV_ROCE_ACK:
		ack(rc, h, p, now);
		break;
	case DPV_ROCE_READ_RESP_FIRST:
	case DPV_ROCE_READ_RESP_MIDDLE:
	case DPV_ROCE_READ_RESP_LAST:
	case DPV_ROCE_READ_RESP_ONLY:
		read_resp(rc, h, payload, len, p, now);
		break;
	case DPV_ROCE_ATOMIC_ACK:
		atomic_ack(rc, h, p, now);
		break;
	default:
		rc->stats.dropped++;
		return;
	}
	if (rc->err || rc->comp.psn == before)
		return;
	/* acknowledged past what is being sent again: carry on from there */
	if (dpv__psn_diff(rc->req.psn, rc->comp.psn) < 0)
		dpv__rc_req_rewind(rc, rc->comp.psn);
	/* a WR whose gather list failed completes once everything before it has */
	if (rc->sq_head != rc->sq_tail && sq_at(rc, rc->sq_head)->state == SWQE_FAILED)
		dpv__rc_enter_error(rc, true, sq_at(rc, rc->sq_head)->status);
}

void dpv__rc_comp_tick(struct dpv_rc *rc, uint64_t now)
{
	if (rc->comp.rnr_wait && now >= rc->comp.rnr_deadline) {
		rc->comp.rnr_wait = false;
		rc->comp.rnr_deadline = DPV_RC_NEVER;
		dpv__rc_req_rewind(rc, rc->comp.psn);
	}
	if (now < rc->comp.ack_deadline)
		return;
	if (rc->req.sent_max == rc->comp.psn) {
		rc->comp.ack_deadline = DPV_RC_NEVER;
		return;
	}
	retry(rc, now, true, &rc->stats.timeouts);
}
