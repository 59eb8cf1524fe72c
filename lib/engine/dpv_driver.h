/* SPDX-License-Identifier: BSD-3-Clause */
/* The driver boundary: a driver moves rte_mbufs for the layers above (ports, queues, bursts,
 * link state, DMA maps) and knows no verbs object or offload policy. It fills a struct
 * dpv_driver_ops and registers it with DPV_DRIVER_REGISTER. Ops return 0 or a negative
 * errno unless they say otherwise. */
#ifndef DPV_DRIVER_H
#define DPV_DRIVER_H

#include <stdbool.h>
#include <stdint.h>
#include <sys/queue.h>

struct rte_mbuf;
struct rte_mempool;

struct dpv_port;        /* a driver's port */
struct dpv_txq;         /* a driver's transmit queue (possibly shared by several users) */

/* What a port is and can do, as the driver reads it from the hardware. */
struct dpv_port_caps {
	char name[64];            /* stable name of the port (ethdev name) */
	char driver[32];          /* PMD name */
	char bus[16];             /* "pci", "vdev" ... */
	uint16_t port_id;
	int socket_id;
	uint8_t mac[6];
	uint32_t mtu;
	uint32_t max_frame;       /* largest frame without VLAN tags: mtu + 14 */
	uint16_t max_tx_queues, max_rx_queues;
	uint16_t max_tx_desc, max_rx_desc;
	uint16_t max_tx_segs;     /* mbuf segments per frame */
	uint32_t max_tso;         /* largest TSO payload in hardware (0: none) */
	uint64_t tx_offloads;     /* RTE_ETH_TX_OFFLOAD_* the port offers (enabled once started) */
	bool tx_done_cleanup;     /* rte_eth_tx_done_cleanup works */
	bool zero_copy;           /* sent buffers come back on demand, at fixed addresses */
	bool needs_dma_map;       /* the device DMAs through an IOMMU map (PCI) */
	/* what the port's offloads really produce (doc/offload.md) */
	bool tso_gso;             /* segments with rte_gso: IPv4 only, CWR kept on every segment,
				   * the Ethernet header counted in the segment size (net_tap) */
	bool odd_segs_csum;       /* its L4 checksum is right over odd-length mbuf segments */
	bool tso_ip_csum;         /* its TSO writes IPv4 header checksums without IPV4_CKSUM */
	uint32_t max_tx_frame;    /* frames above this the PMD refuses without a word */
	/* once started: the pools frames are built from */
	struct rte_mempool *mp;   /* mbufs with data room */
	struct rte_mempool *ext_mp; /* mbufs without data room (external buffers) */
};

/* What a receive rule matches (ibv_create_flow's specs): every field ANDed with its mask
 * equals the value ANDed with it; proto/tos/ttl are IPv4's or IPv6's. Network order. */
struct dpv_flow_match {
	uint8_t dmac[6], dmac_m[6], smac[6], smac_m[6];
	uint16_t etype, etype_m, vlan, vlan_m;        /* EtherType after the VLAN tags */
	uint32_t sip, sip_m, dip, dip_m;
	uint8_t proto, proto_m, tos, tos_m, ttl, ttl_m;
	uint8_t sip6[16], sip6_m[16], dip6[16], dip6_m[16];
	uint8_t l4;                                   /* IPPROTO_TCP/UDP, 0: any */
	uint16_t sport, sport_m, dport, dport_m;
	uint8_t l3;          /* 4, 6: an IPv4/IPv6 header asked for (a spec of it), 0: not */
	bool tagged;         /* a VLAN tag asked for (a VLAN mask) */
};

/* One extended statistic, as the hardware's driver names it. */
struct dpv_port_xstat {
	char name[64];
	uint64_t value;
};

struct dpv_link {
	bool up;
	uint32_t speed_mbps;
};

/* What a started port tells the layer above, from any thread: its link went down or came
 * up (the layer turns it into port events). port_start hands it to the driver. */
struct dpv_port_events {
	void (*link)(void *arg, bool up);
	void *arg;
};

struct dpv_driver_ops {
	const char *name;
	/* Ports, in a stable order; port_get fills @caps and returns the port (NULL: gone). */
	int (*port_count)(void);
	struct dpv_port *(*port_get)(int index, struct dpv_port_caps *caps);
	/* Configure and start the port (idempotent), stop it; @ev: where its link changes go
	 * (copied) until it stops. */
	int (*port_start)(struct dpv_port *port, const struct dpv_port_events *ev);
	void (*port_stop)(struct dpv_port *port);
	/* Release every port before DPDK shuts down; port_get may probe them again. */
	void (*ports_close)(void);
	int (*link_get)(struct dpv_port *port, struct dpv_link *link);
	/* Queue counts as configured by port_start. */
	void (*port_queues)(struct dpv_port *port, uint16_t *nb_tx, uint16_t *nb_rx);
	/* A transmit queue (the least used one: queues are shared when users outnumber them). */
	int (*txq_attach)(struct dpv_port *port, struct dpv_txq **txq);
	void (*txq_detach)(struct dpv_txq *txq);
	/* Hand @n frames to the hardware; returns how many it took, in order. Thread-safe on a
	 * shared queue. */
	uint16_t (*tx_burst)(struct dpv_txq *txq, struct rte_mbuf **pkts, uint16_t n);
	/* Check and fix the offload fields of @n frames for the hardware (rte_eth_tx_prepare);
	 * returns how many are ready. */
	uint16_t (*tx_prepare)(struct dpv_txq *txq, struct rte_mbuf **pkts, uint16_t n);
	/* Ask the hardware to release transmitted buffers (progress while idle). */
	void (*tx_reap)(struct dpv_txq *txq);
	/* Also receive these @n multicast MACs (replacing the list), or all multicast where
	 * the port cannot filter; -ENOTSUP when it can do neither (NULL: never filters). */
	int (*rx_mcast_set)(struct dpv_port *port, const uint8_t (*macs)[6], unsigned int n);
	/* Up to @n frames received on receive queue @queue (< the nb_rx of port_queues). One
	 * thread at a time per queue; different queues may be polled at once. */
	uint16_t (*rx_burst)(struct dpv_port *port, uint16_t queue, struct rte_mbuf **pkts,
			     uint16_t n);
	/* Make [va, va + len) reachable by the port's DMA, and undo it. */
	int (*dma_map)(struct dpv_port *port, void *va, uint64_t iova, uint64_t len);
	int (*dma_unmap)(struct dpv_port *port, void *va, uint64_t iova, uint64_t len);
	/* The port's extended statistics: fills up to @n, returns how many there are (NULL:
	 * the driver has none). */
	int (*port_xstats)(struct dpv_port *port, struct dpv_port_xstat *xstats, unsigned int n);
	/* Steer the frames @m matches to receive queue @queue (*@handle: the rule); a hint,
	 * the layer above checks every frame. -EOPNOTSUPP; NULL: no steering. */

	int (*flow_steer)(struct dpv_port *port, const struct dpv_flow_match *m, uint16_t queue,
			  void **handle);
	void (*flow_unsteer)(struct dpv_port *port, void *handle);
	/* Receive interrupts, all optional (NULL: the driver has none). rx_intr_fd: a file
	 * descriptor that polls readable (level-triggered, epoll) while receive queue @queue
	 * holds frames, or may hold some since rx_intr_enable; it stays the driver's (never
	 * closed by the caller) and lives until port_stop; -ENOTSUP where the port has none.
	 * rx_intr_enable before sleeping on the fd (then one more rx_burst: frames that came
	 * before the enable may not raise it), rx_intr_disable while polling; both return 0
	 * where the fd needs no arming. */
	int (*rx_intr_fd)(struct dpv_port *port, uint16_t queue);
	int (*rx_intr_enable)(struct dpv_port *port, uint16_t queue);
	int (*rx_intr_disable)(struct dpv_port *port, uint16_t queue);
};

struct dpv_driver {
	TAILQ_ENTRY(dpv_driver) next;
	const struct dpv_driver_ops *ops;
};

void dpv__driver_register(struct dpv_driver *drv);
TAILQ_HEAD(dpv_driver_list, dpv_driver);
const struct dpv_driver_list *dpv__drivers(void);

#define DPV_DRIVER_REGISTER(nm, ops_table) \
	static struct dpv_driver dpv_driver_ ## nm = { .ops = &(ops_table) }; \
	__attribute__((constructor)) static void dpv_driver_init_ ## nm(void) \
	{ dpv__driver_register(&dpv_driver_ ## nm); }

#endif
