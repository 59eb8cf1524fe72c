/* SPDX-License-Identifier: BSD-3-Clause */
/* Shared receive queues and XRC between two processes across a wire: what a requester sees
 * when the responder's SRQ has no WQE for it, and when its XRC remote_srqn names an SRQ it may
 * not use. The program forks; the parent (A, the requester) runs dpverbs on net_af_packet over
 * one end of a veth pair, the child (B, the responder with the SRQs) on the other end
 * (DPV_MW_IFACE_A / _B: run_mw_veth.sh makes the pair); they exchange QPNs, SRQ numbers and
 * verdicts over a socketpair, B driving its port by polling an empty CQ of its context while
 * it waits (any CQ progresses every QP of the context). Checked:
 *   overflow: 4 WQEs posted, the SRQ limit armed at 3, A sends 5 messages with rnr_retry 7:
 *     4 complete, the 5th waits (RNR NAKs, no completion) until B posts a WQE, then completes;
 *     B's 4 + 1 receives in order with every byte, IBV_EVENT_SRQ_LIMIT_REACHED exactly once,
 *     the limit disarmed (0);
 *   an empty SRQ and rnr_retry 1: IBV_WC_RNR_RETRY_EXC_ERR at A, nothing received at B;
 *   XRC: a SEND to B's XRC SRQ through an XRC_RECV QP of its domain lands there (the XRC_RECV
 *     QP's number in the completion); remote_srqn of an SRQ of another domain: A's
 *     IBV_WC_REM_INV_REQ_ERR, nothing taken from that SRQ; remote_srqn of no SRQ at all: the
 *     same. */
#include <arpa/inet.h>
#include <fcntl.h>

#include "dpv_test_fork.h"
#include "dpv_test_rc.h"

#define BUF_LEN (1 << 20)
#define TX 0
#define RX (256 * 1024)
#define SLOT 4096

struct msg {
	uint32_t a, b, c;
	int32_t status;
};

static struct fork_side fs;
static struct ibv_cq *scq, *rcq, *pcq;     /* send, receive, and an empty one to progress */

static const char *me(void)
{
	return fs.is_a ? "A" : "B";
}

static void xsend(uint32_t a, uint32_t b, uint32_t c, int32_t status)
{
	struct msg m = { a, b, c, status };

	test_fork_send(fs.sock, &m, sizeof(m));
}

/* Progress the port through the empty CQ: the completions the test checks stay where they
 * are. */
static void progress(void)
{
	struct ibv_wc wc;

	ibv_poll_cq(pcq, 1, &wc);
}

/* The peer's next message; the port is progressed meanwhile. */
static struct msg xrecv(void)
{
	struct msg m;

	test_fork_recv(fs.sock, &m, sizeof(m), me(), progress);
	return m;
}

/* The async events of the context queued now: how many of @type. */
static int count_events(enum ibv_event_type type)
{
	struct ibv_async_event ev;
	int n = 0;

	while (ibv_get_async_event(fs.ctx, &ev) == 0) {
		n += ev.event_type == type;
		ibv_ack_async_event(&ev);
	}
	return n;
}

static struct ibv_qp *rc_qp(struct ibv_srq *srq)
{
	struct ibv_qp_init_attr ia = { .send_cq = scq, .recv_cq = rcq, .srq = srq,
				       .qp_type = IBV_QPT_RC,
				       .cap = { .max_send_wr = 16, .max_recv_wr = 16,
						.max_send_sge = 1, .max_recv_sge = 1 } };
	struct ibv_qp *qp = ibv_create_qp(fs.pd, &ia);

	if (qp == NULL) {
		fprintf(stderr, "%s: ibv_create_qp: %s\n", me(), strerror(errno));
		exit(1);
	}
	return qp;
}

/* @qp (RC, XRC_SEND or XRC_RECV) to RTS towards @dqpn: A's PSNs start at 10, B's at 20;
 * @rnr_retry for a requester. */
static void to_rts(struct ibv_qp *qp, uint32_t dqpn, uint8_t rnr_retry)
{
	/* timeout 18 (1.07 s, 7 retries): a process of a loaded 2-core machine (or sanitized)
	 * may not run for half a second, and the test is about RNR, not about timeouts */
	int rc = rc_connect(qp, IBV_ACCESS_REMOTE_WRITE,
			    &(struct rc_conn){ .dgid = &fs.peer_gid, .dqpn = dqpn,
					       .rq_psn = fs.is_a ? 20 : 10, .sq_psn = fs.is_a ? 10 : 20,
					       .rd_atomic = 1, .min_rnr_timer = 12, .timeout = 18,
					       .retry_cnt = 7, .rnr_retry = rnr_retry });

	if (rc != 0) {
		fprintf(stderr, "%s: connect: %s\n", me(), strerror(rc));
		exit(1);
	}
}

static int srq_post(struct ibv_srq *srq, int slot, uint64_t wr_id)
{
	struct ibv_sge sge = { (uintptr_t)(fs.buf + RX + slot * SLOT), SLOT, fs.mr->lkey };
	struct ibv_recv_wr wr = { .wr_id = wr_id, .sg_list = &sge, .num_sge = 1 }, *bad;

	return ibv_post_srq_recv(srq, &wr, &bad);
}

/* A SEND of @len bytes of pattern @seed (to XRC SRQ @srqn on an XRC_SEND QP). */
static int send_msg(struct ibv_qp *qp, uint32_t len, uint8_t seed, uint64_t wr_id,
		    uint32_t srqn)
{
	struct ibv_sge sge = { (uintptr_t)(fs.buf + TX + seed * SLOT), len, fs.mr->lkey };
	struct ibv_send_wr wr = { .wr_id = wr_id, .sg_list = &sge, .num_sge = 1,
				  .opcode = IBV_WR_SEND, .send_flags = IBV_SEND_SIGNALED }, *bad;

	pattern(fs.buf + TX + seed * SLOT, len, seed);
	wr.qp_type.xrc.remote_srqn = srqn;
	return ibv_post_send(qp, &wr, &bad);
}

/* Is @wc the receive of a @len-byte SEND of pattern @seed into WQE @wr_id (slot @slot)? */
static bool received(const struct ibv_wc *wc, uint64_t wr_id, uint32_t qpn, uint32_t len,
		     int slot, uint8_t seed)
{
	uint8_t exp[SLOT];

	pattern(exp, len, seed);
	if (wc->status == IBV_WC_SUCCESS && wc->wr_id == wr_id && wc->opcode == IBV_WC_RECV &&
	    wc->qp_num == qpn && wc->byte_len == len &&
	    memcmp(fs.buf + RX + slot * SLOT, exp, len) == 0)
		return true;
	fprintf(stderr, "B: receive %lu: %s wr_id %lu qp %#x (want %#x) len %u (want %u)\n",
		(unsigned long)wr_id, ibv_wc_status_str(wc->status), (unsigned long)wc->wr_id,
		wc->qp_num, qpn, wc->byte_len, len);
	return false;
}

/* ---- A: the requester ---- */

static void a_overflow(void)
{
	struct ibv_qp *qp = rc_qp(NULL);
	struct msg m;
	struct ibv_wc wc[8];
	int n;

	xsend(qp->qp_num, 0, 0, 0);
	m = xrecv();
	to_rts(qp, m.a, 7);
	xsend(0, 0, 0, 0);               /* both in RTS */
	xrecv();
	for (int i = 0; i < 5; i++)
		CHECK_EQ(send_msg(qp, 1000 + i, (uint8_t)i, i, 0), 0);
	n = test_poll_for(scq, wc, 4, 10);
	CHECK(n == 4, "A: overflow: %d of the first 4 SENDs completed", n);
	for (int i = 0; i < n; i++)
		CHECK(wc[i].status == IBV_WC_SUCCESS && wc[i].wr_id == (uint64_t)i,
		      "A: SEND %d: %s wr_id %lu", i, ibv_wc_status_str(wc[i].status),
		      (unsigned long)wc[i].wr_id);
	/* the 5th finds the SRQ empty: RNR NAKs, retried forever (rnr_retry 7), no completion */
	n = test_poll_for(scq, wc, 1, 0.5);
	CHECK(n == 0, "A: the 5th SEND completed (%s) with the SRQ empty",
	      n ? ibv_wc_status_str(wc[0].status) : "");
	xsend(0, 0, 0, 0);               /* B: post one more WQE */
	xrecv();
	n = test_poll_for(scq, wc, 1, 10);
	CHECK(n == 1 && wc[0].status == IBV_WC_SUCCESS && wc[0].wr_id == 4,
	      "A: the 5th SEND after B posted a WQE: %d, %s", n,
	      n ? ibv_wc_status_str(wc[0].status) : "none");
	xsend(0, 0, 0, 0);
	xrecv();                         /* B checked its receives */
	CHECK_EQ(ibv_destroy_qp(qp), 0);
}

static void a_rnr_exceeded(void)
{
	struct ibv_qp *qp = rc_qp(NULL);
	struct msg m;
	struct ibv_wc wc;
	int n;

	xsend(qp->qp_num, 0, 0, 0);
	m = xrecv();
	to_rts(qp, m.a, 1);
	xsend(0, 0, 0, 0);
	xrecv();
	CHECK_EQ(send_msg(qp, 64, 9, 9, 0), 0);
	n = test_poll_for(scq, &wc, 1, 10);
	CHECK(n == 1 && wc.status == IBV_WC_RNR_RETRY_EXC_ERR && wc.wr_id == 9,
	      "A: SEND to an empty SRQ, rnr_retry 1: %s (want %s)",
	      n ? ibv_wc_status_str(wc.status) : "no completion",
	      ibv_wc_status_str(IBV_WC_RNR_RETRY_EXC_ERR));
	xsend(0, 0, 0, 0);
	xrecv();
	CHECK_EQ(ibv_destroy_qp(qp), 0);
}

/* One XRC_SEND QP connected to B's XRC_RECV QP; B's message: its QPN, SRQ numbers. */
static struct ibv_qp *a_xrc_connect(struct msg *m)
{
	struct ibv_qp_init_attr_ex qa = { .qp_type = IBV_QPT_XRC_SEND, .send_cq = scq,
					  .cap = { .max_send_wr = 16, .max_send_sge = 1 },
					  .comp_mask = IBV_QP_INIT_ATTR_PD, .pd = fs.pd };
	struct ibv_qp *ini = ibv_create_qp_ex(fs.ctx, &qa);

	CHECK(ini != NULL, "A: XRC_SEND QP: %s", strerror(errno));
	if (ini == NULL)
		exit(1);
	xsend(ini->qp_num, 0, 0, 0);
	*m = xrecv();
	to_rts(ini, m->a, 7);
	xsend(0, 0, 0, 0);
	xrecv();
	return ini;
}

static void a_xrc(void)
{
	struct msg m;
	struct ibv_qp *ini = a_xrc_connect(&m);
	uint32_t n_in = m.b, n_out = m.c;
	struct ibv_wc wc;
	int n;

	CHECK_EQ(send_msg(ini, 2500, 3, 1, n_in), 0);
	n = test_poll_for(scq, &wc, 1, 10);
	CHECK(n == 1 && wc.status == IBV_WC_SUCCESS, "A: XRC SEND to its domain's SRQ: %s",
	      n ? ibv_wc_status_str(wc.status) : "no completion");
	xsend(0, 0, 0, 0);               /* B: check the receive */
	xrecv();
	CHECK_EQ(send_msg(ini, 100, 4, 2, n_out), 0);
	n = test_poll_for(scq, &wc, 1, 10);
	CHECK(n == 1 && wc.status == IBV_WC_REM_INV_REQ_ERR && wc.wr_id == 2,
	      "A: XRC SEND to an SRQ of another domain: %s (want %s)",
	      n ? ibv_wc_status_str(wc.status) : "no completion",
	      ibv_wc_status_str(IBV_WC_REM_INV_REQ_ERR));
	xsend(0, 0, 0, 0);               /* B: nothing taken */
	xrecv();
	CHECK_EQ(ibv_destroy_qp(ini), 0);

	/* a fresh pair (both went to ERR): an SRQ number that names no SRQ */
	ini = a_xrc_connect(&m);
	CHECK_EQ(send_msg(ini, 100, 5, 3, m.b), 0);
	n = test_poll_for(scq, &wc, 1, 10);
	CHECK(n == 1 && wc.status == IBV_WC_REM_INV_REQ_ERR && wc.wr_id == 3,
	      "A: XRC SEND to no SRQ (number %#x): %s (want %s)", m.b,
	      n ? ibv_wc_status_str(wc.status) : "no completion",
	      ibv_wc_status_str(IBV_WC_REM_INV_REQ_ERR));
	xsend(0, 0, 0, 0);
	xrecv();
	CHECK_EQ(ibv_destroy_qp(ini), 0);
}

/* ---- B: the responder ---- */

static void b_overflow(struct ibv_srq *srq)
{
	struct ibv_qp *qp = rc_qp(srq);
	struct ibv_srq_attr lim = { .srq_limit = 3 };
	struct ibv_wc wc[8];
	struct msg m;
	int n, bad = 0;

	count_events(IBV_EVENT_SRQ_LIMIT_REACHED);
	for (int i = 0; i < 4; i++)
		CHECK_EQ(srq_post(srq, i, 100 + i), 0);
	CHECK_EQ(ibv_modify_srq(srq, &lim, IBV_SRQ_LIMIT), 0);
	m = xrecv();
	xsend(qp->qp_num, 0, 0, 0);
	to_rts(qp, m.a, 7);
	xrecv();
	xsend(0, 0, 0, 0);
	xrecv();                         /* A: 4 completed, the 5th is stuck */
	n = test_poll_for(rcq, wc, 5, 2);
	CHECK(n == 4, "B: %d receives from 4 WQEs", n);
	for (int i = 0; i < n && i < 4; i++)
		bad += !received(&wc[i], 100 + i, qp->qp_num, 1000 + i, i, (uint8_t)i);
	CHECK_EQ(bad, 0);
	CHECK_EQ(count_events(IBV_EVENT_SRQ_LIMIT_REACHED), 1);
	CHECK_EQ(ibv_query_srq(srq, &lim), 0);
	CHECK_EQ(lim.srq_limit, 0);      /* disarmed */
	CHECK_EQ(srq_post(srq, 4, 104), 0);
	xsend(0, 0, 0, 0);
	xrecv();                         /* A's 5th completed */
	n = test_poll_for(rcq, wc, 1, 5);
	CHECK(n == 1 && received(&wc[0], 104, qp->qp_num, 1004, 4, 4), "B: the 5th receive");
	CHECK_EQ(count_events(IBV_EVENT_SRQ_LIMIT_REACHED), 0);   /* once */
	xsend(0, 0, 0, 0);
	CHECK_EQ(ibv_destroy_qp(qp), 0);
}

static void b_rnr_exceeded(struct ibv_srq *srq)
{
	struct ibv_qp *qp = rc_qp(srq);
	struct ibv_wc wc;
	struct msg m = xrecv();

	xsend(qp->qp_num, 0, 0, 0);
	to_rts(qp, m.a, 7);
	xrecv();
	xsend(0, 0, 0, 0);
	xrecv();                         /* A's SEND failed */
	CHECK_EQ(test_poll_for(rcq, &wc, 1, 0.2), 0);
	xsend(0, 0, 0, 0);
	CHECK_EQ(ibv_destroy_qp(qp), 0);
}

static struct ibv_xrcd *xrcd_open(void)
{
	struct ibv_xrcd_init_attr a = { .comp_mask = IBV_XRCD_INIT_ATTR_FD |
						     IBV_XRCD_INIT_ATTR_OFLAGS,
					.fd = -1, .oflags = O_CREAT };

	return ibv_open_xrcd(fs.ctx, &a);
}

static struct ibv_srq *xrc_srq(struct ibv_xrcd *x)
{
	struct ibv_srq_init_attr_ex a = {
		.attr = { .max_wr = 8, .max_sge = 1 },
		.comp_mask = IBV_SRQ_INIT_ATTR_TYPE | IBV_SRQ_INIT_ATTR_XRCD |
			     IBV_SRQ_INIT_ATTR_CQ | IBV_SRQ_INIT_ATTR_PD,
		.srq_type = IBV_SRQT_XRC, .xrcd = x, .cq = rcq, .pd = fs.pd,
	};

	return ibv_create_srq_ex(fs.ctx, &a);
}

/* An XRC_RECV QP of @x connected to A's XRC_SEND QP; B tells its QPN and @b, @c. */
static struct ibv_qp *b_xrc_connect(struct ibv_xrcd *x, uint32_t b, uint32_t c)
{
	struct ibv_qp_init_attr_ex qa = { .qp_type = IBV_QPT_XRC_RECV,
					  .comp_mask = IBV_QP_INIT_ATTR_XRCD, .xrcd = x };
	struct ibv_qp *tgt = ibv_create_qp_ex(fs.ctx, &qa);
	struct msg m;

	CHECK(tgt != NULL, "B: XRC_RECV QP: %s", strerror(errno));
	if (tgt == NULL)
		exit(1);
	m = xrecv();
	xsend(tgt->qp_num, b, c, 0);
	to_rts(tgt, m.a, 7);
	xrecv();
	xsend(0, 0, 0, 0);
	return tgt;
}

static void b_xrc(void)
{
	struct ibv_xrcd *x_in = xrcd_open(), *x_other = xrcd_open();
	struct ibv_srq *s_in = x_in ? xrc_srq(x_in) : NULL;
	struct ibv_srq *s_out = x_other ? xrc_srq(x_other) : NULL;
	uint32_t n_in = 0, n_out = 0, n_none;
	struct ibv_qp *tgt;
	struct ibv_wc wc;
	int n;

	CHECK(s_in != NULL && s_out != NULL, "B: XRC domains and SRQs: %s", strerror(errno));
	if (s_in == NULL || s_out == NULL)
		exit(1);
	CHECK_EQ(ibv_get_srq_num(s_in, &n_in), 0);
	CHECK_EQ(ibv_get_srq_num(s_out, &n_out), 0);
	CHECK_EQ(srq_post(s_in, 0, 200), 0);
	CHECK_EQ(srq_post(s_out, 1, 300), 0);
	tgt = b_xrc_connect(x_in, n_in, n_out);
	xrecv();                         /* A's SEND to s_in completed */
	n = test_poll_for(rcq, &wc, 1, 5);
	CHECK(n == 1 && received(&wc, 200, tgt->qp_num, 2500, 0, 3),
	      "B: the XRC SEND in its domain's SRQ");
	xsend(0, 0, 0, 0);
	xrecv();                         /* A's SEND to s_out failed */
	n = test_poll_for(rcq, &wc, 1, 0.3);
	CHECK(n == 0, "B: %d completions after the SEND to another domain's SRQ (%s wr_id %lu)",
	      n, n ? ibv_wc_status_str(wc.status) : "", n ? (unsigned long)wc.wr_id : 0ul);
	xsend(0, 0, 0, 0);
	CHECK_EQ(ibv_destroy_qp(tgt), 0);

	/* a number no SRQ has: above both (numbers are small and dense here) */
	n_none = (n_in > n_out ? n_in : n_out) + 1000;
	tgt = b_xrc_connect(x_in, n_none, 0);
	xrecv();
	CHECK_EQ(test_poll_for(rcq, &wc, 1, 0.3), 0);
	xsend(0, 0, 0, 0);
	CHECK_EQ(ibv_destroy_qp(tgt), 0);
	/* the other domain's WQE is still there: a SEND through an XRC_RECV QP of that domain
	 * would take it; here it is flushed by nothing and freed with its SRQ */
	CHECK_EQ(ibv_destroy_srq(s_in), 0);
	CHECK_EQ(ibv_destroy_srq(s_out), 0);
	CHECK_EQ(ibv_close_xrcd(x_in), 0);
	CHECK_EQ(ibv_close_xrcd(x_other), 0);
}

int main(void)
{
	if (!test_fork_side(&fs, "10.80.0", BUF_LEN, IBV_ACCESS_LOCAL_WRITE))
		return 1;
	rc_async_nonblock(fs.ctx);
	scq = ibv_create_cq(fs.ctx, 64, NULL, NULL, 0);
	rcq = ibv_create_cq(fs.ctx, 64, NULL, NULL, 0);
	pcq = ibv_create_cq(fs.ctx, 1, NULL, NULL, 0);
	if (scq == NULL || rcq == NULL || pcq == NULL) {
		fprintf(stderr, "setup: %s\n", strerror(errno));
		return 1;
	}
	if (fs.is_a) {
		a_overflow();
		a_rnr_exceeded();
		a_xrc();
	} else {
		struct ibv_srq_init_attr sa = { .attr = { .max_wr = 8, .max_sge = 1 } };
		struct ibv_srq *srq = ibv_create_srq(fs.pd, &sa);

		CHECK(srq != NULL, "B: ibv_create_srq: %s", strerror(errno));
		if (srq == NULL)
			return 1;
		b_overflow(srq);
		b_rnr_exceeded(srq);
		CHECK_EQ(ibv_destroy_srq(srq), 0);
		b_xrc();
	}
	CHECK_EQ(ibv_destroy_cq(scq), 0);
	CHECK_EQ(ibv_destroy_cq(rcq), 0);
	CHECK_EQ(ibv_destroy_cq(pcq), 0);
	test_fork_side_free(&fs);
	return test_fork_done(fs.is_a, "srq_wire");
}
