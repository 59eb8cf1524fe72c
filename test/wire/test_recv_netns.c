/* SPDX-License-Identifier: BSD-3-Clause */
/* Receiving what the Linux kernel sends: the harness (run_recv_netns.sh) moves this net_tap
 * port's interface into a namespace and sends, from there, a UDP datagram through a socket
 * (the kernel's checksums), one frame with right checksums and one with a wrong UDP checksum
 * (scapy on a packet socket), all to UDP port 7777, plus one to port 7778. A flow
 * (ETH + IPV4_EXT + UDP port 7777) steers the three to the QP; only the third lacks
 * IBV_WC_IP_CSUM_OK. */
#include <arpa/inet.h>

#include "dpv_test.h"

static uint8_t rx[8][2048];

int main(void)
{
	struct ibv_context *ctx = test_open(NULL);
	struct ibv_pd *pd = ibv_alloc_pd(ctx);
	struct ibv_cq *cq = ibv_create_cq(ctx, 16, NULL, NULL, 0);
	struct ibv_qp *qp = test_raw_qp(pd, cq, (struct ibv_qp_cap){ .max_recv_wr = 8,
								  .max_recv_sge = 1 });
	struct ibv_mr *mr = ibv_reg_mr(pd, rx, sizeof(rx), IBV_ACCESS_LOCAL_WRITE);
	struct ibv_flow *f = test_udp_flow(qp, 7777);
	struct ibv_wc wc[8];
	int n = 0, ok = 0;

	CHECK(f != NULL && mr != NULL, "%s", strerror(errno));
	for (int i = 0; i < 8; i++) {
		struct ibv_sge s = { (uintptr_t)rx[i], 2048, mr->lkey };
		struct ibv_recv_wr r = { .wr_id = (uint64_t)i, .sg_list = &s, .num_sge = 1 }, *bad;

		CHECK_EQ(ibv_post_recv(qp, &r, &bad), 0);
	}
	test_settle();               /* "ready to receive": the harness sends now, then says go */
	for (int tries = 0; n < 3 && tries < 200000000; tries++) {
		int k = ibv_poll_cq(cq, 8 - n, wc + n);

		n += k > 0 ? k : 0;
	}
	CHECK_EQ(n, 3);
	for (int i = 0; i < n; i++) {
		const uint8_t *p = rx[wc[i].wr_id];

		CHECK(wc[i].status == IBV_WC_SUCCESS && p[36] == 0x1e && p[37] == 0x61,
		      "to port 7777");
		ok += !!(wc[i].wc_flags & IBV_WC_IP_CSUM_OK);
		printf("frame %d: %u bytes, payload '%.6s', %s\n", i, wc[i].byte_len, p + 42,
		       wc[i].wc_flags & IBV_WC_IP_CSUM_OK ? "IP_CSUM_OK" : "checksum wrong");
		if (memcmp(p + 42, "badsum", 6) == 0)
			CHECK(!(wc[i].wc_flags & IBV_WC_IP_CSUM_OK), "a wrong checksum flagged OK");
	}
	CHECK_EQ(ok, 2);
	CHECK_EQ(ibv_poll_cq(cq, 8, wc), 0);              /* port 7778: not steered */
	CHECK_EQ(ibv_destroy_flow(f), 0);
	CHECK_EQ(ibv_destroy_qp(qp), 0);
	CHECK_EQ(ibv_dereg_mr(mr), 0);
	CHECK_EQ(ibv_destroy_cq(cq), 0);
	return test_finish(ctx, pd, "recv_netns");
}
