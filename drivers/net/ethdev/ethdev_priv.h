/* SPDX-License-Identifier: BSD-3-Clause */
/* The ethdev driver's port and queue state, shared by its port (ethdev.c) and burst
 * (ethdev_rxtx.c) halves. Private to the driver. */
#ifndef DPV_ETHDEV_PRIV_H
#define DPV_ETHDEV_PRIV_H

#include <stdbool.h>
#include <stdint.h>

#include <rte_ethdev.h>
#include <rte_flow.h>
#include "dpv_lock.h"

#include "dpv_driver.h"
#include "dpv_engine.h"

extern int dpv_ethdev_logtype;
#define PMD_LOG(level, fmt, ...) \
	rte_log(RTE_LOG_ ## level, dpv_ethdev_logtype, "dpverbs ethdev: " fmt "\n", ##__VA_ARGS__)

#define RX_CKSUM (RTE_ETH_RX_OFFLOAD_IPV4_CKSUM | RTE_ETH_RX_OFFLOAD_TCP_CKSUM | \
		  RTE_ETH_RX_OFFLOAD_UDP_CKSUM)
#define HW_TX_OFFLOADS (RTE_ETH_TX_OFFLOAD_IPV4_CKSUM | RTE_ETH_TX_OFFLOAD_TCP_CKSUM | \
			RTE_ETH_TX_OFFLOAD_UDP_CKSUM | RTE_ETH_TX_OFFLOAD_TCP_TSO)

/* A port transmit queue, shared by the users attached to it. */
struct dpv_txq {
	uint16_t port_id, qid;
	int users;
	dpv_spinlock_t lock;       /* taken on every burst: users may share the queue */
};

struct dpv_port {
	uint16_t port_id;
	bool present;              /* probed and not removed */
	bool started;
	bool link_up;              /* as link_watch last read it (__atomic) */
	struct dpv_port_events ev; /* where link changes go (port_start's) */
	uint64_t link_polls;       /* link_watch runs (__atomic) */
	char name[RTE_ETH_NAME_MAX_LEN];
	char devargs[512];         /* to probe the port again after ports_close */
	uint16_t nb_txq, nb_rxq;
	struct dpv_txq txq[RTE_MAX_QUEUES_PER_PORT];
	dpv_spinlock_t txq_lock;   /* attach and detach */
	struct rte_mempool *mp, *ext_mp;
	bool tx_done_cleanup;      /* rte_eth_tx_done_cleanup works */
	bool zero_copy;            /* sent buffers come back on demand, at fixed addresses */
	bool iova_is_va;           /* buffer iova = its virtual address */
	bool dma;                  /* a PCI device (a vdev does no DMA and filters no MAC) */
	bool allmulti;             /* all multicast turned on by eth_rx_mcast_set */
	uint16_t max_segs;         /* mbuf segments a frame may have */
	uint64_t tx_offloads;      /* enabled at configure time */
	uint64_t rss_hf;           /* RSS on these (several receive queues), 0: none */
	uint32_t mtu;
	bool tso_gso;              /* rte_gso inside (net_tap) */
	bool odd_segs_csum;        /* its L4 checksum is right over odd-length mbuf segments */
	bool tso_ip_csum;          /* its TSO writes IPv4 header checksums (virtio: the host) */
	uint32_t max_tx_frame;     /* frames above this the PMD refuses (net_tap: MTU + 22) */
	bool no_flows;             /* its PMD refused an rte_flow rule: not asked again */
	struct dpv_spread *spread; /* receive queues spread in software (ethdev_spread.c), or NULL */
	bool rx_intr;              /* configured with receive interrupts (intr_conf.rxq) */
	bool af_packet;            /* net_af_packet: its sockets tell (eth_rx_intr_fd) */
};

/* Receive queues spread in software over the port's own (ethdev_spread.c): nb_rxq software
 * queues, at most DPV_SPREAD_MAX, filled from @nb_hw hardware queues. */
#define DPV_SPREAD_MAX 64
struct dpv_spread;
int dpv__eth_spread_init(struct dpv_port *p, uint16_t nb_sw, uint16_t nb_hw, unsigned int desc);
void dpv__eth_spread_fini(struct dpv_port *p);
uint16_t dpv__eth_spread_rx(struct dpv_port *p, uint16_t queue, struct rte_mbuf **pkts,
			    uint16_t n);
unsigned int dpv__eth_spread_xstats(const struct dpv_port *p, struct dpv_port_xstat *out,
				    unsigned int n);
/* The symmetric hash on the IP/UDP/TCP tuple of the frame at @b; 0: not IP. */
uint32_t dpv__eth_flow_hash(const uint8_t *b, uint32_t len);

/* Receive rules as rte_flow rules (ethdev_flow.c): a pattern and its items' specs and
 * masks, built from one rule. */
struct dpv_eth_pattern {
	struct rte_flow_item item[6];
	struct rte_flow_item_eth eth, eth_m;
	struct rte_flow_item_vlan vlan, vlan_m;
	struct rte_flow_item_ipv4 ip4, ip4_m;
	struct rte_flow_item_ipv6 ip6, ip6_m;
	struct rte_flow_item_tcp tcp, tcp_m;
	struct rte_flow_item_udp udp, udp_m;
	int n;
};

/* @m as one rte_flow pattern; -EOPNOTSUPP for a rule one pattern cannot say. */
int dpv__eth_flow_pattern(const struct dpv_flow_match *m, struct dpv_eth_pattern *p);
int dpv__eth_flow_steer(struct dpv_port *port, const struct dpv_flow_match *m, uint16_t queue,
			void **handle);
void dpv__eth_flow_unsteer(struct dpv_port *port, void *handle);

/* Bursts (ethdev_rxtx.c). */
uint16_t dpv__eth_tx_burst(struct dpv_txq *txq, struct rte_mbuf **pkts, uint16_t n);
uint16_t dpv__eth_tx_prepare(struct dpv_txq *txq, struct rte_mbuf **pkts, uint16_t n);
void dpv__eth_tx_reap(struct dpv_txq *txq);
uint16_t dpv__eth_rx_burst(struct dpv_port *p, uint16_t queue, struct rte_mbuf **pkts,
			  uint16_t n);

#endif
