/* SPDX-License-Identifier: BSD-3-Clause */
/* Packet pacing of RAW_PACKET QPs on a net_ring port (what the port sends, it receives):
 * ibv_query_device_ex reports packet_pacing_caps for RAW_PACKET; a QP paced at 8 Mb/s with a
 * 2000-byte bucket sends a 100 KB list no faster than the rate allows, every frame arrives,
 * each WR completes; in direct mode and in service mode; ibv_query_qp says the rate; rate 0
 * lifts it; ibv_modify_qp_rate_limit refuses comp_mask bits, a burst without a rate, a rate
 * outside the caps and a QP not in RTS (EINVAL, as mlx5).
 *
 * The bound: the bucket (BUCKET bytes, full when the rate is set, never fuller) and the WR
 * that empties it below zero go at once, the rest at the rate, so the N WRs cannot all have
 * left within less than (N x LEN - BUCKET - LEN) / rate: at 1,000,000 bytes/s, 97 ms (WRs 0
 * and 1 at t = 0, WR 2 as soon as the bucket is above 0, WR k at (k - 2) ms). It is measured
 * from a reading of the completions' clock (the TSC, ibv_query_rt_values_ex) taken before the
 * list is posted, which no frame can precede, to the last completion's timestamp, which no
 * frame can follow; the pacer counts the same clock at the same rate (hca_core_clock), so
 * only rounding is allowed for. The first completion's timestamp is no start: a completion
 * is written when a poll finds its frame released, which a poller descheduled right after
 * the post delays while the frames go (once: it read 95.2 ms of 97). So each mode runs
 * twice: polling at once, and after a 3 ms pause past the post (a poller that lost the CPU
 * for a time slice). The QP is idle 20 ms before each list: the bucket must not have grown
 * past BUCKET meanwhile (20 frames at once would end the list 20 ms early). No upper bound:
 * a loaded machine is only slower. */
#include "dpv_test.h"

#define N 100
#define LEN 1000
#define NRX 128
#define RX_SLOT 2048
#define RATE_KBPS 8000u            /* 1,000,000 bytes/s */
#define BUCKET 2000u

static struct ibv_context *ctx;
static struct ibv_pd *pd;
static struct ibv_mr *mr;
static uint8_t *buf;
static uint64_t khz;
static uint64_t posted;            /* the TSC just before the list was posted */
static struct ibv_cq *rcq;
static struct ibv_qp *rqp;

static void post_recvs(int n)
{
	test_post_recvs(rqp, mr, buf + 4096, RX_SLOT, n);
}

/* A RAW_PACKET QP sending on @cq (a timestamping cq_ex), in RTS, direct or service mode. */
static struct ibv_qp *sender(struct ibv_cq_ex *cq, enum dpv_progress mode)
{
	struct ibv_qp_init_attr init = { .qp_type = IBV_QPT_RAW_PACKET,
					 .send_cq = ibv_cq_ex_to_cq(cq), .recv_cq = rcq,
					 .cap = { .max_send_wr = 128, .max_send_sge = 1 } };
	struct ibv_qp *qp = ibv_create_qp(pd, &init);

	if (qp == NULL || dpv_qp_set_progress(qp, mode) != 0 || test_qp_to(qp, IBV_QPS_INIT) ||
	    test_qp_to(qp, IBV_QPS_RTR) || test_qp_to(qp, IBV_QPS_RTS)) {
		fprintf(stderr, "sender QP: %s\n", strerror(errno));
		exit(1);
	}
	return qp;
}

/* The completions' clock now (the TSC). */
static uint64_t clock_now(void)
{
	struct ibv_values_ex v = { .comp_mask = IBV_VALUES_MASK_RAW_CLOCK };

	CHECK_EQ(ibv_query_rt_values_ex(ctx, &v), 0);
	CHECK_EQ(v.comp_mask, IBV_VALUES_MASK_RAW_CLOCK);
	return (uint64_t)v.raw_clock.tv_nsec;
}

/* Post N WRs of LEN bytes as one list (the clock read just before into posted), poll after
 * @pause_us; the completions' first and last timestamps. Returns the successful completions. */
static int send_list(struct ibv_qp *qp, struct ibv_cq_ex *cq, unsigned int pause_us,
		     uint64_t *first, uint64_t *last)
{
	struct ibv_sge sge[N];
	struct ibv_send_wr wr[N], *bad;
	struct ibv_poll_cq_attr pa = { 0 };
	double end;
	int got = 0, ok = 0;

	for (int i = 0; i < N; i++) {
		sge[i] = (struct ibv_sge){ (uintptr_t)buf, LEN, mr->lkey };
		wr[i] = (struct ibv_send_wr){ .wr_id = (uint64_t)i, .sg_list = &sge[i],
					      .num_sge = 1, .opcode = IBV_WR_SEND,
					      .send_flags = IBV_SEND_SIGNALED,
					      .next = i + 1 < N ? &wr[i + 1] : NULL };
	}
	posted = clock_now();
	CHECK_EQ(ibv_post_send(qp, wr, &bad), 0);
	if (pause_us != 0)
		usleep(pause_us);
	end = test_now() + 20;
	while (got < N && test_now() < end) {
		if (ibv_start_poll(cq, &pa) != 0)
			continue;
		do {
			uint64_t ts = ibv_wc_read_completion_ts(cq);

			CHECK(cq->wr_id == (uint64_t)got, "completion %d is WR %lu", got, cq->wr_id);
			ok += cq->status == IBV_WC_SUCCESS;
			if (got == 0)
				*first = ts;
			*last = ts;
			got++;
		} while (got < N && ibv_next_poll(cq) == 0);
		ibv_end_poll(cq);
	}
	return ok;
}

/* The frames the receiving QP got back: every one, LEN bytes. */
static void check_received(void)
{
	struct ibv_wc wc[N];
	int n = test_poll(rcq, wc, N), good = 0;

	for (int i = 0; i < n; i++)
		good += wc[i].status == IBV_WC_SUCCESS && wc[i].byte_len == LEN;
	CHECK(n == N && good == N, "received %d frames, %d of %d bytes", n, good, LEN);
}

static void check_paced(enum dpv_progress mode, unsigned int pause_us)
{
	struct ibv_cq_init_attr_ex ca = { .cqe = 256, .wc_flags = IBV_WC_STANDARD_FLAGS |
					  IBV_WC_EX_WITH_COMPLETION_TIMESTAMP };
	struct ibv_cq_ex *cq = ibv_create_cq_ex(ctx, &ca);
	struct ibv_qp *qp;
	struct ibv_qp_rate_limit_attr rl = { .rate_limit = RATE_KBPS, .max_burst_sz = BUCKET };
	struct ibv_qp_attr qa;
	struct ibv_qp_init_attr qi;
	uint64_t first = 0, last = 0;
	double ns, need, from_first;
	char what[64];

	snprintf(what, sizeof(what), "%s, polled %u us after the post",
		 mode == DPV_PROGRESS_DIRECT ? "direct" : "service", pause_us);
	if (cq == NULL) {
		fprintf(stderr, "cq: %s\n", strerror(errno));
		exit(1);
	}
	qp = sender(cq, mode);
	CHECK_EQ(ibv_modify_qp_rate_limit(qp, &rl), 0);
	CHECK_EQ(ibv_query_qp(qp, &qa, IBV_QP_RATE_LIMIT, &qi), 0);
	CHECK(qa.rate_limit == RATE_KBPS, "%s: ibv_query_qp rate_limit %u", what, qa.rate_limit);
	post_recvs(N);
	usleep(20000);                  /* idle: the bucket stays at BUCKET */
	CHECK(send_list(qp, cq, pause_us, &first, &last) == N, "%s: %d WRs complete", what, N);
	check_received();
	/* BUCKET bytes and the WR that empties the bucket go at once, the rest at the rate;
	 * 1 us for rounding (the pacer and this count the same TSC at the same rate) */
	ns = (double)(last - posted) * 1e6 / (double)khz;
	from_first = (double)(last - first) * 1e6 / (double)khz;
	need = (double)(N * LEN - BUCKET - LEN) * 8e6 / RATE_KBPS - 1000;
	CHECK(ns >= need, "%s: %d x %d bytes at %u kb/s took %.0f ns from the post "
	      "(%.0f from the first completion), at least %.0f expected",
	      what, N, LEN, RATE_KBPS, ns, from_first, need);

	rl = (struct ibv_qp_rate_limit_attr){ .rate_limit = 0 };
	CHECK_EQ(ibv_modify_qp_rate_limit(qp, &rl), 0);
	CHECK_EQ(ibv_query_qp(qp, &qa, IBV_QP_RATE_LIMIT, &qi), 0);
	CHECK_EQ(qa.rate_limit, 0);
	post_recvs(N);
	CHECK(send_list(qp, cq, 0, &first, &last) == N, "%s: unpaced, %d WRs complete", what, N);
	check_received();
	CHECK_EQ(ibv_destroy_qp(qp), 0);
	CHECK_EQ(ibv_destroy_cq(ibv_cq_ex_to_cq(cq)), 0);
}

static void check_refusals(void)
{
	struct ibv_cq *cq = ibv_create_cq(ctx, 8, NULL, NULL, 0);
	struct ibv_qp_init_attr init = { .qp_type = IBV_QPT_RAW_PACKET, .send_cq = cq,
					 .recv_cq = cq, .cap = { .max_send_wr = 4, .max_send_sge = 1 } };
	struct ibv_qp *qp = ibv_create_qp(pd, &init);
	struct ibv_qp_rate_limit_attr rl = { .rate_limit = 1000 };

	CHECK(qp != NULL, "%s", strerror(errno));
	if (qp == NULL)
		return;
	CHECK_EQ(test_qp_to(qp, IBV_QPS_INIT), 0);
	CHECK_EQ(test_qp_to(qp, IBV_QPS_RTR), 0);
	CHECK_EQ(ibv_modify_qp_rate_limit(qp, &rl), EINVAL);           /* RTR: not RTS */
	CHECK_EQ(test_qp_to(qp, IBV_QPS_RTS), 0);
	CHECK_EQ(ibv_modify_qp_rate_limit(qp, &rl), 0);
	rl.comp_mask = 1;
	CHECK_EQ(ibv_modify_qp_rate_limit(qp, &rl), EINVAL);
	rl = (struct ibv_qp_rate_limit_attr){ .max_burst_sz = 4096 };
	CHECK_EQ(ibv_modify_qp_rate_limit(qp, &rl), EINVAL);           /* a burst, no rate */
	rl = (struct ibv_qp_rate_limit_attr){ .typical_pkt_sz = 1000 };
	CHECK_EQ(ibv_modify_qp_rate_limit(qp, &rl), EINVAL);
	rl = (struct ibv_qp_rate_limit_attr){ .rate_limit = 400000001 };
	CHECK_EQ(ibv_modify_qp_rate_limit(qp, &rl), EINVAL);           /* above the caps */
	CHECK_EQ(ibv_destroy_qp(qp), 0);
	CHECK_EQ(ibv_destroy_cq(cq), 0);
}

int main(void)
{
	struct ibv_device_attr_ex attr;
	struct ibv_flow_attr fa = { .type = IBV_FLOW_ATTR_ALL_DEFAULT, .size = sizeof(fa),
				    .port = 1 };
	struct ibv_flow *flow;

	ctx = test_open(NULL);
	CHECK_EQ(ibv_query_device_ex(ctx, NULL, &attr), 0);
	khz = attr.hca_core_clock;
	CHECK(attr.packet_pacing_caps.qp_rate_limit_min == 1 &&
	      attr.packet_pacing_caps.qp_rate_limit_max == 400000000 &&
	      attr.packet_pacing_caps.supported_qpts == 1u << IBV_QPT_RAW_PACKET,
	      "packet_pacing_caps %u..%u kb/s, QP types %#x",
	      attr.packet_pacing_caps.qp_rate_limit_min, attr.packet_pacing_caps.qp_rate_limit_max,
	      attr.packet_pacing_caps.supported_qpts);
	pd = ibv_alloc_pd(ctx);
	buf = aligned_alloc(4096, 4096 + NRX * RX_SLOT);
	memset(buf, 0, 4096);
	memset(buf, 0xff, 6);
	buf[12] = 0x88;
	buf[13] = 0xb5;
	mr = pd ? ibv_reg_mr(pd, buf, 4096 + NRX * RX_SLOT, IBV_ACCESS_LOCAL_WRITE) : NULL;
	rcq = ibv_create_cq(ctx, 256, NULL, NULL, 0);
	if (mr == NULL || rcq == NULL) {
		fprintf(stderr, "set-up: %s\n", strerror(errno));
		return 1;
	}
	rqp = test_raw_qp(pd, rcq, (struct ibv_qp_cap){ .max_send_wr = 1, .max_send_sge = 1,
							 .max_recv_wr = NRX, .max_recv_sge = 1 });
	flow = ibv_create_flow(rqp, &fa);
	CHECK(flow != NULL, "ALL_DEFAULT flow: %s", strerror(errno));

	check_refusals();
	check_paced(DPV_PROGRESS_DIRECT, 0);
	check_paced(DPV_PROGRESS_DIRECT, 3000);
	check_paced(DPV_PROGRESS_SERVICE, 0);
	check_paced(DPV_PROGRESS_SERVICE, 3000);

	if (flow != NULL)
		CHECK_EQ(ibv_destroy_flow(flow), 0);
	CHECK_EQ(ibv_destroy_qp(rqp), 0);
	CHECK_EQ(ibv_destroy_cq(rcq), 0);
	CHECK_EQ(ibv_dereg_mr(mr), 0);
	CHECK_EQ(ibv_dealloc_pd(pd), 0);
	CHECK_EQ(ibv_close_device(ctx), 0);
	free(buf);
	return test_done("pacing");
}
