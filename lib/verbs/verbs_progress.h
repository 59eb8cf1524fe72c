/* SPDX-License-Identifier: BSD-3-Clause */
/* Progress (progress.c): polling a port's receive queues and handing bursts to the
 * transports, the port's timers, progressing a context's QPs, and the loopback ring of frames
 * a port sends to itself. */
#ifndef DPV_VERBS_PROGRESS_H
#define DPV_VERBS_PROGRESS_H

#include <stdbool.h>
#include <stdint.h>

#include <infiniband/verbs.h>
#include "verbs_device.h"

struct dpv_cq;
struct dpv_qp;
struct rte_mbuf;

/* Receive what @dev's port has; progress every QP of @ctx (those in a thread domain only
 * from their own CQs, @polled, or a CQ on @waited) and its port, as polling a CQ does. */
void dpv__port_rx_poll(struct dpv_device *dev);
/* Receive queue @q of @dev's port, one burst if nobody else polls it now. */
void dpv__rxq_poll(struct dpv_device *dev, struct dpv_rxq *q);
/* The port's timers (RC's ACK and RNR timers), unless a receive queue is held by a poller
 * that made no progress since the last look: returns how many fired. */
unsigned int dpv__device_timers_poll(struct dpv_device *dev);
/* Set by a thread that polls ports only now and then (the progress thread, a resolve): its
 * polls never make it a queue's poller, to which CQ pollers would leave the queue. */
extern __thread bool dpv__rx_visiting;

/* The port's receive queues' poll counts, summed (someone polled the port since). */
uint32_t dpv__device_rx_polls(struct dpv_device *dev);
/* The port's receive queues' counters, summed (and the device's own, for transports that
 * count there). */
void dpv__device_rx_stats(struct dpv_device *dev, uint64_t *frames, uint64_t *unsteered,
			  uint64_t *no_wqe, uint64_t *cyc);
/* Set up @dev's receive queues once its port started. -ENOMEM. */
int dpv__device_rx_init(struct dpv_device *dev);

void dpv__context_progress(struct dpv_context *ctx, struct dpv_cq *polled,
			  const struct ibv_comp_channel *waited);
void dpv__context_qp_add(struct dpv_context *ctx, struct dpv_qp *qp);
void dpv__context_qp_del(struct dpv_context *ctx, struct dpv_qp *qp);
/* Wait until no thread is inside @dev's receive side: what was unpublished before (a
 * steering table, a QP number) is seen by nobody. Not from a receive path. */
void dpv__device_rx_quiesce(struct dpv_device *dev);

/* The progress thread (progress_thread.c): it progresses the started ports of open devices
 * that nobody else polls, woken by their receive interrupts, their timers or a kick. add
 * when a port starts, del before it stops (device lock held); stop at exit, before the
 * ports close; kick: frames went to a port's loopback ring (wakes a sleeping thread). */
void dpv__progress_thread_add(struct dpv_device *dev);
void dpv__progress_thread_del(struct dpv_device *dev);
void dpv__progress_thread_stop(void);
void dpv__progress_kick(void);

/* Loopback (progress.c): the ring of frames @dev's port receives from itself, created once;
 * -ENOMEM. dpv__device_loopback hands it frames (multi-producer), returns how many it took
 * (a full ring takes fewer: the caller keeps the rest, as when a port queue is full). */
int dpv__device_loop_init(struct dpv_device *dev);
unsigned int dpv__device_loopback(struct dpv_device *dev, struct rte_mbuf **m, unsigned int n);
/* Free what the ring still holds, and the ring (the ports are closing). */
void dpv__device_loop_fini(struct dpv_device *dev);

#endif
