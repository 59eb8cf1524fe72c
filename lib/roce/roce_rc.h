/* SPDX-License-Identifier: BSD-3-Clause */
/* RC and UC QPs over RoCEv2, what their files share: rc_qp.c (the transport's ops table,
 * attributes and states, the QP's timer) and rc_verbs.c (the verbs transport: the engine's
 * callbacks — frames out, memory in and out, completions —, posting, received packets in). The protocol itself is the
 * sans-IO engine of rc_engine.h. Private to libdpverbs; functions return 0 or a negative
 * errno. doc/roce-rc.md, "RC and UC queue pairs". */
#ifndef DPV_ROCE_RC_H
#define DPV_ROCE_RC_H

#include "rc_engine.h"
#include "roce_ud.h"

struct dpv_rc_timer;

#define DPV_RC_TX_BATCH 32               /* frames a QP gathers before it hands them out */

/* An RC/UC QP's own state (qp->priv). Every field is used under the QP's lock. */
struct dpv_rc_qp {
	struct dpv_rc eng;
	bool eng_on;                     /* dpv__rc_init done (RTR), until RESET */
	bool failed;                     /* the engine said qp_error during a call */
	bool rx_user;                    /* counted in the device's receivers (out of RESET) */
	struct ibv_qp_attr attr;         /* what modify_qp set (ibv_query_qp) */
	struct dpv_ah av;                /* the path resolved at RTR */
	uint16_t ip_id;
	uint32_t rq_fed;                 /* receive WQEs given to the engine: [tail, rq_fed) */
	/* each SQ slot's gather list (max_send_sge) and inline data (max_inline_data): the
	 * engine reads a WR's bytes again on every retransmission */
	struct ibv_sge *sge;
	uint16_t *nsge;
	uint8_t *inl;
	struct dpv_rc_timer *timer;
	/* frames emitted and not yet handed to the port or the loopback ring, in order: given
	 * in one burst at the end of each call into the engine (dpv__rc_after,
	 * dpv__rc_rx_done), or when full */
	uint16_t ntx;
	struct rte_mbuf *tx[DPV_RC_TX_BATCH];
};

static inline struct dpv_rc_qp *to_rcqp(struct dpv_qp *qp)
{
	return qp->priv;
}

/* The engine's clock: nanoseconds of the TSC. */
uint64_t dpv__rc_now(void);

/* rc_verbs.c */
/* XRC_RECV: let go of the SRQ of the last message (its users count, CQ, PD) unless it still
 * holds one of its WQEs (@force: even then, RESET); QP lock held. */
void dpv__rc_xrc_unbind(struct dpv_qp *qp, bool force);
extern const struct dpv_rc_ops dpv_rc_verbs_ops;
int dpv__rc_post_send_list(struct dpv_qp *qp, struct ibv_send_wr *wr,
			   struct ibv_send_wr **bad_wr);
/* After any call into the engine: a qp_error it reported takes the QP to ERR, send
 * completions are written, the frames it emitted go out, the timer follows the engine's
 * deadline (at once while frames are left that the port had no room for). */
void dpv__rc_after(struct dpv_qp *qp);
/* Free the frames emitted and never handed out (RESET, destroy). */
void dpv__rc_tx_drop(struct dpv_qp *qp);
/* Receive WQEs posted since the last look, to the engine. */
void dpv__rc_feed_rq(struct dpv_qp *qp);

/* rc_qp.c: arm (or cancel) the QP's timer at the engine's next deadline. */
void dpv__rc_timer_update(struct dpv_qp *qp);

#endif
