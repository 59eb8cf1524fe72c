/* SPDX-License-Identifier: BSD-3-Clause */
/* IP_CSUM proven by the Linux kernel: UDP datagrams with garbage checksums, sent with
 * IBV_SEND_IP_CSUM through a net_tap port whose interface sits in a network namespace, reach
 * a UDP socket there (the kernel drops bad checksums); the same datagrams without IP_CSUM do
 * not. The harness (run_netns_test.sh) writes the interface's MAC address to argv[1]. */
#include "dpv_test.h"

#define COUNT 20

static uint8_t frames[4][256];

/* Ethernet + IPv4 or IPv6 + UDP to @port, with 0xdead in the checksum fields. */
static size_t udp_frame(uint8_t *f, const uint8_t *dst_mac, bool v6, uint16_t port, int seq)
{
	size_t n = 0, pay = 32, l4 = 8 + pay;

	memcpy(f, dst_mac, 6);
	memcpy(f + 6, "\x02\x00\x00\x00\x00\x01", 6);
	memcpy(f + 12, v6 ? "\x86\xdd" : "\x08\x00", 2);
	n = 14;
	if (!v6) {
		uint8_t ip[20] = { 0x45, 0, 0, (uint8_t)(20 + l4), 0, (uint8_t)seq, 0, 0, 64, 17,
				   0xde, 0xad, 10, 99, 0, 2, 10, 99, 0, 1 };
		memcpy(f + n, ip, 20);
		n += 20;
	} else {
		/* fd00:99::2 -> fd00:99::1 */
		uint8_t ip[40] = { 0x60, 0, 0, 0, 0, (uint8_t)l4, 17, 64,
				   [8] = 0xfd, [11] = 0x99, [23] = 2, [24] = 0xfd, [27] = 0x99, [39] = 1 };
		memcpy(f + n, ip, 40);
		n += 40;
	}
	f[n] = 0x30;
	f[n + 1] = 0x39;
	f[n + 2] = (uint8_t)(port >> 8);
	f[n + 3] = (uint8_t)port;
	f[n + 4] = 0;
	f[n + 5] = (uint8_t)l4;
	f[n + 6] = 0xde;
	f[n + 7] = 0xad;
	n += 8;
	for (size_t i = 0; i < pay; i++)
		f[n + i] = (uint8_t)(seq + i);
	return n + pay;
}

int main(int argc, char **argv)
{
	struct ibv_context *ctx = test_open(NULL);      /* the harness moves the interface now */
	struct ibv_pd *pd = ibv_alloc_pd(ctx);
	struct ibv_cq *cq = ibv_create_cq(ctx, 64, NULL, NULL, 0);
	struct ibv_qp *qp = test_raw_qp(pd, cq, (struct ibv_qp_cap){ .max_send_wr = 64,
								  .max_send_sge = 1 });
	struct ibv_mr *mr = ibv_reg_mr(pd, frames, sizeof(frames), 0);
	uint8_t mac[6];
	unsigned int m[6];
	FILE *f = argc == 2 ? fopen(argv[1], "r") : NULL;

	if (f == NULL || fscanf(f, "%x:%x:%x:%x:%x:%x", &m[0], &m[1], &m[2], &m[3], &m[4], &m[5]) != 6)
		return fprintf(stderr, "no MAC address in %s\n", argc == 2 ? argv[1] : "?"), 2;
	fclose(f);
	for (int i = 0; i < 6; i++)
		mac[i] = (uint8_t)m[i];
	for (int i = 0; i < COUNT; i++) {
		/* [0] IPv4 and [1] IPv6 to port 7777 with IP_CSUM, [2] IPv4 and [3] IPv6 to port
		 * 7778 without: the kernel must drop those */
		for (int k = 0; k < 4; k++) {
			size_t len = udp_frame(frames[k], mac, k & 1, k < 2 ? 7777 : 7778, i);
			struct ibv_sge sge = { (uintptr_t)frames[k], (uint32_t)len, mr->lkey };
			struct ibv_send_wr wr = { .wr_id = (uint64_t)k, .sg_list = &sge, .num_sge = 1,
						  .opcode = IBV_WR_SEND,
						  .send_flags = IBV_SEND_SIGNALED |
								(k < 2 ? IBV_SEND_IP_CSUM : 0) }, *bad;
			struct ibv_wc wc;

			CHECK_EQ(ibv_post_send(qp, &wr, &bad), 0);
			CHECK(test_poll(cq, &wc, 1) == 1 && wc.status == IBV_WC_SUCCESS);
		}
	}
	{
		struct dpv_port_stats st;
		struct dpv_port_info info;

		CHECK_EQ(dpv_query_port_stats(ctx, &st), 0);
		CHECK_EQ(dpv_query_port_info(ctx, &info), 0);
		printf("IP_CSUM frames: %llu checksummed by the port, %llu in software\n",
		       (unsigned long long)st.csum_hw, (unsigned long long)st.csum_sw);
		CHECK_EQ(st.csum_hw + st.csum_sw, 2 * COUNT);
		if (info.policy == DPV_OFFLOAD_POLICY_SOFTWARE)
			CHECK_EQ(st.csum_hw, 0);
		else
			CHECK_EQ(st.csum_hw, 2 * COUNT);     /* net_tap offers both checksums */
	}
	test_settle();
	CHECK_EQ(ibv_destroy_qp(qp), 0);
	CHECK_EQ(ibv_dereg_mr(mr), 0);
	CHECK_EQ(ibv_destroy_cq(cq), 0);
	return test_finish(ctx, pd, "csum_netns");
}
