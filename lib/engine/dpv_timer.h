/* SPDX-License-Identifier: BSD-3-Clause */
/* Timers run by whoever progresses a port (RC retransmission, RNR waits, ACK coalescing,
 * neighbour aging). Deadlines in TSC ticks; an idle list costs one load. Thread-safe;
 * callbacks run unlocked and may arm or cancel timers, their own included. Functions return
 * 0 or a negative errno. */

#ifndef DPV_TIMER_H
#define DPV_TIMER_H

#include <stdbool.h>
#include <stdint.h>

#include <rte_cycles.h>

#include "dpv_lock.h"

struct dpv_timer;
typedef void (*dpv_timer_fn)(struct dpv_timer *t, void *arg);

struct dpv_timer {
	uint64_t deadline;         /* TSC ticks */
	dpv_timer_fn fn;
	void *arg;
	uint32_t slot;             /* its place in the list's heap; UINT32_MAX: not armed */
};

struct dpv_timer_list {
	dpv_spinlock_t lock;
	struct dpv_timer **heap;   /* a min-heap on deadline */
	uint32_t n, cap;
	uint64_t next;             /* the earliest deadline (UINT64_MAX: none), read unlocked */
};

void dpv__timer_list_init(struct dpv_timer_list *l);
/* Cancel nothing: the list must be empty (every owner cancelled its timers). */
void dpv__timer_list_fini(struct dpv_timer_list *l);
/* A timer not armed on any list. */
void dpv__timer_init(struct dpv_timer *t, dpv_timer_fn fn, void *arg);
/* Arm @t to run at @deadline (moved if armed already); -ENOMEM. */
int dpv__timer_arm(struct dpv_timer_list *l, struct dpv_timer *t, uint64_t deadline);
/* Disarm @t; true if it was armed (its callback will not run for this arming). */
bool dpv__timer_cancel(struct dpv_timer_list *l, struct dpv_timer *t);
bool dpv__timer_armed(const struct dpv_timer *t);
/* Run every timer due at @now, earliest first; how many ran. */
unsigned int dpv__timers_run(struct dpv_timer_list *l, uint64_t now);
/* What progress calls: nothing but one load while no timer is armed. */
static inline unsigned int dpv__timers_poll(struct dpv_timer_list *l)
{
	if (__atomic_load_n(&l->next, __ATOMIC_RELAXED) == UINT64_MAX)
		return 0;
	return dpv__timers_run(l, rte_rdtsc());
}

/* The TSC ticks of @us microseconds (the EAL must be running). */
uint64_t dpv__timer_ticks_us(uint64_t us);

#endif
