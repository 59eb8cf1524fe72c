/* SPDX-License-Identifier: BSD-3-Clause */
/* Steering tables: the device's flow rules (flow.c) compiled into what the receive path reads
 * for each burst. A table is immutable: every change of the rules builds a new one (under the
 * flows mutex), publishes it and frees the old one once no receive burst reads it any more
 * (dpv__device_rx_quiesce waits for the port's receive locks). A burst therefore takes no lock
 * of its own and walks no list. Three ways to find a frame's QPs, the first that applies:
 *   - no NORMAL rule: the SNIFFER and ALL_DEFAULT QPs (and MC_DEFAULT ones for multicast), a
 *     set chosen by one bit of the destination MAC;
 *   - NORMAL rules that all look at the same fields with the same masks (a destination MAC per
 *     QP, a 5-tuple per QP): an exact-match hash on those fields gives the set, computed when
 *     the table was built;
 *   - otherwise the rules are tried in priority order; a frame whose fields (the ones any rule
 *     looks at) equal the previous frame's gets its set without trying them again.
 * Each gives what trying the rules in order gives (verbs' meaning, flow.c's header): a frame
 * goes to every SNIFFER QP, to the QP of the first matching NORMAL rule and of the DONT_TRAP
 * ones before it, and, if no rule without DONT_TRAP matched, to the ALL_DEFAULT QPs (and the
 * MC_DEFAULT ones for a multicast destination). In the hash, a frame whose masked fields equal
 * the previous frame's (a burst of one flow) takes its set without a lookup.
 * Where the driver steers in hardware (flow_steer), a QP with a rule nothing earlier can take
 * a frame from gets a receive queue of its own and that rule an rte_flow rule; the table keeps,
 * per queue, the rules steered there: a frame on that queue that one of them matches goes to
 * their QP (and the SNIFFERs) at once, any other is classified as above, so what the hardware
 * does never changes where a frame goes (unit test steer). */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#if defined(__SSE2__)
#include <emmintrin.h>
#endif

#include <rte_mbuf.h>
#include <rte_random.h>

#include "raw_priv.h"

/* The header fields rules look at, as 9 words; byte offsets of each field (K_IPV4, K_IPV6,
 * K_TAGGED: 1 when the frame has that header): */
#define KEY_WORDS 9
enum {
	K_DMAC = 0, K_ETYPE = 6, K_SMAC = 8, K_VLAN = 14, K_SIP = 16, K_DIP = 20, K_PROTO = 24,
	K_TOS = 25, K_TTL = 26, K_L4 = 27, K_SPORT = 28, K_DPORT = 30, K_IPV4 = 32, K_IPV6 = 33,
	K_TAGGED = 34, K_SIP6 = 40, K_DIP6 = 56,
};

struct key {
	uint64_t w[KEY_WORDS];
};

/* A NORMAL rule: a frame matches when (key & mask) == val in every word. */
struct rule {
	struct key val, mask;
	struct dpv_qp *qp;
	struct dpv_flow *flow;
	bool dont_trap;
	bool alone;                       /* no earlier rule takes a frame it takes (below) */
};

/* A receive queue its QP's rules are steered to in hardware: a frame there that one of them
 * matches (checked: the hardware only hints) goes to set, the other rules not tried. */
struct queue_hint {
	const struct rule **rules;
	unsigned int nb;
	const struct dpv_rx_set *set;
};

/* An exact-match slot: the rules' common mask applied to a frame gives k. */
struct slot {
	struct key k;
	const struct dpv_rx_set *set[2];  /* [multicast destination] */
	int first, last;                  /* while building: its rules, chained by rule_next */
	bool used;
};

enum steer_mode { STEER_DEFAULT, STEER_EXACT, STEER_WALK };

struct chunk {
	struct chunk *next;
	size_t used, size;
	uint8_t mem[];
};

struct dpv_steer {
	enum steer_mode mode;
	bool parse;                       /* rules look past the MAC addresses: parse headers */
	const struct dpv_rx_set *none[2]; /* what no rule steered: [multicast destination] */
	const struct dpv_rx_set *sniff;   /* what another transport took */
	uint8_t words[KEY_WORDS];         /* the key words some rule looks at */
	unsigned int nb_words;
	/* STEER_EXACT */
	struct key mask;
	struct slot *slots;
	uint32_t slot_mask;
	uint64_t seed;
	/* STEER_WALK: the NORMAL rules in order, and who gets what they do not steer */
	struct rule *rules;
	unsigned int nb_rules;
	struct dpv_qp **sniffers, **defaults, **mc_defaults;
	unsigned int nb_sniffers, nb_defaults, nb_mc_defaults;
	struct queue_hint *hints;         /* by receive queue (nb_hints of them), or NULL */
	uint16_t nb_hints;
	struct chunk *mem;                /* sets and arrays of this table */
};

/* ---- building ---- */

/* Zeroed memory on cache lines of its own: every receive thread reads the table, and a line
 * it shared with something one thread writes would move at every write. */
static void *line_alloc(size_t len)
{
	void *p;

	len = RTE_ALIGN_CEIL(len, RTE_CACHE_LINE_SIZE);
	p = aligned_alloc(RTE_CACHE_LINE_SIZE, len);
	if (p != NULL)
		memset(p, 0, len);
	return p;
}

static void *steer_alloc(struct dpv_steer *st, size_t len)
{
	struct chunk *c = st->mem;

	len = RTE_ALIGN_CEIL(len, sizeof(void *));
	if (c == NULL || c->size - c->used < len) {
		size_t size = RTE_MAX(len, (size_t)4096);

		c = line_alloc(sizeof(*c) + size);
		if (c == NULL)
			return NULL;
		c->next = st->mem;
		c->used = 0;
		c->size = size;
		st->mem = c;
	}
	c->used += len;
	return c->mem + c->used - len;
}

static void steer_free(struct dpv_steer *st)
{
	if (st == NULL)
		return;
	while (st->mem != NULL) {
		struct chunk *c = st->mem;

		st->mem = c->next;
		free(c);
	}
	free(st->slots);
	free(st);
}

/* A QP list being gathered into a set. */
struct gather {
	struct dpv_qp *qp[DPV_RX_FANOUT];
	unsigned int n;
};

static void gather_add(struct gather *g, struct dpv_qp *const *qp, unsigned int n)
{
	for (unsigned int i = 0; i < n && g->n < DPV_RX_FANOUT; i++)
		g->qp[g->n++] = qp[i];
}

static bool has_dup(struct dpv_qp *const *qp, unsigned int n)
{
	for (unsigned int i = 1; i < n; i++)
		for (unsigned int j = 0; j < i; j++)
			if (qp[i] == qp[j])
				return true;
	return false;
}

/* The set of @g, kept in the table (NULL when empty, or -ENOMEM in *@rc). */
static const struct dpv_rx_set *set_make(struct dpv_steer *st, const struct gather *g, int *rc)
{
	struct dpv_rx_set *s;
	struct dpv_qp **qp;

	if (g->n == 0)
		return NULL;
	s = steer_alloc(st, sizeof(*s));
	qp = s ? steer_alloc(st, g->n * sizeof(*qp)) : NULL;
	if (qp == NULL) {
		*rc = -ENOMEM;
		return NULL;
	}
	memcpy(qp, g->qp, g->n * sizeof(*qp));
	s->n = (uint16_t)g->n;
	s->qp = qp;
	s->dup = has_dup(qp, g->n);
	return s;
}

/* What nobody steered goes to: the sniffers, then the defaults (MC_DEFAULT ones too for a
 * multicast destination). */
static void gather_unsteered(const struct dpv_steer *st, struct gather *g, bool mcast)
{
	gather_add(g, st->defaults, st->nb_defaults);
	if (mcast)
		gather_add(g, st->mc_defaults, st->nb_mc_defaults);
}

static void put(struct key *val, struct key *mask, unsigned int off, const void *v,
		const void *m, size_t n)
{
	uint8_t *pv = (uint8_t *)val->w + off, *pm = (uint8_t *)mask->w + off;
	const uint8_t *bv = v, *bm = m;

	for (size_t i = 0; i < n; i++) {
		pv[i] = bv[i] & bm[i];
		pm[i] = bm[i];
	}
}

/* A rule's match in the key's layout (the same test as trying struct dpv_flow_match field by
 * field: an IPv4 address or spec asks for an IPv4 header, an IPv6 spec for an IPv6 one, a
 * VLAN mask for a tag, a TCP/UDP spec for that L4 header). */
static void rule_key(const struct dpv_flow_match *m, struct key *val, struct key *mask)
{
	static const uint8_t ff = 0xff;
	uint8_t one = 1;

	memset(val, 0, sizeof(*val));
	memset(mask, 0, sizeof(*mask));
	put(val, mask, K_DMAC, m->dmac, m->dmac_m, 6);
	put(val, mask, K_ETYPE, &m->etype, &m->etype_m, 2);
	put(val, mask, K_SMAC, m->smac, m->smac_m, 6);
	put(val, mask, K_VLAN, &m->vlan, &m->vlan_m, 2);
	put(val, mask, K_SIP, &m->sip, &m->sip_m, 4);
	put(val, mask, K_DIP, &m->dip, &m->dip_m, 4);
	put(val, mask, K_PROTO, &m->proto, &m->proto_m, 1);
	put(val, mask, K_TOS, &m->tos, &m->tos_m, 1);
	put(val, mask, K_TTL, &m->ttl, &m->ttl_m, 1);
	put(val, mask, K_SIP6, m->sip6, m->sip6_m, 16);
	put(val, mask, K_DIP6, m->dip6, m->dip6_m, 16);
	if (m->sip_m != 0 || m->dip_m != 0 || m->l3 == 4)
		put(val, mask, K_IPV4, &one, &ff, 1);
	if (m->l3 == 6)
		put(val, mask, K_IPV6, &one, &ff, 1);
	if (m->tagged)
		put(val, mask, K_TAGGED, &one, &ff, 1);
	if (m->l4 != 0) {
		put(val, mask, K_L4, &m->l4, &ff, 1);
		put(val, mask, K_SPORT, &m->sport, &m->sport_m, 2);
		put(val, mask, K_DPORT, &m->dport, &m->dport_m, 2);
	}
}

static bool key_eq(const struct dpv_steer *st, const struct key *a, const struct key *b)
{
	for (unsigned int i = 0; i < st->nb_words; i++)
		if (a->w[st->words[i]] != b->w[st->words[i]])
			return false;
	return true;
}

static uint32_t key_hash(const struct dpv_steer *st, const struct key *k)
{
	uint64_t h = st->seed;

	for (unsigned int i = 0; i < st->nb_words; i++) {
		h = (h ^ k->w[st->words[i]]) * 0x9e3779b97f4a7c15ull;
		h ^= h >> 29;
	}
	return (uint32_t)(h ^ (h >> 32));
}

/* The slot of @k: its own, or the empty one where it would go. */
static struct slot *slot_find(const struct dpv_steer *st, const struct key *k)
{
	for (uint32_t i = key_hash(st, k);; i++) {
		struct slot *s = &st->slots[i & st->slot_mask];

		if (!s->used || key_eq(st, &s->k, k))
			return s;
	}
}

/* The sets of one exact-match slot: its rules in order up to the first without DONT_TRAP. */
static int slot_sets(struct dpv_steer *st, struct slot *s, const int *rule_next)
{
	int rc = 0;

	for (int mc = 0; mc < 2; mc++) {
		struct gather g = { .n = 0 };
		bool steered = false;

		gather_add(&g, st->sniffers, st->nb_sniffers);
		for (int r = s->first; r >= 0 && !steered; r = rule_next[r]) {
			gather_add(&g, &st->rules[r].qp, 1);
			steered = !st->rules[r].dont_trap;
		}
		if (!steered)
			gather_unsteered(st, &g, mc);
		if (mc == 1 && (steered || st->nb_mc_defaults == 0))
			s->set[1] = s->set[0];       /* the same QPs: the same set */
		else
			s->set[mc] = set_make(st, &g, &rc);
	}
	return rc;
}

/* Every rule with the same mask: one slot per distinct value, its sets made in advance. */
static int build_exact(struct dpv_steer *st)
{
	uint32_t size = rte_align32pow2(st->nb_rules * 2 + 16);
	int *rule_next = malloc(st->nb_rules * sizeof(int));
	int rc = 0;

	st->slots = line_alloc(size * sizeof(*st->slots));
	if (st->slots == NULL || rule_next == NULL) {
		free(rule_next);
		return -ENOMEM;
	}
	st->slot_mask = size - 1;
	st->seed = rte_rand();
	st->mask = st->rules[0].mask;
	for (unsigned int r = 0; r < st->nb_rules; r++) {
		struct slot *s = slot_find(st, &st->rules[r].val);

		rule_next[r] = -1;
		if (!s->used) {
			s->used = true;
			s->k = st->rules[r].val;
			s->first = (int)r;
		} else {
			rule_next[s->last] = (int)r;
		}
		s->last = (int)r;
	}
	for (uint32_t i = 0; i < size && rc == 0; i++)
		if (st->slots[i].used)
			rc = slot_sets(st, &st->slots[i], rule_next);
	free(rule_next);
	return rc;
}

static struct dpv_qp **qp_array(struct dpv_steer *st, unsigned int n)
{
	return n == 0 ? NULL : steer_alloc(st, n * sizeof(struct dpv_qp *));
}

/* The rules by kind, in list order; which key words they look at; the mode. */
static int gather_rules(struct dpv_steer *st, struct dpv_device *dev)
{
	unsigned int n[4] = { 0 };
	struct dpv_flow *f;
	struct key any = { { 0 } };
	bool same = true;

	TAILQ_FOREACH(f, &dev->raw->flows, next)
		n[f->type]++;
	st->rules = n[IBV_FLOW_ATTR_NORMAL] ? steer_alloc(st, n[IBV_FLOW_ATTR_NORMAL] *
							  sizeof(struct rule)) : NULL;
	st->defaults = qp_array(st, n[IBV_FLOW_ATTR_ALL_DEFAULT]);
	st->mc_defaults = qp_array(st, n[IBV_FLOW_ATTR_MC_DEFAULT]);
	st->sniffers = qp_array(st, n[IBV_FLOW_ATTR_SNIFFER]);
	if ((n[IBV_FLOW_ATTR_NORMAL] && !st->rules) ||
	    (n[IBV_FLOW_ATTR_ALL_DEFAULT] && !st->defaults) ||
	    (n[IBV_FLOW_ATTR_MC_DEFAULT] && !st->mc_defaults) ||
	    (n[IBV_FLOW_ATTR_SNIFFER] && !st->sniffers))
		return -ENOMEM;
	TAILQ_FOREACH(f, &dev->raw->flows, next) {
		switch (f->type) {
		case IBV_FLOW_ATTR_NORMAL: {
			struct rule *r = &st->rules[st->nb_rules++];

			rule_key(&f->m, &r->val, &r->mask);
			r->qp = f->qp;
			r->flow = f;
			r->dont_trap = f->dont_trap;
			same = same && memcmp(&r->mask, &st->rules[0].mask, sizeof(r->mask)) == 0;
			for (int w = 0; w < KEY_WORDS; w++)
				any.w[w] |= r->mask.w[w];
			break;
		}
		case IBV_FLOW_ATTR_ALL_DEFAULT:
			st->defaults[st->nb_defaults++] = f->qp;
			break;
		case IBV_FLOW_ATTR_MC_DEFAULT:
			st->mc_defaults[st->nb_mc_defaults++] = f->qp;
			break;
		case IBV_FLOW_ATTR_SNIFFER:
			st->sniffers[st->nb_sniffers++] = f->qp;
			break;
		default:        /* ibv_create_flow took no other */
			DPV_WARN_ONCE(true, "flow of type %d", f->type);
			break;
		}
	}
	/* rules on the MAC addresses only (bytes 0-5 of words 0 and 1) need no parse */
	st->parse = (any.w[0] | any.w[1]) >> 48 != 0;
	for (int w = 0; w < KEY_WORDS; w++) {
		if (any.w[w] != 0)
			st->words[st->nb_words++] = (uint8_t)w;
		st->parse |= w > 1 && any.w[w] != 0;
	}
	st->mode = st->nb_rules == 0 ? STEER_DEFAULT : same ? STEER_EXACT : STEER_WALK;
	return 0;
}

/* ---- rules steered to queues of their own, in hardware ---- */

/* Can a frame match both @a and @b? (Where both look, their values agree.) */
static bool overlap(const struct rule *a, const struct rule *b)
{
	for (int w = 0; w < KEY_WORDS; w++)
		if ((a->val.w[w] ^ b->val.w[w]) & a->mask.w[w] & b->mask.w[w])
			return false;
	return true;
}

/* A rule without DONT_TRAP that no earlier rule of another QP (nor an earlier DONT_TRAP one)
 * can take a frame from: whatever it matches goes to its QP and the SNIFFERs, nowhere else,
 * so its frames can go to a queue of their own and skip the other rules there. */
static void find_alone(struct dpv_steer *st)
{
	for (unsigned int r = 0; r < st->nb_rules; r++) {
		struct rule *x = &st->rules[r];

		x->alone = !x->dont_trap;
		for (unsigned int e = 0; e < r && x->alone; e++) {
			const struct rule *y = &st->rules[e];

			if (overlap(x, y) && (y->qp != x->qp || y->dont_trap))
				x->alone = false;
		}
	}
}

static bool has_alone_rule(const struct dpv_steer *st, const struct dpv_qp *qp)
{
	for (unsigned int r = 0; r < st->nb_rules; r++)
		if (st->rules[r].qp == qp && st->rules[r].alone)
			return true;
	return false;
}

/* Queues 1.. of the port (0 stays everyone's) to QPs with rules that can be steered alone: a
 * QP keeps its queue while it has such a rule; each rule learns its queue (hw_want). */
static void assign_queues(struct dpv_steer *st, struct dpv_device *dev)
{
	uint16_t nb = RTE_MIN(dev->nb_rxq, dev->raw->nb_owner);

	for (uint16_t q = 1; q < nb; q++)
		if (dev->raw->rxq_owner[q] != NULL && !has_alone_rule(st, dev->raw->rxq_owner[q]))
			dev->raw->rxq_owner[q] = NULL;
	for (unsigned int r = 0; r < st->nb_rules; r++) {
		struct rule *x = &st->rules[r];
		uint16_t q, free_q = 0;

		x->flow->hw_want = -1;
		if (!x->alone)
			continue;
		for (q = 1; q < nb && dev->raw->rxq_owner[q] != x->qp; q++)
			if (free_q == 0 && dev->raw->rxq_owner[q] == NULL)
				free_q = q;
		if (q == nb && free_q != 0)
			dev->raw->rxq_owner[q = free_q] = x->qp;
		if (q < nb)
			x->flow->hw_want = q;
	}
}

/* The driver's rules made to follow hw_want. */
static void hw_sync(struct dpv_device *dev)
{
	struct dpv_flow *f;

	TAILQ_FOREACH(f, &dev->raw->flows, next) {
		if (f->type != IBV_FLOW_ATTR_NORMAL)
			continue;
		if (f->hw != NULL && f->hw_want != (int)f->hw_queue)
			dpv__steer_hw_drop(dev, f);
		if (f->hw == NULL && f->hw_want >= 0 &&
		    dev->ops->flow_steer(dev->port, &f->m, (uint16_t)f->hw_want, &f->hw) == 0)
			f->hw_queue = (uint16_t)f->hw_want;
	}
}

void dpv__steer_hw_drop(struct dpv_device *dev, struct dpv_flow *f)
{
	if (f->hw == NULL)
		return;
	dev->ops->flow_unsteer(dev->port, f->hw);
	f->hw = NULL;
}

/* The queue hints of a table: for each queue some rules are steered to, those rules. */
static int build_hints(struct dpv_steer *st, struct dpv_device *dev)
{
	int rc = 0;

	st->hints = steer_alloc(st, dev->nb_rxq * sizeof(*st->hints));
	if (st->hints == NULL)
		return -ENOMEM;
	memset(st->hints, 0, dev->nb_rxq * sizeof(*st->hints));
	st->nb_hints = dev->nb_rxq;
	for (uint16_t q = 1; q < dev->nb_rxq && rc == 0; q++) {
		struct queue_hint *h = &st->hints[q];
		struct gather g = { .n = 0 };

		for (unsigned int r = 0; r < st->nb_rules; r++)
			h->nb += st->rules[r].flow->hw != NULL && st->rules[r].flow->hw_queue == q;
		if (h->nb == 0)
			continue;
		h->rules = steer_alloc(st, h->nb * sizeof(*h->rules));
		if (h->rules == NULL)
			return -ENOMEM;
		h->nb = 0;
		for (unsigned int r = 0; r < st->nb_rules; r++)
			if (st->rules[r].flow->hw != NULL && st->rules[r].flow->hw_queue == q)
				h->rules[h->nb++] = &st->rules[r];
		gather_add(&g, st->sniffers, st->nb_sniffers);
		gather_add(&g, &h->rules[0]->qp, 1);
		h->set = set_make(st, &g, &rc);
	}
	return rc;
}

/* Steering in hardware where the port has it: queues assigned, the driver's rules made and
 * removed to match, the table told where they are. */
static int steer_hw(struct dpv_steer *st, struct dpv_device *dev)
{
	if (dev->ops == NULL || dev->ops->flow_steer == NULL || dev->nb_rxq < 2 ||
	    dev->raw->nb_owner != dev->nb_rxq)
		return 0;
	find_alone(st);
	assign_queues(st, dev);
	hw_sync(dev);
	return build_hints(st, dev);
}

static struct dpv_steer *steer_build(struct dpv_device *dev)
{
	struct dpv_steer *st = line_alloc(sizeof(*st));
	int rc;

	if (st == NULL)
		return NULL;
	rc = gather_rules(st, dev);
	for (int mc = 0; mc < 2 && rc == 0; mc++) {
		struct gather g = { .n = 0 };

		gather_add(&g, st->sniffers, st->nb_sniffers);
		gather_unsteered(st, &g, mc);
		if (mc == 1 && st->nb_mc_defaults == 0)
			st->none[1] = st->none[0];
		else
			st->none[mc] = set_make(st, &g, &rc);
	}
	if (rc == 0) {
		struct gather g = { .n = 0 };

		gather_add(&g, st->sniffers, st->nb_sniffers);
		st->sniff = set_make(st, &g, &rc);
	}
	if (rc == 0 && st->mode == STEER_EXACT)
		rc = build_exact(st);
	if (rc == 0)
		rc = steer_hw(st, dev);
	if (rc != 0) {
		steer_free(st);
		return NULL;
	}
	return st;
}

static void steer_publish(struct dpv_device *dev, struct dpv_steer *st)
{
	struct dpv_steer *old = dev->raw->steer;
	int sniffers = st != NULL ? (int)st->nb_sniffers : 0;

	/* The SNIFFER count tells the RoCE side whether a looped frame needs its ICRC (roce_rx.c)
	 * and is read a burst earlier than the table: it goes up before the table has the new
	 * sniffer (and every burst that read the old count has ended), down after no burst reads
	 * a table with the old one. */
	if (sniffers > __atomic_load_n(&dev->sniffers, __ATOMIC_RELAXED)) {
		__atomic_store_n(&dev->sniffers, sniffers, __ATOMIC_RELAXED);
		dpv__device_rx_quiesce(dev);
	}
	__atomic_store_n(&dev->raw->steer, st, __ATOMIC_RELEASE);
	dpv__device_rx_quiesce(dev);        /* no burst reads the old table any more */
	steer_free(old);
	__atomic_store_n(&dev->sniffers, sniffers, __ATOMIC_RELAXED);
}

int dpv__steer_rebuild(struct dpv_device *dev)
{
	struct dpv_steer *st = steer_build(dev);

	if (st == NULL)
		return -ENOMEM;
	steer_publish(dev, st);
	return 0;
}

void dpv__steer_rebuild_nofail(struct dpv_device *dev)
{
	struct dpv_steer *st = steer_build(dev);

	if (st == NULL)
		VERBS_LOG(ERR, "device %s: no memory for its steering table: frames go to no QP "
			  "until the next flow change", dev->ibdev.name);
	steer_publish(dev, st);
}

/* ---- classifying ---- */

/* The key of a frame's fields (as its first segment has them) and whether its destination is
 * multicast; @info filled when @parse. A frame too short for an Ethernet header has no
 * fields (all zero). */
static bool frame_key(const struct rte_mbuf *m, bool parse, struct key *k,
		      struct dpv_hdr_info *info)
{
	const uint8_t *h = rte_pktmbuf_mtod(m, const uint8_t *);
	uint32_t len = rte_pktmbuf_data_len(m);
	uint8_t *b = (uint8_t *)k->w;

	if (!parse) {
		if (len < 14) {
			k->w[0] = k->w[1] = 0;
			return false;
		}
		memcpy(&k->w[0], h, 8);        /* bytes 6-7 (not the EtherType) are masked off */
		memcpy(&k->w[1], h + 6, 8);    /* so are bytes 6-7 of this one */
		return h[0] & 1;
	}
	memset(k, 0, sizeof(*k));
	dpv__hdr_parse(h, len, info);
	if (info->l2_len == 0)
		return false;
	memcpy(b + K_DMAC, h, 6);
	memcpy(b + K_SMAC, h + 6, 6);
	b[K_ETYPE] = (uint8_t)(info->ethertype >> 8);     /* after the last VLAN tag */
	b[K_ETYPE + 1] = (uint8_t)info->ethertype;
	if (info->vlans > 0) {
		memcpy(b + K_VLAN, h + info->l2_len - 4, 2);
		b[K_TAGGED] = 1;
	}
	if (info->l3 == DPV_L3_IPV4) {
		const uint8_t *ip = h + info->l2_len;

		b[K_IPV4] = 1;
		memcpy(b + K_SIP, ip + 12, 8);                 /* source and destination */
		b[K_PROTO] = ip[9];
		b[K_TOS] = ip[1];
		b[K_TTL] = ip[8];
	} else if (info->l3 == DPV_L3_IPV6) {
		const uint8_t *ip = h + info->l2_len;

		b[K_IPV6] = 1;
		memcpy(b + K_SIP6, ip + 8, 32);                /* source and destination */
		b[K_PROTO] = info->l4_proto;                  /* after the extension headers */
		b[K_TOS] = (uint8_t)((ip[0] << 4) | (ip[1] >> 4));
		b[K_TTL] = ip[7];
	}
	if (info->l3 != DPV_L3_NONE && info->l4_len != 0) {
		b[K_L4] = info->l4_proto;
		memcpy(b + K_SPORT, h + info->l2_len + info->l3_len, 4);  /* both ports */
	}
	return h[0] & 1;
}

static bool rule_matches(const struct dpv_steer *st, const struct rule *r, const struct key *k)
{
	for (unsigned int i = 0; i < st->nb_words; i++) {
		unsigned int w = st->words[i];

		if ((k->w[w] & r->mask.w[w]) != r->val.w[w])
			return false;
	}
	return true;
}

/* The rules tried in order; the set built in @out. */
static const struct dpv_rx_set *walk(const struct dpv_steer *st, const struct key *k,
				     bool mcast, struct dpv_rx_set_buf *out)
{
	struct gather g = { .n = 0 };
	bool steered = false;

	gather_add(&g, st->sniffers, st->nb_sniffers);
	for (unsigned int r = 0; r < st->nb_rules && !steered; r++)
		if (rule_matches(st, &st->rules[r], k)) {
			gather_add(&g, &st->rules[r].qp, 1);
			steered = !st->rules[r].dont_trap;
		}
	if (!steered)
		gather_unsteered(st, &g, mcast);
	if (g.n == 0)
		return NULL;
	memcpy(out->room, g.qp, g.n * sizeof(g.qp[0]));
	out->set.n = (uint16_t)g.n;
	out->set.qp = out->room;
	out->set.dup = has_dup(out->room, g.n);
	return &out->set;
}

/* A frame on a queue some rules are steered to: their set if one of them matches it (no
 * other rule can take it then, find_alone), else NULL. */
static const struct dpv_rx_set *hinted(const struct dpv_steer *st, const struct queue_hint *h,
				       const struct key *k)
{
	for (unsigned int i = 0; h != NULL && i < h->nb; i++)
		if (rule_matches(st, h->rules[i], k))
			return h->set;
	return NULL;
}

/* Does frame @k (the rules' words of it) look like @prev to every rule? */
static bool same_fields(const struct dpv_steer *st, const struct key *k, bool mcast,
			const struct key *prev, bool prev_mcast)
{
	return mcast == prev_mcast && key_eq(st, k, prev);
}

static void classify_walk(const struct dpv_steer *st, const struct queue_hint *h,
			  struct rte_mbuf **frames, uint16_t n, uint64_t taken, struct dpv_rx_class *c)
{
	struct key k[2];                  /* this frame's fields and the last one's */
	bool mc[2];
	unsigned int cur = 0;
	int last = -1;                    /* the last frame classified (its key in k[cur ^ 1]) */

	for (uint16_t i = 0; i < n; i++) {
		if (taken >> i & 1) {
			c->to[i] = st->sniff;
			continue;
		}
		mc[cur] = frame_key(frames[i], st->parse, &k[cur], &c->info[i]);
		if ((c->to[i] = hinted(st, h, &k[cur])) != NULL)
			continue;
		if (last >= 0 && same_fields(st, &k[cur], mc[cur], &k[cur ^ 1], mc[cur ^ 1]))
			c->to[i] = c->to[last];
		else
			c->to[i] = walk(st, &k[cur], mc[cur], &c->built[i]);
		last = i;
		cur ^= 1;
	}
	if (st->parse)
		c->parsed = ~taken;
}

/* Without NORMAL rules: by the multicast bit alone (or nothing at all without MC_DEFAULT). */
static void classify_default(const struct dpv_steer *st, struct rte_mbuf **frames, uint16_t n,
			     struct dpv_rx_class *c)
{
	if (st->none[0] == st->none[1]) {
		for (uint16_t i = 0; i < n; i++)
			c->to[i] = st->none[0];
		return;
	}
	for (uint16_t i = 0; i < n; i++) {
		const struct rte_mbuf *m = frames[i];
		bool mc = rte_pktmbuf_data_len(m) >= 14 && (*rte_pktmbuf_mtod(m, const uint8_t *) & 1);

		c->to[i] = st->none[mc];
	}
}

/* The set of masked fields @k (multicast destination: @mc), by the hint or the hash. */
static const struct dpv_rx_set *exact_set(const struct dpv_steer *st,
					  const struct queue_hint *h, const struct key *k, bool mc)
{
	const struct dpv_rx_set *set = hinted(st, h, k);
	const struct slot *s;

	if (set != NULL)
		return set;
	s = slot_find(st, k);
	return s->used ? s->set[mc] : st->none[mc];
}

/* classify_exact for rules on one MAC address word (a destination MAC per QP): that word
 * read straight from the frame, no parse. */
static void classify_exact_mac(const struct dpv_steer *st, const struct queue_hint *h,
			       struct rte_mbuf **frames, uint16_t n, uint64_t taken,
			       struct dpv_rx_class *c)
{
	unsigned int w = st->words[0];
	uint64_t mask = st->mask.w[w], prev = 0;
	bool prev_mc = false;
	int last = -1;
	struct key k;

	for (uint16_t i = 0; i < n; i++) {
		const struct rte_mbuf *m = frames[i];
		const uint8_t *f = rte_pktmbuf_mtod(m, const uint8_t *);
		uint64_t v = 0;
		bool mc = false;

		if (taken >> i & 1)
			continue;                 /* SNIFFERs only (below) */
		if (rte_pktmbuf_data_len(m) >= 14) {     /* shorter: no fields (all zero) */
			memcpy(&v, f + (w == 0 ? 0 : 6), 8);
			v &= mask;
			mc = f[0] & 1;
		}
		if (last >= 0 && v == prev && mc == prev_mc) {
			c->to[i] = c->to[last];
			continue;
		}
		k.w[w] = v;
		c->to[i] = exact_set(st, h, &k, mc);
		prev = v;
		prev_mc = mc;
		last = i;
	}
}

/* One mask for every rule: the masked fields looked up; a frame with the same masked fields
 * as the previous one (a burst of one flow) takes its set without a lookup. */
static void classify_exact(const struct dpv_steer *st, const struct queue_hint *h,
			   struct rte_mbuf **frames, uint16_t n, uint64_t taken, struct dpv_rx_class *c)
{
	if (!st->parse && st->nb_words == 1) {
		classify_exact_mac(st, h, frames, n, taken, c);
		return;
	}
	struct key k, prev;
	bool mc, prev_mc = false;
	int last = -1;

	for (uint16_t i = 0; i < n; i++) {
		if (taken >> i & 1)
			continue;                 /* SNIFFERs only (below) */
		mc = frame_key(frames[i], st->parse, &k, &c->info[i]);
		for (unsigned int j = 0; j < st->nb_words; j++)
			k.w[st->words[j]] &= st->mask.w[st->words[j]];
		if (last >= 0 && mc == prev_mc && key_eq(st, &k, &prev))
			c->to[i] = c->to[last];
		else
			c->to[i] = exact_set(st, h, &k, mc);
		for (unsigned int j = 0; j < st->nb_words; j++)    /* word by word: a struct */
			prev.w[st->words[j]] = k.w[st->words[j]];  /* copy stalls on the stores */
		prev_mc = mc;
		last = i;
	}
	if (st->parse)
		c->parsed = ~0ull;
}

/* @to[0..@n) = @s, two at a time (the compiler makes one store per entry of a loop) */
static inline void set_all(const struct dpv_rx_set **to, const struct dpv_rx_set *s, uint16_t n)
{
	const struct dpv_rx_set **p = to, **end = to + n;
#if defined(__SSE2__) && UINTPTR_MAX == UINT64_MAX       /* two pointers in 16 bytes */
	__m128i two = _mm_set1_epi64x((long long)(uintptr_t)s);

	for (; p + 2 <= end; p += 2)
		_mm_storeu_si128((__m128i *)(void *)p, two);
#endif
	for (; p < end; p++)
		*p = s;
}

unsigned int dpv__steer_classify(struct dpv_device *dev, uint16_t queue, struct rte_mbuf **frames,
				 uint16_t n, uint64_t taken, struct dpv_rx_class *c)
{
	const struct dpv_steer *st = __atomic_load_n(&dev->raw->steer, __ATOMIC_ACQUIRE);
	const struct queue_hint *h = NULL;
	const struct dpv_rx_set *first;
	unsigned int unsteered = 0;
	bool same = true;

	c->parsed = 0;
	if (st != NULL && st->mode == STEER_DEFAULT && st->none[0] == st->none[1] && taken == 0) {
		/* the common case of a QP taking everything: no frame to look at */
		set_all(c->to, st->none[0], n);
		c->uniform = st->none[0];
		return st->none[0] == NULL ? n : 0;
	}
	if (st == NULL) {
		for (uint16_t i = 0; i < n; i++)
			c->to[i] = NULL;
	} else if (st->mode == STEER_WALK) {
		if (queue < st->nb_hints && st->hints[queue].nb > 0)
			h = &st->hints[queue];
		classify_walk(st, h, frames, n, taken, c);
	} else {
		if (queue < st->nb_hints && st->hints[queue].nb > 0)
			h = &st->hints[queue];
		if (st->mode == STEER_DEFAULT)
			classify_default(st, frames, n, c);
		else
			classify_exact(st, h, frames, n, taken, c);
		/* what another transport took, SNIFFERs only */
		for (uint64_t t = taken & (n < 64 ? (1ull << n) - 1 : ~0ull); t != 0; t &= t - 1)
			c->to[__builtin_ctzll(t)] = st->sniff;
		c->parsed &= ~taken;
	}
	first = n > 0 ? c->to[0] : NULL;
	for (uint16_t i = 0; i < n; i++) {
		unsteered += c->to[i] == NULL && !(taken >> i & 1);
		same &= c->to[i] == first;
	}
	c->uniform = same ? first : NULL;
	return unsteered;
}
