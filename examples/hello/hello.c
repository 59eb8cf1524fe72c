/* SPDX-License-Identifier: BSD-3-Clause */
/* One Ethernet frame through a RAW_PACKET QP, with nothing but verbs calls. */
#include <infiniband/verbs.h>
#include <stdio.h>

static char frame[64] = "\xff\xff\xff\xff\xff\xff\x02\x00\x00\x00\x00\x01\x88\xb5hello";

/* RESET -> INIT (on port 1) -> RTR -> RTS: a RAW_PACKET QP needs no other attribute. */
static int bring_up(struct ibv_qp *qp)
{
	struct ibv_qp_attr attr = { .qp_state = IBV_QPS_INIT, .port_num = 1 };

	if (ibv_modify_qp(qp, &attr, IBV_QP_STATE | IBV_QP_PORT))
		return -1;
	attr.qp_state = IBV_QPS_RTR;
	if (ibv_modify_qp(qp, &attr, IBV_QP_STATE))
		return -1;
	attr.qp_state = IBV_QPS_RTS;
	return ibv_modify_qp(qp, &attr, IBV_QP_STATE) ? -1 : 0;
}

int main(void)
{
	struct ibv_device **devs = ibv_get_device_list(NULL);
	if (devs == NULL || devs[0] == NULL) {
		fprintf(stderr, "hello: no verbs device\n");
		return 1;
	}
	struct ibv_context *ctx = ibv_open_device(devs[0]);
	struct ibv_pd *pd = ctx ? ibv_alloc_pd(ctx) : NULL;
	struct ibv_cq *cq = pd ? ibv_create_cq(ctx, 16, NULL, NULL, 0) : NULL;
	struct ibv_qp_init_attr qpa = { .send_cq = cq, .recv_cq = cq, .qp_type = IBV_QPT_RAW_PACKET,
					.cap = { .max_send_wr = 16, .max_send_sge = 1 } };
	struct ibv_qp *qp = cq ? ibv_create_qp(pd, &qpa) : NULL;
	struct ibv_mr *mr = qp ? ibv_reg_mr(pd, frame, sizeof(frame), 0) : NULL;
	if (mr == NULL || bring_up(qp)) {
		perror("hello");
		return 1;
	}

	struct ibv_sge sge = { .addr = (uintptr_t)frame, .length = sizeof(frame), .lkey = mr->lkey };
	struct ibv_send_wr wr = { .wr_id = 1, .sg_list = &sge, .num_sge = 1,
				  .opcode = IBV_WR_SEND, .send_flags = IBV_SEND_SIGNALED };
	struct ibv_send_wr *bad;
	if (ibv_post_send(qp, &wr, &bad)) {
		perror("hello: ibv_post_send");
		return 1;
	}
	struct ibv_wc wc;
	while (ibv_poll_cq(cq, 1, &wc) == 0)
		; /* polling drives the send and its completion */
	printf("sent %zu bytes on %s: %s\n", sizeof(frame), ibv_get_device_name(devs[0]),
	       ibv_wc_status_str(wc.status));

	ibv_destroy_qp(qp);
	ibv_dereg_mr(mr);
	ibv_destroy_cq(cq);
	ibv_dealloc_pd(pd);
	ibv_close_device(ctx);
	ibv_free_device_list(devs);
	return wc.status != IBV_WC_SUCCESS;
}
