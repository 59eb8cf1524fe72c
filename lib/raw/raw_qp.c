/* SPDX-License-Identifier: BSD-3-Clause */
/* The RAW_PACKET transport: a QP is a queue of whole Ethernet frames on its device's port.
 * Its transmitter (lib/offload) is opened when the QP leaves RESET; the fast send path of
 * raw_fast.c is chosen when a direct-mode QP enters RTS (as mlx5 picks its WR builders). */
#include <errno.h>
#include <stdlib.h>

#include "raw_priv.h"


static int raw_create(struct dpv_qp *qp, struct ibv_qp_init_attr_ex *a)
{
	struct dpv_raw_qp *r = calloc(1, sizeof(*r));

	if (r == NULL)
		return -ENOMEM;
	qp->lim.ip_csum = true;           /* IBV_DEVICE_RAW_IP_CSUM */
	qp->lim.frame_sends = true;       /* a SEND is the whole frame */
	r->fast_sge = RTE_MIN(qp->lim.max_send_sge, 4u);
	qp->priv = r;
	return 0;
}

static void raw_destroy(struct dpv_qp *qp)
{
	free(qp->priv);
	qp->priv = NULL;
	if (qp->txh == NULL)
		return;
	dpv__device_txh_close(qp->ctx->dev, qp->txh);
	free(qp->txh);
	qp->txh = NULL;
}

/* IBV_QP_RATE_LIMIT: the pacer's rate and bucket (at least a frame of the QP). */
static int raw_rate_limit(struct dpv_qp *qp, uint32_t kbps, uint32_t burst)
{
	return dpv__pace_set(&to_rawqp(qp)->pace, kbps, burst, qp->lim.max_frame);
}

static void raw_query(struct dpv_qp *qp, struct ibv_qp_attr *attr)
{
	attr->rate_limit = to_rawqp(qp)->pace.kbps;
}

/* Direct mode: the thread that posts is the one that touches the port's queue and pool; say
 * so when it runs on another NUMA socket than the port (service mode picks a local lcore). */
static void check_placement(struct dpv_qp *qp)
{
	int port = qp->ctx->dev->caps.socket_id, me = dpv__socket_of_caller();

	if (!qp->service && port >= 0 && me >= 0 && me != port)
		VERBS_LOG(WARNING, "QP %#x: its port %s is on NUMA socket %d, this thread on socket "
			  "%d (cross-socket traffic in direct mode): run the posting thread on an lcore "
			  "of socket %d, or use service mode", qp->ibqp.qp_num,
			  qp->ctx->dev->caps.name, port, me, port);
}

/* The local loopback's copies of what a RAW QP sends: to the port's loopback ring, which the
 * port's receive side takes before its own burst (steered as frames from the wire). */
static unsigned int raw_loop(void *dev, struct rte_mbuf **m, unsigned int n)
{
	return dpv__device_loopback(dev, m, n);
}

static int open_txh(struct dpv_qp *qp)
{
	struct dpv_device *dev = qp->ctx->dev;
	struct dpv_txh *h = calloc(1, sizeof(*h));
	int rc;

	if (h == NULL)
		return -ENOMEM;
	rc = dpv__device_loop_init(dev);
	if (rc == 0)
		rc = dpv__device_txh_open(dev, h, dpv__wqe_release);
	if (rc != 0) {
		free(h);
		return rc;
	}
	/* mlx5's local loopback: on while two contexts or more have the device open */
	h->loop_on = &dev->raw_loop;
	h->loop = raw_loop;
	h->loop_arg = dev;
	qp->txh = h;
	return 0;
}

/* The fast path's size limits folded into one number each: the port's frame without a VLAN
 * tag (the generic path counts tags), one mbuf, and INLINE's limit or, without INLINE, the
 * size above which a frame is attached instead of copied (dpv__tx_zero_copy as a limit). A
 * span is how many sizes from the Ethernet header's 14 bytes up pass: 0 when the limit is
 * below 14 (then every such WR is the generic path's, which says EINVAL or attaches). */
static uint64_t span_from(uint64_t limit)
{
	return limit >= DPV_ETH_HLEN ? limit - DPV_ETH_HLEN + 1 : 0;
}

static void fast_limits(struct dpv_qp *qp)
{
	struct dpv_raw_qp *r = to_rawqp(qp);
	const struct dpv_txh *h = qp->txh;
	uint64_t one = RTE_MIN((uint64_t)qp->lim.max_frame, (uint64_t)h->small_max);

	if (qp->service)                  /* the posting thread copies the frame into its slot */
		one = RTE_MIN(one, (uint64_t)qp->sq.data_max);

	r->fast_span_inline = span_from(RTE_MIN(one, (uint64_t)qp->lim.max_inline_data));
	r->fast_span_copy = span_from(h->caps->zero_copy ?
				      RTE_MIN(one, (uint64_t)h->copy_max) : one);
}

static int raw_prepare_state(struct dpv_qp *qp, enum ibv_qp_state next)
{
	int rc = 0;

	if (next == IBV_QPS_INIT && qp->state == IBV_QPS_RESET && qp->txh == NULL)
		rc = open_txh(qp);
	if (rc == 0 && next == IBV_QPS_INIT && qp->service)
		rc = dpv__service_qp_add(qp);
	if (rc == 0 && next == IBV_QPS_INIT && qp->state == IBV_QPS_RESET)
		check_placement(qp);
	/* the fast path for QPs in RTS, the generic one otherwise (a paced direct-mode QP's
	 * WRs wait for the pacer in the SQ: the generic kick asks it; in service mode the
	 * service lcore's kick does, whichever path wrote the descriptors) */
	if (rc == 0 && next == IBV_QPS_RTS && qp->service && qp->txh != NULL) {
		fast_limits(qp);
		__atomic_store_n(&qp->post_send, dpv__raw_post_send_svc, __ATOMIC_RELAXED);
	} else if (rc == 0 && next == IBV_QPS_RTS && qp->txh != NULL &&
		   to_rawqp(qp)->pace.kbps == 0) {
		fast_limits(qp);
		__atomic_store_n(&qp->post_send, dpv__raw_post_send_fast, __ATOMIC_RELAXED);
	} else {
		__atomic_store_n(&qp->post_send, dpv__raw_post_send, __ATOMIC_RELAXED);
	}
	return rc;
}

const struct dpv_transport_ops dpv_raw_transport = {
	.name = "raw_packet",
	.create = raw_create,
	.destroy = raw_destroy,
	.prepare_state = raw_prepare_state,
	.rate_limit = raw_rate_limit,
	.query = raw_query,
	.post_send = dpv__raw_post_send,
	.progress = dpv__raw_progress,
	.flush = dpv__raw_flush,
	.reset = dpv__raw_reset,
	.mcast = dpv__raw_mcast,
	.service = true,
};

/* A RAW QP takes a whole burst's frames from its SRQ before it completes any. */
static const struct dpv_qp_type raw_types[] = {
	{ IBV_QPT_RAW_PACKET, 0, DPV_RX_MAX, &dpv_raw_transport },
};
DPV_QP_TYPES_REGISTER(raw, raw_types)
