/* SPDX-License-Identifier: BSD-3-Clause */
/* Packet pacing of a QP (IBV_QP_RATE_LIMIT, ibv_modify_qp_rate_limit): a token bucket in
 * bytes, refilled from the TSC at the QP's rate. A transport asks it how many of the WRs it
 * is about to hand to the port may go now; the others wait in the SQ for the next kick (a
 * post, a poll of any CQ of the context, a service round), as a NIC's pacer holds WQEs. A WR
 * goes whenever the bucket is not empty, and its length is taken even if that leaves the
 * bucket below zero: a WR longer than the bucket (TSO) still goes, and the rate over time
 * stays the one asked for. What is counted is the WR's length (byte_len of its completion):
 * the frame for a SEND, header and payload once for TSO (the headers TSO repeats are not). */
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
	/* Default bucket: a millisecond at the rate, at least one whole frame. A software
	 * pacer's thread is sometimes late (descheduled, busy elsewhere); what accrued meanwhile,
	 * up to the bucket, goes at once, so the rate over time holds. */
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

	/* Whoever kicks the SQ (the posting thread, a poller, the service lcore) reads the TSC
	 * of its own core, and cores' TSCs may be a few cycles apart: a reading before the last
	 * refill adds nothing (now - last would wrap to 2^64 - a few, a full bucket at once) and
	 * leaves last where it is. */
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
