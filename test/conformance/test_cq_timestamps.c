/* SPDX-License-Identifier: BSD-3-Clause */
/* Completion timestamps on a net_ring port (what the port sends, it receives): an ibv_cq_ex
 * created with IBV_WC_EX_WITH_COMPLETION_TIMESTAMP (and _WALLCLOCK) gives each send and
 * receive completion a time that never goes back within the CQ; each lies between two
 * readings of ibv_query_rt_values_ex taken before the post and after the poll (one clock);
 * converted with hca_core_clock (kHz), the time between two completions agrees with
 * CLOCK_MONOTONIC's readings around them; the wallclock lies between CLOCK_REALTIME's
 * readings. Timestamps survive ibv_resize_cq and ibv_poll_cq on the same CQ; a CQ without the
 * flags still polls; ibv_query_rt_values_ex refuses unknown request bits. */
#include "dpv_test.h"

#define NRX 64
#define RX_SLOT 2048
#define BATCH 8

static struct ibv_context *ctx;
static struct ibv_pd *pd;
static struct ibv_mr *mr;
static uint8_t *buf;
static struct ibv_cq_ex *scq, *rcq;
static struct ibv_qp *qp;
static uint64_t khz;

/* One completion as the extended poll API shows it. */
struct comp {
	uint64_t wr_id, ts, wall;
	enum ibv_wc_status status;
};

static uint64_t raw_clock(void)
{
	struct ibv_values_ex v = { .comp_mask = IBV_VALUES_MASK_RAW_CLOCK };

	CHECK_EQ(ibv_query_rt_values_ex(ctx, &v), 0);
	CHECK(v.comp_mask == IBV_VALUES_MASK_RAW_CLOCK && v.raw_clock.tv_sec == 0,
	      "raw clock in tv_nsec, comp_mask %u", v.comp_mask);
	return (uint64_t)v.raw_clock.tv_nsec;
}

static uint64_t clock_ns(clockid_t id)
{
	struct timespec t;

	clock_gettime(id, &t);
	return (uint64_t)t.tv_sec * 1000000000u + (uint64_t)t.tv_nsec;
}

/* Completions of @cq through the extended poll API, at most @max within 5 s. */
static int poll_ts(struct ibv_cq_ex *cq, struct comp *out, int max, bool wall)
{
	struct ibv_poll_cq_attr attr = { 0 };
	double end = test_now() + 5;
	int got = 0;

	while (got < max && test_now() < end) {
		if (ibv_start_poll(cq, &attr) != 0)
			continue;
		do {
			out[got] = (struct comp){ .wr_id = cq->wr_id, .status = cq->status,
						  .ts = ibv_wc_read_completion_ts(cq),
						  .wall = wall ? ibv_wc_read_completion_wallclock_ns(cq) : 0 };
			got++;
		} while (got < max && ibv_next_poll(cq) == 0);
		ibv_end_poll(cq);
	}
	return got;
}

static void post_recvs(int n)
{
	test_post_recvs(qp, mr, buf + 4096, RX_SLOT, n);
}

static void post_sends(int n, uint64_t first_id)
{
	for (int i = 0; i < n; i++) {
		struct ibv_sge sge = { (uintptr_t)buf, 64 + (uint32_t)i, mr->lkey };
		struct ibv_send_wr wr = { .wr_id = first_id + (uint64_t)i, .sg_list = &sge,
					  .num_sge = 1, .opcode = IBV_WR_SEND,
					  .send_flags = IBV_SEND_SIGNALED }, *bad;

		CHECK_EQ(ibv_post_send(qp, &wr, &bad), 0);
	}
}

/* Every timestamp of @c in [lo, hi] of the raw clock, none earlier than the one before (nor
 * than *@prev, the CQ's last one), wallclocks in [wlo, whi] when asked. */
static void check_order(const char *what, const struct comp *c, int n, uint64_t lo,
			uint64_t hi, uint64_t *prev, uint64_t wlo, uint64_t whi)
{
	for (int i = 0; i < n; i++) {
		CHECK(c[i].status == IBV_WC_SUCCESS, "%s %d: %s", what, i,
		      ibv_wc_status_str(c[i].status));
		CHECK(c[i].ts >= lo && c[i].ts <= hi, "%s %d: ts %lu outside the raw clock's "
		      "[%lu, %lu]", what, i, c[i].ts, lo, hi);
		CHECK(c[i].ts >= *prev, "%s %d: ts %lu before the previous %lu", what, i, c[i].ts,
		      *prev);
		*prev = c[i].ts;
		if (whi != 0)
			CHECK(c[i].wall >= wlo && c[i].wall <= whi, "%s %d: wallclock %lu outside "
			      "CLOCK_REALTIME's [%lu, %lu]", what, i, c[i].wall, wlo, whi);
	}
}

/* One batch: sends and their frames received back, between readings of every clock. */
struct batch {
	struct comp s[BATCH], r[BATCH];
	int ns, nr;
	uint64_t raw0, raw1, mono0, mono1, wall0, wall1;
};

static void run_batch(struct batch *b, uint64_t id, uint64_t *sprev, uint64_t *rprev)
{
	post_recvs(BATCH);
	b->mono0 = clock_ns(CLOCK_MONOTONIC);
	b->wall0 = clock_ns(CLOCK_REALTIME);
	b->raw0 = raw_clock();
	post_sends(BATCH, id);
	b->ns = poll_ts(scq, b->s, BATCH, true);
	b->nr = poll_ts(rcq, b->r, BATCH, false);
	b->raw1 = raw_clock();
	b->wall1 = clock_ns(CLOCK_REALTIME);
	b->mono1 = clock_ns(CLOCK_MONOTONIC);
	CHECK_EQ(b->ns, BATCH);
	CHECK_EQ(b->nr, BATCH);
	for (int i = 0; i < b->ns; i++)
		CHECK_EQ(b->s[i].wr_id, id + (uint64_t)i);
	check_order("send", b->s, b->ns, b->raw0, b->raw1, sprev, b->wall0, b->wall1);
	check_order("receive", b->r, b->nr, b->raw0, b->raw1, rprev, 0, 0);
}

/* Ticks of hca_core_clock as nanoseconds. */
static double ticks_ns(uint64_t ticks)
{
	return (double)ticks * 1e6 / (double)khz;
}

/* Two batches 30 ms apart: the time between a completion of each, from the timestamps,
 * lies within what CLOCK_MONOTONIC allows (2 % for the two clocks' rates, plus 50 us). */
static void check_advance(void)
{
	struct batch a, b;
	uint64_t sprev = 0, rprev = 0;
	struct timespec pause = { 0, 30 * 1000 * 1000 };
	double d, lo, hi;

	run_batch(&a, 100, &sprev, &rprev);
	nanosleep(&pause, NULL);
	run_batch(&b, 200, &sprev, &rprev);
	if (a.ns == 0 || b.ns == 0)
		return;
	d = ticks_ns(b.s[0].ts - a.s[a.ns - 1].ts);
	lo = (double)(b.mono0 - a.mono1) * 0.98 - 50e3;
	hi = (double)(b.mono1 - a.mono0) * 1.02 + 50e3;
	CHECK(d >= lo && d <= hi, "timestamps %.0f ns apart, CLOCK_MONOTONIC allows [%.0f, %.0f]",
	      d, lo, hi);
	CHECK(d >= 30e6 * 0.99 - 50e3, "the 30 ms pause shows: %.0f ns", d);
	d = (double)(b.s[0].wall - a.s[a.ns - 1].wall);
	CHECK(d >= 30e6, "wallclocks %.0f ns apart across a 30 ms pause", d);
}

/* Completions left in the CQ keep their timestamps through ibv_resize_cq, and ibv_poll_cq
 * takes completions of the same CQ in between. */
static void check_resize_and_mixed(void)
{
	struct comp c[BATCH];
	struct ibv_wc wc[2];
	uint64_t raw0, raw1, wall0, wall1, prev = 0;
	int n;

	post_recvs(BATCH);
	wall0 = clock_ns(CLOCK_REALTIME);
	raw0 = raw_clock();
	post_sends(BATCH, 300);
	n = test_poll(ibv_cq_ex_to_cq(scq), wc, 2);       /* two through ibv_poll_cq */
	CHECK(n == 2 && wc[0].wr_id == 300 && wc[1].wr_id == 301, "ibv_poll_cq: %d", n);
	/* the rest arrive before the resize: progress the port through the receive CQ */
	CHECK_EQ(poll_ts(rcq, c, BATCH, false), BATCH);
	CHECK_EQ(ibv_resize_cq(ibv_cq_ex_to_cq(scq), 512), 0);
	n = poll_ts(scq, c, BATCH - 2, true);
	raw1 = raw_clock();
	wall1 = clock_ns(CLOCK_REALTIME);
	CHECK_EQ(n, BATCH - 2);
	for (int i = 0; i < n; i++)
		CHECK_EQ(c[i].wr_id, 302 + (uint64_t)i);
	check_order("after resize", c, n, raw0, raw1, &prev, wall0, wall1);
}

static void check_rt_values(void)
{
	struct ibv_values_ex v = { .comp_mask = 0 };
	uint64_t a = raw_clock(), b = raw_clock();

	CHECK(b >= a, "the raw clock goes back: %lu then %lu", a, b);
	CHECK_EQ(ibv_query_rt_values_ex(ctx, &v), 0);
	CHECK_EQ(v.comp_mask, 0);
	v.comp_mask = IBV_VALUES_MASK_RESERVED;
	CHECK_EQ(ibv_query_rt_values_ex(ctx, &v), EINVAL);
}

int main(void)
{
	struct ibv_device_attr_ex attr;
	struct ibv_cq_init_attr_ex ca = {
		.cqe = 256, .wc_flags = IBV_WC_STANDARD_FLAGS | IBV_WC_EX_WITH_COMPLETION_TIMESTAMP |
					IBV_WC_EX_WITH_COMPLETION_TIMESTAMP_WALLCLOCK };
	struct ibv_qp_init_attr init = { .qp_type = IBV_QPT_RAW_PACKET,
					 .cap = { .max_send_wr = 64, .max_send_sge = 1,
						  .max_recv_wr = NRX, .max_recv_sge = 1 } };
	struct ibv_flow_attr fa = { .type = IBV_FLOW_ATTR_ALL_DEFAULT, .size = sizeof(fa),
				    .port = 1 };
	struct ibv_flow *flow;
	struct ibv_cq_ex *plain;

	ctx = test_open(NULL);
	CHECK_EQ(ibv_query_device_ex(ctx, NULL, &attr), 0);
	khz = attr.hca_core_clock;
	CHECK(khz >= 1000, "hca_core_clock %lu kHz", khz);
	CHECK(attr.completion_timestamp_mask == UINT64_MAX, "completion_timestamp_mask %#lx",
	      attr.completion_timestamp_mask);
	pd = ibv_alloc_pd(ctx);
	buf = aligned_alloc(4096, 4096 + NRX * RX_SLOT);
	memset(buf, 0, 4096);
	memset(buf, 0xff, 6);                        /* broadcast, so the port takes it back */
	buf[12] = 0x88;
	buf[13] = 0xb5;
	mr = pd ? ibv_reg_mr(pd, buf, 4096 + NRX * RX_SLOT, IBV_ACCESS_LOCAL_WRITE) : NULL;
	scq = ibv_create_cq_ex(ctx, &ca);
	ca.wc_flags = IBV_WC_STANDARD_FLAGS | IBV_WC_EX_WITH_COMPLETION_TIMESTAMP;
	rcq = ibv_create_cq_ex(ctx, &ca);
	if (mr == NULL || scq == NULL || rcq == NULL) {
		fprintf(stderr, "set-up: %s\n", strerror(errno));
		return 1;
	}
	init.send_cq = ibv_cq_ex_to_cq(scq);
	init.recv_cq = ibv_cq_ex_to_cq(rcq);
	qp = ibv_create_qp(pd, &init);
	if (qp == NULL || test_qp_to(qp, IBV_QPS_INIT) || test_qp_to(qp, IBV_QPS_RTR) ||
	    test_qp_to(qp, IBV_QPS_RTS)) {
		fprintf(stderr, "QP: %s\n", strerror(errno));
		return 1;
	}
	flow = ibv_create_flow(qp, &fa);
	CHECK(flow != NULL, "ALL_DEFAULT flow: %s", strerror(errno));

	check_rt_values();
	check_advance();
	check_resize_and_mixed();
	ca.wc_flags = IBV_WC_STANDARD_FLAGS;
	plain = ibv_create_cq_ex(ctx, &ca);
	CHECK(plain != NULL, "a CQ without timestamps: %s", strerror(errno));
	ca.wc_flags = IBV_WC_EX_WITH_CVLAN;
	errno = 0;
	CHECK(ibv_create_cq_ex(ctx, &ca) == NULL && errno == EOPNOTSUPP, "CVLAN: EOPNOTSUPP");

	if (flow != NULL)
		CHECK_EQ(ibv_destroy_flow(flow), 0);
	CHECK_EQ(ibv_destroy_qp(qp), 0);
	CHECK_EQ(ibv_destroy_cq(ibv_cq_ex_to_cq(scq)), 0);
	CHECK_EQ(ibv_destroy_cq(ibv_cq_ex_to_cq(rcq)), 0);
	if (plain != NULL)
		CHECK_EQ(ibv_destroy_cq(ibv_cq_ex_to_cq(plain)), 0);
	CHECK_EQ(ibv_dereg_mr(mr), 0);
	CHECK_EQ(ibv_dealloc_pd(pd), 0);
	CHECK_EQ(ibv_close_device(ctx), 0);
	free(buf);
	return test_done("cq_timestamps");
}
