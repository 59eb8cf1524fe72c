/* SPDX-License-Identifier: BSD-3-Clause */
/* ibv_post_send on a net_pcap port: errno, bad_wr and completions checked here; every frame
 * that must reach the wire is written, in order, to the expectation file given as argv[1],
 * which check_wire.py compares with the pcap file (read by scapy, not by dpverbs). Lines are
 * "raw <hex>" (these exact bytes) or "csum <hex>" (these bytes with the IP/TCP/UDP checksums
 * scapy computes). */
#include <arpa/inet.h>
#include <sys/mman.h>
#include <unistd.h>

#include "dpv_test.h"

#define MIN(a, b) ((a) < (b) ? (a) : (b))
#define DIM(a) (sizeof(a) / sizeof((a)[0]))

static FILE *expect;
static struct ibv_context *ctx;
static struct ibv_pd *pd;
static struct ibv_cq *cq;
static uint8_t *buf;               /* 1 MiB, registered as mr */
static struct ibv_mr *mr;
#define BUF_LEN (1 << 20)

static void expect_frame(const char *kind, const uint8_t *f, size_t len)
{
	fprintf(expect, "%s ", kind);
	for (size_t i = 0; i < len; i++)
		fprintf(expect, "%02x", f[i]);
	fprintf(expect, "\n");
}

/* An Ethernet frame (ethertype 0x88b5) whose bytes tell @tag and their offset. */
static void make_frame(uint8_t *f, size_t len, uint8_t tag)
{
	static const uint8_t l2[14] = { 2, 0, 0, 0, 0, 2, 2, 0, 0, 0, 0, 1, 0x88, 0xb5 };

	memcpy(f, l2, MIN(len, sizeof(l2)));
	for (size_t i = sizeof(l2); i < len; i++)
		f[i] = (uint8_t)(tag * 7 + i);
}

static struct ibv_qp *new_qp(uint32_t max_send_sge, uint32_t max_inline)
{
	return test_raw_qp(pd, cq, (struct ibv_qp_cap){ .max_send_wr = 64,
				.max_send_sge = max_send_sge, .max_inline_data = max_inline });
}

static int post1(struct ibv_qp *qp, uint64_t id, struct ibv_sge *sge, int n, unsigned int flags)
{
	struct ibv_send_wr wr = { .wr_id = id, .sg_list = sge, .num_sge = n,
				  .opcode = IBV_WR_SEND, .send_flags = flags }, *bad;

	return ibv_post_send(qp, &wr, &bad);
}

static struct ibv_wc poll1(void)
{
	struct ibv_wc wc = { .status = IBV_WC_GENERAL_ERR };

	CHECK_EQ(test_poll(cq, &wc, 1), 1);
	return wc;
}

static void chain_with_bad_middle(void)
{
	struct ibv_qp *qp = new_qp(2, 0);
	struct ibv_sge s[3] = { { (uintptr_t)buf, 100, mr->lkey }, { (uintptr_t)buf, 100, mr->lkey },
				{ (uintptr_t)buf + 200, 100, mr->lkey } };
	struct ibv_send_wr wr[3], *bad = NULL;
	struct ibv_wc wc[4];

	make_frame(buf, 300, 1);
	for (int i = 0; i < 3; i++)
		wr[i] = (struct ibv_send_wr){ .wr_id = 10 + i, .sg_list = &s[i], .num_sge = 1,
					      .opcode = IBV_WR_SEND, .send_flags = IBV_SEND_SIGNALED,
					      .next = i < 2 ? &wr[i + 1] : NULL };
	wr[1].num_sge = 3;                               /* > max_send_sge */
	CHECK_EQ(ibv_post_send(qp, wr, &bad), EINVAL);
	CHECK(bad == &wr[1], "bad_wr is not the middle WR");
	CHECK_EQ(test_poll(cq, wc, 1), 1);
	CHECK_EQ(wc[0].wr_id, 10);
	CHECK_EQ(ibv_poll_cq(cq, 4, wc), 0);             /* exactly one completion */
	expect_frame("raw", buf, 100);
	/* a cyclic list ends at its first failure */
	wr[2].next = &wr[0];
	wr[0].num_sge = 0;                               /* an empty frame: EINVAL */
	CHECK_EQ(ibv_post_send(qp, &wr[2], &bad), EINVAL);
	CHECK(bad == &wr[0]);
	CHECK_EQ(poll1().wr_id, 12);
	expect_frame("raw", buf + 200, 100);
	CHECK_EQ(ibv_destroy_qp(qp), 0);
}

static void inline_data(void)
{
	struct ibv_qp *qp = new_qp(2, 256);
	uint8_t local[600];
	struct ibv_qp_attr a;
	struct ibv_qp_init_attr ia;
	uint32_t max;
	struct ibv_sge s = { (uintptr_t)local, 0, 0xbadbad };   /* lkey not checked for inline */

	CHECK_EQ(ibv_query_qp(qp, &a, IBV_QP_CAP, &ia), 0);
	max = a.cap.max_inline_data;
	CHECK(max >= 256 && max < sizeof(local), "max_inline_data %u", max);
	make_frame(local, max, 2);
	s.length = max;
	CHECK_EQ(post1(qp, 20, &s, 1, IBV_SEND_INLINE | IBV_SEND_SIGNALED), 0);
	expect_frame("raw", local, max);
	memset(local, 0xee, sizeof(local));              /* reusable as soon as post returns */
	CHECK_EQ(poll1().status, IBV_WC_SUCCESS);
	s.length = max + 1;
	CHECK_EQ(post1(qp, 21, &s, 1, IBV_SEND_INLINE | IBV_SEND_SIGNALED), EINVAL);
	CHECK_EQ(ibv_destroy_qp(qp), 0);
}

/* The frame in up to 4 SGEs placed backwards in the MR, with a zero-length SGE (bad lkey,
 * not checked) between them. */
static void gather_lists(void)
{
	struct ibv_qp *qp = new_qp(8, 0);
	uint8_t frame[1000];

	make_frame(frame, sizeof(frame), 3);
	for (int n = 1; n <= 4; n++) {
		struct ibv_sge s[8];
		int k = 0;
		size_t piece = sizeof(frame) / n, off = 0;

		for (int i = 0; i < n; i++) {
			size_t len = i == n - 1 ? sizeof(frame) - off : piece;
			uint8_t *at = buf + 64 * 1024 - (i + 1) * 2048 + 3 * i;

			memcpy(at, frame + off, len);
			s[k++] = (struct ibv_sge){ (uintptr_t)at, (uint32_t)len, mr->lkey };
			if (i == 0)
				s[k++] = (struct ibv_sge){ 0, 0, 0xdeadbeef };
			off += len;
		}
		CHECK_EQ(post1(qp, 30 + n, s, k, IBV_SEND_SIGNALED), 0);
		CHECK_EQ(poll1().status, IBV_WC_SUCCESS);
		expect_frame("raw", frame, sizeof(frame));
	}
	CHECK_EQ(ibv_destroy_qp(qp), 0);
}

static void zero_based_mr(void)
{
	struct ibv_qp *qp = new_qp(1, 0);
	uint8_t *page = buf + 512 * 1024;                /* page aligned */
	struct ibv_mr *zb = ibv_reg_mr_iova(pd, page, 8192, 0, 0);
	struct ibv_sge s = { 4096 + 5, 300, zb ? zb->lkey : 0 };

	CHECK(zb != NULL, "%s", strerror(errno));
	make_frame(page + 4096 + 5, 300, 4);
	CHECK_EQ(post1(qp, 40, &s, 1, IBV_SEND_SIGNALED), 0);
	CHECK_EQ(poll1().status, IBV_WC_SUCCESS);
	expect_frame("raw", page + 4096 + 5, 300);
	s.addr = 8192 - 100;                             /* past the end of the zero-based MR */
	s.length = 101;
	CHECK_EQ(post1(qp, 41, &s, 1, IBV_SEND_SIGNALED), 0);
	CHECK_EQ(poll1().status, IBV_WC_LOC_PROT_ERR);
	CHECK_EQ(ibv_destroy_qp(qp), 0);
	CHECK_EQ(ibv_dereg_mr(zb), 0);
}

static void frame_sizes(void)
{
	struct ibv_qp *qp = new_qp(3, 0);
	struct ibv_sge s[3] = { { (uintptr_t)buf, 600, mr->lkey },
				{ (uintptr_t)buf + 600, 600, mr->lkey },
				{ (uintptr_t)buf + 1200, 314, mr->lkey } };

	make_frame(buf, 1600, 5);
	CHECK_EQ(post1(qp, 50, s, 3, IBV_SEND_SIGNALED), 0);         /* 1514: MTU + 14 */
	CHECK_EQ(poll1().status, IBV_WC_SUCCESS);
	expect_frame("raw", buf, 1514);
	s[2].length = 315;
	CHECK_EQ(post1(qp, 51, s, 3, IBV_SEND_SIGNALED), EINVAL);    /* 1515 */
	buf[12] = 0x81;                                  /* one VLAN tag: 4 more bytes */
	buf[13] = 0x00;
	buf[16] = 0x88;
	buf[17] = 0xb5;
	s[2].length = 318;
	CHECK_EQ(post1(qp, 52, s, 3, IBV_SEND_SIGNALED), 0);         /* 1518 */
	CHECK_EQ(poll1().status, IBV_WC_SUCCESS);
	expect_frame("raw", buf, 1518);
	s[2].length = 319;
	CHECK_EQ(post1(qp, 53, s, 3, IBV_SEND_SIGNALED), EINVAL);
	s[0].length = 13;
	CHECK_EQ(post1(qp, 54, s, 1, IBV_SEND_SIGNALED), EINVAL);    /* shorter than Ethernet */
	CHECK_EQ(ibv_destroy_qp(qp), 0);
}

static void protection_errors(void)
{
	struct ibv_qp *qp = new_qp(1, 0);
	struct ibv_sge s[4] = { { (uintptr_t)buf, 80, mr->lkey }, { (uintptr_t)buf, 80, mr->lkey + 1 },
				{ (uintptr_t)buf + 100, 80, mr->lkey },
				{ (uintptr_t)buf + BUF_LEN - 40, 80, mr->lkey } };
	struct ibv_send_wr wr[3], *bad;
	struct ibv_wc wc[3];
	struct ibv_qp_attr a = { .qp_state = IBV_QPS_RTS };
	struct ibv_qp_init_attr ia;

	make_frame(buf, 200, 6);
	for (int i = 0; i < 3; i++)
		wr[i] = (struct ibv_send_wr){ .wr_id = 60 + i, .sg_list = &s[i], .num_sge = 1,
					      .opcode = IBV_WR_SEND,
					      .send_flags = i == 1 ? 0 : IBV_SEND_SIGNALED,
					      .next = i < 2 ? &wr[i + 1] : NULL };
	CHECK_EQ(ibv_post_send(qp, wr, &bad), 0);         /* found when it executes, not now */
	CHECK_EQ(test_poll(cq, wc, 3), 3);
	CHECK(wc[0].wr_id == 60 && wc[0].status == IBV_WC_SUCCESS);
	CHECK(wc[1].wr_id == 61 && wc[1].status == IBV_WC_LOC_PROT_ERR, "unsignaled error: %s",
	      ibv_wc_status_str(wc[1].status));
	CHECK(wc[2].wr_id == 62 && wc[2].status == IBV_WC_WR_FLUSH_ERR);
	CHECK(wc[1].qp_num == qp->qp_num && wc[2].qp_num == qp->qp_num);
	expect_frame("raw", buf, 80);
	CHECK_EQ(ibv_query_qp(qp, &a, IBV_QP_STATE, &ia), 0);
	CHECK_EQ(a.qp_state, IBV_QPS_SQE);
	CHECK_EQ(ibv_modify_qp(qp, &(struct ibv_qp_attr){ .qp_state = IBV_QPS_RTS }, IBV_QP_STATE), 0);
	CHECK_EQ(post1(qp, 63, &s[3], 1, IBV_SEND_SIGNALED), 0);      /* 40 bytes past the MR */
	CHECK_EQ(poll1().status, IBV_WC_LOC_PROT_ERR);
	CHECK_EQ(ibv_modify_qp(qp, &(struct ibv_qp_attr){ .qp_state = IBV_QPS_RTS }, IBV_QP_STATE), 0);
	CHECK_EQ(post1(qp, 64, &s[2], 1, IBV_SEND_SIGNALED), 0);
	CHECK_EQ(poll1().status, IBV_WC_SUCCESS);
	expect_frame("raw", buf + 100, 80);
	CHECK_EQ(ibv_destroy_qp(qp), 0);
}

/* UDP/IPv4 and TCP/IPv6 frames with IP_CSUM: checksums on the wire, application memory
 * untouched. */
static void ip_csum(void)
{
	struct ibv_qp *qp = new_qp(2, 0);
	uint8_t *f4 = buf + 300000, *f6 = buf + 310000, copy[400];
	static const uint8_t udp4[42] = {
		2, 0, 0, 0, 0, 2, 2, 0, 0, 0, 0, 1, 0x08, 0x00,
		0x45, 0, 0, 186, 0, 1, 0, 0, 64, 17, 0xaa, 0xbb, 10, 0, 0, 1, 10, 0, 0, 2,
		0x30, 0x39, 0x00, 0x35, 0, 166, 0xcc, 0xdd };
	static const uint8_t tcp6[74] = {
		2, 0, 0, 0, 0, 2, 2, 0, 0, 0, 0, 1, 0x86, 0xdd,
		0x60, 0, 0, 0, 0, 100, 6, 64, 0xfd, 0, [37] = 1, 0xfd, 0, [53] = 2,
		0x30, 0x39, 0x00, 0x50, 0, 0, 0, 1, 0, 0, 0, 0, 0x50, 0x18, 0xff, 0xff, 0x12, 0x34,
		0, 0 };
	struct ibv_sge s[2] = { { (uintptr_t)f4, 20, mr->lkey }, { (uintptr_t)f4 + 20, 180, mr->lkey } };

	memcpy(f4, udp4, sizeof(udp4));
	for (int i = 42; i < 200; i++)
		f4[i] = (uint8_t)i;
	memcpy(copy, f4, 200);
	CHECK_EQ(post1(qp, 70, s, 2, IBV_SEND_IP_CSUM | IBV_SEND_SIGNALED), 0);
	CHECK_EQ(poll1().status, IBV_WC_SUCCESS);
	CHECK(memcmp(copy, f4, 200) == 0, "IP_CSUM wrote into application memory");
	expect_frame("csum", f4, 200);

	memcpy(f6, tcp6, sizeof(tcp6));
	for (int i = 74; i < 154; i++)
		f6[i] = (uint8_t)(3 * i);
	s[0] = (struct ibv_sge){ (uintptr_t)f6, 154, mr->lkey };
	CHECK_EQ(post1(qp, 71, s, 1, IBV_SEND_IP_CSUM | IBV_SEND_SIGNALED), 0);
	CHECK_EQ(poll1().status, IBV_WC_SUCCESS);
	expect_frame("csum", f6, 154);

	/* IPv4/TCP and IPv6/UDP with garbage in the checksums */
	memcpy(f4, udp4, 14);
	memcpy(f4 + 14, "\x45\x00\x00\x50\x00\x02\x40\x00\x40\x06\x99\x99\x0a\x00\x00\x01"
			"\x0a\x00\x00\x02\x30\x39\x00\x50\x00\x00\x00\x09\x00\x00\x00\x00"
			"\x50\x10\x10\x00\x77\x77\x00\x00", 40);
	for (int i = 54; i < 94; i++)
		f4[i] = (uint8_t)(i * 5);
	s[0] = (struct ibv_sge){ (uintptr_t)f4, 94, mr->lkey };
	CHECK_EQ(post1(qp, 72, s, 1, IBV_SEND_IP_CSUM | IBV_SEND_SIGNALED), 0);
	CHECK_EQ(poll1().status, IBV_WC_SUCCESS);
	expect_frame("csum", f4, 94);
	memcpy(f6, tcp6, 54);
	f6[20] = 17;                                      /* next header UDP */
	f6[19] = 48;                                      /* payload length */
	memcpy(f6 + 54, "\x30\x39\x00\x35\x00\x30\xee\xee", 8);
	for (int i = 62; i < 102; i++)
		f6[i] = (uint8_t)(i * 11);
	s[0] = (struct ibv_sge){ (uintptr_t)f6, 102, mr->lkey };
	CHECK_EQ(post1(qp, 73, s, 1, IBV_SEND_IP_CSUM | IBV_SEND_SIGNALED), 0);
	CHECK_EQ(poll1().status, IBV_WC_SUCCESS);
	expect_frame("csum", f6, 102);

	/* TCP behind an IPv6 hop-by-hop header: the pseudo-header's protocol is TCP's, not the
	 * IPv6 header's next header (DPDK's tx_prepare gets this wrong, so not in the port) */
	memcpy(f6, tcp6, 54);
	f6[19] = 68;                                      /* payload: 8 + 20 + 40 */
	f6[20] = 0;                                       /* next header: hop-by-hop */
	memcpy(f6 + 54, "\x06\x00\x01\x04\x00\x00\x00\x00", 8);   /* next TCP, PadN */
	memcpy(f6 + 62, tcp6 + 54, 20);
	for (int i = 82; i < 122; i++)
		f6[i] = (uint8_t)(i * 7);
	s[0] = (struct ibv_sge){ (uintptr_t)f6, 122, mr->lkey };
	CHECK_EQ(post1(qp, 76, s, 1, IBV_SEND_IP_CSUM | IBV_SEND_SIGNALED), 0);
	CHECK_EQ(poll1().status, IBV_WC_SUCCESS);
	expect_frame("csum", f6, 122);

	/* ARP passes unchanged; an IPv4 fragment gets its header checksum, its UDP one untouched */
	memcpy(f4, "\xff\xff\xff\xff\xff\xff\x02\x00\x00\x00\x00\x01\x08\x06"
		   "\x00\x01\x08\x00\x06\x04\x00\x01\x02\x00\x00\x00\x00\x01\x0a\x00\x00\x01"
		   "\x00\x00\x00\x00\x00\x00\x0a\x00\x00\x02", 42);
	memset(f4 + 42, 0, 18);
	s[0] = (struct ibv_sge){ (uintptr_t)f4, 60, mr->lkey };
	CHECK_EQ(post1(qp, 74, s, 1, IBV_SEND_IP_CSUM | IBV_SEND_SIGNALED), 0);
	CHECK_EQ(poll1().status, IBV_WC_SUCCESS);
	expect_frame("raw", f4, 60);
	memcpy(f4, udp4, sizeof(udp4));
	f4[20] = 0x20;                                    /* MF: first fragment */
	s[0] = (struct ibv_sge){ (uintptr_t)f4, 200, mr->lkey };
	CHECK_EQ(post1(qp, 75, s, 1, IBV_SEND_IP_CSUM | IBV_SEND_SIGNALED), 0);
	CHECK_EQ(poll1().status, IBV_WC_SUCCESS);
	expect_frame("ip", f4, 200);
	CHECK_EQ(ibv_destroy_qp(qp), 0);
}

/* SQD holds sends back; ERR flushes them; RTS sends them; destroy and dereg with WRs queued.
 * 1000-byte frames: larger than tx_copy_max, so they point into the MR until sent. */
static void queued_and_flushed(void)
{
	struct ibv_qp *qp = new_qp(1, 0);
	struct ibv_mr *m2 = ibv_reg_mr(pd, buf + 400000, 4096, 0);
	struct ibv_sge s = { (uintptr_t)buf + 400000, 1000, m2->lkey };
	struct ibv_wc wc[4];
	struct dpv_port_info info;
	bool zero_copy;

	CHECK_EQ(dpv_query_port_info(ctx, &info), 0);
	zero_copy = info.zero_copy && s.length > info.tx_copy_max;
	make_frame(buf + 400000, 1000, 8);
	CHECK_EQ(test_qp_to(qp, IBV_QPS_SQD), 0);
	for (int i = 0; i < 3; i++)
		CHECK_EQ(post1(qp, 80 + i, &s, 1, IBV_SEND_SIGNALED), 0);
	CHECK_EQ(ibv_poll_cq(cq, 4, wc), 0);              /* held back in SQD */
	if (zero_copy)
		CHECK_EQ(ibv_dereg_mr(m2), EBUSY);        /* queued WRs point into it */
	CHECK_EQ(test_qp_to(qp, IBV_QPS_ERR), 0);
	CHECK_EQ(test_poll(cq, wc, 3), 3);
	for (int i = 0; i < 3; i++)
		CHECK(wc[i].wr_id == 80u + i && wc[i].status == IBV_WC_WR_FLUSH_ERR);
	CHECK_EQ(post1(qp, 83, &s, 1, 0), 0);             /* posted in ERR: flushed */
	CHECK_EQ(poll1().status, IBV_WC_WR_FLUSH_ERR);

	CHECK_EQ(test_qp_to(qp, IBV_QPS_RESET), 0);
	CHECK_EQ(test_qp_to(qp, IBV_QPS_INIT), 0);
	CHECK_EQ(test_qp_to(qp, IBV_QPS_RTR), 0);
	CHECK_EQ(test_qp_to(qp, IBV_QPS_RTS), 0);
	CHECK_EQ(test_qp_to(qp, IBV_QPS_SQD), 0);
	CHECK_EQ(post1(qp, 84, &s, 1, IBV_SEND_SIGNALED), 0);
	CHECK_EQ(post1(qp, 85, &s, 1, IBV_SEND_SIGNALED), 0);
	CHECK_EQ(test_qp_to(qp, IBV_QPS_RTS), 0);        /* sends what SQD held */
	CHECK_EQ(test_poll(cq, wc, 2), 2);
	CHECK(wc[0].wr_id == 84 && wc[1].wr_id == 85 && wc[1].status == IBV_WC_SUCCESS);
	expect_frame("raw", buf + 400000, 1000);
	expect_frame("raw", buf + 400000, 1000);

	CHECK_EQ(test_qp_to(qp, IBV_QPS_SQD), 0);
	CHECK_EQ(post1(qp, 86, &s, 1, IBV_SEND_SIGNALED), 0);
	CHECK_EQ(test_qp_to(qp, IBV_QPS_RESET), 0);      /* forgotten, no completion */
	CHECK_EQ(ibv_poll_cq(cq, 4, wc), 0);
	CHECK_EQ(test_qp_to(qp, IBV_QPS_INIT), 0);
	CHECK_EQ(test_qp_to(qp, IBV_QPS_RTR), 0);
	CHECK_EQ(test_qp_to(qp, IBV_QPS_RTS), 0);
	CHECK_EQ(test_qp_to(qp, IBV_QPS_SQD), 0);
	CHECK_EQ(post1(qp, 87, &s, 1, IBV_SEND_SIGNALED), 0);
	CHECK_EQ(ibv_destroy_qp(qp), 0);                  /* with a WR queued */
	CHECK_EQ(ibv_poll_cq(cq, 4, wc), 0);
	CHECK_EQ(ibv_dereg_mr(m2), 0);                    /* nothing holds it any more */
}

static void opcodes_on_raw(void)
{
	struct ibv_qp *qp = new_qp(1, 0);
	struct ibv_sge s = { (uintptr_t)buf, 64, mr->lkey };
	const enum ibv_wr_opcode refused[] = { IBV_WR_SEND_WITH_IMM, IBV_WR_RDMA_WRITE,
		IBV_WR_RDMA_WRITE_WITH_IMM, IBV_WR_RDMA_READ, IBV_WR_ATOMIC_CMP_AND_SWP,
		IBV_WR_ATOMIC_FETCH_AND_ADD, IBV_WR_LOCAL_INV, IBV_WR_BIND_MW, IBV_WR_SEND_WITH_INV,
		IBV_WR_DRIVER1, IBV_WR_ATOMIC_WRITE, (enum ibv_wr_opcode)99 };
	struct ibv_send_wr wr = { .wr_id = 90, .sg_list = &s, .num_sge = 1 }, *bad;
	struct ibv_wc wc;

	for (size_t i = 0; i < DIM(refused); i++) {
		wr.opcode = refused[i];
		CHECK(ibv_post_send(qp, &wr, &bad) == EINVAL && bad == &wr, "opcode %d", refused[i]);
	}
	wr.opcode = IBV_WR_SEND;
	wr.send_flags = IBV_SEND_FENCE;
	CHECK_EQ(ibv_post_send(qp, &wr, &bad), EINVAL);
	wr.send_flags = IBV_SEND_SOLICITED | IBV_SEND_SIGNALED;
	CHECK_EQ(ibv_post_send(qp, &wr, &bad), 0);       /* SEND may be solicited */
	expect_frame("raw", buf, 64);
	/* sent before the QP goes (in service mode a destroy drops what is still queued) */
	CHECK_EQ(test_poll(cq, &wc, 1), 1);
	CHECK(wc.wr_id == 90 && wc.status == IBV_WC_SUCCESS);
	wr.send_flags = 1u << 9;
	CHECK_EQ(ibv_post_send(qp, &wr, &bad), EINVAL);
	CHECK_EQ(ibv_destroy_qp(qp), 0);
}

int main(int argc, char **argv)
{
	if (argc != 2 || (expect = fopen(argv[1], "w")) == NULL) {
		fprintf(stderr, "usage: test_post_send <expectation file>\n");
		return 2;
	}
	ctx = test_open(NULL);
	pd = ibv_alloc_pd(ctx);
	cq = ibv_create_cq(ctx, 256, NULL, NULL, 0);
	buf = mmap(NULL, BUF_LEN, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	mr = ibv_reg_mr(pd, buf, BUF_LEN, IBV_ACCESS_LOCAL_WRITE);
	CHECK(mr != NULL, "ibv_reg_mr: %s", strerror(errno));
	if (mr == NULL)                   /* nothing below means anything without it */
		return test_done("post_send");
	chain_with_bad_middle();
	inline_data();
	gather_lists();
	zero_based_mr();
	frame_sizes();
	protection_errors();
	ip_csum();
	queued_and_flushed();
	opcodes_on_raw();
	CHECK_EQ(ibv_dereg_mr(mr), 0);
	CHECK_EQ(ibv_destroy_cq(cq), 0);
	CHECK_EQ(ibv_dealloc_pd(pd), 0);
	test_settle();
	CHECK_EQ(ibv_close_device(ctx), 0);               /* the pcap file is complete now */
	fclose(expect);
	return test_done("post_send");
}
