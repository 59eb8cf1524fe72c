/* SPDX-License-Identifier: BSD-3-Clause */
/* The ethdev driver: frames on DPDK ethdev queues, for any PMD. Ports start when a verbs
 * device first uses them and are detached (rte_dev_remove) when dpverbs is done, so that a
 * later device list probes them again from the same devargs. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>

#include <rte_bus.h>
#include <rte_dev.h>
#include <rte_eal.h>
#include <rte_devargs.h>
#include <rte_ethdev.h>
#include <rte_mbuf.h>
#include <rte_malloc.h>
#include <rte_alarm.h>
#include "dpv_lock.h"

#include "ethdev_priv.h"

RTE_LOG_REGISTER(dpv_ethdev_logtype, pmd.dpverbs.ethdev, NOTICE);

static struct dpv_port ports[RTE_MAX_ETHPORTS];
static int nb_ports = -1;      /* -1: not scanned yet */
static bool ports_closed;

static void port_record(struct dpv_port *p, uint16_t port_id)
{
	struct rte_eth_dev_info info;
	const struct rte_devargs *da;

	memset(p, 0, sizeof(*p));
	p->port_id = port_id;
	p->present = true;
	rte_eth_dev_get_name_by_port(port_id, p->name);
	snprintf(p->devargs, sizeof(p->devargs), "%s", p->name);
	if (rte_eth_dev_info_get(port_id, &info) == 0 && info.device != NULL) {
		da = rte_dev_devargs(info.device);
		snprintf(p->devargs, sizeof(p->devargs), "%s%s%s", rte_dev_name(info.device),
			 da && da->args && *da->args ? "," : "", da && da->args ? da->args : "");
	}
}

static void ports_scan(void)
{
	uint16_t pid;

	nb_ports = 0;
	RTE_ETH_FOREACH_DEV(pid)
		port_record(&ports[nb_ports++], pid);
}

/* After ports_close: probe every port again from its devargs, keeping its index. */
static void ports_reprobe(void)
{
	for (int i = 0; i < nb_ports; i++) {
		uint16_t pid;
		int rc = rte_dev_probe(ports[i].devargs);

		if (rc != 0 || rte_eth_dev_get_port_by_name(ports[i].name, &pid) != 0) {
			PMD_LOG(ERR, "cannot probe port %s again (%s): %s", ports[i].name,
				ports[i].devargs, rte_strerror(-rc));
			ports[i].present = false;
			continue;
		}
		port_record(&ports[i], pid);
	}
	ports_closed = false;
}

static int eth_port_count(void)
{
	if (nb_ports < 0)
		ports_scan();
	else if (ports_closed)
		ports_reprobe();
	return nb_ports;
}

static struct dpv_port *eth_port_get(int index, struct dpv_port_caps *caps)
{
	struct dpv_port *p;
	struct rte_eth_dev_info info;
	struct rte_ether_addr mac;
	uint16_t mtu = RTE_ETHER_MTU;

	if (index < 0 || index >= eth_port_count() || !ports[index].present)
		return NULL;
	p = &ports[index];
	if (rte_eth_dev_info_get(p->port_id, &info) != 0)
		return NULL;
	memset(caps, 0, sizeof(*caps));
	snprintf(caps->name, sizeof(caps->name), "%s", p->name);
	snprintf(caps->driver, sizeof(caps->driver), "%s", info.driver_name);
	snprintf(caps->bus, sizeof(caps->bus), "%s",
		 info.device ? rte_bus_name(rte_dev_bus(info.device)) : "");
	caps->port_id = p->port_id;
	caps->socket_id = rte_eth_dev_socket_id(p->port_id);
	rte_eth_macaddr_get(p->port_id, &mac);
	memcpy(caps->mac, mac.addr_bytes, 6);
	rte_eth_dev_get_mtu(p->port_id, &mtu);
	caps->mtu = mtu;
	caps->max_frame = mtu + RTE_ETHER_HDR_LEN;
	caps->max_tx_queues = info.max_tx_queues;
	caps->max_rx_queues = info.max_rx_queues;
	caps->max_tx_desc = info.tx_desc_lim.nb_max;
	caps->max_rx_desc = info.rx_desc_lim.nb_max;
	caps->max_tx_segs = p->started ? p->max_segs :
			    (info.tx_desc_lim.nb_seg_max ? info.tx_desc_lim.nb_seg_max : 1);
	caps->tx_offloads = (p->started ? p->tx_offloads : info.tx_offload_capa) & HW_TX_OFFLOADS;
	caps->max_tso = caps->tx_offloads & RTE_ETH_TX_OFFLOAD_TCP_TSO ? 65535 : 0;
	caps->tx_done_cleanup = p->tx_done_cleanup;
	caps->zero_copy = p->zero_copy;
	caps->needs_dma_map = strcmp(caps->bus, "pci") == 0;
	caps->tso_gso = p->tso_gso;
	caps->odd_segs_csum = p->odd_segs_csum;
	caps->tso_ip_csum = p->tso_ip_csum;
	caps->max_tx_frame = p->max_tx_frame;
	caps->mp = p->mp;
	caps->ext_mp = p->ext_mp;
	return p;
}

static uint16_t clamp_desc(unsigned int want, const struct rte_eth_desc_lim *lim)
{
	uint16_t n = want > lim->nb_max ? lim->nb_max : want;

	if (n < lim->nb_min)
		n = lim->nb_min;
	if (lim->nb_align > 1)
		n = RTE_ALIGN_CEIL(n, lim->nb_align);
	return n;
}

/* Link changes go to the layer above (port_start's events). net_tap 22.11 updates its link from netlink without
 * raising RTE_ETH_EVENT_INTR_LSC, and many PMDs have no such interrupt, so the link of every
 * started port is read every LINK_POLL_US from DPDK's interrupt thread (an EAL alarm). */
#define LINK_POLL_US 100000

/* __atomic on link_up and link_polls: ordering ThreadSanitizer sees (the EAL's alarm list
 * lock is an rte_spinlock, which it does not). */
static void link_watch(void *arg)
{
	struct dpv_port *p = arg;
	bool was_up = __atomic_load_n(&p->link_up, __ATOMIC_ACQUIRE);
	struct rte_eth_link l;

	if (rte_eth_link_get_nowait(p->port_id, &l) == 0 &&
	    (l.link_status == RTE_ETH_LINK_UP) != was_up) {
		__atomic_store_n(&p->link_up, !was_up, __ATOMIC_RELEASE);
		PMD_LOG(NOTICE, "port %s: link %s", p->name, was_up ? "down" : "up");
		if (p->ev.link != NULL)
			p->ev.link(p->ev.arg, !was_up);
	}
	__atomic_fetch_add(&p->link_polls, 1, __ATOMIC_RELEASE);
	rte_eal_alarm_set(LINK_POLL_US, link_watch, p);
}

static void link_watch_start(struct dpv_port *p)
{
	struct rte_eth_link l;

	__atomic_store_n(&p->link_up, rte_eth_link_get_nowait(p->port_id, &l) == 0 &&
			 l.link_status == RTE_ETH_LINK_UP, __ATOMIC_RELEASE);
	if (rte_eal_alarm_set(LINK_POLL_US, link_watch, p) != 0)
		PMD_LOG(WARNING, "port %s: link changes will not be reported as events", p->name);
}

/* Waits for a link_watch that runs now; it takes no lock the caller may hold. */
static void link_watch_stop(struct dpv_port *p)
{
	rte_eal_alarm_cancel(link_watch, p);
	(void)__atomic_load_n(&p->link_polls, __ATOMIC_ACQUIRE);
}

/* PMDs whose queues hold whole flows without RSS: the host kernel hashes each flow to one of
 * them (a multi-queue tap, a PACKET_FANOUT_HASH group, virtio-net's queues over a tap). */
static bool spreads_flows(const char *driver)
{
	static const char *const pmds[] = { "net_tap", "net_af_packet", "net_virtio" };

	for (size_t i = 0; i < RTE_DIM(pmds); i++)
		if (strcmp(driver, pmds[i]) == 0)
			return true;
	return false;
}

/* rx_spread: 1 spreads in software where the port cannot give queues_per_port queues that
 * each hold whole flows; 2 always (with more than one queue wanted). */
static bool spread_wanted(const struct dpv_port *p, const struct rte_eth_dev_info *info,
			  const struct dpv_config *cfg)
{
	if (cfg->queues_per_port < 2 || cfg->rx_spread == 0)
		return false;
	if (cfg->rx_spread == 2)
		return true;
	return p->nb_rxq < cfg->queues_per_port ||
	       (p->rss_hf == 0 && !spreads_flows(info->driver_name));
}

/* PMDs of DPDK 22.11 whose receive queues have interrupts (rte_eth_dev_rx_intr_ctl_q_get_fd):
 * net_tap (the queue's tun fd), virtio's; PCI NICs through VFIO's MSI-X vectors. memif,
 * af_packet, ring, null and pcap have none (af_packet's own sockets: eth_rx_intr_fd). */
static bool has_rx_intr(const struct rte_eth_dev_info *info)
{
	static const char *const pmds[] = { "net_tap", "net_virtio", "net_virtio_user" };

	for (size_t i = 0; i < RTE_DIM(pmds); i++)
		if (strcmp(info->driver_name, pmds[i]) == 0)
			return true;
	return info->device != NULL && strcmp(rte_bus_name(rte_dev_bus(info->device)), "pci") == 0;
}

static int port_configure(struct dpv_port *p, const struct rte_eth_dev_info *info, bool intr)
{
	const struct dpv_config *cfg = dpv__config();
	struct rte_eth_conf conf = { 0 };
	int socket = rte_eth_dev_socket_id(p->port_id);
	struct rte_mempool *mp = dpv__pool_get(socket), *ext_mp = dpv__pool_ext_get(socket);
	int rc;

	if (mp == NULL || ext_mp == NULL)
		return -ENOMEM;
	p->nb_txq = RTE_MIN(cfg->queues_per_port, (unsigned int)info->max_tx_queues);
	p->nb_rxq = RTE_MIN(p->nb_txq, info->max_rx_queues);
	p->mp = mp;
	p->ext_mp = ext_mp;
	p->tx_offloads = info->tx_offload_capa & (HW_TX_OFFLOADS | RTE_ETH_TX_OFFLOAD_MULTI_SEGS);
	conf.txmode.offloads = p->tx_offloads;
	conf.intr_conf.rxq = intr;
	p->rx_intr = intr;
	/* receive checksums checked by the port where it can (the layer above checks the rest) */
	if ((info->rx_offload_capa & RX_CKSUM) == RX_CKSUM)
		conf.rxmode.offloads |= RX_CKSUM;
	/* several receive queues: RSS on the IP/TCP/UDP tuple where the port hashes */
	p->rss_hf = info->flow_type_rss_offloads & (RTE_ETH_RSS_IP | RTE_ETH_RSS_TCP |
						    RTE_ETH_RSS_UDP);
	if (p->nb_rxq > 1 && p->rss_hf != 0) {
		conf.rxmode.mq_mode = RTE_ETH_MQ_RX_RSS;
		conf.rx_adv_conf.rss_conf.rss_hf = p->rss_hf;
	} else {
		p->rss_hf = 0;
	}
	rc = rte_eth_dev_configure(p->port_id, p->nb_rxq, p->nb_txq, &conf);
	if (rc != 0 && p->rss_hf != 0) {
		PMD_LOG(NOTICE, "port %s refuses RSS (%s): its queues are filled its own way",
			p->name, rte_strerror(-rc));
		p->rss_hf = 0;
		conf.rxmode.mq_mode = RTE_ETH_MQ_RX_NONE;
		conf.rx_adv_conf.rss_conf.rss_hf = 0;
		rc = rte_eth_dev_configure(p->port_id, p->nb_rxq, p->nb_txq, &conf);
	}
	if (rc == 0 && p->nb_rxq > 1)
		PMD_LOG(INFO, "port %s: %u receive queues, %s", p->name, p->nb_rxq,
			p->rss_hf != 0 ? "RSS on the IP/TCP/UDP tuple" : "filled by the PMD its own way");
	for (uint16_t q = 0; rc == 0 && q < p->nb_txq; q++) {
		rc = rte_eth_tx_queue_setup(p->port_id, q,
					    clamp_desc(cfg->tx_desc, &info->tx_desc_lim),
					    rte_eth_dev_socket_id(p->port_id), NULL);
		p->txq[q] = (struct dpv_txq){ .port_id = p->port_id, .qid = q };
		dpv__spinlock_init(&p->txq[q].lock);
	}
	for (uint16_t q = 0; rc == 0 && q < p->nb_rxq; q++)
		rc = rte_eth_rx_queue_setup(p->port_id, q, clamp_desc(cfg->rx_desc, &info->rx_desc_lim),
					    rte_eth_dev_socket_id(p->port_id), NULL, mp);
	if (rc == 0 && spread_wanted(p, info, cfg)) {
		uint16_t nb_sw = (uint16_t)RTE_MIN(cfg->queues_per_port, DPV_SPREAD_MAX + 0u);

		rc = dpv__eth_spread_init(p, nb_sw, p->nb_rxq, cfg->rx_desc);
		if (rc == 0) {
			PMD_LOG(INFO, "port %s: %u receive queues spread in software from its %u",
				p->name, nb_sw, p->nb_rxq);
			p->nb_rxq = nb_sw;
		}
	}
	return rc;
}

/* PMDs that free every mbuf inside tx_burst (or hand it to a peer that frees it): a sent
 * buffer comes back without rte_eth_tx_done_cleanup. */
static bool frees_in_burst(const char *driver)
{
	static const char *const pmds[] = { "net_null", "net_pcap", "net_tap", "net_af_packet",
					    "net_memif", "net_ring" };

	for (size_t i = 0; i < RTE_DIM(pmds); i++)
		if (strcmp(driver, pmds[i]) == 0)
			return true;
	return false;
}

/* Zero-copy needs the PMD to give buffers back on demand, and, for a device that DMAs,
 * addresses that do not move (IOVA as VA); otherwise frames are copied. */
static void port_tx_mode(struct dpv_port *p, const struct rte_eth_dev_info *info)
{
	bool dma = info->device != NULL && strcmp(rte_bus_name(rte_dev_bus(info->device)), "pci") == 0;

	p->tx_done_cleanup = rte_eth_tx_done_cleanup(p->port_id, 0, 0) != -ENOTSUP;
	p->iova_is_va = rte_eal_iova_mode() == RTE_IOVA_VA;
	p->dma = dma;
	p->zero_copy = (p->tx_done_cleanup || frees_in_burst(info->driver_name)) &&
		       (!dma || p->iova_is_va);
	uint16_t mtu = RTE_ETHER_MTU;

	rte_eth_dev_get_mtu(p->port_id, &mtu);
	p->mtu = mtu;
	p->tso_gso = strcmp(info->driver_name, "net_tap") == 0;
	/* net_tap 22.11 sums the L4 checksum segment by segment and goes wrong after a segment
	 * of odd length */
	p->odd_segs_csum = !p->tso_gso;
	/* a virtio device segments as the Linux kernel does (GSO on the host), IPv4 header
	 * checksums included, though it offers no IPv4 checksum offload */
	p->tso_ip_csum = strcmp(info->driver_name, "net_virtio") == 0;
	/* net_tap refuses, without a word, frames longer than MTU + Ethernet + VLAN + CRC */
	p->max_tx_frame = p->tso_gso ? p->mtu + RTE_ETHER_HDR_LEN + 4 + RTE_ETHER_CRC_LEN :
				      UINT32_MAX;
	p->max_segs = RTE_MIN(info->tx_desc_lim.nb_seg_max ? info->tx_desc_lim.nb_seg_max : 1,
			      info->tx_desc_lim.nb_mtu_seg_max ? info->tx_desc_lim.nb_mtu_seg_max :
			      UINT16_MAX);
	if (!(p->tx_offloads & RTE_ETH_TX_OFFLOAD_MULTI_SEGS) && strcmp(info->driver_name, "net_null"))
		p->max_segs = RTE_MIN(p->max_segs, 1);
	if (!p->zero_copy)
		PMD_LOG(INFO, "port %s (%s): sends are copied (%s)", p->name, info->driver_name,
			p->tx_done_cleanup || frees_in_burst(info->driver_name) ?
			"IOVA as PA: application memory may move" :
			"the PMD frees sent buffers only in a later tx_burst and has no "
			"rte_eth_tx_done_cleanup");
}

static int eth_port_start(struct dpv_port *p, const struct dpv_port_events *ev)
{
	struct rte_eth_dev_info info;
	int rc;

	if (p->started)
		return 0;
	p->ev = *ev;
	dpv__spinlock_init(&p->txq_lock);
	rc = rte_eth_dev_info_get(p->port_id, &info);
	if (rc == 0 && has_rx_intr(&info)) {
		rc = port_configure(p, &info, true);
		if (rc == 0)
			rc = rte_eth_dev_start(p->port_id);
		if (rc != 0) {
			/* a PMD or a device (no VFIO interrupt vectors) that refuses them */
			PMD_LOG(INFO, "port %s (%s) refuses receive interrupts (%s): it is "
				"looked at, not woken, while nobody polls it", p->name,
				info.driver_name, rte_strerror(-rc));
			dpv__eth_spread_fini(p);
			rc = 1;
		}
	} else if (rc == 0) {
		rc = 1;
	}
	if (rc == 1)
		rc = port_configure(p, &info, false);
	if (rc == 0 && !p->rx_intr)
		rc = rte_eth_dev_start(p->port_id);
	if (rc != 0) {
		PMD_LOG(ERR, "port %s (%s) cannot be configured and started: %s", p->name,
			info.driver_name, rte_strerror(-rc));
		return rc;
	}
	port_tx_mode(p, &info);
	p->af_packet = strcmp(info.driver_name, "net_af_packet") == 0;
	p->started = true;
	link_watch_start(p);
	return 0;
}

static void eth_port_stop(struct dpv_port *p)
{
	int rc;

	if (!p->started)
		return;
	link_watch_stop(p);
	rc = rte_eth_dev_stop(p->port_id);
	if (rc != 0)
		PMD_LOG(WARNING, "port %s did not stop: %s", p->name, rte_strerror(-rc));
	p->started = false;
	dpv__eth_spread_fini(p);
}

/* Detach every port from DPDK (a pcap file is complete after this), to be probed again. */
static void eth_ports_close(void)
{
	for (int i = 0; i < nb_ports; i++) {
		struct dpv_port *p = &ports[i];
		struct rte_eth_dev_info info;

		if (!p->present)
			continue;
		eth_port_stop(p);
		if (rte_eth_dev_info_get(p->port_id, &info) != 0 || info.device == NULL ||
		    rte_dev_remove(info.device) != 0)
			rte_eth_dev_close(p->port_id);
		p->present = false;
	}
	if (nb_ports > 0)
		ports_closed = true;
}

static int eth_link_get(struct dpv_port *p, struct dpv_link *link)
{
	struct rte_eth_link l;
	int rc = rte_eth_link_get_nowait(p->port_id, &l);

	if (rc != 0)
		return rc;
	link->up = l.link_status == RTE_ETH_LINK_UP;
	link->speed_mbps = l.link_speed == RTE_ETH_SPEED_NUM_UNKNOWN ? 0 : l.link_speed;
	return 0;
}

static void eth_port_queues(struct dpv_port *p, uint16_t *nb_tx, uint16_t *nb_rx)
{
	*nb_tx = p->nb_txq;
	*nb_rx = p->nb_rxq;
}

/* The least used queue of the port. */
static int eth_txq_attach(struct dpv_port *p, struct dpv_txq **txq)
{
	struct dpv_txq *best = NULL;

	if (p->nb_txq == 0)
		return -ENODEV;
	dpv__spinlock_lock(&p->txq_lock);
	for (uint16_t q = 0; q < p->nb_txq; q++)
		if (best == NULL || p->txq[q].users < best->users)
			best = &p->txq[q];
	__atomic_fetch_add(&best->users, 1, __ATOMIC_RELEASE);
	dpv__spinlock_unlock(&p->txq_lock);
	*txq = best;
	return 0;
}

static void eth_txq_detach(struct dpv_txq *txq)
{
	__atomic_fetch_sub(&txq->users, 1, __ATOMIC_RELEASE);
}

/* All multicast on, or off again when this driver turned it on. */
static int allmulti(struct dpv_port *p, bool on)
{
	int rc;

	if (on == p->allmulti)
		return 0;
	rc = on ? rte_eth_allmulticast_enable(p->port_id) :
		  rte_eth_allmulticast_disable(p->port_id);
	if (rc == 0)
		p->allmulti = on;
	return rc;
}

/* The port's multicast filter: the list, or all multicast when it is longer than 16 or the
 * PMD has no list (af_packet, ring, null pass every frame anyway). */

static int eth_rx_mcast_set(struct dpv_port *p, const uint8_t (*macs)[6], unsigned int n)
{
	struct rte_ether_addr list[16];
	int rc;

	if (n > RTE_DIM(list)) {
		rc = allmulti(p, true);
	} else {
		for (unsigned int i = 0; i < n; i++)
			memcpy(list[i].addr_bytes, macs[i], 6);
		rc = rte_eth_dev_set_mc_addr_list(p->port_id, n > 0 ? list : NULL, n);
		if (rc == 0)
			rc = allmulti(p, false);
		else if (rc == -ENOTSUP)
			rc = allmulti(p, n > 0);
	}
	if (rc == -ENOTSUP && !p->dma)
		rc = 0;          /* a vdev: no MAC filter between it and its link */
	return rc;
}

static int eth_dma_map(struct dpv_port *p, void *va, uint64_t iova, uint64_t len)
{
	struct rte_eth_dev_info info;
	int rc = rte_eth_dev_info_get(p->port_id, &info);

	if (rc == 0)
		rc = rte_dev_dma_map(info.device, va, iova, len);
	/* vdevs do no DMA: nothing to map. */
	return rc == -ENOTSUP || (rc < 0 && rte_errno == ENOTSUP) ? 0 : rc;
}

static int eth_dma_unmap(struct dpv_port *p, void *va, uint64_t iova, uint64_t len)
{
	struct rte_eth_dev_info info;
	int rc = rte_eth_dev_info_get(p->port_id, &info);

	if (rc == 0)
		rc = rte_dev_dma_unmap(info.device, va, iova, len);
	return rc == -ENOTSUP || (rc < 0 && rte_errno == ENOTSUP) ? 0 : rc;
}

/* rte_eth_xstats_get with its names; returns how many the port has, or a negative errno. */
static int eth_port_xstats(struct dpv_port *p, struct dpv_port_xstat *out, unsigned int n)
{
	int count = rte_eth_xstats_get(p->port_id, NULL, 0);
	struct rte_eth_xstat_name *names;
	struct rte_eth_xstat *vals;

	unsigned int extra = dpv__eth_spread_xstats(p, NULL, 0);

	if (count < 0 && extra == 0)
		return count;
	count = RTE_MAX(count, 0);
	if (n > (unsigned int)count)
		dpv__eth_spread_xstats(p, out + count, n - (unsigned int)count);
	if (count == 0 || n == 0)
		return count + (int)extra;
	names = calloc((size_t)count, sizeof(*names));
	vals = calloc((size_t)count, sizeof(*vals));
	if (names == NULL || vals == NULL ||
	    rte_eth_xstats_get_names(p->port_id, names, (unsigned int)count) != count ||
	    rte_eth_xstats_get(p->port_id, vals, (unsigned int)count) != count) {
		free(names);
		free(vals);
		return names == NULL || vals == NULL ? -ENOMEM : -EAGAIN;
	}
	for (int i = 0; i < count && (unsigned int)i < n; i++) {
		snprintf(out[i].name, sizeof(out[i].name), "%s", names[vals[i].id].name);
		out[i].value = vals[i].value;
	}
	free(names);
	free(vals);
	return count + (int)extra;
}

/* The socket of net_af_packet's receive queue @q, or -1. That PMD has no receive interrupts,
 * but its socket polls readable while the queue's mmap ring holds frames (the kernel's
 * packet_poll), which is what a sleeping poller needs. DPDK exports no way to it: this reads
 * the first int of the PMD's queue (struct pkt_rx_queue, whose first member is the socket
 * in 22.11 and later), and takes it only if it is a packet socket: a PMD laid out otherwise
 * gives -1, and the port is looked at instead. */
static int af_packet_fd(const struct dpv_port *p, uint16_t q)
{
	const int *rxq = rte_eth_fp_ops[p->port_id].rxq.data[q];
	int domain = 0, fd;
	socklen_t len = sizeof(domain);
	struct stat st;

	if (rxq == NULL)
		return -1;
	fd = *rxq;
	if (fd < 0 || fstat(fd, &st) != 0 || !S_ISSOCK(st.st_mode) ||
	    getsockopt(fd, SOL_SOCKET, SO_DOMAIN, &domain, &len) != 0 || domain != AF_PACKET)
		return -1;
	return fd;
}

/* On a port spread in software, a software queue may hold frames its fd says nothing of:
 * no interrupts there. */
static int eth_rx_intr_fd(struct dpv_port *p, uint16_t q)
{
	int fd;

	if (!p->started || q >= p->nb_rxq || p->spread != NULL)
		return -ENOTSUP;
	if (p->af_packet) {
		fd = af_packet_fd(p, q);
		return fd >= 0 ? fd : -ENOTSUP;
	}
	if (!p->rx_intr)
		return -ENOTSUP;
	fd = rte_eth_dev_rx_intr_ctl_q_get_fd(p->port_id, q);
	return fd >= 0 ? fd : -ENOTSUP;
}

/* net_tap has no enable (-ENOTSUP): its fd is the tun queue's, readable while it holds frames. */
static int eth_rx_intr_enable(struct dpv_port *p, uint16_t q)
{
	int rc;

	if (!p->rx_intr)
		return 0;
	rc = rte_eth_dev_rx_intr_enable(p->port_id, q);
	return rc == -ENOTSUP ? 0 : rc;
}

static int eth_rx_intr_disable(struct dpv_port *p, uint16_t q)
{
	int rc;

	if (!p->rx_intr)
		return 0;
	rc = rte_eth_dev_rx_intr_disable(p->port_id, q);
	return rc == -ENOTSUP ? 0 : rc;
}

static const struct dpv_driver_ops ethdev_ops = {
	.name = "ethdev",
	.port_count = eth_port_count,
	.port_get = eth_port_get,
	.port_start = eth_port_start,
	.port_stop = eth_port_stop,
	.ports_close = eth_ports_close,
	.link_get = eth_link_get,
	.port_queues = eth_port_queues,
	.txq_attach = eth_txq_attach,
	.txq_detach = eth_txq_detach,
	.tx_burst = dpv__eth_tx_burst,
	.tx_prepare = dpv__eth_tx_prepare,
	.tx_reap = dpv__eth_tx_reap,
	.rx_mcast_set = eth_rx_mcast_set,
	.rx_burst = dpv__eth_rx_burst,
	.dma_map = eth_dma_map,
	.dma_unmap = eth_dma_unmap,
	.port_xstats = eth_port_xstats,
	.flow_steer = dpv__eth_flow_steer,
	.flow_unsteer = dpv__eth_flow_unsteer,
	.rx_intr_fd = eth_rx_intr_fd,
	.rx_intr_enable = eth_rx_intr_enable,
	.rx_intr_disable = eth_rx_intr_disable,
};

DPV_DRIVER_REGISTER(ethdev, ethdev_ops)
