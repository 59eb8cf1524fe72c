/* SPDX-License-Identifier: BSD-3-Clause */
/* Frames from gather lists, for any transport: a transmitter (struct dpv_txh) turns a checked
 * request into frames on a port queue, choosing per frame between the port's offloads and
 * byte-identical software, copying or attaching memory (zero-copy), and tells the owner when
 * the request's memory is free. Functions return 0 or a negative errno unless they say
 * otherwise. */
#ifndef DPV_TX_H
#define DPV_TX_H

#include <stdbool.h>
#include <stdint.h>
#include <sys/queue.h>

#include "dpv_driver.h"
#include "dpv_offload.h"

struct rte_mbuf;
struct rte_mempool;

/* One piece of a frame's gather list, already checked by the caller. */
struct dpv_tx_seg {
	const void *addr;
	uint32_t len;
};

enum dpv_tx_flags {
	DPV_TX_IP_CSUM = 1 << 0,   /* compute IPv4 header and TCP/UDP checksums */
	DPV_TX_TSO     = 1 << 1,   /* segment: tso_hdr + payload, mss bytes per frame */
	DPV_TX_INLINE  = 1 << 2,   /* segments are the caller's memory: copy them now */
};

/* What to send. */
struct dpv_tx_req {
	const struct dpv_tx_seg *seg;
	uint16_t nseg;
	uint32_t flags;            /* enum dpv_tx_flags */
	uint32_t len;              /* bytes in seg[] */
	const void *tso_hdr;
	const struct dpv_hdr_info *tso_info;   /* tso_hdr parsed (dpv__tso_hdr_check) */
	uint16_t tso_hdr_len;
	uint16_t mss;
	void *owner;               /* passed to the transmitter's released() */
};

/* Transmit counters of one transmitter, summed per port. */
struct dpv_tx_counters {
	uint64_t frames, bytes, copied, zero_copy;
	uint64_t tso_hw, tso_sw, tso_segments_sw, csum_hw, csum_sw;
};

#define DPV_TX_STASH 64

/* mbufs taken from a pool in bulk, handed out one at a time by one thread. */
struct dpv_mbuf_stash {
	uint16_t n;
	struct rte_mbuf *m[DPV_TX_STASH];
};

/* A user's handle on a port queue. The posting thread builds frames and the bursting thread
 * software TSO segments, each with a stash and counters of its own: no lock. */
struct dpv_txh {
	const struct dpv_driver_ops *ops;
	struct dpv_txq *q;
	const struct dpv_port_caps *caps;
	const struct dpv_offload_ctl *ctl;
	void (*released)(void *owner);    /* a request's memory is no longer used */
	struct rte_mempool *mp, *ext_mp, *zc_mp;
	uint32_t small_max;        /* frames up to this size fit one mbuf of mp */
	uint32_t copy_max;         /* non-inline frames up to this size are copied anyway */
	struct dpv_mbuf_stash build;   /* dpv__tx_build's mbufs */
	struct dpv_mbuf_stash burst;   /* dpv__tx_burst's: software TSO segments */
	struct dpv_tx_counters cnt;    /* frames, bytes, tso_segments_sw: burst side; others: build */
	TAILQ_ENTRY(dpv_txh) next;     /* its owner's list (statistics) */
	/* local loopback (NULL: none): while *loop_on, a copy of every packet the port takes
	 * goes to loop(), which returns how many it took (the rest are freed) */
	const bool *loop_on;
	unsigned int (*loop)(void *arg, struct rte_mbuf **m, unsigned int n);
	void *loop_arg;
	uint64_t loop_drops;           /* copies nobody took (no mbuf, or loop full) */
};

/* Refill @s from @h's pool; one mbuf, or NULL when the pool is empty. */
struct rte_mbuf *dpv__tx_stash_refill(struct dpv_txh *h, struct dpv_mbuf_stash *s);

/* An mbuf of @h's pool from stash @s (&h->build or &h->burst). */
static inline struct rte_mbuf *dpv__tx_mbuf(struct dpv_txh *h, struct dpv_mbuf_stash *s)
{
	if (__builtin_expect(s->n == 0, 0))
		return dpv__tx_stash_refill(h, s);
	return s->m[--s->n];
}

/* Would @len bytes of memory that does not move go out attached (zero-copy) rather than
 * copied? The one rule every builder follows (the RAW fast path folds it into a limit). */
static inline bool dpv__tx_zero_copy(const struct dpv_txh *h, uint32_t len)
{
	return h->caps->zero_copy && len > h->copy_max;
}

/* Attach @h to a queue of @port (its caps and offload control must outlive it). */
int dpv__txh_open(struct dpv_txh *h, const struct dpv_driver_ops *ops, struct dpv_port *port,
		 const struct dpv_port_caps *caps, const struct dpv_offload_ctl *ctl,
		 void (*released)(void *owner));
void dpv__txh_close(struct dpv_txh *h);
void dpv__tx_counters_add(struct dpv_tx_counters *to, const struct dpv_tx_counters *c);

/* Build the frame(s) of one request. -EMSGSIZE: the port cannot carry it; -ENOMEM/-ENOBUFS:
 * no mbufs now. released(req->owner) runs once no frame holds the caller's memory. */
int dpv__tx_build(struct dpv_txh *h, const struct dpv_tx_req *req, void **frame);
/* The common case, inlined by fast paths: one contiguous piece copied into one mbuf
 * (@len <= h->small_max). NULL: no mbuf now. */
struct rte_mbuf *dpv__tx_copy_one(struct dpv_txh *h, const void *data, uint32_t len);
/* IP_CSUM on a built single-mbuf frame: in the port where it can, else in software. */
void dpv__tx_csum(struct dpv_txh *h, struct rte_mbuf *m);
/* The IP_CSUM case of dpv__tx_copy_one: @nseg pieces copied into @m, a software L4 sum
 * taken while copying, else the port asked. */

void dpv__tx_copy_csum(struct dpv_txh *h, struct rte_mbuf *m, const struct dpv_tx_seg *seg,
		       uint16_t nseg, uint32_t len);
/* Software IP_CSUM while copying, without a port: the @len bytes of @seg copied to @dst with
 * the IPv4 header and TCP/UDP checksums written, the bytes a copy and dpv__sw_csum give. */
void dpv__tx_copy_sw_csum(uint8_t *dst, const struct dpv_tx_seg *seg, uint16_t nseg,
			  uint32_t len);
/* Hand @n packets to the port's queue (with the local loopback's copies, when it is on):
 * how many it took, in order. */
static inline uint16_t dpv__tx_pkts_burst(struct dpv_txh *h, struct rte_mbuf **pkts,
					  uint16_t n);
uint16_t dpv__tx_pkts_burst_looped(struct dpv_txh *h, struct rte_mbuf **pkts, uint16_t n);

static inline uint16_t dpv__tx_pkts_burst(struct dpv_txh *h, struct rte_mbuf **pkts, uint16_t n)
{
	if (__builtin_expect(h->loop_on != NULL && __atomic_load_n(h->loop_on, __ATOMIC_RELAXED),
			     0))
		return dpv__tx_pkts_burst_looped(h, pkts, n);
	return h->ops->tx_burst(h->q, pkts, n);
}

/* Hand built frames to the port; returns how many it took wholly, in order. */
uint16_t dpv__tx_burst(struct dpv_txh *h, void **frames, uint16_t n);
/* Drop a built frame that will never be sent (flush). */
void dpv__tx_drop(void *frame);
/* Ask the port to release transmitted buffers. */
void dpv__tx_reap(struct dpv_txh *h);

/* Offload decisions the layers above check while posting (same answer as dpv__tx_build). */
/* May IP_CSUM be asked at all? (false only when the HARDWARE policy meets a port without
 * checksum offloads and nothing forced to software) */
bool dpv__tx_ip_csum_allowed(const struct dpv_port_caps *caps, const struct dpv_offload_ctl *ctl);
/* May this TSO request be executed? (false when the HARDWARE policy forbids software and the
 * port cannot segment it) */
bool dpv__tx_tso_allowed(const struct dpv_port_caps *caps, const struct dpv_offload_ctl *ctl,
			const struct dpv_tx_req *req);

/* Free the zero-copy context pools once every context came back (at exit). */
void dpv__tx_pools_release(void);

#endif
