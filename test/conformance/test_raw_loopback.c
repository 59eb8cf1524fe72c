/* SPDX-License-Identifier: BSD-3-Clause */
/* RAW_PACKET local loopback on a net_null port (which drops everything it transmits, so every
 * frame received here came through the loopback): with one context open nothing comes back;
 * with two contexts of the device open (mlx5's rule: two transport domains), a copy of each
 * frame a RAW QP sends reaches the port's own steering as a frame from the wire would: byte
 * for byte to the rule that matches it, to nobody when none does, its IP_CSUM checksums
 * written (IBV_WC_IP_CSUM_OK), to a rule of the sender's own context too; once the second
 * context closes, nothing comes back again (doc/semantics.md, "RAW local loopback").
 * DPV_EAL_ARGS: --vdev=net_null0,no-rx=1 (net_null would hand back recycled mbufs). */
#include "dpv_test.h"

struct flow_eth {
	struct ibv_flow_attr attr;
	struct ibv_flow_spec_eth eth;
};

static const uint8_t mac_x[6] = { 2, 0, 0, 0, 0, 0x11 }, mac_y[6] = { 2, 0, 0, 0, 0, 0x22 };

struct side {
	struct ibv_context *ctx;
	struct ibv_pd *pd;
	struct ibv_cq *cq;
	struct ibv_mr *mr;
	struct ibv_qp *qp;
	struct ibv_flow *flow;
	uint8_t *buf;                     /* [0, 2K): to send; [2K, 18K): 8 receive slots */
};

static struct side side_open(struct ibv_context *ctx, bool flow)
{
	struct side s = { .ctx = ctx };
	struct flow_eth f = {
		.attr = { .size = sizeof(f), .num_of_specs = 1, .port = 1 },
		.eth = { .type = IBV_FLOW_SPEC_ETH, .size = sizeof(struct ibv_flow_spec_eth) },
	};

	s.pd = ibv_alloc_pd(ctx);
	s.cq = ibv_create_cq(ctx, 32, NULL, NULL, 0);
	s.buf = aligned_alloc(4096, 20 * 1024);   /* a multiple of the alignment (C11) */
	s.mr = s.pd && s.buf ? ibv_reg_mr(s.pd, s.buf, 18 * 1024, IBV_ACCESS_LOCAL_WRITE) : NULL;
	CHECK(s.mr != NULL && s.cq != NULL, "setup: %s", strerror(errno));
	s.qp = test_raw_qp(s.pd, s.cq, (struct ibv_qp_cap){ .max_send_wr = 8, .max_send_sge = 1,
							  .max_recv_wr = 8, .max_recv_sge = 1 });
	for (int i = 0; i < 8; i++) {
		struct ibv_sge sge = { (uintptr_t)s.buf + 2048 * (i + 1), 2048, s.mr->lkey };
		struct ibv_recv_wr wr = { .wr_id = 100 + i, .sg_list = &sge, .num_sge = 1 }, *bad;

		CHECK_EQ(ibv_post_recv(s.qp, &wr, &bad), 0);
	}
	if (flow) {
		memcpy(f.eth.val.dst_mac, mac_x, 6);
		memset(f.eth.mask.dst_mac, 0xff, 6);
		s.flow = ibv_create_flow(s.qp, &f.attr);
		CHECK(s.flow != NULL, "flow: %s", strerror(errno));
	}
	return s;
}

static void side_close(struct side *s, bool device)
{
	if (s->flow != NULL)
		CHECK_EQ(ibv_destroy_flow(s->flow), 0);
	CHECK_EQ(ibv_destroy_qp(s->qp), 0);
	CHECK_EQ(ibv_dereg_mr(s->mr), 0);
	CHECK_EQ(ibv_destroy_cq(s->cq), 0);
	CHECK_EQ(ibv_dealloc_pd(s->pd), 0);
	free(s->buf);
	if (device)
		CHECK_EQ(ibv_close_device(s->ctx), 0);
}

/* @len bytes from @s's buffer, signaled; its send completion polled. */
static void send_frame(struct side *s, uint32_t len, unsigned int flags)
{
	struct ibv_sge sge = { (uintptr_t)s->buf, len, s->mr->lkey };
	struct ibv_send_wr wr = { .wr_id = 1, .sg_list = &sge, .num_sge = 1, .opcode = IBV_WR_SEND,
				  .send_flags = IBV_SEND_SIGNALED | flags }, *bad;
	struct ibv_wc wc;

	CHECK_EQ(ibv_post_send(s->qp, &wr, &bad), 0);
	do
		CHECK(test_poll_for(s->cq, &wc, 1, 5) == 1, "send completion");
	while (wc.wr_id != 1);                  /* a receive of this side's own may come first */
	CHECK(wc.status == IBV_WC_SUCCESS, "send: %s", ibv_wc_status_str(wc.status));
}

static void frame_to(uint8_t *f, const uint8_t *dmac, uint32_t len, uint8_t tag)
{
	memcpy(f, dmac, 6);
	memcpy(f + 6, "\x02\x00\x00\x00\x00\x01\x88\xb5", 8);
	for (uint32_t i = 14; i < len; i++)
		f[i] = (uint8_t)(tag + i);
}

static uint16_t ones_sum(const uint8_t *p, size_t n)
{
	uint32_t s = 0;

	for (size_t i = 0; i + 1 < n; i += 2)
		s += (uint32_t)(p[i] << 8 | p[i + 1]);
	if (n & 1)
		s += (uint32_t)p[n - 1] << 8;
	while (s >> 16)
		s = (s & 0xffff) + (s >> 16);
	return (uint16_t)s;
}

int main(void)
{
	struct ibv_context *ca = test_open(NULL), *cb;
	struct side a = side_open(ca, false), b, a2;
	struct ibv_wc wc;

	/* one context: the frame is gone (net_null), nothing loops back */
	a2 = side_open(ca, true);                 /* a rule of the sender's context */
	frame_to(a.buf, mac_x, 100, 1);
	send_frame(&a, 100, 0);
	CHECK_EQ(test_poll_for(a2.cq, &wc, 1, 0.2), 0);

	/* two contexts: looped back to the port's steering */
	cb = ibv_open_device(ca->device);
	CHECK(cb != NULL, "second context: %s", strerror(errno));
	b = side_open(cb, true);
	frame_to(a.buf, mac_x, 100, 2);
	send_frame(&a, 100, 0);
	/* the rule made first (a2's) traps it: DONT_TRAP-less rules of one priority, first wins */
	CHECK_EQ(test_poll_for(a2.cq, &wc, 1, 5), 1);
	CHECK(wc.status == IBV_WC_SUCCESS && wc.opcode == IBV_WC_RECV && wc.byte_len == 100 &&
	      wc.qp_num == a2.qp->qp_num, "looped to the sender's context: %s, %u bytes",
	      ibv_wc_status_str(wc.status), wc.byte_len);
	CHECK(memcmp(a2.buf + 2048 * (wc.wr_id - 99), a.buf, 100) == 0, "bytes differ");
	side_close(&a2, false);
	frame_to(a.buf, mac_x, 300, 3);
	send_frame(&a, 300, 0);
	CHECK_EQ(test_poll_for(b.cq, &wc, 1, 5), 1);
	CHECK(wc.status == IBV_WC_SUCCESS && wc.byte_len == 300 && wc.qp_num == b.qp->qp_num,
	      "looped to the other context: %s, %u bytes", ibv_wc_status_str(wc.status),
	      wc.byte_len);
	CHECK(memcmp(b.buf + 2048 * (wc.wr_id - 99), a.buf, 300) == 0, "bytes differ");
	/* no rule for it: nobody */
	frame_to(a.buf, mac_y, 80, 4);
	send_frame(&a, 80, 0);
	CHECK_EQ(test_poll_for(b.cq, &wc, 1, 0.2), 0);
	/* IP_CSUM: the copy carries the checksums a wire would */
	{
		static const uint8_t v4[42] = { 2, 0, 0, 0, 0, 0x11, 2, 0, 0, 0, 0, 1, 0x08, 0x00,
			0x45, 0, 0, 28, 0, 0, 0, 0, 64, 17, 0, 0, 10, 0, 0, 1, 10, 0, 0, 2,
			0x13, 0x88, 0x23, 0x28, 0, 8, 0, 0 };
		const uint8_t *got;

		memset(a.buf, 0, 60);
		memcpy(a.buf, v4, 42);
		send_frame(&a, 60, IBV_SEND_IP_CSUM);
		CHECK_EQ(test_poll_for(b.cq, &wc, 1, 5), 1);
		got = b.buf + 2048 * (wc.wr_id - 99);
		CHECK(wc.status == IBV_WC_SUCCESS && wc.byte_len == 60, "IP_CSUM frame");
		CHECK(wc.wc_flags & IBV_WC_IP_CSUM_OK, "IBV_WC_IP_CSUM_OK not set");
		CHECK_EQ(ones_sum(got + 14, 20), 0xffff);     /* the IPv4 header checksum */
		CHECK(got[14 + 24] != 0 || got[14 + 25] != 0, "UDP checksum not written");
	}
	/* the second context closes: nothing loops back any more */
	side_close(&b, true);
	a2 = side_open(ca, true);
	frame_to(a.buf, mac_x, 100, 5);
	send_frame(&a, 100, 0);
	CHECK_EQ(test_poll_for(a2.cq, &wc, 1, 0.2), 0);
	side_close(&a2, false);
	side_close(&a, true);
	return test_done("raw_loopback");
}
