/* SPDX-License-Identifier: BSD-3-Clause */
/* A test-and-test-and-set spinlock on __atomic builtins: rte_spinlock is inline assembly on
 * x86, which ThreadSanitizer cannot see; this one costs the same.
 *
 * With DPV_LOCK_CHECKS (debug and sanitizer builds) a lock records its holder, so that "lock
 * held" is checked: dpv__lock_assert_held (lockdep_assert_held). Elsewhere it is one int and
 * the check nothing (the holder's cost: doc/build.md).
 * dpv__mutex_assert_held (pthread mutexes) follows DPV_ASSERT. */

#ifndef DPV_LOCK_H
#define DPV_LOCK_H

#include <pthread.h>
#include <sched.h>
#include <stdint.h>
#include <unistd.h>

#include <rte_pause.h>

#include "dpv_assert.h"

#ifndef DPV_LOCK_CHECKS
#define DPV_LOCK_CHECKS 0
#endif

typedef struct {
	int locked;
#if DPV_LOCK_CHECKS
	uintptr_t owner;        /* dpv__thread_self() of the holder, 0 when free */
#endif
} dpv_spinlock_t;

#define DPV_SPINLOCK_INITIALIZER { 0 }

#if DPV_LOCK_CHECKS
/* The calling thread, as a number no other live thread has: its thread pointer (one move from
 * %fs on x86-64; glibc's pthread_self() is the same value, through a call). */
static inline uintptr_t dpv__thread_self(void)
{
#if defined(__has_builtin) && __has_builtin(__builtin_thread_pointer)
	return (uintptr_t)__builtin_thread_pointer();
#else
	return (uintptr_t)pthread_self();
#endif
}

/* The owner is written by the holder alone but may be read by any thread (one asserting it
 * holds a lock it does not): relaxed atomics, plain moves that keep ThreadSanitizer quiet. */
static inline uintptr_t dpv__lock_owner(const dpv_spinlock_t *l)
{
	return __atomic_load_n(&l->owner, __ATOMIC_RELAXED);
}

#define dpv__lock_took(l) __atomic_store_n(&(l)->owner, dpv__thread_self(), __ATOMIC_RELAXED)
#define dpv__lock_gives(l) do { \
		DPV_ASSERT(dpv__lock_owner(l) == dpv__thread_self()); \
		__atomic_store_n(&(l)->owner, 0, __ATOMIC_RELAXED); \
	} while (0)
/* The calling thread holds @l. */
#define dpv__lock_assert_held(l) DPV_ASSERT(dpv__lock_owner(l) == dpv__thread_self())
#else
#define dpv__lock_took(l) ((void)(l))
#define dpv__lock_gives(l) ((void)(l))
#define dpv__lock_assert_held(l) ((void)(l))
#endif

/* The calling thread holds the pthread mutex @m: glibc records its holder's thread id in every
 * mutex type (ThreadSanitizer's interceptors call the real lock, which still does). */
#if DPV_ASSERTS && defined(__GLIBC__)
#define dpv__mutex_assert_held(m) DPV_ASSERT((m)->__data.__owner == gettid())
#else
#define dpv__mutex_assert_held(m) ((void)(m))
#endif

static inline void dpv__spinlock_init(dpv_spinlock_t *l)
{
	__atomic_store_n(&l->locked, 0, __ATOMIC_RELAXED);
#if DPV_LOCK_CHECKS
	__atomic_store_n(&l->owner, 0, __ATOMIC_RELAXED);
#endif
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
	dpv__lock_took(l);
}

/* 1 if taken, 0 if somebody holds it. */
static inline int dpv__spinlock_trylock(dpv_spinlock_t *l)
{
	if (__atomic_load_n(&l->locked, __ATOMIC_RELAXED) ||
	    __atomic_exchange_n(&l->locked, 1, __ATOMIC_ACQUIRE))
		return 0;
	dpv__lock_took(l);
	return 1;
}

/* Whether somebody holds it now (a racy look, for heuristics). */
static inline int dpv__spinlock_is_locked(dpv_spinlock_t *l)
{
	return __atomic_load_n(&l->locked, __ATOMIC_RELAXED);
}

/* Only the holder lets a lock go (checked with assertions). */
static inline void dpv__spinlock_unlock(dpv_spinlock_t *l)
{
	dpv__lock_gives(l);
	__atomic_store_n(&l->locked, 0, __ATOMIC_RELEASE);
}

#endif
