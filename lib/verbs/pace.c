/* SPDX-License-Identifier: BSD-3-Clause */
/* Packet pacing of a QP: a token bucket in bytes, refilled from the TSC. WRs the bucket does
 * not let go wait in the SQ for the next kick, as a NIC's pacer holds WQEs. A WR goes while
 * the bucket is above zero and may take it below (a TSO WR longer than the bucket still
 * goes; the rate over time holds). A WR counts its byte_len (TSO's repeated headers not). */
#include <errno.h>

#include <rte_cycles.h>

#include "verbs_ring.h"
#include "verbs_pace.h"

int dpv__pace_set(struct dpv_pace *p, uint32_t kbps, uint32_t burst, uint32_t frame)
{
	if (kbps != 0 && (kbps < DPV_PACE_MIN_KBPS || kbps > DPV_PACE_MAX_KBPS))
		return -EINVAL;
	if (kbps == 0) {
		*p = (struct dpv_pace){ 0 };
		return 0;
	}
	/* default bucket: a millisecond at the rate, at least one frame; what accrued while the
	 * kicking thread was late goes at once, so the rate over time holds */
	if (burst == 0)
		burst = RTE_MAX(frame, (uint32_t)RTE_MIN((uint64_t)kbps * 125 / 1000,
							 (uint64_t)UINT32_MAX));
	p->per_tsc = (double)kbps * 125.0 / (double)rte_get_tsc_hz();   /* kbit/s -> B/cycle */
	if (p->kbps == 0 || p->tokens > burst) {
		p->tokens = burst;              /* a new pacer starts full */
		p->last = rte_rdtsc();
	}
	p->kbps = kbps;
	p->burst = burst;
	return 0;
}

uint16_t dpv__pace_take_at(struct dpv_pace *p, uint64_t now, struct dpv_wqe *const *w,
			   uint16_t n)
{
	uint16_t i;

	/* kickers on different cores read TSCs a few cycles apart: a reading before the last
	 * refill adds nothing (now - last would wrap to a full bucket) */

	if (now > p->last) {
		p->tokens += (double)(now - p->last) * p->per_tsc;
		if (p->tokens > p->burst)
			p->tokens = p->burst;
		p->last = now;
	}
	for (i = 0; i < n && p->tokens > 0; i++)
		p->tokens -= w[i]->byte_len;
	return i;
}

uint16_t dpv__pace_take(struct dpv_pace *p, struct dpv_wqe *const *w, uint16_t n)
{
	return dpv__pace_take_at(p, rte_rdtsc(), w, n);
}

void dpv__pace_refund(struct dpv_pace *p, struct dpv_wqe *const *w, uint16_t n)
{
	for (uint16_t i = 0; i < n; i++)
		p->tokens += w[i]->byte_len;
}
