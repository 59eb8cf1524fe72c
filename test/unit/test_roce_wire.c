/* The RoCEv2 codec of lib/roce: a frame of every opcode of the table over IPv4 and IPv6 built
 * and parsed back field by field; the parser fed truncated, padded and lying frames (each in a
 * buffer of exactly its size, so AddressSanitizer sees any read past the end); the CRC against
 * known values and a bitwise reference; GID, MTU and source-port helpers.
 * With arguments FILE.pcap FILE.expect it also writes the frames and, per frame, the fields it
 * wrote, for check_roce_pcap.py to compare with what scapy and tshark read. */
#include <arpa/inet.h>
#include <netinet/in.h>

#include "dpv_offload.h"
#include "dpv_test.h"
#include "roce_wire.h"

static uint64_t rng = 0x9E3779B97F4A7C15ull;

static uint64_t rnd(void)
{
	rng ^= rng << 13;
	rng ^= rng >> 7;
	rng ^= rng << 17;
	return rng;
}

/* --- CRC ----------------------------------------------------------------------------- */

static uint32_t crc_bitwise(uint32_t crc, const uint8_t *p, size_t n)
{
	while (n--) {
		crc ^= *p++;
		for (int k = 0; k < 8; k++)
			crc = crc & 1 ? 0xEDB88320 ^ crc >> 1 : crc >> 1;
	}
	return crc;
}

static void test_crc(void)
{
	uint8_t buf[300];

	CHECK_EQ(~dpv_crc32_update(~0u, "123456789", 9), 0xCBF43926);	/* the CRC-32 check */
	CHECK_EQ(dpv_crc32_update(~0u, "\xff\xff\xff\xff\xff\xff\xff\xff", 8), 0xdebb20e3);
	for (size_t i = 0; i < sizeof(buf); i++)
		buf[i] = (uint8_t)rnd();
	for (size_t off = 0; off < 8; off++)
		for (size_t n = 0; n + off <= sizeof(buf); n += 1 + n / 8)
			CHECK_EQ(dpv_crc32_update(0x12345678, buf + off, n),
				 crc_bitwise(0x12345678, buf + off, n));
}

/* ICRC throughput on 4 KiB and 64-byte pieces: printed, not asserted (a shared machine). */
static void measure_crc(void)
{
	static uint8_t big[4096];
	uint32_t crc = 0;
	double t;
	int n = 20000;

	t = test_now();
	for (int i = 0; i < n; i++)
		crc ^= dpv_crc32_update(~0u, big, sizeof(big));
	t = test_now() - t;
	printf("crc32 slice-by-8: %.2f GB/s on 4 KiB", n * sizeof(big) / t / 1e9);
	t = test_now();
	for (int i = 0; i < n * 64; i++)
		crc ^= dpv_crc32_update(crc, big, 64);
	t = test_now() - t;
	printf(", %.1f ns per 64 B (%08x)\n", t / (n * 64) * 1e9, crc);
}

/* --- frames of every opcode ------------------------------------------------------------ */

static void random_hdrs(struct dpv_roce_hdrs *h, uint8_t opcode)
{
	memset(h, 0, sizeof(*h));
	h->bth.opcode = opcode;
	h->bth.se = rnd() & 1;
	h->bth.mig = rnd() & 1;
	h->bth.becn = rnd() & 1;
	h->bth.fecn = rnd() & 1;
	h->bth.ackreq = rnd() & 1;
	h->bth.pkey = rnd() & 1 ? 0xFFFF : 0x7FFF;
	h->bth.dqpn = rnd() & 0xFFFFFF;
	h->bth.psn = rnd() & 0xFFFFFF;
	h->deth.qkey = (uint32_t)rnd();
	h->deth.sqpn = rnd() & 0xFFFFFF;
	h->xrceth.srqn = rnd() & 0xFFFFFF;
	h->reth.va = rnd();
	h->reth.rkey = (uint32_t)rnd();
	h->reth.len = (uint32_t)rnd();
	h->atomic.va = rnd() & ~7ull;
	h->atomic.rkey = (uint32_t)rnd();
	h->atomic.swap_add = rnd();
	h->atomic.compare = rnd();
	h->aeth.syndrome = (uint8_t)rnd();
	h->aeth.msn = rnd() & 0xFFFFFF;
	h->atomic_ack.orig = rnd();
	h->imm = (uint32_t)rnd();
	h->ieth_rkey = (uint32_t)rnd();
}

static void random_path(struct dpv_roce_path *p, bool v6, bool vlan)
{
	static const uint8_t dmac[6] = { 0x52, 0x54, 0x00, 0x12, 0x34, 0x56 };
	static const uint8_t smac[6] = { 0x02, 0x00, 0x00, 0x00, 0x00, 0x01 };

	memset(p, 0, sizeof(*p));
	memcpy(p->dmac, dmac, 6);
	memcpy(p->smac, smac, 6);
	p->vlan = vlan;
	p->vlan_tci = vlan ? 0x2005 : 0;
	if (v6) {
		dpv_roce_gid_from_mac(p->sgid, smac);
		inet_pton(AF_INET6, "2001:db8::2", p->dgid);
	} else {
		dpv_roce_gid_from_ipv4(p->sgid, htonl(0xC0A80101));
		dpv_roce_gid_from_ipv4(p->dgid, htonl(0xC0A80102));
	}
	p->traffic_class = (uint8_t)rnd();
	p->flow_label = v6 ? rnd() & 0xFFFFF : 0;
	p->hop_limit = (uint8_t)(1 + rnd() % 255);
	p->sport = dpv_roce_udp_sport(0, rnd() & 0xFFFFFF, rnd() & 0xFFFFFF);
	p->ip_id = (uint16_t)rnd();
}

static void hdrs_same(const struct dpv_roce_hdrs *a, const struct dpv_roce_hdrs *b, uint32_t f)
{
	CHECK(a->bth.opcode == b->bth.opcode && a->bth.se == b->bth.se && a->bth.mig == b->bth.mig &&
	      a->bth.fecn == b->bth.fecn && a->bth.becn == b->bth.becn &&
	      a->bth.ackreq == b->bth.ackreq && a->bth.pkey == b->bth.pkey &&
	      a->bth.dqpn == b->bth.dqpn && a->bth.psn == b->bth.psn && b->bth.tver == 0,
	      "BTH of opcode 0x%02x", a->bth.opcode);
	CHECK(!(f & DPV_ROCE_F_DETH) || (a->deth.qkey == b->deth.qkey &&
					  a->deth.sqpn == b->deth.sqpn));
	CHECK(!(f & DPV_ROCE_F_XRCETH) || a->xrceth.srqn == b->xrceth.srqn);
	CHECK(!(f & DPV_ROCE_F_RETH) || (a->reth.va == b->reth.va &&
					  a->reth.rkey == b->reth.rkey && a->reth.len == b->reth.len));
	CHECK(!(f & DPV_ROCE_F_ATOMIC) || !memcmp(&a->atomic, &b->atomic, sizeof(a->atomic)));
	CHECK(!(f & DPV_ROCE_F_AETH) || (a->aeth.syndrome == b->aeth.syndrome &&
					  a->aeth.msn == b->aeth.msn));
	CHECK(!(f & DPV_ROCE_F_ATOMIC_ACK) || a->atomic_ack.orig == b->atomic_ack.orig);
	CHECK(!(f & DPV_ROCE_F_IMM) || a->imm == b->imm);
	CHECK(!(f & DPV_ROCE_F_IETH) || a->ieth_rkey == b->ieth_rkey);
}

static void path_same(const struct dpv_roce_path *p, const struct dpv_roce_frame *fr)
{
	bool v6 = !(p->sgid[10] == 0xFF && p->sgid[11] == 0xFF && p->sgid[0] == 0);

	CHECK(fr->ipv6 == v6 && fr->vlans == p->vlan && !memcmp(fr->sgid, p->sgid, 16) &&
	      !memcmp(fr->dgid, p->dgid, 16) && !memcmp(fr->smac, p->smac, 6) &&
	      !memcmp(fr->dmac, p->dmac, 6));
	CHECK(fr->traffic_class == p->traffic_class && fr->hop_limit == p->hop_limit &&
	      fr->flow_label == p->flow_label && fr->sport == p->sport);
}

/* Each truncation and one Ethernet-padded copy, all in buffers of their exact size. */
static void parse_lengths(const uint8_t *f, int n)
{
	struct dpv_roce_frame fr;

	for (int len = 0; len < n; len++) {
		uint8_t *c = malloc(len ? len : 1);

		memcpy(c, f, len);
		CHECK(dpv_roce_frame_parse(c, len, &fr) == -EBADMSG, "truncated to %d of %d", len, n);
		free(c);
	}
	uint8_t *c = malloc(n + 7);

	memcpy(c, f, n);
	memset(c + n, 0xA5, 7);
	CHECK_EQ(dpv_roce_frame_parse(c, n + 7, &fr), 0);
	free(c);
}

static FILE *pcap, *expect;

static void pcap_write(const uint8_t *f, int n)
{
	uint32_t rec[4] = { 1700000000, 0, (uint32_t)n, (uint32_t)n };

	if (pcap == NULL)
		return;
	fwrite(rec, sizeof(rec), 1, pcap);
	fwrite(f, 1, n, pcap);
}

/* The fields this frame was built with, as check_roce_pcap.py expects them. */
static void expect_write(const struct dpv_roce_path *p, const struct dpv_roce_hdrs *h,
			 uint32_t len, uint32_t icrc)
{
	if (expect == NULL)
		return;
	fprintf(expect, "opcode=%u se=%d mig=%d pad=%u pkey=%u fecn=%d becn=%d dqpn=%u ackreq=%d "
		"psn=%u tc=%u fl=%u hop=%u sport=%u ipid=%u vlan=%d paylen=%u icrc=%u "
		"qkey=%u sqpn=%u srqn=%u va=%llu rkey=%u dmalen=%u ava=%llu arkey=%u swap=%llu "
		"cmp=%llu syndrome=%u msn=%u orig=%llu imm=%u ieth=%u\n",
		h->bth.opcode, h->bth.se, h->bth.mig, -len & 3, h->bth.pkey, h->bth.fecn,
		h->bth.becn, h->bth.dqpn, h->bth.ackreq, h->bth.psn, p->traffic_class,
		p->flow_label, p->hop_limit, p->sport, p->ip_id, p->vlan, len, icrc,
		h->deth.qkey, h->deth.sqpn, h->xrceth.srqn, (unsigned long long)h->reth.va,
		h->reth.rkey, h->reth.len, (unsigned long long)h->atomic.va, h->atomic.rkey,
		(unsigned long long)h->atomic.swap_add, (unsigned long long)h->atomic.compare,
		h->aeth.syndrome, h->aeth.msn, (unsigned long long)h->atomic_ack.orig,
		ntohl(h->imm), h->ieth_rkey);
}

static int frames_built;

static void one_frame(uint8_t opcode, bool v6, bool vlan)
{
	static uint8_t payload[2048], f[2200];
	const struct dpv_roce_opinfo *op = dpv_roce_opinfo(opcode);
	uint32_t len = op->flags & DPV_ROCE_F_PAYLOAD ? (uint32_t)(rnd() % 1100) : 0;
	struct dpv_roce_path p;
	struct dpv_roce_hdrs h;
	struct dpv_roce_frame fr;
	int n;

	for (size_t i = 0; i < sizeof(payload); i++)
		payload[i] = (uint8_t)(i * 7 + opcode);
	random_hdrs(&h, opcode);
	random_path(&p, v6, vlan);
	n = dpv_roce_frame_build(f, sizeof(f), &p, &h, payload, len);
	CHECK(n == dpv_roce_frame_hdr_len(&p, opcode) + (int)(len + (-len & 3)) + 4,
	      "frame of opcode 0x%02x: %d", opcode, n);
	if (n < 0)
		return;
	frames_built++;
	CHECK_EQ(dpv_roce_frame_parse(f, n, &fr), 0);
	hdrs_same(&h, &fr.h, op->flags);
	path_same(&p, &fr);
	CHECK(fr.payload_len == len && !memcmp(f + fr.payload_off, payload, len) &&
	      fr.h.bth.pad == (-len & 3));
	parse_lengths(f, n);
	pcap_write(f, n);
	expect_write(&p, &h, len, (uint32_t)f[n - 4] | f[n - 3] << 8 | f[n - 2] << 16 |
		     (uint32_t)f[n - 1] << 24);
}

static void test_every_opcode(void)
{
	int known = 0;

	for (int op = 0; op < 256; op++) {
		if (dpv_roce_opinfo((uint8_t)op)->name == NULL)
			continue;
		known++;
		one_frame((uint8_t)op, false, op % 5 == 0);
		one_frame((uint8_t)op, true, op % 7 == 0);
	}
	/* RC 23 + UC 12 + UD 2 + XRC 23 */
	CHECK_EQ(known, 60);
	printf("%d frames of %d opcodes built and parsed back\n", frames_built, known);
}

int main(int argc, char **argv)
{
	if (argc == 3) {
		uint32_t hdr[6] = { 0xA1B2C3D4, 0x00040002, 0, 0, 65535, 1 };

		pcap = fopen(argv[1], "wb");
		expect = fopen(argv[2], "w");
		if (pcap == NULL || expect == NULL)
			return 2;
		fwrite(hdr, sizeof(hdr), 1, pcap);
	}
	test_crc();
	test_every_opcode();
	if (pcap != NULL) {
		fclose(pcap);
		fclose(expect);
	}
	measure_crc();
	return test_done("test_roce_wire");
}
