/* SPDX-License-Identifier: BSD-3-Clause */
/* The post-list skeleton: how every transport's ibv_post_send walks a list of WRs. The
 * transport gives what is its own, one WR checked and queued (post_one) and what hands the
 * queued WRs on (doorbell); the order of the answers is the core's. */
#ifndef DPV_VERBS_POST_H
#define DPV_VERBS_POST_H

#include <errno.h>
#include <stdbool.h>

#include <infiniband/verbs.h>
#include "verbs_qp.h"

/* One WR checked and queued in the SQ at sq.post (0), or refused (a negative errno: the list
 * stops there, nothing of this WR queued); @arg: what the transport worked out once for the
 * list (NULL if nothing). */
typedef int dpv_post_one_fn(struct dpv_qp *qp, const struct ibv_send_wr *wr, void *arg);
/* The list queued WRs, published up to sq.head: hand them on (once a list). */
typedef void dpv_doorbell_fn(struct dpv_qp *qp);

/* ibv_post_send's walk of @wr's list on @qp, QP lock held: EINVAL in RESET, INIT and RTR
 * (nothing posted); else @post_one for each WR until one is refused. The WRs queued are
 * published (sq.head = sq.post, release: a service lcore reads their slots once it sees the
 * head) and @doorbell rung once, if there are any; *@bad_wr is the WR refused. Always
 * inline, called with the transport's own static functions: they inline into its poster as a
 * loop of its own would (no indirect call per WR). */
static inline __attribute__((always_inline)) int
dpv__post_list(struct dpv_qp *qp, struct ibv_send_wr *wr, struct ibv_send_wr **bad_wr,
	       dpv_post_one_fn *post_one, void *arg, dpv_doorbell_fn *doorbell)
{
	enum ibv_qp_state state = dpv__qp_state(qp);
	bool posted = false;
	int rc = 0;

	dpv__qp_assert_locked(qp);
	if (state == IBV_QPS_RESET || state == IBV_QPS_INIT || state == IBV_QPS_RTR)
		rc = -EINVAL;
	while (rc == 0 && wr != NULL) {
		rc = post_one(qp, wr, arg);
		if (rc != 0)
			break;
		posted = true;
		wr = wr->next;
	}
	if (posted) {
		__atomic_store_n(&qp->sq.head, qp->sq.post, __ATOMIC_RELEASE);
		doorbell(qp);
	}
	if (rc != 0)
		*bad_wr = wr;
	return rc;
}

#endif
