/* SPDX-License-Identifier: BSD-3-Clause */
/* The receive side on a net_ring port (its transmit ring is its receive ring: what one QP
 * sends, the port receives), or, with DPV_TEST_RX_DEVICE naming a second device, frames sent
 * on the first device arriving on the second (two af_packet ports on a veth pair): ibv_post_recv's checks, steering by flows (NORMAL with priorities
 * and DONT_TRAP, ALL_DEFAULT, SNIFFER), frames scattered into WQEs byte for byte,
 * IBV_WC_IP_CSUM_OK, LOC_LEN_ERR moving the QP to ERR, and a zero-copy send completing only
 * once the receiver took (and freed) its buffer. One burst whose frames take every way
 * through the receive path (the common frame, one to check the checksum of, frames of
 * every copy size, the RQ and the CQ wrapping around, WQEs in another MR, a scatter list,
 * a full CQ) lands byte for byte and completes in order. */
#include <poll.h>
#include <pthread.h>
#include <stdbool.h>
#include <time.h>

#include "dpv_test.h"

struct flow_eth {
	struct ibv_flow_attr attr;
	struct ibv_flow_spec_eth eth;
};

static struct ibv_context *ctx;
static struct ibv_pd *pd;
static struct ibv_cq *scq, *rcq;
static struct ibv_mr *mr, *smr;     /* the buffer in the receiver's and the sender's PD */
static bool two_ports;
static uint8_t *buf;                 /* [0, 64K): frames to send; [64K, 1M): receive buffers */
#define RX_BASE (64 * 1024)

static struct ibv_flow *flow_to(struct ibv_qp *qp, enum ibv_flow_attr_type type,
				const uint8_t *dmac, uint16_t prio, uint32_t flags)
{
	struct flow_eth f = {
		.attr = { .type = type, .size = sizeof(f), .priority = prio,
			  .num_of_specs = dmac ? 1 : 0, .port = 1, .flags = flags },
		.eth = { .type = IBV_FLOW_SPEC_ETH, .size = sizeof(struct ibv_flow_spec_eth) },
	};

	if (dmac != NULL) {
		memcpy(f.eth.val.dst_mac, dmac, 6);
		memset(f.eth.mask.dst_mac, 0xff, 6);
	}
	return ibv_create_flow(qp, &f.attr);
}

static void frame_to(uint8_t *f, const uint8_t *dmac, size_t len, uint8_t tag)
{
	memcpy(f, dmac, 6);
	memcpy(f + 6, "\x02\x00\x00\x00\x00\x01\x88\xb5", 8);
	for (size_t i = 14; i < len; i++)
		f[i] = (uint8_t)(tag + i);
}

static void send1(struct ibv_qp *qp, uint8_t *f, uint32_t len, unsigned int flags)
{
	struct ibv_sge sge = { (uintptr_t)f, len, smr->lkey };
	struct ibv_send_wr wr = { .wr_id = 99, .sg_list = &sge, .num_sge = 1,
				  .opcode = IBV_WR_SEND, .send_flags = flags }, *bad;

	CHECK_EQ(ibv_post_send(qp, &wr, &bad), 0);
}

static int post_recvs(struct ibv_qp *qp, int n, uint32_t len, uint64_t id0, int slot0)
{
	for (int i = 0; i < n; i++) {
		struct ibv_sge sge = { (uintptr_t)buf + RX_BASE + (size_t)(slot0 + i) * 2048, len,
				       mr->lkey };
		struct ibv_recv_wr wr = { .wr_id = id0 + (uint64_t)i, .sg_list = &sge, .num_sge = 1 };
		struct ibv_recv_wr *bad;
		int rc = ibv_post_recv(qp, &wr, &bad);

		if (rc != 0)
			return rc;
	}
	return 0;
}

/* What arrives on @cq within a moment (frames between two ports cross the kernel). */
static int poll_quiet(struct ibv_cq *cq, struct ibv_wc *wc, int max)
{
	return test_poll_for(cq, wc, max, two_ports ? 0.2 : 0);
}

static const uint8_t mac_a[6] = { 2, 0, 0, 0, 0, 0xaa }, mac_b[6] = { 2, 0, 0, 0, 0, 0xbb },
		     mac_c[6] = { 2, 0, 0, 0, 0, 0xcc };

static void steering_and_bytes(struct ibv_qp *tx)
{
	struct ibv_qp_cap cap = { .max_send_wr = 4, .max_send_sge = 1, .max_recv_wr = 16,
				  .max_recv_sge = 2 };
	struct ibv_qp *qa = test_raw_qp(pd, rcq, cap), *qb = test_raw_qp(pd, rcq, cap),
		      *qs = test_raw_qp(pd, rcq, cap), *qd = test_raw_qp(pd, rcq, cap);
	struct ibv_flow *fa = flow_to(qa, IBV_FLOW_ATTR_NORMAL, mac_a, 1, 0);
	struct ibv_flow *fb = flow_to(qb, IBV_FLOW_ATTR_NORMAL, mac_b, 2, IBV_FLOW_ATTR_FLAGS_DONT_TRAP);
	struct ibv_flow *fs = flow_to(qs, IBV_FLOW_ATTR_SNIFFER, NULL, 0, 0);
	struct ibv_flow *fd = flow_to(qd, IBV_FLOW_ATTR_ALL_DEFAULT, NULL, 0, 0);
	struct ibv_wc wc[16];
	int got[4] = { 0 }, n;
	struct ibv_qp *qps[4] = { qa, qb, qs, qd };

	CHECK(fa && fb && fs && fd, "flows: %s", strerror(errno));
	for (int i = 0; i < 4; i++)
		CHECK_EQ(post_recvs(qps[i], 4, 2048, 100 * (i + 1), 4 * i), 0);
	frame_to(buf, mac_a, 300, 1);          /* A (trapped), the sniffer */
	frame_to(buf + 2048, mac_b, 301, 2);   /* B (DONT_TRAP): B, the sniffer, the default */
	frame_to(buf + 4096, mac_c, 302, 3);   /* nobody's: the sniffer, the default */
	send1(tx, buf, 300, 0);
	send1(tx, buf + 2048, 301, 0);
	send1(tx, buf + 4096, 302, 0);
	n = test_poll(rcq, wc, 7);
	CHECK_EQ(n, 7);
	for (int i = 0; i < n; i++) {
		int q = -1;

		for (int k = 0; k < 4; k++)
			if (wc[i].qp_num == qps[k]->qp_num)
				q = k;
		CHECK(q >= 0 && wc[i].status == IBV_WC_SUCCESS && wc[i].opcode == IBV_WC_RECV);
		if (q < 0)
			continue;
		/* the bytes landed where the WQE said */
		{
			int slot = (int)(wc[i].wr_id - 100 * (uint64_t)(q + 1)) + 4 * q;
			const uint8_t *rx = buf + RX_BASE + (size_t)slot * 2048;
			const uint8_t *src = rx[5] == 0xaa ? buf : rx[5] == 0xbb ? buf + 2048 : buf + 4096;

			CHECK(wc[i].byte_len >= 300 && memcmp(rx, src, wc[i].byte_len) == 0,
			      "QP %d WR %llu: bytes differ", q, (unsigned long long)wc[i].wr_id);
		}
		got[q]++;
	}
	CHECK(got[0] == 1 && got[1] == 1 && got[2] == 3 && got[3] == 2,
	      "A %d B %d sniffer %d default %d", got[0], got[1], got[2], got[3]);
	CHECK_EQ(ibv_destroy_qp(qa), EBUSY);              /* a flow steers to it */
	CHECK_EQ(ibv_destroy_flow(fa), 0);
	CHECK_EQ(ibv_destroy_flow(fb), 0);
	CHECK_EQ(ibv_destroy_flow(fs), 0);
	CHECK_EQ(ibv_destroy_flow(fd), 0);
	for (int i = 0; i < 4; i++)
		CHECK_EQ(ibv_destroy_qp(qps[i]), 0);
	CHECK_EQ(ibv_poll_cq(rcq, 16, wc), 0);           /* their leftover WQEs: gone with them */
}

static void errors_and_flags(struct ibv_qp *tx)
{
	struct ibv_qp_init_attr ia = { .send_cq = rcq, .recv_cq = rcq, .qp_type = IBV_QPT_RAW_PACKET,
				       .cap = { .max_send_wr = 4, .max_send_sge = 1, .max_recv_wr = 4,
						.max_recv_sge = 1 } };
	struct ibv_qp *q = ibv_create_qp(pd, &ia);
	struct ibv_sge sge = { (uintptr_t)buf + RX_BASE, 64, mr->lkey };
	struct ibv_recv_wr wr = { .wr_id = 1, .sg_list = &sge, .num_sge = 1 }, *bad;
	struct ibv_flow *f;
	struct ibv_wc wc[8];
	static const uint8_t udp[42] = { 2, 0, 0, 0, 0, 0xaa, 2, 0, 0, 0, 0, 1, 0x08, 0x00,
		0x45, 0, 0, 50, 0, 1, 0, 0, 64, 17, 0x11, 0x11, 10, 0, 0, 1, 10, 0, 0, 2,
		0x30, 0x39, 0, 53, 0, 30, 0x22, 0x22 };

	CHECK_EQ(ibv_post_recv(q, &wr, &bad), EINVAL);    /* RESET */
	CHECK(bad == &wr);
	CHECK_EQ(test_qp_to(q, IBV_QPS_INIT), 0);
	wr.num_sge = 2;                                   /* > max_recv_sge */
	CHECK_EQ(ibv_post_recv(q, &wr, &bad), EINVAL);
	wr.num_sge = 1;
	CHECK_EQ(post_recvs(q, 2, 2048, 10, 0), 0);
	CHECK_EQ(post_recvs(q, 1, 64, 12, 2), 0);         /* too small for what comes third */
	CHECK_EQ(post_recvs(q, 1, 2048, 13, 3), 0);
	CHECK_EQ(ibv_post_recv(q, &wr, &bad), ENOMEM);    /* 4 posted: full */
	CHECK_EQ(test_qp_to(q, IBV_QPS_RTR), 0);          /* receives from RTR on */
	f = flow_to(q, IBV_FLOW_ATTR_NORMAL, mac_a, 0, 0);
	CHECK(f != NULL);
	/* IPv4/UDP with checksums by IP_CSUM: IP_CSUM_OK; garbage ones: no flag */
	memcpy(buf + 8192, udp, 42);
	memset(buf + 8192 + 42, 7, 22);
	send1(tx, buf + 8192, 64, IBV_SEND_IP_CSUM);
	memcpy(buf + 10240, udp, 42);
	memset(buf + 10240 + 42, 7, 22);
	send1(tx, buf + 10240, 64, 0);
	CHECK_EQ(test_poll(rcq, wc, 2), 2);
	CHECK(wc[0].status == IBV_WC_SUCCESS && (wc[0].wc_flags & IBV_WC_IP_CSUM_OK), "good csum");
	CHECK(wc[1].status == IBV_WC_SUCCESS && !(wc[1].wc_flags & IBV_WC_IP_CSUM_OK), "bad csum");
	CHECK_EQ(wc[0].byte_len, 64);
	/* a frame larger than the WQE: LOC_LEN_ERR, the QP in ERR, the last WQE flushed */
	frame_to(buf + 12288, mac_a, 1000, 9);
	send1(tx, buf + 12288, 1000, 0);
	CHECK_EQ(test_poll(rcq, wc, 2), 2);
	CHECK(wc[0].status == IBV_WC_LOC_LEN_ERR && wc[0].wr_id == 12, "%s",
	      ibv_wc_status_str(wc[0].status));
	CHECK(wc[1].status == IBV_WC_WR_FLUSH_ERR && wc[1].wr_id == 13);
	CHECK_EQ(q->state, IBV_QPS_ERR);
	CHECK_EQ(ibv_destroy_flow(f), 0);
	CHECK_EQ(ibv_destroy_qp(q), 0);
}

/* A receive WQE whose SGE leaves its MR, or names no MR, completes with LOC_PROT_ERR when a
 * frame lands in it (as hardware checks: not when posted), after the WQE before it received
 * its frame, and moves the QP to ERR (the rest flushed); no byte lands outside the MR. */
static void protection_errors(struct ibv_qp *tx)
{
	struct ibv_qp_init_attr ia = { .send_cq = rcq, .recv_cq = rcq, .qp_type = IBV_QPT_RAW_PACKET,
				       .cap = { .max_recv_wr = 4, .max_recv_sge = 1 } };
	uint8_t *end = buf + (1 << 20);
	struct ibv_wc wc[8];

	for (int bad_lkey = 0; bad_lkey < 2; bad_lkey++) {
		struct ibv_qp *q = ibv_create_qp(pd, &ia);
		/* 64 bytes from 32 before the MR's end, or a key no MR has */
		struct ibv_sge sge = { (uintptr_t)(bad_lkey ? buf + RX_BASE : end - 32), 2048,
				       bad_lkey ? mr->lkey ^ 0x00ffffff : mr->lkey };
		struct ibv_recv_wr wr = { .wr_id = 21, .sg_list = &sge, .num_sge = 1 }, *bad;
		struct ibv_flow *f;

		CHECK(q != NULL && test_qp_to(q, IBV_QPS_INIT) == 0);
		CHECK_EQ(post_recvs(q, 1, 2048, 20, 8), 0);
		CHECK_EQ(ibv_post_recv(q, &wr, &bad), 0);         /* accepted: checked on use */
		CHECK_EQ(post_recvs(q, 1, 2048, 22, 9), 0);
		CHECK_EQ(test_qp_to(q, IBV_QPS_RTR), 0);
		f = flow_to(q, IBV_FLOW_ATTR_NORMAL, mac_a, 0, 0);
		CHECK(f != NULL);
		memset(end - 32, 0x5a, 32);
		frame_to(buf + 14336, mac_a, 64, 3);
		send1(tx, buf + 14336, 64, 0);
		send1(tx, buf + 14336, 64, 0);
		CHECK_EQ(test_poll(rcq, wc, 3), 3);
		CHECK(wc[0].status == IBV_WC_SUCCESS && wc[0].wr_id == 20 && wc[0].byte_len == 64);
		CHECK(wc[1].status == IBV_WC_LOC_PROT_ERR && wc[1].wr_id == 21, "%s",
		      ibv_wc_status_str(wc[1].status));
		CHECK(wc[2].status == IBV_WC_WR_FLUSH_ERR && wc[2].wr_id == 22);
		CHECK_EQ(q->state, IBV_QPS_ERR);
		for (int i = 0; i < 32; i++)
			CHECK_EQ(end[i - 32], 0x5a);          /* nothing written */
		CHECK_EQ(ibv_destroy_flow(f), 0);
		CHECK_EQ(ibv_destroy_qp(q), 0);
	}
}

/* Specs are walked by their own size fields, num_of_specs of them, as rdma-core walks them;
 * attr.size is never read (pyverbs passes sizeof(struct ibv_flow_attr)); a spec shorter than
 * its type is refused (fuzz_flow_spec found a short spec matching on bytes nobody wrote). */
static void spec_sizes(void)
{
	struct ibv_qp_init_attr ia = { .send_cq = rcq, .recv_cq = rcq, .qp_type = IBV_QPT_RAW_PACKET,
				       .cap = { .max_recv_wr = 1, .max_recv_sge = 1 } };
	struct ibv_qp *q = ibv_create_qp(pd, &ia);
	struct flow_eth f = {
		.attr = { .size = sizeof(f), .num_of_specs = 1, .port = 1 },
		.eth = { .type = IBV_FLOW_SPEC_ETH, .size = sizeof(struct ibv_flow_spec_eth) },
	};
	struct ibv_flow *fl;

	CHECK(q != NULL);
	f.attr.size = sizeof(f.attr);                      /* as pyverbs: not read */
	fl = ibv_create_flow(q, &f.attr);
	CHECK(fl != NULL, "attr.size of the attribute alone: %s", strerror(errno));
	if (fl != NULL)
		CHECK_EQ(ibv_destroy_flow(fl), 0);
	f.attr.size = 0;
	f.eth.size = 12;                                   /* shorter than an ETH spec */
	errno = 0;
	CHECK(ibv_create_flow(q, &f.attr) == NULL && errno == EINVAL, "errno %d", errno);
	f.eth.size = 2;                                    /* shorter than a spec header */
	errno = 0;
	CHECK(ibv_create_flow(q, &f.attr) == NULL && errno == EINVAL, "errno %d", errno);
	f.eth.size = 4096;                                 /* longer than any spec */
	errno = 0;
	CHECK(ibv_create_flow(q, &f.attr) == NULL && errno == EOPNOTSUPP, "errno %d", errno);
	f.eth.type = IBV_FLOW_SPEC_VXLAN_TUNNEL;           /* well formed, not supported */
	f.eth.size = sizeof(struct ibv_flow_spec_tunnel);
	errno = 0;
	CHECK(ibv_create_flow(q, &f.attr) == NULL && errno == EOPNOTSUPP, "errno %d", errno);
	f.eth.type = IBV_FLOW_SPEC_ETH;
	f.eth.size = sizeof(f.eth);
	fl = ibv_create_flow(q, &f.attr);
	CHECK(fl != NULL, "%s", strerror(errno));
	if (fl != NULL)
		CHECK_EQ(ibv_destroy_flow(fl), 0);
	CHECK_EQ(ibv_destroy_qp(q), 0);
}

/* perftest raw_ethernet_bw's steering (ETH + IPV4_EXT + UDP) and an IPv6 rule pick the right
 * QPs among frames that differ only in one field; multicast groups; no WQE: a drop. */
static void five_tuples_ipv6_mcast(struct ibv_qp *tx)
{
	struct {
		struct ibv_flow_attr attr;
		struct ibv_flow_spec_eth eth;
		uint8_t eth_tail[8];
		struct ibv_flow_spec_ipv4_ext ip;
		struct ibv_flow_spec_tcp_udp udp;
	} r4 = {
		/* attr.size as pyverbs gives it, an ETH spec with 8 more bytes than its type:
		 * the specs are walked by their own sizes */
		.attr = { .size = sizeof(r4.attr), .num_of_specs = 3, .port = 1 },
		.eth = { .type = IBV_FLOW_SPEC_ETH, .size = sizeof(r4.eth) + sizeof(r4.eth_tail),
			 .val.dst_mac = { 2, 0, 0, 0, 0, 0xaa }, .mask.dst_mac = { 0xff, 0xff, 0xff,
			 0xff, 0xff, 0xff } },
		.ip = { .type = IBV_FLOW_SPEC_IPV4_EXT, .size = sizeof(r4.ip),
			.val = { .src_ip = htobe32(0x0a000001), .dst_ip = htobe32(0x0a000002),
				 .proto = 17 },
			.mask = { .src_ip = 0xffffffff, .dst_ip = 0xffffffff, .proto = 0xff } },
		.udp = { .type = IBV_FLOW_SPEC_UDP, .size = sizeof(r4.udp),
			 .val = { .dst_port = htobe16(9000), .src_port = htobe16(5000) },
			 .mask = { .dst_port = 0xffff, .src_port = 0xffff } },
	};
	struct {
		struct ibv_flow_attr attr;
		struct ibv_flow_spec_ipv6 ip;
	} r6 = {
		.attr = { .size = sizeof(r6), .num_of_specs = 1, .port = 1 },
		.ip = { .type = IBV_FLOW_SPEC_IPV6, .size = sizeof(r6.ip),
			.val.dst_ip = { 0xfd, [15] = 2 }, .mask.dst_ip = { 0xff, 0xff, 0xff, 0xff,
			0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff } },
	};
	struct ibv_qp_cap cap = { .max_send_wr = 4, .max_send_sge = 1, .max_recv_wr = 8,
				  .max_recv_sge = 1 };
	struct ibv_qp *q4 = test_raw_qp(pd, rcq, cap), *q6 = test_raw_qp(pd, rcq, cap),
		      *qm = test_raw_qp(pd, rcq, cap);
	struct ibv_flow *f4 = ibv_create_flow(q4, &r4.attr), *f6 = ibv_create_flow(q6, &r6.attr);
	union ibv_gid grp = { .raw = { 0xff, 0x02, [10] = 0x33, 0x33, 0, 0, 0, 0x7b } };
	static const uint8_t v4[42] = { 2, 0, 0, 0, 0, 0xaa, 2, 0, 0, 0, 0, 1, 0x08, 0x00,
		0x45, 0, 0, 28, 0, 0, 0, 0, 64, 17, 0, 0, 10, 0, 0, 1, 10, 0, 0, 2,
		0x13, 0x88, 0x23, 0x28, 0, 8, 0, 0 };
	uint8_t *f = buf + 20480;
	struct ibv_wc wc[8];

	CHECK(f4 != NULL && f6 != NULL, "%s", strerror(errno));
	CHECK_EQ(ibv_attach_mcast(qm, &grp, 0), 0);
	CHECK_EQ(post_recvs(q4, 2, 2048, 400, 100), 0);
	CHECK_EQ(post_recvs(q6, 2, 2048, 600, 102), 0);
	CHECK_EQ(post_recvs(qm, 2, 2048, 700, 104), 0);
	memcpy(f, v4, 42);                     /* the 5-tuple: q4 */
	memcpy(f + 64, v4, 42);
	f[64 + 37] = 0x29;                     /* another destination port: nobody */
	memset(f + 128, 0, 62);                /* IPv6 to fd00::2: q6 */
	memcpy(f + 128, "\x02\x00\x00\x00\x00\xaa\x02\x00\x00\x00\x00\x01\x86\xdd\x60", 15);
	f[128 + 18] = 0;
	f[128 + 19] = 8;                       /* payload length */
	f[128 + 20] = 17;
	f[128 + 21] = 64;
	f[128 + 38] = 0xfd;
	f[128 + 53] = 2;
	memcpy(f + 192, "\x33\x33\x00\x00\x00\x7b\x02\x00\x00\x00\x00\x01\x88\xb5", 14);
	memset(f + 206, 1, 50);                /* to the group: qm */
	send1(tx, f, 60, 0);
	send1(tx, f + 64, 60, 0);
	send1(tx, f + 128, 62, 0);
	send1(tx, f + 192, 64, 0);
	CHECK_EQ(test_poll(rcq, wc, 3), 3);
	CHECK(wc[0].qp_num == q4->qp_num && wc[0].wr_id == 400, "5-tuple");
	CHECK(wc[1].qp_num == q6->qp_num && wc[1].wr_id == 600, "IPv6");
	CHECK(wc[2].qp_num == qm->qp_num && wc[2].wr_id == 700, "multicast group");
	CHECK_EQ(ibv_detach_mcast(qm, &grp, 0), 0);
	CHECK_EQ(ibv_detach_mcast(qm, &grp, 0), EINVAL);   /* not attached any more */
	send1(tx, f + 192, 64, 0);
	CHECK_EQ(poll_quiet(rcq, wc, 8), 0);               /* detached: nobody */
	CHECK_EQ(ibv_destroy_flow(f4), 0);
	CHECK_EQ(ibv_destroy_flow(f6), 0);
	CHECK_EQ(ibv_destroy_qp(q4), 0);
	CHECK_EQ(ibv_destroy_qp(q6), 0);
	CHECK_EQ(ibv_attach_mcast(qm, &grp, 0), 0);
	CHECK_EQ(ibv_destroy_qp(qm), 0);                   /* attachments go with the QP */
}

/* Frames a flow takes while its QP has no WQE are dropped and counted, never queued. */
static void drops_counted(struct ibv_qp *tx)
{
	struct ibv_qp *q = test_raw_qp(pd, rcq, (struct ibv_qp_cap){ .max_send_wr = 1,
				.max_send_sge = 1, .max_recv_wr = 4, .max_recv_sge = 1 });
	struct ibv_flow *f = flow_to(q, IBV_FLOW_ATTR_NORMAL, mac_a, 0, 0);
	struct dpv_port_stats before, after;
	struct ibv_wc wc;

	CHECK_EQ(dpv_query_port_stats(ctx, &before), 0);
	frame_to(buf + 24576, mac_a, 100, 1);
	frame_to(buf + 24576 + 128, mac_a, 101, 2);
	send1(tx, buf + 24576, 100, 0);
	for (double end = test_now() + 5; ; ) {           /* received, no WQE: dropped */
		int got = ibv_poll_cq(rcq, 1, &wc);

		CHECK_EQ(dpv_query_port_stats(ctx, &after), 0);
		if (got != 0 || after.rx_no_wqe != before.rx_no_wqe || test_now() > end) {
			CHECK_EQ(got, 0);
			break;
		}
	}
	CHECK_EQ(after.rx_no_wqe - before.rx_no_wqe, 1);
	CHECK(after.rx_frames > before.rx_frames);
	CHECK_EQ(post_recvs(q, 1, 2048, 55, 0), 0);
	send1(tx, buf + 24576 + 128, 101, 0);
	CHECK_EQ(test_poll(rcq, &wc, 1), 1);              /* the next one, not the dropped one */
	CHECK(wc.wr_id == 55 && wc.byte_len == 101);
	CHECK_EQ(ibv_destroy_flow(f), 0);
	CHECK_EQ(ibv_destroy_qp(q), 0);
}

/* The QPs of @n completions polled: how many each of @qps got (in @got), -1 for a stranger. */
static int count_by_qp(const struct ibv_wc *wc, int n, struct ibv_qp **qps, int nq, int *got)
{
	int strangers = 0;

	for (int k = 0; k < nq; k++)
		got[k] = 0;
	for (int i = 0; i < n; i++) {
		int q = -1;

		for (int k = 0; k < nq; k++)
			if (wc[i].qp_num == qps[k]->qp_num)
				q = k;
		if (q < 0 || wc[i].status != IBV_WC_SUCCESS)
			strangers++;
		else
			got[q]++;
	}
	return strangers;
}

/* A rule made or destroyed between two frames steers the second: the steering table the
 * receive path reads is rebuilt before ibv_create_flow / ibv_destroy_flow return (and rules
 * with one mask, a hash of MACs, follow priorities and DONT_TRAP as a walk of the rules does). */
static void flows_take_effect_at_once(struct ibv_qp *tx)
{
	struct ibv_qp_cap cap = { .max_recv_wr = 16, .max_recv_sge = 1 };
	struct ibv_qp *qd = test_raw_qp(pd, rcq, cap), *qb = test_raw_qp(pd, rcq, cap),
		      *qc = test_raw_qp(pd, rcq, cap), *qe = test_raw_qp(pd, rcq, cap);
	struct ibv_qp *qps[4] = { qd, qb, qc, qe };
	struct ibv_flow *fd = flow_to(qd, IBV_FLOW_ATTR_ALL_DEFAULT, NULL, 0, 0), *fb, *fc, *fe;
	struct ibv_wc wc[16];
	int got[4];

	CHECK(fd != NULL);
	for (int i = 0; i < 4; i++)
		CHECK_EQ(post_recvs(qps[i], 8, 2048, 1000 * (uint64_t)(i + 1), 200 + 8 * i), 0);
	frame_to(buf + 32768, mac_a, 80, 6);
	send1(tx, buf + 32768, 80, 0);                    /* nobody's rule: the default */
	CHECK_EQ(test_poll(rcq, wc, 1), 1);
	CHECK(wc[0].qp_num == qd->qp_num, "before any rule: the default QP");
	/* C takes mac_a at priority 2, E at 3 (never reached), B at 1 with DONT_TRAP: B and C */
	fc = flow_to(qc, IBV_FLOW_ATTR_NORMAL, mac_a, 2, 0);
	fe = flow_to(qe, IBV_FLOW_ATTR_NORMAL, mac_a, 3, 0);
	fb = flow_to(qb, IBV_FLOW_ATTR_NORMAL, mac_a, 1, IBV_FLOW_ATTR_FLAGS_DONT_TRAP);
	CHECK(fb && fc && fe);
	send1(tx, buf + 32768, 80, 0);
	CHECK_EQ(test_poll(rcq, wc, 2), 2);
	CHECK_EQ(poll_quiet(rcq, wc + 2, 4), 0);
	CHECK_EQ(count_by_qp(wc, 2, qps, 4, got), 0);
	CHECK(got[0] == 0 && got[1] == 1 && got[2] == 1 && got[3] == 0,
	      "DONT_TRAP B then C: default %d B %d C %d E %d", got[0], got[1], got[2], got[3]);
	/* C gone: B (DONT_TRAP), then E */
	CHECK_EQ(ibv_destroy_flow(fc), 0);
	send1(tx, buf + 32768, 80, 0);
	CHECK_EQ(test_poll(rcq, wc, 2), 2);
	CHECK_EQ(count_by_qp(wc, 2, qps, 4, got), 0);
	CHECK(got[1] == 1 && got[3] == 1, "after C's rule went: B %d E %d", got[1], got[3]);
	/* E gone too: B's DONT_TRAP rule leaves the frame to the default as well */
	CHECK_EQ(ibv_destroy_flow(fe), 0);
	send1(tx, buf + 32768, 80, 0);
	CHECK_EQ(test_poll(rcq, wc, 2), 2);
	CHECK_EQ(count_by_qp(wc, 2, qps, 4, got), 0);
	CHECK(got[0] == 1 && got[1] == 1, "DONT_TRAP alone: default %d B %d", got[0], got[1]);
	CHECK_EQ(ibv_destroy_flow(fb), 0);
	send1(tx, buf + 32768, 80, 0);
	CHECK_EQ(test_poll(rcq, wc, 1), 1);
	CHECK_EQ(poll_quiet(rcq, wc + 1, 4), 0);
	CHECK(wc[0].qp_num == qd->qp_num, "every rule gone: the default again");
	CHECK_EQ(ibv_destroy_flow(fd), 0);
	for (int i = 0; i < 4; i++)
		CHECK_EQ(ibv_destroy_qp(qps[i]), 0);
}

/* One burst for several QPs: each takes its frames in the order they came, byte for byte
 * (frames for two MACs interleaved, sent before anyone polls). */
static void burst_for_two_qps(struct ibv_qp *tx)
{
	struct ibv_qp_cap cap = { .max_recv_wr = 16, .max_recv_sge = 1 };
	struct ibv_qp *qa = test_raw_qp(pd, rcq, cap), *qb = test_raw_qp(pd, rcq, cap);
	struct ibv_flow *fa = flow_to(qa, IBV_FLOW_ATTR_NORMAL, mac_a, 0, 0);
	struct ibv_flow *fb = flow_to(qb, IBV_FLOW_ATTR_NORMAL, mac_b, 0, 0);
	uint64_t next[2] = { 0, 0 };
	struct ibv_wc wc[16];
	int n;

	CHECK(fa != NULL && fb != NULL);
	CHECK_EQ(post_recvs(qa, 8, 2048, 0, 240), 0);
	CHECK_EQ(post_recvs(qb, 8, 2048, 100, 248), 0);
	for (int i = 0; i < 12; i++) {
		uint8_t *f = buf + 36864 + (size_t)i * 128;

		frame_to(f, i % 3 == 0 ? mac_b : mac_a, 64 + (size_t)i, (uint8_t)(16 * i));
		send1(tx, f, 64 + (uint32_t)i, 0);
	}
	n = test_poll(rcq, wc, 12);
	CHECK_EQ(n, 12);
	for (int i = 0; i < n; i++) {
		int q = wc[i].qp_num == qb->qp_num;
		/* the frames of this QP in the order sent: i % 3 == 0 to B, the others to A */
		int sent = -1;

		for (int k = 0, seen = 0; k < 12; k++)
			if ((k % 3 == 0) == q && seen++ == (int)next[q]) {
				sent = k;
				break;
			}
		CHECK(wc[i].status == IBV_WC_SUCCESS && sent >= 0 &&
		      wc[i].wr_id == (q ? 100 : 0) + next[q] && wc[i].byte_len == 64 + (uint32_t)sent,
		      "QP %c completion %llu: wr_id %llu len %u", q ? 'B' : 'A',
		      (unsigned long long)next[q], (unsigned long long)wc[i].wr_id, wc[i].byte_len);
		if (sent >= 0)
			CHECK(memcmp(buf + RX_BASE + (size_t)(240 + wc[i].wr_id - (q ? 100 - 8 : 0)) * 2048,
				     buf + 36864 + (size_t)sent * 128, 64 + (size_t)sent) == 0,
			      "frame %d: bytes differ", sent);
		next[q]++;
	}
	CHECK_EQ(ibv_destroy_flow(fa), 0);
	CHECK_EQ(ibv_destroy_flow(fb), 0);
	CHECK_EQ(ibv_destroy_qp(qa), 0);
	CHECK_EQ(ibv_destroy_qp(qb), 0);
}

/* What a burst of frames @len[0..n) sent from @at (1 KiB apart) became: completions @wc in
 * order, wr_ids from @id0, each frame in the buffer @dst[k] (NULL: RX_BASE slots from
 * @slot0); IBV_WC_IP_CSUM_OK where @csum has bit k (an IPv4/UDP frame: its checksum fields
 * are the sender's). */
static void check_landed(const struct ibv_wc *wc, int n, uint64_t id0, const uint8_t *at,
			 const uint32_t *len, uint8_t *const *dst, int slot0, uint32_t csum)
{
	for (int k = 0; k < n; k++) {
		const uint8_t *rx = dst != NULL ? dst[k] : buf + RX_BASE + (size_t)(slot0 + k) * 2048;

		CHECK(wc[k].status == IBV_WC_SUCCESS && wc[k].opcode == IBV_WC_RECV &&
		      wc[k].wr_id == id0 + (uint64_t)k && wc[k].byte_len == len[k],
		      "frame %d: %s wr_id %llu len %u", k, ibv_wc_status_str(wc[k].status),
		      (unsigned long long)wc[k].wr_id, wc[k].byte_len);
		CHECK(!(wc[k].wc_flags & IBV_WC_IP_CSUM_OK) == !(csum >> k & 1), "frame %d: flags %#x",
		      k, wc[k].wc_flags);
		if (csum >> k & 1)           /* the checksums the send wrote (in its own copy) */
			CHECK(memcmp(rx, at + (size_t)k * 1024, 24) == 0 &&
			      memcmp(rx + 26, at + (size_t)k * 1024 + 26, 14) == 0 &&
			      memcmp(rx + 42, at + (size_t)k * 1024 + 42, len[k] - 42) == 0,
			      "frame %d: bytes differ", k);
		else
			CHECK(memcmp(rx, at + (size_t)k * 1024, len[k]) == 0, "frame %d: bytes differ",
			      k);
		CHECK(rx[len[k]] == 0xee, "frame %d: a byte past it written", k);
	}
}

static void send_burst(struct ibv_qp *tx, const uint8_t *dmac, const uint32_t *len, int n,
		       uint8_t tag, int ipv4_at)
{
	static const uint8_t udp[42] = { 2, 0, 0, 0, 0, 0xdd, 2, 0, 0, 0, 0, 1, 0x08, 0x00,
		0x45, 0, 0, 50, 0, 1, 0, 0, 64, 17, 0x11, 0x11, 10, 0, 0, 1, 10, 0, 0, 2,
		0x30, 0x39, 0, 53, 0, 30, 0x22, 0x22 };

	for (int k = 0; k < n; k++) {
		uint8_t *f = buf + 45056 + (size_t)k * 1024;

		frame_to(f, dmac, len[k], (uint8_t)(tag + 16 * k));
		if (k == ipv4_at) {                   /* IPv4/UDP of 64 bytes, checksums sent */
			memcpy(f, udp, sizeof(udp));
			memset(f + sizeof(udp), 7, len[k] - sizeof(udp));
		}
		send1(tx, f, len[k], k == ipv4_at ? IBV_SEND_IP_CSUM : 0);
	}
}

/* One QP, one CQ of 7 entries, an RQ of 8: bursts whose frames take each way through the
 * receive path, each checked byte for byte (and not a byte past a frame). */
static void burst_ways(struct ibv_qp *tx)
{
	static const uint8_t mac_d[6] = { 2, 0, 0, 0, 0, 0xdd };
	struct ibv_cq *cq = ibv_create_cq(ctx, 7, NULL, NULL, 0);
	struct ibv_qp *q = test_raw_qp(pd, cq, (struct ibv_qp_cap){ .max_recv_wr = 8,
								 .max_recv_sge = 1 });
	struct ibv_qp *q2 = test_raw_qp(pd, cq, (struct ibv_qp_cap){ .max_recv_wr = 8,
								  .max_recv_sge = 2 });
	struct ibv_flow *f = flow_to(q, IBV_FLOW_ATTR_NORMAL, mac_d, 0, 0), *f2;
	uint8_t *other = aligned_alloc(4096, 16384), *dst[8];
	struct ibv_mr *omr = ibv_reg_mr(pd, other, 16384, IBV_ACCESS_LOCAL_WRITE);
	const uint8_t *sent = buf + 45056;
	struct pollfd pfd = { .fd = ctx->async_fd, .events = POLLIN };
	struct ibv_async_event ev;
	struct ibv_wc wc[8];
	bool overrun = false;

	CHECK(cq != NULL && f != NULL && other != NULL && omr != NULL);
	memset(buf + RX_BASE + 300 * 2048, 0xee, 40 * 2048);
	memset(other, 0xee, 16384);
	/* five common frames; then three more WQEs: 8 posted, positions 5 7 0 ... 4 */
	CHECK_EQ(post_recvs(q, 8, 2048, 0, 300), 0);
	send_burst(tx, mac_d, (const uint32_t[]){ 64, 64, 64, 64, 64 }, 5, 1, -1);
	CHECK_EQ(test_poll(cq, wc, 5), 5);
	check_landed(wc, 5, 0, sent, (const uint32_t[]){ 64, 64, 64, 64, 64 }, NULL, 300, 0);
	CHECK_EQ(post_recvs(q, 5, 2048, 8, 308), 0);
	/* one burst, the RQ and the CQ wrapping after its third frame: an IPv4 frame with good
	 * checksums between common ones, and every copy size (16-31, 32-64, 65-128, more) */
	send_burst(tx, mac_d, (const uint32_t[]){ 64, 64, 100, 20, 200, 33 }, 6, 2, 1);
	CHECK_EQ(test_poll(cq, wc, 6), 6);
	check_landed(wc, 6, 5, sent, (const uint32_t[]){ 64, 64, 100, 20, 200, 33 },
		     (uint8_t *[]){ buf + RX_BASE + 305 * 2048, buf + RX_BASE + 306 * 2048,
				    buf + RX_BASE + 307 * 2048, buf + RX_BASE + 308 * 2048,
				    buf + RX_BASE + 309 * 2048, buf + RX_BASE + 310 * 2048 }, 0, 2);
	/* WQEs 11 and 12 in buf, 13 and 14 in another MR, 15 in buf again */
	for (int i = 0; i < 2; i++) {
		struct ibv_sge sge = { (uintptr_t)other + (size_t)i * 4096, 2048, omr->lkey };
		struct ibv_recv_wr wr = { .wr_id = 13 + (uint64_t)i, .sg_list = &sge, .num_sge = 1 };
		struct ibv_recv_wr *bad;

		CHECK_EQ(ibv_post_recv(q, &wr, &bad), 0);
	}
	CHECK_EQ(post_recvs(q, 1, 2048, 15, 320), 0);
	send_burst(tx, mac_d, (const uint32_t[]){ 70, 71, 72, 73, 74 }, 5, 3, -1);
	CHECK_EQ(test_poll(cq, wc, 5), 5);
	dst[0] = buf + RX_BASE + 311 * 2048;
	dst[1] = buf + RX_BASE + 312 * 2048;
	dst[2] = other;
	dst[3] = other + 4096;
	dst[4] = buf + RX_BASE + 320 * 2048;
	check_landed(wc, 5, 11, sent, (const uint32_t[]){ 70, 71, 72, 73, 74 }, dst, 0, 0);
	/* eight frames into a CQ with room for seven: seven completions, an overrun
	 * (IBV_EVENT_CQ_ERR), all eight WQEs used, every frame where its WQE said */
	CHECK_EQ(post_recvs(q, 8, 2048, 16, 321), 0);
	send_burst(tx, mac_d, (const uint32_t[]){ 64, 65, 66, 67, 68, 69, 70, 71 }, 8, 4, -1);
	test_poll_for(rcq, wc, 8, two_ports ? 0.3 : 0.05);    /* progress, this CQ untouched */
	while (!overrun && poll(&pfd, 1, 2000) == 1 && ibv_get_async_event(ctx, &ev) == 0) {
		overrun = ev.event_type == IBV_EVENT_CQ_ERR && ev.element.cq == cq;
		ibv_ack_async_event(&ev);
	}
	CHECK(overrun, "no IBV_EVENT_CQ_ERR");
	CHECK_EQ(ibv_poll_cq(cq, 8, wc), 7);
	check_landed(wc, 7, 16, sent, (const uint32_t[]){ 64, 65, 66, 67, 68, 69, 70 }, NULL, 321,
		     0);
	CHECK(memcmp(buf + RX_BASE + 328 * 2048, sent + 7 * 1024, 71) == 0, "the 8th frame");
	CHECK(post_recvs(q, 8, 2048, 24, 321) == 0, "the 8th WQE was used: room for 8");
	/* a scatter list between single SGEs (max_recv_sge 2): the general path for it alone */
	CHECK_EQ(ibv_destroy_flow(f), 0);
	f2 = flow_to(q2, IBV_FLOW_ATTR_NORMAL, mac_d, 0, 0);
	CHECK(f2 != NULL);
	memset(buf + RX_BASE + 330 * 2048, 0xee, 4 * 2048);
	CHECK_EQ(post_recvs(q2, 1, 2048, 40, 330), 0);
	{
		struct ibv_sge sg[2] = { { (uintptr_t)buf + RX_BASE + 331 * 2048, 40, mr->lkey },
					 { (uintptr_t)buf + RX_BASE + 332 * 2048, 2000, mr->lkey } };
		struct ibv_recv_wr wr = { .wr_id = 41, .sg_list = sg, .num_sge = 2 }, *bad;

		CHECK_EQ(ibv_post_recv(q2, &wr, &bad), 0);
	}
	CHECK_EQ(post_recvs(q2, 1, 2048, 42, 333), 0);
	send_burst(tx, mac_d, (const uint32_t[]){ 64, 100, 64 }, 3, 5, -1);
	CHECK_EQ(test_poll(cq, wc, 3), 3);
	check_landed(wc, 1, 40, sent, (const uint32_t[]){ 64 }, NULL, 330, 0);
	check_landed(wc + 2, 1, 42, sent + 2048, (const uint32_t[]){ 64 }, NULL, 333, 0);
	CHECK(wc[1].status == IBV_WC_SUCCESS && wc[1].wr_id == 41 && wc[1].byte_len == 100);
	CHECK(memcmp(buf + RX_BASE + 331 * 2048, sent + 1024, 40) == 0 &&
	      memcmp(buf + RX_BASE + 332 * 2048, sent + 1024 + 40, 60) == 0 &&
	      buf[RX_BASE + 331 * 2048 + 40] == 0xee && buf[RX_BASE + 332 * 2048 + 60] == 0xee,
	      "the scattered frame");
	CHECK_EQ(ibv_destroy_flow(f2), 0);
	CHECK_EQ(ibv_destroy_qp(q), 0);
	CHECK_EQ(ibv_destroy_qp(q2), 0);
	CHECK_EQ(ibv_destroy_cq(cq), 0);
	CHECK_EQ(ibv_dereg_mr(omr), 0);
	free(other);
}

static struct ibv_comp_channel *rch;
static struct ibv_cq *woken;

static void *wait_recv_event(void *arg)
{
	void *ctx_out;

	if (ibv_get_cq_event(rch, &woken, &ctx_out) != 0)
		woken = NULL;
	return NULL;
}

/* A thread blocked in ibv_get_cq_event wakes for a receive completion (waiting drives the
 * port's receive side). */
static void receive_channel(struct ibv_qp *tx)
{
	struct ibv_cq *cq;
	struct ibv_qp *q;
	struct ibv_flow *f;
	pthread_t th;
	struct timespec deadline;
	struct ibv_wc wc;

	rch = ibv_create_comp_channel(ctx);
	cq = ibv_create_cq(ctx, 8, NULL, rch, 0);
	q = test_raw_qp(pd, cq, (struct ibv_qp_cap){ .max_recv_wr = 4, .max_recv_sge = 1 });
	f = flow_to(q, IBV_FLOW_ATTR_NORMAL, mac_b, 0, 0);
	CHECK_EQ(post_recvs(q, 1, 2048, 77, 0), 0);
	CHECK_EQ(ibv_req_notify_cq(cq, 0), 0);
	pthread_create(&th, NULL, wait_recv_event, NULL);
	usleep(20000);
	frame_to(buf + 28672, mac_b, 90, 4);
	send1(tx, buf + 28672, 90, 0);
	clock_gettime(CLOCK_REALTIME, &deadline);
	deadline.tv_sec += 5;
	CHECK_EQ(pthread_timedjoin_np(th, NULL, &deadline), 0);
	CHECK(woken == cq, "the waiting thread did not get the receive event");
	ibv_ack_cq_events(cq, 1);
	CHECK_EQ(test_poll(cq, &wc, 1), 1);
	CHECK(wc.wr_id == 77 && wc.opcode == IBV_WC_RECV && wc.byte_len == 90);
	CHECK_EQ(ibv_destroy_flow(f), 0);
	CHECK_EQ(ibv_destroy_qp(q), 0);
	CHECK_EQ(ibv_destroy_cq(cq), 0);
	CHECK_EQ(ibv_destroy_comp_channel(rch), 0);
}

/* The progress rule: a zero-copy send on net_ring is freed only when the port's receive side
 * takes the frame off the ring, yet polling the send CQ alone completes it (polling any CQ of
 * a context progresses every port its QPs use). A program that waits for its send completion
 * before it polls receives must not hang. */
static void zero_copy_completes_polling_send_cq(struct ibv_qp *tx)
{
	struct ibv_qp *q = test_raw_qp(pd, rcq, (struct ibv_qp_cap){ .max_send_wr = 1,
				.max_send_sge = 1, .max_recv_wr = 4, .max_recv_sge = 1 });
	struct ibv_flow *f = flow_to(q, IBV_FLOW_ATTR_NORMAL, mac_a, 0, 0);
	struct dpv_port_stats st0, st1;
	struct ibv_wc wc;

	/* a receive WQE waits: the frame lands in it while only the send CQ is polled */
	CHECK_EQ(post_recvs(q, 1, 2048, 7, 0), 0);
	frame_to(buf + 16384, mac_a, 1000, 5);
	send1(tx, buf + 16384, 1000, IBV_SEND_SIGNALED);
	CHECK_EQ(test_poll(scq, &wc, 1), 1);
	CHECK(wc.wr_id == 99 && wc.status == IBV_WC_SUCCESS);
	CHECK_EQ(ibv_poll_cq(rcq, 1, &wc), 1);            /* already there */
	CHECK(wc.wr_id == 7 && wc.byte_len == 1000);
	/* no receive WQE: the frame is dropped (and counted), the send completes all the same */
	CHECK_EQ(dpv_query_port_stats(ctx, &st0), 0);
	send1(tx, buf + 16384, 1000, IBV_SEND_SIGNALED);
	CHECK_EQ(test_poll(scq, &wc, 1), 1);
	CHECK(wc.wr_id == 99 && wc.status == IBV_WC_SUCCESS);
	CHECK_EQ(dpv_query_port_stats(ctx, &st1), 0);
	CHECK_EQ(st1.rx_no_wqe - st0.rx_no_wqe, 1);
	CHECK_EQ(ibv_destroy_flow(f), 0);
	CHECK_EQ(ibv_destroy_qp(q), 0);
}

int main(void)
{
	const char *rx_name = getenv("DPV_TEST_RX_DEVICE");
	struct ibv_context *sctx;
	struct ibv_pd *spd;
	struct ibv_qp *tx;
	struct ibv_cq *idle;
	struct ibv_qp_init_attr tia = { .qp_type = IBV_QPT_RAW_PACKET,
					.cap = { .max_send_wr = 64, .max_send_sge = 1 } };

	sctx = ctx = test_open(NULL);
	two_ports = rx_name != NULL;
	if (two_ports)
		ctx = test_open(rx_name);
	pd = ibv_alloc_pd(ctx);
	spd = two_ports ? ibv_alloc_pd(sctx) : pd;
	scq = ibv_create_cq(sctx, 64, NULL, NULL, 0);
	rcq = ibv_create_cq(ctx, 64, NULL, NULL, 0);
	buf = aligned_alloc(4096, 1 << 20);
	mr = ibv_reg_mr(pd, buf, 1 << 20, IBV_ACCESS_LOCAL_WRITE);
	smr = two_ports ? ibv_reg_mr(spd, buf, 1 << 20, 0) : mr;
	CHECK(mr != NULL && smr != NULL && scq != NULL && rcq != NULL);
	/* the sender receives into a CQ nobody polls: polling its send CQ drives sending only */
	idle = ibv_create_cq(sctx, 4, NULL, NULL, 0);
	tia.send_cq = scq;
	tia.recv_cq = idle;
	tx = ibv_create_qp(spd, &tia);
	CHECK(tx != NULL && test_qp_to(tx, IBV_QPS_INIT) == 0 && test_qp_to(tx, IBV_QPS_RTR) == 0 &&
	      test_qp_to(tx, IBV_QPS_RTS) == 0);
	steering_and_bytes(tx);
	errors_and_flags(tx);
	protection_errors(tx);
	spec_sizes();
	five_tuples_ipv6_mcast(tx);
	drops_counted(tx);
	flows_take_effect_at_once(tx);
	burst_for_two_qps(tx);
	burst_ways(tx);
	receive_channel(tx);
	if (!two_ports)           /* net_ring: the sent mbuf waits in the ring for the receiver */
		zero_copy_completes_polling_send_cq(tx);
	CHECK_EQ(ibv_destroy_qp(tx), 0);
	CHECK_EQ(ibv_dereg_mr(mr), 0);
	if (two_ports)
		CHECK_EQ(ibv_dereg_mr(smr), 0);
	free(buf);
	CHECK_EQ(ibv_destroy_cq(scq), 0);
	CHECK_EQ(ibv_destroy_cq(idle), 0);
	CHECK_EQ(ibv_destroy_cq(rcq), 0);
	CHECK_EQ(ibv_dealloc_pd(pd), 0);
	if (two_ports) {
		CHECK_EQ(ibv_dealloc_pd(spd), 0);
		CHECK_EQ(ibv_close_device(ctx), 0);
	}
	CHECK_EQ(ibv_close_device(sctx), 0);
	return test_done(two_ports ? "recv (two ports)" : "recv");
}
