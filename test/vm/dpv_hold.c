/* SPDX-License-Identifier: BSD-3-Clause */
/* dpv_hold SECONDS: hold dpverbs' first port for the soft-RoCE VM test (run_rxe_test.sh) while
 * rxe resolves one of its addresses: a RAW_PACKET QP in RTS on the port, then sleep without
 * polling anything, so that only a service lcore (progress = 1 in DPV_CONFIG, a worker lcore
 * in DPV_EAL_ARGS) answers ARP/ND for the port's addresses, as it must when a dpverbs program
 * blocks elsewhere (in the pingpongs' TCP exchange, say) while a peer resolves it.
 * Prints the port's GIDs and "holding" once ready; closes the device and exits 0 after SECONDS
 * or at SIGTERM/SIGINT, 1 when the port or the QP cannot be had. */
#include <arpa/inet.h>
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <infiniband/verbs.h>

/* a handler, so that the signal ends sleep() and the device is closed on the way out */
static void wake(int sig)
{
	(void)sig;
}

static int to_rts(struct ibv_qp *qp)
{
	struct ibv_qp_attr a = { .qp_state = IBV_QPS_INIT, .port_num = 1 };

	if (ibv_modify_qp(qp, &a, IBV_QP_STATE | IBV_QP_PORT))
		return -1;
	a.qp_state = IBV_QPS_RTR;
	if (ibv_modify_qp(qp, &a, IBV_QP_STATE))
		return -1;
	a.qp_state = IBV_QPS_RTS;
	return ibv_modify_qp(qp, &a, IBV_QP_STATE) ? -1 : 0;
}

int main(int argc, char **argv)
{
	struct ibv_device **list = ibv_get_device_list(NULL);
	struct ibv_context *ctx = list && list[0] ? ibv_open_device(list[0]) : NULL;
	struct ibv_pd *pd = ctx ? ibv_alloc_pd(ctx) : NULL;
	struct ibv_cq *cq = pd ? ibv_create_cq(ctx, 16, NULL, NULL, 0) : NULL;
	struct ibv_qp_init_attr init = {
		.send_cq = cq, .recv_cq = cq, .qp_type = IBV_QPT_RAW_PACKET,
		.cap = { .max_send_wr = 4, .max_recv_wr = 4, .max_send_sge = 1, .max_recv_sge = 1 },
	};
	struct ibv_qp *qp = cq ? ibv_create_qp(pd, &init) : NULL;
	unsigned int seconds = argc > 1 ? (unsigned int)atoi(argv[1]) : 60;
	char text[INET6_ADDRSTRLEN];
	union ibv_gid gid;

	if (qp == NULL || to_rts(qp) != 0) {
		printf("dpv_hold: no port or no RAW_PACKET QP in RTS: %s\n", strerror(errno));
		return 1;
	}
	for (int i = 0; i < 4; i++)
		if (ibv_query_gid(ctx, 1, i, &gid) == 0 && gid.global.interface_id != 0 &&
		    inet_ntop(AF_INET6, gid.raw, text, sizeof(text)) != NULL)
			printf("dpv_hold: %s GID %d %s\n", ibv_get_device_name(list[0]), i, text);
	signal(SIGTERM, wake);
	signal(SIGINT, wake);
	printf("dpv_hold: holding for %u s\n", seconds);
	fflush(stdout);
	sleep(seconds);
	printf("dpv_hold: done\n");
	ibv_destroy_qp(qp);
	ibv_destroy_cq(cq);
	ibv_dealloc_pd(pd);
	ibv_close_device(ctx);
	ibv_free_device_list(list);
	return 0;
}
