/* SPDX-License-Identifier: BSD-3-Clause */
/* csum_pipeline: a forwarding pipeline on verbs. Frames received on a RAW_PACKET QP (an
 * ALL_DEFAULT flow: everything the port gets) have their MAC addresses swapped and their IPv4
 * TTL / IPv6 hop limit decremented in place, and go back out with IBV_SEND_IP_CSUM: whatever
 * checksums they came with, they leave with right ones.
 *
 *   csum_pipeline [-i in.pcap] [-o out.pcap] [-n frames]
 *
 * With no DPV_EAL_ARGS it runs on an embedded net_pcap port reading in.pcap and writing
 * out.pcap; it stops after -n frames or half a second without one. */
#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <infiniband/verbs.h>

#define SLOTS 256
#define SLOT_SIZE 2048

static double now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec * 1e-9;
}

static int post_recv(struct ibv_qp *qp, struct ibv_mr *mr, int slot)
{
	struct ibv_sge sge = { (uintptr_t)mr->addr + (size_t)slot * SLOT_SIZE, SLOT_SIZE, mr->lkey };
	struct ibv_recv_wr wr = { .wr_id = (uint64_t)slot, .sg_list = &sge, .num_sge = 1 }, *bad;

	return ibv_post_recv(qp, &wr, &bad);
}

/* Swap the MAC addresses; decrement TTL or hop limit (checksums: the port's or dpverbs' job). */
static void rewrite(uint8_t *f, uint32_t len)
{
	uint8_t mac[6];
	uint32_t l3 = 14;

	memcpy(mac, f, 6);
	memcpy(f, f + 6, 6);
	memcpy(f + 6, mac, 6);
	while (len >= l3 + 4 && f[l3 - 2] == 0x81 && f[l3 - 1] == 0x00)
		l3 += 4;                                   /* VLAN tags */
	if (len >= l3 + 20 && f[l3 - 2] == 0x08 && f[l3 - 1] == 0x00 && f[l3 + 8] > 0)
		f[l3 + 8]--;
	else if (len >= l3 + 40 && f[l3 - 2] == 0x86 && f[l3 - 1] == 0xdd && f[l3 + 7] > 0)
		f[l3 + 7]--;
}

static int forward(struct ibv_qp *qp, struct ibv_mr *mr, const struct ibv_wc *wc)
{
	int slot = (int)wc->wr_id;
	uint8_t *f = (uint8_t *)mr->addr + (size_t)slot * SLOT_SIZE;
	struct ibv_sge sge = { (uintptr_t)f, wc->byte_len, mr->lkey };
	struct ibv_send_wr wr = { .wr_id = (uint64_t)slot, .sg_list = &sge, .num_sge = 1,
				  .opcode = IBV_WR_SEND,
				  .send_flags = IBV_SEND_SIGNALED | IBV_SEND_IP_CSUM }, *bad;

	rewrite(f, wc->byte_len);
	return ibv_post_send(qp, &wr, &bad);
}

int main(int argc, char **argv)
{
	const char *in = "in.pcap", *out = "out.pcap";
	long limit = -1, received = 0, forwarded = 0;
	static char eal[512];
	struct ibv_device **devs;
	struct ibv_context *ctx;
	struct ibv_pd *pd;
	struct ibv_cq *cq;
	struct ibv_qp *qp;
	struct ibv_mr *mr;
	struct ibv_flow *flow;
	struct ibv_flow_attr fa = { .type = IBV_FLOW_ATTR_ALL_DEFAULT, .size = sizeof(fa), .port = 1 };
	struct ibv_qp_init_attr qa = { .qp_type = IBV_QPT_RAW_PACKET,
				       .cap = { .max_send_wr = SLOTS, .max_send_sge = 1,
						.max_recv_wr = SLOTS, .max_recv_sge = 1 } };
	void *buf;
	double start, last;
	int c, rc = 0;

	while ((c = getopt(argc, argv, "i:o:n:")) != -1) {
		switch (c) {
		case 'i': in = optarg; break;
		case 'o': out = optarg; break;
		case 'n': limit = atol(optarg); break;
		default: return 2;
		}
	}
	if (getenv("DPV_EAL_ARGS") == NULL) {
		snprintf(eal, sizeof(eal), "--vdev=net_pcap0,rx_pcap=%s,tx_pcap=%s "
			 "--log-level=lib.eal:error --log-level=lib.telemetry:error", in, out);
		setenv("DPV_EAL_ARGS", eal, 1);
	}
	devs = ibv_get_device_list(NULL);
	if (devs == NULL || devs[0] == NULL)
		return fprintf(stderr, "no device: %s\n", strerror(errno)), 1;
	ctx = ibv_open_device(devs[0]);
	pd = ctx ? ibv_alloc_pd(ctx) : NULL;
	cq = pd ? ibv_create_cq(ctx, 2 * SLOTS, NULL, NULL, 0) : NULL;
	buf = aligned_alloc(4096, (size_t)SLOTS * SLOT_SIZE);
	mr = cq && buf ? ibv_reg_mr(pd, buf, (size_t)SLOTS * SLOT_SIZE, IBV_ACCESS_LOCAL_WRITE) : NULL;
	qa.send_cq = qa.recv_cq = cq;
	qp = mr ? ibv_create_qp(pd, &qa) : NULL;
	if (qp == NULL ||
	    ibv_modify_qp(qp, &(struct ibv_qp_attr){ .qp_state = IBV_QPS_INIT, .port_num = 1 },
			  IBV_QP_STATE | IBV_QP_PORT) ||
	    ibv_modify_qp(qp, &(struct ibv_qp_attr){ .qp_state = IBV_QPS_RTR }, IBV_QP_STATE) ||
	    ibv_modify_qp(qp, &(struct ibv_qp_attr){ .qp_state = IBV_QPS_RTS }, IBV_QP_STATE))
		return perror("setup"), 1;
	/* receive buffers first: frames the flow steers to a QP without one are dropped */
	for (int s = 0; s < SLOTS; s++)
		if (post_recv(qp, mr, s) != 0)
			return perror("ibv_post_recv"), 1;
	flow = ibv_create_flow(qp, &fa);
	if (flow == NULL)
		return perror("ibv_create_flow"), 1;
	start = last = now();
	while ((limit < 0 || forwarded < limit) && now() - last < 0.5) {
		struct ibv_wc wc[32];
		int n = ibv_poll_cq(cq, 32, wc);

		for (int i = 0; i < n; i++) {
			if (wc[i].status != IBV_WC_SUCCESS) {
				fprintf(stderr, "%s completion: %s\n",
					wc[i].opcode == IBV_WC_RECV ? "receive" : "send",
					ibv_wc_status_str(wc[i].status));
				rc = 1;
				goto done;
			}
			last = now();
			if (wc[i].opcode == IBV_WC_RECV) {
				received++;
				if (forward(qp, mr, &wc[i]) != 0)
					goto done;
			} else {                       /* sent: the slot receives again */
				forwarded++;
				post_recv(qp, mr, (int)wc[i].wr_id);
			}
		}
	}
done:
	printf("received %ld, forwarded %ld with IP_CSUM (%.3f Mpps)\n", received, forwarded,
	       forwarded / (last - start > 0 ? last - start : 1) / 1e6);
	ibv_destroy_flow(flow);
	ibv_destroy_qp(qp);
	ibv_dereg_mr(mr);
	free(buf);
	ibv_destroy_cq(cq);
	ibv_dealloc_pd(pd);
	ibv_close_device(ctx);              /* out.pcap is complete */
	ibv_free_device_list(devs);
	return rc;
}
