/* SPDX-License-Identifier: BSD-3-Clause */
/* The UD transport over RoCEv2: its ops table, what each state sets up, and multicast groups.
 * A UD QP is a port receiver from INIT on (its frames are demultiplexed by QPN, roce_rx.c),
 * opens a transmitter at RESET -> INIT, takes its UDP source port from its QPN as rxe does,
 * and starts its PSNs at the sq_psn of RTR -> RTS. Direct progress only: the posting thread
 * builds and sends, polling progresses (no service lcore). */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "roce_port.h"
#include "roce_ud.h"

uint32_t dpv__ud_path_mtu(const struct dpv_device *dev)
{
	return dpv__roce_mtu_bytes(dpv__roce_active_mtu(dev->caps.mtu));
}

static int ud_create(struct dpv_qp *qp, struct ibv_qp_init_attr_ex *a)
{
	struct dpv_ud_qp *ud;
	int rc;

	rc = dpv__device_loop_init(qp->ctx->dev);
	if (rc != 0)
		return rc;
	ud = calloc(1, sizeof(*ud));
	if (ud == NULL)
		return -ENOMEM;
	ud->frames = calloc(qp->sq.size, sizeof(*ud->frames));
	if (ud->frames == NULL) {
		free(ud);
		return -ENOMEM;
	}
	qp->priv = ud;
	qp->lim.ip_csum = false;           /* no IBV_DEVICE_UD_IP_CSUM */
	qp->lim.frame_sends = false;       /* a SEND is a message, not a frame */
	__atomic_fetch_add(&qp->ctx->dev->roce->qps, 1, __ATOMIC_RELEASE);
	return 0;
}

static void ud_destroy(struct dpv_qp *qp)
{
	struct dpv_ud_qp *ud = to_udqp(qp);

	dpv__ud_mcast_detach_all(qp);
	if (ud == NULL)
		return;
	dpv__roce_rx_user(qp, &ud->rx_user, false);
	__atomic_fetch_sub(&qp->ctx->dev->roce->qps, 1, __ATOMIC_RELEASE);
	dpv__roce_txh_close(qp);
	dpv__ud_frames_free(qp);
	free(ud->frames);
	free(ud);
	qp->priv = NULL;
}

static int ud_prepare_state(struct dpv_qp *qp, enum ibv_qp_state next)
{
	struct dpv_ud_qp *ud = to_udqp(qp);
	int rc = 0;

	if (next != IBV_QPS_RESET && next != IBV_QPS_ERR)
		rc = dpv__roce_txh_open(qp);
	if (rc != 0)
		return rc;
	if (qp->state == IBV_QPS_RESET && next != IBV_QPS_RESET)
		ud->sport = dpv__roce_udp_sport_qpn(qp->ibqp.qp_num);
	if (qp->state == IBV_QPS_RTR && next == IBV_QPS_RTS)
		ud->psn = qp->sq_psn & DPV_ROCE_PSN_MASK;
	dpv__roce_rx_user(qp, &ud->rx_user, next != IBV_QPS_RESET);
	return 0;
}

/* A UD frame the RoCE demux (roce_rx.c) found for @qp. */
static int ud_deliver(struct dpv_qp *qp, const uint8_t *f, const void *fr,
		      struct dpv_cqe_batch *b)
{
	return dpv__ud_deliver(qp, f, fr, b);
}

static const struct dpv_transport_ops dpv_ud_transport = {
	.name = "ud",
	.create = ud_create,
	.destroy = ud_destroy,
	.prepare_state = ud_prepare_state,
	.post_send = dpv__ud_post_send,
	.progress = dpv__ud_progress,
	.flush = dpv__ud_flush,
	.reset = dpv__ud_reset,
	.mcast = dpv__ud_mcast,
	.service = false,
	.deliver = ud_deliver,
};

static const struct dpv_qp_type ud_types[] = {
	{ IBV_QPT_UD, 0, 4, &dpv_ud_transport },
};
DPV_QP_TYPES_REGISTER(ud, ud_types)

/* ---- multicast groups ---- */

static void mcast_count(struct dpv_device *dev, const uint8_t gid[16], unsigned int *groups,
			unsigned int *in_group)
{
	struct dpv_mcast *m, *k;

	*groups = *in_group = 0;
	TAILQ_FOREACH(m, &dev->roce->mcasts, next) {
		if (memcmp(m->gid, gid, 16) == 0)
			(*in_group)++;
		for (k = TAILQ_FIRST(&dev->roce->mcasts); k != m; k = TAILQ_NEXT(k, next))
			if (memcmp(k->gid, m->gid, 16) == 0)
				break;
		*groups += k == m;             /* the first attachment of its group */
	}
}

/* Attach (or detach) @qp to the group @gid: frames to it with the multicast QPN reach every
 * attached QP of the port. Attaching twice is one attachment (as rxe); detaching a group the
 * QP is not in: -EINVAL. The list is the receive side's: changed under rx_lock. */
static int mcast_change(struct dpv_qp *qp, const uint8_t gid[16], bool attach)
{
	struct dpv_device *dev = qp->ctx->dev;
	struct dpv_mcast *m, *found = NULL, *add = attach ? calloc(1, sizeof(*add)) : NULL;
	unsigned int groups, in_group;
	int rc = 0;

	if (attach && add == NULL)
		return -ENOMEM;
	dpv__spinlock_lock(&dev->rx_lock);
	TAILQ_FOREACH(m, &dev->roce->mcasts, next)
		if (m->qp == qp && memcmp(m->gid, gid, 16) == 0)
			found = m;
	if (attach && found == NULL) {
		mcast_count(dev, gid, &groups, &in_group);
		if (in_group >= DPV_MAX_MCAST_QP_ATTACH ||
		    (in_group == 0 && groups >= DPV_MAX_MCAST_GRP)) {
			rc = -ENOMEM;
		} else {
			memcpy(add->gid, gid, 16);
			add->qp = qp;
			TAILQ_INSERT_TAIL(&dev->roce->mcasts, add, next);
			__atomic_fetch_add(&dev->roce->nb_mcast, 1, __ATOMIC_RELAXED);
			add = NULL;
		}
	} else if (!attach) {
		if (found != NULL) {
			TAILQ_REMOVE(&dev->roce->mcasts, found, next);
			__atomic_fetch_sub(&dev->roce->nb_mcast, 1, __ATOMIC_RELAXED);
		} else {
			rc = -EINVAL;
		}
	}
	dpv__spinlock_unlock(&dev->rx_lock);
	free(add);
	free(attach ? NULL : found);
	return rc;
}

int dpv__ud_mcast(struct dpv_qp *qp, const union ibv_gid *gid, bool attach)
{
	int rc;

	if (gid == NULL) {
		dpv__ud_mcast_detach_all(qp);
		return 0;
	}
	if (!dpv__roce_gid_is_mcast(gid->raw))
		return -EINVAL;
	rc = mcast_change(qp, gid->raw, attach);
	if (rc == 0)
		dpv__roce_port_refresh(qp->ctx->dev);     /* the port's multicast filter */
	return rc;
}

unsigned int dpv__ud_mcast_macs(struct dpv_device *dev, uint8_t (*macs)[6], unsigned int max)
{
	struct dpv_mcast *m;
	unsigned int n = 0;

	dpv__spinlock_lock(&dev->rx_lock);
	TAILQ_FOREACH(m, &dev->roce->mcasts, next) {
		uint8_t mac[6];
		bool dup = false;

		(void)dpv__roce_gid_mcast_mac(m->gid, mac);
		for (unsigned int j = 0; j < n; j++)
			dup |= memcmp(macs[j], mac, 6) == 0;
		if (!dup && n < max)
			memcpy(macs[n++], mac, 6);
	}
	dpv__spinlock_unlock(&dev->rx_lock);
	return n;
}

void dpv__ud_mcast_detach_all(struct dpv_qp *qp)
{
	struct dpv_device *dev = qp->ctx->dev;
	struct dpv_mcast *m, *next;
	TAILQ_HEAD(, dpv_mcast) gone = TAILQ_HEAD_INITIALIZER(gone);

	dpv__spinlock_lock(&dev->rx_lock);
	for (m = TAILQ_FIRST(&dev->roce->mcasts); m != NULL; m = next) {
		next = TAILQ_NEXT(m, next);
		if (m->qp == qp) {
			TAILQ_REMOVE(&dev->roce->mcasts, m, next);
			TAILQ_INSERT_TAIL(&gone, m, next);
			__atomic_fetch_sub(&dev->roce->nb_mcast, 1, __ATOMIC_RELAXED);
		}
	}
	dpv__spinlock_unlock(&dev->rx_lock);
	if (TAILQ_EMPTY(&gone))
		return;
	while ((m = TAILQ_FIRST(&gone)) != NULL) {
		TAILQ_REMOVE(&gone, m, next);
		free(m);
	}
	dpv__roce_port_refresh(dev);
}

bool dpv__ud_mcast_attached(struct dpv_device *dev, const uint8_t gid[16])
{
	struct dpv_mcast *m;

	dpv__lock_assert_held(&dev->rx_lock);
	TAILQ_FOREACH(m, &dev->roce->mcasts, next)
		if (memcmp(m->gid, gid, 16) == 0)
			return true;
	return false;
}
