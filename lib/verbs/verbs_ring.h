/* SPDX-License-Identifier: BSD-3-Clause */
/* The work-request rings of a QP (sq.c, rq.c): send WQEs and service-mode descriptors, the
 * receive WQEs with their scatter lists, and how WRs on them complete. */
#ifndef DPV_VERBS_RING_H
#define DPV_VERBS_RING_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <infiniband/verbs.h>
#include <rte_common.h>
#include "dpv_offload.h"
#include "dpv_tx.h"
#include "verbs_base.h"
#include "verbs_cq.h"

struct dpv_mr;
struct dpv_pd;
struct dpv_qp;

/* A posted send WR; it completes, in order, once its transport released it. */
struct dpv_wqe {
	uint64_t wr_id;
	void *frame;               /* the transport's: RAW's built frame not yet sent */
	uint32_t byte_len;
	uint8_t opcode;            /* enum ibv_wc_opcode */
	uint8_t signaled;
	uint8_t status;            /* enum ibv_wc_status decided at post time */
	uint8_t released;          /* the transport is done with it (dpv__wqe_release) */
	uint8_t nb_mr;             /* MRs it holds a reference on, in mrs[] */
	struct dpv_mr **mrs;       /* its max_sge slots of dpv_sq.mrs */
};

/* Service mode: a posted WR handed to the service lcore, 16 bytes. The posting thread writes
 * a slot's descriptor, data, gather list and MRs, and of the SQ only post and head; the
 * service side writes the WQE ring, sent, done and built: no line is written by both cores. */
struct dpv_svc_desc {
	uint64_t wr_id;
	uint32_t len;              /* byte_len */
	/* dpv__svc_meta(): flags, opcode, status, MRs held. One 32-bit store: byte stores may
	 * alias anything, and the posting loop would reload the QP after each */
	uint32_t meta;
};

static inline uint32_t dpv__svc_meta(unsigned int flags, unsigned int opcode,
				     unsigned int status, unsigned int nb_mr)
{
	return flags | opcode << 8 | status << 16 | nb_mr << 24;
}

static inline unsigned int dpv__svc_flags(const struct dpv_svc_desc *d)
{
	return d->meta & 0xff;
}

static inline unsigned int dpv__svc_opcode(const struct dpv_svc_desc *d)
{
	return d->meta >> 8 & 0xff;
}

static inline unsigned int dpv__svc_status(const struct dpv_svc_desc *d)
{
	return d->meta >> 16 & 0xff;
}

static inline unsigned int dpv__svc_nb_mr(const struct dpv_svc_desc *d)
{
	return d->meta >> 24;
}

enum dpv_svc_flags {
	DPV_SVC_SIGNALED = IBV_SEND_SIGNALED,      /* = send_flags bits: taken with a mask */
	DPV_SVC_IP_CSUM = IBV_SEND_IP_CSUM,        /* with DPV_SVC_COPY */
	DPV_SVC_COPY = 1 << 5,     /* the whole frame is in the slot's data: copied into an mbuf */
	DPV_SVC_BUILD = 1 << 6,    /* lib/offload builds it from the slot's dpv_tx_desc */
	/* neither COPY nor BUILD: no frame, the WR completes with its status */
};

/* Service mode, DPV_SVC_BUILD: what lib/offload builds the frame from, besides the slot's
 * gather list and data. */
struct dpv_tx_desc {
	uint32_t flags;            /* enum dpv_tx_flags */
	uint16_t nseg, mss, tso_hdr_len;
	struct dpv_hdr_info tso_info;      /* the TSO header as the post-time check parsed it */
};

/* The cursors sit on cache lines of their writers' own (service mode: the posting thread
 * post and head, the service lcore sent, done and built, the polling thread freed): a line
 * read by another core moves at every write (doc/performance.md, "Service mode"). The fields
 * before them are read-only once the QP is set up. */
struct dpv_sq {
	struct dpv_wqe *wqe;
	struct dpv_pd *buf_pd;     /* the parent domain whose allocator gave wqe, if it did */
	bool wqe_custom;
	uint32_t size, mask;       /* slots: a power of two >= max_wr */
	uint32_t max_wr;
	uint32_t max_sge;
	struct dpv_mr **mrs;       /* max_sge per slot: the MRs a WR uses until it completes */
	/* service mode: per slot a descriptor, gather list and build parameters; a ring of the
	 * slots' data (frame, or inline data and TSO header) in post order, data_max a slot,
	 * data_cap in all */
	uint32_t data_max, data_cap;
	struct dpv_svc_desc *desc;
	struct dpv_tx_desc *desc_tx;
	struct dpv_tx_seg *desc_seg;
	uint8_t *desc_data;
	uint32_t post __rte_cache_aligned;   /* next slot to post (the posting thread's) */
	uint32_t data_post;        /* service mode: where the next posted slot's data goes */
	uint32_t head __rte_cache_aligned;   /* post, published at the end of each list */
	uint32_t sent __rte_cache_aligned;   /* next slot to hand to the driver */
	uint32_t done;             /* next slot to complete */
	uint32_t built;            /* service mode: [sent, built) taken into WQEs, frames built */
	uint32_t data_built;       /* service mode: where the data of the slot at built is */
	uint32_t freed __rte_cache_aligned;  /* slots before it are free (ibv_poll_cq moves it) */
};

/* A slot's data starts on a pair of cache lines of its own: the adjacent-line prefetcher
 * fetches aligned pairs, and the service lcore must not pull in the line where the posting
 * thread writes the next list (doc/performance.md, "Service mode"). */
#define DPV_SVC_DATA_ALIGN 128u

/* Service mode: where @need bytes of slot data go with the cursor at @pos (never wrapping).
 * Both sides run this on the same lengths in the same order, so a descriptor needs no
 * offset. */
static inline uint32_t dpv__sq_data_at(const struct dpv_sq *sq, uint32_t pos, uint32_t need)
{
	return pos + RTE_ALIGN_CEIL(need, DPV_SVC_DATA_ALIGN) > sq->data_cap ? 0 : pos;
}

static inline uint32_t dpv__sq_data_end(uint32_t at, uint32_t need)
{
	return at + RTE_ALIGN_CEIL(need, DPV_SVC_DATA_ALIGN);
}

/* The service side: where the data of the descriptor at built is. */
static inline const uint8_t *dpv__sq_data_take(struct dpv_sq *sq, uint32_t need)
{
	uint32_t at = dpv__sq_data_at(sq, sq->data_built, need);

	sq->data_built = dpv__sq_data_end(at, need);
	return sq->desc_data + at;
}

/* A posted receive WQE; its first scatter entry beside wr_id: one read per frame. */
struct dpv_rwqe {
	uint64_t wr_id;
	struct ibv_sge sge;        /* sge[0] when nsge > 0 */
	uint16_t nsge;
};
_Static_assert(sizeof(struct dpv_rwqe) == 32, "two receive WQEs per cache line");

/* The receive queue; scatter entries in the WQE when max_sge is 1, else in rows of @sge. */
struct dpv_rq {
	struct dpv_rwqe *wqe;
	struct dpv_pd *buf_pd;     /* the parent domain whose allocator gave wqe, if it did */
	uint64_t buf_type;         /* DPV_RES_RQ or DPV_RES_SRQ */
	bool wqe_custom;
	struct ibv_sge *sge;       /* NULL when max_sge is 1 */
	uint32_t size, mask, max_wr, max_sge;
	uint32_t head, tail;       /* tail: next to fill */
};

/* The scatter list of the WQE in @slot (masked). */
static inline struct ibv_sge *dpv__rq_sges(const struct dpv_rq *rq, uint32_t slot)
{
	return rq->sge == NULL ? &rq->wqe[slot].sge : &rq->sge[(size_t)slot * rq->max_sge];
}

/* Post @nsge (at most max_sge) entries @sg into WQE @slot (masked). */
static inline void dpv__rq_set_sges(struct dpv_rq *rq, uint32_t slot, const struct ibv_sge *sg,
				    uint32_t nsge)
{
	if (nsge > 0)
		rq->wqe[slot].sge = sg[0];
	if (rq->sge != NULL)
		for (uint32_t i = 0; i < nsge; i++)
			rq->sge[(size_t)slot * rq->max_sge + i] = sg[i];
	rq->wqe[slot].nsge = (uint16_t)nsge;
}

/* A WR ring's geometry: a power of two >= @max_wr slots (at least one); max_wr 0 stays 0. */
static inline void dpv__ring_geometry(uint32_t max_wr, uint32_t max_sge, uint32_t *size,
				     uint32_t *mask, uint32_t *out_wr, uint32_t *out_sge)
{
	*size = rte_align32pow2(max_wr > 0 ? max_wr : 1);
	*mask = *size - 1;
	*out_wr = max_wr > 0 ? *size : 0;
	*out_sge = max_sge > 0 ? max_sge : 1;
}

/* The send queue's rings; the WQE ring from @pd's allocator if it is a parent domain with
 * one (dpv__qbuf_alloc); -ENOMEM. */
int dpv__sq_init(struct dpv_sq *sq, struct dpv_pd *pd, uint32_t max_wr, uint32_t max_sge);
/* The MR slots of the WQE at @index. */
static inline struct dpv_mr **dpv__sq_mrs(struct dpv_sq *sq, uint32_t index)
{
	return &sq->mrs[(size_t)(index & sq->mask) * sq->max_sge];
}
void dpv__sq_fini(struct dpv_qp *qp);
/* Room for service-mode descriptors with at most @data bytes of data per slot (a frame the
 * posting thread copies; inline data and a TSO header); -ENOMEM. The SQ must be empty. */
int dpv__sq_desc_init(struct dpv_sq *sq, uint32_t data);
void dpv__wqe_put_mrs(struct dpv_wqe *w);
/* The transport is done with @w (any thread): its MRs are let go, it may complete. */
void dpv__wqe_release(void *w);
/* Write the completions of [done, sent) in order, up to the first WR not yet released;
 * QP lock held (service mode: its service lock). */
void dpv__sq_complete(struct dpv_qp *qp);
/* Wait (bounded) until every WR in [done, sent) is released, calling @reap meanwhile; false
 * if some never were. */
bool dpv__sq_wait_released(struct dpv_qp *qp, void (*reap)(struct dpv_qp *qp));
/* Forget every WR (RESET): cursors back to 0. */
void dpv__sq_clear(struct dpv_sq *sq);
/* A receive ring; its WQEs from @pd's allocator (resource @type) as dpv__sq_init's. */

int dpv__rq_init(struct dpv_rq *rq, struct dpv_pd *pd, uint64_t type, uint32_t max_wr,
		 uint32_t max_sge);
void dpv__rq_fini(struct dpv_rq *rq);
/* ERR: every posted receive WQE completes with FLUSH_ERR; RESET: forgotten. QP lock held. */
void dpv__rq_flush(struct dpv_qp *qp);
void dpv__rq_reset(struct dpv_qp *qp);
int dpv_post_recv(struct ibv_qp *ibqp, struct ibv_recv_wr *wr, struct ibv_recv_wr **bad_wr);
/* One receive completion of @qp, into its CQ (or into @batch, pushed by dpv__rq_batch_flush). */
struct dpv_cqe_batch {
	struct dpv_cq *cq;
	unsigned int n;
	struct dpv_cqe e[32];
};
void dpv__rq_complete(struct dpv_qp *qp, uint64_t wr_id, enum ibv_wc_status status, uint32_t len,
		     unsigned int flags, struct dpv_cqe_batch *batch);
void dpv__rq_batch_flush(struct dpv_cqe_batch *b);
/* A successful receive completion with what a datagram tells (UD): the sender's QP number,
 * the immediate data (wire order, as verbs' imm_data) and whether it asks for a solicited
 * event; @flags as wc_flags. */
void dpv__rq_complete_from(struct dpv_qp *qp, uint64_t wr_id, uint32_t len, unsigned int flags,
			   uint32_t src_qp, uint32_t imm, bool solicited,
			   struct dpv_cqe_batch *batch);

#endif
