/* SPDX-License-Identifier: BSD-3-Clause */
/* libFuzzer harness: random sequences of window BINDs (type 1 and 2, good and bad), local and
 * remote invalidations, deallocations, ibv_dereg_mr and remote READ/WRITE/atomic access checks
 * against the context's key table (lib/verbs/mw.c, mr.c), on a net_null port: what the RC
 * responder asks (dpv__mr_by_rkey) for every remote access of a peer.
 *
 * A shadow model of the windows and MRs, written from the rules of doc/semantics.md and not
 * from the code, gives for each operation what must happen; what must hold for every input:
 * - a bind succeeds exactly when the rules allow it (IBV_WC_MW_BIND_ERR otherwise), an
 *   invalidation likewise, ibv_dereg_mr is EBUSY exactly while a window is bound on the MR;
 * - an access is granted exactly when a currently valid key (an MR's, or a bound window's
 *   current key, through the QP it is bound to for type 2) covers every byte of it with the
 *   right; a key that was current before its window was bound again, invalidated or
 *   deallocated grants nothing; the MR given back is the one whose bytes the key names.
 * A violation aborts, which libFuzzer reports with the input that caused it. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fuzz_input.h"
#include "verbs_priv.h"

#define NMR 4
#define NMW 4
#define NQP 3
#define MR_LEN 4096
#define OLD_KEYS 8

#define REMOTE (IBV_ACCESS_REMOTE_READ | IBV_ACCESS_REMOTE_WRITE | IBV_ACCESS_REMOTE_ATOMIC)

#define CHECK(c) do { if (!(c)) { fprintf(stderr, "fuzz_mw: %s:%d: %s\n", __FILE__, \
					   __LINE__, #c); abort(); } } while (0)

static struct ibv_context *ctx;
static struct ibv_pd *pds[2];
static struct ibv_cq *cq;
static struct ibv_qp *qps[NQP];        /* 0, 1 in pds[0]; 2 in pds[1] */
static uint8_t *arena;

/* the MRs: what each allows, its PD */
static const struct { unsigned int access; int pd; } mr_kind[NMR] = {
	{ IBV_ACCESS_MW_BIND | IBV_ACCESS_LOCAL_WRITE | REMOTE, 0 },
	{ IBV_ACCESS_MW_BIND | IBV_ACCESS_REMOTE_READ, 0 },              /* no LOCAL_WRITE */
	{ IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_READ, 0 },           /* no MW_BIND */
	{ IBV_ACCESS_MW_BIND | IBV_ACCESS_LOCAL_WRITE | REMOTE, 1 },
};
static struct ibv_mr *mrs[NMR];

/* the shadow of a window */
struct shadow {
	struct ibv_mw *mw;
	int type, pd;
	uint32_t key;
	bool bound;
	int mr, qp;
	uint64_t addr, len;
	unsigned int access;
};
static struct shadow sw[NMW];
static uint32_t old_keys[OLD_KEYS];    /* keys that named something once */
static unsigned int nold;

static void remember(uint32_t key)
{
	old_keys[nold++ % OLD_KEYS] = key;
}

static void mr_register(int i)
{
	mrs[i] = ibv_reg_mr(pds[mr_kind[i].pd], arena + (size_t)i * MR_LEN, MR_LEN,
			    (int)mr_kind[i].access);
	CHECK(mrs[i] != NULL);
}

static void mw_alloc(int i, int type, int pd)
{
	sw[i] = (struct shadow){ .type = type, .pd = pd };
	sw[i].mw = ibv_alloc_mw(pds[pd], type == 1 ? IBV_MW_TYPE_1 : IBV_MW_TYPE_2);
	CHECK(sw[i].mw != NULL);
	sw[i].key = sw[i].mw->rkey;
}

static int qp_pd(int q)
{
	return q == 2;
}

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
	struct ibv_device **list;
	int n = 0;

	(void)argc;
	(void)argv;
	setenv("DPV_EAL_ARGS", "--vdev=net_null0 --log-level=lib.eal:error "
	       "--log-level=lib.telemetry:error", 1);
	list = ibv_get_device_list(&n);
	if (list == NULL || n < 1 || (ctx = ibv_open_device(list[0])) == NULL) {
		fprintf(stderr, "fuzz_mw: no device: %s\n", strerror(errno));
		exit(1);
	}
	ibv_free_device_list(list);
	pds[0] = ibv_alloc_pd(ctx);
	pds[1] = ibv_alloc_pd(ctx);
	cq = ibv_create_cq(ctx, 16, NULL, NULL, 0);
	arena = aligned_alloc(4096, NMR * MR_LEN);
	CHECK(pds[0] != NULL && pds[1] != NULL && cq != NULL && arena != NULL);
	for (int q = 0; q < NQP; q++) {
		struct ibv_qp_init_attr a = { .send_cq = cq, .recv_cq = cq, .qp_type = IBV_QPT_RC,
					      .cap = { .max_send_wr = 4, .max_recv_wr = 4,
						       .max_send_sge = 1, .max_recv_sge = 1 } };

		qps[q] = ibv_create_qp(pds[qp_pd(q)], &a);
		CHECK(qps[q] != NULL);
	}
	for (int i = 0; i < NMR; i++)
		mr_register(i);
	for (int i = 0; i < NMW; i++)
		mw_alloc(i, 1 + (i & 1), i == 3);
	return 0;
}

static struct dpv_qp *dqp(int q)
{
	return container_of(qps[q], struct dpv_qp, ibqp);
}

/* ---- the model ---- */

/* [va, va + len) inside [base, base + size), without wrapping */
static bool inside(uint64_t va, uint64_t len, uint64_t base, uint64_t size)
{
	return va >= base && len <= size && va - base <= size - len;
}

static bool bind_allowed(const struct shadow *w, int q, int m, uint64_t addr, uint64_t len,
			 unsigned int access, uint32_t key)
{
	uint64_t base = (uintptr_t)mrs[m]->addr;

	if (w->pd != qp_pd(q) || key >> 8 != w->key >> 8 || key == w->key)
		return false;
	if (access & ~(unsigned int)(REMOTE | IBV_ACCESS_LOCAL_WRITE))   /* LOCAL_WRITE: ignored */
		return false;
	if (w->type == 2 && (w->bound || len == 0))
		return false;
	if (len == 0)
		return true;
	if (mr_kind[m].pd != qp_pd(q) || !(mr_kind[m].access & IBV_ACCESS_MW_BIND))
		return false;
	if ((access & (IBV_ACCESS_REMOTE_WRITE | IBV_ACCESS_REMOTE_ATOMIC)) &&
	    !(mr_kind[m].access & IBV_ACCESS_LOCAL_WRITE))
		return false;
	return inside(addr, len, base, MR_LEN);
}

static void do_bind(struct fuzz_input *in)
{
	struct shadow *w = &sw[fuzz_u8(in) % NMW];
	int q = fuzz_u8(in) % NQP, m = fuzz_u8(in) % NMR;
	uint8_t mode = fuzz_u8(in);
	/* 16-byte steps from 16 bytes before the MR; lengths up to past its end */
	uint64_t addr = (uintptr_t)mrs[m]->addr + (uint64_t)fuzz_u8(in) * 16 - 16;
	uint64_t len = (uint64_t)fuzz_u8(in) * 17;
	uint8_t bits = fuzz_u8(in);
	/* the remote flags, LOCAL_WRITE (accepted, grants nothing), and now and then a flag no
	 * window takes (ZERO_BASED, MW_BIND) */
	unsigned int access = (bits & (REMOTE | IBV_ACCESS_LOCAL_WRITE)) |
			      (bits & 0x40 ? IBV_ACCESS_ZERO_BASED : 0) |
			      (bits & 0x80 ? IBV_ACCESS_MW_BIND : 0);
	uint32_t key = mode % 8 == 0 ? w->key + 0x100 : mode % 8 == 1 ? w->key :
		       ibv_inc_rkey(w->key) + (mode % 8 == 2 ? 1u : 0u);
	struct ibv_send_wr wr = {
		.opcode = IBV_WR_BIND_MW,
		.bind_mw = { .mw = w->mw, .rkey = key,
			     .bind_info = { .mr = mode & 0x80 ? NULL : mrs[m], .addr = addr,
					    .length = len, .mw_access_flags = access } },
	};
	bool ok = bind_allowed(w, q, m, addr, len, access, key) &&
		  (len == 0 || !(mode & 0x80));
	enum ibv_wc_status st = dpv__mw_bind(dqp(q), &wr);

	CHECK((st == IBV_WC_SUCCESS) == ok);
	CHECK(st == IBV_WC_SUCCESS || st == IBV_WC_MW_BIND_ERR);
	if (!ok)
		return;
	remember(w->key);
	*w = (struct shadow){ .mw = w->mw, .type = w->type, .pd = w->pd, .key = key,
			      .bound = len != 0, .mr = m, .qp = q, .addr = addr, .len = len,
			      .access = access & REMOTE };
	CHECK(w->mw->rkey == key);
}

/* A key: a window's current one, an old one, an MR's, or anything. */
static uint32_t pick_key(struct fuzz_input *in)
{
	uint8_t c = fuzz_u8(in);

	switch (c % 4) {
	case 0:
	case 3:
		if (c % 4 == 3 && c >= 0xf0)
			return fuzz_u32(in);
		return sw[(c >> 2) % NMW].key;
	case 1:
		return old_keys[(c >> 2) % OLD_KEYS];
	default:
		return mrs[(c >> 2) % NMR]->rkey;
	}
}

static struct shadow *window_of(uint32_t key)
{
	for (int i = 0; i < NMW; i++)
		if (sw[i].key == key)
			return &sw[i];
	return NULL;
}

static void do_invalidate(struct fuzz_input *in)
{
	uint32_t key = pick_key(in);
	int q = fuzz_u8(in) % NQP;
	bool remote = fuzz_u8(in) & 1;
	struct shadow *w = window_of(key);
	bool ok = w != NULL && w->bound && w->type == 2 && w->pd == qp_pd(q) &&
		  (!remote || w->qp == q);

	CHECK((dpv__mw_invalidate(dqp(q), key, remote) == 0) == ok);
	if (ok)
		w->bound = false;
}

static void do_access(struct fuzz_input *in)
{
	static const unsigned int rights[] = { IBV_ACCESS_REMOTE_READ, IBV_ACCESS_REMOTE_WRITE,
					       IBV_ACCESS_REMOTE_ATOMIC };
	uint32_t key = pick_key(in);
	int q = fuzz_u8(in) % NQP, m = fuzz_u8(in) % NMR;
	uint8_t near = fuzz_u8(in);
	/* near a window's range (its edges), or anywhere in and around an MR */
	uint64_t va = near & 1 ? sw[(near >> 1) % NMW].addr + (int8_t)fuzz_u8(in) :
		      (uintptr_t)mrs[m]->addr + (uint64_t)fuzz_u8(in) * 16 - 16;
	uint64_t len = 1 + (uint64_t)fuzz_u8(in) * 8;
	unsigned int access = rights[fuzz_u8(in) % 3];
	struct dpv_mr_table *t = dqp(q)->ctx->mrs;
	struct shadow *w = window_of(key);
	const struct ibv_mr *want = NULL;
	struct dpv_mr *got;

	for (int i = 0; i < NMR; i++)
		if (mrs[i]->rkey == key && mr_kind[i].pd == qp_pd(q) &&
		    (mr_kind[i].access & access) &&
		    inside(va, len, (uintptr_t)mrs[i]->addr, MR_LEN))
			want = mrs[i];
	if (w != NULL && w->bound && w->pd == qp_pd(q) && (w->access & access) &&
	    (w->type == 1 || w->qp == q) && inside(va, len, w->addr, w->len))
		want = mrs[w->mr];
	dpv__spinlock_lock(&t->lock);
	got = dpv__mr_by_rkey(dqp(q), key, va, len, access);
	dpv__spinlock_unlock(&t->lock);
	CHECK(got == NULL ? want == NULL : want == &got->ibmr);
}

static void do_dereg(struct fuzz_input *in)
{
	int m = fuzz_u8(in) % NMR;
	uint32_t rkey = mrs[m]->rkey;
	bool busy = false;

	for (int i = 0; i < NMW; i++)
		busy |= sw[i].bound && sw[i].mr == m;

	CHECK(ibv_dereg_mr(mrs[m]) == (busy ? EBUSY : 0));
	if (!busy) {
		remember(rkey);
		mr_register(m);
	}
}

static void do_realloc(struct fuzz_input *in)
{
	uint8_t c = fuzz_u8(in);
	int i = c % NMW;

	remember(sw[i].key);
	CHECK(ibv_dealloc_mw(sw[i].mw) == 0);
	mw_alloc(i, 1 + ((c >> 2) & 1), (c >> 3) & 1);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct fuzz_input in = { data, size };

	while (in.left > 0) {
		switch (fuzz_u8(&in) % 8) {
		case 0:
		case 1:
			do_bind(&in);
			break;
		case 2:
			do_invalidate(&in);
			break;
		case 3:
		case 4:
		case 5:
			do_access(&in);
			break;
		case 6:
			do_dereg(&in);
			break;
		default:
			do_realloc(&in);
			break;
		}
	}
	/* each input starts from unbound windows */
	for (int i = 0; i < NMW; i++) {
		remember(sw[i].key);
		CHECK(ibv_dealloc_mw(sw[i].mw) == 0);
		mw_alloc(i, 1 + (i & 1), i == 3);
	}
	return 0;
}
