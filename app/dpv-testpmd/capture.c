/* SPDX-License-Identifier: BSD-3-Clause */
/* capture start|stop <port> <file.pcap>: an in-process capture of what a port receives. A
 * RAW_PACKET QP with a SNIFFER flow gets a copy of every frame; a thread polls its CQ and
 * writes each frame with pcap_dump. What the port sends is not seen here (dpverbs' SNIFFER
 * flows, like its other flows, steer received frames): capture that where it arrives (a tap's
 * interface, net_pcap's tx_pcap). */
#include <errno.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <sys/time.h>

#include <pcap/pcap.h>

#include "testpmd.h"

#define CAP_SLOTS 256

struct capture {
	unsigned int port;
	char path[256];
	struct ibv_cq *cq;
	struct ibv_qp *qp;
	struct ibv_flow *flow;
	struct ibv_mr *mr;
	uint8_t *buf;
	uint32_t slot_size;
	pcap_t *pcap;
	pcap_dumper_t *dump;
	pthread_t thread;
	volatile bool stop;
	uint64_t frames, lost;
};

static int cap_post(struct capture *c, uint32_t slot)
{
	struct ibv_sge sge = { (uintptr_t)c->buf + (size_t)slot * c->slot_size, c->slot_size,
			       c->mr->lkey };
	struct ibv_recv_wr wr = { .wr_id = slot, .sg_list = &sge, .num_sge = 1 }, *bad;

	return ibv_post_recv(c->qp, &wr, &bad);
}

static void *cap_main(void *arg)
{
	struct capture *c = arg;
	struct ibv_wc wc[32];

	while (!c->stop) {
		int n = ibv_poll_cq(c->cq, 32, wc);

		for (int i = 0; i < n; i++) {
			struct pcap_pkthdr h = { .caplen = wc[i].byte_len, .len = wc[i].byte_len };

			if (wc[i].status != IBV_WC_SUCCESS) {
				c->lost++;
				continue;
			}
			gettimeofday(&h.ts, NULL);
			pcap_dump((u_char *)c->dump, &h, c->buf + wc[i].wr_id * c->slot_size);
			c->frames++;
			cap_post(c, (uint32_t)wc[i].wr_id);
		}
	}
	return NULL;
}

static void cap_free(struct capture *c)
{
	if (c->flow)
		ibv_destroy_flow(c->flow);
	if (c->qp)
		ibv_destroy_qp(c->qp);
	if (c->cq)
		ibv_destroy_cq(c->cq);
	if (c->mr)
		ibv_dereg_mr(c->mr);
	if (c->dump)
		pcap_dump_close(c->dump);
	if (c->pcap)
		pcap_close(c->pcap);
	free(c->buf);
	free(c);
}

/* The SNIFFER QP and its receive buffers; 0 or a message's errno. */
static int cap_setup(struct capture *c, struct tp_port *pt)
{
	struct ibv_qp_init_attr qa = { .qp_type = IBV_QPT_RAW_PACKET,
				       .cap = { .max_send_wr = 1, .max_send_sge = 1,
						.max_recv_wr = CAP_SLOTS, .max_recv_sge = 1 } };
	struct ibv_flow_attr sniff = { .type = IBV_FLOW_ATTR_SNIFFER, .size = sizeof(sniff),
				       .port = 1 };

	c->slot_size = pt->info.max_frame + 8 > TP_SLOT_SIZE ? pt->info.max_frame + 8 : TP_SLOT_SIZE;
	c->buf = aligned_alloc(4096, (size_t)CAP_SLOTS * c->slot_size);
	if (c->buf == NULL)
		return ENOMEM;
	c->mr = ibv_reg_mr(pt->pd, c->buf, (size_t)CAP_SLOTS * c->slot_size,
			   IBV_ACCESS_LOCAL_WRITE);
	c->cq = c->mr ? ibv_create_cq(pt->ctx, CAP_SLOTS + 2, NULL, NULL, 0) : NULL;
	qa.send_cq = qa.recv_cq = c->cq;
	c->qp = c->cq ? ibv_create_qp(pt->pd, &qa) : NULL;
	if (c->qp == NULL || qp_to_state(c->qp, IBV_QPS_INIT) || qp_to_state(c->qp, IBV_QPS_RTR))
		return errno ? errno : EIO;
	for (uint32_t s = 0; s < CAP_SLOTS; s++)
		if (cap_post(c, s) != 0)
			return EIO;
	c->flow = ibv_create_flow(c->qp, &sniff);
	return c->flow == NULL ? errno : 0;
}

int capture_start(unsigned int port, const char *path)
{
	struct tp_port *pt = port_get(port);
	struct capture *c;
	int rc;

	if (pt == NULL)
		return -EINVAL;
	if (pt->cap != NULL)
		return tp_error("port %u is captured already (to %s): capture stop %u", port,
				pt->cap->path, port);
	c = calloc(1, sizeof(*c));
	if (c == NULL)
		return -ENOMEM;
	c->port = port;
	snprintf(c->path, sizeof(c->path), "%s", path);
	c->pcap = pcap_open_dead(DLT_EN10MB, 65535);
	c->dump = c->pcap ? pcap_dump_open(c->pcap, path) : NULL;
	if (c->dump == NULL) {
		tp_error("cannot write %s: %s", path, c->pcap ? pcap_geterr(c->pcap) : "no memory");
		cap_free(c);
		return -EIO;
	}
	rc = cap_setup(c, pt);
	if (rc == 0)
		rc = pthread_create(&c->thread, NULL, cap_main, c);
	if (rc != 0) {
		cap_free(c);
		return tp_error("capture on port %u: %s (%s); nothing was left behind", port,
				errno_name(rc), strerror(rc));
	}
	pt->cap = c;
	printf("capturing what port %u receives to %s\n", port, path);
	return 0;
}

int capture_stop(unsigned int port)
{
	struct capture *c;

	if (!port_valid(port))
		return -EINVAL;
	c = tp.port[port].cap;
	if (c == NULL)
		return tp_error("port %u is not captured: capture start %u <file.pcap>", port, port);
	c->stop = true;
	pthread_join(c->thread, NULL);
	printf("capture of port %u: %llu frames to %s", port, (unsigned long long)c->frames,
	       c->path);
	if (c->lost)
		printf(" (%llu lost)", (unsigned long long)c->lost);
	printf("\n");
	tp.port[port].cap = NULL;
	cap_free(c);
	return 0;
}
