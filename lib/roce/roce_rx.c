/* SPDX-License-Identifier: BSD-3-Clause */
/* The RoCE receive side of a port, a port receiver after ARP/ND: a frame is RoCE's when it is
 * UDP to port 4791 and its destination is one of the port's GIDs (or a multicast group a QP
 * of the port is attached to); such a frame is taken from the burst (RAW_PACKET's steering
 * then gives it to SNIFFER flows only), taken apart and checked by the codec (ICRC included),
 * and handed to the QP its BTH names (its transport's deliver op): one read of the device's
 * QPN table, or every QP attached to the group for the multicast QPN. Whatever is dropped is counted in the port's
 * RoCE counters (dpv_query_port_stats): a bad ICRC, malformed headers, no such QP, a Q_Key
 * of another QP. Runs with the device's rx_lock held (dpv__rxq_poll). */
#include <errno.h>
#include <string.h>

#include <rte_mbuf.h>

#include "roce_ud.h"

#define PEEK_LEN	72      /* Ethernet, two VLAN tags, IPv6, UDP */
#define LINEAR_MAX	8192    /* a chained frame is copied to be parsed; RoCE's are < 4.2 KB */
#define MCAST_QPN	0xFFFFFF

static uint16_t get16(const uint8_t *p)
{
	return (uint16_t)(p[0] << 8 | p[1]);
}

/* Is this UDP to port 4791 (IPv4 not a fragment, or IPv6 with UDP next)? Then its destination
 * as a GID. Reads only the @len bytes it has. */
static bool roce_peek(const uint8_t *p, uint32_t len, uint8_t dgid[16])
{
	uint32_t off = 12;
	const uint8_t *ip, *udp;
	uint16_t type;

	if (len < 14)
		return false;
	type = get16(p + off);
	for (int v = 0; v < 2 && (type == 0x8100 || type == 0x88A8); v++) {
		off += 4;
		if (len < off + 2)
			return false;
		type = get16(p + off);
	}
	ip = p + off + 2;
	len -= off + 2;
	if (type == 0x0800) {
		uint32_t ihl;

		if (len < 20 || ip[0] >> 4 != 4 || ip[9] != 17 || (get16(ip + 6) & 0x3FFF) != 0)
			return false;
		ihl = (ip[0] & 0xFu) * 4;
		if (ihl < 20 || len < ihl + 8)
			return false;
		udp = ip + ihl;
		memset(dgid, 0, 10);
		dgid[10] = dgid[11] = 0xFF;
		memcpy(dgid + 12, ip + 16, 4);
	} else if (type == 0x86DD) {
		if (len < 40 + 8 || ip[0] >> 4 != 6 || ip[6] != 17)
			return false;
		udp = ip + 40;
		memcpy(dgid, ip + 24, 16);
	} else {
		return false;
	}
	return get16(udp + 2) == DPV_ROCE_UDP_PORT;
}

/* The QP whose lock stays held while consecutive frames go to it; its completions are pushed
 * before the lock is let go (a RESET in between must not find them later in the CQ), and what
 * its transport answers for the burst goes out then (rx_done: RC's one ACK). */
struct rx_state {
	struct dpv_device *dev;
	struct dpv_qp *held;
	struct dpv_cqe_batch batch;
};

/* Hold @qp (NULL: let go of the held one); false when it cannot be held now (this thread is
 * modifying it: dpv__qp_rx_hold). */
static bool hold(struct rx_state *st, struct dpv_qp *qp)
{
	struct dpv_qp *held = st->held;

	if (qp == held)
		return qp != NULL;
	if (held != NULL) {
		if (held->ops->rx_done != NULL)
			held->ops->rx_done(held);
		dpv__rq_batch_flush(&st->batch);
		dpv__qp_unlock(held);
	}
	st->held = NULL;
	if (qp == NULL || !dpv__qp_rx_hold(qp))
		return false;
	st->held = qp;
	return true;
}

/* The transport of @qp takes the frame; a QP whose transport takes none (RAW) has no QPN here. */
static enum dpv_ud_rx deliver(struct rx_state *st, struct dpv_qp *qp, const uint8_t *f,
			      const struct dpv_roce_frame *fr)
{
	if (qp->ops->deliver == NULL)
		return DPV_UD_RX_NO_QP;
	return (enum dpv_ud_rx)qp->ops->deliver(qp, f, fr, &st->batch);
}

static void count(struct dpv_device *dev, enum dpv_ud_rx r)
{
	if (r == DPV_UD_RX_NO_QP)
		dev->roce->cnt.rx_no_qp++;
	else if (r == DPV_UD_RX_BAD_QKEY)
		dev->roce->cnt.rx_bad_qkey++;
	else if (r == DPV_UD_RX_BAD_OPCODE)
		dev->roce->cnt.rx_malformed++;
}

/* The multicast QPN: a copy to every QP attached to the destination group; counted once
 * when none took it (a Q_Key mismatch if one was there but had another Q_Key). */
static void to_group(struct rx_state *st, const uint8_t *f, const struct dpv_roce_frame *fr)
{
	enum dpv_ud_rx result = DPV_UD_RX_NO_QP;
	struct dpv_mcast *m;

	TAILQ_FOREACH(m, &st->dev->roce->mcasts, next) {
		enum dpv_ud_rx r;

		if (memcmp(m->gid, fr->dgid, 16) != 0)
			continue;
		if (!hold(st, m->qp))
			continue;
		r = deliver(st, m->qp, f, fr);
		if (r == DPV_UD_RX_DELIVERED || (r == DPV_UD_RX_BAD_QKEY && result == DPV_UD_RX_NO_QP))
			result = r;
	}
	count(st->dev, result);
}

/* How a frame's ICRC is taken: checked (from a wire, or looped with one), or a looped frame
 * built without it, left unchecked or computed for the SNIFFER flows that will see it. */
enum icrc_mode { ICRC_CHECK, ICRC_SKIP, ICRC_FILL };

/* Parse the claimed frame @f and hand it to its QP(s). */
static void dispatch(struct rx_state *st, uint8_t *f, uint32_t len, enum icrc_mode icrc)
{
	struct dpv_device *dev = st->dev;
	struct dpv_roce_frame fr;
	struct dpv_qp *qp;
	int rc = icrc == ICRC_CHECK ? dpv__roce_frame_parse(f, len, &fr) :
		 dpv__roce_frame_parse_local(f, len, &fr, icrc == ICRC_FILL);

	if (rc == -EILSEQ) {
		dev->roce->cnt.rx_bad_icrc++;
		return;
	}
	if (rc < 0) {
		dev->roce->cnt.rx_malformed++;
		return;
	}
	if (fr.h.bth.dqpn == MCAST_QPN) {
		to_group(st, f, &fr);
		return;
	}
	qp = dpv__qpn_lookup(dev, fr.h.bth.dqpn);
	if (!hold(st, qp)) {          /* none, or being modified by this thread */
		dev->roce->cnt.rx_no_qp++;
		return;
	}
	count(dev, deliver(st, qp, f, &fr));
}

/* The last 4 bytes of a chained frame from @lin, its linear copy. */
static void chain_tail_put(struct rte_mbuf *m, const uint8_t *lin, uint32_t len)
{
	uint32_t off = 0;

	for (; m != NULL; off += m->data_len, m = m->next)
		for (uint32_t i = RTE_MAX(off, len - DPV_ROCE_ICRC_LEN); i < off + m->data_len &&
		     i < len; i++)
			rte_pktmbuf_mtod(m, uint8_t *)[i - off] = lin[i];
}

/* Take @m if it is RoCE's; false leaves it to the transports after this one. */
static bool rx_one(struct rx_state *st, struct rte_mbuf *m)
{
	uint8_t peek[PEEK_LEN], dgid[16], lin[LINEAR_MAX], *f;
	uint32_t len = rte_pktmbuf_pkt_len(m), plen = RTE_MIN(len, (uint32_t)PEEK_LEN);
	const uint8_t *h = rte_pktmbuf_read(m, 0, plen, peek);
	bool looped = m->port == RTE_MBUF_PORT_INVALID;    /* from the loopback ring */
	enum icrc_mode icrc = ICRC_CHECK;

	if (h == NULL || !roce_peek(h, plen, dgid))
		return false;
	if (dpv__roce_gid_is_mcast(dgid)) {
		/* a group no QP here is in: not ours, unless it is our own copy (dropped) */
		if (!dpv__ud_mcast_attached(st->dev, dgid))
			return looped;
	} else if (dpv__roce_gid_find(st->dev, dgid) < 0) {
		/* not ours; our own frame to a GID the port no longer has (an AH made before the
		 * address went) is dropped: it was never on a wire, and may have no ICRC */
		return looped;
	}
	st->dev->roce->cnt.rx++;
	/* Built without its ICRC for this ring (ud_send.c): nothing on the way could damage it,
	 * unless receive faults came on since (then it is checked, and dies on the ICRC it does
	 * not have, as what they corrupt does); a SNIFFER rule since gets it whole. */
	if (looped && (m->ol_flags & dpv__loop_no_icrc) &&
	    !__atomic_load_n(&st->dev->fault_on[0], __ATOMIC_RELAXED))
		icrc = __atomic_load_n(&st->dev->sniffers, __ATOMIC_RELAXED) ? ICRC_FILL : ICRC_SKIP;
	if (rte_pktmbuf_is_contiguous(m)) {
		f = rte_pktmbuf_mtod(m, uint8_t *);
	} else if (len <= sizeof(lin)) {
		f = (uint8_t *)rte_pktmbuf_read(m, 0, len, lin);   /* a chain: always a copy */
	} else {
		st->dev->roce->cnt.rx_malformed++;
		return true;
	}
	dispatch(st, f, len, icrc);
	if (icrc == ICRC_FILL && f == lin)
		chain_tail_put(m, lin, len);
	return true;
}

static void roce_rx(struct dpv_device *dev, struct rte_mbuf **pkts, uint16_t n, uint64_t *taken)
{
	struct rx_state st;

	dpv__lock_assert_held(&dev->rx_lock);   /* a receiver's rx: one burst at a time */
	if (__atomic_load_n(&dev->roce->qps, __ATOMIC_ACQUIRE) == 0)
		return;
	st.dev = dev;                 /* not "= { ... }": that zeroes 32 CQEs per burst */
	st.held = NULL;
	st.batch.cq = NULL;
	st.batch.n = 0;
	for (uint16_t i = 0; i < n; i++)
		if (!(*taken >> i & 1) && rx_one(&st, pkts[i]))
			*taken |= 1ull << i;
	hold(&st, NULL);
}

/* No RoCE QP on the port: RoCE takes no frame. */
static bool roce_rx_idle(const struct dpv_device *dev)
{
	return __atomic_load_n(&dev->roce->qps, __ATOMIC_ACQUIRE) == 0;
}

/* After ARP/ND (a peer resolving us first gets its answer), before RAW_PACKET's flows. */
static const struct dpv_port_receiver roce_receiver = {
	.name = "roce",
	.order = 50,
	.rx = roce_rx,
	.idle = roce_rx_idle,
};
DPV_PORT_RECEIVER_REGISTER(roce, roce_receiver)
