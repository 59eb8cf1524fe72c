/* SPDX-License-Identifier: BSD-3-Clause */
/* The steering table (lib/raw/steer.c) against the rules' meaning, tried the plain way: for
 * random rule sets (one mask for every NORMAL rule: the exact-match hash; several masks: the
 * rules tried in order; no NORMAL rule: the defaults by the multicast bit) and random frames
 * (VLAN tags, IPv4, IPv6 with an extension header, fragments, TCP, UDP, short and foreign
 * frames, multicast destinations), every frame must reach the same QPs, as many times each, as
 * walking the rules by priority says: every SNIFFER; the first matching NORMAL rule and the
 * DONT_TRAP ones before it; if none without DONT_TRAP matched, ALL_DEFAULT, and MC_DEFAULT for
 * multicast. Frames another transport took reach the SNIFFERs only. The port has four receive
 * queues and a driver that steers rules to them (accepting three rules in four): whatever
 * queue a burst comes from, the rules steered there decide nothing the rules walked would
 * not. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <rte_mbuf.h>

#include "raw_priv.h"

static int failures, checks;

#define NQP 12
static char qp_mem[NQP][64];
#define QP(i) ((struct dpv_qp *)qp_mem[i])

static uint32_t rnd_state = 12345;

static uint32_t rnd(uint32_t n)
{
	rnd_state = rnd_state * 1103515245u + 12345u;
	return (rnd_state >> 8) % n;
}

/* ---- the reference: the rules tried one by one on the frame's fields ---- */

struct fields {
	uint8_t dmac[6], smac[6];
	uint16_t etype, vlan;
	bool ipv4, ipv6, tagged;
	uint32_t sip, dip;
	uint8_t proto, tos, ttl, sip6[16], dip6[16], l4;
	uint16_t sport, dport;
};

static void fields_of(const uint8_t *h, uint32_t len, struct fields *f)
{
	struct dpv_hdr_info info;

	memset(f, 0, sizeof(*f));
	dpv__hdr_parse(h, len, &info);
	if (info.l2_len == 0)
		return;
	memcpy(f->dmac, h, 6);
	memcpy(f->smac, h + 6, 6);
	f->etype = htobe16(info.ethertype);
	if (info.vlans > 0)
		memcpy(&f->vlan, h + info.l2_len - 4, 2);
	f->tagged = info.vlans > 0;
	f->ipv6 = info.l3 == DPV_L3_IPV6;
	if (info.l3 == DPV_L3_IPV4) {
		const uint8_t *ip = h + info.l2_len;

		f->ipv4 = true;
		memcpy(&f->sip, ip + 12, 4);
		memcpy(&f->dip, ip + 16, 4);
		f->proto = ip[9];
		f->tos = ip[1];
		f->ttl = ip[8];
	} else if (info.l3 == DPV_L3_IPV6) {
		const uint8_t *ip = h + info.l2_len;

		memcpy(f->sip6, ip + 8, 16);
		memcpy(f->dip6, ip + 24, 16);
		f->proto = info.l4_proto;
		f->tos = (uint8_t)((ip[0] << 4) | (ip[1] >> 4));
		f->ttl = ip[7];
	}
	if (info.l3 != DPV_L3_NONE && info.l4_len != 0) {
		f->l4 = info.l4_proto;
		memcpy(&f->sport, h + info.l2_len + info.l3_len, 2);
		memcpy(&f->dport, h + info.l2_len + info.l3_len + 2, 2);
	}
}

static bool bytes_ok(const uint8_t *v, const uint8_t *m, const uint8_t *x, int n)
{
	for (int i = 0; i < n; i++)
		if ((x[i] & m[i]) != (v[i] & m[i]))
			return false;
	return true;
}

static bool matches(const struct dpv_flow_match *m, const struct fields *f)
{
	if (!bytes_ok(m->dmac, m->dmac_m, f->dmac, 6) || !bytes_ok(m->smac, m->smac_m, f->smac, 6) ||
	    (f->etype & m->etype_m) != (m->etype & m->etype_m) ||
	    (f->vlan & m->vlan_m) != (m->vlan & m->vlan_m) || (m->tagged && !f->tagged) ||
	    (m->l3 == 4 && !f->ipv4) || (m->l3 == 6 && !f->ipv6))
		return false;
	if ((m->sip_m || m->dip_m) && (!f->ipv4 || (f->sip & m->sip_m) != (m->sip & m->sip_m) ||
				       (f->dip & m->dip_m) != (m->dip & m->dip_m)))
		return false;
	if (!bytes_ok(m->sip6, m->sip6_m, f->sip6, 16) || !bytes_ok(m->dip6, m->dip6_m, f->dip6, 16))
		return false;
	if ((f->proto & m->proto_m) != (m->proto & m->proto_m) ||
	    (f->tos & m->tos_m) != (m->tos & m->tos_m) || (f->ttl & m->ttl_m) != (m->ttl & m->ttl_m))
		return false;
	if (m->l4 != 0 && (f->l4 != m->l4 || (f->sport & m->sport_m) != (m->sport & m->sport_m) ||
			   (f->dport & m->dport_m) != (m->dport & m->dport_m)))
		return false;
	return true;
}

/* How many times each QP gets the frame. */
static void expected(struct dpv_device *dev, const uint8_t *h, uint32_t len, bool taken,
		     int *times)
{
	struct fields f;
	struct dpv_flow *fl;
	bool steered = false;

	memset(times, 0, NQP * sizeof(int));
	fields_of(h, len, &f);
	TAILQ_FOREACH(fl, &dev->raw->flows, next) {
		if (fl->type == IBV_FLOW_ATTR_SNIFFER)
			times[(char (*)[64])fl->qp - qp_mem]++;
		else if (!taken && fl->type == IBV_FLOW_ATTR_NORMAL && !steered &&
			 matches(&fl->m, &f)) {
			times[(char (*)[64])fl->qp - qp_mem]++;
			steered = !fl->dont_trap;
		}
	}
	if (steered || taken)
		return;
	TAILQ_FOREACH(fl, &dev->raw->flows, next)
		if (fl->type == IBV_FLOW_ATTR_ALL_DEFAULT ||
		    (fl->type == IBV_FLOW_ATTR_MC_DEFAULT && (f.dmac[0] & 1)))
			times[(char (*)[64])fl->qp - qp_mem]++;
}

/* ---- rules and frames from small pools, so that they meet ---- */

static const uint8_t macs[4][6] = { { 2, 0, 0, 0, 0, 1 }, { 2, 0, 0, 0, 0, 2 },
				    { 0x33, 0x33, 0, 0, 0, 1 }, { 0, 0, 0, 0, 0, 0 } };
static const uint32_t ips[3] = { 0x0a000001, 0x0a000002, 0x0a010002 };
static const uint16_t ports[3] = { 53, 9000, 4791 };
static const uint16_t vlans[2] = { 0x0005, 0x2005 };

/* The mask shapes rules are made of; a rule set uses one (exact) or several (walk). */
enum shape { S_DMAC, S_DMAC_PREFIX, S_DMAC_ETYPE, S_SMAC, S_VLAN, S_IPV4_DST, S_IPV4_NET,
	     S_5TUPLE, S_UDP_DPORT, S_TCP_SPORT, S_IPV6_DST, S_TOS_TTL, S_NONE, S_SHAPES };

static void rule_of(enum shape sh, struct dpv_flow_match *m)
{
	memset(m, 0, sizeof(*m));
	switch (sh) {
	case S_DMAC_ETYPE:
		m->etype = htobe16(rnd(2) ? 0x0800 : 0x86dd);
		m->etype_m = 0xffff;
		/* fall through */
	case S_DMAC:
		memcpy(m->dmac, macs[rnd(4)], 6);
		memset(m->dmac_m, 0xff, 6);
		break;
	case S_DMAC_PREFIX:
		memcpy(m->dmac, macs[rnd(4)], 6);
		memset(m->dmac_m, 0xff, 3);
		break;
	case S_SMAC:
		memcpy(m->smac, macs[rnd(2)], 6);
		memset(m->smac_m, 0xff, 6);
		break;
	case S_VLAN:
		m->vlan = htobe16(vlans[rnd(2)]);
		m->vlan_m = htobe16(0x0fff);
		m->tagged = rnd(2);       /* as a VLAN spec asks (flow.c); without: TCI 0 too */
		break;
	case S_IPV4_NET:
		m->dip = htobe32(ips[rnd(3)]);
		m->dip_m = htobe32(0xffff0000);
		m->etype = htobe16(0x0800);
		m->etype_m = 0xffff;
		break;
	case S_5TUPLE:
		m->sip = htobe32(ips[rnd(3)]);
		m->sip_m = 0xffffffff;
		m->proto = 17;
		m->proto_m = 0xff;
		m->l4 = 17;
		m->sport = htobe16(ports[rnd(3)]);
		m->sport_m = 0xffff;
		m->dport = htobe16(ports[rnd(3)]);
		m->dport_m = 0xffff;
		/* fall through */
	case S_IPV4_DST:
		m->dip = htobe32(ips[rnd(3)]);
		m->dip_m = 0xffffffff;
		m->etype = htobe16(0x0800);
		m->etype_m = 0xffff;
		break;
	case S_UDP_DPORT:
		m->l4 = 17;
		m->dport = htobe16(ports[rnd(3)]);
		m->dport_m = 0xffff;
		break;
	case S_TCP_SPORT:
		m->l4 = 6;
		m->sport = htobe16(ports[rnd(3)]);
		m->sport_m = 0xffff;
		break;
	case S_IPV6_DST:
		m->dip6[0] = 0xfd;
		m->dip6[15] = (uint8_t)(1 + rnd(2));
		memset(m->dip6_m, 0xff, 16);
		m->etype = htobe16(0x86dd);
		m->etype_m = 0xffff;
		break;
	case S_TOS_TTL:
		m->tos = (uint8_t)(rnd(2) << 2);
		m->tos_m = 0xfc;
		m->ttl = 64;
		m->ttl_m = (uint8_t)(rnd(2) ? 0xff : 0);
		break;
	default:
		break;
	}
}

/* A frame of random layers from the pools; its length. */
static uint32_t frame_make(uint8_t *f)
{
	uint32_t off = 14, ipoff, l4off;
	uint8_t l4 = (uint8_t)(rnd(3) == 0 ? 6 : rnd(4) == 0 ? 1 : 17);
	int kind = (int)rnd(10), tags = rnd(4) == 0 ? (int)rnd(3) : 0;

	memset(f, 0, 256);
	memcpy(f, macs[rnd(4)], 6);
	memcpy(f + 6, macs[rnd(2)], 6);
	if (kind == 0)
		return rnd(14);                              /* too short for Ethernet */
	for (int t = 0; t < tags; t++) {
		uint16_t tci = vlans[rnd(2)];

		f[off - 2] = t == 0 && rnd(2) ? 0x88 : 0x81;
		f[off - 1] = t == 0 && f[off - 2] == 0x88 ? 0xa8 : 0x00;
		f[off] = (uint8_t)(tci >> 8);
		f[off + 1] = (uint8_t)tci;
		off += 4;
	}
	ipoff = off;
	if (kind <= 5) {                                     /* IPv4 */
		uint32_t s = ips[rnd(3)], d = ips[rnd(3)];

		f[off - 2] = 0x08;
		f[off - 1] = 0x00;
		f[off] = 0x45;
		f[off + 1] = (uint8_t)(rnd(2) << 2);
		f[off + 3] = 60;
		if (rnd(8) == 0)
			f[off + 6] = 0x20;                       /* a fragment */
		f[off + 8] = rnd(2) ? 64 : 1;
		f[off + 9] = l4;
		for (int i = 0; i < 4; i++) {
			f[off + 12 + i] = (uint8_t)(s >> (24 - 8 * i));
			f[off + 16 + i] = (uint8_t)(d >> (24 - 8 * i));
		}
		l4off = off + 20;
	} else if (kind <= 8) {                              /* IPv6, maybe with a hop-by-hop */
		bool ext = rnd(3) == 0;

		f[off - 2] = 0x86;
		f[off - 1] = 0xdd;
		f[off] = (uint8_t)(0x60 | rnd(2));
		f[off + 1] = (uint8_t)(rnd(2) << 6);
		f[off + 5] = 40;
		f[off + 6] = ext ? 0 : l4;
		f[off + 7] = 64;
		f[off + 8] = 0xfd;
		f[off + 23] = (uint8_t)(1 + rnd(2));
		f[off + 24] = 0xfd;
		f[off + 39] = (uint8_t)(1 + rnd(2));
		l4off = off + 40;
		if (ext) {
			f[l4off] = l4;
			l4off += 8;
		}
	} else {                                             /* ARP */
		f[off - 2] = 0x08;
		f[off - 1] = 0x06;
		return off + 28;
	}
	(void)ipoff;
	for (int i = 0; i < 2; i++) {
		uint16_t p = ports[rnd(3)];

		f[l4off + 2 * i] = (uint8_t)(p >> 8);
		f[l4off + 2 * i + 1] = (uint8_t)p;
	}
	if (l4 == 6)
		f[l4off + 12] = 0x50;
	return l4off + (rnd(6) == 0 ? 4 : 20);               /* sometimes cut inside L4 */
}

/* ---- a driver that steers rules in hardware (it only says yes, or no now and then) ---- */

static int steered, steer_refused;

static int fake_steer(struct dpv_port *port, const struct dpv_flow_match *m, uint16_t queue,
		      void **handle)
{
	static char rule;

	if (queue == 0 || queue >= 4)
		return -EINVAL;
	if (rnd(4) == 0) {
		steer_refused++;
		return -EOPNOTSUPP;
	}
	steered++;
	*handle = &rule;
	return 0;
}

static void fake_unsteer(struct dpv_port *port, void *handle)
{
}

static void fake_queues(struct dpv_port *port, uint16_t *nb_tx, uint16_t *nb_rx)
{
	*nb_tx = *nb_rx = 4;
}

static const struct dpv_driver_ops fake_ops = { .name = "fake", .port_queues = fake_queues,
						.flow_steer = fake_steer,
						.flow_unsteer = fake_unsteer };

/* ---- the device's rules, as flow.c lists them ---- */

static struct dpv_flow flows[40];

static void add_flow(struct dpv_device *dev, struct dpv_flow *f)
{
	struct dpv_flow *at;

	TAILQ_FOREACH(at, &dev->raw->flows, next)
		if (at->priority > f->priority)
			break;
	if (at != NULL)
		TAILQ_INSERT_BEFORE(at, f, next);
	else
		TAILQ_INSERT_TAIL(&dev->raw->flows, f, next);
}

/* A rule set: @nrules NORMAL rules of @nshapes shapes, and the other kinds at random. */
static void rules_make(struct dpv_device *dev, int nrules, int nshapes)
{
	enum shape shapes[3];
	int n = 0;

	TAILQ_INIT(&dev->raw->flows);
	for (int s = 0; s < nshapes; s++)
		shapes[s] = (enum shape)rnd(S_SHAPES);
	for (int r = 0; r < nrules; r++) {
		struct dpv_flow *f = &flows[n++];

		memset(f, 0, sizeof(*f));
		f->hw_want = -1;
		f->type = IBV_FLOW_ATTR_NORMAL;
		f->qp = QP(rnd(NQP));
		f->priority = (uint16_t)rnd(4);
		f->dont_trap = rnd(3) == 0;
		rule_of(shapes[rnd((uint32_t)nshapes)], &f->m);
		add_flow(dev, f);
	}
	for (int k = 0, extra = (int)rnd(5); k < extra; k++) {
		static const enum ibv_flow_attr_type types[3] = { IBV_FLOW_ATTR_ALL_DEFAULT,
			IBV_FLOW_ATTR_MC_DEFAULT, IBV_FLOW_ATTR_SNIFFER };
		struct dpv_flow *f = &flows[n++];

		memset(f, 0, sizeof(*f));
		f->hw_want = -1;
		f->type = types[rnd(3)];
		f->qp = QP(rnd(NQP));
		f->priority = (uint16_t)rnd(4);
		add_flow(dev, f);
	}
}

/* One rule set against a few bursts of random frames. */
static void one_set(struct dpv_device *dev)
{
	static uint8_t data[DPV_RX_BURST][256];
	static struct rte_mbuf mb[DPV_RX_BURST];
	struct rte_mbuf *frames[DPV_RX_BURST];
	static struct dpv_rx_class c;

	if (dpv__steer_rebuild(dev) != 0) {
		failures++;
		printf("FAIL: rebuild\n");
		return;
	}
	for (int burst = 0; burst < 8; burst++) {
		uint16_t n = (uint16_t)(1 + rnd(DPV_RX_BURST));
		uint64_t taken = rnd(4) == 0 ? ((uint64_t)rnd(1u << 16) << 16 | rnd(1u << 16)) : 0;
		unsigned int unsteered, want_unsteered = 0;

		for (uint16_t i = 0; i < n; i++) {
			/* repeat the previous frame now and then (the walk reuses its set) */
			uint32_t len = i > 0 && rnd(3) == 0 ? mb[i - 1].data_len : 0;

			if (len > 0)
				memcpy(data[i], data[i - 1], 256);
			else
				len = frame_make(data[i]);
			memset(&mb[i], 0, sizeof(mb[i]));
			mb[i].buf_addr = data[i];
			mb[i].data_off = 0;
			mb[i].data_len = (uint16_t)len;
			mb[i].pkt_len = len;
			mb[i].nb_segs = 1;
			frames[i] = &mb[i];
		}
		unsteered = dpv__steer_classify(dev, (uint16_t)rnd(4), frames, n, taken, &c);
		for (uint16_t i = 0; i < n; i++) {
			int want[NQP], got[NQP] = { 0 }, total = 0;
			const struct dpv_rx_set *s = c.to[i];
			bool tk = taken >> i & 1;

			expected(dev, data[i], mb[i].data_len, tk, want);
			for (int q = 0; q < NQP; q++)
				total += want[q];
			want_unsteered += total == 0 && !tk;
			if (total > DPV_RX_FANOUT)
				continue;                       /* cut at the fan-out: not compared */
			for (uint16_t k = 0; s != NULL && k < s->n; k++)
				got[(char (*)[64])s->qp[k] - qp_mem]++;
			checks++;
			if (memcmp(want, got, sizeof(want)) != 0 || (s != NULL && s->n == 0)) {
				failures++;
				if (failures < 10) {
					printf("FAIL: frame %u (len %u, taken %d):", i, mb[i].data_len, tk);
					for (int q = 0; q < NQP; q++)
						if (want[q] != got[q])
							printf(" QP %d want %d got %d", q, want[q], got[q]);
					printf("\n");
				}
			}
			if (c.uniform != NULL && c.to[i] != c.uniform) {
				failures++;
				printf("FAIL: uniform set, frame %u has another\n", i);
			}
		}
		checks++;
		if (unsteered != want_unsteered) {
			failures++;
			printf("FAIL: unsteered %u, want %u\n", unsteered, want_unsteered);
		}
	}
}

int main(void)
{
	static struct dpv_device dev;

	dpv__raw_flows_init(&dev);
	dpv__spinlock_init(&dev.rx_lock);
	dev.ops = &fake_ops;
	if (dpv__device_rx_init(&dev) != 0)
		return 1;
	/* what RAW's start hook does once the port's queues are known */
	dev.raw->rxq_owner = calloc(dev.nb_rxq, sizeof(*dev.raw->rxq_owner));
	dev.raw->nb_owner = dev.nb_rxq;
	for (int iter = 0; iter < 3000; iter++) {
		int kind = iter % 3;

		/* one mask for every NORMAL rule (exact), several (walk), none (defaults) */
		rules_make(&dev, kind == 2 ? 0 : 1 + (int)rnd(30), kind == 0 ? 1 : 2 + (int)rnd(2));
		one_set(&dev);
	}
	TAILQ_INIT(&dev.raw->flows);
	dpv__steer_rebuild(&dev);                   /* frees the last table */
	printf("rules steered to a queue %d times, refused %d times\n", steered, steer_refused);
	checks++;
	if (steered == 0) {
		failures++;
		printf("FAIL: no rule went to a queue of its own\n");
	}
	free(dev.raw->rxq_owner);
	free(dev.raw);
	free(dev.rxqs);
	printf("steer: %d checks passed, %d failed\n", checks - failures, failures);
	return failures != 0;
}
