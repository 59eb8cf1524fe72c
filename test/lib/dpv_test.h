/* SPDX-License-Identifier: BSD-3-Clause */
/* A few helpers shared by dpverbs' tests: checks that count and report (dpv_check.h), and
 * the verbs boilerplate of opening a device, bringing a RAW_PACKET QP to RTS (direct or in
 * service mode), steering UDP to it, posting receives, polling. */
#ifndef DPV_TEST_H
#define DPV_TEST_H

#include <arpa/inet.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <infiniband/verbs.h>
#include <dpverbs.h>

#include "dpv_check.h"

/* The end of a test's main: @pd deallocated and @ctx closed (each checked), then
 * test_done(@name). */
static inline int test_finish(struct ibv_context *ctx, struct ibv_pd *pd, const char *name)
{
	CHECK_EQ(ibv_dealloc_pd(pd), 0);
	CHECK_EQ(ibv_close_device(ctx), 0);
	return test_done(name);
}

/* With DPV_TEST_READY and DPV_TEST_GO set (by a harness that captures on the port's
 * interface): say the port exists, then wait (at most 20 s) until the harness is ready. */
static inline void test_handshake(void)
{
	const char *ready = getenv("DPV_TEST_READY"), *go = getenv("DPV_TEST_GO");
	FILE *f;

	if (ready == NULL || go == NULL)
		return;
	f = fopen(ready, "w");
	if (f != NULL)
		fclose(f);
	for (int i = 0; i < 2000 && access(go, F_OK) != 0; i++)
		usleep(10000);
}

/* Before closing a tap port: deleting the interface drops what the kernel and the capture
 * have not taken yet. With DPV_TEST_DONE and DPV_TEST_CLOSE set, say the sending is over and
 * wait (at most 30 s) until the harness has its capture. */
static inline void test_settle(void)
{
	const char *done = getenv("DPV_TEST_DONE"), *close_ok = getenv("DPV_TEST_CLOSE");
	FILE *f;

	if (done == NULL || close_ok == NULL)
		return;
	f = fopen(done, "w");
	if (f != NULL)
		fclose(f);
	for (int i = 0; i < 3000 && access(close_ok, F_OK) != 0; i++)
		usleep(10000);
}

/* Open the device whose name is @name (NULL: the first one); exits when there is none. */
static inline struct ibv_context *test_open(const char *name)
{
	struct ibv_device **list;
	struct ibv_context *ctx = NULL;
	int n = 0;

	list = ibv_get_device_list(&n);
	if (list == NULL) {
		fprintf(stderr, "ibv_get_device_list: %s\n", strerror(errno));
		exit(1);
	}
	for (int i = 0; i < n && ctx == NULL; i++)
		if (name == NULL || strcmp(ibv_get_device_name(list[i]), name) == 0)
			ctx = ibv_open_device(list[i]);
	ibv_free_device_list(list);
	if (ctx == NULL) {
		fprintf(stderr, "no device %s\n", name ? name : "at all");
		exit(1);
	}
	test_handshake();
	return ctx;
}

static inline int test_qp_to(struct ibv_qp *qp, enum ibv_qp_state state)
{
	struct ibv_qp_attr a = { .qp_state = state, .port_num = 1 };

	return ibv_modify_qp(qp, &a, IBV_QP_STATE | (state == IBV_QPS_INIT ? IBV_QP_PORT : 0));
}

/* A RAW_PACKET QP in RTS on @cq. */
static inline struct ibv_qp *test_raw_qp(struct ibv_pd *pd, struct ibv_cq *cq,
					 struct ibv_qp_cap cap)
{
	struct ibv_qp_init_attr init = { .send_cq = cq, .recv_cq = cq, .cap = cap,
					 .qp_type = IBV_QPT_RAW_PACKET };
	struct ibv_qp *qp = ibv_create_qp(pd, &init);

	if (qp == NULL || test_qp_to(qp, IBV_QPS_INIT) || test_qp_to(qp, IBV_QPS_RTR) ||
	    test_qp_to(qp, IBV_QPS_RTS)) {
		fprintf(stderr, "RAW_PACKET QP to RTS: %s\n", strerror(errno));
		exit(1);
	}
	return qp;
}

/* A flow rule steering IPv4 UDP datagrams to port @port (host order) to @qp; NULL as
 * ibv_create_flow. */
static inline struct ibv_flow *test_udp_flow(struct ibv_qp *qp, uint16_t port)
{
	struct {
		struct ibv_flow_attr attr;
		struct ibv_flow_spec_ipv4_ext ip;
		struct ibv_flow_spec_tcp_udp udp;
	} rule = {
		.attr = { .size = sizeof(rule), .num_of_specs = 2, .port = 1 },
		.ip = { .type = IBV_FLOW_SPEC_IPV4_EXT, .size = sizeof(rule.ip),
			.val = { .proto = 17 }, .mask = { .proto = 0xff } },
		.udp = { .type = IBV_FLOW_SPEC_UDP, .size = sizeof(rule.udp),
			 .val.dst_port = htons(port), .mask.dst_port = 0xffff },
	};

	return ibv_create_flow(qp, &rule.attr);
}

/* A RAW_PACKET QP on @cq in service mode (DPV_PROGRESS_SERVICE set before INIT), in RTS. */
static inline struct ibv_qp *test_service_qp(struct ibv_pd *pd, struct ibv_cq *cq,
					     struct ibv_qp_cap cap)
{
	struct ibv_qp_init_attr a = { .send_cq = cq, .recv_cq = cq, .qp_type = IBV_QPT_RAW_PACKET,
				      .cap = cap };
	struct ibv_qp *qp = ibv_create_qp(pd, &a);

	if (qp == NULL || dpv_qp_set_progress(qp, DPV_PROGRESS_SERVICE) != 0 ||
	    test_qp_to(qp, IBV_QPS_INIT) || test_qp_to(qp, IBV_QPS_RTR) ||
	    test_qp_to(qp, IBV_QPS_RTS)) {
		fprintf(stderr, "service QP: %s\n", strerror(errno));
		exit(1);
	}
	return qp;
}

/* Post @n receives on @qp, WR i (wr_id i) the @slot bytes at @base + i * @slot of @mr; one
 * check each. */
static inline void test_post_recvs(struct ibv_qp *qp, struct ibv_mr *mr, uint8_t *base,
				   uint32_t slot, int n)
{
	for (int i = 0; i < n; i++) {
		struct ibv_sge sge = { (uintptr_t)base + (size_t)i * slot, slot, mr->lkey };
		struct ibv_recv_wr wr = { .wr_id = (uint64_t)i, .sg_list = &sge, .num_sge = 1 };
		struct ibv_recv_wr *bad;

		CHECK_EQ(ibv_post_recv(qp, &wr, &bad), 0);
	}
}

static inline double test_now(void)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return (double)t.tv_sec + (double)t.tv_nsec * 1e-9;
}

/* Poll for at most @seconds, until @n completions arrived; returns how many did. */
static inline int test_poll_for(struct ibv_cq *cq, struct ibv_wc *wc, int n, double seconds)
{
	double end = test_now() + seconds;
	int got = 0;

	do {
		int r = ibv_poll_cq(cq, n - got, wc + got);

		if (r < 0)
			return r;
		got += r;
	} while (got < n && test_now() < end);
	return got;
}

/* Poll until @n completions arrived, or for 5 s. */
static inline int test_poll(struct ibv_cq *cq, struct ibv_wc *wc, int n)
{
	return test_poll_for(cq, wc, n, 5.0);
}

#endif
