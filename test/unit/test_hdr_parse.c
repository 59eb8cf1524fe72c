/* SPDX-License-Identifier: BSD-3-Clause */
/* The header parser on hand-built frames: VLAN and QinQ, IPv4 options, IPv6 extension
 * headers, TCP options, fragments, short and foreign frames; and the TSO header rule. */
#include <netinet/in.h>

#include "dpv_offload.h"
#include "dpv_test.h"

static size_t eth(uint8_t *f, int vlans, uint16_t type)
{
	size_t off = 12;

	memset(f, 0, 12);
	for (int i = 0; i < vlans; i++) {
		f[off] = i == 0 && vlans == 2 ? 0x88 : 0x81;
		f[off + 1] = i == 0 && vlans == 2 ? 0xa8 : 0x00;
		f[off + 2] = 0;
		f[off + 3] = 5;
		off += 4;
	}
	f[off] = type >> 8;
	f[off + 1] = type & 0xff;
	return off + 2;
}

static size_t ipv4(uint8_t *p, int opt_words, uint8_t proto, uint16_t frag)
{
	memset(p, 0, 20 + 4 * opt_words);
	p[0] = 0x45 + opt_words;
	p[6] = frag >> 8;
	p[7] = frag & 0xff;
	p[9] = proto;
	return 20 + 4 * opt_words;
}

static size_t tcp(uint8_t *p, int opt_words)
{
	memset(p, 0, 20 + 4 * opt_words);
	p[12] = (uint8_t)((5 + opt_words) << 4);
	return 20 + 4 * opt_words;
}

int main(void)
{
	uint8_t f[256];
	struct dpv_hdr_info i;
	size_t n;

	n = eth(f, 0, 0x0800);
	n += ipv4(f + n, 0, IPPROTO_UDP, 0);
	n += 8;
	dpv__hdr_parse(f, n, &i);
	CHECK(i.l2_len == 14 && i.l3 == DPV_L3_IPV4 && i.l3_len == 20 && i.l4_proto == IPPROTO_UDP &&
	      i.l4_len == 8 && i.vlans == 0 && !i.fragment);

	n = eth(f, 2, 0x0800);
	n += ipv4(f + n, 2, IPPROTO_TCP, 0);
	n += tcp(f + n, 3);
	dpv__hdr_parse(f, n, &i);
	CHECK(i.vlans == 2 && i.l2_len == 22 && i.l3_len == 28 && i.l4_len == 32, "QinQ/options");
	CHECK_EQ(dpv__tso_hdr_check(f, n, &i), 0);
	CHECK_EQ(dpv__tso_hdr_check(f, n + 1, &i), -EINVAL);         /* a byte after TCP */
	CHECK_EQ(dpv__tso_hdr_check(f, n - 1, &i), -EINVAL);         /* TCP options cut */

	n = eth(f, 1, 0x86dd);
	memset(f + n, 0, 40);
	f[n] = 0x60;
	f[n + 6] = 0;                       /* hop-by-hop */
	memset(f + n + 40, 0, 8);
	f[n + 40] = 60;                     /* then destination options */
	memset(f + n + 48, 0, 16);
	f[n + 48] = IPPROTO_TCP;
	f[n + 49] = 1;                      /* 16 bytes */
	n += 64;
	n += tcp(f + n, 0);
	dpv__hdr_parse(f, n, &i);
	CHECK(i.l3 == DPV_L3_IPV6 && i.l2_len == 18 && i.l3_len == 64 && i.l4_proto == IPPROTO_TCP &&
	      i.l4_len == 20, "IPv6 ext: l3 %u l4 %u", i.l3_len, i.l4_len);
	CHECK_EQ(dpv__tso_hdr_check(f, n, &i), 0);

	n = eth(f, 0, 0x0800);
	n += ipv4(f + n, 0, IPPROTO_TCP, 0x2000);   /* MF: a fragment */
	n += tcp(f + n, 0);
	dpv__hdr_parse(f, n, &i);
	CHECK(i.fragment && i.l4_len == 0);
	CHECK_EQ(dpv__tso_hdr_check(f, n, &i), -EINVAL);

	n = eth(f, 0, 0x0806);              /* ARP: no L3 */
	dpv__hdr_parse(f, 42, &i);
	CHECK(i.l2_len == 14 && i.l3 == DPV_L3_NONE && i.ethertype == 0x0806);
	CHECK_EQ(dpv__tso_hdr_check(f, 42, &i), -EINVAL);
	dpv__hdr_parse(f, 10, &i);           /* shorter than Ethernet */
	CHECK(i.l2_len == 0 && i.l3 == DPV_L3_NONE);
	n = eth(f, 0, 0x0800);
	n += ipv4(f + n, 0, IPPROTO_UDP, 0);
	dpv__hdr_parse(f, n, &i);            /* UDP header missing */
	CHECK(i.l3 == DPV_L3_IPV4 && i.l4_len == 0);
	n = eth(f, 0, 0x0800);
	n += ipv4(f + n, 0, IPPROTO_UDP, 0);
	CHECK_EQ(dpv__tso_hdr_check(f, n + 8, &i), -EINVAL);        /* UDP is not TSO */
	return test_done("hdr_parse");
}
