/* SPDX-License-Identifier: BSD-3-Clause */
/* ARP and IPv6 Neighbor Solicitation / Advertisement frames, built and taken apart over byte
 * buffers (roce_nd.h). Received frames are untrusted: every offset is checked against the
 * frame's length before it is read. */
#include <errno.h>
#include <string.h>

#include "dpv_offload.h"
#include "roce_nd.h"

#define ARP_LEN		28
#define ICMP6_PROTO	58
#define ND_LEN		24	/* ICMPv6 header, flags/reserved, target */
#define ND_OPT_SLL	1
#define ND_OPT_TLL	2
#define ICMP6_NS	135
#define ICMP6_NA	136
#define NA_ROUTER	0x80
#define NA_SOLICITED	0x40
#define NA_OVERRIDE	0x20

static uint16_t rd16(const uint8_t *p)
{
	return (uint16_t)(p[0] << 8 | p[1]);
}

static void wr16(uint8_t *p, uint16_t v)
{
	p[0] = (uint8_t)(v >> 8);
	p[1] = (uint8_t)v;
}

static uint32_t sum16(uint32_t sum, const uint8_t *p, size_t len)
{
	for (size_t i = 0; i + 1 < len; i += 2)
		sum += rd16(p + i);
	if (len & 1)
		sum += (uint32_t)p[len - 1] << 8;
	return sum;
}

uint16_t dpv__icmp6_cksum(const uint8_t src[16], const uint8_t dst[16], const uint8_t *icmp,
			  size_t len)
{
	uint32_t sum = sum16(0, src, 16);

	sum = sum16(sum, dst, 16);
	sum += (uint32_t)(len >> 16) + (uint32_t)(len & 0xFFFF) + ICMP6_PROTO;
	sum = sum16(sum, icmp, len);
	while (sum >> 16)
		sum = (sum & 0xFFFF) + (sum >> 16);
	return (uint16_t)~sum;
}

void dpv__nd_solicited_node(const uint8_t ip[16], uint8_t group[16], uint8_t mac[6])
{
	static const uint8_t prefix[13] = { 0xFF, 0x02, [11] = 0x01, [12] = 0xFF };

	memcpy(group, prefix, sizeof(prefix));
	memcpy(group + 13, ip + 13, 3);
	mac[0] = mac[1] = 0x33;
	memcpy(mac + 2, group + 12, 4);
}

/* ---- parsing ---- */

static int parse_arp(const uint8_t *a, size_t len, struct dpv_nd_msg *m)
{
	uint16_t op;

	if (len < ARP_LEN)
		return -EBADMSG;
	if (rd16(a) != 1 || rd16(a + 2) != DPV_ETH_P_IPV4 || a[4] != 6 || a[5] != 4)
		return -EOPNOTSUPP;               /* not Ethernet/IPv4 ARP */
	op = rd16(a + 6);
	if (op != 1 && op != 2)
		return -EOPNOTSUPP;               /* RARP, InARP... */
	m->type = op == 1 ? DPV_ND_ARP_REQUEST : DPV_ND_ARP_REPLY;
	memcpy(m->sender_mac, a + 8, 6);
	memcpy(m->sender_ip, a + 14, 4);
	memcpy(m->target_mac, a + 18, 6);
	memcpy(m->target_ip, a + 24, 4);
	return 0;
}

static bool all_zero(const uint8_t *p, size_t n)
{
	uint8_t acc = 0;

	for (size_t i = 0; i < n; i++)
		acc |= p[i];
	return acc == 0;
}

/* The options after an NS/NA: each a type, a length in 8-byte units (never 0) and data
 * within @len; the link-layer address option @want is recorded. */
static int parse_options(const uint8_t *o, size_t len, uint8_t want, struct dpv_nd_msg *m)
{
	size_t off = 0;

	while (off < len) {
		size_t olen;

		if (len - off < 2 || o[off + 1] == 0)
			return -EBADMSG;
		olen = (size_t)o[off + 1] * 8;
		if (olen > len - off)
			return -EBADMSG;
		if (o[off] == want) {
			memcpy(m->sender_mac, o + off + 2, 6);
			m->lladdr = true;
		}
		off += olen;
	}
	return 0;
}

/* RFC 4861 7.1.1 (NS) and 7.1.2 (NA) on the IPv6 packet @ip of @len bytes (>= 55). */
static int parse_nd(const uint8_t *ip, size_t len, struct dpv_nd_msg *m)
{
	size_t plen = rd16(ip + 4);
	const uint8_t *icmp = ip + DPV_IPV6_HLEN;
	bool ns = icmp[0] == ICMP6_NS;
	int rc;

	if (plen > len - DPV_IPV6_HLEN || plen < ND_LEN || ip[7] != 255 || icmp[1] != 0 ||
	    dpv__icmp6_cksum(ip + 8, ip + 24, icmp, plen) != 0)
		return -EBADMSG;
	m->type = ns ? DPV_ND_NS : DPV_ND_NA;
	memcpy(m->sender_ip, ip + 8, 16);
	memcpy(m->ip_dst, ip + 24, 16);
	memcpy(m->target_ip, icmp + 8, 16);
	m->router = !ns && (icmp[4] & NA_ROUTER);
	m->solicited = !ns && (icmp[4] & NA_SOLICITED);
	m->override = !ns && (icmp[4] & NA_OVERRIDE);
	if (m->target_ip[0] == 0xFF)
		return -EBADMSG;                  /* a multicast target */
	rc = parse_options(icmp + ND_LEN, plen - ND_LEN, ns ? ND_OPT_SLL : ND_OPT_TLL, m);
	if (rc != 0)
		return rc;
	if (ns && all_zero(m->sender_ip, 16)) {       /* duplicate address detection */
		static const uint8_t sn[13] = { 0xFF, 0x02, [11] = 0x01, [12] = 0xFF };

		if (memcmp(m->ip_dst, sn, sizeof(sn)) != 0 || m->lladdr)
			return -EBADMSG;
	}
	if (!ns && m->ip_dst[0] == 0xFF && m->solicited)
		return -EBADMSG;
	return 0;
}

int dpv__nd_parse(const uint8_t *f, size_t len, struct dpv_nd_msg *m)
{
	const uint8_t *ip = f + DPV_ETH_HLEN;
	uint16_t etype;

	if (len < DPV_ETH_HLEN)
		return -ENOMSG;
	memset(m, 0, sizeof(*m));
	memcpy(m->eth_dst, f, 6);
	memcpy(m->eth_src, f + 6, 6);
	etype = rd16(f + 12);
	if (etype == DPV_ETH_P_ARP)
		return parse_arp(f + DPV_ETH_HLEN, len - DPV_ETH_HLEN, m);
	/* an IPv6 packet whose next header is ICMPv6 of an ND type (133-137); anything that
	 * cannot be seen to be one is left to others */
	if (etype != DPV_ETH_P_IPV6 || len < DPV_ETH_HLEN + DPV_IPV6_HLEN + 1 || (ip[0] >> 4) != 6 ||
	    ip[6] != ICMP6_PROTO || ip[DPV_IPV6_HLEN] < 133 || ip[DPV_IPV6_HLEN] > 137)
		return -ENOMSG;
	if (ip[DPV_IPV6_HLEN] != ICMP6_NS && ip[DPV_IPV6_HLEN] != ICMP6_NA)
		return -EOPNOTSUPP;
	return parse_nd(ip, len - DPV_ETH_HLEN, m);
}

/* ---- building ---- */

static size_t build_arp(uint8_t *a, const struct dpv_nd_msg *m)
{
	wr16(a, 1);
	wr16(a + 2, DPV_ETH_P_IPV4);
	a[4] = 6;
	a[5] = 4;
	wr16(a + 6, m->type == DPV_ND_ARP_REQUEST ? 1 : 2);
	memcpy(a + 8, m->sender_mac, 6);
	memcpy(a + 14, m->sender_ip, 4);
	memcpy(a + 18, m->target_mac, 6);
	memcpy(a + 24, m->target_ip, 4);
	return ARP_LEN;
}

static size_t build_nd(uint8_t *ip, const struct dpv_nd_msg *m)
{
	uint8_t *icmp = ip + DPV_IPV6_HLEN;
	bool ns = m->type == DPV_ND_NS;
	size_t plen = ND_LEN + (m->lladdr ? 8 : 0);

	memset(ip, 0, DPV_IPV6_HLEN + plen);
	ip[0] = 0x60;
	wr16(ip + 4, (uint16_t)plen);
	ip[6] = ICMP6_PROTO;
	ip[7] = 255;
	memcpy(ip + 8, m->sender_ip, 16);
	memcpy(ip + 24, m->ip_dst, 16);
	icmp[0] = ns ? ICMP6_NS : ICMP6_NA;
	if (!ns)
		icmp[4] = (m->router ? NA_ROUTER : 0) | (m->solicited ? NA_SOLICITED : 0) |
			  (m->override ? NA_OVERRIDE : 0);
	memcpy(icmp + 8, m->target_ip, 16);
	if (m->lladdr) {
		icmp[ND_LEN] = ns ? ND_OPT_SLL : ND_OPT_TLL;
		icmp[ND_LEN + 1] = 1;
		memcpy(icmp + ND_LEN + 2, m->sender_mac, 6);
	}
	wr16(icmp + 2, dpv__icmp6_cksum(ip + 8, ip + 24, icmp, plen));
	return DPV_IPV6_HLEN + plen;
}

int dpv__nd_build(uint8_t *buf, size_t cap, const struct dpv_nd_msg *m)
{
	size_t len;

	if ((unsigned int)m->type > DPV_ND_NA)
		return -EINVAL;
	if (cap < DPV_ND_FRAME_MAX)
		return -ENOSPC;
	memset(buf, 0, DPV_ND_ETH_MIN);
	memcpy(buf, m->eth_dst, 6);
	memcpy(buf + 6, m->eth_src, 6);
	if (m->type == DPV_ND_ARP_REQUEST || m->type == DPV_ND_ARP_REPLY) {
		wr16(buf + 12, DPV_ETH_P_ARP);
		len = DPV_ETH_HLEN + build_arp(buf + DPV_ETH_HLEN, m);
	} else {
		wr16(buf + 12, DPV_ETH_P_IPV6);
		len = DPV_ETH_HLEN + build_nd(buf + DPV_ETH_HLEN, m);
	}
	return (int)(len < DPV_ND_ETH_MIN ? DPV_ND_ETH_MIN : len);
}
