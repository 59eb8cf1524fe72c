/* SPDX-License-Identifier: BSD-3-Clause */
/* bench-ud: UD datagrams through the loopback of one port, measured as a program sees them:
 * a QP sends -n datagrams of -s bytes to another QP of the device in lists of -b (each WR
 * signaled every -b), the receiver reposts what it gets; prints datagrams per second and
 * MB/s of payload. Every datagram crosses the whole UD path: the frame built by copy with its
 * ICRC, the device's loopback ring, the receive demux (parse and ICRC check), the GRH and
 * payload copied into the receive buffer, both completions. The same run with -r sends RAW
 * frames of the same size through a net_ring port into a RAW QP's flow, the comparison.
 * DPV_EAL_ARGS: --vdev=net_ring0 (by default). Use valgrind --tool=callgrind with two -n to
 * count instructions per datagram regardless of the machine's load. */
#include <getopt.h>

#include "dpv_test_ud.h"
#include "dpv_test_wr.h"

#define QKEY 0x77
#define RQ 512

static struct ibv_pd *pd;
static struct ibv_cq *scq, *rcq;
static struct ibv_mr *mr;
static uint8_t *buf;

static void post_recvs(struct ibv_qp *qp, int n, uint32_t len)
{
	for (int i = 0; i < n; i++) {
		struct ibv_sge sge = { (uintptr_t)buf + 65536 + (size_t)(i % RQ) * 16384, len,
				       mr->lkey };
		struct ibv_recv_wr wr = { .wr_id = (uint64_t)i, .sg_list = &sge, .num_sge = 1 }, *bad;

		if (ibv_post_recv(qp, &wr, &bad) != 0) {
			fprintf(stderr, "post_recv: %s\n", strerror(errno));
			exit(1);
		}
	}
}

static struct ibv_qp *ud_qp(struct ibv_cq *cq)
{
	struct ibv_qp_init_attr a = { .send_cq = cq, .recv_cq = cq, .qp_type = IBV_QPT_UD,
				      .cap = { .max_send_wr = 256, .max_recv_wr = RQ,
					       .max_send_sge = 1, .max_recv_sge = 1 } };
	struct ibv_qp *qp = ibv_create_qp(pd, &a);

	if (qp == NULL || ud_to_init(qp, QKEY) || ud_to_state(qp, IBV_QPS_RTR, 0, 0) ||
	    ud_to_state(qp, IBV_QPS_RTS, IBV_QP_SQ_PSN, 0)) {
		fprintf(stderr, "UD QP: %s\n", strerror(errno));
		exit(1);
	}
	return qp;
}

static struct ibv_qp *raw_qp_flow(struct ibv_context *ctx)
{
	struct ibv_qp_init_attr a = { .send_cq = scq, .recv_cq = rcq, .qp_type = IBV_QPT_RAW_PACKET,
				      .cap = { .max_send_wr = 256, .max_recv_wr = RQ,
					       .max_send_sge = 1, .max_recv_sge = 1 } };
	struct ibv_qp *qp = ibv_create_qp(pd, &a);
	struct ibv_flow_attr fa = { .type = IBV_FLOW_ATTR_ALL_DEFAULT, .size = sizeof(fa),
				    .port = 1 };

	if (qp == NULL || test_qp_to(qp, IBV_QPS_INIT) || test_qp_to(qp, IBV_QPS_RTR) ||
	    test_qp_to(qp, IBV_QPS_RTS) || ibv_create_flow(qp, &fa) == NULL) {
		fprintf(stderr, "RAW QP: %s\n", strerror(errno));
		exit(1);
	}
	return qp;
}

int main(int argc, char **argv)
{
	uint32_t size = 64, batch = 32;
	long n = 200000, sent = 0, got = 0;
	bool raw = false;
	struct ibv_context *ctx;
	struct ibv_qp *qs, *qr;
	struct ibv_ah *ah = NULL;
	union ibv_gid g;
	struct ibv_wc wc[64];
	double t0, t1;
	int c;

	while ((c = getopt(argc, argv, "s:n:b:r")) != -1) {
		if (c == 's')
			size = (uint32_t)atoi(optarg);
		else if (c == 'n')
			n = atol(optarg);
		else if (c == 'b')
			batch = (uint32_t)atoi(optarg);
		else if (c == 'r')
			raw = true;
	}
	if (getenv("DPV_EAL_ARGS") == NULL)
		setenv("DPV_EAL_ARGS", "--vdev=net_ring0 --log-level=lib.eal:error", 1);
	ctx = test_open(NULL);
	pd = ibv_alloc_pd(ctx);
	scq = ibv_create_cq(ctx, 1024, NULL, NULL, 0);
	rcq = ibv_create_cq(ctx, 1024, NULL, NULL, 0);
	buf = aligned_alloc(4096, 65536 + RQ * 16384);
	mr = ibv_reg_mr(pd, buf, 65536 + RQ * 16384, IBV_ACCESS_LOCAL_WRITE);
	if (mr == NULL || batch == 0 || batch > 64 || dpv_port_add_addr(ctx, "10.5.0.1") != 0) {
		fprintf(stderr, "setup\n");
		return 1;
	}
	memset(buf, 0x42, 65536);
	if (raw) {
		qs = test_raw_qp(pd, scq, (struct ibv_qp_cap){ .max_send_wr = 256,
							       .max_send_sge = 1 });
		qr = raw_qp_flow(ctx);
		memcpy(buf, "\x02\0\0\0\0\x02\x02\0\0\0\0\x01\x88\xb5", 14);
	} else {
		qs = ud_qp(scq);
		qr = ud_qp(rcq);
		gid_v4(&g, "10.5.0.1");
		ah = ud_ah(pd, 1, &g, 0, 0, 64);
	}
	post_recvs(qr, RQ, 16384);
	t0 = test_now();
	while (got < n) {
		struct ibv_send_wr wr[64];
		struct ibv_sge sge = { (uintptr_t)buf, size, mr->lkey };
		int k = 0;

		for (uint32_t i = 0; i < batch && sent < n && sent - got < RQ - (long)batch; i++) {
			wr[k] = (struct ibv_send_wr){ .wr_id = (uint64_t)sent, .sg_list = &sge,
						      .num_sge = 1, .opcode = IBV_WR_SEND,
						      .wr.ud = { .ah = ah, .remote_qpn = qr->qp_num,
								 .remote_qkey = QKEY } };
			k++;
			sent++;
		}
		if (test_post_list(qs, wr, k) != 0) {
			fprintf(stderr, "post_send: %s\n", strerror(errno));
			return 1;
		}
		ibv_poll_cq(scq, 64, wc);
		c = ibv_poll_cq(rcq, 64, wc);
		for (int i = 0; i < c; i++)
			if (wc[i].status != IBV_WC_SUCCESS) {
				fprintf(stderr, "receive: %s\n", ibv_wc_status_str(wc[i].status));
				return 1;
			}
		got += c;
		if (c > 0)
			post_recvs(qr, c, 16384);
	}
	t1 = test_now();
	printf("%s %u B: %ld datagrams in %.3f s: %.3f Mdgram/s, %.1f MB/s\n", raw ? "raw" : "ud",
	       size, n, t1 - t0, (double)n / (t1 - t0) / 1e6,
	       (double)n * size / (t1 - t0) / 1e6);
	return 0;
}
