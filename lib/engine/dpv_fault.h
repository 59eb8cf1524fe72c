/* SPDX-License-Identifier: BSD-3-Clause */
/* Fault injection on a port (fault.c): a seeded transformer of frame bursts that drops,
 * duplicates, reorders and corrupts a fraction of them (doc/faults.md). Mbufs only. */
#ifndef DPV_FAULT_H
#define DPV_FAULT_H

#include <stdbool.h>
#include <stdint.h>

#include "dpv_lock.h"

struct rte_mbuf;
struct rte_mempool;

/* Fractions are parts per million of frames (0 .. 1000000). */
struct dpv_fault_rates {
	uint32_t drop_ppm, dup_ppm, reorder_ppm, corrupt_ppm;
};

struct dpv_fault_counts {
	uint64_t seen, dropped, duplicated, reordered, corrupted;
};

#define DPV_FAULT_HOLD 32	/* frames a direction holds back for reordering */

/* One direction of one port. Not thread-safe: the caller serializes (the receive side runs
 * under the port's rx_lock; the transmit side takes @lock). */
struct dpv_fault_dir {
	struct dpv_fault_rates r;
	uint64_t rng;
	struct {
		struct rte_mbuf *m;
		uint8_t wait;	/* bursts still to let pass before it comes out */
		uint8_t idle;	/* calls without frames since it was held */
	} held[DPV_FAULT_HOLD];
	unsigned int nb_held;
	struct dpv_fault_counts c;
	dpv_spinlock_t lock;
};

/* Whether any rate of @r is set. */
static inline bool dpv__fault_rates_on(const struct dpv_fault_rates *r)
{
	return (r->drop_ppm | r->dup_ppm | r->reorder_ppm | r->corrupt_ppm) != 0;
}

/* Set the rates and the seed of @d (held frames stay held and come out on later calls).
 * -EINVAL for a rate above 1000000. */
int dpv__fault_set(struct dpv_fault_dir *d, const struct dpv_fault_rates *r, uint64_t seed);

/* Apply @d to @n frames in @pkts (room for @cap); the new number of frames. Duplicates are
 * copies from @mp after their original; a corrupted frame gets one byte of its second half
 * inverted (so it still reaches its destination's integrity check); a reordered one comes
 * out after one to three later bursts (or 64 calls with @n = 0). */

uint16_t dpv__fault_apply(struct dpv_fault_dir *d, struct rte_mbuf **pkts, uint16_t n,
			  uint16_t cap, struct rte_mempool *mp);

/* Free every held frame (the port closes). */
void dpv__fault_drain(struct dpv_fault_dir *d);

#endif
