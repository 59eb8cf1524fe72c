/* SPDX-License-Identifier: BSD-3-Clause */
/* Send completions: one per signaled WR in post order, SQ slots coming back only when a
 * signaled completion is polled, completion channels firing for send CQs, and a CQ overrun
 * reported as IBV_EVENT_CQ_ERR instead of being lost silently. */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <pthread.h>
#include <time.h>
#include <unistd.h>

#include "dpv_test.h"

static uint8_t frame[128];

static int post(struct ibv_qp *qp, struct ibv_mr *mr, uint64_t id, unsigned int flags)
{
	struct ibv_sge sge = { (uintptr_t)frame, sizeof(frame), mr->lkey };
	struct ibv_send_wr wr = { .wr_id = id, .sg_list = &sge, .num_sge = 1,
				  .opcode = IBV_WR_SEND, .send_flags = flags }, *bad;

	return ibv_post_send(qp, &wr, &bad);
}

static void check_order_and_slots(struct ibv_pd *pd, struct ibv_mr *mr)
{
	struct ibv_cq *cq = ibv_create_cq(pd->context, 64, NULL, NULL, 0);
	struct ibv_qp *qp = test_raw_qp(pd, cq, (struct ibv_qp_cap){ .max_send_wr = 8,
								  .max_send_sge = 1 });
	struct ibv_wc wc[16];
	int n;

	/* 8 slots: the 9th post fails until a signaled completion is polled */
	for (int i = 0; i < 8; i++)
		CHECK_EQ(post(qp, mr, 100 + i, i % 4 == 3 ? IBV_SEND_SIGNALED : 0), 0);
	CHECK_EQ(post(qp, mr, 200, IBV_SEND_SIGNALED), ENOMEM);
	n = test_poll(cq, wc, 2);
	CHECK_EQ(n, 2);
	CHECK(wc[0].wr_id == 103 && wc[1].wr_id == 107, "order: %llu %llu",
	      (unsigned long long)wc[0].wr_id, (unsigned long long)wc[1].wr_id);
	CHECK(wc[0].status == IBV_WC_SUCCESS && wc[0].opcode == IBV_WC_SEND &&
	      wc[0].byte_len == sizeof(frame) && wc[0].qp_num == qp->qp_num);
	for (int i = 0; i < 8; i++)                       /* all 8 slots are free again */
		CHECK_EQ(post(qp, mr, 300 + i, 0), 0);
	CHECK_EQ(post(qp, mr, 400, IBV_SEND_SIGNALED), ENOMEM);
	CHECK_EQ(ibv_poll_cq(cq, 16, wc), 0);             /* unsignaled: no completion */
	CHECK_EQ(ibv_destroy_qp(qp), 0);
	CHECK_EQ(ibv_destroy_cq(cq), 0);
}

static void check_channel(struct ibv_pd *pd, struct ibv_mr *mr)
{
	struct ibv_comp_channel *ch = ibv_create_comp_channel(pd->context);
	struct ibv_cq *cq = ibv_create_cq(pd->context, 16, (void *)0xc0ffee, ch, 0), *ev_cq = NULL;
	struct ibv_qp *qp = test_raw_qp(pd, cq, (struct ibv_qp_cap){ .max_send_wr = 8,
								  .max_send_sge = 1 });
	struct pollfd pfd = { .fd = ch->fd, .events = POLLIN };
	void *ev_ctx = NULL;
	struct ibv_wc wc;

	CHECK_EQ(ibv_req_notify_cq(cq, 0), 0);
	CHECK_EQ(poll(&pfd, 1, 0), 0);                    /* nothing yet */
	CHECK_EQ(post(qp, mr, 1, IBV_SEND_SIGNALED), 0);
	CHECK_EQ(poll(&pfd, 1, 2000), 1);
	CHECK_EQ(ibv_get_cq_event(ch, &ev_cq, &ev_ctx), 0);
	CHECK(ev_cq == cq && ev_ctx == (void *)0xc0ffee);
	ibv_ack_cq_events(cq, 1);
	CHECK_EQ(cq->comp_events_completed, 1);
	CHECK_EQ(test_poll(cq, &wc, 1), 1);
	/* not re-armed: the next completion does not fire */
	CHECK_EQ(post(qp, mr, 2, IBV_SEND_SIGNALED), 0);
	CHECK_EQ(test_poll(cq, &wc, 1), 1);
	CHECK_EQ(poll(&pfd, 1, 0), 0);
	CHECK_EQ(ibv_destroy_qp(qp), 0);
	CHECK_EQ(ibv_destroy_cq(cq), 0);
	CHECK_EQ(ibv_destroy_comp_channel(ch), 0);
}

/* An event whose completions were polled before it was read is stale: ibv_get_cq_event does
 * not return it (rc_pingpong -t -e fails on an event with nothing to poll), the CQ is armed
 * again, and the next completion fires it. */
static void check_stale_event(struct ibv_pd *pd, struct ibv_mr *mr)
{
	struct ibv_comp_channel *ch = ibv_create_comp_channel(pd->context);
	struct ibv_cq *cq = ibv_create_cq(pd->context, 16, NULL, ch, 0), *ev_cq = NULL;
	struct ibv_qp *qp = test_raw_qp(pd, cq, (struct ibv_qp_cap){ .max_send_wr = 8,
								  .max_send_sge = 1 });
	struct pollfd pfd = { .fd = ch->fd, .events = POLLIN };
	void *ev_ctx = NULL;
	struct ibv_wc wc;

	CHECK_EQ(fcntl(ch->fd, F_SETFL, fcntl(ch->fd, F_GETFL) | O_NONBLOCK), 0);
	CHECK_EQ(ibv_req_notify_cq(cq, 0), 0);
	CHECK_EQ(post(qp, mr, 1, IBV_SEND_SIGNALED), 0);
	CHECK_EQ(test_poll(cq, &wc, 1), 1);               /* fires, and is polled at once */
	CHECK(wc.wr_id == 1);
	CHECK_EQ(poll(&pfd, 1, 0), 1);                    /* the event is there ... */
	errno = 0;
	CHECK_EQ(ibv_get_cq_event(ch, &ev_cq, &ev_ctx), -1);   /* ... but stale */
	CHECK_EQ(errno, EAGAIN);
	CHECK_EQ(poll(&pfd, 1, 0), 0);
	CHECK_EQ(post(qp, mr, 2, IBV_SEND_SIGNALED), 0);  /* armed again: this one fires */
	CHECK_EQ(poll(&pfd, 1, 2000), 1);
	CHECK_EQ(ibv_get_cq_event(ch, &ev_cq, &ev_ctx), 0);
	CHECK(ev_cq == cq);
	ibv_ack_cq_events(cq, 1);
	CHECK_EQ(test_poll(cq, &wc, 1), 1);
	CHECK(wc.wr_id == 2);
	CHECK_EQ(ibv_destroy_qp(qp), 0);
	CHECK_EQ(ibv_destroy_cq(cq), 0);
	CHECK_EQ(ibv_destroy_comp_channel(ch), 0);
}

static struct ibv_comp_channel *waiting_ch;
static struct ibv_cq *woken_cq;

static void *wait_event(void *arg)
{
	void *ev_ctx;

	if (ibv_get_cq_event(waiting_ch, &woken_cq, &ev_ctx) != 0)
		woken_cq = NULL;
	return NULL;
}

/* A thread blocked in ibv_get_cq_event wakes when a send completes. */
static void check_blocking_wait(struct ibv_pd *pd, struct ibv_mr *mr)
{
	struct ibv_cq *cq;
	struct ibv_qp *qp;
	pthread_t th;
	struct timespec deadline;
	struct ibv_wc wc;

	waiting_ch = ibv_create_comp_channel(pd->context);
	cq = ibv_create_cq(pd->context, 16, NULL, waiting_ch, 0);
	qp = test_raw_qp(pd, cq, (struct ibv_qp_cap){ .max_send_wr = 8, .max_send_sge = 1 });
	CHECK_EQ(ibv_req_notify_cq(cq, 0), 0);
	pthread_create(&th, NULL, wait_event, NULL);
	usleep(20000);                                    /* let it block */
	CHECK_EQ(post(qp, mr, 5, IBV_SEND_SIGNALED), 0);
	clock_gettime(CLOCK_REALTIME, &deadline);
	deadline.tv_sec += 5;
	CHECK_EQ(pthread_timedjoin_np(th, NULL, &deadline), 0);
	CHECK(woken_cq == cq, "the blocked thread did not get the event");
	ibv_ack_cq_events(cq, 1);
	CHECK_EQ(test_poll(cq, &wc, 1), 1);
	CHECK_EQ(ibv_destroy_qp(qp), 0);
	CHECK_EQ(ibv_destroy_cq(cq), 0);
	CHECK_EQ(ibv_destroy_comp_channel(waiting_ch), 0);
}

static void check_overrun(struct ibv_pd *pd, struct ibv_mr *mr)
{
	struct ibv_context *ctx = pd->context;
	struct ibv_cq *cq = ibv_create_cq(ctx, 2, NULL, NULL, 0);
	struct ibv_qp *qp = test_raw_qp(pd, cq, (struct ibv_qp_cap){ .max_send_wr = 8,
								  .max_send_sge = 1 });
	struct pollfd pfd = { .fd = ctx->async_fd, .events = POLLIN };
	struct ibv_async_event ev;
	struct ibv_wc wc[4];

	for (int i = 0; i < 4; i++)
		CHECK_EQ(post(qp, mr, i, IBV_SEND_SIGNALED), 0);
	CHECK_EQ(poll(&pfd, 1, 2000), 1);
	CHECK_EQ(ibv_get_async_event(ctx, &ev), 0);
	CHECK_EQ(ev.event_type, IBV_EVENT_CQ_ERR);
	CHECK(ev.element.cq == cq);
	ibv_ack_async_event(&ev);
	CHECK_EQ(cq->async_events_completed, 1);
	CHECK_EQ(ibv_poll_cq(cq, 4, wc), 2);              /* what fitted is still there */
	CHECK_EQ(ibv_destroy_qp(qp), 0);
	CHECK_EQ(ibv_destroy_cq(cq), 0);
}

/* Bad lists get EINVAL with *bad_wr at the culprit and lose nothing posted before it: a NULL
 * list, and num_sge > 0 with no sg_list (once a crash inside the length sum), for sends and
 * receives, in direct and service mode alike. */
static void check_bad_input(struct ibv_pd *pd, struct ibv_mr *mr, enum dpv_progress mode)
{
	struct ibv_cq *cq = ibv_create_cq(pd->context, 64, NULL, NULL, 0);
	struct ibv_qp_init_attr qa = { .send_cq = cq, .recv_cq = cq, .qp_type = IBV_QPT_RAW_PACKET,
				       .cap = { .max_send_wr = 8, .max_send_sge = 2,
						.max_recv_wr = 8, .max_recv_sge = 2 } };
	struct ibv_qp *qp = ibv_create_qp(pd, &qa);
	struct ibv_sge sge = { (uintptr_t)frame, sizeof(frame), mr->lkey };
	struct ibv_send_wr ok = { .wr_id = 1, .sg_list = &sge, .num_sge = 1, .opcode = IBV_WR_SEND,
				  .send_flags = IBV_SEND_SIGNALED };
	struct ibv_send_wr nolist = { .wr_id = 2, .num_sge = 2, .opcode = IBV_WR_SEND };
	struct ibv_send_wr *bad = &ok;
	struct ibv_recv_wr rnolist = { .wr_id = 3, .num_sge = 1 }, *rbad = NULL;
	struct ibv_wc wc;

	if (qp == NULL || dpv_qp_set_progress(qp, mode) != 0 || test_qp_to(qp, IBV_QPS_INIT) ||
	    test_qp_to(qp, IBV_QPS_RTR) || test_qp_to(qp, IBV_QPS_RTS)) {
		CHECK(0, "QP setup");
		return;
	}
	CHECK_EQ(ibv_post_send(qp, NULL, &bad), EINVAL);
	CHECK(bad == NULL);
	ok.next = &nolist;
	CHECK_EQ(ibv_post_send(qp, &ok, &bad), EINVAL);
	CHECK(bad == &nolist, "bad_wr is the WR without a list");
	CHECK_EQ(test_poll(cq, &wc, 1), 1);              /* the WR before it went out */
	CHECK(wc.wr_id == 1 && wc.status == IBV_WC_SUCCESS);
	/* an IP_CSUM the HARDWARE policy cannot give net_null: EINVAL while posting, in both
	 * progress modes (service mode once completed it with LOC_QP_OP_ERR instead) */
	CHECK_EQ(dpv_set_offload_policy(pd->context, DPV_OFFLOAD_POLICY_HARDWARE), 0);
	ok.next = NULL;
	ok.send_flags |= IBV_SEND_IP_CSUM;
	CHECK_EQ(ibv_post_send(qp, &ok, &bad), EINVAL);
	CHECK(bad == &ok);
	CHECK_EQ(dpv_set_offload_policy(pd->context, DPV_OFFLOAD_POLICY_AUTO), 0);
	CHECK_EQ(ibv_post_send(qp, &ok, &bad), 0);
	CHECK_EQ(test_poll(cq, &wc, 1), 1);
	CHECK(wc.wr_id == 1 && wc.status == IBV_WC_SUCCESS);
	/* INLINE on a QP made without inline room: EINVAL however short the frame (the fast
	 * path once took a 14-byte one) */
	struct ibv_sge s14 = { (uintptr_t)frame, 14, 0 };
	struct ibv_send_wr inl = { .wr_id = 3, .sg_list = &s14, .num_sge = 1,
				   .opcode = IBV_WR_SEND, .send_flags = IBV_SEND_INLINE };

	CHECK_EQ(ibv_post_send(qp, &inl, &bad), EINVAL);
	CHECK(bad == &inl);
	CHECK_EQ(ibv_post_recv(qp, NULL, &rbad), EINVAL);
	CHECK_EQ(ibv_post_recv(qp, &rnolist, &rbad), EINVAL);
	CHECK(rbad == &rnolist);
	CHECK_EQ(ibv_destroy_qp(qp), 0);
	CHECK_EQ(ibv_destroy_cq(cq), 0);
}

int main(void)
{
	struct ibv_context *ctx = test_open(NULL);
	struct ibv_pd *pd = ibv_alloc_pd(ctx);
	struct ibv_mr *mr = ibv_reg_mr(pd, frame, sizeof(frame), 0);

	memset(frame, 0x5a, sizeof(frame));
	check_order_and_slots(pd, mr);
	check_channel(pd, mr);
	check_stale_event(pd, mr);
	check_blocking_wait(pd, mr);
	check_overrun(pd, mr);
	check_bad_input(pd, mr, DPV_PROGRESS_DIRECT);
	check_bad_input(pd, mr, DPV_PROGRESS_SERVICE);   /* the EAL has a worker lcore (-l 0,1) */
	CHECK_EQ(ibv_dereg_mr(mr), 0);
	return test_finish(ctx, pd, "completions");
}
