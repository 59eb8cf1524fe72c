/* SPDX-License-Identifier: BSD-3-Clause */
/* libFuzzer harness: the flow-spec parser behind ibv_create_flow (lib/verbs/flow.c) with
 * arbitrary attributes and specs, then a frame from the input through a net_ring port (what a
 * QP sends, the port receives) and the steering that the rule made. The attribute and its specs
 * lie in a buffer of exactly their bytes, num_of_specs counting the specs that the buffer holds
 * when walked by their own size fields (what a program owes ibv_create_flow: attr.size is
 * never read, and is fuzzed), so AddressSanitizer sees a read past them. What must hold:
 * - ibv_create_flow gives a flow, or NULL with errno EINVAL, EOPNOTSUPP or ENOMEM;
 * - a frame received is byte for byte the frame sent;
 * - the frame reaches the QP exactly when a reference decides it should: a SNIFFER or
 *   ALL_DEFAULT rule takes every frame, an MC_DEFAULT rule every multicast one (the only rule:
 *   nothing else steers it), a NORMAL rule (DONT_TRAP or not) those its specs match. The
 *   reference matcher is written here from ibv_create_flow(3)'s specs, on its own parse of the
 *   frame: every spec must hold; each field is compared under its mask ((frame & mask) ==
 *   (value & mask)); a spec of a layer asks for that header: an IPV4/IPV4_EXT spec for an IPv4
 *   header, IPV6 for an IPv6 one, TCP/UDP for that L4 header (not in an IP fragment), an ETH
 *   spec's VLAN mask for a tag. dpverbs' documented choices (doc/semantics.md): up to two tags
 *   (802.1Q/802.1ad), the ether type after them and the VLAN TCI of the last; IPv6 next header
 *   after the hop-by-hop, routing, destination-options and fragment headers;
 * - ibv_destroy_flow of a flow returns 0. */
#include <stdarg.h>
#include <stddef.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

#include <infiniband/verbs.h>
#include <dpverbs.h>

#include "fuzz_input.h"

#define FRAME_MAX 1514
#define SPEC_MAX 1024

static struct ibv_context *ctx;
static struct ibv_pd *pd;
static struct ibv_cq *scq, *rcq;
static struct ibv_qp *tx, *rx;
static struct ibv_mr *mr;
static uint8_t *buf;                      /* [0, 2K): the frame sent; [2K, 4K): received */
static int rx_posted;

static void die(const char *what, ...) __attribute__((format(printf, 1, 2), noreturn));
static void die(const char *what, ...)
{
	va_list ap;

	va_start(ap, what);
	fprintf(stderr, "fuzz_flow_spec: ");
	vfprintf(stderr, what, ap);
	fputc('\n', stderr);
	va_end(ap);
	abort();
}

static struct ibv_qp *raw_qp(struct ibv_cq *cq)
{
	struct ibv_qp_init_attr init = { .send_cq = cq, .recv_cq = cq, .qp_type = IBV_QPT_RAW_PACKET,
					 .cap = { .max_send_wr = 4, .max_send_sge = 1,
						  .max_recv_wr = 4, .max_recv_sge = 1 } };
	struct ibv_qp *qp = ibv_create_qp(pd, &init);
	enum ibv_qp_state to[] = { IBV_QPS_INIT, IBV_QPS_RTR, IBV_QPS_RTS };

	for (int i = 0; qp != NULL && i < 3; i++) {
		struct ibv_qp_attr a = { .qp_state = to[i], .port_num = 1 };

		if (ibv_modify_qp(qp, &a, IBV_QP_STATE | (i == 0 ? IBV_QP_PORT : 0)) != 0)
			die("QP to RTS: %s", strerror(errno));
	}
	if (qp == NULL)
		die("ibv_create_qp: %s", strerror(errno));
	return qp;
}

/* At exit: every object destroyed, so that LeakSanitizer sees what dpverbs would leak. */
static void cleanup(void)
{
	if (tx != NULL)
		ibv_destroy_qp(tx);
	if (rx != NULL)
		ibv_destroy_qp(rx);
	if (mr != NULL)
		ibv_dereg_mr(mr);
	if (scq != NULL)
		ibv_destroy_cq(scq);
	if (rcq != NULL)
		ibv_destroy_cq(rcq);
	if (pd != NULL)
		ibv_dealloc_pd(pd);
	if (ctx != NULL)
		ibv_close_device(ctx);
}

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
	struct ibv_device **list;
	int n = 0;

	if (getenv("DPV_EAL_ARGS") == NULL)
		setenv("DPV_EAL_ARGS", "--vdev=net_ring0 --log-level=lib.eal:error "
		       "--log-level=lib.telemetry:error", 1);
	list = ibv_get_device_list(&n);
	if (list == NULL || n < 1 || (ctx = ibv_open_device(list[0])) == NULL)
		die("no net_ring device: %s", strerror(errno));
	ibv_free_device_list(list);
	pd = ibv_alloc_pd(ctx);
	scq = ibv_create_cq(ctx, 16, NULL, NULL, 0);
	rcq = ibv_create_cq(ctx, 16, NULL, NULL, 0);
	buf = mmap(NULL, 4096, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (pd == NULL || scq == NULL || rcq == NULL || buf == MAP_FAILED)
		die("setup: %s", strerror(errno));
	mr = ibv_reg_mr(pd, buf, 4096, IBV_ACCESS_LOCAL_WRITE);
	if (mr == NULL)
		die("ibv_reg_mr: %s", strerror(errno));
	tx = raw_qp(scq);
	rx = raw_qp(rcq);
	atexit(cleanup);
	return 0;
}

/* Specs as they come, or well-formed headers of known types with fuzzed contents: the type
 * (4 bytes) and size (2) of struct ibv_flow_spec_*, then the input's bytes from offset 6 (where
 * an ETH or TCP/UDP spec's val starts; IPV4, IPV4_EXT and IPV6 have 2 bytes of padding
 * first). */
static size_t make_specs(struct fuzz_input *in, uint8_t *specs, uint8_t *nspecs)
{
	struct spec_hdr { enum ibv_flow_spec_type type; uint16_t size; };
	static const struct spec_hdr known[] = {
		{ IBV_FLOW_SPEC_ETH, sizeof(struct ibv_flow_spec_eth) },
		{ IBV_FLOW_SPEC_IPV4, sizeof(struct ibv_flow_spec_ipv4) },
		{ IBV_FLOW_SPEC_IPV4_EXT, sizeof(struct ibv_flow_spec_ipv4_ext) },
		{ IBV_FLOW_SPEC_IPV6, sizeof(struct ibv_flow_spec_ipv6) },
		{ IBV_FLOW_SPEC_TCP, sizeof(struct ibv_flow_spec_tcp_udp) },
		{ IBV_FLOW_SPEC_UDP, sizeof(struct ibv_flow_spec_tcp_udp) },
	};
	uint8_t mode = fuzz_u8(in);
	size_t len = 0;

	*nspecs = fuzz_u8(in);
	if (mode & 1)                             /* raw bytes */
		return fuzz_bytes(in, specs, fuzz_u16(in) % SPEC_MAX);
	for (int i = 0; i < *nspecs % 8 && len + 128 <= SPEC_MAX; i++) {
		uint8_t k = fuzz_u8(in);
		struct spec_hdr hdr = known[k % 6];

		if (k & 0x80)
			hdr.size = fuzz_u8(in);
		memset(specs + len, 0, known[k % 6].size);
		memcpy(specs + len, &hdr.type, 4);
		memcpy(specs + len + 4, &hdr.size, 2);
		fuzz_bytes(in, specs + len + 6, known[k % 6].size - 6);
		len += known[k % 6].size;
	}
	if (mode & 2)
		*nspecs %= 8;
	return len;
}

/* ---- the reference: a frame's fields, and whether a rule's specs match them ---- */

struct fields {
	const uint8_t *dmac, *smac;
	uint16_t etype;                   /* after the tags */
	int tags;
	uint16_t tci;                     /* of the last tag */
	bool v4, v6, frag;
	uint8_t sip[16], dip[16];         /* IPv4: the first 4 bytes */
	uint8_t proto, tos, ttl;          /* IPv6: next header after the extensions, TC, hops */
	uint8_t l4;                       /* IPPROTO_TCP/UDP when that header is whole, else 0 */
	uint8_t ports[4];                 /* source and destination, as on the wire */
};

static uint16_t get16(const uint8_t *p)
{
	return (uint16_t)(p[0] << 8 | p[1]);
}

static void fields_of(const uint8_t *f, size_t len, struct fields *x)
{
	size_t off = 14, l3 = 0;

	memset(x, 0, sizeof(*x));
	x->dmac = f;
	x->smac = f + 6;
	x->etype = get16(f + 12);
	while ((x->etype == 0x8100 || x->etype == 0x88a8) && x->tags < 2 && len >= off + 4) {
		x->tci = get16(f + off);
		x->etype = get16(f + off + 2);
		off += 4;
		x->tags++;
	}
	f += off;
	len -= off;
	if (x->etype == 0x0800 && len >= 20 && f[0] >> 4 == 4 && (f[0] & 15) >= 5 &&
	    (size_t)(f[0] & 15) * 4 <= len) {
		x->v4 = true;
		memcpy(x->sip, f + 12, 4);
		memcpy(x->dip, f + 16, 4);
		x->proto = f[9];
		x->tos = f[1];
		x->ttl = f[8];
		x->frag = (get16(f + 6) & 0x3fff) != 0;        /* more fragments, or an offset */
		l3 = (size_t)(f[0] & 15) * 4;
	} else if (x->etype == 0x86dd && len >= 40 && f[0] >> 4 == 6) {
		uint8_t next = f[6];

		l3 = 40;
		for (;;) {
			if (next == 44) {                       /* fragment */
				x->frag = true;
				if (len < l3 + 8)
					break;
				next = f[l3];
				l3 += 8;
			} else if (next == 0 || next == 43 || next == 60) {
				if (len < l3 + 8 || len < l3 + ((size_t)f[l3 + 1] + 1) * 8)
					break;
				next = f[l3];
				l3 += ((size_t)f[l3 + 1] + 1) * 8;
			} else {
				x->v6 = true;
				break;
			}
		}
		if (x->v6) {
			memcpy(x->sip, f + 8, 16);
			memcpy(x->dip, f + 24, 16);
			x->proto = next;
			x->tos = (uint8_t)(f[0] << 4 | f[1] >> 4);
			x->ttl = f[7];
		}
	}
	if ((x->v4 || x->v6) && !x->frag) {
		const uint8_t *l = f + l3;
		size_t left = len - l3;

		size_t doff = left >= 20 ? (size_t)(l[12] >> 4) * 4 : 0;     /* TCP data offset */

		if ((x->proto == 17 && left >= 8) ||
		    (x->proto == 6 && doff >= 20 && doff <= left)) {
			x->l4 = x->proto;
			memcpy(x->ports, l, 4);
		}
	}
}

/* (@a & @m) == (@v & @m) over @n bytes. */
static bool masked(const void *a, const void *v, const void *m, size_t n)
{
	const uint8_t *pa = a, *pv = v, *pm = m;

	for (size_t i = 0; i < n; i++)
		if ((pa[i] ^ pv[i]) & pm[i])
			return false;
	return true;
}

static bool zero(const void *p, size_t n)
{
	static const uint8_t z[16];

	return masked(p, z, p, n);        /* p & p == 0 & p */
}

/* Does the NORMAL rule of @attr (its specs in @specs, as given) match the frame? */
static bool ref_match(const uint8_t *specs, uint8_t nspecs, const struct fields *x)
{
	const uint8_t *p = specs;

	for (int i = 0; i < nspecs; i++) {
		struct ibv_flow_spec s;
		uint16_t size;

		memcpy(&size, p + offsetof(struct ibv_flow_spec_eth, size), 2);
		memset(&s, 0, sizeof(s));
		memcpy(&s, p, size < sizeof(s) ? size : sizeof(s));
		p += size;
		switch ((int)s.hdr.type) {
		case IBV_FLOW_SPEC_ETH: {
			const struct ibv_flow_eth_filter *v = &s.eth.val, *m = &s.eth.mask;
			uint8_t et[2] = { (uint8_t)(x->etype >> 8), (uint8_t)x->etype };
			uint8_t tci[2] = { (uint8_t)(x->tci >> 8), (uint8_t)x->tci };

			if (!masked(x->dmac, v->dst_mac, m->dst_mac, 6) ||
			    !masked(x->smac, v->src_mac, m->src_mac, 6) ||
			    !masked(et, &v->ether_type, &m->ether_type, 2) ||
			    (!zero(&m->vlan_tag, 2) &&
			     (x->tags == 0 || !masked(tci, &v->vlan_tag, &m->vlan_tag, 2))))
				return false;
			break;
		}
		case IBV_FLOW_SPEC_IPV4:
			if (!x->v4 || !masked(x->sip, &s.ipv4.val.src_ip, &s.ipv4.mask.src_ip, 4) ||
			    !masked(x->dip, &s.ipv4.val.dst_ip, &s.ipv4.mask.dst_ip, 4))
				return false;
			break;
		case IBV_FLOW_SPEC_IPV4_EXT:
			if (!x->v4 ||
			    !masked(x->sip, &s.ipv4_ext.val.src_ip, &s.ipv4_ext.mask.src_ip, 4) ||
			    !masked(x->dip, &s.ipv4_ext.val.dst_ip, &s.ipv4_ext.mask.dst_ip, 4) ||
			    !masked(&x->proto, &s.ipv4_ext.val.proto, &s.ipv4_ext.mask.proto, 1) ||
			    !masked(&x->tos, &s.ipv4_ext.val.tos, &s.ipv4_ext.mask.tos, 1) ||
			    !masked(&x->ttl, &s.ipv4_ext.val.ttl, &s.ipv4_ext.mask.ttl, 1))
				return false;
			break;
		case IBV_FLOW_SPEC_IPV6: {
			const struct ibv_flow_ipv6_filter *v = &s.ipv6.val, *m = &s.ipv6.mask;

			if (!x->v6 || !masked(x->sip, v->src_ip, m->src_ip, 16) ||
			    !masked(x->dip, v->dst_ip, m->dst_ip, 16) ||
			    !masked(&x->proto, &v->next_hdr, &m->next_hdr, 1) ||
			    !masked(&x->tos, &v->traffic_class, &m->traffic_class, 1) ||
			    !masked(&x->ttl, &v->hop_limit, &m->hop_limit, 1))
				return false;
			break;
		}
		case IBV_FLOW_SPEC_TCP:
		case IBV_FLOW_SPEC_UDP:
			if (x->l4 != (s.hdr.type == IBV_FLOW_SPEC_TCP ? 6 : 17) ||
			    !masked(x->ports, &s.tcp_udp.val.src_port, &s.tcp_udp.mask.src_port,
				    2) ||
			    !masked(x->ports + 2, &s.tcp_udp.val.dst_port,
				    &s.tcp_udp.mask.dst_port, 2))
				return false;
			break;
		default:
			die("a flow was made with spec type %#x", (unsigned int)s.hdr.type);
		}
	}
	return true;
}

/* How many of the first @n specs of @specs lie in its @len bytes, walked by their size fields
 * as ibv_create_flow walks them (a spec whose size is shorter than its header ends the walk:
 * the parser stops there). */
static uint8_t specs_held(const uint8_t *specs, size_t len, uint8_t n)
{
	struct { enum ibv_flow_spec_type type; uint16_t size; } hdr;
	size_t off = 0;
	uint8_t i;

	for (i = 0; i < n && len - off >= sizeof(hdr); i++) {
		memcpy(&hdr, specs + off, sizeof(hdr));
		if (hdr.size < sizeof(hdr))
			return i + 1;
		if (hdr.size > len - off)
			break;
		off += hdr.size;
	}
	return i;
}

/* Send the frame; if it arrives at rx, it is the same bytes. Returns whether it arrived. */
static bool send_and_receive(const uint8_t *frame, uint32_t len, bool expect)
{
	struct ibv_sge sge = { (uintptr_t)buf, len, mr->lkey };
	struct ibv_send_wr wr = { .wr_id = 1, .sg_list = &sge, .num_sge = 1, .opcode = IBV_WR_SEND,
				  .send_flags = IBV_SEND_SIGNALED }, *bad;
	struct ibv_wc wc;
	bool sent = false, arrived = false;

	memcpy(buf, frame, len);
	if (ibv_post_send(tx, &wr, &bad) != 0)
		die("ibv_post_send of a %u-byte frame: %s", len, strerror(errno));
	/* a frame expected is waited for (10^6 polls); one not, for 1000 polls after its send */
	for (int tries = 0; tries < 1000000 && !(sent && (arrived || (tries > 1000 && !expect)));
	     tries++) {
		int r = ibv_poll_cq(scq, 1, &wc);

		if (r == 1) {
			if (wc.status != IBV_WC_SUCCESS)
				die("send: %s", ibv_wc_status_str(wc.status));
			sent = true;
		}
		r = ibv_poll_cq(rcq, 1, &wc);
		if (r == 1) {
			if (wc.status != IBV_WC_SUCCESS || wc.byte_len != len ||
			    memcmp(buf + 2048, frame, len) != 0)
				die("received %u bytes (%s), sent %u", wc.byte_len,
				    ibv_wc_status_str(wc.status), len);
			arrived = true;
			rx_posted--;
		}
	}
	if (!sent)
		die("the send never completed");
	return arrived;
}

static void post_rx(void)
{
	struct ibv_sge sge = { (uintptr_t)buf + 2048, 2048, mr->lkey };
	struct ibv_recv_wr wr = { .wr_id = 2, .sg_list = &sge, .num_sge = 1 }, *bad;

	/* one WQE at a time, so that the bytes compared are the last frame's */
	if (rx_posted == 0) {
		if (ibv_post_recv(rx, &wr, &bad) != 0)
			die("ibv_post_recv: %s", strerror(errno));
		rx_posted = 1;
	}
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct fuzz_input in = { data, size };
	uint8_t specs[SPEC_MAX], frame[FRAME_MAX], nspecs, shape = fuzz_u8(&in);
	struct ibv_flow_attr a = { 0 }, *attr;
	struct ibv_flow *flow;
	size_t len = make_specs(&in, specs, &nspecs), flen;

	a.type = (shape & 0x80) ? fuzz_u8(&in) : (shape & 3);
	a.priority = fuzz_u16(&in);
	a.flags = (shape & 0x40) ? fuzz_u32(&in) : (shape & 4) ? IBV_FLOW_ATTR_FLAGS_DONT_TRAP : 0;
	a.port = (shape & 0x20) ? fuzz_u8(&in) : 1;
	a.comp_mask = (shape & 0x10) ? fuzz_u32(&in) : 0;
	a.num_of_specs = specs_held(specs, len, nspecs);
	a.size = (uint16_t)(sizeof(a) + len);
	if (shape & 0x08)
		a.size = fuzz_u16(&in);               /* any: ibv_create_flow never reads it */
	attr = malloc(sizeof(a) + len);
	if (attr == NULL)
		die("malloc");
	memcpy(attr, &a, sizeof(a));
	memcpy(attr + 1, specs, len);
	flow = ibv_create_flow(rx, attr);
	if (flow == NULL && errno != EINVAL && errno != EOPNOTSUPP && errno != ENOMEM)
		die("ibv_create_flow: errno %d", errno);
	free(attr);
	flen = fuzz_bytes(&in, frame, FRAME_MAX);
	/* a port with no rule is not polled: a frame sent then would wait in the ring for a later
	 * input's rule */
	if (flow != NULL && flen >= 14) {
		struct fields x;
		bool want, got;

		fields_of(frame, flen, &x);
		want = a.type == IBV_FLOW_ATTR_SNIFFER || a.type == IBV_FLOW_ATTR_ALL_DEFAULT ||
		       (a.type == IBV_FLOW_ATTR_MC_DEFAULT && (frame[0] & 1)) ||
		       (a.type == IBV_FLOW_ATTR_NORMAL && ref_match(specs, a.num_of_specs, &x));
		post_rx();
		got = send_and_receive(frame, (uint32_t)flen, want);
		if (got != want)
			die("a %zu-byte frame %s a rule of type %d with %u specs (flags %#x): the "
			    "reference says it %s", flen, got ? "reached" : "missed", a.type,
			    a.num_of_specs, a.flags, want ? "matches" : "does not match");
	}
	if (flow != NULL && ibv_destroy_flow(flow) != 0)
		die("ibv_destroy_flow failed");
	return 0;
}
