/* SPDX-License-Identifier: BSD-3-Clause */
/* RC and UC QPs over RoCEv2 on one port, as an application sees them: the port gets an IPv4
 * address and pairs of QPs of the device connect to each other through the port's own GID,
 * which loops back inside dpverbs (every frame still goes through the codec, the ICRC and the
 * receive demux). Checked: the state machine's RC/UC attributes (required ones refused when
 * missing) and ibv_query_qp returning what was set; an unreachable peer at RTR (EHOSTUNREACH);
 * every opcode of the RC column (SEND, SEND_WITH_IMM, RDMA_WRITE, RDMA_WRITE_WITH_IMM,
 * RDMA_READ, ATOMIC_CMP_AND_SWP, ATOMIC_FETCH_AND_ADD) from 0 bytes to several MTUs with exact
 * completions and bytes; the UC column (READ and atomics EINVAL at post); REM_ACCESS_ERR for a
 * bad rkey and for an MR without the access flag; a SEND longer than the receive WQE
 * (REM_INV_REQ_ERR and LOC_LEN_ERR); RNR NAKs then success; a peer destroyed (RETRY_EXC_ERR,
 * ERR, later WRs flushed); and with receive faults (drops, duplicates, reordering) thousands of
 * messages of mixed opcodes across the PSN wrap completing once, in order, every byte right
 * (check_faults says what else); SQD (a SEND under way completes, WRs posted in SQD wait, one
 * IBV_EVENT_SQ_DRAINED, RTS sends the rest). DPV_EAL_ARGS: --vdev=net_ring0. */
#include <fcntl.h>

#include "dpv_test_rc.h"

#define DIM(a) (sizeof(a) / sizeof((a)[0]))

#if defined(__SANITIZE_THREAD__)
void AnnotateBenignRaceSized(const char *file, int line, const volatile void *mem, long size,
			     const char *desc);
#define TSAN_BENIGN(mem, len, why) AnnotateBenignRaceSized(__FILE__, __LINE__, mem, len, why)
#else
#define TSAN_BENIGN(mem, len, why) ((void)0)
#endif

#define BUF_LEN (4 << 20)
#define MTU_BYTES 1024
/* the buffer: [0, 1M) A's side, [1M, 2M) B's side; in each: send data at 0, receive at 256K,
 * remote-access region at 512K, atomic words at 1M - 64 */
#define SIDE (1 << 20)
#define TX 0
#define RX (256 * 1024)
#define REMOTE (512 * 1024)
#define ATOM (SIDE - 64)

static struct ibv_context *ctx;
static struct ibv_pd *pd;
static struct ibv_mr *mr, *mr_ro;     /* everything allowed; remote read only (for errors) */
static uint8_t *buf;
static union ibv_gid gid4;

static uint8_t *side(int s, size_t off)
{
	return buf + (size_t)s * SIDE + off;
}

static uint32_t send_sge = 4;        /* what qp_make gives */

static struct ibv_qp *qp_make(enum ibv_qp_type type, struct ibv_cq *cq, uint32_t wr)
{
	struct ibv_qp_init_attr init = {
		.send_cq = cq, .recv_cq = cq, .qp_type = type,
		.cap = { .max_send_wr = wr, .max_recv_wr = wr, .max_send_sge = send_sge,
			 .max_recv_sge = 4, .max_inline_data = 64 },
	};

	return ibv_create_qp(pd, &init);
}

static int to_init(struct ibv_qp *qp)
{
	return rc_to_init(qp, IBV_ACCESS_REMOTE_WRITE | IBV_ACCESS_REMOTE_READ |
			  IBV_ACCESS_REMOTE_ATOMIC);
}

static int to_rtr(struct ibv_qp *qp, uint32_t dqpn, uint32_t rq_psn, const union ibv_gid *dgid)
{
	return rc_to_rtr(qp, &(struct rc_conn){ .dgid = dgid, .dqpn = dqpn, .rq_psn = rq_psn,
						.rd_atomic = 4, .min_rnr_timer = 1 });
}

static uint8_t rnr_retry = 7;        /* what to_rts gives */
static uint32_t sq_psn_a = 100;      /* A's first PSN (B's expected one): what pair_make gives */

static int to_rts(struct ibv_qp *qp, uint32_t sq_psn, uint8_t timeout, uint8_t retry)
{
	return rc_to_rts(qp, &(struct rc_conn){ .sq_psn = sq_psn, .timeout = timeout,
						.retry_cnt = retry, .rnr_retry = rnr_retry,
						.rd_atomic = 4 });
}

/* Two connected QPs of @type; B's PSNs near the wrap, A's from sq_psn_a. */
static struct rc_pair pair_make(enum ibv_qp_type type, uint8_t timeout, uint8_t retry)
{
	struct rc_pair p;

	p.cq_a = ibv_create_cq(ctx, 4096, NULL, NULL, 0);
	p.cq_b = ibv_create_cq(ctx, 4096, NULL, NULL, 0);
	p.a = qp_make(type, p.cq_a, 512);
	p.b = qp_make(type, p.cq_b, 512);
	if (p.cq_a == NULL || p.cq_b == NULL || p.a == NULL || p.b == NULL ||
	    to_init(p.a) || to_init(p.b) ||
	    to_rtr(p.a, p.b->qp_num, 0xfffff0, &gid4) ||
	    to_rtr(p.b, p.a->qp_num, sq_psn_a, &gid4) ||
	    to_rts(p.a, sq_psn_a, timeout, retry) || to_rts(p.b, 0xfffff0, timeout, retry)) {
		fprintf(stderr, "pair setup: %s\n", strerror(errno));
		exit(1);
	}
	return p;
}

#define BAD_LKEY(k) ((k) ^ 0x00ffff00)     /* an lkey that names no MR */

static int post_recv_lkey(struct ibv_qp *qp, uint8_t *at, uint32_t len, uint32_t lkey,
			  uint64_t wr_id)
{
	struct ibv_sge sge = { (uintptr_t)at, len, lkey };
	struct ibv_recv_wr wr = { .wr_id = wr_id, .sg_list = &sge, .num_sge = 1 }, *bad;

	return ibv_post_recv(qp, &wr, &bad);
}

static int post_recv(struct ibv_qp *qp, uint8_t *at, uint32_t len, uint64_t wr_id)
{
	return post_recv_lkey(qp, at, len, mr->lkey, wr_id);
}

/* One WR of @op with the single SGE @sge (@raddr/@rkey: the remote side where @op has one). */
static int post_sge(struct ibv_qp *qp, enum ibv_wr_opcode op, struct ibv_sge *sge,
		    uint64_t raddr, uint32_t rkey, uint64_t wr_id, unsigned int flags)
{
	struct ibv_send_wr wr = {
		.wr_id = wr_id, .sg_list = sge, .num_sge = 1, .opcode = op,
		.send_flags = flags, .imm_data = htonl(0x12340000u + (uint32_t)wr_id),
	}, *bad;

	if (op == IBV_WR_ATOMIC_CMP_AND_SWP || op == IBV_WR_ATOMIC_FETCH_AND_ADD) {
		wr.wr.atomic.remote_addr = raddr;
		wr.wr.atomic.rkey = rkey;
	} else {
		wr.wr.rdma.remote_addr = raddr;
		wr.wr.rdma.rkey = rkey;
	}
	return ibv_post_send(qp, &wr, &bad);
}

static int post(struct ibv_qp *qp, enum ibv_wr_opcode op, uint8_t *at, uint32_t len,
		uint64_t raddr, uint32_t rkey, uint64_t wr_id, unsigned int flags)
{
	struct ibv_sge sge = { (uintptr_t)at, len, mr->lkey };

	return post_sge(qp, op, &sge, raddr, rkey, wr_id, flags);
}

static int post_atomic(struct ibv_qp *qp, enum ibv_wr_opcode op, uint8_t *at, uint64_t raddr,
		       uint64_t cmp_add, uint64_t swap, uint64_t wr_id)
{
	struct ibv_sge sge = { (uintptr_t)at, 8, mr->lkey };
	struct ibv_send_wr wr = {
		.wr_id = wr_id, .sg_list = &sge, .num_sge = 1, .opcode = op,
		.send_flags = IBV_SEND_SIGNALED,
		.wr.atomic = { .remote_addr = raddr, .compare_add = cmp_add, .swap = swap,
			       .rkey = mr->rkey },
	}, *bad;

	return ibv_post_send(qp, &wr, &bad);
}

/* The bytes of message @msg: every 8-byte word a mix of the message and the word's offset,
 * so no two packets of a run (of one message or two) carry the same bytes, and a packet
 * written at another offset, or another message's, is seen. */
static void msg_fill(uint8_t *p, uint32_t len, uint64_t msg)
{
	for (uint32_t w = 0; w * 8 < len; w++) {
		uint64_t x = (msg << 20 | w) + 0x9e3779b97f4a7c15ull;

		x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ull;
		x = (x ^ (x >> 27)) * 0x94d049bb133111ebull;
		x ^= x >> 31;
		memcpy(p + w * 8, &x, len - w * 8 < 8 ? len - w * 8 : 8);
	}
}

/* Do the @len bytes at @p hold message @msg? */
static bool msg_is(const uint8_t *p, uint32_t len, uint64_t msg)
{
	uint8_t exp[3 * MTU_BYTES];

	msg_fill(exp, len, msg);
	return memcmp(p, exp, len) == 0;
}

/* ---- states and attributes ---- */

static void check_states(void)
{
	struct ibv_cq *cq = ibv_create_cq(ctx, 16, NULL, NULL, 0);
	struct ibv_qp *qp = qp_make(IBV_QPT_RC, cq, 16);
	struct ibv_qp_attr a = { .qp_state = IBV_QPS_INIT, .port_num = 1 }, q;
	struct ibv_qp_init_attr qi;
	union ibv_gid far;

	CHECK(qp != NULL, "RC QP: %s", strerror(errno));
	if (qp == NULL)
		return;
	/* INIT needs pkey_index, port and access flags */
	CHECK_EQ(ibv_modify_qp(qp, &a, IBV_QP_STATE | IBV_QP_PORT | IBV_QP_PKEY_INDEX), EINVAL);
	CHECK_EQ(to_init(qp), 0);
	/* RTR of RC needs max_dest_rd_atomic and min_rnr_timer */
	a = (struct ibv_qp_attr){ .qp_state = IBV_QPS_RTR, .path_mtu = IBV_MTU_1024,
		.dest_qp_num = 77, .rq_psn = 5,
		.ah_attr = { .is_global = 1, .port_num = 1, .grh = { .dgid = gid4, .sgid_index = 1 } } };
	CHECK_EQ(ibv_modify_qp(qp, &a, IBV_QP_STATE | IBV_QP_AV | IBV_QP_PATH_MTU |
			       IBV_QP_DEST_QPN | IBV_QP_RQ_PSN), EINVAL);
	/* nobody answers ARP for 10.1.0.99 */
	gid_v4(&far, "10.1.0.99");
	CHECK_EQ(to_rtr(qp, 77, 5, &far), EHOSTUNREACH);
	CHECK_EQ(rc_qp_state(qp), IBV_QPS_INIT);
	a.ah_attr.is_global = 0;                  /* RoCE needs a GRH */
	CHECK_EQ(ibv_modify_qp(qp, &a, IBV_QP_STATE | IBV_QP_AV | IBV_QP_PATH_MTU |
			       IBV_QP_DEST_QPN | IBV_QP_RQ_PSN | IBV_QP_MAX_DEST_RD_ATOMIC |
			       IBV_QP_MIN_RNR_TIMER), EINVAL);
	CHECK_EQ(to_rtr(qp, 77, 5, &gid4), 0);
	/* posting in RTR: EINVAL */
	CHECK_EQ(post(qp, IBV_WR_SEND, side(0, TX), 4, 0, 0, 1, 0), EINVAL);
	/* RTS of RC needs timeout, retry counts, max_rd_atomic */
	a = (struct ibv_qp_attr){ .qp_state = IBV_QPS_RTS, .sq_psn = 9 };
	CHECK_EQ(ibv_modify_qp(qp, &a, IBV_QP_STATE | IBV_QP_SQ_PSN), EINVAL);
	CHECK_EQ(to_rts(qp, 9, 14, 5), 0);
	CHECK_EQ(ibv_query_qp(qp, &q, IBV_QP_STATE | IBV_QP_AV | IBV_QP_DEST_QPN, &qi), 0);
	CHECK_EQ(q.qp_state, IBV_QPS_RTS);
	CHECK_EQ(q.dest_qp_num, 77);
	CHECK_EQ(q.rq_psn, 5);
	CHECK_EQ(q.sq_psn, 9);
	CHECK_EQ(q.path_mtu, IBV_MTU_1024);
	CHECK_EQ(q.timeout, 14);
	CHECK_EQ(q.retry_cnt, 5);
	CHECK_EQ(q.rnr_retry, 7);
	CHECK_EQ(q.min_rnr_timer, 1);
	CHECK_EQ(q.max_rd_atomic, 4);
	CHECK_EQ(q.max_dest_rd_atomic, 4);
	CHECK_EQ(q.qp_access_flags, IBV_ACCESS_REMOTE_WRITE | IBV_ACCESS_REMOTE_READ |
				    IBV_ACCESS_REMOTE_ATOMIC);
	CHECK_EQ(q.ah_attr.is_global, 1);
	CHECK(memcmp(q.ah_attr.grh.dgid.raw, gid4.raw, 16) == 0, "query: dgid");
	CHECK_EQ(q.ah_attr.grh.sgid_index, 1);
	CHECK_EQ(qi.qp_type, IBV_QPT_RC);
	/* RESET and again */
	a = (struct ibv_qp_attr){ .qp_state = IBV_QPS_RESET };
	CHECK_EQ(ibv_modify_qp(qp, &a, IBV_QP_STATE), 0);
	CHECK_EQ(to_init(qp), 0);
	CHECK_EQ(to_rtr(qp, 78, 6, &gid4), 0);
	a = (struct ibv_qp_attr){ .qp_state = IBV_QPS_ERR };
	CHECK_EQ(ibv_modify_qp(qp, &a, IBV_QP_STATE), 0);
	CHECK_EQ(ibv_destroy_qp(qp), 0);
	/* UC: RTR without the RC-only attributes, RTS with the PSN only */
	qp = qp_make(IBV_QPT_UC, cq, 16);
	CHECK(qp != NULL && to_init(qp) == 0 && to_rtr(qp, 77, 5, &gid4) == 0 &&
	      to_rts(qp, 1, 0, 0) == 0, "UC to RTS: %s", strerror(errno));
	CHECK_EQ(ibv_destroy_qp(qp), 0);
	CHECK_EQ(ibv_destroy_cq(cq), 0);
}

/* ---- every opcode ---- */

/* A SEND or SEND_WITH_IMM of @len bytes from A to B. */
static void check_send(struct rc_pair *p, uint32_t len, bool imm, uint64_t id)
{
	struct ibv_wc wc;
	memset(side(1, RX), GUARD, len + 64);
	msg_fill(side(0, TX), len, id);
	CHECK_EQ(post_recv(p->b, side(1, RX), len + 64, id), 0);
	CHECK_EQ(post(p->a, imm ? IBV_WR_SEND_WITH_IMM : IBV_WR_SEND, side(0, TX), len, 0, 0, id,
		      IBV_SEND_SIGNALED), 0);
	wc = rc_wait_one(p->cq_a, IBV_WC_SUCCESS, id, "send");
	CHECK_EQ(wc.opcode, IBV_WC_SEND);
	wc = rc_wait_one(p->cq_b, IBV_WC_SUCCESS, id, "recv");
	CHECK_EQ(wc.opcode, IBV_WC_RECV);
	CHECK_EQ(wc.byte_len, len);
	CHECK_EQ(wc.qp_num, p->b->qp_num);
	CHECK_EQ(wc.src_qp, p->a->qp_num);
	CHECK_EQ(wc.wc_flags, imm ? IBV_WC_WITH_IMM : 0);
	if (imm)
		CHECK_EQ(ntohl(wc.imm_data), 0x12340000u + (uint32_t)id);
	CHECK(memcmp(side(1, RX), side(0, TX), len) == 0, "send %u: bytes differ", len);
	check_guard(side(1, RX), len, len + 64, "send");
}

static void check_write(struct rc_pair *p, uint32_t len, bool imm, uint64_t id)
{
	struct ibv_wc wc;

	memset(side(1, REMOTE), GUARD, len + 64);
	msg_fill(side(0, TX), len, id);
	if (imm)
		CHECK_EQ(post_recv(p->b, side(1, RX), 0, id), 0);
	CHECK_EQ(post(p->a, imm ? IBV_WR_RDMA_WRITE_WITH_IMM : IBV_WR_RDMA_WRITE, side(0, TX),
		      len, (uintptr_t)side(1, REMOTE), mr->rkey, id, IBV_SEND_SIGNALED), 0);
	wc = rc_wait_one(p->cq_a, IBV_WC_SUCCESS, id, "write");
	CHECK_EQ(wc.opcode, IBV_WC_RDMA_WRITE);
	if (imm) {
		wc = rc_wait_one(p->cq_b, IBV_WC_SUCCESS, id, "write imm recv");
		CHECK_EQ(wc.opcode, IBV_WC_RECV_RDMA_WITH_IMM);
		CHECK_EQ(wc.byte_len, len);
		CHECK_EQ(wc.wc_flags, IBV_WC_WITH_IMM);
		CHECK_EQ(ntohl(wc.imm_data), 0x12340000u + (uint32_t)id);
	} else if (p->a->qp_type == IBV_QPT_UC) {
		/* UC: complete once sent; wait for the bytes (polling progresses the port) */
		double end = test_now() + 5;

		while (memcmp(side(1, REMOTE), side(0, TX), len) != 0 && test_now() < end)
			test_poll_for(p->cq_b, &wc, 1, 0.001);
	}
	CHECK(memcmp(side(1, REMOTE), side(0, TX), len) == 0, "write %u: bytes differ", len);
	check_guard(side(1, REMOTE), len, len + 64, "write");
}

static void check_read(struct rc_pair *p, uint32_t len, uint64_t id)
{
	struct ibv_wc wc;

	msg_fill(side(1, REMOTE), len, id);
	memset(side(0, RX), GUARD, len + 64);
	CHECK_EQ(post(p->a, IBV_WR_RDMA_READ, side(0, RX), len, (uintptr_t)side(1, REMOTE),
		      mr->rkey, id, IBV_SEND_SIGNALED), 0);
	wc = rc_wait_one(p->cq_a, IBV_WC_SUCCESS, id, "read");
	CHECK_EQ(wc.opcode, IBV_WC_RDMA_READ);
	CHECK_EQ(wc.byte_len, len);
	CHECK(memcmp(side(0, RX), side(1, REMOTE), len) == 0, "read %u: bytes differ", len);
	check_guard(side(0, RX), len, len + 64, "read");
}

static void check_atomics(struct rc_pair *p)
{
	uint64_t *word = (uint64_t *)side(1, ATOM), *res = (uint64_t *)side(0, ATOM);
	struct ibv_wc wc;

	*word = 1000;
	CHECK_EQ(post_atomic(p->a, IBV_WR_ATOMIC_FETCH_AND_ADD, (uint8_t *)res,
			     (uintptr_t)word, 23, 0, 50), 0);
	wc = rc_wait_one(p->cq_a, IBV_WC_SUCCESS, 50, "fetch_add");
	CHECK_EQ(wc.opcode, IBV_WC_FETCH_ADD);
	CHECK_EQ(*res, 1000);
	CHECK_EQ(*word, 1023);
	CHECK_EQ(post_atomic(p->a, IBV_WR_ATOMIC_CMP_AND_SWP, (uint8_t *)res,
			     (uintptr_t)word, 1023, 7, 51), 0);
	wc = rc_wait_one(p->cq_a, IBV_WC_SUCCESS, 51, "cmp_swp");
	CHECK_EQ(wc.opcode, IBV_WC_COMP_SWAP);
	CHECK_EQ(*res, 1023);
	CHECK_EQ(*word, 7);
	CHECK_EQ(post_atomic(p->a, IBV_WR_ATOMIC_CMP_AND_SWP, (uint8_t *)res,
			     (uintptr_t)word, 1023, 9, 52), 0);     /* no match: unchanged */
	rc_wait_one(p->cq_a, IBV_WC_SUCCESS, 52, "cmp_swp miss");
	CHECK_EQ(*res, 7);
	CHECK_EQ(*word, 7);
}

static void check_opcodes(void)
{
	static const uint32_t lens[] = { 0, 1, 63, MTU_BYTES, MTU_BYTES + 1, 3 * MTU_BYTES + 100 };
	struct rc_pair p = pair_make(IBV_QPT_RC, 14, 7);
	uint64_t id = 1;

	for (size_t i = 0; i < DIM(lens); i++) {
		check_send(&p, lens[i], false, id++);
		check_send(&p, lens[i], true, id++);
		check_write(&p, lens[i], false, id++);
		check_write(&p, lens[i], true, id++);
		check_read(&p, lens[i], id++);
	}
	check_atomics(&p);
	/* the other way too */
	{
		struct rc_pair r = { p.b, p.a, p.cq_b, p.cq_a };

		check_send(&r, 2000, true, id++);
	}
	rc_pair_free(&p);
}

/* The limits ibv_query_device and ibv_query_port report, at work: a READ scattering into
 * max_sge_rd SGEs (one more: EINVAL); SEND and WRITE of 256 KiB (256 packets); a READ of
 * max_msg_sz bytes posts (and the peer, whose MR is smaller, NAKs it: REM_ACCESS_ERR), a
 * WRITE, SEND or READ of max_msg_sz + 1 is EINVAL. */
static void check_limits(void)
{
	struct ibv_device_attr da;
	struct ibv_port_attr pa;
	struct ibv_sge sge[30];
	struct ibv_send_wr wr = { .wr_id = 1, .sg_list = sge, .opcode = IBV_WR_RDMA_READ,
				  .send_flags = IBV_SEND_SIGNALED }, *bad;
	struct rc_pair p;
	struct ibv_wc wc;
	uint32_t off = 0, len;

	CHECK_EQ(ibv_query_device(ctx, &da), 0);
	CHECK_EQ(ibv_query_port(ctx, 1, &pa), 0);
	CHECK(da.max_sge_rd > 1 && (size_t)da.max_sge_rd <= DIM(sge), "max_sge_rd %d",
	      da.max_sge_rd);
	CHECK(da.device_cap_flags & IBV_DEVICE_RC_RNR_NAK_GEN);   /* check_rnr sees them */
	send_sge = (uint32_t)da.max_sge_rd;
	p = pair_make(IBV_QPT_RC, 14, 7);
	send_sge = 4;
	/* SGE i: 50 + 97 * i bytes, every other one 16 bytes past the last's end */
	pattern(side(1, REMOTE), 64 * 1024, 41);
	memset(side(0, RX), GUARD, 64 * 1024);
	for (int i = 0; i < da.max_sge_rd; i++) {
		sge[i] = (struct ibv_sge){ (uintptr_t)side(0, RX) + off + (i & 1) * 16,
					   50 + 97 * (uint32_t)i, mr->lkey };
		off += (i & 1) * 16 + sge[i].length;
	}
	wr.num_sge = da.max_sge_rd;
	wr.wr.rdma.remote_addr = (uintptr_t)side(1, REMOTE);
	wr.wr.rdma.rkey = mr->rkey;
	CHECK_EQ(ibv_post_send(p.a, &wr, &bad), 0);
	wc = rc_wait_one(p.cq_a, IBV_WC_SUCCESS, 1, "READ into max_sge_rd SGEs");
	len = 0;
	for (int i = 0; i < da.max_sge_rd; i++) {
		uint8_t *at = (uint8_t *)(uintptr_t)sge[i].addr;

		CHECK(memcmp(at, side(1, REMOTE) + len, sge[i].length) == 0, "SGE %d's bytes", i);
		if (i & 1)
			check_guard(at - 16, 0, 16, "between SGEs");
		len += sge[i].length;
	}
	CHECK_EQ(wc.byte_len, len);
	wr.num_sge = da.max_sge_rd + 1;                  /* one more: EINVAL */
	CHECK_EQ(ibv_post_send(p.a, &wr, &bad), EINVAL);
	/* far more than one MTU */
	check_send(&p, 256 * 1024, false, 2);
	check_write(&p, 256 * 1024, true, 3);
	/* max_msg_sz + 1 (two SGEs): EINVAL; max_msg_sz: posted, its SGE not in the MR */
	CHECK_EQ(pa.max_msg_sz, 1u << 31);
	sge[0] = (struct ibv_sge){ (uintptr_t)side(0, TX), 1u << 31, mr->lkey };
	sge[1] = (struct ibv_sge){ (uintptr_t)side(0, TX), 1, mr->lkey };
	wr = (struct ibv_send_wr){ .wr_id = 4, .sg_list = sge, .num_sge = 2,
				   .opcode = IBV_WR_RDMA_WRITE, .send_flags = IBV_SEND_SIGNALED,
				   .wr.rdma = { (uintptr_t)side(1, REMOTE), mr->rkey } };
	CHECK_EQ(ibv_post_send(p.a, &wr, &bad), EINVAL);
	wr.opcode = IBV_WR_SEND;
	CHECK_EQ(ibv_post_send(p.a, &wr, &bad), EINVAL);
	wr.opcode = IBV_WR_RDMA_READ;
	CHECK_EQ(ibv_post_send(p.a, &wr, &bad), EINVAL);
	wr.num_sge = 1;                                  /* the peer's MR is smaller: NAK */
	CHECK_EQ(ibv_post_send(p.a, &wr, &bad), 0);
	rc_wait_one(p.cq_a, IBV_WC_REM_ACCESS_ERR, 4, "a max_msg_sz READ beyond the peer's MR");
	rc_pair_free(&p);
}

static void check_uc(void)
{
	struct rc_pair p = pair_make(IBV_QPT_UC, 0, 0);
	uint64_t id = 100;

	check_send(&p, 0, false, id++);
	check_send(&p, 3 * MTU_BYTES + 100, true, id++);
	check_write(&p, 2 * MTU_BYTES + 5, false, id++);
	check_write(&p, 17, true, id++);
	CHECK_EQ(post(p.a, IBV_WR_RDMA_READ, side(0, RX), 8, (uintptr_t)side(1, REMOTE),
		      mr->rkey, id, 0), EINVAL);
	CHECK_EQ(post_atomic(p.a, IBV_WR_ATOMIC_FETCH_AND_ADD, side(0, ATOM),
			     (uintptr_t)side(1, ATOM), 1, 0, id), EINVAL);
	CHECK_EQ(post_atomic(p.a, IBV_WR_ATOMIC_CMP_AND_SWP, side(0, ATOM),
			     (uintptr_t)side(1, ATOM), 1, 0, id), EINVAL);
	CHECK_EQ(post(p.a, IBV_WR_SEND, side(0, TX), 4, 0, 0, id, IBV_SEND_FENCE), EINVAL);
	rc_pair_free(&p);
}

/* The ibv_wr_* API on an RC QP: the same post path, so the same bytes. */
static void check_qp_ex(void)
{
	struct rc_pair p = pair_make(IBV_QPT_RC, 14, 7);
	struct ibv_cq *cq = ibv_create_cq(ctx, 64, NULL, NULL, 0);
	struct ibv_qp_init_attr_ex a = {
		.send_cq = cq, .recv_cq = cq, .qp_type = IBV_QPT_RC, .pd = pd,
		.cap = { .max_send_wr = 16, .max_recv_wr = 16, .max_send_sge = 1,
			 .max_recv_sge = 1 },
		.comp_mask = IBV_QP_INIT_ATTR_PD | IBV_QP_INIT_ATTR_SEND_OPS_FLAGS,
		.send_ops_flags = IBV_QP_EX_WITH_RDMA_WRITE | IBV_QP_EX_WITH_RDMA_READ |
				  IBV_QP_EX_WITH_ATOMIC_FETCH_AND_ADD,
	};
	struct ibv_qp *qp = ibv_create_qp_ex(ctx, &a);
	struct ibv_qp_ex *x = qp ? ibv_qp_to_qp_ex(qp) : NULL;
	uint64_t *word = (uint64_t *)side(1, ATOM);
	struct ibv_wc wc;

	CHECK(x != NULL, "RC QP with send_ops_flags: %s", strerror(errno));
	if (x == NULL) {
		rc_pair_free(&p);
		return;
	}
	/* connect the new QP to p.b in place of p.a */
	CHECK_EQ(ibv_destroy_qp(p.a), 0);
	p.a = NULL;
	{
		struct ibv_qp_attr r = { .qp_state = IBV_QPS_RESET };

		CHECK_EQ(ibv_modify_qp(p.b, &r, IBV_QP_STATE), 0);
	}
	CHECK(to_init(qp) == 0 && to_init(p.b) == 0 && to_rtr(qp, p.b->qp_num, 10, &gid4) == 0 &&
	      to_rtr(p.b, qp->qp_num, 20, &gid4) == 0 && to_rts(qp, 20, 14, 7) == 0 &&
	      to_rts(p.b, 10, 14, 7) == 0, "connect: %s", strerror(errno));
	pattern(side(0, TX), 3000, 9);
	memset(side(1, REMOTE), 0, 3000);
	*word = 5;
	ibv_wr_start(x);
	x->wr_id = 1;
	x->wr_flags = IBV_SEND_SIGNALED;
	ibv_wr_rdma_write(x, mr->rkey, (uintptr_t)side(1, REMOTE));
	ibv_wr_set_sge(x, mr->lkey, (uintptr_t)side(0, TX), 3000);
	x->wr_id = 2;
	ibv_wr_atomic_fetch_add(x, mr->rkey, (uintptr_t)word, 10);
	ibv_wr_set_sge(x, mr->lkey, (uintptr_t)side(0, ATOM), 8);
	CHECK_EQ(ibv_wr_complete(x), 0);
	wc = rc_wait_one(cq, IBV_WC_SUCCESS, 1, "wr_rdma_write");
	CHECK_EQ(wc.opcode, IBV_WC_RDMA_WRITE);
	wc = rc_wait_one(cq, IBV_WC_SUCCESS, 2, "wr_atomic_fetch_add");
	CHECK_EQ(wc.opcode, IBV_WC_FETCH_ADD);
	CHECK(memcmp(side(1, REMOTE), side(0, TX), 3000) == 0, "wr_rdma_write: bytes differ");
	CHECK_EQ(*(uint64_t *)side(0, ATOM), 5);
	CHECK_EQ(*word, 15);
	CHECK_EQ(ibv_destroy_qp(qp), 0);
	CHECK_EQ(ibv_destroy_cq(cq), 0);
	rc_pair_free(&p);
}

/* ---- errors ---- */

static void check_access_errors(void)
{
	struct rc_pair p = pair_make(IBV_QPT_RC, 14, 7);
	struct ibv_wc wc;

	CHECK_EQ(post_recv(p.b, side(1, RX), 64, 9), 0);
	CHECK_EQ(post(p.a, IBV_WR_RDMA_WRITE, side(0, TX), 64, (uintptr_t)side(1, REMOTE),
		      mr->rkey ^ 0x5a5a, 1, IBV_SEND_SIGNALED), 0);
	CHECK_EQ(post(p.a, IBV_WR_SEND, side(0, TX), 8, 0, 0, 2, IBV_SEND_SIGNALED), 0);
	rc_wait_one(p.cq_a, IBV_WC_REM_ACCESS_ERR, 1, "bad rkey");
	rc_wait_one(p.cq_a, IBV_WC_WR_FLUSH_ERR, 2, "after bad rkey");
	CHECK_EQ(rc_qp_state(p.a), IBV_QPS_ERR);
	/* a class C error for the responder too (IBA 9.9.3.1.3, as rxe): ERR, its receive WQE
	 * flushed untouched */
	rc_wait_one(p.cq_b, IBV_WC_WR_FLUSH_ERR, 9, "responder after bad rkey");
	CHECK_EQ(rc_qp_state(p.b), IBV_QPS_ERR);
	CHECK_EQ(test_poll_for(p.cq_b, &wc, 1, 0.1), 0);
	rc_pair_free(&p);

	/* write to an MR without remote write; read past the end of one */
	p = pair_make(IBV_QPT_RC, 14, 7);
	CHECK_EQ(post(p.a, IBV_WR_RDMA_WRITE, side(0, TX), 64, (uintptr_t)mr_ro->addr,
		      mr_ro->rkey, 3, IBV_SEND_SIGNALED), 0);
	rc_wait_one(p.cq_a, IBV_WC_REM_ACCESS_ERR, 3, "no remote write");
	rc_pair_free(&p);
	p = pair_make(IBV_QPT_RC, 14, 7);
	CHECK_EQ(post(p.a, IBV_WR_RDMA_READ, side(0, RX), 64,
		      (uintptr_t)mr_ro->addr + mr_ro->length - 32, mr_ro->rkey, 4,
		      IBV_SEND_SIGNALED), 0);
	rc_wait_one(p.cq_a, IBV_WC_REM_ACCESS_ERR, 4, "read past the MR");
	rc_pair_free(&p);
	/* RTS -> RTS taking REMOTE_WRITE from the responder QP: READ still works, a WRITE is an
	 * invalid request (a right the QP does not give: the engine's error table, as rxe) */
	p = pair_make(IBV_QPT_RC, 14, 7);
	{
		struct ibv_qp_attr m = { .qp_access_flags = IBV_ACCESS_REMOTE_READ };
		struct ibv_qp_attr q;
		struct ibv_qp_init_attr qi;

		CHECK_EQ(ibv_modify_qp(p.b, &m, IBV_QP_ACCESS_FLAGS), 0);
		CHECK_EQ(ibv_query_qp(p.b, &q, IBV_QP_ACCESS_FLAGS, &qi), 0);
		CHECK_EQ(q.qp_access_flags, IBV_ACCESS_REMOTE_READ);
		check_read(&p, 100, 20);
		CHECK_EQ(post(p.a, IBV_WR_RDMA_WRITE, side(0, TX), 64, (uintptr_t)side(1, REMOTE),
			      mr->rkey, 21, IBV_SEND_SIGNALED), 0);
		rc_wait_one(p.cq_a, IBV_WC_REM_INV_REQ_ERR, 21, "QP without remote write");
	}
	rc_pair_free(&p);
	/* atomic on an MR without remote atomic */
	p = pair_make(IBV_QPT_RC, 14, 7);
	{
		struct ibv_sge sge = { (uintptr_t)side(0, ATOM), 8, mr->lkey };
		struct ibv_send_wr wr = {
			.wr_id = 5, .sg_list = &sge, .num_sge = 1,
			.opcode = IBV_WR_ATOMIC_FETCH_AND_ADD, .send_flags = IBV_SEND_SIGNALED,
			.wr.atomic = { .remote_addr = (uintptr_t)mr_ro->addr, .compare_add = 1,
				       .rkey = mr_ro->rkey },
		}, *bad;

		CHECK_EQ(ibv_post_send(p.a, &wr, &bad), 0);
		rc_wait_one(p.cq_a, IBV_WC_REM_ACCESS_ERR, 5, "no remote atomic");
	}
	rc_pair_free(&p);
}

/* A send SGE whose lkey covers nothing (memory windows and invalidation: test_mw). */
static void check_local_errors(void)
{
	struct rc_pair p = pair_make(IBV_QPT_RC, 14, 7);
	struct ibv_sge sge = { (uintptr_t)side(0, TX), 64, BAD_LKEY(mr->lkey) };

	CHECK_EQ(post_sge(p.a, IBV_WR_SEND, &sge, 0, 0, 1, 0), 0);
	CHECK_EQ(post(p.a, IBV_WR_SEND, side(0, TX), 8, 0, 0, 2, 0), 0);
	rc_wait_one(p.cq_a, IBV_WC_LOC_PROT_ERR, 1, "bad lkey");
	rc_wait_one(p.cq_a, IBV_WC_WR_FLUSH_ERR, 2, "after bad lkey");
	CHECK_EQ(rc_qp_state(p.a), IBV_QPS_ERR);
	rc_pair_free(&p);
}

static void check_long_send(void)
{
	struct rc_pair p = pair_make(IBV_QPT_RC, 14, 7);

	CHECK_EQ(post_recv(p.b, side(1, RX), 100, 7), 0);
	CHECK_EQ(post_recv(p.b, side(1, RX), 100, 8), 0);
	CHECK_EQ(post(p.a, IBV_WR_SEND, side(0, TX), 2000, 0, 0, 6, IBV_SEND_SIGNALED), 0);
	rc_wait_one(p.cq_a, IBV_WC_REM_INV_REQ_ERR, 6, "long send");
	rc_wait_one(p.cq_b, IBV_WC_LOC_LEN_ERR, 7, "long send recv");
	rc_wait_one(p.cq_b, IBV_WC_WR_FLUSH_ERR, 8, "long send next recv");
	CHECK_EQ(rc_qp_state(p.a), IBV_QPS_ERR);
	CHECK_EQ(rc_qp_state(p.b), IBV_QPS_ERR);
	rc_pair_free(&p);

	/* a receive WQE whose lkey covers nothing */
	p = pair_make(IBV_QPT_RC, 14, 7);
	CHECK_EQ(post_recv_lkey(p.b, side(1, RX), 100, BAD_LKEY(mr->lkey), 9), 0);
	CHECK_EQ(post(p.a, IBV_WR_SEND, side(0, TX), 50, 0, 0, 10, 0), 0);
	rc_wait_one(p.cq_a, IBV_WC_REM_OP_ERR, 10, "receive WQE outside its MR");
	rc_wait_one(p.cq_b, IBV_WC_LOC_PROT_ERR, 9, "receive WQE outside its MR: recv");
	CHECK_EQ(rc_qp_state(p.b), IBV_QPS_ERR);
	rc_pair_free(&p);
}

static void check_rnr(void)
{
	struct rc_pair p = pair_make(IBV_QPT_RC, 14, 7);
	struct ibv_wc wc;

	pattern(side(0, TX), 300, 3);
	CHECK_EQ(post(p.a, IBV_WR_SEND, side(0, TX), 300, 0, 0, 1, IBV_SEND_SIGNALED), 0);
	/* no receive WQE: RNR NAKs, nothing completes meanwhile */
	CHECK_EQ(test_poll_for(p.cq_a, &wc, 1, 0.05), 0);
	CHECK_EQ(post_recv(p.b, side(1, RX), 300, 2), 0);
	rc_wait_one(p.cq_a, IBV_WC_SUCCESS, 1, "after RNR");
	wc = rc_wait_one(p.cq_b, IBV_WC_SUCCESS, 2, "recv after RNR");
	CHECK_EQ(wc.byte_len, 300);
	CHECK(memcmp(side(1, RX), side(0, TX), 300) == 0, "RNR: bytes differ");
	rc_pair_free(&p);

	/* rnr_retry 2: the third RNR NAK ends it; the responder stays up */
	rnr_retry = 2;
	p = pair_make(IBV_QPT_RC, 14, 7);
	rnr_retry = 7;
	CHECK_EQ(post(p.a, IBV_WR_SEND, side(0, TX), 300, 0, 0, 3, 0), 0);
	rc_wait_one(p.cq_a, IBV_WC_RNR_RETRY_EXC_ERR, 3, "RNR retries exhausted");
	CHECK_EQ(rc_qp_state(p.a), IBV_QPS_ERR);
	CHECK_EQ(rc_qp_state(p.b), IBV_QPS_RTS);
	rc_pair_free(&p);
}

static void check_peer_gone(void)
{
	struct rc_pair p = pair_make(IBV_QPT_RC, 8, 2);     /* ~1 ms timeout, 2 retries */

	struct ibv_mr *held = ibv_reg_mr(pd, buf + 3 * SIDE, 4096, IBV_ACCESS_LOCAL_WRITE);
	struct ibv_sge sge = { (uintptr_t)(buf + 3 * SIDE), 10, held ? held->lkey : 0 };
	struct ibv_send_wr wr = { .wr_id = 1, .sg_list = &sge, .num_sge = 1,
				  .opcode = IBV_WR_SEND }, *bad;

	CHECK(held != NULL, "reg_mr: %s", strerror(errno));
	CHECK_EQ(ibv_destroy_qp(p.b), 0);
	p.b = NULL;
	CHECK_EQ(ibv_post_send(p.a, &wr, &bad), 0);
	/* the WR holds its MR until it completes (retransmissions read it again) */
	CHECK_EQ(ibv_dereg_mr(held), EBUSY);
	CHECK_EQ(post(p.a, IBV_WR_RDMA_WRITE, side(0, TX), 10, (uintptr_t)side(1, REMOTE),
		      mr->rkey, 2, IBV_SEND_SIGNALED), 0);
	CHECK_EQ(post_recv(p.a, side(0, RX), 10, 3), 0);
	rc_wait_one(p.cq_a, IBV_WC_RETRY_EXC_ERR, 1, "peer gone");
	rc_wait_one(p.cq_a, IBV_WC_WR_FLUSH_ERR, 2, "peer gone: next WR");
	rc_wait_one(p.cq_a, IBV_WC_WR_FLUSH_ERR, 3, "peer gone: receive WQE");
	CHECK_EQ(ibv_dereg_mr(held), 0);
	CHECK_EQ(rc_qp_state(p.a), IBV_QPS_ERR);
	/* posted in ERR: flushed */
	CHECK_EQ(post(p.a, IBV_WR_SEND, side(0, TX), 10, 0, 0, 4, 0), 0);
	rc_wait_one(p.cq_a, IBV_WC_WR_FLUSH_ERR, 4, "posted in ERR");
	rc_pair_free(&p);
}

/* ---- SQD: the send queue drains ---- */

/* Whether an IBV_EVENT_SQ_DRAINED of @qp arrives within @seconds (the CQ is polled meanwhile,
 * which drives progress; a completion there is a failure). Other events are acknowledged. */
static bool sq_drained_event(struct ibv_qp *qp, struct ibv_cq *cq, double seconds)
{
	double end = test_now() + seconds;
	struct ibv_async_event ev;
	struct ibv_wc wc;

	do {
		CHECK_EQ(ibv_poll_cq(cq, 1, &wc), 0);
		while (ibv_get_async_event(ctx, &ev) == 0) {
			bool it = ev.event_type == IBV_EVENT_SQ_DRAINED && ev.element.qp == qp;

			ibv_ack_async_event(&ev);
			if (it)
				return true;
		}
	} while (test_now() < end);
	return false;
}

static int sq_draining(struct ibv_qp *qp)
{
	struct ibv_qp_attr a;
	struct ibv_qp_init_attr i;

	return ibv_query_qp(qp, &a, IBV_QP_STATE, &i) == 0 && a.qp_state == IBV_QPS_SQD ?
	       a.sq_draining : -1;
}

static int to_sqd(struct ibv_qp *qp, bool notify)
{
	struct ibv_qp_attr a = { .qp_state = IBV_QPS_SQD, .en_sqd_async_notify = notify };

	return ibv_modify_qp(qp, &a, IBV_QP_STATE | IBV_QP_EN_SQD_ASYNC_NOTIFY);
}

/* RTS -> SQD while a SEND is under way (RNR-NAKed: the responder has no WQE yet): it goes on
 * and completes, WRs posted in SQD wait, IBV_EVENT_SQ_DRAINED once when the first is done,
 * then SQD -> RTS sends the rest in order. */
static void check_sqd(void)
{
	struct rc_pair p = pair_make(IBV_QPT_RC, 14, 7);
	struct ibv_qp_attr a = { .qp_state = IBV_QPS_RTS };
	struct ibv_wc wc;
	int flags = fcntl(ctx->async_fd, F_GETFL);

	fcntl(ctx->async_fd, F_SETFL, flags | O_NONBLOCK);
	pattern(side(0, TX), 3 * MTU_BYTES, 7);
	CHECK_EQ(post(p.a, IBV_WR_SEND, side(0, TX), 2 * MTU_BYTES + 5, 0, 0, 1,
		      IBV_SEND_SIGNALED), 0);
	CHECK_EQ(test_poll_for(p.cq_a, &wc, 1, 0.05), 0);          /* RNR: under way, not done */
	CHECK_EQ(to_sqd(p.a, true), 0);
	CHECK_EQ(rc_qp_state(p.a), IBV_QPS_SQD);
	CHECK_EQ(sq_draining(p.a), 1);
	/* posted in SQD: accepted, not started */
	CHECK_EQ(post(p.a, IBV_WR_SEND, side(0, TX) + 100, 200, 0, 0, 2, IBV_SEND_SIGNALED), 0);
	CHECK_EQ(post(p.a, IBV_WR_RDMA_WRITE, side(0, TX) + 300, 400, (uintptr_t)side(1, REMOTE),
		      mr->rkey, 3, IBV_SEND_SIGNALED), 0);
	CHECK(!sq_drained_event(p.a, p.cq_a, 0.05), "SQ_DRAINED while a SEND is under way");
	for (uint64_t i = 0; i < 3; i++)
		CHECK_EQ(post_recv(p.b, side(1, RX) + i * 4096, 4096, 10 + i), 0);
	rc_wait_one(p.cq_a, IBV_WC_SUCCESS, 1, "SQD: the SEND under way");
	wc = rc_wait_one(p.cq_b, IBV_WC_SUCCESS, 10, "SQD: its receive");
	CHECK_EQ(wc.byte_len, 2 * MTU_BYTES + 5);
	CHECK(sq_drained_event(p.a, p.cq_a, 5.0), "no SQ_DRAINED after the SEND completed");
	CHECK_EQ(sq_draining(p.a), 0);
	/* nothing posted in SQD went out: no completion either side, the remote bytes unwritten */
	memset(side(1, REMOTE), 0xee, 400);
	CHECK_EQ(test_poll_for(p.cq_a, &wc, 1, 0.05), 0);
	CHECK_EQ(test_poll_for(p.cq_b, &wc, 1, 0.01), 0);
	CHECK(!sq_drained_event(p.a, p.cq_a, 0.02), "a second SQ_DRAINED");
	/* back to RTS: the rest, in order */
	CHECK_EQ(ibv_modify_qp(p.a, &a, IBV_QP_STATE), 0);
	rc_wait_one(p.cq_a, IBV_WC_SUCCESS, 2, "RTS after SQD: SEND");
	rc_wait_one(p.cq_a, IBV_WC_SUCCESS, 3, "RTS after SQD: WRITE");
	wc = rc_wait_one(p.cq_b, IBV_WC_SUCCESS, 11, "RTS after SQD: receive");
	CHECK_EQ(wc.byte_len, 200);
	CHECK(memcmp(side(1, RX) + 4096, side(0, TX) + 100, 200) == 0, "SQD: SEND bytes");
	CHECK(memcmp(side(1, REMOTE), side(0, TX) + 300, 400) == 0, "SQD: WRITE bytes");
	CHECK(memcmp(side(1, RX), side(0, TX), 2 * MTU_BYTES + 5) == 0, "SQD: first SEND bytes");

	/* SQD with nothing under way: drained at once (the event with notify, none without) */
	CHECK_EQ(to_sqd(p.a, true), 0);
	CHECK(sq_drained_event(p.a, p.cq_a, 5.0), "SQD when idle: no SQ_DRAINED");
	CHECK_EQ(sq_draining(p.a), 0);
	CHECK_EQ(ibv_modify_qp(p.a, &a, IBV_QP_STATE), 0);
	CHECK_EQ(to_sqd(p.a, false), 0);
	CHECK(!sq_drained_event(p.a, p.cq_a, 0.05), "SQ_DRAINED without EN_SQD_ASYNC_NOTIFY");
	CHECK_EQ(ibv_modify_qp(p.a, &a, IBV_QP_STATE), 0);
	CHECK_EQ(post(p.a, IBV_WR_SEND, side(0, TX), 10, 0, 0, 4, IBV_SEND_SIGNALED), 0);
	rc_wait_one(p.cq_a, IBV_WC_SUCCESS, 4, "RTS after an idle SQD");
	rc_wait_one(p.cq_b, IBV_WC_SUCCESS, 12, "RTS after an idle SQD: receive");

	/* SQD -> SQD changes the requester's limits: rnr_retry 7 (forever) becomes 1, so a SEND
	 * the peer has no WQE for fails after one RNR retry */
	CHECK_EQ(to_sqd(p.a, false), 0);
	{
		struct ibv_qp_attr r = { .qp_state = IBV_QPS_SQD, .rnr_retry = 1, .timeout = 12 };
		struct ibv_qp_init_attr ri;

		CHECK_EQ(ibv_modify_qp(p.a, &r, IBV_QP_STATE | IBV_QP_RNR_RETRY | IBV_QP_TIMEOUT), 0);
		r.rnr_retry = 9;
		CHECK_EQ(ibv_modify_qp(p.a, &r, IBV_QP_STATE | IBV_QP_RNR_RETRY), EINVAL);
		memset(&r, 0, sizeof(r));
		CHECK_EQ(ibv_query_qp(p.a, &r, IBV_QP_RNR_RETRY | IBV_QP_TIMEOUT, &ri), 0);
		CHECK(r.rnr_retry == 1 && r.timeout == 12, "SQD -> SQD: query %u %u", r.rnr_retry,
		      r.timeout);
	}
	CHECK_EQ(ibv_modify_qp(p.a, &a, IBV_QP_STATE), 0);
	CHECK_EQ(post(p.a, IBV_WR_SEND, side(0, TX), 10, 0, 0, 5, IBV_SEND_SIGNALED), 0);
	rc_wait_one(p.cq_a, IBV_WC_RNR_RETRY_EXC_ERR, 5, "rnr_retry 1 set in SQD");
	fcntl(ctx->async_fd, F_SETFL, flags);
	rc_pair_free(&p);
}

/* ---- lossy: faults on every frame the port receives from itself ---- */

static uint32_t msg_len(uint64_t i)
{
	return (uint32_t)((i * 2654435761u) % (2 * MTU_BYTES + 300));
}

/* The PSNs a message of @op and @len takes (a READ's responses count its request's). */
static uint32_t msg_psns(enum ibv_wr_opcode op, uint32_t len)
{
	return op == IBV_WR_ATOMIC_FETCH_AND_ADD || len == 0 ? 1 :
	       (len + MTU_BYTES - 1) / MTU_BYTES;
}

/* DPV_TEST_N messages (default 10^4) at DPV_TEST_DROP_PPM drops (default 1 %), with 1 %
 * duplicated, 1 % reordered and 0.5 % corrupted frames, A's PSNs starting 1000 before the
 * 24-bit wrap (the run crosses it): the rc_loss test runs 10^5 at 5 %. Checked: every WR
 * completes once, in order, successfully, with its opcode; every byte of each WRITE, READ and
 * SEND (the bytes differ per message and per offset: a packet placed at another offset
 * shows); each FETCH_AND_ADD's original value is the sum of the adds before it, the word at
 * the end the sum of all; every receive WQE a SEND or WRITE_WITH_IMM takes completes in order
 * with its byte_len, opcode, flags and immediate data, after the last send completion too
 * (drained and counted), and the rest of the WQEs are flushed, untouched, when B goes to ERR. */
static void check_faults(void)
{
	enum { WINDOW = 64, SLOTS = 64, SLOT = 4096 };
	const char *n_env = getenv("DPV_TEST_N"), *drop_env = getenv("DPV_TEST_DROP_PPM");
	const uint64_t N = n_env != NULL ? strtoull(n_env, NULL, 0) : 10000;
	const uint64_t START = 0x0123456789abcdefull;   /* the atomic word's first value */
	static const enum ibv_wr_opcode ops[] = {
		IBV_WR_SEND, IBV_WR_RDMA_WRITE_WITH_IMM, IBV_WR_RDMA_WRITE, IBV_WR_RDMA_READ,
		IBV_WR_SEND_WITH_IMM, IBV_WR_ATOMIC_FETCH_AND_ADD,
	};
	static const enum ibv_wc_opcode wc_ops[] = {
		IBV_WC_SEND, IBV_WC_RDMA_WRITE, IBV_WC_RDMA_WRITE, IBV_WC_RDMA_READ, IBV_WC_SEND,
		IBV_WC_FETCH_ADD,
	};
	/* DPV_TEST_SEED replays another pattern of faults (the default is the one CI runs) */
	const char *seed = getenv("DPV_TEST_SEED");
	struct dpv_faults f = { .drop_ppm = drop_env != NULL ? (uint32_t)atoi(drop_env) : 10000,
				.dup_ppm = 10000, .reorder_ppm = 10000, .corrupt_ppm = 5000,
				.seed = seed != NULL ? strtoull(seed, NULL, 0) : 42 };
	struct dpv_faults off = { 0 };
	const uint32_t psn0 = 0xffffff - 1000;
	struct rc_pair p;
	uint64_t *word = (uint64_t *)side(1, ATOM), posted = 0, done = 0, recvd = 0, adds = 0;
	uint64_t recv_posted = 0, bad = 0, want_recvs = 0, psns = 0;
	double stalled = test_now() + 30;
	struct ibv_qp_attr err = { .qp_state = IBV_QPS_ERR };
	struct dpv_fault_stats st;
	struct dpv_port_stats ps;
	struct ibv_wc wc[32];
	int n;

	sq_psn_a = psn0;
	p = pair_make(IBV_QPT_RC, 12, 7);
	sq_psn_a = 100;
	for (uint64_t k = 0; k < N; k++)
		want_recvs += k % 6 == 0 || k % 6 == 1 || k % 6 == 4;
	*word = START;
	/* A duplicated READ request is answered again from memory (IBA 9.4.4: a responder
	 * re-executes duplicate READs), possibly after this test refilled the slot for a later
	 * message: the responder reads what a NIC's DMA would, and the requester drops the late
	 * response. That read of program memory from the port's polling thread is no dpverbs
	 * race, so ThreadSanitizer is told to let the remote-access slots be. */
	TSAN_BENIGN(side(1, REMOTE), WINDOW * SLOT, "duplicate READs re-read reused slots");
	CHECK_EQ(dpv_set_port_faults(ctx, DPV_FAULT_RX, &f), 0);
	for (; recv_posted < SLOTS; recv_posted++)
		post_recv(p.b, side(1, RX) + (recv_posted % SLOTS) * SLOT, SLOT, recv_posted);
	while ((done < N || recvd < want_recvs) && bad <= 10) {
		if (test_now() > stalled) {
			fprintf(stderr, "stalled: %llu of %llu WRs done, %llu of %llu receives\n",
				(unsigned long long)done, (unsigned long long)N,
				(unsigned long long)recvd, (unsigned long long)want_recvs);
			break;
		}
		while (posted < N && posted - done < WINDOW) {
			enum ibv_wr_opcode op = ops[posted % DIM(ops)];
			uint32_t len = op == IBV_WR_ATOMIC_FETCH_AND_ADD ? 8 : msg_len(posted);
			/* a FETCH_AND_ADD's original value lands in its slot */
			uint8_t *src = side(0, TX) + (posted % WINDOW) * SLOT;
			uint64_t remote = (uintptr_t)side(1, REMOTE) + (posted % WINDOW) * SLOT;

			if (op == IBV_WR_RDMA_READ) {
				msg_fill((uint8_t *)(uintptr_t)remote, len, posted);
				src = side(0, RX) + (posted % WINDOW) * SLOT;
				memset(src, GUARD, len);
			} else if (op != IBV_WR_ATOMIC_FETCH_AND_ADD) {
				msg_fill(src, len, posted);
			}
			if (op == IBV_WR_RDMA_WRITE || op == IBV_WR_RDMA_WRITE_WITH_IMM)
				memset((uint8_t *)(uintptr_t)remote, GUARD, len);
			if (op == IBV_WR_ATOMIC_FETCH_AND_ADD)
				CHECK_EQ(post_atomic(p.a, op, src, (uintptr_t)word, posted, 0,
						     posted), 0);
			else
				CHECK_EQ(post(p.a, op, src, len, remote, mr->rkey, posted,
					      IBV_SEND_SIGNALED), 0);
			psns += msg_psns(op, len);
			posted++;
		}
		n = ibv_poll_cq(p.cq_a, 32, wc);
		for (int i = 0; i < n; i++, done++) {
			enum ibv_wr_opcode op = ops[done % DIM(ops)];
			uint32_t len = msg_len(done);
			uint8_t *slot = side(0, TX) + (done % WINDOW) * SLOT;
			uint64_t orig;

			if (wc[i].status != IBV_WC_SUCCESS || wc[i].wr_id != done ||
			    wc[i].opcode != wc_ops[done % DIM(ops)]) {
				if (bad++ == 0)
					fprintf(stderr, "first bad completion: WR %llu of %llu: %s "
						"(opcode %d, WR opcode %d)\n",
						(unsigned long long)wc[i].wr_id,
						(unsigned long long)done,
						ibv_wc_status_str(wc[i].status), (int)wc[i].opcode,
						(int)op);
				continue;
			}
			if (op == IBV_WR_ATOMIC_FETCH_AND_ADD) {
				memcpy(&orig, slot, 8);
				if (orig != START + adds && bad++ == 0)
					fprintf(stderr, "FETCH_AND_ADD %llu: original %#llx, want "
						"%#llx\n", (unsigned long long)done,
						(unsigned long long)orig,
						(unsigned long long)(START + adds));
				adds += done;
			} else if (op == IBV_WR_RDMA_READ) {
				if ((wc[i].byte_len != len ||
				     !msg_is(side(0, RX) + (done % WINDOW) * SLOT, len, done)) &&
				    bad++ == 0)
					fprintf(stderr, "READ %llu: byte_len %u (%u) or "
						"bytes wrong\n", (unsigned long long)done,
						wc[i].byte_len, len);
			} else if (op == IBV_WR_RDMA_WRITE || op == IBV_WR_RDMA_WRITE_WITH_IMM) {
				if (!msg_is(side(1, REMOTE) + (done % WINDOW) * SLOT, len, done) &&
				    bad++ == 0)
					fprintf(stderr, "WRITE %llu: bytes wrong\n",
						(unsigned long long)done);
			}
			stalled = test_now() + 30;
		}
		n = ibv_poll_cq(p.cq_b, 32, wc);
		for (int i = 0; i < n; i++, recvd++) {
			/* what takes a receive WQE: SEND (6k), WRITE_IMM (6k + 1), SEND_IMM (6k + 4) */
			uint64_t msg = recvd / 3 * 6 + (recvd % 3 == 0 ? 0 : recvd % 3 == 1 ? 1 : 4);
			bool imm = msg % 6 != 0, write = msg % 6 == 1;
			uint32_t len = msg_len(msg);

			if (wc[i].status != IBV_WC_SUCCESS || wc[i].wr_id != recvd ||
			    wc[i].byte_len != len || wc[i].qp_num != p.b->qp_num ||
			    wc[i].opcode != (write ? IBV_WC_RECV_RDMA_WITH_IMM : IBV_WC_RECV) ||
			    wc[i].wc_flags != (imm ? IBV_WC_WITH_IMM : 0) ||
			    (imm && ntohl(wc[i].imm_data) != 0x12340000u + (uint32_t)msg) ||
			    (!write && !msg_is(side(1, RX) + (recvd % SLOTS) * SLOT, len, msg))) {
				if (bad++ == 0)
					fprintf(stderr, "receive %llu (message %llu): %s "
						"wr_id %llu byte_len %u (%u) opcode %d flags "
						"%#x imm %#x, or bytes wrong\n",
						(unsigned long long)recvd,
						(unsigned long long)msg,
						ibv_wc_status_str(wc[i].status),
						(unsigned long long)wc[i].wr_id,
						wc[i].byte_len, len, (int)wc[i].opcode,
						(unsigned int)wc[i].wc_flags,
						ntohl(wc[i].imm_data));
				continue;
			}
			post_recv(p.b, side(1, RX) + (recv_posted % SLOTS) * SLOT, SLOT,
				  recv_posted);
			recv_posted++;
			stalled = test_now() + 30;
		}
	}
	CHECK_EQ(bad, 0);
	CHECK_EQ(done, N);
	CHECK_EQ(recvd, want_recvs);
	CHECK_EQ(*word, START + adds);
	CHECK(psn0 + psns > 0xffffff, "%llu PSNs from %#x: the run did not cross the wrap",
	      (unsigned long long)psns, psn0);
	CHECK_EQ(dpv_query_port_faults(ctx, DPV_FAULT_RX, NULL, &st), 0);
	CHECK(st.dropped > 0 && st.duplicated > 0 && st.reordered > 0 && st.corrupted > 0,
	      "faults: dropped %lu dup %lu reordered %lu", (unsigned long)st.dropped,
	      (unsigned long)st.duplicated, (unsigned long)st.reordered);
	/* a corrupted byte is found by the ICRC (or, in the headers, by their checks) */
	CHECK_EQ(dpv_query_port_stats(ctx, &ps), 0);
	CHECK(ps.rx_roce_bad_icrc > 0, "no frame dropped for its ICRC");
	CHECK_EQ(dpv_set_port_faults(ctx, DPV_FAULT_RX, &off), 0);
	/* nothing more arrives; the WQEs no message took are flushed in order at ERR */
	CHECK_EQ(test_poll_for(p.cq_b, wc, 1, 0.05), 0);
	CHECK_EQ(test_poll_for(p.cq_a, wc, 1, 0.01), 0);
	CHECK_EQ(ibv_modify_qp(p.b, &err, IBV_QP_STATE), 0);
	for (uint64_t k = recvd; k < recv_posted; k++) {
		struct ibv_wc fl = { .status = IBV_WC_SUCCESS };
		bool ok = test_poll(p.cq_b, &fl, 1) == 1 && fl.status == IBV_WC_WR_FLUSH_ERR &&
			  fl.wr_id == k;

		CHECK(ok, "flush of receive WQE %llu: %s wr_id %llu", (unsigned long long)k,
		      ibv_wc_status_str(fl.status), (unsigned long long)fl.wr_id);
		if (!ok)
			break;            /* one report; no 5 s wait for each of the rest */
	}
	CHECK_EQ(test_poll_for(p.cq_b, wc, 1, 0.01), 0);
	rc_pair_free(&p);
}

/* UC under drops: every send completes successfully at once, what arrives is whole, right
 * and in order, the rest is lost whole. */
static void check_uc_faults(void)
{
	enum { N = 2000, SLOTS = 64, SLOT = 4096 };
	struct dpv_faults f = { .drop_ppm = 50000, .dup_ppm = 10000, .reorder_ppm = 10000,
				.seed = 7 };
	struct dpv_faults off = { 0 };
	struct rc_pair p = pair_make(IBV_QPT_UC, 0, 0);
	uint64_t sent = 0, recvd = 0, last = 0, posted = 0, bad = 0;
	double end = test_now() + 20, last_rx = test_now();

	CHECK_EQ(dpv_set_port_faults(ctx, DPV_FAULT_RX, &f), 0);
	for (; posted < SLOTS; posted++)
		post_recv(p.b, side(1, RX) + (posted % SLOTS) * SLOT, SLOT, posted);
	while (test_now() < end) {
		struct ibv_wc wc[16];
		int n;

		/* one message in flight at a time per receive slot: paced by the receiver */
		if (sent < N && sent - last < SLOTS / 2) {
			uint32_t len = msg_len(sent) + 1;

			msg_fill(side(0, TX) + (sent % SLOTS) * SLOT, len, sent);
			CHECK_EQ(post(p.a, IBV_WR_SEND_WITH_IMM, side(0, TX) + (sent % SLOTS) * SLOT,
				      len, 0, 0, sent, IBV_SEND_SIGNALED), 0);
			sent++;
		}
		n = ibv_poll_cq(p.cq_a, 16, wc);
		for (int i = 0; i < n; i++)
			bad += wc[i].status != IBV_WC_SUCCESS;
		n = ibv_poll_cq(p.cq_b, 16, wc);
		for (int i = 0; i < n; i++, recvd++) {
			uint64_t msg = ntohl(wc[i].imm_data) - 0x12340000u;

			bad += wc[i].status != IBV_WC_SUCCESS || (recvd > 0 && msg <= last) ||
			       msg >= N || wc[i].byte_len != msg_len(msg) + 1 ||
			       !msg_is(side(1, RX) + (wc[i].wr_id % SLOTS) * SLOT,
				       msg_len(msg) + 1, msg);
			last = msg;
			post_recv(p.b, side(1, RX) + (posted % SLOTS) * SLOT, SLOT, posted);
			posted++;
		}
		if (n > 0)
			last_rx = test_now();
		if (sent == N && test_now() - last_rx > 0.3)
			break;          /* nothing more for a while: the rest was lost */
	}
	CHECK_EQ(bad, 0);
	CHECK_EQ(sent, N);
	CHECK(recvd > N / 2 && recvd < N, "UC under 5 %% drops: %lu of %d received",
	      (unsigned long)recvd, N);
	CHECK_EQ(dpv_set_port_faults(ctx, DPV_FAULT_RX, &off), 0);
	rc_pair_free(&p);
}

int main(void)
{
	ctx = rc_port_open("10.1.0.1", &gid4);
	pd = ibv_alloc_pd(ctx);
	buf = aligned_alloc(4096, BUF_LEN);
	mr = pd ? ibv_reg_mr(pd, buf, 2 * SIDE, IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE |
			     IBV_ACCESS_REMOTE_READ | IBV_ACCESS_REMOTE_ATOMIC) : NULL;
	mr_ro = pd ? ibv_reg_mr(pd, buf + 2 * SIDE, 4096, IBV_ACCESS_REMOTE_READ) : NULL;
	if (pd == NULL || mr == NULL || mr_ro == NULL) {
		fprintf(stderr, "setup: %s\n", strerror(errno));
		return 1;
	}
	check_states();
	check_opcodes();
	check_limits();
	check_uc();
	check_qp_ex();
	check_access_errors();
	check_local_errors();
	check_long_send();
	check_rnr();
	check_peer_gone();
	check_sqd();
	check_faults();
	check_uc_faults();
	CHECK_EQ(ibv_dereg_mr(mr), 0);
	CHECK_EQ(ibv_dereg_mr(mr_ro), 0);
	CHECK_EQ(ibv_dealloc_pd(pd), 0);
	CHECK_EQ(ibv_close_device(ctx), 0);
	free(buf);
	return test_done("rc");
}
