/* libFuzzer harness: the RoCEv2 receive parser (lib/roce) with arbitrary frames. The frame
 * lies in a buffer of exactly its size, so AddressSanitizer sees any read past its end. What
 * must hold:
 * - an accepted frame's offsets fit in it and agree (BTH after IP and UDP, payload after the
 *   opcode's headers, payload + pad + ICRC inside the UDP datagram, a known opcode, P_Key and
 *   pad as the table allows);
 * - built again from what the parser returned (path, headers, payload), the frame parses to the
 *   same headers and payload: what is accepted can be said back;
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
	CHECK(dpv__roce_frame_parse(g, (size_t)n, &again) == 0);
	CHECK(again.payload_len == fr->payload_len &&
	      memcmp(g + again.payload_off, f + fr->payload_off, fr->payload_len) == 0);
	CHECK(again.h.bth.opcode == fr->h.bth.opcode && again.h.bth.dqpn == fr->h.bth.dqpn &&
	      again.h.bth.psn == fr->h.bth.psn && again.h.bth.pad == fr->h.bth.pad &&
	      memcmp(&again.h.reth, &fr->h.reth, sizeof(fr->h.reth)) == 0 &&
	      memcmp(&again.h.atomic, &fr->h.atomic, sizeof(fr->h.atomic)) == 0 &&
	      again.h.imm == fr->h.imm && again.h.deth.qkey == fr->h.deth.qkey &&
	      !memcmp(again.sgid, fr->sgid, 16) && !memcmp(again.dgid, fr->dgid, 16));
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
	rc = dpv__roce_frame_parse(f, size, &fr);
	CHECK(rc == 0 || rc == -ENOMSG || rc == -EBADMSG || rc == -EILSEQ || rc == -EPROTO ||
	      rc == -EPROTONOSUPPORT || rc == -EACCES);
	check_local(data, size, rc);
	if (rc == -EILSEQ) {
		fix_icrc(f, &fr);
		rc = dpv__roce_frame_parse(f, size, &fr);
		CHECK(rc == 0);
	}
	if (rc == 0) {
		check_accepted(&fr, size);
		check_rebuilt(f, &fr);
	}
	if (dpv__roce_hdrs_decode(f, size, &h, &hl, &pay) == 0)
		CHECK((size_t)hl + pay + h.bth.pad + 4 == size);
	free(f);
	return 0;
}
