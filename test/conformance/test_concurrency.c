/* SPDX-License-Identifier: BSD-3-Clause */
/* Several threads posting to one QP (per-QP lock) and to a second QP on the same CQ, while
 * they all poll that CQ: every signaled WR completes exactly once, and each thread's WRs
 * complete in the order that thread posted them. A QP of a thread domain works lock-free
 * from its one thread. */
#include <pthread.h>

#include "dpv_test.h"

#define THREADS 4
#define PER_THREAD 20000

static struct ibv_cq *cq;
static struct ibv_qp *qp_shared, *qp_other;
static struct ibv_mr *mr;
static uint8_t frame[64];
static pthread_mutex_t seen_lock = PTHREAD_MUTEX_INITIALIZER;
static uint64_t last_seen[THREADS + 1];
static long completions[THREADS + 1], expected[THREADS + 1], disorder;

/* Poll and count under one lock, so that two pollers cannot account out of order. */
static void poll_and_account(void)
{
	struct ibv_wc wc[32];
	int n;

	pthread_mutex_lock(&seen_lock);
	n = ibv_poll_cq(cq, 32, wc);
	for (int i = 0; i < n; i++) {
		int t = (int)(wc[i].wr_id >> 32);
		uint64_t seq = wc[i].wr_id & 0xffffffff;

		if (wc[i].status != IBV_WC_SUCCESS || t > THREADS || (last_seen[t] && seq <= last_seen[t]))
			disorder++;
		last_seen[t] = seq;
		completions[t]++;
	}
	pthread_mutex_unlock(&seen_lock);
}

static void *poster(void *arg)
{
	int t = (int)(intptr_t)arg;
	struct ibv_qp *qp = t == THREADS ? qp_other : qp_shared;
	struct ibv_sge sge = { (uintptr_t)frame, sizeof(frame), mr->lkey };

	for (uint64_t seq = 1; seq <= PER_THREAD; ) {
		bool sig = seq % 8 == 0 || seq == PER_THREAD;
		struct ibv_send_wr wr = { .wr_id = (uint64_t)t << 32 | seq, .sg_list = &sge,
					  .num_sge = 1, .opcode = IBV_WR_SEND,
					  .send_flags = sig ? IBV_SEND_SIGNALED : 0 }, *bad;
		int rc = ibv_post_send(qp, &wr, &bad);

		if (rc == 0) {
			expected[t] += sig;
			seq++;
		} else if (rc != ENOMEM) {
			fprintf(stderr, "post: %s\n", strerror(rc));
			return NULL;
		}
		if (rc == ENOMEM || seq % 64 == 0)
			poll_and_account();
	}
	return NULL;
}

static long total(long *v)
{
	long s = 0;

	for (int t = 0; t <= THREADS; t++)
		s += v[t];
	return s;
}

static void lockless_qp(struct ibv_context *ctx, struct ibv_pd *pd)
{
	struct ibv_td *td = ibv_alloc_td(ctx, &(struct ibv_td_init_attr){ 0 });
	struct ibv_pd *par = ibv_alloc_parent_domain(ctx, &(struct ibv_parent_domain_init_attr){
							      .pd = pd, .td = td });
	struct ibv_cq *cq2 = ibv_create_cq(ctx, 64, NULL, NULL, 0);
	struct ibv_qp *qp = test_raw_qp(par, cq2, (struct ibv_qp_cap){ .max_send_wr = 64,
								    .max_send_sge = 1 });
	struct ibv_sge sge = { (uintptr_t)frame, sizeof(frame), mr->lkey };
	struct ibv_wc wc;
	int done = 0;

	for (int i = 0; i < 1000; i++) {
		struct ibv_send_wr wr = { .wr_id = i, .sg_list = &sge, .num_sge = 1,
					  .opcode = IBV_WR_SEND, .send_flags = IBV_SEND_SIGNALED }, *bad;

		CHECK_EQ(ibv_post_send(qp, &wr, &bad), 0);
		if (test_poll(cq2, &wc, 1) == 1 && wc.wr_id == (uint64_t)i)
			done++;
	}
	CHECK_EQ(done, 1000);
	CHECK_EQ(ibv_destroy_qp(qp), 0);
	CHECK_EQ(ibv_destroy_cq(cq2), 0);
	CHECK_EQ(ibv_dealloc_pd(par), 0);
	CHECK_EQ(ibv_dealloc_td(td), 0);
}

int main(void)
{
	struct ibv_context *ctx = test_open(NULL);
	struct ibv_pd *pd = ibv_alloc_pd(ctx);
	pthread_t th[THREADS + 1];
	struct ibv_wc wc[32];

	cq = ibv_create_cq(ctx, 4096, NULL, NULL, 0);
	mr = ibv_reg_mr(pd, frame, sizeof(frame), 0);
	qp_shared = test_raw_qp(pd, cq, (struct ibv_qp_cap){ .max_send_wr = 256, .max_send_sge = 1 });
	qp_other = test_raw_qp(pd, cq, (struct ibv_qp_cap){ .max_send_wr = 256, .max_send_sge = 1 });
	for (int t = 0; t <= THREADS; t++)
		pthread_create(&th[t], NULL, poster, (void *)(intptr_t)t);
	for (int t = 0; t <= THREADS; t++)
		pthread_join(th[t], NULL);
	for (int tries = 0; tries < 100000 && total(completions) < total(expected); tries++)
		poll_and_account();
	CHECK_EQ(total(expected), (long)(THREADS + 1) * (PER_THREAD / 8));
	for (int t = 0; t <= THREADS; t++)
		CHECK(completions[t] == expected[t], "thread %d: %ld completions, %ld signaled", t,
		      completions[t], expected[t]);
	CHECK_EQ(disorder, 0);
	CHECK_EQ(ibv_poll_cq(cq, 32, wc), 0);
	lockless_qp(ctx, pd);
	CHECK_EQ(ibv_destroy_qp(qp_shared), 0);
	CHECK_EQ(ibv_destroy_qp(qp_other), 0);
	CHECK_EQ(ibv_dereg_mr(mr), 0);
	CHECK_EQ(ibv_destroy_cq(cq), 0);
	return test_finish(ctx, pd, "concurrency");
}
