/* SPDX-License-Identifier: BSD-3-Clause */
/* Frames and names: the engines' UDP and TCP templates, header lengths, hex and MAC parsing,
 * reading a pcap file, and the names of completion opcodes and errnos. */
#include <arpa/inet.h>
#include <ctype.h>
#include <errno.h>
#include <string.h>

#include <pcap/pcap.h>

#include "testpmd.h"

static const uint8_t ip_src[4] = { 198, 18, 0, 1 }, ip_dst[4] = { 198, 18, 0, 2 };

void ipv4_header_csum(uint8_t *ip)
{
	uint32_t sum = 0;
	uint32_t ihl = (uint32_t)(ip[0] & 0xf) * 4;

	ip[10] = ip[11] = 0;
	for (uint32_t i = 0; i < ihl; i += 2)
		sum += (uint32_t)(ip[i] << 8 | ip[i + 1]);
	while (sum >> 16)
		sum = (sum & 0xffff) + (sum >> 16);
	ip[10] = (uint8_t)(~sum >> 8);
	ip[11] = (uint8_t)~sum;
}

static void eth_ipv4(uint8_t *f, const uint8_t *src, const uint8_t *dst, uint8_t proto,
		     uint16_t ip_len, uint16_t id)
{
	memcpy(f, dst, 6);
	memcpy(f + 6, src, 6);
	f[12] = 0x08;
	f[13] = 0x00;
	memset(f + 14, 0, 20);
	f[14] = 0x45;
	f[16] = (uint8_t)(ip_len >> 8);
	f[17] = (uint8_t)ip_len;
	f[18] = (uint8_t)(id >> 8);
	f[19] = (uint8_t)id;
	f[20] = 0x40;                  /* DF */
	f[22] = 64;
	f[23] = proto;
	memcpy(f + 26, ip_src, 4);
	memcpy(f + 30, ip_dst, 4);
}

/* testpmd's txonly frame: Ethernet/IPv4 198.18.0.1 > 198.18.0.2/UDP 9 > 9, a byte pattern.
 * @sw_csum: the IPv4 header checksum written here (else left 0 for IP_CSUM to fill); the UDP
 * checksum is 0 ("none") unless IP_CSUM computes it. */
void udp_frame(uint8_t *f, uint32_t len, const uint8_t *src, const uint8_t *dst, bool sw_csum)
{
	uint32_t ip_len = len > 14 ? len - 14 : 0;

	if (len < 42) {
		memset(f, 0, len);
		return;
	}
	eth_ipv4(f, src, dst, IPPROTO_UDP, (uint16_t)ip_len, 0);
	f[34] = 0;
	f[35] = 9;
	f[36] = 0;
	f[37] = 9;
	f[38] = (uint8_t)((ip_len - 20) >> 8);
	f[39] = (uint8_t)(ip_len - 20);
	f[40] = f[41] = 0;
	for (uint32_t i = 42; i < len; i++)
		f[i] = (uint8_t)i;
	if (sw_csum)
		ipv4_header_csum(f + 14);
}

/* The TSO engine's headers: Ethernet/IPv4/TCP 198.18.0.1:1024 > 198.18.0.2:80, ACK|PSH. */
void tcp_header(uint8_t *h, const uint8_t *src, const uint8_t *dst, uint32_t seq, uint16_t id)
{
	eth_ipv4(h, src, dst, IPPROTO_TCP, 40, id);
	memset(h + 34, 0, 20);
	h[34] = 0x04;                  /* source port 1024 */
	h[37] = 80;
	h[38] = (uint8_t)(seq >> 24);
	h[39] = (uint8_t)(seq >> 16);
	h[40] = (uint8_t)(seq >> 8);
	h[41] = (uint8_t)seq;
	h[45] = 1;                     /* ack 1 */
	h[46] = 0x50;
	h[47] = 0x18;                  /* ACK PSH */
	h[48] = 0xff;
	h[49] = 0xff;
}

/* Offset of the L3 header after Ethernet and VLAN tags, and its ether type. */
static uint32_t l3_offset(const uint8_t *f, uint32_t len, uint16_t *type)
{
	uint32_t off = 12;

	while (off + 2 <= len) {
		*type = (uint16_t)(f[off] << 8 | f[off + 1]);
		if (*type != 0x8100 && *type != 0x88a8)
			return off + 2;
		off += 4;
	}
	*type = 0;
	return 0;
}

uint32_t tcp_headers_len(const uint8_t *f, uint32_t len)
{
	uint16_t type;
	uint32_t l3 = l3_offset(f, len, &type), l4;

	if (l3 == 0)
		return 0;
	if (type == 0x0800 && l3 + 20 <= len && f[l3 + 9] == IPPROTO_TCP)
		l4 = l3 + (uint32_t)(f[l3] & 0xf) * 4;
	else if (type == 0x86dd && l3 + 40 <= len && f[l3 + 6] == IPPROTO_TCP)
		l4 = l3 + 40;
	else
		return 0;
	if (l4 + 20 > len)
		return 0;
	l4 += (uint32_t)(f[l4 + 12] >> 4) * 4;
	return l4 <= len ? l4 : 0;
}

bool frame_is_ip(const uint8_t *f, uint32_t len)
{
	uint16_t type;

	return l3_offset(f, len, &type) != 0 && (type == 0x0800 || type == 0x86dd);
}

static int hex_digit(int c)
{
	return isdigit(c) ? c - '0' : isxdigit(c) ? tolower(c) - 'a' + 10 : -1;
}

/* Hex bytes, optionally separated by ':', '-', '.' or blanks; returns the count or -EINVAL. */
int hex_parse(const char *s, uint8_t *out, uint32_t max)
{
	uint32_t n = 0;

	while (*s) {
		int hi, lo;

		if (strchr(":-. \t", *s)) {
			s++;
			continue;
		}
		hi = hex_digit((unsigned char)s[0]);
		lo = hi < 0 ? -1 : hex_digit((unsigned char)s[1]);
		if (lo < 0 || n >= max)
			return -EINVAL;
		out[n++] = (uint8_t)(hi << 4 | lo);
		s += 2;
	}
	return (int)n;
}

int mac_parse(const char *s, uint8_t mac[6])
{
	unsigned int b[6];

	if (sscanf(s, "%2x:%2x:%2x:%2x:%2x:%2x", &b[0], &b[1], &b[2], &b[3], &b[4], &b[5]) != 6)
		return -EINVAL;
	for (int i = 0; i < 6; i++)
		mac[i] = (uint8_t)b[i];
	return 0;
}

const char *mac_str(const uint8_t m[6], char buf[18])
{
	snprintf(buf, 18, "%02x:%02x:%02x:%02x:%02x:%02x", m[0], m[1], m[2], m[3], m[4], m[5]);
	return buf;
}

/* testpmd's default peer address of a port: 02:00:00:00:00:<port>. */
void peer_mac(unsigned int port, uint8_t mac[6])
{
	static const uint8_t base[6] = { 0x02, 0, 0, 0, 0, 0 };

	memcpy(mac, base, 6);
	mac[5] = (uint8_t)port;
}

int pcap_each(const char *path, int (*fn)(const uint8_t *f, uint32_t len, void *arg), void *arg)
{
	char err[PCAP_ERRBUF_SIZE];
	pcap_t *pc = pcap_open_offline(path, err);
	struct pcap_pkthdr *h;
	const uint8_t *p;
	int n = 0, rc = 0;

	if (pc == NULL)
		return tp_error("cannot read %s: %s; give a pcap file (tcpdump -w, tshark -w -F pcap)",
				path, err), -1;
	while (rc == 0 && pcap_next_ex(pc, &h, &p) == 1) {
		rc = fn(p, h->caplen, arg);
		n++;
	}
	pcap_close(pc);
	return rc != 0 ? -1 : n;
}

const char *wc_opcode_name(enum ibv_wc_opcode op)
{
	switch (op) {
	case IBV_WC_SEND: return "SEND";
	case IBV_WC_RDMA_WRITE: return "RDMA_WRITE";
	case IBV_WC_RDMA_READ: return "RDMA_READ";
	case IBV_WC_COMP_SWAP: return "COMP_SWAP";
	case IBV_WC_FETCH_ADD: return "FETCH_ADD";
	case IBV_WC_BIND_MW: return "BIND_MW";
	case IBV_WC_LOCAL_INV: return "LOCAL_INV";
	case IBV_WC_TSO: return "TSO";
	case IBV_WC_RECV: return "RECV";
	case IBV_WC_RECV_RDMA_WITH_IMM: return "RECV_RDMA_WITH_IMM";
	default: return "?";
	}
}

const char *wc_status_name(enum ibv_wc_status s)
{
	static const char *const names[] = {
		"SUCCESS", "LOC_LEN_ERR", "LOC_QP_OP_ERR", "LOC_EEC_OP_ERR", "LOC_PROT_ERR",
		"WR_FLUSH_ERR", "MW_BIND_ERR", "BAD_RESP_ERR", "LOC_ACCESS_ERR", "REM_INV_REQ_ERR",
		"REM_ACCESS_ERR", "REM_OP_ERR", "RETRY_EXC_ERR", "RNR_RETRY_EXC_ERR",
		"LOC_RDD_VIOL_ERR", "REM_INV_RD_REQ_ERR", "REM_ABORT_ERR", "INV_EECN_ERR",
		"INV_EEC_STATE_ERR", "FATAL_ERR", "RESP_TIMEOUT_ERR", "GENERAL_ERR", "TM_ERR",
		"TM_RNDV_INCOMPLETE",
	};

	return (unsigned int)s < sizeof(names) / sizeof(names[0]) ? names[s] : "?";
}

const char *errno_name(int e)
{
	const char *n = strerrorname_np(e);

	return n != NULL ? n : "E?";
}
