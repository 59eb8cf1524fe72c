/* SPDX-License-Identifier: BSD-3-Clause */
/* What a RoCE QP of any transport (UD in ud_qp.c; RC, UC, XRC in rc_qp.c) does alike: its
 * transmitter on the port, and its place among the port's receivers. */
#include <errno.h>
#include <stdlib.h>

#include "roce_ud.h"

/* RoCE frames are copies, released as they are built: the transmitter never calls back. */
static void nothing_held(void *owner)
{
	(void)owner;
}

int dpv__roce_txh_open(struct dpv_qp *qp)
{
	struct dpv_txh *h;
	int rc;

	if (qp->txh != NULL)
		return 0;
	h = calloc(1, sizeof(*h));
	if (h == NULL)
		return -ENOMEM;
	rc = dpv__device_txh_open(qp->ctx->dev, h, nothing_held);
	if (rc != 0) {
		free(h);
		return rc;
	}
	qp->txh = h;
	return 0;
}

void dpv__roce_txh_close(struct dpv_qp *qp)
{
	if (qp->txh == NULL)
		return;
	dpv__device_txh_close(qp->ctx->dev, qp->txh);
	free(qp->txh);
	qp->txh = NULL;
}

void dpv__roce_rx_user(struct dpv_qp *qp, bool *counted, bool on)
{
	if (*counted == on)
		return;
	*counted = on;
	dpv__device_rx_users(qp->ctx->dev, on ? 1 : -1);
}
