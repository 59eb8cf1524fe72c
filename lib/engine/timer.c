/* SPDX-License-Identifier: BSD-3-Clause */
/* Timer lists: a binary min-heap of armed timers under a spinlock, with the earliest deadline
 * kept apart so that an idle or not-yet-due list is told with one load. */
#include <errno.h>
#include <stdlib.h>

#include <rte_cycles.h>

#include "dpv_timer.h"

#define NOT_ARMED UINT32_MAX

void dpv__timer_list_init(struct dpv_timer_list *l)
{
	dpv__spinlock_init(&l->lock);
	l->heap = NULL;
	l->n = l->cap = 0;
	__atomic_store_n(&l->next, UINT64_MAX, __ATOMIC_RELAXED);
}

void dpv__timer_list_fini(struct dpv_timer_list *l)
{
	free(l->heap);
	l->heap = NULL;
	l->n = l->cap = 0;
}

void dpv__timer_init(struct dpv_timer *t, dpv_timer_fn fn, void *arg)
{
	*t = (struct dpv_timer){ .fn = fn, .arg = arg, .slot = NOT_ARMED };
}

bool dpv__timer_armed(const struct dpv_timer *t)
{
	return __atomic_load_n(&t->slot, __ATOMIC_RELAXED) != NOT_ARMED;
}

static void place(struct dpv_timer_list *l, uint32_t i, struct dpv_timer *t)
{
	l->heap[i] = t;
	__atomic_store_n(&t->slot, i, __ATOMIC_RELAXED);
}

static void sift_up(struct dpv_timer_list *l, uint32_t i)
{
	struct dpv_timer *t = l->heap[i];

	while (i > 0 && l->heap[(i - 1) / 2]->deadline > t->deadline) {
		place(l, i, l->heap[(i - 1) / 2]);
		i = (i - 1) / 2;
	}
	place(l, i, t);
}

static void sift_down(struct dpv_timer_list *l, uint32_t i)
{
	struct dpv_timer *t = l->heap[i];

	for (;;) {
		uint32_t c = 2 * i + 1;

		if (c >= l->n)
			break;
		if (c + 1 < l->n && l->heap[c + 1]->deadline < l->heap[c]->deadline)
			c++;
		if (l->heap[c]->deadline >= t->deadline)
			break;
		place(l, i, l->heap[c]);
		i = c;
	}
	place(l, i, t);
}

static void publish_next(struct dpv_timer_list *l)
{
	__atomic_store_n(&l->next, l->n ? l->heap[0]->deadline : UINT64_MAX, __ATOMIC_RELEASE);
}

/* Take the timer at @i out of the heap. */
static void heap_remove(struct dpv_timer_list *l, uint32_t i)
{
	struct dpv_timer *t = l->heap[i];

	dpv__lock_assert_held(&l->lock);

	__atomic_store_n(&t->slot, NOT_ARMED, __ATOMIC_RELAXED);
	if (--l->n == i)
		return;
	place(l, i, l->heap[l->n]);     /* the last one fills the hole, then finds its place */
	sift_down(l, i);
	sift_up(l, i);
}

int dpv__timer_arm(struct dpv_timer_list *l, struct dpv_timer *t, uint64_t deadline)
{
	dpv__spinlock_lock(&l->lock);
	if (t->slot != NOT_ARMED)
		heap_remove(l, t->slot);
	if (l->n == l->cap) {
		uint32_t cap = l->cap ? 2 * l->cap : 16;
		struct dpv_timer **h = realloc(l->heap, cap * sizeof(*h));

		if (h == NULL) {
			publish_next(l);
			dpv__spinlock_unlock(&l->lock);
			return -ENOMEM;
		}
		l->heap = h;
		l->cap = cap;
	}
	t->deadline = deadline;
	place(l, l->n++, t);
	sift_up(l, l->n - 1);
	publish_next(l);
	dpv__spinlock_unlock(&l->lock);
	return 0;
}

bool dpv__timer_cancel(struct dpv_timer_list *l, struct dpv_timer *t)
{
	bool was;

	dpv__spinlock_lock(&l->lock);
	was = t->slot != NOT_ARMED;
	if (was) {
		heap_remove(l, t->slot);
		publish_next(l);
	}
	dpv__spinlock_unlock(&l->lock);
	return was;
}

unsigned int dpv__timers_run(struct dpv_timer_list *l, uint64_t now)
{
	unsigned int ran = 0;

	if (__atomic_load_n(&l->next, __ATOMIC_ACQUIRE) > now)
		return 0;
	dpv__spinlock_lock(&l->lock);
	while (l->n != 0 && l->heap[0]->deadline <= now) {
		struct dpv_timer *t = l->heap[0];

		heap_remove(l, 0);
		publish_next(l);
		dpv__spinlock_unlock(&l->lock);
		t->fn(t, t->arg);          /* may arm or cancel, this timer included */
		ran++;
		dpv__spinlock_lock(&l->lock);
	}
	dpv__spinlock_unlock(&l->lock);
	return ran;
}

uint64_t dpv__timer_ticks_us(uint64_t us)
{
	return us * (rte_get_tsc_hz() / 1000000);
}
