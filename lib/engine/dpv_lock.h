/* A test-and-test-and-set spinlock on C11-style __atomic builtins. DPDK's rte_spinlock is inline
 * assembly on x86, which ThreadSanitizer cannot see (every access it guards looks racy); this
 * one costs the same and lets the race detector check dpverbs' locking. */
#ifndef DPV_LOCK_H
#define DPV_LOCK_H

#include <sched.h>

#include <rte_pause.h>

typedef struct {
	int locked;
} dpv_spinlock_t;

#define DPV_SPINLOCK_INITIALIZER { 0 }

static inline void dpv__spinlock_init(dpv_spinlock_t *l)
{
	__atomic_store_n(&l->locked, 0, __ATOMIC_RELAXED);
}

/* Spins, and after a while yields the CPU: verbs applications run more threads than cores,
 * and spinning on a lock whose holder was preempted would burn the holder's time slice. */
static inline void dpv__spinlock_lock(dpv_spinlock_t *l)
{
	unsigned int spins = 0;

	while (__atomic_exchange_n(&l->locked, 1, __ATOMIC_ACQUIRE))
		while (__atomic_load_n(&l->locked, __ATOMIC_RELAXED)) {
			if (++spins % 1024 == 0)
				sched_yield();
			else
				rte_pause();
		}
}

/* 1 if taken, 0 if somebody holds it. */
static inline int dpv__spinlock_trylock(dpv_spinlock_t *l)
{
	return !__atomic_load_n(&l->locked, __ATOMIC_RELAXED) &&
	       !__atomic_exchange_n(&l->locked, 1, __ATOMIC_ACQUIRE);
}

/* Whether somebody holds it now (a racy look, for heuristics). */
static inline int dpv__spinlock_is_locked(dpv_spinlock_t *l)
{
	return __atomic_load_n(&l->locked, __ATOMIC_RELAXED);
}

static inline void dpv__spinlock_unlock(dpv_spinlock_t *l)
{
	__atomic_store_n(&l->locked, 0, __ATOMIC_RELEASE);
}

#endif
