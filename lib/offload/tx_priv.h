/* SPDX-License-Identifier: BSD-3-Clause */
/* Shared by the frame builder (tx_frame.c) and the software segmenter (tx_tso.c). Private to
 * lib/offload. */
#ifndef DPV_TX_PRIV_H
#define DPV_TX_PRIV_H

#include <rte_mbuf.h>

#include "dpv_tx.h"

/* A position in a request's gather list. */
struct cursor {
	const struct dpv_tx_seg *seg;
	uint16_t nseg;
	uint16_t s;
	uint32_t off;
};

/* The shared-info structure of one request's external buffers, in framework memory. */
struct zc_ctx {
	struct rte_mbuf_ext_shared_info shinfo;
	void (*released)(void *owner);
	void *owner;
	void *store;               /* framework copy of an INLINE TSO payload, freed with it */
};

#define FRAME_TSO 1u               /* tag bit of a frame pointer: a TSO segmenter */

uint32_t cursor_take(struct cursor *c, uint32_t max, const uint8_t **p);
/* Append @len bytes from the cursor to @m (NULL: a new chain) as copies, in mbufs of @s. With
 * @sum, the copied bytes' raw sum is added to it while copying (dpv__cksum_copy). */
int dpv__tx_copy(struct dpv_txh *h, struct dpv_mbuf_stash *s, struct cursor *c, uint32_t len,
		struct rte_mbuf **m, uint16_t *sum);
/* Append @len bytes from the cursor to @m as external buffers sharing @z (one reference
 * each). -ENOBUFS or -E2BIG: nothing appended, copy instead. */
int dpv__tx_attach(struct dpv_txh *h, struct cursor *c, uint32_t len, struct rte_mbuf **m,
		  struct zc_ctx *z);
struct zc_ctx *dpv__tx_zc_get(struct dpv_txh *h, void *owner, uint16_t refs);
/* Drop one reference; the last one releases the request. */
void dpv__tx_zc_put(struct zc_ctx *z);

/* TSO (tx_tso.c): a segmenter built at post time, generating segments at burst time. */
struct tso_frame;
int dpv__tx_tso_build(struct dpv_txh *h, const struct dpv_tx_req *req, void **frame);
/* Up to @max next packets of the request into @pkts; how many. */
uint16_t dpv__tx_tso_next(struct dpv_txh *h, struct tso_frame *t, struct rte_mbuf **pkts,
			 uint16_t max);
/* Give back the last @n packets tso_next handed out (the port did not take them). */
void dpv__tx_tso_unget(struct tso_frame *t, uint16_t n);
bool dpv__tx_tso_done(const struct tso_frame *t);
void dpv__tx_tso_free(struct tso_frame *t);

#endif
