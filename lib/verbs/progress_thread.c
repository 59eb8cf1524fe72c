/* SPDX-License-Identifier: BSD-3-Clause */
/* The progress thread: a port nobody polls is progressed by the library, as a NIC answers
 * while its program sleeps. An RC target whose program waits in read() or spins on memory
 * (perftest's servers) answers WRITEs, READs and atomics; ARP/ND is answered while the
 * program is in its TCP handshake; a program waiting with poll()/epoll on a completion
 * channel's fd is woken by the completion this thread delivers.
 *
 * It looks after every started port of an open device. A port someone else polls (the
 * poll counts of its receive queues moved since the thread's last look: a thread polling a
 * CQ, a service lcore) is left to them and looked at again after a back-off that doubles
 * from BACKOFF_MIN_NS to NAP_NS while they keep polling. A port nobody polls is the thread's:
 * it sleeps in epoll_wait on the port's receive interrupt fds (dpv_driver_ops.rx_intr_fd)
 * and the loopback kick (frames a port sends itself: dpv__progress_kick), with the earliest
 * timer deadline of its ports as the timeout; woken, it looks again every QUIET_NAP_NS
 * until no frame came for QUIET_NS, then sleeps until the next wake. A port without interrupt fds is looked at every NAP_NS, and
 * every NAP_BUSY_NS for LINGER_NS after its last frame. An idle process thus sleeps.
 *
 * The thread is an EAL control thread (rte_ctrl_thread_create: on the CPUs the EAL leaves
 * to control threads, never a polling lcore's), started with the first open device, stopped
 * at exit before the ports close (dpv__progress_thread_stop); configuration key
 * progress_thread = 0 keeps it from starting (a program that promises to poll). */
#include <errno.h>
#include <limits.h>
#include <pthread.h>
#include <stdio.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/eventfd.h>
#include <unistd.h>

#include <rte_cycles.h>
#include <rte_lcore.h>
#include <rte_ring.h>

#include "dpv_engine.h"
#include "verbs_base.h"
#include "verbs_device.h"
#include "verbs_progress.h"

#define PT_MAX_DEVS 64
#define PT_MAX_FDS 16             /* interrupt fds per port (its first receive queues) */
#define QUIET_NS 100000L          /* woken: look again until no frame for this long */
#define QUIET_NAP_NS 20000L       /* ... every this often */
#define NAP_NS 10000000L          /* a port without interrupts: looked at this often */
#define NAP_BUSY_NS 50000L        /* ... and this often for LINGER_NS after a frame */
#define LINGER_NS 200000000L
#define BACKOFF_MIN_NS 50000L     /* a port another thread polls: first look back */
#define EMPTY_WAKES_MAX 256       /* wakes by a port's fds in a row that found no frame */

struct pt_port {
	struct dpv_device *dev;
	uint32_t seen_polls;      /* the port's poll counts after the thread's last look */
	int nb_fd;                /* interrupt fds (0: looked at in naps) */
	int fd[PT_MAX_FDS];
	uint16_t fdq[PT_MAX_FDS]; /* the receive queue of each */
	bool fd_event[PT_MAX_FDS]; /* an eventfd (VFIO, virtio): read to clear it */
	bool armed;               /* its fds are in the epoll set */
	bool others;              /* another thread polled it at the last look */
	uint64_t backoff_ns;      /* while others poll it */
	uint64_t next_look;       /* TSC: when it is looked at without a wake */
	uint64_t last_frame;      /* TSC of its last frame */
	unsigned int empty_wakes;
};

static pthread_mutex_t pt_lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_t pt_thread;
static bool pt_running, pt_stop;
static int pt_epfd = -1, pt_kickfd = -1;
static struct pt_port pt_ports[PT_MAX_DEVS];
static unsigned int pt_nb;
/* the thread sleeps (or is about to): a kick must write (read unlocked by senders) */
static bool pt_sleeping;

static uint64_t ns_ticks(uint64_t ns)
{
	return ns * (rte_get_tsc_hz() / 1000000) / 1000;
}

/* A kicked sleeper looks at every port: frames a port sent to itself (its loopback ring)
 * raise no interrupt. Cheap when the thread is awake (one load). */
void dpv__progress_kick(void)
{
	uint64_t one = 1;

	/* the frames' enqueue before the look at pt_sleeping, as the thread stores it before
	 * its last look at the rings */
	__atomic_thread_fence(__ATOMIC_SEQ_CST);
	if (__atomic_load_n(&pt_sleeping, __ATOMIC_RELAXED) &&
	    __atomic_exchange_n(&pt_sleeping, false, __ATOMIC_ACQ_REL))
		(void)!write(pt_kickfd, &one, sizeof(one));
}

static bool fd_is_eventfd(int fd)
{
	char path[64], link[64];
	ssize_t n;

	snprintf(path, sizeof(path), "/proc/self/fd/%d", fd);
	n = readlink(path, link, sizeof(link) - 1);
	if (n <= 0)
		return false;
	link[n] = '\0';
	return strstr(link, "eventfd") != NULL;
}

/* The port's fds in the epoll set (@on) or out of it; interrupts enabled while in. */
static void pt_arm(struct pt_port *p, bool on)
{
	const struct dpv_driver_ops *ops = p->dev->ops;

	if (p->armed == on || p->nb_fd == 0)
		return;
	for (int i = 0; i < p->nb_fd; i++) {
		struct epoll_event ev = { .events = EPOLLIN,
					  .data.u64 = (uint64_t)(p - pt_ports) << 32 | (uint32_t)i };

		if (on) {
			if (ops->rx_intr_enable != NULL)
				ops->rx_intr_enable(p->dev->port, p->fdq[i]);
			epoll_ctl(pt_epfd, EPOLL_CTL_ADD, p->fd[i], &ev);
		} else {
			epoll_ctl(pt_epfd, EPOLL_CTL_DEL, p->fd[i], NULL);
			if (ops->rx_intr_disable != NULL)
				ops->rx_intr_disable(p->dev->port, p->fdq[i]);
		}
	}
	p->armed = on;
}

/* The port's interrupt fds as its driver gives them. */
static void pt_fds(struct pt_port *p)
{
	struct dpv_device *dev = p->dev;
	uint16_t nb = __atomic_load_n(&dev->nb_rxq, __ATOMIC_ACQUIRE);

	p->nb_fd = 0;
	if (dev->ops->rx_intr_fd == NULL)
		return;
	for (uint16_t q = 0; q < nb; q++) {
		int fd = dev->ops->rx_intr_fd(dev->port, q);

		if (fd < 0 || p->nb_fd == PT_MAX_FDS) {
			p->nb_fd = 0;      /* a queue without one: the port is napped on */
			return;
		}
		p->fd[p->nb_fd] = fd;
		p->fdq[p->nb_fd] = q;
		p->fd_event[p->nb_fd++] = fd_is_eventfd(fd);
	}
}

/* Frames waiting in @dev's loopback ring, a hint: rte_ring_count's arithmetic on tails read
 * atomically (senders move them with atomics of their own; a plain read of them is a race
 * to ThreadSanitizer, and may be torn on paper). */
static uint32_t loop_pending(struct dpv_device *dev)
{
	struct rte_ring *r = __atomic_load_n(&dev->loop, __ATOMIC_ACQUIRE);
	uint32_t n;

	if (r == NULL)
		return 0;
	n = (__atomic_load_n(&r->prod.tail, __ATOMIC_ACQUIRE) -
	     __atomic_load_n(&r->cons.tail, __ATOMIC_ACQUIRE)) & r->mask;
	return RTE_MIN(n, r->capacity);
}

/* Frames the port took so far, and whether its loopback ring holds some. */
static uint64_t pt_frames(struct dpv_device *dev)
{
	uint16_t nb = __atomic_load_n(&dev->nb_rxq, __ATOMIC_ACQUIRE);
	uint64_t n = loop_pending(dev);

	for (uint16_t i = 0; i < nb; i++)
		n += __atomic_load_n(&dev->rxqs[i].frames, __ATOMIC_RELAXED);
	return n;
}

/* One look at @p (pt_lock held): left to the threads that poll it, or polled once; true if
 * it took frames. */
static bool pt_look(struct pt_port *p, uint64_t now)
{
	struct dpv_device *dev = p->dev;
	uint32_t polls = dpv__device_rx_polls(dev);
	bool users = __atomic_load_n(&dev->rx_users, __ATOMIC_RELAXED) > 0;
	uint64_t before;
	bool ring;

	/* a port a service lcore runs is its own: receive and timers (doc/architecture.md,
	 * "Progress models"); so is one whose queues another thread polled since the last look */
	if (polls != p->seen_polls || __atomic_load_n(&dev->svc_attached, __ATOMIC_ACQUIRE)) {
		p->seen_polls = polls;
		p->others = true;
		__atomic_store_n(&dev->progress_owned, false, __ATOMIC_RELAXED);
		p->backoff_ns = RTE_MIN(RTE_MAX(2 * p->backoff_ns, (uint64_t)BACKOFF_MIN_NS),
					(uint64_t)NAP_NS);
		p->next_look = now + ns_ticks(p->backoff_ns);
		pt_arm(p, false);
		return false;
	}
	p->others = false;
	p->backoff_ns = 0;
	/* a port nobody receives from is not polled (dpv__port_rx_poll): it keeps its frames,
	 * its fds would stay readable, its loopback ring full */
	__atomic_store_n(&dev->progress_owned, users, __ATOMIC_RELAXED);
	pt_arm(p, users);
	if (!users) {
		dpv__device_timers_poll(dev);
		return false;
	}
	before = pt_frames(dev);
	ring = loop_pending(dev) > 0;
	dpv__port_rx_poll(dev);
	dpv__device_timers_poll(dev);
	p->seen_polls = dpv__device_rx_polls(dev);
	if (pt_frames(dev) != before || ring) {
		p->last_frame = now;
		p->empty_wakes = 0;
		return true;
	}
	return false;
}

/* When @p must be looked at without a wake (TSC; UINT64_MAX: only when woken). */
static uint64_t pt_deadline(const struct pt_port *p, uint64_t now)
{
	uint64_t t = __atomic_load_n(&p->dev->timers.next, __ATOMIC_RELAXED);

	if (p->others)
		return p->next_look;
	if (!p->armed)
		t = RTE_MIN(t, now + ns_ticks(now - p->last_frame < ns_ticks(LINGER_NS) ?
					     NAP_BUSY_NS : NAP_NS));
	return t;
}

/* epoll_pwait2 (Linux 5.11) for naps below a millisecond; epoll_wait, the timeout rounded
 * up to milliseconds, where it is missing (older kernels, valgrind 3.19). */
static int pt_wait(struct epoll_event *evs, int max, const struct timespec *ts)
{
	static bool no_pwait2;
	int ms = -1, n;

	if (!no_pwait2) {
		n = epoll_pwait2(pt_epfd, evs, max, ts, NULL);
		if (n >= 0 || errno != ENOSYS)
			return n;
		no_pwait2 = true;
	}
	if (ts != NULL)
		ms = (int)RTE_MIN(ts->tv_sec * 1000 + (ts->tv_nsec + 999999) / 1000000,
				  (long)INT_MAX);
	return epoll_wait(pt_epfd, evs, max, ms);
}

static void *pt_main(void *arg)
{
	struct epoll_event evs[32];
	uint64_t quiet_until = 0, hz = rte_get_tsc_hz();

	(void)arg;
	/* a visitor: a thread polling a CQ never leaves a queue to it (progress.c) */
	dpv__rx_visiting = true;
	for (;;) {
		uint64_t now = rte_rdtsc(), wake = UINT64_MAX, v;
		struct timespec ts, *tsp = NULL;
		int n;

		pthread_mutex_lock(&pt_lock);
		if (pt_stop) {
			pthread_mutex_unlock(&pt_lock);
			return NULL;
		}
		for (unsigned int i = 0; i < pt_nb; i++) {
			struct pt_port *p = &pt_ports[i];

			if (p->others && now < p->next_look) {
				wake = RTE_MIN(wake, p->next_look);
				continue;
			}
			if (pt_look(p, now))
				quiet_until = now + ns_ticks(QUIET_NS);
			wake = RTE_MIN(wake, pt_deadline(p, now));
		}
		/* after a frame, looks every QUIET_NAP_NS until QUIET_NS pass without one: a
		 * nap, not a spin, gives the CPU back to the programs (perftest's spinning
		 * ends on a 2-core host), and the fds still wake it at once */
		if (now < quiet_until)
			wake = RTE_MIN(wake, now + ns_ticks(QUIET_NAP_NS));
		__atomic_store_n(&pt_sleeping, true, __ATOMIC_SEQ_CST);
		/* frames sent to a port's own loopback ring since the look: the kick may have
		 * found the thread awake */
		for (unsigned int i = 0; i < pt_nb; i++) {
			struct dpv_device *dev = pt_ports[i].dev;
			if (loop_pending(dev) > 0 &&
			    __atomic_load_n(&dev->progress_owned, __ATOMIC_RELAXED))
				wake = now;
		}
		pthread_mutex_unlock(&pt_lock);
		if (wake != UINT64_MAX) {
			uint64_t d = wake > now ? wake - now : 0;

			ts.tv_sec = (time_t)(d / hz);
			ts.tv_nsec = (long)((d % hz) * 1000000000ull / hz);
			tsp = &ts;
		}
		n = pt_wait(evs, RTE_DIM(evs), tsp);
		__atomic_store_n(&pt_sleeping, false, __ATOMIC_RELEASE);
		pthread_mutex_lock(&pt_lock);
		for (int k = 0; k < n; k++) {
			uint32_t slot = (uint32_t)(evs[k].data.u64 >> 32);
			uint32_t fi = (uint32_t)evs[k].data.u64;
			struct pt_port *p;

			if (evs[k].data.u64 == UINT64_MAX) {
				(void)!read(pt_kickfd, &v, sizeof(v));
				continue;
			}
			if (slot >= pt_nb)
				continue;          /* a port deleted since */
			p = &pt_ports[slot];
			if (fi < (uint32_t)p->nb_fd && p->fd_event[fi])
				(void)!read(p->fd[fi], &v, sizeof(v));
			/* a fd that keeps waking the thread with nothing to take (a PMD whose fd
			 * says something else): the port is napped on instead */
			if (rte_rdtsc() - p->last_frame > ns_ticks(QUIET_NS) &&
			    ++p->empty_wakes > EMPTY_WAKES_MAX) {
				VERBS_LOG(INFO, "device %s: its receive interrupts wake with "
					  "nothing received; looked at every %ld ms instead",
					  p->dev->ibdev.name, NAP_NS / 1000000);
				pt_arm(p, false);
				p->nb_fd = 0;
			}
		}
		pthread_mutex_unlock(&pt_lock);
	}
}

/* Set up the epoll set and the kick once; -errno. pt_lock held. */
static int pt_start(void)
{
	struct epoll_event ev = { .events = EPOLLIN, .data.u64 = UINT64_MAX };

	if (pt_running)
		return 0;
	if (pt_epfd < 0) {
		pt_epfd = epoll_create1(EPOLL_CLOEXEC);
		pt_kickfd = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
		if (pt_epfd < 0 || pt_kickfd < 0 ||
		    epoll_ctl(pt_epfd, EPOLL_CTL_ADD, pt_kickfd, &ev) != 0) {
			int rc = -errno;

			if (pt_epfd >= 0)
				close(pt_epfd);
			if (pt_kickfd >= 0)
				close(pt_kickfd);
			pt_epfd = pt_kickfd = -1;
			return rc;
		}
	}
	if (rte_ctrl_thread_create(&pt_thread, "dpv-progress", NULL, pt_main, NULL) != 0)
		return -EAGAIN;
	pt_running = true;
	return 0;
}

void dpv__progress_thread_add(struct dpv_device *dev)
{
	struct pt_port *p;

	if (!dpv__config()->progress_thread)
		return;
	pthread_mutex_lock(&pt_lock);
	for (unsigned int i = 0; i < pt_nb; i++)
		if (pt_ports[i].dev == dev)
			goto out;
	if (pt_nb == PT_MAX_DEVS || pt_stop)
		goto out;
	if (pt_start() != 0) {
		VERBS_LOG(WARNING, "no progress thread: a port is progressed only while the "
			  "program polls it (a peer's RC requests time out while it sleeps)");
		goto out;
	}
	p = &pt_ports[pt_nb];
	*p = (struct pt_port){ .dev = dev, .seen_polls = dpv__device_rx_polls(dev) };
	pt_fds(p);
	p->last_frame = rte_rdtsc();
	pt_nb++;
	VERBS_LOG(DEBUG, "device %s: progress thread %s", dev->ibdev.name,
		  p->nb_fd > 0 ? "woken by its receive interrupts" : "looks at it in naps");
out:
	pthread_mutex_unlock(&pt_lock);
	dpv__progress_kick();
}

void dpv__progress_thread_del(struct dpv_device *dev)
{
	pthread_mutex_lock(&pt_lock);
	for (unsigned int i = 0; i < pt_nb; i++) {
		if (pt_ports[i].dev != dev)
			continue;
		pt_arm(&pt_ports[i], false);
		__atomic_store_n(&dev->progress_owned, false, __ATOMIC_RELAXED);
		if (i != pt_nb - 1) {
			/* the last one takes the slot: its epoll data names the slot */
			struct pt_port *last = &pt_ports[pt_nb - 1];
			bool armed = last->armed;

			pt_arm(last, false);
			pt_ports[i] = *last;
			pt_arm(&pt_ports[i], armed);
		}
		pt_nb--;
		break;
	}
	pthread_mutex_unlock(&pt_lock);
}

void dpv__progress_thread_stop(void)
{
	uint64_t one = 1;
	bool join;

	pthread_mutex_lock(&pt_lock);
	pt_stop = true;
	join = pt_running;
	pt_running = false;
	for (unsigned int i = 0; i < pt_nb; i++) {
		pt_arm(&pt_ports[i], false);
		__atomic_store_n(&pt_ports[i].dev->progress_owned, false, __ATOMIC_RELAXED);
	}
	pt_nb = 0;
	pthread_mutex_unlock(&pt_lock);
	if (join) {
		(void)!write(pt_kickfd, &one, sizeof(one));
		pthread_join(pt_thread, NULL);
	}
	pthread_mutex_lock(&pt_lock);
	pt_stop = false;                 /* DPDK may start again (dpv_init after a close) */
	pthread_mutex_unlock(&pt_lock);
}
