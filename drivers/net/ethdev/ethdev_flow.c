/* SPDX-License-Identifier: BSD-3-Clause */
/* Receive steering in hardware: a struct dpv_flow_match as an rte_flow rule with a QUEUE
 * action, pattern ETH [/ VLAN] [/ IPV4 or IPV6 [/ TCP or UDP]]. What is not exactly one
 * rte_flow pattern (L4 without L3, a VLAN match on the EtherType before the tag) is
 * -EOPNOTSUPP and stays software's; a PMD that refuses every rule is not asked again. */

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include <rte_byteorder.h>
#include <rte_errno.h>
#include <rte_flow.h>

#include "ethdev_priv.h"

static bool any(const void *p, size_t len)
{
	const uint8_t *b = p;

	for (size_t i = 0; i < len; i++)
		if (b[i] != 0)
			return true;
	return false;
}

static void add(struct dpv_eth_pattern *p, enum rte_flow_item_type type, const void *spec,
		const void *mask)
{
	p->item[p->n++] = (struct rte_flow_item){ .type = type, .spec = spec, .mask = mask };
}

static bool ipv6_rule(const struct dpv_flow_match *m)
{
	return any(m->sip6_m, 16) || any(m->dip6_m, 16) || m->l3 == 6 ||
	       (m->etype_m == 0xffff && m->etype == rte_cpu_to_be_16(RTE_ETHER_TYPE_IPV6));
}

static bool ipv4_rule(const struct dpv_flow_match *m)
{
	return m->sip_m || m->dip_m || m->l3 == 4 ||
	       (m->etype_m == 0xffff && m->etype == rte_cpu_to_be_16(RTE_ETHER_TYPE_IPV4));
}

/* The L3 item: addresses, protocol (next header), TOS (traffic class), TTL (hop limit). */
static void add_l3(struct dpv_eth_pattern *p, const struct dpv_flow_match *m, bool v6)
{
	if (!v6) {
		p->ip4.hdr.src_addr = m->sip;
		p->ip4_m.hdr.src_addr = m->sip_m;
		p->ip4.hdr.dst_addr = m->dip;
		p->ip4_m.hdr.dst_addr = m->dip_m;
		p->ip4.hdr.next_proto_id = m->proto;
		p->ip4_m.hdr.next_proto_id = m->proto_m;
		p->ip4.hdr.type_of_service = m->tos;
		p->ip4_m.hdr.type_of_service = m->tos_m;
		p->ip4.hdr.time_to_live = m->ttl;
		p->ip4_m.hdr.time_to_live = m->ttl_m;
		add(p, RTE_FLOW_ITEM_TYPE_IPV4, &p->ip4, &p->ip4_m);
		return;
	}
	memcpy(p->ip6.hdr.src_addr, m->sip6, 16);
	memcpy(p->ip6_m.hdr.src_addr, m->sip6_m, 16);
	memcpy(p->ip6.hdr.dst_addr, m->dip6, 16);
	memcpy(p->ip6_m.hdr.dst_addr, m->dip6_m, 16);
	p->ip6.hdr.proto = m->proto;
	p->ip6_m.hdr.proto = m->proto_m;
	p->ip6.hdr.hop_limits = m->ttl;
	p->ip6_m.hdr.hop_limits = m->ttl_m;
	/* version (4 bits), traffic class (8), flow label (20), in network order */
	p->ip6.hdr.vtc_flow = rte_cpu_to_be_32((uint32_t)m->tos << 20);
	p->ip6_m.hdr.vtc_flow = rte_cpu_to_be_32((uint32_t)m->tos_m << 20);
	add(p, RTE_FLOW_ITEM_TYPE_IPV6, &p->ip6, &p->ip6_m);
}

int dpv__eth_flow_pattern(const struct dpv_flow_match *m, struct dpv_eth_pattern *p)
{
	bool v4 = ipv4_rule(m), v6 = ipv6_rule(m), vlan = m->vlan_m != 0 || m->tagged;

	memset(p, 0, sizeof(*p));
	if (v4 && v6)
		return -EOPNOTSUPP;                  /* matches nothing: leave it to software */
	if ((m->proto_m || m->tos_m || m->ttl_m || m->l4) && !v4 && !v6)
		return -EOPNOTSUPP;                  /* either IP version: two patterns */
	memcpy(p->eth.hdr.dst_addr.addr_bytes, m->dmac, 6);
	memcpy(p->eth_m.hdr.dst_addr.addr_bytes, m->dmac_m, 6);
	memcpy(p->eth.hdr.src_addr.addr_bytes, m->smac, 6);
	memcpy(p->eth_m.hdr.src_addr.addr_bytes, m->smac_m, 6);
	if (!vlan) {
		p->eth.hdr.ether_type = m->etype;     /* the EtherType after the tags (none) */
		p->eth_m.hdr.ether_type = m->etype_m;
	} else {
		p->eth.has_vlan = 1;
		p->eth_m.has_vlan = 1;
		p->vlan.hdr.vlan_tci = m->vlan;
		p->vlan_m.hdr.vlan_tci = m->vlan_m;
		p->vlan.hdr.eth_proto = m->etype;     /* after the (last) tag */
		p->vlan_m.hdr.eth_proto = m->etype_m;
	}
	add(p, RTE_FLOW_ITEM_TYPE_ETH, &p->eth, &p->eth_m);
	if (vlan)
		add(p, RTE_FLOW_ITEM_TYPE_VLAN, &p->vlan, &p->vlan_m);
	if (v4 || v6)
		add_l3(p, m, v6);
	if (m->l4 == IPPROTO_TCP) {
		p->tcp.hdr.src_port = m->sport;
		p->tcp_m.hdr.src_port = m->sport_m;
		p->tcp.hdr.dst_port = m->dport;
		p->tcp_m.hdr.dst_port = m->dport_m;
		add(p, RTE_FLOW_ITEM_TYPE_TCP, &p->tcp, &p->tcp_m);
	} else if (m->l4 == IPPROTO_UDP) {
		p->udp.hdr.src_port = m->sport;
		p->udp_m.hdr.src_port = m->sport_m;
		p->udp.hdr.dst_port = m->dport;
		p->udp_m.hdr.dst_port = m->dport_m;
		add(p, RTE_FLOW_ITEM_TYPE_UDP, &p->udp, &p->udp_m);
	}
	add(p, RTE_FLOW_ITEM_TYPE_END, NULL, NULL);
	return 0;
}

int dpv__eth_flow_steer(struct dpv_port *port, const struct dpv_flow_match *m, uint16_t queue,
			void **handle)
{
	static const struct rte_flow_attr attr = { .ingress = 1 };
	struct rte_flow_action_queue to = { .index = queue };
	struct rte_flow_action act[2] = {
		{ .type = RTE_FLOW_ACTION_TYPE_QUEUE, .conf = &to },
		{ .type = RTE_FLOW_ACTION_TYPE_END },
	};
	struct dpv_eth_pattern *p;
	struct rte_flow_error err;
	struct rte_flow *f;
	int rc;

	/* a port spread in software: its receive queues are not the hardware's */
	if (__atomic_load_n(&port->no_flows, __ATOMIC_RELAXED) || queue >= port->nb_rxq ||
	    port->spread != NULL)
		return -EOPNOTSUPP;
	p = malloc(sizeof(*p));
	if (p == NULL)
		return -ENOMEM;
	rc = dpv__eth_flow_pattern(m, p);
	if (rc == 0) {
		f = rte_flow_create(port->port_id, &attr, p->item, act, &err);
		if (f == NULL) {
			rc = -EOPNOTSUPP;
			/* a PMD without rte_flow says so for the first rule: do not ask again */
			if (err.type == RTE_FLOW_ERROR_TYPE_UNSPECIFIED || rte_errno == ENOSYS ||
			    rte_errno == ENOTSUP) {
				__atomic_store_n(&port->no_flows, true, __ATOMIC_RELAXED);
				PMD_LOG(INFO, "port %s: no rte_flow steering (%s): receive rules "
					"stay in software", port->name,
					err.message ? err.message : rte_strerror(rte_errno));
			}
		} else {
			*handle = f;
		}
	}
	free(p);
	return rc;
}

void dpv__eth_flow_unsteer(struct dpv_port *port, void *handle)
{
	struct rte_flow_error err;

	if (rte_flow_destroy(port->port_id, handle, &err) != 0)
		PMD_LOG(WARNING, "port %s: an rte_flow rule would not go: %s", port->name,
			err.message ? err.message : rte_strerror(rte_errno));
}
