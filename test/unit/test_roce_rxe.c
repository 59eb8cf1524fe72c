/* SPDX-License-Identifier: BSD-3-Clause */
/* Frames Linux rdma_rxe sent, through dpverbs' RoCEv2 codec (usage: test_roce_rxe PCAP FIELDS).
 * PCAP holds what rxe (Debian's 6.1 kernel, in the soft-RoCE VM test) put on its NIC during
 * ibv_ud_pingpong and ibv_rc_pingpong exchanges; FIELDS, per frame, what tshark decodes in it
 * and the QPN of the rxe QP that sent it (test/vm/rxe_reference.py writes both; test/wire/rxe/
 * keeps one capture, the VM test checks a fresh one each run). For each frame:
 *   - dpv__roce_frame_parse accepts it (ICRC included) and reads every field as tshark does;
 *   - what rxe does where dpverbs had to choose holds: UDP checksum 0, IPv4 DF, IPv6 flow
 *     label 0, the UDP source port as dpverbs computes it for the QP type (UD: from the
 *     sender's QPN; RC: from both QPNs);
 *   - dpv__roce_frame_build, given the parsed headers, the addresses and the IPv4 ID (the one
 *     field rxe draws from the kernel's IP ID generator), writes the same bytes. */
#include <arpa/inet.h>
#include <netinet/in.h>

#include "dpv_test.h"
#include "roce_wire.h"

#define MAX_FRAMES	64
#define MAX_FIELDS	64
#define FRAME_MAX	9200

struct frame {
	uint8_t b[FRAME_MAX];
	uint32_t len;
};

static struct frame frames[MAX_FRAMES];
static int nb_frames;

static uint32_t rd32(const uint8_t *p, bool swap)
{
	uint32_t v;

	memcpy(&v, p, 4);
	return swap ? __builtin_bswap32(v) : v;
}

/* A classic pcap file of Ethernet frames (either byte order, micro- or nanoseconds). */
static int read_pcap(const char *path)
{
	uint8_t gh[24], rh[16];
	FILE *f = fopen(path, "rb");
	uint32_t magic;
	bool swap;

	if (f == NULL)
		return -1;
	if (fread(gh, sizeof(gh), 1, f) != 1) {
		fclose(f);
		return -1;
	}
	magic = rd32(gh, false);
	swap = magic == 0xD4C3B2A1 || magic == 0x4D3CB2A1;
	if ((!swap && magic != 0xA1B2C3D4 && magic != 0xA1B23C4D) ||
	    rd32(gh + 20, swap) != 1) {               /* LINKTYPE_ETHERNET */
		fclose(f);
		return -1;
	}
	while (nb_frames < MAX_FRAMES && fread(rh, sizeof(rh), 1, f) == 1) {
		uint32_t caplen = rd32(rh + 8, swap);
		struct frame *fr = &frames[nb_frames];

		if (caplen > FRAME_MAX || caplen != rd32(rh + 12, swap) ||
		    fread(fr->b, 1, caplen, f) != caplen)
			break;
		fr->len = caplen;
		nb_frames++;
	}
	fclose(f);
	return nb_frames;
}

/* --- tshark's fields: a header line of names, then one '|'-separated row per frame --- */

static char names[MAX_FIELDS][48];
static int nb_names;
static char values[MAX_FRAMES][MAX_FIELDS][80];

static int split(char *line, char out[][80], int max)
{
	int n = 0;
	char *s = line, *bar;

	line[strcspn(line, "\r\n")] = '\0';
	while (n < max) {
		bar = strchr(s, '|');
		if (bar != NULL)
			*bar = '\0';
		snprintf(out[n++], 80, "%s", s);
		if (bar == NULL)
			break;
		s = bar + 1;
	}
	return n;
}

static int read_fields(const char *path)
{
	char line[4096], hdr[MAX_FIELDS][80];
	FILE *f = fopen(path, "r");
	int rows = 0;

	if (f == NULL)
		return -1;
	if (fgets(line, sizeof(line), f) == NULL) {
		fclose(f);
		return -1;
	}
	nb_names = split(line, hdr, MAX_FIELDS);
	for (int i = 0; i < nb_names; i++)
		snprintf(names[i], sizeof(names[i]), "%s", hdr[i]);
	while (rows < MAX_FRAMES && fgets(line, sizeof(line), f) != NULL)
		if (split(line, values[rows], MAX_FIELDS) == nb_names)
			rows++;
	fclose(f);
	return rows;
}

/* Field @name of row @row as tshark printed it ("" when absent). */
static const char *field(int row, const char *name)
{
	for (int i = 0; i < nb_names; i++)
		if (strcmp(names[i], name) == 0)
			return values[row][i];
	return "";
}

static bool has(int row, const char *name)
{
	return *field(row, name) != '\0';
}

/* A number as tshark prints it: decimal, 0x hex, or True/False. */
static unsigned long long num(int row, const char *name)
{
	const char *s = field(row, name);

	if (strcmp(s, "True") == 0)
		return 1;
	if (strcmp(s, "False") == 0)
		return 0;
	return strtoull(s, NULL, 0);
}

/* Compare a parsed value with tshark's, naming the frame and the field. */
#define FIELD_EQ(i, name, v) do { \
	unsigned long long _t = num(i, name), _v = (unsigned long long)(v); \
	CHECK(_t == _v, "frame %d: %s: tshark %llu (%s), dpverbs %llu", i + 1, name, _t, \
	      field(i, name), _v); \
} while (0)

static void check_mac(int i, const char *name, const uint8_t mac[6])
{
	unsigned int b[6] = { 0 };
	uint8_t t[6];

	CHECK(sscanf(field(i, name), "%x:%x:%x:%x:%x:%x", &b[0], &b[1], &b[2], &b[3], &b[4],
		     &b[5]) == 6, "frame %d: %s '%s'", i + 1, name, field(i, name));
	for (int k = 0; k < 6; k++)
		t[k] = (uint8_t)b[k];
	CHECK(memcmp(t, mac, 6) == 0, "frame %d: %s %s", i + 1, name, field(i, name));
}

/* An address tshark printed against a GID of dpverbs (IPv4-mapped for IPv4). */
static void check_addr(int i, const char *name, const uint8_t gid[16], bool v6)
{
	uint8_t g[16] = { 0 };
	struct in_addr a4;

	if (v6) {
		CHECK(inet_pton(AF_INET6, field(i, name), g) == 1, "frame %d: %s", i + 1, name);
	} else {
		CHECK(inet_pton(AF_INET, field(i, name), &a4) == 1, "frame %d: %s", i + 1, name);
		dpv__roce_gid_from_ipv4(g, a4.s_addr);
	}
	CHECK(memcmp(g, gid, 16) == 0, "frame %d: %s %s", i + 1, name, field(i, name));
}

static void check_network(int i, const struct frame *f, const struct dpv_roce_frame *p)
{
	const uint8_t *udp = f->b + p->l2_len + p->l3_len;

	check_mac(i, "eth.src", p->smac);
	check_mac(i, "eth.dst", p->dmac);
	check_addr(i, p->ipv6 ? "ipv6.src" : "ip.src", p->sgid, p->ipv6);
	check_addr(i, p->ipv6 ? "ipv6.dst" : "ip.dst", p->dgid, p->ipv6);
	if (p->ipv6) {
		FIELD_EQ(i, "ipv6.hlim", p->hop_limit);
		FIELD_EQ(i, "ipv6.tclass", p->traffic_class);
		FIELD_EQ(i, "ipv6.flow", p->flow_label);
		CHECK_EQ(p->flow_label, 0);             /* rxe: ip6_flow_hdr(ip6h, prio, 0) */
	} else {
		FIELD_EQ(i, "ip.ttl", p->hop_limit);
		FIELD_EQ(i, "ip.dsfield", p->traffic_class);
		CHECK(num(i, "ip.flags.df") == 1, "frame %d: rxe sets DF", i + 1);
	}
	FIELD_EQ(i, "udp.srcport", p->sport);
	FIELD_EQ(i, "udp.dstport", DPV_ROCE_UDP_PORT);
	FIELD_EQ(i, "udp.checksum", (udp[6] << 8) | udp[7]);
	CHECK(udp[6] == 0 && udp[7] == 0, "frame %d: rxe's UDP checksum is %02x%02x, not 0",
	      i + 1, udp[6], udp[7]);
	CHECK_EQ(p->vlans, 0);
}

static void check_transport(int i, const struct frame *f, const struct dpv_roce_frame *p)
{
	const struct dpv_roce_hdrs *h = &p->h;
	uint32_t flags = dpv__roce_opinfo(h->bth.opcode)->flags;
	const uint8_t *icrc = f->b + p->payload_off + p->payload_len + h->bth.pad;

	FIELD_EQ(i, "infiniband.bth.opcode", h->bth.opcode);
	FIELD_EQ(i, "infiniband.bth.se", h->bth.se);
	FIELD_EQ(i, "infiniband.bth.m", h->bth.mig);
	FIELD_EQ(i, "infiniband.bth.padcnt", h->bth.pad);
	FIELD_EQ(i, "infiniband.bth.tver", h->bth.tver);
	FIELD_EQ(i, "infiniband.bth.p_key", h->bth.pkey);
	FIELD_EQ(i, "infiniband.bth.destqp", h->bth.dqpn);
	FIELD_EQ(i, "infiniband.bth.a", h->bth.ackreq);
	FIELD_EQ(i, "infiniband.bth.psn", h->bth.psn);
	if (flags & DPV_ROCE_F_DETH) {
		FIELD_EQ(i, "infiniband.deth.q_key", h->deth.qkey);
		FIELD_EQ(i, "infiniband.deth.srcqp", h->deth.sqpn);
	}
	if (flags & DPV_ROCE_F_RETH) {
		FIELD_EQ(i, "infiniband.reth.va", h->reth.va);
		FIELD_EQ(i, "infiniband.reth.r_key", h->reth.rkey);
		FIELD_EQ(i, "infiniband.reth.dmalen", h->reth.len);
	}
	if (flags & DPV_ROCE_F_AETH) {
		FIELD_EQ(i, "infiniband.aeth.syndrome", h->aeth.syndrome);
		FIELD_EQ(i, "infiniband.aeth.msn", h->aeth.msn);
	}
	if (flags & DPV_ROCE_F_IMM)
		CHECK(strtoul(field(i, "infiniband.immdt"), NULL, 16) == ntohl(h->imm),
		      "frame %d: ImmDt", i + 1);
	CHECK(!has(i, "infiniband.reth.va") || (flags & DPV_ROCE_F_RETH),
	      "frame %d: tshark sees a RETH dpverbs does not", i + 1);
	CHECK(!has(i, "infiniband.aeth.syndrome") || (flags & DPV_ROCE_F_AETH),
	      "frame %d: tshark sees an AETH dpverbs does not", i + 1);
	/* tshark's data is payload + pad; it shows the ICRC's wire bytes as a big-endian number */
	FIELD_EQ(i, "data.len", p->payload_len ? p->payload_len + h->bth.pad : 0);
	FIELD_EQ(i, "infiniband.invariant.crc",
		 (uint32_t)icrc[0] << 24 | icrc[1] << 16 | icrc[2] << 8 | icrc[3]);
}

/* The UDP source port as dpverbs computes it for the sending QP: a UD QP's from its own QPN
 * (rxe_qp_init_req), a connected QP's from both (rdma_get_udp_sport in rxe_modify_qp). */
static uint16_t expected_sport(int i, const struct dpv_roce_frame *p)
{
	uint32_t own = (uint32_t)num(i, "rxe.qpn");

	if ((p->h.bth.opcode & 0xE0) == DPV_ROCE_UD) {
		CHECK_EQ(own, p->h.deth.sqpn);
		return dpv__roce_udp_sport_qpn(own);
	}
	return dpv__roce_udp_sport(0, own, p->h.bth.dqpn);
}

/* dpverbs' own frame for the same fields: byte for byte rxe's. */
static void check_rebuild(int i, const struct frame *f, const struct dpv_roce_frame *p)
{
	const uint8_t *ip = f->b + p->l2_len;
	struct dpv_roce_path path = {
		.traffic_class = p->traffic_class, .flow_label = p->flow_label,
		.hop_limit = p->hop_limit, .sport = expected_sport(i, p),
		.ip_id = p->ipv6 ? 0 : (uint16_t)(ip[4] << 8 | ip[5]),
	};
	uint8_t out[FRAME_MAX];
	uint32_t end = p->payload_off + p->payload_len + p->h.bth.pad + DPV_ROCE_ICRC_LEN;
	int n;

	memcpy(path.dmac, p->dmac, 6);
	memcpy(path.smac, p->smac, 6);
	memcpy(path.sgid, p->sgid, 16);
	memcpy(path.dgid, p->dgid, 16);
	CHECK(path.sport == p->sport, "frame %d: rxe's source port %#x, dpverbs' %#x", i + 1,
	      p->sport, path.sport);
	n = dpv__roce_frame_build(out, sizeof(out), &path, &p->h, f->b + p->payload_off,
				  p->payload_len);
	CHECK(n == (int)end, "frame %d: built %d bytes, rxe's frame has %u", i + 1, n, end);
	if (n == (int)end && memcmp(out, f->b, end) != 0) {
		int k = 0;

		while (out[k] == f->b[k])
			k++;
		CHECK(false, "frame %d: dpverbs' frame differs from byte %d on (%02x, rxe %02x)",
		      i + 1, k, out[k], f->b[k]);
	} else {
		CHECK(n == (int)end, "frame %d rebuilt", i + 1);
	}
}

int main(int argc, char **argv)
{
	int rows;

	if (argc != 3) {
		fprintf(stderr, "usage: %s FRAMES.pcap FRAMES.txt\n", argv[0]);
		return 2;
	}
	if (read_pcap(argv[1]) <= 0 || (rows = read_fields(argv[2])) < 0) {
		fprintf(stderr, "cannot read %s or %s\n", argv[1], argv[2]);
		return 1;
	}
	CHECK(rows == nb_frames, "%d frames, %d rows of fields", nb_frames, rows);
	for (int i = 0; i < nb_frames && i < rows; i++) {
		const struct frame *f = &frames[i];
		struct dpv_roce_frame p;
		int rc = dpv__roce_frame_parse(f->b, f->len, &p);

		CHECK(rc == 0, "frame %d (%s): dpv__roce_frame_parse: %s", i + 1,
		      field(i, "scenario"), strerror(-rc));
		if (rc != 0)
			continue;
		FIELD_EQ(i, "frame.len", f->len);
		check_network(i, f, &p);
		check_transport(i, f, &p);
		check_rebuild(i, f, &p);
		printf("frame %2d %-14s %-22s IPv%d sport %#06x dqpn %#08x psn %#08x %4u bytes\n",
		       i + 1, field(i, "scenario"), dpv__roce_opinfo(p.h.bth.opcode)->name,
		       p.ipv6 ? 6 : 4, p.sport, p.h.bth.dqpn, p.h.bth.psn, p.payload_len);
	}
	return test_done("test_roce_rxe");
}
