/* SPDX-License-Identifier: BSD-3-Clause */
/* Helpers of the connected-QP tests (test_rc, test_mw, test_srq, test_mw_wire, test_srq_wire):
 * a port with an IPv4 address and its GID, RC/UC/XRC QPs through INIT, RTR and RTS with the
 * attributes their type requires, a pair of QPs and its CQs, and waiting for one completion
 * of a given status and wr_id. */
#ifndef DPV_TEST_RC_H
#define DPV_TEST_RC_H

#include <fcntl.h>

#include "dpv_test_ud.h"

/* The first context's port with IPv4 address @addr; *@gid is that address's GID (index 1).
 * Exits when the address cannot be added. */
static inline struct ibv_context *rc_port_open(const char *addr, union ibv_gid *gid)
{
	struct ibv_context *c = test_open(NULL);

	if (dpv_port_add_addr(c, addr) != 0) {
		fprintf(stderr, "dpv_port_add_addr failed\n");
		exit(1);
	}
	gid_v4(gid, addr);
	return c;
}

/* What rc_to_rtr and rc_to_rts set besides the state: the peer (@dgid through GID index 1,
 * QP @dqpn), the PSNs, the requester's and responder's limits. */
struct rc_conn {
	const union ibv_gid *dgid;
	uint32_t dqpn, rq_psn, sq_psn;
	uint8_t rd_atomic;              /* max_dest_rd_atomic and max_rd_atomic */
	uint8_t min_rnr_timer, timeout, retry_cnt, rnr_retry;
};

/* RC and XRC_RECV QPs respond to requests (RTR takes the responder's limits). */
static inline bool rc_responds(const struct ibv_qp *qp)
{
	return qp->qp_type == IBV_QPT_RC || qp->qp_type == IBV_QPT_XRC_RECV;
}

/* RC and XRC_SEND QPs retry (RTS takes the requester's limits). */
static inline bool rc_retries(const struct ibv_qp *qp)
{
	return qp->qp_type == IBV_QPT_RC || qp->qp_type == IBV_QPT_XRC_SEND;
}

/* @qp (RC, UC, XRC_SEND or XRC_RECV) to INIT on port 1 with @access; ibv_modify_qp's result. */
static inline int rc_to_init(struct ibv_qp *qp, unsigned int access)
{
	struct ibv_qp_attr a = { .qp_state = IBV_QPS_INIT, .pkey_index = 0, .port_num = 1,
				 .qp_access_flags = access };

	return ibv_modify_qp(qp, &a, IBV_QP_STATE | IBV_QP_PKEY_INDEX | IBV_QP_PORT |
			     IBV_QP_ACCESS_FLAGS);
}

/* @qp to RTR towards @c's peer, path MTU 1024; ibv_modify_qp's result. */
static inline int rc_to_rtr(struct ibv_qp *qp, const struct rc_conn *c)
{
	struct ibv_qp_attr a = {
		.qp_state = IBV_QPS_RTR, .path_mtu = IBV_MTU_1024, .dest_qp_num = c->dqpn,
		.rq_psn = c->rq_psn, .max_dest_rd_atomic = c->rd_atomic,
		.min_rnr_timer = c->min_rnr_timer,
		.ah_attr = { .is_global = 1, .port_num = 1,
			     .grh = { .dgid = *c->dgid, .sgid_index = 1, .hop_limit = 64 } },
	};
	int mask = IBV_QP_STATE | IBV_QP_AV | IBV_QP_PATH_MTU | IBV_QP_DEST_QPN | IBV_QP_RQ_PSN;

	if (rc_responds(qp))
		mask |= IBV_QP_MAX_DEST_RD_ATOMIC | IBV_QP_MIN_RNR_TIMER;
	return ibv_modify_qp(qp, &a, mask);
}

/* @qp to RTS with @c's first PSN and limits (a UC QP takes the PSN only); ibv_modify_qp's
 * result. */
static inline int rc_to_rts(struct ibv_qp *qp, const struct rc_conn *c)
{
	struct ibv_qp_attr a = {
		.qp_state = IBV_QPS_RTS, .sq_psn = c->sq_psn, .timeout = c->timeout,
		.retry_cnt = c->retry_cnt, .rnr_retry = c->rnr_retry, .max_rd_atomic = c->rd_atomic,
	};
	int mask = IBV_QP_STATE | IBV_QP_SQ_PSN;

	if (qp->qp_type != IBV_QPT_UC)
		mask |= IBV_QP_TIMEOUT;
	if (rc_retries(qp))
		mask |= IBV_QP_RETRY_CNT | IBV_QP_RNR_RETRY | IBV_QP_MAX_QP_RD_ATOMIC;
	return ibv_modify_qp(qp, &a, mask);
}

/* @qp from RESET to RTS (INIT with @access, then @c); the first failing ibv_modify_qp's
 * result, or 0. */
static inline int rc_connect(struct ibv_qp *qp, unsigned int access, const struct rc_conn *c)
{
	int rc = rc_to_init(qp, access);

	rc = rc ? rc : rc_to_rtr(qp, c);
	return rc ? rc : rc_to_rts(qp, c);
}

/* Two QPs connected to each other and their CQs (each QP's send and receive CQ). */
struct rc_pair {
	struct ibv_qp *a, *b;
	struct ibv_cq *cq_a, *cq_b;
};

/* Destroy @p's QPs (those not NULL) and CQs, checking each. */
static inline void rc_pair_free(struct rc_pair *p)
{
	if (p->a != NULL)
		CHECK_EQ(ibv_destroy_qp(p->a), 0);
	if (p->b != NULL)
		CHECK_EQ(ibv_destroy_qp(p->b), 0);
	CHECK_EQ(ibv_destroy_cq(p->cq_a), 0);
	CHECK_EQ(ibv_destroy_cq(p->cq_b), 0);
}

/* Check that @wc has @status and @wr_id (@what names it in a failure); returns @wc. */
static inline struct ibv_wc rc_check_wc(struct ibv_wc wc, enum ibv_wc_status status,
					uint64_t wr_id, const char *what)
{
	CHECK(wc.status == status && wc.wr_id == wr_id, "%s: status %s (want %s) wr_id %lu (%lu)",
	      what, ibv_wc_status_str(wc.status), ibv_wc_status_str(status),
	      (unsigned long)wc.wr_id, (unsigned long)wr_id);
	return wc;
}

/* One completion on @cq within 5 s, checked by rc_check_wc; the completion (status
 * GENERAL_ERR when none came). */
static inline struct ibv_wc rc_wait_one(struct ibv_cq *cq, enum ibv_wc_status status,
					uint64_t wr_id, const char *what)
{
	struct ibv_wc wc = { .status = IBV_WC_GENERAL_ERR };

	if (test_poll(cq, &wc, 1) != 1) {
		CHECK(0, "%s: no completion", what);
		return wc;
	}
	return rc_check_wc(wc, status, wr_id, what);
}

/* @qp's state as ibv_query_qp gives it, or -1. */
static inline enum ibv_qp_state rc_qp_state(struct ibv_qp *qp)
{
	struct ibv_qp_attr a;
	struct ibv_qp_init_attr i;

	return ibv_query_qp(qp, &a, IBV_QP_STATE, &i) == 0 ? a.qp_state : (enum ibv_qp_state)-1;
}

/* Make the context's async events non-blocking: ibv_get_async_event returns -1 when none is
 * queued. */
static inline void rc_async_nonblock(struct ibv_context *c)
{
	fcntl(c->async_fd, F_SETFL, fcntl(c->async_fd, F_GETFL) | O_NONBLOCK);
}

#endif
