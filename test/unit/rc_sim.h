/* SPDX-License-Identifier: BSD-3-Clause */
/* A simulated RoCE link for the RC/UC engine (lib/roce/rc_*.c), used by test_rc_engine: two
 * QPs, each an engine with its memory (a remote-write region, a remote-read region holding a
 * pattern, two atomic words), receive buffers and the WRs its application posted, joined by a
 * wire of whole RoCEv2 frames (built and parsed by the codec, ICRC included) with a seeded
 * fault model: drop, duplicate, reorder, corrupt (a flipped byte the ICRC check discards), and
 * a transmit queue without room. Time is simulated: the loop jumps to the next frame arrival
 * or engine deadline. The callbacks check that the engine writes only where it may: a receive
 * WQE within its length, a READ/atomic WR within its length, remote memory only inside a
 * region whose key and rights the packet holds. In "mass" mode every completion is checked
 * as it comes: in order, once, and every byte (regenerated from a per-WR seed) right. */
#ifndef RC_SIM_H
#define RC_SIM_H

#include <arpa/inet.h>
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "rc_engine.h"
#include "roce_wire.h"

#ifndef CHECK
#error "include dpv_test.h first"
#endif

#define SIM_LOG 8192

struct sim;

struct twr {				/* a send WR as the application posted it */
	struct dpv_rc_send_wr wr;
	uint64_t tag;			/* its payload's seed */
	uint8_t *rbuf;			/* READ: where the answer goes */
	uint32_t slot_off;		/* WRITE: where in the peer's write region */
	uint32_t read_off;		/* READ: where in the peer's read region */
	uint64_t orig, expect_orig;	/* atomics */
	bool orig_set;
};

struct expect_recv {			/* what the peer posted that consumes a receive WQE */
	uint8_t opcode;
	bool se, with_imm;
	uint32_t len, imm, slot_off;
	uint64_t tag;
};

struct txlog {				/* what an engine emitted */
	uint64_t at;
	uint8_t opcode, syndrome;
	bool ackreq, se;
	uint32_t psn, len;
	uint64_t va;
	uint32_t reth_len;
};

struct node {
	struct sim *sim;
	struct node *peer;
	int id;
	struct dpv_rc rc;
	struct dpv_rc_config cfg;
	/* memory the peer may touch */
	uint8_t *wmem, *rmem;
	uint64_t amem[2];
	uint32_t wlen, rlen, wkey, rkey, akey;
	uint64_t wva, rva, ava;
	/* the send side */
	struct twr *twr;
	uint32_t sq_depth;
	uint64_t posted, done, quota, failed, atomics_posted;
	uint64_t model_add, model_cas;	/* the peer's atomic words as our atomics leave them */
	uint32_t next_slot;
	/* the receive side */
	uint8_t **rbufs;
	uint32_t rq_depth, recv_len;
	uint64_t recv_posted, recv_done, recv_lost;
	struct expect_recv *expect;
	uint64_t exp_head, exp_tail;
	uint32_t exp_cap;
	uint32_t prepost;		/* receive WQEs posted when the engine starts */
	uint64_t *repost_at;		/* FIFO of times to post a receive WQE again */
	uint64_t repost_head, repost_tail;
	uint64_t repost_delay;
	/* local faults for directed tests (UINT64_MAX / 0: none): the gather list of this WR,
	 * the scatter list of this READ WR or receive WQE cannot be used; mem_write fails from
	 * its n-th call on; the memory of a READ response cannot be read */
	uint64_t bad_gather, bad_scatter, bad_recv;
	uint64_t mem_write_fails_at, mem_writes;
	bool bad_read_memory;
	/* what was seen */
	uint64_t atomics_executed, qp_errors, err_at;
	struct dpv_rc_send_cqe slog[SIM_LOG];
	struct dpv_rc_recv_cqe rlog[SIM_LOG];
	uint64_t nslog, nrlog;
	struct txlog tlog[SIM_LOG];
	uint64_t ntlog;
};

struct sim_faults {
	double drop, corrupt, dup, reorder, nobufs;	/* probabilities per frame */
};

struct frame {
	uint64_t at, seq;
	int to;
	uint32_t len;
	uint8_t *data;
};

struct sim {
	uint64_t now, rng;
	bool mass;		/* check every completion's bytes as it comes */
	bool uc;
	uint8_t mix;		/* mass: which WR opcodes (bit per enum dpv_rc_wr_opcode) */
	uint32_t max_len;
	struct node n[2];
	struct sim_faults f;
	struct frame *heap;
	uint32_t nheap, capheap;
	uint64_t seq;
	uint64_t lat, reorder_lat;
	uint64_t post_gap;	/* mass: at most one WR per node per this many ns (0: no limit) */
	uint64_t next_post[2];
	struct dpv_roce_path path[2];
	/* directed tests: return true to lose this frame from node @from */
	bool (*filter)(struct sim *s, int from, const struct dpv_roce_hdrs *h, void *arg);
	void *filter_arg;
	struct {
		uint64_t frames, dropped, corrupted, duplicated, reordered, delivered, refused;
		uint64_t filtered, nobufs;
	} w;
};

struct sim_opts {
	bool uc, mass;
	uint32_t mtu;
	uint32_t psn[2];			/* sq_psn of each node (the peer's rq_psn) */
	uint8_t timeout, retry_cnt, rnr_retry, min_rnr_timer, rd_atomic;
	uint32_t access[2];
	uint32_t sq_depth, rq_depth, recv_len;
	uint32_t prepost[2];			/* receive WQEs posted at the start */
	uint64_t repost_delay;			/* ns after a receive completes (mass) */
	struct sim_faults f;
	uint64_t seed, quota[2], post_gap;
	uint8_t mix;
	uint32_t max_len;
};

static uint64_t sim_rnd(struct sim *s)
{
	s->rng ^= s->rng << 13;
	s->rng ^= s->rng >> 7;
	s->rng ^= s->rng << 17;
	return s->rng;
}

static bool sim_chance(struct sim *s, double p)
{
	return p > 0 && (double)(sim_rnd(s) >> 11) * 0x1p-53 < p;
}

static uint64_t mix64(uint64_t x)
{
	x += 0x9E3779B97F4A7C15ull;
	x = (x ^ (x >> 30)) * 0xBF58476D1CE4E5B9ull;
	x = (x ^ (x >> 27)) * 0x94D049BB133111EBull;
	return x ^ (x >> 31);
}

/* Bytes @off .. @off + @len of the payload whose seed is @tag. */
static void gen(uint64_t tag, uint32_t off, uint8_t *out, uint32_t len)
{
	uint64_t w = 0, cur = UINT64_MAX;

	for (uint32_t i = 0; i < len; i++) {
		uint32_t o = off + i;

		if (o >> 3 != cur) {
			cur = o >> 3;
			w = mix64(tag * 0x100000001B3ull + cur);
		}
		out[i] = (uint8_t)(w >> ((o & 7) * 8));
	}
}

static bool gen_equal(uint64_t tag, const uint8_t *p, uint32_t len)
{
	uint8_t tmp[512];

	for (uint32_t off = 0; off < len; off += sizeof(tmp)) {
		uint32_t n = len - off < sizeof(tmp) ? len - off : sizeof(tmp);

		gen(tag, off, tmp, n);
		if (memcmp(tmp, p + off, n) != 0)
			return false;
	}
	return true;
}

/* --- the wire: a min-heap of frames on (arrival time, sequence) ---------------------- */

static bool frame_before(const struct frame *a, const struct frame *b)
{
	return a->at < b->at || (a->at == b->at && a->seq < b->seq);
}

static void heap_push(struct sim *s, struct frame f)
{
	uint32_t i;

	if (s->nheap == s->capheap) {
		s->capheap = s->capheap ? s->capheap * 2 : 1024;
		s->heap = realloc(s->heap, s->capheap * sizeof(*s->heap));
		if (s->heap == NULL)
			abort();
	}
	i = s->nheap++;
	while (i > 0 && frame_before(&f, &s->heap[(i - 1) / 2])) {
		s->heap[i] = s->heap[(i - 1) / 2];
		i = (i - 1) / 2;
	}
	s->heap[i] = f;
}

static struct frame heap_pop(struct sim *s)
{
	struct frame top = s->heap[0], last = s->heap[--s->nheap];
	uint32_t i = 0;

	for (;;) {
		uint32_t c = 2 * i + 1;

		if (c >= s->nheap)
			break;
		if (c + 1 < s->nheap && frame_before(&s->heap[c + 1], &s->heap[c]))
			c++;
		if (!frame_before(&s->heap[c], &last))
			break;
		s->heap[i] = s->heap[c];
		i = c;
	}
	if (s->nheap > 0)
		s->heap[i] = last;
	return top;
}

static void wire_put(struct sim *s, int to, const uint8_t *data, uint32_t len, uint64_t delay)
{
	struct frame f = { .at = s->now + s->lat + delay, .seq = s->seq++, .to = to, .len = len };

	f.data = malloc(len);
	if (f.data == NULL)
		abort();
	memcpy(f.data, data, len);
	heap_push(s, f);
}

/* --- the engine's callbacks ------------------------------------------------------------ */

static struct twr *twr_of(struct node *n, uint64_t handle)
{
	CHECK(handle >= n->done && handle < n->posted, "%s handle %llu not outstanding",
	      n->id ? "B" : "A", (unsigned long long)handle);
	if (handle < n->done || handle >= n->posted)
		abort();
	return &n->twr[handle % n->sq_depth];
}

/* The payload of an emitted packet, read where the engine says it is. */
static int payload_of(struct node *n, const struct dpv_rc_payload *pl, uint8_t *out)
{
	if (pl->src == DPV_RC_PAYLOAD_WR) {
		struct twr *t = twr_of(n, pl->handle);

		if (pl->handle == n->bad_gather)
			return -EFAULT;
		CHECK((uint64_t)pl->offset + pl->len <= t->wr.length, "gather past the WR");
		CHECK(t->wr.opcode <= DPV_RC_WR_SEND_IMM, "payload of a READ/atomic WR");
		gen(t->tag, pl->offset, out, pl->len);
		return 0;
	}
	if (pl->src == DPV_RC_PAYLOAD_MEM) {
		if (n->bad_read_memory)
			return -EFAULT;
		if (pl->rkey != n->rkey || pl->va < n->rva || pl->va + pl->len > n->rva + n->rlen ||
		    pl->va + pl->len < pl->va) {
			/* the engine only sends what mem_check granted: never here */
			CHECK(0, "READ response outside the read region");
			return -EFAULT;
		}
		memcpy(out, n->rmem + (pl->va - n->rva), pl->len);
		return 0;
	}
	CHECK(pl->len == 0, "payload without a source");
	return 0;
}

static int cb_emit(void *ctx, const struct dpv_roce_hdrs *h, const struct dpv_rc_payload *pl)
{
	struct node *n = ctx;
	struct sim *s = n->sim;
	uint8_t pay[4096], frame[4096 + 200];
	struct txlog *t;
	int len;

	if (sim_chance(s, s->f.nobufs)) {
		s->w.nobufs++;
		return -ENOBUFS;
	}
	CHECK(pl->len <= n->cfg.mtu, "payload %u above the MTU", pl->len);
	if (pl->len > n->cfg.mtu || payload_of(n, pl, pay) < 0)
		return -EFAULT;
	t = &n->tlog[n->ntlog++ % SIM_LOG];
	*t = (struct txlog){ .at = s->now, .opcode = h->bth.opcode, .syndrome = h->aeth.syndrome,
			     .ackreq = h->bth.ackreq, .se = h->bth.se, .psn = h->bth.psn,
			     .len = pl->len, .va = h->reth.va, .reth_len = h->reth.len };
	s->w.frames++;
	if (s->filter != NULL && s->filter(s, n->id, h, s->filter_arg)) {
		s->w.filtered++;
		return 0;
	}
	if (sim_chance(s, s->f.drop)) {
		s->w.dropped++;
		return 0;
	}
	len = dpv__roce_frame_build(frame, sizeof(frame), &s->path[n->id], h, pay, pl->len);
	CHECK(len > 0, "frame_build %d", len);
	if (len <= 0)
		return 0;
	if (sim_chance(s, s->f.corrupt)) {
		frame[sim_rnd(s) % (uint32_t)len] ^= (uint8_t)(1 + sim_rnd(s) % 255);
		s->w.corrupted++;
	}
	if (sim_chance(s, s->f.reorder)) {
		s->w.reordered++;
		wire_put(s, !n->id, frame, (uint32_t)len, 1 + sim_rnd(s) % s->reorder_lat);
	} else {
		wire_put(s, !n->id, frame, (uint32_t)len, 0);
	}
	if (sim_chance(s, s->f.dup)) {
		s->w.duplicated++;
		wire_put(s, !n->id, frame, (uint32_t)len, sim_rnd(s) % s->reorder_lat);
	}
	return 0;
}

static int cb_wr_write(void *ctx, uint64_t handle, uint32_t offset, const void *data,
		       uint32_t len)
{
	struct node *n = ctx;
	struct twr *t = twr_of(n, handle);

	CHECK((uint64_t)offset + len <= t->wr.length, "wr_write past the WR");
	if ((uint64_t)offset + len > t->wr.length)
		abort();
	if (handle == n->bad_scatter)
		return -EFAULT;
	if (t->wr.opcode == DPV_RC_WR_READ) {
		memcpy(t->rbuf + offset, data, len);
	} else {
		CHECK(offset == 0 && len == 8 && t->wr.opcode >= DPV_RC_WR_CMP_SWP,
		      "wr_write on a WR that asked nothing");
		memcpy(&t->orig, data, 8);
		t->orig_set = true;
	}
	return 0;
}

static int cb_recv_write(void *ctx, uint64_t handle, uint32_t offset, const void *data,
			 uint32_t len)
{
	struct node *n = ctx;

	CHECK(handle >= n->recv_done && handle < n->recv_posted, "recv_write to WQE %llu",
	      (unsigned long long)handle);
	CHECK((uint64_t)offset + len <= n->recv_len, "recv_write past the WQE");
	if (handle < n->recv_done || handle >= n->recv_posted ||
	    (uint64_t)offset + len > n->recv_len)
		abort();
	if (handle == n->bad_recv)
		return -EFAULT;
	memcpy(n->rbufs[handle % n->rq_depth] + offset, data, len);
	return 0;
}

/* Which region @rkey names, if it grants @access on [va, va + len). */
static uint8_t *region(struct node *n, uint32_t rkey, uint64_t va, uint32_t len,
		       uint32_t access)
{
	uint8_t *base = NULL;
	uint64_t bva = 0;
	uint32_t blen = 0, rights = 0;

	if (rkey == n->wkey) {
		base = n->wmem, bva = n->wva, blen = n->wlen;
		rights = DPV_RC_ACCESS_REMOTE_WRITE;
	} else if (rkey == n->rkey) {
		base = n->rmem, bva = n->rva, blen = n->rlen;
		rights = DPV_RC_ACCESS_REMOTE_READ;
	} else if (rkey == n->akey) {
		base = (uint8_t *)n->amem, bva = n->ava, blen = sizeof(n->amem);
		rights = DPV_RC_ACCESS_REMOTE_ATOMIC;
	}
	if (base == NULL || !(rights & access) || va < bva || va + len > bva + blen ||
	    va + len < va)
		return NULL;
	return base + (va - bva);
}

static int cb_mem_check(void *ctx, uint32_t rkey, uint64_t va, uint32_t len, uint32_t access)
{
	CHECK(len > 0 && va + len > va, "mem_check of an empty or wrapping range");
	return region(ctx, rkey, va, len, access) ? 0 : -EACCES;
}

static int cb_mem_write(void *ctx, uint32_t rkey, uint64_t va, const void *data, uint32_t len)
{
	struct node *n = ctx;
	uint8_t *p = region(n, rkey, va, len, DPV_RC_ACCESS_REMOTE_WRITE);

	CHECK(p != NULL, "mem_write outside what mem_check granted");
	if (p == NULL || ++n->mem_writes == n->mem_write_fails_at)
		return -EACCES;
	memcpy(p, data, len);
	return 0;
}

static int cb_mem_atomic(void *ctx, uint32_t rkey, uint64_t va, uint8_t opcode,
			 uint64_t compare_add, uint64_t swap, uint64_t *orig)
{
	struct node *n = ctx;
	uint64_t *p = (uint64_t *)region(n, rkey, va, 8, DPV_RC_ACCESS_REMOTE_ATOMIC);

	CHECK(p != NULL && (va & 7) == 0, "atomic outside what mem_check granted");
	if (p == NULL)
		return -EACCES;
	n->atomics_executed++;
	*orig = *p;
	if (opcode == DPV_RC_WR_FETCH_ADD)
		*p += compare_add;
	else if (*p == compare_add)
		*p = swap;
	return 0;
}

/* mass mode: what the application checks when a send WR completes */
static void check_send(struct node *n, struct twr *t, const struct dpv_rc_send_cqe *c)
{
	struct node *peer = n->peer;
	static const uint8_t wc_op[] = { 1, 1, 0, 0, 2, 3, 4 };

	CHECK(c->status == DPV_RC_WC_SUCCESS, "%s WR %llu (op %u) status %u", n->id ? "B" : "A",
	      (unsigned long long)c->handle, t->wr.opcode, c->status);
	CHECK(c->opcode == wc_op[t->wr.opcode], "wc opcode %u for WR opcode %u", c->opcode,
	      t->wr.opcode);
	if (c->status != DPV_RC_WC_SUCCESS || n->sim->uc)
		return;
	CHECK(c->byte_len == t->wr.length, "byte_len %u of %u", c->byte_len, t->wr.length);
	switch (t->wr.opcode) {
	case DPV_RC_WR_WRITE:
	case DPV_RC_WR_WRITE_IMM:
		CHECK(gen_equal(t->tag, peer->wmem + t->slot_off, t->wr.length),
		      "WRITE %llu: bytes at the peer differ", (unsigned long long)c->handle);
		break;
	case DPV_RC_WR_READ:
		CHECK(memcmp(t->rbuf, peer->rmem + t->read_off, t->wr.length) == 0,
		      "READ %llu: bytes differ", (unsigned long long)c->handle);
		break;
	case DPV_RC_WR_CMP_SWP:
	case DPV_RC_WR_FETCH_ADD:
		CHECK(t->orig_set && t->orig == t->expect_orig,
		      "atomic %llu: original value %llx, expected %llx",
		      (unsigned long long)c->handle, (unsigned long long)t->orig,
		      (unsigned long long)t->expect_orig);
		break;
	}
}

static void cb_send_done(void *ctx, const struct dpv_rc_send_cqe *c)
{
	struct node *n = ctx;
	struct twr *t = twr_of(n, c->handle);

	CHECK(c->handle == n->done, "%s completion of WR %llu, expected %llu (order)",
	      n->id ? "B" : "A", (unsigned long long)c->handle, (unsigned long long)n->done);
	n->slog[n->nslog++ % SIM_LOG] = *c;
	if (n->sim->mass)
		check_send(n, t, c);
	if (c->status != DPV_RC_WC_SUCCESS)
		n->failed++;
	if (n->sim->mass) {	/* directed tests look at the READ's bytes afterwards */
		free(t->rbuf);
		t->rbuf = NULL;
	}
	n->done = c->handle + 1;
}

/* mass mode: the receive completion is the next message the peer posted that takes one (RC),
 * or a later one (UC: the ones between were lost) */
static void check_recv(struct node *n, const struct dpv_rc_recv_cqe *c)
{
	const uint8_t *buf = n->rbufs[c->handle % n->rq_depth];
	struct expect_recv *e = NULL;

	while (n->exp_head != n->exp_tail) {
		e = &n->expect[n->exp_head++ % n->exp_cap];
		if (!n->sim->uc || e->imm == c->imm)
			break;
		n->recv_lost++;
		e = NULL;
	}
	CHECK(e != NULL, "a receive completion nobody sent");
	if (e == NULL)
		return;
	CHECK(c->status == DPV_RC_WC_SUCCESS && c->opcode == e->opcode &&
	      c->with_imm == e->with_imm && c->imm == e->imm && c->solicited == e->se,
	      "receive: status %u opcode %u/%u imm %x/%x se %d/%d", c->status, c->opcode, e->opcode,
	      c->imm, e->imm, c->solicited, e->se);
	CHECK(c->byte_len == e->len, "receive byte_len %u, sent %u", c->byte_len, e->len);
	if (c->opcode == DPV_RC_WC_RECV)
		CHECK(gen_equal(e->tag, buf, e->len), "SEND bytes differ");
	else
		CHECK(gen_equal(e->tag, n->wmem + e->slot_off, e->len), "WRITE_IMM bytes differ");
}

static void cb_recv_done(void *ctx, const struct dpv_rc_recv_cqe *c)
{
	struct node *n = ctx;

	CHECK(c->handle == n->recv_done, "receive completion of %llu, expected %llu (order)",
	      (unsigned long long)c->handle, (unsigned long long)n->recv_done);
	n->rlog[n->nrlog++ % SIM_LOG] = *c;
	n->recv_done = c->handle + 1;
	if (n->sim->mass)
		check_recv(n, c);
	if (n->sim->mass && !n->rc.err)	/* directed tests post their own */
		n->repost_at[n->repost_tail++ % n->rq_depth] = n->sim->now + n->repost_delay;
}

static void cb_qp_error(void *ctx)
{
	struct node *n = ctx;

	n->qp_errors++;
	n->err_at = n->sim->now;
}

/* remote invalidation: only key 0x4001 may be invalidated */
static int cb_mem_invalidate(void *ctx, uint32_t rkey)
{
	(void)ctx;
	return rkey == 0x4001 ? 0 : -EINVAL;
}

static const struct dpv_rc_ops sim_ops = {
	.emit = cb_emit, .wr_write = cb_wr_write, .recv_write = cb_recv_write,
	.mem_check = cb_mem_check, .mem_write = cb_mem_write, .mem_atomic = cb_mem_atomic,
	.mem_invalidate = cb_mem_invalidate, .send_done = cb_send_done, .recv_done = cb_recv_done, .qp_error = cb_qp_error,
};

/* --- set-up ---------------------------------------------------------------------------- */

static int sim_post_recv(struct node *n)
{
	int ret = dpv__rc_post_recv(&n->rc, n->recv_posted, n->recv_len);

	if (ret == 0)
		n->recv_posted++;
	return ret;
}

static void node_init(struct sim *s, int id, const struct sim_opts *o)
{
	struct node *n = &s->n[id];
	struct dpv_rc_config *c = &n->cfg;

	n->sim = s;
	n->id = id;
	n->peer = &s->n[!id];
	n->sq_depth = o->sq_depth;
	n->rq_depth = o->rq_depth;
	n->recv_len = o->recv_len;
	n->quota = o->quota[id];
	n->wlen = 160 * 4224;
	n->rlen = 64 * 1024;
	n->wmem = calloc(1, n->wlen);
	n->rmem = malloc(n->rlen);
	n->twr = calloc(n->sq_depth, sizeof(*n->twr));
	n->rbufs = calloc(n->rq_depth, sizeof(*n->rbufs));
	n->exp_cap = 1u << 16;
	n->expect = calloc(n->exp_cap, sizeof(*n->expect));
	n->repost_at = calloc(n->rq_depth, sizeof(*n->repost_at));
	if (!n->wmem || !n->rmem || !n->twr || !n->rbufs || !n->expect || !n->repost_at)
		abort();
	for (uint32_t i = 0; i < n->rq_depth; i++)
		if ((n->rbufs[i] = malloc(n->recv_len ? n->recv_len : 1)) == NULL)
			abort();
	gen(0xDA7A0000u + (uint64_t)id, 0, n->rmem, n->rlen);
	n->repost_delay = o->repost_delay;
	n->prepost = o->prepost[id];
	n->bad_gather = n->bad_scatter = n->bad_recv = UINT64_MAX;
	/* keys and addresses as the peer names them; unguessable keys are rc_verbs.c's job */
	n->wkey = 0x1000 + id;
	n->rkey = 0x2000 + id;
	n->akey = 0x3000 + id;
	n->wva = 0x10000000000ull * (id + 1);
	n->rva = n->wva + 0x100000000ull;
	n->ava = n->wva + 0x200000000ull;
	n->amem[0] = 1000 * (id + 1);
	n->amem[1] = 77;
	n->peer->model_add = n->amem[0];
	n->peer->model_cas = n->amem[1];
	*c = (struct dpv_rc_config){
		.uc = o->uc, .mtu = o->mtu, .qpn = 0x11 + id, .dest_qpn = 0x11 + !id,
		.sq_psn = o->psn[id], .rq_psn = o->psn[!id], .timeout = o->timeout,
		.retry_cnt = o->retry_cnt, .rnr_retry = o->rnr_retry,
		.min_rnr_timer = o->min_rnr_timer, .max_rd_atomic = o->rd_atomic,
		.max_dest_rd_atomic = o->rd_atomic, .access = o->access[id],
		.max_send_wr = o->sq_depth, .max_recv_wr = o->rq_depth,
	};
}

static void sim_init(struct sim *s, const struct sim_opts *o)
{
	memset(s, 0, sizeof(*s));
	s->rng = o->seed | 1;
	s->mass = o->mass;
	s->uc = o->uc;
	s->mix = o->mix;
	s->max_len = o->max_len;
	s->f = o->f;
	s->post_gap = o->post_gap;
	s->lat = 2000;
	s->reorder_lat = 6000;
	for (int id = 0; id < 2; id++) {
		struct dpv_roce_path *p = &s->path[id];

		memset(p, 0, sizeof(*p));
		p->smac[5] = (uint8_t)(1 + id);
		p->dmac[5] = (uint8_t)(2 - id);
		p->smac[0] = p->dmac[0] = 2;
		dpv__roce_gid_from_ipv4(p->sgid, htonl(0x0A000001 + id));
		dpv__roce_gid_from_ipv4(p->dgid, htonl(0x0A000002 - id));
		p->hop_limit = 64;
		p->sport = dpv__roce_udp_sport(0, 0x11, 0x12);
	}
	for (int id = 0; id < 2; id++)
		node_init(s, id, o);
	for (int id = 0; id < 2; id++) {
		struct node *n = &s->n[id];

		CHECK_EQ(dpv__rc_init(&n->rc, &n->cfg, &sim_ops, n), 0);
		for (uint32_t i = 0; i < n->prepost; i++)
			CHECK_EQ(sim_post_recv(n), 0);
	}
}

/* Both engines set up again (as after RESET), the memory and the clock kept. */
static void sim_restart(struct sim *s)
{
	while (s->nheap > 0)
		free(heap_pop(s).data);
	for (int id = 0; id < 2; id++) {
		struct node *n = &s->n[id];

		dpv__rc_fini(&n->rc);
		for (uint32_t i = 0; i < n->sq_depth; i++) {
			free(n->twr[i].rbuf);
			n->twr[i].rbuf = NULL;
		}
		n->posted = n->done = n->failed = n->recv_posted = n->recv_done = 0;
		n->exp_head = n->exp_tail = n->repost_head = n->repost_tail = 0;
		n->nslog = n->nrlog = n->ntlog = n->qp_errors = 0;
		CHECK_EQ(dpv__rc_init(&n->rc, &n->cfg, &sim_ops, n), 0);
		for (uint32_t i = 0; i < n->prepost; i++)
			CHECK_EQ(sim_post_recv(n), 0);
	}
}

static void sim_fini(struct sim *s)
{
	for (int id = 0; id < 2; id++) {
		struct node *n = &s->n[id];

		dpv__rc_fini(&n->rc);
		for (uint32_t i = 0; i < n->sq_depth; i++)
			free(n->twr[i].rbuf);
		for (uint32_t i = 0; i < n->rq_depth; i++)
			free(n->rbufs[i]);
		free(n->rbufs);
		free(n->twr);
		free(n->wmem);
		free(n->rmem);
		free(n->expect);
		free(n->repost_at);
	}
	while (s->nheap > 0)
		free(heap_pop(s).data);
	free(s->heap);
}

/* --- posting --------------------------------------------------------------------------- */

/* Post @wr (its handle is the next sequence number) from node @n; @tag seeds its payload. */
static int sim_post(struct node *n, struct dpv_rc_send_wr wr, uint64_t tag)
{
	struct twr *t;
	int ret;

	if (n->posted - n->done >= n->sq_depth)
		return -ENOMEM;
	t = &n->twr[n->posted % n->sq_depth];
	free(t->rbuf);
	memset(t, 0, sizeof(*t));
	wr.handle = n->posted;
	t->wr = wr;
	t->tag = tag;
	if (wr.opcode == DPV_RC_WR_READ) {
		t->rbuf = malloc(wr.length ? wr.length : 1);
		if (t->rbuf == NULL)
			abort();
		memset(t->rbuf, 0xEE, wr.length);
		t->read_off = (uint32_t)(wr.remote_addr - n->peer->rva);
	}
	t->slot_off = (uint32_t)(wr.remote_addr - n->peer->wva);
	n->posted++;	/* before: the engine may complete it inside the call (UC, ERR) */
	ret = dpv__rc_post_send(&n->rc, &wr, n->sim->now);
	if (ret < 0)
		n->posted--;
	return ret;
}

static uint32_t rnd_len(struct sim *s)
{
	uint64_t r = sim_rnd(s) % 100;

	if (r < 5)
		return 0;
	if (r < 50)
		return 1 + (uint32_t)(sim_rnd(s) % s->n[0].cfg.mtu);
	return (uint32_t)(sim_rnd(s) % (s->max_len + 1));
}

/* A random WR of the mix from @n, its expectations set (mass mode). */
static int sim_post_random(struct node *n)
{
	struct sim *s = n->sim;
	struct node *peer = n->peer;
	struct dpv_rc_send_wr wr = { 0 };
	uint64_t tag = sim_rnd(s);
	struct twr *t;
	uint8_t op;
	int ret;

	do
		op = (uint8_t)(sim_rnd(s) % 7);
	while (!(s->mix & (1u << op)));
	wr.opcode = op;
	wr.length = rnd_len(s);
	wr.flags = (sim_rnd(s) & 3) == 0 ? DPV_RC_SEND_SOLICITED : 0;
	wr.flags |= (sim_rnd(s) & 15) == 0 ? DPV_RC_SEND_FENCE : 0;
	wr.imm = (uint32_t)n->posted ^ 0x5A000000u;
	switch (op) {
	case DPV_RC_WR_WRITE:
	case DPV_RC_WR_WRITE_IMM:
		wr.rkey = peer->wkey;
		/* the slot is taken once the WR is posted (a full SQ refuses it) */
		wr.remote_addr = peer->wva + (uint64_t)(n->next_slot % 160) * 4224;
		break;
	case DPV_RC_WR_READ:
		wr.rkey = peer->rkey;
		wr.remote_addr = peer->rva + sim_rnd(s) % (peer->rlen - wr.length + 1);
		break;
	case DPV_RC_WR_CMP_SWP:
	case DPV_RC_WR_FETCH_ADD:
		wr.length = 8;
		wr.rkey = peer->akey;
		wr.remote_addr = peer->ava + (op == DPV_RC_WR_CMP_SWP ? 8 : 0);
		wr.compare_add = op == DPV_RC_WR_FETCH_ADD ? sim_rnd(s) % 1000 :
				 (sim_rnd(s) & 3) ? n->model_cas : n->model_cas + 1;
		wr.swap = sim_rnd(s);
		break;
	}
	ret = sim_post(n, wr, tag);
	if (ret < 0)
		return ret;
	if (op == DPV_RC_WR_WRITE || op == DPV_RC_WR_WRITE_IMM)
		n->next_slot++;
	t = &n->twr[(n->posted - 1) % n->sq_depth];
	if (op >= DPV_RC_WR_CMP_SWP)
		n->atomics_posted++;
	if (op == DPV_RC_WR_FETCH_ADD) {	/* atomics execute in post order */
		t->expect_orig = n->model_add;
		n->model_add += wr.compare_add;
	} else if (op == DPV_RC_WR_CMP_SWP) {
		t->expect_orig = n->model_cas;
		if (n->model_cas == wr.compare_add)
			n->model_cas = wr.swap;
	}
	if (op == DPV_RC_WR_SEND || op == DPV_RC_WR_SEND_IMM || op == DPV_RC_WR_WRITE_IMM) {
		struct expect_recv *e = &peer->expect[peer->exp_tail++ % peer->exp_cap];

		*e = (struct expect_recv){
			.opcode = op == DPV_RC_WR_WRITE_IMM ? DPV_RC_WC_RECV_RDMA_WITH_IMM :
				  DPV_RC_WC_RECV,
			.se = (wr.flags & DPV_RC_SEND_SOLICITED) != 0, .len = wr.length,
			.with_imm = op != DPV_RC_WR_SEND, .imm = op != DPV_RC_WR_SEND ? wr.imm : 0,
			.slot_off = t->slot_off, .tag = tag };
	}
	return 0;
}

/* --- the loop -------------------------------------------------------------------------- */

static uint64_t sim_next(struct sim *s)
{
	uint64_t t = s->nheap ? s->heap[0].at : DPV_RC_NEVER;

	for (int id = 0; id < 2; id++) {
		struct node *n = &s->n[id];
		uint64_t d = dpv__rc_next_deadline(&n->rc);

		if (d < t)
			t = d;
		if (n->repost_head != n->repost_tail && n->repost_at[n->repost_head % n->rq_depth] < t)
			t = n->repost_at[n->repost_head % n->rq_depth];
		if (s->mass && n->posted < n->quota && !n->rc.err && s->next_post[id] > s->now &&
		    s->next_post[id] < t)
			t = s->next_post[id];
	}
	return t;
}

static void deliver(struct sim *s, struct frame f)
{
	struct dpv_roce_frame fr;
	struct node *n = &s->n[f.to];
	int ret = dpv__roce_frame_parse(f.data, f.len, &fr);

	if (ret < 0) {
		s->w.refused++;	/* the corrupted ones, which the ICRC (or a length) gives away */
	} else {
		s->w.delivered++;
		dpv__rc_rx(&n->rc, &fr.h, f.data + fr.payload_off, fr.payload_len, s->now);
	}
	free(f.data);
}

/* mass mode: each application posts what its send queue has room for */
static void sim_app(struct sim *s)
{
	if (!s->mass)
		return;
	for (int id = 0; id < 2; id++)
		while (s->n[id].posted < s->n[id].quota && !s->n[id].rc.err &&
		       s->now >= s->next_post[id] && sim_post_random(&s->n[id]) == 0)
			if (s->post_gap)
				s->next_post[id] = s->now + s->post_gap;
}

/* One step: time jumps to the next event, if it comes before @limit, which then happens.
 * false when nothing is left before @limit. */
static bool sim_step_until(struct sim *s, uint64_t limit)
{
	uint64_t t;

	sim_app(s);
	t = sim_next(s);
	if (t == DPV_RC_NEVER || t > limit)
		return false;
	if (t > s->now)
		s->now = t;
	while (s->nheap > 0 && s->heap[0].at <= s->now)
		deliver(s, heap_pop(s));
	for (int id = 0; id < 2; id++)		/* the burst is done: one ACK for it */
		dpv__rc_rx_flush(&s->n[id].rc);
	for (int id = 0; id < 2; id++) {
		struct node *n = &s->n[id];

		if (dpv__rc_next_deadline(&n->rc) <= s->now)
			dpv__rc_tick(&n->rc, s->now);
		while (n->repost_head != n->repost_tail &&
		       n->repost_at[n->repost_head % n->rq_depth] <= s->now) {
			n->repost_head++;
			if (!n->rc.err)
				sim_post_recv(n);
		}
	}
	return true;
}

static bool sim_step(struct sim *s)
{
	return sim_step_until(s, DPV_RC_NEVER - 1);
}

/* Run until nothing is left to happen before @limit; the clock then reads @limit. */
static void sim_run(struct sim *s, uint64_t limit)
{
	while (sim_step_until(s, limit))
		;
	if (s->now < limit)
		s->now = limit;
}

#endif
