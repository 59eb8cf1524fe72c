/* SPDX-License-Identifier: BSD-3-Clause */
/* RoCEv2 on a port, the internal interface between its parts (lib/roce):
 *   roce_addr.c / roce_neigh.c  the port's addresses, its GID table, ARP and IPv6 ND
 *                               (answering for its own addresses, resolving peers);
 *   ud_*.c, later rc_*.c        the transports: address handles, QPs, the QPN demux,
 *                               loopback to the port's own GIDs.
 * Both sit on lib/verbs (verbs_priv.h) and the wire codec (roce_wire.h); the driver boundary
 * below them speaks mbufs. Functions return 0 (or a count/index) or a negative errno. */
#ifndef DPV_ROCE_H
#define DPV_ROCE_H

#include <stdbool.h>
#include <stdint.h>

#include "roce_wire.h"

struct dpv_device;
struct rte_mbuf;

/* --- addresses and the GID table (roce_addr.c) --- */

/* Entries in a port's GID table (ibv_query_port's gid_tbl_len): index 0 is the link-local
 * fe80:: EUI-64 GID of the port's MAC, then one RoCE v2 GID per address in the order the
 * addresses were added; a removed address leaves its index empty (all zero), as rxe does. */
#define DPV_ROCE_GID_TBL_LEN	16

/* GID @index of @dev's port: 0, -EINVAL for an index outside the table, -ENODATA for an empty
 * entry. Safe against concurrent address changes (copied under the table's lock). */
int dpv__roce_gid_get(struct dpv_device *dev, int index, uint8_t gid[16]);

/* The index of @gid in @dev's table (a local GID: loopback), or -ENOENT. */
int dpv__roce_gid_find(struct dpv_device *dev, const uint8_t gid[16]);

/* --- neighbours (roce_neigh.c) --- */

/* The MAC to send to @dgid from the port's GID @sgid_index, as a RoCE NIC resolves it:
 * a local GID → the port's own MAC (the caller loops such frames back; they never reach the
 * wire); a link-local EUI-64 GID → the MAC inside it; a multicast GID → 01:00:5e / 33:33
 * mapping; otherwise the neighbour cache, asking with ARP (IPv4-mapped GIDs) or a Neighbor
 * Solicitation (IPv6) when it has no fresh entry, a few retries within the configured
 * resolve timeout, progressing the port's receive side meanwhile (or waiting for the
 * service lcore that does). -EHOSTUNREACH when nobody answered, -EINVAL for a sgid_index
 * that is empty or of a family other than @dgid's. May block: a control-path call. */
int dpv__roce_resolve(struct dpv_device *dev, int sgid_index, const uint8_t dgid[16],
		      uint8_t mac[6]);

/* ARP and ICMPv6 ND frames of a received burst: requests for the port's addresses answered,
 * replies/advertisements put in the cache; the bit of each frame consumed is set in *@taken
 * (RAW_PACKET's default flows then never see them; SNIFFER flows still do). */
void dpv__roce_neigh_rx(struct dpv_device *dev, struct rte_mbuf **pkts, uint16_t n,
			uint64_t *taken);

/* The ARP/ND counters of @dev's port (zero for a port without the RoCE layer): frames sent,
 * not taken by the port, consumed from the wire, malformed among them. Any thread. */
void dpv__roce_neigh_stats(struct dpv_device *dev, uint64_t *tx, uint64_t *tx_dropped,
			   uint64_t *rx, uint64_t *rx_bad);

#endif
