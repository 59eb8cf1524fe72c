/* SPDX-License-Identifier: BSD-3-Clause */
/* Fault injection: drop, duplicate, reorder and corrupt a seeded fraction of a port's frames
 * (dpv_fault.h). The random draws come from one xorshift64* generator per direction, so a
 * seed gives the same decisions for the same sequence of bursts. */
#include <errno.h>
#include <string.h>

#include <rte_mbuf.h>

#include "dpv_fault.h"

#define PPM 1000000u
#define MAX_PASSED 3       /* a held frame is passed by 1..3 bursts before it comes out */
#define MAX_IDLE 64        /* ... or after this many calls without frames */

static uint64_t next(struct dpv_fault_dir *d)
{
	uint64_t x = d->rng;

	x ^= x >> 12;
	x ^= x << 25;
	x ^= x >> 27;
	d->rng = x;
	return x * 0x2545F4914F6CDD1DULL;
}

static bool hit(struct dpv_fault_dir *d, uint32_t ppm)
{
	return ppm != 0 && (uint32_t)(next(d) >> 32) % PPM < ppm;
}

int dpv__fault_set(struct dpv_fault_dir *d, const struct dpv_fault_rates *r, uint64_t seed)
{
	if (r->drop_ppm > PPM || r->dup_ppm > PPM || r->reorder_ppm > PPM ||
	    r->corrupt_ppm > PPM)
		return -EINVAL;
	d->r = *r;
	/* splitmix64 of the seed: a zero seed must not leave xorshift stuck at zero */
	seed += 0x9E3779B97F4A7C15ULL;
	seed = (seed ^ (seed >> 30)) * 0xBF58476D1CE4E5B9ULL;
	seed = (seed ^ (seed >> 27)) * 0x94D049BB133111EBULL;
	d->rng = (seed ^ (seed >> 31)) | 1;
	return 0;
}

/* Invert one byte in the second half of @m (any segment). */
static void corrupt(struct dpv_fault_dir *d, struct rte_mbuf *m)
{
	uint32_t len = rte_pktmbuf_pkt_len(m), off;

	if (len == 0)
		return;
	off = len / 2 + (uint32_t)(next(d) % (len - len / 2));
	for (struct rte_mbuf *s = m; s != NULL; s = s->next) {
		if (off < s->data_len) {
			uint8_t *p = rte_pktmbuf_mtod_offset(s, uint8_t *, off);

			*p = (uint8_t)~*p;
			return;
		}
		off -= s->data_len;
	}
}

uint16_t dpv__fault_apply(struct dpv_fault_dir *d, struct rte_mbuf **pkts, uint16_t n,
			  uint16_t cap, struct rte_mempool *mp)
{
	struct rte_mbuf *out[cap];
	uint16_t k = 0;

	for (uint16_t i = 0; i < n; i++) {
		struct rte_mbuf *m = pkts[i];

		d->c.seen++;
		if (hit(d, d->r.drop_ppm)) {
			rte_pktmbuf_free(m);
			d->c.dropped++;
			continue;
		}
		if (hit(d, d->r.corrupt_ppm)) {
			corrupt(d, m);
			d->c.corrupted++;
		}
		if (hit(d, d->r.reorder_ppm) && d->nb_held < DPV_FAULT_HOLD) {
			d->held[d->nb_held].m = m;
			d->held[d->nb_held].wait = (uint8_t)(1 + next(d) % MAX_PASSED);
			d->held[d->nb_held++].idle = 0;
			d->c.reordered++;
			continue;
		}
		out[k++] = m;
		/* a duplicate needs room for itself and every frame still to come */
		if (hit(d, d->r.dup_ppm) && k + (n - i - 1) < cap) {
			struct rte_mbuf *c = rte_pktmbuf_copy(m, mp != NULL ? mp : m->pool, 0,
							      UINT32_MAX);

			if (c != NULL) {
				out[k++] = c;
				d->c.duplicated++;
			}
		}
	}
	/* held frames whose time has come go after this call's frames (one held during this
	 * call with wait 1 comes out at its end: behind the frames that followed it) */
	unsigned int keep = 0;

	for (unsigned int h = 0; h < d->nb_held; h++) {
		if (n > 0 && d->held[h].wait > 0)
			d->held[h].wait--;
		else if (n == 0)
			d->held[h].idle++;
		if ((d->held[h].wait == 0 || d->held[h].idle >= MAX_IDLE) && k < cap)
			out[k++] = d->held[h].m;
		else
			d->held[keep++] = d->held[h];
	}
	d->nb_held = keep;
	memcpy(pkts, out, k * sizeof(*out));
	return k;
}

void dpv__fault_drain(struct dpv_fault_dir *d)
{
	for (unsigned int h = 0; h < d->nb_held; h++)
		rte_pktmbuf_free(d->held[h].m);
	d->nb_held = 0;
}
