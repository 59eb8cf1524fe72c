/* The ethdev driver's port and queue state, shared by its port (ethdev.c) and transmit
 * (ethdev_tx.c) halves. Private to the driver. */
#ifndef DPV_ETHDEV_PRIV_H
#define DPV_ETHDEV_PRIV_H

#include <stdbool.h>
#include <stdint.h>

#include <rte_ethdev.h>
#include "dpv_lock.h"

#include "dpv_driver.h"
#include "dpv_engine.h"
#include "dpv_offload.h"
#include "dpverbs.h"

extern int dpv_ethdev_logtype;
#define PMD_LOG(level, fmt, ...) \
	rte_log(RTE_LOG_ ## level, dpv_ethdev_logtype, "dpverbs ethdev: " fmt "\n", ##__VA_ARGS__)

#define HW_TX_OFFLOADS (RTE_ETH_TX_OFFLOAD_IPV4_CKSUM | RTE_ETH_TX_OFFLOAD_TCP_CKSUM | \
			RTE_ETH_TX_OFFLOAD_UDP_CKSUM | RTE_ETH_TX_OFFLOAD_TCP_TSO)

/* Per-QP transmit counters, summed per port by dpv_query_port_stats. */
struct tx_counters {
	uint64_t frames, bytes, copied, zero_copy;
	uint64_t tso_hw, tso_sw, tso_segments_sw, csum_hw, csum_sw;
};

/* A position in a WR's gather list. */
struct cursor {
	const struct dpv_tx_seg *seg;
	uint16_t nseg;
	uint16_t s;
	uint32_t off;
};

/* The shared-info structure of one WR's external buffers, in framework memory. */
struct zc_ctx {
	struct rte_mbuf_ext_shared_info shinfo;
	struct dpv_wqe *wqe;
	void *store;               /* framework copy of an INLINE TSO payload, freed with it */
};

#define FRAME_TSO 1u               /* tag bit of a frame pointer: a TSO segmenter */

/* A port transmit queue, shared by the QPs attached to it. */
struct eth_queue {
	uint16_t qid;
	int users;
	dpv_spinlock_t lock;       /* taken on every burst: QPs may share the queue */
};

#define TXQ_STASH 64

/* mbufs taken from a pool in bulk, handed out one at a time by one thread. */
struct mbuf_stash {
	uint16_t n;
	struct rte_mbuf *m[TXQ_STASH];
};

/* One QP's handle on a transmit queue: what it builds frames with. Frames are built by the
 * posting thread (tx_build) and software TSO segments by the thread that bursts (tx_burst),
 * the service lcore in service mode: each side has a stash and counters of its own, so
 * neither needs a lock. */
struct dpv_txq {
	struct dpv_port *port;
	struct eth_queue *q;
	struct rte_mempool *mp;    /* mbufs with data room: copies and headers */
	struct rte_mempool *ext_mp; /* mbufs without data room: attached to MR memory */
	struct rte_mempool *zc_mp; /* zero-copy contexts (shared info + the WR) */
	uint32_t small_max;        /* frames up to this size fit one mbuf of mp */
	uint32_t copy_max;         /* non-inline frames up to this size are copied anyway */
	struct mbuf_stash build;   /* tx_build's mbufs */
	struct mbuf_stash burst;   /* tx_burst's: software TSO segment headers and copies */
	struct tx_counters cnt;    /* frames, bytes, tso_segments_sw: burst side; others: build */
	TAILQ_ENTRY(dpv_txq) next;           /* on its port's list */
};

struct dpv_port {
	uint16_t port_id;
	bool present;              /* probed and not removed */
	bool started;
	bool link_up;              /* as link_watch last read it (__atomic) */
	uint64_t link_polls;       /* link_watch runs (__atomic) */
	char name[RTE_ETH_NAME_MAX_LEN];
	char devargs[512];         /* to probe the port again after ports_close */
	uint16_t nb_txq, nb_rxq;
	struct eth_queue txq[RTE_MAX_QUEUES_PER_PORT];
	struct rte_mempool *mp, *ext_mp;
	bool tx_done_cleanup;      /* rte_eth_tx_done_cleanup works */
	bool zero_copy;            /* sends attach MR memory instead of copying it */
	bool iova_is_va;           /* buffer iova = its virtual address */
	uint16_t max_segs;         /* mbuf segments a frame may have */
	uint64_t tx_offloads;      /* enabled at configure time */
	uint32_t mtu;
	bool is_tap;               /* rte_gso inside: IPv4 only, CWR on every segment */
	bool odd_segs_csum;        /* its L4 checksum is right over odd-length mbuf segments */
	bool tso_ip_csum;          /* its TSO writes the segments' IPv4 header checksums even
				    * without IPV4_CKSUM (virtio: the host segments) */
	uint32_t max_tx_frame;     /* frames above this the PMD refuses (net_tap: MTU + 22) */
	int policy;                /* enum dpv_offload_policy */
	uint32_t sw_forced;        /* enum dpv_offload: always in software (dpv_set_offload_software) */
	struct rte_mempool *zc_mp;
	dpv_spinlock_t txqs_lock;            /* attach, detach and statistics */
	TAILQ_HEAD(, dpv_txq) txqs;          /* the QPs' handles, for statistics */
	struct tx_counters gone;             /* counters of detached handles */
};

/* Transmit ops (ethdev_tx.c). */
int dpv_eth_tx_build(struct dpv_txq *txq, const struct dpv_tx_wr *wr, void **frame);
uint16_t dpv_eth_tx_burst(struct dpv_txq *txq, void **frames, uint16_t n);
void dpv_eth_tx_drop(void *frame);
void dpv_eth_tx_reap(struct dpv_txq *txq);
uint32_t cursor_take(struct cursor *c, uint32_t max, const uint8_t **p);
/* An mbuf of @txq's pool from stash @s (&txq->build or &txq->burst). */
struct rte_mbuf *dpv_eth_mbuf(struct dpv_txq *txq, struct mbuf_stash *s);
/* Append @len bytes from the cursor to @m (NULL: a new chain) as copies, in mbufs of @s. */
int dpv_eth_copy(struct dpv_txq *txq, struct mbuf_stash *s, struct cursor *c, uint32_t len,
		 struct rte_mbuf **m);
/* Append @len bytes from the cursor to @m as external buffers sharing @z (one reference
 * each). -ENOBUFS or -E2BIG: nothing appended, copy instead. */
int dpv_eth_attach(struct dpv_txq *txq, struct cursor *c, uint32_t len, struct rte_mbuf **m,
		   struct zc_ctx *z);
struct zc_ctx *dpv_eth_zc_get(struct dpv_txq *txq, struct dpv_wqe *wqe, uint16_t refs);
/* Drop one reference; the last one releases the WR. */
void dpv_eth_zc_put(struct zc_ctx *z);

/* Receive (ethdev_rx.c). */
uint16_t dpv_eth_rx_burst(struct dpv_port *p, void **frames, uint16_t n);
uint32_t dpv_eth_rx_len(void *frame);
const uint8_t *dpv_eth_rx_head(void *frame, uint32_t *len);
void dpv_eth_rx_read(void *frame, uint32_t off, void *dst, uint32_t len);
bool dpv_eth_rx_csum_ok(void *frame);
void dpv_eth_rx_free(void **frames, uint16_t n);

/* TSO (ethdev_tso.c): a segmenter built at post time, generating segments at burst time. */
struct tso_frame;
int dpv_eth_tso_build(struct dpv_txq *txq, const struct dpv_tx_wr *wr,
		      const struct dpv_hdr_info *info, void **frame);
/* Up to @max next packets of the WR into @pkts; how many. */
uint16_t dpv_eth_tso_next(struct dpv_txq *txq, struct tso_frame *t, struct rte_mbuf **pkts,
			  uint16_t max);
/* Give back the last @n packets tso_next handed out (the PMD did not take them). */
void dpv_eth_tso_unget(struct tso_frame *t, uint16_t n);
bool dpv_eth_tso_done(const struct tso_frame *t);
void dpv_eth_tso_free(struct tso_frame *t);

/* Create the port's zero-copy context pool; free it once every context came back. */
int dpv_eth_zc_pool_create(struct dpv_port *p, int socket);
void dpv_eth_zc_pool_free(struct dpv_port *p);

#endif
