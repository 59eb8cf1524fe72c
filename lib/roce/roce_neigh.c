/* SPDX-License-Identifier: BSD-3-Clause */
/* Neighbours of a RoCEv2 port: the MAC a frame to a GID goes to. Local, link-local and
 * multicast GIDs map to a MAC without asking (as the kernel's ib_resolve_eth_dmac does for
 * rxe); other peers are resolved by dpverbs itself with ARP (IPv4) or an IPv6 Neighbor
 * Solicitation, their answers kept in a per-port cache that ages. dpverbs owns the port: it
 * answers ARP requests and solicitations for the port's addresses (and its link-local GID)
 * and learns the MAC of whoever asks, as Linux does. */
#include <errno.h>
#include <netinet/in.h>
#include <string.h>
#include <unistd.h>

#include <rte_mbuf.h>

#include "roce_nd.h"
#include "roce_port.h"
#include "verbs_priv.h"

/* ---- without asking ---- */

/* What may be answered without the network: 0 (and @mac), or -EAGAIN for a unicast peer. */
static int resolve_local(struct dpv_device *dev, const uint8_t dgid[16], uint8_t mac[6])
{
	if (dpv__roce_gid_find(dev, dgid) >= 0) {
		memcpy(mac, dev->caps.mac, 6);
		return 0;
	}
	if (dpv__roce_gid_mcast_mac(dgid, mac) || dpv__roce_gid_to_mac(dgid, mac) == 0)
		return 0;
	return -EAGAIN;
}

/* ---- the cache ---- */

static uint64_t now_tsc(void)
{
	return rte_rdtsc();
}

static uint64_t reachable_ticks(void)
{
	return dpv__timer_ticks_us((uint64_t)dpv__config()->neigh_reachable_ms * 1000);
}

/* The entry of @ip, or NULL. */
static struct dpv_roce_neigh *neigh_find(struct dpv_roce_port *rp, const uint8_t ip[16])
{
	dpv__lock_assert_held(&rp->neigh_lock);
	for (int i = 0; i < DPV_ROCE_NEIGH_MAX; i++)
		if (rp->neigh[i].state != DPV_NEIGH_FREE && memcmp(rp->neigh[i].ip, ip, 16) == 0)
			return &rp->neigh[i];
	return NULL;
}

/* A free entry, else the one confirmed longest ago (never one being resolved). NULL when
 * every entry is being resolved. */
static struct dpv_roce_neigh *neigh_alloc(struct dpv_roce_port *rp, const uint8_t ip[16])
{
	struct dpv_roce_neigh *e = NULL;

	dpv__lock_assert_held(&rp->neigh_lock);
	for (int i = 0; i < DPV_ROCE_NEIGH_MAX; i++) {
		struct dpv_roce_neigh *c = &rp->neigh[i];

		if (c->state == DPV_NEIGH_FREE) {
			e = c;
			break;
		}
		if (c->state == DPV_NEIGH_VALID && (e == NULL || c->confirmed < e->confirmed))
			e = c;
	}
	if (e != NULL) {
		memset(e, 0, sizeof(*e));
		memcpy(e->ip, ip, 16);
	}
	return e;
}

/* @ip is at @mac: a reply, or a request to us. @create: also when nobody asked (requests to
 * us, as Linux learns from them); otherwise only an entry that exists is updated. */
static void neigh_learn(struct dpv_roce_port *rp, const uint8_t ip[16], const uint8_t mac[6],
			bool create)
{
	struct dpv_roce_neigh *e;

	if (mac[0] & 1)
		return;                           /* a multicast MAC is nobody's */
	dpv__spinlock_lock(&rp->neigh_lock);
	e = neigh_find(rp, ip);
	if (e == NULL && create)
		e = neigh_alloc(rp, ip);
	if (e != NULL) {
		memcpy(e->mac, mac, 6);
		e->state = DPV_NEIGH_VALID;
		e->confirmed = now_tsc();
	}
	dpv__spinlock_unlock(&rp->neigh_lock);
}

/* The MAC of @ip if known and fresh: 0, else -EAGAIN. With @want, an entry that is missing
 * or stale becomes one being resolved (replies are taken for it). */
static int neigh_lookup(struct dpv_roce_port *rp, const uint8_t ip[16], uint8_t mac[6],
			bool want)
{
	uint64_t now = now_tsc(), reach = reachable_ticks();
	struct dpv_roce_neigh *e;
	int rc = -EAGAIN;

	dpv__spinlock_lock(&rp->neigh_lock);
	e = neigh_find(rp, ip);
	if (e != NULL && e->state == DPV_NEIGH_VALID && now - e->confirmed < reach) {
		memcpy(mac, e->mac, 6);
		rc = 0;
	} else if (want) {
		if (e == NULL)
			e = neigh_alloc(rp, ip);
		if (e != NULL) {
			e->state = DPV_NEIGH_INCOMPLETE;
			e->waiters++;
		}
	}
	dpv__spinlock_unlock(&rp->neigh_lock);
	return rc;
}

/* A resolution of @ip ended: an entry nobody answered for is dropped with its last waiter. */
static void neigh_done(struct dpv_roce_port *rp, const uint8_t ip[16])
{
	struct dpv_roce_neigh *e;

	dpv__spinlock_lock(&rp->neigh_lock);
	e = neigh_find(rp, ip);
	if (e != NULL && e->waiters > 0 && --e->waiters == 0 && e->state == DPV_NEIGH_INCOMPLETE)
		e->state = DPV_NEIGH_FREE;
	dpv__spinlock_unlock(&rp->neigh_lock);
}

/* ---- frames out ---- */

int dpv__roce_ctl_send(struct dpv_roce_port *rp, const uint8_t *frame, uint16_t len)
{
	struct dpv_device *dev = rp->dev;
	struct dpv_txq *q = __atomic_load_n(&rp->txq, __ATOMIC_ACQUIRE);
	struct rte_mbuf *m;
	int rc = 0;

	if (q == NULL) {
		dpv__spinlock_lock(&rp->txq_lock);    /* the first frame takes a queue */
		q = rp->txq;
		if (q == NULL && __atomic_load_n(&rp->started, __ATOMIC_RELAXED) &&
		    dev->ops->txq_attach(dev->port, &q) == 0)
			__atomic_store_n(&rp->txq, q, __ATOMIC_RELEASE);
		dpv__spinlock_unlock(&rp->txq_lock);
	}
	m = q != NULL && dev->caps.mp != NULL ? rte_pktmbuf_alloc(dev->caps.mp) : NULL;
	if (q == NULL)
		rc = -ENODEV;
	else if (m == NULL)
		rc = -ENOBUFS;
	else if (rte_pktmbuf_append(m, len) == NULL)
		rc = -EMSGSIZE;
	if (rc == 0) {
		struct rte_mbuf *out[4] = { m };
		uint16_t n;

		memcpy(rte_pktmbuf_mtod(m, void *), frame, len);
		m = NULL;
		/* fault injection (doc/faults.md) may drop, hold or duplicate it */
		n = dpv__device_fault_tx(dev, out, 1, RTE_DIM(out));
		uint16_t took = n ? dev->ops->tx_burst(q, out, n) : 0;

		if (took < n) {
			rc = -EAGAIN;
			rte_pktmbuf_free_bulk(out + took, n - took);
		}
	}
	rte_pktmbuf_free(m);
	__atomic_fetch_add(rc == 0 ? &rp->tx_frames : &rp->tx_dropped, 1, __ATOMIC_RELAXED);
	return rc;
}

static void send_msg(struct dpv_roce_port *rp, const struct dpv_nd_msg *m)
{
	uint8_t f[DPV_ND_FRAME_MAX];
	int len = dpv__nd_build(f, sizeof(f), m);

	if (len > 0)
		dpv__roce_ctl_send(rp, f, (uint16_t)len);
}

/* An ARP request or a Neighbor Solicitation for @dip (the IP in a GID), from @sip. */
static void solicit(struct dpv_roce_port *rp, int family, const uint8_t sip[16],
		    const uint8_t dip[16])
{
	struct dpv_nd_msg m = { .type = family == AF_INET ? DPV_ND_ARP_REQUEST : DPV_ND_NS,
				.lladdr = true };

	memcpy(m.eth_src, rp->dev->caps.mac, 6);
	memcpy(m.sender_mac, rp->dev->caps.mac, 6);
	memcpy(m.sender_ip, sip, 16);
	memcpy(m.target_ip, dip, 16);
	if (family == AF_INET)
		memset(m.eth_dst, 0xFF, 6);
	else
		dpv__nd_solicited_node(dip, m.ip_dst, m.eth_dst);
	send_msg(rp, &m);
}

/* ---- frames in ---- */

static void gid_of(uint8_t gid[16], const uint8_t ip[16], bool v4)
{
	uint32_t a;

	if (v4) {
		memcpy(&a, ip, 4);
		dpv__roce_gid_from_ipv4(gid, a);
	} else {
		memcpy(gid, ip, 16);
	}
}

static void on_arp(struct dpv_roce_port *rp, const struct dpv_nd_msg *q)
{
	uint8_t tgid[16], sgid[16];
	bool ours;
	struct dpv_nd_msg r = { .type = DPV_ND_ARP_REPLY };

	gid_of(tgid, q->target_ip, true);
	gid_of(sgid, q->sender_ip, true);
	ours = dpv__roce_gid_find(rp->dev, tgid) >= 0;
	if (q->type == DPV_ND_ARP_REPLY) {
		/* an answer to one of our requests, or a gratuitous ARP: entries we have */
		neigh_learn(rp, sgid, q->sender_mac, false);
		return;
	}
	if (!ours)
		return;
	/* not an ARP probe (RFC 5227: sender 0.0.0.0), nor someone claiming our address */
	if (memcmp(q->sender_ip, "\0\0\0\0", 4) != 0 && dpv__roce_gid_find(rp->dev, sgid) < 0)
		neigh_learn(rp, sgid, q->sender_mac, true);
	memcpy(r.eth_dst, q->sender_mac, 6);
	memcpy(r.eth_src, rp->dev->caps.mac, 6);
	memcpy(r.sender_mac, rp->dev->caps.mac, 6);
	memcpy(r.sender_ip, q->target_ip, 4);
	memcpy(r.target_mac, q->sender_mac, 6);
	memcpy(r.target_ip, q->sender_ip, 4);
	send_msg(rp, &r);
}

/* RFC 4861 7.2.3-7.2.4: a solicitation for one of the port's GIDs (index 0's link-local one
 * included) is answered, to its source (solicited) or, from an address being checked for
 * duplicates, to all nodes. */
static void on_ns(struct dpv_roce_port *rp, const struct dpv_nd_msg *q)
{
	static const uint8_t all_nodes[16] = { 0xFF, 0x02, [15] = 0x01 };
	static const uint8_t zero[16];
	bool dad = memcmp(q->sender_ip, zero, 16) == 0;
	struct dpv_nd_msg r = { .type = DPV_ND_NA, .lladdr = true, .override = true,
				.solicited = !dad };
	uint8_t ip[16];

	/* an IPv6 GID of the port (an IPv4-mapped target is no IPv6 address of anybody's) */
	if (dpv__roce_gid_to_ip(q->target_ip, ip) != AF_INET6 ||
	    dpv__roce_gid_find(rp->dev, q->target_ip) < 0)
		return;
	if (!dad && q->lladdr && dpv__roce_gid_find(rp->dev, q->sender_ip) < 0)
		neigh_learn(rp, q->sender_ip, q->sender_mac, true);
	memcpy(r.eth_src, rp->dev->caps.mac, 6);
	memcpy(r.sender_mac, rp->dev->caps.mac, 6);
	memcpy(r.sender_ip, q->target_ip, 16);
	memcpy(r.target_ip, q->target_ip, 16);
	if (dad) {
		memcpy(r.ip_dst, all_nodes, 16);
		memcpy(r.eth_dst, "\x33\x33\x00\x00\x00\x01", 6);
	} else {
		memcpy(r.ip_dst, q->sender_ip, 16);
		memcpy(r.eth_dst, q->lladdr ? q->sender_mac : q->eth_src, 6);
	}
	send_msg(rp, &r);
}

/* RFC 4861 7.2.5: an advertisement updates an entry we have (being resolved or known); one
 * without the target's link-layer address tells nothing (Ethernet always has it). */
static void on_na(struct dpv_roce_port *rp, const struct dpv_nd_msg *a)
{
	if (a->lladdr)
		neigh_learn(rp, a->target_ip, a->sender_mac, false);
}

/* Bytes of @m to parse: in place when contiguous, else copied into @buf (ARP and ND frames
 * worth reading fit in it; a longer one is cut there and fails its length checks). */
static const uint8_t *frame_bytes(struct rte_mbuf *m, uint8_t *buf, uint32_t cap, uint32_t *len)
{
	*len = rte_pktmbuf_pkt_len(m);
	if (rte_pktmbuf_data_len(m) == *len)
		return rte_pktmbuf_mtod(m, const uint8_t *);
	if (*len > cap)
		*len = cap;
	return rte_pktmbuf_read(m, 0, *len, buf);
}

void dpv__roce_neigh_rx(struct dpv_device *dev, struct rte_mbuf **pkts, uint16_t n,
			uint64_t *taken)
{
	struct dpv_roce_port *rp = dev->roce;
	uint8_t buf[1024];

	/* a port with no address (and nothing being resolved) leaves ARP/ND to RAW QPs */
	if (__atomic_load_n(&rp->nb_addr, __ATOMIC_ACQUIRE) == 0 &&
	    __atomic_load_n(&rp->resolving, __ATOMIC_ACQUIRE) == 0)
		return;
	for (uint16_t i = 0; i < n; i++) {
		struct dpv_nd_msg m;
		uint32_t len;
		const uint8_t *f;
		int rc;

		if (*taken >> i & 1)
			continue;
		f = frame_bytes(pkts[i], buf, sizeof(buf), &len);
		rc = f == NULL ? -ENOMSG : dpv__nd_parse(f, len, &m);
		if (rc == -ENOMSG)
			continue;
		*taken |= 1ull << i;
		/* read by dpv_query_port_stats from any thread; written under rx_lock */
		__atomic_store_n(&rp->rx_frames, rp->rx_frames + 1, __ATOMIC_RELAXED);
		if (rc == -EBADMSG)
			__atomic_store_n(&rp->rx_bad, rp->rx_bad + 1, __ATOMIC_RELAXED);
		if (rc != 0 || memcmp(m.eth_src, dev->caps.mac, 6) == 0)
			continue;                 /* ignored, or our own frame come back */
		if (m.type == DPV_ND_ARP_REQUEST || m.type == DPV_ND_ARP_REPLY)
			on_arp(rp, &m);
		else if (m.type == DPV_ND_NS)
			on_ns(rp, &m);
		else
			on_na(rp, &m);
	}
}

/* A port with no address and nothing being resolved: ARP/ND is left to RAW QPs. */
static bool neigh_rx_idle(const struct dpv_device *dev)
{
	const struct dpv_roce_port *rp = dev->roce;

	return __atomic_load_n(&rp->nb_addr, __ATOMIC_ACQUIRE) == 0 &&
	       __atomic_load_n(&rp->resolving, __ATOMIC_ACQUIRE) == 0;
}

/* First of the port receivers: ARP and ND frames to the port's addresses are answered
 * here whoever else receives. */
static const struct dpv_port_receiver neigh_receiver = {
	.name = "ARP/ND",
	.order = 10,
	.rx = dpv__roce_neigh_rx,
	.idle = neigh_rx_idle,
};
DPV_PORT_RECEIVER_REGISTER(neigh, neigh_receiver)

/* ---- resolving ---- */

static bool service_polls(struct dpv_device *dev)
{
	bool on;

	pthread_mutex_lock(&dev->svc_mutex);
	on = dev->svc_attached;
	pthread_mutex_unlock(&dev->svc_mutex);
	return on;
}

/* Wait for @dgid's MAC: requests at even intervals within the configured timeout (every one
 * of them sent, even by a thread so late that the timeout passed), the port's receive side
 * progressed meanwhile unless a service lcore does it. */
static int resolve_remote(struct dpv_roce_port *rp, int family, const uint8_t sip[16],
			  const uint8_t dgid[16], const uint8_t dip[16], uint8_t mac[6])
{
	const struct dpv_config *cfg = dpv__config();
	struct dpv_device *dev = rp->dev;
	uint64_t start = now_tsc(), timeout = dpv__timer_ticks_us(cfg->resolve_timeout_ms * 1000ull);
	uint64_t every = timeout / cfg->resolve_probes, elapsed;
	bool visiting = dpv__rx_visiting;
	unsigned int sent = 0;
	int rc;

	if (neigh_lookup(rp, dgid, mac, true) == 0)
		return 0;
	__atomic_fetch_add(&rp->resolving, 1, __ATOMIC_RELEASE);
	dpv__device_rx_users(dev, 1);             /* replies must be received */
	dpv__rx_visiting = true;
	do {
		elapsed = now_tsc() - start;
		if (sent < cfg->resolve_probes && elapsed >= sent * every) {
			solicit(rp, family, sip, dip);
			sent++;
		}
		if (service_polls(dev))
			usleep(100);              /* the service lcore receives */
		else
			dpv__port_rx_poll(dev);
		rc = neigh_lookup(rp, dgid, mac, false);
		if (rc != 0)
			usleep(20);
	} while (rc != 0 && (elapsed < timeout || sent < cfg->resolve_probes));
	dpv__rx_visiting = visiting;
	dpv__device_rx_users(dev, -1);
	__atomic_fetch_sub(&rp->resolving, 1, __ATOMIC_RELEASE);
	neigh_done(rp, dgid);
	return rc == 0 ? 0 : -EHOSTUNREACH;
}

int dpv__roce_resolve(struct dpv_device *dev, int sgid_index, const uint8_t dgid[16],
		      uint8_t mac[6])
{
	uint8_t sgid[16], sip[16], dip[16];
	int family, rc;

	if (dpv__roce_gid_get(dev, sgid_index, sgid) != 0)
		return -EINVAL;
	family = dpv__roce_gid_to_ip(sgid, sip);
	if (dpv__roce_gid_to_ip(dgid, dip) != family)
		return -EINVAL;
	rc = resolve_local(dev, dgid, mac);
	if (rc != -EAGAIN)
		return rc;
	return resolve_remote(dev->roce, family, sip, dgid, dip, mac);
}

void dpv__roce_neigh_stats(struct dpv_device *dev, uint64_t *tx, uint64_t *tx_dropped,
			   uint64_t *rx, uint64_t *rx_bad)
{
	struct dpv_roce_port *rp = dev->roce;

	*tx = rp ? __atomic_load_n(&rp->tx_frames, __ATOMIC_RELAXED) : 0;
	*tx_dropped = rp ? __atomic_load_n(&rp->tx_dropped, __ATOMIC_RELAXED) : 0;
	*rx = rp ? __atomic_load_n(&rp->rx_frames, __ATOMIC_RELAXED) : 0;
	*rx_bad = rp ? __atomic_load_n(&rp->rx_bad, __ATOMIC_RELAXED) : 0;
}
