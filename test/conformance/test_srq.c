/* SPDX-License-Identifier: BSD-3-Clause */
/* Shared receive queues on one port (RoCE through the port's own GID, looped back inside
 * dpverbs: every frame goes through the codec, the ICRC and the receive demux), as an
 * application sees them. Checked: ibv_create_srq's argument checks and written-back
 * attributes, ibv_query_srq, ibv_modify_srq (limit above max_wr EINVAL, resizing keeps what is
 * posted); ibv_post_srq_recv's checks (num_sge EINVAL, ENOMEM when full, *bad_wr the first WR
 * not posted, the ones before it posted); ibv_post_recv on a QP with an SRQ (EINVAL);
 * ibv_destroy_srq while a QP uses it (EBUSY); RC, UC and UD QPs receiving from one SRQ in post
 * order (wr_id, qp_num, byte_len, every byte, multi-packet SENDs and WRITE_WITH_IMM);
 * IBV_EVENT_SRQ_LIMIT_REACHED exactly once per arming; a QP whose receive fails
 * (LOC_LEN_ERR) goes to ERR with IBV_EVENT_QP_LAST_WQE_REACHED and flushes nothing of the
 * SRQ's, whose other WQEs another QP then receives into, in order; a QP moved to ERR gets the
 * event too and flushes no SRQ WQE; SEND_WITH_INV into an SRQ's WQE (RC and XRC) completes
 * with IBV_WC_WITH_INV and the key (RC); an XRC_SEND QP's BIND_MW and LOCAL_INV; RAW_PACKET
 * QPs on an SRQ receiving bursts (WQEs in order, each QP's frames in order, drops when empty);
 * ibv_open_qp's handles on an XRC_RECV QP (check_open_qp). DPV_EAL_ARGS: --vdev=net_ring0. */
#include <fcntl.h>

#include "dpv_test_rc.h"

#define BUF_LEN (1 << 20)
#define TX 0
#define RX (256 * 1024)
#define SLOT 4096
#define MTU_BYTES 1024

static struct ibv_context *ctx;
static struct ibv_pd *pd;
static struct ibv_mr *mr;
static uint8_t *buf;
static union ibv_gid gid4;

static struct ibv_srq *srq_make(uint32_t max_wr, uint32_t max_sge)
{
	struct ibv_srq_init_attr a = { .attr = { .max_wr = max_wr, .max_sge = max_sge } };
	struct ibv_srq *srq = ibv_create_srq(pd, &a);

	if (srq == NULL) {
		fprintf(stderr, "ibv_create_srq: %s\n", strerror(errno));
		exit(1);
	}
	return srq;
}

static struct ibv_qp *qp_make(enum ibv_qp_type type, struct ibv_cq *cq, struct ibv_srq *srq)
{
	struct ibv_qp_init_attr init = {
		.send_cq = cq, .recv_cq = cq, .srq = srq, .qp_type = type,
		.cap = { .max_send_wr = 64, .max_recv_wr = 64, .max_send_sge = 1,
			 .max_recv_sge = 1 },
	};
	struct ibv_qp *qp = ibv_create_qp(pd, &init);

	if (qp == NULL) {
		fprintf(stderr, "ibv_create_qp: %s\n", strerror(errno));
		exit(1);
	}
	return qp;
}

/* RC/UC @qp to RTS, connected to @dqpn on the port's own GID. */
static void connect_qp(struct ibv_qp *qp, uint32_t dqpn)
{
	int rc = rc_connect(qp, IBV_ACCESS_REMOTE_WRITE,
			    &(struct rc_conn){ .dgid = &gid4, .dqpn = dqpn, .rq_psn = 7,
					       .sq_psn = 7, .rd_atomic = 1, .min_rnr_timer = 1,
					       .timeout = 14, .retry_cnt = 7, .rnr_retry = 7 });

	if (rc != 0) {
		fprintf(stderr, "connect: %s\n", strerror(rc));
		exit(1);
	}
}

static int srq_post(struct ibv_srq *srq, uint8_t *at, uint32_t len, uint64_t wr_id)
{
	struct ibv_sge sge = { (uintptr_t)at, len, mr->lkey };
	struct ibv_recv_wr wr = { .wr_id = wr_id, .sg_list = &sge, .num_sge = 1 }, *bad;

	return ibv_post_srq_recv(srq, &wr, &bad);
}

static int send_msg(struct ibv_qp *qp, enum ibv_wr_opcode op, uint8_t *at, uint32_t len,
		    uint64_t wr_id, struct ibv_ah *ah, uint32_t rqpn)
{
	struct ibv_sge sge = { (uintptr_t)at, len, mr->lkey };
	struct ibv_send_wr wr = {
		.wr_id = wr_id, .sg_list = &sge, .num_sge = 1, .opcode = op,
		.send_flags = IBV_SEND_SIGNALED, .imm_data = htonl(0xabc00000u + (uint32_t)wr_id),
	}, *bad;

	if (ah != NULL) {
		wr.wr.ud.ah = ah;
		wr.wr.ud.remote_qpn = rqpn;
		wr.wr.ud.remote_qkey = 0x1234;
	} else {
		wr.wr.rdma.remote_addr = (uintptr_t)(buf + RX + 200 * 1024);
		wr.wr.rdma.rkey = mr->rkey;
	}
	return ibv_post_send(qp, &wr, &bad);
}

/* The next async event of the context, or -1 when none is queued. */
static int next_event(struct ibv_async_event *ev)
{
	if (ibv_get_async_event(ctx, ev) != 0)
		return -1;
	ibv_ack_async_event(ev);
	return (int)ev->event_type;
}

static void drain_events(void)
{
	struct ibv_async_event ev;

	while (next_event(&ev) >= 0)
		;
}

/* ---- objects and posting ---- */

static void check_objects(void)
{
	struct ibv_srq_init_attr a = { .attr = { .max_wr = 10, .max_sge = 2 } };
	struct ibv_srq_init_attr_ex x = { .comp_mask = IBV_SRQ_INIT_ATTR_TYPE | IBV_SRQ_INIT_ATTR_PD,
					  .srq_type = IBV_SRQT_TM, .pd = pd,
					  .attr = { .max_wr = 4, .max_sge = 1 } };
	struct ibv_device_attr da;
	struct ibv_srq_attr q = { 0 };
	struct ibv_srq *srq;
	struct ibv_cq *cq = ibv_create_cq(ctx, 16, NULL, NULL, 0);
	struct ibv_qp_init_attr qi = { .send_cq = cq, .recv_cq = cq, .qp_type = IBV_QPT_RC,
				       .cap = { .max_send_wr = 4, .max_recv_wr = 4, .max_send_sge = 1,
						.max_recv_sge = 1 } };
	struct ibv_qp *qp;
	struct ibv_sge sge = { (uintptr_t)buf, 64, mr->lkey };
	struct ibv_recv_wr rw = { .sg_list = &sge, .num_sge = 1 }, *bad = NULL;

	CHECK_EQ(ibv_query_device(ctx, &da), 0);
	CHECK(da.max_srq > 0 && da.max_srq_wr >= 1024 && da.max_srq_sge >= 1,
	      "max_srq %d max_srq_wr %d max_srq_sge %d", da.max_srq, da.max_srq_wr, da.max_srq_sge);
	srq = ibv_create_srq(pd, &a);
	CHECK(srq != NULL, "ibv_create_srq: %s", strerror(errno));
	CHECK(a.attr.max_wr >= 10 && a.attr.max_sge == 2, "written back %u %u", a.attr.max_wr,
	      a.attr.max_sge);
	CHECK_EQ(ibv_query_srq(srq, &q), 0);
	CHECK(q.max_wr == a.attr.max_wr && q.max_sge == 2 && q.srq_limit == 0, "query %u %u %u",
	      q.max_wr, q.max_sge, q.srq_limit);
	q.srq_limit = q.max_wr + 1;
	CHECK_EQ(ibv_modify_srq(srq, &q, IBV_SRQ_LIMIT), EINVAL);
	q.srq_limit = 3;
	CHECK_EQ(ibv_modify_srq(srq, &q, IBV_SRQ_LIMIT), 0);
	CHECK_EQ(ibv_query_srq(srq, &q), 0);
	CHECK_EQ(q.srq_limit, 3);
	/* errors of creation */
	a.attr.max_wr = 0;
	errno = 0;
	CHECK(ibv_create_srq(pd, &a) == NULL && errno == EINVAL, "max_wr 0: errno %d", errno);
	a.attr = (struct ibv_srq_attr){ .max_wr = 4, .max_sge = (uint32_t)da.max_srq_sge + 1 };
	errno = 0;
	CHECK(ibv_create_srq(pd, &a) == NULL && errno == EINVAL, "max_sge over: errno %d", errno);
	errno = 0;
	CHECK(ibv_create_srq_ex(ctx, &x) == NULL && errno == EOPNOTSUPP, "TM: errno %d", errno);
	/* a QP with it: no receive queue of its own */
	qi.srq = srq;
	qp = ibv_create_qp(pd, &qi);
	CHECK(qp != NULL, "QP with SRQ: %s", strerror(errno));
	CHECK(qi.cap.max_recv_wr == 0, "max_recv_wr written back %u", qi.cap.max_recv_wr);
	CHECK(qp->srq == srq, "qp->srq");
	CHECK_EQ(ibv_modify_qp(qp, &(struct ibv_qp_attr){ .qp_state = IBV_QPS_INIT, .port_num = 1 },
			       IBV_QP_STATE | IBV_QP_PKEY_INDEX | IBV_QP_PORT | IBV_QP_ACCESS_FLAGS),
		 0);
	CHECK_EQ(ibv_post_recv(qp, &rw, &bad), EINVAL);
	CHECK(bad == &rw, "bad_wr of ibv_post_recv");
	CHECK_EQ(ibv_destroy_srq(srq), EBUSY);
	CHECK_EQ(ibv_destroy_qp(qp), 0);
	CHECK_EQ(ibv_destroy_srq(srq), 0);
	CHECK_EQ(ibv_destroy_cq(cq), 0);
}

static void check_post(void)
{
	struct ibv_srq *srq = srq_make(4, 1);
	struct ibv_srq_attr q;
	struct ibv_sge sge[2] = { { (uintptr_t)buf, 64, mr->lkey }, { (uintptr_t)buf, 64, mr->lkey } };
	struct ibv_recv_wr wr[6], *bad = NULL;

	for (int i = 0; i < 6; i++)
		wr[i] = (struct ibv_recv_wr){ .wr_id = i, .sg_list = sge, .num_sge = 1,
					      .next = i < 5 ? &wr[i + 1] : NULL };
	CHECK_EQ(ibv_query_srq(srq, &q), 0);
	CHECK_EQ(q.max_wr, 4);
	/* two SGEs on a one-SGE SRQ: EINVAL at wr[1], wr[0] posted */
	wr[1].num_sge = 2;
	CHECK_EQ(ibv_post_srq_recv(srq, wr, &bad), EINVAL);
	CHECK(bad == &wr[1], "bad_wr %ld", bad ? (long)(bad - wr) : -1L);
	wr[1].num_sge = 1;
	/* three more fit, the fifth is ENOMEM */
	CHECK_EQ(ibv_post_srq_recv(srq, &wr[1], &bad), ENOMEM);
	CHECK(bad == &wr[4], "bad_wr %ld", bad ? (long)(bad - wr) : -1L);
	wr[4].next = NULL;
	CHECK_EQ(ibv_post_srq_recv(srq, &wr[4], &bad), ENOMEM);
	CHECK(bad == &wr[4], "full: bad_wr %ld", bad ? (long)(bad - wr) : -1L);
	/* resizing keeps the four posted; not below them; the device says it resizes */
	{
		struct ibv_device_attr da;

		CHECK_EQ(ibv_query_device(ctx, &da), 0);
		CHECK(da.device_cap_flags & IBV_DEVICE_SRQ_RESIZE, "SRQ_RESIZE not reported");
	}
	q.max_wr = 2;
	CHECK_EQ(ibv_modify_srq(srq, &q, IBV_SRQ_MAX_WR), EINVAL);
	q.max_wr = 8;
	CHECK_EQ(ibv_modify_srq(srq, &q, IBV_SRQ_MAX_WR), 0);
	CHECK_EQ(ibv_query_srq(srq, &q), 0);
	CHECK_EQ(q.max_wr, 8);
	wr[4].next = &wr[5];
	CHECK_EQ(ibv_post_srq_recv(srq, &wr[4], &bad), 0);
	CHECK_EQ(ibv_destroy_srq(srq), 0);
}

/* ---- receiving ---- */

/* Two RC (or UC) senders to two receivers sharing one SRQ: the receives come from it in post
 * order whichever QP takes them; 3-packet SENDs and a WRITE_WITH_IMM; the limit event once. */
static void check_connected(enum ibv_qp_type type)
{
	enum { N = 12 };
	struct ibv_cq *scq = ibv_create_cq(ctx, 256, NULL, NULL, 0);
	struct ibv_cq *rcq = ibv_create_cq(ctx, 256, NULL, NULL, 0);
	struct ibv_srq *srq = srq_make(64, 1);
	struct ibv_qp *a1 = qp_make(type, scq, NULL), *a2 = qp_make(type, scq, NULL);
	struct ibv_qp *b1 = qp_make(type, rcq, srq), *b2 = qp_make(type, rcq, srq);
	struct ibv_srq_attr lim = { .srq_limit = 4 };
	struct ibv_async_event ev;
	struct ibv_wc wc[N];
	int bad = 0, limit_events = 0, e;

	connect_qp(a1, b1->qp_num);
	connect_qp(b1, a1->qp_num);
	connect_qp(a2, b2->qp_num);
	connect_qp(b2, a2->qp_num);
	drain_events();
	for (int i = 0; i < N; i++)
		CHECK_EQ(srq_post(srq, buf + RX + i * SLOT, SLOT, 100 + i), 0);
	CHECK_EQ(ibv_modify_srq(srq, &lim, IBV_SRQ_LIMIT), 0);
	/* messages alternate between the QPs; message i is 2500 + i bytes (3 packets) */
	for (int i = 0; i < N; i++) {
		pattern(buf + TX + i * SLOT, 2500 + i, (uint8_t)i);
		if (i == N - 1 && type == IBV_QPT_RC)   /* and one WRITE_WITH_IMM */
			CHECK_EQ(send_msg(i % 2 ? a2 : a1, IBV_WR_RDMA_WRITE_WITH_IMM,
					  buf + TX + i * SLOT, 100, i, NULL, 0), 0);
		else
			CHECK_EQ(send_msg(i % 2 ? a2 : a1, IBV_WR_SEND, buf + TX + i * SLOT,
					  2500 + i, i, NULL, 0), 0);
		/* one message at a time: the SRQ order is the send order */
		CHECK_EQ(test_poll(rcq, &wc[i], 1), 1);
	}
	for (int i = 0; i < N; i++) {
		bool imm = i == N - 1 && type == IBV_QPT_RC;
		uint32_t len = imm ? 100 : 2500 + i;
		uint8_t exp[SLOT];

		pattern(exp, len, (uint8_t)i);
		bad += wc[i].status != IBV_WC_SUCCESS || wc[i].wr_id != (uint64_t)(100 + i) ||
		       wc[i].qp_num != (i % 2 ? b2 : b1)->qp_num || wc[i].byte_len != len ||
		       wc[i].opcode != (imm ? IBV_WC_RECV_RDMA_WITH_IMM : IBV_WC_RECV) ||
		       (!imm && memcmp(buf + RX + i * SLOT, exp, len) != 0) ||
		       (imm && memcmp(buf + RX + 200 * 1024, exp, len) != 0);
		if (bad == 1)
			fprintf(stderr, "message %d: %s wr_id %lu qp %u len %u\n", i,
				ibv_wc_status_str(wc[i].status), (unsigned long)wc[i].wr_id,
				wc[i].qp_num, wc[i].byte_len);
	}
	CHECK_EQ(bad, 0);
	CHECK_EQ(test_poll(scq, wc, N), N);
	/* the limit (4) was crossed once, when the 9th WQE was taken: one event */
	while ((e = next_event(&ev)) >= 0)
		if (e == IBV_EVENT_SRQ_LIMIT_REACHED && ev.element.srq == srq)
			limit_events++;
	CHECK_EQ(limit_events, 1);
	CHECK_EQ(ibv_query_srq(srq, &lim), 0);
	CHECK_EQ(lim.srq_limit, 0);           /* disarmed */
	CHECK_EQ(ibv_destroy_qp(b1), 0);
	CHECK_EQ(ibv_destroy_qp(b2), 0);
	CHECK_EQ(ibv_destroy_qp(a1), 0);
	CHECK_EQ(ibv_destroy_qp(a2), 0);
	CHECK_EQ(ibv_destroy_srq(srq), 0);
	CHECK_EQ(ibv_destroy_cq(scq), 0);
	CHECK_EQ(ibv_destroy_cq(rcq), 0);
}

/* UD QPs receiving from one SRQ: GRH + payload, src_qp, in SRQ order. */
static void check_ud(void)
{
	struct ibv_cq *cq = ibv_create_cq(ctx, 64, NULL, NULL, 0);
	struct ibv_srq *srq = srq_make(16, 1);
	struct ibv_qp *s = ud_qp_rts(pd, cq, cq, 0x1234, 0, 1);
	struct ibv_qp *r1, *r2;
	struct ibv_ah *ah = ud_ah(pd, 1, &gid4, 0, 0, 64);
	struct ibv_qp_init_attr qi = { .send_cq = cq, .recv_cq = cq, .srq = srq,
				       .qp_type = IBV_QPT_UD,
				       .cap = { .max_send_wr = 4, .max_send_sge = 1 } };
	struct ibv_qp_attr a = { .qp_state = IBV_QPS_INIT, .port_num = 1, .qkey = 0x1234 };
	struct ibv_wc wc[2];

	r1 = ibv_create_qp(pd, &qi);
	r2 = ibv_create_qp(pd, &qi);
	CHECK(r1 != NULL && r2 != NULL, "UD QPs with SRQ: %s", strerror(errno));
	for (int i = 0; i < 2; i++) {
		struct ibv_qp *r = i ? r2 : r1;

		a.qp_state = IBV_QPS_INIT;
		CHECK_EQ(ibv_modify_qp(r, &a, IBV_QP_STATE | IBV_QP_PKEY_INDEX | IBV_QP_PORT |
				       IBV_QP_QKEY), 0);
		a.qp_state = IBV_QPS_RTR;
		CHECK_EQ(ibv_modify_qp(r, &a, IBV_QP_STATE), 0);
	}
	for (int i = 0; i < 4; i++)
		CHECK_EQ(srq_post(srq, buf + RX + i * SLOT, SLOT, 200 + i), 0);
	for (int i = 0; i < 4; i++) {
		pattern(buf + TX, 300, (uint8_t)(40 + i));
		CHECK_EQ(send_msg(s, IBV_WR_SEND, buf + TX, 300, i, ah, (i % 2 ? r2 : r1)->qp_num),
			 0);
		CHECK_EQ(test_poll(cq, wc, 2), 2);       /* the send's and the receive's */
		for (int k = 0; k < 2; k++) {
			uint8_t exp[300];

			if (wc[k].opcode != IBV_WC_RECV)
				continue;
			pattern(exp, 300, (uint8_t)(40 + i));
			CHECK(wc[k].status == IBV_WC_SUCCESS && wc[k].wr_id == (uint64_t)(200 + i) &&
			      wc[k].qp_num == (i % 2 ? r2 : r1)->qp_num && wc[k].byte_len == 340 &&
			      wc[k].src_qp == s->qp_num &&
			      memcmp(buf + RX + i * SLOT + 40, exp, 300) == 0,
			      "UD %d: %s wr_id %lu qp %u len %u", i, ibv_wc_status_str(wc[k].status),
			      (unsigned long)wc[k].wr_id, wc[k].qp_num, wc[k].byte_len);
		}
	}
	CHECK_EQ(ibv_destroy_qp(r1), 0);
	CHECK_EQ(ibv_destroy_qp(r2), 0);
	CHECK_EQ(ibv_destroy_qp(s), 0);
	CHECK_EQ(ibv_destroy_ah(ah), 0);
	CHECK_EQ(ibv_destroy_srq(srq), 0);
	CHECK_EQ(ibv_destroy_cq(cq), 0);
}

/* A receiver fails (a SEND longer than its WQE): LOC_LEN_ERR for that WQE only, ERR, the
 * last-WQE event; no FLUSH_ERR of the SRQ's other WQEs, which the other QP then receives
 * into in order; moving that one to ERR flushes none of the SRQ's either. */
static void check_error_isolation(void)
{
	struct ibv_cq *scq = ibv_create_cq(ctx, 64, NULL, NULL, 0);
	struct ibv_cq *rcq = ibv_create_cq(ctx, 64, NULL, NULL, 0);
	struct ibv_srq *srq = srq_make(16, 1);
	struct ibv_qp *a1 = qp_make(IBV_QPT_RC, scq, NULL), *a2 = qp_make(IBV_QPT_RC, scq, NULL);
	struct ibv_qp *b1 = qp_make(IBV_QPT_RC, rcq, srq), *b2 = qp_make(IBV_QPT_RC, rcq, srq);
	struct ibv_async_event ev;
	struct ibv_wc wc[8];
	int last_b1 = 0, last_b2 = 0, e, n;

	connect_qp(a1, b1->qp_num);
	connect_qp(b1, a1->qp_num);
	connect_qp(a2, b2->qp_num);
	connect_qp(b2, a2->qp_num);
	drain_events();
	CHECK_EQ(srq_post(srq, buf + RX, 100, 300), 0);     /* too small for what a1 sends */
	for (int i = 1; i < 5; i++)
		CHECK_EQ(srq_post(srq, buf + RX + i * SLOT, SLOT, 300 + i), 0);
	CHECK_EQ(send_msg(a1, IBV_WR_SEND, buf + TX, 2000, 1, NULL, 0), 0);
	CHECK_EQ(test_poll(rcq, wc, 1), 1);
	CHECK(wc[0].status == IBV_WC_LOC_LEN_ERR && wc[0].wr_id == 300 &&
	      wc[0].qp_num == b1->qp_num, "b1's receive: %s wr_id %lu",
	      ibv_wc_status_str(wc[0].status), (unsigned long)wc[0].wr_id);
	CHECK_EQ(test_poll(scq, wc, 1), 1);
	CHECK(wc[0].status == IBV_WC_REM_INV_REQ_ERR, "a1's send: %s",
	      ibv_wc_status_str(wc[0].status));
	/* nothing else on the receive CQ: the SRQ's four other WQEs were not flushed */
	CHECK_EQ(test_poll(rcq, wc, 8), 0);
	/* b2 receives into them, from the oldest */
	for (int i = 1; i < 3; i++) {
		CHECK_EQ(send_msg(a2, IBV_WR_SEND, buf + TX, 1500, 10 + i, NULL, 0), 0);
		CHECK_EQ(test_poll(rcq, wc, 1), 1);
		CHECK(wc[0].status == IBV_WC_SUCCESS && wc[0].wr_id == (uint64_t)(300 + i) &&
		      wc[0].qp_num == b2->qp_num, "b2 %d: %s wr_id %lu", i,
		      ibv_wc_status_str(wc[0].status), (unsigned long)wc[0].wr_id);
		CHECK_EQ(test_poll(scq, wc, 1), 1);
	}
	/* b2 to ERR: still no SRQ WQE flushed; the event for b2 */
	CHECK_EQ(test_qp_to(b2, IBV_QPS_ERR), 0);
	n = test_poll(rcq, wc, 8);
	CHECK_EQ(n, 0);
	while ((e = next_event(&ev)) >= 0) {
		if (e == IBV_EVENT_QP_LAST_WQE_REACHED && ev.element.qp == b1)
			last_b1++;
		if (e == IBV_EVENT_QP_LAST_WQE_REACHED && ev.element.qp == b2)
			last_b2++;
	}
	CHECK_EQ(last_b1, 1);
	CHECK_EQ(last_b2, 1);
	CHECK_EQ(ibv_destroy_qp(b1), 0);
	CHECK_EQ(ibv_destroy_qp(b2), 0);
	/* the two left are a new QP's: 303, then 304 */
	b1 = qp_make(IBV_QPT_RC, rcq, srq);
	CHECK_EQ(ibv_destroy_qp(a1), 0);
	a1 = qp_make(IBV_QPT_RC, scq, NULL);
	connect_qp(a1, b1->qp_num);
	connect_qp(b1, a1->qp_num);
	for (int i = 3; i < 5; i++) {
		CHECK_EQ(send_msg(a1, IBV_WR_SEND, buf + TX, 10, 20 + i, NULL, 0), 0);
		CHECK_EQ(test_poll(rcq, wc, 1), 1);
		CHECK(wc[0].status == IBV_WC_SUCCESS && wc[0].wr_id == (uint64_t)(300 + i),
		      "new QP %d: %s wr_id %lu", i, ibv_wc_status_str(wc[0].status),
		      (unsigned long)wc[0].wr_id);
		CHECK_EQ(test_poll(scq, wc, 1), 1);
	}
	CHECK_EQ(ibv_destroy_qp(b1), 0);
	CHECK_EQ(ibv_destroy_qp(a1), 0);
	CHECK_EQ(ibv_destroy_qp(a2), 0);
	CHECK_EQ(ibv_destroy_srq(srq), 0);
	CHECK_EQ(ibv_destroy_cq(scq), 0);
	CHECK_EQ(ibv_destroy_cq(rcq), 0);
}

/* An empty SRQ: RNR NAKs until a WQE is posted, then the message lands. */
static void check_rnr(void)
{
	struct ibv_cq *cq = ibv_create_cq(ctx, 64, NULL, NULL, 0);
	struct ibv_srq *srq = srq_make(4, 1);
	struct ibv_qp *a = qp_make(IBV_QPT_RC, cq, NULL), *b = qp_make(IBV_QPT_RC, cq, srq);
	struct ibv_wc wc[2];

	connect_qp(a, b->qp_num);
	connect_qp(b, a->qp_num);
	CHECK_EQ(send_msg(a, IBV_WR_SEND, buf + TX, 64, 1, NULL, 0), 0);
	CHECK_EQ(test_poll_for(cq, wc, 1, 0.2), 0);
	CHECK_EQ(srq_post(srq, buf + RX, SLOT, 77), 0);
	CHECK_EQ(test_poll(cq, wc, 2), 2);
	CHECK(wc[0].status == IBV_WC_SUCCESS && wc[1].status == IBV_WC_SUCCESS &&
	      (wc[0].wr_id == 77 || wc[1].wr_id == 77), "after RNR: %s %s",
	      ibv_wc_status_str(wc[0].status), ibv_wc_status_str(wc[1].status));
	CHECK_EQ(ibv_destroy_qp(a), 0);
	CHECK_EQ(ibv_destroy_qp(b), 0);
	CHECK_EQ(ibv_destroy_srq(srq), 0);
	CHECK_EQ(ibv_destroy_cq(cq), 0);
}

/* ---- XRC ---- */
/* A type 2 bind on @qp of @mw to [at, at + len) of @m under key @rkey, signaled. */
static int bind2(struct ibv_qp *qp, struct ibv_mw *mw, uint32_t rkey, struct ibv_mr *m,
		 uint8_t *at, uint64_t len, uint64_t wr_id)
{
	struct ibv_send_wr wr = {
		.wr_id = wr_id, .opcode = IBV_WR_BIND_MW, .send_flags = IBV_SEND_SIGNALED,
		.bind_mw = { .mw = mw, .rkey = rkey,
			     .bind_info = { .mr = m, .addr = (uintptr_t)at, .length = len,
					    .mw_access_flags = IBV_ACCESS_REMOTE_READ } },
	}, *bad;

	return ibv_post_send(qp, &wr, &bad);
}

/* @op (SEND_WITH_INV of 16 bytes or LOCAL_INV) of @rkey on @qp. */
static int post_inv(struct ibv_qp *qp, enum ibv_wr_opcode op, uint32_t rkey, uint64_t wr_id)
{
	struct ibv_sge sge = { (uintptr_t)(buf + TX), 16, mr->lkey };
	struct ibv_send_wr wr = {
		.wr_id = wr_id, .opcode = op, .send_flags = IBV_SEND_SIGNALED,
		.sg_list = op == IBV_WR_SEND_WITH_INV ? &sge : NULL,
		.num_sge = op == IBV_WR_SEND_WITH_INV, .invalidate_rkey = rkey,
	}, *bad;

	return ibv_post_send(qp, &wr, &bad);
}

/* Is @wc a successful receive of SEND_WITH_INV (16 bytes) into WQE @wr_id naming @rkey? */
static bool inv_received(const struct ibv_wc *wc, uint64_t wr_id, uint32_t rkey)
{
	if (wc->status == IBV_WC_SUCCESS && wc->wr_id == wr_id && wc->opcode == IBV_WC_RECV &&
	    (wc->wc_flags & IBV_WC_WITH_INV) && wc->invalidated_rkey == rkey && wc->byte_len == 16)
		return true;
	fprintf(stderr, "SEND_WITH_INV into an SRQ WQE: %s wr_id %lu opcode %d flags %#x key %#x "
		"(want %#x)\n", ibv_wc_status_str(wc->status), (unsigned long)wc->wr_id,
		wc->opcode, wc->wc_flags, wc->invalidated_rkey, rkey);
	return false;
}

/* SEND_WITH_INV into a WQE an RC QP took from its SRQ: the completion says IBV_WC_WITH_INV
 * and names the key, which is dead (the receiver's LOCAL_INV of it: LOC_QP_OP_ERR). */
static void check_srq_inv(void)
{
	struct ibv_cq *scq = ibv_create_cq(ctx, 16, NULL, NULL, 0);
	struct ibv_cq *rcq = ibv_create_cq(ctx, 16, NULL, NULL, 0);
	struct ibv_srq *srq = srq_make(8, 1);
	struct ibv_qp *a = qp_make(IBV_QPT_RC, scq, NULL), *b = qp_make(IBV_QPT_RC, rcq, srq);
	struct ibv_mr *wmr = ibv_reg_mr(pd, buf + RX + 100 * SLOT, SLOT,
					IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_MW_BIND);
	struct ibv_mw *mw = ibv_alloc_mw(pd, IBV_MW_TYPE_2);
	struct ibv_wc wc[2];
	uint32_t k;

	CHECK(wmr != NULL && mw != NULL, "MR/MW: %s", strerror(errno));
	if (wmr == NULL || mw == NULL)
		return;
	k = ibv_inc_rkey(mw->rkey);
	connect_qp(a, b->qp_num);
	connect_qp(b, a->qp_num);
	CHECK_EQ(bind2(b, mw, k, wmr, buf + RX + 100 * SLOT, 64, 1), 0);
	CHECK_EQ(test_poll(rcq, wc, 1), 1);
	CHECK(wc[0].status == IBV_WC_SUCCESS && wc[0].opcode == IBV_WC_BIND_MW, "bind: %s",
	      ibv_wc_status_str(wc[0].status));
	CHECK_EQ(srq_post(srq, buf + RX, SLOT, 40), 0);
	CHECK_EQ(post_inv(a, IBV_WR_SEND_WITH_INV, k, 2), 0);
	CHECK_EQ(test_poll(rcq, wc, 1), 1);
	CHECK(inv_received(&wc[0], 40, k), "RC receive");
	CHECK_EQ(test_poll(scq, wc, 1), 1);
	CHECK(wc[0].status == IBV_WC_SUCCESS && wc[0].wr_id == 2, "send: %s",
	      ibv_wc_status_str(wc[0].status));
	/* the key is dead: the receiver's LOCAL_INV of it fails */
	CHECK_EQ(post_inv(b, IBV_WR_LOCAL_INV, k, 3), 0);
	CHECK_EQ(test_poll(rcq, wc, 1), 1);
	CHECK(wc[0].status == IBV_WC_LOC_QP_OP_ERR && wc[0].wr_id == 3, "LOCAL_INV: %s",
	      ibv_wc_status_str(wc[0].status));
	CHECK_EQ(ibv_destroy_qp(a), 0);
	CHECK_EQ(ibv_destroy_qp(b), 0);
	CHECK_EQ(ibv_destroy_srq(srq), 0);
	CHECK_EQ(ibv_dealloc_mw(mw), 0);
	CHECK_EQ(ibv_dereg_mr(wmr), 0);
	CHECK_EQ(ibv_destroy_cq(scq), 0);
	CHECK_EQ(ibv_destroy_cq(rcq), 0);
}

/* RAW_PACKET QPs on one SRQ (RAW receives a burst at a time): each steered frame takes the
 * SRQ's next WQE, the completions on the CQ in the order the WQEs were taken (wr_id in SRQ
 * post order), each QP's frames in send order, every byte; frames beyond the SRQ's WQEs are
 * dropped, and once WQEs are posted again the next frames land in them. */
static void check_raw(void)
{
	enum { N = 40, EXTRA = 4, FSLOT = 2048 };
	static const uint8_t mac[2][6] = { { 2, 0, 0, 0, 0, 0xaa }, { 2, 0, 0, 0, 0, 0xbb } };
	struct ibv_cq *scq = ibv_create_cq(ctx, 128, NULL, NULL, 0);
	struct ibv_cq *rcq = ibv_create_cq(ctx, 128, NULL, NULL, 0);
	struct ibv_srq *srq = srq_make(64, 1);
	struct ibv_qp_cap cap = { .max_send_wr = 64, .max_send_sge = 1 };
	struct ibv_qp *tx = test_raw_qp(pd, scq, cap), *rx[2];
	struct ibv_flow *fl[2];
	struct ibv_send_wr swr[N + EXTRA], *bad;
	struct ibv_sge sge[N + EXTRA];
	struct ibv_wc wc[N + EXTRA];
	int last[2] = { -1, -1 }, bad_wc = 0, n;

	for (int q = 0; q < 2; q++) {
		struct ibv_qp_init_attr init = { .send_cq = rcq, .recv_cq = rcq, .srq = srq,
						 .qp_type = IBV_QPT_RAW_PACKET,
						 .cap = { .max_send_wr = 1, .max_send_sge = 1 } };
		struct {
			struct ibv_flow_attr attr;
			struct ibv_flow_spec_eth eth;
		} f = {
			.attr = { .type = IBV_FLOW_ATTR_NORMAL, .size = sizeof(f), .num_of_specs = 1,
				  .port = 1 },
			.eth = { .type = IBV_FLOW_SPEC_ETH, .size = sizeof(struct ibv_flow_spec_eth) },
		};

		rx[q] = ibv_create_qp(pd, &init);
		if (rx[q] == NULL || test_qp_to(rx[q], IBV_QPS_INIT) ||
		    test_qp_to(rx[q], IBV_QPS_RTR) || test_qp_to(rx[q], IBV_QPS_RTS)) {
			fprintf(stderr, "RAW_PACKET QP with an SRQ: %s\n", strerror(errno));
			exit(1);
		}
		memcpy(f.eth.val.dst_mac, mac[q], 6);
		memset(f.eth.mask.dst_mac, 0xff, 6);
		fl[q] = ibv_create_flow(rx[q], &f.attr);
		CHECK(fl[q] != NULL, "flow: %s", strerror(errno));
	}
	/* frame i: to QP i % 3 == 2 ? 1 : 0, 100 + i bytes, its index at byte 14 */
	for (int i = 0; i < N + EXTRA; i++) {
		uint8_t *f = buf + TX + (size_t)i * FSLOT;

		memcpy(f, mac[i % 3 == 2], 6);
		memcpy(f + 6, "\x02\x00\x00\x00\x00\x01\x88\xb5", 8);
		for (int b = 14; b < 100 + i; b++)
			f[b] = (uint8_t)(i + b);
		f[14] = (uint8_t)i;
		sge[i] = (struct ibv_sge){ (uintptr_t)f, (uint32_t)(100 + i), mr->lkey };
		swr[i] = (struct ibv_send_wr){ .wr_id = (uint64_t)i, .sg_list = &sge[i],
					       .num_sge = 1, .opcode = IBV_WR_SEND,
					       .send_flags = IBV_SEND_SIGNALED,
					       .next = i + 1 < N ? &swr[i + 1] : NULL };
	}
	for (int i = 0; i < N; i++)
		CHECK_EQ(srq_post(srq, buf + RX + (size_t)i * FSLOT, FSLOT, 1000 + (uint64_t)i), 0);
	CHECK_EQ(ibv_post_send(tx, &swr[0], &bad), 0);      /* one list: bursts of frames */
	CHECK_EQ(test_poll(scq, wc, N), N);
	n = test_poll(rcq, wc, N);
	CHECK_EQ(n, N);
	for (int k = 0; k < n; k++) {
		const uint8_t *got = buf + RX + (size_t)(wc[k].wr_id - 1000) * FSLOT;
		int i = got[14], q = wc[k].qp_num == rx[1]->qp_num;

		bad_wc += wc[k].status != IBV_WC_SUCCESS || wc[k].opcode != IBV_WC_RECV ||
			  wc[k].wr_id != 1000 + (uint64_t)k || i >= N ||
			  wc[k].byte_len != (uint32_t)(100 + i) || (i % 3 == 2) != q || i <= last[q] ||
			  memcmp(got, buf + TX + (size_t)i * FSLOT, 100 + (size_t)i) != 0;
		if (bad_wc == 1)
			fprintf(stderr, "RAW completion %d: %s wr_id %lu qp %u len %u frame %d\n", k,
				ibv_wc_status_str(wc[k].status), (unsigned long)wc[k].wr_id,
				wc[k].qp_num, wc[k].byte_len, i);
		last[q] = i;
	}
	CHECK_EQ(bad_wc, 0);
	/* the SRQ is empty: these frames are dropped; then one WQE, one frame */
	swr[N + EXTRA - 2].next = &swr[N + EXTRA - 1];
	swr[N + EXTRA - 1].next = NULL;
	CHECK_EQ(ibv_post_send(tx, &swr[N + EXTRA - 2], &bad), 0);
	CHECK_EQ(test_poll(scq, wc, 2), 2);
	CHECK_EQ(test_poll_for(rcq, wc, 1, 0.2), 0);
	CHECK_EQ(srq_post(srq, buf + RX, FSLOT, 2000), 0);
	swr[N].next = NULL;
	CHECK_EQ(ibv_post_send(tx, &swr[N], &bad), 0);
	CHECK_EQ(test_poll(scq, wc, 1), 1);
	CHECK_EQ(test_poll(rcq, wc, 1), 1);
	CHECK(wc[0].status == IBV_WC_SUCCESS && wc[0].wr_id == 2000 &&
	      wc[0].qp_num == rx[N % 3 == 2]->qp_num && wc[0].byte_len == 100 + N &&
	      memcmp(buf + RX, buf + TX + (size_t)N * FSLOT, 100 + N) == 0,
	      "after the drops: %s wr_id %lu len %u", ibv_wc_status_str(wc[0].status),
	      (unsigned long)wc[0].wr_id, wc[0].byte_len);
	for (int q = 0; q < 2; q++) {
		CHECK_EQ(ibv_destroy_flow(fl[q]), 0);
		CHECK_EQ(ibv_destroy_qp(rx[q]), 0);
	}
	CHECK_EQ(ibv_destroy_qp(tx), 0);
	CHECK_EQ(ibv_destroy_srq(srq), 0);
	CHECK_EQ(ibv_destroy_cq(scq), 0);
	CHECK_EQ(ibv_destroy_cq(rcq), 0);
}


static struct ibv_xrcd *xrcd_open(int fd, int oflags)
{
	struct ibv_xrcd_init_attr a = { .comp_mask = IBV_XRCD_INIT_ATTR_FD |
						     IBV_XRCD_INIT_ATTR_OFLAGS,
					.fd = fd, .oflags = oflags };

	return ibv_open_xrcd(ctx, &a);
}

static struct ibv_srq *xrc_srq(struct ibv_xrcd *x, struct ibv_cq *cq)
{
	struct ibv_srq_init_attr_ex a = {
		.attr = { .max_wr = 16, .max_sge = 1 },
		.comp_mask = IBV_SRQ_INIT_ATTR_TYPE | IBV_SRQ_INIT_ATTR_XRCD |
			     IBV_SRQ_INIT_ATTR_CQ | IBV_SRQ_INIT_ATTR_PD,
		.srq_type = IBV_SRQT_XRC, .xrcd = x, .cq = cq, .pd = pd,
	};

	return ibv_create_srq_ex(ctx, &a);
}

/* XRC_SEND @ini and XRC_RECV @tgt connected to each other (as ibv_xsrq_pingpong does). */
static void xrc_connect(struct ibv_qp *ini, struct ibv_qp *tgt)
{
	struct rc_conn to_ini = { .dgid = &gid4, .dqpn = ini->qp_num, .rq_psn = 50, .sq_psn = 60,
				  .rd_atomic = 1, .min_rnr_timer = 1, .timeout = 14 };
	struct rc_conn to_tgt = { .dgid = &gid4, .dqpn = tgt->qp_num, .rq_psn = 60, .sq_psn = 50,
				  .rd_atomic = 1, .timeout = 14, .retry_cnt = 7, .rnr_retry = 7 };

	CHECK_EQ(rc_to_init(ini, IBV_ACCESS_REMOTE_WRITE), 0);
	CHECK_EQ(rc_to_init(tgt, IBV_ACCESS_REMOTE_WRITE), 0);
	CHECK_EQ(rc_to_rtr(tgt, &to_ini), 0);
	CHECK_EQ(rc_to_rts(tgt, &to_ini), 0);
	CHECK_EQ(rc_to_rtr(ini, &to_tgt), 0);
	CHECK_EQ(rc_to_rts(ini, &to_tgt), 0);
}

static int xrc_send(struct ibv_qp *ini, uint32_t srqn, uint32_t len, uint64_t wr_id)
{
	struct ibv_sge sge = { (uintptr_t)(buf + TX), len, mr->lkey };
	struct ibv_send_wr wr = { .wr_id = wr_id, .sg_list = &sge, .num_sge = 1,
				  .opcode = IBV_WR_SEND, .send_flags = IBV_SEND_SIGNALED }, *bad;

	wr.qp_type.xrc.remote_srqn = srqn;
	return ibv_post_send(ini, &wr, &bad);
}

/* Domains: fd -1 is a domain of its own; one file's inode is one domain however often it is
 * opened (O_CREAT to create, O_EXCL refusing an existing one, EINVAL without O_CREAT for a new
 * one); ibv_close_xrcd EBUSY while an SRQ uses it. Messages: an XRC_SEND QP's SENDs land in the
 * XRC SRQ their remote_srqn names (through an XRC_RECV QP of the same domain, opened from
 * another handle of the same file), completions on the SRQ's CQ with the XRC_RECV QP's number;
 * an SRQ of another domain: REM_INV_REQ_ERR at the sender, the XRC_RECV QP to ERR, nothing
 * taken from that SRQ. */
static void check_xrc(void)
{
	char path[] = "/tmp/dpv_xrc_XXXXXX";
	int fd = mkstemp(path);
	struct ibv_xrcd *x_file = xrcd_open(fd, O_CREAT), *x_same, *x_other = xrcd_open(-1, O_CREAT);
	struct ibv_cq *scq = ibv_create_cq(ctx, 64, NULL, NULL, 0);
	struct ibv_cq *rcq = ibv_create_cq(ctx, 64, NULL, NULL, 0);
	struct ibv_srq *s_in, *s_out;
	struct ibv_qp_init_attr_ex qa = { .qp_type = IBV_QPT_XRC_SEND, .send_cq = scq,
					  .cap = { .max_send_wr = 16, .max_send_sge = 1 },
					  .comp_mask = IBV_QP_INIT_ATTR_PD |
						       IBV_QP_INIT_ATTR_SEND_OPS_FLAGS, .pd = pd,
					  .send_ops_flags = IBV_QP_EX_WITH_SEND };
	struct ibv_qp_ex *qx;
	struct ibv_qp *ini, *tgt;
	struct ibv_wc wc[4];
	uint32_t n_in = 0, n_out = 0;
	uint8_t exp[3000];

	CHECK(fd >= 0 && x_file != NULL && x_other != NULL, "ibv_open_xrcd: %s", strerror(errno));
	errno = 0;
	CHECK(xrcd_open(fd, O_CREAT | O_EXCL) == NULL && errno == EINVAL, "O_EXCL: %d", errno);
	x_same = xrcd_open(fd, 0);
	CHECK(x_same != NULL, "the file's domain again: %s", strerror(errno));
	s_in = xrc_srq(x_file, rcq);
	s_out = xrc_srq(x_other, rcq);
	CHECK(s_in != NULL && s_out != NULL, "XRC SRQs: %s", strerror(errno));
	CHECK_EQ(ibv_get_srq_num(s_in, &n_in), 0);
	CHECK_EQ(ibv_get_srq_num(s_out, &n_out), 0);
	CHECK(n_in != 0 && n_out != 0 && n_in != n_out, "SRQ numbers %u %u", n_in, n_out);
	CHECK_EQ(ibv_close_xrcd(x_file), EBUSY);
	ini = ibv_create_qp_ex(ctx, &qa);
	qa = (struct ibv_qp_init_attr_ex){ .qp_type = IBV_QPT_XRC_RECV,
					   .comp_mask = IBV_QP_INIT_ATTR_XRCD, .xrcd = x_same };
	tgt = ibv_create_qp_ex(ctx, &qa);
	CHECK(ini != NULL && tgt != NULL, "XRC QPs: %s", strerror(errno));
	xrc_connect(ini, tgt);
	{
		struct ibv_sge sge = { (uintptr_t)buf, 64, mr->lkey };
		struct ibv_recv_wr rw = { .sg_list = &sge, .num_sge = 1 }, *bad;

		CHECK_EQ(ibv_post_recv(ini, &rw, &bad), EINVAL);   /* no receive queue */
		CHECK_EQ(ibv_post_recv(tgt, &rw, &bad), EINVAL);
		CHECK_EQ(xrc_send(tgt, n_in, 10, 1), EINVAL);         /* no send queue either */
	}
	for (int i = 0; i < 3; i++)
		CHECK_EQ(srq_post(s_in, buf + RX + i * SLOT, SLOT, 500 + i), 0);
	CHECK_EQ(srq_post(s_out, buf + RX + 3 * SLOT, SLOT, 600), 0);
	for (int i = 0; i < 2; i++) {
		pattern(buf + TX, 2500, (uint8_t)(90 + i));
		pattern(exp, 2500, (uint8_t)(90 + i));
		CHECK_EQ(xrc_send(ini, n_in, 2500, i), 0);
		CHECK_EQ(test_poll(rcq, wc, 1), 1);
		CHECK(wc[0].status == IBV_WC_SUCCESS && wc[0].wr_id == (uint64_t)(500 + i) &&
		      wc[0].qp_num == tgt->qp_num && wc[0].byte_len == 2500 &&
		      memcmp(buf + RX + i * SLOT, exp, 2500) == 0, "XRC SEND %d: %s wr_id %lu "
		      "qp %u len %u", i, ibv_wc_status_str(wc[0].status), (unsigned long)wc[0].wr_id,
		      wc[0].qp_num, wc[0].byte_len);
		CHECK_EQ(test_poll(scq, wc, 1), 1);
		CHECK(wc[0].status == IBV_WC_SUCCESS && wc[0].wr_id == (uint64_t)i, "send %d: %s", i,
		      ibv_wc_status_str(wc[0].status));
	}
	/* the ibv_wr_* API: ibv_wr_set_xrc_srqn names the SRQ */
	qx = ibv_qp_to_qp_ex(ini);
	CHECK(qx != NULL, "ibv_qp_to_qp_ex");
	if (qx != NULL) {
		pattern(buf + TX, 700, 77);
		pattern(exp, 700, 77);
		ibv_wr_start(qx);
		qx->wr_id = 7;
		qx->wr_flags = IBV_SEND_SIGNALED;
		ibv_wr_send(qx);
		ibv_wr_set_xrc_srqn(qx, n_in);
		ibv_wr_set_sge(qx, mr->lkey, (uintptr_t)(buf + TX), 700);
		CHECK_EQ(ibv_wr_complete(qx), 0);
		CHECK_EQ(test_poll(rcq, wc, 1), 1);
		CHECK(wc[0].status == IBV_WC_SUCCESS && wc[0].wr_id == 502 && wc[0].byte_len == 700 &&
		      memcmp(buf + RX + 2 * SLOT, exp, 700) == 0, "wr API: %s wr_id %lu",
		      ibv_wc_status_str(wc[0].status), (unsigned long)wc[0].wr_id);
		CHECK_EQ(test_poll(scq, wc, 1), 1);
	}
	/* an XRC_SEND QP binds and invalidates windows as RC does */
	{
		struct ibv_mr *wmr = ibv_reg_mr(pd, buf + RX + 100 * SLOT, SLOT,
						IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_MW_BIND);
		struct ibv_mw *mw = ibv_alloc_mw(pd, IBV_MW_TYPE_2);
		uint32_t k1, k2;

		CHECK(wmr != NULL && mw != NULL, "MR/MW: %s", strerror(errno));
		k1 = ibv_inc_rkey(mw->rkey);
		k2 = ibv_inc_rkey(k1);
		CHECK_EQ(bind2(ini, mw, k1, wmr, buf + RX + 100 * SLOT, 64, 20), 0);
		CHECK_EQ(post_inv(ini, IBV_WR_LOCAL_INV, k1, 21), 0);
		CHECK_EQ(bind2(ini, mw, k2, wmr, buf + RX + 100 * SLOT, 64, 22), 0);
		CHECK_EQ(test_poll(scq, wc, 3), 3);
		CHECK(wc[0].status == IBV_WC_SUCCESS && wc[0].opcode == IBV_WC_BIND_MW &&
		      wc[1].status == IBV_WC_SUCCESS && wc[1].opcode == IBV_WC_LOCAL_INV &&
		      wc[2].status == IBV_WC_SUCCESS && wc[2].wr_id == 22,
		      "XRC bind/LOCAL_INV/bind: %s %s %s", ibv_wc_status_str(wc[0].status),
		      ibv_wc_status_str(wc[1].status), ibv_wc_status_str(wc[2].status));
		CHECK_EQ(ibv_dealloc_mw(mw), 0);
		CHECK_EQ(ibv_dereg_mr(wmr), 0);
	}
	/* an SRQ of another domain */
	CHECK_EQ(xrc_send(ini, n_out, 100, 9), 0);
	CHECK_EQ(test_poll(scq, wc, 1), 1);
	CHECK(wc[0].status == IBV_WC_REM_INV_REQ_ERR && wc[0].wr_id == 9, "other domain: %s",
	      ibv_wc_status_str(wc[0].status));
	CHECK_EQ(test_poll(rcq, wc, 4), 0);          /* nothing taken, nothing flushed */
	CHECK_EQ(ibv_destroy_qp(ini), 0);
	CHECK_EQ(ibv_destroy_qp(tgt), 0);
	CHECK_EQ(ibv_destroy_srq(s_in), 0);
	CHECK_EQ(ibv_destroy_srq(s_out), 0);
	CHECK_EQ(ibv_close_xrcd(x_file), 0);
	CHECK_EQ(ibv_close_xrcd(x_same), 0);
	CHECK_EQ(ibv_close_xrcd(x_other), 0);
	/* the file's domain is gone with its last handle: not without O_CREAT */
	errno = 0;
	CHECK(xrcd_open(fd, 0) == NULL && errno == EINVAL, "gone: errno %d", errno);
	CHECK_EQ(ibv_destroy_cq(scq), 0);
	CHECK_EQ(ibv_destroy_cq(rcq), 0);
	close(fd);
	unlink(path);
}

/* ibv_open_qp on @c: XRC_RECV QP @qpn through domain handle @x, with @tag as its context. */
static struct ibv_qp *open_qp(struct ibv_context *c, struct ibv_xrcd *x, uint32_t qpn,
			      uint32_t mask, enum ibv_qp_type type, void *tag)
{
	struct ibv_qp_open_attr a = { .comp_mask = mask, .qp_num = qpn, .xrcd = x,
				      .qp_context = tag, .qp_type = type };

	return ibv_open_qp(c, &a);
}

#define OPEN_MASK (IBV_QP_OPEN_ATTR_NUM | IBV_QP_OPEN_ATTR_XRCD | IBV_QP_OPEN_ATTR_TYPE | \
		   IBV_QP_OPEN_ATTR_CONTEXT)

/* Throw away the queued async events of @c without acknowledging them: they name QPs the
 * checks before destroyed (an acknowledgement would write into them). */
static void discard_events(struct ibv_context *c)
{
	struct ibv_async_event ev;

	while (ibv_get_async_event(c, &ev) == 0)
		;
}

/* The next async event of @c of @type (others skipped), its QP handle; NULL when none. */
static struct ibv_qp *qp_event(struct ibv_context *c, enum ibv_event_type type)
{
	struct ibv_async_event ev;
	struct ibv_qp *qp = NULL;

	while (qp == NULL && ibv_get_async_event(c, &ev) == 0) {
		if (ev.event_type == type)
			qp = ev.element.qp;
		ibv_ack_async_event(&ev);
	}
	return qp;
}

/* ibv_open_qp: more handles on an XRC_RECV QP (the kernel's shared XRC target QPs). Refused:
 * a mask without NUM, XRCD or TYPE, a type other than XRC_RECV, another domain, a QPN of no
 * QP or of an RC QP (EINVAL), unknown mask bits (EOPNOTSUPP). A handle has the QP's number and
 * its own qp_context; ibv_modify_qp and ibv_query_qp through it act on the QP; posting through
 * it is EINVAL; ibv_close_xrcd of its domain handle EBUSY while it is open. The creator's
 * handle destroyed, the QP still receives (through the others); an event of the QP (LAST_WQE
 * on entering ERR) reaches every open handle, each on its context; the last handle takes the
 * QP with it (open: EINVAL). A second context: its handle closed by ibv_close_device, the QP
 * living on; a QP of that context closed with it, another context's handle left EINVAL. */
static void check_open_qp(void)
{
	char path[] = "/tmp/dpv_openqp_XXXXXX";
	int fd = mkstemp(path), tag0, tag1, tag2;
	struct ibv_context *ctx2 = ibv_open_device(ctx->device);
	struct ibv_xrcd_init_attr xa = { .comp_mask = IBV_XRCD_INIT_ATTR_FD |
						      IBV_XRCD_INIT_ATTR_OFLAGS, .fd = fd };
	struct ibv_xrcd *x = xrcd_open(fd, O_CREAT), *x_same = xrcd_open(fd, 0);
	struct ibv_xrcd *x_other = xrcd_open(-1, O_CREAT), *x2;
	struct ibv_cq *scq = ibv_create_cq(ctx, 16, NULL, NULL, 0);
	struct ibv_cq *rcq = ibv_create_cq(ctx, 16, NULL, NULL, 0);
	struct ibv_cq *cq2 = ctx2 ? ibv_create_cq(ctx2, 4, NULL, NULL, 0) : NULL;
	struct ibv_srq *s_in = x ? xrc_srq(x, rcq) : NULL;
	struct ibv_qp_init_attr_ex qa = { .qp_type = IBV_QPT_XRC_SEND, .send_cq = scq,
					  .cap = { .max_send_wr = 16, .max_send_sge = 1 },
					  .comp_mask = IBV_QP_INIT_ATTR_PD, .pd = pd };
	struct ibv_qp *ini = ibv_create_qp_ex(ctx, &qa), *tgt, *h1, *h2, *rc, *tgt2, *h;
	struct ibv_qp_init_attr qi;
	struct ibv_qp_attr at;
	struct ibv_wc wc[2];
	uint32_t n_in = 0, qpn;

	CHECK(fd >= 0 && ctx2 != NULL && x != NULL && x_same != NULL && x_other != NULL &&
	      s_in != NULL && ini != NULL && cq2 != NULL, "setup: %s", strerror(errno));
	rc_async_nonblock(ctx2);
	xa.oflags = 0;
	x2 = ibv_open_xrcd(ctx2, &xa);            /* the same domain through ctx2 */
	CHECK(x2 != NULL, "the domain through a second context: %s", strerror(errno));
	CHECK_EQ(ibv_get_srq_num(s_in, &n_in), 0);
	qa = (struct ibv_qp_init_attr_ex){ .qp_type = IBV_QPT_XRC_RECV, .qp_context = &tag0,
					   .comp_mask = IBV_QP_INIT_ATTR_XRCD, .xrcd = x };
	tgt = ibv_create_qp_ex(ctx, &qa);
	CHECK(tgt != NULL, "XRC_RECV: %s", strerror(errno));
	qpn = tgt->qp_num;
	discard_events(ctx);
	/* refusals */
	rc = qp_make(IBV_QPT_RC, scq, NULL);
	errno = 0;
	CHECK(open_qp(ctx, x, qpn, OPEN_MASK & ~IBV_QP_OPEN_ATTR_TYPE, IBV_QPT_XRC_RECV, NULL) ==
	      NULL && errno == EINVAL, "no TYPE: errno %d", errno);
	errno = 0;
	CHECK(open_qp(ctx, x, qpn, OPEN_MASK & ~IBV_QP_OPEN_ATTR_XRCD, IBV_QPT_XRC_RECV, NULL) ==
	      NULL && errno == EINVAL, "no XRCD: errno %d", errno);
	errno = 0;
	CHECK(open_qp(ctx, x, qpn, OPEN_MASK | IBV_QP_OPEN_ATTR_RESERVED, IBV_QPT_XRC_RECV,
		      NULL) == NULL && errno == EOPNOTSUPP, "unknown mask bit: errno %d", errno);
	errno = 0;
	CHECK(open_qp(ctx, x, qpn, OPEN_MASK, IBV_QPT_RC, NULL) == NULL && errno == EINVAL,
	      "type RC: errno %d", errno);
	errno = 0;
	CHECK(open_qp(ctx, x_other, qpn, OPEN_MASK, IBV_QPT_XRC_RECV, NULL) == NULL &&
	      errno == EINVAL, "another domain: errno %d", errno);
	errno = 0;
	CHECK(open_qp(ctx, x, rc->qp_num, OPEN_MASK, IBV_QPT_XRC_RECV, NULL) == NULL &&
	      errno == EINVAL, "an RC QP's number: errno %d", errno);
	errno = 0;
	CHECK(open_qp(ctx, x, 0xfffe, OPEN_MASK, IBV_QPT_XRC_RECV, NULL) == NULL &&
	      errno == EINVAL, "no such QP: errno %d", errno);
	CHECK_EQ(ibv_destroy_qp(rc), 0);
	/* two handles: one through another handle of the domain, one through ctx2 */
	h1 = open_qp(ctx, x_same, qpn, OPEN_MASK, IBV_QPT_XRC_RECV, &tag1);
	h2 = open_qp(ctx2, x2, qpn, OPEN_MASK, IBV_QPT_XRC_RECV, &tag2);
	CHECK(h1 != NULL && h2 != NULL && h1 != tgt && h2 != h1, "ibv_open_qp: %s",
	      strerror(errno));
	if (h1 == NULL || h2 == NULL)
		exit(1);
	CHECK(h1->qp_num == qpn && h1->qp_type == IBV_QPT_XRC_RECV && h1->qp_context == &tag1 &&
	      h1->context == ctx && h2->context == ctx2 && h2->qp_context == &tag2,
	      "the handles: qpn %#x type %d", h1->qp_num, h1->qp_type);
	CHECK_EQ(ibv_close_xrcd(x_same), EBUSY);
	xrc_connect(ini, h1);                       /* modified through a handle */
	CHECK_EQ(ibv_query_qp(tgt, &at, IBV_QP_STATE, &qi), 0);
	CHECK_EQ(at.qp_state, IBV_QPS_RTS);
	CHECK_EQ(ibv_query_qp(h2, &at, IBV_QP_STATE, &qi), 0);
	CHECK(at.qp_state == IBV_QPS_RTS && qi.qp_context == &tag2 &&
	      qi.qp_type == IBV_QPT_XRC_RECV, "query through ctx2's handle: state %d", at.qp_state);
	{
		struct ibv_sge sge = { (uintptr_t)buf, 64, mr->lkey };
		struct ibv_recv_wr rw = { .sg_list = &sge, .num_sge = 1 }, *rbad;

		CHECK_EQ(ibv_post_recv(h1, &rw, &rbad), EINVAL);
		CHECK_EQ(xrc_send(h1, n_in, 10, 1), EINVAL);
	}
	/* the creator's handle goes; the QP stays, and receives */
	CHECK_EQ(ibv_destroy_qp(tgt), 0);
	for (int i = 0; i < 2; i++)
		CHECK_EQ(srq_post(s_in, buf + RX + i * SLOT, SLOT, 700 + i), 0);
	pattern(buf + TX, 1500, 41);
	CHECK_EQ(xrc_send(ini, n_in, 1500, 1), 0);
	CHECK_EQ(test_poll(rcq, wc, 1), 1);
	CHECK(wc[0].status == IBV_WC_SUCCESS && wc[0].wr_id == 700 && wc[0].qp_num == qpn &&
	      wc[0].byte_len == 1500, "after the creator's destroy: %s wr_id %lu qp %#x",
	      ibv_wc_status_str(wc[0].status), (unsigned long)wc[0].wr_id, wc[0].qp_num);
	CHECK_EQ(test_poll(scq, wc, 1), 1);
	CHECK_EQ(wc[0].status, IBV_WC_SUCCESS);
	/* ERR through ctx2's handle: LAST_WQE_REACHED to both open handles, each on its context */
	at = (struct ibv_qp_attr){ .qp_state = IBV_QPS_ERR };
	CHECK_EQ(ibv_modify_qp(h2, &at, IBV_QP_STATE), 0);
	h = qp_event(ctx, IBV_EVENT_QP_LAST_WQE_REACHED);
	CHECK(h == h1, "LAST_WQE on ctx: handle %p (want h1 %p, not the closed %p)", (void *)h,
	      (void *)h1, (void *)tgt);
	CHECK(qp_event(ctx, IBV_EVENT_QP_LAST_WQE_REACHED) == NULL, "a second event on ctx");
	h = qp_event(ctx2, IBV_EVENT_QP_LAST_WQE_REACHED);
	CHECK(h == h2, "LAST_WQE on ctx2: handle %p (want h2 %p)", (void *)h, (void *)h2);
	/* h1 goes, the QP stays (h2): opened again, queried; h2 goes last and takes it */
	CHECK_EQ(ibv_destroy_qp(h1), 0);
	CHECK_EQ(ibv_close_xrcd(x_same), 0);
	h = open_qp(ctx, x, qpn, OPEN_MASK, IBV_QPT_XRC_RECV, NULL);
	CHECK(h != NULL, "opened again while h2 holds it: %s", strerror(errno));
	CHECK_EQ(ibv_query_qp(h2, &at, IBV_QP_STATE, &qi), 0);
	CHECK_EQ(at.qp_state, IBV_QPS_ERR);
	if (h != NULL)
		CHECK_EQ(ibv_destroy_qp(h), 0);
	CHECK_EQ(ibv_destroy_qp(h2), 0);
	errno = 0;
	CHECK(open_qp(ctx, x, qpn, OPEN_MASK, IBV_QPT_XRC_RECV, NULL) == NULL && errno == EINVAL,
	      "gone with its last handle: errno %d", errno);
	/* ctx2 closed: its handle on ctx's QP goes (the QP stays); ctx2's QP goes with it and
	 * ctx's handle on it answers EINVAL until destroyed */
	qa = (struct ibv_qp_init_attr_ex){ .qp_type = IBV_QPT_XRC_RECV,
					   .comp_mask = IBV_QP_INIT_ATTR_XRCD, .xrcd = x };
	tgt2 = ibv_create_qp_ex(ctx, &qa);
	qa.xrcd = x2;
	tgt = ibv_create_qp_ex(ctx2, &qa);
	CHECK(tgt2 != NULL && tgt != NULL, "XRC_RECV QPs: %s", strerror(errno));
	h2 = open_qp(ctx2, x2, tgt2->qp_num, OPEN_MASK, IBV_QPT_XRC_RECV, NULL);
	h1 = open_qp(ctx, x, tgt->qp_num, OPEN_MASK, IBV_QPT_XRC_RECV, NULL);
	CHECK(h1 != NULL && h2 != NULL, "handles across contexts: %s", strerror(errno));
	CHECK_EQ(ibv_destroy_cq(cq2), 0);
	CHECK_EQ(ibv_close_device(ctx2), 0);        /* h2, x2, tgt left to it */
	CHECK_EQ(ibv_query_qp(tgt2, &at, IBV_QP_STATE, &qi), 0);
	if (h1 != NULL) {
		CHECK_EQ(ibv_query_qp(h1, &at, IBV_QP_STATE, &qi), EINVAL);
		CHECK_EQ(ibv_destroy_qp(h1), 0);
	}
	CHECK_EQ(ibv_destroy_qp(tgt2), 0);
	CHECK_EQ(ibv_destroy_qp(ini), 0);
	CHECK_EQ(ibv_destroy_srq(s_in), 0);
	CHECK_EQ(ibv_close_xrcd(x), 0);
	CHECK_EQ(ibv_close_xrcd(x_other), 0);
	CHECK_EQ(ibv_destroy_cq(scq), 0);
	CHECK_EQ(ibv_destroy_cq(rcq), 0);
	close(fd);
	unlink(path);
}

int main(void)
{
	ctx = rc_port_open("10.1.0.1", &gid4);
	rc_async_nonblock(ctx);
	pd = ibv_alloc_pd(ctx);
	buf = aligned_alloc(4096, BUF_LEN);
	mr = pd ? ibv_reg_mr(pd, buf, BUF_LEN, IBV_ACCESS_LOCAL_WRITE |
			     IBV_ACCESS_REMOTE_WRITE) : NULL;
	if (pd == NULL || mr == NULL) {
		fprintf(stderr, "setup: %s\n", strerror(errno));
		return 1;
	}
	check_objects();
	check_post();
	check_connected(IBV_QPT_RC);
	check_connected(IBV_QPT_UC);
	check_ud();
	check_error_isolation();
	check_rnr();
	check_srq_inv();
	check_raw();
	check_xrc();
	check_open_qp();
	CHECK_EQ(ibv_dereg_mr(mr), 0);
	CHECK_EQ(ibv_dealloc_pd(pd), 0);
	CHECK_EQ(ibv_close_device(ctx), 0);
	free(buf);
	return test_done("srq");
}
