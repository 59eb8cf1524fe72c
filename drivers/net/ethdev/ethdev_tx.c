/* Transmit on ethdev queues. A frame is the WR's gather list with its first copy_len bytes
 * copied into pool mbufs and the rest attached, without a copy, to the MR memory as external
 * buffers. copy_len is the whole frame for inline data and on ports that cannot give buffers
 * back on demand; the headers when dpverbs must write checksums (never into application
 * memory); 0 otherwise. The external buffers of one WR share one shared-info structure in
 * framework memory, whose free callback, run when the PMD frees the last of them, is what
 * lets the WR complete. */
#include <errno.h>
#include <string.h>

#include <rte_branch_prediction.h>
#include <rte_mbuf.h>
#include <rte_memcpy.h>
#include <rte_mempool.h>

#include "ethdev_priv.h"

#define PIECE_MAX 61440            /* mbuf buf_len is 16-bit: larger SGEs are chained */
#define PEEK_MAX 256               /* enough for Ethernet/VLAN/IP/TCP headers */

struct zc_ctx {
	struct rte_mbuf_ext_shared_info shinfo;
	struct dpv_wqe *wqe;
};

/* A position in a WR's gather list. */
struct cursor {
	const struct dpv_tx_wr *wr;
	uint16_t s;
	uint32_t off;
};

static uint32_t cursor_take(struct cursor *c, uint32_t max, const uint8_t **p)
{
	uint32_t take = RTE_MIN(c->wr->seg[c->s].len - c->off, max);

	*p = (const uint8_t *)c->wr->seg[c->s].addr + c->off;
	c->off += take;
	if (c->off == c->wr->seg[c->s].len) {
		c->s++;
		c->off = 0;
	}
	return take;
}

/* An mbuf from the QP's stash, refilled from the pool in bulk. */
static inline struct rte_mbuf *txq_mbuf(struct dpv_txq *txq)
{
	if (unlikely(txq->nb_stash == 0)) {
		if (rte_pktmbuf_alloc_bulk(txq->mp, txq->stash, TXQ_STASH) != 0)
			return rte_pktmbuf_alloc(txq->mp);
		txq->nb_stash = TXQ_STASH;
	}
	return txq->stash[--txq->nb_stash];
}

/* Copy @len bytes from the cursor into a chain of pool mbufs. */
static int copy_bytes(struct dpv_txq *txq, struct cursor *c, uint32_t len, struct rte_mbuf **out)
{
	struct rte_mbuf *head = NULL, *m = NULL;

	while (len > 0) {
		const uint8_t *p;
		uint32_t take;

		if (m == NULL || rte_pktmbuf_tailroom(m) == 0) {
			struct rte_mbuf *n = txq_mbuf(txq);

			if (n == NULL || (head != NULL && rte_pktmbuf_chain(head, n) != 0)) {
				rte_pktmbuf_free(n);
				rte_pktmbuf_free(head);
				return -ENOMEM;
			}
			if (head == NULL)
				head = n;
			m = n;
		}
		take = cursor_take(c, RTE_MIN(len, (uint32_t)rte_pktmbuf_tailroom(m)), &p);
		memcpy(rte_pktmbuf_mtod_offset(m, uint8_t *, m->data_len), p, take);
		m->data_len += take;
		head->pkt_len += take;
		len -= take;
	}
	*out = head;
	return 0;
}

static uint16_t pieces_left(const struct cursor *c)
{
	uint32_t n = 0;

	for (uint16_t s = c->s; s < c->wr->nseg; s++) {
		uint32_t len = c->wr->seg[s].len - (s == c->s ? c->off : 0);

		n += (len + PIECE_MAX - 1) / PIECE_MAX;
	}
	return n > UINT16_MAX ? UINT16_MAX : (uint16_t)n;
}

static void zc_free(void *addr, void *opaque)
{
	struct zc_ctx *z = opaque;

	dpv_tx_released(z->wqe);
	rte_mempool_put(rte_mempool_from_obj(z), z);
}

/* Attach the rest of the gather list to @head (which may be NULL). -ENOBUFS or -E2BIG: the
 * caller copies instead. */
static int attach_rest(struct dpv_txq *txq, struct cursor *c, struct rte_mbuf **head,
		       struct dpv_wqe *wqe)
{
	struct rte_mbuf *mb[256];
	uint16_t n = pieces_left(c), have = *head ? (*head)->nb_segs : 0;
	struct zc_ctx *z;

	if (n == 0)
		return 0;
	if (n > RTE_DIM(mb) || have + n > txq->port->max_segs)
		return -E2BIG;
	if (rte_mempool_get(txq->zc_mp, (void **)&z) != 0)
		return -ENOBUFS;
	if (rte_pktmbuf_alloc_bulk(txq->ext_mp, mb, n) != 0) {
		rte_mempool_put(txq->zc_mp, z);
		return -ENOBUFS;
	}
	z->wqe = wqe;
	z->shinfo.free_cb = zc_free;
	z->shinfo.fcb_opaque = z;
	rte_mbuf_ext_refcnt_set(&z->shinfo, n);
	for (uint16_t i = 0; i < n; i++) {
		const uint8_t *p;
		uint32_t len = cursor_take(c, PIECE_MAX, &p);

		/* Zero-copy runs only where the iova is the address: IOVA as VA, or a vdev that
		 * does no DMA (port_tx_mode). */
		rte_pktmbuf_attach_extbuf(mb[i], (void *)(uintptr_t)p, (rte_iova_t)(uintptr_t)p,
					  (uint16_t)len, &z->shinfo);
		mb[i]->data_len = (uint16_t)len;
		mb[i]->pkt_len = len;
		if (*head == NULL)
			*head = mb[i];
		else
			rte_pktmbuf_chain(*head, mb[i]);
	}
	return 0;
}

/* The frame's headers, parsed from application memory without writing it. */
static void peek_headers(const struct dpv_tx_wr *wr, struct dpv_hdr_info *info)
{
	uint8_t buf[PEEK_MAX];
	struct cursor c = { .wr = wr };
	uint32_t len = 0;

	while (len < sizeof(buf) && c.s < wr->nseg) {
		const uint8_t *p;
		uint32_t take = cursor_take(&c, sizeof(buf) - len, &p);

		memcpy(buf + len, p, take);
		len += take;
	}
	dpv_hdr_parse(buf, len, info);
}

static uint32_t copy_length(const struct dpv_txq *txq, const struct dpv_tx_wr *wr,
			    struct dpv_hdr_info *info)
{
	if ((wr->flags & DPV_TX_INLINE) || !txq->port->zero_copy || wr->len <= txq->copy_max)
		return wr->len;
	if (!(wr->flags & DPV_TX_IP_CSUM))
		return 0;
	return (uint32_t)info->l2_len + info->l3_len + info->l4_len;
}

/* The common small frame: one SGE copied into one mbuf. */
static inline int copy_small(struct dpv_txq *txq, const struct dpv_tx_wr *wr,
			     struct rte_mbuf **out)
{
	struct rte_mbuf *m = txq_mbuf(txq);

	if (unlikely(m == NULL))
		return -ENOMEM;
	rte_memcpy(rte_pktmbuf_mtod(m, void *), wr->seg[0].addr, wr->len);
	m->data_len = (uint16_t)wr->len;
	m->pkt_len = wr->len;
	*out = m;
	return 0;
}

static int build(struct dpv_txq *txq, const struct dpv_tx_wr *wr, uint32_t copy_len,
		 struct rte_mbuf **out)
{
	struct cursor c = { .wr = wr };
	struct rte_mbuf *m = NULL;
	int rc = copy_len ? copy_bytes(txq, &c, copy_len, &m) : 0;

	if (rc == 0)
		rc = attach_rest(txq, &c, &m, wr->wqe);
	if (rc != 0) {
		rte_pktmbuf_free(m);        /* before attaching: no callback runs */
		return rc;
	}
	*out = m;
	return 0;
}

int dpv_eth_tx_build(struct dpv_txq *txq, const struct dpv_tx_wr *wr, void **frame)
{
	struct dpv_hdr_info info = { 0 };
	uint32_t copy_len;
	struct rte_mbuf *m;
	int rc;

	if (wr->flags & DPV_TX_TSO)
		return -EOPNOTSUPP;          /* TSO segmentation is not built yet */
	if (wr->flags & DPV_TX_IP_CSUM)
		peek_headers(wr, &info);
	copy_len = copy_length(txq, wr, &info);
	if (copy_len == wr->len && wr->nseg == 1 && wr->len <= txq->small_max)
		rc = copy_small(txq, wr, &m);
	else
		rc = build(txq, wr, copy_len, &m);
	if (rc == -ENOBUFS || rc == -E2BIG)
		rc = build(txq, wr, copy_len = wr->len, &m);
	if (rc != 0)
		return rc;
	if (wr->flags & DPV_TX_IP_CSUM)
		dpv_sw_csum(m, &info);
	/* A copied frame holds no application memory: nothing to wait for. */
	if (copy_len == wr->len)
		dpv_tx_released(wr->wqe);
	*frame = m;
	return 0;
}

uint16_t dpv_eth_tx_burst(struct dpv_txq *txq, void **frames, uint16_t n)
{
	uint16_t sent;

	rte_spinlock_lock(&txq->q->lock);
	sent = rte_eth_tx_burst(txq->port->port_id, txq->q->qid, (struct rte_mbuf **)frames, n);
	rte_spinlock_unlock(&txq->q->lock);
	return sent;
}

void dpv_eth_tx_drop(void *frame)
{
	rte_pktmbuf_free(frame);
}

void dpv_eth_tx_reap(struct dpv_txq *txq)
{
	if (!txq->port->tx_done_cleanup)
		return;
	rte_spinlock_lock(&txq->q->lock);
	rte_eth_tx_done_cleanup(txq->port->port_id, txq->q->qid, 0);
	rte_spinlock_unlock(&txq->q->lock);
}

int dpv_eth_zc_pool_create(struct dpv_port *p, int socket)
{
	char name[RTE_MEMPOOL_NAMESIZE];

	if (p->zc_mp != NULL)
		return 0;
	snprintf(name, sizeof(name), "dpv_zc_%u", p->port_id);
	p->zc_mp = rte_mempool_create(name, dpv_config()->mbufs_per_socket, sizeof(struct zc_ctx),
				      dpv_config()->mbuf_cache, 0, NULL, NULL, NULL, NULL,
				      socket, 0);
	return p->zc_mp == NULL ? -ENOMEM : 0;
}

void dpv_eth_zc_pool_free(struct dpv_port *p)
{
	if (p->zc_mp == NULL)
		return;
	if (rte_mempool_full(p->zc_mp)) {
		rte_mempool_free(p->zc_mp);
		p->zc_mp = NULL;
	} else {
		PMD_LOG(WARNING, "port %s: %u zero-copy sends were never released by the PMD; "
			"keeping their memory", p->name, rte_mempool_in_use_count(p->zc_mp));
	}
}
