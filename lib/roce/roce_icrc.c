/* SPDX-License-Identifier: BSD-3-Clause */
/* The ICRC of RoCEv2 (IBA A17.3.3): CRC-32 over a pseudo-header in which the fields routers
 * may change are set to ones, then the transport headers, payload and pad. The ICRC runs on
 * every packet, both ways: the CRC folds 16 bytes at a time with carry-less multiplies
 * (PCLMULQDQ, chosen at load time when the CPU has it), slice-by-8 over tables built at load
 * time for the last bytes and on CPUs without it. */
#include <stdbool.h>
#include <string.h>

#if defined(__x86_64__)
#include <immintrin.h>
#define CRC_CLMUL 1
#endif

#include "roce_wire.h"

static uint32_t crc_table[8][256];
static bool use_clmul;

static uint32_t crc_bytes(uint32_t crc, const uint8_t *p, size_t n);

__attribute__((constructor)) static void crc_table_init(void)
{
	for (uint32_t i = 0; i < 256; i++) {
		uint32_t c = i;

		for (int k = 0; k < 8; k++)
			c = c & 1 ? 0xEDB88320 ^ (c >> 1) : c >> 1;
		crc_table[0][i] = c;
	}
	for (uint32_t i = 0; i < 256; i++)
		for (int t = 1; t < 8; t++)
			crc_table[t][i] = crc_table[t - 1][i] >> 8 ^
					  crc_table[0][crc_table[t - 1][i] & 0xFF];
#ifdef CRC_CLMUL
	__builtin_cpu_init();
	use_clmul = __builtin_cpu_supports("pclmul") && __builtin_cpu_supports("sse4.1");
#endif
}

static uint32_t crc_bytes(uint32_t crc, const uint8_t *p, size_t n)
{
	while (n--)
		crc = crc >> 8 ^ crc_table[0][(crc ^ *p++) & 0xFF];
	return crc;
}

/* Eight bytes per step, each looked up in its own table (little-endian load: the CRC is
 * reflected, so the byte that comes first on the wire is the least significant). */
static uint32_t crc_slice8(uint32_t crc, const uint8_t *b, size_t n)
{
	for (; n >= 8; n -= 8, b += 8) {
		uint32_t lo, hi;

		memcpy(&lo, b, 4);
		memcpy(&hi, b + 4, 4);
#if __BYTE_ORDER__ == __ORDER_BIG_ENDIAN__
		lo = __builtin_bswap32(lo);
		hi = __builtin_bswap32(hi);
#endif
		lo ^= crc;
		crc = crc_table[7][lo & 0xFF] ^ crc_table[6][lo >> 8 & 0xFF] ^
		      crc_table[5][lo >> 16 & 0xFF] ^ crc_table[4][lo >> 24] ^
		      crc_table[3][hi & 0xFF] ^ crc_table[2][hi >> 8 & 0xFF] ^
		      crc_table[1][hi >> 16 & 0xFF] ^ crc_table[0][hi >> 24];
	}
	return crc_bytes(crc, b, n);
}

#ifdef CRC_CLMUL
/* Folding with carry-less multiplies (Intel, "Fast CRC Computation for Generic Polynomials
 * Using PCLMULQDQ", 2009), for the reflected polynomial 0xEDB88320: each constant is
 * x^k mod P for the distance a fold moves the bits (k1/k2: 512 bits, four blocks at once;
 * k3/k4: 128 bits, one block; k5: 64 bits), then a Barrett reduction to 32 bits (P and
 * mu = floor(x^64 / P)). @n is a multiple of 16, at least 16. */
__attribute__((target("pclmul,sse4.1")))
static uint32_t crc_clmul(uint32_t crc, const uint8_t *b, size_t n)
{
	const __m128i k1k2 = _mm_set_epi64x(0x01c6e41596, 0x0154442bd4);
	const __m128i k3k4 = _mm_set_epi64x(0x00ccaa009e, 0x01751997d0);
	const __m128i k5 = _mm_set_epi64x(0, 0x0163cd6124);
	const __m128i poly = _mm_set_epi64x(0x01f7011641, 0x01db710641);
	const __m128i low32 = _mm_setr_epi32(~0, 0, ~0, 0);
	__m128i x = _mm_xor_si128(_mm_loadu_si128((const __m128i *)b), _mm_cvtsi32_si128((int)crc));
	__m128i t;

	b += 16, n -= 16;
	if (n >= 48) {
		__m128i y = _mm_loadu_si128((const __m128i *)b);
		__m128i z = _mm_loadu_si128((const __m128i *)(b + 16));
		__m128i w = _mm_loadu_si128((const __m128i *)(b + 32));

		for (b += 48, n -= 48; n >= 64; b += 64, n -= 64) {
#define FOLD4(v, off) v = _mm_xor_si128(_mm_xor_si128(_mm_clmulepi64_si128(v, k1k2, 0x00), \
		_mm_clmulepi64_si128(v, k1k2, 0x11)), _mm_loadu_si128((const __m128i *)(b + off)))
			FOLD4(x, 0);
			FOLD4(y, 16);
			FOLD4(z, 32);
			FOLD4(w, 48);
#undef FOLD4
		}
#define FOLD1(v, next) v = _mm_xor_si128(_mm_xor_si128(_mm_clmulepi64_si128(v, k3k4, 0x00), \
		_mm_clmulepi64_si128(v, k3k4, 0x11)), next)
		FOLD1(x, y);
		FOLD1(x, z);
		FOLD1(x, w);
	}
	for (; n >= 16; b += 16, n -= 16)
		FOLD1(x, _mm_loadu_si128((const __m128i *)b));
#undef FOLD1
	/* 128 bits to 64, to 32 + 32, then Barrett */
	x = _mm_xor_si128(_mm_srli_si128(x, 8), _mm_clmulepi64_si128(x, k3k4, 0x10));
	t = _mm_srli_si128(x, 4);
	x = _mm_xor_si128(_mm_clmulepi64_si128(_mm_and_si128(x, low32), k5, 0x00), t);
	t = _mm_clmulepi64_si128(_mm_and_si128(x, low32), poly, 0x10);
	t = _mm_clmulepi64_si128(_mm_and_si128(t, low32), poly, 0x00);
	return (uint32_t)_mm_extract_epi32(_mm_xor_si128(x, t), 1);
}
#endif

uint32_t dpv__crc32_update(uint32_t crc, const void *p, size_t n)
{
	const uint8_t *b = p;

#ifdef CRC_CLMUL
	if (use_clmul && n >= 16) {
		crc = crc_clmul(crc, b, n & ~(size_t)15);
		b += n & ~(size_t)15;
		n &= 15;
	}
#endif
	return crc_slice8(crc, b, n);
}

/* The slice-by-8 CRC whatever the CPU has (the unit test's reference for the folding). */
uint32_t dpv__crc32_update_table(uint32_t crc, const void *p, size_t n)
{
	return crc_slice8(crc, p, n);
}

/* A copy of IP + UDP + BTH with the variant fields set to ones, after the 8 bytes of ones
 * that stand for the LRH (48 bytes for IPv4: three whole blocks of the folding CRC). */
static size_t masked_copy(uint8_t *m, const uint8_t *l3, bool ipv6)
{
	size_t ip = ipv6 ? 40 : 20, n = ip + 8 + DPV_ROCE_BTH_LEN;

	memset(m, 0xFF, 8);
	m += 8;
	memcpy(m, l3, n);
	if (ipv6) {
		m[0] |= 0x0F;			/* traffic class, high nibble */
		m[1] = 0xFF;			/* traffic class low nibble, flow label */
		m[2] = m[3] = 0xFF;
		m[7] = 0xFF;			/* hop limit */
	} else {
		m[1] = 0xFF;			/* TOS */
		m[8] = 0xFF;			/* TTL */
		m[10] = m[11] = 0xFF;		/* header checksum */
	}
	m[ip + 6] = m[ip + 7] = 0xFF;		/* UDP checksum */
	m[ip + 8 + 4] = 0xFF;			/* BTH: FECN, BECN, resv6 */
	return n;
}

uint32_t dpv__roce_icrc_hdrs(const uint8_t *l3, bool ipv6, size_t len)
{
	uint8_t m[8 + 40 + 8 + DPV_ROCE_BTH_LEN];
	size_t n = masked_copy(m, l3, ipv6);
	uint32_t crc = dpv__crc32_update(0xFFFFFFFF, m, 8 + n);

	return dpv__crc32_update(crc, l3 + n, len - n);
}

uint32_t dpv__roce_icrc(const uint8_t *l3, bool ipv6, size_t len)
{
	return ~dpv__roce_icrc_hdrs(l3, ipv6, len);
}
