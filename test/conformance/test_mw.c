/* SPDX-License-Identifier: BSD-3-Clause */
/* Memory windows and invalidation on one port (RC QPs of the device connected through the
 * port's own GID, as test_rc): ibv_alloc_mw/ibv_dealloc_mw of both types; a bound window's
 * key gives the peer exactly its range and flags (READ and WRITE inside it succeed with the
 * right bytes; a byte beyond it, a flag it lacks: REM_ACCESS_ERR); IBV_WC_MW_BIND_ERR for a
 * window outside its MR, an MR without IBV_ACCESS_MW_BIND, REMOTE_WRITE on an MR without
 * LOCAL_WRITE, ZERO_BASED or MW_BIND in the window's flags (LOCAL_WRITE there is accepted
 * and grants nothing), a QP of another PD, a zero-length or already bound type 2 window, a key whose
 * index changed; ibv_dereg_mr EBUSY while a window is bound; LOCAL_INV and SEND_WITH_INV
 * (the receiver's IBV_WC_WITH_INV and invalidated_rkey; the key dead at once); invalidating
 * what may not be (an MR's key, a type 1 window: LOC_QP_OP_ERR locally, REM_INV_REQ_ERR
 * remotely); a new binding's key differs in its low byte only and the old key reaches
 * nothing; a type 2 key works only through the QP that bound it; the same through the
 * ibv_qp_ex builders; on UC a window's WRITE and LOCAL_INV, SEND_WITH_INV EINVAL.
 * DPV_EAL_ARGS: --vdev=net_ring0. */
#include "dpv_test_rc.h"

#define SIDE (1 << 20)
#define BUF_LEN (4 * SIDE)
/* A's side [0, 1M): its windows' MR at WIN; B's side [1M, 2M): data to send and read into */
#define WIN (64 * 1024)
#define TX 0
#define RX (256 * 1024)
#define WLEN 8192

static struct ibv_context *ctx;
static struct ibv_pd *pd, *pd2;
static struct ibv_mr *mr;          /* [0, 2M): everything, MW_BIND */
static struct ibv_mr *mr_nobind;   /* [2M, 3M): everything but MW_BIND */
static struct ibv_mr *mr_nolw;     /* [3M, 3M + 64K): MW_BIND | REMOTE_READ, no LOCAL_WRITE */
static uint8_t *buf;
static union ibv_gid gid4;

static uint8_t *at(size_t off)
{
	return buf + off;
}

static uint64_t win_va(size_t off)
{
	return (uintptr_t)at(WIN + off);
}

/* @qp to RTS, connected to @dqpn on the port's own GID (PSNs 7). */
static int connect_qp(struct ibv_qp *qp, uint32_t dqpn)
{
	return rc_connect(qp, IBV_ACCESS_REMOTE_WRITE | IBV_ACCESS_REMOTE_READ |
			  IBV_ACCESS_REMOTE_ATOMIC,
			  &(struct rc_conn){ .dgid = &gid4, .dqpn = dqpn, .rq_psn = 7, .sq_psn = 7,
					     .rd_atomic = 4, .min_rnr_timer = 1, .timeout = 14,
					     .retry_cnt = 7, .rnr_retry = 7 });
}

static enum ibv_qp_type qp_type = IBV_QPT_RC;     /* what pair_make makes */

static struct ibv_qp *qp_new(struct ibv_pd *p, struct ibv_cq *cq, bool ex)
{
	struct ibv_qp_init_attr_ex a = {
		.send_cq = cq, .recv_cq = cq, .qp_type = qp_type, .pd = p,
		.cap = { .max_send_wr = 64, .max_recv_wr = 64, .max_send_sge = 1,
			 .max_recv_sge = 1 },
		.comp_mask = IBV_QP_INIT_ATTR_PD,
	};

	if (ex) {
		a.comp_mask |= IBV_QP_INIT_ATTR_SEND_OPS_FLAGS;
		a.send_ops_flags = IBV_QP_EX_WITH_BIND_MW | IBV_QP_EX_WITH_LOCAL_INV |
				   IBV_QP_EX_WITH_SEND_WITH_INV | IBV_QP_EX_WITH_SEND;
	}
	return ibv_create_qp_ex(ctx, &a);
}

/* Two connected QPs (of qp_type): a owns the windows, b is its peer; @pd_a: a's PD; @ex: a
 * built for the ibv_qp_ex API. */
static struct rc_pair pair_make_in(struct ibv_pd *pd_a, bool ex)
{
	struct rc_pair p;

	p.cq_a = ibv_create_cq(ctx, 256, NULL, NULL, 0);
	p.cq_b = ibv_create_cq(ctx, 256, NULL, NULL, 0);
	p.a = qp_new(pd_a, p.cq_a, ex);
	p.b = qp_new(pd, p.cq_b, false);
	if (p.cq_a == NULL || p.cq_b == NULL || p.a == NULL || p.b == NULL ||
	    connect_qp(p.a, p.b->qp_num) || connect_qp(p.b, p.a->qp_num)) {
		fprintf(stderr, "pair setup: %s\n", strerror(errno));
		exit(1);
	}
	return p;
}

static struct rc_pair pair_make(void)
{
	return pair_make_in(pd, false);
}

/* A type 2 bind of @mw on @qp: [addr, addr + len) of @m with @access, key @rkey. */
static int bind2(struct ibv_qp *qp, struct ibv_mw *mw, uint32_t rkey, struct ibv_mr *m,
		 uint64_t addr, uint64_t len, unsigned int access, uint64_t id)
{
	struct ibv_send_wr wr = {
		.wr_id = id, .opcode = IBV_WR_BIND_MW, .send_flags = IBV_SEND_SIGNALED,
		.bind_mw = { .mw = mw, .rkey = rkey,
			     .bind_info = { .mr = m, .addr = addr, .length = len,
					    .mw_access_flags = access } },
	}, *bad;

	return ibv_post_send(qp, &wr, &bad);
}

static int bind1(struct ibv_qp *qp, struct ibv_mw *mw, uint64_t addr, uint64_t len,
		 unsigned int access, uint64_t id)
{
	struct ibv_mw_bind b = {
		.wr_id = id, .send_flags = IBV_SEND_SIGNALED,
		.bind_info = { .mr = len ? mr : NULL, .addr = addr, .length = len,
			       .mw_access_flags = access },
	};

	return ibv_bind_mw(qp, mw, &b);
}

static int post_inv(struct ibv_qp *qp, enum ibv_wr_opcode op, uint32_t rkey, uint64_t id)
{
	struct ibv_sge sge = { (uintptr_t)at(SIDE + TX), 16, mr->lkey };
	struct ibv_send_wr wr = {
		.wr_id = id, .opcode = op, .send_flags = IBV_SEND_SIGNALED,
		.sg_list = op == IBV_WR_SEND_WITH_INV ? &sge : NULL,
		.num_sge = op == IBV_WR_SEND_WITH_INV, .invalidate_rkey = rkey,
	}, *bad;

	return ibv_post_send(qp, &wr, &bad);
}

/* B's RDMA @op of @len bytes at A's @raddr under @rkey, from/into B's side. */
static int rdma(struct ibv_qp *qp, enum ibv_wr_opcode op, uint64_t raddr, uint32_t rkey,
		uint32_t len, uint64_t id)
{
	struct ibv_sge sge = { (uintptr_t)at(SIDE + (op == IBV_WR_RDMA_READ ? RX : TX)), len,
			       mr->lkey };
	struct ibv_send_wr wr = {
		.wr_id = id, .sg_list = &sge, .num_sge = 1, .opcode = op,
		.send_flags = IBV_SEND_SIGNALED,
		.wr.rdma = { .remote_addr = raddr, .rkey = rkey },
	}, *bad;

	return ibv_post_send(qp, &wr, &bad);
}

static int post_recv(struct ibv_qp *qp, uint64_t id)
{
	struct ibv_sge sge = { (uintptr_t)at(RX), 64, mr->lkey };
	struct ibv_recv_wr wr = { .wr_id = id, .sg_list = &sge, .num_sge = 1 }, *bad;

	return ibv_post_recv(qp, &wr, &bad);
}

/* B's @op under @rkey on a fresh pair fails with REM_ACCESS_ERR (the QP then goes to ERR). */
static void expect_denied(struct rc_pair *p, enum ibv_wr_opcode op, uint64_t raddr, uint32_t rkey,
			  uint32_t len, const char *what)
{
	CHECK_EQ(rdma(p->b, op, raddr, rkey, len, 99), 0);
	rc_wait_one(p->cq_b, IBV_WC_REM_ACCESS_ERR, 99, what);
}

/* ---- checks ---- */

static void check_alloc(void)
{
	struct ibv_mw *m1 = ibv_alloc_mw(pd, IBV_MW_TYPE_1), *m2 = ibv_alloc_mw(pd, IBV_MW_TYPE_2);
	struct ibv_device_attr da;

	CHECK(m1 != NULL && m2 != NULL, "ibv_alloc_mw: %s", strerror(errno));
	CHECK(m1->type == IBV_MW_TYPE_1 && m2->type == IBV_MW_TYPE_2 && m1->pd == pd);
	CHECK(m1->rkey >> 8 != m2->rkey >> 8 && m1->rkey >> 8 != mr->rkey >> 8, "key indexes");
	CHECK_EQ(ibv_dealloc_pd(pd), EBUSY);             /* the windows hold it */
	CHECK_EQ(ibv_query_device(ctx, &da), 0);
	CHECK(da.max_mw > 0 && (da.device_cap_flags & IBV_DEVICE_MEM_WINDOW) &&
	      (da.device_cap_flags & IBV_DEVICE_MEM_WINDOW_TYPE_2B), "device attributes");
	CHECK_EQ(ibv_dealloc_mw(m1), 0);
	CHECK_EQ(ibv_dealloc_mw(m2), 0);
}

/* A type 2 window: exactly its range and flags; the old key dies with LOCAL_INV; a new
 * binding's key differs in its low byte and the old one reaches nothing. */
static void check_type2_range(void)
{
	struct rc_pair p = pair_make();
	struct ibv_mw *mw = ibv_alloc_mw(pd, IBV_MW_TYPE_2);
	uint32_t k1 = ibv_inc_rkey(mw->rkey), k2;
	struct ibv_wc wc;

	pattern(at(WIN), 3 * WLEN, 3);
	CHECK_EQ(bind2(p.a, mw, k1, mr, win_va(WLEN), WLEN,
		       IBV_ACCESS_REMOTE_READ | IBV_ACCESS_REMOTE_WRITE, 1), 0);
	wc = rc_wait_one(p.cq_a, IBV_WC_SUCCESS, 1, "type 2 bind");
	CHECK_EQ(wc.opcode, IBV_WC_BIND_MW);
	CHECK_EQ(mw->rkey, k1);
	/* READ the whole window, WRITE its last 100 bytes */
	CHECK_EQ(rdma(p.b, IBV_WR_RDMA_READ, win_va(WLEN), k1, WLEN, 2), 0);
	rc_wait_one(p.cq_b, IBV_WC_SUCCESS, 2, "READ inside the window");
	CHECK(memcmp(at(SIDE + RX), at(WIN + WLEN), WLEN) == 0, "READ through the window: bytes");
	pattern(at(SIDE + TX), 100, 77);
	CHECK_EQ(rdma(p.b, IBV_WR_RDMA_WRITE, win_va(2 * WLEN - 100), k1, 100, 3), 0);
	rc_wait_one(p.cq_b, IBV_WC_SUCCESS, 3, "WRITE inside the window");
	CHECK(memcmp(at(WIN + 2 * WLEN - 100), at(SIDE + TX), 100) == 0, "WRITE: bytes");
	/* LOCAL_INV: the key stops working */
	CHECK_EQ(post_inv(p.a, IBV_WR_LOCAL_INV, k1, 4), 0);
	wc = rc_wait_one(p.cq_a, IBV_WC_SUCCESS, 4, "LOCAL_INV");
	CHECK_EQ(wc.opcode, IBV_WC_LOCAL_INV);
	/* bound again with the next tag: the new key works, the old reaches nothing */
	k2 = ibv_inc_rkey(mw->rkey);
	CHECK(k2 != k1 && (k2 ^ k1) <= 0xff, "new key %#x, old %#x", k2, k1);
	CHECK_EQ(bind2(p.a, mw, k2, mr, win_va(0), WLEN, IBV_ACCESS_REMOTE_READ, 5), 0);
	rc_wait_one(p.cq_a, IBV_WC_SUCCESS, 5, "bind again");
	CHECK_EQ(rdma(p.b, IBV_WR_RDMA_READ, win_va(0), k2, 64, 6), 0);
	rc_wait_one(p.cq_b, IBV_WC_SUCCESS, 6, "READ with the new key");
	expect_denied(&p, IBV_WR_RDMA_READ, win_va(0), k1, 64, "the old key after rebinding");
	rc_pair_free(&p);

	/* denied: a byte beyond, a byte before, a flag it lacks, the MR's other bytes */
	struct { uint64_t off; uint32_t len; enum ibv_wr_opcode op; const char *what; } no[] = {
		{ WLEN + 1, WLEN, IBV_WR_RDMA_READ, "READ one byte beyond the window" },
		{ WLEN - 1, 2, IBV_WR_RDMA_WRITE, "WRITE one byte before the window" },
		{ WLEN, 8, IBV_WR_RDMA_WRITE, "WRITE through a READ-only window" },
		{ 3 * WLEN, 8, IBV_WR_RDMA_READ, "READ of the MR outside the window" },
	};
	for (size_t i = 0; i < sizeof(no) / sizeof(no[0]); i++) {
		uint32_t k;

		/* the last pair's destruction invalidated the window: it binds again */
		p = pair_make();
		k = ibv_inc_rkey(mw->rkey);
		CHECK_EQ(bind2(p.a, mw, k, mr, win_va(WLEN), WLEN,
			       i == 2 ? IBV_ACCESS_REMOTE_READ :
			       IBV_ACCESS_REMOTE_READ | IBV_ACCESS_REMOTE_WRITE, 11), 0);
		rc_wait_one(p.cq_a, IBV_WC_SUCCESS, 11, no[i].what);
		expect_denied(&p, no[i].op, win_va(no[i].off), k, no[i].len, no[i].what);
		rc_pair_free(&p);       /* destroying a's QP invalidates its type 2 window */
	}
	CHECK_EQ(ibv_dealloc_mw(mw), 0);
}

/* LOCAL_WRITE in a bind's flags is accepted and grants nothing (rxe and mlx5 ignore it;
 * pyverbs' MW tests pass it): a type 2 window of LOCAL_WRITE | REMOTE_READ is read but not
 * written; a type 1 window of LOCAL_WRITE | REMOTE_WRITE is written. */
static void check_local_write_ignored(void)
{
	struct rc_pair p = pair_make();
	struct ibv_mw *m2 = ibv_alloc_mw(pd, IBV_MW_TYPE_2), *m1 = ibv_alloc_mw(pd, IBV_MW_TYPE_1);
	uint32_t k = ibv_inc_rkey(m2->rkey);

	pattern(at(WIN), WLEN, 21);
	CHECK_EQ(bind2(p.a, m2, k, mr, win_va(0), WLEN,
		       IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_READ, 1), 0);
	rc_wait_one(p.cq_a, IBV_WC_SUCCESS, 1, "type 2 bind with LOCAL_WRITE");
	CHECK_EQ(rdma(p.b, IBV_WR_RDMA_READ, win_va(0), k, WLEN, 2), 0);
	rc_wait_one(p.cq_b, IBV_WC_SUCCESS, 2, "READ through a LOCAL_WRITE | REMOTE_READ window");
	CHECK(memcmp(at(SIDE + RX), at(WIN), WLEN) == 0, "READ through it: bytes");
	CHECK_EQ(bind1(p.a, m1, win_va(WLEN), 256,
		       IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE, 3), 0);
	rc_wait_one(p.cq_a, IBV_WC_SUCCESS, 3, "type 1 bind with LOCAL_WRITE");
	pattern(at(SIDE + TX), 256, 22);
	CHECK_EQ(rdma(p.b, IBV_WR_RDMA_WRITE, win_va(WLEN), m1->rkey, 256, 4), 0);
	rc_wait_one(p.cq_b, IBV_WC_SUCCESS, 4, "WRITE through a LOCAL_WRITE | REMOTE_WRITE window");
	CHECK(memcmp(at(WIN + WLEN), at(SIDE + TX), 256) == 0, "WRITE through it: bytes");
	expect_denied(&p, IBV_WR_RDMA_WRITE, win_va(0), k, 8, "WRITE: LOCAL_WRITE grants nothing");
	rc_pair_free(&p);
	CHECK_EQ(ibv_dealloc_mw(m1), 0);
	CHECK_EQ(ibv_dealloc_mw(m2), 0);
}

/* Binds that must fail: IBV_WC_MW_BIND_ERR and the QP in ERR, later WRs flushed. */
static void check_bind_errors(void)
{
	struct ibv_mw *mw = ibv_alloc_mw(pd, IBV_MW_TYPE_2);
	struct ibv_mw *mw_other = ibv_alloc_mw(pd2, IBV_MW_TYPE_2);
	uint64_t mr_end = (uintptr_t)buf + 2 * SIDE, b0 = (uintptr_t)buf;
	const unsigned int RR = IBV_ACCESS_REMOTE_READ;
	struct {
		const char *what;
		struct ibv_mw *mw;
		struct ibv_mr *mr;
		uint64_t addr, len;
		unsigned int access;
		int key_delta;       /* the key the WR names: ibv_inc_rkey, or broken */
		bool other_pd_qp;
	} bad[] = {
		{ "window beyond its MR", mw, mr, mr_end - 100, 200, RR, 1 },
		{ "window before its MR", mw, mr, b0 - 1, 64, RR, 1 },
		{ "MR without MW_BIND", mw, mr_nobind, b0 + 2 * SIDE, 64,
		  RR, 1 },
		{ "REMOTE_WRITE on an MR without LOCAL_WRITE", mw, mr_nolw,
		  b0 + 3 * SIDE, 64, IBV_ACCESS_REMOTE_WRITE, 1 },
		{ "ZERO_BASED (not supported)", mw, mr, b0, 64, RR | IBV_ACCESS_ZERO_BASED, 1 },
		{ "MW_BIND, an MR's flag", mw, mr, b0, 64, RR | IBV_ACCESS_MW_BIND, 1 },
		{ "zero-length type 2", mw, mr, b0, 0, RR, 1 },
		{ "key index changed", mw, mr, b0, 64, RR, 0x100 },
		{ "key not changed", mw, mr, b0, 64, RR, 0 },
		{ "window of another PD", mw_other, mr, b0, 64, RR, 1 },
		{ "QP of another PD", mw, mr, b0, 64, RR, 1, true },
	};

	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		struct rc_pair p = pair_make_in(bad[i].other_pd_qp ? pd2 : pd, false);
		uint32_t key = bad[i].mw->rkey;

		key = bad[i].key_delta == 1 ? ibv_inc_rkey(key) : key + (uint32_t)bad[i].key_delta;
		CHECK_EQ(bind2(p.a, bad[i].mw, key, bad[i].mr, bad[i].addr, bad[i].len,
			       bad[i].access, 1), 0);
		CHECK_EQ(post_inv(p.a, IBV_WR_SEND_WITH_INV, 0, 2), 0);
		rc_wait_one(p.cq_a, IBV_WC_MW_BIND_ERR, 1, bad[i].what);
		rc_wait_one(p.cq_a, IBV_WC_WR_FLUSH_ERR, 2, bad[i].what);
		CHECK(rc_qp_state(p.a) == IBV_QPS_ERR, "%s: QP not in ERR", bad[i].what);
		rc_pair_free(&p);
	}
	/* a type 2 window already bound */
	struct rc_pair p = pair_make();

	CHECK_EQ(bind2(p.a, mw, ibv_inc_rkey(mw->rkey), mr, (uintptr_t)buf, 64,
		       IBV_ACCESS_REMOTE_READ, 1), 0);
	rc_wait_one(p.cq_a, IBV_WC_SUCCESS, 1, "bind");
	CHECK_EQ(bind2(p.a, mw, ibv_inc_rkey(mw->rkey), mr, (uintptr_t)buf, 64,
		       IBV_ACCESS_REMOTE_READ, 2), 0);
	rc_wait_one(p.cq_a, IBV_WC_MW_BIND_ERR, 2, "type 2 window already bound");
	rc_pair_free(&p);
	/* UD QPs take no bind */
	{
		struct ibv_cq *cq = ibv_create_cq(ctx, 8, NULL, NULL, 0);
		struct ibv_qp_init_attr ia = { .send_cq = cq, .recv_cq = cq, .qp_type = IBV_QPT_UD,
					       .cap = { .max_send_wr = 4, .max_recv_wr = 4,
							.max_send_sge = 1, .max_recv_sge = 1 } };
		struct ibv_qp *ud = ibv_create_qp(pd, &ia);
		struct ibv_mw *m1 = ibv_alloc_mw(pd, IBV_MW_TYPE_1);

		CHECK(ud != NULL && m1 != NULL);
		CHECK_EQ(bind1(ud, m1, (uintptr_t)buf, 64, IBV_ACCESS_REMOTE_READ, 1), EINVAL);
		CHECK_EQ(bind1(ud, mw, (uintptr_t)buf, 64, IBV_ACCESS_REMOTE_READ, 1), EINVAL);
		CHECK_EQ(ibv_dealloc_mw(m1), 0);
		CHECK_EQ(ibv_destroy_qp(ud), 0);
		CHECK_EQ(ibv_destroy_cq(cq), 0);
	}
	CHECK_EQ(ibv_dealloc_mw(mw), 0);
	CHECK_EQ(ibv_dealloc_mw(mw_other), 0);
}

/* Type 1: ibv_bind_mw changes the key's low byte each time; zero bytes unbind; it cannot be
 * invalidated (LOCAL_INV: LOC_QP_OP_ERR); dereg_mr EBUSY while bound. */
static void check_type1(void)
{
	struct rc_pair p = pair_make();
	struct ibv_mw *mw = ibv_alloc_mw(pd, IBV_MW_TYPE_1);
	uint8_t *mbuf = at(3 * SIDE + SIDE / 2);
	struct ibv_mr *m = ibv_reg_mr(pd, mbuf, 4096, IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_MW_BIND);
	struct ibv_mw_bind b = { .wr_id = 1, .send_flags = IBV_SEND_SIGNALED,
				 .bind_info = { .mr = m, .addr = (uintptr_t)mbuf, .length = 4096,
						.mw_access_flags = IBV_ACCESS_REMOTE_WRITE } };
	uint32_t k0 = mw->rkey, k1, k2;

	CHECK(m != NULL);
	CHECK_EQ(ibv_bind_mw(p.a, mw, &b), 0);
	rc_wait_one(p.cq_a, IBV_WC_SUCCESS, 1, "ibv_bind_mw");
	k1 = mw->rkey;
	CHECK(k1 != k0 && (k1 ^ k0) <= 0xff, "type 1 key %#x after %#x", k1, k0);
	CHECK_EQ(ibv_dereg_mr(m), EBUSY);
	pattern(at(SIDE + TX), 4096, 5);
	CHECK_EQ(rdma(p.b, IBV_WR_RDMA_WRITE, (uintptr_t)mbuf, k1, 4096, 2), 0);
	rc_wait_one(p.cq_b, IBV_WC_SUCCESS, 2, "WRITE through a type 1 window");
	CHECK(memcmp(mbuf, at(SIDE + TX), 4096) == 0, "type 1 WRITE: bytes");
	/* bound again somewhere else: new key, old dead (below) */
	b.wr_id = 3;
	b.bind_info.mr = mr;
	b.bind_info.addr = win_va(0);
	b.bind_info.length = 64;
	CHECK_EQ(ibv_bind_mw(p.a, mw, &b), 0);
	rc_wait_one(p.cq_a, IBV_WC_SUCCESS, 3, "ibv_bind_mw again");
	k2 = mw->rkey;
	CHECK(k2 != k1 && (k2 ^ k1) <= 0xff, "rebinding: key %#x after %#x", k2, k1);
	CHECK_EQ(ibv_dereg_mr(m), 0);                    /* no window on it any more */
	CHECK_EQ(rdma(p.b, IBV_WR_RDMA_WRITE, win_va(0), k2, 64, 4), 0);
	rc_wait_one(p.cq_b, IBV_WC_SUCCESS, 4, "WRITE through the new binding");
	/* a type 2 WR cannot invalidate it; the QP goes to ERR */
	CHECK_EQ(post_inv(p.a, IBV_WR_LOCAL_INV, k2, 5), 0);
	rc_wait_one(p.cq_a, IBV_WC_LOC_QP_OP_ERR, 5, "LOCAL_INV of a type 1 window");
	rc_pair_free(&p);
	p = pair_make();
	expect_denied(&p, IBV_WR_RDMA_WRITE, win_va(0), k1, 8, "old type 1 key");
	rc_pair_free(&p);
	/* zero bytes: the key changes, nothing is reachable */
	p = pair_make();
	CHECK_EQ(bind1(p.a, mw, 0, 0, 0, 6), 0);
	rc_wait_one(p.cq_a, IBV_WC_SUCCESS, 6, "zero-length type 1 bind");
	CHECK(mw->rkey != k2, "zero-length bind: key changed");
	expect_denied(&p, IBV_WR_RDMA_WRITE, win_va(0), k2, 8, "key before a zero-length bind");
	rc_pair_free(&p);
	p = pair_make();
	expect_denied(&p, IBV_WR_RDMA_WRITE, win_va(0), mw->rkey, 8, "zero-length window's key");
	rc_pair_free(&p);
	CHECK_EQ(ibv_dealloc_mw(mw), 0);
}

/* SEND_WITH_INV: the receiver's completion names the key, which is dead at once; a key the
 * peer may not invalidate: REM_INV_REQ_ERR on both sides. */
static void check_send_inv(void)
{
	struct rc_pair p = pair_make();
	struct ibv_mw *mw = ibv_alloc_mw(pd, IBV_MW_TYPE_2), *m1 = ibv_alloc_mw(pd, IBV_MW_TYPE_1);
	uint32_t k = ibv_inc_rkey(mw->rkey);
	struct ibv_wc wc;

	CHECK_EQ(bind2(p.a, mw, k, mr, win_va(0), WLEN, IBV_ACCESS_REMOTE_READ, 1), 0);
	rc_wait_one(p.cq_a, IBV_WC_SUCCESS, 1, "bind");
	CHECK_EQ(ibv_dereg_mr(mr), EBUSY);
	CHECK_EQ(post_recv(p.a, 2), 0);
	CHECK_EQ(post_inv(p.b, IBV_WR_SEND_WITH_INV, k, 3), 0);
	wc = rc_wait_one(p.cq_b, IBV_WC_SUCCESS, 3, "SEND_WITH_INV");
	CHECK_EQ(wc.opcode, IBV_WC_SEND);
	wc = rc_wait_one(p.cq_a, IBV_WC_SUCCESS, 2, "SEND_WITH_INV received");
	CHECK(wc.opcode == IBV_WC_RECV && (wc.wc_flags & IBV_WC_WITH_INV) &&
	      !(wc.wc_flags & IBV_WC_WITH_IMM) && wc.invalidated_rkey == k && wc.byte_len == 16,
	      "receive: flags %#x key %#x (want %#x) len %u", wc.wc_flags, wc.invalidated_rkey, k,
	      wc.byte_len);
	expect_denied(&p, IBV_WR_RDMA_READ, win_va(0), k, 8, "a key invalidated remotely");
	rc_pair_free(&p);

	/* what a peer may not invalidate: an MR's key, a bound type 1 window, an old key */
	p = pair_make();
	CHECK_EQ(bind1(p.a, m1, win_va(0), 64, IBV_ACCESS_REMOTE_READ, 9), 0);
	rc_wait_one(p.cq_a, IBV_WC_SUCCESS, 9, "type 1 bind");
	rc_pair_free(&p);
	uint32_t keys[] = { mr->rkey, m1->rkey, k };
	const char *what[] = { "an MR's key", "a type 1 window", "an invalidated key" };

	for (size_t i = 0; i < 3; i++) {
		p = pair_make();
		CHECK_EQ(post_recv(p.a, 1), 0);
		CHECK_EQ(post_inv(p.b, IBV_WR_SEND_WITH_INV, keys[i], 2), 0);
		rc_wait_one(p.cq_b, IBV_WC_REM_INV_REQ_ERR, 2, what[i]);
		rc_wait_one(p.cq_a, IBV_WC_REM_INV_REQ_ERR, 1, what[i]);
		rc_pair_free(&p);
		p = pair_make();
		CHECK_EQ(post_inv(p.a, IBV_WR_LOCAL_INV, keys[i], 3), 0);
		rc_wait_one(p.cq_a, IBV_WC_LOC_QP_OP_ERR, 3, what[i]);
		rc_pair_free(&p);
	}
	CHECK_EQ(ibv_dealloc_mw(mw), 0);
	CHECK_EQ(ibv_dealloc_mw(m1), 0);
}

/* A type 2 window is usable only by the peer of the QP that bound it. */
static void check_type2_qp(void)
{
	struct rc_pair p = pair_make(), q = pair_make();
	struct ibv_mw *mw = ibv_alloc_mw(pd, IBV_MW_TYPE_2);
	uint32_t k = ibv_inc_rkey(mw->rkey);

	CHECK_EQ(bind2(p.a, mw, k, mr, win_va(0), 64, IBV_ACCESS_REMOTE_READ, 1), 0);
	rc_wait_one(p.cq_a, IBV_WC_SUCCESS, 1, "bind");
	expect_denied(&q, IBV_WR_RDMA_READ, win_va(0), k, 8, "type 2 key through another QP");
	CHECK_EQ(rdma(p.b, IBV_WR_RDMA_READ, win_va(0), k, 64, 2), 0);
	rc_wait_one(p.cq_b, IBV_WC_SUCCESS, 2, "type 2 key through its QP");
	/* a SEND_WITH_INV through the other QP may not invalidate it */
	rc_pair_free(&q);
	q = pair_make();
	CHECK_EQ(post_recv(q.a, 3), 0);
	CHECK_EQ(post_inv(q.b, IBV_WR_SEND_WITH_INV, k, 4), 0);
	rc_wait_one(q.cq_b, IBV_WC_REM_INV_REQ_ERR, 4, "SEND_WITH_INV on another QP");
	CHECK_EQ(rdma(p.b, IBV_WR_RDMA_READ, win_va(0), k, 64, 5), 0);
	rc_wait_one(p.cq_b, IBV_WC_SUCCESS, 5, "still valid");
	rc_pair_free(&q);
	rc_pair_free(&p);                       /* invalidates it: the MR may go */
	CHECK_EQ(ibv_dealloc_mw(mw), 0);
}

/* UC: windows and LOCAL_INV as on RC (WRITE through the window); SEND_WITH_INV has no UC
 * opcode: EINVAL. */
static void check_uc(void)
{
	struct rc_pair p;
	struct ibv_mw *mw = ibv_alloc_mw(pd, IBV_MW_TYPE_2);
	uint32_t k = ibv_inc_rkey(mw->rkey);
	struct ibv_sge sge = { (uintptr_t)at(SIDE + TX), 16, mr->lkey };
	struct ibv_send_wr wr = { .wr_id = 9, .opcode = IBV_WR_SEND_WITH_INV, .sg_list = &sge,
				  .num_sge = 1, .invalidate_rkey = k }, *bad;
	struct ibv_wc wc;
	double t0;

	qp_type = IBV_QPT_UC;
	p = pair_make();
	qp_type = IBV_QPT_RC;
	CHECK_EQ(bind2(p.a, mw, k, mr, win_va(0), 256, IBV_ACCESS_REMOTE_WRITE, 1), 0);
	rc_wait_one(p.cq_a, IBV_WC_SUCCESS, 1, "UC: bind");
	memset(at(WIN), 0, 256);
	pattern(at(SIDE + TX), 256, 21);
	CHECK_EQ(rdma(p.b, IBV_WR_RDMA_WRITE, win_va(0), k, 256, 2), 0);
	rc_wait_one(p.cq_b, IBV_WC_SUCCESS, 2, "UC: WRITE through the window");
	for (t0 = test_now(); memcmp(at(WIN), at(SIDE + TX), 256) != 0 && test_now() - t0 < 5;)
		ibv_poll_cq(p.cq_a, 1, &wc);             /* drives a's QP */
	CHECK(memcmp(at(WIN), at(SIDE + TX), 256) == 0, "UC: WRITE through the window: bytes");
	CHECK(ibv_post_send(p.b, &wr, &bad) == EINVAL && bad == &wr, "UC: SEND_WITH_INV");
	CHECK_EQ(post_inv(p.a, IBV_WR_LOCAL_INV, k, 3), 0);
	rc_wait_one(p.cq_a, IBV_WC_SUCCESS, 3, "UC: LOCAL_INV");
	rc_pair_free(&p);
	CHECK_EQ(ibv_dealloc_mw(mw), 0);
}

/* The same through ibv_wr_bind_mw, ibv_wr_local_inv and ibv_wr_send_inv. */
static void check_qp_ex(void)
{
	struct rc_pair p = pair_make_in(pd, true);
	struct ibv_qp_ex *x = ibv_qp_to_qp_ex(p.a);
	struct ibv_mw *mw = ibv_alloc_mw(pd, IBV_MW_TYPE_2);
	struct ibv_mw_bind_info bi = { .mr = mr, .addr = win_va(0), .length = 256,
				       .mw_access_flags = IBV_ACCESS_REMOTE_READ };
	uint32_t k1 = ibv_inc_rkey(mw->rkey), k2 = ibv_inc_rkey(k1);
	struct ibv_wc wc;

	CHECK(x != NULL);
	ibv_wr_start(x);
	x->wr_id = 1;
	x->wr_flags = IBV_SEND_SIGNALED;
	ibv_wr_bind_mw(x, mw, k1, &bi);
	CHECK_EQ(ibv_wr_complete(x), 0);
	wc = rc_wait_one(p.cq_a, IBV_WC_SUCCESS, 1, "ibv_wr_bind_mw");
	CHECK_EQ(wc.opcode, IBV_WC_BIND_MW);
	CHECK_EQ(rdma(p.b, IBV_WR_RDMA_READ, win_va(0), k1, 256, 2), 0);
	rc_wait_one(p.cq_b, IBV_WC_SUCCESS, 2, "READ after ibv_wr_bind_mw");
	ibv_wr_start(x);
	x->wr_id = 3;
	ibv_wr_local_inv(x, k1);
	x->wr_id = 4;
	ibv_wr_bind_mw(x, mw, k2, &bi);
	CHECK_EQ(ibv_wr_complete(x), 0);
	wc = rc_wait_one(p.cq_a, IBV_WC_SUCCESS, 3, "ibv_wr_local_inv");
	CHECK_EQ(wc.opcode, IBV_WC_LOCAL_INV);
	rc_wait_one(p.cq_a, IBV_WC_SUCCESS, 4, "ibv_wr_bind_mw again");
	/* ibv_wr_send_inv from a invalidates a window b bound */
	{
		struct ibv_mw *mb = ibv_alloc_mw(pd, IBV_MW_TYPE_2);
		uint32_t kb = ibv_inc_rkey(mb->rkey);

		CHECK_EQ(bind2(p.b, mb, kb, mr, win_va(WLEN), 64, IBV_ACCESS_REMOTE_READ, 5), 0);
		rc_wait_one(p.cq_b, IBV_WC_SUCCESS, 5, "bind on b");
		CHECK_EQ(post_recv(p.b, 6), 0);
		ibv_wr_start(x);
		x->wr_id = 7;
		ibv_wr_send_inv(x, kb);
		ibv_wr_set_sge(x, mr->lkey, (uintptr_t)at(TX), 32);
		CHECK_EQ(ibv_wr_complete(x), 0);
		rc_wait_one(p.cq_a, IBV_WC_SUCCESS, 7, "ibv_wr_send_inv");
		wc = rc_wait_one(p.cq_b, IBV_WC_SUCCESS, 6, "ibv_wr_send_inv received");
		CHECK((wc.wc_flags & IBV_WC_WITH_INV) && wc.invalidated_rkey == kb,
		      "ibv_wr_send_inv: flags %#x key %#x", wc.wc_flags, wc.invalidated_rkey);
		CHECK_EQ(rdma(p.a, IBV_WR_RDMA_READ, win_va(WLEN), kb, 8, 8), 0);
		rc_wait_one(p.cq_a, IBV_WC_REM_ACCESS_ERR, 8, "after ibv_wr_send_inv");
		CHECK_EQ(ibv_dealloc_mw(mb), 0);
	}
	rc_pair_free(&p);
	p = pair_make();
	expect_denied(&p, IBV_WR_RDMA_READ, win_va(0), k1, 8, "key after ibv_wr_local_inv");
	rc_pair_free(&p);
	CHECK_EQ(ibv_dealloc_mw(mw), 0);
}

int main(void)
{
	ctx = rc_port_open("10.1.0.1", &gid4);
	pd = ibv_alloc_pd(ctx);
	pd2 = ibv_alloc_pd(ctx);
	buf = aligned_alloc(4096, BUF_LEN);
	mr = pd ? ibv_reg_mr(pd, buf, 2 * SIDE, IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE |
			     IBV_ACCESS_REMOTE_READ | IBV_ACCESS_MW_BIND) : NULL;
	mr_nobind = pd ? ibv_reg_mr(pd, buf + 2 * SIDE, SIDE, IBV_ACCESS_LOCAL_WRITE |
				    IBV_ACCESS_REMOTE_WRITE | IBV_ACCESS_REMOTE_READ) : NULL;
	mr_nolw = pd ? ibv_reg_mr(pd, buf + 3 * SIDE, 65536,
				  IBV_ACCESS_MW_BIND | IBV_ACCESS_REMOTE_READ) : NULL;
	if (pd2 == NULL || mr == NULL || mr_nobind == NULL || mr_nolw == NULL) {
		fprintf(stderr, "setup: %s\n", strerror(errno));
		return 1;
	}
	check_alloc();
	check_type2_range();
	check_local_write_ignored();
	check_bind_errors();
	check_type1();
	check_send_inv();
	check_type2_qp();
	check_qp_ex();
	check_uc();
	/* left to ibv_close_device: a pair, windows bound on mr (type 1 outlives its QP), mr */
	{
		struct rc_pair p = pair_make();
		struct ibv_mw *m1 = ibv_alloc_mw(pd, IBV_MW_TYPE_1);
		struct ibv_mw *m2 = ibv_alloc_mw(pd, IBV_MW_TYPE_2);

		CHECK_EQ(bind1(p.a, m1, win_va(0), 64, IBV_ACCESS_REMOTE_READ, 1), 0);
		CHECK_EQ(bind2(p.a, m2, ibv_inc_rkey(m2->rkey), mr, win_va(0), 64,
			       IBV_ACCESS_REMOTE_READ, 2), 0);
		rc_wait_one(p.cq_a, IBV_WC_SUCCESS, 1, "leftover type 1");
		rc_wait_one(p.cq_a, IBV_WC_SUCCESS, 2, "leftover type 2");
		CHECK_EQ(ibv_dereg_mr(mr), EBUSY);
	}
	CHECK_EQ(ibv_dereg_mr(mr_nobind), 0);
	CHECK_EQ(ibv_dereg_mr(mr_nolw), 0);
	CHECK_EQ(ibv_dealloc_pd(pd2), 0);
	CHECK_EQ(ibv_close_device(ctx), 0);
	free(buf);
	return test_done("mw");
}
