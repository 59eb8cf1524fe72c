/* The boundary between the verbs core (semantics: what is valid, what completes, in which
 * order) and a driver (transport: how bytes reach a wire, which offloads the hardware does).
 * A driver fills a struct dpv_driver_ops and registers it with DPV_DRIVER_REGISTER.
 * Ops return 0 or a negative errno unless they say otherwise. */
#ifndef DPV_DRIVER_H
#define DPV_DRIVER_H

#include <stdbool.h>
#include <stdint.h>
#include <sys/queue.h>

struct dpv_port_stats;
struct dpv_xstat;

struct dpv_port;        /* a driver's port */
struct dpv_txq;         /* a driver's transmit queue */
struct dpv_wqe;         /* the verbs core's send queue entry */

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
	uint32_t hw_offloads;     /* enum dpv_offload */
	bool tx_done_cleanup;     /* rte_eth_tx_done_cleanup works */
	bool zero_copy;           /* non-inline sends attach MR memory (no copy) */
	int offload_policy;       /* enum dpv_offload_policy */
	bool needs_dma_map;       /* the device DMAs through an IOMMU map (PCI) */
	uint32_t sw_forced;       /* enum dpv_offload: always in software, whatever the policy */
};

struct dpv_link {
	bool up;
	uint32_t speed_mbps;
};

/* One piece of a frame's gather list, already checked against its MR. */
struct dpv_tx_seg {
	const void *addr;
	uint32_t len;
};

enum dpv_tx_flags {
	DPV_TX_IP_CSUM = 1 << 0,   /* compute IPv4 header and TCP/UDP checksums */
	DPV_TX_TSO     = 1 << 1,   /* segment: tso_hdr + payload, mss bytes per frame */
	DPV_TX_INLINE  = 1 << 2,   /* segments are application memory: copy them now */
};

/* A validated send WR as the core hands it to a driver. */
struct dpv_tx_wr {
	const struct dpv_tx_seg *seg;
	uint16_t nseg;
	uint32_t flags;            /* enum dpv_tx_flags */
	uint32_t len;              /* bytes in seg[] */
	const void *tso_hdr;
	uint16_t tso_hdr_len;
	uint16_t mss;
	struct dpv_wqe *wqe;       /* passed back in dpv_tx_released() */
};

struct dpv_driver_ops {
	const char *name;
	/* Ports, in a stable order; port_get fills @caps and returns the port (NULL: gone). */
	int (*port_count)(void);
	struct dpv_port *(*port_get)(int index, struct dpv_port_caps *caps);
	/* Configure and start the port for use by QPs (idempotent), stop it. */
	int (*port_start)(struct dpv_port *port);
	void (*port_stop)(struct dpv_port *port);
	/* Release every port before DPDK shuts down; port_get may probe them again. */
	void (*ports_close)(void);
	int (*link_get)(struct dpv_port *port, struct dpv_link *link);
	/* Queue counts as configured by port_start. */
	void (*port_queues)(struct dpv_port *port, uint16_t *nb_tx, uint16_t *nb_rx);
	/* A transmit queue for a QP (queues are shared when QPs outnumber them). */
	int (*txq_attach)(struct dpv_port *port, struct dpv_txq **txq);
	void (*txq_detach)(struct dpv_txq *txq);
	/* Build the frame(s) of one WR at post time; inline data is copied here. -EMSGSIZE: the
	 * port cannot carry what the WR asks, an execution error (IBV_WC_LOC_LEN_ERR). The driver calls
	 * dpv_tx_released(wr->wqe) once the frame holds no application memory any more: at once
	 * for a copied frame, from the buffers' free callback for a zero-copy one. */
	int (*tx_build)(struct dpv_txq *txq, const struct dpv_tx_wr *wr, void **frame);
	/* Hand built frames to the hardware; returns how many it took, in order. */
	uint16_t (*tx_burst)(struct dpv_txq *txq, void **frames, uint16_t n);
	/* Drop a built frame that will never be sent (flush). */
	void (*tx_drop)(void *frame);
	/* Ask the hardware to release transmitted buffers (progress while idle). */
	void (*tx_reap)(struct dpv_txq *txq);
	/* Receive: up to @n frames from every receive queue of the port (driver frames). */
	uint16_t (*rx_burst)(struct dpv_port *port, void **frames, uint16_t n);
	/* A received frame: its length; its first contiguous bytes (the headers); a copy of
	 * [off, off + len); whether its IPv4 header and TCP/UDP checksums are right; release
	 * @n of them (in one go: freeing in bulk is cheaper per frame). */
	uint32_t (*rx_len)(void *frame);
	const uint8_t *(*rx_head)(void *frame, uint32_t *len);
	void (*rx_read)(void *frame, uint32_t off, void *dst, uint32_t len);
	bool (*rx_csum_ok)(void *frame);
	void (*rx_free)(void **frames, uint16_t n);
	/* enum dpv_offload_policy of the port; its transmit counters. */
	int (*set_offload_policy)(struct dpv_port *port, int policy);
	void (*port_stats)(struct dpv_port *port, struct dpv_port_stats *stats);
	/* Make [va, va + len) reachable by the port's DMA, and undo it. */
	int (*dma_map)(struct dpv_port *port, void *va, uint64_t iova, uint64_t len);
	int (*dma_unmap)(struct dpv_port *port, void *va, uint64_t iova, uint64_t len);
	/* The port's extended statistics: fills up to @n, returns how many there are (NULL:
	 * the driver has none; dpv_query_port_xstats answers EOPNOTSUPP). */
	int (*port_xstats)(struct dpv_port *port, struct dpv_xstat *xstats, unsigned int n);
	/* enum dpv_offload bits that always run in software on the port (NULL: not supported). */
	int (*set_offload_software)(struct dpv_port *port, uint32_t offloads);
};

/* Called by a driver once all buffers of the frame built for @wqe are released. */
void dpv_tx_released(struct dpv_wqe *wqe);

/* Called by a driver, from any thread, when the link of @port went down or came up: every
 * context open on its device gets IBV_EVENT_PORT_ERR or IBV_EVENT_PORT_ACTIVE. */
void dpv_port_link_event(struct dpv_port *port, bool up);

struct dpv_driver {
	TAILQ_ENTRY(dpv_driver) next;
	const struct dpv_driver_ops *ops;
};

void dpv_driver_register(struct dpv_driver *drv);
TAILQ_HEAD(dpv_driver_list, dpv_driver);
const struct dpv_driver_list *dpv_drivers(void);

#define DPV_DRIVER_REGISTER(nm, ops_table) \
	static struct dpv_driver dpv_driver_ ## nm = { .ops = &(ops_table) }; \
	__attribute__((constructor)) static void dpv_driver_init_ ## nm(void) \
	{ dpv_driver_register(&dpv_driver_ ## nm); }

#endif
