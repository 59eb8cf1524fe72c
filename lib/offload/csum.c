/* SPDX-License-Identifier: BSD-3-Clause */
/* Software IPv4/TCP/UDP checksums on framework-owned mbufs. The L4 length is the IP header's,
 * clamped to the frame; IPv6's excludes the extension headers (rte_ipv6_udptcp_cksum_mbuf's
 * does not). */
#include <netinet/in.h>
#include <stddef.h>
#include <string.h>

#include <rte_byteorder.h>
#include <rte_ip.h>
#include <rte_mbuf.h>
#include <rte_tcp.h>
#include <rte_udp.h>

#include "dpv_offload.h"

uint32_t dpv__l4_length(const struct dpv_hdr_info *info, const void *l3, uint32_t frame_len)
{
	uint32_t in_frame = frame_len - info->l2_len - info->l3_len, claimed;

	if (info->l3 == DPV_L3_IPV4)
		claimed = rte_be_to_cpu_16(((const struct rte_ipv4_hdr *)l3)->total_length) -
			  info->l3_len;
	else
		claimed = rte_be_to_cpu_16(((const struct rte_ipv6_hdr *)l3)->payload_len) -
			  (info->l3_len - sizeof(struct rte_ipv6_hdr));
	return claimed < in_frame ? claimed : in_frame;
}

/* A 32-bit word as it lies in memory: 2^16 = 1 (mod 0xffff), so adding such words adds their
 * two 16-bit halves. */
static uint64_t word32(const void *p)
{
	uint32_t w;

	memcpy(&w, p, 4);
	return w;
}

/* The pseudo-header's words added one by one: a dozen adds, a tenth of the vector kernel's
 * set-up for 12 or 40 bytes. */
uint16_t dpv__pseudo_sum(const struct dpv_hdr_info *info, const void *l3, uint32_t l4_len)
{
	const uint8_t *ip = l3;
	uint64_t s;

	if (info->l3 == DPV_L3_IPV4) {
		/* source, destination, then the bytes 0, protocol and the big-endian length */
		s = word32(ip + 12) + word32(ip + 16) + rte_cpu_to_be_16((uint16_t)l4_len) +
		    rte_cpu_to_be_16((uint16_t)info->l4_proto);
	} else {
		/* source, destination, the big-endian 32-bit length, three zeros, next header */
		s = rte_cpu_to_be_32(l4_len) + rte_cpu_to_be_32((uint32_t)info->l4_proto);
		for (int i = 8; i < 40; i += 4)
			s += word32(ip + i);
	}
	while (s >> 16)
		s = (s & 0xffff) + (s >> 16);
	return (uint16_t)s;
}

/* The one's-complement sum of @len bytes from @off of a chain, any segment lengths, each
 * payload byte read once by the vector kernel. (DPDK 22.11's rte_raw_cksum_mbuf truncates a
 * segment's 32-bit sum to 16 bits before byte-swapping it after an odd-length segment, which
 * loses carries: checksums went wrong on the wire.) */
static uint16_t chain_sum(const struct rte_mbuf *m, uint32_t off, uint32_t len)
{
	uint16_t sum = 0;
	uint32_t done = 0;

	while (m != NULL && off >= m->data_len) {
		off -= m->data_len;
		m = m->next;
	}
	for (; m != NULL && len > 0; m = m->next, off = 0) {
		uint32_t n = RTE_MIN(len, (uint32_t)m->data_len - off);

		sum = dpv__cksum_cont(sum, rte_pktmbuf_mtod_offset(m, const void *, off), n, done);
		done += n;
		len -= n;
	}
	return sum;
}

/* Where the TCP or UDP checksum field of the L4 header at @l4 is. */
static unaligned_uint16_t *l4_field(const struct dpv_hdr_info *info, uint8_t *l4)
{
	return (unaligned_uint16_t *)(l4 + (info->l4_proto == IPPROTO_TCP ?
					    offsetof(struct rte_tcp_hdr, cksum) :
					    offsetof(struct rte_udp_hdr, dgram_cksum)));
}

/* The IPv4 header checksum at @l3 (rte_ipv4_cksum's value, in 32-bit adds). */

static void ipv4_hdr_csum(const struct dpv_hdr_info *info, void *l3)
{
	struct rte_ipv4_hdr *ip = l3;
	uint64_t s = 0;

	if (info->l3 != DPV_L3_IPV4)
		return;
	ip->hdr_checksum = 0;
	for (uint16_t i = 0; i + 4 <= info->l3_len; i += 4)
		s += word32((const uint8_t *)l3 + i);
	while (s >> 16)
		s = (s & 0xffff) + (s >> 16);
	ip->hdr_checksum = (uint16_t)~s;
}

/* The TCP/UDP checksum from @raw, the sum of @l4_len bytes of L4 with the field 0. */
static uint16_t l4_csum(const struct dpv_hdr_info *info, const void *l3, uint32_t l4_len,
			uint16_t raw)
{
	uint32_t sum = (uint32_t)dpv__pseudo_sum(info, l3, l4_len) + raw;
	uint16_t res;

	sum = (sum & 0xffff) + (sum >> 16);
	sum = (sum & 0xffff) + (sum >> 16);
	res = (uint16_t)~sum;
	if (res == 0 && info->l4_proto == IPPROTO_UDP)
		res = 0xffff;                  /* RFC 768: 0 means "no checksum" */
	return res;
}

void dpv__sw_csum(struct rte_mbuf *m, const struct dpv_hdr_info *info)
{
	uint32_t l4_off = (uint32_t)info->l2_len + info->l3_len, l4_len;
	void *l3 = rte_pktmbuf_mtod_offset(m, void *, info->l2_len);
	unaligned_uint16_t *field;

	if (info->l3 == DPV_L3_NONE || rte_pktmbuf_data_len(m) < l4_off)
		return;
	ipv4_hdr_csum(info, l3);
	if (!dpv__csum_has_l4(info) || rte_pktmbuf_data_len(m) < l4_off + info->l4_len)
		return;
	field = l4_field(info, rte_pktmbuf_mtod_offset(m, uint8_t *, l4_off));
	l4_len = dpv__l4_length(info, l3, rte_pktmbuf_pkt_len(m));
	*field = 0;
	*field = l4_csum(info, l3, l4_len, chain_sum(m, l4_off, l4_len));
}

void dpv__sw_csum_summed(uint8_t *f, const struct dpv_hdr_info *info, uint32_t l4_len,
			 uint16_t raw)
{
	uint8_t *l3 = f + info->l2_len;
	unaligned_uint16_t *field = l4_field(info, l3 + info->l3_len);
	uint32_t s = raw + (uint16_t)~*field;  /* the field's share taken out: one's complement */

	ipv4_hdr_csum(info, l3);
	s = (s & 0xffff) + (s >> 16);
	*field = l4_csum(info, l3, l4_len, (uint16_t)s);
}

bool dpv__sw_csum_check(const struct rte_mbuf *m, const struct dpv_hdr_info *info)
{
	uint32_t l4_off = (uint32_t)info->l2_len + info->l3_len, l4_len, sum;
	const void *l3 = rte_pktmbuf_mtod_offset(m, const void *, info->l2_len);

	if (info->l3 != DPV_L3_IPV4 || info->fragment || info->l4_len == 0 ||
	    (info->l4_proto != IPPROTO_TCP && info->l4_proto != IPPROTO_UDP) ||
	    rte_pktmbuf_data_len(m) < l4_off + info->l4_len)
		return false;
	if (rte_raw_cksum(l3, info->l3_len) != 0xffff)
		return false;
	if (info->l4_proto == IPPROTO_UDP &&
	    *rte_pktmbuf_mtod_offset(m, const unaligned_uint16_t *,
				     l4_off + offsetof(struct rte_udp_hdr, dgram_cksum)) == 0)
		return true;                   /* IPv4 UDP without a checksum */
	l4_len = dpv__l4_length(info, l3, rte_pktmbuf_pkt_len(m));
	sum = dpv__pseudo_sum(info, l3, l4_len) + chain_sum(m, l4_off, l4_len);
	sum = (sum & 0xffff) + (sum >> 16);
	sum = (sum & 0xffff) + (sum >> 16);
	return sum == 0xffff;
}

bool dpv__rx_csum_ok_parsed(const struct rte_mbuf *m, const struct dpv_hdr_info *parsed)
{
	uint64_t ip = m->ol_flags & RTE_MBUF_F_RX_IP_CKSUM_MASK;
	uint64_t l4 = m->ol_flags & RTE_MBUF_F_RX_L4_CKSUM_MASK;
	const uint8_t *h = rte_pktmbuf_mtod(m, const uint8_t *);
	struct dpv_hdr_info info;

	if (ip == RTE_MBUF_F_RX_IP_CKSUM_BAD || l4 == RTE_MBUF_F_RX_L4_CKSUM_BAD)
		return false;
	if (ip == RTE_MBUF_F_RX_IP_CKSUM_GOOD && l4 == RTE_MBUF_F_RX_L4_CKSUM_GOOD)
		return true;
	if (parsed == NULL) {
		/* neither IPv4 nor a VLAN tag: no checksum to vouch for, no parse */
		if (!dpv__may_be_ipv4(h, rte_pktmbuf_data_len(m)))
			return false;
		dpv__hdr_parse(h, rte_pktmbuf_data_len(m), &info);
		parsed = &info;
	}
	return dpv__sw_csum_check(m, parsed);
}

bool dpv__rx_csum_ok(const struct rte_mbuf *m)
{
	return dpv__rx_csum_ok_parsed(m, NULL);
}
