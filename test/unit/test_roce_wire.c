/* SPDX-License-Identifier: BSD-3-Clause */
/* The RoCEv2 codec of lib/roce: a frame of every opcode of the table over IPv4 and IPv6 built
 * and parsed back field by field; the parser fed truncated, padded and lying frames (each in a
 * buffer of exactly its size, so AddressSanitizer sees any read past the end); the CRC against
 * known values and a bitwise reference; GID, MTU and source-port helpers.
 * Bad frames: each error code of the parser from the edit that causes it, and which bytes the
 * ICRC covers and which it masks.
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

/* The folding CRC (PCLMULQDQ, where the CPU has it) and the tables against the bitwise CRC:
 * every alignment, lengths across the 16- and 64-byte fold boundaries, other start states. */
static void test_crc(void)
{
	static uint8_t buf[4200];
	const uint32_t init[] = { 0x12345678, 0, ~0u };

	CHECK_EQ(~dpv__crc32_update(~0u, "123456789", 9), 0xCBF43926);	/* the CRC-32 check */
	CHECK_EQ(dpv__crc32_update(~0u, "\xff\xff\xff\xff\xff\xff\xff\xff", 8), 0xdebb20e3);
	for (size_t i = 0; i < sizeof(buf); i++)
		buf[i] = (uint8_t)rnd();
	for (size_t off = 0; off < 16; off++)
		for (size_t n = 0; n + off <= 300; n += 1 + n / 16)
			for (size_t k = 0; k < 3; k++) {
				uint32_t want = crc_bitwise(init[k], buf + off, n);

				CHECK_EQ(dpv__crc32_update(init[k], buf + off, n), want);
				CHECK_EQ(dpv__crc32_update_table(init[k], buf + off, n), want);
			}
	for (size_t n = 1000; n + 3 <= sizeof(buf); n += 509)
		CHECK_EQ(dpv__crc32_update(0x9abcdef0, buf + 3, n), crc_bitwise(0x9abcdef0, buf + 3, n));
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
		crc ^= dpv__crc32_update(~0u, big, sizeof(big));
	t = test_now() - t;
	printf("crc32: %.2f GB/s on 4 KiB", n * sizeof(big) / t / 1e9);
	t = test_now();
	for (int i = 0; i < n * 64; i++)
		crc ^= dpv__crc32_update(crc, big, 64);
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
		dpv__roce_gid_from_mac(p->sgid, smac);
		inet_pton(AF_INET6, "2001:db8::2", p->dgid);
	} else {
		dpv__roce_gid_from_ipv4(p->sgid, htonl(0xC0A80101));
		dpv__roce_gid_from_ipv4(p->dgid, htonl(0xC0A80102));
	}
	p->traffic_class = (uint8_t)rnd();
	p->flow_label = v6 ? rnd() & 0xFFFFF : 0;
	p->hop_limit = (uint8_t)(1 + rnd() % 255);
	p->sport = dpv__roce_udp_sport(0, rnd() & 0xFFFFFF, rnd() & 0xFFFFFF);
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
		CHECK(dpv__roce_frame_parse(c, len, &fr) == -EBADMSG, "truncated to %d of %d", len, n);
		free(c);
	}
	uint8_t *c = malloc(n + 7);

	memcpy(c, f, n);
	memset(c + n, 0xA5, 7);
	CHECK_EQ(dpv__roce_frame_parse(c, n + 7, &fr), 0);
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
	const struct dpv_roce_opinfo *op = dpv__roce_opinfo(opcode);
	uint32_t len = op->flags & DPV_ROCE_F_PAYLOAD ? (uint32_t)(rnd() % 1100) : 0;
	struct dpv_roce_path p;
	struct dpv_roce_hdrs h;
	struct dpv_roce_frame fr;
	int n;

	for (size_t i = 0; i < sizeof(payload); i++)
		payload[i] = (uint8_t)(i * 7 + opcode);
	random_hdrs(&h, opcode);
	random_path(&p, v6, vlan);
	n = dpv__roce_frame_build(f, sizeof(f), &p, &h, payload, len);
	CHECK(n == dpv__roce_frame_hdr_len(&p, opcode) + (int)(len + (-len & 3)) + 4,
	      "frame of opcode 0x%02x: %d", opcode, n);
	if (n < 0)
		return;
	frames_built++;
	CHECK_EQ(dpv__roce_frame_parse(f, n, &fr), 0);
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
		if (dpv__roce_opinfo((uint8_t)op)->name == NULL)
			continue;
		known++;
		one_frame((uint8_t)op, false, op % 5 == 0);
		one_frame((uint8_t)op, true, op % 7 == 0);
	}
	/* RC 23 + UC 12 + UD 2 + XRC 23 */
	CHECK_EQ(known, 60);
	printf("%d frames of %d opcodes built and parsed back\n", frames_built, known);
}

/* --- the parser on bad frames ---------------------------------------------------------- */

struct bad {
	uint8_t f[256];
	int n, l2, l3;		/* frame length, IP and BTH offsets */
	bool v6;
};

static void base_frame(struct bad *b, bool v6, uint8_t opcode, uint32_t len)
{
	static const uint8_t payload[64] = "payload of a RoCEv2 test frame";
	struct dpv_roce_path p;
	struct dpv_roce_hdrs h;

	random_hdrs(&h, opcode);
	random_path(&p, v6, false);
	b->n = dpv__roce_frame_build(b->f, sizeof(b->f), &p, &h, payload, len);
	b->v6 = v6;
	b->l2 = 14;
	b->l3 = 14 + (v6 ? 40 : 20) + 8;
}

static void put16(uint8_t *p, uint16_t v)
{
	p[0] = v >> 8;
	p[1] = (uint8_t)v;
}

/* After an edit: the IPv4 header checksum and the ICRC made right again, so that only the
 * edit itself is what the parser can object to. */
static void refresh(struct bad *b)
{
	uint32_t icrc;

	if (!b->v6) {
		put16(b->f + b->l2 + 10, 0);
		put16(b->f + b->l2 + 10, dpv__ipv4_hdr_cksum(b->f + b->l2, 20));
	}
	icrc = dpv__roce_icrc(b->f + b->l2, b->v6, b->n - 4 - b->l2);
	memcpy(b->f + b->n - 4, &icrc, 4);	/* little-endian host */
}

static int parse(struct bad *b)
{
	struct dpv_roce_frame fr;
	uint8_t *c = malloc(b->n > 0 ? b->n : 1);
	int rc;

	memcpy(c, b->f, b->n);
	rc = dpv__roce_frame_parse(c, b->n, &fr);
	free(c);
	return rc;
}

#define EXPECT(v6, opcode, len, edit, err) do { \
	struct bad b; \
	base_frame(&b, v6, opcode, len); \
	edit; \
	CHECK(parse(&b) == (err), "%s %s: %d, expected %s", v6 ? "IPv6" : "IPv4", #edit, \
	      parse(&b), #err); \
} while (0)

#define SEND DPV_ROCE_RC | DPV_ROCE_SEND_ONLY
#define ACK DPV_ROCE_RC | DPV_ROCE_ACK
#define IP_LEN(b) ((b).f + (b).l2 + ((b).v6 ? 4 : 2))
#define UDP_LEN(b) ((b).f + (b).l3 - 4)

/* Every byte that the ICRC covers unmasked: changed, the frame is dropped as -EILSEQ; the
 * masked ones (TOS/TTL, traffic class/flow label/hop limit, UDP checksum, FECN/BECN) may change
 * on the way without breaking it. */
static void test_icrc_coverage(bool v6)
{
	struct bad b;
	int bad = 0, masked = 0;

	base_frame(&b, v6, SEND, 37);
	for (int i = b.l3 + 5; i < b.n; i++) {
		b.f[i] ^= 0x20;
		bad += parse(&b) == -EILSEQ;
		b.f[i] ^= 0x20;
	}
	CHECK_EQ(bad, b.n - b.l3 - 5);
	for (int i = b.l2; i < b.l3 + 5; i++) {
		bool is_masked = v6 ? i - b.l2 < 4 || i - b.l2 == 7 : i - b.l2 == 1 || i - b.l2 == 8;

		if (!is_masked && i != b.l3 - 2 && i != b.l3 - 1 && i != b.l3 + 4)
			continue;
		b.f[i] ^= i == b.l2 ? 0x01 : 0x40;	/* IPv6: not the version nibble */
		refresh(&b);
		masked += parse(&b) == 0;
		b.f[i] ^= i == b.l2 ? 0x01 : 0x40;
		refresh(&b);
	}
	CHECK_EQ(masked, v6 ? 8 : 5);
	CHECK_EQ(parse(&b), 0);
}

static void test_bad_frames(bool v6)
{
	uint8_t tcp = 6;

	EXPECT(v6, SEND, 10, (void)0, 0);
	EXPECT(v6, SEND, 10, b.f[b.l3 + 1] |= 1, -EPROTO);			/* TVer 1 */
	EXPECT(v6, SEND, 10, b.f[b.l3] = 0x40, -EPROTONOSUPPORT);		/* RD */
	EXPECT(v6, SEND, 10, b.f[b.l3] = 0x15, -EPROTONOSUPPORT);		/* reserved */
	EXPECT(v6, SEND, 10, b.f[b.l3] = 0x81, -EPROTONOSUPPORT);		/* CNP */
	EXPECT(v6, SEND, 10, (put16(b.f + b.l3 + 2, 0x1234), refresh(&b)), -EACCES);
	EXPECT(v6, SEND, 10, (put16(b.f + b.l3 + 2, 0x7FFF), refresh(&b)), 0);
	EXPECT(v6, SEND, 10, (put16(b.f + b.l3 + 2, 0x0000), refresh(&b)), -EACCES);
	/* pads: on an opcode without payload, on an empty payload, past the payload */
	EXPECT(v6, ACK, 0, (b.f[b.l3 + 1] |= 0x10, refresh(&b)), -EBADMSG);
	EXPECT(v6, SEND, 0, (b.f[b.l3 + 1] |= 0x20, refresh(&b)), -EBADMSG);
	EXPECT(v6, DPV_ROCE_RC | DPV_ROCE_READ_REQUEST, 0,
	       (b.f[b.l3 + 1] |= 0x30, refresh(&b)), -EBADMSG);
	EXPECT(v6, SEND, 1, (b.f[b.l3 + 1] |= 0x30, refresh(&b)), 0);	/* 1 byte + 3 */
	/* not RoCE: another UDP port, another protocol, ARP */
	EXPECT(v6, SEND, 10, (put16(b.f + b.l3 - 6, 4792), refresh(&b)), -ENOMSG);
	EXPECT(v6, SEND, 10, (b.f[b.l2 + (v6 ? 6 : 9)] = tcp, refresh(&b)), -ENOMSG);
	EXPECT(v6, SEND, 10, put16(b.f + 12, 0x0806), -ENOMSG);
	/* lengths that lie */
	EXPECT(v6, SEND, 10, (put16(IP_LEN(b), (uint16_t)(IP_LEN(b)[0] << 8 | IP_LEN(b)[1]) + 4),
			      refresh(&b)), -EBADMSG);
	EXPECT(v6, SEND, 10, (put16(IP_LEN(b), (uint16_t)(IP_LEN(b)[0] << 8 | IP_LEN(b)[1]) - 4),
			      refresh(&b)), -EBADMSG);
	EXPECT(v6, SEND, 10, put16(UDP_LEN(b), (uint16_t)(UDP_LEN(b)[0] << 8 | UDP_LEN(b)[1]) - 4),
	       -EBADMSG);
	EXPECT(v6, SEND, 10, put16(UDP_LEN(b), 7), -EBADMSG);
	EXPECT(v6, SEND, 10, (put16(IP_LEN(b), v6 ? 7 : 27), refresh(&b)), -EBADMSG);
	/* IP and UDP agreeing on a shorter packet: the ICRC is looked for in the payload */
	EXPECT(v6, SEND, 12, (put16(IP_LEN(b), (uint16_t)(IP_LEN(b)[0] << 8 | IP_LEN(b)[1]) - 4),
			      put16(UDP_LEN(b), (uint16_t)(UDP_LEN(b)[0] << 8 | UDP_LEN(b)[1]) - 4),
			      refresh(&b), b.f[b.n - 5] ^= 1), -EILSEQ);
	/* ... or a length that is not whole 4-byte words */
	EXPECT(v6, SEND, 12, (put16(IP_LEN(b), (uint16_t)(IP_LEN(b)[0] << 8 | IP_LEN(b)[1]) - 1),
			      put16(UDP_LEN(b), (uint16_t)(UDP_LEN(b)[0] << 8 | UDP_LEN(b)[1]) - 1),
			      refresh(&b)), -EBADMSG);
	EXPECT(v6, SEND, 10, b.f[b.n - 1] ^= 0x80, -EILSEQ);
	EXPECT(v6, SEND, 10, b.f[b.l2] = (uint8_t)(b.f[b.l2] + 0x10), -EBADMSG);	/* version */
	if (v6) {
		EXPECT(v6, SEND, 10, b.f[b.l2 + 6] = 0, -ENOMSG);	/* hop-by-hop options */
		/* IPv4-mapped addresses in an IPv6 header (found by fuzz_roce_parse) */
		EXPECT(v6, SEND, 10, (dpv__roce_gid_from_ipv4(b.f + b.l2 + 24, 0x02000000),
				      refresh(&b)), -EBADMSG);
		EXPECT(v6, SEND, 10, (dpv__roce_gid_from_ipv4(b.f + b.l2 + 8, 0x02000000),
				      refresh(&b)), -EBADMSG);
	} else {
		EXPECT(v6, SEND, 10, b.f[b.l2 + 10] ^= 1, -EBADMSG);	/* IPv4 header checksum */
		EXPECT(v6, SEND, 10, (b.f[b.l2] = 0x46, refresh(&b)), -EBADMSG);	/* options */
		EXPECT(v6, SEND, 10, (b.f[b.l2 + 6] |= 0x20, refresh(&b)), -ENOMSG);	/* MF */
		EXPECT(v6, SEND, 10, (b.f[b.l2 + 7] = 1, refresh(&b)), -ENOMSG);	/* offset */
	}
	test_icrc_coverage(v6);
}

/* The transport headers alone: too short for the opcode's headers, at each length. */
static void test_hdrs_decode(void)
{
	uint8_t buf[64];
	struct dpv_roce_hdrs h, d;
	uint32_t hl, pay;
	int n;

	random_hdrs(&h, DPV_ROCE_XRC | DPV_ROCE_CMP_SWAP);
	n = dpv__roce_hdrs_encode(buf, sizeof(buf), &h, 0);
	CHECK_EQ(n, 12 + 4 + 28);
	CHECK_EQ(dpv__roce_hdrs_encode(buf, n - 1, &h, 0), -ENOSPC);
	CHECK_EQ(dpv__roce_hdrs_encode(buf, sizeof(buf), &h, 4), -EINVAL);	/* no payload */
	h.bth.opcode = 0x40;
	CHECK_EQ(dpv__roce_hdrs_encode(buf, sizeof(buf), &h, 0), -EINVAL);
	memset(buf + n, 0, 4);
	for (int len = 0; len < n + 4; len++)
		CHECK_EQ(dpv__roce_hdrs_decode(buf, len, &d, &hl, &pay), -EBADMSG);
	CHECK_EQ(dpv__roce_hdrs_decode(buf, n + 4, &d, &hl, &pay), 0);
	CHECK(hl == (uint32_t)n && pay == 0);
}

/* --- addresses --------------------------------------------------------------------------- */

static void test_gids(void)
{
	static const uint8_t mac[6] = { 0x52, 0x54, 0x00, 0x12, 0x34, 0x56 };
	uint8_t gid[16], want[16], addr[16], back[6];

	dpv__roce_gid_from_mac(gid, mac);
	inet_pton(AF_INET6, "fe80::5054:ff:fe12:3456", want);
	CHECK(memcmp(gid, want, 16) == 0, "link-local GID of 52:54:00:12:34:56");
	CHECK(dpv__roce_gid_to_mac(gid, back) == 0 && memcmp(back, mac, 6) == 0);
	CHECK_EQ(dpv__roce_gid_to_ip(gid, addr), AF_INET6);
	inet_pton(AF_INET6, "2001:db8::5054:ff:fe12:3456", want);
	CHECK_EQ(dpv__roce_gid_to_mac(want, back), -EINVAL);	/* global: resolved by ND */
	dpv__roce_gid_from_ipv4(gid, htonl(0xC0A80102));
	inet_pton(AF_INET6, "::ffff:192.168.1.2", want);
	CHECK(memcmp(gid, want, 16) == 0, "IPv4-mapped GID");
	CHECK_EQ(dpv__roce_gid_to_ip(gid, addr), AF_INET);
	CHECK(memcmp(addr, "\xc0\xa8\x01\x02", 4) == 0);
	CHECK_EQ(dpv__roce_gid_to_mac(gid, back), -EINVAL);
}

static void test_mtu_and_ports(void)
{
	/* rxe: eth_mtu_int_to_enum(mtu) = the IB MTU of mtu - 80 */
	static const uint32_t mtu[] = { 0, 79, 335, 336, 591, 592, 1103, 1104, 1500, 2127, 2128,
					4175, 4176, 9000 };
	static const int ib[] = { 0, 0, 0, 1, 1, 2, 2, 3, 3, 3, 4, 4, 5, 5 };

	for (size_t i = 0; i < sizeof(mtu) / sizeof(mtu[0]); i++)
		CHECK(dpv__roce_active_mtu(mtu[i]) == ib[i], "MTU %u", mtu[i]);
	CHECK(dpv__roce_mtu_bytes(1) == 256 && dpv__roce_mtu_bytes(5) == 4096 &&
	      dpv__roce_mtu_bytes(0) == 0 && dpv__roce_mtu_bytes(6) == 0);
	/* values of the kernel's formulas, computed apart (python) */
	CHECK_EQ(dpv__roce_udp_sport(0, 0x11, 0x12), 0xC132);
	CHECK_EQ(dpv__roce_udp_sport(0, 0x123456, 0xABCDEF), 0xC3C8);
	CHECK_EQ(dpv__roce_udp_sport(0x12345, 1, 2), 0xE341);
	CHECK_EQ(dpv__roce_udp_sport_qpn(17), 0xDF94);
	CHECK_EQ(dpv__roce_udp_sport_qpn(0x123456), 0xC168);
	for (int i = 0; i < 1000; i++) {
		uint32_t a = rnd() & 0xFFFFFF, b = rnd() & 0xFFFFFF;

		CHECK(dpv__roce_udp_sport(0, a, b) == dpv__roce_udp_sport(0, b, a) &&
		      dpv__roce_udp_sport(0, a, b) >= 0xC000 && dpv__roce_udp_sport_qpn(a) >= 0xC000);
	}
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
	test_hdrs_decode();
	test_bad_frames(false);
	test_bad_frames(true);
	test_gids();
	test_mtu_and_ports();
	if (pcap != NULL) {
		fclose(pcap);
		fclose(expect);
	}
	measure_crc();
	return test_done("test_roce_wire");
}
