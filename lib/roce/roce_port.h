/* SPDX-License-Identifier: BSD-3-Clause */
/* A port's RoCEv2 state, private to lib/roce: its GID table (roce_addr.c) and its neighbours
 * (roce_neigh.c). One per verbs device (struct dpv_device.roce), made with the device and
 * never freed while the process runs, as devices are not. */
#ifndef DPV_ROCE_PORT_H
#define DPV_ROCE_PORT_H

#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>
#include <sys/queue.h>

#include "dpv_lock.h"
#include "dpv_roce.h"
#include "verbs_priv.h"

enum dpv_neigh_state {
	DPV_NEIGH_FREE,
	DPV_NEIGH_INCOMPLETE,      /* being resolved: replies are taken for it */
	DPV_NEIGH_VALID,           /* @mac known since @confirmed */
};

/* A peer's MAC as learned from ARP or ND (roce_neigh.c). */
struct dpv_roce_neigh {
	uint8_t ip[16];            /* a GID: IPv4-mapped or IPv6 */
	uint8_t mac[6];
	uint8_t state;             /* enum dpv_neigh_state */
	uint16_t waiters;          /* resolutions waiting for it */
	uint64_t confirmed;        /* TSC of the last reply or request that told us */
};

#define DPV_ROCE_NEIGH_MAX 256

/* What the RoCE receive path dropped, and what RoCE sent without the wire (per device;
 * dpv_port_stats). The rx_* ones are counted under the device's rx_lock. */
struct dpv_roce_counters {
	uint64_t rx;               /* RoCEv2 frames to the port's GIDs (or its groups) taken */
	uint64_t rx_bad_icrc;      /* dropped: ICRC wrong */
	uint64_t rx_malformed;     /* dropped: lengths, BTH version, opcode, P_Key */
	uint64_t rx_no_qp;         /* dropped: no receiving QP of that number (or group) */
	uint64_t rx_bad_qkey;      /* dropped: Q_Key of another QP */
	uint64_t tx_loopback;      /* frames to the port's own GIDs given to its receive side */
	uint64_t tx_oversize;      /* UD messages above the path MTU: nothing sent (atomic) */
};

struct dpv_roce_port {
	struct dpv_device *dev;
	int qps;                   /* RoCE QPs of the port (__atomic): while there is none, RoCE
				    * takes no frame (RAW_PACKET's steering sees them all) */
	struct dpv_roce_counters cnt;
	TAILQ_HEAD(dpv_mcast_list, dpv_mcast) mcasts;   /* UD group attachments, changed under
							 * the device's rx_lock */
	int nb_mcast;              /* ... how many (__atomic: the send side looks unlocked) */
	/* The GID table, read without a lock (a sequence lock: readers retry while a writer
	 * changes it; every word is accessed atomically, so no read is ever torn). An all-zero
	 * entry is empty. Written under @lock only. */
	uint32_t seq;
	uint64_t gid[DPV_ROCE_GID_TBL_LEN][2];
	int nb_addr;               /* entries after 0 in use (__atomic): ARP/ND is answered */
	pthread_mutex_t lock;      /* address changes, port start and stop */
	bool started;              /* (__atomic) the port runs */
	int resolving;             /* (__atomic) dpv__roce_resolve calls waiting for replies */
	/* transmitting ARP/ND frames: a queue of the port's, shared with QPs (the driver
	 * serializes bursts on a queue), taken by the first frame, let go when the port stops */
	dpv_spinlock_t txq_lock;
	struct dpv_txq *txq;
	uint64_t tx_frames, tx_dropped;    /* ARP/ND frames sent, not taken by the port */
	uint64_t rx_frames, rx_bad;        /* ARP/ND frames consumed, malformed among them */
	/* neighbours */
	dpv_spinlock_t neigh_lock;
	struct dpv_roce_neigh neigh[DPV_ROCE_NEIGH_MAX];
};

/* GID @index copied out of the table ([0, DPV_ROCE_GID_TBL_LEN)); false if it is empty. */
bool dpv__roce_gid_read(struct dpv_roce_port *rp, int index, uint8_t gid[16]);
/* Send one ARP/ND frame of @len bytes (copied into an mbuf): 0, or -ENOBUFS/-ENODEV/-EAGAIN
 * (counted as dropped). Any thread. */
int dpv__roce_ctl_send(struct dpv_roce_port *rp, const uint8_t *frame, uint16_t len);
/* The port of a device: its multicast filter (solicited-node MACs of its IPv6 GIDs) while it
 * runs, the queue ARP/ND frames leave by let go when it stops; @lock held. */
void dpv__roce_port_update(struct dpv_roce_port *rp);
/* The same from outside, @lock taken (a UD QP joined or left a group). */
void dpv__roce_port_refresh(struct dpv_device *dev);
/* The MACs of the groups @dev's UD QPs are attached to (ud_qp.c), at most @max, each once;
 * how many. */
unsigned int dpv__ud_mcast_macs(struct dpv_device *dev, uint8_t (*macs)[6], unsigned int max);

#endif
