/* SPDX-License-Identifier: BSD-3-Clause */
/* Bursts on ethdev queues. Every transmit burst takes its queue's lock: a queue becomes
 * shared when users outnumber queues, and an unlocked burst under way would race the new
 * user's. A receive queue is polled by one thread at a time (the layer above's lock). */

#include <rte_ethdev.h>
#include <rte_mbuf.h>

#include "ethdev_priv.h"

uint16_t dpv__eth_tx_burst(struct dpv_txq *q, struct rte_mbuf **pkts, uint16_t n)
{
	uint16_t sent;

	dpv__spinlock_lock(&q->lock);
	sent = rte_eth_tx_burst(q->port_id, q->qid, pkts, n);
	dpv__spinlock_unlock(&q->lock);
	return sent;
}

uint16_t dpv__eth_tx_prepare(struct dpv_txq *q, struct rte_mbuf **pkts, uint16_t n)
{
	return rte_eth_tx_prepare(q->port_id, q->qid, pkts, n);
}

void dpv__eth_tx_reap(struct dpv_txq *q)
{
	dpv__spinlock_lock(&q->lock);
	rte_eth_tx_done_cleanup(q->port_id, q->qid, 0);
	dpv__spinlock_unlock(&q->lock);
}

uint16_t dpv__eth_rx_burst(struct dpv_port *p, uint16_t queue, struct rte_mbuf **pkts,
			  uint16_t n)
{
	if (unlikely(p->spread != NULL))
		return dpv__eth_spread_rx(p, queue, pkts, n);
	return rte_eth_rx_burst(p->port_id, queue, pkts, n);
}
