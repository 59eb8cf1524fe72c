/* SPDX-License-Identifier: BSD-3-Clause */
/* The RAW_PACKET QP state machine through ibv_modify_qp: every (current, next) pair, the
 * required and optional attributes, and SQE reached by a send error and left for RTS.
 * The expected table is written out here from the IB spec, not taken from the library. */
#include "dpv_test.h"

#define NS (IBV_QPS_ERR + 1)
static const char *const names[NS] = { "RESET", "INIT", "RTR", "RTS", "SQD", "SQE", "ERR" };

/* valid[cur][next] for RAW_PACKET with the minimal mask (PORT into INIT from RESET) */
static const bool valid[NS][NS] = {
	[IBV_QPS_RESET] = { [IBV_QPS_RESET] = 1, [IBV_QPS_INIT] = 1, [IBV_QPS_ERR] = 1 },
	[IBV_QPS_INIT] = { [IBV_QPS_RESET] = 1, [IBV_QPS_INIT] = 1, [IBV_QPS_RTR] = 1,
			   [IBV_QPS_ERR] = 1 },
	[IBV_QPS_RTR] = { [IBV_QPS_RESET] = 1, [IBV_QPS_RTS] = 1, [IBV_QPS_ERR] = 1 },
	[IBV_QPS_RTS] = { [IBV_QPS_RESET] = 1, [IBV_QPS_RTS] = 1, [IBV_QPS_SQD] = 1,
			  [IBV_QPS_ERR] = 1 },
	[IBV_QPS_SQD] = { [IBV_QPS_RESET] = 1, [IBV_QPS_RTS] = 1, [IBV_QPS_SQD] = 1,
			  [IBV_QPS_ERR] = 1 },
	[IBV_QPS_SQE] = { [IBV_QPS_RESET] = 1, [IBV_QPS_RTS] = 1, [IBV_QPS_ERR] = 1 },
	[IBV_QPS_ERR] = { [IBV_QPS_RESET] = 1, [IBV_QPS_ERR] = 1 },
};

static struct ibv_cq *cq;
static uint8_t frame[64];

static int modify(struct ibv_qp *qp, enum ibv_qp_state s, int extra)
{
	struct ibv_qp_attr a = { .qp_state = s, .port_num = 1 };

	return ibv_modify_qp(qp, &a, IBV_QP_STATE | extra);
}

static enum ibv_qp_state state_of(struct ibv_qp *qp)
{
	struct ibv_qp_attr a;
	struct ibv_qp_init_attr i;

	ibv_query_qp(qp, &a, IBV_QP_STATE, &i);
	return a.qp_state;
}

/* A send whose lkey names no MR fails when it executes: the QP goes to SQE. */
static void force_sqe(struct ibv_qp *qp)
{
	struct ibv_sge sge = { (uintptr_t)frame, sizeof(frame), 0xdead };
	struct ibv_send_wr wr = { .wr_id = 7, .sg_list = &sge, .num_sge = 1,
				  .opcode = IBV_WR_SEND }, *bad;
	struct ibv_wc wc;

	CHECK_EQ(ibv_post_send(qp, &wr, &bad), 0);
	CHECK_EQ(test_poll(cq, &wc, 1), 1);
	CHECK_EQ(wc.status, IBV_WC_LOC_PROT_ERR);
	CHECK_EQ(wc.wr_id, 7);
}

/* Bring @qp from RESET to @s along valid transitions. */
static void reach(struct ibv_qp *qp, enum ibv_qp_state s)
{
	static const enum ibv_qp_state path[] = { IBV_QPS_INIT, IBV_QPS_RTR, IBV_QPS_RTS };

	CHECK_EQ(modify(qp, IBV_QPS_RESET, 0), 0);
	if (s == IBV_QPS_RESET)
		return;
	if (s == IBV_QPS_ERR) {
		CHECK_EQ(modify(qp, IBV_QPS_ERR, 0), 0);
		return;
	}
	for (int i = 0; i < 3; i++) {
		CHECK_EQ(modify(qp, path[i], path[i] == IBV_QPS_INIT ? IBV_QP_PORT : 0), 0);
		if (path[i] == s)
			return;
	}
	if (s == IBV_QPS_SQD)
		CHECK_EQ(modify(qp, IBV_QPS_SQD, 0), 0);
	else if (s == IBV_QPS_SQE)
		force_sqe(qp);
	CHECK_EQ(state_of(qp), s);
}

static void check_all_pairs(struct ibv_qp *qp)
{
	for (int cur = 0; cur < NS; cur++) {
		for (int next = 0; next < NS; next++) {
			int extra = cur == IBV_QPS_RESET && next == IBV_QPS_INIT ? IBV_QP_PORT : 0;
			int rc;

			reach(qp, cur);
			rc = modify(qp, next, extra);
			CHECK(rc == (valid[cur][next] ? 0 : EINVAL), "%s -> %s: %d",
			      names[cur], names[next], rc);
			CHECK_EQ(state_of(qp), valid[cur][next] ? next : cur);
		}
	}
}

static void check_masks(struct ibv_qp *qp)
{
	struct ibv_qp_attr a = { .qp_state = IBV_QPS_INIT, .port_num = 2 };

	reach(qp, IBV_QPS_RESET);
	CHECK_EQ(modify(qp, IBV_QPS_INIT, 0), EINVAL);                         /* PORT required */
	CHECK_EQ(modify(qp, IBV_QPS_INIT, IBV_QP_PORT | IBV_QP_QKEY), EINVAL); /* QKEY not for RAW */
	CHECK_EQ(ibv_modify_qp(qp, &a, IBV_QP_STATE | IBV_QP_PORT), EINVAL);   /* no port 2 */
	CHECK_EQ(state_of(qp), IBV_QPS_RESET);
	CHECK_EQ(modify(qp, IBV_QPS_INIT, IBV_QP_PORT), 0);
	CHECK_EQ(modify(qp, IBV_QPS_RTR, IBV_QP_AV), EINVAL);                  /* AV not for RAW */
	CHECK_EQ(modify(qp, IBV_QPS_RTR, 0), 0);
	CHECK_EQ(modify(qp, IBV_QPS_RTS, IBV_QP_CUR_STATE), EINVAL);           /* not for RAW */
	CHECK_EQ(modify(qp, IBV_QPS_RTS, IBV_QP_SQ_PSN), EINVAL);              /* UD/UC/RC only */
	CHECK_EQ(modify(qp, IBV_QPS_RTS, IBV_QP_RATE_LIMIT), 0);               /* rate 0: none */
	a = (struct ibv_qp_attr){ .qp_state = IBV_QPS_RTS, .rate_limit = 400000001 };
	CHECK_EQ(ibv_modify_qp(qp, &a, IBV_QP_STATE | IBV_QP_RATE_LIMIT), EINVAL); /* above max */
	a.rate_limit = 1000;                                                    /* paced */
	CHECK_EQ(ibv_modify_qp(qp, &a, IBV_QP_STATE | IBV_QP_RATE_LIMIT), 0);
	a.rate_limit = 0;                                                       /* and not */
	CHECK_EQ(ibv_modify_qp(qp, &a, IBV_QP_RATE_LIMIT), 0);
	/* a mask without STATE modifies attributes in place */
	CHECK_EQ(ibv_modify_qp(qp, &a, 0), 0);
	CHECK_EQ(state_of(qp), IBV_QPS_RTS);
	CHECK(qp->state == IBV_QPS_RTS, "ibv_qp.state not kept up to date");
}

/* SQE: the receive side goes on; RTS recovers and sends resume. */
static void check_sqe_recovery(struct ibv_qp *qp, struct ibv_mr *mr)
{
	struct ibv_sge sge = { (uintptr_t)frame, sizeof(frame), mr->lkey };
	struct ibv_send_wr wr = { .wr_id = 9, .sg_list = &sge, .num_sge = 1,
				  .opcode = IBV_WR_SEND, .send_flags = IBV_SEND_SIGNALED }, *bad;
	struct ibv_wc wc;

	reach(qp, IBV_QPS_SQE);
	CHECK_EQ(ibv_post_send(qp, &wr, &bad), 0);          /* accepted in SQE, then flushed */
	CHECK_EQ(test_poll(cq, &wc, 1), 1);
	CHECK_EQ(wc.status, IBV_WC_WR_FLUSH_ERR);
	CHECK_EQ(modify(qp, IBV_QPS_RTS, 0), 0);
	CHECK_EQ(ibv_post_send(qp, &wr, &bad), 0);
	CHECK_EQ(test_poll(cq, &wc, 1), 1);
	CHECK_EQ(wc.status, IBV_WC_SUCCESS);
	CHECK_EQ(wc.opcode, IBV_WC_SEND);
	CHECK_EQ(wc.qp_num, qp->qp_num);
	/* sends are refused before RTS */
	reach(qp, IBV_QPS_RTR);
	CHECK_EQ(ibv_post_send(qp, &wr, &bad), EINVAL);
	CHECK(bad == &wr);
}

int main(void)
{
	struct ibv_context *ctx = test_open(NULL);
	struct ibv_pd *pd = ibv_alloc_pd(ctx);
	struct ibv_qp_init_attr init = { .qp_type = IBV_QPT_RAW_PACKET,
					 .cap = { .max_send_wr = 16, .max_send_sge = 1 } };
	struct ibv_mr *mr = ibv_reg_mr(pd, frame, sizeof(frame), 0);
	struct ibv_qp *qp;

	memset(frame, 0xab, sizeof(frame));
	cq = ibv_create_cq(ctx, 64, NULL, NULL, 0);
	init.send_cq = init.recv_cq = cq;
	qp = ibv_create_qp(pd, &init);
	CHECK(qp != NULL && mr != NULL);
	check_all_pairs(qp);
	check_masks(qp);
	check_sqe_recovery(qp, mr);
	CHECK_EQ(ibv_destroy_qp(qp), 0);
	CHECK_EQ(ibv_dereg_mr(mr), 0);
	CHECK_EQ(ibv_destroy_cq(cq), 0);
	return test_finish(ctx, pd, "qp_state");
}
