/* SPDX-License-Identifier: BSD-3-Clause */
/* Service mode (DPV_PROGRESS_SERVICE): threads that are not DPDK lcores post, a service lcore
 * sends and completes. Every WR reaches the port and every signaled WR completes exactly once,
 * in post order, with four threads posting 100k WRs each (to QPs of their own, then all to one
 * QP); WRs queued while the service lcore is stopped flush on ERR and go quietly on destroy;
 * dpv_qp_set_progress's errors. With DPV_TEST_NO_WORKER set, the EAL has no worker lcore and
 * a service-mode QP cannot leave RESET (ENODEV). */
#include <pthread.h>
#include <stdint.h>

#include "dpv_test.h"

#define THREADS 4
#define PER_THREAD 100000
#define DEPTH 256

static struct ibv_context *ctx;
static struct ibv_pd *pd;
static struct ibv_mr *mr;
static uint8_t frame[64] = "\xff\xff\xff\xff\xff\xff\x02\x00\x00\x00\x00\x01\x88\xb5service";

struct poster {
	int id;
	struct ibv_qp *qp;
	struct ibv_cq *cq;
	pthread_mutex_t *cq_lock;     /* the CQ is shared: one poller at a time */
	uint64_t *expect;             /* next signaled seq expected, per thread */
	unsigned int seed;
	long signaled, completed, bad_order, errors;
};

static struct ibv_qp *service_qp(struct ibv_cq *cq, uint32_t depth)
{
	return test_service_qp(pd, cq, (struct ibv_qp_cap){ .max_send_wr = depth, .max_send_sge = 1 });
}

/* Completions carry (thread << 32 | seq); each thread's must come in increasing order. */
static void reap(struct poster *p)
{
	struct ibv_wc wc[32];
	int n;

	if (p->cq_lock)
		pthread_mutex_lock(p->cq_lock);
	n = ibv_poll_cq(p->cq, 32, wc);
	for (int i = 0; i < n; i++) {
		int t = (int)(wc[i].wr_id >> 32);
		uint64_t seq = wc[i].wr_id & 0xffffffff;

		if (wc[i].status != IBV_WC_SUCCESS || t < 0 || t >= THREADS) {
			p->errors++;
			continue;
		}
		if (seq < p->expect[t])
			p->bad_order++;
		p->expect[t] = seq + 1;
		__atomic_fetch_add(&p[t - p->id].completed, 1, __ATOMIC_RELAXED);
	}
	if (p->cq_lock)
		pthread_mutex_unlock(p->cq_lock);
}

static void *post_all(void *arg)
{
	struct poster *p = arg;
	struct ibv_sge sge = { (uintptr_t)frame, sizeof(frame), mr->lkey };

	/* half the threads with an lcore id of their own (a mempool cache), half without */
	if (p->id % 2 == 0 && dpv_thread_register() != 0)
		p->errors++;
	for (uint64_t seq = 0; seq < PER_THREAD;) {
		bool sig = seq + 1 == PER_THREAD || rand_r(&p->seed) % 4 == 0;
		struct ibv_send_wr wr = { .wr_id = (uint64_t)p->id << 32 | seq, .sg_list = &sge,
					  .num_sge = 1, .opcode = IBV_WR_SEND,
					  .send_flags = sig ? IBV_SEND_SIGNALED : 0 }, *bad;
		int rc = ibv_post_send(p->qp, &wr, &bad);

		if (rc == 0) {
			p->signaled += sig;
			seq++;
		} else if (rc != ENOMEM) {
			p->errors++;
			break;
		}
		if (rc == ENOMEM || rand_r(&p->seed) % 16 == 0)
			reap(p);
	}
	if (p->id % 2 == 0)
		dpv_thread_unregister();
	return NULL;
}

/* Run THREADS posters; @shared: all on one QP and CQ, else each on its own. */
static void run_posters(bool shared)
{
	static uint64_t expect[THREADS][THREADS];
	struct poster p[THREADS];
	pthread_t th[THREADS];
	pthread_mutex_t cq_lock = PTHREAD_MUTEX_INITIALIZER;
	struct ibv_cq *cq[THREADS];
	struct ibv_qp *qp[THREADS];
	struct dpv_port_stats before, after;
	long signaled = 0, completed = 0;

	memset(expect, 0, sizeof(expect));
	CHECK_EQ(dpv_query_port_stats(ctx, &before), 0);
	for (int i = 0; i < THREADS; i++) {
		cq[i] = shared && i > 0 ? cq[0] : ibv_create_cq(ctx, 4 * DEPTH, NULL, NULL, 0);
		qp[i] = shared && i > 0 ? qp[0] : service_qp(cq[i], DEPTH);
		p[i] = (struct poster){ .id = i, .qp = qp[i], .cq = cq[i],
					.cq_lock = shared ? &cq_lock : NULL,
					.expect = shared ? expect[0] : expect[i], .seed = 7u + i };
		pthread_create(&th[i], NULL, post_all, &p[i]);
	}
	for (int i = 0; i < THREADS; i++)
		pthread_join(th[i], NULL);
	for (int i = 0; i < THREADS; i++)
		signaled += p[i].signaled;
	for (double end = test_now() + 20; test_now() < end; ) {
		completed = 0;
		for (int i = 0; i < THREADS; i++) {
			reap(&p[i]);
			completed += __atomic_load_n(&p[i].completed, __ATOMIC_RELAXED);
		}
		if (completed >= signaled)
			break;
	}
	for (int i = 0; i < THREADS; i++) {
		CHECK(p[i].errors == 0 && p[i].bad_order == 0, "%s: thread %d: %ld errors, %ld "
		      "out of order", shared ? "shared" : "own QPs", i, p[i].errors, p[i].bad_order);
		CHECK(p[i].completed == p[i].signaled, "%s: thread %d: %ld signaled, %ld completed",
		      shared ? "shared" : "own QPs", i, p[i].signaled, p[i].completed);
	}
	CHECK_EQ(completed, signaled);
	CHECK_EQ(ibv_poll_cq(cq[0], 1, (struct ibv_wc[1]){}), 0);  /* nothing more: once each */
	CHECK_EQ(dpv_query_port_stats(ctx, &after), 0);
	CHECK_EQ(after.tx_frames - before.tx_frames, THREADS * PER_THREAD);
	for (int i = 0; i < (shared ? 1 : THREADS); i++) {
		CHECK_EQ(ibv_destroy_qp(qp[i]), 0);
		CHECK_EQ(ibv_destroy_cq(cq[i]), 0);
	}
}

static int post_n(struct ibv_qp *qp, int n, uint64_t id0)
{
	struct ibv_sge sge = { (uintptr_t)frame, sizeof(frame), mr->lkey };

	for (int i = 0; i < n; i++) {
		struct ibv_send_wr wr = { .wr_id = id0 + (uint64_t)i, .sg_list = &sge, .num_sge = 1,
					  .opcode = IBV_WR_SEND, .send_flags = IBV_SEND_SIGNALED },
				   *bad;
		int rc = ibv_post_send(qp, &wr, &bad);

		if (rc != 0)
			return rc;
	}
	return 0;
}

/* The service lcore stopped: WRs stay queued; ERR flushes them; destroy lets them go. */
static void stopped_service(void)
{
	struct ibv_cq *cq = ibv_create_cq(ctx, 64, NULL, NULL, 0);
	struct ibv_qp *qp = service_qp(cq, 32), *qp2 = service_qp(cq, 32);
	struct ibv_qp_attr err = { .qp_state = IBV_QPS_ERR };
	struct ibv_wc wc[32];
	struct ibv_mr *mr2;
	int n;

	CHECK_EQ(post_n(qp, 2, 1), 0);
	CHECK_EQ(test_poll(cq, wc, 2), 2);                 /* served */
	CHECK_EQ(dpv_service_lcore_stop(1), 0);
	CHECK_EQ(dpv_service_lcore_stop(1), EINVAL);       /* not running */
	CHECK_EQ(post_n(qp, 10, 100), 0);
	CHECK_EQ(test_poll_for(cq, wc, 10, 0.2), 0);       /* queued, nobody sends */
	CHECK_EQ(ibv_modify_qp(qp, &err, IBV_QP_STATE), 0);
	n = test_poll(cq, wc, 10);
	CHECK_EQ(n, 10);
	for (int i = 0; i < n; i++)
		CHECK(wc[i].status == IBV_WC_WR_FLUSH_ERR && wc[i].wr_id == 100 + (uint64_t)i,
		      "wc %d: %s %llu", i, ibv_wc_status_str(wc[i].status),
		      (unsigned long long)wc[i].wr_id);
	/* destroy with WRs queued: no hang, no completion, nothing keeps the MR */
	mr2 = ibv_reg_mr(pd, frame, sizeof(frame), 0);
	CHECK(mr2 != NULL);
	{
		struct ibv_sge sge = { (uintptr_t)frame, sizeof(frame), mr2->lkey };
		struct ibv_send_wr wr = { .wr_id = 7, .sg_list = &sge, .num_sge = 1,
					  .opcode = IBV_WR_SEND, .send_flags = IBV_SEND_SIGNALED },
				   *bad;

		CHECK_EQ(ibv_post_send(qp2, &wr, &bad), 0);
	}
	CHECK_EQ(ibv_destroy_qp(qp2), 0);
	CHECK_EQ(ibv_poll_cq(cq, 32, wc), 0);
	CHECK_EQ(ibv_dereg_mr(mr2), 0);
	CHECK_EQ(ibv_destroy_qp(qp), 0);
	/* started again: a new QP is served */
	CHECK_EQ(dpv_service_lcore_start(1), 0);
	qp = service_qp(cq, 32);
	CHECK_EQ(post_n(qp, 3, 200), 0);
	CHECK_EQ(test_poll(cq, wc, 3), 3);
	CHECK(wc[2].status == IBV_WC_SUCCESS && wc[2].wr_id == 202);
	CHECK_EQ(ibv_destroy_qp(qp), 0);
	CHECK_EQ(ibv_destroy_cq(cq), 0);
}

static void set_progress_errors(void)
{
	struct ibv_cq *cq = ibv_create_cq(ctx, 8, NULL, NULL, 0);
	struct ibv_qp_init_attr a = { .send_cq = cq, .recv_cq = cq, .qp_type = IBV_QPT_RAW_PACKET,
				      .cap = { .max_send_wr = 8, .max_send_sge = 1 } };
	struct ibv_qp *qp = ibv_create_qp(pd, &a);

	CHECK_EQ(dpv_qp_set_progress(NULL, DPV_PROGRESS_SERVICE), EINVAL);
	CHECK_EQ(dpv_qp_set_progress(qp, (enum dpv_progress)7), EINVAL);
	CHECK_EQ(dpv_qp_set_progress(qp, DPV_PROGRESS_SERVICE), 0);
	CHECK_EQ(test_qp_to(qp, IBV_QPS_INIT), 0);
	CHECK_EQ(dpv_qp_set_progress(qp, DPV_PROGRESS_DIRECT), EBUSY);   /* not in RESET */
	CHECK_EQ(dpv_service_lcore_start(0), EINVAL);     /* the main lcore */
	CHECK_EQ(dpv_service_lcore_start(1), 0);          /* runs already: fine */
	CHECK_EQ(dpv_thread_register(), 0);               /* the main lcore: registered already */
	dpv_thread_unregister();                          /* ... and it stays so */
	CHECK_EQ(dpv_thread_register(), 0);
	CHECK_EQ(ibv_destroy_qp(qp), 0);
	CHECK_EQ(ibv_destroy_cq(cq), 0);
}

/* The EAL has only the main lcore: a service-mode QP cannot get a service lcore. */
static void no_worker(void)
{
	struct ibv_cq *cq = ibv_create_cq(ctx, 8, NULL, NULL, 0);
	struct ibv_qp_init_attr a = { .send_cq = cq, .recv_cq = cq, .qp_type = IBV_QPT_RAW_PACKET,
				      .cap = { .max_send_wr = 8, .max_send_sge = 1 } };
	struct ibv_qp *qp = ibv_create_qp(pd, &a);

	CHECK_EQ(dpv_qp_set_progress(qp, DPV_PROGRESS_SERVICE), 0);
	CHECK_EQ(test_qp_to(qp, IBV_QPS_INIT), ENODEV);
	CHECK_EQ(qp->state, IBV_QPS_RESET);                /* nothing half-done */
	CHECK_EQ(dpv_qp_set_progress(qp, DPV_PROGRESS_DIRECT), 0);
	CHECK_EQ(test_qp_to(qp, IBV_QPS_INIT), 0);         /* direct mode needs no lcore */
	CHECK_EQ(ibv_destroy_qp(qp), 0);
	CHECK_EQ(ibv_destroy_cq(cq), 0);
}

int main(void)
{
	ctx = test_open(NULL);
	pd = ibv_alloc_pd(ctx);
	mr = ibv_reg_mr(pd, frame, sizeof(frame), 0);
	CHECK(mr != NULL);
	if (getenv("DPV_TEST_NO_WORKER") != NULL) {
		no_worker();
	} else {
		set_progress_errors();
		run_posters(false);
		run_posters(true);
		stopped_service();
	}
	CHECK_EQ(ibv_dereg_mr(mr), 0);
	return test_finish(ctx, pd, "service");
}
