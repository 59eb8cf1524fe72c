/* SPDX-License-Identifier: BSD-3-Clause */
/* The packet pacer's token bucket (lib/verbs/pace.c) on a clock of the test's own
 * (dpv__pace_take_at), so that no load of the machine can hide a leak: 1,000,000 bytes/s
 * counted on a 1 GHz TSC (a byte per 1000 cycles), a 2000-byte bucket, 1000-byte WRs.
 * - When the rate is set the bucket is full: WRs 0 and 1 go at t = 0 and empty it, WR 2 as
 *   soon as it is above 0 again (its 1000 bytes taken below zero), WR 3 once 1000 bytes more
 *   have accrued (1 ms later);
 * - idle for a second, the bucket holds BUCKET bytes, no more;
 * - a kick whose TSC reads a few cycles before the last refill (another core's TSC) adds
 *   nothing: it once wrapped to 2^64 - a few cycles and refilled the whole bucket;
 * - 20,000 kicks at random times (with such backward readings), random batches of random
 *   lengths (some longer than the bucket, as TSO), some left to the next kick (refunded, as
 *   when the port takes fewer): over every window [t_i, t_j] between two sends, what went is
 *   at most the bucket, one WR and the rate times the window; and a kick with WRs waiting and
 *   the bucket above 0 sends. */
#include "dpv_test.h"
#include "verbs_priv.h"

#define BUCKET 2000.0
#define PER_TSC 0.001               /* bytes per cycle: 1,000,000 bytes/s at 1 GHz */
#define T0 1000000000000ull

static struct dpv_wqe wqe[64];
static struct dpv_wqe *w[64];

static struct dpv_pace fresh(void)
{
	return (struct dpv_pace){ .kbps = 8000, .burst = (uint32_t)BUCKET, .per_tsc = PER_TSC,
				  .tokens = BUCKET, .last = T0 };
}

static void set_len(uint32_t len)
{
	for (int i = 0; i < 64; i++)
		wqe[i].byte_len = len;
}

static void check_start(void)
{
	struct dpv_pace p = fresh();

	set_len(1000);
	CHECK_EQ(dpv__pace_take_at(&p, T0, w, 64), 2);              /* the bucket */
	CHECK_EQ(dpv__pace_take_at(&p, T0, w, 64), 0);              /* empty, not above 0 */
	CHECK_EQ(dpv__pace_take_at(&p, T0 + 1, w, 64), 1);          /* above 0: WR 2 */
	CHECK_EQ(dpv__pace_take_at(&p, T0 + 1000000, w, 64), 0);    /* -1000 + 999.999 */
	CHECK_EQ(dpv__pace_take_at(&p, T0 + 1000002, w, 64), 1);    /* WR 3 after 1 ms */
	/* the TSC of another core, behind this one's: nothing added, nothing moved back */
	p = fresh();
	CHECK_EQ(dpv__pace_take_at(&p, T0, w, 64), 2);
	CHECK_EQ(dpv__pace_take_at(&p, T0 + 1, w, 64), 1);
	CHECK(p.tokens < -999.9 && p.tokens > -1000, "tokens %f", p.tokens);
	CHECK_EQ(dpv__pace_take_at(&p, T0 - 40, w, 64), 0);
	CHECK(p.tokens < -999.9 && p.tokens > -1000, "a TSC behind refilled: tokens %f", p.tokens);
	CHECK_EQ(p.last, T0 + 1);
	/* idle for a second: the bucket and the WR that takes it below zero */
	CHECK_EQ(dpv__pace_take_at(&p, T0 + 1000000000, w, 64), 2);
	/* refunded WRs wait with their bytes given back */
	p = fresh();
	CHECK_EQ(dpv__pace_take_at(&p, T0, w, 2), 2);
	dpv__pace_refund(&p, w + 1, 1);
	CHECK_EQ(dpv__pace_take_at(&p, T0, w, 64), 1);
}

static uint64_t rng = 88172645463325252ull;

static uint64_t rnd(uint64_t n)
{
	rng ^= rng << 13;
	rng ^= rng >> 7;
	rng ^= rng << 17;
	return rng % n;
}

static void check_random(void)
{
	struct dpv_pace p = fresh();
	uint64_t tsc = T0, now = T0;     /* the true time, and what this kick's core reads */
	double sent = 0, best = 0;       /* bytes sent before this WR; max of rate x t_i - sent_i */
	uint32_t maxlen = 0;
	int kicks = 20000, sends = 0, late = 0, bad = 0, idle_with_credit = 0;

	for (int i = 0; i < 64; i++)
		w[i] = &wqe[i];
	for (int k = 0; k < kicks; k++) {
		uint16_t n = (uint16_t)(1 + rnd(32)), may, took;
		double before;

		/* mostly microseconds apart, sometimes milliseconds (a descheduled thread) */
		tsc += rnd(20) == 0 ? rnd(5000000) : rnd(3000);
		now = tsc;
		if (rnd(8) == 0 && tsc > T0 + 100) {
			now = tsc - rnd(100);    /* another core's TSC, a little behind */
			late++;
		}
		for (uint16_t i = 0; i < n; i++) {
			wqe[i].byte_len = rnd(50) == 0 ? 9000 + (uint32_t)rnd(56000) :
							 64 + (uint32_t)rnd(1455);
		}
		before = p.tokens + (now > p.last ? (double)(now - p.last) * PER_TSC : 0);
		if (before > BUCKET)
			before = BUCKET;
		may = dpv__pace_take_at(&p, now, w, n);
		idle_with_credit += may == 0 && before > 0;
		took = may && rnd(10) == 0 ? (uint16_t)rnd(may) : may;   /* the port took fewer */
		if (took < may)
			dpv__pace_refund(&p, w + took, may - took);
		for (uint16_t i = 0; i < took; i++) {
			double t = (double)(tsc - T0) * PER_TSC;    /* the rate's bytes by now */

			if (t - sent > best)
				best = t - sent;
			sent += wqe[i].byte_len;
			if (wqe[i].byte_len > maxlen)
				maxlen = wqe[i].byte_len;
			/* the window from the send that gave best to this one */
			if (sent - t + best > BUCKET + maxlen + 1e-6 && bad++ == 0)
				fprintf(stderr, "kick %d: %.0f bytes over the bucket, a WR and the rate\n",
					k, sent - t + best - BUCKET - maxlen);
			sends++;
		}
	}
	CHECK(bad == 0, "%d sends went faster than the rate allows", bad);
	CHECK(idle_with_credit == 0, "%d kicks sent nothing with the bucket above 0",
	      idle_with_credit);
	CHECK(late > 1000 && sends > 1000, "%d backward readings, %d sends", late, sends);
	printf("%d sends, %.0f bytes in %.3f s, %d backward TSC readings\n", sends, sent,
	       (double)(tsc - T0) * 1e-9, late);
}

int main(void)
{
	for (int i = 0; i < 64; i++)
		w[i] = &wqe[i];
	check_start();
	check_random();
	return test_done("pace");
}
