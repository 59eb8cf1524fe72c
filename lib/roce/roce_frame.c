/* SPDX-License-Identifier: BSD-3-Clause */
/* RoCEv2 frames: Ethernet[/VLAN] / IPv4 or IPv6 / UDP 4791 / transport headers / payload /
 * pad / ICRC, built from a path and taken apart from untrusted bytes (roce_wire.h), and
 * built into mbufs from gather lists for every transport (roce_frame.h). The IP and UDP
 * headers are written the way rxe's rxe_net.c writes them (IPv4 DF, UDP checksum 0). */
#include <errno.h>
#include <string.h>

#include <rte_mbuf.h>

#include "dpv_offload.h"
#include "roce_frame.h"
#include "roce_ud.h"           /* dpv__loop_no_icrc */

#define IP_MAX		65535

static void put16(uint8_t *p, uint16_t v)
{
	p[0] = v >> 8;
	p[1] = v & 0xFF;
}

static uint16_t get16(const uint8_t *p)
{
	return (uint16_t)(p[0] << 8 | p[1]);
}

static size_t l2_len(const struct dpv_roce_path *path)
{
	return DPV_ETH_HLEN + (path->vlan ? DPV_VLAN_HLEN : 0);
}

int dpv__roce_frame_hdr_len(const struct dpv_roce_path *path, uint8_t opcode)
{
	const struct dpv_roce_opinfo *op = dpv__roce_opinfo(opcode);
	bool v4 = dpv__roce_gid_is_v4(path->sgid);

	if (op->name == NULL || v4 != dpv__roce_gid_is_v4(path->dgid))
		return -EINVAL;
	return (int)(l2_len(path) + (v4 ? DPV_IPV4_HLEN : DPV_IPV6_HLEN) + DPV_UDP_HLEN + op->hdr_len);
}

static void eth_write(uint8_t *p, const struct dpv_roce_path *path, bool v4)
{
	memcpy(p, path->dmac, 6);
	memcpy(p + 6, path->smac, 6);
	p += 12;
	if (path->vlan) {
		put16(p, DPV_ETH_P_8021Q);
		put16(p + 2, path->vlan_tci);
		p += 4;
	}
	put16(p, v4 ? DPV_ETH_P_IPV4 : DPV_ETH_P_IPV6);
}

/* rxe's prepare_ipv4_hdr: TOS from the traffic class, TTL from the hop limit, DF */
static void ipv4_write(uint8_t *ip, const struct dpv_roce_path *path, uint16_t total)
{
	ip[0] = 0x45;
	ip[1] = path->traffic_class;
	put16(ip + 2, total);
	put16(ip + 4, path->ip_id);
	put16(ip + 6, 0x4000);
	ip[8] = path->hop_limit;
	ip[9] = 17;
	memcpy(ip + 12, path->sgid + 12, 4);
	memcpy(ip + 16, path->dgid + 12, 4);
	put16(ip + 10, 0);
	put16(ip + 10, dpv__ipv4_hdr_cksum(ip, DPV_IPV4_HLEN));
}

static void ipv6_write(uint8_t *ip, const struct dpv_roce_path *path, uint16_t payload)
{
	uint32_t fl = path->flow_label & 0xFFFFF;

	ip[0] = (uint8_t)(0x60 | path->traffic_class >> 4);
	ip[1] = (uint8_t)(path->traffic_class << 4 | fl >> 16);
	put16(ip + 2, fl & 0xFFFF);
	put16(ip + 4, payload);
	ip[6] = 17;
	ip[7] = path->hop_limit;
	memcpy(ip + 8, path->sgid, 16);
	memcpy(ip + 24, path->dgid, 16);
}

/* Ethernet, IP and UDP for a UDP payload of @udp_payload bytes; returns the UDP offset. */
static size_t net_write(uint8_t *f, const struct dpv_roce_path *path, bool v4,
			size_t udp_payload)
{
	size_t l2 = l2_len(path), ip = v4 ? DPV_IPV4_HLEN : DPV_IPV6_HLEN;
	uint8_t *udp = f + l2 + ip;

	eth_write(f, path, v4);
	if (v4)
		ipv4_write(f + l2, path, (uint16_t)(ip + DPV_UDP_HLEN + udp_payload));
	else
		ipv6_write(f + l2, path, (uint16_t)(DPV_UDP_HLEN + udp_payload));
	put16(udp, path->sport);
	put16(udp + 2, DPV_ROCE_UDP_PORT);
	put16(udp + 4, (uint16_t)(DPV_UDP_HLEN + udp_payload));
	put16(udp + 6, 0);	/* as rxe, IPv6 included: the ICRC covers the packet */
	return l2 + ip;
}

/* the ICRC goes on the wire least significant byte first (rxe stores the CPU-order CRC of a
 * little-endian machine; scapy packs it reversed) */
static void put_le32(uint8_t *p, uint32_t v)
{
	for (int i = 0; i < 4; i++, v >>= 8)
		p[i] = (uint8_t)v;
}

static uint32_t get_le32(const uint8_t *p)
{
	return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
}

int dpv__roce_frame_hdrs(uint8_t *buf, size_t cap, const struct dpv_roce_path *path,
			 const struct dpv_roce_hdrs *h, uint32_t len)
{
	int hl = dpv__roce_frame_hdr_len(path, h->bth.opcode), rc;
	bool v4 = dpv__roce_gid_is_v4(path->sgid);
	size_t l3 = l2_len(path), bth = l3 + (v4 ? DPV_IPV4_HLEN : DPV_IPV6_HLEN) + DPV_UDP_HLEN, total;

	if (hl < 0)
		return hl;
	total = (size_t)hl + len + (-len & 3) + DPV_ROCE_ICRC_LEN;
	if (total - l3 - (v4 ? 0 : DPV_IPV6_HLEN) > IP_MAX)
		return -EMSGSIZE;
	if (cap < (size_t)hl)
		return -ENOSPC;
	rc = dpv__roce_hdrs_encode(buf + bth, (size_t)hl - bth, h, len);
	if (rc < 0)
		return rc;
	net_write(buf, path, v4, total - bth);
	return hl;
}

void dpv__roce_icrc_store(uint8_t *p, uint32_t crc)
{
	put_le32(p, ~crc);
}

int dpv__roce_frame_build(uint8_t *buf, size_t cap, const struct dpv_roce_path *path,
			 const struct dpv_roce_hdrs *h, const void *payload, uint32_t len)
{
	int hl = dpv__roce_frame_hdr_len(path, h->bth.opcode);
	size_t l3 = l2_len(path), end;

	if (hl < 0)
		return hl;
	end = (size_t)hl + len + (-len & 3);	/* where the ICRC goes */
	if (cap < end + DPV_ROCE_ICRC_LEN) {
		hl = dpv__roce_frame_hdrs(buf, 0, path, h, len);   /* -EMSGSIZE before -ENOSPC */
		return hl == -EMSGSIZE ? hl : -ENOSPC;
	}
	hl = dpv__roce_frame_hdrs(buf, cap, path, h, len);
	if (hl < 0)
		return hl;
	if (len != 0)
		memcpy(buf + hl, payload, len);
	memset(buf + hl + len, 0, end - hl - len);
	put_le32(buf + end, dpv__roce_icrc(buf + l3, !dpv__roce_gid_is_v4(path->sgid), end - l3));
	return (int)(end + DPV_ROCE_ICRC_LEN);
}

/* Ethernet and up to two VLAN tags (802.1Q, 802.1ad); 0 when too short. */
static size_t eth_parse(const uint8_t *f, size_t len, struct dpv_roce_frame *out,
			uint16_t *type)
{
	size_t off = 12;

	if (len < DPV_ETH_HLEN)
		return 0;
	*type = get16(f + off);
	while ((*type == DPV_ETH_P_8021Q || *type == DPV_ETH_P_8021AD) && out->vlans < 2) {
		if (len < off + 4 + 2)
			return 0;
		out->vlans++;
		off += 4;
		*type = get16(f + off);
	}
	memcpy(out->dmac, f, 6);
	memcpy(out->smac, f + 6, 6);
	return off + 2;
}

/* IPv4 without options, not a fragment, UDP; returns the UDP length the IP header gives. */
static int ipv4_parse(const uint8_t *ip, size_t len, struct dpv_roce_frame *out)
{
	uint16_t total;

	if (len < DPV_IPV4_HLEN || ip[0] >> 4 != 4)
		return -EBADMSG;
	if (ip[9] != 17 || (get16(ip + 6) & 0x3FFF) != 0)
		return -ENOMSG;		/* not UDP, or a fragment (RoCE sets DF) */
	total = get16(ip + 2);
	if ((ip[0] & 0xF) != 5 || total < DPV_IPV4_HLEN + DPV_UDP_HLEN || total > len ||
	    dpv__ipv4_hdr_cksum(ip, DPV_IPV4_HLEN) != get16(ip + 10))
		return -EBADMSG;
	out->traffic_class = ip[1];
	out->hop_limit = ip[8];
	memcpy(out->sgid, dpv__roce_v4_prefix, 12);
	memcpy(out->sgid + 12, ip + 12, 4);
	memcpy(out->dgid, dpv__roce_v4_prefix, 12);
	memcpy(out->dgid + 12, ip + 16, 4);
	out->l3_len = DPV_IPV4_HLEN;
	return total - DPV_IPV4_HLEN;
}

/* IPv6 with UDP right after it (rxe sends no extension headers); the UDP length likewise. */
static int ipv6_parse(const uint8_t *ip, size_t len, struct dpv_roce_frame *out)
{
	uint16_t payload;

	if (len < DPV_IPV6_HLEN || ip[0] >> 4 != 6)
		return -EBADMSG;
	if (ip[6] != 17)
		return -ENOMSG;
	payload = get16(ip + 4);
	if (payload < DPV_UDP_HLEN || (size_t)payload + DPV_IPV6_HLEN > len)
		return -EBADMSG;
	/* an IPv4-mapped address never appears in an IPv6 packet (RFC 4291 2.5.5.2, the kernel
	 * drops such sources); as a GID it would say IPv4 for a packet that is not */
	if (dpv__roce_gid_is_v4(ip + 8) || dpv__roce_gid_is_v4(ip + 24))
		return -EBADMSG;
	out->ipv6 = true;
	out->traffic_class = (uint8_t)(ip[0] << 4 | ip[1] >> 4);
	out->flow_label = (uint32_t)(ip[1] & 0xF) << 16 | get16(ip + 2);
	out->hop_limit = ip[7];
	memcpy(out->sgid, ip + 8, 16);
	memcpy(out->dgid, ip + 24, 16);
	out->l3_len = DPV_IPV6_HLEN;
	return payload;
}

static int ip_parse(const uint8_t *f, size_t len, struct dpv_roce_frame *out)
{
	uint16_t type;
	size_t l2 = eth_parse(f, len, out, &type);

	if (l2 == 0)
		return -EBADMSG;
	out->l2_len = (uint16_t)l2;
	if (type == DPV_ETH_P_IPV4)
		return ipv4_parse(f + l2, len - l2, out);
	if (type == DPV_ETH_P_IPV6)
		return ipv6_parse(f + l2, len - l2, out);
	return -ENOMSG;
}

/* @check: the ICRC must be right; @fill (the frame itself, or NULL): where to write it. */
static int frame_parse(const uint8_t *f, size_t len, struct dpv_roce_frame *out, bool check,
		       uint8_t *fill)
{
	const uint8_t *udp;
	uint32_t hl, payload;
	int udp_len, rc;

	memset(out, 0, sizeof(*out));
	udp_len = ip_parse(f, len, out);
	if (udp_len < 0)
		return udp_len;
	out->bth_off = (uint16_t)(out->l2_len + out->l3_len + DPV_UDP_HLEN);
	udp = f + out->bth_off - DPV_UDP_HLEN;
	if (get16(udp + 2) != DPV_ROCE_UDP_PORT)
		return -ENOMSG;
	if (get16(udp + 4) != udp_len)
		return -EBADMSG;
	out->sport = get16(udp);
	rc = dpv__roce_hdrs_decode(udp + DPV_UDP_HLEN, (size_t)udp_len - DPV_UDP_HLEN, &out->h, &hl, &payload);
	if (rc < 0)
		return rc;
	out->payload_off = (uint16_t)(out->bth_off + hl);
	out->payload_len = payload;
	rc = out->bth_off - DPV_UDP_HLEN + udp_len - DPV_ROCE_ICRC_LEN;	/* the ICRC's offset */
	if (check || fill != NULL) {
		uint32_t icrc = dpv__roce_icrc(f + out->l2_len, out->ipv6, (size_t)rc - out->l2_len);

		if (check && icrc != get_le32(f + rc))
			return -EILSEQ;
		if (fill != NULL)
			put_le32(fill + rc, icrc);
	}
	return 0;
}

int dpv__roce_frame_parse(const uint8_t *f, size_t len, struct dpv_roce_frame *out)
{
	return frame_parse(f, len, out, true, NULL);
}

int dpv__roce_frame_parse_local(uint8_t *f, size_t len, struct dpv_roce_frame *out, bool fill)
{
	return frame_parse(f, len, out, false, fill ? f : NULL);
}

/* ---- frames into mbufs (roce_frame.h) ---- */

/* A frame being written into a chain of mbufs, with the ICRC state of what it holds. */
struct fwriter {
	struct dpv_txh *h;
	struct rte_mbuf *head, *last;
	uint32_t crc;
};

static int fw_put(struct fwriter *w, const void *src, uint32_t n, bool crc)
{
	const uint8_t *s = src;

	while (n > 0) {
		uint32_t room = rte_pktmbuf_tailroom(w->last), k;
		uint8_t *d;

		if (room == 0) {
			struct rte_mbuf *m = dpv__tx_mbuf(w->h, &w->h->build);

			if (m == NULL)
				return -ENOMEM;
			w->last->next = m;
			w->last = m;
			w->head->nb_segs++;
			room = rte_pktmbuf_tailroom(m);
		}
		k = RTE_MIN(room, n);
		d = rte_pktmbuf_mtod_offset(w->last, uint8_t *, w->last->data_len);
		memcpy(d, s, k);
		if (crc)
			w->crc = dpv__crc32_update(w->crc, d, k);   /* the copy, still in L1 */
		w->last->data_len = (uint16_t)(w->last->data_len + k);
		w->head->pkt_len += k;
		s += k;
		n -= k;
	}
	return 0;
}

int dpv__roce_frame_mbuf(struct dpv_txh *h, const struct dpv_roce_path *path,
			 const struct dpv_roce_hdrs *hd, const uint8_t *pre, uint32_t pre_len,
			 struct dpv_roce_cursor *c, uint32_t len, struct rte_mbuf **out)
{
	static const uint8_t zeros[4];
	struct fwriter w = { .h = h };
	uint32_t msg = pre_len + len, l2 = (uint32_t)l2_len(path);
	bool ipv6 = !dpv__roce_gid_is_v4(path->sgid), crc = !path->icrc_skip;
	uint8_t *f, icrc[4] = { 0 };
	int hl, rc = 0;

	w.head = w.last = dpv__tx_mbuf(h, &h->build);
	if (w.head == NULL)
		return -ENOMEM;
	f = rte_pktmbuf_mtod(w.head, uint8_t *);
	hl = dpv__roce_frame_hdrs(f, rte_pktmbuf_tailroom(w.head), path, hd, msg);
	if (hl < 0) {
		rte_pktmbuf_free(w.head);
		return hl;
	}
	w.head->data_len = (uint16_t)hl;
	w.head->pkt_len = (uint32_t)hl;
	if (crc)
		w.crc = dpv__roce_icrc_hdrs(f + l2, ipv6, (size_t)hl - l2);
	else
		w.head->ol_flags |= dpv__loop_no_icrc;   /* 4 zero bytes where the ICRC goes */
	if (pre_len != 0)
		rc = fw_put(&w, pre, pre_len, crc);
	while (rc == 0 && len > 0) {
		const uint8_t *p;
		uint32_t k = dpv__roce_cursor_next(c, len, &p);

		rc = k == 0 ? -EINVAL : fw_put(&w, p, k, crc);
		len -= k;
	}
	if (rc == 0)
		rc = fw_put(&w, zeros, -msg & 3, crc);
	if (crc)
		dpv__roce_icrc_store(icrc, w.crc);
	if (rc == 0)
		rc = fw_put(&w, icrc, sizeof(icrc), false);
	if (rc != 0) {
		rte_pktmbuf_free(w.head);
		return rc;
	}
	*out = w.head;
	return 0;
}
