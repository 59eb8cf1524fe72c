/* SPDX-License-Identifier: BSD-3-Clause */
/* A completion never comes before the PMD released the WR's buffers. net_ring keeps sent
 * mbufs in its ring until somebody receives them, and nobody does here: a zero-copy send
 * stays uncompleted however often the CQ is polled, its MR stays busy, and destroying the QP
 * gives up waiting without freeing what the port still points into. */
#include "dpv_test.h"

static uint8_t frame[1000];
/* still in use at exit (the ring holds a buffer of mr): kept where the exit can see them */
static struct ibv_context *ctx;
static struct ibv_pd *pd;
static struct ibv_mr *mr;

int main(void)
{
	struct ibv_cq *cq;
	struct ibv_qp *qp;

	ctx = test_open(NULL);
	pd = ibv_alloc_pd(ctx);
	cq = ibv_create_cq(ctx, 16, NULL, NULL, 0);
	qp = test_raw_qp(pd, cq, (struct ibv_qp_cap){ .max_send_wr = 8, .max_send_sge = 1 });
	mr = ibv_reg_mr(pd, frame, sizeof(frame), 0);
	struct ibv_mr *copy_mr = ibv_reg_mr(pd, frame, 64, 0);
	struct ibv_sge big = { (uintptr_t)frame, sizeof(frame), mr->lkey };
	struct ibv_sge small = { (uintptr_t)frame, 64, copy_mr->lkey };
	struct ibv_send_wr wr = { .wr_id = 1, .sg_list = &big, .num_sge = 1, .opcode = IBV_WR_SEND,
				  .send_flags = IBV_SEND_SIGNALED }, *bad;
	struct dpv_port_info info;
	struct ibv_wc wc;
	int got = 0;

	memset(frame, 0xff, 12);
	CHECK_EQ(dpv_query_port_info(ctx, &info), 0);
	CHECK(info.zero_copy && strcmp(info.driver, "net_ring") == 0);
	CHECK(sizeof(frame) > info.tx_copy_max);
	CHECK_EQ(ibv_post_send(qp, &wr, &bad), 0);
	for (int i = 0; i < 100000; i++)
		got += ibv_poll_cq(cq, 1, &wc);
	CHECK_EQ(got, 0);                                  /* the ring still holds it */
	CHECK_EQ(ibv_dereg_mr(mr), EBUSY);
	/* a copied frame holds nothing of the application: its MR can go at once */
	wr.sg_list = &small;
	wr.wr_id = 2;
	CHECK_EQ(ibv_post_send(qp, &wr, &bad), 0);
	CHECK_EQ(ibv_dereg_mr(copy_mr), 0);
	CHECK_EQ(ibv_poll_cq(cq, 1, &wc), 0);              /* in order: behind WR 1 */
	CHECK_EQ(ibv_destroy_qp(qp), 0);                   /* gives up after 1 s, keeps the SQ */
	CHECK_EQ(ibv_dereg_mr(mr), EBUSY);                 /* the ring still points into it */
	CHECK_EQ(ibv_destroy_cq(cq), 0);
	CHECK_EQ(ibv_dealloc_pd(pd), EBUSY);
	/* as rdma-core, close succeeds; the MR the port points into stays allocated */
	CHECK_EQ(ibv_close_device(ctx), 0);
	return test_done("held_buffers");
}
