/* SPDX-License-Identifier: BSD-3-Clause */
/* Stress: DPV_STRESS_WRS (10^7) WRs through one RAW_PACKET QP on net_null, posted in lists of
 * 1..16 with random signaling, random runs into a full SQ (ENOMEM, then polling), random CQ
 * polling (1..64 entries at a time), and now and then a WR with a freed lkey (an error
 * completion, the QP in SQE, later WRs flushed, SQE -> RTS) or the QP moved to ERR with WRs
 * outstanding (flushed, RESET -> INIT -> RTR -> RTS). Every WR carries its sequence number as
 * wr_id; the model of what is outstanding checks each completion:
 *   - a success is the oldest signaled outstanding WR (and completes the unsignaled ones
 *     before it): every signaled WR completes exactly once, in post order;
 *   - an error is the injected WR; a flush is the oldest outstanding WR;
 *   - at every step posted = completed + errors + flushed + outstanding.
 * The random seed is printed; DPV_STRESS_SEED repeats a run. */
#include <inttypes.h>

#include "dpv_test.h"

#define MAX_DEPTH 4096                 /* the model's ring: >= the QP's max_send_wr */

static uint64_t rng;

static uint32_t rnd(uint32_t n)
{
	rng ^= rng << 13;
	rng ^= rng >> 7;
	rng ^= rng << 17;
	return (uint32_t)(rng % n);
}

struct model {
	uint64_t next_id;              /* the wr_id of the next WR posted */
	uint64_t oldest;               /* the oldest outstanding WR */
	uint64_t last_signaled;        /* the newest signaled WR posted */
	uint8_t kind[MAX_DEPTH];       /* per outstanding WR: SIGNALED, BAD */
	uint64_t posted, completed, errors, flushed;
	bool in_error;                 /* an error completion or ERR seen; not recovered yet */
	bool bad_outstanding;          /* the injected WR is posted and not completed yet */
	uint64_t injected;             /* injected WRs posted */
	bool failed;
};

enum { SIGNALED = 1, BAD = 2 };

static struct ibv_qp *qp;
static struct ibv_cq *cq;
static struct ibv_mr *mr;
static uint32_t depth, dead_lkey;
static uint8_t frame[64];

static void fail(struct model *m, const char *what, uint64_t id)
{
	if (!m->failed)
		fprintf(stderr, "FAIL: %s (wr_id %" PRIu64 ", oldest outstanding %" PRIu64 ", next %"
			PRIu64 ")\n", what, id, m->oldest, m->next_id);
	m->failed = true;
}

static uint64_t outstanding(const struct model *m)
{
	return m->next_id - m->oldest;
}

static void account(struct model *m, const struct ibv_wc *wc)
{
	uint64_t id = wc->wr_id;

	if (id < m->oldest || id >= m->next_id)
		return fail(m, "a completion for no outstanding WR", id);
	switch (wc->status) {
	case IBV_WC_SUCCESS:
		if (!(m->kind[id % MAX_DEPTH] & SIGNALED))
			return fail(m, "a success for an unsignaled WR", id);
		for (uint64_t k = m->oldest; k < id; k++)
			if (m->kind[k % MAX_DEPTH] & SIGNALED)
				return fail(m, "a signaled WR skipped", k);
		m->completed += id - m->oldest + 1;
		break;
	case IBV_WC_LOC_PROT_ERR:
		if (!(m->kind[id % MAX_DEPTH] & BAD))
			return fail(m, "an error completion for a good WR", id);
		m->completed += id - m->oldest;
		m->errors++;
		m->in_error = true;
		break;
	case IBV_WC_WR_FLUSH_ERR:
		if (id != m->oldest)
			return fail(m, "a flush out of order", id);
		m->flushed++;
		m->in_error = true;
		break;
	default:
		return fail(m, ibv_wc_status_str(wc->status), id);
	}
	m->oldest = id + 1;
}

static void poll_some(struct model *m, int max)
{
	struct ibv_wc wc[64];
	int n = ibv_poll_cq(cq, max, wc);

	if (n < 0)
		return fail(m, "ibv_poll_cq failed", 0);
	for (int i = 0; i < n && !m->failed; i++)
		account(m, &wc[i]);
	if (m->posted != m->completed + m->errors + m->flushed + outstanding(m))
		fail(m, "posted != completed + errors + flushed + outstanding", 0);
}

/* Post a list of 1..16 WRs; returns the errno of the post. */
static int post_list(struct model *m, bool inject_bad)
{
	static struct ibv_send_wr wr[16];
	static struct ibv_sge sge[16];
	struct ibv_send_wr *bad = NULL;
	int n = 1 + rnd(16), rc, took = 0;
	uint64_t last = m->last_signaled;

	for (int i = 0; i < n; i++) {
		uint64_t id = m->next_id + i;
		/* often enough that an SQ of unsignaled WRs never fills (it would for good) */
		bool sig = rnd(8) == 0 || (i == n - 1 && rnd(2) == 0) || id - last >= depth / 2;

		if (sig)
			last = id;
		sge[i] = (struct ibv_sge){ (uintptr_t)frame, sizeof(frame), mr->lkey };
		if (inject_bad && i == n / 2)
			sge[i].lkey = dead_lkey;
		wr[i] = (struct ibv_send_wr){ .wr_id = id, .sg_list = &sge[i], .num_sge = 1,
					      .opcode = IBV_WR_SEND,
					      .send_flags = sig ? IBV_SEND_SIGNALED : 0,
					      .next = i + 1 < n ? &wr[i + 1] : NULL };
	}
	rc = ibv_post_send(qp, wr, &bad);
	if (rc != 0 && rc != ENOMEM)
		fail(m, "ibv_post_send refused a valid WR", (uint64_t)rc);
	for (struct ibv_send_wr *w = wr; w != NULL && w != bad; w = w->next, took++) {
		m->kind[w->wr_id % MAX_DEPTH] = (w->send_flags ? SIGNALED : 0) |
						 (w->sg_list->lkey == dead_lkey ? BAD : 0);
		if (w->send_flags)
			m->last_signaled = w->wr_id;
		if (w->sg_list->lkey == dead_lkey) {
			m->injected++;
			m->bad_outstanding = true;
		}
	}
	m->next_id += took;
	m->posted += took;
	if (rc == ENOMEM && outstanding(m) < depth)
		fail(m, "ENOMEM with free SQ slots", outstanding(m));
	return rc;
}

static void to_state(struct model *m, enum ibv_qp_state s)
{
	if (test_qp_to(qp, s) != 0)
		fail(m, "ibv_modify_qp failed", s);
}

static bool signaled_outstanding(const struct model *m)
{
	for (uint64_t k = m->oldest; k < m->next_id; k++)
		if (m->kind[k % MAX_DEPTH] & SIGNALED)
			return true;
	return false;
}

/* After an error completion (SQE) or a move to ERR: take every completion, then bring the QP
 * back to RTS. After SQE every WR is accounted for by a completion. Entering ERR flushes the
 * WRs not yet handed to the port (doc/semantics.md); the unsignaled ones already handed to it
 * after the last signaled WR completed without a CQE, as on any verbs device: once no signaled
 * WR is left and the flushes stopped, those count as completed. */
static void recover(struct model *m, bool from_err)
{
	long quiet = 0;

	for (long tries = 0; outstanding(m) > 0 && !m->failed; tries++) {
		uint64_t before = m->oldest;

		if (tries > 10000000)
			return fail(m, "WRs never completed nor flushed", outstanding(m));
		poll_some(m, 64);
		quiet = m->oldest == before ? quiet + 1 : 0;
		if (from_err && quiet > 1000 && !signaled_outstanding(m)) {
			m->completed += outstanding(m);
			m->oldest = m->next_id;
		}
	}
	if (from_err) {
		to_state(m, IBV_QPS_RESET);
		to_state(m, IBV_QPS_INIT);
		to_state(m, IBV_QPS_RTR);
	}
	to_state(m, IBV_QPS_RTS);
	m->in_error = false;
	m->bad_outstanding = false;
	m->last_signaled = m->next_id;
}

int main(void)
{
	static struct model m;
	struct ibv_context *ctx = test_open(NULL);
	struct ibv_pd *pd = ibv_alloc_pd(ctx);
	struct ibv_qp_attr attr;
	struct ibv_qp_init_attr ia;
	struct ibv_mr *dead;
	uint64_t total = getenv("DPV_STRESS_WRS") ? strtoull(getenv("DPV_STRESS_WRS"), NULL, 0)
						  : 10000000;
	uint64_t seed = getenv("DPV_STRESS_SEED") ? strtoull(getenv("DPV_STRESS_SEED"), NULL, 0)
						  : (uint64_t)getpid() * 2654435761u + 1;
	uint64_t err_moves = 0, sq_full = 0;

	printf("stress: %" PRIu64 " WRs, seed %" PRIu64 "\n", total, seed);
	rng = seed | 1;
	cq = ibv_create_cq(ctx, 2 * MAX_DEPTH, NULL, NULL, 0);
	mr = ibv_reg_mr(pd, frame, sizeof(frame), 0);
	dead = ibv_reg_mr(pd, frame, sizeof(frame), 0);
	CHECK(cq != NULL && mr != NULL && dead != NULL);
	dead_lkey = dead->lkey;
	CHECK_EQ(ibv_dereg_mr(dead), 0);
	memcpy(frame, "\x02\0\0\0\0\x02\x02\0\0\0\0\x01\x88\xb5", 14);
	qp = test_raw_qp(pd, cq, (struct ibv_qp_cap){ .max_send_wr = 256, .max_send_sge = 1 });
	CHECK_EQ(ibv_query_qp(qp, &attr, IBV_QP_CAP, &ia), 0);
	depth = attr.cap.max_send_wr;
	CHECK(depth >= 256 && depth <= MAX_DEPTH, "max_send_wr %u", depth);
	while (m.posted < total && !m.failed) {
		bool fill = rnd(64) == 0;          /* a run into a full SQ */
		bool inject = !m.bad_outstanding && rnd(1 << 16) == 0;

		do {
			if (post_list(&m, inject) == ENOMEM)
				sq_full++, fill = false;
			inject = false;
		} while (fill && !m.failed);
		if (rnd(3) == 0)
			poll_some(&m, 1 + rnd(64));
		if (m.in_error)
			recover(&m, false);
		if (rnd(1 << 16) == 0 && !m.bad_outstanding && !m.failed) {   /* ERR, WRs in flight */
			to_state(&m, IBV_QPS_ERR);
			err_moves++;
			recover(&m, true);
		}
	}
	/* the end: one signaled WR after everything, then nothing outstanding */
	if (!m.failed) {
		struct ibv_sge sge = { (uintptr_t)frame, sizeof(frame), mr->lkey };
		struct ibv_send_wr wr = { .wr_id = m.next_id, .sg_list = &sge, .num_sge = 1,
					  .opcode = IBV_WR_SEND, .send_flags = IBV_SEND_SIGNALED };
		struct ibv_send_wr *bad;

		while (outstanding(&m) >= depth && !m.failed)
			poll_some(&m, 64);
		CHECK_EQ(ibv_post_send(qp, &wr, &bad), 0);
		m.kind[m.next_id % MAX_DEPTH] = SIGNALED;
		m.next_id++;
		m.posted++;
		for (long tries = 0; outstanding(&m) > 0 && !m.failed && tries < 10000000; tries++)
			poll_some(&m, 64);
	}
	CHECK(!m.failed, "the model failed (see above)");
	CHECK_EQ(outstanding(&m), 0);
	CHECK_EQ(m.posted, m.completed + m.errors + m.flushed);
	CHECK(m.posted > total, "posted %" PRIu64, m.posted);
	CHECK_EQ(m.errors, m.injected);
	CHECK(m.errors > 0, "error completions were exercised");
	printf("stress: posted %" PRIu64 " = completed %" PRIu64 " + errors %" PRIu64
	       " + flushed %" PRIu64 "; SQ full %" PRIu64 " times, ERR %" PRIu64 " times\n",
	       m.posted, m.completed, m.errors, m.flushed, sq_full, err_moves);
	CHECK(sq_full > 0 && m.flushed > 0, "back-pressure and flushes were exercised");
	CHECK_EQ(ibv_destroy_qp(qp), 0);
	CHECK_EQ(ibv_dereg_mr(mr), 0);
	CHECK_EQ(ibv_destroy_cq(cq), 0);
	return test_finish(ctx, pd, "stress");
}
