/* SPDX-License-Identifier: BSD-3-Clause */
/* QP numbers: one space per device, so the RoCE receive side finds a QP with one array read.
 * 0 and 1 are reserved (SMI, GSI); round-robin, so late frames to a destroyed QP find
 * nothing rather than a newcomer. */

#include <errno.h>
#include <stdlib.h>

#include "verbs_device.h"
#include "verbs_qp.h"
#include "verbs_progress.h"

#define QPN_FIRST 2

static int table_grow(struct dpv_qpn_table *t)
{
	struct dpv_qp **v;

	if (t->qp != NULL)
		return 0;
	v = calloc(DPV_MAX_QP, sizeof(*v));
	if (v == NULL)
		return -ENOMEM;
	t->qp = v;
	t->hint = QPN_FIRST;
	__atomic_store_n(&t->size, DPV_MAX_QP, __ATOMIC_RELEASE);   /* the array first */
	return 0;
}

int dpv__qpn_alloc(struct dpv_device *dev, struct dpv_qp *qp)
{
	struct dpv_qpn_table *t = &dev->qpns;
	int rc;

	dpv__spinlock_lock(&t->lock);
	rc = table_grow(t);
	for (uint32_t tries = 0; rc == 0 && tries < DPV_MAX_QP; tries++) {
		uint32_t n = t->hint;

		t->hint = n + 1 < DPV_MAX_QP ? n + 1 : QPN_FIRST;
		if (n >= QPN_FIRST && t->qp[n] == NULL) {
			__atomic_store_n(&t->qp[n], qp, __ATOMIC_RELEASE);
			dpv__spinlock_unlock(&t->lock);
			return (int)n;
		}
	}
	dpv__spinlock_unlock(&t->lock);
	return rc != 0 ? rc : -ENOSPC;
}

void dpv__qpn_free(struct dpv_device *dev, struct dpv_qp *qp, uint32_t n)
{
	struct dpv_qpn_table *t = &dev->qpns;

	dpv__spinlock_lock(&t->lock);
	if (n < t->size && t->qp[n] == qp)
		__atomic_store_n(&t->qp[n], NULL, __ATOMIC_RELEASE);
	dpv__spinlock_unlock(&t->lock);
	dpv__device_rx_quiesce(dev);       /* a receiver that found it is done with it */
}
