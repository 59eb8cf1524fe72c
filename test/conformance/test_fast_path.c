/* SPDX-License-Identifier: BSD-3-Clause */
/* The RAW SEND fast path hands WRs to the generic path at every point where the two could
 * differ, and what the application sees is the same as if one path had taken the whole list:
 * frames on the wire in post order, one completion per signaled WR in post order, execution
 * errors and flushes where the man page puts them. net_ring loops frames back to the same
 * port, where an ALL_DEFAULT receive QP reads them (a sequence number in each frame).
 *   - a list mixing fast WRs (inline, copied from an MR, with a zero-length SGE) and generic
 *     ones (TSO, SOLICITED, a frame attached without a copy), then an SGE outside its MR
 *     (LOC_PROT_ERR, SQE), then a WR flushed;
 *   - a list longer than the port's ring: the fast path stops at the full port, the rest waits
 *     in the SQ behind it and goes out in order as the ring drains;
 *   - a list that fills the SQ: ENOMEM at the first WR without a slot, *bad_wr there. */
#include <arpa/inet.h>
#include <pthread.h>

#include "dpv_test.h"

#define RX_SLOTS 512
#define FRAME_MAX 2048

static struct ibv_pd *pd;
static struct ibv_mr *mr, *big_mr, *rx_mr;
static uint8_t tx_buf[4096][128] __attribute__((aligned(64)));
static uint8_t big_buf[8192] __attribute__((aligned(64)));
static uint8_t rx_buf[RX_SLOTS][FRAME_MAX];

/* An Ethernet frame to the broadcast address carrying @seq in bytes 14..17. */
static void frame(uint8_t *f, uint32_t seq, uint32_t len)
{
	uint32_t be = htonl(seq);

	memset(f, 0, len);
	memset(f, 0xff, 6);
	f[6] = 0x02;
	f[12] = 0x88;
	f[13] = 0xb5;
	memcpy(f + 14, &be, 4);
}

static uint32_t seq_of(const uint8_t *f)
{
	uint32_t be;

	memcpy(&be, f + 14, 4);
	return ntohl(be);
}

static void post_rx(struct ibv_qp *q, int slot)
{
	struct ibv_sge s = { (uintptr_t)rx_buf[slot], FRAME_MAX, rx_mr->lkey };
	struct ibv_recv_wr w = { .wr_id = (uint64_t)slot, .sg_list = &s, .num_sge = 1 }, *bad;

	CHECK_EQ(ibv_post_recv(q, &w, &bad), 0);
}

/* Receive up to @n frames; their sequence numbers go to @seqs. Returns how many came. */
static int receive(struct ibv_qp *rq, struct ibv_cq *rcq, uint32_t *seqs, int n)
{
	struct ibv_wc wc[32];
	int got = 0;
	double end = test_now() + 5;

	while (got < n && test_now() < end) {
		int k = ibv_poll_cq(rcq, n - got < 32 ? n - got : 32, wc);

		for (int i = 0; i < k; i++) {
			CHECK(wc[i].status == IBV_WC_SUCCESS, "receive %s",
			      ibv_wc_status_str(wc[i].status));
			seqs[got++] = seq_of(rx_buf[wc[i].wr_id]);
			post_rx(rq, (int)wc[i].wr_id);
		}
	}
	return got;
}

/* A TSO WR of @payload bytes in segments of 100 bytes (header from tx_buf[slot]). */
static void tso_wr(struct ibv_send_wr *w, struct ibv_sge *s, uint8_t *hdr, uint32_t seq)
{
	static const uint8_t ip_tcp[40] = { 0x45, 0, 0, 40, 0, 1, 0x40, 0, 64, 6, 0, 0, 10, 0, 0,
					    1, 10, 0, 0, 2, 0x30, 0x39, 0, 80, 0, 0, 0, 1, 0, 0, 0,
					    0, 0x50, 0x18, 0xff, 0xff, 0, 0, 0, 0 };

	memset(hdr, 0xff, 6);
	memset(hdr + 6, 0x02, 6);
	hdr[12] = 0x08;
	hdr[13] = 0x00;
	memcpy(hdr + 14, ip_tcp, sizeof(ip_tcp));
	frame(big_buf, seq, 300);                /* payload: its bytes 14..17 are not seen */
	*s = (struct ibv_sge){ (uintptr_t)big_buf, 300, big_mr->lkey };
	*w = (struct ibv_send_wr){ .wr_id = seq, .sg_list = s, .num_sge = 1, .opcode = IBV_WR_TSO,
				   .send_flags = IBV_SEND_SIGNALED };
	w->tso.hdr = hdr;
	w->tso.hdr_sz = 54;
	w->tso.mss = 100;
}

static void mixed_list(struct ibv_qp *qp, struct ibv_cq *cq, struct ibv_qp *rq,
		       struct ibv_cq *rcq)
{
	struct ibv_send_wr w[9], *bad = NULL;
	struct ibv_sge s[9], zero[2];
	struct ibv_wc wc[16];
	uint32_t seqs[16];
	uint8_t hdr[64];
	int n;

	for (int i = 0; i < 9; i++) {
		frame(tx_buf[i], (uint32_t)i, 64);
		s[i] = (struct ibv_sge){ (uintptr_t)tx_buf[i], 64, mr->lkey };
		w[i] = (struct ibv_send_wr){ .wr_id = (uint64_t)i, .sg_list = &s[i], .num_sge = 1,
					     .opcode = IBV_WR_SEND, .send_flags = IBV_SEND_SIGNALED,
					     .next = i < 8 ? &w[i + 1] : NULL };
	}
	w[0].send_flags |= IBV_SEND_INLINE;                 /* fast */
	/* w[1]: fast (copied from the MR) */
	tso_wr(&w[2], &s[2], hdr, 2);                       /* generic: TSO, 3 segments */
	w[2].next = &w[3];
	w[3].send_flags |= IBV_SEND_SOLICITED;              /* generic: a flag it does not take */
	frame(big_buf + 4096, 4, 1000);                     /* generic: large enough to attach */
	s[4] = (struct ibv_sge){ (uintptr_t)big_buf + 4096, 1000, big_mr->lkey };
	/* fast, with an empty SGE whose lkey is not checked */
	zero[0] = (struct ibv_sge){ (uintptr_t)tx_buf[5], 64, mr->lkey };
	zero[1] = (struct ibv_sge){ 0, 0, 0xdead };
	w[5].sg_list = zero;
	w[5].num_sge = 2;
	/* w[6]: fast again; w[7]: outside its MR; w[8]: after the error */
	s[7].addr = (uintptr_t)tx_buf[7] + sizeof(tx_buf) * 4;
	CHECK_EQ(ibv_post_send(qp, w, &bad), 0);
	n = test_poll(cq, wc, 9);
	CHECK_EQ(n, 9);
	for (int i = 0; i < n; i++) {
		enum ibv_wc_status want = i < 7 ? IBV_WC_SUCCESS :
					  i == 7 ? IBV_WC_LOC_PROT_ERR : IBV_WC_WR_FLUSH_ERR;

		CHECK(wc[i].wr_id == (uint64_t)i && wc[i].status == want,
		      "completion %d: wr_id %llu %s", i, (unsigned long long)wc[i].wr_id,
		      ibv_wc_status_str(wc[i].status));
	}
	CHECK(wc[2].opcode == IBV_WC_TSO && wc[0].opcode == IBV_WC_SEND);
	/* 0, 1, three TSO segments, 3, 4, 5, 6: in post order */
	n = receive(rq, rcq, seqs, 9);
	CHECK_EQ(n, 9);
	{
		static const int order[] = { 0, 1, -1, -1, -1, 3, 4, 5, 6 };

		for (int i = 0; i < n; i++)
			if (order[i] >= 0)
				CHECK(seqs[i] == (uint32_t)order[i], "frame %d carries %u", i, seqs[i]);
	}
	struct ibv_qp_attr a;
	struct ibv_qp_init_attr ia;

	CHECK_EQ(ibv_query_qp(qp, &a, IBV_QP_STATE, &ia), 0);
	CHECK_EQ(a.qp_state, IBV_QPS_SQE);
	CHECK_EQ(test_qp_to(qp, IBV_QPS_RTS), 0);           /* SQE -> RTS: the fast path again */
}

/* @total 64-byte copied SENDs in one list, frame i carrying @seq0 + i (its wr_id too), every
 * @every-th and the last one signaled. */
static void send_list(struct ibv_send_wr *w, struct ibv_sge *s, int total, uint32_t seq0,
		      int every)
{
	for (int i = 0; i < total; i++) {
		frame(tx_buf[i], seq0 + (uint32_t)i, 64);
		s[i] = (struct ibv_sge){ (uintptr_t)tx_buf[i], 64, mr->lkey };
		w[i] = (struct ibv_send_wr){ .wr_id = seq0 + (uint64_t)i, .sg_list = &s[i],
					     .num_sge = 1, .opcode = IBV_WR_SEND,
					     .send_flags = i % every == every - 1 || i == total - 1 ?
							   IBV_SEND_SIGNALED : 0,
					     .next = i + 1 < total ? &w[i + 1] : NULL };
	}
}

struct receiver {
	struct ibv_qp *rq;
	struct ibv_cq *rcq;
	uint32_t *seqs;
	int want, got;
};

static void *receive_all(void *arg)
{
	struct receiver *r = arg;
	double end = test_now() + 10;

	while (r->got < r->want && test_now() < end)
		r->got += receive(r->rq, r->rcq, r->seqs + r->got, r->want - r->got);
	return NULL;
}

/* Every frame came, frame i carrying @seq0 + i. */
static void check_in_order(const struct receiver *r, uint32_t seq0)
{
	CHECK_EQ(r->got, r->want);
	for (int i = 0; i < r->got; i++)
		if (r->seqs[i] != seq0 + (uint32_t)i) {
			CHECK(0, "frame %d carries %u", i, r->seqs[i]);
			break;
		}
}

/* The long lists of longer_than_the_port and port_full (one at a time). */
static struct ibv_send_wr long_w[4096];
static struct ibv_sge long_s[4096];
static uint32_t long_seqs[4096];

/* More WRs in one list than the port's ring holds, while another thread receives (and so
 * frees ring entries between the post's bursts): nothing lost, nothing reordered. */
static void longer_than_the_port(struct ibv_qp *qp, struct ibv_cq *cq, struct ibv_qp *rq,
				 struct ibv_cq *rcq, int total)
{
	struct receiver r = { rq, rcq, long_seqs, total, 0 };
	struct ibv_send_wr *bad = NULL;
	struct ibv_wc wc[4];
	pthread_t th;
	int got = 0;

	send_list(long_w, long_s, total, 1000, 100);
	CHECK_EQ(pthread_create(&th, NULL, receive_all, &r), 0);
	CHECK_EQ(ibv_post_send(qp, long_w, &bad), 0);
	pthread_join(th, NULL);
	check_in_order(&r, 1000);
	for (int k = 0; k < total / 100 + 1; k++) {
		if (test_poll(cq, wc, 1) != 1)
			break;
		CHECK(wc[0].status == IBV_WC_SUCCESS);
		got++;
		if (wc[0].wr_id == 1000u + (uint64_t)total - 1)
			break;
	}
	CHECK_EQ(got, (total - 1) / 100 + 1);
}

/* The same without a receiver: the port fills up during the post, the rest waits in the SQ
 * (counted as not yet sent) and goes out in order when the ring drains. */
static void port_full(struct ibv_qp *qp, struct ibv_cq *cq, struct ibv_qp *rq,
		      struct ibv_cq *rcq, int total)
{
	struct receiver r = { rq, rcq, long_seqs, total, 0 };
	struct ibv_send_wr *bad = NULL;
	struct dpv_qp_counters c;
	struct ibv_wc wc[1];

	send_list(long_w, long_s, total, 5000, total);
	CHECK_EQ(ibv_post_send(qp, long_w, &bad), 0);
	CHECK_EQ(dpv_query_qp_counters(qp, &c), 0);
	CHECK(c.sq_unsent > 0, "the port took all %d WRs: the list must outgrow its ring", total);
	receive_all(&r);
	check_in_order(&r, 5000);
	CHECK_EQ(test_poll(cq, wc, 1), 1);
	CHECK(wc[0].wr_id == 5000u + (uint64_t)total - 1 && wc[0].status == IBV_WC_SUCCESS);
}

/* A fast-path WR posted while an earlier zero-copy WR still waits for its frame to be freed
 * completes after it, never before: completions stay in post order across lists. */
static void completes_behind_older(struct ibv_qp *qp, struct ibv_cq *cq, struct ibv_qp *rq,
				   struct ibv_cq *rcq)
{
	struct ibv_sge zc = { (uintptr_t)big_buf + 4096, 1000, 0 }, in = { 0, 64, 0 };
	struct ibv_send_wr a = { .wr_id = 70, .sg_list = &zc, .num_sge = 1, .opcode = IBV_WR_SEND,
				 .send_flags = IBV_SEND_SIGNALED };
	struct ibv_send_wr b = { .wr_id = 71, .sg_list = &in, .num_sge = 1, .opcode = IBV_WR_SEND,
				 .send_flags = IBV_SEND_SIGNALED | IBV_SEND_INLINE }, *bad;
	struct ibv_wc wc[2];
	uint32_t seqs[2];

	zc.lkey = big_mr->lkey;
	frame(big_buf + 4096, 70, 1000);
	frame(tx_buf[0], 71, 64);
	in.addr = (uintptr_t)tx_buf[0];
	CHECK_EQ(ibv_post_send(qp, &a, &bad), 0);        /* held by the ring until received */
	CHECK_EQ(ibv_post_send(qp, &b, &bad), 0);        /* the fast path's */
	CHECK_EQ(test_poll(cq, wc, 2), 2);
	CHECK(wc[0].wr_id == 70 && wc[1].wr_id == 71, "completions %llu %llu",
	      (unsigned long long)wc[0].wr_id, (unsigned long long)wc[1].wr_id);
	CHECK_EQ(receive(rq, rcq, seqs, 2), 2);
	CHECK(seqs[0] == 70 && seqs[1] == 71);
}

/* A list longer than the SQ: ENOMEM at the first WR without a slot. */
static void sq_full(struct ibv_pd *p, struct ibv_cq *cq, struct ibv_qp *rq, struct ibv_cq *rcq)
{
	uint32_t seqs[16];
	struct ibv_qp *q = test_raw_qp(p, cq, (struct ibv_qp_cap){ .max_send_wr = 16,
							     .max_send_sge = 1,
							     .max_inline_data = 64 });
	struct ibv_send_wr w[20], *bad = NULL;
	struct ibv_sge s[20];
	struct ibv_wc wc[20];

	for (int i = 0; i < 20; i++) {
		frame(tx_buf[i], (uint32_t)i, 64);
		s[i] = (struct ibv_sge){ (uintptr_t)tx_buf[i], 64, 0 };
		w[i] = (struct ibv_send_wr){ .wr_id = (uint64_t)i, .sg_list = &s[i], .num_sge = 1,
					     .opcode = IBV_WR_SEND,
					     .send_flags = IBV_SEND_INLINE | IBV_SEND_SIGNALED,
					     .next = i < 19 ? &w[i + 1] : NULL };
	}
	CHECK_EQ(ibv_post_send(q, w, &bad), ENOMEM);
	CHECK(bad == &w[16], "bad_wr is WR %d", (int)(bad - w));
	CHECK_EQ(test_poll(cq, wc, 16), 16);
	for (int i = 0; i < 16; i++)
		CHECK(wc[i].wr_id == (uint64_t)i && wc[i].status == IBV_WC_SUCCESS);
	CHECK_EQ(receive(rq, rcq, seqs, 16), 16);         /* and nothing left in the ring */
	CHECK_EQ(ibv_destroy_qp(q), 0);
}

int main(void)
{
	struct ibv_context *ctx = test_open(NULL);
	struct ibv_cq *cq, *rcq;
	struct ibv_qp *qp, *rq;
	struct ibv_flow_attr all = { .type = IBV_FLOW_ATTR_ALL_DEFAULT, .size = sizeof(all),
				     .port = 1 };
	struct ibv_flow *flow;

	pd = ibv_alloc_pd(ctx);
	mr = ibv_reg_mr(pd, tx_buf, sizeof(tx_buf), 0);
	rx_mr = ibv_reg_mr(pd, rx_buf, sizeof(rx_buf), IBV_ACCESS_LOCAL_WRITE);
	CHECK(mr != NULL && rx_mr != NULL, "MRs: %s", strerror(errno));
	if (mr == NULL || rx_mr == NULL)
		return test_done("fast_path");
	big_mr = ibv_reg_mr(pd, big_buf, sizeof(big_buf), 0);   /* TSO and large frames */
	cq = ibv_create_cq(ctx, 4096, NULL, NULL, 0);
	rcq = ibv_create_cq(ctx, RX_SLOTS, NULL, NULL, 0);
	qp = test_raw_qp(pd, cq, (struct ibv_qp_cap){ .max_send_wr = 4096, .max_send_sge = 2,
						       .max_inline_data = 64 });
	rq = test_raw_qp(pd, rcq, (struct ibv_qp_cap){ .max_send_wr = 1, .max_send_sge = 1,
						       .max_recv_wr = RX_SLOTS, .max_recv_sge = 1 });
	flow = ibv_create_flow(rq, &all);
	CHECK(flow != NULL && big_mr != NULL, "flow: %s", strerror(errno));
	for (int i = 0; i < RX_SLOTS; i++)
		post_rx(rq, i);
	mixed_list(qp, cq, rq, rcq);
	completes_behind_older(qp, cq, rq, rcq);
	longer_than_the_port(qp, cq, rq, rcq, 4000);
	port_full(qp, cq, rq, rcq, 3000);
	sq_full(pd, cq, rq, rcq);
	CHECK_EQ(ibv_destroy_flow(flow), 0);
	CHECK_EQ(ibv_destroy_qp(qp), 0);
	CHECK_EQ(ibv_destroy_qp(rq), 0);
	CHECK_EQ(ibv_destroy_cq(cq), 0);
	CHECK_EQ(ibv_destroy_cq(rcq), 0);
	CHECK_EQ(ibv_dereg_mr(big_mr), 0);
	CHECK_EQ(ibv_dereg_mr(mr), 0);
	CHECK_EQ(ibv_dereg_mr(rx_mr), 0);
	return test_finish(ctx, pd, "fast_path");
}
