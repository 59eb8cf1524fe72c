/* SPDX-License-Identifier: BSD-3-Clause */
/* Header parser: Ethernet, up to two VLAN tags, IPv4 with options, IPv6 with the common
 * extension headers, TCP with options, UDP. Pure byte parsing, no DPDK. */
#include <errno.h>
#include <netinet/in.h>
#include <string.h>

#include "dpv_offload.h"


static uint16_t be16_at(const uint8_t *p)
{
	return (uint16_t)(p[0] << 8 | p[1]);
}

static size_t parse_l2(const uint8_t *f, size_t len, struct dpv_hdr_info *info)
{
	size_t off = DPV_ETH_HLEN;

	if (len < DPV_ETH_HLEN)
		return 0;
	info->ethertype = be16_at(f + 12);
	while ((info->ethertype == DPV_ETH_P_8021Q || info->ethertype == DPV_ETH_P_8021AD) &&
	       info->vlans < 2 && len >= off + DPV_VLAN_HLEN) {
		info->ethertype = be16_at(f + off + 2);
		off += DPV_VLAN_HLEN;
		info->vlans++;
	}
	info->l2_len = (uint16_t)off;
	return off;
}

static size_t parse_ipv4(const uint8_t *ip, size_t len, struct dpv_hdr_info *info)
{
	size_t ihl;

	if (len < DPV_IPV4_HLEN || (ip[0] >> 4) != 4)
		return 0;
	ihl = (size_t)(ip[0] & 0x0f) * 4;
	if (ihl < DPV_IPV4_HLEN || ihl > len)
		return 0;
	info->l3 = DPV_L3_IPV4;
	info->l3_len = (uint16_t)ihl;
	info->l4_proto = ip[9];
	info->fragment = (be16_at(ip + 6) & 0x3fff) != 0;     /* MF or an offset */
	return ihl;
}

static size_t parse_ipv6(const uint8_t *ip, size_t len, struct dpv_hdr_info *info)
{
	size_t off = DPV_IPV6_HLEN;
	uint8_t next;

	if (len < DPV_IPV6_HLEN || (ip[0] >> 4) != 6)
		return 0;
	next = ip[6];
	for (;;) {
		size_t ext;

		if (next == 44) {                  /* fragment header */
			info->fragment = true;
			if (len < off + 8)
				return 0;
			next = ip[off];
			off += 8;
			continue;
		}
		if (next != 0 && next != 43 && next != 60)   /* hop-by-hop, routing, dest opts */
			break;
		if (len < off + 8)
			return 0;
		ext = ((size_t)ip[off + 1] + 1) * 8;
		if (len < off + ext)
			return 0;
		next = ip[off];
		off += ext;
	}
	info->l3 = DPV_L3_IPV6;
	info->l3_len = (uint16_t)off;
	info->l4_proto = next;
	return off;
}

static void parse_l4(const uint8_t *l4, size_t len, struct dpv_hdr_info *info)
{
	size_t doff;

	if (info->fragment)
		return;
	if (info->l4_proto == IPPROTO_UDP && len >= 8) {
		info->l4_len = 8;
	} else if (info->l4_proto == IPPROTO_TCP && len >= 20) {
		doff = (size_t)(l4[12] >> 4) * 4;
		if (doff >= 20 && doff <= len)
			info->l4_len = (uint16_t)doff;
	}
}

void dpv__hdr_parse(const uint8_t *f, size_t len, struct dpv_hdr_info *info)
{
	size_t off, l3;

	memset(info, 0, sizeof(*info));
	off = parse_l2(f, len, info);
	if (off == 0)
		return;
	if (info->ethertype == DPV_ETH_P_IPV4)
		l3 = parse_ipv4(f + off, len - off, info);
	else if (info->ethertype == DPV_ETH_P_IPV6)
		l3 = parse_ipv6(f + off, len - off, info);
	else
		return;
	if (l3 != 0)
		parse_l4(f + off + l3, len - off - l3, info);
}

int dpv__tso_hdr_check(const uint8_t *hdr, size_t len, struct dpv_hdr_info *info)
{
	dpv__hdr_parse(hdr, len, info);
	if (info->l3 == DPV_L3_NONE || info->fragment || info->l4_proto != IPPROTO_TCP ||
	    info->l4_len == 0)
		return -EINVAL;
	if ((size_t)info->l2_len + info->l3_len + info->l4_len != len)
		return -EINVAL;
	return 0;
}
