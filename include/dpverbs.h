/* SPDX-License-Identifier: BSD-3-Clause */
/* dpverbs: the libibverbs API on DPDK. Applications include <infiniband/verbs.h> and call the
 * standard ibv_* functions; this header adds what verbs has no word for: starting DPDK, and
 * what a port does in hardware or in software.
 *
 * Error convention (as rdma-core's verbs): functions returning int return 0 or a positive
 * errno; functions returning a pointer return NULL and set errno. */
#ifndef DPVERBS_H
#define DPVERBS_H

#include <stdbool.h>
#include <stdint.h>
#include <infiniband/verbs.h>

#include "dpverbs_offload.h"

#ifdef __cplusplus
extern "C" {
#endif

/**
 * dpv_init - start DPDK with EAL arguments, before any verbs call.
 * @argc, @argv: EAL arguments as rte_eal_init() takes them (argv[0] is the program name).
 *
 * Optional: without it the first verbs call that needs a device starts DPDK with the
 * arguments in the environment variable DPV_EAL_ARGS (split at white space). Either way
 * dpverbs adds --no-pci unless a device is named with -a/--allow, a file prefix of its own
 * (dpv-<pid>) unless --file-prefix is given, --in-memory (or --huge-unlink) so that no
 * hugepage file outlives the process, and --no-huge with a warning when no hugepages are free.
 *
 * Returns 0; EALREADY if DPDK runs already; EINVAL for arguments the EAL rejects (its message
 * names the argument); ENOMEM, EACCES... as rte_eal_init() reports them. Never exits the
 * program. After a failure dpv_init() may be called again with other arguments.
 */
int dpv_init(int argc, char **argv);

/** What a verbs device stands on: its DPDK port and how it transmits. */
struct dpv_port_info {
	uint16_t port_id;           /* DPDK ethdev port id */
	char name[64];              /* ethdev name: net_tap0, 0000:00:03.0 ... */
	char driver[32];            /* PMD name: net_tap, net_virtio ... */
	int socket_id;              /* NUMA socket of the port (-1: unknown) */
	uint32_t port_offloads;     /* enum dpv_offload: what the port offers (rte_eth_dev_info) */
	uint32_t hw_offloads;       /* enum dpv_offload: what dpverbs has the port do, for the
				     * frames it can do them for (doc/offload.md) */
	uint32_t sw_offloads;       /* enum dpv_offload: what dpverbs may do in software */
	enum dpv_offload_policy policy;
	bool tx_done_cleanup;       /* the PMD releases sent buffers on demand */
	bool zero_copy;             /* non-inline sends go from the MR without a copy */
	uint32_t tx_copy_max;       /* ... except frames up to this size, copied while posting */
	uint16_t tx_max_segs;       /* mbuf segments a frame may have on this port */
	uint16_t nb_tx_queues;      /* queues configured for QPs */
	uint16_t nb_rx_queues;
	uint32_t mtu;
	uint32_t max_frame;         /* largest frame the port sends (MTU + L2 header) */
};

/**
 * dpv_set_offload_policy - choose where @context's port computes checksums and segments TSO.
 * Applies to WRs posted afterwards, on every QP of the port. The default comes from
 * offload_policy in the configuration (AUTO).
 * Returns 0, or EINVAL for a NULL context or an unknown policy.
 */
int dpv_set_offload_policy(struct ibv_context *context, enum dpv_offload_policy policy);

/**
 * dpv_port_add_addr - give @context's port an IP address for RoCEv2 (doc/roce-addressing.md).
 * @addr: "a.b.c.d" or IPv6 text ("fd00::2", "fe80::1"), without a prefix length.
 *
 * The address gets the first empty GID index after 0 (::ffff:a.b.c.d for IPv4, the address
 * itself for IPv6; a RoCE v2 GID) and dpverbs answers ARP requests or IPv6 neighbour
 * solicitations for it on the port whenever the port is progressed. Every open context of
 * the device gets IBV_EVENT_GID_CHANGE. A port has none by default (the kernel's addresses of
 * a tap or veth interface are the kernel's); the configuration's port_addr lines give it
 * some when the device is first listed.
 * Returns 0; EINVAL for a NULL context or text that is not an address a port can own (not
 * IPv4 or IPv6, a prefix, unspecified, loopback, multicast, broadcast, IPv4-mapped IPv6);
 * EEXIST if the port has it (the link-local GID of index 0 included); ENOSPC when the GID
 * table is full (15 addresses).
 */
int dpv_port_add_addr(struct ibv_context *context, const char *addr);

/**
 * dpv_port_del_addr - take an address of dpv_port_add_addr (or of the configuration) off
 * @context's port. Its GID index becomes empty; IBV_EVENT_GID_CHANGE on every open context.
 * Returns 0; EINVAL as dpv_port_add_addr; ENOENT if the port does not have it (index 0, the
 * MAC's link-local GID, cannot be removed).
 */
int dpv_port_del_addr(struct ibv_context *context, const char *addr);

/** Transmit counters of a port (all QPs together, since the port was started). */
struct dpv_port_stats {
	uint64_t tx_frames;         /* frames the port took */
	uint64_t tx_bytes;
	uint64_t tx_copied;         /* non-TSO WRs sent from a copy */
	uint64_t tx_zero_copy;      /* non-TSO WRs sent from their MR */
	uint64_t tso_hw;            /* TSO WRs segmented by the port */
	uint64_t tso_sw;            /* TSO WRs segmented by dpverbs */
	uint64_t tso_segments_sw;   /* frames the software segmenter made */
	uint64_t csum_hw;           /* IP_CSUM frames whose checksums the port computed */
	uint64_t csum_sw;           /* IP_CSUM frames checksummed by dpverbs */
	uint64_t rx_frames;         /* frames received from the port */
	uint64_t rx_unsteered;      /* ... that no flow took (dropped) */
	uint64_t rx_no_wqe;         /* deliveries dropped: the QP had no receive WQE posted */
	/* RoCEv2 (doc/roce-ud.md, "UD receive"): frames to the port's GIDs or to a group one
	 * of its QPs is in */
	uint64_t rx_roce;           /* RoCEv2 frames the port's RoCE side took */
	uint64_t rx_roce_bad_icrc;  /* ... dropped: ICRC wrong */
	uint64_t rx_roce_malformed; /* ... dropped: headers (lengths, pad, BTH version, unknown
				     * opcode or not the QP's transport, P_Key) */
	uint64_t rx_roce_no_qp;     /* ... dropped: no QP of that number (or in that group)
				     * ready to receive */
	uint64_t rx_roce_bad_qkey;  /* ... dropped: the DETH's Q_Key is not the QP's */
	uint64_t tx_roce_loopback;  /* RoCE frames to the port's own GIDs, given to its receive
				     * side without the wire */
	uint64_t tx_ud_oversize;    /* UD messages above the path MTU: sent nothing, completed
				     * successfully (IBA C10-93.1.1) */
	/* TSC cycles of the port's receive side by stage, counted only when the configuration
	 * has cycle_stats = 1: rx_burst, classifying frames to QPs (flows), copying them into
	 * receive WQEs, writing their completions, freeing the mbufs; tsc_hz converts them. */
	uint64_t rx_cycles_burst, rx_cycles_classify, rx_cycles_copy, rx_cycles_cqe;
	uint64_t rx_cycles_free;
	uint64_t tsc_hz;
	/* ARP and IPv6 neighbour discovery of a port with addresses (doc/roce-addressing.md,
	 * "Neighbours") */
	uint64_t tx_nd;             /* requests and answers the port sent */
	uint64_t tx_nd_dropped;     /* ... that it could not send (no mbuf, queue full) */
	uint64_t rx_nd;             /* ARP/ND frames the port consumed (its own come back too) */
	uint64_t rx_nd_malformed;   /* ... among them malformed (ignored) */
};

/**
 * dpv_query_port_stats - the transmit counters of @context's port.
 * Returns 0, or EINVAL for NULL arguments.
 */
int dpv_query_port_stats(struct ibv_context *context, struct dpv_port_stats *stats);

/**
 * dpv_query_port_info - describe the DPDK port behind a verbs device.
 * @context: an open device.
 * @info: filled on success.
 * Returns 0, or EINVAL if @context or @info is NULL.
 */
int dpv_query_port_info(struct ibv_context *context, struct dpv_port_info *info);

/**
 * dpv_offload_name - the DPDK name of one offload bit ("TCP_TSO", "IPV4_CKSUM" ...).
 * Returns "unknown" for anything but a single enum dpv_offload bit.
 */
const char *dpv_offload_name(enum dpv_offload offload);

/**
 * dpv_eal_args - the EAL arguments DPDK was started with, dpverbs' additions included.
 * Returns an empty string before DPDK started.
 */
const char *dpv_eal_args(void);

/**
 * dpv_dma_range_count - how many page ranges outside DPDK's memory dpverbs has registered
 * with DPDK and DMA-mapped for the ports on behalf of MRs (diagnostics; see doc/memory.md).
 */
unsigned int dpv_dma_range_count(void);

/**
 * The resource_type with which dpverbs calls a parent domain's allocator and free function
 * (ibv_alloc_parent_domain(3), IBV_PARENT_DOMAIN_INIT_ATTR_ALLOCATORS): which ring of a queue
 * it asks for. Other bookkeeping of a queue stays in dpverbs' own memory.
 */
enum dpv_alloc_resource {
	DPV_RES_SQ = 1,        /* a QP's send queue: one slot per WR */
	DPV_RES_RQ = 2,        /* a QP's receive queue: one WQE per receive */
	DPV_RES_SRQ = 3,       /* an SRQ's WQEs */
	DPV_RES_CQ = 4,        /* a CQ's completions (ibv_create_cq_ex with the parent domain) */
};

/** How a QP's send queue makes progress (doc/architecture.md, "Progress models"). */
enum dpv_progress {
	/* The posting thread builds the frames and hands them to the port in the same call;
	 * polling the CQ reaps completions. The default. */
	DPV_PROGRESS_DIRECT = 0,
	/* The posting thread checks the WRs and builds their frames; a service lcore hands them
	 * to the port in bursts, reaps, completes, and polls the port's receive queues. */
	DPV_PROGRESS_SERVICE = 1,
};

/**
 * dpv_qp_set_progress - choose how @qp makes progress (the process-wide default is the
 * configuration's progress key).
 * Only in RESET: a QP in another state answers EBUSY. A service-mode QP gets a service lcore
 * when it moves to INIT (ibv_modify_qp answers ENODEV, with a log naming the fix, when the
 * EAL has no free worker lcore).
 * Returns 0; EINVAL for a NULL QP, an unknown mode or a QP that is not RAW_PACKET.
 */
int dpv_qp_set_progress(struct ibv_qp *qp, enum dpv_progress mode);

/**
 * dpv_thread_register - give the calling thread, one the EAL did not start, an lcore id of
 * its own (rte_thread_register), so that the mbufs it takes and frees go through a per-lcore
 * mempool cache instead of the pool's shared ring. Optional: any thread may post; a thread
 * that posts a lot is faster registered. EAL lcores are registered already (0 at once).
 * Call dpv_thread_unregister() before the thread ends.
 * Returns 0; ENOSPC when every lcore id (RTE_MAX_LCORE) is taken; as dpv_init otherwise.
 */
int dpv_thread_register(void);

/** dpv_thread_unregister - give back the calling thread's lcore id (no-op for EAL lcores). */
void dpv_thread_unregister(void);

/**
 * dpv_service_lcore_start - run dpverbs' service loop on EAL worker @lcore.
 * Optional: a service-mode QP starts one itself on a free worker lcore of its port's NUMA
 * socket. Use it to choose the lcore, or to resume one stopped with dpv_service_lcore_stop.
 * Returns 0 (also when it runs already); EINVAL if @lcore is not a worker lcore of the EAL;
 * EBUSY if the lcore runs something else.
 */
int dpv_service_lcore_start(unsigned int lcore);

/**
 * dpv_service_lcore_stop - stop the service loop on @lcore; returns once it stopped.
 * The QPs it served keep their WRs queued (no completion) until the lcore is started again,
 * or they are moved to ERR (flushed: IBV_WC_WR_FLUSH_ERR) or destroyed. The lcore is not
 * started again for new QPs by itself.
 * Returns 0, or EINVAL if no service loop runs on @lcore.
 */
int dpv_service_lcore_stop(unsigned int lcore);

/* ---- for tools: dpv-testpmd's view of ports, QPs and CQs (lib/verbs/port_ctl.c) ---- */

/** One extended statistic of a port, as its DPDK PMD names it ("rx_good_packets" ...). */
struct dpv_xstat {
	char name[64];
	uint64_t value;
};

/**
 * dpv_query_port_xstats - the DPDK extended statistics of @context's port.
 * @xstats: room for *@n entries (may be NULL when *@n is 0).
 * @n: in: the room; out: how many statistics the port has (fill the first min(in, out)).
 * Returns 0; EINVAL for a NULL context or n; EOPNOTSUPP if the port's driver has none.
 */
int dpv_query_port_xstats(struct ibv_context *context, struct dpv_xstat *xstats, unsigned int *n);

/**
 * dpv_set_offload_software - offloads that always run in software on @context's port,
 * whatever its policy (testpmd's "csum set udp sw"): the others keep following the policy.
 * @offloads: enum dpv_offload bits; 0 gives every offload back to the policy. Under the
 * HARDWARE policy, the bits given here are the ones software may do.
 * Applies to WRs posted afterwards, on every QP of the port; starts at 0 when the port starts.
 * Returns 0; EINVAL for a NULL context or bits outside enum dpv_offload; EOPNOTSUPP if the
 * port's driver cannot choose per offload.
 */
int dpv_set_offload_software(struct ibv_context *context, uint32_t offloads);

/** What a QP holds and has done (a snapshot taken under the QP's lock). */
struct dpv_qp_counters {
	enum ibv_qp_state state;
	uint8_t port_num;
	uint32_t sq_size;           /* send WRs the SQ holds (max_send_wr as written back) */
	uint32_t sq_used;           /* slots taken: posted WRs whose slot is not free yet */
	uint32_t sq_unsent;         /* posted, not yet taken by the port */
	uint32_t sq_in_flight;      /* taken by the port, not yet completed */
	uint32_t rq_size;           /* receive WQEs the RQ holds */
	uint32_t rq_posted;         /* receive WQEs waiting for a frame */
	uint32_t nb_flows;
	uint64_t tx_wrs;            /* send WRs accepted by ibv_post_send */
	uint64_t tx_bytes;          /* ... their bytes */
	uint64_t tx_frames;         /* frames (TSO WRs: packets) the port took */
	uint64_t tx_errors;         /* WRs that failed when they executed */
	uint64_t tx_completed;      /* send WRs completed, signaled or not, errors and flushes too */
	uint64_t rx_wrs;            /* receive WRs accepted by ibv_post_recv */
	uint64_t rx_completed;
	enum dpv_progress progress;
	int service_lcore;          /* the lcore serving it (service mode, after INIT), else -1 */
	/* TSC cycles by stage, counted only when the configuration has cycle_stats = 1: checking
	 * WRs and building frames (while posting, or on the service lcore), handing them to the
	 * port (per burst), writing completions; tsc_hz converts them to time. */
	uint64_t cycles_validate, cycles_build, cycles_burst, cycles_complete;
	uint64_t tsc_hz;
	uint64_t cycles_recv_post;  /* ... and in ibv_post_recv (same condition) */
};

/**
 * dpv_query_qp_counters - state, queue occupancy and counters of a dpverbs QP.
 * Returns 0, or EINVAL for NULL arguments.
 */
int dpv_query_qp_counters(struct ibv_qp *qp, struct dpv_qp_counters *counters);

/** What a CQ holds. */
struct dpv_cq_counters {
	uint32_t size;              /* completions it holds (cqe) */
	uint32_t pending;           /* completions waiting to be polled */
	uint32_t nb_qp;             /* QPs completing into it */
	bool armed;                 /* ibv_req_notify_cq armed it */
	bool overrun;               /* a completion was lost (IBV_EVENT_CQ_ERR) */
	/* with cycle_stats = 1: TSC cycles ibv_poll_cq spent taking completions out (the
	 * progress it drives not included), and the completions it took */
	uint64_t cycles_poll, polled;
};

/**
 * dpv_query_cq_counters - size, occupancy and state of a dpverbs CQ.
 * Returns 0, or EINVAL for NULL arguments.
 */
int dpv_query_cq_counters(struct ibv_cq *cq, struct dpv_cq_counters *counters);

/* ---- fault injection (doc/faults.md): test a transport against loss, disorder, corruption ---- */

/** Directions fault injection acts on (a bit set). */
enum dpv_fault_dirs {
	DPV_FAULT_RX = 1 << 0,  /* every frame the port receives (the wire and RoCE loopback) */
	DPV_FAULT_TX = 1 << 1,  /* frames the RoCE transports and ARP/ND hand to the port */
};

/** Fractions of frames, in parts per million (0 .. 1000000), and the generator's seed. */
struct dpv_faults {
	uint32_t drop_ppm;          /* freed, never delivered */
	uint32_t dup_ppm;           /* delivered twice (a copy right behind it) */
	uint32_t reorder_ppm;       /* held back behind the frames of 1..3 later bursts */
	uint32_t corrupt_ppm;       /* one byte of the frame's second half inverted */
	uint64_t seed;              /* the same seed and traffic give the same decisions */
};

/** What fault injection did in one direction since the port started. */
struct dpv_fault_stats {
	uint64_t seen, dropped, duplicated, reordered, corrupted;
};

/**
 * dpv_set_port_faults - inject faults into the frames of @context's port (every context of
 * the port sees them). All rates zero turns a direction off (frames it holds come out on the
 * next bursts). The configuration's fault_* keys set every port's faults when it starts.
 * @dirs: DPV_FAULT_RX and/or DPV_FAULT_TX.
 * Returns 0; EINVAL for a NULL argument, no or unknown direction, or a rate above 1000000.
 */
int dpv_set_port_faults(struct ibv_context *context, unsigned int dirs,
			const struct dpv_faults *faults);

/**
 * dpv_query_port_faults - the faults in force in one direction of @context's port and what
 * they did. @faults or @stats may be NULL.
 * Returns 0; EINVAL for a NULL context or a @dir that is not exactly one direction.
 */
int dpv_query_port_faults(struct ibv_context *context, enum dpv_fault_dirs dir,
			  struct dpv_faults *faults, struct dpv_fault_stats *stats);

#ifdef __cplusplus
}
#endif
#endif
