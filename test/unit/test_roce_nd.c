/* SPDX-License-Identifier: BSD-3-Clause */
/* The ARP and IPv6 ND frame codec (lib/roce/roce_nd.c): frames built byte for byte as scapy
 * builds them (the vectors below come from scapy 2.5, checksums included), parsed back field
 * by field; the ICMPv6 checksum against a reference written apart over random messages; and
 * every malformed or truncated frame refused with the documented error, in buffers of exactly
 * its size (a sanitized build sees any read past the end). */
#include <arpa/inet.h>
#include <stdint.h>

#include "dpv_test.h"
#include "roce_nd.h"

static const uint8_t scapy_ns[86] = {
	0x33, 0x33, 0xff, 0x00, 0x00, 0x02, 0x02, 0x00, 0x00, 0x00, 0x00, 0x01, 0x86, 0xdd, 0x60,
	0x00, 0x00, 0x00, 0x00, 0x20, 0x3a, 0xff, 0xfd, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00,
	0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x01, 0xff, 0x02, 0x00, 0x00, 0x00, 0x00, 0x00,
	0x00, 0x00, 0x00, 0x00, 0x01, 0xff, 0x00, 0x00, 0x02, 0x87, 0x00, 0x7d, 0x97, 0x00, 0x00,
	0x00, 0x00, 0xfd, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00,
	0x00, 0x00, 0x02, 0x01, 0x01, 0x02, 0x00, 0x00, 0x00, 0x00, 0x01,
};
static const uint8_t scapy_na[86] = {
	0x02, 0x00, 0x00, 0x00, 0x00, 0x01, 0x02, 0x00, 0x00, 0x00, 0x00, 0x02, 0x86, 0xdd, 0x60,
	0x00, 0x00, 0x00, 0x00, 0x20, 0x3a, 0xff, 0xfd, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00,
	0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x02, 0xfd, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00,
	0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x01, 0x88, 0x00, 0x1c, 0x9a, 0x60, 0x00,
	0x00, 0x00, 0xfd, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00,
	0x00, 0x00, 0x02, 0x02, 0x01, 0x02, 0x00, 0x00, 0x00, 0x00, 0x02,
};
static const uint8_t scapy_arp_req[60] = {
	0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x02, 0x00, 0x00, 0x00, 0x00, 0x01, 0x08, 0x06, 0x00,
	0x01, 0x08, 0x00, 0x06, 0x04, 0x00, 0x01, 0x02, 0x00, 0x00, 0x00, 0x00, 0x01, 0x0a, 0x00,
	0x00, 0x01, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x0a, 0x00, 0x00, 0x02,
};
static const uint8_t scapy_arp_rep[60] = {
	0x02, 0x00, 0x00, 0x00, 0x00, 0x01, 0x02, 0x00, 0x00, 0x00, 0x00, 0x02, 0x08, 0x06, 0x00,
	0x01, 0x08, 0x00, 0x06, 0x04, 0x00, 0x02, 0x02, 0x00, 0x00, 0x00, 0x00, 0x02, 0x0a, 0x00,
	0x00, 0x02, 0x02, 0x00, 0x00, 0x00, 0x00, 0x01, 0x0a, 0x00, 0x00, 0x01,
};

static const uint8_t mac1[6] = { 2, 0, 0, 0, 0, 1 }, mac2[6] = { 2, 0, 0, 0, 0, 2 };

/* Parse @len bytes of @f from a heap buffer of exactly that size. */
static int parse_exact(const uint8_t *f, size_t len, struct dpv_nd_msg *m)
{
	uint8_t *copy = malloc(len ? len : 1);
	int rc;

	memcpy(copy, f, len);
	rc = dpv__nd_parse(copy, len, m);
	free(copy);
	return rc;
}

static void ip6(uint8_t a[16], const char *text)
{
	inet_pton(AF_INET6, text, a);
}

/* Reference: RFC 1071 over one buffer holding the pseudo-header and the message. */
static uint16_t ref_cksum(const uint8_t *src, const uint8_t *dst, const uint8_t *msg, size_t len)
{
	uint8_t *b = calloc(1, 40 + len + 1);
	uint64_t sum = 0;

	memcpy(b, src, 16);
	memcpy(b + 16, dst, 16);
	b[32] = (uint8_t)(len >> 24);
	b[33] = (uint8_t)(len >> 16);
	b[34] = (uint8_t)(len >> 8);
	b[35] = (uint8_t)len;
	b[39] = 58;
	memcpy(b + 40, msg, len);
	for (size_t i = 0; i < 40 + len; i += 2)
		sum += (uint64_t)b[i] * 256 + b[i + 1];
	free(b);
	while (sum > 0xFFFF)
		sum = (sum & 0xFFFF) + (sum >> 16);
	return (uint16_t)(~sum & 0xFFFF);
}

static void check_build(void)
{
	struct dpv_nd_msg m = { .type = DPV_ND_NS, .lladdr = true };
	uint8_t buf[DPV_ND_FRAME_MAX];

	memcpy(m.eth_src, mac1, 6);
	memcpy(m.sender_mac, mac1, 6);
	ip6(m.sender_ip, "fd00::1");
	ip6(m.target_ip, "fd00::2");
	dpv__nd_solicited_node(m.target_ip, m.ip_dst, m.eth_dst);
	CHECK_EQ(dpv__nd_build(buf, sizeof(buf), &m), 86);
	CHECK(memcmp(buf, scapy_ns, 86) == 0, "NS differs from scapy's");

	m = (struct dpv_nd_msg){ .type = DPV_ND_NA, .lladdr = true, .solicited = true,
				 .override = true };
	memcpy(m.eth_dst, mac1, 6);
	memcpy(m.eth_src, mac2, 6);
	memcpy(m.sender_mac, mac2, 6);
	ip6(m.sender_ip, "fd00::2");
	ip6(m.ip_dst, "fd00::1");
	ip6(m.target_ip, "fd00::2");
	CHECK_EQ(dpv__nd_build(buf, sizeof(buf), &m), 86);
	CHECK(memcmp(buf, scapy_na, 86) == 0, "NA differs from scapy's");

	m = (struct dpv_nd_msg){ .type = DPV_ND_ARP_REQUEST };
	memset(m.eth_dst, 0xff, 6);
	memcpy(m.eth_src, mac1, 6);
	memcpy(m.sender_mac, mac1, 6);
	inet_pton(AF_INET, "10.0.0.1", m.sender_ip);
	inet_pton(AF_INET, "10.0.0.2", m.target_ip);
	CHECK_EQ(dpv__nd_build(buf, sizeof(buf), &m), 60);
	CHECK(memcmp(buf, scapy_arp_req, 60) == 0, "ARP request differs from scapy's");

	m.type = DPV_ND_ARP_REPLY;
	memcpy(m.eth_dst, mac1, 6);
	memcpy(m.eth_src, mac2, 6);
	memcpy(m.sender_mac, mac2, 6);
	memcpy(m.target_mac, mac1, 6);
	inet_pton(AF_INET, "10.0.0.2", m.sender_ip);
	inet_pton(AF_INET, "10.0.0.1", m.target_ip);
	CHECK_EQ(dpv__nd_build(buf, sizeof(buf), &m), 60);
	CHECK(memcmp(buf, scapy_arp_rep, 60) == 0, "ARP reply differs from scapy's");

	CHECK_EQ(dpv__nd_build(buf, DPV_ND_FRAME_MAX - 1, &m), -ENOSPC);
	m.type = (enum dpv_nd_type)7;
	CHECK_EQ(dpv__nd_build(buf, sizeof(buf), &m), -EINVAL);
}

static void check_parse(void)
{
	struct dpv_nd_msg m;
	uint8_t a[16];

	CHECK_EQ(parse_exact(scapy_ns, 86, &m), 0);
	CHECK_EQ(m.type, DPV_ND_NS);
	ip6(a, "fd00::1");
	CHECK(memcmp(m.sender_ip, a, 16) == 0);
	ip6(a, "fd00::2");
	CHECK(memcmp(m.target_ip, a, 16) == 0);
	ip6(a, "ff02::1:ff00:2");
	CHECK(memcmp(m.ip_dst, a, 16) == 0);
	CHECK(m.lladdr && memcmp(m.sender_mac, mac1, 6) == 0, "NS source link-layer option");
	CHECK(memcmp(m.eth_src, mac1, 6) == 0);

	CHECK_EQ(parse_exact(scapy_na, 86, &m), 0);
	CHECK_EQ(m.type, DPV_ND_NA);
	CHECK(m.solicited && m.override && !m.router, "NA flags");
	ip6(a, "fd00::2");
	CHECK(memcmp(m.target_ip, a, 16) == 0 && memcmp(m.sender_ip, a, 16) == 0);
	CHECK(m.lladdr && memcmp(m.sender_mac, mac2, 6) == 0, "NA target link-layer option");

	CHECK_EQ(parse_exact(scapy_arp_req, 60, &m), 0);
	CHECK_EQ(m.type, DPV_ND_ARP_REQUEST);
	CHECK(memcmp(m.sender_mac, mac1, 6) == 0 && memcmp(m.sender_ip, "\x0a\0\0\x01", 4) == 0 &&
	      memcmp(m.target_ip, "\x0a\0\0\x02", 4) == 0);
	CHECK_EQ(parse_exact(scapy_arp_rep, 42, &m), 0);      /* without Ethernet padding */
	CHECK_EQ(m.type, DPV_ND_ARP_REPLY);
	CHECK(memcmp(m.sender_mac, mac2, 6) == 0 && memcmp(m.target_mac, mac1, 6) == 0 &&
	      memcmp(m.sender_ip, "\x0a\0\0\x02", 4) == 0);
}

/* Every length of @f from 0 to @len - 1. */
static void check_truncations(const uint8_t *f, size_t len, size_t whole, int below_l2,
			      const char *what)
{
	struct dpv_nd_msg m;

	for (size_t n = 0; n < len; n++) {
		int rc = parse_exact(f, n, &m), want = n < 14 ? -ENOMSG :
			 n < (size_t)below_l2 ? -ENOMSG : n < whole ? -EBADMSG : 0;

		CHECK(rc == want, "%s truncated to %zu: %d, expected %d", what, n, rc, want);
	}
}

/* @f (an NS or NA) with the edit @fn made and its checksum fixed: @want. */
static void check_edit(const uint8_t *f, void (*fn)(uint8_t *f), int want, const char *what)
{
	uint8_t c[86];
	struct dpv_nd_msg m;

	memcpy(c, f, 86);
	fn(c);
	c[56] = c[57] = 0;
	uint16_t s = dpv__icmp6_cksum(c + 22, c + 38, c + 54, (size_t)(c[18] << 8 | c[19]) <= 32 ?
				      (size_t)(c[18] << 8 | c[19]) : 32);
	c[56] = (uint8_t)(s >> 8);
	c[57] = (uint8_t)s;
	CHECK(parse_exact(c, 86, &m) == want, "%s: %d", what, parse_exact(c, 86, &m));
}

static void hop64(uint8_t *f) { f[21] = 64; }
static void code1(uint8_t *f) { f[55] = 1; }
static void optlen0(uint8_t *f) { f[79] = 0; }
static void optlen2(uint8_t *f) { f[79] = 2; }
static void mcast_target(uint8_t *f) { f[62] = 0xff; }
static void dad_with_sll(uint8_t *f) { memset(f + 22, 0, 16); }
static void dad_unicast(uint8_t *f) { memset(f + 22, 0, 16); f[78] = 14; /* nonce option */
				      memcpy(f + 38, f + 62, 16); }
static void dad_ok(uint8_t *f) { memset(f + 22, 0, 16); f[78] = 14; }
static void solicited_to_mcast(uint8_t *f) { f[38] = 0xff; f[39] = 0x02; }
static void unsolicited_to_mcast(uint8_t *f) { f[38] = 0xff; f[39] = 0x02; f[58] = 0x20; }
static void plen_long(uint8_t *f) { f[19] = 0x21; }
static void plen_short(uint8_t *f) { f[19] = 23; }
static void no_option(uint8_t *f) { f[19] = 24; }
static void router_solicit(uint8_t *f) { f[54] = 133; }
static void redirect(uint8_t *f) { f[54] = 137; }
static void echo(uint8_t *f) { f[54] = 128; }
static void udp(uint8_t *f) { f[20] = 17; }
static void version4(uint8_t *f) { f[14] = 0x40; }

static void check_invalid(void)
{
	struct dpv_nd_msg m;
	uint8_t c[86];

	check_truncations(scapy_ns, 86, 86, 55, "NS");
	check_truncations(scapy_na, 86, 86, 55, "NA");
	check_truncations(scapy_arp_req, 60, 42, 0, "ARP request");
	/* every byte the checksum covers, changed: refused (the Ethernet header is not) */
	for (int i = 22; i < 86; i++) {
		memcpy(c, scapy_ns, 86);
		c[i] ^= 0x10;
		if (i == 54)
			continue;                 /* the type: another message, tested below */
		CHECK(parse_exact(c, 86, &m) == -EBADMSG, "NS byte %d changed", i);
	}
	check_edit(scapy_ns, hop64, -EBADMSG, "hop limit 64");
	check_edit(scapy_ns, code1, -EBADMSG, "code 1");
	check_edit(scapy_ns, optlen0, -EBADMSG, "option of length 0");
	check_edit(scapy_ns, optlen2, -EBADMSG, "option past the end");
	check_edit(scapy_ns, mcast_target, -EBADMSG, "multicast target");
	check_edit(scapy_ns, dad_with_sll, -EBADMSG, "DAD NS with a source link-layer option");
	check_edit(scapy_ns, dad_unicast, -EBADMSG, "DAD NS to a unicast address");
	check_edit(scapy_ns, dad_ok, 0, "DAD NS");
	check_edit(scapy_na, solicited_to_mcast, -EBADMSG, "solicited NA to a multicast address");
	check_edit(scapy_na, unsolicited_to_mcast, 0, "unsolicited NA to all nodes");
	check_edit(scapy_ns, plen_long, -EBADMSG, "payload length beyond the frame");
	check_edit(scapy_ns, plen_short, -EBADMSG, "payload length below an NS");
	check_edit(scapy_ns, no_option, 0, "NS without options");
	check_edit(scapy_ns, router_solicit, -EOPNOTSUPP, "router solicitation");
	check_edit(scapy_ns, redirect, -EOPNOTSUPP, "redirect");
	check_edit(scapy_ns, echo, -ENOMSG, "echo request");
	check_edit(scapy_ns, udp, -ENOMSG, "UDP");
	check_edit(scapy_ns, version4, -ENOMSG, "IP version 4 under the IPv6 type");

	memcpy(c, scapy_arp_req, 60);
	c[21] = 3;                                /* RARP request */
	CHECK_EQ(parse_exact(c, 60, &m), -EOPNOTSUPP);
	memcpy(c, scapy_arp_req, 60);
	c[15] = 6;                                /* IEEE 802 hardware */
	CHECK_EQ(parse_exact(c, 60, &m), -EOPNOTSUPP);
	memcpy(c, scapy_arp_req, 60);
	c[19] = 16;                               /* protocol length */
	CHECK_EQ(parse_exact(c, 60, &m), -EOPNOTSUPP);
	memcpy(c, scapy_arp_req, 60);
	c[12] = 0x81;                             /* a VLAN tag: not ours */
	c[13] = 0x00;
	CHECK_EQ(parse_exact(c, 60, &m), -ENOMSG);
	c[12] = 0x08;                             /* IPv4 */
	CHECK_EQ(parse_exact(c, 60, &m), -ENOMSG);
}

static void check_cksum(void)
{
	uint8_t src[16], dst[16], msg[301];
	unsigned int seed = 1;

	for (int t = 0; t < 2000; t++) {
		size_t len = (size_t)(rand_r(&seed) % 300) + 1;

		for (int i = 0; i < 16; i++) {
			src[i] = (uint8_t)rand_r(&seed);
			dst[i] = (uint8_t)rand_r(&seed);
		}
		for (size_t i = 0; i < len; i++)
			msg[i] = t % 7 == 0 ? 0xff : (uint8_t)rand_r(&seed);
		uint16_t got = dpv__icmp6_cksum(src, dst, msg, len), want = ref_cksum(src, dst, msg, len);

		CHECK(got == want || (got == 0 && want == 0xffff) || (got == 0xffff && want == 0),
		      "length %zu: %04x, reference %04x", len, got, want);
	}
	/* the scapy NS: over its message the sum is 0 */
	CHECK_EQ(dpv__icmp6_cksum(scapy_ns + 22, scapy_ns + 38, scapy_ns + 54, 32), 0);
	CHECK_EQ(ref_cksum(scapy_ns + 22, scapy_ns + 38, scapy_ns + 54, 32), 0);
}

static void check_random(void)
{
	unsigned int seed = 7;
	uint8_t f[200];
	struct dpv_nd_msg m;
	int ok = 0;

	/* random frames that look like ND or ARP: no crash, no read outside, only documented
	 * results */
	for (int t = 0; t < 200000; t++) {
		size_t len = (size_t)(rand_r(&seed) % 120);
		int rc;

		memcpy(f, t & 1 ? scapy_ns : scapy_arp_req, t & 1 ? 86 : 60);
		for (int k = rand_r(&seed) % 4; k >= 0; k--)
			f[rand_r(&seed) % 120] = (uint8_t)rand_r(&seed);
		rc = parse_exact(f, len, &m);
		CHECK(rc == 0 || rc == -ENOMSG || rc == -EBADMSG || rc == -EOPNOTSUPP, "rc %d", rc);
		ok += rc == 0;
	}
	CHECK(ok > 0, "some random frames parsed");
}

int main(void)
{
	uint8_t ip[16], group[16], mac[6], want[16];

	check_build();
	check_parse();
	check_invalid();
	check_cksum();
	check_random();
	ip6(ip, "fd00::12:3456");
	dpv__nd_solicited_node(ip, group, mac);
	ip6(want, "ff02::1:ff12:3456");
	CHECK(memcmp(group, want, 16) == 0, "solicited-node group");
	CHECK(memcmp(mac, "\x33\x33\xff\x12\x34\x56", 6) == 0, "solicited-node MAC");
	return test_done("roce_nd");
}
