/* SPDX-License-Identifier: BSD-3-Clause */
/* The neighbour protocols as frames: ARP over Ethernet for IPv4 (RFC 826) and the IPv6
 * Neighbor Solicitation / Advertisement of Neighbor Discovery (RFC 4861) with their ICMPv6
 * checksum (RFC 4443 2.3). Pure functions over byte buffers: no port, no mbuf, no DPDK.
 * Functions return 0 (or a length) or a negative errno; each says which. */
#ifndef DPV_ROCE_ND_H
#define DPV_ROCE_ND_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define DPV_ND_ETH_MIN		60	/* frames are padded to Ethernet's minimum (no FCS) */
#define DPV_ND_FRAME_MAX	86	/* the largest frame built here: an NS or NA */

enum dpv_nd_type {
	DPV_ND_ARP_REQUEST,
	DPV_ND_ARP_REPLY,
	DPV_ND_NS,
	DPV_ND_NA,
};

/* One message. Addresses are in network order: IPv4 in the first 4 bytes of a 16-byte field.
 * ARP: @sender_*, @target_* are the SHA/SPA and THA/TPA fields. ND: @sender_ip is the IPv6
 * source, @ip_dst the IPv6 destination, @target_ip the ND target; @sender_mac the source
 * (NS) or target (NA) link-layer address option when @lladdr says it was there. */
struct dpv_nd_msg {
	enum dpv_nd_type type;
	uint8_t eth_dst[6], eth_src[6];
	uint8_t sender_mac[6], target_mac[6];
	uint8_t sender_ip[16], target_ip[16], ip_dst[16];
	bool lladdr;
	bool router, solicited, override;       /* NA flags */
};

/* Take a received frame apart (untrusted: nothing read beyond @len).
 * 0           an ARP request or reply (Ethernet/IPv4 ARP), an NS or an NA that passes
 *             RFC 4861 7.1's validity checks
 * -ENOMSG     neither ARP nor ICMPv6 Neighbor Discovery (an IPv6 header followed by
 *             anything but ICMPv6 types 133-137, VLAN-tagged frames included): not ours
 * -EOPNOTSUPP ARP of another hardware/protocol type or operation, or ND other than NS/NA
 *             (router solicitation/advertisement, redirect): the neighbour protocols', to
 *             be ignored
 * -EBADMSG    ARP or NS/NA that is malformed: truncated, IPv6 payload length beyond the
 *             frame, hop limit not 255, code not 0, a bad checksum, an option of length 0 or
 *             past the end, a multicast target, an unspecified source not sent to a
 *             solicited-node address or with a source link-layer option, a solicited NA to
 *             a multicast destination */
int dpv__nd_parse(const uint8_t *f, size_t len, struct dpv_nd_msg *m);

/* Build @m (type, addresses; for ND the source link-layer option of an NS is
 * @sender_mac, the target link-layer option of an NA is @sender_mac too, included when
 * @lladdr) into @buf: Ethernet/ARP, or Ethernet/IPv6 (hop limit 255)/ICMPv6 with its
 * checksum. Returns the frame length (at least DPV_ND_ETH_MIN), -ENOSPC when @cap is too
 * small, -EINVAL for an unknown type. */
int dpv__nd_build(uint8_t *buf, size_t cap, const struct dpv_nd_msg *m);

/* The ICMPv6 checksum of @len bytes at @icmp (its checksum field included as it is) with
 * the IPv6 pseudo-header of @src, @dst: 0 over a message whose checksum is right. */
uint16_t dpv__icmp6_cksum(const uint8_t src[16], const uint8_t dst[16], const uint8_t *icmp,
			  size_t len);

/* The solicited-node multicast address of @ip (ff02::1:ffXX:XXXX, RFC 4291 2.7.1) and its
 * MAC (33:33:ff:XX:XX:XX). */
void dpv__nd_solicited_node(const uint8_t ip[16], uint8_t group[16], uint8_t mac[6]);

#endif
