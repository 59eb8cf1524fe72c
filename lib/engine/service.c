/* SPDX-License-Identifier: BSD-3-Clause */
/* Service lcores: EAL worker lcores that run work items (the verbs core's: one per port)
 * over and over, on the port's NUMA socket where one is given (else with a warning). An
 * lcore starts when work first needs it, or by dpv_service_lcore_start(). */
#include <errno.h>
#include <pthread.h>
#include <string.h>

#include <rte_eal.h>
#include <rte_errno.h>
#include <rte_launch.h>
#include <rte_lcore.h>
#include <rte_cycles.h>
#include <rte_pause.h>
#include <sched.h>

#include "dpv_engine.h"
#include "dpv_lock.h"

#define WORK_MAX 64
/* An idle service lcore yields its CPU this often: free on a core of its own, and on a
 * shared core the posting threads get the CPU instead of watching it spin. */

#define IDLE_YIELD_US 50

struct service {
	dpv_spinlock_t lock;            /* the work list; held by the loop for a whole round */
	unsigned int nb_work;
	struct dpv_service_work work[WORK_MAX];
	unsigned int want;              /* others waiting for the lock: the loop steps aside */
	bool running;                   /* launched and not told to stop */
	bool stop;                      /* the loop ends at its next round */
	bool held;                      /* stopped by the user: not started again for new work */
	uint64_t rounds;                /* loop iterations, for telemetry */
};

static struct service services[RTE_MAX_LCORE];
static pthread_mutex_t services_lock = PTHREAD_MUTEX_INITIALIZER;  /* start, stop, choice */

static int service_loop(void *arg)
{
	struct service *s = arg;
	uint64_t idle_tsc = rte_get_tsc_hz() / 1000000 * IDLE_YIELD_US, idle_since = 0;

	while (!__atomic_load_n(&s->stop, __ATOMIC_ACQUIRE)) {
		unsigned int n, busy = 0;

		if (__atomic_load_n(&s->want, __ATOMIC_ACQUIRE) != 0) {
			rte_pause();
			continue;
		}
		dpv__spinlock_lock(&s->lock);
		n = s->nb_work;
		for (unsigned int i = 0; i < n; i++)
			busy += s->work[i].fn(s->work[i].arg);
		dpv__spinlock_unlock(&s->lock);
		__atomic_store_n(&s->rounds, s->rounds + 1, __ATOMIC_RELAXED);
		if (busy != 0) {
			idle_since = 0;
			continue;
		}
		rte_pause();
		if (idle_since == 0) {
			idle_since = rte_rdtsc();
		} else if (rte_rdtsc() - idle_since > idle_tsc) {
			sched_yield();
			idle_since = 0;
		}
	}
	return 0;
}

static int service_start(unsigned int lcore)
{
	struct service *s = &services[lcore];
	int rc;

	dpv__mutex_assert_held(&services_lock);
	if (s->running)
		return 0;
	if (lcore == rte_get_main_lcore() || !rte_lcore_is_enabled(lcore))
		return -EINVAL;
	if (rte_eal_get_lcore_state(lcore) != WAIT)
		return -EBUSY;
	__atomic_store_n(&s->stop, false, __ATOMIC_RELEASE);
	rc = rte_eal_remote_launch(service_loop, s, lcore);
	if (rc != 0)
		return rc;
	__atomic_store_n(&s->running, true, __ATOMIC_RELEASE);   /* read unlocked: rounds */
	s->held = false;
	ENGINE_LOG(INFO, "service lcore %u (NUMA socket %u) started", lcore,
		   rte_lcore_to_socket_id(lcore));
	return 0;
}

static void service_stop(unsigned int lcore)
{
	struct service *s = &services[lcore];

	dpv__mutex_assert_held(&services_lock);
	if (!s->running)
		return;
	__atomic_store_n(&s->stop, true, __ATOMIC_RELEASE);
	rte_eal_wait_lcore(lcore);
	__atomic_store_n(&s->running, false, __ATOMIC_RELEASE);
}

DPV_EXPORT int dpv_service_lcore_start(unsigned int lcore)
{
	int rc = dpv__eal_ensure();

	if (rc == 0 && lcore >= RTE_MAX_LCORE)
		rc = -EINVAL;
	if (rc != 0)
		return -rc;
	pthread_mutex_lock(&services_lock);
	rc = service_start(lcore);
	pthread_mutex_unlock(&services_lock);
	if (rc != 0)
		ENGINE_LOG(ERR, "lcore %u cannot be a service lcore: %s (it must be a worker lcore "
			   "given to the EAL with -l, not the main one, and not running anything)",
			   lcore, rc == -EBUSY ? "it is busy" : "not a worker lcore of the EAL");
	return -rc;
}

DPV_EXPORT int dpv_service_lcore_stop(unsigned int lcore)
{
	if (lcore >= RTE_MAX_LCORE || !dpv__eal_running())
		return EINVAL;
	pthread_mutex_lock(&services_lock);
	if (!services[lcore].running) {
		pthread_mutex_unlock(&services_lock);
		return EINVAL;
	}
	service_stop(lcore);
	services[lcore].held = true;
	pthread_mutex_unlock(&services_lock);
	return 0;
}

/* A free worker lcore on @socket (any socket when @socket < 0), or RTE_MAX_LCORE. */
static unsigned int free_worker(int socket)
{
	unsigned int lcore;

	RTE_LCORE_FOREACH_WORKER(lcore) {
		if (services[lcore].running || services[lcore].held ||
		    rte_eal_get_lcore_state(lcore) != WAIT)
			continue;
		if (socket < 0 || rte_lcore_to_socket_id(lcore) == (unsigned int)socket)
			return lcore;
	}
	return RTE_MAX_LCORE;
}

/* The running service lcore on @socket (any when < 0) with the least work. */
static unsigned int least_loaded(int socket)
{
	unsigned int lcore, best = RTE_MAX_LCORE;

	RTE_LCORE_FOREACH_WORKER(lcore) {
		if (!services[lcore].running ||
		    (socket >= 0 && rte_lcore_to_socket_id(lcore) != (unsigned int)socket))
			continue;
		if (best == RTE_MAX_LCORE || services[lcore].nb_work < services[best].nb_work)
			best = lcore;
	}
	return best;
}

/* A service lcore for work of @socket, started if need be. */
static unsigned int choose(int socket)
{
	unsigned int lcore;

	dpv__mutex_assert_held(&services_lock);
	lcore = least_loaded(socket);
	if (lcore == RTE_MAX_LCORE && (lcore = free_worker(socket)) != RTE_MAX_LCORE &&
	    service_start(lcore) != 0)
		lcore = RTE_MAX_LCORE;
	if (lcore != RTE_MAX_LCORE)
		return lcore;
	lcore = least_loaded(-1);
	if (lcore == RTE_MAX_LCORE && (lcore = free_worker(-1)) != RTE_MAX_LCORE &&
	    service_start(lcore) != 0)
		lcore = RTE_MAX_LCORE;
	if (lcore != RTE_MAX_LCORE)
		ENGINE_LOG(WARNING, "no service lcore on NUMA socket %d: lcore %u on socket %u serves "
			   "it (cross-socket traffic); give the EAL a worker lcore of socket %d",
			   socket, lcore, rte_lcore_to_socket_id(lcore), socket);
	return lcore;
}

int dpv__service_work_add(int socket, const struct dpv_service_work *w, unsigned int *lcore)
{
	struct service *s;
	unsigned int l;

	pthread_mutex_lock(&services_lock);
	l = choose(socket);
	if (l == RTE_MAX_LCORE || services[l].nb_work == WORK_MAX) {
		pthread_mutex_unlock(&services_lock);
		ENGINE_LOG(ERR, "service mode needs a worker lcore: give the EAL one more lcore than "
			   "the application uses (e.g. DPV_EAL_ARGS=\"-l 0,1\") or use direct mode");
		return -ENODEV;
	}
	s = &services[l];
	__atomic_fetch_add(&s->want, 1, __ATOMIC_RELEASE);
	dpv__spinlock_lock(&s->lock);
	s->work[s->nb_work++] = *w;
	dpv__spinlock_unlock(&s->lock);
	__atomic_fetch_sub(&s->want, 1, __ATOMIC_RELEASE);
	pthread_mutex_unlock(&services_lock);
	*lcore = l;
	return 0;
}

void dpv__service_work_del(unsigned int lcore, const struct dpv_service_work *w)
{
	struct service *s = &services[lcore];

	pthread_mutex_lock(&services_lock);
	__atomic_fetch_add(&s->want, 1, __ATOMIC_RELEASE);
	dpv__spinlock_lock(&s->lock);         /* waits for the round in progress */
	for (unsigned int i = 0; i < s->nb_work; i++) {
		if (s->work[i].fn == w->fn && s->work[i].arg == w->arg) {
			s->work[i] = s->work[--s->nb_work];
			break;
		}
	}
	dpv__spinlock_unlock(&s->lock);
	__atomic_fetch_sub(&s->want, 1, __ATOMIC_RELEASE);
	pthread_mutex_unlock(&services_lock);
}

void dpv__service_stop_all(void)
{
	unsigned int lcore;

	pthread_mutex_lock(&services_lock);
	RTE_LCORE_FOREACH_WORKER(lcore)
		service_stop(lcore);
	pthread_mutex_unlock(&services_lock);
}

int dpv__service_info(struct dpv_service_info *out, int max)
{
	unsigned int lcore;
	int n = 0;

	pthread_mutex_lock(&services_lock);
	RTE_LCORE_FOREACH_WORKER(lcore) {
		struct service *s = &services[lcore];

		if (!s->running && !s->held && s->nb_work == 0)
			continue;
		if (n < max)
			out[n] = (struct dpv_service_info){
				.lcore = lcore, .socket = rte_lcore_to_socket_id(lcore),
				.running = s->running, .nb_work = s->nb_work,
				.rounds = __atomic_load_n(&s->rounds, __ATOMIC_RELAXED),
			};
		n++;
	}
	pthread_mutex_unlock(&services_lock);
	return n;
}

bool dpv__service_rounds(unsigned int lcore, uint64_t *rounds)
{
	const struct service *s = &services[lcore];

	*rounds = __atomic_load_n(&s->rounds, __ATOMIC_RELAXED);
	return __atomic_load_n(&s->running, __ATOMIC_ACQUIRE) &&
	       !__atomic_load_n(&s->stop, __ATOMIC_ACQUIRE);
}

DPV_EXPORT int dpv_thread_register(void)
{
	int rc = dpv__eal_ensure();

	if (rc != 0)
		return -rc;
	if (rte_lcore_id() != LCORE_ID_ANY)
		return 0;
	if (rte_thread_register() != 0) {
		ENGINE_LOG(WARNING, "no free lcore id for a thread (%s): it posts without a mempool "
			   "cache", rte_strerror(rte_errno));
		return ENOSPC;
	}
	return 0;
}

DPV_EXPORT void dpv_thread_unregister(void)
{
	if (dpv__eal_running() && rte_lcore_id() != LCORE_ID_ANY &&
	    rte_eal_lcore_role(rte_lcore_id()) == ROLE_NON_EAL)
		rte_thread_unregister();
}
