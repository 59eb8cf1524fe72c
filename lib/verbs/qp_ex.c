/* SPDX-License-Identifier: BSD-3-Clause */
/* The ibv_wr_* post API (ibv_wr_post(3)): builders and setters write ordinary ibv_send_wr
 * entries into a per-QP batch, and ibv_wr_complete posts it through the QP's own post path:
 * one semantics, two entry points. Inline data and TSO headers are copied when the setter is
 * called (the application may reuse its buffer at once, as with mlx5). */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "verbs_fork.h"
#include "verbs_qp.h"
#include "wr_check.h"

/* Where a WR's gather list and TSO header start in the batch's arrays: indices, since the
 * arrays grow (wr_complete sets the pointers). */
struct wr_meta {
	uint32_t sge_first;
	uint32_t hdr_off;
};

struct dpv_wr_batch {
	dpv_spinlock_t lock;       /* the critical region start .. complete/abort */
	int err;                   /* the first error of the batch (negative), or 0 */
	uint32_t n, cap;           /* WRs */
	struct ibv_send_wr *wr;
	struct wr_meta *meta;
	uint32_t nsge, sge_cap;    /* inline SGEs: addr is an offset into data */
	struct ibv_sge *sge;
	size_t ndata, data_cap;    /* copied inline data and TSO headers */
	uint8_t *data;
};

static inline struct dpv_qp *qp_of(struct ibv_qp_ex *qpx)
{
	return container_of(qpx, struct dpv_qp, qpx);
}

static void batch_fail(struct dpv_wr_batch *b, int err)
{
	if (b->err == 0)
		b->err = err;
}

/* Room for @want more elements of @size bytes in *@p (capacity *@cap); -ENOMEM. */
static int grow(void **p, size_t *cap, size_t used, size_t want, size_t size)
{
	size_t c = *cap;
	void *q;

	if (used + want <= c)
		return 0;
	while (c < used + want)
		c = c != 0 ? c * 2 : 16;
	q = realloc(*p, c * size);
	if (q == NULL)
		return -ENOMEM;
	*p = q;
	*cap = c;
	return 0;
}

/* A new WR of the batch (opcode, wr_id, wr_flags but INLINE); NULL when out of memory. */
static struct ibv_send_wr *wr_new(struct ibv_qp_ex *qpx, enum ibv_wr_opcode opcode)
{
	struct dpv_wr_batch *b = qp_of(qpx)->wr_batch;
	size_t cap = b->cap;
	struct ibv_send_wr *wr;

	if (b->n == b->cap) {
		size_t mcap = b->cap;

		if (grow((void **)&b->wr, &cap, b->n, 1, sizeof(*b->wr)) != 0 ||
		    grow((void **)&b->meta, &mcap, b->n, 1, sizeof(*b->meta)) != 0) {
			batch_fail(b, -ENOMEM);
			return NULL;
		}
		b->cap = (uint32_t)RTE_MIN(cap, mcap);
	}
	wr = &b->wr[b->n];
	b->meta[b->n] = (struct wr_meta){ .sge_first = b->nsge };
	b->n++;
	*wr = (struct ibv_send_wr){
		.wr_id = qpx->wr_id,
		.opcode = opcode,
		.send_flags = qpx->wr_flags & ~(unsigned int)IBV_SEND_INLINE,
	};
	return wr;
}

/* The WR the setters apply to: the last one built (none: the batch fails with EINVAL). */
static struct ibv_send_wr *wr_last(struct dpv_wr_batch *b)
{
	if (b->n == 0) {
		batch_fail(b, -EINVAL);
		return NULL;
	}
	return &b->wr[b->n - 1];
}

/* Append @n SGEs for the last WR (a second data setter replaces the first's list). */
static struct ibv_sge *sge_add(struct dpv_wr_batch *b, struct ibv_send_wr *wr, size_t n)
{
	size_t cap = b->sge_cap;
	struct ibv_sge *s;

	if (grow((void **)&b->sge, &cap, b->nsge, n, sizeof(*b->sge)) != 0) {
		batch_fail(b, -ENOMEM);
		return NULL;
	}
	b->sge_cap = (uint32_t)cap;
	s = &b->sge[b->nsge];
	b->meta[b->n - 1].sge_first = b->nsge;
	b->nsge += (uint32_t)n;
	wr->num_sge = (int)n;
	return s;
}

/* Copy @len bytes into the batch; their offset, or -1 (the batch failed). */
static long data_add(struct dpv_wr_batch *b, const void *src, size_t len)
{
	size_t off = b->ndata;

	if (grow((void **)&b->data, &b->data_cap, b->ndata, len, 1) != 0) {
		batch_fail(b, -ENOMEM);
		return -1;
	}
	if (len != 0)
		memcpy(b->data + off, src, len);
	b->ndata += len;
	return (long)off;
}

/* ---- builders ---- */

static void wr_send(struct ibv_qp_ex *qpx)
{
	wr_new(qpx, IBV_WR_SEND);
}

static void wr_send_imm(struct ibv_qp_ex *qpx, __be32 imm)
{
	struct ibv_send_wr *wr = wr_new(qpx, IBV_WR_SEND_WITH_IMM);

	if (wr != NULL)
		wr->imm_data = imm;
}

static void wr_send_inv(struct ibv_qp_ex *qpx, uint32_t rkey)
{
	struct ibv_send_wr *wr = wr_new(qpx, IBV_WR_SEND_WITH_INV);

	if (wr != NULL)
		wr->invalidate_rkey = rkey;
}

/* The header is copied now: mlx5 writes it into the WQE in this call. */
static void wr_send_tso(struct ibv_qp_ex *qpx, void *hdr, uint16_t hdr_sz, uint16_t mss)
{
	struct dpv_wr_batch *b = qp_of(qpx)->wr_batch;
	struct ibv_send_wr *wr = wr_new(qpx, IBV_WR_TSO);
	long off;

	if (wr == NULL)
		return;
	wr->tso.hdr_sz = hdr_sz;
	wr->tso.mss = mss;
	if (hdr == NULL || hdr_sz > qp_of(qpx)->lim.max_tso_header)
		return;              /* left NULL / too long: the post-time check says EINVAL */
	off = data_add(b, hdr, hdr_sz);
	if (off >= 0) {
		b->meta[b->n - 1].hdr_off = (uint32_t)off;
		wr->tso.hdr = (void *)1;     /* set to the copy by wr_complete */
	}
}

static void wr_rdma(struct ibv_qp_ex *qpx, enum ibv_wr_opcode op, uint32_t rkey, uint64_t addr,
		    __be32 imm)
{
	struct ibv_send_wr *wr = wr_new(qpx, op);

	if (wr != NULL) {
		wr->wr.rdma.rkey = rkey;
		wr->wr.rdma.remote_addr = addr;
		wr->imm_data = imm;
	}
}

static void wr_rdma_write(struct ibv_qp_ex *qpx, uint32_t rkey, uint64_t addr)
{
	wr_rdma(qpx, IBV_WR_RDMA_WRITE, rkey, addr, 0);
}

static void wr_rdma_write_imm(struct ibv_qp_ex *qpx, uint32_t rkey, uint64_t addr, __be32 imm)
{
	wr_rdma(qpx, IBV_WR_RDMA_WRITE_WITH_IMM, rkey, addr, imm);
}

static void wr_rdma_read(struct ibv_qp_ex *qpx, uint32_t rkey, uint64_t addr)
{
	wr_rdma(qpx, IBV_WR_RDMA_READ, rkey, addr, 0);
}

static void wr_atomic(struct ibv_qp_ex *qpx, enum ibv_wr_opcode op, uint32_t rkey, uint64_t addr,
		      uint64_t compare_add, uint64_t swap)
{
	struct ibv_send_wr *wr = wr_new(qpx, op);

	if (wr != NULL) {
		wr->wr.atomic.rkey = rkey;
		wr->wr.atomic.remote_addr = addr;
		wr->wr.atomic.compare_add = compare_add;
		wr->wr.atomic.swap = swap;
	}
}

static void wr_atomic_cmp_swp(struct ibv_qp_ex *qpx, uint32_t rkey, uint64_t addr,
			      uint64_t compare, uint64_t swap)
{
	wr_atomic(qpx, IBV_WR_ATOMIC_CMP_AND_SWP, rkey, addr, compare, swap);
}

static void wr_atomic_fetch_add(struct ibv_qp_ex *qpx, uint32_t rkey, uint64_t addr,
				uint64_t add)
{
	wr_atomic(qpx, IBV_WR_ATOMIC_FETCH_AND_ADD, rkey, addr, add, 0);
}

static void wr_bind_mw(struct ibv_qp_ex *qpx, struct ibv_mw *mw, uint32_t rkey,
		       const struct ibv_mw_bind_info *info)
{
	struct ibv_send_wr *wr = wr_new(qpx, IBV_WR_BIND_MW);

	if (wr != NULL) {
		wr->bind_mw.mw = mw;
		wr->bind_mw.rkey = rkey;
		if (info != NULL)
			wr->bind_mw.bind_info = *info;
	}
}

static void wr_local_inv(struct ibv_qp_ex *qpx, uint32_t rkey)
{
	struct ibv_send_wr *wr = wr_new(qpx, IBV_WR_LOCAL_INV);

	if (wr != NULL)
		wr->invalidate_rkey = rkey;
}

/* No ibv_post_send opcode carries it, and no transport of dpverbs has it. */
static void wr_atomic_write(struct ibv_qp_ex *qpx, uint32_t rkey, uint64_t addr, const void *op)
{
	(void)rkey; (void)addr; (void)op;
	batch_fail(qp_of(qpx)->wr_batch, -EOPNOTSUPP);
}

/* ---- setters ---- */

static void wr_set_ud_addr(struct ibv_qp_ex *qpx, struct ibv_ah *ah, uint32_t qpn, uint32_t qkey)
{
	struct ibv_send_wr *wr = wr_last(qp_of(qpx)->wr_batch);

	if (wr != NULL) {
		wr->wr.ud.ah = ah;
		wr->wr.ud.remote_qpn = qpn;
		wr->wr.ud.remote_qkey = qkey;
	}
}

static void wr_set_xrc_srqn(struct ibv_qp_ex *qpx, uint32_t srqn)
{
	struct ibv_send_wr *wr = wr_last(qp_of(qpx)->wr_batch);

	if (wr != NULL)
		wr->qp_type.xrc.remote_srqn = srqn;
}

static void wr_set_sge_list(struct ibv_qp_ex *qpx, size_t n, const struct ibv_sge *list)
{
	struct dpv_wr_batch *b = qp_of(qpx)->wr_batch;
	struct ibv_send_wr *wr = wr_last(b);
	struct ibv_sge *s;

	if (wr == NULL)
		return;
	wr->send_flags &= ~(unsigned int)IBV_SEND_INLINE;
	if (n > qp_of(qpx)->lim.max_send_sge) {
		batch_fail(b, -EINVAL);      /* the check ibv_post_send makes on num_sge */
		return;
	}
	s = sge_add(b, wr, n);
	if (s != NULL && n != 0)
		memcpy(s, list, n * sizeof(*s));
}

static void wr_set_sge(struct ibv_qp_ex *qpx, uint32_t lkey, uint64_t addr, uint32_t length)
{
	struct ibv_sge sge = { .addr = addr, .length = length, .lkey = lkey };

	wr_set_sge_list(qpx, 1, &sge);
}

/* The buffers are copied now and concatenated into one SGE of the batch's bytes. */
static void wr_set_inline_data_list(struct ibv_qp_ex *qpx, size_t n,
				    const struct ibv_data_buf *bufs)
{
	struct dpv_qp *qp = qp_of(qpx);
	struct dpv_wr_batch *b = qp->wr_batch;
	struct ibv_send_wr *wr = wr_last(b);
	size_t total = 0, off;
	struct ibv_sge *s;

	if (wr == NULL)
		return;
	for (size_t i = 0; i < n; i++)
		total += bufs[i].length;
	if (total > qp->lim.max_inline_data) {
		batch_fail(b, -EINVAL);      /* the INLINE length check of ibv_post_send */
		return;
	}
	off = b->ndata;
	for (size_t i = 0; i < n; i++)
		if (data_add(b, bufs[i].addr, bufs[i].length) < 0)
			return;
	s = sge_add(b, wr, 1);
	if (s == NULL)
		return;
	*s = (struct ibv_sge){ .addr = off, .length = (uint32_t)total };
	wr->send_flags |= IBV_SEND_INLINE;
}

static void wr_set_inline_data(struct ibv_qp_ex *qpx, void *addr, size_t length)
{
	struct ibv_data_buf buf = { .addr = addr, .length = length };

	wr_set_inline_data_list(qpx, 1, &buf);
}

/* ---- the critical region ---- */

static void batch_reset(struct dpv_wr_batch *b)
{
	b->err = 0;
	b->n = 0;
	b->nsge = 0;
	b->ndata = 0;
}

static void wr_start(struct ibv_qp_ex *qpx)
{
	struct dpv_qp *qp = qp_of(qpx);

	DPV_FORK_NOOP();             /* wr_complete says ENODEV */
	if (!qp->lockless)           /* ibv_wr_post(3): a TD QP's caller serializes */
		dpv__spinlock_lock(&qp->wr_batch->lock);
	batch_reset(qp->wr_batch);
}

static void batch_end(struct dpv_qp *qp)
{
	batch_reset(qp->wr_batch);
	if (!qp->lockless)
		dpv__spinlock_unlock(&qp->wr_batch->lock);
}

static void wr_abort(struct ibv_qp_ex *qpx)
{
	DPV_FORK_NOOP();
	batch_end(qp_of(qpx));
}

/* The checks needing no frame bytes, on every WR before any is posted, so that a batch they
 * refuse posts nothing ("the entire posting will be aborted", ibv_wr_post(3)). */
static int batch_check(struct dpv_qp *qp, struct dpv_wr_batch *b)
{
	uint32_t used = qp->sq.post - __atomic_load_n(&qp->sq.freed, __ATOMIC_ACQUIRE);

	if (b->n > qp->sq.max_wr - RTE_MIN(used, qp->sq.max_wr))
		return -ENOMEM;              /* the SQ cannot take them all */
	for (uint32_t i = 0; i < b->n; i++) {
		const struct ibv_send_wr *wr = &b->wr[i];
		bool inl = wr->send_flags & IBV_SEND_INLINE;
		uint64_t len = dpv__wr_length(wr);
		int rc = dpv__wr_check_basic(&qp->lim, wr, len);
		const uint8_t *l2 = inl ? (const uint8_t *)(uintptr_t)wr->sg_list[0].addr : NULL;

		if (rc == 0 && (inl || len <= qp->lim.max_frame || wr->opcode != IBV_WR_SEND))
			rc = dpv__wr_check_shape(&qp->lim, wr, len, l2,
						 inl ? wr->sg_list[0].length : 0, NULL);
		if (rc != 0)
			return rc;
	}
	return 0;
}

/* Pointers into the batch's arrays, now that they stop moving; the WRs as one list. */
static void batch_link(struct dpv_wr_batch *b)
{
	for (uint32_t i = 0; i < b->n; i++) {
		struct ibv_send_wr *wr = &b->wr[i];

		wr->next = i + 1 < b->n ? &b->wr[i + 1] : NULL;
		wr->sg_list = wr->num_sge > 0 ? &b->sge[b->meta[i].sge_first] : NULL;
		if (wr->send_flags & IBV_SEND_INLINE)
			wr->sg_list[0].addr += (uintptr_t)b->data;
		if (wr->opcode == IBV_WR_TSO && wr->tso.hdr != NULL)
			wr->tso.hdr = b->data + b->meta[i].hdr_off;
	}
}

/* 0 or a positive errno. A builder's, setter's or check_batch's error posts nothing; one
 * only the post path sees stops the batch at that WR, as ibv_post_send's list. */
static int wr_complete(struct ibv_qp_ex *qpx)
{
	struct dpv_qp *qp = qp_of(qpx);
	struct dpv_wr_batch *b = qp->wr_batch;
	struct ibv_send_wr *bad;
	int rc = b->err;

	DPV_FORK_REFUSE(ENODEV);
	if (rc == 0 && b->n != 0) {
		batch_link(b);
		rc = batch_check(qp, b);
		if (rc == 0)
			rc = __atomic_load_n(&qp->post_send, __ATOMIC_RELAXED)(qp, b->wr, &bad);
	}
	batch_end(qp);
	return -rc;
}

int dpv__qp_ex_init(struct dpv_qp *qp, uint64_t send_ops_flags)
{
	struct ibv_qp_ex *x = &qp->qpx;

	if (send_ops_flags & ~dpv__wr_send_ops(qp->type))
		return -EOPNOTSUPP;          /* ibv_wr_post(3): creation fails */
	qp->wr_batch = calloc(1, sizeof(*qp->wr_batch));
	if (qp->wr_batch == NULL)
		return -ENOMEM;
	dpv__spinlock_init(&qp->wr_batch->lock);
	/* every builder, whatever send_ops_flags says: a WR the type lacks fails as in
	 * ibv_post_send (EINVAL) */

	x->wr_atomic_cmp_swp = wr_atomic_cmp_swp;
	x->wr_atomic_fetch_add = wr_atomic_fetch_add;
	x->wr_bind_mw = wr_bind_mw;
	x->wr_local_inv = wr_local_inv;
	x->wr_rdma_read = wr_rdma_read;
	x->wr_rdma_write = wr_rdma_write;
	x->wr_rdma_write_imm = wr_rdma_write_imm;
	x->wr_send = wr_send;
	x->wr_send_imm = wr_send_imm;
	x->wr_send_inv = wr_send_inv;
	x->wr_send_tso = wr_send_tso;
	x->wr_set_ud_addr = wr_set_ud_addr;
	x->wr_set_xrc_srqn = wr_set_xrc_srqn;
	x->wr_set_inline_data = wr_set_inline_data;
	x->wr_set_inline_data_list = wr_set_inline_data_list;
	x->wr_set_sge = wr_set_sge;
	x->wr_set_sge_list = wr_set_sge_list;
	x->wr_start = wr_start;
	x->wr_complete = wr_complete;
	x->wr_abort = wr_abort;
	x->wr_atomic_write = wr_atomic_write;
	return 0;
}

void dpv__qp_ex_fini(struct dpv_qp *qp)
{
	struct dpv_wr_batch *b = qp->wr_batch;

	if (b == NULL)
		return;
	free(b->wr);
	free(b->meta);
	free(b->sge);
	free(b->data);
	free(b);
	qp->wr_batch = NULL;
}

/* rdma-core: the ibv_qp_ex of a QP created with IBV_QP_INIT_ATTR_SEND_OPS_FLAGS, else NULL. */
DPV_EXPORT struct ibv_qp_ex *ibv_qp_to_qp_ex(struct ibv_qp *ibqp)
{
	struct dpv_qp *qp = to_dqp(ibqp);

	if (qp == NULL || qp->wr_batch == NULL) {
		errno = EOPNOTSUPP;
		return NULL;
	}
	return &qp->qpx;
}
