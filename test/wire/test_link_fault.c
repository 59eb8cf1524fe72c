/* SPDX-License-Identifier: BSD-3-Clause */
/* Link down with WRs in flight, on a net_tap port whose kernel side the test sets down and up
 * (`ip link`): what a user sees.
 * - IBV_EVENT_PORT_ERR through ibv_get_async_event (port_num 1), ibv_query_port DOWN;
 * - WRs posted before and while the link is down: the port stops taking frames (as a NIC's
 *   queue stalls); moving the QP to ERR flushes every WR it still holds, so each signaled WR
 *   completes exactly once, in order, and nothing hangs; the kernel counts no frame meanwhile;
 * - a zero-copy WR waiting for the port keeps its MR busy (EBUSY) until the flush;
 * - IBV_EVENT_PORT_ACTIVE when the link is back, and after RESET -> INIT -> RTR -> RTS the
 *   QP's frames reach the kernel again.
 * The tap's name carries the pid; the port (and so the interface) goes at ibv_close_device. */
#include <poll.h>
#include <stdint.h>

#include "dpv_test.h"

static char ifname[32];
static struct ibv_cq *cq;
static struct ibv_qp *qp;
static struct ibv_mr *mr;
static uint8_t frame[128];
static uint8_t big[1000];          /* above tx_copy_max: sent from the MR, not copied */

static int ip_link(const char *state)
{
	char cmd[128];

	snprintf(cmd, sizeof(cmd), "ip link set dev %s %s", ifname, state);
	return system(cmd);
}

/* Frames the kernel took from the port (its interface's receive counter). */
static long kernel_rx(void)
{
	char path[128];
	long n = -1;
	FILE *f;

	snprintf(path, sizeof(path), "/sys/class/net/%s/statistics/rx_packets", ifname);
	f = fopen(path, "r");
	if (f != NULL && fscanf(f, "%ld", &n) != 1)
		n = -1;
	if (f != NULL)
		fclose(f);
	return n;
}

/* Wait (at most 5 s) for an async event; returns its type, or -1. (net_tap signals its
 * receive queues with SIGIO: poll is interrupted then.) */
static int next_event(struct ibv_context *ctx)
{
	struct pollfd pfd = { .fd = ctx->async_fd, .events = POLLIN };
	struct ibv_async_event ev;
	int type, r = -1;

	for (int i = 0; i < 500 && r != 1; i++)
		r = poll(&pfd, 1, 10);
	if (r != 1 || ibv_get_async_event(ctx, &ev) != 0)
		return -1;
	type = ev.event_type;
	CHECK_EQ(ev.element.port_num, 1);
	ibv_ack_async_event(&ev);
	return type;
}

/* Post @n WRs (every 4th and the last signaled); returns how many are signaled. */
static int post_some(uint64_t id0, int n)
{
	struct ibv_sge sge = { (uintptr_t)frame, sizeof(frame), mr->lkey };
	int signaled = 0;

	for (int i = 0; i < n; i++) {
		struct ibv_send_wr wr = { .wr_id = id0 + i, .sg_list = &sge, .num_sge = 1,
					  .opcode = IBV_WR_SEND }, *bad;
		bool sig = i % 4 == 3 || i == n - 1;

		wr.send_flags = sig ? IBV_SEND_SIGNALED : 0;
		if (ibv_post_send(qp, &wr, &bad) != 0)
			return -1;
		signaled += sig;
	}
	return signaled;
}

/* Every expected completion arrives (success or flush), in order, and no other. */
static void reap(int want, uint64_t id0, int n)
{
	struct ibv_wc wc[64];
	int got = test_poll(cq, wc, want);
	uint64_t last = 0;

	CHECK_EQ(got, want);
	for (int i = 0; i < got; i++) {
		CHECK(wc[i].status == IBV_WC_SUCCESS, "%s", ibv_wc_status_str(wc[i].status));
		CHECK(wc[i].wr_id >= id0 && wc[i].wr_id < id0 + n && wc[i].wr_id >= last);
		last = wc[i].wr_id;
	}
	CHECK_EQ(ibv_poll_cq(cq, 64, wc), 0);
}

/* WRs id0 .. id0 + n - 1 posted by post_some, some of them flushed: each signaled one
 * completes exactly once (success, or a flush), in order; flushes come for unsignaled WRs
 * too; the last WR is signaled, so its completion ends the list. */
static void reap_flushed(uint64_t id0, int n)
{
	struct ibv_wc wc;
	uint64_t next_signaled = id0 + 3, last = id0 + n - 1, prev = 0;
	int successes = 0, flushes = 0;
	bool done = false;

	for (long tries = 0; !done && tries < 10000000; tries++) {
		if (ibv_poll_cq(cq, 1, &wc) != 1)
			continue;
		CHECK(wc.wr_id >= id0 && wc.wr_id <= last && (prev == 0 || wc.wr_id > prev),
		      "wr_id %llu after %llu", (unsigned long long)wc.wr_id,
		      (unsigned long long)prev);
		prev = wc.wr_id;
		if (wc.status == IBV_WC_SUCCESS) {
			CHECK(wc.wr_id == next_signaled || wc.wr_id == last, "success for %llu",
			      (unsigned long long)wc.wr_id);
			successes++;
		} else {
			CHECK_EQ(wc.status, IBV_WC_WR_FLUSH_ERR);
			flushes++;
		}
		while (next_signaled <= wc.wr_id)
			next_signaled += 4;
		done = wc.wr_id == last;
	}
	CHECK(done, "the last WR never completed: %d successes, %d flushes", successes, flushes);
	CHECK(flushes > 0, "no WR was flushed");
	CHECK_EQ(ibv_poll_cq(cq, 1, &wc), 0);
	printf("link down: %d completed, %d flushed\n", successes, flushes);
}

int main(void)
{
	char args[256];
	struct ibv_context *ctx;
	struct ibv_pd *pd;
	struct ibv_port_attr pa;
	struct ibv_mr *held_mr = NULL;
	long before;
	int want;

	snprintf(ifname, sizeof(ifname), "dpvlf%d", (int)getpid() % 1000000);
	snprintf(args, sizeof(args), "--vdev=net_tap_lf,iface=%s %s", ifname,
		 getenv("DPV_EAL_ARGS") ? getenv("DPV_EAL_ARGS") : "");
	setenv("DPV_EAL_ARGS", args, 1);
	ctx = test_open(NULL);
	pd = ibv_alloc_pd(ctx);
	cq = ibv_create_cq(ctx, 256, NULL, NULL, 0);
	mr = ibv_reg_mr(pd, frame, sizeof(frame), 0);
	CHECK(pd && cq && mr);
	memcpy(frame, "\xff\xff\xff\xff\xff\xff\x02\0\0\0\0\x01\x88\xb5", 14);
	qp = test_raw_qp(pd, cq, (struct ibv_qp_cap){ .max_send_wr = 128, .max_send_sge = 1 });
	CHECK_EQ(ibv_query_port(ctx, 1, &pa), 0);
	CHECK_EQ(pa.state, IBV_PORT_ACTIVE);

	/* link up: frames reach the kernel */
	before = kernel_rx();
	want = post_some(0, 16);
	reap(want, 0, 16);
	for (int i = 0; i < 100 && kernel_rx() < before + 16; i++)
		usleep(10000);
	CHECK(kernel_rx() >= before + 16, "kernel rx %ld, before %ld", kernel_rx(), before);

	/* link down with WRs in flight: the port stops taking frames; the QP moved to ERR
	 * flushes what it holds */
	post_some(100, 32);
	CHECK_EQ(ip_link("down"), 0);
	post_some(132, 32);
	CHECK_EQ(next_event(ctx), IBV_EVENT_PORT_ERR);
	CHECK_EQ(ibv_query_port(ctx, 1, &pa), 0);
	CHECK_EQ(pa.state, IBV_PORT_DOWN);
	before = kernel_rx();
	post_some(164, 32);
	{
		struct ibv_mr *big_mr = ibv_reg_mr(pd, big, sizeof(big), 0);
		struct ibv_sge sge = { (uintptr_t)big, sizeof(big), big_mr ? big_mr->lkey : 0 };
		struct ibv_send_wr wr = { .wr_id = 196, .sg_list = &sge, .num_sge = 1,
					  .opcode = IBV_WR_SEND, .send_flags = IBV_SEND_SIGNALED };
		struct ibv_send_wr *bad;

		memcpy(big, frame, 14);
		CHECK_EQ(ibv_post_send(qp, &wr, &bad), 0);
		/* the frame waiting for the port points into the MR */
		CHECK_EQ(ibv_dereg_mr(big_mr), EBUSY);
		held_mr = big_mr;
	}
	for (int i = 0; i < 1000; i++) {                /* what can complete, completes */
		struct ibv_wc wc;

		if (ibv_poll_cq(cq, 0, &wc) != 0)
			break;
	}
	CHECK_EQ(test_qp_to(qp, IBV_QPS_ERR), 0);
	reap_flushed(100, 97);
	CHECK_EQ(ibv_dereg_mr(held_mr), 0);            /* flushed: nothing points into it */
	usleep(100000);
	CHECK_EQ(kernel_rx(), before);                 /* nothing got through the down link */

	/* link up again: an event, and the QP sends after RESET -> INIT -> RTR -> RTS */
	CHECK_EQ(ip_link("up"), 0);
	CHECK_EQ(next_event(ctx), IBV_EVENT_PORT_ACTIVE);
	CHECK_EQ(ibv_query_port(ctx, 1, &pa), 0);
	CHECK_EQ(pa.state, IBV_PORT_ACTIVE);
	CHECK_EQ(test_qp_to(qp, IBV_QPS_RESET), 0);
	CHECK_EQ(test_qp_to(qp, IBV_QPS_INIT), 0);
	CHECK_EQ(test_qp_to(qp, IBV_QPS_RTR), 0);
	CHECK_EQ(test_qp_to(qp, IBV_QPS_RTS), 0);
	before = kernel_rx();
	want = post_some(300, 16);
	reap(want, 300, 16);
	for (int i = 0; i < 100 && kernel_rx() < before + 16; i++)
		usleep(10000);
	CHECK(kernel_rx() >= before + 16, "kernel rx %ld, before %ld", kernel_rx(), before);

	CHECK_EQ(ibv_destroy_qp(qp), 0);
	CHECK_EQ(ibv_dereg_mr(mr), 0);
	CHECK_EQ(ibv_destroy_cq(cq), 0);
	CHECK_EQ(ibv_dealloc_pd(pd), 0);
	CHECK_EQ(ibv_close_device(ctx), 0);
	CHECK(kernel_rx() < 0, "the tap %s is still there", ifname);
	return test_done("link_fault");
}
