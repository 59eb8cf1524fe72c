/* SPDX-License-Identifier: BSD-3-Clause */
/* libFuzzer harness: the RC/UC protocol engine (lib/roce/rc_*.c) driven by an input that is a
 * stream of actions: post a send WR, post a receive WQE, receive a packet (any opcode, PSNs
 * around the expected ones or anywhere, keys and addresses around the engine's regions or
 * anywhere, lengths up to 2^32 - 1, payloads of any size up to 1100 bytes), let time pass,
 * make the transmit queue refuse or the gather list fail, end a receive burst (the ACK due
 * goes out), move the QP to ERR. What must hold:
 * - nothing is read or written outside the memory the callbacks grant: remote memory only
 *   inside a range mem_check accepted for that right and key (and the regions are buffers of
 *   exactly their size, so AddressSanitizer sees the rest), a receive WQE within its posted
 *   length, a READ/atomic WR within its length, a payload within its WR;
 * - every emitted packet is one the codec can encode, of this QP's P_Key and destination,
 *   with no more than an MTU of payload;
 * - send and receive completions come once each, in post order; after ERR all are flushed;
 * - RC: a request is executed (a receive WQE or remote memory written, an atomic done, a
 *   receive completed) only inside dpv__rc_rx of its own packet, and never twice for one PSN:
 *   a duplicate is answered again (an ACK, the READ's bytes, the atomic's cached value), never
 *   executed again (each execution callback counts the packet's PSN);
 * - the queues and PSNs stay consistent (head <= cur <= tail, 24-bit PSNs).
 * Input: byte 0 picks RC/UC, the MTU and max_(dest_)rd_atomic; then records (see below). */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fuzz_input.h"
#include "rc_engine.h"
#include "roce_wire.h"

#define CHECK(cond) do { \
	if (!(cond)) { \
		fprintf(stderr, "fuzz_rc_engine: %s does not hold (line %d)\n", #cond, __LINE__); \
		abort(); \
	} \
} while (0)

#define SQ 16
#define RQ 8
#define GRANTS 32

enum { W_KEY = 0x1111, R_KEY = 0x2222, A_KEY = 0x3333 };
static const uint64_t W_VA = 0x10000, R_VA = 0x7FFFFFFFF000ull, A_VA = 0x30000;
static const uint32_t W_LEN = 9000, R_LEN = 9000, A_LEN = 16;

struct fwr {
	uint8_t opcode;
	uint32_t len;
	uint8_t *buf;		/* payload (SEND/WRITE) or answer (READ/atomic), exactly len */
};

struct grant {
	uint32_t rkey, len, access;
	uint64_t va;
};

struct harness {
	struct dpv_rc rc;
	struct dpv_rc_config cfg;
	uint8_t *w, *r, *a;
	struct fwr sq[SQ];
	uint64_t posted, done;
	uint8_t *rbuf[RQ];
	uint32_t rlen[RQ];
	uint64_t rposted, rdone;
	struct grant grants[GRANTS];
	uint32_t ngrants;
	uint32_t fail_emits, fail_mode;
	int errors;
	uint64_t now;
	/* the packet dpv__rc_rx is handling: its PSN, whether an execution callback came */
	bool in_rx, rx_exec;
	uint32_t rx_psn;
};

/* RC responder executions per PSN (24 bits), and which entries to clear for the next input */
static uint8_t executions[1 << 24];
static uint32_t exec_psns[8192];
static uint32_t nexec;

/* An execution callback of the responder: a packet being handled, executed once at most. */
static void executed(struct harness *x)
{
	CHECK(x->in_rx);
	if (x->cfg.uc || x->rx_exec)
		return;                           /* UC takes a PSN again as a new message */
	x->rx_exec = true;
	CHECK(executions[x->rx_psn] == 0);        /* a duplicate executed again */
	executions[x->rx_psn]++;
	CHECK(nexec < sizeof(exec_psns) / sizeof(exec_psns[0]));
	exec_psns[nexec++] = x->rx_psn;
}

static struct fwr *fwr_of(struct harness *x, uint64_t handle)
{
	CHECK(handle >= x->done && handle < x->posted);
	return &x->sq[handle % SQ];
}

static bool granted(struct harness *x, uint32_t rkey, uint64_t va, uint32_t len,
		    uint32_t access)
{
	for (uint32_t i = 0; i < GRANTS && i < x->ngrants; i++) {
		struct grant *g = &x->grants[i];

		if (g->rkey == rkey && (g->access & access) && va >= g->va &&
		    va + len <= g->va + g->len && va + len >= va)
			return true;
	}
	return false;
}

/* the region of @rkey if it holds [va, va + len) and grants @access */
static uint8_t *region(uint32_t rkey, uint64_t va, uint32_t len, uint32_t access,
		       struct harness *x)
{
	uint8_t *base = NULL;
	uint64_t bva = 0;
	uint32_t blen = 0, rights = 0;

	if (rkey == W_KEY)
		base = x->w, bva = W_VA, blen = W_LEN, rights = DPV_RC_ACCESS_REMOTE_WRITE;
	else if (rkey == R_KEY)
		base = x->r, bva = R_VA, blen = R_LEN, rights = DPV_RC_ACCESS_REMOTE_READ;
	else if (rkey == A_KEY)
		base = x->a, bva = A_VA, blen = A_LEN, rights = DPV_RC_ACCESS_REMOTE_ATOMIC;
	if (base == NULL || !(rights & access) || va < bva || va + len > bva + blen ||
	    va + len < va)
		return NULL;
	return base + (va - bva);
}

static int f_emit(void *ctx, const struct dpv_roce_hdrs *h, const struct dpv_rc_payload *pl)
{
	struct harness *x = ctx;
	uint8_t hdr[DPV_ROCE_MAX_HDR_LEN + 64], pay[4096];

	if (x->fail_emits > 0) {
		x->fail_emits--;
		if (x->fail_mode & 1)
			return -ENOBUFS;
		if (pl->src != DPV_RC_PAYLOAD_NONE)
			return -EFAULT;
	}
	CHECK(h->bth.pkey == 0xFFFF && h->bth.dqpn == x->cfg.dest_qpn && h->bth.psn <= 0xFFFFFF);
	CHECK(pl->len <= x->cfg.mtu);
	CHECK(dpv__roce_hdrs_encode(hdr, sizeof(hdr), h, pl->len) > 0);
	CHECK((h->bth.opcode & 0xE0) == (x->cfg.uc ? DPV_ROCE_UC : DPV_ROCE_RC));
	if (pl->src == DPV_RC_PAYLOAD_WR) {
		struct fwr *f = fwr_of(x, pl->handle);

		CHECK(f->opcode <= 3 && (uint64_t)pl->offset + pl->len <= f->len);
		memcpy(pay, f->buf + pl->offset, pl->len);
	} else if (pl->src == DPV_RC_PAYLOAD_MEM) {
		uint8_t *p = region(pl->rkey, pl->va, pl->len, DPV_RC_ACCESS_REMOTE_READ, x);

		CHECK(granted(x, pl->rkey, pl->va, pl->len, DPV_RC_ACCESS_REMOTE_READ));
		CHECK(p != NULL);
		memcpy(pay, p, pl->len);
	} else {
		CHECK(pl->len == 0);
	}
	return 0;
}

static int f_wr_write(void *ctx, uint64_t handle, uint32_t offset, const void *data,
		      uint32_t len)
{
	struct harness *x = ctx;
	struct fwr *f = fwr_of(x, handle);

	CHECK(f->opcode >= DPV_RC_WR_READ && (uint64_t)offset + len <= f->len);
	memcpy(f->buf + offset, data, len);
	return 0;
}

static int f_recv_write(void *ctx, uint64_t handle, uint32_t offset, const void *data,
			uint32_t len)
{
	struct harness *x = ctx;

	CHECK(handle >= x->rdone && handle < x->rposted);
	CHECK((uint64_t)offset + len <= x->rlen[handle % RQ]);
	executed(x);
	memcpy(x->rbuf[handle % RQ] + offset, data, len);
	return 0;
}

static int f_mem_check(void *ctx, uint32_t rkey, uint64_t va, uint32_t len, uint32_t access)
{
	struct harness *x = ctx;

	CHECK(len > 0 && va + len > va);
	if (region(rkey, va, len, access, x) == NULL)
		return -EACCES;
	x->grants[x->ngrants++ % GRANTS] = (struct grant){ rkey, len, access, va };
	return 0;
}

static int f_mem_write(void *ctx, uint32_t rkey, uint64_t va, const void *data, uint32_t len)
{
	struct harness *x = ctx;
	uint8_t *p = region(rkey, va, len, DPV_RC_ACCESS_REMOTE_WRITE, x);

	CHECK(granted(x, rkey, va, len, DPV_RC_ACCESS_REMOTE_WRITE) && p != NULL);
	executed(x);
	memcpy(p, data, len);
	return 0;
}

static int f_mem_atomic(void *ctx, uint32_t rkey, uint64_t va, uint8_t opcode,
			uint64_t compare_add, uint64_t swap, uint64_t *orig)
{
	struct harness *x = ctx;
	uint8_t *p = region(rkey, va, 8, DPV_RC_ACCESS_REMOTE_ATOMIC, x);
	uint64_t v;

	CHECK(granted(x, rkey, va, 8, DPV_RC_ACCESS_REMOTE_ATOMIC) && p != NULL && !(va & 7));
	CHECK(opcode == DPV_RC_WR_CMP_SWP || opcode == DPV_RC_WR_FETCH_ADD);
	executed(x);
	memcpy(&v, p, 8);
	*orig = v;
	v = opcode == DPV_RC_WR_FETCH_ADD ? v + compare_add : v == compare_add ? swap : v;
	memcpy(p, &v, 8);
	return 0;
}

/* remote invalidation: odd keys may be invalidated (both answers are exercised) */
static int f_mem_invalidate(void *ctx, uint32_t rkey)
{
	(void)ctx;
	return rkey & 1 ? 0 : -EACCES;
}

static void f_send_done(void *ctx, const struct dpv_rc_send_cqe *c)
{
	struct harness *x = ctx;
	struct fwr *f = fwr_of(x, c->handle);

	CHECK(c->handle == x->done);
	CHECK(c->status != DPV_RC_WC_SUCCESS || c->byte_len == f->len);
	free(f->buf);
	f->buf = NULL;
	x->done++;
}

static void f_recv_done(void *ctx, const struct dpv_rc_recv_cqe *c)
{
	struct harness *x = ctx;

	CHECK(c->handle == x->rdone && c->handle < x->rposted);
	CHECK(c->status != DPV_RC_WC_SUCCESS || c->opcode == DPV_RC_WC_RECV_RDMA_WITH_IMM ||
	      c->byte_len <= x->rlen[c->handle % RQ]);
	if (c->status == DPV_RC_WC_SUCCESS)
		executed(x);
	free(x->rbuf[c->handle % RQ]);
	x->rbuf[c->handle % RQ] = NULL;
	x->rdone++;
}

static void f_qp_error(void *ctx)
{
	((struct harness *)ctx)->errors++;
}

static const struct dpv_rc_ops ops = {
	.emit = f_emit, .wr_write = f_wr_write, .recv_write = f_recv_write,
	.mem_check = f_mem_check, .mem_write = f_mem_write, .mem_atomic = f_mem_atomic,
	.mem_invalidate = f_mem_invalidate, .send_done = f_send_done, .recv_done = f_recv_done, .qp_error = f_qp_error,
};

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
	return 0;
}

static uint32_t pick_key(struct fuzz_input *in)
{
	static const uint32_t keys[] = { W_KEY, R_KEY, A_KEY };
	uint8_t k = fuzz_u8(in);

	return k < 3 * 80 ? keys[k % 3] : fuzz_u32(in);
}

static uint64_t pick_va(struct fuzz_input *in, uint32_t rkey)
{
	uint8_t m = fuzz_u8(in);
	uint64_t base = rkey == W_KEY ? W_VA : rkey == R_KEY ? R_VA : A_VA;

	if (m >= 240)
		return (uint64_t)fuzz_u32(in) << 32 | fuzz_u32(in);
	return base + (uint64_t)fuzz_u16(in) - 64;
}

/* record 0x00-0x1F: a send WR */
static void do_post_send(struct harness *x, struct fuzz_input *in)
{
	struct dpv_rc_send_wr wr = { .handle = x->posted };
	struct fwr *f = &x->sq[x->posted % SQ];

	wr.opcode = fuzz_u8(in) % 8;	/* 7: an unknown one */
	wr.flags = fuzz_u8(in) & 0xF;
	wr.length = fuzz_u16(in) % 5000;
	wr.rkey = pick_key(in);
	wr.remote_addr = pick_va(in, wr.rkey);
	wr.imm = fuzz_u32(in);
	wr.compare_add = fuzz_u32(in);
	wr.swap = fuzz_u32(in);
	if (wr.opcode == DPV_RC_WR_CMP_SWP || wr.opcode == DPV_RC_WR_FETCH_ADD) {
		wr.length = 8;
		wr.remote_addr &= ~7ull;
	}
	if (x->posted - x->done >= SQ)
		return;
	free(f->buf);
	f->opcode = wr.opcode;
	f->len = wr.length;
	f->buf = malloc(wr.length ? wr.length : 1);
	CHECK(f->buf != NULL);
	memset(f->buf, 0x5A, wr.length);
	x->posted++;	/* before: the engine may complete it inside the call */
	if (dpv__rc_post_send(&x->rc, &wr, x->now) < 0) {
		x->posted--;
		free(f->buf);
		f->buf = NULL;
	}
}

/* record 0x20-0x2F: a receive WQE */
static void do_post_recv(struct harness *x, struct fuzz_input *in)
{
	uint32_t len = fuzz_u16(in) % 4200, i = x->rposted % RQ;

	if (x->rposted - x->rdone >= RQ)
		return;
	free(x->rbuf[i]);
	x->rbuf[i] = malloc(len ? len : 1);
	x->rlen[i] = len;
	CHECK(x->rbuf[i] != NULL);
	x->rposted++;
	if (dpv__rc_post_recv(&x->rc, x->rposted - 1, len) < 0) {
		x->rposted--;
		free(x->rbuf[i]);
		x->rbuf[i] = NULL;
	}
}

/* record 0x30-0xBF: a packet */
static void do_rx(struct harness *x, struct fuzz_input *in)
{
	struct dpv_roce_hdrs h;
	uint8_t mode = fuzz_u8(in), *payload;
	uint32_t len;

	memset(&h, 0, sizeof(h));
	h.bth.opcode = fuzz_u8(in);
	if (mode & 1)	/* mostly of our transport */
		h.bth.opcode = (h.bth.opcode & 0x1F) | (x->cfg.uc ? DPV_ROCE_UC : DPV_ROCE_RC);
	h.bth.pkey = 0xFFFF;
	h.bth.dqpn = mode & 2 ? x->cfg.qpn : fuzz_u32(in) & 0xFFFFFF;
	h.bth.se = mode & 4;
	h.bth.ackreq = mode & 8;
	switch (mode >> 4 & 3) {	/* around the expected request or response PSN */
	case 0:
		h.bth.psn = x->rc.resp.psn + (uint32_t)(int8_t)fuzz_u8(in);
		break;
	case 1:
		h.bth.psn = x->rc.comp.psn + (uint32_t)(int8_t)fuzz_u8(in);
		break;
	case 2:
		h.bth.psn = x->rc.req.sent_max - 1 - fuzz_u8(in) % 4;
		break;
	default:
		h.bth.psn = fuzz_u32(in);
	}
	h.bth.psn &= 0xFFFFFF;
	h.aeth.syndrome = fuzz_u8(in);
	h.aeth.msn = fuzz_u32(in) & 0xFFFFFF;
	h.reth.rkey = pick_key(in);
	h.reth.va = pick_va(in, h.reth.rkey);
	h.reth.len = mode & 64 ? fuzz_u32(in) : fuzz_u16(in) % 10000;
	h.atomic.rkey = pick_key(in);
	h.atomic.va = pick_va(in, h.atomic.rkey);
	h.atomic.swap_add = fuzz_u32(in);
	h.atomic.compare = fuzz_u32(in);
	h.atomic_ack.orig = fuzz_u32(in);
	h.imm = fuzz_u32(in);
	len = fuzz_u16(in) % 1100;
	/* exactly @len bytes, so that a read past them is seen */
	payload = malloc(len ? len : 1);
	CHECK(payload != NULL);
	fuzz_bytes(in, payload, len);
	x->in_rx = true;
	x->rx_exec = false;
	x->rx_psn = h.bth.psn;
	dpv__rc_rx(&x->rc, &h, len ? payload : NULL, len, x->now);
	x->in_rx = false;
	free(payload);
}

static void check_state(struct harness *x)
{
	const struct dpv_rc *rc = &x->rc;

	CHECK(rc->sq_cur - rc->sq_head <= rc->sq_tail - rc->sq_head);
	CHECK(rc->sq_tail - rc->sq_head <= SQ && rc->rq_tail - rc->rq_head <= RQ);
	CHECK(rc->req.psn <= 0xFFFFFF && rc->comp.psn <= 0xFFFFFF && rc->resp.psn <= 0xFFFFFF);
	CHECK(rc->req.rd_atomic <= rc->rd_atomic_max);
	CHECK(rc->sq_tail - rc->sq_head == x->posted - x->done);
	CHECK(rc->rq_tail - rc->rq_head == x->rposted - x->rdone);
	if (rc->err)
		CHECK(x->posted == x->done && x->rposted == x->rdone &&
		      dpv__rc_next_deadline(rc) == DPV_RC_NEVER);
}

static void harness_init(struct harness *x, uint8_t conf)
{
	static const uint32_t mtus[] = { 256, 512, 1024, 2048, 4096 };

	memset(x, 0, sizeof(*x));
	while (nexec > 0)
		executions[exec_psns[--nexec]] = 0;
	x->cfg = (struct dpv_rc_config){
		.uc = conf & 1, .mtu = mtus[(conf >> 1) % 5], .qpn = 0x21, .dest_qpn = 0x22,
		.sq_psn = 0xFFFFF0, .rq_psn = 0xFFFFF8, .timeout = 3, .retry_cnt = 2,
		.rnr_retry = conf & 0x10 ? 7 : 1, .min_rnr_timer = 1,
		.max_rd_atomic = conf >> 5 & 3, .max_dest_rd_atomic = conf >> 6 & 3,
		.access = DPV_RC_ACCESS_REMOTE_WRITE | DPV_RC_ACCESS_REMOTE_READ |
			  DPV_RC_ACCESS_REMOTE_ATOMIC,
		.max_send_wr = SQ, .max_recv_wr = RQ,
	};
	x->w = calloc(1, W_LEN);
	x->r = calloc(1, R_LEN);
	x->a = calloc(1, A_LEN);
	CHECK(x->w && x->r && x->a);
	CHECK(dpv__rc_init(&x->rc, &x->cfg, &ops, x) == 0);
}

static void harness_fini(struct harness *x)
{
	dpv__rc_fini(&x->rc);
	for (int i = 0; i < SQ; i++)
		free(x->sq[i].buf);
	for (int i = 0; i < RQ; i++)
		free(x->rbuf[i]);
	free(x->w);
	free(x->r);
	free(x->a);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct fuzz_input in = { data, size };
	struct harness *x = malloc(sizeof(*x));

	CHECK(x != NULL);
	harness_init(x, fuzz_u8(&in));
	for (int n = 0; n < 4000 && in.left > 0; n++) {
		uint8_t a = fuzz_u8(&in);

		if (a < 0x20) {
			do_post_send(x, &in);
		} else if (a < 0x30) {
			do_post_recv(x, &in);
		} else if (a < 0xC0) {
			do_rx(x, &in);
		} else if (a < 0xE0) {
			x->now += (uint64_t)fuzz_u16(&in) * 100;
			if (dpv__rc_next_deadline(&x->rc) <= x->now)
				dpv__rc_tick(&x->rc, x->now);
		} else if (a < 0xF0) {
			x->fail_emits = a & 7;
			x->fail_mode = a >> 3 & 1;
		} else if (a == 0xFF) {
			dpv__rc_set_error(&x->rc);
		} else if (a >= 0xF8) {
			dpv__rc_rx_flush(&x->rc);	/* the end of a burst: the ACK due */
		}
		check_state(x);
	}
	harness_fini(x);
	free(x);
	return 0;
}
