/* SPDX-License-Identifier: BSD-3-Clause */
/* RoCEv2 on the verbs core, what its files share: address handles (roce_ah.c), the UD
 * transport (ud_qp.c: the ops table and states; ud_send.c: WRs to frames; ud_recv.c: a
 * datagram into a receive WQE) and the receive demux of the port (roce_rx.c: frames to the
 * port's GIDs, taken apart, to the QP their BTH names), and what every RoCE QP shares
 * (roce_qp.c: its transmitter, its count among the receivers). Private to libdpverbs; functions
 * return 0 or a negative errno. */
#ifndef DPV_ROCE_UD_H
#define DPV_ROCE_UD_H

#include <stdbool.h>
#include <stdint.h>

#include "dpv_roce.h"
#include "roce_frame.h"
#include "roce_port.h"
#include "verbs_priv.h"

/* An address handle: the path resolved once, when it is created (ibv_create_ah may block on
 * ARP/ND; posting never does). */
struct dpv_ah {
	struct ibv_ah ibah;
	struct dpv_pd *pd;               /* the PD it belongs to (a parent domain's base) */
	struct dpv_roce_path path;       /* MACs, GIDs, class, flow label, hop limit */
	uint8_t sgid_index;
	bool loopback;                   /* dgid is one of the port's GIDs: never on the wire */
	bool mcast;                      /* dgid is a multicast group */
};

static inline struct dpv_ah *to_dah(struct ibv_ah *ah)
{
	return container_of_safe(ah, struct dpv_ah, ibah);
}

/* The frames of one posted UD WR (one per SQ slot): built while posting (copies: the ICRC
 * reads every byte anyway), handed out in order by progress. */
struct dpv_ud_frames {
	uint32_t n;                      /* built */
	uint32_t next;                   /* handed to the port (or its loopback ring) */
	uint32_t looped;                 /* multicast: copies given to the loopback ring */
	bool loop;                       /* to the port's own GIDs: the loopback ring only */
	bool mcast_loop;                 /* to a group with QPs on this port: wire + loopback */
	struct rte_mbuf *one;            /* n == 1 */
	struct rte_mbuf **many;          /* n > 1 (TSO): malloc'ed */
};

static inline struct rte_mbuf **dpv__ud_frames_of(struct dpv_ud_frames *f)
{
	return f->n > 1 ? f->many : &f->one;
}

/* A UD QP's own state (qp->priv). */
struct dpv_ud_qp {
	struct dpv_ud_frames *frames;    /* one per SQ slot */
	uint32_t psn;                    /* the next packet's BTH PSN */
	uint16_t sport;                  /* UDP source port, as rxe gives a QP */
	uint16_t ip_id;                  /* IPv4 identification of the next frame */
	bool rx_user;                    /* counted in the device's receivers (out of RESET) */
};

static inline struct dpv_ud_qp *to_udqp(struct dpv_qp *qp)
{
	return qp->priv;
}

/* A QP attached to a multicast group (ibv_attach_mcast), on its device's list. */
struct dpv_mcast {
	TAILQ_ENTRY(dpv_mcast) next;
	uint8_t gid[16];
	struct dpv_qp *qp;
};

/* roce_qp.c: what QPs of every RoCE transport share. */
/* Open @qp's transmitter on its port (qp->txh) unless it has one: frames are copies, so
 * it never reports memory released. */
int dpv__roce_txh_open(struct dpv_qp *qp);
/* Close it, if open (the QP goes). */
void dpv__roce_txh_close(struct dpv_qp *qp);
/* Count @qp among its device's receivers while @on (out of RESET), once: *@counted is the
 * QP's own flag of whether it is counted. */
void dpv__roce_rx_user(struct dpv_qp *qp, bool *counted, bool on);

/* The checks of a send WR every RoCE QP makes before its own, in the verbs order: the
 * opcode table's (dpv__wr_check_basic), room in the SQ (-ENOMEM), the WR's shape (a TSO
 * header parsed into @tso, when not NULL). *@len: the WR's length. QP lock held. */
static inline int dpv__roce_wr_check(struct dpv_qp *qp, const struct ibv_send_wr *wr,
				     uint64_t *len, struct dpv_hdr_info *tso)
{
	int rc;

	*len = 0;
	if (likely(wr->num_sge >= 0 && (uint32_t)wr->num_sge <= qp->lim.max_send_sge))
		*len = dpv__wr_length(wr);
	rc = dpv__wr_check_basic(&qp->lim, wr, *len);
	if (unlikely(rc != 0))
		return rc;
	if (unlikely(qp->sq.post - __atomic_load_n(&qp->sq.freed, __ATOMIC_ACQUIRE) >=
		     qp->sq.max_wr))
		return -ENOMEM;
	return dpv__wr_check_shape(&qp->lim, wr, *len, NULL, 0, tso);
}

/* SQ slot @w for @wr of @len bytes: what its completion reports; its MR array kept. */
static inline void dpv__roce_wqe_init(const struct dpv_qp *qp, struct dpv_wqe *w,
				      const struct ibv_send_wr *wr, uint64_t len)
{
	*w = (struct dpv_wqe){
		.wr_id = wr->wr_id,
		.opcode = dpv__wr_wc_opcode(wr->opcode),
		.signaled = qp->sq_sig_all || (wr->send_flags & IBV_SEND_SIGNALED),
		.byte_len = (uint32_t)len,
		.mrs = w->mrs,
	};
}

/* The largest UD message payload on @dev's port: its active MTU in bytes (0 below 256). */
uint32_t dpv__ud_path_mtu(const struct dpv_device *dev);

/* The path of an address vector from @dev's port into @ah (its path, sgid_index, loopback,
 * mcast): -EINVAL for attributes RoCE cannot use (no GRH, a bad sgid_index, mixed
 * families), -EHOSTUNREACH when the destination never answered ARP/ND. May block. */
int dpv__roce_av_resolve(struct dpv_device *dev, const struct ibv_ah_attr *attr,
			 struct dpv_ah *ah);

/* ud_send.c: the transport's send ops. */
int dpv__ud_post_send(struct dpv_qp *qp, struct ibv_send_wr *wr, struct ibv_send_wr **bad_wr);
void dpv__ud_progress(struct dpv_qp *qp);
void dpv__ud_flush(struct dpv_qp *qp);
bool dpv__ud_reset(struct dpv_qp *qp);
/* Free the frames of every slot (the QP goes). */
void dpv__ud_frames_free(struct dpv_qp *qp);

/* ud_qp.c: multicast attachments. */
int dpv__ud_mcast(struct dpv_qp *qp, const union ibv_gid *gid, bool attach);
void dpv__ud_mcast_detach_all(struct dpv_qp *qp);
/* Has @dev a QP attached to @gid? rx_lock held. */
bool dpv__ud_mcast_attached(struct dpv_device *dev, const uint8_t gid[16]);

/* Has @dev a QP attached to any group? A racy look for the send side, which must not take
 * rx_lock (the receive side holds it while it takes QP locks): a multicast frame is offered
 * to the loopback ring then, and dropped there without a count if no QP took it. */
static inline bool dpv__ud_mcast_any(struct dpv_device *dev)
{
	return __atomic_load_n(&dev->roce->nb_mcast, __ATOMIC_RELAXED) != 0;
}

/* What became of a received datagram offered to a QP (ud_recv.c), for the counters. */
enum dpv_ud_rx {
	DPV_UD_RX_DELIVERED,             /* into a WQE (or dropped for want of one: rx_no_wqe) */
	DPV_UD_RX_NO_QP,                 /* the QP is not a UD QP that receives now */
	DPV_UD_RX_BAD_QKEY,
	DPV_UD_RX_BAD_OPCODE,            /* not a UD opcode */
};

/* Deliver the datagram @fr of frame @f to @qp (its lock held): the GRH (the IPv4 header in
 * bytes 20-39 for an IPv4 peer, else the IPv6 header) then the payload, scattered into the
 * next receive WQE; its completion goes into @b. */
enum dpv_ud_rx dpv__ud_deliver(struct dpv_qp *qp, const uint8_t *f,
			       const struct dpv_roce_frame *fr, struct dpv_cqe_batch *b);

/* rc_verbs.c: a received RC/UC packet @fr of frame @f for @qp (its lock held), from the QP's
 * peer, to its engine; DPV_UD_RX_NO_QP when the QP does not receive now or the frame comes
 * from elsewhere, DPV_UD_RX_BAD_OPCODE for another transport's opcode. Once the burst has
 * no more frames for @qp in a row, dpv__rc_rx_done: the ACK they asked for (one for all) and
 * what the engine emitted go out, as after any call into the engine (QP lock held). */
enum dpv_ud_rx dpv__rc_deliver(struct dpv_qp *qp, const uint8_t *f,
			       const struct dpv_roce_frame *fr);
void dpv__rc_rx_done(struct dpv_qp *qp);

/* RoCEv2 port state (roce_addr.c): made with the device (its configured addresses added),
 * told when the port starts and stops (the device hooks of roce_device.c); -ENOMEM. */
int dpv__roce_port_init(struct dpv_device *dev);
void dpv__roce_port_start(struct dpv_device *dev, bool started);

/* The mbuf flag (a registered dynamic ol_flags bit; 0 before the first port starts, or when
 * DPDK has no bit left) of a RoCE frame built for the loopback ring without its ICRC: it
 * never reaches a wire, so nothing can corrupt it on the way (doc/roce.md, "Loopback").
 * roce_device.c. */
extern uint64_t dpv__loop_no_icrc;
/* May a frame for @dev's own loopback be built without its ICRC now? Only when nobody could
 * see or damage it: no SNIFFER rule on the port (they get RoCE frames too, whole) and no
 * receive fault injection (corruption must die on the ICRC). The receive side checks again
 * (a sniffer or a fault that arrived meanwhile): roce_rx.c. */
static inline bool dpv__device_loop_icrc_skip(struct dpv_device *dev)
{
	return dpv__loop_no_icrc != 0 && !__atomic_load_n(&dev->fault_on[0], __ATOMIC_RELAXED) &&
	       __atomic_load_n(&dev->sniffers, __ATOMIC_RELAXED) == 0;
}


#endif
