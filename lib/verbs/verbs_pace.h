/* SPDX-License-Identifier: BSD-3-Clause */
/* Packet pacing (pace.c): the token bucket a QP's WRs take their bytes from before they go to
 * the port (RAW_PACKET's, kept in its struct dpv_raw_qp). */
#ifndef DPV_VERBS_PACE_H
#define DPV_VERBS_PACE_H

#include <stdint.h>

struct dpv_wqe;

/* A QP's token bucket (kbps 0: no pacing). Changed under the QP's control lock; used by
 * whoever kicks the SQ under the QP's (service) lock. */
struct dpv_pace {
	uint32_t kbps;
	uint32_t burst;            /* bytes the bucket holds when full */
	double per_tsc;            /* bytes one TSC cycle adds */
	double tokens;             /* below 0 after a WR longer than what was left */
	uint64_t last;             /* TSC of the last refill */
};
/* The rates ibv_query_device_ex reports in packet_pacing_caps (kbps). */
#define DPV_PACE_MIN_KBPS 1u
#define DPV_PACE_MAX_KBPS 400000000u     /* 400 Gb/s */

/* Set the rate (0: none) and bucket (0: 1 ms at the rate, at least @frame bytes, the QP's
 * largest frame); -EINVAL outside packet_pacing_caps. */
int dpv__pace_set(struct dpv_pace *p, uint32_t kbps, uint32_t burst, uint32_t frame);
/* How many of the @n WRs @w[] (in SQ order) may go to the port now. */
uint16_t dpv__pace_take(struct dpv_pace *p, struct dpv_wqe *const *w, uint16_t n);
/* The same at TSC @now (the unit test's clock). */
uint16_t dpv__pace_take_at(struct dpv_pace *p, uint64_t now, struct dpv_wqe *const *w,
			   uint16_t n);
/* Give back what dpv__pace_take took for @n WRs the port did not take after all. */
void dpv__pace_refund(struct dpv_pace *p, struct dpv_wqe *const *w, uint16_t n);

#endif
