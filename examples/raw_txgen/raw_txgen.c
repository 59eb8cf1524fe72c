/* SPDX-License-Identifier: BSD-3-Clause */
/* raw_txgen: send UDP/IPv4 frames through a RAW_PACKET QP with plain verbs calls, then show
 * what reached the wire.
 *
 * With no DPV_EAL_ARGS it runs on an embedded default, a net_pcap port writing
 * raw_txgen.pcap, and prints the frames read back from that file; with DPV_EAL_ARGS it uses
 * the first device those arguments create (a tap, a NIC...).
 *
 *   raw_txgen [-n frames] [-s frame size] [-c] [-o file.pcap]
 *     -c  ask for IPv4 and UDP checksums (IBV_SEND_IP_CSUM) instead of leaving them 0 */
#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <arpa/inet.h>
#include <infiniband/verbs.h>
#include <pcap/pcap.h>

#include <dpverbs.h>

struct opts {
	int frames, size;
	bool csum;
	const char *pcap_out;   /* set when running on the embedded default */
};

/* Ethernet / IPv4 / UDP frame of @size bytes with sequence number @seq in its payload. */
static void build_frame(uint8_t *f, int size, int seq)
{
	static const uint8_t hdr[42] = {
		0x02, 0, 0, 0, 0, 0x02,  0x02, 0, 0, 0, 0, 0x01,  0x08, 0x00,       /* Ethernet */
		0x45, 0, 0, 0,  0, 0, 0x40, 0,  64, 17, 0, 0,                       /* IPv4 */
		10, 0, 0, 1,  10, 0, 0, 2,
		0x13, 0x88, 0x13, 0x89, 0, 0, 0, 0,                                 /* UDP 5000>5001 */
	};
	uint16_t ip_len = htons((uint16_t)(size - 14)), udp_len = htons((uint16_t)(size - 34));

	memcpy(f, hdr, sizeof(hdr));
	memcpy(f + 16, &ip_len, 2);
	memcpy(f + 38, &udp_len, 2);
	for (int i = 42; i < size; i++)
		f[i] = (uint8_t)(seq + i);
}

/* Create a RAW_PACKET QP and take it to RTS. */
static struct ibv_qp *raw_qp(struct ibv_pd *pd, struct ibv_cq *cq, int depth)
{
	struct ibv_qp_init_attr init = {
		.send_cq = cq, .recv_cq = cq, .qp_type = IBV_QPT_RAW_PACKET,
		.cap = { .max_send_wr = depth, .max_send_sge = 1 },
	};
	struct ibv_qp_attr attr = { .qp_state = IBV_QPS_INIT, .port_num = 1 };
	struct ibv_qp *qp = ibv_create_qp(pd, &init);

	if (qp == NULL)
		return NULL;
	if (ibv_modify_qp(qp, &attr, IBV_QP_STATE | IBV_QP_PORT) ||
	    ibv_modify_qp(qp, &(struct ibv_qp_attr){ .qp_state = IBV_QPS_RTR }, IBV_QP_STATE) ||
	    ibv_modify_qp(qp, &(struct ibv_qp_attr){ .qp_state = IBV_QPS_RTS }, IBV_QP_STATE)) {
		ibv_destroy_qp(qp);
		return NULL;
	}
	return qp;
}

/* Post every frame (signaling each 16th and the last), polling as completions come. */
static int send_frames(struct ibv_qp *qp, struct ibv_cq *cq, struct ibv_mr *mr,
		       const struct opts *o, int *completions)
{
	int posted = 0, acked = 0;

	while (acked < o->frames) {
		struct ibv_wc wc[16];
		int n;

		while (posted < o->frames && posted - acked < 128) {
			uint8_t *f = (uint8_t *)mr->addr + (size_t)(posted % 128) * o->size;
			struct ibv_sge sge = { (uintptr_t)f, (uint32_t)o->size, mr->lkey };
			struct ibv_send_wr wr = {
				.wr_id = (uint64_t)posted, .sg_list = &sge, .num_sge = 1,
				.opcode = IBV_WR_SEND,
				.send_flags = (posted % 16 == 15 || posted == o->frames - 1 ?
					       IBV_SEND_SIGNALED : 0) |
					      (o->csum ? IBV_SEND_IP_CSUM : 0),
			}, *bad;
			int rc;

			build_frame(f, o->size, posted);
			rc = ibv_post_send(qp, &wr, &bad);
			if (rc == ENOMEM)
				break;          /* SQ full: poll first */
			if (rc != 0) {
				fprintf(stderr, "ibv_post_send: %s\n", strerror(rc));
				return -1;
			}
			posted++;
		}
		n = ibv_poll_cq(cq, 16, wc);
		for (int i = 0; i < n; i++) {
			if (wc[i].status != IBV_WC_SUCCESS) {
				fprintf(stderr, "WR %llu: %s\n", (unsigned long long)wc[i].wr_id,
					ibv_wc_status_str(wc[i].status));
				return -1;
			}
			acked = (int)wc[i].wr_id + 1;
			(*completions)++;
		}
	}
	return 0;
}

static void print_frame(int i, const struct pcap_pkthdr *h, const uint8_t *p)
{
	printf("  frame %d: %u bytes  %02x:%02x:%02x:%02x:%02x:%02x > %02x:%02x:%02x:%02x:%02x:%02x",
	       i, h->caplen, p[6], p[7], p[8], p[9], p[10], p[11], p[0], p[1], p[2], p[3], p[4], p[5]);
	if (h->caplen >= 42 && p[12] == 0x08 && p[13] == 0x00)
		printf("  IPv4 %u.%u.%u.%u > %u.%u.%u.%u  ip csum 0x%02x%02x  UDP %u > %u  udp csum 0x%02x%02x",
		       p[26], p[27], p[28], p[29], p[30], p[31], p[32], p[33], p[24], p[25],
		       p[34] << 8 | p[35], p[36] << 8 | p[37], p[40], p[41]);
	printf("\n");
}

/* Read back the pcap file the port wrote: the bytes that reached the wire. */
static int show_wire(const char *path, int expect)
{
	char err[PCAP_ERRBUF_SIZE];
	pcap_t *pc = pcap_open_offline(path, err);
	struct pcap_pkthdr *h;
	const uint8_t *p;
	int n = 0;

	if (pc == NULL) {
		fprintf(stderr, "cannot read %s: %s\n", path, err);
		return -1;
	}
	printf("on the wire (%s):\n", path);
	while (pcap_next_ex(pc, &h, &p) == 1) {
		if (n < 4 || n == expect - 1)
			print_frame(n, h, p);
		else if (n == 4)
			printf("  ...\n");
		n++;
	}
	pcap_close(pc);
	printf("%d frames in %s\n", n, path);
	return n == expect ? 0 : -1;
}

static int parse(int argc, char **argv, struct opts *o)
{
	int c;

	*o = (struct opts){ .frames = 64, .size = 128 };
	while ((c = getopt(argc, argv, "n:s:co:")) != -1) {
		switch (c) {
		case 'n': o->frames = atoi(optarg); break;
		case 's': o->size = atoi(optarg); break;
		case 'c': o->csum = true; break;
		case 'o': o->pcap_out = optarg; break;
		default: return -1;
		}
	}
	if (o->frames < 1 || o->size < 60 || o->size > 1514) {
		fprintf(stderr, "need -n >= 1 and 60 <= -s <= 1514\n");
		return -1;
	}
	return 0;
}

int main(int argc, char **argv)
{
	static char eal_args[512];
	struct ibv_device **devs;
	struct ibv_context *ctx;
	struct dpv_port_info info;
	struct opts o;
	int n = 0, completions = 0, rc = 1;

	if (parse(argc, argv, &o) != 0)
		return 2;
	if (getenv("DPV_EAL_ARGS") == NULL) {         /* the embedded default */
		if (o.pcap_out == NULL)
			o.pcap_out = "raw_txgen.pcap";
		snprintf(eal_args, sizeof(eal_args), "--vdev=net_pcap0,tx_pcap=%s -l 0 "
			 "--log-level=lib.eal:error --log-level=lib.telemetry:warning", o.pcap_out);
		setenv("DPV_EAL_ARGS", eal_args, 1);
	}
	devs = ibv_get_device_list(&n);
	if (devs == NULL || n == 0) {
		fprintf(stderr, "no verbs device (%s): set DPV_EAL_ARGS\n",
			devs == NULL ? strerror(errno) : "none");
		return 1;
	}
	ctx = ibv_open_device(devs[0]);
	ibv_free_device_list(devs);
	if (ctx == NULL) {
		perror("ibv_open_device");
		return 1;
	}
	dpv_query_port_info(ctx, &info);
	printf("device %s on DPDK port %u (%s), MTU %u\n", ibv_get_device_name(ctx->device),
	       info.port_id, info.driver, info.mtu);
	{
		struct ibv_pd *pd = ibv_alloc_pd(ctx);
		struct ibv_cq *cq = ibv_create_cq(ctx, 256, NULL, NULL, 0);
		size_t len = (size_t)128 * o.size;
		void *buf = malloc(len);
		struct ibv_mr *mr = pd && buf ? ibv_reg_mr(pd, buf, len, 0) : NULL;
		struct ibv_qp *qp = pd && cq ? raw_qp(pd, cq, 128) : NULL;

		if (mr != NULL && qp != NULL && send_frames(qp, cq, mr, &o, &completions) == 0) {
			printf("sent %d frames of %d bytes%s, %d completions\n", o.frames, o.size,
			       o.csum ? " with IP_CSUM" : "", completions);
			rc = 0;
		} else {
			fprintf(stderr, "setting up or sending failed: %s\n", strerror(errno));
		}
		if (qp) ibv_destroy_qp(qp);
		if (mr) ibv_dereg_mr(mr);
		if (cq) ibv_destroy_cq(cq);
		if (pd) ibv_dealloc_pd(pd);
		free(buf);
	}
	ibv_close_device(ctx);           /* the last close: the pcap file is complete */
	if (rc == 0 && o.pcap_out != NULL)
		rc = show_wire(o.pcap_out, o.frames) == 0 ? 0 : 1;
	return rc;
}
