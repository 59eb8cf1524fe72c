/* SPDX-License-Identifier: BSD-3-Clause */
/* Timer lists (lib/engine/timer.c): timers run once, earliest first, only when due; re-arming
 * moves, cancelling stops; callbacks may re-arm themselves; thousands of random arms and
 * cancels keep the heap's order (checked against a plain scan). */
#include <stdlib.h>

#include "dpv_timer.h"
#include "dpv_test.h"

static int order[64], nb_run;

static void record(struct dpv_timer *t, void *arg)
{
	order[nb_run++] = (int)(intptr_t)arg;
}

static struct dpv_timer_list *rearm_list;

static void rearm_self(struct dpv_timer *t, void *arg)
{
	order[nb_run++] = (int)(intptr_t)arg;
	if (nb_run < 3)
		dpv__timer_arm(rearm_list, t, t->deadline + 10);
}

static void basics(void)
{
	struct dpv_timer_list l;
	struct dpv_timer t[5];

	dpv__timer_list_init(&l);
	for (int i = 0; i < 5; i++)
		dpv__timer_init(&t[i], record, (void *)(intptr_t)i);
	CHECK_EQ(dpv__timers_run(&l, 1000), 0);            /* empty */
	CHECK_EQ(dpv__timer_arm(&l, &t[0], 50), 0);
	CHECK_EQ(dpv__timer_arm(&l, &t[1], 10), 0);
	CHECK_EQ(dpv__timer_arm(&l, &t[2], 30), 0);
	CHECK_EQ(dpv__timer_arm(&l, &t[3], 20), 0);
	CHECK_EQ(dpv__timer_arm(&l, &t[4], 40), 0);
	CHECK(dpv__timer_armed(&t[4]));
	CHECK_EQ(dpv__timers_run(&l, 9), 0);               /* nothing due yet */
	CHECK_EQ(dpv__timer_arm(&l, &t[1], 35), 0);        /* moved: now after t[2] */
	CHECK(dpv__timer_cancel(&l, &t[4]));
	CHECK(!dpv__timer_cancel(&l, &t[4]));              /* once */
	CHECK(!dpv__timer_armed(&t[4]));
	CHECK_EQ(dpv__timers_run(&l, 35), 3);
	CHECK(order[0] == 3 && order[1] == 2 && order[2] == 1, "order %d %d %d",
	      order[0], order[1], order[2]);
	CHECK_EQ(dpv__timers_run(&l, 49), 0);
	CHECK_EQ(dpv__timers_run(&l, 50), 1);
	CHECK_EQ(order[3], 0);
	CHECK_EQ(dpv__timers_run(&l, 1000), 0);            /* each ran once */
	dpv__timer_list_fini(&l);
}

static void self_rearm(void)
{
	struct dpv_timer_list l;
	struct dpv_timer t;

	nb_run = 0;
	dpv__timer_list_init(&l);
	rearm_list = &l;
	dpv__timer_init(&t, rearm_self, (void *)7);
	CHECK_EQ(dpv__timer_arm(&l, &t, 5), 0);
	CHECK_EQ(dpv__timers_run(&l, 100), 3);             /* 5, 15, 25: re-armed twice */
	CHECK(!dpv__timer_armed(&t));
	dpv__timer_list_fini(&l);
}

static int ran[1024], nb_ran;

static void record_many(struct dpv_timer *t, void *arg)
{
	ran[nb_ran++] = (int)(intptr_t)arg;
}

/* Random arms, re-arms and cancels; every run must give exactly the due timers, earliest
 * first (checked against the deadlines the test keeps itself). */
static void random_heap(void)
{
	enum { N = 500 };
	static struct dpv_timer t[N];
	static uint64_t want[N];
	struct dpv_timer_list l;
	uint64_t now = 0;
	int bad = 0;

	srand(1);
	dpv__timer_list_init(&l);
	for (int i = 0; i < N; i++) {
		dpv__timer_init(&t[i], record_many, (void *)(intptr_t)i);
		want[i] = UINT64_MAX;
	}
	for (int round = 0; round < 300; round++) {
		int due = 0;

		for (int k = 0; k < 20; k++) {
			int i = rand() % N;

			if (rand() % 4 == 0) {
				CHECK_EQ(dpv__timer_cancel(&l, &t[i]), want[i] != UINT64_MAX);
				want[i] = UINT64_MAX;
			} else {
				want[i] = now + 1 + (uint64_t)(rand() % 1000);
				CHECK_EQ(dpv__timer_arm(&l, &t[i], want[i]), 0);
			}
		}
		now += (uint64_t)(rand() % 300);
		for (int i = 0; i < N; i++)
			due += want[i] <= now;
		nb_ran = 0;
		CHECK_EQ(dpv__timers_run(&l, now), (unsigned int)due);
		CHECK_EQ(nb_ran, due);
		for (int k = 0; k < nb_ran; k++) {
			bad += want[ran[k]] > now;                          /* not due */
			bad += k > 0 && want[ran[k]] < want[ran[k - 1]];    /* out of order */
		}
		for (int k = 0; k < nb_ran; k++)
			want[ran[k]] = UINT64_MAX;
		for (int i = 0; i < N; i++)
			bad += (want[i] != UINT64_MAX) != dpv__timer_armed(&t[i]);
	}
	CHECK_EQ(bad, 0);
	dpv__timer_list_fini(&l);
}

int main(void)
{
	basics();
	self_rearm();
	random_heap();
	return test_done("timer");
}
