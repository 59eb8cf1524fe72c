/* SPDX-License-Identifier: BSD-3-Clause */
/* Receive queues spread in software (rx_spread): a port without RSS, or with fewer receive
 * queues than configured, still gives the layer above queues_per_port receive queues, each
 * holding whole flows. Whichever poller finds its software queue short of a burst and the
 * drain lock free drains the hardware queues, hashing each frame on its IP/UDP/TCP tuple into
 * the ring of one software queue: single producer (the drain lock's holder), single consumer
 * (the queue's one poller, which the layer above guarantees).
 *
 * Exactly once and in order per flow (while the port keeps a flow on one hardware queue). A
 * frame whose ring is full is dropped and counted (rx_spread_qN_dropped), as an RSS queue
 * drops: a thread that falls behind loses its own flows and holds up no other
 * (doc/performance.md, "Queues spread in software").
 *
 * The hash is symmetric (addresses and ports XORed before mixing: both directions on one
 * queue) and cheap, not Toeplitz: nothing needs to predict a NIC's result here. Non-IP
 * frames go to queue 0, as RSS sends what it cannot hash; IP fragments hash on the addresses
 * only. Everything read is bounds-checked: the frames are untrusted. */
#include <errno.h>
#include <netinet/in.h>
#include <stdio.h>
#include <string.h>

#include <rte_byteorder.h>
#include <rte_ethdev.h>
#include <rte_malloc.h>
#include <rte_mbuf.h>

#include "ethdev_priv.h"

#define SPREAD_BURST 32

/* One software queue. The producer's line (tail, its cached view of head, the count) and the
 * consumer's line (head) are apart, so per burst one line moves each way. */
struct spread_ring {
	uint32_t tail;             /* written by the drain lock's holder (release) */
	uint32_t head_seen;        /* the producer's last look at head */
	uint64_t packets;          /* frames put on this queue (xstat) */
	uint64_t dropped;          /* frames for it that found it full (xstat) */
	uint32_t head __rte_cache_aligned;   /* written by the queue's poller (release) */
	struct rte_mbuf *slot[] __rte_cache_aligned;
};

struct dpv_spread {
	uint16_t nb_sw, nb_hw;
	uint32_t mask;             /* ring size - 1 */
	struct spread_ring *ring[DPV_SPREAD_MAX];
	/* the drainer's: written once per drain, read by every poller */
	dpv_spinlock_t drain_lock __rte_cache_aligned;
	uint16_t next_hw;          /* the hardware queue drained first next time */
	uint64_t drains;
};

static inline uint16_t be16_at(const uint8_t *b)
{
	return (uint16_t)(b[0] << 8 | b[1]);
}

static inline uint32_t u32_at(const uint8_t *b)
{
	uint32_t v;

	memcpy(&v, b, 4);
	return v;
}

/* The symmetric flow hash of the frame at @b (@len bytes); 0 means "not IP" (queue 0). */
uint32_t dpv__eth_flow_hash(const uint8_t *b, uint32_t len)
{
	uint32_t off = 12, addr = 0, ports = 0, l4 = 0, proto;
	uint16_t type;

	if (len < 14)
		return 0;
	type = be16_at(b + off);
	for (int tags = 0; (type == RTE_ETHER_TYPE_VLAN || type == RTE_ETHER_TYPE_QINQ) && tags < 2;
	     tags++) {
		off += 4;
		if (off + 2 > len)
			return 0;
		type = be16_at(b + off);
	}
	off += 2;
	if (type == RTE_ETHER_TYPE_IPV4) {
		uint32_t ihl;

		if (off + 20 > len || (b[off] >> 4) != 4 || (ihl = (b[off] & 0xfu) * 4u) < 20)
			return 0;
		proto = b[off + 9];
		addr = u32_at(b + off + 12) ^ u32_at(b + off + 16);
		if ((be16_at(b + off + 6) & 0x3fff) == 0)   /* not a fragment: ports count */
			l4 = off + ihl;
	} else if (type == RTE_ETHER_TYPE_IPV6) {
		if (off + 40 > len || (b[off] >> 4) != 6)
			return 0;
		proto = b[off + 6];
		for (uint32_t i = 8; i < 40; i += 4)
			addr ^= u32_at(b + off + i);
		l4 = off + 40;           /* extension headers: the addresses only (below) */
	} else {
		return 0;
	}
	if (l4 != 0 && (proto == IPPROTO_TCP || proto == IPPROTO_UDP || proto == IPPROTO_SCTP) &&
	    l4 + 4 <= len)
		ports = be16_at(b + l4) ^ be16_at(b + l4 + 2);
	/* a multiply-xorshift mix of the XORed tuple (the same both ways) */
	uint32_t h = addr * 0x9e3779b1u ^ (ports << 8 | proto) * 0x85ebca77u;

	h ^= h >> 15;
	h *= 0xc2b2ae3du;
	h ^= h >> 13;
	return h | 1;            /* 0 stays "not IP" */
}

static inline uint16_t queue_of(const struct dpv_spread *s, const struct rte_mbuf *m)
{
	uint32_t h = dpv__eth_flow_hash(rte_pktmbuf_mtod(m, const uint8_t *), m->data_len);

	return h == 0 ? 0 : (uint16_t)(((uint64_t)h * s->nb_sw) >> 32);
}

static inline uint32_t ring_room(const struct dpv_spread *s, struct spread_ring *r)
{
	uint32_t used = r->tail - r->head_seen;

	/* room for all a drain may take: the consumer's line is not read (a stale head only
	 * understates the room, and a frame must not be dropped for that) */
	if (s->mask + 1 - used >= (uint32_t)SPREAD_BURST * s->nb_hw * s->nb_sw)
		return s->mask + 1 - used;
	r->head_seen = __atomic_load_n(&r->head, __ATOMIC_ACQUIRE);
	return s->mask + 1 - (r->tail - r->head_seen);
}

/* Under the drain lock: up to a burst per software queue from each hardware queue in turn;
 * a frame whose ring is full is dropped and counted. */

static void drain(struct dpv_port *p, struct dpv_spread *s)
{
	struct rte_mbuf *m[SPREAD_BURST], *drop[SPREAD_BURST];
	uint32_t tail[DPV_SPREAD_MAX], room[DPV_SPREAD_MAX], dropped[DPV_SPREAD_MAX] = { 0 };
	uint64_t moved = 0;
	unsigned int nd;

	for (uint16_t i = 0; i < s->nb_sw; i++) {
		tail[i] = s->ring[i]->tail;
		room[i] = ring_room(s, s->ring[i]);
	}
	for (uint32_t k = 0; k < (uint32_t)s->nb_hw * s->nb_sw; k++) {
		uint16_t hw = (uint16_t)((s->next_hw + k / s->nb_sw) % s->nb_hw), n;

		n = rte_eth_rx_burst(p->port_id, hw, m, SPREAD_BURST);
		nd = 0;
		for (uint16_t j = 0; j < n; j++) {
			uint16_t q = queue_of(s, m[j]);

			if (unlikely(room[q] == 0)) {
				drop[nd++] = m[j];
				dropped[q]++;
				continue;
			}
			room[q]--;
			s->ring[q]->slot[tail[q]++ & s->mask] = m[j];
		}
		if (unlikely(nd > 0))
			rte_pktmbuf_free_bulk(drop, nd);
		moved += n;
		if (n < SPREAD_BURST)      /* that queue ran dry: on to the next */
			k = (k / s->nb_sw + 1) * s->nb_sw - 1;
	}
	s->next_hw = (uint16_t)((s->next_hw + 1) % s->nb_hw);
	if (moved == 0)
		return;
	__atomic_store_n(&s->drains, s->drains + 1, __ATOMIC_RELAXED);
	for (uint16_t i = 0; i < s->nb_sw; i++) {
		struct spread_ring *r = s->ring[i];

		if (unlikely(dropped[i] != 0))
			__atomic_store_n(&r->dropped, r->dropped + dropped[i], __ATOMIC_RELAXED);
		if (tail[i] != r->tail) {
			__atomic_store_n(&r->packets, r->packets + (tail[i] - r->tail),
					 __ATOMIC_RELAXED);
			__atomic_store_n(&r->tail, tail[i], __ATOMIC_RELEASE);
		}
	}
}

uint16_t dpv__eth_spread_rx(struct dpv_port *p, uint16_t queue, struct rte_mbuf **pkts,
			    uint16_t n)
{
	struct dpv_spread *s = p->spread;
	struct spread_ring *r = s->ring[queue];
	uint32_t head = r->head, avail = __atomic_load_n(&r->tail, __ATOMIC_ACQUIRE) - head;

	/* short of a burst: drain, unless another poller is at it (the try-lock looks before
	 * it writes, so idle pollers do not take the lock's line from each other) */
	if (avail < n && dpv__spinlock_trylock(&s->drain_lock)) {
		drain(p, s);
		dpv__spinlock_unlock(&s->drain_lock);
		avail = __atomic_load_n(&r->tail, __ATOMIC_ACQUIRE) - head;
	}
	if (avail > n)
		avail = n;
	for (uint32_t i = 0; i < avail; i++)
		pkts[i] = r->slot[(head + i) & s->mask];
	if (avail > 0)
		__atomic_store_n(&r->head, head + avail, __ATOMIC_RELEASE);
	return (uint16_t)avail;
}

int dpv__eth_spread_init(struct dpv_port *p, uint16_t nb_sw, uint16_t nb_hw, unsigned int desc)
{
	int socket = rte_eth_dev_socket_id(p->port_id);
	struct dpv_spread *s;
	uint32_t size = rte_align32pow2(RTE_MAX(desc, 2u * SPREAD_BURST));

	s = rte_zmalloc_socket("dpv_spread", sizeof(*s), RTE_CACHE_LINE_SIZE, socket);
	if (s == NULL)
		return -ENOMEM;
	s->nb_sw = nb_sw;
	s->nb_hw = nb_hw;
	s->mask = size - 1;
	dpv__spinlock_init(&s->drain_lock);
	for (uint16_t i = 0; i < nb_sw; i++) {
		s->ring[i] = rte_zmalloc_socket("dpv_spread_q", sizeof(struct spread_ring) +
						size * sizeof(struct rte_mbuf *),
						RTE_CACHE_LINE_SIZE, socket);
		if (s->ring[i] == NULL) {
			p->spread = s;
			dpv__eth_spread_fini(p);
			return -ENOMEM;
		}
	}
	p->spread = s;
	return 0;
}

/* The port stopped: nobody polls. Frames still on the rings are freed. */
void dpv__eth_spread_fini(struct dpv_port *p)
{
	struct dpv_spread *s = p->spread;

	if (s == NULL)
		return;
	for (uint16_t i = 0; i < s->nb_sw; i++) {
		struct spread_ring *r = s->ring[i];

		if (r == NULL)
			continue;
		for (uint32_t k = r->head; k != r->tail; k++)
			rte_pktmbuf_free(r->slot[k & s->mask]);
		rte_free(r);
	}
	rte_free(s);
	p->spread = NULL;
}

/* The spread's counters as extended statistics: frames per software queue, drains. */
unsigned int dpv__eth_spread_xstats(const struct dpv_port *p, struct dpv_port_xstat *out,
				    unsigned int n)
{
	const struct dpv_spread *s = p->spread;
	unsigned int k = 0;

	if (s == NULL)
		return 0;
	for (uint16_t i = 0; i < s->nb_sw; i++, k++)
		if (k < n) {
			snprintf(out[k].name, sizeof(out[k].name), "rx_spread_q%u_packets", i);
			out[k].value = __atomic_load_n(&s->ring[i]->packets, __ATOMIC_RELAXED);
		}
	for (uint16_t i = 0; i < s->nb_sw; i++, k++)
		if (k < n) {
			snprintf(out[k].name, sizeof(out[k].name), "rx_spread_q%u_dropped", i);
			out[k].value = __atomic_load_n(&s->ring[i]->dropped, __ATOMIC_RELAXED);
		}
	if (k < n) {
		snprintf(out[k].name, sizeof(out[k].name), "rx_spread_drains");
		out[k].value = __atomic_load_n(&s->drains, __ATOMIC_RELAXED);
	}
	return k + 1u;
}
