/* SPDX-License-Identifier: BSD-3-Clause */
/* Service mode: a service lcore of lib/engine drives a port's service-mode QPs. The posting
 * thread writes each WR's descriptor and publishes the SQ head once per list (a release
 * store); the service lcore runs each busy QP's transport progress and polls the port's
 * receive queues. They share no lock and no line written per WR: the service takes only the
 * QP's svc_lock, with a try-lock (a QP being modified waits a round). */
#include <errno.h>
#include <stdlib.h>

#include "verbs_device.h"
#include "verbs_fork.h"
#include "verbs_ring.h"
#include "verbs_qp.h"
#include "verbs_progress.h"

/* Non-inline frames up to this size are copied into their slot while posting (as the direct
 * path copies them): the WR holds no MR, whose reference count both cores would write. */
#define SVC_COPY_DATA 256u

/* Helping a service lcore the OS does not run: pollers check its rounds every HELP_CHECK_US
 * and do a QP's work once it made no round for HELP_STALL_US (a round takes microseconds; a
 * thread that lost its CPU waits milliseconds). */
#define HELP_CHECK_US 5
#define HELP_STALL_US 20

void dpv__device_service_init(struct dpv_device *dev)
{
	pthread_mutex_init(&dev->svc_mutex, NULL);
	dpv__spinlock_init(&dev->svc_lock);
	dev->svc_qps = NULL;
	dev->nb_svc_qp = dev->svc_cap = 0;
	__atomic_store_n(&dev->svc_attached, false, __ATOMIC_RELEASE);
	dev->svc_want = 0;
}

/* Nothing posted since the QP's last round and nothing at the port: nothing to do (service
 * lock held). The head is the one line of the posting thread a round reads. */
static inline bool svc_idle(const struct dpv_qp *qp)
{
	const struct dpv_sq *sq = &qp->sq;

	return __atomic_load_n(&sq->head, __ATOMIC_ACQUIRE) == sq->sent && sq->done == sq->sent;
}

/* A port's work item: how many of its QPs had work, 1 more for receivers or a timer run. */

static unsigned int port_service(void *arg)
{
	struct dpv_device *dev = arg;
	unsigned int busy = 0;

	if (__atomic_load_n(&dev->svc_want, __ATOMIC_ACQUIRE) != 0)
		return 1;                 /* someone waits for the array: let them have it */
	dpv__spinlock_lock(&dev->svc_lock);
	for (unsigned int i = 0; i < dev->nb_svc_qp; i++) {
		struct dpv_qp *qp = dev->svc_qps[i];

		if (dpv__spinlock_trylock(&qp->svc_lock)) {
			if (!svc_idle(qp)) {
				qp->ops->progress(qp);
				busy++;
			}
			dpv__spinlock_unlock(&qp->svc_lock);
		}
	}
	dpv__spinlock_unlock(&dev->svc_lock);
	if (__atomic_load_n(&dev->rx_users, __ATOMIC_RELAXED) != 0) {
		dpv__port_rx_poll(dev);
		busy++;
	}
	return busy + dpv__device_timers_poll(dev);
}

/* The array lock for a control path: the service lcore, which takes it again right after
 * each round, is asked to step aside. */
static void svc_array_lock(struct dpv_device *dev)
{
	__atomic_fetch_add(&dev->svc_want, 1, __ATOMIC_RELEASE);
	dpv__spinlock_lock(&dev->svc_lock);
}

static void svc_array_unlock(struct dpv_device *dev)
{
	dpv__spinlock_unlock(&dev->svc_lock);
	__atomic_fetch_sub(&dev->svc_want, 1, __ATOMIC_RELEASE);
}

static int svc_array_add(struct dpv_device *dev, struct dpv_qp *qp)
{
	int rc = 0;

	svc_array_lock(dev);
	if (dev->nb_svc_qp == dev->svc_cap) {
		unsigned int cap = dev->svc_cap ? dev->svc_cap * 2 : 8;
		struct dpv_qp **a = realloc(dev->svc_qps, cap * sizeof(*a));

		if (a == NULL)
			rc = -ENOMEM;
		else {
			dev->svc_qps = a;
			dev->svc_cap = cap;
		}
	}
	if (rc == 0)
		dev->svc_qps[dev->nb_svc_qp++] = qp;
	svc_array_unlock(dev);
	return rc;
}

int dpv__service_qp_add(struct dpv_qp *qp)
{
	struct dpv_device *dev = qp->ctx->dev;
	struct dpv_service_work w = { port_service, dev };
	int rc = 0;

	dpv__qp_assert_ctl_locked(qp);
	if (qp->svc_listed)
		return 0;
	rc = dpv__sq_desc_init(&qp->sq, RTE_MAX(qp->lim.max_inline_data + qp->lim.max_tso_header,
						SVC_COPY_DATA));
	if (rc != 0)
		return rc;
	pthread_mutex_lock(&dev->svc_mutex);
	if (!dev->svc_attached) {
		rc = dpv__service_work_add(dev->caps.socket_id, &w, &dev->svc_lcore);
		__atomic_store_n(&dev->svc_attached, rc == 0, __ATOMIC_RELEASE);
	}
	if (rc == 0)
		rc = svc_array_add(dev, qp);
	__atomic_store_n(&qp->svc_listed, rc == 0, __ATOMIC_RELEASE);   /* read by helpers */
	pthread_mutex_unlock(&dev->svc_mutex);
	return rc;
}

void dpv__service_qp_del(struct dpv_qp *qp)
{
	struct dpv_device *dev = qp->ctx->dev;
	struct dpv_service_work w = { port_service, dev };

	if (!qp->svc_listed)
		return;
	pthread_mutex_lock(&dev->svc_mutex);
	svc_array_lock(dev);                      /* waits for the service's round */
	for (unsigned int i = 0; i < dev->nb_svc_qp; i++) {
		if (dev->svc_qps[i] == qp) {
			dev->svc_qps[i] = dev->svc_qps[--dev->nb_svc_qp];
			break;
		}
	}
	svc_array_unlock(dev);
	__atomic_store_n(&qp->svc_listed, false, __ATOMIC_RELEASE);
	if (dev->nb_svc_qp == 0 && dev->svc_attached) {
		dpv__service_work_del(dev->svc_lcore, &w);
		__atomic_store_n(&dev->svc_attached, false, __ATOMIC_RELEASE);
	}
	pthread_mutex_unlock(&dev->svc_mutex);
}

void dpv__service_qp_help(struct dpv_qp *qp)
{
	struct dpv_device *dev = qp->ctx->dev;
	uint64_t now = rte_rdtsc(), rounds;

	dpv__qp_assert_locked(qp);
	if (!qp->helping && now - qp->help_checked < HELP_CHECK_US * rte_get_tsc_hz() / 1000000)
		return;
	qp->help_checked = now;
	if (!__atomic_load_n(&qp->svc_listed, __ATOMIC_ACQUIRE) ||
	    !dpv__service_rounds(dev->svc_lcore, &rounds)) {
		qp->helping = false;          /* stopped: its QPs' WRs wait for it */
		return;
	}
	if (rounds != qp->help_rounds) {
		qp->help_rounds = rounds;
		qp->help_seen = now;
		qp->helping = false;
		return;
	}
	if (now - qp->help_seen < HELP_STALL_US * rte_get_tsc_hz() / 1000000)
		return;
	qp->helping = true;
	if (dpv__spinlock_trylock(&qp->svc_lock)) {
		if (!svc_idle(qp))
			qp->ops->progress(qp);
		dpv__spinlock_unlock(&qp->svc_lock);
	}
}

DPV_EXPORT int dpv_qp_set_progress(struct ibv_qp *ibqp, enum dpv_progress mode)
{
	struct dpv_qp *qp = dpv__qp_target(ibqp);
	int rc = 0;

	DPV_FORK_REFUSE(ENODEV);
	if (qp == NULL || !qp->ops->service ||
	    (mode != DPV_PROGRESS_DIRECT && mode != DPV_PROGRESS_SERVICE))
		return EINVAL;
	dpv__qp_lock_ctl(qp);
	if (qp->state != IBV_QPS_RESET)
		rc = EBUSY;
	dpv__qp_unlock_ctl(qp);
	if (rc != 0)
		return rc;
	/* in RESET nothing is queued: off the service first, then switch */
	dpv__service_qp_del(qp);
	dpv__qp_lock(qp);
	/* read without the lock by pollers looking for work (progress.c) */
	__atomic_store_n(&qp->service, mode == DPV_PROGRESS_SERVICE, __ATOMIC_RELAXED);
	dpv__qp_unlock(qp);
	return 0;
}
