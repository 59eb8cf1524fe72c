/* SPDX-License-Identifier: BSD-3-Clause */
/* Packet header parsing, the software offloads (IPv4/TCP/UDP checksums, TSO segment headers)
 * and the offload policy of a port, shared by every transport (dpv_tx.h builds frames with
 * them). Verbs-free. Functions return 0 or a negative errno. */
#ifndef DPV_OFFLOAD_H
#define DPV_OFFLOAD_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct rte_mbuf;

/* Header sizes and Ethernet types, for every layer that writes or reads frames. */
#define DPV_ETH_HLEN		14	/* destination, source, type */
#define DPV_VLAN_HLEN		4	/* one 802.1Q or 802.1ad tag */
#define DPV_IPV4_HLEN		20	/* without options */
#define DPV_IPV6_HLEN		40	/* without extension headers */
#define DPV_UDP_HLEN		8
#define DPV_ETH_P_IPV4		0x0800
#define DPV_ETH_P_ARP		0x0806
#define DPV_ETH_P_8021Q		0x8100
#define DPV_ETH_P_IPV6		0x86DD
#define DPV_ETH_P_8021AD	0x88A8

/* A port's offload policy and the offloads forced to software (<dpverbs.h>); __atomic, as
 * they change at run time. */
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

/* Can frame @h (@len bytes) be IPv4, directly or after VLAN tags? (A test before a parse.) */
static inline bool dpv__may_be_ipv4(const uint8_t *h, size_t len)
{
	uint16_t type;

	if (len < DPV_ETH_HLEN)
		return false;
	type = (uint16_t)(h[12] << 8 | h[13]);
	/* three tests and branches (as one expression, the compiler makes setcc and or) */
	if (__builtin_expect(type != DPV_ETH_P_IPV4, 1) &&
	    __builtin_expect(type != DPV_ETH_P_8021Q, 1) &&
	    __builtin_expect(type != DPV_ETH_P_8021AD, 1))
		return false;
	return true;
}

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

/* The Internet checksum's raw sum (cksum.c), as rte_raw_cksum gives it, with the widest
 * kernel the CPU has (AVX-512, AVX2, scalar). */
uint16_t dpv__cksum(const void *buf, size_t len);

/* Add @len bytes at @buf to @sum, the dpv__cksum of the @off bytes before them (only the
 * parity of @off matters): pieces of any lengths sum to the whole's. */
uint16_t dpv__cksum_cont(uint16_t sum, const void *buf, size_t len, size_t off);

/* dpv__cksum_cont while copying @len bytes from @src to @dst (not overlapping): every byte is
 * read once. */
uint16_t dpv__cksum_copy(uint16_t sum, void *dst, const void *src, size_t len, size_t off);

/* One checksum kernel, for the tests and the bench: unfolded sums (and while copying). */
struct dpv_cksum_impl {
	const char *name;                  /* "avx512", "avx2", "scalar" */
	uint64_t (*sum)(const uint8_t *p, size_t len);
	uint64_t (*sum_copy)(uint8_t *dst, const uint8_t *src, size_t len);
};

/* The kernel called @name (NULL: the widest), or NULL if this CPU cannot run it. */
const struct dpv_cksum_impl *dpv__cksum_impl(const char *name);

/* Make @name the kernel of dpv__cksum*, for a bench or a test (not thread-safe: call it before
 * any checksum runs); -ENOTSUP if the CPU cannot run it. */
int dpv__cksum_select(const char *name);

/* The name of the kernel in use. */
const char *dpv__cksum_name(void);

/* The raw sum of the TCP/UDP pseudo-header of the IPv4 or IPv6 header @l3 for @l4_len bytes
 * of L4 (protocol info->l4_proto). */
uint16_t dpv__pseudo_sum(const struct dpv_hdr_info *info, const void *l3, uint32_t l4_len);

/* Once per TSO WR: the raw sum of what every segment's TCP checksum shares, from the WR's
 * header @hdr: the pseudo-header without its length, the TCP header without sequence number,
 * flags and checksum. */
uint16_t dpv__tso_csum_base(const uint8_t *hdr, const struct dpv_hdr_info *info);

/* The TCP checksum of segment header @h with @seg_payload bytes summing to @payload_sum:
 * @base plus what changes per segment. */
void dpv__tso_csum(uint8_t *h, const struct dpv_hdr_info *info, uint16_t base,
		   uint32_t seg_payload, uint16_t payload_sum);

/* The IPv4 header checksum of @ip (@len bytes, options included), host order. */
uint16_t dpv__ipv4_hdr_cksum(const uint8_t *ip, uint16_t len);

/* Software IP_CSUM on a frame whose headers lie in its first segment: IPv4 header checksum,
 * TCP or UDP checksum over IPv4 or IPv6 (UDP 0 sent as 0xFFFF). Non-IP frames and
 * fragments' L4 are left as they are. */
void dpv__sw_csum(struct rte_mbuf *m, const struct dpv_hdr_info *info);

/* Has the frame a TCP or UDP checksum that IP_CSUM computes? (IP, not a fragment, the
 * whole TCP/UDP header parsed) */
static inline bool dpv__csum_has_l4(const struct dpv_hdr_info *info)
{
	return info->l3 != DPV_L3_NONE && !info->fragment && info->l4_len != 0 &&
	       (info->l4_proto == 6 || info->l4_proto == 17);     /* TCP, UDP */
}

/* The L4 bytes a checksum covers in a frame of @frame_len bytes whose IP header is @l3: what
 * the IP header says, clamped to the frame (Ethernet padding is not summed). */
uint32_t dpv__l4_length(const struct dpv_hdr_info *info, const void *l3, uint32_t frame_len);

/* dpv__sw_csum with the L4 sum taken while copying: @raw is the dpv__cksum of the @l4_len
 * L4 bytes, checksum field included. Writes what dpv__sw_csum would. */

void dpv__sw_csum_summed(uint8_t *f, const struct dpv_hdr_info *info, uint32_t l4_len,
			 uint16_t raw);

/* A received frame's IPv4 header and TCP/UDP checksums are right: the port's word when it
 * gives one (RX checksum flags), else computed. */
bool dpv__rx_csum_ok(const struct rte_mbuf *m);
/* The same, with the frame's headers as dpv__hdr_parse gave them (NULL: parsed here, if the
 * EtherType can be IPv4 at all). */
bool dpv__rx_csum_ok_parsed(const struct rte_mbuf *m, const struct dpv_hdr_info *parsed);

/* Are the IPv4 header checksum and the TCP/UDP checksum of a received IPv4 frame right?
 * (IP_CSUM_OK: false for anything but IPv4 TCP/UDP non-fragments.) */
bool dpv__sw_csum_check(const struct rte_mbuf *m, const struct dpv_hdr_info *info);

#endif
