/* SPDX-License-Identifier: BSD-3-Clause */
/* The RoCEv2 wire codec (IBA vol. 1 ch. 9 and Annex A17): the base transport header and its
 * extension headers, the IBA opcode table, the ICRC, and Ethernet/IP/UDP frames around them,
 * all over plain byte buffers — no QP, no driver. Linux rdma_rxe is the reference peer.
 * Functions return 0 (or a length) or a negative errno; what each errno means is below. */
#ifndef DPV_ROCE_WIRE_H
#define DPV_ROCE_WIRE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#define DPV_ROCE_UDP_PORT	4791
#define DPV_ROCE_SPORT_MIN	0xC000	/* rxe's source ports: the dynamic range */

/* header sizes in bytes (IBA 9.2 - 9.5) */
#define DPV_ROCE_BTH_LEN	12
#define DPV_ROCE_DETH_LEN	8
#define DPV_ROCE_RETH_LEN	16
#define DPV_ROCE_AETH_LEN	4
#define DPV_ROCE_ATOMIC_LEN	28
#define DPV_ROCE_ATOMIC_ACK_LEN	8
#define DPV_ROCE_IMM_LEN	4
#define DPV_ROCE_IETH_LEN	4
#define DPV_ROCE_XRCETH_LEN	4
#define DPV_ROCE_ICRC_LEN	4
#define DPV_ROCE_MAX_HDR_LEN	(DPV_ROCE_BTH_LEN + DPV_ROCE_XRCETH_LEN + DPV_ROCE_ATOMIC_LEN)

#define DPV_ROCE_PKEY_DEFAULT	0xFFFF
#define DPV_ROCE_QPN_MASK	0xFFFFFF
#define DPV_ROCE_PSN_MASK	0xFFFFFF

/* Transport bits of an opcode (its three high bits) and the operation (its five low bits). */
enum dpv_roce_transport {
	DPV_ROCE_RC = 0x00, DPV_ROCE_UC = 0x20, DPV_ROCE_RD = 0x40, DPV_ROCE_UD = 0x60,
	DPV_ROCE_XRC = 0xA0,
};

enum dpv_roce_op {
	DPV_ROCE_SEND_FIRST = 0x00,
	DPV_ROCE_SEND_MIDDLE = 0x01,
	DPV_ROCE_SEND_LAST = 0x02,
	DPV_ROCE_SEND_LAST_IMM = 0x03,
	DPV_ROCE_SEND_ONLY = 0x04,
	DPV_ROCE_SEND_ONLY_IMM = 0x05,
	DPV_ROCE_WRITE_FIRST = 0x06,
	DPV_ROCE_WRITE_MIDDLE = 0x07,
	DPV_ROCE_WRITE_LAST = 0x08,
	DPV_ROCE_WRITE_LAST_IMM = 0x09,
	DPV_ROCE_WRITE_ONLY = 0x0A,
	DPV_ROCE_WRITE_ONLY_IMM = 0x0B,
	DPV_ROCE_READ_REQUEST = 0x0C,
	DPV_ROCE_READ_RESP_FIRST = 0x0D,
	DPV_ROCE_READ_RESP_MIDDLE = 0x0E,
	DPV_ROCE_READ_RESP_LAST = 0x0F,
	DPV_ROCE_READ_RESP_ONLY = 0x10,
	DPV_ROCE_ACK = 0x11,
	DPV_ROCE_ATOMIC_ACK = 0x12,
	DPV_ROCE_CMP_SWAP = 0x13,
	DPV_ROCE_FETCH_ADD = 0x14,
	DPV_ROCE_SEND_LAST_INV = 0x16,
	DPV_ROCE_SEND_ONLY_INV = 0x17,
};

/* What an opcode carries and where it sits in a message (dpv__roce_opinfo.flags). */
enum {
	DPV_ROCE_F_DETH = 1 << 0,
	DPV_ROCE_F_XRCETH = 1 << 1,
	DPV_ROCE_F_RETH = 1 << 2,
	DPV_ROCE_F_ATOMIC = 1 << 3,
	DPV_ROCE_F_AETH = 1 << 4,
	DPV_ROCE_F_ATOMIC_ACK = 1 << 5,
	DPV_ROCE_F_IMM = 1 << 6,
	DPV_ROCE_F_IETH = 1 << 7,
	DPV_ROCE_F_PAYLOAD = 1 << 8,	/* may carry payload (and so a pad) */
	DPV_ROCE_F_FIRST = 1 << 9,	/* FIRST and LAST both set: an ONLY packet */
	DPV_ROCE_F_MIDDLE = 1 << 10,
	DPV_ROCE_F_LAST = 1 << 11,
	DPV_ROCE_F_REQ = 1 << 12,	/* sent by a requester (else by a responder) */
	DPV_ROCE_F_SEND = 1 << 13,
	DPV_ROCE_F_WRITE = 1 << 14,
	DPV_ROCE_F_READ = 1 << 15,
	DPV_ROCE_F_ATOMIC_OP = 1 << 16,
};

struct dpv_roce_opinfo {
	const char *name;	/* NULL: an opcode dpverbs does not know (RD, reserved, CNP) */
	uint32_t flags;
	uint8_t hdr_len;	/* BTH and every extension header */
};

/* The table row of @opcode; its name is NULL when the opcode is unknown. */
const struct dpv_roce_opinfo *dpv__roce_opinfo(uint8_t opcode);

/* The transport headers of one packet, host order. Only the ones the opcode carries count. */
struct dpv_roce_hdrs {
	struct {
		uint8_t opcode;
		bool se, mig, fecn, becn, ackreq;
		uint8_t pad;		/* decode: from the wire; encode: ignored (from @payload) */
		uint8_t tver;		/* decode only; encode writes 0 */
		uint16_t pkey;
		uint32_t dqpn, psn;	/* 24 bits */
	} bth;
	struct { uint32_t qkey, sqpn; } deth;
	struct { uint32_t srqn; } xrceth;
	struct { uint64_t va; uint32_t rkey, len; } reth;
	struct { uint64_t va; uint32_t rkey; uint64_t swap_add, compare; } atomic;
	struct { uint8_t syndrome; uint32_t msn; } aeth;
	struct { uint64_t orig; } atomic_ack;
	uint32_t imm;		/* as it is on the wire (verbs' imm_data is big-endian too) */
	uint32_t ieth_rkey;
};

/* Write BTH and the extension headers of @h->bth.opcode into @buf for a packet carrying
 * @payload bytes (the pad count follows from it). Returns the header length, -EINVAL for an
 * unknown opcode or payload on an opcode that carries none, -ENOSPC when @cap is too small. */
int dpv__roce_hdrs_encode(uint8_t *buf, size_t cap, const struct dpv_roce_hdrs *h,
			 uint32_t payload);

/* Decode and validate the UDP payload of a received RoCEv2 packet (@len bytes from the BTH
 * through the ICRC). On success *@hdr_len and *@payload tell where the payload is.
 * -EBADMSG   lengths: shorter than its headers + ICRC, or a pad larger than the payload or
 *            on an opcode without payload
 * -EPROTO    BTH transport version not 0
 * -EPROTONOSUPPORT  opcode unknown (reserved, RD, CNP)
 * -EACCES    P_Key neither 0xFFFF nor 0x7FFF (the default partition rxe accepts)
 * The ICRC is not checked here (it covers the IP/UDP headers: dpv__roce_frame_parse). */
int dpv__roce_hdrs_decode(const uint8_t *buf, size_t len, struct dpv_roce_hdrs *h,
			 uint32_t *hdr_len, uint32_t *payload);

/* CRC-32 (IEEE 802.3, reflected, polynomial 0xEDB88320) without the initial and final
 * inversion, so it can be carried across pieces: crc = dpv__crc32_update(crc, p, n). */
uint32_t dpv__crc32_update(uint32_t crc, const void *p, size_t n);

/* The same CRC by tables alone, whatever the CPU has: a reference for tests. */
uint32_t dpv__crc32_update_table(uint32_t crc, const void *p, size_t n);

/* The ICRC state after the masked pseudo-header of IBA A17.3.3: 8 bytes of 0xFF (the LRH),
 * the IP header @l3 (IPv4 without options, or IPv6) and UDP header with TOS/TTL/IPv4
 * checksum, traffic class/flow label/hop limit and the UDP checksum set to ones, the BTH with
 * its reserved byte (FECN, BECN, resv6) set to ones, then the extension headers:
 * @len bytes from @l3 to the end of the transport headers. Continue with dpv__crc32_update
 * over payload and pad; the ICRC is the inverse of the result, stored little-endian. */
uint32_t dpv__roce_icrc_hdrs(const uint8_t *l3, bool ipv6, size_t len);

/* The ICRC of a contiguous packet: @l3 to @len bytes (IP header to pad included). */
uint32_t dpv__roce_icrc(const uint8_t *l3, bool ipv6, size_t len);

/* Where a frame goes and how, the network part of an address vector. GIDs are 16 bytes;
 * an IPv4-mapped GID (::ffff:a.b.c.d) on both sides makes an IPv4 frame. */
struct dpv_roce_path {
	uint8_t dmac[6], smac[6];
	bool vlan;
	uint16_t vlan_tci;
	uint8_t sgid[16], dgid[16];
	uint8_t traffic_class;	/* IPv4: the TOS byte (DSCP and ECN); IPv6: traffic class */
	uint32_t flow_label;	/* IPv6 only, 20 bits */
	uint8_t hop_limit;	/* IPv4 TTL */
	uint16_t sport;		/* UDP source port (dpv__roce_udp_sport) */
	uint16_t ip_id;		/* IPv4 identification */
	/* for the port's own loopback ring, nobody watching: dpv__roce_frame_mbuf
	 * (roce_frame.h) writes 4 zero bytes for the ICRC and marks the mbuf
	 * (dpv__loop_no_icrc); the codec's dpv__roce_frame_build ignores it */
	bool icrc_skip;
};

/* Length of the headers of a frame on @path with @opcode, Ethernet through the last
 * extension header; -EINVAL for an unknown opcode or GIDs of different families. */
int dpv__roce_frame_hdr_len(const struct dpv_roce_path *path, uint8_t opcode);

/* Build a whole frame in @buf: Ethernet[/VLAN] / IPv4 (DF) or IPv6 / UDP (checksum 0, as rxe)
 * / BTH / extension headers / @payload (@len bytes) / pad / ICRC. Returns the frame length,
 * or -EINVAL / -ENOSPC as dpv__roce_hdrs_encode, -EMSGSIZE above 65535 bytes of IP packet. */
int dpv__roce_frame_build(uint8_t *buf, size_t cap, const struct dpv_roce_path *path,
			 const struct dpv_roce_hdrs *h, const void *payload, uint32_t len);

/* The headers of a frame on @path carrying @len bytes of payload: Ethernet through the last
 * extension header into @buf, with the IP and UDP lengths of the whole frame. The payload,
 * its pad (-len & 3 zero bytes) and the ICRC follow, written by the caller from pieces:
 * crc = dpv__roce_icrc_hdrs(buf + l2, ipv6, hdr_len - l2), dpv__crc32_update over payload
 * and pad, then dpv__roce_icrc_store. Returns the header length, or the errors of
 * dpv__roce_frame_build. */
int dpv__roce_frame_hdrs(uint8_t *buf, size_t cap, const struct dpv_roce_path *path,
			 const struct dpv_roce_hdrs *h, uint32_t len);

/* Write the ICRC of CRC state @crc (after the pad) at @p, as the wire carries it. */
void dpv__roce_icrc_store(uint8_t *p, uint32_t crc);

/* A received frame taken apart: offsets from the frame start, the network fields in host
 * order, GIDs as on the wire (IPv4 addresses mapped). */
struct dpv_roce_frame {
	uint16_t l2_len, l3_len;	/* Ethernet + VLAN tags; IP header */
	uint16_t bth_off;		/* l2_len + l3_len + 8 */
	uint16_t payload_off;
	uint32_t payload_len;		/* without pad and ICRC */
	uint8_t vlans;
	bool ipv6;
	uint8_t smac[6], dmac[6];
	uint8_t sgid[16], dgid[16];
	uint8_t traffic_class, hop_limit;
	uint32_t flow_label;
	uint16_t sport;
	struct dpv_roce_hdrs h;
};

/* Parse a received frame (untrusted: every length is checked against @len and each other).
 * -ENOMSG    not a RoCEv2 frame: not IPv4/IPv6, not UDP, not destination port 4791, or an IP
 *            fragment/IPv6 extension header (the caller hands it to others)
 * -EBADMSG   truncated, or lengths that disagree (IP, UDP, pad), IPv4 options or a bad IPv4
 *            header checksum, an IPv4-mapped address in an IPv6 header
 * -EILSEQ    ICRC wrong (dropped and counted, never delivered)
 * and the errors of dpv__roce_hdrs_decode. Ethernet padding after the IP packet is ignored. */
int dpv__roce_frame_parse(const uint8_t *f, size_t len, struct dpv_roce_frame *out);
/* The same for a frame of the port's own loopback ring built without its ICRC
 * (dpv__roce_frame_mbuf, dpv_roce_path.icrc_skip): every check but the ICRC's; with @fill, the frame's ICRC is
 * computed and written into its last 4 bytes (for the SNIFFER flows that will see it). */
int dpv__roce_frame_parse_local(uint8_t *f, size_t len, struct dpv_roce_frame *out, bool fill);

/* --- addresses (roce_gid.c) --- */

/* The first 12 bytes of an IPv4-mapped GID, ::ffff:a.b.c.d (RFC 4291 2.5.5.2). Static in
 * the header so that the compiler sees its bytes: comparisons with it compile to two loads. */
static const uint8_t dpv__roce_v4_prefix[12] = { [10] = 0xFF, [11] = 0xFF };

/* Is @gid IPv4-mapped (an IPv4 address; its frames are IPv4)? */
static inline bool dpv__roce_gid_is_v4(const uint8_t gid[16])
{
	return memcmp(gid, dpv__roce_v4_prefix, sizeof(dpv__roce_v4_prefix)) == 0;
}

/* Is @gid an IPv4 (224.0.0.0/4, mapped) or IPv6 (ff00::/8) multicast group? */
bool dpv__roce_gid_is_mcast(const uint8_t gid[16]);

/* The MAC of multicast group @gid (RFC 1112 6.4: 01:00:5e and the group's low 23 bits;
 * RFC 2464 7: 33:33 and its last 4 bytes); false, @mac untouched, for a unicast GID. */
bool dpv__roce_gid_mcast_mac(const uint8_t gid[16], uint8_t mac[6]);

/* GID index 0 of a port: fe80::/64 with the EUI-64 of @mac (universal/local bit flipped). */
void dpv__roce_gid_from_mac(uint8_t gid[16], const uint8_t mac[6]);

/* The RoCEv2 GID of an IPv4 address (network order): ::ffff:a.b.c.d. */
void dpv__roce_gid_from_ipv4(uint8_t gid[16], uint32_t addr);

/* AF_INET (the 4 address bytes in @addr) for an IPv4-mapped GID, else AF_INET6 (16 bytes). */
int dpv__roce_gid_to_ip(const uint8_t gid[16], uint8_t addr[16]);

/* The MAC inside a link-local EUI-64 GID (fe80::/64 with ff:fe in its middle): 0, or
 * -EINVAL for any other GID (its MAC must be resolved by ARP/ND). */
int dpv__roce_gid_to_mac(const uint8_t gid[16], uint8_t mac[6]);

/* The IB MTU of a port with Ethernet MTU @mtu, as enum ibv_mtu numbers it (1 = 256 ...
 * 5 = 4096), or 0 when not even 256 bytes fit; rxe subtracts a flat 80 bytes of headers. */
int dpv__roce_active_mtu(uint32_t mtu);

/* Bytes of an enum ibv_mtu value (1..5), 0 for anything else. */
uint32_t dpv__roce_mtu_bytes(int ib_mtu);

/* UDP source port of a connected QP (RC, UC, XRC) whose path has @flow_label towards
 * @rqpn: the kernel's rdma_get_udp_sport, symmetric in the two QPNs when the label is 0. */
uint16_t dpv__roce_udp_sport(uint32_t flow_label, uint32_t lqpn, uint32_t rqpn);

/* UDP source port rxe gives a QP when it is created (what UD QPs keep): 0xC000 plus 14 bits
 * of the kernel's hash_32 of @qpn. */
uint16_t dpv__roce_udp_sport_qpn(uint32_t qpn);

#endif
