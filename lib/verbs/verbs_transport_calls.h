/* SPDX-License-Identifier: BSD-3-Clause */
/* What the verbs core still reaches by name in the transports, RAW_PACKET (lib/raw) and
 * RoCEv2 (lib/roce), and what of theirs is declared in the core. Issue 27 replaces these with
 * tables the transports register (the core then names no transport); until then this is the
 * list of the seams, kept apart from the core's own headers.
 *
 * The symbols libdpv_verbs.a links to in the transports' archives (nm: undefined in
 * libdpv_verbs.a, defined in libdpv_raw.a or libdpv_roce.a):
 *   RAW (4):   dpv_raw_transport (raw_qp.c); dpv__create_flow, dpv__destroy_flow,
 *              dpv__device_flows_init (flow.c)
 *   RoCE (10): dpv_ud_transport (ud_qp.c), dpv_rc_transport (rc_qp.c),
 *              dpv_roce_neigh_transport (roce_neigh.c), dpv__roce_port_init and
 *              dpv__roce_port_start (roce_addr.c) — declared below; dpv__roce_gid_get,
 *              dpv__roce_neigh_stats, dpv__roce_keeper_stop (lib/roce/dpv_roce.h),
 *              dpv__roce_active_mtu (lib/roce/roce_wire.h) and ibv_destroy_ah (the public
 *              API, roce_ah.c, called at ibv_close_device) — declared in lib/roce.
 * Also the transports' state the core keeps for them: the RoCE loopback's ICRC flag below
 * (progress.c), and fields of struct dpv_device (verbs_device.h): RAW's flows, steer,
 * sniffers, rxq_owner and raw_loop; RoCE's roce, roce_cnt, roce_qps, loop, mcasts and
 * nb_mcast. */
#ifndef DPV_VERBS_TRANSPORT_CALLS_H
#define DPV_VERBS_TRANSPORT_CALLS_H

#include <stdbool.h>
#include <stdint.h>

#include <infiniband/verbs.h>
#include "verbs_device.h"
#include "verbs_qp.h"

struct rte_mbuf;

/* ---- RAW_PACKET (lib/raw): what the core calls ---- */

extern const struct dpv_transport_ops dpv_raw_transport;

struct ibv_flow *dpv__create_flow(struct ibv_qp *qp, struct ibv_flow_attr *attr);
int dpv__destroy_flow(struct ibv_flow *flow);
void dpv__device_flows_init(struct dpv_device *dev);

/* ---- RoCEv2 (lib/roce): what the core calls ---- */

extern const struct dpv_transport_ops dpv_ud_transport;
/* RC and UC over RoCEv2 (lib/roce/rc_qp.c): the RC/UC engine behind verbs QPs. */
extern const struct dpv_transport_ops dpv_rc_transport;
/* ARP and IPv6 ND of a port with addresses (lib/roce/roce_neigh.c): only .port_rx. */
extern const struct dpv_transport_ops dpv_roce_neigh_transport;

/* RoCEv2 port state (lib/roce/roce_addr.c): made with the device (its configured addresses
 * added), told when the port starts and stops; -ENOMEM. The GID table itself is read through
 * lib/roce/dpv_roce.h. */
int dpv__roce_port_init(struct dpv_device *dev);
void dpv__roce_port_start(struct dpv_device *dev, bool started);

/* ---- RoCEv2 loopback state the core keeps (progress.c) for lib/roce ---- */

/* The mbuf flag (a registered dynamic ol_flags bit; 0 before the first ibv_open_device, or
 * when DPDK has no bit left) of a RoCE frame built for the loopback ring without its ICRC: it
 * never reaches a wire, so nothing can corrupt it on the way (doc/roce.md, "Loopback"). */
extern uint64_t dpv__loop_no_icrc;
/* Register that flag (once a process; at every ibv_open_device, so that the memory DPDK keeps
 * for it is there from the first open on, as the EAL's is). Without it nothing is left out. */
void dpv__loop_flag_init(void);
/* May a frame for @dev's own loopback be built without its ICRC now? Only when nobody could
 * see or damage it: no SNIFFER rule on the port (they get RoCE frames too, whole) and no
 * receive fault injection (corruption must die on the ICRC). The receive side checks again
 * (a sniffer or a fault that arrived meanwhile): dpv__roce_port_rx. */
static inline bool dpv__device_loop_icrc_skip(struct dpv_device *dev)
{
	return dpv__loop_no_icrc != 0 && !__atomic_load_n(&dev->fault_on[0], __ATOMIC_RELAXED) &&
	       __atomic_load_n(&dev->sniffers, __ATOMIC_RELAXED) == 0;
}

/* ---- RAW_PACKET's own functions, declared here but called only within lib/raw (they
 * belong in lib/raw/raw_priv.h) ---- */

void dpv__qp_mcast_detach_all(struct dpv_qp *qp);
/* RAW_PACKET's ibv_attach_mcast/ibv_detach_mcast (a flow per group MAC). */
int dpv__raw_mcast(struct dpv_qp *qp, const union ibv_gid *gid, bool attach);

/* RAW_PACKET (lib/raw): receive steering of the device, and its QPs' send paths. */
void dpv__raw_port_rx(struct dpv_device *dev, struct dpv_rxq *q, struct rte_mbuf **pkts,
		      uint16_t n, uint64_t *taken);

int dpv__raw_post_list(struct dpv_qp *qp, struct ibv_send_wr *wr, struct ibv_send_wr **bad_wr);
int dpv__raw_post_send(struct dpv_qp *qp, struct ibv_send_wr *wr, struct ibv_send_wr **bad_wr);
int dpv__raw_post_send_fast(struct dpv_qp *qp, struct ibv_send_wr *wr,
			   struct ibv_send_wr **bad_wr);
/* Service mode: the posting thread's fast path (descriptors), and the service lcore's
 * (bursts of them built, sent and completed in one go; the generic kick takes the rest:
 * false when some of what was posted when it started is left to it). */
int dpv__raw_post_send_svc(struct dpv_qp *qp, struct ibv_send_wr *wr,
			   struct ibv_send_wr **bad_wr);
bool dpv__raw_service_send(struct dpv_qp *qp);
void dpv__raw_progress(struct dpv_qp *qp);
void dpv__raw_flush(struct dpv_qp *qp);
bool dpv__raw_reset(struct dpv_qp *qp);

#endif
