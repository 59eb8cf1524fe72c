/* SPDX-License-Identifier: BSD-3-Clause */
/* The responder. RC (IBA 9.7.5.2, rxe's rxe_resp.c for the choices the IBA leaves): requests
 * are executed in PSN order only; a PSN ahead of the expected one gets one sequence-error NAK
 * and is dropped; a PSN behind it is a duplicate: a SEND/WRITE is acknowledged again, a READ
 * answered again from its responder resource, an atomic answered from the saved result and
 * never executed twice. Then, in rxe's order: opcode sequence, QP access rights, receive WQE
 * (none: RNR NAK), lengths, R_Key, execution, acknowledgement (when AckReq asks; atomics
 * always). Errors NAK with the failing PSN and move the QP to ERR (IBA class C).
 * UC (IBA 9.8.3): no acknowledgement; a gap in PSNs, or any error, drops the message under
 * way (its receive WQE is used again for the next one) until a FIRST/ONLY starts anew.
 * Everything here is untrusted input: nothing is written outside what the receive WQE's
 * length or mem_check granted. */
#include <errno.h>

#include "rc_priv.h"

#define F(x) DPV_ROCE_F_##x

enum { MSG_NONE, MSG_SEND, MSG_WRITE };	/* resp.in_msg: the message under way */

/* an error found while executing: the NAK and the receive completion it gives */
struct fail {
	uint8_t syndrome;
	uint8_t status;
};

static const struct fail INV_REQ = { DPV_AETH_NAK_INV_REQ, DPV_RC_WC_REM_INV_REQ_ERR };
static const struct fail REM_ACCESS = { DPV_AETH_NAK_REM_ACCESS, DPV_RC_WC_REM_ACCESS_ERR };
static const struct fail LEN_ERR = { DPV_AETH_NAK_INV_REQ, DPV_RC_WC_LOC_LEN_ERR };
static const struct fail RECV_PROT = { DPV_AETH_NAK_REM_OP, DPV_RC_WC_LOC_PROT_ERR };
static const struct fail BAD_INV = { DPV_AETH_NAK_INV_REQ, DPV_RC_WC_REM_INV_REQ_ERR };

static int emit_ack(struct dpv_rc *rc, uint8_t syndrome, uint32_t psn)
{
	struct dpv_roce_hdrs h;
	struct dpv_rc_payload pl = { .src = DPV_RC_PAYLOAD_NONE };

	dpv__rc_hdrs_init(rc, &h, DPV_ROCE_RC | DPV_ROCE_ACK, psn);
	h.aeth.syndrome = syndrome;
	h.aeth.msn = rc->resp.msn & 0xFFFFFF;
	return dpv__rc_emit(rc, &h, &pl);	/* a lost ACK is asked for again */
}

/* The ACK requests asked for since the last flush, before anything else the responder
 * sends: responses leave in PSN order. */
static void ack_due_flush(struct dpv_rc *rc)
{
	if (!rc->resp.ack_due)
		return;
	rc->resp.ack_due = false;
	emit_ack(rc, DPV_AETH_CREDIT_INVALID, rc->resp.ack_due_psn);
}

/* An ACK or NAK now. A plain ACK is of a PSN at or after the one due (the request just
 * executed, or the last one done for a duplicate): it stands for the ACK due as well. */
static int send_ack(struct dpv_rc *rc, uint8_t syndrome, uint32_t psn)
{
	if (syndrome == DPV_AETH_CREDIT_INVALID)
		rc->resp.ack_due = false;
	else
		ack_due_flush(rc);
	return emit_ack(rc, syndrome, psn);
}

static void send_atomic_ack(struct dpv_rc *rc, const struct dpv_rc_res *res)
{
	struct dpv_roce_hdrs h;
	struct dpv_rc_payload pl = { .src = DPV_RC_PAYLOAD_NONE };

	ack_due_flush(rc);
	dpv__rc_hdrs_init(rc, &h, DPV_ROCE_RC | DPV_ROCE_ATOMIC_ACK, res->first_psn);
	h.aeth.syndrome = DPV_AETH_CREDIT_INVALID;
	h.aeth.msn = rc->resp.msn & 0xFFFFFF;
	h.atomic_ack.orig = res->orig;
	dpv__rc_emit(rc, &h, &pl);
}

/* The receive WQE at the head is done; @h (NULL on errors) gives the immediate and SE. */
static void complete_recv(struct dpv_rc *rc, uint8_t status, uint8_t opcode, uint32_t byte_len,
			  const struct dpv_roce_hdrs *h)
{
	struct dpv_rc_rwqe *w = rq_at(rc, rc->rq_head++);
	struct dpv_rc_recv_cqe c = { .handle = w->handle, .status = status, .opcode = opcode,
				     .byte_len = byte_len };

	if (h != NULL) {
		c.with_imm = dpv__roce_opinfo(h->bth.opcode)->flags & F(IMM);
		c.imm = c.with_imm ? h->imm : 0;
		c.solicited = h->bth.se;
		c.with_inv = dpv__roce_opinfo(h->bth.opcode)->flags & F(IETH);
		c.inv_rkey = c.with_inv ? h->ieth_rkey : 0;
	}
	rc->resp.recv_off = 0;
	rc->ops->recv_done(rc->ctx, &c);
}

/* The message under way is given up (UC, or before an error): its receive WQE, if it had
 * one, is filled again from the start by the next message. */
static void abandon(struct dpv_rc *rc)
{
	rc->resp.in_msg = MSG_NONE;
	rc->resp.recv_off = 0;
	rc->resp.w_resid = 0;
}

/* RC class C error at PSN @psn: NAK, the receive WQE being filled completes in error, ERR.
 * UC: the message is dropped (class D), unless the receive WQE itself is bad (class A). */
static void fail(struct dpv_rc *rc, struct fail f, uint32_t psn)
{
	if (rc->cfg.uc && f.status != DPV_RC_WC_LOC_PROT_ERR) {
		abandon(rc);
		rc->resp.drop_msg = true;
		rc->stats.dropped++;
		return;
	}
	if (!rc->cfg.uc)
		send_ack(rc, f.syndrome, psn);
	if (rc->resp.in_msg == MSG_SEND && rc->rq_head != rc->rq_tail)
		complete_recv(rc, f.status, DPV_RC_WC_RECV, 0, NULL);
	dpv__rc_enter_error(rc, false, 0);
}

static void rnr(struct dpv_rc *rc, uint32_t psn)
{
	if (rc->cfg.uc) {	/* class D: the message is lost */
		abandon(rc);
		rc->resp.drop_msg = true;
		rc->stats.dropped++;
		return;
	}
	rc->stats.rnr_naks_sent++;
	send_ack(rc, DPV_AETH_RNR_NAK | rc->cfg.min_rnr_timer, psn);
}

/* The request at the expected PSN is done: expect the next one; acknowledge it, if asked,
 * when the caller's burst of packets is done (dpv__rc_rx_flush): one ACK for all of them. */
static void executed(struct dpv_rc *rc, const struct dpv_roce_hdrs *h)
{
	rc->resp.psn = psn_add(h->bth.psn, 1);
	rc->resp.ack_psn = rc->resp.psn;
	if (!rc->cfg.uc && h->bth.ackreq) {
		rc->resp.ack_due = true;
		rc->resp.ack_due_psn = h->bth.psn;
	}
}

/* May the peer do @access on [va, va + len) under @rkey? (len 0 needs no key at all) */
static int mem_ok(struct dpv_rc *rc, uint32_t rkey, uint64_t va, uint32_t len, uint32_t access)
{
	if (len == 0)
		return 0;
	if (va + len < va)
		return -EACCES;
	return rc->ops->mem_check(rc->ctx, rkey, va, len, access);
}

static struct fail mem_fail(int err)
{
	static const struct fail rem_op = { DPV_AETH_NAK_REM_OP, DPV_RC_WC_REM_OP_ERR };

	return err == -EACCES ? REM_ACCESS : rem_op;
}

static void do_send(struct dpv_rc *rc, const struct dpv_roce_hdrs *h, const uint8_t *payload,
		    uint32_t len)
{
	uint32_t f = dpv__roce_opinfo(h->bth.opcode)->flags;
	struct dpv_rc_rwqe *w;

	if (rc->rq_head == rc->rq_tail) {	/* only at a FIRST/ONLY: one is kept after */
		rnr(rc, h->bth.psn);
		return;
	}
	w = rq_at(rc, rc->rq_head);
	if (f & F(FIRST))
		rc->resp.recv_off = 0;
	rc->resp.in_msg = MSG_SEND;
	if (len > w->length - rc->resp.recv_off) {
		fail(rc, LEN_ERR, h->bth.psn);
		return;
	}
	if (len != 0 && rc->ops->recv_write(rc->ctx, w->handle, rc->resp.recv_off, payload,
					    len) < 0) {
		fail(rc, RECV_PROT, h->bth.psn);
		return;
	}
	rc->resp.recv_off += len;
	/* remote invalidation (IBA 10.6.7.2.3, rxe's invalidate_rkey): the key stops working
	 * before the receive completes */
	if ((f & F(IETH)) && rc->ops->mem_invalidate(rc->ctx, h->ieth_rkey) < 0) {
		fail(rc, BAD_INV, h->bth.psn);
		return;
	}
	if (f & F(LAST)) {
		complete_recv(rc, DPV_RC_WC_SUCCESS, DPV_RC_WC_RECV, rc->resp.recv_off, h);
		rc->resp.in_msg = MSG_NONE;
		rc->resp.msn++;
	}
	executed(rc, h);
}

static void do_write(struct dpv_rc *rc, const struct dpv_roce_hdrs *h, const uint8_t *payload,
		     uint32_t len)
{
	uint32_t f = dpv__roce_opinfo(h->bth.opcode)->flags;
	int err;

	if (f & F(FIRST)) {
		if (h->reth.len > DPV_RC_MAX_MSG) {
			fail(rc, INV_REQ, h->bth.psn);
			return;
		}
		err = mem_ok(rc, h->reth.rkey, h->reth.va, h->reth.len,
			     DPV_RC_ACCESS_REMOTE_WRITE);
		if (err < 0) {
			fail(rc, mem_fail(err), h->bth.psn);
			return;
		}
		rc->resp.w_rkey = h->reth.rkey;
		rc->resp.w_va = h->reth.va;
		rc->resp.w_len = rc->resp.w_resid = h->reth.len;
	}
	/* the packets must carry exactly the RETH's length, the last one what is left */
	if (len > rc->resp.w_resid || ((f & F(LAST)) && len != rc->resp.w_resid)) {
		fail(rc, INV_REQ, h->bth.psn);
		return;
	}
	if ((f & F(LAST)) && (f & F(IMM)) && rc->rq_head == rc->rq_tail) {
		rnr(rc, h->bth.psn);	/* before its bytes: the retry brings them again */
		return;
	}
	if (len != 0) {
		err = rc->ops->mem_write(rc->ctx, rc->resp.w_rkey, rc->resp.w_va, payload, len);
		if (err < 0) {
			fail(rc, mem_fail(err), h->bth.psn);
			return;
		}
	}
	rc->resp.w_va += len;
	rc->resp.w_resid -= len;
	if (f & F(LAST)) {
		if (f & F(IMM))
			complete_recv(rc, DPV_RC_WC_SUCCESS, DPV_RC_WC_RECV_RDMA_WITH_IMM,
				      rc->resp.w_len, h);
		rc->resp.in_msg = MSG_NONE;
		rc->resp.msn++;
	} else {
		rc->resp.in_msg = MSG_WRITE;
	}
	executed(rc, h);
}

static struct dpv_rc_res *res_new(struct dpv_rc *rc, uint8_t type, uint32_t first,
				  uint32_t last)
{
	/* the requester keeps at most max_rd_atomic outstanding, so the oldest is done */
	struct dpv_rc_res *res = &rc->resp.res[rc->resp.res_next++ % rc->cfg.max_dest_rd_atomic];

	if (rc->resp.rd == res)
		rc->resp.rd = NULL;
	res->type = type;
	res->first_psn = first;
	res->last_psn = last;
	return res;
}

/* Send the READ responses of @res from @psn (va, len: what is left from there). */
static void read_start(struct dpv_rc *rc, struct dpv_rc_res *res, uint32_t psn, uint64_t va,
		       uint32_t len)
{
	res->cur_psn = psn;
	res->cur_va = va;
	res->resid = len;
	rc->resp.rd = res;
	dpv__rc_resp_progress(rc);
}

static void do_read(struct dpv_rc *rc, const struct dpv_roce_hdrs *h)
{
	uint32_t n = rc_npkts(h->reth.len, rc->cfg.mtu);
	struct dpv_rc_res *res;
	int err;

	if (rc->cfg.max_dest_rd_atomic == 0 || h->reth.len > DPV_RC_MAX_MSG || n > (1u << 22)) {
		fail(rc, INV_REQ, h->bth.psn);
		return;
	}
	err = mem_ok(rc, h->reth.rkey, h->reth.va, h->reth.len, DPV_RC_ACCESS_REMOTE_READ);
	if (err < 0) {
		fail(rc, mem_fail(err), h->bth.psn);
		return;
	}
	res = res_new(rc, RES_READ, h->bth.psn, psn_add(h->bth.psn, n - 1));
	res->rkey = h->reth.rkey;
	res->va = h->reth.va;
	res->length = h->reth.len;
	rc->resp.msn++;		/* at once for a READ (IBA C9-148, as rxe) */
	rc->resp.psn = psn_add(res->last_psn, 1);
	read_start(rc, res, h->bth.psn, res->va, res->length);
}

static void do_atomic(struct dpv_rc *rc, const struct dpv_roce_hdrs *h)
{
	uint8_t op = (h->bth.opcode & 0x1F) == DPV_ROCE_CMP_SWAP ? DPV_RC_WR_CMP_SWP :
		     DPV_RC_WR_FETCH_ADD;
	uint64_t compare_add = op == DPV_RC_WR_CMP_SWP ? h->atomic.compare : h->atomic.swap_add;
	struct dpv_rc_res *res;
	uint64_t orig;
	int err;

	if (rc->cfg.max_dest_rd_atomic == 0 || (h->atomic.va & 7) != 0) {
		fail(rc, INV_REQ, h->bth.psn);
		return;
	}
	err = mem_ok(rc, h->atomic.rkey, h->atomic.va, 8, DPV_RC_ACCESS_REMOTE_ATOMIC);
	if (err == 0)
		err = rc->ops->mem_atomic(rc->ctx, h->atomic.rkey, h->atomic.va, op, compare_add,
					  h->atomic.swap_add, &orig);
	if (err < 0) {
		fail(rc, mem_fail(err), h->bth.psn);
		return;
	}
	res = res_new(rc, RES_ATOMIC, h->bth.psn, h->bth.psn);
	res->orig = orig;
	rc->resp.msn++;
	rc->resp.psn = rc->resp.ack_psn = psn_add(h->bth.psn, 1);
	send_atomic_ack(rc, res);
}

static struct dpv_rc_res *res_find(struct dpv_rc *rc, uint8_t type, uint32_t psn)
{
	for (uint32_t i = 0; i < rc->cfg.max_dest_rd_atomic; i++) {
		struct dpv_rc_res *res = &rc->resp.res[i];

		if (res->type == type && dpv__psn_diff(psn, res->first_psn) >= 0 &&
		    dpv__psn_diff(psn, res->last_psn) <= 0)
			return res;
	}
	return NULL;
}

/* A duplicate READ: the same request or its tail from a PSN inside it (the requester asks
 * for the rest after losing some responses), with the same R_Key. */
static void dup_read(struct dpv_rc *rc, const struct dpv_roce_hdrs *h)
{
	struct dpv_rc_res *res = res_find(rc, RES_READ, h->bth.psn);
	uint64_t skip;
	int err;

	if (res == NULL)
		goto drop;	/* class D: a resource long reused */
	skip = (uint64_t)dpv__psn_diff(h->bth.psn, res->first_psn) * rc->cfg.mtu;
	if (h->reth.rkey != res->rkey || skip > res->length || h->reth.va != res->va + skip ||
	    h->reth.len != res->length - skip)
		goto drop;
	/* the key may have gone since: check again (rxe's rxe_recheck_mr) */
	err = mem_ok(rc, res->rkey, h->reth.va, h->reth.len, DPV_RC_ACCESS_REMOTE_READ);
	if (err < 0) {
		fail(rc, mem_fail(err), h->bth.psn);
		return;
	}
	read_start(rc, res, h->bth.psn, h->reth.va, h->reth.len);
	return;
drop:
	rc->stats.dropped++;
}

static void duplicate(struct dpv_rc *rc, const struct dpv_roce_hdrs *h)
{
	uint32_t f = dpv__roce_opinfo(h->bth.opcode)->flags;
	struct dpv_rc_res *res;

	rc->stats.dup_requests++;
	if (f & (F(SEND) | F(WRITE))) {
		/* acknowledge again what was done (C9-105); not past a READ being answered */
		send_ack(rc, DPV_AETH_CREDIT_INVALID, psn_add(rc->resp.ack_psn, DPV_ROCE_PSN_MASK));
	} else if (f & F(READ)) {
		dup_read(rc, h);
	} else if ((res = res_find(rc, RES_ATOMIC, h->bth.psn)) != NULL) {
		send_atomic_ack(rc, res);	/* from the cache: never executed twice */
	} else {
		rc->stats.dropped++;
	}
}

/* Does @opcode continue the message under way (or start one when none is)? */
static bool in_sequence(const struct dpv_rc *rc, uint8_t opcode)
{
	uint32_t f = dpv__roce_opinfo(opcode)->flags;

	switch (rc->resp.in_msg) {
	case MSG_SEND:
		return !(f & F(FIRST)) && (f & F(SEND));
	case MSG_WRITE:
		return !(f & F(FIRST)) && (f & F(WRITE));
	default:
		DPV_WARN_ONCE(rc->resp.in_msg != MSG_NONE, "responder state %u",
			      rc->resp.in_msg);
		return f & F(FIRST);
	}
}

/* Opcode, access rights and packet length, for a request at the expected PSN. */
static bool valid(const struct dpv_rc *rc, const struct dpv_roce_hdrs *h, uint32_t len)
{
	uint32_t f = dpv__roce_opinfo(h->bth.opcode)->flags, mtu = rc->cfg.mtu;
	uint32_t need = f & F(WRITE) ? DPV_RC_ACCESS_REMOTE_WRITE :
			f & F(READ) ? DPV_RC_ACCESS_REMOTE_READ :
			f & F(ATOMIC_OP) ? DPV_RC_ACCESS_REMOTE_ATOMIC : 0;

	if ((rc->cfg.access & need) != need || ((f & F(IETH)) && rc->cfg.uc))
		return false;
	if ((f & F(FIRST)) && (f & F(LAST)))
		return len <= mtu;
	if (f & (F(FIRST) | F(MIDDLE)))
		return len == mtu;
	return len >= 1 && len <= mtu;	/* LAST */
}

static void execute(struct dpv_rc *rc, const struct dpv_roce_hdrs *h, const uint8_t *payload,
		    uint32_t len)
{
	uint32_t f = dpv__roce_opinfo(h->bth.opcode)->flags;

	if (f & F(SEND))
		do_send(rc, h, payload, len);
	else if (f & F(WRITE))
		do_write(rc, h, payload, len);
	else if (f & F(READ))
		do_read(rc, h);
	else
		do_atomic(rc, h);
}

static void rc_rx(struct dpv_rc *rc, const struct dpv_roce_hdrs *h, const uint8_t *payload,
		  uint32_t len)
{
	int32_t d = dpv__psn_diff(h->bth.psn, rc->resp.psn);

	if (d > 0) {
		/* one NAK until the expected PSN comes (the next gap may try again if this one
		 * found no room) */
		if (!rc->resp.nak_sent) {
			rc->resp.nak_sent = send_ack(rc, DPV_AETH_NAK_PSN_SEQ, rc->resp.psn) == 0;
			rc->stats.seq_naks_sent++;
		} else {
			rc->stats.dropped++;
		}
		return;
	}
	if (d < 0) {
		duplicate(rc, h);
		return;
	}
	rc->resp.nak_sent = false;
	if (!in_sequence(rc, h->bth.opcode) || !valid(rc, h, len)) {
		fail(rc, INV_REQ, h->bth.psn);
		return;
	}
	execute(rc, h, payload, len);
}

static void uc_rx(struct dpv_rc *rc, const struct dpv_roce_hdrs *h, const uint8_t *payload,
		  uint32_t len)
{
	uint32_t f = dpv__roce_opinfo(h->bth.opcode)->flags;
	int32_t d = dpv__psn_diff(h->bth.psn, rc->resp.psn);

	/* a copy of an old packet (behind the expected PSN) changes nothing (our choice: rxe
	 * would deliver an old FIRST/ONLY again); a FIRST/ONLY starts anew whatever came
	 * before it; anything else out of sequence drops the message */
	if (d < 0) {
		rc->stats.dropped++;
		return;
	}
	if (f & F(FIRST)) {
		abandon(rc);
		rc->resp.drop_msg = false;
	} else if (rc->resp.drop_msg || d != 0) {
		abandon(rc);
		rc->resp.drop_msg = true;
		rc->stats.dropped++;
		return;
	}
	if (!in_sequence(rc, h->bth.opcode) || !valid(rc, h, len)) {
		fail(rc, INV_REQ, h->bth.psn);
		return;
	}
	rc->resp.psn = h->bth.psn;
	execute(rc, h, payload, len);
}

bool dpv__rc_resp_wants_wqe(const struct dpv_rc *rc, const struct dpv_roce_hdrs *h)
{
	const struct dpv_roce_opinfo *op = dpv__roce_opinfo(h->bth.opcode);
	int32_t d = dpv__psn_diff(h->bth.psn, rc->resp.psn);

	if (rc->err || rc->rq_head != rc->rq_tail || op->name == NULL || rc->resp.rd != NULL ||
	    d < 0 || (d > 0 && !rc->cfg.uc))
		return false;
	if (op->flags & F(SEND))
		return (op->flags & F(FIRST)) != 0;
	return (op->flags & F(WRITE)) && (op->flags & F(IMM)) && (op->flags & F(LAST));
}

void dpv__rc_resp_reject(struct dpv_rc *rc, const struct dpv_roce_hdrs *h)
{
	if (rc->err || rc->resp.rd != NULL || dpv__psn_diff(h->bth.psn, rc->resp.psn) != 0) {
		rc->stats.dropped++;	/* a duplicate or a gap: as the PSN checks would */
		return;
	}
	fail(rc, INV_REQ, h->bth.psn);
}

void dpv__rc_resp_rx(struct dpv_rc *rc, const struct dpv_roce_hdrs *h, const uint8_t *payload,
		     uint32_t len)
{
	if (rc->resp.rd != NULL) {
		/* still answering a READ: responses go out in PSN order, so this waits for the
		 * requester to send it again (rare: a READ longer than DPV_RC_BURST packets, or
		 * a transmit queue without room) */
		rc->stats.dropped++;
		return;
	}
	if (rc->cfg.uc)
		uc_rx(rc, h, payload, len);
	else
		rc_rx(rc, h, payload, len);
}

void dpv__rc_rx_flush(struct dpv_rc *rc)
{
	if (!rc->err)
		ack_due_flush(rc);
}

void dpv__rc_resp_progress(struct dpv_rc *rc)
{
	uint32_t mtu = rc->cfg.mtu;

	ack_due_flush(rc);
	for (int n = 0; n < DPV_RC_BURST && rc->resp.rd != NULL && !rc->err; n++) {
		struct dpv_rc_res *res = rc->resp.rd;
		bool first = res->cur_psn == res->first_psn, last = res->resid <= mtu;
		uint8_t op = first && last ? DPV_ROCE_READ_RESP_ONLY : first ?
			     DPV_ROCE_READ_RESP_FIRST : last ? DPV_ROCE_READ_RESP_LAST :
			     DPV_ROCE_READ_RESP_MIDDLE;
		struct dpv_rc_payload pl = { .src = DPV_RC_PAYLOAD_MEM, .rkey = res->rkey,
					     .va = res->cur_va };
		struct dpv_roce_hdrs h;
		int ret;

		pl.len = last ? res->resid : mtu;
		if (pl.len == 0)
			pl.src = DPV_RC_PAYLOAD_NONE;
		/* replayed from inside the READ: MIDDLE/LAST as rxe does (first is false) */
		dpv__rc_hdrs_init(rc, &h, DPV_ROCE_RC | op, res->cur_psn);
		h.aeth.syndrome = DPV_AETH_CREDIT_INVALID;
		h.aeth.msn = rc->resp.msn & 0xFFFFFF;
		ret = dpv__rc_emit(rc, &h, &pl);
		if (ret == -ENOBUFS)
			return;
		if (ret == -EFAULT) {	/* the memory went away under the key */
			rc->resp.rd = NULL;
			fail(rc, REM_ACCESS, res->cur_psn);
			return;
		}
		res->cur_va += pl.len;
		res->resid -= pl.len;
		res->cur_psn = psn_add(res->cur_psn, 1);
		if (last)
			rc->resp.rd = NULL;
	}
}
