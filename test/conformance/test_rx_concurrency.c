/* SPDX-License-Identifier: BSD-3-Clause */
/* Rules change while another thread receives (net_null: every poll brings frames, all to the
 * destination MAC 00:00:00:00:00:00). A receiver thread polls its QP's CQ (an ALL_DEFAULT
 * rule) and reposts; the main thread, over and over, makes a second QP, steers the frames to it
 * with a NORMAL rule (sometimes with a SNIFFER or a multicast group beside it), destroys the
 * rule and the QP. What a user sees: once ibv_create_flow returns, no frame reaches the default
 * QP any more; once ibv_destroy_flow returns, none reaches the rule's QP; the QP can then be
 * destroyed at once, and its CQ holds nothing of it. Run under ThreadSanitizer too. */
#include <pthread.h>

#include "dpv_test.h"

#define ROUNDS 60
#define DEPTH 64

static struct ibv_context *ctx;
static struct ibv_pd *pd;
static struct ibv_mr *mr;
static uint8_t *buf;
static struct ibv_cq *rcq;
static struct ibv_qp *rqp;
static int stop, recv_failed;
static long received;

static int post(struct ibv_qp *qp, uint64_t id, int slot)
{
	struct ibv_sge sge = { (uintptr_t)buf + (size_t)slot * 128, 128, mr->lkey };
	struct ibv_recv_wr wr = { .wr_id = id, .sg_list = &sge, .num_sge = 1 }, *bad;

	return ibv_post_recv(qp, &wr, &bad);
}

/* The default QP's thread: poll, check, repost, until told to stop. */
static void *receiver(void *arg)
{
	struct ibv_wc wc[32];

	while (!__atomic_load_n(&stop, __ATOMIC_ACQUIRE)) {
		int n = ibv_poll_cq(rcq, 32, wc);

		for (int i = 0; i < n; i++) {
			if (wc[i].status != IBV_WC_SUCCESS || wc[i].qp_num != rqp->qp_num ||
			    wc[i].byte_len != 64 || post(rqp, wc[i].wr_id, (int)wc[i].wr_id) != 0)
				__atomic_store_n(&recv_failed, 1, __ATOMIC_RELAXED);
		}
		__atomic_fetch_add(&received, n, __ATOMIC_RELAXED);
	}
	return NULL;
}

static uint64_t rx_completed(struct ibv_qp *qp)
{
	struct dpv_qp_counters c;

	CHECK_EQ(dpv_query_qp_counters(qp, &c), 0);
	return c.rx_completed;
}

/* Let the receiver run a few bursts. */
static void some_bursts(void)
{
	struct dpv_port_stats s0, s1;

	dpv_query_port_stats(ctx, &s0);
	for (double end = test_now() + 1; test_now() < end; ) {
		dpv_query_port_stats(ctx, &s1);
		if (s1.rx_frames > s0.rx_frames + 3 * 32)
			break;
		usleep(100);
	}
}

static void one_round(int round)
{
	struct {
		struct ibv_flow_attr attr;
		struct ibv_flow_spec_eth eth;
	} rule = {
		.attr = { .type = IBV_FLOW_ATTR_NORMAL, .size = sizeof(rule), .num_of_specs = 1,
			  .port = 1 },
		.eth = { .type = IBV_FLOW_SPEC_ETH, .size = sizeof(rule.eth),
			 .mask.dst_mac = { 0xff, 0xff, 0xff, 0xff, 0xff, 0xff } },
	};
	struct ibv_flow_attr sniff = { .type = IBV_FLOW_ATTR_SNIFFER, .size = sizeof(sniff),
				       .port = 1 };
	union ibv_gid grp = { .raw = { 0xff, 0x02, [10] = 0x33, 0x33, 0, 0, 0, 1 } };
	struct ibv_cq *cq = ibv_create_cq(ctx, 2 * DEPTH, NULL, NULL, 0);
	struct ibv_qp *q = test_raw_qp(pd, cq, (struct ibv_qp_cap){ .max_recv_wr = DEPTH,
								 .max_recv_sge = 1 });
	struct ibv_qp *qs = round % 3 == 1 ? test_raw_qp(pd, cq, (struct ibv_qp_cap){
				.max_recv_wr = DEPTH, .max_recv_sge = 1 }) : NULL;
	struct ibv_flow *f, *fs = NULL;
	uint64_t d0, d1, c0, c1;
	struct ibv_wc wc[2 * DEPTH];

	CHECK(cq != NULL && q != NULL);
	for (int i = 0; i < DEPTH; i++)
		CHECK_EQ(post(q, 1000 + (uint64_t)i, DEPTH + i), 0);
	if (round % 3 == 2) {
		/* a group (a MAC rule) beside a rule on MAC and EtherType: two masks, walked */
		CHECK_EQ(ibv_attach_mcast(q, &grp, 0), 0);
		rule.eth.mask.ether_type = 0xffff;          /* net_null's frames: EtherType 0 */
	}
	if (qs != NULL) {
		for (int i = 0; i < DEPTH; i++)
			CHECK_EQ(post(qs, 2000 + (uint64_t)i, 2 * DEPTH + i), 0);
		fs = ibv_create_flow(qs, &sniff);
		CHECK(fs != NULL);
	}
	f = ibv_create_flow(q, &rule.attr);               /* net_null's frames: 00:00:00:00:00:00 */
	CHECK(f != NULL, "%s", strerror(errno));
	/* from now on the default QP gets nothing */
	d0 = rx_completed(rqp);
	some_bursts();
	d1 = rx_completed(rqp);
	CHECK(d1 == d0, "round %d: the default QP took %llu frames after the rule was made",
	      round, (unsigned long long)(d1 - d0));
	CHECK(rx_completed(q) > 0, "round %d: the rule's QP got nothing", round);
	CHECK_EQ(ibv_destroy_flow(f), 0);
	/* from now on the rule's QP gets nothing */
	c0 = rx_completed(q);
	some_bursts();
	c1 = rx_completed(q);
	CHECK(c1 == c0, "round %d: the rule's QP took %llu frames after its rule went", round,
	      (unsigned long long)(c1 - c0));
	if (fs != NULL)
		CHECK_EQ(ibv_destroy_flow(fs), 0);
	CHECK_EQ(ibv_destroy_qp(q), 0);                    /* no rule steers to it any more */
	if (qs != NULL)
		CHECK_EQ(ibv_destroy_qp(qs), 0);
	CHECK_EQ(ibv_poll_cq(cq, 2 * DEPTH, wc), 0);       /* nothing of them left */
	CHECK_EQ(ibv_destroy_cq(cq), 0);
}

int main(void)
{
	struct ibv_flow_attr dflt = { .type = IBV_FLOW_ATTR_ALL_DEFAULT, .size = sizeof(dflt),
				      .port = 1 };
	struct ibv_flow *fd;
	pthread_t th;

	ctx = test_open(NULL);
	pd = ibv_alloc_pd(ctx);
	buf = aligned_alloc(4096, 4 * DEPTH * 128);
	mr = ibv_reg_mr(pd, buf, 4 * DEPTH * 128, IBV_ACCESS_LOCAL_WRITE);
	rcq = ibv_create_cq(ctx, 4 * DEPTH, NULL, NULL, 0);
	rqp = test_raw_qp(pd, rcq, (struct ibv_qp_cap){ .max_recv_wr = DEPTH, .max_recv_sge = 1 });
	CHECK(mr != NULL && rcq != NULL && rqp != NULL);
	for (int i = 0; i < DEPTH; i++)
		CHECK_EQ(post(rqp, (uint64_t)i, i), 0);
	fd = ibv_create_flow(rqp, &dflt);
	CHECK(fd != NULL);
	pthread_create(&th, NULL, receiver, NULL);
	for (int r = 0; r < ROUNDS; r++)
		one_round(r);
	__atomic_store_n(&stop, 1, __ATOMIC_RELEASE);
	pthread_join(th, NULL);
	CHECK(!recv_failed, "the default QP got a completion that was not its frame");
	CHECK(received > 0);
	CHECK_EQ(ibv_destroy_flow(fd), 0);
	CHECK_EQ(ibv_destroy_qp(rqp), 0);
	CHECK_EQ(ibv_destroy_cq(rcq), 0);
	CHECK_EQ(ibv_dereg_mr(mr), 0);
	free(buf);
	return test_finish(ctx, pd, "rx_concurrency");
}
