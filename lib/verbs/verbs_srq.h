/* SPDX-License-Identifier: BSD-3-Clause */
/* Shared receive queues (srq.c) and XRC domains (xrcd.c): the SRQ ring QPs take receive WQEs
 * from, and the XRC SRQ numbers of a domain. */
#ifndef DPV_VERBS_SRQ_H
#define DPV_VERBS_SRQ_H

#include <stdbool.h>
#include <stdint.h>

#include <infiniband/verbs.h>
#include "dpv_lock.h"
#include "verbs_base.h"
#include "verbs_device.h"
#include "verbs_qp.h"
#include "verbs_ring.h"

struct dpv_cq;
struct dpv_pd;

/* An SRQ: a ring of receive WQEs; a QP takes one when a message needs it, into its own ring. */
struct dpv_srq {
	struct ibv_srq ibsrq;
	struct dpv_context *ctx;
	enum ibv_srq_type type;
	uint32_t srq_num;          /* XRC SRQs: the number an XRCETH names (ibv_get_srq_num) */
	struct dpv_pd *pd;
	struct dpv_xrcd *xrcd;     /* XRC SRQs: their domain */
	struct dpv_cq *cq;         /* XRC SRQs: where their receives complete */
	dpv_spinlock_t lock;       /* the ring and the limit */
	struct dpv_rq rq;
	uint32_t limit;            /* armed limit (IBV_EVENT_SRQ_LIMIT_REACHED), 0: not armed */
	int users;                 /* (__atomic) QPs created with it: ibv_destroy_srq is EBUSY */
};

static inline struct dpv_srq *to_dsrq(struct ibv_srq *s)
{
	return container_of_safe(s, struct dpv_srq, ibsrq);
}

/* Move the oldest WQE of @srq into @qp's ring (the limit event when it goes below an armed
 * limit). QP lock held. -ENOENT: the SRQ is empty; -ENOSPC: @qp's ring is full. */

int dpv__srq_take(struct dpv_qp *qp, struct dpv_srq *srq);

/* Is there a receive WQE for the next message of @qp: its own, or one taken from its SRQ? */
static inline bool dpv__rq_ready(struct dpv_qp *qp)
{
	if (qp->rq.tail != qp->rq.head)
		return true;
	return qp->srq != NULL && dpv__srq_take(qp, qp->srq) == 0;
}

/* A QP with an SRQ entered ERR: IBV_EVENT_QP_LAST_WQE_REACHED (no further WQE will be taken
 * from the SRQ by it). */
void dpv__srq_qp_error(struct dpv_qp *qp);
/* Context ops (srq.c). */
struct ibv_srq *dpv_create_srq_ex(struct ibv_context *context, struct ibv_srq_init_attr_ex *a);
int dpv_post_srq_recv(struct ibv_srq *srq, struct ibv_recv_wr *wr, struct ibv_recv_wr **bad_wr);
int dpv_get_srq_num(struct ibv_srq *srq, uint32_t *srq_num);
/* ibv_close_device: destroy what the application left (after its QPs). */
unsigned int dpv__release_srqs(struct dpv_context *ctx);

/* An ibv_open_xrcd handle; handles of one inode share a domain (xrcd.c). */
struct dpv_xrc_domain;
struct dpv_xrcd {
	struct ibv_xrcd ibxrcd;
	struct dpv_context *ctx;
	struct dpv_xrc_domain *domain;
	int users;                 /* SRQs and QPs created with this handle (ibv_close_xrcd: EBUSY) */
};

static inline struct dpv_xrcd *to_dxrcd(struct ibv_xrcd *x)
{
	return container_of_safe(x, struct dpv_xrcd, ibxrcd);
}

struct ibv_xrcd *dpv_open_xrcd(struct ibv_context *context, struct ibv_xrcd_init_attr *a);

int dpv_close_xrcd(struct ibv_xrcd *xrcd);
/* Do two handles name the same domain? */
bool dpv__xrcd_same(const struct dpv_xrcd *a, const struct dpv_xrcd *b);
/* A QP starts (+1) or stops (-1) using @x. */
void dpv__xrcd_use(struct dpv_xrcd *x, int delta);
/* Give XRC SRQ @srq a number in domain @x (-ENOSPC); take it back (the receive side no longer
 * holds @srq when this returns). */
int dpv__xrcd_srq_add(struct ibv_xrcd *x, struct dpv_srq *srq);
void dpv__xrcd_srq_del(struct dpv_srq *srq);
/* ibv_destroy_srq of an XRC SRQ: unpublished, unless an XRC_RECV QP holds it (-EBUSY). */
int dpv__xrcd_srq_retire(struct dpv_srq *srq);
/* The XRC SRQ numbered @srq_num on @dev, or NULL (receive side, under the device's rx_lock). */
struct dpv_srq *dpv__xrc_srq_lookup(struct dpv_device *dev, uint32_t srq_num);
unsigned int dpv__release_xrcds(struct dpv_context *ctx);

#endif
