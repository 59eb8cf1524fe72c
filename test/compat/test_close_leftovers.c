/* SPDX-License-Identifier: BSD-3-Clause */
/* ibv_close_device with objects left, as perftest and many programs do: it frees what the
 * context holds (flows, QPs with sends in flight, a UD QP in a multicast group with datagrams
 * to itself in the port's loopback ring, address handles, MRs, CQs, their channel, a channel
 * no CQ uses, parent domains, PDs, TDs) and returns 0, as rdma-core; the process gets its file
 * descriptors back (LeakSanitizer, in the sanitized build, finds no memory left either), and
 * the device opens, sends and closes again. */
#include <dirent.h>

#include "dpv_test.h"

static int count_fds(void)
{
	DIR *d = opendir("/proc/self/fd");
	int n = 0;

	while (d != NULL && readdir(d) != NULL)
		n++;
	if (d != NULL)
		closedir(d);
	return n;
}

static uint8_t frame[64] = { 0x02, 0, 0, 0, 0, 2, 0x02, 0, 0, 0, 0, 1, 0x88, 0xb5 };

/* Post @n signaled sends of frame on @qp; returns how many the CQ completed successfully
 * (at most @wait of them are waited for). */
static int send_frames(struct ibv_qp *qp, struct ibv_cq *cq, struct ibv_mr *mr, int n, int wait)
{
	struct ibv_sge sge = { (uintptr_t)frame, sizeof(frame), mr->lkey };
	struct ibv_send_wr wr = { .sg_list = &sge, .num_sge = 1, .opcode = IBV_WR_SEND,
				  .send_flags = IBV_SEND_SIGNALED }, *bad;
	struct ibv_wc wc[16];
	int ok = 0;

	for (int i = 0; i < n; i++) {
		wr.wr_id = (uint64_t)i;
		if (ibv_post_send(qp, &wr, &bad) != 0)
			return -1;
	}
	for (int got = 0; got < wait;) {
		int k = test_poll(cq, wc, wait - got < 16 ? wait - got : 16);

		if (k <= 0)
			break;
		for (int i = 0; i < k; i++)
			ok += wc[i].status == IBV_WC_SUCCESS;
		got += k;
	}
	return ok;
}

/* A UD QP attached to a group, an AH to the port's link-local GID, datagrams to itself
 * posted and not received (in the loopback ring, or in its RQ's completions). */
static void leave_ud(struct ibv_context *ctx, struct ibv_pd *pd, struct ibv_cq *cq)
{
	struct ibv_qp_init_attr a = { .send_cq = cq, .recv_cq = cq, .qp_type = IBV_QPT_UD,
				      .cap = { .max_send_wr = 16, .max_recv_wr = 4,
					       .max_send_sge = 1, .max_recv_sge = 1,
					       .max_inline_data = 64 } };
	struct ibv_qp *qp = ibv_create_qp(pd, &a);
	struct ibv_qp_attr qa = { .qp_state = IBV_QPS_INIT, .port_num = 1, .qkey = 5 };
	struct ibv_ah_attr aa = { .is_global = 1, .port_num = 1, .grh.hop_limit = 1 };
	union ibv_gid grp = { .raw = { 0xff, 0x0e, [15] = 7 } };
	struct ibv_ah *ah;
	struct ibv_send_wr wr = { .opcode = IBV_WR_SEND, .send_flags = IBV_SEND_INLINE,
				  .sg_list = &(struct ibv_sge){ (uintptr_t)frame, 16, 0 },
				  .num_sge = 1 }, *bad;

	CHECK(qp != NULL && ibv_modify_qp(qp, &qa, IBV_QP_STATE | IBV_QP_PKEY_INDEX |
					  IBV_QP_PORT | IBV_QP_QKEY) == 0 &&
	      test_qp_to(qp, IBV_QPS_RTR) == 0, "UD QP: %s", strerror(errno));
	qa.qp_state = IBV_QPS_RTS;
	CHECK_EQ(ibv_modify_qp(qp, &qa, IBV_QP_STATE | IBV_QP_SQ_PSN), 0);
	CHECK_EQ(ibv_query_gid(ctx, 1, 0, &aa.grh.dgid), 0);
	ah = ibv_create_ah(pd, &aa);
	CHECK(ah != NULL, "ibv_create_ah: %s", strerror(errno));
	CHECK_EQ(ibv_attach_mcast(qp, &grp, 0), 0);
	wr.wr.ud.ah = ah;
	wr.wr.ud.remote_qpn = qp->qp_num;
	wr.wr.ud.remote_qkey = 5;
	for (int i = 0; ah != NULL && i < 8; i++)
		CHECK_EQ(ibv_post_send(qp, &wr, &bad), 0);
}

/* Everything a program may hold, none of it destroyed. */
static void leave_everything(struct ibv_context *ctx)
{
	struct ibv_pd *pd = ibv_alloc_pd(ctx);
	struct ibv_td *td = ibv_alloc_td(ctx, &(struct ibv_td_init_attr){ 0 });
	struct ibv_parent_domain_init_attr pa = { .pd = pd, .td = td };
	struct ibv_pd *parent = pd && td ? ibv_alloc_parent_domain(ctx, &pa) : NULL;
	struct ibv_comp_channel *ch = ibv_create_comp_channel(ctx);
	struct ibv_comp_channel *unused = ibv_create_comp_channel(ctx);   /* no CQ on it */
	struct ibv_cq *cq1 = ch ? ibv_create_cq(ctx, 64, NULL, ch, 0) : NULL;
	struct ibv_cq *cq2 = ibv_create_cq(ctx, 64, NULL, NULL, 0);
	struct ibv_mr *mr = pd ? ibv_reg_mr(pd, frame, sizeof(frame), 0) : NULL;
	struct ibv_qp_cap cap = { .max_send_wr = 32, .max_recv_wr = 8, .max_send_sge = 1,
				  .max_recv_sge = 1 };
	struct ibv_qp *qp1, *qp2;
	struct {
		struct ibv_flow_attr attr;
		struct ibv_flow_spec_eth eth;
	} fa = {
		.attr = { .type = IBV_FLOW_ATTR_NORMAL, .size = sizeof(fa), .num_of_specs = 1,
			  .port = 1 },
		.eth = { .type = IBV_FLOW_SPEC_ETH, .size = sizeof(fa.eth),
			 .val.dst_mac = { 0x02, 0, 0, 0, 0, 1 },
			 .mask.dst_mac = { 0xff, 0xff, 0xff, 0xff, 0xff, 0xff } },
	};

	CHECK(parent != NULL && cq1 != NULL && cq2 != NULL && mr != NULL && unused != NULL,
	      "objects: %s",
	      strerror(errno));
	if (parent == NULL || cq1 == NULL || cq2 == NULL || mr == NULL)
		return;
	qp1 = test_raw_qp(parent, cq1, cap);
	qp2 = test_raw_qp(pd, cq2, cap);
	CHECK_EQ(ibv_req_notify_cq(cq1, 0), 0);
	CHECK(ibv_create_flow(qp2, &fa.attr) != NULL, "ibv_create_flow: %s", strerror(errno));
	CHECK_EQ(send_frames(qp1, cq1, mr, 4, 4), 4);
	/* 20 sends in flight, 5 completions polled: the rest stay in the SQ and the CQ */
	CHECK_EQ(send_frames(qp2, cq2, mr, 20, 5), 5);
	leave_ud(ctx, pd, cq2);
}

int main(void)
{
	struct ibv_context *ctx = test_open(NULL), *other;
	struct ibv_pd *pd;
	struct ibv_cq *cq;
	struct ibv_mr *mr;
	struct ibv_qp *qp;
	int fds;

	/* the descriptors of a process whose device was opened and closed cleanly (DPDK's stay) */
	CHECK_EQ(ibv_close_device(ctx), 0);
	fds = count_fds();
	ctx = test_open(NULL);
	leave_everything(ctx);
	CHECK_EQ(ibv_close_device(ctx), 0);
	CHECK(count_fds() == fds, "file descriptors after close: %d, after a clean close: %d",
	      count_fds(), fds);

	/* the device again: a full send, everything left again */
	ctx = test_open(NULL);
	pd = ibv_alloc_pd(ctx);
	cq = ibv_create_cq(ctx, 16, NULL, NULL, 0);
	mr = ibv_reg_mr(pd, frame, sizeof(frame), 0);
	qp = test_raw_qp(pd, cq, (struct ibv_qp_cap){ .max_send_wr = 16, .max_send_sge = 1 });
	CHECK(mr != NULL, "ibv_reg_mr after a close: %s", strerror(errno));
	if (mr != NULL)
		CHECK_EQ(send_frames(qp, cq, mr, 8, 8), 8);
	CHECK_EQ(ibv_close_device(ctx), 0);

	/* two contexts on one device: closing one with its objects leaves the other working */
	ctx = test_open(NULL);
	other = test_open(NULL);
	leave_everything(ctx);
	CHECK_EQ(ibv_close_device(ctx), 0);
	pd = ibv_alloc_pd(other);
	cq = ibv_create_cq(other, 16, NULL, NULL, 0);
	mr = ibv_reg_mr(pd, frame, sizeof(frame), 0);
	qp = test_raw_qp(pd, cq, (struct ibv_qp_cap){ .max_send_wr = 16, .max_send_sge = 1 });
	if (mr != NULL)
		CHECK_EQ(send_frames(qp, cq, mr, 8, 8), 8);
	CHECK_EQ(ibv_close_device(other), 0);
	CHECK(count_fds() == fds, "file descriptors at the end: %d, after a clean close: %d",
	      count_fds(), fds);
	return test_done("close_leftovers");
}
