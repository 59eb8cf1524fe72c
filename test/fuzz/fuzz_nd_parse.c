/* SPDX-License-Identifier: BSD-3-Clause */
/* libFuzzer harness: the ARP / IPv6 ND frame parser (lib/roce/roce_nd.c) with arbitrary
 * frames, each in a buffer of exactly its size so that AddressSanitizer sees any read past
 * its end. What must hold:
 * - only the documented results (0, -ENOMSG, -EOPNOTSUPP, -EBADMSG);
 * - an accepted message built again (dpv__nd_build) parses to the same message: what is
 *   accepted can be said back;
 * - an ICMPv6 frame refused is tried again with its checksum made right (over the payload
 *   length it claims, when that fits), so mutations get past the checksum. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "roce_nd.h"

#define CHECK(cond) do { \
	if (!(cond)) { \
		fprintf(stderr, "fuzz_nd_parse: %s does not hold\n", #cond); \
		abort(); \
	} \
} while (0)

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
	return 0;
}

static void check_rebuilt(const struct dpv_nd_msg *m)
{
	uint8_t f[DPV_ND_FRAME_MAX];
	struct dpv_nd_msg again;
	int n = dpv__nd_build(f, sizeof(f), m);
	bool arp = m->type == DPV_ND_ARP_REQUEST || m->type == DPV_ND_ARP_REPLY;
	size_t iplen = arp ? 4 : 16;

	CHECK(n >= DPV_ND_ETH_MIN && n <= DPV_ND_FRAME_MAX);
	CHECK(dpv__nd_parse(f, (size_t)n, &again) == 0);
	CHECK(again.type == m->type && !memcmp(again.eth_dst, m->eth_dst, 6) &&
	      !memcmp(again.eth_src, m->eth_src, 6) &&
	      !memcmp(again.sender_ip, m->sender_ip, iplen) &&
	      !memcmp(again.target_ip, m->target_ip, iplen) && again.lladdr == m->lladdr);
	if (arp)
		CHECK(!memcmp(again.sender_mac, m->sender_mac, 6) &&
		      !memcmp(again.target_mac, m->target_mac, 6));
	else
		CHECK(!memcmp(again.ip_dst, m->ip_dst, 16) && again.router == m->router &&
		      again.solicited == m->solicited && again.override == m->override &&
		      (!m->lladdr || !memcmp(again.sender_mac, m->sender_mac, 6)));
}

/* The ICMPv6 checksum of an Ethernet/IPv6 frame, made right over the length it claims. */
static bool fix_cksum(uint8_t *f, size_t len)
{
	size_t plen;
	uint16_t c;

	if (len < 58 || f[12] != 0x86 || f[13] != 0xDD)
		return false;
	plen = (size_t)(f[18] << 8 | f[19]);
	if (plen < 4 || plen > len - 54)
		return false;
	f[56] = f[57] = 0;
	c = dpv__icmp6_cksum(f + 22, f + 38, f + 54, plen);
	f[56] = (uint8_t)(c >> 8);
	f[57] = (uint8_t)c;
	return true;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	uint8_t *f = malloc(size ? size : 1);
	struct dpv_nd_msg m;
	int rc;

	CHECK(f != NULL);
	memcpy(f, data, size);
	rc = dpv__nd_parse(f, size, &m);
	CHECK(rc == 0 || rc == -ENOMSG || rc == -EOPNOTSUPP || rc == -EBADMSG);
	if (rc == -EBADMSG && fix_cksum(f, size)) {
		rc = dpv__nd_parse(f, size, &m);
		CHECK(rc == 0 || rc == -EBADMSG);
	}
	if (rc == 0)
		check_rebuilt(&m);
	free(f);
	return 0;
}
