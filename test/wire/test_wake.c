/* SPDX-License-Identifier: BSD-3-Clause */
/* Passive progress between two processes, each with net_af_packet on one end of a veth pair,
 * on ports WITHOUT configured addresses (GID index 0, the link-local GID from the MAC):
 *  - wake: A arms a CQ with a completion channel and waits in epoll_wait on the channel's fd,
 *    calling nothing of dpverbs while it waits; B sends it an RC SEND, then a UD SEND. A is
 *    woken (the library's progress thread received the frame and completed the WR), WAKES
 *    times in a row for each, and finds the message's bytes in its CQ. Wake latency (from
 *    B's post to A's epoll return; one clock, CLOCK_MONOTONIC) is printed: median, maximum,
 *    how many took more than 100 ms;
 *  - write: A never polls (it sleeps in poll() on the socket to B); B's RDMA WRITEs to A's
 *    MR with perftest's default ACK timeout (14, 7 retries) all complete successfully and
 *    A's memory holds their bytes;
 *  - idle: the CPU time each process uses over IDLE_S seconds with its port open and its
 *    QPs connected, doing nothing (getrusage, every thread): printed, and at most 2 %.
 * Run by run_wake_veth.sh (the veth pair). */
#include <poll.h>
#include <sys/epoll.h>
#include <sys/resource.h>

#include "dpv_test_fork.h"
#include "dpv_test_rc.h"

#define WAKES 100
#define MSG 64
#define WRITES 64
#define WRITE_LEN 4096
#define IDLE_S 10
#define QKEY 0x11111111u

struct info {
	union ibv_gid gid;
	uint32_t rc_qpn, ud_qpn, wr_qpn, rkey;
	uint64_t addr;
};

enum { GO_RC = 1, GO_UD, POSTED, WRITE_GO, WRITE_DONE, IDLE_GO, IDLE_DONE };

struct msg {
	uint32_t kind, i;
	double t;
};

static int sock;
static bool is_a;

static void say(uint32_t kind, uint32_t i, double t)
{
	struct msg m = { .kind = kind, .i = i, .t = t };

	test_fork_send(sock, &m, sizeof(m));
}

/* The other side's next message, waiting in poll() (no dpverbs call, no spinning). */
static struct msg hear(uint32_t kind)
{
	struct pollfd p = { .fd = sock, .events = POLLIN };
	struct msg m;
	size_t got = 0;

	while (got < sizeof(m)) {
		ssize_t n;

		if (poll(&p, 1, 60000) != 1) {
			fprintf(stderr, "%s: the peer is gone\n", is_a ? "A" : "B");
			exit(1);
		}
		n = read(sock, (char *)&m + got, sizeof(m) - got);
		if (n <= 0) {
			fprintf(stderr, "%s: the peer is gone\n", is_a ? "A" : "B");
			exit(1);
		}
		got += (size_t)n;
	}
	if (m.kind != kind) {
		fprintf(stderr, "%s: message %u, expected %u\n", is_a ? "A" : "B", m.kind, kind);
		exit(1);
	}
	return m;
}

static struct ibv_qp *rc_qp(struct ibv_pd *pd, struct ibv_cq *scq, struct ibv_cq *rcq)
{
	struct ibv_qp_init_attr init = {
		.send_cq = scq, .recv_cq = rcq, .qp_type = IBV_QPT_RC,
		.cap = { .max_send_wr = 128, .max_recv_wr = 128, .max_send_sge = 1,
			 .max_recv_sge = 1 },
	};
	struct ibv_qp *qp = ibv_create_qp(pd, &init);

	if (qp == NULL) {
		perror("ibv_create_qp(RC)");
		exit(1);
	}
	return qp;
}

/* @qp to RTS towards @peer's QP @dqpn through GID index 0 (link-local), perftest's default
 * ACK timeout. */
static void rc_up(struct ibv_qp *qp, const union ibv_gid *peer, uint32_t dqpn)
{
	struct ibv_qp_attr rtr = {
		.qp_state = IBV_QPS_RTR, .path_mtu = IBV_MTU_1024, .dest_qp_num = dqpn,
		.rq_psn = 1, .max_dest_rd_atomic = 4, .min_rnr_timer = 12,
		.ah_attr = { .is_global = 1, .port_num = 1,
			     .grh = { .dgid = *peer, .sgid_index = 0, .hop_limit = 64 } },
	};
	struct ibv_qp_attr rts = { .qp_state = IBV_QPS_RTS, .sq_psn = 1, .timeout = 14,
				   .retry_cnt = 7, .rnr_retry = 7, .max_rd_atomic = 4 };

	if (rc_to_init(qp, IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE) != 0 ||
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
	struct ibv_qp_init_attr init = {
		.send_cq = scq, .recv_cq = rcq, .qp_type = IBV_QPT_UD, .sq_sig_all = 1,
		.cap = { .max_send_wr = 128, .max_recv_wr = 128, .max_send_sge = 1,
			 .max_recv_sge = 1 },
	};
	struct ibv_qp *qp = ibv_create_qp(pd, &init);

	if (qp == NULL || ud_to_init(qp, QKEY) || ud_to_state(qp, IBV_QPS_RTR, 0, 0) ||
	    ud_to_state(qp, IBV_QPS_RTS, IBV_QP_SQ_PSN, 1)) {
		perror("UD QP to RTS");
		exit(1);
	}
	return qp;
}

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return x < y ? -1 : x > y;
}

/* CPU time of the whole process (every thread) over IDLE_S seconds of sleep, checked. */
static void idle_cpu(void)
{
	struct rusage r0, r1;
	double cpu;

	getrusage(RUSAGE_SELF, &r0);
	sleep(IDLE_S);
	getrusage(RUSAGE_SELF, &r1);
	cpu = (double)(r1.ru_utime.tv_sec - r0.ru_utime.tv_sec) +
	      (double)(r1.ru_utime.tv_usec - r0.ru_utime.tv_usec) * 1e-6 +
	      (double)(r1.ru_stime.tv_sec - r0.ru_stime.tv_sec) +
	      (double)(r1.ru_stime.tv_usec - r0.ru_stime.tv_usec) * 1e-6;
	printf("%s: idle with an open port: %.1f ms of CPU in %d s (%.3f %% of a core)\n",
	       is_a ? "A" : "B", cpu * 1e3, IDLE_S, cpu * 100 / IDLE_S);
	CHECK(cpu <= 0.02 * IDLE_S, "%s used %.1f ms of CPU idle", is_a ? "A" : "B", cpu * 1e3);
}

/* A: WAKES wakes of kind @kind on @cq through @ch, each checked; the latencies printed. */
static void wait_wakes(uint32_t kind, struct ibv_comp_channel *ch, struct ibv_cq *cq,
		       const uint8_t *bufs, uint32_t stride)
{
	double lat[WAKES];
	int ep = epoll_create1(0), late = 0, woken = 0;
	struct epoll_event ev = { .events = EPOLLIN };

	CHECK_EQ(epoll_ctl(ep, EPOLL_CTL_ADD, ch->fd, &ev), 0);
	for (uint32_t i = 0; i < WAKES; i++) {
		uint32_t grh = kind == GO_UD ? 40 : 0;
		uint8_t want[MSG];
		struct ibv_cq *got_cq;
		struct ibv_wc wc;
		void *cq_ctx;
		double t;
		struct msg posted;
		int n;

		CHECK_EQ(ibv_req_notify_cq(cq, 0), 0);
		say(kind, i, 0);
		/* no dpverbs call until the channel's fd says so (2 s: woken at all) */
		n = epoll_wait(ep, &ev, 1, 2000);
		t = test_now();
		posted = hear(POSTED);
		lat[i] = t - posted.t;
		if (n != 1) {
			CHECK(0, "%s SEND %u: not woken within 2 s", kind == GO_RC ? "RC" : "UD", i);
			lat[i] = 2;
		}
		woken += n == 1;
		late += lat[i] > 0.1;
		CHECK_EQ(ibv_get_cq_event(ch, &got_cq, &cq_ctx), 0);
		CHECK(got_cq == cq, "the event names another CQ");
		ibv_ack_cq_events(cq, 1);
		n = test_poll(cq, &wc, 1);
		CHECK_EQ(n, 1);
		if (n != 1)
			continue;
		CHECK(wc.status == IBV_WC_SUCCESS && wc.opcode == IBV_WC_RECV &&
		      wc.byte_len == grh + MSG, "completion %u: %s opcode %d len %u", i,
		      ibv_wc_status_str(wc.status), wc.opcode, wc.byte_len);
		pattern(want, MSG, (uint8_t)(kind * 50 + i));
		CHECK(memcmp(bufs + wc.wr_id * stride + grh, want, MSG) == 0,
		      "message %u: other bytes", i);
	}
	qsort(lat, WAKES, sizeof(lat[0]), cmp_double);
	printf("A: %s SEND wakes %d of %d; post to wake: median %.1f us, max %.1f us, "
	       "%d above 100 ms\n", kind == GO_RC ? "RC" : "UD", woken, WAKES,
	       lat[WAKES / 2] * 1e6, lat[WAKES - 1] * 1e6, late);
	close(ep);
}

int main(void)
{
	struct ibv_context *ctx;
	struct info me = { 0 }, peer;
	struct ibv_pd *pd;
	struct ibv_mr *mr;
	struct ibv_comp_channel *ch = NULL;
	struct ibv_cq *cq, *scq;
	struct ibv_qp *rc, *ud, *wr;
	uint8_t *buf;
	const size_t len = (size_t)WRITES * WRITE_LEN + 2 * WAKES * 256;
	uint8_t *rbuf;

	setvbuf(stdout, NULL, _IOLBF, 0);
	is_a = test_fork_pair("DPV_WAKE_IFACE_A", "DPV_WAKE_IFACE_B", &sock, &ctx);
	pd = ibv_alloc_pd(ctx);
	buf = calloc(1, len);
	mr = pd && buf ? ibv_reg_mr(pd, buf, len, IBV_ACCESS_LOCAL_WRITE |
				    IBV_ACCESS_REMOTE_WRITE) : NULL;
	if (is_a)
		ch = ibv_create_comp_channel(ctx);
	cq = ibv_create_cq(ctx, 512, NULL, ch, 0);
	scq = ibv_create_cq(ctx, 512, NULL, NULL, 0);
	if (mr == NULL || cq == NULL || scq == NULL || (is_a && ch == NULL) ||
	    ibv_query_gid(ctx, 1, 0, &me.gid) != 0) {
		fprintf(stderr, "%s: set-up failed: %s\n", is_a ? "A" : "B", strerror(errno));
		return 1;
	}
	rc = rc_qp(pd, scq, cq);
	wr = rc_qp(pd, scq, scq);
	ud = ud_up(pd, scq, cq);
	me.rc_qpn = rc->qp_num;
	me.ud_qpn = ud->qp_num;
	me.wr_qpn = wr->qp_num;
	me.rkey = mr->rkey;
	me.addr = (uintptr_t)buf;
	test_fork_send(sock, &me, sizeof(me));
	test_fork_recv(sock, &peer, sizeof(peer), is_a ? "A" : "B", NULL);
	rc_up(rc, &peer.gid, peer.rc_qpn);
	rc_up(wr, &peer.gid, peer.wr_qpn);
	/* receive buffers after the WRITE target's bytes: RC's, then UD's */
	rbuf = buf + (size_t)WRITES * WRITE_LEN;
	if (is_a) {
		for (uint32_t i = 0; i < WAKES; i++) {
			struct ibv_sge s = { (uintptr_t)(rbuf + i * 256), 256, mr->lkey };
			struct ibv_sge u = { (uintptr_t)(rbuf + (WAKES + i) * 256), 256, mr->lkey };
			struct ibv_recv_wr r = { .wr_id = i, .sg_list = &s, .num_sge = 1 }, *bad;
			struct ibv_recv_wr v = { .wr_id = WAKES + i, .sg_list = &u, .num_sge = 1 };

			CHECK_EQ(ibv_post_recv(rc, &r, &bad), 0);
			CHECK_EQ(ibv_post_recv(ud, &v, &bad), 0);
		}
		say(GO_RC, UINT32_MAX, 0);          /* receive WRs posted */
		wait_wakes(GO_RC, ch, cq, rbuf, 256);
		wait_wakes(GO_UD, ch, cq, rbuf, 256);
		/* the WRITE target: nothing of dpverbs from here to WRITE_DONE */
		say(WRITE_GO, 0, 0);
		hear(WRITE_DONE);
		for (uint32_t k = 0; k < WRITES; k++) {
			uint8_t want[WRITE_LEN];

			pattern(want, WRITE_LEN, (uint8_t)(k * 3 + 1));
			CHECK(memcmp(buf + (size_t)k * WRITE_LEN, want, WRITE_LEN) == 0,
			      "WRITE %u: A's memory holds other bytes", k);
		}
		say(IDLE_GO, 0, 0);
		idle_cpu();
		hear(IDLE_DONE);
	} else {
		struct ibv_ah *ah = ud_ah(pd, 0, &peer.gid, 0, 0, 64);
		struct ibv_wc wc;

		CHECK(ah != NULL, "UD address handle to A's GID 0");
		hear(GO_RC);
		for (uint32_t kind = GO_RC; kind <= GO_UD; kind++)
			for (uint32_t i = 0; i < WAKES; i++) {
				struct ibv_sge s = { (uintptr_t)rbuf, MSG, mr->lkey };
				struct ibv_send_wr w = {
					.wr_id = i, .sg_list = &s, .num_sge = 1,
					.opcode = IBV_WR_SEND, .send_flags = IBV_SEND_SIGNALED,
				}, *bad;
				struct msg m = hear(kind);
				double t;

				CHECK_EQ(m.i, i);
				pattern(rbuf, MSG, (uint8_t)(kind * 50 + i));
				if (kind == GO_UD) {
					w.wr.ud.ah = ah;
					w.wr.ud.remote_qpn = peer.ud_qpn;
					w.wr.ud.remote_qkey = QKEY;
				}
				t = test_now();
				CHECK_EQ(ibv_post_send(kind == GO_RC ? rc : ud, &w, &bad), 0);
				say(POSTED, i, t);
				CHECK(test_poll(scq, &wc, 1) == 1 && wc.status == IBV_WC_SUCCESS,
				      "B's SEND %u: %s", i, ibv_wc_status_str(wc.status));
			}
		hear(WRITE_GO);
		for (uint32_t k = 0; k < WRITES; k++) {
			uint8_t *src = rbuf + (size_t)(k % 2) * WRITE_LEN;
			struct ibv_sge s = { (uintptr_t)src, WRITE_LEN, mr->lkey };
			struct ibv_send_wr w = {
				.wr_id = k, .sg_list = &s, .num_sge = 1,
				.opcode = IBV_WR_RDMA_WRITE, .send_flags = IBV_SEND_SIGNALED,
				.wr.rdma = { peer.addr + (uint64_t)k * WRITE_LEN, peer.rkey },
			}, *bad;

			pattern(src, WRITE_LEN, (uint8_t)(k * 3 + 1));
			CHECK_EQ(ibv_post_send(wr, &w, &bad), 0);
			/* one at a time: each source buffer is rewritten only once completed */
			CHECK(test_poll_for(scq, &wc, 1, 20) == 1 && wc.status == IBV_WC_SUCCESS &&
			      wc.wr_id == k, "WRITE %u to a target that never polls: %s", k,
			      ibv_wc_status_str(wc.status));
		}
		say(WRITE_DONE, 0, 0);
		hear(IDLE_GO);
		idle_cpu();
		say(IDLE_DONE, 0, 0);
		CHECK_EQ(ibv_destroy_ah(ah), 0);
	}
	CHECK_EQ(ibv_destroy_qp(rc), 0);
	CHECK_EQ(ibv_destroy_qp(wr), 0);
	CHECK_EQ(ibv_destroy_qp(ud), 0);
	CHECK_EQ(ibv_destroy_cq(cq), 0);
	CHECK_EQ(ibv_destroy_cq(scq), 0);
	if (ch != NULL)
		CHECK_EQ(ibv_destroy_comp_channel(ch), 0);
	CHECK_EQ(ibv_dereg_mr(mr), 0);
	free(buf);
	CHECK_EQ(ibv_dealloc_pd(pd), 0);
	CHECK_EQ(ibv_close_device(ctx), 0);
	return test_fork_done(is_a, "wake");
}
