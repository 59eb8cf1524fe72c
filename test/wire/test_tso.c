/* SPDX-License-Identifier: BSD-3-Clause */
/* IBV_WR_TSO on a port: every WR's header and payload go to the expectation file as
 * "tso <mss> <header hex> <payload hex>", and check_wire.py builds the segments the contract
 * demands with scapy (ID + i, sequence + i * mss, FIN/PSH last, CWR first, lengths and
 * checksums) and compares them with the capture. Errno, bad_wr and completions are checked
 * here. Used on net_pcap (software TSO) and on net_tap (the port's TSO where it applies). */
#include <sys/mman.h>

#include "dpv_test.h"

static FILE *expect;
static struct ibv_pd *pd;
static struct ibv_cq *cq;
static struct ibv_qp *qp;
static struct ibv_mr *mr;
static uint8_t *buf;
#define BUF_LEN (1 << 20)
#define MAX_TSO 262144

static void hex(const uint8_t *p, size_t n)
{
	for (size_t i = 0; i < n; i++)
		fprintf(expect, "%02x", p[i]);
}

static void expect_tso(uint16_t mss, const uint8_t *hdr, size_t hlen, const uint8_t *pay,
		       size_t plen)
{
	fprintf(expect, "tso %u ", mss);
	hex(hdr, hlen);
	fprintf(expect, " ");
	hex(pay, plen);
	if (plen == 0)
		fprintf(expect, "-");
	fprintf(expect, "\n");
}

enum { V4 = 0, V6 = 1 };

/* Ethernet [+ @vlans tags] + IPv4 or IPv6 (+ hop-by-hop) + TCP [+ 12 bytes of options]. */
static size_t make_hdr(uint8_t *h, int ip, int vlans, bool opts, uint8_t tcp_flags,
		       uint16_t ip_id, uint32_t seq)
{
	size_t n = 12;

	memcpy(h, "\x02\x00\x00\x00\x00\x02\x02\x00\x00\x00\x00\x01", 12);
	for (int v = 0; v < vlans; v++, n += 4)
		memcpy(h + n, v == 0 && vlans == 2 ? "\x88\xa8\x00\x07" : "\x81\x00\x00\x05", 4);
	memcpy(h + n, ip == V4 ? "\x08\x00" : "\x86\xdd", 2);
	n += 2;
	if (ip == V4) {
		uint8_t v4[20] = { 0x45, 0, 0, 0, ip_id >> 8, ip_id & 0xff, 0x40, 0, 64, 6, 0x12, 0x34,
				   192, 0, 2, 1, 192, 0, 2, 2 };
		memcpy(h + n, v4, 20);
		n += 20;
	} else {
		uint8_t v6[48] = { 0x60, 0, 0, 0, 0, 0, 0 /* hop-by-hop */, 64,
				   0x20, 0x01, 0x0d, 0xb8, [23] = 1, 0x20, 0x01, 0x0d, 0xb8, [39] = 2,
				   6 /* next: TCP */, 0, 1, 4, 0, 0, 0, 0 };
		memcpy(h + n, v6, 48);
		n += 48;
	}
	{
		uint8_t tcp[32] = { 0x30, 0x39, 0x1f, 0x90, seq >> 24, seq >> 16, seq >> 8, seq,
				    0, 0, 0, 1, (uint8_t)((opts ? 8 : 5) << 4), tcp_flags, 0xff, 0xff,
				    0xbe, 0xef, 0, 0,
				    1, 1, 8, 10, 0, 0, 0, 1, 0, 0, 0, 2 };   /* NOP NOP timestamps */
		memcpy(h + n, tcp, opts ? 32 : 20);
		n += opts ? 32 : 20;
	}
	/* the lengths of a header-only packet, as an application would leave them */
	{
		size_t l3 = 14 + 4 * (size_t)vlans, l3_rest = n - l3;

		if (ip == V4) {
			h[l3 + 2] = (uint8_t)(l3_rest >> 8);
			h[l3 + 3] = (uint8_t)l3_rest;
		} else {
			h[l3 + 4] = (uint8_t)((l3_rest - 40) >> 8);
			h[l3 + 5] = (uint8_t)(l3_rest - 40);
		}
	}
	return n;
}

static int post_tso(uint64_t id, uint8_t *hdr, size_t hlen, struct ibv_sge *sge, int nsge,
		    uint16_t mss, unsigned int flags)
{
	struct ibv_send_wr wr = { .wr_id = id, .sg_list = sge, .num_sge = nsge,
				  .opcode = IBV_WR_TSO, .send_flags = IBV_SEND_SIGNALED | flags,
				  .tso = { .hdr = hdr, .hdr_sz = (uint16_t)hlen, .mss = mss } }, *bad;

	return ibv_post_send(qp, &wr, &bad);
}

/* One TSO WR whose payload sits in the MR at @off, in @nsge pieces of odd sizes. */
static void tso_case(int ip, int vlans, bool opts, uint8_t flags, size_t plen, uint16_t mss,
		     int nsge, unsigned int send_flags)
{
	static uint64_t id = 1000;
	uint8_t hdr[128];
	size_t hlen = make_hdr(hdr, ip, vlans, opts, flags, 0xfffe, 0xffffff00);
	uint8_t *pay = buf + 4096;
	struct ibv_sge sge[4];
	struct ibv_wc wc;
	size_t off = 0;

	for (size_t i = 0; i < plen; i++)
		pay[i] = (uint8_t)(i * 31 + plen);
	for (int k = 0; k < nsge; k++) {
		size_t len = k == nsge - 1 ? plen - off : (plen / nsge) | 1;

		if (len > plen - off)
			len = plen - off;
		sge[k] = (struct ibv_sge){ (uintptr_t)pay + off, (uint32_t)len, mr->lkey };
		off += len;
	}
	CHECK_EQ(post_tso(++id, hdr, hlen, sge, nsge, mss, send_flags), 0);
	memset(hdr, 0, sizeof(hdr));          /* tso.hdr is copied while posting */
	CHECK_EQ(test_poll(cq, &wc, 1), 1);
	CHECK(wc.wr_id == id && wc.status == IBV_WC_SUCCESS && wc.opcode == IBV_WC_TSO,
	      "WR %llu: %s opcode %d", (unsigned long long)id, ibv_wc_status_str(wc.status), wc.opcode);
	hlen = make_hdr(hdr, ip, vlans, opts, flags, 0xfffe, 0xffffff00);
	expect_tso(mss, hdr, hlen, pay, plen);
}

static void inline_tso(void)
{
	uint8_t hdr[128], pay[200];
	size_t hlen = make_hdr(hdr, V4, 0, false, 0x18, 7, 1);
	struct ibv_sge sge = { (uintptr_t)pay, sizeof(pay), 0xbad };
	struct ibv_wc wc;

	for (size_t i = 0; i < sizeof(pay); i++)
		pay[i] = (uint8_t)(200 - i);
	CHECK_EQ(post_tso(1, hdr, hlen, &sge, 1, 64, IBV_SEND_INLINE), 0);
	expect_tso(64, hdr, hlen, pay, sizeof(pay));
	memset(pay, 0, sizeof(pay));            /* reusable when the post returns */
	CHECK_EQ(test_poll(cq, &wc, 1), 1);
	CHECK(wc.status == IBV_WC_SUCCESS && wc.opcode == IBV_WC_TSO);
}

static void invalid_tso(void)
{
	uint8_t hdr[256], udp[64];
	size_t hlen = make_hdr(hdr, V4, 0, true, 0, 1, 1);
	struct ibv_sge sge = { (uintptr_t)buf + 4096, 3000, mr->lkey };
	struct ibv_send_wr wr[2], *bad;
	const struct { uint16_t hdr_sz; uint16_t mss; uint32_t len; } rows[] = {
		{ 0, 1000, 3000 }, { 13, 1000, 3000 }, { 200, 1000, 3000 },  /* > max_tso_header */
		{ 54, 1000, 3000 },            /* the header has 12 bytes of TCP options */
		{ 66, 0, 3000 },               /* mss 0 */
		{ 66, 1000, MAX_TSO + 1 },     /* payload > max_tso */
	};
	struct ibv_wc wc;

	for (size_t r = 0; r < sizeof(rows) / sizeof(rows[0]); r++) {
		wr[0] = (struct ibv_send_wr){ .wr_id = 1, .sg_list = &sge, .num_sge = 1,
					      .opcode = IBV_WR_TSO, .send_flags = IBV_SEND_SIGNALED,
					      .tso = { .hdr = hdr, .hdr_sz = rows[r].hdr_sz,
						       .mss = rows[r].mss } };
		sge.length = rows[r].len;
		bad = NULL;
		CHECK(ibv_post_send(qp, wr, &bad) == EINVAL && bad == wr, "row %zu", r);
	}
	CHECK_EQ(hlen, 66);
	memcpy(udp, hdr, 34);
	udp[23] = 17;                          /* UDP: not TCP */
	wr[0].tso.hdr = udp;
	wr[0].tso.hdr_sz = 42;
	wr[0].tso.mss = 1000;
	sge.length = 3000;
	CHECK_EQ(ibv_post_send(qp, wr, &bad), EINVAL);
	wr[0].tso.hdr = NULL;
	wr[0].tso.hdr_sz = 66;
	CHECK_EQ(ibv_post_send(qp, wr, &bad), EINVAL);
	CHECK_EQ(ibv_poll_cq(cq, 1, &wc), 0);  /* nothing posted, nothing completes */
}

/* Segments above what a tap carries: the WR fails when it executes, the QP recovers. */
static void too_large_for_tap(void)
{
	uint8_t hdr[128];
	size_t hlen = make_hdr(hdr, V4, 0, false, 0x18, 1, 1);
	struct ibv_sge sge = { (uintptr_t)buf + 4096, 20000, mr->lkey };
	struct ibv_wc wc;

	CHECK_EQ(post_tso(77, hdr, hlen, &sge, 1, 9000, 0), 0);
	CHECK_EQ(test_poll(cq, &wc, 1), 1);
	CHECK(wc.wr_id == 77 && wc.status == IBV_WC_LOC_LEN_ERR, "%s", ibv_wc_status_str(wc.status));
	CHECK_EQ(test_qp_to(qp, IBV_QPS_RTS), 0);        /* SQE -> RTS */
	sge.length = 3000;
	CHECK_EQ(post_tso(78, hdr, hlen, &sge, 1, 1000, 0), 0);
	CHECK_EQ(test_poll(cq, &wc, 1), 1);
	CHECK(wc.wr_id == 78 && wc.status == IBV_WC_SUCCESS);
	expect_tso(1000, hdr, hlen, buf + 4096, 3000);
}

int main(int argc, char **argv)
{
	struct ibv_context *ctx;
	struct ibv_qp_init_attr_ex ex = { .qp_type = IBV_QPT_RAW_PACKET,
					  .comp_mask = IBV_QP_INIT_ATTR_PD |
						       IBV_QP_INIT_ATTR_MAX_TSO_HEADER,
					  .max_tso_header = 128,
					  .cap = { .max_send_wr = 64, .max_send_sge = 4,
						   .max_inline_data = 256 } };
	static const uint16_t mss_all[] = { 536, 1448, 9000 };
	/* the cases a tap carries (frames above MTU + 22 never reach the kernel); also run on
	 * net_pcap with DPV_TEST_TAP set, to compare the two captures */
	bool tap = getenv("DPV_TEST_TAP") != NULL;
	uint32_t max_mss = tap ? 1448 : 65535;
	static const size_t sizes[] = { 0, 1, 2, 45, 1447, 1448, 1449, 4096, 65536, MAX_TSO };

	if (argc != 2 || (expect = fopen(argv[1], "w")) == NULL)
		return 2;
	ctx = test_open(NULL);
	pd = ibv_alloc_pd(ctx);
	cq = ibv_create_cq(ctx, 64, NULL, NULL, 0);
	buf = mmap(NULL, BUF_LEN, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	mr = ibv_reg_mr(pd, buf, BUF_LEN, 0);
	ex.pd = pd;
	ex.send_cq = ex.recv_cq = cq;
	qp = ibv_create_qp_ex(ctx, &ex);
	CHECK(qp != NULL && mr != NULL, "QP or MR: %s", strerror(errno));
	if (qp == NULL || mr == NULL)     /* nothing below means anything without them */
		return test_done("tso");
	if (qp == NULL || test_qp_to(qp, IBV_QPS_INIT) || test_qp_to(qp, IBV_QPS_RTR) ||
	    test_qp_to(qp, IBV_QPS_RTS))
		return test_done("tso");
	/* sizes x mss, IPv4, in 1..3 SGEs */
	for (size_t m = 0; m < sizeof(mss_all) / sizeof(mss_all[0]); m++)
		for (size_t z = 0; mss_all[m] <= max_mss && z < sizeof(sizes) / sizeof(sizes[0]); z++)
			tso_case(V4, 0, false, 0x18, sizes[z], mss_all[m], 1 + (int)(z % 3), 0);
	/* even pieces, segments within a tap's MTU: what net_tap can segment itself */
	tso_case(V4, 0, false, 0x18, 20000, 1400, 1, 0);
	tso_case(V4, 0, false, 0x18, 20000, 1400, 2, 0);
	tso_case(V4, 1, false, 0x18, 9000, 1000, 1, IBV_SEND_IP_CSUM);
	tso_case(V4, 0, false, 0x10, 45, 1, 1, 0);                  /* mss 1: 45 segments */
	tso_case(V4, 0, false, 0x10, 2, 1, 2, 0);
	tso_case(V6, 0, false, 0x18, 10000, 1400, 2, 0);            /* IPv6 + hop-by-hop */
	tso_case(V6, 0, true, 0x19, 4000, 1000, 1, 0);
	tso_case(V4, 0, true, 0x18, 5000, 1400, 3, 0);              /* TCP options */
	tso_case(V4, 1, false, 0x18, 5000, 1448, 1, 0);             /* one VLAN tag */
	tso_case(V4, 2, true, 0x18, 5000, 1448, 2, 0);              /* QinQ */
	tso_case(V6, 2, false, 0x18, 3000, 1400, 1, 0);
	tso_case(V4, 0, false, 0x99, 5000, 1448, 1, 0);             /* CWR, PSH, FIN */
	tso_case(V6, 0, false, 0x99, 5000, 1400, 1, 0);
	tso_case(V4, 0, false, 0x18, 5000, 1448, 1, IBV_SEND_IP_CSUM);  /* same frames */
	inline_tso();
	invalid_tso();
	{
		struct dpv_port_info info;

		CHECK_EQ(dpv_query_port_info(ctx, &info), 0);
		if (strcmp(info.driver, "net_tap") == 0)
			too_large_for_tap();
	}
	{
		struct dpv_port_stats st;

		CHECK_EQ(dpv_query_port_stats(ctx, &st), 0);
		printf("%llu frames taken by the port; TSO WRs: %llu by the port, %llu in "
		       "software (%llu segments)\n", (unsigned long long)st.tx_frames,
		       (unsigned long long)st.tso_hw, (unsigned long long)st.tso_sw,
		       (unsigned long long)st.tso_segments_sw);
		/* net_tap segments IPv4 itself (rte_gso); IPv6, CWR and odd pieces stay here */
		struct dpv_port_info pi;

		CHECK_EQ(dpv_query_port_info(ctx, &pi), 0);
		if (strcmp(pi.driver, "net_tap") == 0)
			CHECK(st.tso_hw >= 4 && st.tso_sw >= 10, "hw %llu sw %llu",
			      (unsigned long long)st.tso_hw, (unsigned long long)st.tso_sw);
		else if (pi.hw_offloads & DPV_OFFLOAD_TCP_TSO)   /* a NIC: virtio in the VM test */
			CHECK(st.tso_hw >= 4, "hw %llu", (unsigned long long)st.tso_hw);
		else
			CHECK_EQ(st.tso_hw, 0);
	}
	CHECK_EQ(ibv_destroy_qp(qp), 0);
	CHECK_EQ(ibv_dereg_mr(mr), 0);
	CHECK_EQ(ibv_destroy_cq(cq), 0);
	CHECK_EQ(ibv_dealloc_pd(pd), 0);
	test_settle();
	CHECK_EQ(ibv_close_device(ctx), 0);
	fclose(expect);
	return test_done("tso");
}
