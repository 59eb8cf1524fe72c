/* SPDX-License-Identifier: BSD-3-Clause */
/* Send-WR lists for tests and benches. Plain verbs only: bench-rc, built against the system's
 * libibverbs, includes it too. */
#ifndef DPV_TEST_WR_H
#define DPV_TEST_WR_H

#include <infiniband/verbs.h>

/* Chain @wr[0..@n-1] into one list, signal its last WR (the list completes in order) and post
 * it on @qp; ibv_post_send's result, 0 when @n is 0. */
static inline int test_post_list(struct ibv_qp *qp, struct ibv_send_wr *wr, int n)
{
	struct ibv_send_wr *bad;

	if (n == 0)
		return 0;
	for (int i = 0; i < n; i++)
		wr[i].next = i + 1 < n ? &wr[i + 1] : NULL;
	wr[n - 1].send_flags |= IBV_SEND_SIGNALED;
	return ibv_post_send(qp, wr, &bad);
}

#endif
