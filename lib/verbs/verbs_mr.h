/* SPDX-License-Identifier: BSD-3-Clause */
/* Memory regions, memory windows and their range sets (mr.c, mw.c, range.c): the lkey table
 * and rkey hash every access is checked against, and the DMA ranges MRs need mapped. */
#ifndef DPV_VERBS_MR_H
#define DPV_VERBS_MR_H

#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>

#include <infiniband/verbs.h>
#include "dpv_lock.h"
#include "verbs_base.h"
#include "verbs_device.h"
#include "verbs_pd.h"

struct dpv_qp;

struct dpv_range;

/* The ranges one holder (an MR) holds a reference on, in a range set (range.c). */
struct dpv_range_refs {
	unsigned int nb;
	struct dpv_range **r;
};

struct dpv_mr {
	struct ibv_mr ibmr;
	struct dpv_pd *pd;
	uint64_t iova;             /* address the application names in SGEs */
	uint8_t *va;
	uint64_t length;
	unsigned int access;
	int refs;                  /* in-flight WRs using it */
	struct dpv_mr *rkey_next;  /* its bucket of the context's rkey hash */
	struct dpv_range_refs dma;    /* its DMA ranges (range.c) */
	struct dpv_range_refs nofork; /* its MADV_DONTFORK ranges, with ibv_fork_init (fork.c) */
};

struct dpv_mr_table {
	dpv_spinlock_t lock;
	uint32_t size;
	uint32_t free_hint;
	struct dpv_mr **slot;      /* lkey index -> MR */
	uint8_t *gen;              /* lkey generation, so that a stale lkey does not match */
	struct dpv_mr **rkey_hash; /* rkey -> MR (remote access), chained, under lock */
	struct dpv_mw **mw_hash;   /* rkey -> memory window, the same buckets, under lock */
	uint32_t nb_mw;
	/* moves (from 1) each time an MR leaves the table: a receive WQE checked against the
	 * table at an older value is checked again (struct dpv_rwqe) */
	uint64_t dereg_gen;
};
#define DPV_RKEY_BUCKETS 4096

/* An rkey's bucket: its index (the 24 bits above ibv_inc_rkey's tag), so a window keeps its
 * bucket when bound again. */
static inline uint32_t dpv__rkey_bucket(uint32_t rkey)
{
	uint32_t index = rkey >> 8;

	return (index ^ index >> 12) & (DPV_RKEY_BUCKETS - 1);
}

/* A memory window (mw.c): its key grants a peer [iova, iova + length) of an MR with the
 * window's access flags, while bound. Under the MR table's lock. */
struct dpv_mw {
	struct ibv_mw ibmw;
	struct dpv_pd *pd;
	uint32_t key;              /* the key of the current binding (or the last one) */
	bool bound;                /* key grants access (a zero-length type 1 binding: not) */
	struct dpv_mr *mr;         /* bound: the MR, which it holds (ibv_dereg_mr: EBUSY) */
	uint64_t iova, length;
	unsigned int access;
	const struct dpv_qp *qp;   /* type 2: the only QP whose peer may use the key */
	struct dpv_mw *rkey_next;  /* its bucket of mw_hash */
};

/* A random rkey whose index no MR or window of the table has; the table lock held. */
uint32_t dpv__rkey_new(struct dpv_mr_table *t);
/* Whether an MR or window of the table has @rkey's index; the table lock held. */
bool dpv__rkey_index_taken(struct dpv_mr_table *t, uint32_t rkey);
/* The window bound under @rkey that grants @qp's peer @access on [iova, iova + len), or NULL;
 * the table lock held. */
struct dpv_mr *dpv__mw_by_rkey(struct dpv_mr_table *t, const struct dpv_qp *qp, uint32_t rkey,
			       uint64_t iova, uint64_t len, unsigned int access);
/* Execute a BIND_MW WR posted on @qp (type 1 through ibv_bind_mw, type 2 directly): the
 * status it completes with, IBV_WC_SUCCESS or IBV_WC_MW_BIND_ERR. */
enum ibv_wc_status dpv__mw_bind(struct dpv_qp *qp, const struct ibv_send_wr *wr);
/* Invalidate @rkey, a type 2 window of @qp's PD (@remote: a SEND_WITH_INV received on @qp,
 * and the window must be bound to @qp). 0, or -EINVAL when it names no such bound window
 * (an MR's key, a type 1 window, an old key, another PD's). */
int dpv__mw_invalidate(struct dpv_qp *qp, uint32_t rkey, bool remote);
/* ibv_close_device: every window of the context deallocated (before its MRs); how many. */
unsigned int dpv__mw_release_all(struct dpv_context *ctx);
/* @qp is being destroyed: the type 2 windows bound to it are invalidated. */
void dpv__mw_qp_gone(struct dpv_qp *qp);
struct ibv_mw *dpv_alloc_mw(struct ibv_pd *pd, enum ibv_mw_type type);
int dpv_bind_mw(struct ibv_qp *qp, struct ibv_mw *mw, struct ibv_mw_bind *bind);
int dpv_dealloc_mw(struct ibv_mw *mw);

/* The MR of @rkey (an MR's, or a window's bound in @qp's PD) that grants @qp's peer @access
 * (IBV_ACCESS_REMOTE_*) on [iova, iova + len), or NULL; the context's MR table lock must be
 * held (ibv_dereg_mr and the window verbs take it) while the MR is used. */
struct dpv_mr *dpv__mr_by_rkey(const struct dpv_qp *qp, uint32_t rkey, uint64_t iova,
			       uint64_t len, unsigned int access);

int dpv__mr_table_init(struct dpv_context *ctx);
void dpv__mr_table_fini(struct dpv_context *ctx);
#define LKEY_INDEX_BITS 24
#define LKEY_INDEX_MASK ((1u << LKEY_INDEX_BITS) - 1)

/* @mr if it contains [addr, addr + len) (*@va: where that is), else NULL. */
static inline struct dpv_mr *dpv__mr_range(struct dpv_mr *mr, uint64_t addr, uint32_t len,
					  uint8_t **va)
{
	if (unlikely(addr < mr->iova || len > mr->length || addr - mr->iova > mr->length - len))
		return NULL;
	*va = mr->va + (addr - mr->iova);
	return mr;
}

/* The MR of @lkey in @pd containing [addr, addr + len), or NULL (a protection error). */
static inline struct dpv_mr *dpv__mr_lookup(struct dpv_context *ctx, struct dpv_pd *pd,
					   uint32_t lkey, uint64_t addr, uint32_t len,
					   uint8_t **va)
{
	struct dpv_mr_table *t = ctx->mrs;
	uint32_t i = lkey & LKEY_INDEX_MASK;
	struct dpv_mr *mr;

	if (unlikely(i >= t->size))
		return NULL;
	mr = __atomic_load_n(&t->slot[i], __ATOMIC_ACQUIRE);
	if (unlikely(mr == NULL || mr->ibmr.lkey != lkey || mr->pd != pd))
		return NULL;
	return dpv__mr_range(mr, addr, len, va);
}

/* Page-rounded, reference-counted, non-overlapping ranges (range.c): @add maps a new range
 * (0 or a negative errno), @del unmaps it at its last reference (@live false: at shutdown). */

struct dpv_range_set {
	pthread_mutex_t lock;
	struct dpv_range **ranges;     /* sorted by start */
	unsigned int nb, cap;
	int (*add)(uintptr_t start, uintptr_t end);
	void (*del)(uintptr_t start, uintptr_t end, bool live);
};
/* Give @h a reference on every range of the pages of [va, va + len), adding the gaps. */
int dpv__rangeset_hold(struct dpv_range_set *s, const void *va, uint64_t len,
		       struct dpv_range_refs *h);
void dpv__rangeset_drop(struct dpv_range_set *s, struct dpv_range_refs *h);
/* The same without a holder: the references of a hold are dropped by naming the same bytes. */
int dpv__rangeset_hold_anon(struct dpv_range_set *s, const void *va, uint64_t len);
void dpv__rangeset_drop_anon(struct dpv_range_set *s, const void *va, uint64_t len);
void dpv__rangeset_clear(struct dpv_range_set *s, bool live);
unsigned int dpv__rangeset_count(struct dpv_range_set *s);
/* Do the pages of [va, va + len) lie in one memseg list of DPDK's own heap? */
bool dpv__in_dpdk_heap(const void *va, uint64_t len);

/* DMA range registry (a range set): what an MR needs mapped for the NICs. */
int dpv__range_acquire(struct dpv_context *ctx, void *va, uint64_t len, struct dpv_mr *mr);
void dpv__range_release(struct dpv_context *ctx, struct dpv_mr *mr);
void dpv__ranges_release_all(void);

/* The MR of @ctx whose handle (its lkey) is @handle, in @pd; NULL (EINVAL) if none. */
struct dpv_mr *dpv__mr_by_handle(struct dpv_context *ctx, struct ibv_pd *pd, uint32_t handle);

#endif
