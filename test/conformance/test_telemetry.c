/* SPDX-License-Identifier: BSD-3-Clause */
/* The program side of test_telemetry.sh: a direct and a service-mode QP that sent 10 and 5
 * frames, then the QP numbers and CQ ids written to $DPV_TEST_INFO; it waits (at most 30 s)
 * for $DPV_TEST_GO while dpdk-telemetry.py looks at it from outside. */
#include "dpv_test.h"

static uint8_t frame[64] = "\xff\xff\xff\xff\xff\xff\x02\x00\x00\x00\x00\x01\x88\xb5tele";

static void send_n(struct ibv_qp *qp, struct ibv_mr *mr, struct ibv_cq *cq, int n)
{
	struct ibv_sge sge = { (uintptr_t)frame, sizeof(frame), mr->lkey };
	struct ibv_wc wc[16];

	for (int i = 0; i < n; i++) {
		struct ibv_send_wr wr = { .wr_id = (uint64_t)i, .sg_list = &sge, .num_sge = 1,
					  .opcode = IBV_WR_SEND, .send_flags = IBV_SEND_SIGNALED },
				   *bad;

		CHECK_EQ(ibv_post_send(qp, &wr, &bad), 0);
	}
	CHECK_EQ(test_poll(cq, wc, n), n);
}

int main(void)
{
	const char *info = getenv("DPV_TEST_INFO"), *go = getenv("DPV_TEST_GO");
	struct ibv_context *ctx = test_open(NULL);
	struct ibv_pd *pd = ibv_alloc_pd(ctx);
	struct ibv_cq *cq1 = ibv_create_cq(ctx, 64, NULL, NULL, 0);
	struct ibv_cq *cq2 = ibv_create_cq(ctx, 32, NULL, NULL, 0);
	struct ibv_mr *mr = ibv_reg_mr(pd, frame, sizeof(frame), 0);
	struct ibv_qp_cap cap = { .max_send_wr = 16, .max_send_sge = 1, .max_recv_wr = 4,
				  .max_recv_sge = 1 };
	struct ibv_qp *direct = test_raw_qp(pd, cq1, cap);
	struct ibv_qp_init_attr a = { .send_cq = cq2, .recv_cq = cq2, .cap = cap,
				      .qp_type = IBV_QPT_RAW_PACKET };
	struct ibv_qp *svc = ibv_create_qp(pd, &a);
	FILE *f;

	CHECK(svc != NULL && dpv_qp_set_progress(svc, DPV_PROGRESS_SERVICE) == 0 &&
	      test_qp_to(svc, IBV_QPS_INIT) == 0 && test_qp_to(svc, IBV_QPS_RTR) == 0 &&
	      test_qp_to(svc, IBV_QPS_RTS) == 0, "service QP: %s", strerror(errno));
	send_n(direct, mr, cq1, 10);
	send_n(svc, mr, cq2, 5);
	f = info ? fopen(info, "w") : NULL;
	CHECK(f != NULL);
	if (f != NULL) {
		/* prefix qpn_direct qpn_service (CQ ids are 0 and 1: the first two of the process) */
		fprintf(f, "dpv-%d %u %u\n", (int)getpid(), direct->qp_num, svc->qp_num);
		fclose(f);
	}
	for (int i = 0; go && i < 3000 && access(go, F_OK) != 0; i++)
		usleep(10000);
	CHECK_EQ(ibv_destroy_qp(direct), 0);
	CHECK_EQ(ibv_destroy_qp(svc), 0);
	CHECK_EQ(ibv_dereg_mr(mr), 0);
	CHECK_EQ(ibv_destroy_cq(cq1), 0);
	CHECK_EQ(ibv_destroy_cq(cq2), 0);
	return test_finish(ctx, pd, "telemetry");
}
