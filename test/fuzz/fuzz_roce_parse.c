/* SPDX-License-Identifier: BSD-3-Clause */
/* libFuzzer harness: the RoCEv2 receive parser (lib/roce) with arbitrary frames. The frame
 * lies in a buffer of exactly its size, so AddressSanitizer sees any read past its end. What
 * must hold:
 * - an accepted frame's offsets fit in it and agree (BTH after IP and UDP, payload after the
 *   opcode's headers, payload + pad + ICRC inside the UDP datagram, a known opcode, P_Key and
 *   pad as the table allows);
 * - every field the parser returns is the frame's, read here independently at its IBA offset
 *   and width: Ethernet addresses, VLAN count, the IPv4/IPv6 fields and addresses (GIDs), the
 *   UDP source port, every BTH field (opcode, SE, MigReq, pad, TVer, P_Key, FECN, BECN, dest
 *   QP, AckReq, PSN) and every field of the extension headers the opcode carries (DETH's Q_Key
 *   and source QP, XRCETH, RETH, AtomicETH, AETH, AtomicAckETH, ImmDt, IETH), those it does not
 *   carry left zero; the extension headers add up to the opcode's header length;
 * - built again from what the parser returned (path, headers, payload), the frame parses to the
 *   same thing, every field of the headers and of the network path compared: what is accepted
 *   can be said back;
 * - a frame refused only for its ICRC (-EILSEQ: every other check passed) is accepted once its
 *   ICRC is made right; the fuzzer then gets past the ICRC with its mutations, too;
 * - the transport-header decoder alone, on the same bytes, returns an error or offsets that fit. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "roce_wire.h"

#define CHECK(cond) do { \
	if (!(cond)) { \
		fprintf(stderr, "fuzz_roce_parse: %s does not hold\n", #cond); \
		abort(); \
	} \
} while (0)

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
	return 0;
}

static void check_accepted(const struct dpv_roce_frame *fr, size_t len)
{
	const struct dpv_roce_opinfo *op = dpv__roce_opinfo(fr->h.bth.opcode);

	CHECK(op->name != NULL && fr->h.bth.tver == 0 && (fr->h.bth.pkey & 0x7FFF) == 0x7FFF);
	CHECK(fr->bth_off == fr->l2_len + fr->l3_len + 8 && fr->vlans <= 2);
	CHECK(fr->l3_len == (fr->ipv6 ? 40 : 20));
	CHECK(fr->payload_off == fr->bth_off + op->hdr_len);
	CHECK((size_t)fr->payload_off + fr->payload_len + fr->h.bth.pad + 4 <= len);
	CHECK((op->flags & DPV_ROCE_F_PAYLOAD) || (fr->payload_len == 0 && fr->h.bth.pad == 0));
	CHECK((fr->payload_len + fr->h.bth.pad) % 4 == 0);
}

static uint64_t be(const uint8_t *p, int n)
{
	uint64_t v = 0;

	for (int i = 0; i < n; i++)
		v = v << 8 | p[i];
	return v;
}

/* Every field of two parsed header sets (the absent headers' fields are zero in both). */
static bool hdrs_equal(const struct dpv_roce_hdrs *a, const struct dpv_roce_hdrs *b)
{
	return a->bth.opcode == b->bth.opcode && a->bth.se == b->bth.se &&
	       a->bth.mig == b->bth.mig && a->bth.fecn == b->bth.fecn &&
	       a->bth.becn == b->bth.becn && a->bth.ackreq == b->bth.ackreq &&
	       a->bth.pad == b->bth.pad && a->bth.tver == b->bth.tver &&
	       a->bth.pkey == b->bth.pkey && a->bth.dqpn == b->bth.dqpn &&
	       a->bth.psn == b->bth.psn && a->deth.qkey == b->deth.qkey &&
	       a->deth.sqpn == b->deth.sqpn && a->xrceth.srqn == b->xrceth.srqn &&
	       a->reth.va == b->reth.va && a->reth.rkey == b->reth.rkey &&
	       a->reth.len == b->reth.len && a->atomic.va == b->atomic.va &&
	       a->atomic.rkey == b->atomic.rkey && a->atomic.swap_add == b->atomic.swap_add &&
	       a->atomic.compare == b->atomic.compare && a->aeth.syndrome == b->aeth.syndrome &&
	       a->aeth.msn == b->aeth.msn && a->atomic_ack.orig == b->atomic_ack.orig &&
	       a->imm == b->imm && a->ieth_rkey == b->ieth_rkey;
}

/* The network fields of two parses (offsets relative to the Ethernet header's end, as a frame
 * built again has at most one VLAN tag). */
static bool path_equal(const struct dpv_roce_frame *a, const struct dpv_roce_frame *b)
{
	return a->ipv6 == b->ipv6 && (a->vlans != 0) == (b->vlans != 0) &&
	       a->l3_len == b->l3_len && a->bth_off - a->l2_len == b->bth_off - b->l2_len &&
	       a->payload_off - a->l2_len == b->payload_off - b->l2_len &&
	       a->payload_len == b->payload_len && !memcmp(a->smac, b->smac, 6) &&
	       !memcmp(a->dmac, b->dmac, 6) && !memcmp(a->sgid, b->sgid, 16) &&
	       !memcmp(a->dgid, b->dgid, 16) && a->traffic_class == b->traffic_class &&
	       a->hop_limit == b->hop_limit && a->flow_label == b->flow_label &&
	       a->sport == b->sport;
}

/* The reference: what an accepted frame carries, read here from its bytes (IBA 9.2 and
 * Annex A17 layouts; which extension headers the opcode has from the codec's table). */
static void check_fields(const uint8_t *f, const struct dpv_roce_frame *fr)
{
	const struct dpv_roce_opinfo *op = dpv__roce_opinfo(fr->h.bth.opcode);
	const uint8_t *ip = f + fr->l2_len, *b = f + fr->bth_off, *x = b + 12;
	struct dpv_roce_hdrs w;
	uint8_t gid[16];

	/* Ethernet, tags, IP, UDP */
	CHECK(!memcmp(fr->dmac, f, 6) && !memcmp(fr->smac, f + 6, 6));
	CHECK(fr->l2_len == 14 + 4 * fr->vlans);
	if (fr->ipv6) {
		CHECK(fr->traffic_class == (uint8_t)((ip[0] & 0xF) << 4 | ip[1] >> 4));
		CHECK(fr->flow_label == (uint32_t)be(ip + 1, 3) % (1 << 20));
		CHECK(fr->hop_limit == ip[7]);
		CHECK(!memcmp(fr->sgid, ip + 8, 16) && !memcmp(fr->dgid, ip + 24, 16));
	} else {
		CHECK(fr->traffic_class == ip[1] && fr->hop_limit == ip[8] && fr->flow_label == 0);
		memset(gid, 0, 10);
		gid[10] = gid[11] = 0xFF;
		memcpy(gid + 12, ip + 12, 4);
		CHECK(!memcmp(fr->sgid, gid, 16));
		memcpy(gid + 12, ip + 16, 4);
		CHECK(!memcmp(fr->dgid, gid, 16));
	}
	CHECK(fr->sport == be(ip + fr->l3_len, 2) && be(ip + fr->l3_len + 2, 2) == 4791);
	/* BTH */
	memset(&w, 0, sizeof(w));
	w.bth.opcode = b[0];
	w.bth.se = b[1] >> 7;
	w.bth.mig = b[1] >> 6 & 1;
	w.bth.pad = b[1] >> 4 & 3;
	w.bth.tver = b[1] & 0xF;
	w.bth.pkey = (uint16_t)be(b + 2, 2);
	w.bth.fecn = b[4] >> 7;
	w.bth.becn = b[4] >> 6 & 1;
	w.bth.dqpn = (uint32_t)be(b + 5, 3);
	w.bth.ackreq = b[8] >> 7;
	w.bth.psn = (uint32_t)be(b + 9, 3);
	/* the extension headers, in IBA order */
	if (op->flags & DPV_ROCE_F_DETH) {
		w.deth.qkey = (uint32_t)be(x, 4);
		w.deth.sqpn = (uint32_t)be(x + 5, 3);         /* after a reserved byte */
		x += 8;
	}
	if (op->flags & DPV_ROCE_F_XRCETH) {
		w.xrceth.srqn = (uint32_t)be(x + 1, 3);
		x += 4;
	}
	if (op->flags & DPV_ROCE_F_RETH) {
		w.reth.va = be(x, 8);
		w.reth.rkey = (uint32_t)be(x + 8, 4);
		w.reth.len = (uint32_t)be(x + 12, 4);
		x += 16;
	}
	if (op->flags & DPV_ROCE_F_ATOMIC) {
		w.atomic.va = be(x, 8);
		w.atomic.rkey = (uint32_t)be(x + 8, 4);
		w.atomic.swap_add = be(x + 12, 8);
		w.atomic.compare = be(x + 20, 8);
		x += 28;
	}
	if (op->flags & DPV_ROCE_F_AETH) {
		w.aeth.syndrome = x[0];
		w.aeth.msn = (uint32_t)be(x + 1, 3);
		x += 4;
	}
	if (op->flags & DPV_ROCE_F_ATOMIC_ACK) {
		w.atomic_ack.orig = be(x, 8);
		x += 8;
	}
	if (op->flags & DPV_ROCE_F_IMM) {
		memcpy(&w.imm, x, 4);                         /* kept as the wire has it */
		x += 4;
	}
	if (op->flags & DPV_ROCE_F_IETH) {
		w.ieth_rkey = (uint32_t)be(x, 4);
		x += 4;
	}
	CHECK(x - b == op->hdr_len);
	CHECK(hdrs_equal(&fr->h, &w));
}

/* Say it back: a frame built from the parsed fields parses to the same thing. */
static void check_rebuilt(const uint8_t *f, const struct dpv_roce_frame *fr)
{
	struct dpv_roce_path p = { .vlan = fr->vlans != 0, .traffic_class = fr->traffic_class,
				   .flow_label = fr->flow_label, .hop_limit = fr->hop_limit,
				   .sport = fr->sport };
	size_t cap = fr->payload_len + 200;
	uint8_t *g = malloc(cap);
	struct dpv_roce_frame again;
	int n;

	CHECK(g != NULL);
	memcpy(p.dmac, fr->dmac, 6);
	memcpy(p.smac, fr->smac, 6);
	memcpy(p.sgid, fr->sgid, 16);
	memcpy(p.dgid, fr->dgid, 16);
	n = dpv__roce_frame_build(g, cap, &p, &fr->h, f + fr->payload_off, fr->payload_len);
	CHECK(n > 0);
	memset(&again, 0, sizeof(again));
	CHECK(dpv__roce_frame_parse(g, (size_t)n, &again) == 0);
	CHECK(again.payload_len == fr->payload_len &&
	      memcmp(g + again.payload_off, f + fr->payload_off, fr->payload_len) == 0);
	CHECK(hdrs_equal(&again.h, &fr->h));
	CHECK(path_equal(&again, fr));
	free(g);
}

/* The ICRC where the parser looked for it, made right. */
static void fix_icrc(uint8_t *f, const struct dpv_roce_frame *fr)
{
	size_t at = (size_t)fr->payload_off + fr->payload_len + fr->h.bth.pad;
	uint32_t icrc = dpv__roce_icrc(f + fr->l2_len, fr->ipv6, at - fr->l2_len);

	for (int i = 0; i < 4; i++, icrc >>= 8)
		f[at + i] = (uint8_t)icrc;
}

/* The loopback's parse (a frame built without its ICRC): the full parse's verdict but for the
 * ICRC, never a byte outside the frame; with fill, the ICRC that makes the full parse take it. */
static void check_local(const uint8_t *data, size_t size, int full)
{
	uint8_t *l = malloc(size ? size : 1);
	struct dpv_roce_frame lf;
	int rc;

	CHECK(l != NULL);
	memcpy(l, data, size);
	rc = dpv__roce_frame_parse_local(l, size, &lf, false);
	CHECK(rc == (full == -EILSEQ ? 0 : full));
	CHECK(memcmp(l, data, size) == 0);             /* without fill: read only */
	rc = dpv__roce_frame_parse_local(l, size, &lf, true);
	CHECK(rc == (full == -EILSEQ ? 0 : full));
	if (rc == 0)
		CHECK(dpv__roce_frame_parse(l, size, &lf) == 0);
	free(l);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	uint8_t *f = malloc(size ? size : 1);
	struct dpv_roce_frame fr;
	struct dpv_roce_hdrs h;
	uint32_t hl, pay;
	int rc;

	CHECK(f != NULL);
	memcpy(f, data, size);
	memset(&fr, 0, sizeof(fr));
	rc = dpv__roce_frame_parse(f, size, &fr);
	CHECK(rc == 0 || rc == -ENOMSG || rc == -EBADMSG || rc == -EILSEQ || rc == -EPROTO ||
	      rc == -EPROTONOSUPPORT || rc == -EACCES);
	check_local(data, size, rc);
	if (rc == -EILSEQ) {
		fix_icrc(f, &fr);
		memset(&fr, 0, sizeof(fr));
		rc = dpv__roce_frame_parse(f, size, &fr);
		CHECK(rc == 0);
	}
	if (rc == 0) {
		check_accepted(&fr, size);
		check_fields(f, &fr);
		check_rebuilt(f, &fr);
	}
	if (dpv__roce_hdrs_decode(f, size, &h, &hl, &pay) == 0)
		CHECK((size_t)hl + pay + h.bth.pad + 4 == size);
	free(f);
	return 0;
}
