/* SPDX-License-Identifier: BSD-3-Clause */
/* Service mode when the service lcore gets no CPU: its loop is held inside a port timer's
 * callback (as if the OS had given its CPU to others), and a thread that posts and polls
 * still gets every completion, in order — pollers do the round the service lcore does not
 * (dpv__service_qp_help). Once the loop runs again it serves as before; stopped with
 * dpv_service_lcore_stop, nobody sends for it (WRs stay queued). Linked with the layers'
 * objects: the timer list of the port is internal. EAL: net_null, lcores 0 and 1. */
#include <rte_lcore.h>

#include "dpv_test.h"
#include "verbs_priv.h"

#define LISTS 40
#define BURST 25

static uint8_t frame[64] = "\xff\xff\xff\xff\xff\xff\x02\x00\x00\x00\x00\x01\x88\xb5help";
static int held;                  /* 1: the loop is in hold(), 2: it left */
static int release;
static unsigned int held_on;      /* the lcore hold() ran on */

/* A timer callback that keeps whoever runs it (the service lcore) until released (at most a
 * minute, so that a failing test ends). */
static void hold(struct dpv_timer *t, void *arg)
{
	(void)t;
	(void)arg;
	held_on = rte_lcore_id();
	__atomic_store_n(&held, 1, __ATOMIC_RELEASE);
	for (int i = 0; i < 60000 && !__atomic_load_n(&release, __ATOMIC_ACQUIRE); i++)
		usleep(1000);
	__atomic_store_n(&held, 2, __ATOMIC_RELEASE);
}

static struct ibv_qp *service_qp(struct ibv_pd *pd, struct ibv_cq *cq)
{
	return test_service_qp(pd, cq, (struct ibv_qp_cap){ .max_send_wr = 128, .max_send_sge = 1 });
}

/* @lists lists of BURST WRs (wr_id from @id0 on, the last of each signaled), polled as they
 * go and then for up to @seconds: how many signaled completions came back in order. */
static int post_and_poll(struct ibv_qp *qp, struct ibv_cq *cq, struct ibv_mr *mr, int lists,
			 uint64_t id0, double seconds)
{
	struct ibv_sge sge = { (uintptr_t)frame, sizeof(frame), mr->lkey };
	struct ibv_send_wr wr[BURST], *bad, *rest = NULL;
	struct ibv_wc wc[16];
	uint64_t next = id0 + BURST - 1;
	int posted = 0, got = 0;
	double end = 0;

	for (int i = 0; i < BURST; i++)
		wr[i] = (struct ibv_send_wr){ .sg_list = &sge, .num_sge = 1, .opcode = IBV_WR_SEND,
					      .next = i + 1 < BURST ? &wr[i + 1] : NULL,
					      .send_flags = i + 1 < BURST ? 0 : IBV_SEND_SIGNALED };
	while (got < lists && (end == 0 || test_now() < end)) {
		int n, rc;

		if (posted < lists) {
			if (rest == NULL) {           /* a new list */
				for (int i = 0; i < BURST; i++)
					wr[i].wr_id = id0 + (uint64_t)posted * BURST + (uint64_t)i;
				rest = wr;
			}
			rc = ibv_post_send(qp, rest, &bad);
			CHECK(rc == 0 || rc == ENOMEM, "post: %s", strerror(rc));
			rest = rc == 0 ? NULL : bad;  /* the SQ full: the rest of the list later */
			posted += rc == 0;
			if (posted == lists)
				end = test_now() + seconds;
		}
		n = ibv_poll_cq(cq, 16, wc);
		for (int k = 0; k < n; k++) {
			CHECK(wc[k].status == IBV_WC_SUCCESS && wc[k].wr_id == next,
			      "completion %d: %s, wr_id %llu, expected %llu", got,
			      ibv_wc_status_str(wc[k].status), (unsigned long long)wc[k].wr_id,
			      (unsigned long long)next);
			next += BURST;
			got++;
		}
	}
	return got;
}

int main(void)
{
	struct ibv_context *ctx = test_open(NULL);
	struct dpv_device *dev = to_dctx(ctx)->dev;
	struct ibv_pd *pd = ibv_alloc_pd(ctx);
	struct ibv_cq *cq = ibv_create_cq(ctx, 256, NULL, NULL, 0);
	struct ibv_mr *mr = ibv_reg_mr(pd, frame, sizeof(frame), 0);
	struct ibv_qp *qp = service_qp(pd, cq);
	struct dpv_qp_counters c;
	struct dpv_port_stats before, after;
	struct dpv_timer t;
	struct ibv_wc wc[8];

	CHECK(mr != NULL);
	CHECK_EQ(post_and_poll(qp, cq, mr, 2, 0, 5.0), 2);          /* the service lcore sends */
	CHECK_EQ(dpv_query_qp_counters(qp, &c), 0);
	CHECK(c.service_lcore > 0, "service lcore %d", c.service_lcore);

	/* hold the service loop: the port's timer runs on it (this thread does not progress the
	 * port until it is held) */
	dpv__timer_init(&t, hold, NULL);
	CHECK_EQ(dpv__timer_arm(&dev->timers, &t, rte_rdtsc()), 0);
	for (int i = 0; i < 10000 && __atomic_load_n(&held, __ATOMIC_ACQUIRE) == 0; i++)
		usleep(1000);
	CHECK_EQ(__atomic_load_n(&held, __ATOMIC_ACQUIRE), 1);
	CHECK_EQ(held_on, c.service_lcore);

	/* every WR goes out and completes, in order, while the loop is held */
	CHECK_EQ(dpv_query_port_stats(ctx, &before), 0);
	CHECK_EQ(post_and_poll(qp, cq, mr, LISTS, 1000, 20.0), LISTS);
	CHECK_EQ(dpv_query_port_stats(ctx, &after), 0);
	CHECK_EQ(after.tx_frames - before.tx_frames, LISTS * BURST);
	CHECK_EQ(__atomic_load_n(&held, __ATOMIC_ACQUIRE), 1);      /* it was held throughout */

	/* let go: the loop serves again */
	__atomic_store_n(&release, 1, __ATOMIC_RELEASE);
	for (int i = 0; i < 10000 && __atomic_load_n(&held, __ATOMIC_ACQUIRE) != 2; i++)
		usleep(1000);
	CHECK_EQ(__atomic_load_n(&held, __ATOMIC_ACQUIRE), 2);
	CHECK_EQ(post_and_poll(qp, cq, mr, 4, 5000, 5.0), 4);

	/* a stopped service lcore is not helped: its WRs wait for it */
	CHECK_EQ(dpv_service_lcore_stop((unsigned int)c.service_lcore), 0);
	CHECK_EQ(post_and_poll(qp, cq, mr, 1, 6000, 0.3), 0);
	CHECK_EQ(dpv_service_lcore_start((unsigned int)c.service_lcore), 0);
	CHECK_EQ(test_poll(cq, wc, 1), 1);
	CHECK(wc[0].status == IBV_WC_SUCCESS && wc[0].wr_id == 6000 + BURST - 1);

	CHECK_EQ(ibv_destroy_qp(qp), 0);
	CHECK_EQ(ibv_destroy_cq(cq), 0);
	CHECK_EQ(ibv_dereg_mr(mr), 0);
	return test_finish(ctx, pd, "service_help");
}
