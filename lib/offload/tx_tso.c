/* SPDX-License-Identifier: BSD-3-Clause */
/* Software TSO. A segmenter holds a copy of the request's header (read while posting, as the
 * man page says of tso.hdr), the payload's gather list (or a copy of inline payload), and
 * makes segments a burst at a time as the port has room: any WR needs no more mbufs than a
 * burst. A segment is a fresh header mbuf and the payload attached (or copied), checksummed
 * in software. The attached pieces share one shared-info, on which the segmenter keeps a
 * reference until its last segment exists: the WR is released when the PMD freed them all. */

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include <rte_malloc.h>
#include <rte_mbuf.h>
#include <rte_mempool.h>

#include "tx_priv.h"

#define TSO_PEND 64
#define TSO_HDR_MAX 512

struct tso_frame {
	struct dpv_txh *txh;
	void *owner;
	struct dpv_hdr_info info;
	uint16_t hdr_len, mss;
	uint16_t csum_base;               /* what every segment's TCP checksum shares */
	uint32_t nseg, next;              /* segments in all; the next one to generate */
	uint32_t left;                    /* payload bytes not yet in a segment */
	struct cursor cur;
	struct zc_ctx *z;                 /* NULL: the payload is copied into the segments */
	void *store;                      /* INLINE payload copied while posting */
	uint16_t npend, pend_off;         /* pend[pend_off, npend): generated, not yet taken */
	struct rte_mbuf *pend[TSO_PEND];
	struct dpv_tx_seg seg[32];
	uint8_t hdr[TSO_HDR_MAX];
};

int dpv__tx_tso_build(struct dpv_txh *txh, const struct dpv_tx_req *wr, void **frame)
{
	struct tso_frame *t;
	/* an INLINE payload is copied into a framework store first, which may be attached */
	bool zc = dpv__tx_zero_copy(txh, wr->len);

	if (wr->tso_hdr_len > TSO_HDR_MAX || wr->nseg > RTE_DIM(t->seg))
		return -EINVAL;
	t = rte_malloc("dpv_tso", sizeof(*t), RTE_CACHE_LINE_SIZE);
	if (t == NULL)
		return -ENOMEM;
	*t = (struct tso_frame){ .txh = txh, .owner = wr->owner, .info = *wr->tso_info, .hdr_len = wr->tso_hdr_len,
				 .mss = wr->mss, .nseg = dpv__tso_segments(wr->len, wr->mss),
				 .left = wr->len };
	memcpy(t->hdr, wr->tso_hdr, wr->tso_hdr_len);
	t->csum_base = dpv__tso_csum_base(t->hdr, &t->info);
	memcpy(t->seg, wr->seg, wr->nseg * sizeof(wr->seg[0]));
	t->cur = (struct cursor){ .seg = t->seg, .nseg = wr->nseg };
	if ((wr->flags & DPV_TX_INLINE) && wr->len > 0) {
		/* the application may reuse an inline payload at once: keep a copy */
		uint8_t *store = rte_malloc("dpv_tso_inline", wr->len, 0);
		struct cursor c = { .seg = wr->seg, .nseg = wr->nseg };

		if (store == NULL) {
			rte_free(t);
			return -ENOMEM;
		}
		for (uint32_t off = 0; off < wr->len; ) {
			const uint8_t *p;
			uint32_t take = cursor_take(&c, wr->len - off, &p);

			memcpy(store + off, p, take);
			off += take;
		}
		t->store = store;
		t->seg[0] = (struct dpv_tx_seg){ store, wr->len };
		t->cur.nseg = 1;
	}
	if (zc && (t->z = dpv__tx_zc_get(txh, wr->owner, 1)) != NULL) {
		t->z->store = t->store;           /* freed with the last piece */
		t->store = NULL;
	}
	*frame = (void *)((uintptr_t)t | FRAME_TSO);
	return 0;
}

/* The segmenter made its last segment: it holds no application memory any more. */
static void tso_finished(struct tso_frame *t)
{
	if (t->z != NULL) {
		dpv__tx_zc_put(t->z);             /* released when the PMD frees the last piece */
		t->z = NULL;
	} else {
		rte_free(t->store);
		t->store = NULL;
		t->txh->released(t->owner);       /* every byte was copied */
	}
}

/* The raw sum of the next @len bytes at @c (a copy: the caller's cursor does not move). */
static uint16_t cursor_sum(struct cursor c, uint32_t len)
{
	uint16_t sum = 0;

	for (uint32_t done = 0; done < len; ) {
		const uint8_t *p;
		uint32_t take = cursor_take(&c, len - done, &p);

		sum = dpv__cksum_cont(sum, p, take, done);
		done += take;
	}
	return sum;
}

/* Each payload byte is read once: summed where it is attached, summed while copied where it
 * is copied; the header's share of the TCP checksum is folded in from the WR's base. */
static struct rte_mbuf *tso_segment(struct dpv_txh *txh, struct tso_frame *t)
{
	uint32_t len = RTE_MIN(t->left, (uint32_t)t->mss);
	struct rte_mbuf *m = dpv__tx_mbuf(txh, &txh->burst);
	uint8_t *h;
	uint16_t psum = 0;
	int rc = -ENOMEM;

	if (m == NULL)
		return NULL;
	h = rte_pktmbuf_mtod(m, uint8_t *);
	rte_memcpy(h, t->hdr, t->hdr_len);
	m->data_len = t->hdr_len;
	m->pkt_len = t->hdr_len;
	dpv__tso_header(h, &t->info, t->next, t->nseg, len, t->mss);
	if (len > 0 && t->z != NULL) {
		struct cursor saved = t->cur;

		rc = dpv__tx_attach(txh, &t->cur, len, &m, t->z);
		if (rc != 0)
			t->cur = saved;
		else
			psum = cursor_sum(saved, len);
	}
	if (rc != 0 && len > 0) {
		struct cursor saved = t->cur;

		rc = dpv__tx_copy(txh, &txh->burst, &t->cur, len, &m, &psum);
		if (rc != 0) {
			/* out of mbufs part way: the segment is made again later, from the same
			 * payload byte (the cursor had moved over what was copied) */
			t->cur = saved;
			rte_pktmbuf_free(m);
			return NULL;
		}
	}
	dpv__tso_csum(h, &t->info, t->csum_base, len, psum);
	t->left -= len;
	txh->cnt.tso_segments_sw++;
	if (++t->next == t->nseg)
		tso_finished(t);
	return m;
}

uint16_t dpv__tx_tso_next(struct dpv_txh *txh, struct tso_frame *t, struct rte_mbuf **pkts,
			  uint16_t max)
{
	uint16_t n = 0;

	while (n < max) {
		if (t->pend_off == t->npend) {
			if (t->next == t->nseg)
				break;
			t->pend_off = t->npend = 0;
			while (t->npend < TSO_PEND && t->next < t->nseg) {
				struct rte_mbuf *m = tso_segment(txh, t);

				if (m == NULL)
					break;              /* out of mbufs: try again later */
				t->pend[t->npend++] = m;
			}
			if (t->npend == 0)
				break;
		}
		pkts[n++] = t->pend[t->pend_off++];
	}
	return n;
}

void dpv__tx_tso_unget(struct tso_frame *t, uint16_t n)
{
	t->pend_off -= n;
}

bool dpv__tx_tso_done(const struct tso_frame *t)
{
	return t->next == t->nseg && t->pend_off == t->npend;
}

/* Taken by the port (nothing pending), or dropped (flush): free what is left. */
void dpv__tx_tso_free(struct tso_frame *t)
{
	for (uint16_t i = t->pend_off; i < t->npend; i++)
		rte_pktmbuf_free(t->pend[i]);
	if (t->next != t->nseg) {
		t->next = t->nseg;
		tso_finished(t);
	}
	rte_free(t);
}
