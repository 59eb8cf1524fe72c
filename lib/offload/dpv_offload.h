/* Packet header parsing, the software offloads (IPv4/TCP/UDP checksums, TSO segment headers)
 * and the offload policy of a port, shared by every transport (dpv_tx.h builds frames with
 * them). Verbs-free. Functions return 0 or a negative errno. */
#ifndef DPV_OFFLOAD_H
#define DPV_OFFLOAD_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct rte_mbuf;

/* Who computes a port's checksums and segments (enum dpv_offload_policy of <dpverbs.h>), and
 * which offloads always run in software (enum dpv_offload bits); read and written with
 * __atomic (dpv_set_offload_policy and dpv_set_offload_software change them at run time). */
struct dpv_offload_ctl {
	int policy;
	uint32_t sw_forced;
};

static inline int dpv__offload_policy_of(const struct dpv_offload_ctl *c)
{
	return __atomic_load_n(&c->policy, __ATOMIC_RELAXED);
}

static inline uint32_t dpv__offload_forced(const struct dpv_offload_ctl *c)
{
	return __atomic_load_n(&c->sw_forced, __ATOMIC_RELAXED);
}

enum dpv_l3 { DPV_L3_NONE, DPV_L3_IPV4, DPV_L3_IPV6 };

/* Where a frame's headers are. Lengths are 0 for layers that are absent. */
struct dpv_hdr_info {
	uint16_t l2_len;        /* Ethernet + VLAN tags */
	uint16_t l3_len;        /* IPv4 with options, IPv6 with extension headers */
	uint16_t l4_len;        /* TCP with options, UDP: 8 */
	uint16_t ethertype;     /* after the last VLAN tag, host order */
	uint8_t vlans;          /* 0, 1 or 2 tags (802.1Q / 802.1ad) */
	uint8_t l3;             /* enum dpv_l3 */
	uint8_t l4_proto;       /* IPPROTO_TCP, IPPROTO_UDP, or another next header */
	bool fragment;          /* an IP fragment: its L4 header is not (wholly) here */
};

/* Parse as far as the bytes go; never fails on short or foreign frames (layers stay 0). */
void dpv__hdr_parse(const uint8_t *frame, size_t len, struct dpv_hdr_info *info);

/* A TSO header: exactly Ethernet[/VLAN]/IPv4-or-IPv6/TCP, options included, and nothing
 * after the TCP header. -EINVAL otherwise. */
int dpv__tso_hdr_check(const uint8_t *hdr, size_t len, struct dpv_hdr_info *info);

/* Segments of a TSO payload (a payload of 0 bytes gives one header-only segment). */
uint32_t dpv__tso_segments(uint32_t payload, uint32_t mss);

/* Turn @h, a copy of the WR's TSO header, into the header of segment @i of @nseg carrying
 * @seg_payload bytes. The TCP checksum is left 0 (dpv__sw_csum computes it over the segment). */
void dpv__tso_header(uint8_t *h, const struct dpv_hdr_info *info, uint32_t i, uint32_t nseg,
		    uint32_t seg_payload, uint32_t mss);

/* The IPv4 header checksum of @ip (@len bytes, options included), host order. */
uint16_t dpv__ipv4_hdr_cksum(const uint8_t *ip, uint16_t len);

/* Software IP_CSUM on a frame whose headers lie in its first segment: IPv4 header checksum,
 * TCP or UDP checksum over IPv4 or IPv6 (UDP 0 sent as 0xFFFF). Non-IP frames and
 * fragments' L4 are left as they are. */
void dpv__sw_csum(struct rte_mbuf *m, const struct dpv_hdr_info *info);

/* A received frame's IPv4 header and TCP/UDP checksums are right: the port's word when it
 * gives one (RX checksum flags), else computed. */
bool dpv__rx_csum_ok(const struct rte_mbuf *m);

/* Are the IPv4 header checksum and the TCP/UDP checksum of a received IPv4 frame right?
 * (IP_CSUM_OK: false for anything but IPv4 TCP/UDP non-fragments.) */
bool dpv__sw_csum_check(const struct rte_mbuf *m, const struct dpv_hdr_info *info);

#endif
