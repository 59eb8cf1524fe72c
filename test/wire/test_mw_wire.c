/* SPDX-License-Identifier: BSD-3-Clause */
/* Memory windows between two processes across a wire: the program forks; the parent (A, the
 * windows' owner) runs dpverbs on net_af_packet over one end of a veth pair, the child (B,
 * the peer) on the other end (DPV_MW_IFACE_A / _B; run_mw_veth.sh makes the pair). They
 * exchange QPNs, keys and results over a socketpair, one fresh RC connection per round (an
 * access error takes both QPs to ERR; destroying A's QP unbinds its type 2 window, so every
 * round binds it again with the next key). Checked, as B sees it: READ and WRITE through a
 * bound window give exactly its bytes; a byte beyond it, a flag it lacks, the old key after
 * rebinding (type 2 and type 1), a key invalidated by B's SEND_WITH_INV: REM_ACCESS_ERR; and
 * as A sees it: the WRITE's bytes in place and nothing around them, the SEND_WITH_INV's
 * receive completion with IBV_WC_WITH_INV and invalidated_rkey. */
#include <arpa/inet.h>
#include <fcntl.h>

#include "dpv_test_fork.h"
#include "dpv_test_rc.h"

#define BUF_LEN (1 << 20)
#define WIN (64 * 1024)         /* A: the window's MR bytes from here */
#define WLEN 8192
#define RX (512 * 1024)         /* B: READ into here */
#define TX (256 * 1024)         /* B: WRITE/SEND from here */
#define SEED_A 11
#define SEED_B 99

struct msg {
	uint32_t qpn, key;
	uint64_t va;
	int32_t status;
};

static struct fork_side fs;
static struct ibv_cq *cq;
static struct ibv_wc stash[16];         /* completions polled while waiting for the peer */
static int nstash;

static void xsend(const struct msg *m)
{
	test_fork_send(fs.sock, m, sizeof(*m));
}

/* Keep a completion polled while waiting for the peer (the CQ drives this side's QPs). */
static void stash_one(void)
{
	if (nstash < 16 && ibv_poll_cq(cq, 1, &stash[nstash]) == 1)
		nstash++;
}

/* The peer's next message; the CQ is polled meanwhile. */
static struct msg xrecv(void)
{
	struct msg m;

	test_fork_recv(fs.sock, &m, sizeof(m), fs.is_a ? "A" : "B", stash_one);
	return m;
}

/* rc_wait_one, the completions kept while waiting for the peer first. */
static struct ibv_wc wait_one(enum ibv_wc_status status, uint64_t wr_id, const char *what)
{
	struct ibv_wc wc;
	char label[128];

	snprintf(label, sizeof(label), "%s: %s", fs.is_a ? "A" : "B", what);
	if (nstash == 0)
		return rc_wait_one(cq, status, wr_id, label);
	wc = stash[0];
	memmove(stash, stash + 1, --nstash * sizeof(stash[0]));
	return rc_check_wc(wc, status, wr_id, label);
}

/* A fresh RC QP connected to the peer's fresh one. */
static struct ibv_qp *connect_qp(void)
{
	struct ibv_qp_init_attr ia = { .send_cq = cq, .recv_cq = cq, .qp_type = IBV_QPT_RC,
				       .cap = { .max_send_wr = 16, .max_recv_wr = 16,
						.max_send_sge = 1, .max_recv_sge = 1 } };
	struct ibv_qp *qp = ibv_create_qp(fs.pd, &ia);
	struct rc_conn c = { .dgid = &fs.peer_gid, .rq_psn = 1, .sq_psn = 1, .rd_atomic = 4,
			     .min_rnr_timer = 1, .timeout = 14, .retry_cnt = 7, .rnr_retry = 7 };
	struct msg m = { 0 };

	if (qp == NULL || rc_to_init(qp, IBV_ACCESS_REMOTE_READ | IBV_ACCESS_REMOTE_WRITE)) {
		perror("QP");
		exit(1);
	}
	m.qpn = qp->qp_num;
	xsend(&m);
	m = xrecv();
	c.dqpn = m.qpn;
	if (rc_to_rtr(qp, &c)) {
		perror("RTR");
		exit(1);
	}
	if (rc_to_rts(qp, &c)) {
		perror("RTS");
		exit(1);
	}
	m.qpn = 0;
	xsend(&m);                 /* both in RTS before any request */
	xrecv();
	return qp;
}

static void disconnect(struct ibv_qp *qp)
{
	struct msg m = { 0 };

	xsend(&m);                 /* both done with the connection */
	xrecv();
	CHECK_EQ(ibv_destroy_qp(qp), 0);
	nstash = 0;
}

/* ---- A: the windows' owner ---- */

enum { CUR, OLD };

struct round {
	const char *what;
	int type;                      /* the window's type */
	unsigned int access;           /* the binding's flags */
	int key;                       /* CUR: the new binding's key; OLD: the one before */
	enum ibv_wr_opcode op;         /* B's request */
	uint32_t off, len;             /* inside [WIN, WIN + 3 WLEN); the window is WLEN at WLEN */
	enum ibv_wc_status expect;
};

#define RW (IBV_ACCESS_REMOTE_READ | IBV_ACCESS_REMOTE_WRITE)
static const struct round rounds[] = {
	{ "READ the whole window", 2, RW, CUR, IBV_WR_RDMA_READ, WLEN, WLEN, IBV_WC_SUCCESS },
	{ "WRITE its last 100 bytes", 2, RW, CUR, IBV_WR_RDMA_WRITE, 2 * WLEN - 100, 100,
	  IBV_WC_SUCCESS },
	{ "READ one byte beyond", 2, RW, CUR, IBV_WR_RDMA_READ, WLEN + 8, WLEN - 7,
	  IBV_WC_REM_ACCESS_ERR },
	{ "READ one byte before", 2, RW, CUR, IBV_WR_RDMA_READ, WLEN - 1, 16,
	  IBV_WC_REM_ACCESS_ERR },
	{ "WRITE through a READ-only window", 2, IBV_ACCESS_REMOTE_READ, CUR, IBV_WR_RDMA_WRITE,
	  WLEN, 8, IBV_WC_REM_ACCESS_ERR },
	{ "type 2: the old key after rebinding", 2, RW, OLD, IBV_WR_RDMA_READ, WLEN, 8,
	  IBV_WC_REM_ACCESS_ERR },
	{ "type 1: READ", 1, IBV_ACCESS_REMOTE_READ, CUR, IBV_WR_RDMA_READ, WLEN, 64,
	  IBV_WC_SUCCESS },
	{ "type 1: the old key after rebinding", 1, IBV_ACCESS_REMOTE_READ, OLD,
	  IBV_WR_RDMA_READ, WLEN, 64, IBV_WC_REM_ACCESS_ERR },
};
#define NROUNDS (sizeof(rounds) / sizeof(rounds[0]))

static uint32_t bind_window(struct ibv_qp *qp, struct ibv_mw *mw, unsigned int access)
{
	struct ibv_mw_bind_info bi = { .mr = fs.mr, .addr = (uintptr_t)fs.buf + WIN + WLEN,
				       .length = WLEN, .mw_access_flags = access };

	if (mw->type == IBV_MW_TYPE_1) {
		struct ibv_mw_bind b = { .wr_id = 1, .send_flags = IBV_SEND_SIGNALED,
					 .bind_info = bi };

		CHECK_EQ(ibv_bind_mw(qp, mw, &b), 0);
	} else {
		struct ibv_send_wr wr = { .wr_id = 1, .opcode = IBV_WR_BIND_MW,
					  .send_flags = IBV_SEND_SIGNALED,
					  .bind_mw = { .mw = mw, .rkey = ibv_inc_rkey(mw->rkey),
						       .bind_info = bi } }, *bad;

		CHECK_EQ(ibv_post_send(qp, &wr, &bad), 0);
	}
	wait_one(IBV_WC_SUCCESS, 1, "bind");
	return mw->rkey;
}

static void run_a(void)
{
	struct ibv_mw *mw1 = ibv_alloc_mw(fs.pd, IBV_MW_TYPE_1);
	struct ibv_mw *mw2 = ibv_alloc_mw(fs.pd, IBV_MW_TYPE_2);
	uint8_t want[3 * WLEN];

	CHECK(mw1 != NULL && mw2 != NULL);
	pattern(fs.buf + WIN, 3 * WLEN, SEED_A);
	memcpy(want, fs.buf + WIN, sizeof(want));
	for (size_t i = 0; i < NROUNDS; i++) {
		const struct round *r = &rounds[i];
		struct ibv_mw *mw = r->type == 1 ? mw1 : mw2;
		struct ibv_qp *qp = connect_qp();
		uint32_t old = mw->rkey, key = bind_window(qp, mw, r->access);
		struct msg m = { .key = r->key == OLD ? old : key, .va = (uintptr_t)fs.buf + WIN };

		CHECK(key != old && (key ^ old) <= 0xff, "%s: new key %#x, old %#x", r->what, key,
		      old);
		xsend(&m);
		m = xrecv();             /* B's request is done */
		if (r->op == IBV_WR_RDMA_WRITE && r->expect == IBV_WC_SUCCESS) {
			pattern(want + r->off, r->len, SEED_B);
		}
		CHECK(memcmp(fs.buf + WIN, want, sizeof(want)) == 0, "A: %s: the window's MR bytes",
		      r->what);
		disconnect(qp);
	}
	/* SEND_WITH_INV from B: the receive names the key, which is dead at once */
	{
		struct ibv_qp *qp = connect_qp();
		uint32_t key = bind_window(qp, mw2, RW);
		struct ibv_sge sge = { (uintptr_t)fs.buf + RX, 64, fs.mr->lkey };
		struct ibv_recv_wr rwr = { .wr_id = 2, .sg_list = &sge, .num_sge = 1 }, *bad;
		struct msg m = { .key = key, .va = (uintptr_t)fs.buf + WIN };
		struct ibv_wc wc;

		CHECK_EQ(ibv_post_recv(qp, &rwr, &bad), 0);
		xsend(&m);
		xrecv();                 /* B's SEND_WITH_INV completed */
		wc = wait_one(IBV_WC_SUCCESS, 2, "SEND_WITH_INV received");
		CHECK((wc.wc_flags & IBV_WC_WITH_INV) && wc.invalidated_rkey == key &&
		      wc.byte_len == 32, "A: flags %#x key %#x (want %#x) len %u", wc.wc_flags,
		      wc.invalidated_rkey, key, wc.byte_len);
		xsend(&m);
		xrecv();                 /* B's READ under the key is done */
		disconnect(qp);
	}
	CHECK_EQ(ibv_dealloc_mw(mw1), 0);
	CHECK_EQ(ibv_dealloc_mw(mw2), 0);
}

/* ---- B: the peer ---- */

static int rdma(struct ibv_qp *qp, enum ibv_wr_opcode op, uint64_t raddr, uint32_t rkey,
		uint32_t len, uint64_t id)
{
	struct ibv_sge sge = { (uintptr_t)fs.buf + (op == IBV_WR_RDMA_READ ? RX : TX), len,
			       fs.mr->lkey };
	struct ibv_send_wr wr = { .wr_id = id, .sg_list = &sge, .num_sge = 1, .opcode = op,
				  .send_flags = IBV_SEND_SIGNALED,
				  .wr.rdma = { .remote_addr = raddr, .rkey = rkey } }, *bad;

	return ibv_post_send(qp, &wr, &bad);
}

static void run_b(void)
{
	uint8_t a_bytes[3 * WLEN];

	pattern(a_bytes, sizeof(a_bytes), SEED_A);
	for (size_t i = 0; i < NROUNDS; i++) {
		const struct round *r = &rounds[i];
		struct ibv_qp *qp = connect_qp();
		struct msg m = xrecv();

		pattern(fs.buf + TX, r->len, SEED_B);
		memset(fs.buf + RX, 0, r->len);
		CHECK_EQ(rdma(qp, r->op, m.va + r->off, m.key, r->len, 3), 0);
		wait_one(r->expect, 3, r->what);
		if (r->op == IBV_WR_RDMA_READ && r->expect == IBV_WC_SUCCESS)
			CHECK(memcmp(fs.buf + RX, a_bytes + r->off, r->len) == 0, "B: %s: bytes",
			      r->what);
		if (r->op == IBV_WR_RDMA_WRITE && r->expect == IBV_WC_SUCCESS)
			pattern(a_bytes + r->off, r->len, SEED_B);
		xsend(&m);
		disconnect(qp);
	}
	{
		struct ibv_qp *qp = connect_qp();
		struct msg m = xrecv();
		struct ibv_sge sge = { (uintptr_t)fs.buf + TX, 32, fs.mr->lkey };
		struct ibv_send_wr wr = { .wr_id = 4, .sg_list = &sge, .num_sge = 1,
					  .opcode = IBV_WR_SEND_WITH_INV,
					  .send_flags = IBV_SEND_SIGNALED,
					  .invalidate_rkey = m.key }, *bad;

		CHECK_EQ(ibv_post_send(qp, &wr, &bad), 0);
		wait_one(IBV_WC_SUCCESS, 4, "SEND_WITH_INV");
		xsend(&m);
		xrecv();                 /* A saw the invalidation */
		CHECK_EQ(rdma(qp, IBV_WR_RDMA_READ, m.va + WLEN, m.key, 8, 5), 0);
		wait_one(IBV_WC_REM_ACCESS_ERR, 5, "READ under a key invalidated remotely");
		xsend(&m);
		disconnect(qp);
	}
}

int main(void)
{
	if (!test_fork_side(&fs, "10.79.0", BUF_LEN, IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_MW_BIND))
		return 1;
	cq = ibv_create_cq(fs.ctx, 64, NULL, NULL, 0);
	if (cq == NULL) {
		fprintf(stderr, "setup: %s\n", strerror(errno));
		return 1;
	}
	if (fs.is_a)
		run_a();
	else
		run_b();
	CHECK_EQ(ibv_destroy_cq(cq), 0);
	test_fork_side_free(&fs);
	return test_fork_done(fs.is_a, "mw_wire");
}
