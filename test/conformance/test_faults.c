/* SPDX-License-Identifier: BSD-3-Clause */
/* Fault injection on a net_ring port (what a RAW QP sends, the port receives): frames carrying
 * a sequence number go out, and what arrives is what dpv_set_port_faults promised — a dropped
 * frame never, a duplicate twice, a reordered one later than its successor, a corrupted one
 * with exactly one byte of its second half inverted — with the counters of
 * dpv_query_port_faults adding up to what the receiver saw, the same seed giving the same
 * decisions, and the errors of a bad call. */
#include "dpv_test.h"

#define FRAMES 2000
#define LEN 128
#define SLOTS 64

static struct ibv_context *ctx;
static struct ibv_pd *pd;
static struct ibv_cq *scq, *rcq;
static struct ibv_mr *mr;
static struct ibv_qp *tx, *rx;
static uint8_t *buf;                /* [0, LEN): the frame to send; then SLOTS receive buffers */

static void post_recv(int slot)
{
	struct ibv_sge sge = { (uintptr_t)buf + 4096 + (size_t)slot * 2048, 2048, mr->lkey };
	struct ibv_recv_wr wr = { .wr_id = (uint64_t)slot, .sg_list = &sge, .num_sge = 1 }, *bad;

	CHECK_EQ(ibv_post_recv(rx, &wr, &bad), 0);
}

static void frame(uint8_t *f, uint32_t seq)
{
	memcpy(f, "\x02\x00\x00\x00\x00\xaa\x02\x00\x00\x00\x00\x01\x88\xb5", 14);
	memcpy(f + 14, &seq, 4);
	for (int i = 18; i < LEN; i++)
		f[i] = (uint8_t)(seq * 7 + (uint32_t)i);
}

/* Send FRAMES numbered frames one by one (each sent before the next is built: the QP sends by
 * copy below tx_copy_max) and record what arrives: order[] gets the sequence numbers in
 * arrival order, bad[] counts frames whose bytes differ from what was sent (for each, exactly
 * one inverted byte in the second half), *n the arrivals. */
static void run(uint32_t *order, int *n, int *bad, int *bad_shape)
{
	struct ibv_wc wc[32];
	int got = 0, idle = 0;

	*bad = *bad_shape = 0;
	for (uint32_t s = 0; s < FRAMES || idle < 200; ) {
		if (s < FRAMES) {
			struct ibv_sge sge = { (uintptr_t)buf, LEN, mr->lkey };
			struct ibv_send_wr wr = { .wr_id = s, .sg_list = &sge, .num_sge = 1,
						  .opcode = IBV_WR_SEND,
						  .send_flags = IBV_SEND_SIGNALED }, *b;

			frame(buf, s);
			CHECK_EQ(ibv_post_send(tx, &wr, &b), 0);
			while (ibv_poll_cq(scq, 1, wc) == 0)
				;
			CHECK_EQ(wc[0].status, IBV_WC_SUCCESS);
			s++;
		} else {
			idle++;
		}
		int k = ibv_poll_cq(rcq, 32, wc);

		if (k > 0)
			idle = 0;
		for (int i = 0; i < k; i++) {
			uint8_t *r = buf + 4096 + wc[i].wr_id * 2048, want[LEN];
			uint32_t seq;
			int diff = 0, where = -1;

			CHECK(wc[i].status == IBV_WC_SUCCESS && wc[i].byte_len == LEN,
			      "status %d len %u", wc[i].status, wc[i].byte_len);
			memcpy(&seq, r + 14, 4);
			frame(want, seq);
			for (int j = 0; j < LEN; j++)
				if (r[j] != want[j]) {
					diff++;
					where = j;
				}
			if (diff != 0) {
				(*bad)++;
				if (diff != 1 || where < LEN / 2 || (r[where] ^ want[where]) != 0xff)
					(*bad_shape)++;
			}
			if (got < 2 * FRAMES)
				order[got++] = seq;
			post_recv((int)wc[i].wr_id);
		}
	}
	*n = got;
}

static struct dpv_fault_stats stats(void)
{
	struct dpv_fault_stats st;

	CHECK_EQ(dpv_query_port_faults(ctx, DPV_FAULT_RX, NULL, &st), 0);
	return st;
}

static void set_rx(uint32_t drop, uint32_t dup, uint32_t reorder, uint32_t corrupt, uint64_t seed)
{
	struct dpv_faults f = { drop, dup, reorder, corrupt, seed };

	CHECK_EQ(dpv_set_port_faults(ctx, DPV_FAULT_RX, &f), 0);
}

static uint32_t order[2 * FRAMES], order2[2 * FRAMES];

static void drops(void)
{
	struct dpv_fault_stats a = stats(), b;
	int n, n2, bad, shape, seen[FRAMES] = { 0 };

	set_rx(100000, 0, 0, 0, 42);                 /* 10 % */
	run(order, &n, &bad, &shape);
	b = stats();
	CHECK_EQ(b.seen - a.seen, (uint64_t)FRAMES);
	CHECK_EQ((uint64_t)n, FRAMES - (b.dropped - a.dropped));
	CHECK(b.dropped - a.dropped > FRAMES / 20 && b.dropped - a.dropped < FRAMES / 5,
	      "dropped %llu of %d at 10 %%", (unsigned long long)(b.dropped - a.dropped), FRAMES);
	CHECK_EQ(bad, 0);
	for (int i = 0; i < n; i++) {
		seen[order[i]]++;
		CHECK(i == 0 || order[i] > order[i - 1], "drops only: order kept");
	}
	for (int s = 0; s < FRAMES; s++)
		CHECK(seen[s] <= 1, "frame %d arrived %d times", s, seen[s]);
	/* the same seed, the same traffic: the same frames dropped */
	set_rx(100000, 0, 0, 0, 42);
	run(order2, &n2, &bad, &shape);
	CHECK(n2 == n && memcmp(order, order2, (size_t)n * sizeof(*order)) == 0,
	      "seed 42 twice: %d then %d frames, or other ones", n, n2);
	/* another seed: other frames */
	set_rx(100000, 0, 0, 0, 43);
	run(order2, &n2, &bad, &shape);
	CHECK(n2 != n || memcmp(order, order2, (size_t)n * sizeof(*order)) != 0,
	      "seeds 42 and 43 dropped the same frames");
}

static void duplicates_and_reorder(void)
{
	struct dpv_fault_stats a = stats(), b;
	int n, bad, shape, seen[FRAMES] = { 0 }, inversions = 0;

	set_rx(0, 50000, 50000, 0, 7);               /* 5 % each */
	run(order, &n, &bad, &shape);
	set_rx(0, 0, 0, 0, 0);
	b = stats();
	CHECK_EQ((uint64_t)n, FRAMES + (b.duplicated - a.duplicated));
	CHECK(b.duplicated > a.duplicated && b.reordered > a.reordered,
	      "duplicated %llu reordered %llu",
	      (unsigned long long)(b.duplicated - a.duplicated),
	      (unsigned long long)(b.reordered - a.reordered));
	CHECK_EQ(bad, 0);
	for (int i = 0; i < n; i++) {
		seen[order[i]]++;
		if (i > 0 && order[i] < order[i - 1])
			inversions++;
	}
	for (int s = 0; s < FRAMES; s++)
		CHECK(seen[s] == 1 || seen[s] == 2, "frame %d arrived %d times", s, seen[s]);
	CHECK(inversions > 0, "5 %% reordered, yet every frame came in order");
}

static void corruption(void)
{
	struct dpv_fault_stats a = stats(), b;
	int n, bad, shape;

	set_rx(0, 0, 0, 1000000, 9);                 /* every frame */
	run(order, &n, &bad, &shape);
	b = stats();
	CHECK_EQ(n, FRAMES);
	CHECK_EQ((uint64_t)bad, b.corrupted - a.corrupted);
	CHECK_EQ(bad, FRAMES);
	CHECK_EQ(shape, 0);
	/* off: nothing more happens */
	set_rx(0, 0, 0, 0, 0);
	a = stats();
	run(order, &n, &bad, &shape);
	b = stats();
	CHECK(n == FRAMES && bad == 0 && b.corrupted == a.corrupted && b.dropped == a.dropped,
	      "faults off: %d frames, %d bad", n, bad);
}

static void errors(void)
{
	struct dpv_faults f = { .drop_ppm = 1000001 }, g;

	CHECK_EQ(dpv_set_port_faults(ctx, DPV_FAULT_RX, &f), EINVAL);
	f.drop_ppm = 5;
	CHECK_EQ(dpv_set_port_faults(ctx, 0, &f), EINVAL);
	CHECK_EQ(dpv_set_port_faults(ctx, 4, &f), EINVAL);
	CHECK_EQ(dpv_set_port_faults(NULL, DPV_FAULT_RX, &f), EINVAL);
	CHECK_EQ(dpv_set_port_faults(ctx, DPV_FAULT_RX, NULL), EINVAL);
	CHECK_EQ(dpv_query_port_faults(ctx, DPV_FAULT_RX | DPV_FAULT_TX, &g, NULL), EINVAL);
	/* the transmit side is set on its own and reads back */
	f = (struct dpv_faults){ 1, 2, 3, 4, 5 };
	CHECK_EQ(dpv_set_port_faults(ctx, DPV_FAULT_TX, &f), 0);
	CHECK_EQ(dpv_query_port_faults(ctx, DPV_FAULT_TX, &g, NULL), 0);
	CHECK(memcmp(&f, &g, sizeof(f)) == 0, "transmit faults read back differently");
	CHECK_EQ(dpv_query_port_faults(ctx, DPV_FAULT_RX, &g, NULL), 0);
	CHECK(g.drop_ppm == 0 && g.corrupt_ppm == 0, "receive faults changed with transmit ones");
	f = (struct dpv_faults){ 0 };
	CHECK_EQ(dpv_set_port_faults(ctx, DPV_FAULT_RX | DPV_FAULT_TX, &f), 0);
}

int main(void)
{
	struct ibv_qp_cap cap = { .max_send_wr = 64, .max_send_sge = 1, .max_recv_wr = SLOTS,
				  .max_recv_sge = 1 };
	struct {
		struct ibv_flow_attr attr;
		struct ibv_flow_spec_eth eth;
	} fl = {
		.attr = { .type = IBV_FLOW_ATTR_NORMAL, .size = sizeof(fl), .num_of_specs = 1,
			  .port = 1 },
		.eth = { .type = IBV_FLOW_SPEC_ETH, .size = sizeof(struct ibv_flow_spec_eth),
			 .val.dst_mac = { 2, 0, 0, 0, 0, 0xaa },
			 .mask.dst_mac = { 0xff, 0xff, 0xff, 0xff, 0xff, 0xff } },
	};
	struct ibv_flow *flow;

	ctx = test_open(NULL);
	pd = ibv_alloc_pd(ctx);
	scq = ibv_create_cq(ctx, 64, NULL, NULL, 0);
	rcq = ibv_create_cq(ctx, 2 * SLOTS, NULL, NULL, 0);
	buf = aligned_alloc(4096, 4096 + SLOTS * 2048);
	mr = ibv_reg_mr(pd, buf, 4096 + SLOTS * 2048, IBV_ACCESS_LOCAL_WRITE);
	CHECK(pd && scq && rcq && buf && mr, "setup: %s", strerror(errno));
	tx = test_raw_qp(pd, scq, cap);
	rx = test_raw_qp(pd, rcq, cap);
	flow = ibv_create_flow(rx, &fl.attr);
	CHECK(tx && rx && flow, "QPs: %s", strerror(errno));
	for (int i = 0; i < SLOTS; i++)
		post_recv(i);
	errors();
	drops();
	duplicates_and_reorder();
	corruption();
	CHECK_EQ(ibv_destroy_flow(flow), 0);
	CHECK_EQ(ibv_destroy_qp(tx), 0);
	CHECK_EQ(ibv_destroy_qp(rx), 0);
	CHECK_EQ(ibv_dereg_mr(mr), 0);
	free(buf);
	CHECK_EQ(ibv_destroy_cq(scq), 0);
	CHECK_EQ(ibv_destroy_cq(rcq), 0);
	return test_finish(ctx, pd, "faults");
}
