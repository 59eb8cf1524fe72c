/* SPDX-License-Identifier: BSD-3-Clause */
/* RAW_PACKET's own declarations, shared by lib/raw's files only: the flow rules as ibv_create_flow
 * made them (flow.c) and the steering table the receive path classifies frames with (steer.c).
 * Internal functions: 0 or a negative errno. */
#ifndef DPV_RAW_PRIV_H
#define DPV_RAW_PRIV_H

#include <stdbool.h>
#include <stdint.h>
#include <sys/queue.h>

#include "dpv_offload.h"
#include "verbs_pace.h"
#include "verbs_post.h"
#include "verbs_priv.h"

/* QPs one frame may go to at most (SNIFFERs, DONT_TRAP rules and defaults together); the
 * ones past it do not get the frame. */
#define DPV_RX_FANOUT 16

/* A RAW_PACKET QP's own state (qp->priv), made by its create op, freed by destroy. Written
 * under the QP's control lock (modify), read by whoever posts or kicks its SQ. */
struct dpv_raw_qp {
	/* The fast send path's limits (raw_fast.c), set when the QP enters RTS: SGEs a WR may
	 * have there (max_send_sge, <= 4), and the frame sizes it takes, INLINE or not:
	 * 14 + [0, span) bytes (0: none). */
	uint32_t fast_sge;
	uint64_t fast_span_inline, fast_span_copy;
	struct dpv_pace pace;      /* IBV_QP_RATE_LIMIT (pace.c); kbps 0: not paced */
};

static inline struct dpv_raw_qp *to_rawqp(const struct dpv_qp *qp)
{
	return qp->priv;
}

/* RAW_PACKET's state on a device (made by its init hook, dpv__raw_flows_init): the rules by
 * priority (changed under flows_mutex), compiled into the table bursts read (steer.c), and
 * the QP each receive queue is steered to in hardware (flows_mutex; sized at port start). */
struct dpv_raw_port {
	pthread_mutex_t flows_mutex;
	TAILQ_HEAD(, dpv_flow) flows;
	struct dpv_steer *steer;
	struct dpv_qp **rxq_owner;
	uint16_t nb_owner;                /* entries of rxq_owner */
};

/* A rule on the device's list, by priority (equal priorities in the order they came; groups
 * joined by ibv_attach_mcast first). */
struct dpv_flow {
	struct ibv_flow ibflow;
	TAILQ_ENTRY(dpv_flow) next;
	struct dpv_qp *qp;
	bool mcast;                       /* made by ibv_attach_mcast */
	union ibv_gid gid;
	enum ibv_flow_attr_type type;
	uint16_t priority;
	bool dont_trap;
	struct dpv_flow_match m;
	/* steered in hardware to a receive queue of its QP's own (steer.c) */
	void *hw;                         /* the driver's rule, NULL: none */
	uint16_t hw_queue;
	int hw_want;                      /* the queue it should go to, -1: none */
};

/* The QPs a frame goes to, in the order it is delivered to them; dup: a QP is there more
 * than once (it gets the frame as many times). Never empty (no QP: NULL). */
struct dpv_rx_set {
	uint16_t n;
	bool dup;
	struct dpv_qp *const *qp;
};

/* A set made while classifying (rules tried one by one), with its room. */
struct dpv_rx_set_buf {
	struct dpv_rx_set set;
	struct dpv_qp *room[DPV_RX_FANOUT];
};

/* What classifying a burst gives: the set of each frame, and the headers it parsed (the
 * receive path reuses them for IBV_WC_IP_CSUM_OK). */
struct dpv_rx_class {
	const struct dpv_rx_set *to[DPV_RX_MAX];
	struct dpv_hdr_info info[DPV_RX_MAX];
	uint64_t parsed;                  /* bit i: info[i] is frame i's */
	const struct dpv_rx_set *uniform; /* every frame's set, if they all have this one */
	struct dpv_rx_set_buf built[DPV_RX_MAX];
};

/* Compile the device's rules into a new steering table, publish it, and free the one it
 * replaces once no receive burst reads it any more; flows_mutex held. -ENOMEM leaves the
 * previous table in place. */
int dpv__steer_rebuild(struct dpv_device *dev);
/* As dpv__steer_rebuild, for a change that must not fail (a rule going away): without memory
 * for the new table, frames are given to nobody until the next change. */
void dpv__steer_rebuild_nofail(struct dpv_device *dev);
/* Classify @n frames of a burst of receive queue @queue with @dev's current table (that
 * queue's lock held): bit i of @taken: frame i was consumed by another transport (only
 * SNIFFERs see it). Returns how many frames no transport and no QP took. */
unsigned int dpv__steer_classify(struct dpv_device *dev, uint16_t queue, struct rte_mbuf **frames,
				 uint16_t n, uint64_t taken, struct dpv_rx_class *c);
/* A rule leaves the list: its hardware rule goes too; flows_mutex held. */
void dpv__steer_hw_drop(struct dpv_device *dev, struct dpv_flow *f);

/* RAW's state on a new device (flow.c; its init hook): the rule list and steering table. */
int dpv__raw_flows_init(struct dpv_device *dev);

/* The transport's table (raw_qp.c); flow.c tells RAW's QPs by it. */
extern const struct dpv_transport_ops dpv_raw_transport;

void dpv__qp_mcast_detach_all(struct dpv_qp *qp);
/* RAW_PACKET's ibv_attach_mcast/ibv_detach_mcast (a flow per group MAC). */
int dpv__raw_mcast(struct dpv_qp *qp, const union ibv_gid *gid, bool attach);

/* RAW_PACKET (lib/raw): receive steering of the device, and its QPs' send paths. */
void dpv__raw_port_rx(struct dpv_device *dev, struct dpv_rxq *q, struct rte_mbuf **pkts,
		      uint16_t n, uint64_t *taken);

int dpv__raw_post_list(struct dpv_qp *qp, struct ibv_send_wr *wr, struct ibv_send_wr **bad_wr);
int dpv__raw_post_send(struct dpv_qp *qp, struct ibv_send_wr *wr, struct ibv_send_wr **bad_wr);
int dpv__raw_post_send_fast(struct dpv_qp *qp, struct ibv_send_wr *wr,
			   struct ibv_send_wr **bad_wr);
/* Service mode: the posting thread's fast path (descriptors), and the service lcore's
 * (bursts of them built, sent and completed in one go; the generic kick takes the rest:
 * false when some of what was posted when it started is left to it). */
int dpv__raw_post_send_svc(struct dpv_qp *qp, struct ibv_send_wr *wr,
			   struct ibv_send_wr **bad_wr);
bool dpv__raw_service_send(struct dpv_qp *qp);
void dpv__raw_progress(struct dpv_qp *qp);
void dpv__raw_flush(struct dpv_qp *qp);
bool dpv__raw_reset(struct dpv_qp *qp);

#endif
