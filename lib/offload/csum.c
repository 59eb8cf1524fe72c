/* Software IPv4/TCP/UDP checksums on framework-owned mbufs (never application memory). The L4
 * length comes from the IP header, clamped to the bytes the frame has, and an IPv6 upper-layer
 * length excludes the extension headers (DPDK's rte_ipv6_udptcp_cksum_mbuf does not). */
#include <netinet/in.h>
#include <stddef.h>
#include <string.h>

#include <rte_byteorder.h>
#include <rte_ip.h>
#include <rte_mbuf.h>
#include <rte_tcp.h>
#include <rte_udp.h>

#include "dpv_offload.h"

static uint32_t l4_length(const struct rte_mbuf *m, const struct dpv_hdr_info *info,
			  const void *l3, uint32_t l4_off)
{
	uint32_t in_frame = rte_pktmbuf_pkt_len(m) - l4_off, claimed;

	if (info->l3 == DPV_L3_IPV4)
		claimed = rte_be_to_cpu_16(((const struct rte_ipv4_hdr *)l3)->total_length) -
			  info->l3_len;
	else
		claimed = rte_be_to_cpu_16(((const struct rte_ipv6_hdr *)l3)->payload_len) -
			  (info->l3_len - sizeof(struct rte_ipv6_hdr));
	return claimed < in_frame ? claimed : in_frame;
}

uint16_t dpv__pseudo_sum(const struct dpv_hdr_info *info, const void *l3, uint32_t l4_len)
{
	if (info->l3 == DPV_L3_IPV4) {
		const struct rte_ipv4_hdr *ip = l3;
		struct { rte_be32_t src, dst; uint8_t zero, proto; rte_be16_t len; } __rte_packed
			ph = { ip->src_addr, ip->dst_addr, 0, info->l4_proto,
			       rte_cpu_to_be_16((uint16_t)l4_len) };

		return dpv__cksum(&ph, sizeof(ph));
	} else {
		const struct rte_ipv6_hdr *ip = l3;
		struct { uint8_t src[16], dst[16]; rte_be32_t len; uint8_t zero[3], next; } __rte_packed
			ph = { .len = rte_cpu_to_be_32(l4_len), .next = info->l4_proto };

		memcpy(ph.src, ip->src_addr, 16);
		memcpy(ph.dst, ip->dst_addr, 16);
		return dpv__cksum(&ph, sizeof(ph));
	}
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

void dpv__sw_csum(struct rte_mbuf *m, const struct dpv_hdr_info *info)
{
	uint32_t l4_off = (uint32_t)info->l2_len + info->l3_len, l4_len, sum;
	void *l3 = rte_pktmbuf_mtod_offset(m, void *, info->l2_len);
	unaligned_uint16_t *field = NULL;
	uint16_t raw, res;

	if (info->l3 == DPV_L3_NONE || rte_pktmbuf_data_len(m) < l4_off)
		return;
	if (info->l3 == DPV_L3_IPV4) {
		struct rte_ipv4_hdr *ip = l3;

		ip->hdr_checksum = 0;
		ip->hdr_checksum = rte_ipv4_cksum(ip);
	}
	if (info->fragment || info->l4_len == 0 || rte_pktmbuf_data_len(m) < l4_off + info->l4_len)
		return;
	if (info->l4_proto == IPPROTO_TCP)
		field = rte_pktmbuf_mtod_offset(m, unaligned_uint16_t *,
						l4_off + offsetof(struct rte_tcp_hdr, cksum));
	else if (info->l4_proto == IPPROTO_UDP)
		field = rte_pktmbuf_mtod_offset(m, unaligned_uint16_t *,
						l4_off + offsetof(struct rte_udp_hdr, dgram_cksum));
	else
		return;
	l4_len = l4_length(m, info, l3, l4_off);
	*field = 0;
	raw = chain_sum(m, l4_off, l4_len);
	sum = dpv__pseudo_sum(info, l3, l4_len) + raw;
	sum = (sum & 0xffff) + (sum >> 16);
	sum = (sum & 0xffff) + (sum >> 16);
	res = (uint16_t)~sum;
	if (res == 0 && info->l4_proto == IPPROTO_UDP)
		res = 0xffff;                  /* RFC 768: 0 means "no checksum" */
	*field = res;
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
	l4_len = l4_length(m, info, l3, l4_off);
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
