/* SPDX-License-Identifier: BSD-3-Clause */
/* Passive progress through a port's RoCE loopback (net_ring, no configured address: GID
 * index 0): the main thread arms a CQ with a completion channel and waits in epoll_wait on
 * the channel's fd, calling nothing of dpverbs while it waits; another thread, which never
 * polls anything, posts an RC SEND (then a UD SEND) to it from a second QP of the same port.
 * Frames a port sends itself raise no interrupt: the progress thread is kicked by the
 * loopback and delivers them. Woken WAKES times in a row for each, each completion holding
 * the SEND's bytes; the latencies (post to wake) are printed. */
#include <pthread.h>
#include <sys/epoll.h>

#include "dpv_test_rc.h"

#define WAKES 100
#define MSG 64
#define QKEY 0x22222222u

static struct ibv_qp *rc_b, *ud_b;
static struct ibv_ah *ah;
static struct ibv_mr *mr;
static uint8_t *sbuf;
static uint32_t ud_a_qpn;
static int go[2], posted[2];          /* pipes: main -> sender, sender -> main */

static struct ibv_qp *qp_make(struct ibv_pd *pd, struct ibv_cq *scq, struct ibv_cq *rcq,
			      enum ibv_qp_type t)
{
	struct ibv_qp_init_attr init = {
		.send_cq = scq, .recv_cq = rcq, .qp_type = t,
		.cap = { .max_send_wr = 256, .max_recv_wr = 128, .max_send_sge = 1,
			 .max_recv_sge = 1 },
	};
	struct ibv_qp *qp = ibv_create_qp(pd, &init);

	if (qp == NULL) {
		perror("ibv_create_qp");
		exit(1);
	}
	return qp;
}

/* @qp to RTS towards QP @dqpn of GID @gid through GID index 0. */
static void rc_up(struct ibv_qp *qp, const union ibv_gid *gid, uint32_t dqpn)
{
	struct ibv_qp_attr rtr = {
		.qp_state = IBV_QPS_RTR, .path_mtu = IBV_MTU_1024, .dest_qp_num = dqpn,
		.rq_psn = 1, .max_dest_rd_atomic = 1, .min_rnr_timer = 12,
		.ah_attr = { .is_global = 1, .port_num = 1,
			     .grh = { .dgid = *gid, .sgid_index = 0, .hop_limit = 64 } },
	};
	struct ibv_qp_attr rts = { .qp_state = IBV_QPS_RTS, .sq_psn = 1, .timeout = 14,
				   .retry_cnt = 7, .rnr_retry = 7, .max_rd_atomic = 1 };

	if (rc_to_init(qp, IBV_ACCESS_LOCAL_WRITE) != 0 ||
	    ibv_modify_qp(qp, &rtr, IBV_QP_STATE | IBV_QP_AV | IBV_QP_PATH_MTU |
			  IBV_QP_DEST_QPN | IBV_QP_RQ_PSN | IBV_QP_MAX_DEST_RD_ATOMIC |
			  IBV_QP_MIN_RNR_TIMER) != 0 ||
	    ibv_modify_qp(qp, &rts, IBV_QP_STATE | IBV_QP_SQ_PSN | IBV_QP_TIMEOUT |
			  IBV_QP_RETRY_CNT | IBV_QP_RNR_RETRY | IBV_QP_MAX_QP_RD_ATOMIC) != 0) {
		perror("RC QP to RTS");
		exit(1);
	}
}

static struct ibv_qp *ud_up(struct ibv_pd *pd, struct ibv_cq *scq, struct ibv_cq *rcq)
{
	struct ibv_qp *qp = qp_make(pd, scq, rcq, IBV_QPT_UD);

	if (ud_to_init(qp, QKEY) || ud_to_state(qp, IBV_QPS_RTR, 0, 0) ||
	    ud_to_state(qp, IBV_QPS_RTS, IBV_QP_SQ_PSN, 1)) {
		perror("UD QP to RTS");
		exit(1);
	}
	return qp;
}

/* The sender: never polls a CQ. For each byte on @go (1: RC, 2: UD), one SEND, then its
 * post time on @posted. */
static void *sender(void *arg)
{
	uint8_t kind;

	(void)arg;
	for (uint32_t i = 0; read(go[0], &kind, 1) == 1 && kind != 0; i++) {
		struct ibv_sge s = { (uintptr_t)sbuf, MSG, mr->lkey };
		struct ibv_send_wr w = { .wr_id = i, .sg_list = &s, .num_sge = 1,
					 .opcode = IBV_WR_SEND }, *bad;
		double t;

		pattern(sbuf, MSG, (uint8_t)(kind * 50 + i % WAKES));
		if (kind == 2) {
			w.wr.ud.ah = ah;
			w.wr.ud.remote_qpn = ud_a_qpn;
			w.wr.ud.remote_qkey = QKEY;
		}
		t = test_now();
		if (ibv_post_send(kind == 1 ? rc_b : ud_b, &w, &bad) != 0)
			t = -1;
		if (write(posted[1], &t, sizeof(t)) != sizeof(t))
			break;
	}
	return NULL;
}

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return x < y ? -1 : x > y;
}

static void wakes(uint8_t kind, struct ibv_comp_channel *ch, struct ibv_cq *cq,
		  const uint8_t *rbuf)
{
	struct epoll_event ev = { .events = EPOLLIN };
	int ep = epoll_create1(0), woken = 0, late = 0;
	uint32_t grh = kind == 2 ? 40 : 0;
	double lat[WAKES];

	CHECK_EQ(epoll_ctl(ep, EPOLL_CTL_ADD, ch->fd, &ev), 0);
	for (uint32_t i = 0; i < WAKES; i++) {
		struct ibv_cq *got;
		struct ibv_wc wc;
		uint8_t want[MSG];
		void *cctx;
		double t, tp = -1;
		int n;

		CHECK_EQ(ibv_req_notify_cq(cq, 0), 0);
		CHECK_EQ(write(go[1], &kind, 1), 1);
		n = epoll_wait(ep, &ev, 1, 2000);    /* no dpverbs call while waiting */
		t = test_now();
		CHECK_EQ(read(posted[0], &tp, sizeof(tp)), sizeof(tp));
		CHECK(tp >= 0, "the sender's post %u failed", i);
		CHECK(n == 1, "%s SEND %u: not woken within 2 s", kind == 1 ? "RC" : "UD", i);
		woken += n == 1;
		lat[i] = n == 1 ? t - tp : 2;
		late += lat[i] > 0.1;
		CHECK_EQ(ibv_get_cq_event(ch, &got, &cctx), 0);
		CHECK(got == cq, "the event names another CQ");
		ibv_ack_cq_events(cq, 1);
		n = test_poll(cq, &wc, 1);
		CHECK_EQ(n, 1);
		if (n != 1)
			continue;
		CHECK(wc.status == IBV_WC_SUCCESS && wc.opcode == IBV_WC_RECV &&
		      wc.byte_len == grh + MSG, "completion %u: %s opcode %d len %u", i,
		      ibv_wc_status_str(wc.status), wc.opcode, wc.byte_len);
		pattern(want, MSG, (uint8_t)(kind * 50 + i));
		CHECK(memcmp(rbuf + wc.wr_id * 256 + grh, want, MSG) == 0,
		      "message %u: other bytes", i);
	}
	qsort(lat, WAKES, sizeof(lat[0]), cmp_double);
	printf("%s SEND through the loopback: woken %d of %d; post to wake median %.1f us, "
	       "max %.1f us, %d above 100 ms\n", kind == 1 ? "RC" : "UD", woken, WAKES,
	       lat[WAKES / 2] * 1e6, lat[WAKES - 1] * 1e6, late);
	close(ep);
}

int main(void)
{
	struct ibv_context *ctx = test_open(NULL);
	struct ibv_pd *pd = ibv_alloc_pd(ctx);
	struct ibv_comp_channel *ch = ibv_create_comp_channel(ctx);
	struct ibv_cq *cq = ibv_create_cq(ctx, 512, NULL, ch, 0);
	struct ibv_cq *scq = ibv_create_cq(ctx, 512, NULL, NULL, 0);
	size_t len = (2 * WAKES + 1) * 256;
	uint8_t *buf = calloc(1, len), stop = 0;
	struct ibv_qp *rc_a, *ud_a;
	union ibv_gid gid;
	pthread_t th;

	setvbuf(stdout, NULL, _IOLBF, 0);
	mr = pd && buf ? ibv_reg_mr(pd, buf, len, IBV_ACCESS_LOCAL_WRITE) : NULL;
	if (ch == NULL || cq == NULL || scq == NULL || mr == NULL ||
	    ibv_query_gid(ctx, 1, 0, &gid) != 0 || pipe(go) != 0 || pipe(posted) != 0) {
		perror("set-up");
		return 1;
	}
	sbuf = buf + 2 * WAKES * 256;
	rc_a = qp_make(pd, scq, cq, IBV_QPT_RC);
	rc_b = qp_make(pd, scq, scq, IBV_QPT_RC);
	rc_up(rc_a, &gid, rc_b->qp_num);
	rc_up(rc_b, &gid, rc_a->qp_num);
	ud_a = ud_up(pd, scq, cq);
	ud_b = ud_up(pd, scq, scq);
	ud_a_qpn = ud_a->qp_num;
	ah = ud_ah(pd, 0, &gid, 0, 0, 64);
	CHECK(ah != NULL, "an address handle to the port's own GID 0");
	for (uint32_t i = 0; i < WAKES; i++) {
		struct ibv_sge s = { (uintptr_t)(buf + i * 256), 256, mr->lkey };
		struct ibv_sge u = { (uintptr_t)(buf + (WAKES + i) * 256), 256, mr->lkey };
		struct ibv_recv_wr r = { .wr_id = i, .sg_list = &s, .num_sge = 1 }, *bad;
		struct ibv_recv_wr v = { .wr_id = WAKES + i, .sg_list = &u, .num_sge = 1 };

		CHECK_EQ(ibv_post_recv(rc_a, &r, &bad), 0);
		CHECK_EQ(ibv_post_recv(ud_a, &v, &bad), 0);
	}
	if (pthread_create(&th, NULL, sender, NULL) != 0)
		return 1;
	wakes(1, ch, cq, buf);
	wakes(2, ch, cq, buf);
	CHECK_EQ(write(go[1], &stop, 1), 1);
	pthread_join(th, NULL);
	CHECK_EQ(ibv_destroy_ah(ah), 0);
	CHECK_EQ(ibv_destroy_qp(rc_a), 0);
	CHECK_EQ(ibv_destroy_qp(rc_b), 0);
	CHECK_EQ(ibv_destroy_qp(ud_a), 0);
	CHECK_EQ(ibv_destroy_qp(ud_b), 0);
	CHECK_EQ(ibv_destroy_cq(cq), 0);
	CHECK_EQ(ibv_destroy_cq(scq), 0);
	CHECK_EQ(ibv_destroy_comp_channel(ch), 0);
	CHECK_EQ(ibv_dereg_mr(mr), 0);
	free(buf);
	return test_finish(ctx, pd, "wake_loop");
}
