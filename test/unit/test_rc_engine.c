/* SPDX-License-Identifier: BSD-3-Clause */
/* The RC/UC protocol engine of lib/roce (rc_engine.h) between two QPs on a simulated wire
 * (rc_sim.h): whole RoCEv2 frames, seeded drops, duplicates, reordering and corruption, a
 * simulated clock.
 * - 10^5 messages (DPV_RC_MESSAGES) of every opcode and of 0 .. 4 MTUs + 100 bytes, both QPs
 *   sending at once, at 0 %, 1 % and 5 % loss with reordering and duplicates, PSNs crossing
 *   the 24-bit wrap: every WR completes once, in order, every byte right, atomics' original
 *   values and final words exactly what post order gives, each atomic executed once;
 * - a peer that disappears: RETRY_EXC_ERR after exactly retry_cnt + 1 timeouts of simulated
 *   time, ERR, everything flushed, nothing left to run;
 * - RNR: retries after the time the NAK names, success once a WQE is posted; rnr_retry
 *   exhausted; 7 = forever;
 * - go-back-N on a sequence NAK, implied NAKs (a READ/atomic answer lost), coalesced ACKs,
 *   FENCE and max_rd_atomic, duplicate atomics answered from the cache and never executed
 *   again, access and length errors on both sides, UC loss semantics;
 * - hostile input: packets no requester or responder should see, each handled as the IBA
 *   says, nothing written outside what the callbacks grant (rc_sim.h checks every write). */
#include "dpv_test.h"
#include "rc_sim.h"

#define US 1000ull
#define MS 1000000ull

static const struct sim_opts base_opts = {
	.mtu = 1024, .psn = { 0x100, 0x2000 }, .timeout = 10, .retry_cnt = 7, .rnr_retry = 7,
	.min_rnr_timer = 1, .rd_atomic = 4,
	.access = { DPV_RC_ACCESS_REMOTE_WRITE | DPV_RC_ACCESS_REMOTE_READ |
		    DPV_RC_ACCESS_REMOTE_ATOMIC, DPV_RC_ACCESS_REMOTE_WRITE |
		    DPV_RC_ACCESS_REMOTE_READ | DPV_RC_ACCESS_REMOTE_ATOMIC },
	.sq_depth = 64, .rq_depth = 32, .recv_len = 4 * 1024 + 100, .prepost = { 32, 32 },
	.repost_delay = 20 * US, .seed = 1, .mix = 0x7F, .max_len = 4 * 1024 + 100,
};

static uint64_t timeout_ns(uint8_t t)
{
	return 4096ull << t;
}

/* A WR of @op and @len from @n aimed at the peer's regions. */
static struct dpv_rc_send_wr mk_wr(struct node *n, uint8_t op, uint32_t len)
{
	struct node *p = n->peer;
	struct dpv_rc_send_wr wr = { .opcode = op, .length = len, .imm = 0xC0FFEE00 };

	switch (op) {
	case DPV_RC_WR_WRITE:
	case DPV_RC_WR_WRITE_IMM:
		wr.rkey = p->wkey;
		wr.remote_addr = p->wva;
		break;
	case DPV_RC_WR_READ:
		wr.rkey = p->rkey;
		wr.remote_addr = p->rva + 100;
		break;
	case DPV_RC_WR_CMP_SWP:
	case DPV_RC_WR_FETCH_ADD:
		wr.length = 8;
		wr.rkey = p->akey;
		wr.remote_addr = p->ava;
		wr.compare_add = 5;
		break;
	}
	return wr;
}

static void print_stats(const char *what, struct sim *s)
{
	const struct dpv_rc_stats *a = &s->n[0].rc.stats, *b = &s->n[1].rc.stats;

	printf("%s: %llu frames (%llu dropped, %llu corrupted, %llu duplicated, %llu reordered, "
	       "%llu no room), retransmits %llu, timeouts %llu, seq NAKs %llu (%llu go-back-N), "
	       "RNR NAKs %llu, implied NAKs %llu, duplicates %llu, %.3f s simulated\n", what,
	       (unsigned long long)s->w.frames, (unsigned long long)s->w.dropped,
	       (unsigned long long)s->w.corrupted, (unsigned long long)s->w.duplicated,
	       (unsigned long long)s->w.reordered, (unsigned long long)s->w.nobufs,
	       (unsigned long long)(a->retransmits + b->retransmits),
	       (unsigned long long)(a->timeouts + b->timeouts),
	       (unsigned long long)(a->seq_naks_rcvd + b->seq_naks_rcvd),
	       (unsigned long long)(a->seq_retries + b->seq_retries),
	       (unsigned long long)(a->rnr_naks_rcvd + b->rnr_naks_rcvd),
	       (unsigned long long)(a->implied_naks + b->implied_naks),
	       (unsigned long long)(a->dup_requests + b->dup_requests), (double)s->now / 1e9);
}

static bool mass_done(struct sim *s)
{
	for (int id = 0; id < 2; id++) {
		struct node *n = &s->n[id];

		if (n->rc.err || n->done < n->quota || n->exp_head != n->exp_tail)
			return n->rc.err;
	}
	return true;
}

/* --- 10^5 messages over a lossy wire --------------------------------------------------- */

static void mass(const char *name, double loss, double nobufs, uint64_t messages,
		 uint64_t seed)
{
	struct sim_opts o = base_opts;
	struct sim *s = malloc(sizeof(*s));
	uint32_t start = 0xFFFFFF - 300;

	o.mass = true;
	o.seed = seed;
	o.quota[0] = messages / 2;
	o.quota[1] = messages - messages / 2;
	o.psn[0] = start;
	o.psn[1] = start - 1000;
	o.f = (struct sim_faults){ .drop = loss * 0.7, .corrupt = loss * 0.3, .dup = 0.01,
				   .reorder = 0.01, .nobufs = nobufs };
	sim_init(s, &o);
	for (uint64_t steps = 0; !mass_done(s) && steps < 400 * messages && sim_step(s); steps++)
		;
	print_stats(name, s);
	for (int id = 0; id < 2; id++) {
		struct node *n = &s->n[id], *p = n->peer;

		CHECK(!n->rc.err && n->qp_errors == 0, "%s: QP %d in ERR", name, id);
		CHECK_EQ(n->done, n->quota);
		CHECK_EQ(n->failed, 0);
		CHECK_EQ(n->exp_head, n->exp_tail);
		/* every atomic executed exactly once, the words as post order leaves them */
		CHECK_EQ(p->atomics_executed, n->atomics_posted);
		CHECK_EQ(p->amem[0], n->model_add);
		CHECK_EQ(p->amem[1], n->model_cas);
		/* the PSNs went through 0xFFFFFF -> 0 */
		CHECK(n->rc.req.next_psn < o.psn[id], "%s: PSNs did not wrap", name);
		CHECK(n->posted >= messages / 2, "%s: too few WRs", name);
	}
	CHECK(s->n[0].atomics_posted > 0 && s->n[1].rc.stats.dup_requests +
	      s->n[0].rc.stats.dup_requests > 0, "%s: no atomics or no duplicates seen", name);
	if (loss > 0) {
		const struct dpv_rc_stats *a = &s->n[0].rc.stats, *b = &s->n[1].rc.stats;

		CHECK(a->retransmits + b->retransmits > 0 && a->timeouts + b->timeouts > 0 &&
		      a->seq_naks_rcvd + b->seq_naks_rcvd > 0 &&
		      a->implied_naks + b->implied_naks > 0,
		      "%s: the recovery paths were not all taken", name);
	}
	sim_fini(s);
	free(s);
}

/* --- a peer that disappears ------------------------------------------------------------ */

static bool lose_all(struct sim *s, int from, const struct dpv_roce_hdrs *h, void *arg)
{
	return true;
}

static void peer_gone(void)
{
	struct sim_opts o = base_opts;
	struct sim *s = malloc(sizeof(*s));
	struct node *a = &s->n[0];
	uint64_t t0 = 5 * US, T;

	o.timeout = 6;
	o.retry_cnt = 3;
	o.prepost[0] = 3;
	sim_init(s, &o);
	T = timeout_ns(o.timeout);
	s->filter = lose_all;
	s->now = t0;
	CHECK_EQ(sim_post(a, mk_wr(a, DPV_RC_WR_SEND, 100), 1), 0);
	CHECK_EQ(sim_post(a, mk_wr(a, DPV_RC_WR_WRITE, 3000), 2), 0);
	CHECK_EQ(sim_post(a, mk_wr(a, DPV_RC_WR_READ, 2000), 3), 0);
	CHECK_EQ(s->w.frames, 1 + 3 + 1);
	sim_run(s, 10 * 1000 * MS);
	CHECK(a->rc.err && a->qp_errors == 1, "A not in ERR");
	CHECK_EQ(a->err_at - t0, (o.retry_cnt + 1) * T);	/* exactly retry_cnt + 1 timeouts */
	CHECK_EQ(a->rc.stats.timeouts, o.retry_cnt + 1);
	CHECK_EQ(s->w.frames, 5 * (o.retry_cnt + 1));		/* the first time and each retry */
	CHECK_EQ(a->nslog, 3);
	CHECK_EQ(a->slog[0].status, DPV_RC_WC_RETRY_EXC_ERR);
	CHECK_EQ(a->slog[1].status, DPV_RC_WC_WR_FLUSH_ERR);
	CHECK_EQ(a->slog[2].status, DPV_RC_WC_WR_FLUSH_ERR);
	CHECK_EQ(a->nrlog, 3);					/* receive WQEs flushed */
	CHECK(a->rlog[0].status == DPV_RC_WC_WR_FLUSH_ERR &&
	      a->rlog[2].status == DPV_RC_WC_WR_FLUSH_ERR, "receives not flushed");
	CHECK_EQ(dpv__rc_next_deadline(&a->rc), DPV_RC_NEVER);	/* nothing hangs */
	/* in ERR a post is accepted and flushed at once */
	CHECK_EQ(sim_post(a, mk_wr(a, DPV_RC_WR_SEND, 10), 4), 0);
	CHECK_EQ(a->nslog, 4);
	CHECK_EQ(a->slog[3].status, DPV_RC_WC_WR_FLUSH_ERR);
	CHECK_EQ(sim_post_recv(a), 0);
	CHECK_EQ(a->rlog[3].status, DPV_RC_WC_WR_FLUSH_ERR);
	CHECK_EQ(s->w.frames, 5 * (o.retry_cnt + 1));
	CHECK(!sim_step(s) || s->nheap == 0, "something still runs");

	/* retry_cnt 0: the first timeout ends it; timeout 0: never */
	sim_fini(s);
	o.retry_cnt = 0;
	sim_init(s, &o);
	s->filter = lose_all;
	CHECK_EQ(sim_post(a, mk_wr(a, DPV_RC_WR_SEND, 100), 1), 0);
	sim_run(s, 10 * 1000 * MS);
	CHECK_EQ(a->err_at, T);
	CHECK_EQ(a->slog[0].status, DPV_RC_WC_RETRY_EXC_ERR);
	sim_fini(s);
	o.timeout = 0;
	sim_init(s, &o);
	s->filter = lose_all;
	CHECK_EQ(sim_post(a, mk_wr(a, DPV_RC_WR_SEND, 100), 1), 0);
	CHECK_EQ(dpv__rc_next_deadline(&a->rc), DPV_RC_NEVER);
	CHECK(!a->rc.err && a->nslog == 0, "timeout 0 timed out");
	sim_fini(s);
	free(s);
}

/* --- RNR ------------------------------------------------------------------------------- */

static void rnr(void)
{
	struct sim_opts o = base_opts;
	struct sim *s = malloc(sizeof(*s));
	struct node *a = &s->n[0], *b = &s->n[1];
	uint64_t wait = dpv__rc_rnr_ns(14);
	uint64_t last_send;

	CHECK_EQ(dpv__rc_rnr_ns(0), 655360 * US);
	CHECK_EQ(dpv__rc_rnr_ns(1), 10 * US);
	CHECK_EQ(dpv__rc_rnr_ns(25), 61440 * US);
	CHECK_EQ(dpv__rc_rnr_ns(31), 491520 * US);

	/* no receive WQE: RNR NAKs with B's timer, A waits that long each time */
	o.prepost[1] = 0;
	o.min_rnr_timer = 14;		/* 1.28 ms */
	o.rnr_retry = 7;
	o.timeout = 8;			/* 1 ms: shorter than the RNR wait, and it must not fire */
	sim_init(s, &o);
	CHECK_EQ(sim_post(a, mk_wr(a, DPV_RC_WR_SEND, 3000), 7), 0);
	CHECK_EQ(sim_post(a, mk_wr(a, DPV_RC_WR_WRITE_IMM, 50), 8), 0);
	sim_run(s, 20 * MS);
	CHECK(a->rc.stats.rnr_naks_rcvd >= 10, "%llu RNR NAKs",
	      (unsigned long long)a->rc.stats.rnr_naks_rcvd);
	CHECK_EQ(a->rc.stats.timeouts, 0);
	CHECK_EQ(a->nslog, 0);
	/* every resend of the SEND's first packet came an RNR wait after the NAK before it */
	last_send = 0;
	for (uint64_t i = 0; i < a->ntlog; i++) {
		struct txlog *t = &a->tlog[i];

		if (t->opcode == DPV_ROCE_SEND_FIRST) {
			CHECK(last_send == 0 || t->at - last_send >= wait, "resent after %llu ns",
			      (unsigned long long)(t->at - last_send));
			last_send = t->at;
		}
	}
	CHECK_EQ(sim_post_recv(b), 0);
	CHECK_EQ(sim_post_recv(b), 0);
	sim_run(s, 40 * MS);
	CHECK_EQ(a->nslog, 2);
	CHECK(a->slog[0].status == DPV_RC_WC_SUCCESS && a->slog[1].status == DPV_RC_WC_SUCCESS,
	      "after posting: %u %u", a->slog[0].status, a->slog[1].status);
	CHECK_EQ(b->nrlog, 2);
	CHECK(b->rlog[0].status == 0 && b->rlog[0].byte_len == 3000 &&
	      b->rlog[1].opcode == DPV_RC_WC_RECV_RDMA_WITH_IMM && b->rlog[1].byte_len == 50,
	      "receives after RNR");
	CHECK(gen_equal(7, b->rbufs[0], 3000), "bytes after RNR");
	sim_fini(s);

	/* rnr_retry 2: the third RNR NAK ends it */
	o.rnr_retry = 2;
	o.min_rnr_timer = 1;
	sim_init(s, &o);
	CHECK_EQ(sim_post(a, mk_wr(a, DPV_RC_WR_SEND, 10), 1), 0);
	CHECK_EQ(sim_post(a, mk_wr(a, DPV_RC_WR_SEND, 10), 2), 0);
	sim_run(s, 20 * MS);
	CHECK_EQ(a->rc.stats.rnr_naks_rcvd, 3);
	CHECK(a->rc.err && a->nslog == 2 && a->slog[0].status == DPV_RC_WC_RNR_RETRY_EXC_ERR &&
	      a->slog[1].status == DPV_RC_WC_WR_FLUSH_ERR, "rnr_retry exhausted");
	CHECK(!b->rc.err, "the responder stays up");
	sim_fini(s);
	free(s);
}

/* --- go-back-N, implied NAK, coalesced ACKs --------------------------------------------- */

struct lose_psn {
	int from;
	uint8_t opcode;		/* 0xFF: any */
	uint32_t psn;
	int times;
};

static bool lose_psn(struct sim *s, int from, const struct dpv_roce_hdrs *h, void *arg)
{
	struct lose_psn *l = arg;

	if (l->times > 0 && from == l->from && h->bth.psn == l->psn &&
	    (l->opcode == 0xFF || l->opcode == h->bth.opcode)) {
		l->times--;
		return true;
	}
	return false;
}

static void go_back_n(void)
{
	struct sim_opts o = base_opts;
	struct sim *s = malloc(sizeof(*s));
	struct node *a = &s->n[0], *b = &s->n[1];
	struct lose_psn l = { .from = 0, .opcode = 0xFF, .psn = o.psn[0] + 1, .times = 1 };
	int resent = 0;

	o.mtu = 256;
	sim_init(s, &o);
	s->filter = lose_psn;
	s->filter_arg = &l;
	/* the second of four packets is lost: the third brings a sequence NAK, A resends from
	 * the second (not the first), no timeout */
	CHECK_EQ(sim_post(a, mk_wr(a, DPV_RC_WR_SEND, 1000), 9), 0);
	sim_run(s, 100 * MS);
	CHECK_EQ(a->nslog, 1);
	CHECK_EQ(a->slog[0].status, DPV_RC_WC_SUCCESS);
	CHECK_EQ(a->rc.stats.timeouts, 0);
	CHECK_EQ(a->rc.stats.seq_naks_rcvd, 1);
	CHECK_EQ(b->rc.stats.seq_naks_sent, 1);		/* one NAK for the two behind the gap */
	for (uint64_t i = 0; i < a->ntlog; i++)
		resent += a->tlog[i].psn == o.psn[0];
	CHECK_EQ(resent, 1);
	CHECK_EQ(a->rc.stats.retransmits, 3);
	CHECK(b->nrlog == 1 && b->rlog[0].byte_len == 1000 && gen_equal(9, b->rbufs[0], 1000),
	      "message after go-back-N");
	sim_fini(s);

	/* WRITE inside a message: the resent MIDDLE has no RETH, the bytes land right */
	sim_init(s, &o);
	l = (struct lose_psn){ .from = 0, .opcode = 0xFF, .psn = o.psn[0] + 2, .times = 2 };
	s->filter = lose_psn;
	s->filter_arg = &l;
	CHECK_EQ(sim_post(a, mk_wr(a, DPV_RC_WR_WRITE, 1100), 10), 0);
	sim_run(s, 100 * MS);
	CHECK(a->nslog == 1 && a->slog[0].status == 0, "WRITE after losing a middle twice");
	CHECK(gen_equal(10, b->wmem, 1100), "WRITE bytes after go-back-N");
	sim_fini(s);

	/* implied NAK: a READ's responses are lost, the ACK of the SEND after it shows it:
	 * A asks again from the first missing response, without a timeout */
	sim_init(s, &o);
	l = (struct lose_psn){ .from = 1, .opcode = DPV_ROCE_READ_RESP_MIDDLE,
			       .psn = o.psn[0] + 1, .times = 1 };
	s->filter = lose_psn;
	s->filter_arg = &l;
	CHECK_EQ(sim_post(a, mk_wr(a, DPV_RC_WR_READ, 1000), 11), 0);
	CHECK_EQ(sim_post(a, mk_wr(a, DPV_RC_WR_SEND, 10), 12), 0);
	sim_run(s, 100 * MS);
	CHECK(a->nslog == 2 && a->slog[0].status == 0 && a->slog[1].status == 0,
	      "READ + SEND after an implied NAK");
	CHECK_EQ(a->rc.stats.timeouts, 0);
	CHECK(a->rc.stats.implied_naks >= 1, "no implied NAK");
	CHECK(memcmp(a->twr[0].rbuf, b->rmem + 100, 1000) == 0, "READ bytes after the retry");
	/* the second READ request asked for the rest only: from the second response */
	{
		bool tail = false;

		for (uint64_t i = 0; i < a->ntlog; i++)
			tail |= a->tlog[i].opcode == DPV_ROCE_READ_REQUEST &&
				a->tlog[i].psn == o.psn[0] + 1 && a->tlog[i].reth_len == 1000 - 256 &&
				a->tlog[i].va == b->rva + 100 + 256;
		CHECK(tail, "no READ request for the tail");
	}
	sim_fini(s);

	/* the answer of an atomic is lost: its retry is answered from the cache */
	sim_init(s, &o);
	l = (struct lose_psn){ .from = 1, .opcode = DPV_ROCE_ATOMIC_ACK, .psn = o.psn[0],
			       .times = 3 };
	s->filter = lose_psn;
	s->filter_arg = &l;
	CHECK_EQ(sim_post(a, mk_wr(a, DPV_RC_WR_FETCH_ADD, 8), 0), 0);
	sim_run(s, 100 * MS);
	CHECK(a->nslog == 1 && a->slog[0].status == 0 && a->twr[0].orig == b->amem[0] - 5,
	      "FETCH_ADD after three lost answers");
	CHECK_EQ(b->atomics_executed, 1);
	CHECK_EQ(b->amem[0], 2000 + 5);
	CHECK_EQ(a->rc.stats.timeouts, 3);
	sim_fini(s);

	/* coalesced ACKs: B's ACKs lost but the last: one ACK completes all, in order */
	sim_init(s, &o);
	l = (struct lose_psn){ .from = 1, .opcode = DPV_ROCE_ACK, .psn = 0xFFFFFFFF };
	s->filter = lose_psn;
	s->filter_arg = &l;
	for (int i = 0; i < 8; i++) {
		l.psn = o.psn[0] + (uint32_t)i;
		l.times = i < 7;	/* ACKs of the first seven lost */
		CHECK_EQ(sim_post(a, mk_wr(a, DPV_RC_WR_SEND, 100), 20 + (uint64_t)i), 0);
		sim_run(s, s->now + 10 * US);
	}
	CHECK_EQ(a->nslog, 8);
	CHECK_EQ(a->rc.stats.timeouts, 0);
	for (int i = 0; i < 8; i++)
		CHECK_EQ(a->slog[i].handle, (uint64_t)i);
	sim_fini(s);
	free(s);
}

/* --- FENCE and the READ/atomic window -------------------------------------------------- */

static bool hold_reads(struct sim *s, int from, const struct dpv_roce_hdrs *h, void *arg)
{
	return from == 1 && *(bool *)arg && (h->bth.opcode & 0x1F) >= DPV_ROCE_READ_RESP_FIRST &&
	       (h->bth.opcode & 0x1F) <= DPV_ROCE_ATOMIC_ACK;
}

static void fence_and_window(void)
{
	struct sim_opts o = base_opts;
	struct sim *s = malloc(sizeof(*s));
	struct node *a = &s->n[0];
	struct dpv_rc_send_wr wr;
	bool hold = true;
	int reqs = 0;

	o.rd_atomic = 2;
	o.timeout = 14;
	sim_init(s, &o);
	s->filter = hold_reads;
	s->filter_arg = &hold;
	for (int i = 0; i < 5; i++)
		CHECK_EQ(sim_post(a, mk_wr(a, i & 1 ? DPV_RC_WR_FETCH_ADD : DPV_RC_WR_READ, 100),
				  (uint64_t)i), 0);
	wr = mk_wr(a, DPV_RC_WR_SEND, 10);
	wr.flags = DPV_RC_SEND_FENCE;
	CHECK_EQ(sim_post(a, wr, 5), 0);
	sim_run(s, 1 * MS);
	for (uint64_t i = 0; i < a->ntlog; i++)
		reqs += a->tlog[i].opcode == DPV_ROCE_READ_REQUEST ||
			a->tlog[i].opcode == DPV_ROCE_FETCH_ADD;
	CHECK_EQ(reqs, 2);		/* max_rd_atomic outstanding, not more */
	CHECK_EQ(a->ntlog, 2);		/* and the fenced SEND waits behind them */
	hold = false;
	sim_run(s, 500 * MS);
	CHECK_EQ(a->nslog, 6);
	for (int i = 0; i < 6; i++)
		CHECK(a->slog[i].status == 0 && a->slog[i].handle == (uint64_t)i, "WR %d", i);
	/* the SEND went out only after the last READ/atomic was answered */
	for (uint64_t i = 0; i < a->ntlog; i++)
		if (a->tlog[i].opcode == DPV_ROCE_SEND_ONLY)
			CHECK_EQ(a->tlog[i].psn, o.psn[0] + 5);
	CHECK_EQ(a->rc.req.rd_atomic, 0);
	sim_fini(s);
	free(s);
}

/* --- duplicate atomics ------------------------------------------------------------------ */

static bool dup_atomics(struct sim *s, int from, const struct dpv_roce_hdrs *h, void *arg)
{
	uint8_t f[4096 + 200];
	int len;

	if (from == 0 && (h->bth.opcode == DPV_ROCE_FETCH_ADD || h->bth.opcode == DPV_ROCE_CMP_SWAP)) {
		len = dpv__roce_frame_build(f, sizeof(f), &s->path[0], h, NULL, 0);
		for (int i = 0; i < 5; i++)	/* five copies, after the original */
			wire_put(s, 1, f, (uint32_t)len, 100 + 1000 * (uint64_t)i);
	}
	return false;
}

static void duplicate_atomic(void)
{
	struct sim_opts o = base_opts;
	struct sim *s = malloc(sizeof(*s));
	struct node *a = &s->n[0], *b = &s->n[1];
	struct dpv_rc_send_wr wr;
	int acks = 0;

	sim_init(s, &o);
	s->filter = dup_atomics;
	CHECK_EQ(sim_post(a, mk_wr(a, DPV_RC_WR_FETCH_ADD, 8), 0), 0);
	wr = mk_wr(a, DPV_RC_WR_CMP_SWP, 8);
	wr.remote_addr += 8;
	wr.compare_add = 77;
	wr.swap = 1234;
	CHECK_EQ(sim_post(a, wr, 0), 0);
	sim_run(s, 50 * MS);
	CHECK_EQ(b->atomics_executed, 2);
	CHECK_EQ(b->amem[0], 2005);
	CHECK_EQ(b->amem[1], 1234);
	CHECK_EQ(b->rc.stats.dup_requests, 10);
	for (uint64_t i = 0; i < b->ntlog; i++)
		acks += b->tlog[i].opcode == DPV_ROCE_ATOMIC_ACK;
	CHECK_EQ(acks, 12);		/* each copy answered from the cache */
	CHECK(a->nslog == 2 && a->twr[0].orig == 2000 && a->twr[1].orig == 77,
	      "atomic results %llx %llx", (unsigned long long)a->twr[0].orig,
	      (unsigned long long)a->twr[1].orig);
	sim_fini(s);
	free(s);
}

/* --- errors ----------------------------------------------------------------------------- */

/* @wr from A to B, between two SENDs: A's WR completes with @status, both QPs go to ERR
 * (class C at B), B's receive WQE under way completes with @b_recv_status. */
static void remote_error(const char *what, struct dpv_rc_send_wr wr, uint32_t b_access,
			 uint8_t status, uint8_t b_recv_status)
{
	struct sim_opts o = base_opts;
	struct sim *s = malloc(sizeof(*s));
	struct node *a = &s->n[0], *b = &s->n[1];

	o.access[1] = b_access;
	o.prepost[1] = 3;
	if (b_recv_status == DPV_RC_WC_LOC_LEN_ERR)
		o.recv_len = 1000;
	sim_init(s, &o);
	/* keys 1, 2, 3: B's write, read, atomic region; addresses below 2^40 are offsets */
	wr.rkey = wr.rkey == 1 ? b->wkey : wr.rkey == 2 ? b->rkey : wr.rkey == 3 ? b->akey :
		  wr.rkey;
	if (wr.remote_addr < (1ull << 40))
		wr.remote_addr += wr.opcode == DPV_RC_WR_READ ? b->rva :
				  wr.opcode >= DPV_RC_WR_CMP_SWP ? b->ava : b->wva;
	CHECK_EQ(sim_post(a, mk_wr(a, DPV_RC_WR_SEND, 10), 1), 0);	/* fine */
	CHECK_EQ(sim_post(a, wr, 2), 0);
	CHECK_EQ(sim_post(a, mk_wr(a, DPV_RC_WR_SEND, 10), 3), 0);	/* flushed */
	sim_run(s, 100 * MS);
	CHECK(a->nslog == 3 && a->slog[0].status == DPV_RC_WC_SUCCESS &&
	      a->slog[1].status == status && a->slog[2].status == DPV_RC_WC_WR_FLUSH_ERR,
	      "%s: A's completions %u %u %u (want %u)", what, a->slog[0].status,
	      a->slog[1].status, a->slog[2].status, status);
	CHECK(a->rc.err && a->qp_errors == 1, "%s: A not in ERR", what);
	CHECK(b->rc.err && b->qp_errors == 1, "%s: B not in ERR", what);
	CHECK_EQ(b->nrlog, 3);
	CHECK(b->rlog[0].status == DPV_RC_WC_SUCCESS && b->rlog[1].status == b_recv_status &&
	      b->rlog[2].status == DPV_RC_WC_WR_FLUSH_ERR,
	      "%s: B's receives %u %u %u", what, b->rlog[0].status, b->rlog[1].status,
	      b->rlog[2].status);
	CHECK_EQ(b->atomics_executed, 0);
	sim_fini(s);
	free(s);
}

static void errors(void)
{
	const uint32_t all = DPV_RC_ACCESS_REMOTE_WRITE | DPV_RC_ACCESS_REMOTE_READ |
			     DPV_RC_ACCESS_REMOTE_ATOMIC;
	const uint8_t FLUSH = DPV_RC_WC_WR_FLUSH_ERR;
	struct dpv_rc_send_wr w = { .opcode = DPV_RC_WR_WRITE, .length = 100, .rkey = 1 };
	struct dpv_rc_send_wr r = { .opcode = DPV_RC_WR_READ, .length = 100, .rkey = 2 };
	struct dpv_rc_send_wr at = { .opcode = DPV_RC_WR_FETCH_ADD, .length = 8, .rkey = 3 };
	struct dpv_rc_send_wr sd = { .opcode = DPV_RC_WR_SEND, .length = 2500 };

	w.rkey = 0xBAD;
	remote_error("WRITE, unknown rkey", w, all, DPV_RC_WC_REM_ACCESS_ERR, FLUSH);
	w.rkey = 2;
	remote_error("WRITE with a read key", w, all, DPV_RC_WC_REM_ACCESS_ERR, FLUSH);
	w.rkey = 1;
	w.remote_addr = 160 * 4224 - 50;
	remote_error("WRITE past the region", w, all, DPV_RC_WC_REM_ACCESS_ERR, FLUSH);
	w.remote_addr = 0;
	remote_error("WRITE, QP without remote write", w, DPV_RC_ACCESS_REMOTE_READ,
		     DPV_RC_WC_REM_INV_REQ_ERR, FLUSH);
	r.remote_addr = 64 * 1024 - 99;
	remote_error("READ past the region", r, all, DPV_RC_WC_REM_ACCESS_ERR, FLUSH);
	r.remote_addr = (uint64_t)0 - 50;	/* va + len wraps */
	remote_error("READ wrapping", r, all, DPV_RC_WC_REM_ACCESS_ERR, FLUSH);
	at.remote_addr = 16;
	remote_error("atomic past the words", at, all, DPV_RC_WC_REM_ACCESS_ERR, FLUSH);
	at.remote_addr = 0;
	remote_error("atomic, QP without atomics", at, all & ~DPV_RC_ACCESS_REMOTE_ATOMIC,
		     DPV_RC_WC_REM_INV_REQ_ERR, FLUSH);
	/* SEND longer than the receive WQE: NAK invalid request, LOC_LEN_ERR at B */
	remote_error("SEND > receive WQE", sd, all, DPV_RC_WC_REM_INV_REQ_ERR,
		     DPV_RC_WC_LOC_LEN_ERR);
}

/* what the engine refuses to post */
static void post_checks(void)
{
	struct sim_opts o = base_opts;
	struct sim *s = malloc(sizeof(*s));
	struct node *a = &s->n[0];
	struct dpv_rc_send_wr wr;
	struct dpv_rc rc;
	struct dpv_rc_config c;

	sim_init(s, &o);
	wr = mk_wr(a, DPV_RC_WR_FETCH_ADD, 8);
	wr.remote_addr += 4;
	CHECK_EQ(sim_post(a, wr, 0), -EINVAL);			/* misaligned atomic */
	wr = mk_wr(a, DPV_RC_WR_CMP_SWP, 8);
	wr.length = 4;
	CHECK_EQ(sim_post(a, wr, 0), -EINVAL);
	wr = mk_wr(a, DPV_RC_WR_SEND, 8);
	wr.opcode = 7;
	CHECK_EQ(sim_post(a, wr, 0), -EINVAL);
	wr = mk_wr(a, DPV_RC_WR_WRITE, 0);
	wr.length = DPV_RC_MAX_MSG + 1;
	CHECK_EQ(sim_post(a, wr, 0), -EINVAL);
	for (uint32_t i = 0; i < o.sq_depth; i++)
		CHECK_EQ(sim_post(a, mk_wr(a, DPV_RC_WR_SEND, 1), i), 0);
	wr = mk_wr(a, DPV_RC_WR_SEND, 1);
	CHECK_EQ(dpv__rc_post_send(&a->rc, &wr, 0), -ENOMEM);	/* SQ full */
	for (uint32_t i = 0; i < 200; i++)
		if (sim_post_recv(a) < 0)
			break;
	CHECK_EQ(a->recv_posted, o.rq_depth);				/* RQ full */
	CHECK_EQ(dpv__rc_set_requester(&a->rc, &a->cfg), -EBUSY);
	c = a->cfg;
	sim_fini(s);
	/* bad configurations */
	c.mtu = 1000;
	CHECK_EQ(dpv__rc_init(&rc, &c, &sim_ops, NULL), -EINVAL);
	c.mtu = 512;
	c.retry_cnt = 8;
	CHECK_EQ(dpv__rc_init(&rc, &c, &sim_ops, NULL), -EINVAL);
	c.retry_cnt = 7;
	c.max_send_wr = 0;
	CHECK_EQ(dpv__rc_init(&rc, &c, &sim_ops, NULL), -EINVAL);
	c.max_send_wr = 4;
	CHECK_EQ(dpv__rc_init(&rc, &c, NULL, NULL), -EINVAL);
	CHECK_EQ(dpv__rc_init(&rc, &c, &sim_ops, NULL), 0);
	dpv__rc_fini(&rc);
	free(s);
}

/* --- UC ----------------------------------------------------------------------------------- */

static void uc(void)
{
	struct sim_opts o = base_opts;
	struct sim *s = malloc(sizeof(*s));
	struct node *a = &s->n[0], *b = &s->n[1];
	uint64_t lost;

	o.uc = true;
	o.mass = true;
	o.mtu = 256;
	o.max_len = 1200;
	o.recv_len = 1200;
	o.mix = 1u << DPV_RC_WR_SEND_IMM | 1u << DPV_RC_WR_WRITE_IMM | 1u << DPV_RC_WR_WRITE;
	o.quota[0] = o.quota[1] = 5000;
	o.post_gap = 2 * US;
	o.psn[0] = 0xFFFFFF - 100;
	o.f = (struct sim_faults){ .drop = 0.03, .corrupt = 0.02, .dup = 0.02, .reorder = 0.02 };
	sim_init(s, &o);
	CHECK_EQ(sim_post(a, mk_wr(a, DPV_RC_WR_READ, 10), 0), -EINVAL);	/* no READ on UC */
	CHECK_EQ(sim_post(a, mk_wr(a, DPV_RC_WR_FETCH_ADD, 8), 0), -EINVAL);
	while (sim_step(s))
		;
	print_stats("uc 5% loss", s);
	for (int id = 0; id < 2; id++) {
		struct node *n = &s->n[id];

		/* every send completes at once, successfully; what arrives is right and in
		 * order (rc_sim.h's check_recv), the rest lost whole */
		CHECK_EQ(n->done, n->quota);
		CHECK_EQ(n->failed, 0);
		CHECK(!n->rc.err, "UC QP in ERR");
		lost = n->recv_lost + (n->exp_tail - n->exp_head);
		CHECK(n->recv_done > n->exp_tail / 2 && lost > 0, "UC: %llu received, %llu lost",
		      (unsigned long long)n->recv_done, (unsigned long long)lost);
		/* a lost message uses up no receive WQE: their handles follow each other
		 * (cb_recv_done checks), and none completed in error */
		CHECK_EQ(n->recv_done + lost, n->exp_tail);
		CHECK_EQ(n->rc.stats.seq_naks_sent + n->rc.stats.rnr_naks_sent, 0);
	}
	CHECK_EQ(a->rc.stats.pkts_rcvd + b->rc.stats.pkts_rcvd,
		 s->w.delivered);	/* no ACK, nothing dropped unseen */
	sim_fini(s);
	free(s);
}


/* --- local faults, ERR from outside, the requester's attributes at RTS --------------------- */

static void local_faults(void)
{
	struct sim_opts o = base_opts;
	struct sim *s = malloc(sizeof(*s));
	struct node *a = &s->n[0], *b = &s->n[1];
	struct dpv_rc_config c;

	/* a gather list that cannot be read: LOC_PROT_ERR once the WR before it is done */
	sim_init(s, &o);
	a->bad_gather = 1;
	CHECK_EQ(sim_post(a, mk_wr(a, DPV_RC_WR_SEND, 10), 1), 0);
	CHECK_EQ(sim_post(a, mk_wr(a, DPV_RC_WR_SEND, 3000), 2), 0);
	CHECK_EQ(sim_post(a, mk_wr(a, DPV_RC_WR_SEND, 10), 3), 0);
	CHECK(a->nslog == 0 && !a->rc.err, "the bad WR failed before the one before it");
	sim_run(s, 100 * MS);
	CHECK(a->nslog == 3 && a->slog[0].status == DPV_RC_WC_SUCCESS &&
	      a->slog[1].status == DPV_RC_WC_LOC_PROT_ERR &&
	      a->slog[2].status == DPV_RC_WC_WR_FLUSH_ERR && a->rc.err && a->qp_errors == 1,
	      "bad gather: %u %u %u", a->slog[0].status, a->slog[1].status, a->slog[2].status);
	CHECK(!b->rc.err && b->nrlog == 1, "bad gather: B");
	sim_fini(s);

	/* a receive WQE whose memory cannot be written: LOC_PROT_ERR there, REM_OP_ERR here */
	sim_init(s, &o);
	b->bad_recv = 0;
	CHECK_EQ(sim_post(a, mk_wr(a, DPV_RC_WR_SEND, 10), 1), 0);
	sim_run(s, 100 * MS);
	CHECK(a->nslog == 1 && a->slog[0].status == DPV_RC_WC_REM_OP_ERR && a->rc.err,
	      "bad receive WQE: A %u", a->slog[0].status);
	CHECK(b->rc.err && b->rlog[0].status == DPV_RC_WC_LOC_PROT_ERR &&
	      b->rlog[1].status == DPV_RC_WC_WR_FLUSH_ERR, "bad receive WQE: B");
	sim_fini(s);

	/* a READ / atomic whose answer cannot be stored: LOC_PROT_ERR, the peer unharmed */
	for (int op = DPV_RC_WR_READ; op <= DPV_RC_WR_FETCH_ADD; op += 2) {
		sim_init(s, &o);
		a->bad_scatter = 0;
		CHECK_EQ(sim_post(a, mk_wr(a, (uint8_t)op, 100), 1), 0);
		sim_run(s, 100 * MS);
		CHECK(a->nslog == 1 && a->slog[0].status == DPV_RC_WC_LOC_PROT_ERR && a->rc.err &&
		      !b->rc.err, "bad scatter list (op %d)", op);
		CHECK_EQ(b->atomics_executed, op == DPV_RC_WR_FETCH_ADD);
		sim_fini(s);
	}

	/* the peer's memory goes away under a WRITE (second packet) or a READ's answer */
	sim_init(s, &o);
	b->mem_write_fails_at = 2;
	CHECK_EQ(sim_post(a, mk_wr(a, DPV_RC_WR_WRITE, 3000), 1), 0);
	sim_run(s, 100 * MS);
	CHECK(a->nslog == 1 && a->slog[0].status == DPV_RC_WC_REM_ACCESS_ERR && a->rc.err &&
	      b->rc.err, "memory gone under a WRITE: %u", a->slog[0].status);
	sim_fini(s);
	sim_init(s, &o);
	b->bad_read_memory = true;
	CHECK_EQ(sim_post(a, mk_wr(a, DPV_RC_WR_READ, 3000), 1), 0);
	sim_run(s, 100 * MS);
	CHECK(a->nslog == 1 && a->slog[0].status == DPV_RC_WC_REM_ACCESS_ERR && a->rc.err &&
	      b->rc.err, "memory gone under a READ: %u", a->slog[0].status);
	sim_fini(s);

	/* ERR from outside: everything flushed in order, no qp_error, no deadline left */
	sim_init(s, &o);
	s->filter = lose_all;
	for (int i = 0; i < 3; i++)
		CHECK_EQ(sim_post(a, mk_wr(a, DPV_RC_WR_SEND, 10), (uint64_t)i), 0);
	dpv__rc_set_error(&a->rc);
	CHECK(a->nslog == 3 && a->slog[2].status == DPV_RC_WC_WR_FLUSH_ERR && a->qp_errors == 0 &&
	      a->nrlog == o.prepost[0] && dpv__rc_next_deadline(&a->rc) == DPV_RC_NEVER,
	      "ERR from outside");
	dpv__rc_set_error(&a->rc);	/* twice: nothing more */
	CHECK_EQ(a->nslog, 3);
	sim_fini(s);

	/* RTR first, the requester's attributes at RTS */
	sim_init(s, &o);
	c = a->cfg;
	c.sq_psn = 0xABCDEF;
	c.timeout = 5;
	CHECK_EQ(dpv__rc_set_requester(&a->rc, &c), 0);
	c.retry_cnt = 9;
	CHECK_EQ(dpv__rc_set_requester(&a->rc, &c), -EINVAL);
	s->filter = lose_all;
	CHECK_EQ(sim_post(a, mk_wr(a, DPV_RC_WR_SEND, 10), 1), 0);
	CHECK_EQ(a->tlog[0].psn, 0xABCDEF);
	CHECK_EQ(dpv__rc_next_deadline(&a->rc), timeout_ns(5));
	sim_fini(s);
	free(s);
}

/* --- the PSN window ------------------------------------------------------------------------ */

static void window(void)
{
	struct sim_opts o = base_opts;
	struct sim *s = malloc(sizeof(*s));
	struct node *a = &s->n[0], *b = &s->n[1];
	bool hold = true;
	int ackreqs = 0;

	o.mtu = 256;
	sim_init(s, &o);
	s->filter = hold_reads;		/* B's ACKs are lost while hold */
	s->filter_arg = &hold;
	CHECK_EQ(sim_post(a, mk_wr(a, DPV_RC_WR_WRITE, 200 * 256), 1), 0);
	sim_run(s, 1 * MS);
	CHECK_EQ(a->ntlog, DPV_RC_MAX_UNACKED);		/* then it waits */
	for (uint64_t i = 0; i < a->ntlog; i++)
		ackreqs += a->tlog[i].ackreq;
	CHECK_EQ(ackreqs, DPV_RC_MAX_UNACKED / DPV_RC_ACKREQ_EVERY);
	CHECK(a->tlog[DPV_RC_MAX_UNACKED - 1].ackreq, "the packet that fills the window asks");
	hold = false;
	sim_run(s, 100 * MS);
	CHECK(a->nslog == 1 && a->slog[0].status == 0, "WRITE through the window");
	CHECK(gen_equal(1, b->wmem, 200 * 256), "WRITE bytes");
	sim_fini(s);
	free(s);
}

/* --- UC: errors drop the message, the receive WQE is used again ----------------------------- */

static void uc_errors(void)
{
	struct sim_opts o = base_opts;
	struct sim *s = malloc(sizeof(*s));
	struct node *a = &s->n[0], *b = &s->n[1];
	struct lose_psn l = { .from = 0, .opcode = 0xFF, .times = 0 };

	o.uc = true;
	o.mtu = 256;
	o.prepost[1] = 0;
	o.recv_len = 600;
	o.access[1] = DPV_RC_ACCESS_REMOTE_READ;	/* no RDMA WRITE here */
	sim_init(s, &o);
	s->filter = lose_psn;
	s->filter_arg = &l;
	/* no receive WQE: the SEND is lost, A does not know */
	CHECK_EQ(sim_post(a, mk_wr(a, DPV_RC_WR_SEND, 10), 1), 0);
	sim_run(s, 1 * MS);
	CHECK(a->nslog == 1 && a->slog[0].status == 0 && b->nrlog == 0 && !b->rc.err, "UC RNR");
	CHECK_EQ(sim_post_recv(b), 0);
	/* longer than the WQE: lost, the WQE stays */
	CHECK_EQ(sim_post(a, mk_wr(a, DPV_RC_WR_SEND, 700), 2), 0);
	/* an RDMA WRITE the QP does not allow: lost */
	CHECK_EQ(sim_post(a, mk_wr(a, DPV_RC_WR_WRITE_IMM, 10), 3), 0);
	/* its second packet lost: lost whole */
	l.psn = o.psn[0] + 1 + 3 + 1 + 1;
	l.times = 1;
	CHECK_EQ(sim_post(a, mk_wr(a, DPV_RC_WR_SEND, 500), 4), 0);
	sim_run(s, 2 * MS);
	CHECK(b->nrlog == 0 && !b->rc.err, "UC: a message that should be lost arrived");
	/* the next one lands in the same WQE, from its start */
	CHECK_EQ(sim_post(a, mk_wr(a, DPV_RC_WR_SEND_IMM, 550), 5), 0);
	sim_run(s, 3 * MS);
	CHECK(b->nrlog == 1 && b->rlog[0].handle == 0 && b->rlog[0].status == 0 &&
	      b->rlog[0].byte_len == 550 && b->rlog[0].with_imm, "UC: the WQE used again");
	CHECK(gen_equal(5, b->rbufs[0], 550), "UC: bytes");
	CHECK_EQ(a->nslog, 5);
	/* a receive WQE that cannot be written: LOC_PROT_ERR and ERR, as on RC */
	CHECK_EQ(sim_post_recv(b), 0);
	b->bad_recv = 1;
	CHECK_EQ(sim_post(a, mk_wr(a, DPV_RC_WR_SEND, 10), 6), 0);
	sim_run(s, 4 * MS);
	CHECK(b->nrlog == 2 && b->rlog[1].status == DPV_RC_WC_LOC_PROT_ERR && b->rc.err &&
	      b->qp_errors == 1, "UC: bad receive WQE");
	CHECK(!a->rc.err, "UC: no NAK reaches the sender");
	sim_fini(s);
	free(s);
}

/* --- hostile input ---------------------------------------------------------------------- */

/* A packet to @n as if from its peer: @opcode at @psn, the rest from @h (may be NULL). */
static void inject(struct node *n, uint8_t opcode, uint32_t psn, const struct dpv_roce_hdrs *h,
		   const uint8_t *payload, uint32_t len)
{
	struct dpv_roce_hdrs x;

	if (h != NULL)
		x = *h;
	else
		memset(&x, 0, sizeof(x));
	x.bth.opcode = opcode;
	x.bth.pkey = 0xFFFF;
	x.bth.dqpn = n->cfg.qpn;
	x.bth.psn = psn & 0xFFFFFF;
	dpv__rc_rx(&n->rc, &x, payload, len, n->sim->now);
	dpv__rc_rx_flush(&n->rc);		/* a burst of one packet */
}

static const struct txlog *last_tx(struct node *n)
{
	return n->ntlog ? &n->tlog[(n->ntlog - 1) % SIM_LOG] : NULL;
}

/* Coalesced ACKs: the requests of one burst asking for ACKs get one, of the last, when the
 * burst is done (dpv__rc_rx_flush), or at the next tick without it (the deadline is "now"
 * meanwhile); an ACK due goes out before a NAK that follows it. */
static void coalesced_acks(void)
{
	struct sim_opts o = base_opts;
	struct sim *s = malloc(sizeof(*s));
	struct node *b = &s->n[1];
	struct dpv_roce_hdrs h = { .bth = { .ackreq = true, .pkey = 0xFFFF } };
	uint8_t pay[64] = { 0 };
	uint32_t e = o.psn[0];
	uint64_t n0;

	o.prepost[1] = 16;
	sim_init(s, &o);
	s->filter = lose_all;
	h.bth.dqpn = b->cfg.qpn;
	h.bth.opcode = DPV_ROCE_SEND_ONLY;
	n0 = b->ntlog;
	for (int i = 0; i < 5; i++) {
		h.bth.psn = e + i;
		dpv__rc_rx(&b->rc, &h, pay, 10, s->now);
	}
	CHECK(b->ntlog == n0 && dpv__rc_next_deadline(&b->rc) == 0,
	      "an ACK due: nothing sent yet, the deadline is now");
	dpv__rc_rx_flush(&b->rc);
	CHECK(b->ntlog == n0 + 1 && last_tx(b)->opcode == DPV_ROCE_ACK &&
	      last_tx(b)->syndrome == DPV_AETH_CREDIT_INVALID && last_tx(b)->psn == e + 4,
	      "five SENDs in a burst: one ACK, of the last");
	CHECK(b->nrlog == 5 && dpv__rc_next_deadline(&b->rc) == DPV_RC_NEVER);
	dpv__rc_rx_flush(&b->rc);
	CHECK_EQ(b->ntlog, n0 + 1);			/* nothing more was due */
	h.bth.psn = e + 5;
	dpv__rc_rx(&b->rc, &h, pay, 10, s->now);
	dpv__rc_tick(&b->rc, s->now);
	CHECK(b->ntlog == n0 + 2 && last_tx(b)->psn == e + 5, "without a flush: the tick ACKs");
	/* a SEND, then a PSN ahead: the ACK of the SEND, then the sequence NAK */
	h.bth.psn = e + 6;
	dpv__rc_rx(&b->rc, &h, pay, 10, s->now);
	h.bth.psn = e + 8;
	dpv__rc_rx(&b->rc, &h, pay, 10, s->now);
	CHECK(b->ntlog == n0 + 4 && b->tlog[(n0 + 2) % SIM_LOG].psn == e + 6 &&
	      b->tlog[(n0 + 2) % SIM_LOG].syndrome == DPV_AETH_CREDIT_INVALID &&
	      last_tx(b)->psn == e + 7 && last_tx(b)->syndrome == DPV_AETH_NAK_PSN_SEQ,
	      "ACK due, then a gap: the ACK first, then the NAK");
	sim_fini(s);
	free(s);
}

/* requests a responder must refuse: NAK (class C, ERR) or drop */
static void hostile_requests(void)
{
	struct sim_opts o = base_opts;
	struct sim *s = malloc(sizeof(*s));
	struct node *b = &s->n[1];
	struct dpv_roce_hdrs h;
	uint8_t pay[4096] = { 0 };
	uint32_t e = o.psn[0];		/* what B expects */
	uint64_t n0;

	struct {
		const char *what;
		uint8_t opcode;
		struct dpv_roce_hdrs h;
		uint32_t len;
		uint8_t syndrome;
	} naks[] = {
		{ "WRITE MIDDLE without a FIRST", DPV_ROCE_WRITE_MIDDLE, { .imm = 0 }, 1024,
		  DPV_AETH_NAK_INV_REQ },
		{ "SEND LAST without a FIRST", DPV_ROCE_SEND_LAST, { .imm = 0 }, 10, DPV_AETH_NAK_INV_REQ },
		{ "WRITE of 2^32 - 1 bytes", DPV_ROCE_WRITE_FIRST,
		  { .reth = { .len = 0xFFFFFFFF, .rkey = 0x1001 } }, 1024, DPV_AETH_NAK_INV_REQ },
		{ "WRITE ONLY shorter than its RETH", DPV_ROCE_WRITE_ONLY,
		  { .reth = { .len = 100, .rkey = 0x1001 } }, 50, DPV_AETH_NAK_INV_REQ },
		{ "WRITE FIRST shorter than the MTU", DPV_ROCE_WRITE_FIRST,
		  { .reth = { .len = 5000, .rkey = 0x1001 } }, 1000, DPV_AETH_NAK_INV_REQ },
		{ "READ past the region", DPV_ROCE_READ_REQUEST,
		  { .reth = { .len = 1u << 31, .rkey = 0x2001 } }, 0, DPV_AETH_NAK_REM_ACCESS },
		{ "READ of 2^31 + 1", DPV_ROCE_READ_REQUEST,
		  { .reth = { .len = (1u << 31) + 1, .rkey = 0x2001 } }, 0, DPV_AETH_NAK_INV_REQ },
		{ "READ with a write key", DPV_ROCE_READ_REQUEST,
		  { .reth = { .len = 10, .rkey = 0x1001 } }, 0, DPV_AETH_NAK_REM_ACCESS },
		{ "misaligned atomic", DPV_ROCE_FETCH_ADD, { .atomic = { .rkey = 0x3001 } }, 0,
		  DPV_AETH_NAK_INV_REQ },
		{ "SEND WITH INVALIDATE of a key it may not", DPV_ROCE_SEND_ONLY_INV, { .ieth_rkey = 0x1001 }, 10,
		  DPV_AETH_NAK_INV_REQ },
		{ "SEND ONLY of 0 bytes", DPV_ROCE_SEND_ONLY, { .bth = { .ackreq = true } }, 0,
		  0 },	/* fine */
	};

	o.prepost[1] = 4;
	for (size_t i = 0; i < sizeof(naks) / sizeof(naks[0]); i++) {
		const struct txlog *t;

		sim_init(s, &o);
		s->filter = lose_all;
		/* addresses in B's regions (the misaligned atomic 4 bytes off) */
		naks[i].h.reth.va = naks[i].h.reth.rkey == 0x2001 ? b->rva : b->wva;
		naks[i].h.atomic.va = b->ava + 4;
		inject(b, naks[i].opcode, e, &naks[i].h, pay, naks[i].len);
		t = last_tx(b);
		if (naks[i].syndrome == 0) {
			CHECK(!b->rc.err && t != NULL && t->syndrome == DPV_AETH_CREDIT_INVALID &&
			      b->nrlog == 1 && b->rlog[0].byte_len == 0, "%s", naks[i].what);
		} else {
			CHECK(t != NULL && t->opcode == DPV_ROCE_ACK && t->psn == e &&
			      t->syndrome == naks[i].syndrome, "%s: %s %02x", naks[i].what,
			      t ? "NAK" : "nothing", t ? t->syndrome : 0);
			CHECK(b->rc.err && b->qp_errors == 1, "%s: B not in ERR", naks[i].what);
			CHECK_EQ(b->nrlog, 4);		/* flushed */
		}
		CHECK_EQ(b->atomics_executed, 0);
		sim_fini(s);
	}

	/* SEND WITH INVALIDATE of a key it may invalidate: the receive says so, an ACK; on UC
	 * there is no such opcode (the codec's table refuses it, as a UC requester's post) */
	sim_init(s, &o);
	s->filter = lose_all;
	h = (struct dpv_roce_hdrs){ .ieth_rkey = 0x4001, .bth = { .ackreq = true } };
	inject(b, DPV_ROCE_SEND_ONLY_INV, e, &h, pay, 10);
	CHECK(!b->rc.err && b->nrlog == 1 && b->rlog[0].status == DPV_RC_WC_SUCCESS &&
	      b->rlog[0].with_inv && b->rlog[0].inv_rkey == 0x4001 && !b->rlog[0].with_imm &&
	      b->rlog[0].byte_len == 10, "SEND WITH INVALIDATE: the receive completion");
	CHECK(last_tx(b) != NULL && last_tx(b)->syndrome == DPV_AETH_CREDIT_INVALID,
	      "SEND WITH INVALIDATE: ACK");
	sim_fini(s);

	/* PSNs ahead: one sequence NAK for the expected PSN however many come */
	sim_init(s, &o);
	s->filter = lose_all;
	for (uint32_t i = 1; i < 50; i++)
		inject(b, DPV_ROCE_SEND_ONLY, e + i * 1000, NULL, pay, 10);
	CHECK_EQ(b->ntlog, 1);
	CHECK(b->tlog[0].syndrome == DPV_AETH_NAK_PSN_SEQ && b->tlog[0].psn == e, "seq NAK");
	CHECK(!b->rc.err && b->nrlog == 0, "a sequence error changed B");
	/* the expected PSN clears it; the next gap is NAKed again */
	inject(b, DPV_ROCE_SEND_ONLY, e, NULL, pay, 10);
	inject(b, DPV_ROCE_SEND_ONLY, e + 2, NULL, pay, 10);
	CHECK(b->ntlog == 2 && b->tlog[1].psn == e + 1, "second seq NAK");
	/* PSNs behind: a SEND/WRITE is acknowledged again (up to the last one done), a READ
	 * without a resource and an unknown atomic are dropped, nothing executed */
	n0 = b->ntlog;
	inject(b, DPV_ROCE_SEND_ONLY, e - 5, NULL, pay, 10);
	CHECK(b->ntlog == n0 + 1 && last_tx(b)->psn == e && last_tx(b)->syndrome == 0x1F,
	      "duplicate SEND: ACK of %x", last_tx(b)->psn);
	memset(&h, 0, sizeof(h));
	h.reth = (typeof(h.reth)){ .va = b->rva, .rkey = b->rkey, .len = 10 };
	inject(b, DPV_ROCE_READ_REQUEST, e - 3, &h, NULL, 0);
	h.atomic = (typeof(h.atomic)){ .va = b->ava, .rkey = b->akey, .swap_add = 1 };
	inject(b, DPV_ROCE_FETCH_ADD, e - 2, &h, NULL, 0);
	CHECK_EQ(b->ntlog, n0 + 1);
	CHECK_EQ(b->atomics_executed, 0);
	CHECK_EQ(b->nrlog, 1);
	/* a READ, then copies of it: the same answered again, a different one (other length,
	 * other key, a tail that does not match its PSN) dropped */
	inject(b, DPV_ROCE_READ_REQUEST, e + 1, &(struct dpv_roce_hdrs){
		.reth = { .va = b->rva, .rkey = b->rkey, .len = 3000 } }, NULL, 0);
	CHECK(b->ntlog == n0 + 4 && last_tx(b)->opcode == DPV_ROCE_READ_RESP_LAST, "READ");
	inject(b, DPV_ROCE_READ_REQUEST, e + 2, &(struct dpv_roce_hdrs){
		.reth = { .va = b->rva + 1024, .rkey = b->rkey, .len = 3000 - 1024 } }, NULL, 0);
	CHECK(b->ntlog == n0 + 6 && b->tlog[n0 + 4].opcode == DPV_ROCE_READ_RESP_MIDDLE &&
	      b->tlog[n0 + 4].psn == e + 2 && b->tlog[n0 + 4].len == 1024, "READ tail replay");
	inject(b, DPV_ROCE_READ_REQUEST, e + 2, &(struct dpv_roce_hdrs){
		.reth = { .va = b->rva + 1000, .rkey = b->rkey, .len = 2000 } }, NULL, 0);
	inject(b, DPV_ROCE_READ_REQUEST, e + 1, &(struct dpv_roce_hdrs){
		.reth = { .va = b->rva, .rkey = b->rkey, .len = 4000 } }, NULL, 0);
	inject(b, DPV_ROCE_READ_REQUEST, e + 1, &(struct dpv_roce_hdrs){
		.reth = { .va = b->rva, .rkey = b->wkey, .len = 3000 } }, NULL, 0);
	CHECK_EQ(b->ntlog, n0 + 6);
	CHECK(!b->rc.err, "B in ERR after duplicates");
	/* opcodes no responder takes (responses, other transports) and payloads above the
	 * MTU: dropped, nothing sent */
	inject(b, DPV_ROCE_READ_RESP_ONLY, e + 4, NULL, pay, 10);
	inject(b, DPV_ROCE_ACK, e + 4, NULL, NULL, 0);
	inject(b, DPV_ROCE_UC | DPV_ROCE_SEND_ONLY, e + 4, NULL, pay, 10);
	inject(b, DPV_ROCE_UD | DPV_ROCE_SEND_ONLY, e + 4, NULL, pay, 10);
	inject(b, DPV_ROCE_SEND_ONLY, e + 4, NULL, pay, 2000);
	inject(b, DPV_ROCE_ACK, e + 4, NULL, pay, 4);	/* payload on an opcode without */
	CHECK_EQ(b->ntlog, n0 + 6);
	CHECK(!b->rc.err && b->rc.stats.dropped >= 6, "dropped %llu",
	      (unsigned long long)b->rc.stats.dropped);
	sim_fini(s);
	free(s);
}

/* responses a requester must ignore: for PSNs never sent, already acknowledged, or that do
 * not fit the WR they name */
static void hostile_responses(void)
{
	struct sim_opts o = base_opts;
	struct sim *s = malloc(sizeof(*s));
	struct node *a = &s->n[0];
	uint8_t pay[4096];
	uint32_t p = o.psn[0];
	struct dpv_roce_hdrs h = { .aeth = { .syndrome = 0x1F } };

	memset(pay, 0xAB, sizeof(pay));
	sim_init(s, &o);
	s->filter = lose_all;
	/* nothing outstanding: nothing to answer */
	inject(a, DPV_ROCE_READ_RESP_ONLY, p, &h, pay, 100);
	inject(a, DPV_ROCE_ATOMIC_ACK, p, &h, NULL, 0);
	inject(a, DPV_ROCE_ACK, p, &h, NULL, 0);
	CHECK(a->nslog == 0 && a->rc.stats.dropped == 3 && !a->rc.err, "answers to nothing");
	/* a READ of 2000 bytes (PSNs p, p + 1), a SEND (p + 2) */
	CHECK_EQ(sim_post(a, mk_wr(a, DPV_RC_WR_READ, 2000), 1), 0);
	CHECK_EQ(sim_post(a, mk_wr(a, DPV_RC_WR_SEND, 10), 2), 0);
	inject(a, DPV_ROCE_ACK, p + 3, &h, NULL, 0);		/* never sent */
	inject(a, DPV_ROCE_ACK, p + 100000, &h, NULL, 0);
	inject(a, DPV_ROCE_READ_RESP_FIRST, p, &h, pay, 1000);	/* not a whole MTU */
	inject(a, DPV_ROCE_READ_RESP_MIDDLE, p, &h, pay, 1024);	/* a MIDDLE first */
	inject(a, DPV_ROCE_READ_RESP_ONLY, p, &h, pay, 1024);	/* says it is all */
	inject(a, DPV_ROCE_ATOMIC_ACK, p, &h, NULL, 0);		/* not an atomic */
	h.aeth.syndrome = DPV_AETH_NAK_PSN_SEQ;
	inject(a, DPV_ROCE_READ_RESP_FIRST, p, &h, pay, 1024);	/* a NAK in a response */
	h.aeth.syndrome = 0x40;					/* reserved type */
	inject(a, DPV_ROCE_ACK, p, &h, NULL, 0);
	CHECK(a->nslog == 0 && !a->rc.err, "a bad response completed something");
	CHECK_EQ(a->rc.comp.psn, p);
	for (int i = 0; i < 2000; i++)
		CHECK(a->twr[0].rbuf[i] == 0xEE, "READ buffer written at %d", i);
	/* the right ones, out of order first: the LAST before the FIRST is a gap (a retry) */
	h.aeth.syndrome = 0x1F;
	inject(a, DPV_ROCE_READ_RESP_FIRST, p, &h, pay, 1024);
	inject(a, DPV_ROCE_READ_RESP_FIRST, p, &h, pay, 1024);	/* again: stale */
	inject(a, DPV_ROCE_READ_RESP_LAST, p + 1, &h, pay, 2000 - 1024);
	CHECK(a->nslog == 1 && a->slog[0].status == 0 && a->slog[0].byte_len == 2000, "READ");
	CHECK(a->twr[0].rbuf[0] == 0xAB && a->twr[0].rbuf[1999] == 0xAB, "READ bytes");
	/* an ACK behind the oldest outstanding: nothing; the SEND's: done */
	inject(a, DPV_ROCE_ACK, p + 1, &h, NULL, 0);
	CHECK_EQ(a->nslog, 1);
	inject(a, DPV_ROCE_ACK, p + 2, &h, NULL, 0);
	CHECK(a->nslog == 2 && a->slog[1].status == 0, "SEND");
	/* a remote operational error NAK: the WR fails, ERR, the rest flushed */
	CHECK_EQ(sim_post(a, mk_wr(a, DPV_RC_WR_WRITE, 10), 3), 0);
	CHECK_EQ(sim_post(a, mk_wr(a, DPV_RC_WR_WRITE, 10), 4), 0);
	h.aeth.syndrome = DPV_AETH_NAK_REM_OP;
	inject(a, DPV_ROCE_ACK, p + 3, &h, NULL, 0);
	CHECK(a->nslog == 4 && a->slog[2].status == DPV_RC_WC_REM_OP_ERR &&
	      a->slog[3].status == DPV_RC_WC_WR_FLUSH_ERR && a->rc.err, "REM_OP NAK");
	sim_fini(s);
	free(s);
}

/* 200000 random packets of every opcode, PSNs around the expected ones, addresses and keys
 * around B's regions: no write outside what may be written (rc_sim.h checks each), no
 * crash; an engine that went to ERR is set up again */
static void hostile_storm(void)
{
	struct sim_opts o = base_opts;
	struct sim *s = malloc(sizeof(*s));
	uint8_t pay[4096];
	uint32_t inits = 1;

	o.rq_depth = 4;
	o.prepost[0] = o.prepost[1] = 4;
	o.recv_len = 1500;
	sim_init(s, &o);
	s->filter = lose_all;
	memset(pay, 0x5C, sizeof(pay));
	for (int i = 0; i < 200000; i++) {
		struct node *n = &s->n[sim_rnd(s) & 1], *p = n->peer;
		struct dpv_roce_hdrs h;
		const struct dpv_roce_opinfo *op;
		uint8_t opcode;
		uint64_t r = sim_rnd(s);

		do
			opcode = (uint8_t)sim_rnd(s);
		while (dpv__roce_opinfo(opcode)->name == NULL || (opcode & 0xE0) > 0x20);
		op = dpv__roce_opinfo(opcode);
		memset(&h, 0, sizeof(h));
		h.aeth.syndrome = (uint8_t)(r & 1 ? 0x1F : sim_rnd(s));
		h.aeth.msn = (uint32_t)sim_rnd(s);
		h.reth.rkey = r & 2 ? n->wkey : r & 4 ? n->rkey : (uint32_t)sim_rnd(s);
		h.reth.va = (r & 2 ? n->wva : n->rva) + (int64_t)(sim_rnd(s) % 300000) - 1000;
		h.reth.len = r & 8 ? (uint32_t)sim_rnd(s) : (uint32_t)(sim_rnd(s) % 5000);
		h.atomic.rkey = r & 16 ? n->akey : (uint32_t)sim_rnd(s);
		h.atomic.va = n->ava + (int64_t)(sim_rnd(s) % 40) - 16;
		h.atomic.swap_add = sim_rnd(s);
		h.bth.se = r & 32;
		h.bth.ackreq = r & 64;
		if (r & 128)	/* sometimes a WR of our own outstanding, to answer */
			sim_post(n, mk_wr(n, (uint8_t)(sim_rnd(s) % 7), (uint32_t)(sim_rnd(s) % 3000)),
				 sim_rnd(s));
		inject(n, opcode, !(op->flags & DPV_ROCE_F_REQ) ? n->rc.comp.psn + (uint32_t)(sim_rnd(s) % 8) - 2 :
		       n->rc.resp.psn + (uint32_t)(sim_rnd(s) % 8) - 2, &h, pay,
		       op->flags & DPV_ROCE_F_PAYLOAD ? (uint32_t)(sim_rnd(s) % 1100) : 0);
		if (r & 256) {
			s->now += sim_rnd(s) % (10 * MS);
			dpv__rc_tick(&n->rc, s->now);
		}
		if (sim_rnd(s) % 8 == 0)
			sim_post_recv(n);
		if (n->rc.err || p->rc.err) {
			sim_restart(s);
			inits++;
		}
	}
	printf("hostile storm: 200000 packets, %u engines\n", inits);
	CHECK(inits > 10, "the storm never got an engine to ERR");
	sim_fini(s);
	free(s);
}

int main(void)
{
	const char *env = getenv("DPV_RC_MESSAGES");
	uint64_t messages = env ? strtoull(env, NULL, 0) : 100000;

	post_checks();
	peer_gone();
	rnr();
	go_back_n();
	fence_and_window();
	duplicate_atomic();
	errors();
	uc();
	uc_errors();
	local_faults();
	window();
	coalesced_acks();
	hostile_requests();
	hostile_responses();
	hostile_storm();
	mass("0% loss", 0, 0, messages, 11);
	mass("1% loss", 0.01, 0.02, messages, 12);
	mass("5% loss", 0.05, 0, messages, 13);
	return test_done("rc_engine");
}
