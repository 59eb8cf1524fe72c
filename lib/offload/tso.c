/* SPDX-License-Identifier: BSD-3-Clause */
/* Software TSO: the header of segment i of a TCP payload cut into mss-byte pieces. What
 * changes per segment (the contract of doc/offload.md): IPv4 total length, ID + i (mod 2^16)
 * and header checksum; IPv6 payload length; TCP sequence + i * mss; FIN and PSH on the last
 * segment only, CWR on the first only. VLAN tags and IP/TCP options are copied unchanged. */
#include <string.h>

#include <rte_byteorder.h>

#include "dpv_offload.h"

#define TCP_FIN 0x01
#define TCP_PSH 0x08
#define TCP_CWR 0x80

static void put16(uint8_t *p, uint16_t v)
{
	p[0] = (uint8_t)(v >> 8);
	p[1] = (uint8_t)v;
}

static uint16_t get16(const uint8_t *p)
{
	return (uint16_t)(p[0] << 8 | p[1]);
}

static uint32_t get32(const uint8_t *p)
{
	return (uint32_t)p[0] << 24 | (uint32_t)p[1] << 16 | (uint32_t)p[2] << 8 | p[3];
}

static void put32(uint8_t *p, uint32_t v)
{
	put16(p, (uint16_t)(v >> 16));
	put16(p + 2, (uint16_t)v);
}

uint32_t dpv__tso_segments(uint32_t payload, uint32_t mss)
{
	return payload == 0 ? 1 : (payload + mss - 1) / mss;
}

void dpv__tso_header(uint8_t *h, const struct dpv_hdr_info *info, uint32_t i, uint32_t nseg,
		    uint32_t seg_payload, uint32_t mss)
{
	uint8_t *l3 = h + info->l2_len, *tcp = l3 + info->l3_len;
	uint8_t flags = tcp[13];

	if (info->l3 == DPV_L3_IPV4) {
		put16(l3 + 2, (uint16_t)(info->l3_len + info->l4_len + seg_payload));
		put16(l3 + 4, (uint16_t)(get16(l3 + 4) + i));
		put16(l3 + 10, 0);
		put16(l3 + 10, dpv__ipv4_hdr_cksum(l3, info->l3_len));
	} else {
		put16(l3 + 4, (uint16_t)(info->l3_len - 40 + info->l4_len + seg_payload));
	}
	put32(tcp + 4, get32(tcp + 4) + i * mss);
	if (i != nseg - 1)
		flags &= (uint8_t)~(TCP_FIN | TCP_PSH);
	if (i != 0)
		flags &= (uint8_t)~TCP_CWR;
	tcp[13] = flags;
	put16(tcp + 16, 0);
}

/* Words as they lie in memory, 32 bits at a time (the one's complement sum does not depend on
 * the byte order: RFC 1071 1.2.B), the checksum field (bytes 10-11) left out; the sum folded
 * and turned into host order, the same value as adding the big-endian 16-bit words. */
uint16_t dpv__ipv4_hdr_cksum(const uint8_t *ip, uint16_t len)
{
	uint64_t sum = 0;
	uint32_t w4;
	uint16_t w2, k = 12;

	if (len < 12) {
		for (k = 0; k + 1 < len; k += 2)
			if (k != 10)
				sum += get16(ip + k);
		while (sum >> 16)
			sum = (sum & 0xffff) + (sum >> 16);
		return (uint16_t)~sum;
	}
	for (int i = 0; i < 8; i += 4) {
		memcpy(&w4, ip + i, 4);
		sum += w4;
	}
	memcpy(&w2, ip + 8, 2);
	sum += w2;
	for (; k + 4 <= len; k += 4) {
		memcpy(&w4, ip + k, 4);
		sum += w4;
	}
	for (; k + 1 < len; k += 2) {
		memcpy(&w2, ip + k, 2);
		sum += w2;
	}
	while (sum >> 16)
		sum = (sum & 0xffff) + (sum >> 16);
	return (uint16_t)~rte_be_to_cpu_16((uint16_t)sum);
}

/* A 16-bit word as it lies in memory: the raw sums add words in memory order. */
static uint32_t word(const uint8_t *p)
{
	uint16_t w;

	memcpy(&w, p, 2);
	return w;
}

uint16_t dpv__tso_csum_base(const uint8_t *hdr, const struct dpv_hdr_info *info)
{
	const uint8_t *l3 = hdr + info->l2_len, *tcp = l3 + info->l3_len;
	uint8_t h[60];
	uint32_t s;

	memcpy(h, tcp, info->l4_len);
	memset(h + 4, 0, 4);               /* sequence: + i * mss per segment */
	memset(h + 12, 0, 2);              /* data offset and flags: FIN/PSH/CWR per segment */
	memset(h + 16, 0, 2);              /* the checksum itself */
	s = (uint32_t)dpv__pseudo_sum(info, l3, 0) + dpv__cksum(h, info->l4_len);
	return (uint16_t)((s & 0xffff) + (s >> 16));
}

void dpv__tso_csum(uint8_t *h, const struct dpv_hdr_info *info, uint16_t base,
		   uint32_t seg_payload, uint16_t payload_sum)
{
	uint8_t *tcp = h + info->l2_len + info->l3_len, len[2];
	uint64_t s = base;
	uint16_t res;

	/* the pseudo-header's length sits at an even offset in both IPv4 and IPv6, and the
	 * payload after a TCP header of a whole number of 32-bit words */
	put16(len, (uint16_t)(info->l4_len + seg_payload));
	s += word(len) + word(tcp + 4) + word(tcp + 6) + word(tcp + 12) + payload_sum;
	while (s >> 16)
		s = (s & 0xffff) + (s >> 16);
	res = (uint16_t)~s;
	memcpy(tcp + 16, &res, 2);
}
