/* SPDX-License-Identifier: BSD-3-Clause */
/* The seam between the verbs core and the layers above it (lib/raw, lib/roce): three kinds
 * of tables those layers register, as drivers register theirs (dpv_driver.h), and through
 * which alone the core calls them (transport.c keeps the registrations):
 *   - a QP transport per QP type: what the type means on the wire (create ... flush, and
 *     deliver for a frame a receiver demultiplexed to one of its QPs);
 *   - port receivers: each received burst is offered to them in their order;
 *   - device hooks: a layer's state on each device (init, start/stop, the port's attributes
 *     and statistics it owns, the objects it leaves on a closing context).
 * The core names no transport: `meson test layers` fails on a symbol of lib/raw or lib/roce
 * that lib/verbs links to. doc/contributing.md says how to add a transport. */
#ifndef DPV_VERBS_TRANSPORT_H
#define DPV_VERBS_TRANSPORT_H

#include <stdbool.h>
#include <stdint.h>

#include <infiniband/verbs.h>

struct dpv_context;
struct dpv_cqe_batch;
struct dpv_device;
struct dpv_port_stats;
struct dpv_qp;
struct dpv_rxq;
struct rte_mbuf;
struct verbs_context;

/* A QP transport: what a QP type means on the wire, chosen once at ibv_create_qp. Every op
 * runs with the QP's lock held unless it says otherwise; ops return 0 or a negative errno. */
struct dpv_transport_ops {
	const char *name;
	/* Check the type's creation attributes and set qp->lim (the QP is not yet visible). */
	int (*create)(struct dpv_qp *qp, struct ibv_qp_init_attr_ex *attr);
	/* Undo create and everything later transitions set up (QP lock not held). */
	void (*destroy)(struct dpv_qp *qp);
	/* Before the QP enters @next (control lock held): set up what that state needs. */
	int (*prepare_state)(struct dpv_qp *qp, enum ibv_qp_state next);
	/* Walk and post a list (QP lock taken inside: the fast path may avoid it). */
	int (*post_send)(struct dpv_qp *qp, struct ibv_send_wr *wr, struct ibv_send_wr **bad_wr);
	/* Send-side progress: hand queued frames out, reap, complete. */
	void (*progress)(struct dpv_qp *qp);
	/* ERR: every WR not yet executed completes with FLUSH_ERR. */
	void (*flush)(struct dpv_qp *qp);
	/* RESET: forget every WR; false if buffers are still held (the SQ must then stay). */
	bool (*reset)(struct dpv_qp *qp);
	/* ibv_attach_mcast (@attach) and ibv_detach_mcast on a QP of this type (no lock held);
	 * @gid NULL, detaching: every group of the QP (ibv_destroy_qp, before the receive side
	 * lets go of the QP: no frame reaches it through a group afterwards). */
	int (*mcast)(struct dpv_qp *qp, const union ibv_gid *gid, bool attach);
	/* Service mode: may this transport's QPs be progressed by a service lcore? */
	bool service;
	/* Optional (NULL: the core's attributes only). Check and keep the attributes of @mask
	 * that the core does not keep (RC/UC: the path, PSNs, timers), before the QP enters its
	 * next state (control lock held). */
	int (*modify)(struct dpv_qp *qp, const struct ibv_qp_attr *attr, int mask);
	/* Optional: fill what modify and rate_limit kept into @attr (ibv_query_qp; control lock
	 * held). */
	void (*query)(struct dpv_qp *qp, struct ibv_qp_attr *attr);
	/* Optional (NULL: IBV_QP_RATE_LIMIT is EINVAL): pace the QP's sends at @kbps (0: not
	 * paced) with a bucket of @burst bytes (0: the default), from ibv_modify_qp or
	 * ibv_modify_qp_rate_limit; -EINVAL for a rate out of packet_pacing_caps. Before the QP
	 * enters its next state (control lock held). */
	int (*rate_limit)(struct dpv_qp *qp, uint32_t kbps, uint32_t burst);
	/* Optional: in SQD, is every WR the transport started done? (NULL: every WR it executed,
	 * [done, sent), has completed; RAW and UD start nothing in SQD.) QP lock held. */
	bool (*sq_drained)(struct dpv_qp *qp);
	/* Optional: a received frame @frame that a port receiver demultiplexed to @qp, with
	 * what the receiver parsed of it (@parsed: that receiver's and this transport's shared
	 * type, e.g. lib/roce's struct dpv_roce_frame). The receiver holds the QP's lock
	 * (dpv__qp_rx_hold) and pushes @batch's completions before letting it go; the result is
	 * the receiver's own code for what happened (what it counts). */
	int (*deliver)(struct dpv_qp *qp, const uint8_t *frame, const void *parsed,
		       struct dpv_cqe_batch *batch);
	/* Optional: the receiver is about to let go of @qp after delivering to it (lock held):
	 * what one answer covers for the whole burst goes out now (RC: one ACK). */
	void (*rx_done)(struct dpv_qp *qp);
};

/* What the core does differently for a QP type when it creates one (the only place the
 * core looks at the type: dpv_create_qp_ex finds this entry and keeps its flags). */
enum {
	DPV_QPT_XRC_TARGET = 1u << 0,   /* an XRC domain instead of a PD; no CQs, no queues of
					 * its own; ibv_open_qp may share it */
	DPV_QPT_NO_RECV = 1u << 1,      /* no receive side (XRC_SEND): no recv CQ, no SRQ */
};

/* A QP type as a transport registers it. */
struct dpv_qp_type {
	enum ibv_qp_type type;
	unsigned int flags;             /* DPV_QPT_* */
	/* receive WQEs a QP of this type takes from its SRQ before completing any (one per
	 * message under way; RAW a whole burst) */
	uint16_t srq_wqes;
	const struct dpv_transport_ops *ops;
};

/* A port receiver: takes frames from every burst a port receives, before the receivers
 * after it. Bit i of *@taken set: frame i was taken by a receiver before; a receiver sets
 * the bits of what it takes and leaves taken frames alone (RAW_PACKET's SNIFFER flows
 * still see them). */
struct dpv_port_receiver {
	const char *name;
	int order;                      /* receivers see a burst in increasing order */
	/* One burst of @dev (no QP lock held; the device's rx_lock held: one burst at a time
	 * per device). A receiver counts its users on the device (dpv__device_rx_users): a
	 * port nobody receives from is not polled. */
	void (*rx)(struct dpv_device *dev, struct rte_mbuf **pkts, uint16_t n, uint64_t *taken);
	/* The same, told the receive queue @q the burst came from; it may run for different
	 * queues of one device at once (the receiver guards what their bursts share). Used
	 * instead of rx when set; no rx_lock. */
	void (*rx_queue)(struct dpv_device *dev, struct dpv_rxq *q, struct rte_mbuf **pkts,
			 uint16_t n, uint64_t *taken);
	/* Optional, with rx: true while a burst of @dev would find nothing to do here (read
	 * without any lock, on every burst): the burst skips rx and the rx_lock it takes.
	 * Whoever changes what it reads and then waits for rx_lock to be let go still finds
	 * every burst that saw the old value holding it. */
	bool (*idle)(const struct dpv_device *dev);
};

/* A layer's state on each device. Every hook is optional. */
struct dpv_device_hooks {
	const char *name;
	/* A device is made (once a process per port; device lock held): -ENOMEM. */
	int (*init)(struct dpv_device *dev);
	/* Its port started (@started) or is about to stop (device lock held). */
	void (*start)(struct dpv_device *dev, bool started);
	/* ibv_query_port: fill the attributes this layer owns (RoCE: MTU, GID table). */
	void (*query_port)(struct dpv_device *dev, struct ibv_port_attr *attr);
	/* dpv_query_port_stats: fill the counters this layer keeps (any thread). */
	void (*stats)(struct dpv_device *dev, struct dpv_port_stats *stats);
	/* A context opens: the verbs of this layer's objects that live in the context's op
	 * table (RAW: ibv_create_flow). */
	void (*context_init)(struct dpv_context *ctx, struct verbs_context *vctx);
	/* A context closes with objects of this layer left: destroy them and return how many,
	 * before its QPs are destroyed (RAW: flows) and after (RoCE: address handles). */
	unsigned int (*release_before_qps)(struct dpv_context *ctx);
	unsigned int (*release_after_qps)(struct dpv_context *ctx);
};

/* Registration, from constructors (the macros below); the core reads the tables only once
 * a device is scanned. Types: one transport per type (a second is refused with a log). */
void dpv__qp_types_register(const struct dpv_qp_type *types, unsigned int n);
void dpv__port_receiver_register(const struct dpv_port_receiver *r);
void dpv__device_hooks_register(const struct dpv_device_hooks *h);

#define DPV_QP_TYPES_REGISTER(nm, array) \
	__attribute__((constructor)) static void dpv_qp_types_init_ ## nm(void) \
	{ dpv__qp_types_register(array, sizeof(array) / sizeof((array)[0])); }
#define DPV_PORT_RECEIVER_REGISTER(nm, recv) \
	__attribute__((constructor)) static void dpv_port_receiver_init_ ## nm(void) \
	{ dpv__port_receiver_register(&(recv)); }
#define DPV_DEVICE_HOOKS_REGISTER(nm, hooks) \
	__attribute__((constructor)) static void dpv_device_hooks_init_ ## nm(void) \
	{ dpv__device_hooks_register(&(hooks)); }

/* Call hook @fn of every registered hook set that has it, in registration order. */
#define DPV_HOOKS_CALL(fn, ...) \
	do { \
		for (int hook_i_ = 0; dpv__device_hooks[hook_i_] != NULL; hook_i_++) \
			if (dpv__device_hooks[hook_i_]->fn != NULL) \
				dpv__device_hooks[hook_i_]->fn(__VA_ARGS__); \
	} while (0)

/* What the core reads (transport.c). */
const struct dpv_qp_type *dpv__qp_type_find(enum ibv_qp_type type);
/* The receivers in order, NULL-terminated. */
extern const struct dpv_port_receiver *dpv__port_receivers[];
/* Each registered hook set in order, NULL-terminated. */
extern const struct dpv_device_hooks *dpv__device_hooks[];

#endif
