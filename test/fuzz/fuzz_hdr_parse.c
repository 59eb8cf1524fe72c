/* SPDX-License-Identifier: BSD-3-Clause */
/* libFuzzer harness: the header parser (lib/offload/parse.c) with arbitrary frames, and what
 * builds on it for TSO. The frame lies in a buffer of exactly its size, so AddressSanitizer
 * sees any read past its end. What must hold:
 * - the lengths found fit in the frame and agree with each other (an L3 needs an L2, an L4 an
 *   L3, at most two VLAN tags, each tag 4 bytes);
 * - dpv__tso_hdr_check accepts only exactly Ethernet[/VLAN]/IPv4-or-IPv6/TCP with nothing after;
 * - the segment headers dpv__tso_header makes from an accepted header parse to the same lengths,
 *   and an IPv4 one carries a header checksum that verifies. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "dpv_offload.h"

#define CHECK(cond) do { \
	if (!(cond)) { \
		fprintf(stderr, "fuzz_hdr_parse: %s does not hold\n", #cond); \
		abort(); \
	} \
} while (0)

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
	return 0;
}

static void check_info(const struct dpv_hdr_info *in, size_t len)
{
	CHECK((size_t)in->l2_len + in->l3_len + in->l4_len <= len);
	CHECK(in->vlans <= 2);
	CHECK(in->l2_len == 0 || in->l2_len == 14 + 4 * in->vlans);
	CHECK(in->l3 == DPV_L3_NONE || in->l2_len != 0);
	CHECK((in->l3 == DPV_L3_NONE) == (in->l3_len == 0));
	CHECK(in->l3 != DPV_L3_IPV4 || (in->l3_len >= 20 && in->l3_len <= 60));
	CHECK(in->l3 != DPV_L3_IPV6 || in->l3_len >= 40);
	CHECK(in->l4_len == 0 || (in->l3 != DPV_L3_NONE && !in->fragment));
	CHECK(in->l4_len == 0 || (in->l4_proto == 6 && in->l4_len >= 20 && in->l4_len <= 60) ||
	      (in->l4_proto == 17 && in->l4_len == 8));
}

/* Segment headers of an accepted TSO header: same layout, IPv4 checksum right. */
static void check_tso(const uint8_t *hdr, size_t len, const struct dpv_hdr_info *in)
{
	uint8_t *h = malloc(len);
	struct dpv_hdr_info again;
	uint32_t mss = 1 + hdr[0] * 7, payload = (uint32_t)hdr[1] * 977;
	uint32_t nseg = dpv__tso_segments(payload, mss);

	CHECK(h != NULL);
	CHECK(nseg >= 1 && (uint64_t)(nseg - 1) * mss < (payload ? payload : 1));
	for (uint32_t i = 0; i < nseg; i += 1 + nseg / 4) {
		uint32_t seg = payload - i * mss < mss ? payload - i * mss : mss;

		memcpy(h, hdr, len);
		dpv__tso_header(h, in, i, nseg, seg, mss);
		memset(&again, 0, sizeof(again));
		CHECK(dpv__tso_hdr_check(h, len, &again) == 0);
		CHECK(again.l2_len == in->l2_len && again.l3_len == in->l3_len &&
		      again.l4_len == in->l4_len && again.l3 == in->l3);
		if (in->l3 == DPV_L3_IPV4) {
			const uint8_t *ip = h + in->l2_len;

			CHECK(dpv__ipv4_hdr_cksum(ip, in->l3_len) == (ip[10] << 8 | ip[11]));
			CHECK((uint32_t)(ip[2] << 8 | ip[3]) == in->l3_len + in->l4_len + seg);
		}
	}
	free(h);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	uint8_t *f = malloc(size ? size : 1);
	struct dpv_hdr_info info, tso;

	CHECK(f != NULL);
	memcpy(f, data, size);
	memset(&info, 0, sizeof(info));
	dpv__hdr_parse(f, size, &info);
	check_info(&info, size);
	memset(&tso, 0, sizeof(tso));
	if (dpv__tso_hdr_check(f, size, &tso) == 0) {
		check_info(&tso, size);
		CHECK((size_t)tso.l2_len + tso.l3_len + tso.l4_len == size);
		CHECK(tso.l4_proto == 6 && tso.l4_len >= 20 && !tso.fragment);
		CHECK(tso.l3 == DPV_L3_IPV4 || tso.l3 == DPV_L3_IPV6);
		check_tso(f, size, &tso);
	}
	if (info.l3 == DPV_L3_IPV4)
		(void)dpv__ipv4_hdr_cksum(f + info.l2_len, info.l3_len);
	free(f);
	return 0;
}
