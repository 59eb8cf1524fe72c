/* SPDX-License-Identifier: BSD-3-Clause */
/* bench-rc: RC RDMA WRITE or SEND between two QPs of one device, the second QP at the device's
 * own GID, so every packet goes through the device's RoCE loopback: dpverbs' (no wire: the
 * port's loopback ring) or rxe's (inside the kernel driver, no netdev). Measured as a program
 * sees it: QP A posts -n messages of -s bytes in lists of -b (the last of each list signaled)
 * with at most -w outstanding, QP B (SEND) reposts its receive WQEs as they complete; prints
 * messages per second and MB/s of payload.
 *
 * A plain verbs program, built against rdma-core's <infiniband/verbs.h> and linked against the
 * system's libibverbs, so the same binary runs on rxe (in the soft-RoCE guest) and on dpverbs
 * through dpv-run (a port with an address from the configuration: port_addr). Every packet
 * crosses the whole RC path on both: segmentation by the path MTU, the frame with its ICRC,
 * the receive side (ICRC check, PSN check, rkey and range for WRITE, a receive WQE for SEND,
 * the copy), its ACK back, and the requester's completion of what the ACK covers.
 *
 *   bench-rc [-d DEV] [-x GID_INDEX] [-o write|send] [-s BYTES] [-n MESSAGES] [-b LIST]
 *            [-w OUTSTANDING] [-m MTU]
 *
 * -d: the device (the first one by default); -x: the GID both QPs use (1: the first address
 * of a dpverbs port or of an rxe device); -m: the path MTU in bytes (the port's active MTU by
 * default). A completion other than success ends the run with exit 1.
 * Output: "rc OP SIZE B: N messages in T s: R msg/s, M MB/s (DEV, path MTU P)". */
#include <errno.h>
#include <getopt.h>
#include <infiniband/verbs.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "dpv_test_wr.h"

#define RQ 512
#define MAX_SIZE (1u << 20)

struct bench {
	struct ibv_context *ctx;
	struct ibv_pd *pd;
	struct ibv_mr *mr;
	uint8_t *buf;           /* [0, size) the source, [MAX_SIZE, MAX_SIZE + size) the target */
	union ibv_gid gid;
	int gid_index;
	enum ibv_mtu mtu;
};

static double now(void)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return (double)t.tv_sec + (double)t.tv_nsec * 1e-9;
}

static void die(const char *what)
{
	fprintf(stderr, "bench-rc: %s: %s\n", what, strerror(errno));
	exit(1);
}

static struct ibv_context *open_device(const char *name)
{
	struct ibv_device **list = ibv_get_device_list(NULL);
	struct ibv_context *ctx = NULL;

	for (int i = 0; list != NULL && list[i] != NULL && ctx == NULL; i++)
		if (name == NULL || strcmp(ibv_get_device_name(list[i]), name) == 0)
			ctx = ibv_open_device(list[i]);
	if (ctx == NULL) {
		fprintf(stderr, "bench-rc: no device %s\n", name ? name : "at all");
		exit(1);
	}
	ibv_free_device_list(list);
	return ctx;
}

static enum ibv_mtu mtu_enum(int bytes)
{
	switch (bytes) {
	case 256: return IBV_MTU_256;
	case 512: return IBV_MTU_512;
	case 1024: return IBV_MTU_1024;
	case 2048: return IBV_MTU_2048;
	case 4096: return IBV_MTU_4096;
	default:
		fprintf(stderr, "bench-rc: -m 256, 512, 1024, 2048 or 4096\n");
		exit(2);
	}
}

static struct ibv_qp *rc_qp(struct bench *b, struct ibv_cq *cq)
{
	struct ibv_qp_init_attr a = { .send_cq = cq, .recv_cq = cq, .qp_type = IBV_QPT_RC,
				      .cap = { .max_send_wr = 1024, .max_recv_wr = RQ,
					       .max_send_sge = 1, .max_recv_sge = 1 } };
	struct ibv_qp_attr init = { .qp_state = IBV_QPS_INIT, .port_num = 1,
				    .qp_access_flags = IBV_ACCESS_REMOTE_WRITE };
	struct ibv_qp *qp = ibv_create_qp(b->pd, &a);

	if (qp == NULL || ibv_modify_qp(qp, &init, IBV_QP_STATE | IBV_QP_PKEY_INDEX | IBV_QP_PORT |
					IBV_QP_ACCESS_FLAGS) != 0)
		die("RC QP to INIT");
	return qp;
}

/* @qp to RTS, connected to QP number @dqpn at the device's own GID */
static void rc_connect(struct bench *b, struct ibv_qp *qp, uint32_t dqpn)
{
	struct ibv_qp_attr rtr = {
		.qp_state = IBV_QPS_RTR, .path_mtu = b->mtu, .dest_qp_num = dqpn,
		.rq_psn = 0, .max_dest_rd_atomic = 1, .min_rnr_timer = 1,
		.ah_attr = { .is_global = 1, .port_num = 1,
			     .grh = { .dgid = b->gid, .sgid_index = (uint8_t)b->gid_index,
				      .hop_limit = 64 } },
	};
	struct ibv_qp_attr rts = { .qp_state = IBV_QPS_RTS, .sq_psn = 0, .timeout = 14,
				   .retry_cnt = 7, .rnr_retry = 7, .max_rd_atomic = 1 };

	if (ibv_modify_qp(qp, &rtr, IBV_QP_STATE | IBV_QP_AV | IBV_QP_PATH_MTU | IBV_QP_DEST_QPN |
			  IBV_QP_RQ_PSN | IBV_QP_MAX_DEST_RD_ATOMIC | IBV_QP_MIN_RNR_TIMER) != 0 ||
	    ibv_modify_qp(qp, &rts, IBV_QP_STATE | IBV_QP_SQ_PSN | IBV_QP_TIMEOUT |
			  IBV_QP_RETRY_CNT | IBV_QP_RNR_RETRY | IBV_QP_MAX_QP_RD_ATOMIC) != 0)
		die("RC QP to RTS");
}

static void post_recvs(struct bench *b, struct ibv_qp *qp, uint32_t size, int n)
{
	struct ibv_sge sge = { (uintptr_t)(b->buf + MAX_SIZE), size, b->mr->lkey };
	struct ibv_recv_wr wr = { .sg_list = &sge, .num_sge = 1 }, *bad;

	for (int i = 0; i < n; i++)
		if (ibv_post_recv(qp, &wr, &bad) != 0)
			die("ibv_post_recv");
}

static int check(const struct ibv_wc *wc, int n, const char *what)
{
	for (int i = 0; i < n; i++)
		if (wc[i].status != IBV_WC_SUCCESS) {
			fprintf(stderr, "bench-rc: %s completion: %s\n", what,
				ibv_wc_status_str(wc[i].status));
			return -1;
		}
	return 0;
}

/* The device, its memory and the GID both QPs use. */
static void setup(struct bench *b, const char *dev, int mtu_bytes)
{
	struct ibv_port_attr port;

	b->ctx = open_device(dev);
	b->pd = ibv_alloc_pd(b->ctx);
	b->buf = aligned_alloc(4096, 2 * MAX_SIZE);
	if (b->pd == NULL || b->buf == NULL)
		die("PD or memory");
	b->mr = ibv_reg_mr(b->pd, b->buf, 2 * MAX_SIZE,
			   IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE);
	if (b->mr == NULL || ibv_query_port(b->ctx, 1, &port) != 0)
		die("ibv_reg_mr or ibv_query_port");
	if (ibv_query_gid(b->ctx, 1, b->gid_index, &b->gid) != 0)
		die("ibv_query_gid");
	if (memcmp(&b->gid, &(union ibv_gid){ 0 }, sizeof(b->gid)) == 0) {
		fprintf(stderr, "bench-rc: GID %d of %s is empty (give the port an address)\n",
			b->gid_index, ibv_get_device_name(b->ctx->device));
		exit(1);
	}
	b->mtu = mtu_bytes ? mtu_enum(mtu_bytes) : port.active_mtu;
}

/* QP A sends @n messages of @size bytes to QP B; returns the seconds it took. */
static double run(struct bench *b, bool send, uint32_t size, long n, uint32_t batch,
		  uint32_t window)
{
	struct ibv_cq *cq_a = ibv_create_cq(b->ctx, 2048, NULL, NULL, 0);
	struct ibv_cq *cq_b = ibv_create_cq(b->ctx, 2048, NULL, NULL, 0);
	long sent = 0, done = 0, received = 0;
	struct ibv_sge sge = { (uintptr_t)b->buf, size, b->mr->lkey };
	struct ibv_send_wr wr[64];
	struct ibv_wc wc[64];
	struct ibv_qp *qa, *qb;
	double t0;
	int c;

	if (cq_a == NULL || cq_b == NULL)
		die("ibv_create_cq");
	qa = rc_qp(b, cq_a);
	qb = rc_qp(b, cq_b);
	rc_connect(b, qa, qb->qp_num);
	rc_connect(b, qb, qa->qp_num);
	if (send)
		post_recvs(b, qb, size, RQ);
	t0 = now();
	while (done < n || (send && received < n)) {
		uint32_t k = 0;

		/* a SEND needs a receive WQE: never more outstanding than B has posted */
		while (k < batch && sent < n && sent - done < (long)window &&
		       (!send || sent - received < RQ)) {
			wr[k] = (struct ibv_send_wr){
				.wr_id = (uint64_t)sent, .sg_list = &sge, .num_sge = 1,
				.opcode = send ? IBV_WR_SEND : IBV_WR_RDMA_WRITE,
				.wr.rdma = { .remote_addr = (uintptr_t)(b->buf + MAX_SIZE),
					     .rkey = b->mr->rkey } };
			k++;
			sent++;
		}
		if (test_post_list(qa, wr, (int)k) != 0)
			die("ibv_post_send");
		/* one signaled WR completes its whole list (a list's WRs complete in order) */
		c = ibv_poll_cq(cq_a, 64, wc);
		if (c < 0 || check(wc, c, "requester") != 0)
			exit(1);
		for (int i = 0; i < c; i++)
			done = (long)wc[i].wr_id + 1;
		if (!send)
			continue;
		c = ibv_poll_cq(cq_b, 64, wc);
		if (c < 0 || check(wc, c, "receive") != 0)
			exit(1);
		received += c;
		post_recvs(b, qb, size, c);
	}
	t0 = now() - t0;
	ibv_destroy_qp(qa), ibv_destroy_qp(qb);
	ibv_destroy_cq(cq_a), ibv_destroy_cq(cq_b);
	return t0;
}

int main(int argc, char **argv)
{
	struct bench b = { .gid_index = 1 };
	uint32_t size = 64, batch = 16, window = 128;
	const char *dev = NULL;
	int c, mtu_bytes = 0;
	bool send = false;
	long n = 100000;
	double t;

	while ((c = getopt(argc, argv, "d:x:o:s:n:b:w:m:")) != -1) {
		if (c == 'o' && strcmp(optarg, "send") == 0)
			send = true;
		else if (c == 'o' && strcmp(optarg, "write") != 0)
			c = '?';
		if (c == 'd')
			dev = optarg;
		else if (c == 'x')
			b.gid_index = atoi(optarg);
		else if (c == 's')
			size = (uint32_t)atoi(optarg);
		else if (c == 'n')
			n = atol(optarg);
		else if (c == 'b')
			batch = (uint32_t)atoi(optarg);
		else if (c == 'w')
			window = (uint32_t)atoi(optarg);
		else if (c == 'm')
			mtu_bytes = atoi(optarg);
		if (c == '?') {
			fprintf(stderr, "usage: %s [-d dev] [-x gid_index] [-o write|send] [-s bytes] "
				"[-n messages] [-b list] [-w outstanding] [-m mtu]\n", argv[0]);
			return 2;
		}
	}
	if (size > MAX_SIZE || batch == 0 || batch > 64 || window < batch || window > 1024 ||
	    n <= 0) {
		fprintf(stderr, "bench-rc: -s at most %u, -b 1..64, -w -b..1024, -n > 0\n", MAX_SIZE);
		return 2;
	}
	setup(&b, dev, mtu_bytes);
	t = run(&b, send, size, n, batch, window);
	printf("rc %s %u B: %ld messages in %.3f s: %.0f msg/s, %.2f MB/s (%s, path MTU %d)\n",
	       send ? "send" : "write", size, n, t, (double)n / t, (double)n * size / t / 1e6,
	       ibv_get_device_name(b.ctx->device), 128 << b.mtu);
	ibv_dereg_mr(b.mr), ibv_dealloc_pd(b.pd), ibv_close_device(b.ctx);
	free(b.buf);
	return 0;
}
