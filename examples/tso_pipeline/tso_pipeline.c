/* SPDX-License-Identifier: BSD-3-Clause */
/* tso_pipeline: send a byte stream as one TCP connection's worth of TSO WRs over a RAW_PACKET
 * QP: up to 64 KiB of payload per WR, the headers once per WR, the port (or dpverbs) cutting
 * segments. Prints segments/s and Gbit/s.
 *
 *   tso_pipeline [-f file | -n bytes] [-m mss] [-w wr_payload] [-r repeat] [--verify]
 *
 * -r sends the stream that many times (sequence numbers going on), so that a short stream can
 * make a long run from the cache (the benchmark does that).
 *
 * With no DPV_EAL_ARGS it sends to an embedded net_pcap port (tso_pipeline.pcap); --verify
 * then reads that file back and checks that the TCP payloads, in sequence order, are the
 * stream, and that every IPv4 and TCP checksum is right. */
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include <infiniband/verbs.h>
#include <pcap/pcap.h>

#define HDR_LEN 54
#define DEPTH 256

struct opts {
	const char *file, *pcap;
	size_t bytes;
	uint16_t mss;
	uint32_t wr_payload;
	long repeat;
	int verify;
};

static uint8_t *stream_load(const struct opts *o, size_t *len)
{
	uint8_t *s;

	if (o->file != NULL) {
		int fd = open(o->file, O_RDONLY);
		struct stat st;

		if (fd < 0 || fstat(fd, &st) != 0)
			return NULL;
		*len = (size_t)st.st_size;
		s = mmap(NULL, *len, PROT_READ, MAP_PRIVATE, fd, 0);
		close(fd);
		return s == MAP_FAILED ? NULL : s;
	}
	*len = o->bytes;
	s = malloc(*len);
	for (size_t i = 0; s != NULL && i < *len; i++)
		s[i] = (uint8_t)(i * 7 + (i >> 8));
	return s;
}

/* Ethernet/IPv4/TCP 10.1.0.1:40000 -> 10.1.0.2:80, sequence @seq, PSH|ACK. */
static void tcp_header(uint8_t *h, uint32_t seq, uint16_t ip_id)
{
	static const uint8_t t[HDR_LEN] = {
		2, 0, 0, 0, 0, 2, 2, 0, 0, 0, 0, 1, 0x08, 0x00,
		0x45, 0, 0, 40, 0, 0, 0x40, 0, 64, 6, 0, 0, 10, 1, 0, 1, 10, 1, 0, 2,
		0x9c, 0x40, 0x00, 0x50, 0, 0, 0, 0, 0, 0, 0, 1, 0x50, 0x18, 0xff, 0xff, 0, 0, 0, 0 };
	uint32_t s = htonl(seq);
	uint16_t id = htons(ip_id);

	memcpy(h, t, HDR_LEN);
	memcpy(h + 18, &id, 2);
	memcpy(h + 38, &s, 4);
}

static struct ibv_qp *raw_qp(struct ibv_context *ctx, struct ibv_pd *pd, struct ibv_cq *cq)
{
	struct ibv_qp_init_attr_ex a = { .qp_type = IBV_QPT_RAW_PACKET, .send_cq = cq,
					 .recv_cq = cq, .pd = pd,
					 .comp_mask = IBV_QP_INIT_ATTR_PD |
						      IBV_QP_INIT_ATTR_MAX_TSO_HEADER,
					 .max_tso_header = HDR_LEN,
					 .cap = { .max_send_wr = DEPTH, .max_send_sge = 1 } };
	struct ibv_qp *qp = ibv_create_qp_ex(ctx, &a);
	struct ibv_qp_attr s = { .qp_state = IBV_QPS_INIT, .port_num = 1 };

	if (qp == NULL || ibv_modify_qp(qp, &s, IBV_QP_STATE | IBV_QP_PORT))
		return NULL;
	s.qp_state = IBV_QPS_RTR;
	if (ibv_modify_qp(qp, &s, IBV_QP_STATE))
		return NULL;
	s.qp_state = IBV_QPS_RTS;
	return ibv_modify_qp(qp, &s, IBV_QP_STATE) ? NULL : qp;
}

/* Every byte of the stream as TSO WRs; returns the number of WRs, or -1. */
static long send_stream(struct ibv_qp *qp, struct ibv_cq *cq, struct ibv_mr *mr,
			const uint8_t *s, size_t len, const struct opts *o)
{
	static uint8_t hdrs[DEPTH][HDR_LEN];
	size_t off = 0, total = len * (size_t)o->repeat;
	long posted = 0, done = 0;
	uint16_t ip_id = 1;

	while (done < posted || off < total) {
		struct ibv_wc wc[32];
		int n;

		while (off < total && posted - done < DEPTH) {
			size_t at = off % len;
			uint32_t chunk = (uint32_t)(len - at < o->wr_payload ? len - at : o->wr_payload);
			uint8_t *h = hdrs[posted % DEPTH];
			struct ibv_sge sge = { (uintptr_t)s + at, chunk, mr->lkey };
			struct ibv_send_wr wr = { .wr_id = (uint64_t)posted, .sg_list = &sge,
						  .num_sge = 1, .opcode = IBV_WR_TSO,
						  .send_flags = IBV_SEND_SIGNALED,
						  .tso = { .hdr = h, .hdr_sz = HDR_LEN, .mss = o->mss } }, *bad;
			int rc;

			tcp_header(h, (uint32_t)off, ip_id);
			rc = ibv_post_send(qp, &wr, &bad);
			if (rc == ENOMEM)
				break;
			if (rc != 0)
				return fprintf(stderr, "ibv_post_send: %s\n", strerror(rc)), -1;
			ip_id = (uint16_t)(ip_id + (chunk + o->mss - 1) / o->mss);
			off += chunk;
			posted++;
		}
		n = ibv_poll_cq(cq, 32, wc);
		for (int i = 0; i < n; i++) {
			if (wc[i].status != IBV_WC_SUCCESS || wc[i].opcode != IBV_WC_TSO)
				return fprintf(stderr, "WR %llu: %s\n", (unsigned long long)wc[i].wr_id,
					       ibv_wc_status_str(wc[i].status)), -1;
			done++;
		}
	}
	return posted;
}

static uint16_t csum_fold(uint32_t sum)
{
	while (sum >> 16)
		sum = (sum & 0xffff) + (sum >> 16);
	return (uint16_t)sum;
}

static uint32_t sum16(const uint8_t *p, size_t n, uint32_t sum)
{
	for (size_t i = 0; i + 1 < n; i += 2)
		sum += (uint32_t)(p[i] << 8 | p[i + 1]);
	if (n & 1)
		sum += (uint32_t)p[n - 1] << 8;
	return sum;
}

/* Read the capture back: payload in sequence order = the stream, checksums right. */
static int verify(const char *path, const uint8_t *s, size_t len)
{
	char err[PCAP_ERRBUF_SIZE];
	pcap_t *pc = pcap_open_offline(path, err);
	struct pcap_pkthdr *h;
	const uint8_t *p;
	size_t covered = 0, frames = 0, bad = 0;

	if (pc == NULL)
		return fprintf(stderr, "%s: %s\n", path, err), -1;
	while (pcap_next_ex(pc, &h, &p) == 1) {
		size_t ip_len = (size_t)(p[16] << 8 | p[17]), pay = ip_len - 40;
		uint32_t seq = (uint32_t)p[38] << 24 | (uint32_t)p[39] << 16 | (uint32_t)p[40] << 8 | p[41];
		uint32_t tcp = sum16(p + 26, 8, 6 + (uint32_t)(ip_len - 20));

		frames++;
		if (csum_fold(sum16(p + 14, 20, 0)) != 0xffff ||
		    csum_fold(sum16(p + 34, ip_len - 20, tcp)) != 0xffff ||
		    seq + pay > len || memcmp(p + HDR_LEN, s + seq, pay) != 0)
			bad++;
		covered += pay;
	}
	pcap_close(pc);
	printf("verify: %zu frames, %zu payload bytes of %zu, %zu bad\n", frames, covered, len, bad);
	return bad == 0 && covered == len ? 0 : -1;
}

int main(int argc, char **argv)
{
	static const struct option lo[] = { { "verify", no_argument, NULL, 'v' }, { 0 } };
	struct opts o = { .bytes = 16 << 20, .mss = 1448, .wr_payload = 65536, .repeat = 1 };
	static char eal[256];
	struct ibv_device **devs;
	struct ibv_context *ctx;
	struct ibv_pd *pd;
	struct ibv_cq *cq;
	struct ibv_qp *qp;
	struct ibv_mr *mr;
	uint8_t *s;
	size_t len;
	struct timespec t0, t1;
	double secs;
	long wrs;
	int c;

	while ((c = getopt_long(argc, argv, "f:n:m:w:r:", lo, NULL)) != -1) {
		switch (c) {
		case 'f': o.file = optarg; break;
		case 'n': o.bytes = strtoull(optarg, NULL, 0); break;
		case 'm': o.mss = (uint16_t)atoi(optarg); break;
		case 'w': o.wr_payload = (uint32_t)atoi(optarg); break;
		case 'r': o.repeat = atol(optarg); break;
		case 'v': o.verify = 1; break;
		default: return 2;
		}
	}
	if (o.mss == 0 || o.wr_payload == 0 || o.wr_payload > 262144 || o.repeat < 1 ||
	    (o.verify && o.repeat != 1))
		return fprintf(stderr, "need -m > 0, 0 < -w <= 262144, -r >= 1 (1 with --verify)\n"), 2;
	if (getenv("DPV_EAL_ARGS") == NULL) {
		o.pcap = "tso_pipeline.pcap";
		snprintf(eal, sizeof(eal), "--vdev=net_pcap0,tx_pcap=%s --log-level=lib.eal:error "
			 "--log-level=lib.telemetry:error", o.pcap);
		setenv("DPV_EAL_ARGS", eal, 1);
	}
	s = stream_load(&o, &len);
	devs = ibv_get_device_list(NULL);
	if (s == NULL || len == 0 || devs == NULL || devs[0] == NULL)
		return fprintf(stderr, "no stream or no device: %s\n", strerror(errno)), 1;
	ctx = ibv_open_device(devs[0]);
	pd = ctx ? ibv_alloc_pd(ctx) : NULL;
	cq = pd ? ibv_create_cq(ctx, DEPTH, NULL, NULL, 0) : NULL;
	mr = cq ? ibv_reg_mr(pd, s, len, 0) : NULL;
	qp = mr ? raw_qp(ctx, pd, cq) : NULL;
	if (qp == NULL)
		return perror("setup"), 1;
	clock_gettime(CLOCK_MONOTONIC, &t0);
	wrs = send_stream(qp, cq, mr, s, len, &o);
	clock_gettime(CLOCK_MONOTONIC, &t1);
	secs = (double)(t1.tv_sec - t0.tv_sec) + (t1.tv_nsec - t0.tv_nsec) * 1e-9;
	if (wrs > 0) {
		size_t bytes = len * (size_t)o.repeat;
		double segs = (double)((len + o.mss - 1) / o.mss) * (double)o.repeat;

		printf("%s: %zu bytes in %ld TSO WRs, mss %u: %.0f segments/s, %.2f Gbit/s\n",
		       ibv_get_device_name(devs[0]), bytes, wrs, o.mss, segs / secs,
		       (bytes + segs * HDR_LEN) * 8 / secs / 1e9);
	}
	ibv_destroy_qp(qp);
	ibv_dereg_mr(mr);
	ibv_destroy_cq(cq);
	ibv_dealloc_pd(pd);
	ibv_close_device(ctx);            /* the pcap file is complete */
	ibv_free_device_list(devs);
	c = wrs < 0 || (o.verify && o.pcap != NULL && verify(o.pcap, s, len) != 0);
	if (o.file != NULL)
		munmap(s, len);
	else
		free(s);
	return c;
}
