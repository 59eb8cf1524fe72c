/* SPDX-License-Identifier: BSD-3-Clause */
/* The extended verbs on a net_ring port (what the port sends, it receives): every ibv_wr_*
 * builder and setter a RAW_PACKET QP has puts on the wire the same bytes as the same WR
 * through ibv_post_send (SEND with one SGE, an SGE list, inline data and an inline list whose
 * buffers are overwritten right after the setter, TSO whose header buffer is overwritten
 * too); ibv_wr_abort posts nothing; the errors of a batch (too many SGEs, inline too long, a
 * full SQ, an opcode RAW_PACKET has not) come from ibv_wr_complete and post nothing of it;
 * ibv_create_qp_ex refuses send_ops_flags RAW_PACKET has not. ibv_cq_ex: ENOENT when empty,
 * the same completions as ibv_poll_cq (order, wr_id, status, opcode, byte_len, qp_num), the
 * wc_flags it cannot give refused with EOPNOTSUPP. */
#include "dpv_test.h"

#define NRX 64
#define RX_SLOT 4096

static struct ibv_context *ctx;
static struct ibv_pd *pd;
static struct ibv_mr *mr;
static uint8_t *buf;                 /* [0, 256K): to send; [256K, ...): receive slots */
#define RX_BASE (256 * 1024)
static struct ibv_cq *rcq;
static struct ibv_cq_ex *cqx;
static struct ibv_qp *sqp, *rqp;
static struct ibv_qp_ex *qpx;

struct rx { uint32_t len; uint8_t *data; };

static void post_recvs(int n)
{
	for (int i = 0; i < n; i++) {
		struct ibv_sge sge = { (uintptr_t)buf + RX_BASE + (size_t)i * RX_SLOT, RX_SLOT,
				       mr->lkey };
		struct ibv_recv_wr wr = { .wr_id = (uint64_t)i, .sg_list = &sge, .num_sge = 1 };
		struct ibv_recv_wr *bad;

		CHECK_EQ(ibv_post_recv(rqp, &wr, &bad), 0);
	}
}

/* The frames that arrive within @secs (at most @max), copied out in arrival order. */
static int recv_frames(struct rx *out, int max, double secs)
{
	struct ibv_wc wc[NRX];
	int got = test_poll_for(rcq, wc, max, secs);

	for (int i = 0; i < got; i++) {
		CHECK(wc[i].status == IBV_WC_SUCCESS, "receive %s", ibv_wc_status_str(wc[i].status));
		out[i].len = wc[i].byte_len;
		out[i].data = malloc(wc[i].byte_len);
		memcpy(out[i].data, buf + RX_BASE + wc[i].wr_id * RX_SLOT, wc[i].byte_len);
	}
	return got;
}

/* Completions of the send CQ through the extended poll API (ENOENT ends them). */
static int poll_ex(struct ibv_wc *wc, int max, double secs)
{
	struct ibv_poll_cq_attr attr = { 0 };
	double end = test_now() + secs;
	int got = 0;

	do {
		int rc = ibv_start_poll(cqx, &attr);

		if (rc == ENOENT)
			continue;
		CHECK_EQ(rc, 0);
		do {
			wc[got] = (struct ibv_wc){
				.wr_id = cqx->wr_id, .status = cqx->status,
				.opcode = ibv_wc_read_opcode(cqx),
				.byte_len = ibv_wc_read_byte_len(cqx),
				.qp_num = ibv_wc_read_qp_num(cqx),
				.vendor_err = ibv_wc_read_vendor_err(cqx),
				.wc_flags = ibv_wc_read_wc_flags(cqx),
			};
			got++;
		} while (got < max && ibv_next_poll(cqx) == 0);
		ibv_end_poll(cqx);
	} while (got < max && test_now() < end);
	return got;
}

static void frames_free(struct rx *r, int n)
{
	for (int i = 0; i < n; i++)
		free(r[i].data);
}

/* Send the batch @build makes through the wr API, then @wr through ibv_post_send: the
 * frames (@nframes each) are the same bytes, and each WR completes. */
static void same_on_wire(const char *what, void (*build)(void), struct ibv_send_wr *wr,
			 int nframes)
{
	struct rx a[NRX], b[NRX];
	struct ibv_send_wr *bad;
	struct ibv_wc wc[4];
	int na, nb;

	post_recvs(2 * nframes);
	ibv_wr_start(qpx);
	build();
	CHECK_EQ(ibv_wr_complete(qpx), 0);
	na = recv_frames(a, nframes, 5);
	CHECK(poll_ex(wc, 1, 5) == 1 && wc[0].status == IBV_WC_SUCCESS, "%s: wr completion", what);
	CHECK_EQ(ibv_post_send(sqp, wr, &bad), 0);
	nb = recv_frames(b, nframes, 5);
	CHECK(poll_ex(wc, 1, 5) == 1 && wc[0].status == IBV_WC_SUCCESS, "%s: post completion",
	      what);
	CHECK(na == nframes && nb == nframes, "%s: %d and %d frames, expected %d", what, na, nb,
	      nframes);
	for (int i = 0; i < na && i < nb; i++)
		CHECK(a[i].len == b[i].len && memcmp(a[i].data, b[i].data, a[i].len) == 0,
		      "%s: frame %d differs (%u vs %u bytes)", what, i, a[i].len, b[i].len);
	frames_free(a, na);
	frames_free(b, nb);
}

static void frame_fill(uint8_t *f, size_t len, uint8_t tag)
{
	memcpy(f, "\x02\x00\x00\x00\x00\x02\x02\x00\x00\x00\x00\x01\x88\xb5", 14);
	for (size_t i = 14; i < len; i++)
		f[i] = (uint8_t)(tag + i * 7);
}

/* ---- the cases: each builds a batch of one WR, and the same WR for ibv_post_send ---- */

static struct ibv_sge sges[4];
static uint8_t inl[300], inl2[300], hdr[54];

static void build_sge(void)
{
	qpx->wr_id = 1;
	qpx->wr_flags = IBV_SEND_SIGNALED;
	ibv_wr_send(qpx);
	ibv_wr_set_sge(qpx, sges[0].lkey, sges[0].addr, sges[0].length);
}

static void build_sge_list(void)
{
	qpx->wr_id = 2;
	qpx->wr_flags = IBV_SEND_SIGNALED;
	ibv_wr_send(qpx);
	ibv_wr_set_sge_list(qpx, 3, sges);
}

static void build_inline(void)
{
	qpx->wr_id = 3;
	qpx->wr_flags = IBV_SEND_SIGNALED;
	ibv_wr_send(qpx);
	ibv_wr_set_inline_data(qpx, inl, 200);
	memset(inl, 0xee, sizeof(inl));          /* reused at once: the copy was taken */
}

static void build_inline_list(void)
{
	struct ibv_data_buf bufs[2] = { { inl, 14 }, { inl2, 100 } };

	qpx->wr_id = 4;
	qpx->wr_flags = IBV_SEND_SIGNALED;
	ibv_wr_send(qpx);
	ibv_wr_set_inline_data_list(qpx, 2, bufs);
	memset(inl, 0xdd, sizeof(inl));
	memset(inl2, 0xdd, sizeof(inl2));
}

static void build_tso(void)
{
	qpx->wr_id = 5;
	qpx->wr_flags = IBV_SEND_SIGNALED;
	ibv_wr_send_tso(qpx, hdr, sizeof(hdr), 500);
	memset(hdr, 0xcc, sizeof(hdr));          /* copied by the builder */
	ibv_wr_set_sge(qpx, sges[3].lkey, sges[3].addr, sges[3].length);
}

static void tso_hdr(uint8_t *h)
{
	static const uint8_t ip_tcp[40] = { 0x45, 0, 0, 40, 0, 1, 0x40, 0, 64, 6, 0, 0, 10, 0, 0,
					    1, 10, 0, 0, 2, 0x30, 0x39, 0, 80, 0, 0, 0, 1, 0, 0, 0,
					    0, 0x50, 0x18, 0xff, 0xff, 0, 0, 0, 0 };

	memcpy(h, "\x02\x00\x00\x00\x00\x02\x02\x00\x00\x00\x00\x01\x08\x00", 14);
	memcpy(h + 14, ip_tcp, sizeof(ip_tcp));
}

static void check_wire(void)
{
	uint8_t keep[300];
	struct ibv_sge s;
	struct ibv_send_wr wr = { .sg_list = sges, .opcode = IBV_WR_SEND,
				  .send_flags = IBV_SEND_SIGNALED };

	frame_fill(buf, 100, 1);
	frame_fill(buf + 4096, 60, 2);
	frame_fill(buf + 8192, 300, 3);
	sges[0] = (struct ibv_sge){ (uintptr_t)buf, 100, mr->lkey };
	sges[1] = (struct ibv_sge){ (uintptr_t)buf + 4096 + 14, 46, mr->lkey };
	sges[2] = (struct ibv_sge){ (uintptr_t)buf + 8192 + 14, 286, mr->lkey };
	wr.num_sge = 1;
	same_on_wire("set_sge", build_sge, &wr, 1);
	wr.num_sge = 3;
	same_on_wire("set_sge_list", build_sge_list, &wr, 1);

	frame_fill(inl, sizeof(inl), 4);
	memcpy(keep, inl, sizeof(keep));
	s = (struct ibv_sge){ (uintptr_t)keep, 200, 0 };
	wr = (struct ibv_send_wr){ .sg_list = &s, .num_sge = 1, .opcode = IBV_WR_SEND,
				   .send_flags = IBV_SEND_SIGNALED | IBV_SEND_INLINE };
	same_on_wire("set_inline_data", build_inline, &wr, 1);

	frame_fill(inl, sizeof(inl), 5);
	frame_fill(inl2, sizeof(inl2), 6);
	memcpy(keep, inl, 14);
	memcpy(keep + 14, inl2, 100);
	s.length = 114;
	same_on_wire("set_inline_data_list", build_inline_list, &wr, 1);

	/* TSO: 1200 payload bytes in segments of 500 */
	frame_fill(buf + 16384, 1200, 7);
	sges[3] = (struct ibv_sge){ (uintptr_t)buf + 16384, 1200, mr->lkey };
	tso_hdr(hdr);
	memcpy(keep, hdr, sizeof(hdr));
	wr = (struct ibv_send_wr){ .sg_list = &sges[3], .num_sge = 1, .opcode = IBV_WR_TSO,
				   .send_flags = IBV_SEND_SIGNALED };
	wr.tso.hdr = keep;
	wr.tso.hdr_sz = sizeof(hdr);
	wr.tso.mss = 500;
	same_on_wire("send_tso", build_tso, &wr, 3);
}

/* A batch that fails posts nothing: no frame, no completion. */
static void check_nothing_sent(const char *what)
{
	struct rx r[NRX];
	struct ibv_wc wc[4];
	int n = recv_frames(r, NRX, 0.2);

	CHECK(n == 0, "%s: %d frames sent", what, n);
	frames_free(r, n);
	CHECK(poll_ex(wc, 4, 0.05) == 0, "%s: a completion", what);
}

static void good_wr(uint64_t id)
{
	qpx->wr_id = id;
	qpx->wr_flags = IBV_SEND_SIGNALED;
	ibv_wr_send(qpx);
	ibv_wr_set_sge(qpx, mr->lkey, (uintptr_t)buf, 100);
}

static void check_errors(struct ibv_qp_cap cap)
{
	struct ibv_sge five[5];
	uint8_t big[512] = { 0 };

	for (int i = 0; i < 5; i++)
		five[i] = (struct ibv_sge){ (uintptr_t)buf, 20, mr->lkey };
	post_recvs(NRX);
	ibv_wr_start(qpx);
	good_wr(10);
	ibv_wr_abort(qpx);
	check_nothing_sent("wr_abort");

	ibv_wr_start(qpx);
	good_wr(11);
	ibv_wr_send(qpx);
	ibv_wr_set_sge_list(qpx, 5, five);              /* max_send_sge is 4 */
	good_wr(12);
	CHECK_EQ(ibv_wr_complete(qpx), EINVAL);
	check_nothing_sent("num_sge > max_send_sge");

	ibv_wr_start(qpx);
	good_wr(13);
	ibv_wr_send(qpx);
	memcpy(big, buf, 14);
	ibv_wr_set_inline_data(qpx, big, cap.max_inline_data + 1);
	CHECK_EQ(ibv_wr_complete(qpx), EINVAL);
	check_nothing_sent("inline too long");

	ibv_wr_start(qpx);
	for (uint32_t i = 0; i <= cap.max_send_wr; i++)
		good_wr(100 + i);
	CHECK_EQ(ibv_wr_complete(qpx), ENOMEM);
	check_nothing_sent("SQ full");

	ibv_wr_start(qpx);
	good_wr(14);
	ibv_wr_rdma_write(qpx, 1, 0x1000);              /* not a RAW_PACKET opcode */
	ibv_wr_set_sge(qpx, mr->lkey, (uintptr_t)buf, 100);
	CHECK_EQ(ibv_wr_complete(qpx), EINVAL);
	ibv_wr_start(qpx);
	ibv_wr_set_sge(qpx, mr->lkey, (uintptr_t)buf, 100);   /* a setter with no WR */
	CHECK_EQ(ibv_wr_complete(qpx), EINVAL);
	check_nothing_sent("RDMA_WRITE on RAW_PACKET");

	/* an empty batch, and a batch after the failures, work */
	ibv_wr_start(qpx);
	CHECK_EQ(ibv_wr_complete(qpx), 0);
	ibv_wr_start(qpx);
	good_wr(15);
	CHECK_EQ(ibv_wr_complete(qpx), 0);
	{
		struct rx r[2];
		struct ibv_wc wc[2];
		int n = recv_frames(r, 1, 5);

		CHECK_EQ(n, 1);
		frames_free(r, n);
		CHECK(poll_ex(wc, 1, 5) == 1 && wc[0].wr_id == 15, "the batch after the errors");
	}
}

/* The same list through both entry points and both poll APIs: the same completions. */
static void check_cq_ex(void)
{
	struct ibv_poll_cq_attr attr = { 0 };
	struct ibv_wc a[8], b[8];
	struct ibv_send_wr wr[8], *bad;
	struct ibv_sge s[8];
	struct rx r[NRX];
	int na, nb, nr;

	CHECK_EQ(ibv_start_poll(cqx, &attr), ENOENT);
	post_recvs(16);
	ibv_wr_start(qpx);
	for (int i = 0; i < 8; i++) {
		qpx->wr_id = 1000 + (uint64_t)i;
		qpx->wr_flags = IBV_SEND_SIGNALED;
		ibv_wr_send(qpx);
		ibv_wr_set_sge(qpx, mr->lkey, (uintptr_t)buf, 60 + 10 * (uint32_t)i);
	}
	CHECK_EQ(ibv_wr_complete(qpx), 0);
	na = poll_ex(a, 8, 5);
	for (int i = 0; i < 8; i++) {
		s[i] = (struct ibv_sge){ (uintptr_t)buf, 60 + 10 * (uint32_t)i, mr->lkey };
		wr[i] = (struct ibv_send_wr){ .wr_id = 1000 + (uint64_t)i, .sg_list = &s[i],
					      .num_sge = 1, .opcode = IBV_WR_SEND,
					      .send_flags = IBV_SEND_SIGNALED,
					      .next = i < 7 ? &wr[i + 1] : NULL };
	}
	CHECK_EQ(ibv_post_send(sqp, wr, &bad), 0);
	nb = test_poll(ibv_cq_ex_to_cq(cqx), b, 8);
	CHECK_EQ(na, 8);
	CHECK_EQ(nb, 8);
	for (int i = 0; i < na && i < nb; i++) {
		CHECK(a[i].wr_id == b[i].wr_id && a[i].wr_id == 1000 + (uint64_t)i, "wr_id %d", i);
		CHECK(a[i].status == b[i].status && a[i].status == IBV_WC_SUCCESS, "status %d", i);
		CHECK(a[i].opcode == b[i].opcode && a[i].opcode == IBV_WC_SEND, "opcode %d", i);
		CHECK(a[i].byte_len == b[i].byte_len && a[i].byte_len == 60 + 10 * (uint32_t)i,
		      "byte_len %d: %u %u", i, a[i].byte_len, b[i].byte_len);
		CHECK(a[i].qp_num == b[i].qp_num && a[i].qp_num == sqp->qp_num, "qp_num %d", i);
		CHECK(a[i].vendor_err == 0 && a[i].wc_flags == b[i].wc_flags, "flags %d", i);
	}
	nr = recv_frames(r, 16, 5);
	CHECK_EQ(nr, 16);
	frames_free(r, nr);
	CHECK_EQ(ibv_start_poll(cqx, &attr), ENOENT);
}

static void check_create(struct ibv_cq *cq)
{
	struct ibv_cq_init_attr_ex ca = { .cqe = 4, .wc_flags = IBV_WC_EX_WITH_FLOW_TAG };
	struct ibv_qp_init_attr_ex qa = {
		.qp_type = IBV_QPT_RAW_PACKET, .send_cq = cq, .recv_cq = cq, .pd = pd,
		.cap = { .max_send_wr = 4, .max_send_sge = 1 },
		.comp_mask = IBV_QP_INIT_ATTR_PD | IBV_QP_INIT_ATTR_SEND_OPS_FLAGS,
		.send_ops_flags = IBV_QP_EX_WITH_SEND | IBV_QP_EX_WITH_RDMA_WRITE,
	};
	struct ibv_cq_ex *c;

	errno = 0;
	CHECK(ibv_create_cq_ex(ctx, &ca) == NULL && errno == EOPNOTSUPP, "flow tag wc_flags");
	ca.wc_flags = IBV_WC_EX_WITH_CVLAN;
	errno = 0;
	CHECK(ibv_create_cq_ex(ctx, &ca) == NULL && errno == EOPNOTSUPP, "CVLAN wc_flags");
	ca.wc_flags = IBV_WC_STANDARD_FLAGS;
	c = ibv_create_cq_ex(ctx, &ca);
	CHECK(c != NULL, "standard wc_flags: %s", strerror(errno));
	if (c != NULL)
		CHECK_EQ(ibv_destroy_cq(ibv_cq_ex_to_cq(c)), 0);
	ca.wc_flags = 0;
	ca.comp_mask = 1u << 7;
	errno = 0;
	CHECK(ibv_create_cq_ex(ctx, &ca) == NULL && errno == EINVAL, "unknown comp_mask");

	errno = 0;
	CHECK(ibv_create_qp_ex(ctx, &qa) == NULL && errno == EOPNOTSUPP, "RDMA_WRITE on RAW");
	qa.send_ops_flags = IBV_QP_EX_WITH_SEND | IBV_QP_EX_WITH_TSO;
	{
		struct ibv_qp *q = ibv_create_qp_ex(ctx, &qa);

		CHECK(q != NULL && ibv_qp_to_qp_ex(q) != NULL, "SEND|TSO: %s", strerror(errno));
		if (q != NULL)
			CHECK_EQ(ibv_destroy_qp(q), 0);
	}
	CHECK(ibv_qp_to_qp_ex(rqp) == NULL, "a QP created without send_ops_flags");
}

int main(void)
{
	struct ibv_cq_init_attr_ex ca = { .cqe = 256, .wc_flags = IBV_WC_EX_WITH_BYTE_LEN |
					  IBV_WC_EX_WITH_QP_NUM };
	struct ibv_qp_cap cap = { .max_send_wr = 32, .max_send_sge = 4, .max_inline_data = 256 };
	struct ibv_qp_init_attr_ex qa = {
		.qp_type = IBV_QPT_RAW_PACKET, .cap = cap,
		.comp_mask = IBV_QP_INIT_ATTR_PD | IBV_QP_INIT_ATTR_SEND_OPS_FLAGS,
		.send_ops_flags = IBV_QP_EX_WITH_SEND | IBV_QP_EX_WITH_TSO,
	};
	struct ibv_flow_attr fa = { .type = IBV_FLOW_ATTR_ALL_DEFAULT, .size = sizeof(fa),
				    .port = 1 };
	struct ibv_flow *flow;

	ctx = test_open(NULL);
	pd = ibv_alloc_pd(ctx);
	buf = aligned_alloc(4096, RX_BASE + NRX * RX_SLOT);
	mr = ibv_reg_mr(pd, buf, RX_BASE + NRX * RX_SLOT, IBV_ACCESS_LOCAL_WRITE);
	rcq = ibv_create_cq(ctx, 256, NULL, NULL, 0);
	cqx = ibv_create_cq_ex(ctx, &ca);
	if (pd == NULL || mr == NULL || rcq == NULL || cqx == NULL) {
		fprintf(stderr, "set-up: %s\n", strerror(errno));
		return 1;
	}
	qa.pd = pd;
	qa.send_cq = ibv_cq_ex_to_cq(cqx);
	qa.recv_cq = rcq;
	sqp = ibv_create_qp_ex(ctx, &qa);
	if (sqp == NULL) {
		fprintf(stderr, "ibv_create_qp_ex: %s\n", strerror(errno));
		return 1;
	}
	cap = qa.cap;                            /* as written back */
	qpx = ibv_qp_to_qp_ex(sqp);
	CHECK(qpx != NULL && &qpx->qp_base == sqp, "ibv_qp_to_qp_ex");
	CHECK_EQ(test_qp_to(sqp, IBV_QPS_INIT), 0);
	CHECK_EQ(test_qp_to(sqp, IBV_QPS_RTR), 0);
	CHECK_EQ(test_qp_to(sqp, IBV_QPS_RTS), 0);
	rqp = test_raw_qp(pd, rcq, (struct ibv_qp_cap){ .max_send_wr = 1, .max_send_sge = 1,
							 .max_recv_wr = 256, .max_recv_sge = 1 });
	flow = ibv_create_flow(rqp, &fa);
	CHECK(flow != NULL, "ALL_DEFAULT flow: %s", strerror(errno));

	check_create(rcq);
	check_wire();
	check_errors(cap);
	check_cq_ex();

	CHECK_EQ(ibv_destroy_flow(flow), 0);
	CHECK_EQ(ibv_destroy_qp(sqp), 0);
	CHECK_EQ(ibv_destroy_qp(rqp), 0);
	CHECK_EQ(ibv_destroy_cq(ibv_cq_ex_to_cq(cqx)), 0);
	CHECK_EQ(ibv_destroy_cq(rcq), 0);
	CHECK_EQ(ibv_dereg_mr(mr), 0);
	CHECK_EQ(ibv_dealloc_pd(pd), 0);
	CHECK_EQ(ibv_close_device(ctx), 0);
	free(buf);
	return test_done("qp_ex");
}
