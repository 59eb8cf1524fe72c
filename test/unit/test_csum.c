/* SPDX-License-Identifier: BSD-3-Clause */
/* The checksum kernels (scalar, AVX2, AVX-512: each the CPU runs) against rte_raw_cksum on
 * random bytes of every length 0..4096 at every start alignment 0..63, summed in one piece and
 * in chained pieces of odd and even lengths, and while copying (the bytes land exactly, the
 * bytes around them stay); software IP_CSUM while copying frames gives the bytes of a copy
 * and dpv__sw_csum; the IPv4 header checksum against rte_ipv4_cksum. */
#include <rte_ip.h>

#include "dpv_offload.h"
#include "dpv_test.h"
#include "dpv_tx.h"

#define MAXLEN 4096
#define ALIGNS 64

static uint8_t src[MAXLEN + 2 * ALIGNS] __attribute__((aligned(64)));
static uint8_t dst[MAXLEN + 2 * ALIGNS] __attribute__((aligned(64)));

static uint16_t fold(uint64_t s)
{
	while (s >> 16)
		s = (s & 0xffff) + (s >> 16);
	return (uint16_t)s;
}

static void fill(uint8_t *p, size_t len, int pattern)
{
	for (size_t i = 0; i < len; i++)
		p[i] = pattern < 0 ? (uint8_t)rand() : (uint8_t)pattern;
}

/* rte_raw_cksum's sum of @p grown by its byte @len - 1 (native-endian 16-bit words, a last odd
 * byte as the low half): every length's reference in one pass instead of one rte_raw_cksum
 * each, which under the sanitizers' unoptimized build took most of a minute. Sampled lengths
 * are checked against rte_raw_cksum itself. */
static uint64_t grow(uint64_t acc, const uint8_t *p, size_t len)
{
	return len == 0 ? 0 : acc + ((uint64_t)p[len - 1] << (8 * ((len - 1) & 1)));
}

/* Every length at every alignment, one kernel; counts the mismatches (one CHECK each). */
static void every_length(const struct dpv_cksum_impl *im)
{
	unsigned bad = 0;

	for (size_t a = 0; a < ALIGNS; a++) {
		uint64_t acc = 0;

		for (size_t len = 0; len <= MAXLEN; len++) {
			uint16_t want, got = fold(im->sum(src + a, len));

			acc = grow(acc, src + a, len);
			want = fold(acc);
			if (len % 251 == 0 && want != rte_raw_cksum(src + a, len))
				bad++;          /* the reference itself */

			if (got != want && bad++ < 5)
				fprintf(stderr, "%s: align %zu len %zu: %#x, rte %#x\n", im->name, a,
					len, got, want);
		}
	}
	CHECK(bad == 0, "%s: %u mismatches", im->name, bad);
}

/* Pieces of random lengths (odd ones included) through dpv__cksum_cont. */
static void chained(void)
{
	for (int round = 0; round < 2000; round++) {
		size_t len = (size_t)rand() % (MAXLEN + 1), a = (size_t)rand() % ALIGNS, off = 0;
		uint16_t sum = 0;

		while (off < len) {
			size_t n = RTE_MIN((size_t)rand() % 300, len - off);

			sum = dpv__cksum_cont(sum, src + a + off, n, off);
			off += n;
		}
		CHECK_EQ(sum, rte_raw_cksum(src + a, len));
	}
}

/* One kernel's copy: every length at a few source/destination alignments. */
static void copying(const struct dpv_cksum_impl *im)
{
	static const size_t sa[] = { 0, 1, 3, 32, 63 }, da[] = { 0, 7, 2, 33, 1 };
	unsigned bad = 0;

	for (size_t k = 0; k < RTE_DIM(sa); k++) {
		uint64_t acc = 0;

		for (size_t len = 0; len <= MAXLEN; len++) {
			uint16_t got;

			acc = grow(acc, src + sa[k], len);
			memset(dst, 0xa5, sizeof(dst));
			got = fold(im->sum_copy(dst + da[k], src + sa[k], len));
			if (got != fold(acc) ||
			    memcmp(dst + da[k], src + sa[k], len) != 0 ||
			    (da[k] > 0 && dst[da[k] - 1] != 0xa5) || dst[da[k] + len] != 0xa5) {
				if (bad++ < 5)
					fprintf(stderr, "%s copy: src %zu dst %zu len %zu\n", im->name,
						sa[k], da[k], len);
			}
		}
	}
	CHECK(bad == 0, "%s copy: %u mismatches", im->name, bad);
}

/* dpv__cksum_copy in pieces: the whole stream copied, its sum as in one piece. */
static void chained_copy(void)
{
	for (int round = 0; round < 2000; round++) {
		size_t len = (size_t)rand() % (MAXLEN + 1), off = 0;
		uint16_t sum = 0;

		memset(dst, 0, sizeof(dst));
		while (off < len) {
			size_t n = RTE_MIN((size_t)rand() % 300, len - off);

			sum = dpv__cksum_copy(sum, dst + 1 + off, src + off, n, off);
			off += n;
		}
		CHECK(sum == rte_raw_cksum(src, len) && memcmp(dst + 1, src, len) == 0,
		      "len %zu", len);
	}
}

/* A random frame in @f (returns its length): Ethernet with 0-2 VLAN tags, then IPv4 (with
 * options, sometimes a fragment), IPv6 (sometimes with a hop-by-hop header) or something
 * else, then TCP (with options), UDP or another protocol, a random payload, sometimes
 * Ethernet padding the IP length does not count; every checksum field garbage. */
static uint32_t random_frame(uint8_t *f)
{
	uint32_t off = 12, l3, l4, pay = (uint32_t)rand() % 1400, pad = rand() % 4 ? 0 : rand() % 20;
	int kind = rand() % 8, proto = rand() % 5 == 0 ? 47 : rand() % 2 ? 6 : 17;

	fill(f, 1600, -1);
	for (int v = rand() % 3; v > 0; v--, off += 4) {
		f[off] = 0x81;
		f[off + 1] = 0x00;
	}
	f[off] = kind == 0 ? 0x88 : kind < 5 ? 0x08 : 0x86;
	f[off + 1] = kind == 0 ? 0xb5 : kind < 5 ? 0x00 : 0xdd;
	l3 = off + 2;
	if (kind >= 1 && kind < 5) {                   /* IPv4, options on one in two */
		uint32_t ihl = rand() % 2 ? 5 : 5 + rand() % 11;

		f[l3] = (uint8_t)(0x40 | ihl);
		f[l3 + 6] = kind == 4 ? 0x20 : 0x40;       /* MF: a fragment, or DF */
		f[l3 + 9] = (uint8_t)proto;
		l4 = l3 + ihl * 4;
	} else if (kind >= 5) {                        /* IPv6, a hop-by-hop header on one in 3 */
		f[l3] = 0x60;
		l4 = l3 + 40;
		if (kind == 7) {
			f[l3 + 6] = 0;
			f[l4] = (uint8_t)proto;
			f[l4 + 1] = 0;
			l4 += 8;
		} else {
			f[l3 + 6] = (uint8_t)proto;
		}
	} else {
		l4 = l3;
	}
	if (proto == 6) {
		f[l4 + 12] = (uint8_t)((5 + rand() % 11) << 4);
		pay += (f[l4 + 12] >> 4) * 4;
	} else {
		pay += 8;
	}
	if (kind >= 1 && kind < 5) {
		uint32_t tot = l4 - l3 + pay;

		f[l3 + 2] = (uint8_t)(tot >> 8);
		f[l3 + 3] = (uint8_t)tot;
	} else if (kind >= 5) {
		uint32_t pl = l4 - l3 - 40 + pay;

		f[l3 + 4] = (uint8_t)(pl >> 8);
		f[l3 + 5] = (uint8_t)pl;
	}
	if (proto == 17 && rand() % 2) {               /* the UDP length as the IP header says */
		f[l4 + 4] = (uint8_t)(pay >> 8);
		f[l4 + 5] = (uint8_t)pay;
	}
	if (rand() % 50 == 0)
		memset(f + l4, 0, pay);                    /* an all-zero L4: the sum's zero case */
	return l4 + pay + pad;
}

/* Software IP_CSUM while copying (dpv__tx_copy_sw_csum), from pieces of random lengths (odd,
 * zero, the headers split or not), gives the bytes of a plain copy and dpv__sw_csum. */
static void copy_with_csum(void)
{
	static uint8_t frame[1600], want[1600], got[1600 + 1];
	unsigned bad = 0;

	for (int round = 0; round < 20000; round++) {
		uint32_t len = random_frame(frame), off = 0;
		struct dpv_tx_seg seg[8];
		uint16_t nseg = 0;
		struct rte_mbuf m = { .buf_addr = want, .data_len = (uint16_t)len, .pkt_len = len,
				      .nb_segs = 1 };
		struct dpv_hdr_info info;

		while (off < len && nseg < 7) {
			uint32_t n = rand() % 3 ? len - off : (uint32_t)rand() % 80;

			n = RTE_MIN(n, len - off);
			seg[nseg++] = (struct dpv_tx_seg){ frame + off, n };
			off += n;
		}
		if (off < len)
			seg[nseg++] = (struct dpv_tx_seg){ frame + off, len - off };
		memcpy(want, frame, len);
		dpv__hdr_parse(want, RTE_MIN(len, 256u), &info);
		dpv__sw_csum(&m, &info);
		got[len] = 0x5a;
		dpv__tx_copy_sw_csum(got, seg, nseg, len);
		if ((memcmp(got, want, len) != 0 || got[len] != 0x5a) && bad++ < 5)
			fprintf(stderr, "copy with checksums: round %d, len %u, %u pieces, l3 %d l4 %d\n",
				round, len, nseg, info.l3, info.l4_proto);
	}
	CHECK(bad == 0, "copy with checksums: %u frames differ from copy + dpv__sw_csum", bad);
}

/* dpv__ipv4_hdr_cksum against rte_ipv4_cksum (which reads IHL from the header and wants the
 * checksum field zero) for every header length 20..60 at every alignment, with the field
 * random (dpv__ipv4_hdr_cksum leaves it out), and all ones, and all zeros but the version. */
static void ipv4_hdr(void)
{
	static uint8_t h[60 + 8] __attribute__((aligned(8))), ref[60];
	unsigned bad = 0;

	for (int round = 0; round < 4000; round++) {
		uint8_t ihl = (uint8_t)(5 + round % 11), *ip = h + round % 8;

		if (round % 1000 == 1)
			memset(ip, round % 2000 == 1 ? 0xff : 0, 60);
		else
			fill(ip, 60, -1);
		ip[0] = (uint8_t)(0x40 | ihl);
		memcpy(ref, ip, 60);
		ref[10] = ref[11] = 0;
		if (dpv__ipv4_hdr_cksum(ip, (uint16_t)(ihl * 4)) !=
		    rte_be_to_cpu_16(rte_ipv4_cksum((const struct rte_ipv4_hdr *)ref)) && bad++ < 5)
			fprintf(stderr, "ipv4 header: round %d, ihl %u\n", round, ihl);
	}
	CHECK(bad == 0, "IPv4 header checksum: %u headers differ from rte_ipv4_cksum", bad);
}

int main(void)
{
	static const char *const names[] = { "scalar", "avx2", "avx512" };

	srand(18);
	printf("kernel in use: %s\n", dpv__cksum_name());
	CHECK(dpv__cksum_impl("scalar") != NULL);
	CHECK(dpv__cksum_impl("sse9") == NULL);
	for (int pattern = -1; pattern <= 0xff; pattern += 0x80) {   /* random, 0x7f, 0xff */
		fill(src, sizeof(src), pattern);
		for (size_t i = 0; i < RTE_DIM(names); i++) {
			const struct dpv_cksum_impl *im = dpv__cksum_impl(names[i]);

			if (im == NULL) {
				printf("%s: not on this CPU, skipped\n", names[i]);
				continue;
			}
			every_length(im);
			if (pattern < 0)
				copying(im);
		}
	}
	ipv4_hdr();
	fill(src, sizeof(src), 0);
	CHECK_EQ(dpv__cksum(src, MAXLEN), 0);                /* zeros only: 0, not 0xffff */
	fill(src, sizeof(src), -1);
	for (size_t i = 0; i < RTE_DIM(names); i++) {
		if (dpv__cksum_select(names[i]) != 0)
			continue;
		chained();
		chained_copy();
		copy_with_csum();
	}
	return test_done("csum");
}
