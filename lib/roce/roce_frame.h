/* SPDX-License-Identifier: BSD-3-Clause */
/* RoCEv2 frames into mbufs, for every RoCE transport (UD, RC, UC, XRC): the headers of the
 * codec (roce_wire.h) on a path, then the payload copied from a gather list while its ICRC is
 * computed over the copy, the pad and the ICRC. Implemented in roce_frame.c beside the codec's
 * byte-buffer frames. Private to lib/roce; functions return 0 or a negative errno. */
#ifndef DPV_ROCE_FRAME_H
#define DPV_ROCE_FRAME_H

#include <stdint.h>

#include "dpv_tx.h"
#include "roce_wire.h"

/* A position in a gather list of checked segments. */
struct dpv_roce_cursor {
	const struct dpv_tx_seg *seg;
	uint16_t nseg, s;
	uint32_t off;
};

/* Up to @max contiguous bytes at @c, in *@p; the cursor moves past them. 0 at the end. */
static inline uint32_t dpv__roce_cursor_next(struct dpv_roce_cursor *c, uint32_t max,
					     const uint8_t **p)
{
	uint32_t k;

	while (c->s < c->nseg && c->off == c->seg[c->s].len) {
		c->s++;
		c->off = 0;
	}
	if (c->s == c->nseg)
		return 0;
	k = c->seg[c->s].len - c->off;
	if (k > max)
		k = max;
	*p = (const uint8_t *)c->seg[c->s].addr + c->off;
	c->off += k;
	return k;
}

/* One frame on @path with headers @hd and a payload of @pre_len bytes of @pre (a TSO
 * segment's header; NULL, 0 for none) then @len bytes from @c (which moves past them), copied
 * into mbufs of @h (chained when longer than one), pad and ICRC included. With
 * path->icrc_skip the ICRC is 4 zero bytes and the mbuf is marked (dpv__loop_no_icrc). 0,
 * -ENOMEM (no mbuf now), -EINVAL (the codec refused the headers, or @c ran out). */
int dpv__roce_frame_mbuf(struct dpv_txh *h, const struct dpv_roce_path *path,
			 const struct dpv_roce_hdrs *hd, const uint8_t *pre, uint32_t pre_len,
			 struct dpv_roce_cursor *c, uint32_t len, struct rte_mbuf **out);

#endif
