/* SPDX-License-Identifier: BSD-3-Clause */
/* dpv-bench: RAW_PACKET SEND rate through verbs, one thread, to the first device (net_null in
 * the benchmark suite). Prints one "Mpps <value>" line per second of the run.
 *   dpv-bench [-m inline|zc|recv] [-b burst] [-s size] [-t seconds] [-c] [-p direct|service]
 *             [-d] [-y]
 * -c: UDP/IPv4 frames sent with IBV_SEND_IP_CSUM (the checksum cost, by difference).
 * -p service: the QP in service mode (a service lcore sends; the EAL needs a worker lcore).
 * -d: the QP in a thread domain (no QP lock), as a single-threaded application would use it.
 * -y: at the end, TSC cycles per WR by stage (needs cycle_stats = 1 in the configuration).
 * -n count: stop after about @count WRs instead of after @seconds (for instruction counts
 *    under valgrind --tool=callgrind, which do not depend on the machine's load).
 * -m recv: the receive rate instead: every frame the port gives (net_null makes them) steered
 * by an ALL_DEFAULT flow into receive WQEs of @size bytes, each completion's WQE posted again
 * (in lists of up to @burst). The last lines are "cpu-ns/frame <ns>", the process's CPU time
 * per frame, and "frames <count>", the whole run's; with -y,
 * before it, ns per frame by stage ("stages ...": cycle_stats = 1 in the configuration).
 * -f N: with -m recv, the QP takes its frames through N NORMAL flows on destination MACs
 *    (the one of net_null's frames last) instead of an ALL_DEFAULT flow.
 * -T N: with -m recv, N threads, each with a context, a CQ and a QP of its own (a thread
 *    registered with dpv_thread_register) taking the frames to destination MAC
 *    02:00:00:00:00:0a + its index (the queues of a multi-queue port each carry one: net_pcap
 *    with an rx_pcap per queue); "Mpps" lines are the sum, then "cpu-ns/frame". */
#include <pthread.h>
#include <getopt.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "dpv_test.h"

#define DEPTH 1024

static double now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec * 1e-9;
}

/* CPU time the process had: on a machine shared with other work it says what a frame costs
 * better than the wall clock, which counts the time others had the CPU. */
static double cpu_now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
	return ts.tv_sec + ts.tv_nsec * 1e-9;
}

/* A RAW_PACKET QP in RTS, in @mode, in a thread domain if @td. */
static struct ibv_qp *bench_qp(struct ibv_context *ctx, struct ibv_pd *pd, struct ibv_cq *cq,
			       struct ibv_qp_cap cap, enum dpv_progress mode, bool td)
{
	struct ibv_qp_init_attr_ex a = { .send_cq = cq, .recv_cq = cq, .cap = cap,
					 .qp_type = IBV_QPT_RAW_PACKET,
					 .comp_mask = IBV_QP_INIT_ATTR_PD, .pd = pd };
	struct ibv_qp *qp;

	if (td) {
		struct ibv_td *t = ibv_alloc_td(ctx, &(struct ibv_td_init_attr){ 0 });
		struct ibv_parent_domain_init_attr pa = { .pd = pd, .td = t };

		a.pd = t ? ibv_alloc_parent_domain(ctx, &pa) : NULL;
	}
	qp = a.pd ? ibv_create_qp_ex(ctx, &a) : NULL;
	if (qp == NULL || dpv_qp_set_progress(qp, mode) != 0 || test_qp_to(qp, IBV_QPS_INIT) ||
	    test_qp_to(qp, IBV_QPS_RTR) || test_qp_to(qp, IBV_QPS_RTS)) {
		fprintf(stderr, "QP: %s\n", strerror(errno));
		exit(1);
	}
	return qp;
}

static void print_cycles(struct ibv_qp *qp)
{
	struct dpv_qp_counters c;

	if (dpv_query_qp_counters(qp, &c) != 0 || c.tx_wrs == 0 || c.tx_completed == 0)
		return;
	printf("cycles/WR validate %.1f build %.1f burst %.1f complete %.1f (TSC %.2f GHz)\n",
	       (double)c.cycles_validate / c.tx_wrs, (double)c.cycles_build / c.tx_wrs,
	       (double)c.cycles_burst / c.tx_wrs, (double)c.cycles_complete / c.tx_completed,
	       c.tsc_hz / 1e9);
}

/* ns per received frame by stage, from the port's, the QP's and the CQ's cycle counters;
 * "other" is the rest (the bench's loop, progress). The counters count TSC cycles, which run
 * on while another process has the CPU: each stage's share of the wall-clock time (@wall
 * seconds in all) is scaled to the CPU time the run had (@cpu seconds), so that a machine
 * shared with other work does not inflate them. */
static void print_recv_stages(struct ibv_context *ctx, struct ibv_qp *qp, struct ibv_cq *cq,
			      double wall, double cpu)
{
	struct dpv_port_stats p;
	struct dpv_qp_counters q;
	struct dpv_cq_counters c;
	double f, ns, st[7], sum = 0, scale;
	static const char *const name[7] = { "rx_burst", "classify", "copy", "cqe", "free", "poll",
					     "repost" };

	if (dpv_query_port_stats(ctx, &p) || dpv_query_qp_counters(qp, &q) ||
	    dpv_query_cq_counters(cq, &c) || p.rx_frames == 0 || p.tsc_hz == 0)
		return;
	f = (double)p.rx_frames;
	ns = 1e9 / (double)p.tsc_hz;
	st[0] = p.rx_cycles_burst * ns / f;
	st[1] = p.rx_cycles_classify * ns / f;
	st[2] = p.rx_cycles_copy * ns / f;
	st[3] = p.rx_cycles_cqe * ns / f;
	st[4] = p.rx_cycles_free * ns / f;
	st[5] = c.polled ? c.cycles_poll * ns / c.polled : 0;
	st[6] = q.rx_wrs ? q.cycles_recv_post * ns / q.rx_wrs : 0;
	scale = wall > 0 ? cpu / wall : 1;
	printf("stages ns/frame");
	for (int i = 0; i < 7; i++) {
		printf(" %s %.2f", name[i], st[i] * scale);
		sum += st[i];
	}
	printf(" other %.2f total %.2f (CPU %.0f %% of the wall clock)\n",
	       (wall * 1e9 / f - sum) * scale, cpu * 1e9 / f, scale * 100);
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
		   int depth, int size, int burst, int seconds, uint64_t limit, double *wall,
		   double *cpu)
{
	struct ibv_sge sge[DEPTH];
	struct ibv_recv_wr wr[DEPTH], *bad, *list = NULL, **tail = &list;
	struct ibv_wc wc[64];
	uint64_t got = 0, last = 0;
	double start = now(), mark = start;
	int pending = 0;

	double cpu0 = cpu_now();
#define DONE() (printf("cpu-ns/frame %.2f\nframes %llu\n", (cpu_now() - cpu0) * 1e9 / (double)got, \
		       (unsigned long long)got), *cpu = cpu_now() - cpu0, *wall = now() - start, 0)

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
		if (limit != 0 && got >= limit)
			return DONE();
		if ((i & 255) == 0) {
			report(got, &last, &mark);
			if (now() - start >= seconds)
				return DONE();
		}
	}
}

/* A NORMAL rule steering frames to destination MAC @mac to @qp. */
static struct ibv_flow *dmac_flow(struct ibv_qp *qp, const uint8_t mac[6])
{
	struct {
		struct ibv_flow_attr attr;
		struct ibv_flow_spec_eth eth;
	} r = {
		.attr = { .type = IBV_FLOW_ATTR_NORMAL, .size = sizeof(r), .num_of_specs = 1,
			  .port = 1 },
		.eth = { .type = IBV_FLOW_SPEC_ETH, .size = sizeof(r.eth),
			 .mask.dst_mac = { 0xff, 0xff, 0xff, 0xff, 0xff, 0xff } },
	};

	memcpy(r.eth.val.dst_mac, mac, 6);
	return ibv_create_flow(qp, &r.attr);
}

/* The receiving QP's flows: one ALL_DEFAULT (@n 0), or @n NORMAL ones on destination MACs,
 * the last of them net_null's (all zeros). */
static int recv_flows(struct ibv_qp *qp, struct ibv_flow **flow, int n)
{
	struct ibv_flow_attr all = { .type = IBV_FLOW_ATTR_ALL_DEFAULT, .size = sizeof(all),
				     .port = 1 };

	if (n == 0) {
		flow[0] = ibv_create_flow(qp, &all);
		return flow[0] == NULL ? -1 : 0;
	}
	for (int i = 0; i < n; i++) {
		uint8_t mac[6] = { 2, 0, 0, 0, 0, (uint8_t)(i + 1) };

		if (i == n - 1)
			memset(mac, 0, 6);
		flow[i] = dmac_flow(qp, mac);
		if (flow[i] == NULL)
			return -1;
	}
	return 0;
}

/* -T: the threads' shared state. */
struct recv_thread {
	pthread_t th;
	int index, burst, seconds;
	struct ibv_device *dev;
	uint64_t frames;              /* received so far (__atomic) */
	int rc;
	double wall, cpu;
};

static int stop_threads;

static void *recv_thread_main(void *arg)
{
	struct recv_thread *t = arg;
	struct ibv_context *ctx = ibv_open_device(t->dev);
	struct ibv_pd *pd = ctx ? ibv_alloc_pd(ctx) : NULL;
	struct ibv_cq *cq = pd ? ibv_create_cq(ctx, DEPTH, NULL, NULL, 0) : NULL;
	uint8_t *bufs = aligned_alloc(4096, (size_t)DEPTH * 2048);
	struct ibv_mr *mr = cq && bufs ? ibv_reg_mr(pd, bufs, (size_t)DEPTH * 2048,
						    IBV_ACCESS_LOCAL_WRITE) : NULL;
	const uint8_t mac[6] = { 2, 0, 0, 0, 0, (uint8_t)(0x0a + t->index) };
	struct ibv_sge sge[DEPTH];
	struct ibv_recv_wr wr[DEPTH], *bad, *list = NULL, **tail = &list;
	struct ibv_wc wc[64];
	struct ibv_qp *qp;
	struct ibv_flow *flow;
	int pending = 0;
	struct timespec c0, c1;
	double start;

	t->rc = 1;
	if (mr == NULL || dpv_thread_register() != 0)
		return NULL;
	qp = bench_qp(ctx, pd, cq, (struct ibv_qp_cap){ .max_recv_wr = DEPTH, .max_recv_sge = 1,
							 .max_send_wr = 1, .max_send_sge = 1 },
		      DPV_PROGRESS_DIRECT, false);
	flow = dmac_flow(qp, mac);
	for (int i = 0; i < DEPTH; i++) {
		sge[i] = (struct ibv_sge){ (uintptr_t)bufs + (size_t)i * 2048, 2048, mr->lkey };
		wr[i] = (struct ibv_recv_wr){ .wr_id = (uint64_t)i, .sg_list = &sge[i], .num_sge = 1,
					      .next = i + 1 < DEPTH ? &wr[i + 1] : NULL };
	}
	if (flow == NULL || ibv_post_recv(qp, wr, &bad) != 0)
		return NULL;
	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &c0);
	start = now();
	while (!__atomic_load_n(&stop_threads, __ATOMIC_ACQUIRE)) {
		int n = ibv_poll_cq(cq, 64, wc);

		for (int k = 0; k < n; k++) {
			struct ibv_recv_wr *w = &wr[wc[k].wr_id];

			if (wc[k].status != IBV_WC_SUCCESS)
				return NULL;
			w->next = NULL;
			*tail = w;
			tail = &w->next;
			if (++pending >= t->burst) {
				if (ibv_post_recv(qp, list, &bad))
					return NULL;
				list = NULL;
				tail = &list;
				pending = 0;
			}
		}
		if (n > 0)
			__atomic_store_n(&t->frames, t->frames + (uint64_t)n, __ATOMIC_RELAXED);
	}
	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &c1);
	t->wall = now() - start;
	t->cpu = (double)(c1.tv_sec - c0.tv_sec) + (double)(c1.tv_nsec - c0.tv_nsec) * 1e-9;
	ibv_destroy_flow(flow);
	ibv_destroy_qp(qp);
	ibv_dereg_mr(mr);
	ibv_destroy_cq(cq);
	ibv_dealloc_pd(pd);
	ibv_close_device(ctx);
	free(bufs);
	dpv_thread_unregister();
	t->rc = 0;
	return NULL;
}

/* -T: @n receiving threads for @seconds; per-second sums, then CPU ns per frame (the threads'
 * CPU time over their frames). */
static int recv_threads(struct ibv_device *dev, int n, int burst, int seconds)
{
	struct recv_thread t[16];
	uint64_t last = 0, total = 0;
	double start = now(), mark = start, cpu = 0;
	int rc = 0;

	for (int i = 0; i < n; i++) {
		t[i] = (struct recv_thread){ .index = i, .burst = burst, .dev = dev };
		pthread_create(&t[i].th, NULL, recv_thread_main, &t[i]);
	}
	while (now() - start < seconds) {
		usleep(10000);
		total = 0;
		for (int i = 0; i < n; i++)
			total += __atomic_load_n(&t[i].frames, __ATOMIC_RELAXED);
		report(total, &last, &mark);
	}
	__atomic_store_n(&stop_threads, 1, __ATOMIC_RELEASE);
	total = 0;
	for (int i = 0; i < n; i++) {
		pthread_join(t[i].th, NULL);
		rc |= t[i].rc;
		total += t[i].frames;
		cpu += t[i].cpu;
		printf("thread %d: %llu frames, %.0f %% of a CPU\n", i,
		       (unsigned long long)t[i].frames, t[i].wall > 0 ? 100 * t[i].cpu / t[i].wall : 0);
	}
	printf("cpu-ns/frame %.2f\nframes %llu\n", total ? cpu * 1e9 / (double)total : 0,
	       (unsigned long long)total);
	return rc;
}

int main(int argc, char **argv)
{
	int burst = 32, size = 64, seconds = 5, nflows = 0, threads = 0, c;
	bool inl = false, csum = false, recv = false, td = false, cycles = false;
	enum dpv_progress mode = DPV_PROGRESS_DIRECT;
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
	uint64_t posted = 0, last = 0, limit = 0, stuck = 0;
	int ring, got, spins = 0;
	double start, mark;

	while ((c = getopt(argc, argv, "m:b:s:t:cp:dyn:f:T:")) != -1) {
		switch (c) {
		case 'm':
			inl = strcmp(optarg, "inline") == 0;
			recv = strcmp(optarg, "recv") == 0;
			break;
		case 'b': burst = atoi(optarg); break;
		case 's': size = atoi(optarg); break;
		case 't': seconds = atoi(optarg); break;
		case 'c': csum = true; break;
		case 'p':
			mode = strcmp(optarg, "service") == 0 ? DPV_PROGRESS_SERVICE :
							       DPV_PROGRESS_DIRECT;
			break;
		case 'd': td = true; break;
		case 'y': cycles = true; break;
		case 'n': limit = strtoull(optarg, NULL, 0); break;
		case 'f': nflows = atoi(optarg); break;
		case 'T': threads = atoi(optarg); break;
		default: return 2;
		}
	}
	if (burst < 1 || burst > 256 || size < 60 || size > 1514 || nflows < 0 || nflows > 64 ||
	    threads < 0 || threads > 16)
		return 2;
	devs = ibv_get_device_list(NULL);
	if (devs == NULL || devs[0] == NULL || (ctx = ibv_open_device(devs[0])) == NULL) {
		fprintf(stderr, "no device: set DPV_EAL_ARGS\n");
		return 1;
	}
	if (recv && threads > 0) {
		int rc = recv_threads(devs[0], threads, burst, seconds);

		ibv_close_device(ctx);
		ibv_free_device_list(devs);
		return rc;
	}
	pd = ibv_alloc_pd(ctx);
	cq = ibv_create_cq(ctx, DEPTH, NULL, NULL, 0);
	mr = ibv_reg_mr(pd, frames, sizeof(frames), IBV_ACCESS_LOCAL_WRITE);
	qp = bench_qp(ctx, pd, cq, (struct ibv_qp_cap){ .max_send_wr = DEPTH, .max_send_sge = 1,
							.max_recv_wr = recv ? DEPTH : 0,
							.max_recv_sge = 1,
							.max_inline_data = inl ? (uint32_t)size : 0 },
		      mode, td);
	if (mr == NULL) {
		perror("setup");
		return 1;
	}
	if (recv) {
		struct ibv_flow *flow[64];
		double wall = 0, cpu = 0;

		if (recv_flows(qp, flow, nflows) != 0 ||
		    receive(qp, cq, mr, (uint8_t *)frames, DEPTH, 2048, burst, seconds, limit,
			    &wall, &cpu) != 0)
			return perror("receive"), 1;
		if (cycles)
			print_recv_stages(ctx, qp, cq, wall, cpu);
		for (int i = 0; i < (nflows ? nflows : 1); i++)
			ibv_destroy_flow(flow[i]);
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
	/* lists of @burst WRs, the last of each signaled; a list the SQ took only part of (ENOMEM)
	 * goes on from the first WR not posted */
	ring = DEPTH / burst * burst;
	for (int k = 0; k < ring; k++) {
		bool last_of_list = (k + 1) % burst == 0;

		wr[k].next = last_of_list ? NULL : &wr[k + 1];
		wr[k].send_flags = (inl ? IBV_SEND_INLINE : 0) | (csum ? IBV_SEND_IP_CSUM : 0) |
				   (last_of_list ? IBV_SEND_SIGNALED : 0);
	}
	start = mark = now();
	for (uint64_t i = 0; seconds > 0; i++) {
		int at = (int)(posted % (uint64_t)ring), end = (at / burst + 1) * burst, rc;

		rc = ibv_post_send(qp, &wr[at], &bad);
		if (rc == 0)
			posted += (uint64_t)(end - at);
		else if (rc == ENOMEM)
			posted += (uint64_t)(bad - &wr[at]);
		else
			return fprintf(stderr, "post: %s\n", strerror(rc)), 1;
		got = ibv_poll_cq(cq, 64, wc);
		if (got < 0)
			return 1;
		/* the SQ full and nothing completed: the service lcore (or the port) is behind;
		 * after a while let it have the CPU if it shares this one (always so under
		 * valgrind, where a count, -n, sleeps at once so that failed posts do not fill
		 * the count) */
		if (rc == ENOMEM && got == 0 && bad == &wr[at]) {
			stuck++;
			if (limit != 0)
				usleep(200);
			else if (++spins % 4096 == 0)
				sched_yield();
		} else {
			spins = 0;
		}
		if (limit != 0 && posted >= limit) {
			printf("frames %llu\nstuck %llu\n", (unsigned long long)posted,
			       (unsigned long long)stuck);
			break;
		}
		if ((i & 255) == 0) {
			report(posted, &last, &mark);
			if (now() - start >= seconds) {
				printf("frames %llu\n", (unsigned long long)posted);
				break;
			}
		}
	}
	if (cycles)
		print_cycles(qp);
	ibv_destroy_qp(qp);
	ibv_dereg_mr(mr);
	ibv_destroy_cq(cq);
	ibv_dealloc_pd(pd);
	ibv_close_device(ctx);
	ibv_free_device_list(devs);
	return 0;
}
