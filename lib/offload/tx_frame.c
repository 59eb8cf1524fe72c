/* SPDX-License-Identifier: BSD-3-Clause */
/* Frames from requests: the first copy_len bytes of the gather list copied into pool mbufs,
 * the rest attached from MR memory. copy_len is all of it for inline data, small frames and
 * ports that cannot give buffers back on demand; the headers when checksums are written
 * (never into application memory); else 0. A request's external buffers share one
 * shared-info whose free callback tells the owner its memory is free. Checksums go to the
 * port where it offers them, else software; TSO the port cannot do as the contract says goes
 * to tx_tso.c. */
#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <netinet/in.h>
#include <string.h>

#include <rte_branch_prediction.h>
#include <rte_ethdev.h>
#include <rte_ip.h>
#include <rte_malloc.h>
#include <rte_mbuf.h>
#include <rte_memcpy.h>
#include <rte_mempool.h>

#include "dpv_engine.h"
#include "dpverbs_offload.h"
#include "tx_priv.h"

#define HW_CSUM_OFFLOADS (RTE_ETH_TX_OFFLOAD_IPV4_CKSUM | RTE_ETH_TX_OFFLOAD_TCP_CKSUM | \
			  RTE_ETH_TX_OFFLOAD_UDP_CKSUM)
#define PIECE_MAX 61440u           /* mbuf buf_len is 16-bit: larger SGEs are chained */
#define PEEK_MAX 256               /* enough for Ethernet/VLAN/IP/TCP headers */
#define BURST_PKTS 64
#define TCP_CWR 0x80

uint32_t cursor_take(struct cursor *c, uint32_t max, const uint8_t **p)
{
	uint32_t take = RTE_MIN(c->seg[c->s].len - c->off, max);

	*p = (const uint8_t *)c->seg[c->s].addr + c->off;
	c->off += take;
	if (c->off == c->seg[c->s].len) {
		c->s++;
		c->off = 0;
	}
	return take;
}

/* An mbuf from a stash of the QP, refilled from the pool in bulk. */
struct rte_mbuf *dpv__tx_stash_refill(struct dpv_txh *txh, struct dpv_mbuf_stash *s)
{
	if (rte_pktmbuf_alloc_bulk(txh->mp, s->m, DPV_TX_STASH) != 0)
		return rte_pktmbuf_alloc(txh->mp);
	s->n = DPV_TX_STASH;
	return s->m[--s->n];
}

static struct rte_mbuf *last_seg(struct rte_mbuf *m)
{
	while (m->next != NULL)
		m = m->next;
	return m;
}

int dpv__tx_copy(struct dpv_txh *txh, struct dpv_mbuf_stash *s, struct cursor *c, uint32_t len,
		 struct rte_mbuf **head, uint16_t *sum)
{
	struct rte_mbuf *m = *head ? last_seg(*head) : NULL, *first_new = NULL;
	uint32_t done = 0;

	while (len > 0) {
		const uint8_t *p;
		uint32_t take;

		if (m == NULL || RTE_MBUF_HAS_EXTBUF(m) || rte_pktmbuf_tailroom(m) == 0) {
			struct rte_mbuf *n = dpv__tx_mbuf(txh, s);

			if (n == NULL)
				goto fail;
			if (*head == NULL)
				*head = n;
			else if (rte_pktmbuf_chain(*head, n) != 0) {
				rte_pktmbuf_free(n);
				goto fail;
			}
			if (first_new == NULL)
				first_new = n;
			m = n;
		}
		take = cursor_take(c, RTE_MIN(len, (uint32_t)rte_pktmbuf_tailroom(m)), &p);
		if (sum != NULL)
			*sum = dpv__cksum_copy(*sum, rte_pktmbuf_mtod_offset(m, uint8_t *, m->data_len),
					       p, take, done);
		else
			rte_memcpy(rte_pktmbuf_mtod_offset(m, uint8_t *, m->data_len), p, take);
		done += take;
		m->data_len += take;
		(*head)->pkt_len += take;
		len -= take;
	}
	return 0;
fail:
	/* only whole new frames are freed here; a caller's chain is freed by the caller */
	if (*head == first_new) {
		rte_pktmbuf_free(*head);
		*head = NULL;
	}
	return -ENOMEM;
}

static void zc_free(void *addr, void *opaque)
{
	struct zc_ctx *z = opaque;

	z->released(z->owner);
	rte_free(z->store);
	z->store = NULL;
	rte_mempool_put(rte_mempool_from_obj(z), z);
}

struct zc_ctx *dpv__tx_zc_get(struct dpv_txh *txh, void *owner, uint16_t refs)
{
	struct zc_ctx *z;

	if (rte_mempool_get(txh->zc_mp, (void **)&z) != 0)
		return NULL;
	z->released = txh->released;
	z->owner = owner;
	z->store = NULL;
	z->shinfo.free_cb = zc_free;
	z->shinfo.fcb_opaque = z;
	rte_mbuf_ext_refcnt_set(&z->shinfo, refs);
	return z;
}

void dpv__tx_zc_put(struct zc_ctx *z)
{
	if (rte_mbuf_ext_refcnt_update(&z->shinfo, -1) == 0)
		zc_free(NULL, z);
}

static uint16_t pieces(const struct cursor *c, uint32_t len)
{
	uint32_t n = 0;
	struct cursor t = *c;

	while (len > 0) {
		const uint8_t *p;
		uint32_t take = cursor_take(&t, RTE_MIN(len, PIECE_MAX), &p);

		len -= take;
		n++;
	}
	return n > UINT16_MAX ? UINT16_MAX : (uint16_t)n;
}

int dpv__tx_attach(struct dpv_txh *txh, struct cursor *c, uint32_t len, struct rte_mbuf **head,
		   struct zc_ctx *z)
{
	struct rte_mbuf *mb[256];
	uint16_t n = len ? pieces(c, len) : 0, have = *head ? (*head)->nb_segs : 0;

	if (n == 0)
		return 0;
	if (n > RTE_DIM(mb) || have + n > txh->caps->max_tx_segs)
		return -E2BIG;
	if (rte_pktmbuf_alloc_bulk(txh->ext_mp, mb, n) != 0)
		return -ENOBUFS;
	rte_mbuf_ext_refcnt_update(&z->shinfo, n);
	for (uint16_t i = 0; i < n; i++) {
		const uint8_t *p;
		uint32_t take = cursor_take(c, RTE_MIN(len, PIECE_MAX), &p);

		/* Zero-copy runs only where the iova is the address: IOVA as VA, or a vdev that
		 * does no DMA (port_tx_mode). */
		rte_pktmbuf_attach_extbuf(mb[i], (void *)(uintptr_t)p, (rte_iova_t)(uintptr_t)p,
					  (uint16_t)take, &z->shinfo);
		mb[i]->data_len = (uint16_t)take;
		mb[i]->pkt_len = take;
		len -= take;
		if (*head == NULL)
			*head = mb[i];
		else
			rte_pktmbuf_chain(*head, mb[i]);
	}
	return 0;
}

/* The frame's headers, parsed from application memory without writing it: in place when the
 * first piece holds them, else from a copy of the first bytes into @buf (PEEK_MAX). Returns
 * where the parsed bytes are. */
static const uint8_t *peek_segs(const struct dpv_tx_seg *seg, uint16_t nseg, uint32_t total,
				uint8_t *buf, struct dpv_hdr_info *info)
{
	struct cursor c = { .seg = seg, .nseg = nseg };
	uint32_t want = RTE_MIN(total, (uint32_t)PEEK_MAX), len = 0;

	if (nseg > 0 && seg[0].len >= want) {
		dpv__hdr_parse(seg[0].addr, want, info);
		return seg[0].addr;
	}
	while (len < want && c.s < nseg) {
		const uint8_t *p;
		uint32_t take = cursor_take(&c, want - len, &p);

		memcpy(buf + len, p, take);
		len += take;
	}
	dpv__hdr_parse(buf, len, info);
	return buf;
}

static uint32_t copy_length(const struct dpv_txh *txh, const struct dpv_tx_req *wr,
			    struct dpv_hdr_info *info)
{
	if ((wr->flags & DPV_TX_INLINE) || !dpv__tx_zero_copy(txh, wr->len))
		return wr->len;
	if (!(wr->flags & DPV_TX_IP_CSUM))
		return 0;
	return (uint32_t)info->l2_len + info->l3_len + info->l4_len;
}

struct rte_mbuf *dpv__tx_copy_one(struct dpv_txh *txh, const void *data, uint32_t len)
{
	struct rte_mbuf *m = dpv__tx_mbuf(txh, &txh->build);

	if (unlikely(m == NULL))
		return NULL;
	rte_memcpy(rte_pktmbuf_mtod(m, void *), data, len);
	m->data_len = (uint16_t)len;
	m->pkt_len = len;
	return m;
}

/* [0, copy_len) copied, the rest attached; -ENOBUFS/-E2BIG: copy it all instead. */
static int build(struct dpv_txh *txh, const struct dpv_tx_req *wr, uint32_t copy_len,
		 struct rte_mbuf **out)
{
	struct cursor c = { .seg = wr->seg, .nseg = wr->nseg };
	struct rte_mbuf *m = NULL;
	struct zc_ctx *z;
	int rc = copy_len ? dpv__tx_copy(txh, &txh->build, &c, copy_len, &m, NULL) : 0;

	if (rc == 0 && copy_len < wr->len) {
		z = dpv__tx_zc_get(txh, wr->owner, 1);
		rc = z == NULL ? -ENOBUFS : dpv__tx_attach(txh, &c, wr->len - copy_len, &m, z);
		if (rc != 0 && z != NULL)
			rte_mempool_put(txh->zc_mp, z);
		else if (z != NULL)
			dpv__tx_zc_put(z);          /* the build's own reference */
	}
	if (rc != 0) {
		rte_pktmbuf_free(m);
		return rc;
	}
	*out = m;
	return 0;
}

/* Every segment but the last of an even length (see odd_segs_csum). */
static bool segments_even(const struct rte_mbuf *m)
{
	for (; m->next != NULL; m = m->next)
		if (m->data_len & 1)
			return false;
	return true;
}

/* IPv6 with extension headers. rte_eth_tx_prepare (rte_net_intel_cksum_prepare, and virtio's)
 * seeds the TCP/UDP checksum with a pseudo-header whose protocol is the IPv6 header's next
 * header, which is the first extension header's type here: the port would send a wrong
 * checksum, so these frames' L4 checksums and TSO stay in software. */
static bool ipv6_ext(const struct dpv_hdr_info *info)
{
	return info->l3 == DPV_L3_IPV6 && info->l3_len != sizeof(struct rte_ipv6_hdr);
}

/* Which checksums the port computes (*@hw_ip, *@hw_l4); true: software does them all.
 * @even: every segment but the last of an even length. */
static bool csum_in_sw(const struct dpv_txh *txh, const struct dpv_hdr_info *info, bool even,
		       bool *hw_ip, bool *hw_l4)
{
	const struct dpv_port_caps *p = txh->caps;
	bool v4 = info->l3 == DPV_L3_IPV4, tcp = info->l4_proto == IPPROTO_TCP;
	bool has_l4 = dpv__csum_has_l4(info);
	uint64_t l4_capa = tcp ? RTE_ETH_TX_OFFLOAD_TCP_CKSUM : RTE_ETH_TX_OFFLOAD_UDP_CKSUM;
	uint32_t forced = dpv__offload_forced(txh->ctl);

	*hw_ip = v4 && (p->tx_offloads & RTE_ETH_TX_OFFLOAD_IPV4_CKSUM) &&
		 !(forced & DPV_OFFLOAD_IPV4_CKSUM);
	*hw_l4 = has_l4 && (p->tx_offloads & l4_capa) && !ipv6_ext(info) &&
		 !(forced & (tcp ? DPV_OFFLOAD_TCP_CKSUM : DPV_OFFLOAD_UDP_CKSUM)) &&
		 (p->odd_segs_csum || even);
	return dpv__offload_policy_of(txh->ctl) == DPV_OFFLOAD_POLICY_SOFTWARE ||
	       info->l3 == DPV_L3_NONE || (!*hw_l4 && (!*hw_ip || has_l4));
}

/* Will software sum this frame's TCP/UDP bytes? Then they are summed while copied. */
static bool l4_in_sw(const struct dpv_txh *txh, const struct dpv_hdr_info *info)
{
	bool hw_ip, hw_l4;

	return dpv__csum_has_l4(info) && csum_in_sw(txh, info, true, &hw_ip, &hw_l4);
}

/* Which checksums of this frame the port computes; the rest are computed here. */
static void csum_offload(struct dpv_txh *txh, struct rte_mbuf *m, const struct dpv_hdr_info *info)
{
	bool v4 = info->l3 == DPV_L3_IPV4, tcp = info->l4_proto == IPPROTO_TCP;
	bool hw_ip, hw_l4;

	if (csum_in_sw(txh, info, segments_even(m), &hw_ip, &hw_l4)) {
		dpv__sw_csum(m, info);
		txh->cnt.csum_sw++;
		return;
	}
	if (!hw_ip && v4) {
		struct dpv_hdr_info ip_only = *info;

		ip_only.l4_len = 0;            /* the IPv4 header here, L4 in the port */
		dpv__sw_csum(m, &ip_only);
	}
	m->l2_len = info->l2_len;
	m->l3_len = info->l3_len;
	m->l4_len = info->l4_len;
	m->ol_flags |= (v4 ? RTE_MBUF_F_TX_IPV4 : RTE_MBUF_F_TX_IPV6) |
		       (hw_ip ? RTE_MBUF_F_TX_IP_CKSUM : 0) |
		       (hw_l4 ? (tcp ? RTE_MBUF_F_TX_TCP_CKSUM : RTE_MBUF_F_TX_UDP_CKSUM) : 0);
	if (txh->ops->tx_prepare(txh->q, &m, 1) != 1) {
		m->ol_flags &= ~(RTE_MBUF_F_TX_IPV4 | RTE_MBUF_F_TX_IPV6 | RTE_MBUF_F_TX_IP_CKSUM |
				 RTE_MBUF_F_TX_L4_MASK);
		dpv__sw_csum(m, info);
		txh->cnt.csum_sw++;
		return;
	}
	txh->cnt.csum_hw++;
}

/* Copy the next @len bytes of @c to @dst; with @sum, their raw sum (from the first of them)
 * is taken while copying. */
static void copy_run(uint8_t *dst, struct cursor *c, uint32_t len, uint16_t *sum)
{
	uint32_t done = 0;

	while (len > 0) {
		const uint8_t *p;
		uint32_t take = cursor_take(c, len, &p);

		if (sum != NULL)
			*sum = dpv__cksum_copy(*sum, dst + done, p, take, done);
		else
			rte_memcpy(dst + done, p, take);
		done += take;
		len -= take;
	}
}

/* Software IP_CSUM while copying @seg to @dst: L4 summed as copied, then the checksums
 * written. @info and @hdr: the headers as peek_segs parsed them. */
static void copy_summed(uint8_t *dst, const struct dpv_tx_seg *seg, uint16_t nseg, uint32_t len,
			const struct dpv_hdr_info *info, const uint8_t *hdr)
{
	uint32_t l4_off = (uint32_t)info->l2_len + info->l3_len;
	uint32_t l4_len = dpv__l4_length(info, hdr + info->l2_len, len);
	uint16_t sum = 0;

	if (nseg == 1) {                  /* one piece: no cursor */
		const uint8_t *src = seg[0].addr;

		rte_memcpy(dst, src, l4_off);
		sum = dpv__cksum_copy(0, dst + l4_off, src + l4_off, l4_len, 0);
		if (l4_off + l4_len < len)
			rte_memcpy(dst + l4_off + l4_len, src + l4_off + l4_len,
				   len - l4_off - l4_len);
	} else {
		struct cursor c = { .seg = seg, .nseg = nseg };

		copy_run(dst, &c, l4_off, NULL);
		copy_run(dst + l4_off, &c, l4_len, &sum);
		copy_run(dst + l4_off + l4_len, &c, len - l4_off - l4_len, NULL);
	}
	dpv__sw_csum_summed(dst, info, l4_len, sum);
}

void dpv__tx_copy_sw_csum(uint8_t *dst, const struct dpv_tx_seg *seg, uint16_t nseg,
			  uint32_t len)
{
	uint8_t buf[PEEK_MAX];
	struct dpv_hdr_info info;
	const uint8_t *hdr = peek_segs(seg, nseg, len, buf, &info);
	struct cursor c = { .seg = seg, .nseg = nseg };

	if (dpv__csum_has_l4(&info)) {
		copy_summed(dst, seg, nseg, len, &info, hdr);
	} else {
		copy_run(dst, &c, len, NULL);
		if (info.l3 == DPV_L3_IPV4 && len >= (uint32_t)info.l2_len + info.l3_len) {
			struct rte_ipv4_hdr *ip = (struct rte_ipv4_hdr *)(dst + info.l2_len);

			ip->hdr_checksum = 0;
			ip->hdr_checksum = rte_ipv4_cksum(ip);
		}
	}
}

void dpv__tx_copy_csum(struct dpv_txh *h, struct rte_mbuf *m, const struct dpv_tx_seg *seg,
		       uint16_t nseg, uint32_t len)
{
	uint8_t buf[PEEK_MAX], *dst = rte_pktmbuf_mtod(m, uint8_t *);
	struct dpv_hdr_info info;
	const uint8_t *hdr = peek_segs(seg, nseg, len, buf, &info);

	m->data_len = (uint16_t)len;
	m->pkt_len = len;
	if (l4_in_sw(h, &info)) {
		copy_summed(dst, seg, nseg, len, &info, hdr);
		h->cnt.csum_sw++;
	} else {
		struct cursor c = { .seg = seg, .nseg = nseg };

		copy_run(dst, &c, len, NULL);
		csum_offload(h, m, &info);
	}
}

/* Can the port segment this request as the contract says? (doc/offload.md) */
static bool tso_in_hw(const struct dpv_port_caps *p, const struct dpv_offload_ctl *ctl,
		      const struct dpv_tx_req *wr, const struct dpv_hdr_info *info, uint32_t payload)
{
	uint64_t need = RTE_ETH_TX_OFFLOAD_TCP_TSO | RTE_ETH_TX_OFFLOAD_TCP_CKSUM |
			(info->l3 == DPV_L3_IPV4 && !p->tso_ip_csum ?
			 RTE_ETH_TX_OFFLOAD_IPV4_CKSUM : 0);
	const uint8_t *tcp = (const uint8_t *)wr->tso_hdr + info->l2_len + info->l3_len;

	if (dpv__offload_policy_of(ctl) == DPV_OFFLOAD_POLICY_SOFTWARE ||
	    (p->tx_offloads & need) != need || payload <= wr->mss || ipv6_ext(info) ||
	    (dpv__offload_forced(ctl) & DPV_OFFLOAD_TCP_TSO))
		return false;
	if ((uint32_t)wr->mss + info->l3_len + info->l4_len > p->mtu ||
	    payload + wr->tso_hdr_len > 65535)
		return false;
	/* net_tap counts the Ethernet header in its segment size */
	if (p->tso_gso && (uint32_t)wr->mss + wr->tso_hdr_len > p->mtu)
		return false;
	/* net_tap segments with rte_gso: IPv4 only, and CWR kept on every segment */
	if (p->tso_gso && (info->l3 != DPV_L3_IPV4 || (tcp[13] & TCP_CWR)))
		return false;
	/* the segments' checksums need even pieces where the port sums piece by piece */
	if (!p->odd_segs_csum) {
		if (wr->mss & 1)
			return false;
		for (uint16_t i = 0; i + 1 < wr->nseg; i++)
			if (wr->seg[i].len & 1)
				return false;
	}
	return true;
}

/* One packet: the header copied into a framework mbuf, the payload attached (or copied),
 * the port told to segment it. */
static int tso_hw_build(struct dpv_txh *txh, const struct dpv_tx_req *wr,
			const struct dpv_hdr_info *info, struct rte_mbuf **out)
{
	struct dpv_tx_seg hseg = { wr->tso_hdr, wr->tso_hdr_len };
	struct cursor hc = { .seg = &hseg, .nseg = 1 };
	struct cursor c = { .seg = wr->seg, .nseg = wr->nseg };
	struct rte_mbuf *m = NULL;
	bool zc = !(wr->flags & DPV_TX_INLINE) && dpv__tx_zero_copy(txh, wr->len);
	struct zc_ctx *z = NULL;
	int rc = dpv__tx_copy(txh, &txh->build, &hc, wr->tso_hdr_len, &m, NULL);

	if (rc == 0 && zc && (z = dpv__tx_zc_get(txh, wr->owner, 1)) != NULL) {
		rc = dpv__tx_attach(txh, &c, wr->len, &m, z);
		if (rc == -ENOBUFS || rc == -E2BIG) {
			rte_mempool_put(txh->zc_mp, z);
			z = NULL;
			rc = 0;
		}
	}
	if (rc == 0 && z == NULL)
		rc = dpv__tx_copy(txh, &txh->build, &c, wr->len, &m, NULL);
	if (rc == 0 && m->nb_segs > txh->caps->max_tx_segs)
		rc = -E2BIG;
	if (rc == 0) {
		m->l2_len = info->l2_len;
		m->l3_len = info->l3_len;
		m->l4_len = info->l4_len;
		m->tso_segsz = wr->mss;
		m->ol_flags |= RTE_MBUF_F_TX_TCP_SEG | RTE_MBUF_F_TX_TCP_CKSUM |
			       (info->l3 == DPV_L3_IPV4 ? RTE_MBUF_F_TX_IPV4 : RTE_MBUF_F_TX_IPV6) |
			       (info->l3 == DPV_L3_IPV4 &&
				(txh->caps->tx_offloads & RTE_ETH_TX_OFFLOAD_IPV4_CKSUM) ?
				RTE_MBUF_F_TX_IP_CKSUM : 0);
		if (txh->ops->tx_prepare(txh->q, &m, 1) != 1)
			rc = -E2BIG;
	}
	if (rc != 0) {
		rte_pktmbuf_free(m);              /* the pieces drop their references ... */
		if (z != NULL)
			rte_mempool_put(txh->zc_mp, z);   /* ... ours is the last: no release */
		return rc;
	}
	if (z != NULL)
		dpv__tx_zc_put(z);                /* the build's reference; the pieces keep theirs */
	else
		txh->released(wr->owner);         /* all copied */
	*out = m;
	return 0;
}

bool dpv__tx_tso_allowed(const struct dpv_port_caps *caps, const struct dpv_offload_ctl *ctl,
			const struct dpv_tx_req *req)
{
	return dpv__offload_policy_of(ctl) != DPV_OFFLOAD_POLICY_HARDWARE ||
	       (dpv__offload_forced(ctl) & DPV_OFFLOAD_TCP_TSO) ||
	       tso_in_hw(caps, ctl, req, req->tso_info, req->len);
}

bool dpv__tx_ip_csum_allowed(const struct dpv_port_caps *caps, const struct dpv_offload_ctl *ctl)
{
	return dpv__offload_policy_of(ctl) != DPV_OFFLOAD_POLICY_HARDWARE ||
	       (caps->tx_offloads & HW_CSUM_OFFLOADS) ||
	       (dpv__offload_forced(ctl) &
		(DPV_OFFLOAD_IPV4_CKSUM | DPV_OFFLOAD_TCP_CKSUM | DPV_OFFLOAD_UDP_CKSUM));
}

/* The port's segmentation where it gives the contract's segments, else software (the
 * HARDWARE policy was checked while posting: dpv__tx_tso_allowed). */
static int tso_build(struct dpv_txh *txh, const struct dpv_tx_req *wr, void **frame)
{
	const struct dpv_hdr_info *info = wr->tso_info;

	if (tso_in_hw(txh->caps, txh->ctl, wr, info, wr->len)) {
		int rc = tso_hw_build(txh, wr, info, (struct rte_mbuf **)frame);

		if (rc == 0) {
			txh->cnt.tso_hw++;
			return 0;
		}
	}
	/* segments the port would refuse: the request fails when it executes */
	if ((uint32_t)wr->tso_hdr_len + RTE_MIN(wr->len, (uint32_t)wr->mss) >
	    txh->caps->max_tx_frame)
		return -EMSGSIZE;
	txh->cnt.tso_sw++;
	return dpv__tx_tso_build(txh, wr, frame);
}

/* A frame copied whole with software IP_CSUM: the L4 bytes summed while copied (into one
 * mbuf or a chain), then the checksums written. */
static int build_summed(struct dpv_txh *txh, const struct dpv_tx_req *wr,
			const struct dpv_hdr_info *info, const uint8_t *hdr, struct rte_mbuf **out)
{
	struct cursor c = { .seg = wr->seg, .nseg = wr->nseg };
	uint32_t l4_off = (uint32_t)info->l2_len + info->l3_len;
	uint32_t l4_len = dpv__l4_length(info, hdr + info->l2_len, wr->len);
	struct rte_mbuf *m = NULL;
	uint16_t sum = 0;
	int rc = dpv__tx_copy(txh, &txh->build, &c, l4_off, &m, NULL);

	if (rc == 0)
		rc = dpv__tx_copy(txh, &txh->build, &c, l4_len, &m, &sum);
	if (rc == 0)
		rc = dpv__tx_copy(txh, &txh->build, &c, wr->len - l4_off - l4_len, &m, NULL);
	if (rc != 0) {
		rte_pktmbuf_free(m);
		return rc;
	}
	if (rte_pktmbuf_data_len(m) >= l4_off + info->l4_len)
		dpv__sw_csum_summed(rte_pktmbuf_mtod(m, uint8_t *), info, l4_len, sum);
	else
		dpv__sw_csum(m, info);          /* headers across mbufs: as before */
	txh->cnt.csum_sw++;
	*out = m;
	return 0;
}

int dpv__tx_build(struct dpv_txh *txh, const struct dpv_tx_req *wr, void **frame)
{
	struct dpv_hdr_info info = { 0 };
	uint8_t buf[PEEK_MAX];
	const uint8_t *hdr = NULL;
	bool summed = false;
	uint32_t copy_len;
	struct rte_mbuf *m;
	int rc;

	if (wr->flags & DPV_TX_TSO)
		return tso_build(txh, wr, frame);
	if (wr->flags & DPV_TX_IP_CSUM)
		hdr = peek_segs(wr->seg, wr->nseg, wr->len, buf, &info);
	copy_len = copy_length(txh, wr, &info);
	if (hdr != NULL && copy_len == wr->len && l4_in_sw(txh, &info))
		rc = build_summed(txh, wr, &info, hdr, &m), summed = true;
	else if (copy_len == wr->len && wr->nseg == 1 && wr->len <= txh->small_max)
		rc = (m = dpv__tx_copy_one(txh, wr->seg[0].addr, wr->len)) ? 0 : -ENOMEM;
	else
		rc = build(txh, wr, copy_len, &m);
	if (rc == -ENOBUFS || rc == -E2BIG)
		rc = build(txh, wr, copy_len = wr->len, &m), summed = false;
	if (rc != 0)
		return rc;
	if ((wr->flags & DPV_TX_IP_CSUM) && !summed)
		csum_offload(txh, m, &info);
	if (copy_len == wr->len) {
		txh->cnt.copied++;
		txh->released(wr->owner);       /* a copied frame holds no application memory */
	} else {
		txh->cnt.zero_copy++;
	}
	*frame = m;
	return 0;
}

void dpv__tx_csum(struct dpv_txh *h, struct rte_mbuf *m)
{
	struct dpv_hdr_info info;

	dpv__hdr_parse(rte_pktmbuf_mtod(m, const uint8_t *), rte_pktmbuf_data_len(m), &info);
	csum_offload(h, m, &info);
}

static inline bool is_tso(const void *frame)
{
	return ((uintptr_t)frame & FRAME_TSO) != 0;
}

static inline struct tso_frame *to_tso(void *frame)
{
	return (struct tso_frame *)((uintptr_t)frame & ~(uintptr_t)FRAME_TSO);
}

/* Lay out packets of @frames in order; a TSO frame gives its next segments. Returns the
 * packets; owner[] says which frame each came from. */
static uint16_t gather_packets(struct dpv_txh *txh, void **frames, uint16_t n,
			       struct rte_mbuf **pkts, uint16_t *owner)
{
	uint16_t k = 0;

	for (uint16_t i = 0; i < n && k < BURST_PKTS; i++) {
		if (!is_tso(frames[i])) {
			owner[k] = i;
			pkts[k++] = frames[i];
			continue;
		}
		uint16_t got = dpv__tx_tso_next(txh, to_tso(frames[i]), pkts + k, BURST_PKTS - k);

		for (uint16_t j = 0; j < got; j++)
			owner[k + j] = i;
		k += got;
		if (!dpv__tx_tso_done(to_tso(frames[i])))
			break;                    /* the rest of it goes first next time */
	}
	return k;
}

uint16_t dpv__tx_burst(struct dpv_txh *txh, void **frames, uint16_t n)
{
	struct rte_mbuf *pkts[BURST_PKTS];
	uint16_t owner[BURST_PKTS], k, sent, taken;
	uint32_t len[BURST_PKTS];

	k = gather_packets(txh, frames, n, pkts, owner);
	/* lengths now: a PMD may free what it takes inside tx_burst (net_null, tap, pcap) */
	for (uint16_t j = 0; j < k; j++)
		len[j] = pkts[j]->pkt_len;
	sent = k ? dpv__tx_pkts_burst(txh, pkts, k) : 0;
	for (uint16_t j = 0; j < sent; j++)
		txh->cnt.bytes += len[j];
	txh->cnt.frames += sent;
	/* packets of TSO frames the port did not take go back to their frames */
	for (uint16_t j = k; j > sent; j--)
		if (is_tso(frames[owner[j - 1]]))
			dpv__tx_tso_unget(to_tso(frames[owner[j - 1]]), 1);
	/* frames wholly taken: those before the first packet not sent, if complete */
	taken = sent < k ? owner[sent] : (k ? owner[k - 1] + 1 : 0);
	if (taken > 0 && sent == k && is_tso(frames[taken - 1]) &&
	    !dpv__tx_tso_done(to_tso(frames[taken - 1])))
		taken--;
	for (uint16_t i = 0; i < taken; i++)
		if (is_tso(frames[i]))
			dpv__tx_tso_free(to_tso(frames[i]));
	return taken;
}

/* A copy of @m as a receiver would get it: checksums asked of the port written in software,
 * no offload flag; NULL without mbufs or for a hardware TSO packet (not looped). */

static struct rte_mbuf *loop_copy(struct dpv_txh *h, struct rte_mbuf *m)
{
	struct rte_mbuf *c;
	struct dpv_hdr_info info;

	if (m->ol_flags & RTE_MBUF_F_TX_TCP_SEG)
		return NULL;
	c = rte_pktmbuf_copy(m, h->mp, 0, UINT32_MAX);
	if (c == NULL)
		return NULL;
	if ((m->ol_flags & (RTE_MBUF_F_TX_IP_CKSUM | RTE_MBUF_F_TX_L4_MASK)) &&
	    rte_pktmbuf_is_contiguous(c)) {
		dpv__hdr_parse(rte_pktmbuf_mtod(c, const uint8_t *), c->data_len, &info);
		dpv__sw_csum(c, &info);
	}
	c->ol_flags = 0;
	c->port = RTE_MBUF_PORT_INVALID;      /* what the receive side knows a looped frame by */
	return c;
}

uint16_t dpv__tx_pkts_burst_looped(struct dpv_txh *h, struct rte_mbuf **pkts, uint16_t n)
{
	struct rte_mbuf *copy[BURST_PKTS];
	uint16_t sent = 0;

	while (sent < n) {
		uint16_t k = RTE_MIN((uint16_t)(n - sent), (uint16_t)BURST_PKTS), took, nc = 0;

		/* copied before the port takes them: a PMD may free what it takes at once */
		for (uint16_t j = 0; j < k; j++)
			copy[j] = loop_copy(h, pkts[sent + j]);
		took = h->ops->tx_burst(h->q, pkts + sent, k);
		for (uint16_t j = 0; j < took; j++)
			if (copy[j] != NULL)
				copy[nc++] = copy[j];
		h->loop_drops += took - nc;
		if (nc > 0) {
			unsigned int in = h->loop(h->loop_arg, copy, nc);

			h->loop_drops += nc - in;
			rte_pktmbuf_free_bulk(copy + in, nc - in);
		}
		for (uint16_t j = took; j < k; j++)
			rte_pktmbuf_free(copy[j]);
		sent += took;
		if (took < k)
			break;
	}
	return sent;
}

void dpv__tx_drop(void *frame)
{
	if (is_tso(frame))
		dpv__tx_tso_free(to_tso(frame));
	else
		rte_pktmbuf_free(frame);
}

void dpv__tx_reap(struct dpv_txh *txh)
{
	if (txh->caps->tx_done_cleanup)
		txh->ops->tx_reap(txh->q);
}


/* ---- transmitters and their zero-copy context pools (one per NUMA socket) ---- */

static pthread_mutex_t zc_lock = PTHREAD_MUTEX_INITIALIZER;
static struct rte_mempool *zc_pools[RTE_MAX_NUMA_NODES];

static struct rte_mempool *zc_pool_get(int socket)
{
	unsigned int i = socket < 0 ? 0 : (unsigned int)socket % RTE_MAX_NUMA_NODES;
	char name[RTE_MEMPOOL_NAMESIZE];

	pthread_mutex_lock(&zc_lock);
	if (zc_pools[i] == NULL) {
		snprintf(name, sizeof(name), "dpv_zc_%u", i);
		zc_pools[i] = rte_mempool_create(name, dpv__config()->mbufs_per_socket,
						 sizeof(struct zc_ctx), dpv__config()->mbuf_cache, 0,
						 NULL, NULL, NULL, NULL, socket, 0);
		dpv__tsan_pool(zc_pools[i]);
	}
	pthread_mutex_unlock(&zc_lock);
	return zc_pools[i];
}

void dpv__tx_pools_release(void)
{
	pthread_mutex_lock(&zc_lock);
	for (unsigned int i = 0; i < RTE_MAX_NUMA_NODES; i++) {
		if (zc_pools[i] == NULL)
			continue;
		if (rte_mempool_full(zc_pools[i])) {
			rte_mempool_free(zc_pools[i]);
			zc_pools[i] = NULL;
		} else {
			RTE_LOG(WARNING, USER1, "dpverbs: %u zero-copy sends were never released by "
				"their port; keeping their memory\n",
				rte_mempool_in_use_count(zc_pools[i]));
		}
	}
	pthread_mutex_unlock(&zc_lock);
}

int dpv__txh_open(struct dpv_txh *h, const struct dpv_driver_ops *ops, struct dpv_port *port,
		 const struct dpv_port_caps *caps, const struct dpv_offload_ctl *ctl,
		 void (*released)(void *owner))
{
	int rc;

	memset(h, 0, sizeof(*h));
	if (caps->mp == NULL || caps->ext_mp == NULL)
		return -ENODEV;
	*h = (struct dpv_txh){
		.ops = ops, .caps = caps, .ctl = ctl, .released = released,
		.mp = caps->mp, .ext_mp = caps->ext_mp, .zc_mp = zc_pool_get(caps->socket_id),
		.small_max = rte_pktmbuf_data_room_size(caps->mp) - RTE_PKTMBUF_HEADROOM,
		.copy_max = dpv__config()->tx_copy_max,
	};
	if (h->zc_mp == NULL)
		return -ENOMEM;
	rc = ops->txq_attach(port, &h->q);
	return rc;
}

void dpv__txh_close(struct dpv_txh *h)
{
	if (h->build.n)
		rte_pktmbuf_free_bulk(h->build.m, h->build.n);
	if (h->burst.n)
		rte_pktmbuf_free_bulk(h->burst.m, h->burst.n);
	h->build.n = h->burst.n = 0;
	if (h->q != NULL)
		h->ops->txq_detach(h->q);
	h->q = NULL;
}

void dpv__tx_counters_add(struct dpv_tx_counters *to, const struct dpv_tx_counters *c)
{
	to->frames += c->frames;
	to->bytes += c->bytes;
	to->copied += c->copied;
	to->zero_copy += c->zero_copy;
	to->tso_hw += c->tso_hw;
	to->tso_sw += c->tso_sw;
	to->tso_segments_sw += c->tso_segments_sw;
	to->csum_hw += c->csum_hw;
	to->csum_sw += c->csum_sw;
}
