/* SPDX-License-Identifier: BSD-3-Clause */
/* l2fwd_verbs: the verbs twin of DPDK's l2fwd. Every frame a RAW_PACKET QP receives on the
 * first device (an ALL_DEFAULT flow) leaves through a RAW_PACKET QP of the second device with
 * its MAC addresses swapped, zero-copy from the buffer it landed in. Prints per-second
 * statistics.
 *
 *   l2fwd_verbs [-i in.pcap] [-o out.pcap] [-t seconds] [-n frames]
 *
 * With no DPV_EAL_ARGS: two net_pcap ports, the first reading in.pcap, the second writing
 * out.pcap; it stops after -n frames, -t seconds, or a second without traffic (pcap input). */
#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <infiniband/verbs.h>

#define SLOTS 512
#define SLOT_SIZE 2048

struct side {
	struct ibv_context *ctx;
	struct ibv_pd *pd;
	struct ibv_cq *cq;
	struct ibv_qp *qp;
	struct ibv_mr *mr;
};

static double now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec * 1e-9;
}

static int side_open(struct side *s, struct ibv_device *dev, void *buf, int access)
{
	struct ibv_qp_init_attr qa = { .qp_type = IBV_QPT_RAW_PACKET,
				       .cap = { .max_send_wr = SLOTS, .max_send_sge = 1,
						.max_recv_wr = SLOTS, .max_recv_sge = 1 } };

	s->ctx = ibv_open_device(dev);
	s->pd = s->ctx ? ibv_alloc_pd(s->ctx) : NULL;
	s->cq = s->pd ? ibv_create_cq(s->ctx, 2 * SLOTS, NULL, NULL, 0) : NULL;
	s->mr = s->cq ? ibv_reg_mr(s->pd, buf, (size_t)SLOTS * SLOT_SIZE, access) : NULL;
	qa.send_cq = qa.recv_cq = s->cq;
	s->qp = s->mr ? ibv_create_qp(s->pd, &qa) : NULL;
	return s->qp == NULL ||
	       ibv_modify_qp(s->qp, &(struct ibv_qp_attr){ .qp_state = IBV_QPS_INIT, .port_num = 1 },
			     IBV_QP_STATE | IBV_QP_PORT) ||
	       ibv_modify_qp(s->qp, &(struct ibv_qp_attr){ .qp_state = IBV_QPS_RTR }, IBV_QP_STATE) ||
	       ibv_modify_qp(s->qp, &(struct ibv_qp_attr){ .qp_state = IBV_QPS_RTS }, IBV_QP_STATE);
}

static void side_close(struct side *s)
{
	if (s->qp) ibv_destroy_qp(s->qp);
	if (s->mr) ibv_dereg_mr(s->mr);
	if (s->cq) ibv_destroy_cq(s->cq);
	if (s->pd) ibv_dealloc_pd(s->pd);
	if (s->ctx) ibv_close_device(s->ctx);
}

static int post_recv(struct side *s, uint8_t *buf, int slot)
{
	struct ibv_sge sge = { (uintptr_t)buf + (size_t)slot * SLOT_SIZE, SLOT_SIZE, s->mr->lkey };
	struct ibv_recv_wr wr = { .wr_id = (uint64_t)slot, .sg_list = &sge, .num_sge = 1 }, *bad;

	return ibv_post_recv(s->qp, &wr, &bad);
}

static int forward(struct side *out, uint8_t *buf, const struct ibv_wc *wc)
{
	uint8_t *f = buf + (size_t)wc->wr_id * SLOT_SIZE, mac[6];
	struct ibv_sge sge = { (uintptr_t)f, wc->byte_len, out->mr->lkey };
	struct ibv_send_wr wr = { .wr_id = wc->wr_id, .sg_list = &sge, .num_sge = 1,
				  .opcode = IBV_WR_SEND, .send_flags = IBV_SEND_SIGNALED }, *bad;

	memcpy(mac, f, 6);
	memcpy(f, f + 6, 6);
	memcpy(f + 6, mac, 6);
	return ibv_post_send(out->qp, &wr, &bad);
}

int main(int argc, char **argv)
{
	const char *in = "in.pcap", *outf = "out.pcap";
	double seconds = 0, start, last, tick;
	long limit = -1, rx = 0, tx = 0, rx_tick = 0, tx_tick = 0;
	struct side a = { 0 }, b = { 0 };
	struct ibv_flow_attr all = { .type = IBV_FLOW_ATTR_ALL_DEFAULT, .size = sizeof(all), .port = 1 };
	struct ibv_flow *flow = NULL;
	struct ibv_device **devs;
	static char eal[512];
	uint8_t *buf;
	int c, n = 0, rc = 1;

	while ((c = getopt(argc, argv, "i:o:t:n:")) != -1) {
		switch (c) {
		case 'i': in = optarg; break;
		case 'o': outf = optarg; break;
		case 't': seconds = atof(optarg); break;
		case 'n': limit = atol(optarg); break;
		default: return 2;
		}
	}
	if (getenv("DPV_EAL_ARGS") == NULL) {
		snprintf(eal, sizeof(eal), "--vdev=net_pcap0,rx_pcap=%s --vdev=net_pcap1,tx_pcap=%s "
			 "--log-level=lib.eal:error --log-level=lib.telemetry:error", in, outf);
		setenv("DPV_EAL_ARGS", eal, 1);
	}
	devs = ibv_get_device_list(&n);
	if (devs == NULL || n < 2)
		return fprintf(stderr, "need two devices (%s)\n", devs ? "found fewer" : strerror(errno)), 1;
	buf = aligned_alloc(4096, (size_t)SLOTS * SLOT_SIZE);
	if (buf == NULL || side_open(&a, devs[0], buf, IBV_ACCESS_LOCAL_WRITE) ||
	    side_open(&b, devs[1], buf, 0)) {
		perror("setup");
		goto done;
	}
	/* receive buffers first: frames the flow steers to a QP without one are dropped */
	for (int s = 0; s < SLOTS; s++)
		if (post_recv(&a, buf, s) != 0)
			goto done;
	flow = ibv_create_flow(a.qp, &all);
	if (flow == NULL) {
		perror("ibv_create_flow");
		goto done;
	}
	printf("forwarding %s -> %s\n", ibv_get_device_name(devs[0]), ibv_get_device_name(devs[1]));
	start = last = tick = now();
	while ((limit < 0 || tx < limit) && (seconds <= 0 || now() - start < seconds) &&
	       (seconds > 0 || now() - last < 1.0)) {
		struct ibv_wc wc[32];
		int k = ibv_poll_cq(a.cq, 32, wc);

		for (int i = 0; i < k; i++) {           /* received on A: out through B */
			if (wc[i].status != IBV_WC_SUCCESS || forward(&b, buf, &wc[i]) != 0)
				goto done;
			rx++;
			last = now();
		}
		k = ibv_poll_cq(b.cq, 32, wc);
		for (int i = 0; i < k; i++) {           /* sent: the slot receives again */
			if (wc[i].status != IBV_WC_SUCCESS || post_recv(&a, buf, (int)wc[i].wr_id))
				goto done;
			tx++;
		}
		if (now() - tick >= 1.0) {
			printf("rx %ld (%.3f Mpps) tx %ld (%.3f Mpps)\n", rx, (rx - rx_tick) / 1e6,
			       tx, (tx - tx_tick) / 1e6);
			rx_tick = rx;
			tx_tick = tx;
			tick = now();
		}
	}
	printf("total: received %ld, forwarded %ld\n", rx, tx);
	rc = 0;
done:
	if (flow)
		ibv_destroy_flow(flow);
	side_close(&a);
	side_close(&b);
	free(buf);
	ibv_free_device_list(devs);
	return rc;
}
