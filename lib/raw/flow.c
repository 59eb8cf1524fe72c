/* SPDX-License-Identifier: BSD-3-Clause */
/* Receive steering with verbs' meaning (ibv_create_flow(3)): rules are tried by priority (lower
 * value first); a matching NORMAL rule steers the frame to its QP and ends the search unless it
 * carries IBV_FLOW_ATTR_FLAGS_DONT_TRAP; ALL_DEFAULT QPs get what no rule steered, MC_DEFAULT
 * QPs the unsteered multicast; SNIFFER QPs a copy of everything. Matching is done here in
 * software on the port's receive queues. Specs: ETH, IPV4, IPV4_EXT, IPV6, TCP, UDP; anything
 * else (and fields not matched: IPv4 fragment flags, IPv6 flow label) is EOPNOTSUPP, never a
 * silent match-all. Every spec must hold: a spec of a layer asks for its header (an IPV4 spec
 * for an IPv4 header, even with its masks 0; a VLAN mask for a tag), and a layer given twice
 * (ETH, L3: IPV4/IPV4_EXT/IPV6, L4: TCP/UDP) is EINVAL. The rules live on a list by priority;
 * each change compiles them into the steering table the receive path reads (steer.c) before the
 * call returns, so a rule made or destroyed between two bursts applies from the second. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "raw_priv.h"

int dpv__raw_flows_init(struct dpv_device *dev)
{
	struct dpv_raw_port *rp = calloc(1, sizeof(*rp));

	if (rp == NULL)
		return -ENOMEM;
	pthread_mutex_init(&rp->flows_mutex, NULL);
	TAILQ_INIT(&rp->flows);
	dev->raw = rp;
	return 0;
}

/* The port started: one owner slot per receive queue (a restart may bring another count;
 * no rule is steered in hardware while no context is open). */
static void raw_start(struct dpv_device *dev, bool started)
{
	struct dpv_raw_port *rp = dev->raw;

	if (!started || rp->nb_owner == dev->nb_rxq)
		return;
	pthread_mutex_lock(&rp->flows_mutex);
	free(rp->rxq_owner);
	rp->rxq_owner = calloc(dev->nb_rxq, sizeof(*rp->rxq_owner));
	rp->nb_owner = rp->rxq_owner != NULL ? dev->nb_rxq : 0;
	pthread_mutex_unlock(&rp->flows_mutex);
}

/* The size a spec of @type must have at least (its struct in verbs.h); 0: not supported. */
static size_t spec_size(enum ibv_flow_spec_type type)
{
	switch (type) {
	case IBV_FLOW_SPEC_ETH: return sizeof(struct ibv_flow_spec_eth);
	case IBV_FLOW_SPEC_IPV4: return sizeof(struct ibv_flow_spec_ipv4);
	case IBV_FLOW_SPEC_IPV4_EXT: return sizeof(struct ibv_flow_spec_ipv4_ext);
	case IBV_FLOW_SPEC_IPV6: return sizeof(struct ibv_flow_spec_ipv6);
	case IBV_FLOW_SPEC_TCP: case IBV_FLOW_SPEC_UDP: return sizeof(struct ibv_flow_spec_tcp_udp);
	default: return 0;
	}
}

static void match_etype(struct dpv_flow_match *m, uint16_t type)
{
	m->etype = htobe16(type);
	m->etype_m = 0xffff;
}

/* Addresses and masks in network order, as the specs carry them. */
static void match_ipv4(struct dpv_flow_match *m, uint32_t src, uint32_t src_m, uint32_t dst,
		       uint32_t dst_m)
{
	m->sip = src;
	m->sip_m = src_m;
	m->dip = dst;
	m->dip_m = dst_m;
}

/* Protocol (IPv6: next header), TOS (traffic class) and TTL (hop limit). */
static void match_ip_fields(struct dpv_flow_match *m, uint8_t proto, uint8_t proto_m, uint8_t tos,
			    uint8_t tos_m, uint8_t ttl, uint8_t ttl_m)
{
	m->proto = proto;
	m->proto_m = proto_m;
	m->tos = tos;
	m->tos_m = tos_m;
	m->ttl = ttl;
	m->ttl_m = ttl_m;
}

/* The specs follow the attribute, num_of_specs of them, each as long as its own size field
 * says (rdma-core walks them so and never reads attr->size: pyverbs passes
 * sizeof(struct ibv_flow_attr) there whatever the specs). A spec shorter than its header or its
 * type is EINVAL; an unknown type, or one longer than any spec verbs.h has, EOPNOTSUPP, before
 * anything past its header is read. */
static int parse_specs(const struct ibv_flow_attr *attr, struct dpv_flow_match *m)
{
	const uint8_t *p = (const uint8_t *)(attr + 1);
	unsigned int seen = 0;            /* the layers given: 1 ETH, 2 L3, 4 L4 */

	memset(m, 0, sizeof(*m));
	for (int i = 0; i < attr->num_of_specs; i++) {
		/* specs follow each other at 4-byte offsets: copy one out, aligned */
		struct ibv_flow_spec copy;
		const struct ibv_flow_spec *spec = &copy;
		struct { enum ibv_flow_spec_type type; uint16_t size; } hdr;

		memcpy(&hdr, p, sizeof(hdr));
		if (hdr.size < sizeof(hdr))
			return -EINVAL;
		if (spec_size(hdr.type) == 0 || hdr.size > sizeof(copy))
			return -EOPNOTSUPP;
		if (hdr.size < spec_size(hdr.type))
			return -EINVAL;
		memcpy(&copy, p, hdr.size);
		{
			unsigned int layer = hdr.type == IBV_FLOW_SPEC_ETH ? 1 :
					     hdr.type == IBV_FLOW_SPEC_TCP ||
					     hdr.type == IBV_FLOW_SPEC_UDP ? 4 : 2;

			if (seen & layer)
				return -EINVAL;   /* a layer twice: both could not hold */
			seen |= layer;
		}
		switch (spec->hdr.type) {
		case IBV_FLOW_SPEC_ETH:
			memcpy(m->dmac, spec->eth.val.dst_mac, 6);
			memcpy(m->dmac_m, spec->eth.mask.dst_mac, 6);
			memcpy(m->smac, spec->eth.val.src_mac, 6);
			memcpy(m->smac_m, spec->eth.mask.src_mac, 6);
			m->etype = spec->eth.val.ether_type;
			m->etype_m = spec->eth.mask.ether_type;
			m->vlan = spec->eth.val.vlan_tag;
			m->vlan_m = spec->eth.mask.vlan_tag;
			m->tagged = m->vlan_m != 0;
			break;
		case IBV_FLOW_SPEC_IPV4:
			match_ipv4(m, spec->ipv4.val.src_ip, spec->ipv4.mask.src_ip,
				   spec->ipv4.val.dst_ip, spec->ipv4.mask.dst_ip);
			if (m->etype_m == 0)
				match_etype(m, 0x0800);
			m->l3 = 4;
			break;
		case IBV_FLOW_SPEC_IPV4_EXT:
			if (spec->ipv4_ext.mask.flags != 0)
				return -EOPNOTSUPP;        /* fragment flags: not matched */
			match_ipv4(m, spec->ipv4_ext.val.src_ip, spec->ipv4_ext.mask.src_ip,
				   spec->ipv4_ext.val.dst_ip, spec->ipv4_ext.mask.dst_ip);
			match_ip_fields(m, spec->ipv4_ext.val.proto, spec->ipv4_ext.mask.proto,
					spec->ipv4_ext.val.tos, spec->ipv4_ext.mask.tos,
					spec->ipv4_ext.val.ttl, spec->ipv4_ext.mask.ttl);
			if (m->etype_m == 0)           /* else the ETH spec's must hold too */
				match_etype(m, 0x0800);
			m->l3 = 4;
			break;
		case IBV_FLOW_SPEC_IPV6:
			memcpy(m->sip6, spec->ipv6.val.src_ip, 16);
			memcpy(m->sip6_m, spec->ipv6.mask.src_ip, 16);
			memcpy(m->dip6, spec->ipv6.val.dst_ip, 16);
			memcpy(m->dip6_m, spec->ipv6.mask.dst_ip, 16);
			match_ip_fields(m, spec->ipv6.val.next_hdr, spec->ipv6.mask.next_hdr,
					spec->ipv6.val.traffic_class, spec->ipv6.mask.traffic_class,
					spec->ipv6.val.hop_limit, spec->ipv6.mask.hop_limit);
			if (spec->ipv6.mask.flow_label != 0)
				return -EOPNOTSUPP;        /* flow labels: not matched */
			if (m->etype_m == 0)
				match_etype(m, 0x86dd);
			m->l3 = 6;
			break;
		case IBV_FLOW_SPEC_TCP:
		case IBV_FLOW_SPEC_UDP:
			m->l4 = spec->hdr.type == IBV_FLOW_SPEC_TCP ? 6 : 17;
			m->sport = spec->tcp_udp.val.src_port;
			m->sport_m = spec->tcp_udp.mask.src_port;
			m->dport = spec->tcp_udp.val.dst_port;
			m->dport_m = spec->tcp_udp.mask.dst_port;
			break;
		default:
			return -EOPNOTSUPP;
		}
		p += hdr.size;
	}
	return 0;
}

static struct ibv_flow *create_flow(struct ibv_qp *ibqp, struct ibv_flow_attr *attr)
{
	struct dpv_qp *qp = to_dqp(ibqp);
	struct dpv_device *dev;
	struct dpv_flow *f, *at;
	int rc;

	if (qp == NULL || attr == NULL || attr->comp_mask != 0 || attr->port != 1 ||
	    (attr->flags & ~(uint32_t)IBV_FLOW_ATTR_FLAGS_DONT_TRAP))
		return dpv__fail_ptr(-EINVAL);
	if (qp->ops != &dpv_raw_transport || attr->type > IBV_FLOW_ATTR_SNIFFER)
		return dpv__fail_ptr(-EOPNOTSUPP);
	f = calloc(1, sizeof(*f));
	if (f == NULL)
		return dpv__fail_ptr(-ENOMEM);
	rc = parse_specs(attr, &f->m);
	if (rc != 0) {
		free(f);
		return dpv__fail_ptr(rc);
	}
	dev = qp->ctx->dev;
	f->ibflow.context = ibqp->context;
	f->qp = qp;
	f->type = attr->type;
	f->priority = attr->priority;
	f->dont_trap = attr->flags & IBV_FLOW_ATTR_FLAGS_DONT_TRAP;
	f->hw_want = -1;
	pthread_mutex_lock(&dev->raw->flows_mutex);
	TAILQ_FOREACH(at, &dev->raw->flows, next)
		if (at->priority > f->priority)
			break;
	if (at != NULL)
		TAILQ_INSERT_BEFORE(at, f, next);
	else
		TAILQ_INSERT_TAIL(&dev->raw->flows, f, next);
	rc = dpv__steer_rebuild(dev);
	if (rc != 0) {
		TAILQ_REMOVE(&dev->raw->flows, f, next);
		dpv__steer_hw_drop(dev, f);
		pthread_mutex_unlock(&dev->raw->flows_mutex);
		free(f);
		return dpv__fail_ptr(rc);
	}
	qp->nb_flows++;
	dpv__device_rx_users(dev, 1);
	pthread_mutex_unlock(&dev->raw->flows_mutex);
	return &f->ibflow;
}

static int destroy_flow(struct ibv_flow *ibflow)
{
	struct dpv_flow *f = container_of_safe(ibflow, struct dpv_flow, ibflow);
	struct dpv_device *dev;

	if (f == NULL)
		return -EINVAL;
	dev = f->qp->ctx->dev;
	pthread_mutex_lock(&dev->raw->flows_mutex);
	TAILQ_REMOVE(&dev->raw->flows, f, next);
	dpv__steer_hw_drop(dev, f);
	dpv__steer_rebuild_nofail(dev);     /* when it returns, no burst sees the rule */
	f->qp->nb_flows--;
	dpv__device_rx_users(dev, -1);
	pthread_mutex_unlock(&dev->raw->flows_mutex);
	free(f);
	return 0;
}

/* The context's ibv_create_flow and ibv_destroy_flow: flows are kept in ctx->flows, so that
 * ibv_close_device destroys what the application left. */
static struct ibv_flow *create_flow_tracked(struct ibv_qp *qp, struct ibv_flow_attr *attr)
{
	struct ibv_flow *flow;

	DPV_FORK_REFUSE(NULL);
	flow = create_flow(qp, attr);
	if (flow != NULL && dpv__objset_add(to_dctx(qp->context), &to_dctx(qp->context)->flows,
					   flow) != 0) {
		destroy_flow(flow);
		return dpv__fail_ptr(-ENOMEM);
	}
	return flow;
}

static int destroy_flow_tracked(struct ibv_flow *flow)
{
	struct dpv_context *ctx = flow != NULL ? to_dctx(flow->context) : NULL;
	int rc;

	DPV_FORK_NOOP(0);
	rc = destroy_flow(flow);
	if (rc == 0 && ctx != NULL)
		dpv__objset_del(ctx, &ctx->flows, flow);
	return -rc;                  /* the ibv_destroy_flow op: a positive errno */
}

static void flows_context_init(struct dpv_context *ctx, struct verbs_context *vctx)
{
	vctx->ibv_create_flow = create_flow_tracked;
	vctx->ibv_destroy_flow = destroy_flow_tracked;
}

/* Before the QPs: a QP with flows cannot be destroyed. */
static unsigned int flows_release(struct dpv_context *ctx)
{
	unsigned int n, done = 0;
	void **v = dpv__objset_take(ctx, &ctx->flows, &n);

	for (unsigned int i = 0; i < n; i++)
		done += destroy_flow_tracked(v[i]) == 0;
	free(v);
	return done;
}

static const struct dpv_device_hooks raw_hooks = {
	.name = "raw_packet",
	.init = dpv__raw_flows_init,
	.start = raw_start,
	.context_init = flows_context_init,
	.release_before_qps = flows_release,
};
DPV_DEVICE_HOOKS_REGISTER(raw, raw_hooks)

/* ibv_attach_mcast on a RAW_PACKET QP, as mlx4/mlx5 read it: the group's MAC address is
 * gid.raw[10..15] (33:33:... for IPv6 groups, 01:00:5e:... for IPv4 ones); frames to it reach
 * every QP attached (a DONT_TRAP rule each, so that one group feeds several QPs). */
int dpv__raw_mcast(struct dpv_qp *qp, const union ibv_gid *gid, bool attach)
{
	struct dpv_device *dev = qp->ctx->dev;
	struct dpv_flow *f, *found = NULL;

	if (gid == NULL) {
		dpv__qp_mcast_detach_all(qp);
		return 0;
	}
	if (!(gid->raw[10] & 1))
		return -EINVAL;                   /* not a multicast MAC */
	pthread_mutex_lock(&dev->raw->flows_mutex);
	TAILQ_FOREACH(f, &dev->raw->flows, next)
		if (f->mcast && f->qp == qp && memcmp(&f->gid, gid, sizeof(*gid)) == 0)
			found = f;
	if (attach && found == NULL) {
		f = calloc(1, sizeof(*f));
		if (f == NULL) {
			pthread_mutex_unlock(&dev->raw->flows_mutex);
			return -ENOMEM;
		}
		f->qp = qp;
		f->mcast = true;
		f->hw_want = -1;
		f->gid = *gid;
		f->type = IBV_FLOW_ATTR_NORMAL;
		f->dont_trap = true;
		memcpy(f->m.dmac, &gid->raw[10], 6);
		memset(f->m.dmac_m, 0xff, 6);
		TAILQ_INSERT_HEAD(&dev->raw->flows, f, next);
		if (dpv__steer_rebuild(dev) != 0) {
			TAILQ_REMOVE(&dev->raw->flows, f, next);
			dpv__steer_hw_drop(dev, f);
			pthread_mutex_unlock(&dev->raw->flows_mutex);
			free(f);
			return -ENOMEM;
		}
		dpv__device_rx_users(dev, 1);
	} else if (!attach && found != NULL) {
		TAILQ_REMOVE(&dev->raw->flows, found, next);
		dpv__steer_hw_drop(dev, found);
		dpv__steer_rebuild_nofail(dev);
		dpv__device_rx_users(dev, -1);
		free(found);
	}
	pthread_mutex_unlock(&dev->raw->flows_mutex);
	return !attach && found == NULL ? -EINVAL : 0;
}

/* At QP destruction: its group attachments go with it (as the kernel detaches them). */
void dpv__qp_mcast_detach_all(struct dpv_qp *qp)
{
	struct dpv_device *dev = qp->ctx->dev;
	struct dpv_flow *f, *next;
	TAILQ_HEAD(, dpv_flow) gone = TAILQ_HEAD_INITIALIZER(gone);

	pthread_mutex_lock(&dev->raw->flows_mutex);
	for (f = TAILQ_FIRST(&dev->raw->flows); f != NULL; f = next) {
		next = TAILQ_NEXT(f, next);
		if (f->mcast && f->qp == qp) {
			TAILQ_REMOVE(&dev->raw->flows, f, next);
			TAILQ_INSERT_TAIL(&gone, f, next);
		}
	}
	if (!TAILQ_EMPTY(&gone))
		dpv__steer_rebuild_nofail(dev);
	while ((f = TAILQ_FIRST(&gone)) != NULL) {
		TAILQ_REMOVE(&gone, f, next);
		dpv__steer_hw_drop(dev, f);
		dpv__device_rx_users(dev, -1);
		free(f);
	}
	pthread_mutex_unlock(&dev->raw->flows_mutex);
}
