/* SPDX-License-Identifier: BSD-3-Clause */
/* ud_probe: can dpverbs create the UD QP that ibv_ud_pingpong creates? run_rxe_test.sh asks
 * before its interop steps boot a VM, on the port DPV_EAL_ARGS names (net_null will do): any
 * answer but 0 fails the test at once, with this program's line as the reason.
 * Prints one line. Exit 0: the QP was created and moved to INIT with pingpong's attributes;
 * 77: ibv_create_qp(UD) answered EOPNOTSUPP (no UD transport in this build: a regression);
 * 1: anything else (no device, or UD refused some other way). */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include <infiniband/verbs.h>

int main(void)
{
	struct ibv_device **list = ibv_get_device_list(NULL);
	struct ibv_context *ctx = list && list[0] ? ibv_open_device(list[0]) : NULL;
	struct ibv_pd *pd = ctx ? ibv_alloc_pd(ctx) : NULL;
	struct ibv_cq *cq = pd ? ibv_create_cq(ctx, 501, NULL, NULL, 0) : NULL;
	struct ibv_qp_init_attr init = {
		.send_cq = cq, .recv_cq = cq, .qp_type = IBV_QPT_UD,
		.cap = { .max_send_wr = 1, .max_recv_wr = 500, .max_send_sge = 1, .max_recv_sge = 1 },
	};
	struct ibv_qp_attr attr = {
		.qp_state = IBV_QPS_INIT, .pkey_index = 0, .port_num = 1, .qkey = 0x11111111,
	};
	struct ibv_qp *qp;
	int rc = 1, err;

	if (cq == NULL) {
		printf("ud_probe: no device, PD or CQ: %s\n", strerror(errno));
		return 1;
	}
	qp = ibv_create_qp(pd, &init);
	err = errno;
	if (qp == NULL && err == EOPNOTSUPP) {
		printf("dpverbs has no UD QPs yet (ibv_create_qp(IBV_QPT_UD): %s)\n", strerror(err));
		rc = 77;
	} else if (qp == NULL) {
		printf("ibv_create_qp(IBV_QPT_UD) failed: %s\n", strerror(err));
	} else if ((err = ibv_modify_qp(qp, &attr, IBV_QP_STATE | IBV_QP_PKEY_INDEX |
					IBV_QP_PORT | IBV_QP_QKEY)) != 0) {
		printf("a UD QP (QPN %#x) does not go to INIT: %s\n", qp->qp_num, strerror(err));
	} else {
		printf("dpverbs has UD QPs (QPN %#x created, in INIT)\n", qp->qp_num);
		rc = 0;
	}
	if (qp != NULL)
		ibv_destroy_qp(qp);
	ibv_destroy_cq(cq);
	ibv_dealloc_pd(pd);
	ibv_close_device(ctx);
	ibv_free_device_list(list);
	return rc;
}
