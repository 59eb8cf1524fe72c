/* Service mode: a port's service-mode QPs are driven by a service lcore of lib/engine. The
 * posting thread checks each WR and writes its descriptor, then publishes the SQ head (a
 * release store: the SQ ring is the per-QP single-producer ring the service consumes); the
 * service lcore runs each QP's transport progress (RAW: build, burst, reap, complete) and
 * polls the port's receive queues. The poster and the service share no lock: the service takes only
 * the QP's svc_lock (try-lock: a QP being modified is skipped for a round). */
#include <errno.h>
#include <stdlib.h>

#include "verbs_priv.h"

void dpv__device_service_init(struct dpv_device *dev)
{
	pthread_mutex_init(&dev->svc_mutex, NULL);
	dpv__spinlock_init(&dev->svc_lock);
	dev->svc_qps = NULL;
	dev->nb_svc_qp = dev->svc_cap = 0;
	dev->svc_attached = false;
	dev->svc_want = 0;
}

/* The work item of a port, run over and over by its service lcore. */
static void port_service(void *arg)
{
	struct dpv_device *dev = arg;

	if (__atomic_load_n(&dev->svc_want, __ATOMIC_ACQUIRE) != 0)
		return;                   /* someone waits for the array: let them have it */
	dpv__spinlock_lock(&dev->svc_lock);
	for (unsigned int i = 0; i < dev->nb_svc_qp; i++) {
		struct dpv_qp *qp = dev->svc_qps[i];

		if (dpv__spinlock_trylock(&qp->svc_lock)) {
			qp->ops->progress(qp);
			dpv__spinlock_unlock(&qp->svc_lock);
		}
	}
	dpv__spinlock_unlock(&dev->svc_lock);
	dpv__port_rx_poll(dev);
	dpv__timers_poll(&dev->timers);
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

	if (qp->svc_listed)
		return 0;
	rc = dpv__sq_desc_init(&qp->sq, qp->lim.max_inline_data, qp->lim.max_tso_header);
	if (rc != 0)
		return rc;
	pthread_mutex_lock(&dev->svc_mutex);
	if (!dev->svc_attached) {
		rc = dpv__service_work_add(dev->caps.socket_id, &w, &dev->svc_lcore);
		dev->svc_attached = rc == 0;
	}
	if (rc == 0)
		rc = svc_array_add(dev, qp);
	qp->svc_listed = rc == 0;
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
	qp->svc_listed = false;
	if (dev->nb_svc_qp == 0 && dev->svc_attached) {
		dpv__service_work_del(dev->svc_lcore, &w);
		dev->svc_attached = false;
	}
	pthread_mutex_unlock(&dev->svc_mutex);
}

DPV_EXPORT int dpv_qp_set_progress(struct ibv_qp *ibqp, enum dpv_progress mode)
{
	struct dpv_qp *qp = to_dqp(ibqp);
	int rc = 0;

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
	qp->service = mode == DPV_PROGRESS_SERVICE;
	dpv__qp_unlock(qp);
	return 0;
}
