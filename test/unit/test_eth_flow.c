/* SPDX-License-Identifier: BSD-3-Clause */
/* Receive rules as rte_flow patterns (drivers/net/ethdev/ethdev_flow.c), the form a port that
 * steers in hardware is given (no port here has rte_flow, so the patterns are checked item by
 * item): perftest's ETH + IPV4 + UDP rule, a VLAN rule, an IPv6 rule with a traffic class, and
 * rules one pattern cannot say (L4 without an IP version; IPv4 and IPv6 at once). */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include <rte_byteorder.h>

#include "ethdev_priv.h"

static int failures, checks;

#define CHECK(c, ...) do { checks++; if (!(c)) { failures++; printf("FAIL %s:%d: %s\n", \
	__FILE__, __LINE__, #c); } } while (0)

static const enum rte_flow_item_type *types_of(const struct dpv_eth_pattern *p)
{
	static enum rte_flow_item_type t[8];

	for (int i = 0; i < p->n && i < 8; i++)
		t[i] = p->item[i].type;
	return t;
}

static void five_tuple(void)
{
	struct dpv_flow_match m = {
		.dmac = { 2, 0, 0, 0, 0, 0xaa }, .dmac_m = { 0xff, 0xff, 0xff, 0xff, 0xff, 0xff },
		.etype = RTE_BE16(0x0800), .etype_m = 0xffff,
		.sip = RTE_BE32(0x0a000001), .sip_m = 0xffffffff,
		.dip = RTE_BE32(0x0a000002), .dip_m = 0xffffffff,
		.proto = 17, .proto_m = 0xff, .l4 = 17,
		.sport = RTE_BE16(5000), .sport_m = 0xffff, .dport = RTE_BE16(9000), .dport_m = 0xffff,
	};
	static const enum rte_flow_item_type want[] = { RTE_FLOW_ITEM_TYPE_ETH,
		RTE_FLOW_ITEM_TYPE_IPV4, RTE_FLOW_ITEM_TYPE_UDP, RTE_FLOW_ITEM_TYPE_END };
	struct dpv_eth_pattern p;

	CHECK(dpv__eth_flow_pattern(&m, &p) == 0);
	CHECK(p.n == 4 && memcmp(types_of(&p), want, sizeof(want)) == 0);
	CHECK(memcmp(p.eth.hdr.dst_addr.addr_bytes, m.dmac, 6) == 0);
	CHECK(p.eth.hdr.ether_type == RTE_BE16(0x0800) && p.eth_m.hdr.ether_type == 0xffff);
	CHECK(p.ip4.hdr.src_addr == RTE_BE32(0x0a000001) && p.ip4_m.hdr.dst_addr == 0xffffffff);
	CHECK(p.ip4.hdr.next_proto_id == 17 && p.ip4_m.hdr.next_proto_id == 0xff);
	CHECK(p.udp.hdr.dst_port == RTE_BE16(9000) && p.udp_m.hdr.src_port == 0xffff);
	CHECK(p.item[1].spec == &p.ip4 && p.item[1].mask == &p.ip4_m);
}

static void vlan_and_ipv6(void)
{
	struct dpv_flow_match v = { .vlan = RTE_BE16(5), .vlan_m = RTE_BE16(0x0fff),
				    .etype = RTE_BE16(0x86dd), .etype_m = 0xffff,
				    .dip6 = { 0xfd, [15] = 2 }, .tos = 0x28, .tos_m = 0xfc };
	static const enum rte_flow_item_type want[] = { RTE_FLOW_ITEM_TYPE_ETH,
		RTE_FLOW_ITEM_TYPE_VLAN, RTE_FLOW_ITEM_TYPE_IPV6, RTE_FLOW_ITEM_TYPE_END };
	struct dpv_eth_pattern p;

	memset(v.dip6_m, 0xff, 16);
	CHECK(dpv__eth_flow_pattern(&v, &p) == 0);
	CHECK(p.n == 4 && memcmp(types_of(&p), want, sizeof(want)) == 0);
	/* the EtherType after the tag is the VLAN item's; the Ethernet item says "tagged" */
	CHECK(p.eth.has_vlan == 1 && p.eth_m.has_vlan == 1 && p.eth_m.hdr.ether_type == 0);
	CHECK(p.vlan.hdr.vlan_tci == RTE_BE16(5) && p.vlan_m.hdr.vlan_tci == RTE_BE16(0x0fff));
	CHECK(p.vlan.hdr.eth_proto == RTE_BE16(0x86dd));
	CHECK(p.ip6.hdr.dst_addr[0] == 0xfd && p.ip6.hdr.dst_addr[15] == 2 &&
	      p.ip6_m.hdr.dst_addr[7] == 0xff);
	/* traffic class: bits 20-27 of version / class / flow label */
	CHECK(p.ip6.hdr.vtc_flow == rte_cpu_to_be_32(0x28u << 20) &&
	      p.ip6_m.hdr.vtc_flow == rte_cpu_to_be_32(0xfcu << 20));
}

static void not_one_pattern(void)
{
	struct dpv_flow_match udp_any_ip = { .l4 = 17, .dport = RTE_BE16(53), .dport_m = 0xffff };
	struct dpv_flow_match both = { .dip = 1, .dip_m = 0xffffffff, .dip6_m = { 0xff } };
	struct dpv_flow_match mac = { .smac = { 2, 0, 0, 0, 0, 1 },
				      .smac_m = { 0xff, 0xff, 0xff, 0xff, 0xff, 0xff } };
	struct dpv_eth_pattern p;

	CHECK(dpv__eth_flow_pattern(&udp_any_ip, &p) == -EOPNOTSUPP);
	CHECK(dpv__eth_flow_pattern(&both, &p) == -EOPNOTSUPP);
	CHECK(dpv__eth_flow_pattern(&mac, &p) == 0 && p.n == 2 &&
	      p.eth_m.hdr.src_addr.addr_bytes[5] == 0xff && p.eth_m.hdr.dst_addr.addr_bytes[0] == 0);
}

int main(void)
{
	five_tuple();
	vlan_and_ipv6();
	not_one_pattern();
	printf("eth_flow: %d checks passed, %d failed\n", checks - failures, failures);
	return failures != 0;
}
