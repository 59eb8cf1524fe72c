/* dpv-bench: RAW_PACKET SEND rate through verbs, one thread, to the first device (net_null in
 * the benchmark suite). Prints one "Mpps <value>" line per second of the run.
 *   dpv-bench [-m inline|zc|recv] [-b burst] [-s size] [-t seconds] [-c]
 * -c: UDP/IPv4 frames sent with IBV_SEND_IP_CSUM (the checksum cost, by difference).
 * -m recv: the receive rate instead: every frame the port gives (net_null makes them) steered
 * by an ALL_DEFAULT flow into receive WQEs of @size bytes, each completion's WQE posted again
 * (in lists of up to @burst). The last line is "frames <count>", the whole run's. */
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "dpv_test.h"

#define DEPTH 1024

static double now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec * 1e-9;
}

static void report(uint64_t count, uint64_t *last, double *mark)
{
	double t = now();

	if (t - *mark >= 1.0) {
		printf("Mpps %.3f\n", (double)(count - *last) / (t - *mark) / 1e6);
		fflush(stdout);
		*last = count;
		*mark = t;
	}
}

/* Receive for @seconds on @qp (RTS, an ALL_DEFAULT flow) with @depth WQEs of @size bytes in
 * @mr's @bufs; completions are reposted @burst at a time. */
static int receive(struct ibv_qp *qp, struct ibv_cq *cq, struct ibv_mr *mr, uint8_t *bufs,
		   int depth, int size, int burst, int seconds)
{
	struct ibv_sge sge[DEPTH];
	struct ibv_recv_wr wr[DEPTH], *bad, *list = NULL, **tail = &list;
	struct ibv_wc wc[64];
	uint64_t got = 0, last = 0;
	double start = now(), mark = start;
	int pending = 0;

	for (int i = 0; i < depth; i++) {
		sge[i] = (struct ibv_sge){ (uintptr_t)bufs + (size_t)i * 2048, (uint32_t)size,
					   mr->lkey };
		wr[i] = (struct ibv_recv_wr){ .wr_id = (uint64_t)i, .sg_list = &sge[i], .num_sge = 1,
					      .next = i + 1 < depth ? &wr[i + 1] : NULL };
	}
	if (ibv_post_recv(qp, wr, &bad))
		return 1;
	for (uint64_t i = 0;; i++) {
		int n = ibv_poll_cq(cq, 64, wc);

		if (n < 0)
			return 1;
		for (int k = 0; k < n; k++) {
			struct ibv_recv_wr *w = &wr[wc[k].wr_id];

			if (wc[k].status != IBV_WC_SUCCESS)
				return fprintf(stderr, "recv: %s\n", ibv_wc_status_str(wc[k].status)), 1;
			w->next = NULL;
			*tail = w;
			tail = &w->next;
			if (++pending >= burst) {
				if (ibv_post_recv(qp, list, &bad))
					return 1;
				list = NULL;
				tail = &list;
				pending = 0;
			}
		}
		got += (uint64_t)n;
		if ((i & 255) == 0) {
			report(got, &last, &mark);
			if (now() - start >= seconds)
				return printf("frames %llu\n", (unsigned long long)got), 0;
		}
	}
}

int main(int argc, char **argv)
{
	int burst = 32, size = 64, seconds = 5, c;
	bool inl = false, csum = false, recv = false;
	struct ibv_device **devs;
	struct ibv_context *ctx;
	struct ibv_pd *pd;
	struct ibv_cq *cq;
	struct ibv_qp *qp;
	struct ibv_mr *mr;
	static uint8_t frames[DEPTH][2048] __attribute__((aligned(64)));
	size_t stride;
	struct ibv_sge sge[DEPTH];
	struct ibv_send_wr wr[DEPTH], *bad;
	struct ibv_wc wc[64];
	uint64_t posted = 0, last = 0;
	double start, mark;

	while ((c = getopt(argc, argv, "m:b:s:t:c")) != -1) {
		switch (c) {
		case 'm':
			inl = strcmp(optarg, "inline") == 0;
			recv = strcmp(optarg, "recv") == 0;
			break;
		case 'b': burst = atoi(optarg); break;
		case 's': size = atoi(optarg); break;
		case 't': seconds = atoi(optarg); break;
		case 'c': csum = true; break;
		default: return 2;
		}
	}
	if (burst < 1 || burst > 256 || size < 60 || size > 1514)
		return 2;
	devs = ibv_get_device_list(NULL);
	if (devs == NULL || devs[0] == NULL || (ctx = ibv_open_device(devs[0])) == NULL) {
		fprintf(stderr, "no device: set DPV_EAL_ARGS\n");
		return 1;
	}
	pd = ibv_alloc_pd(ctx);
	cq = ibv_create_cq(ctx, DEPTH, NULL, NULL, 0);
	mr = ibv_reg_mr(pd, frames, sizeof(frames), IBV_ACCESS_LOCAL_WRITE);
	qp = test_raw_qp(pd, cq, (struct ibv_qp_cap){ .max_send_wr = DEPTH, .max_send_sge = 1,
						      .max_recv_wr = recv ? DEPTH : 0,
						      .max_recv_sge = 1,
						      .max_inline_data = inl ? (uint32_t)size : 0 });
	if (mr == NULL) {
		perror("setup");
		return 1;
	}
	if (recv) {
		struct ibv_flow_attr all = { .type = IBV_FLOW_ATTR_ALL_DEFAULT, .size = sizeof(all),
					     .port = 1 };
		struct ibv_flow *flow = ibv_create_flow(qp, &all);

		if (flow == NULL || receive(qp, cq, mr, (uint8_t *)frames, DEPTH, 2048, burst,
					    seconds) != 0)
			return perror("receive"), 1;
		ibv_destroy_flow(flow);
		seconds = 0;               /* done: skip the send loop */
	}
	/* frames packed back to back, as an application building them would keep them */
	stride = ((size_t)size + 63) & ~(size_t)63;
	for (int i = 0; i < DEPTH; i++) {
		uint8_t *f = (uint8_t *)frames + i * stride;

		memset(f, 0xff, 6);
		memset(f + 6, 0x02, 6);
		f[12] = 0x88;
		f[13] = 0xb5;
		if (csum) {                    /* IPv4/UDP, garbage checksums */
			uint8_t ip[28] = { 0x45, 0, (uint8_t)((size - 14) >> 8), (uint8_t)(size - 14),
					   0, 1, 0, 0, 64, 17, 0xaa, 0xbb, 10, 0, 0, 1, 10, 0, 0, 2,
					   0x30, 0x39, 0, 53, (uint8_t)((size - 34) >> 8),
					   (uint8_t)(size - 34), 0xcc, 0xdd };

			f[12] = 0x08;
			f[13] = 0x00;
			memcpy(f + 14, ip, sizeof(ip));
		}
		sge[i] = (struct ibv_sge){ (uintptr_t)f, (uint32_t)size, mr->lkey };
		wr[i] = (struct ibv_send_wr){ .wr_id = i, .sg_list = &sge[i], .num_sge = 1,
					      .opcode = IBV_WR_SEND,
					      .send_flags = inl ? IBV_SEND_INLINE : 0 };
	}
	start = mark = now();
	for (uint64_t i = 0; seconds > 0; i++) {
		int base = (int)(posted % DEPTH) / burst * burst, rc;

		/* a list of @burst WRs, the last one signaled */
		for (int k = 0; k < burst; k++) {
			wr[base + k].next = k + 1 < burst ? &wr[base + k + 1] : NULL;
			wr[base + k].send_flags = (inl ? IBV_SEND_INLINE : 0) |
						  (csum ? IBV_SEND_IP_CSUM : 0) |
						  (k + 1 == burst ? IBV_SEND_SIGNALED : 0);
		}
		rc = ibv_post_send(qp, &wr[base], &bad);
		if (rc == 0)
			posted += burst;
		else if (rc != ENOMEM)
			return fprintf(stderr, "post: %s\n", strerror(rc)), 1;
		if (ibv_poll_cq(cq, 64, wc) < 0)
			return 1;
		if ((i & 255) == 0) {
			report(posted, &last, &mark);
			if (now() - start >= seconds) {
				printf("frames %llu\n", (unsigned long long)posted);
				break;
			}
		}
	}
	ibv_destroy_qp(qp);
	ibv_dereg_mr(mr);
	ibv_destroy_cq(cq);
	ibv_dealloc_pd(pd);
	ibv_close_device(ctx);
	ibv_free_device_list(devs);
	return 0;
}
