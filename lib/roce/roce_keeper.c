/* SPDX-License-Identifier: BSD-3-Clause */
/* The keeper: a port with addresses answers ARP and IPv6 ND even while its program polls
 * nothing. A RoCE peer resolves our address when it creates its address handle or connects,
 * which is often while the program here waits in read() or sleep() for an out-of-band
 * exchange (ibv_ud_pingpong's TCP handshake; rxe gives ARP one second). A thread of the
 * library's own looks at the ports with addresses every KEEP_MS: one that nobody polled since
 * its last look (the poll counts of its receive queues did not move) is polled — its ARP/ND answered,
 * whatever else arrived delivered as any progress delivers it — and its timers run. While
 * RoCE frames keep arriving it polls again (up to KEEP_BURSTS bursts), and for KEEP_LINGER
 * looks after the last RoCE frame it looks every KEEP_BUSY_US rather than KEEP_MS: the
 * target of RDMA WRITEs and READs often polls nothing at all (perftest's ib_write_bw server
 * waits in read(), ib_write_lat spins on memory), and its responder must keep up as an RDMA
 * NIC's does. A port the program or a service lcore polls is never touched. The
 * thread starts with the first port that gets an address and stops before the ports close
 * at exit; it is an EAL control thread (rte_ctrl_thread_create), on the CPUs the EAL leaves
 * to control threads rather than on a busy-polling lcore's. */
#include <errno.h>
#include <pthread.h>
#include <time.h>

#include <rte_lcore.h>

#include "roce_port.h"

#define KEEP_MS 10
#define KEEP_BUSY_US 50    /* the pause while frames keep coming */
#define KEEP_BURSTS 256    /* polls in a row while each finds RoCE frames */
#define KEEP_LINGER 4000   /* looks at KEEP_BUSY_US after the last RoCE frame (~0.2 s) */
#define KEEP_MAX 64        /* ports looked after (devices of a process) */

static pthread_mutex_t keeper_lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_t keeper;
static bool keeper_running, keeper_stop;
/* the ports it looks at: every started RoCE port (a port without addresses is skipped) */
static struct dpv_roce_port *ports[KEEP_MAX];
static uint32_t seen_polls[KEEP_MAX];
static unsigned int nb_ports;

/* RoCE frames the port took so far (counted under rx_lock). */
static uint64_t roce_frames(struct dpv_device *dev)
{
	uint64_t n;

	dpv__spinlock_lock(&dev->rx_lock);
	n = dev->roce->cnt.rx;
	dpv__spinlock_unlock(&dev->rx_lock);
	return n;
}

/* Poll @rp's port if nobody did since the last look; true if RoCE frames came. */
static bool keep_one(struct dpv_roce_port *rp, uint32_t *seen)
{
	struct dpv_device *dev = rp->dev;
	uint32_t polls = dpv__device_rx_polls(dev);
	uint64_t before, now;
	bool busy = false;

	if (polls != *seen || __atomic_load_n(&rp->nb_addr, __ATOMIC_RELAXED) == 0) {
		*seen = polls;
		return false;
	}
	now = roce_frames(dev);
	for (int i = 0; i < KEEP_BURSTS; i++) {
		before = now;
		dpv__port_rx_poll(dev);
		dpv__device_timers_poll(dev);
		now = roce_frames(dev);
		if (now == before)
			break;
		busy = true;
	}
	*seen = dpv__device_rx_polls(dev);
	return busy;
}

static void *keeper_main(void *arg)
{
	const struct timespec idle = { 0, KEEP_MS * 1000000L }, busy = { 0, KEEP_BUSY_US * 1000L };
	bool active = false;
	unsigned int linger = 0;

	(void)arg;
	/* a visitor: a thread polling a CQ never leaves a queue to it (it looks every 10 ms,
	 * and less often on a busy host: RC peers timed out while the CQ's thread spun on
	 * without polling the queue the keeper had last polled) */
	dpv__rx_visiting = true;
	for (;;) {
		if (active)
			linger = KEEP_LINGER;
		else if (linger > 0)
			linger--;
		nanosleep(linger > 0 ? &busy : &idle, NULL);
		active = false;
		/* the lock keeps a port from stopping under the poll (dpv__roce_keeper_del) */
		pthread_mutex_lock(&keeper_lock);
		if (keeper_stop) {
			pthread_mutex_unlock(&keeper_lock);
			return NULL;
		}
		for (unsigned int i = 0; i < nb_ports; i++)
			active |= keep_one(ports[i], &seen_polls[i]);
		pthread_mutex_unlock(&keeper_lock);
	}
}

void dpv__roce_keeper_add(struct dpv_roce_port *rp)
{
	pthread_mutex_lock(&keeper_lock);
	for (unsigned int i = 0; i < nb_ports; i++)
		if (ports[i] == rp)
			goto out;
	if (nb_ports == RTE_DIM(ports))
		goto out;
	seen_polls[nb_ports] = dpv__device_rx_polls(rp->dev);
	ports[nb_ports++] = rp;
	if (!keeper_running && !keeper_stop) {
		/* a control thread: on the CPUs the EAL keeps for them (eal-intr-thread's), not
		 * on the lcore of the thread that got here, where its looks every KEEP_BUSY_US
		 * would take turns with a busy-polling main lcore */
		if (rte_ctrl_thread_create(&keeper, "dpv-keeper", NULL, keeper_main, NULL) == 0) {
			keeper_running = true;
		} else {
			VERBS_LOG(WARNING, "no thread to answer ARP/ND while the program polls "
				  "nothing: peers resolve this port only while it is polled");
		}
	}
out:
	pthread_mutex_unlock(&keeper_lock);
}

void dpv__roce_keeper_del(struct dpv_roce_port *rp)
{
	pthread_mutex_lock(&keeper_lock);
	for (unsigned int i = 0; i < nb_ports; i++)
		if (ports[i] == rp) {
			ports[i] = ports[--nb_ports];
			seen_polls[i] = seen_polls[nb_ports];
			break;
		}
	pthread_mutex_unlock(&keeper_lock);
}

void dpv__roce_keeper_stop(void)
{
	bool join;

	pthread_mutex_lock(&keeper_lock);
	keeper_stop = true;
	join = keeper_running;
	keeper_running = false;
	nb_ports = 0;
	pthread_mutex_unlock(&keeper_lock);
	if (join)
		pthread_join(keeper, NULL);
	pthread_mutex_lock(&keeper_lock);
	keeper_stop = false;             /* DPDK may start again (dpv_init after a close) */
	pthread_mutex_unlock(&keeper_lock);
}
