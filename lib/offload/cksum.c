/* SPDX-License-Identifier: BSD-3-Clause */
/* The Internet checksum's raw sum (RFC 1071) with the widest vector unit the CPU has
 * (AVX-512, AVX2, 64-bit scalar), chosen at load time; only these kernels are compiled for
 * AVX2/AVX-512. A kernel's exact sum of 32-bit words is congruent mod 0xffff to the sum of
 * 16-bit words: folded, it is rte_raw_cksum's value. */

#include <errno.h>
#include <string.h>

#include <rte_byteorder.h>
#include <rte_common.h>

#if defined(__x86_64__)
#include <immintrin.h>
#define CKSUM_X86 1
#endif

#include "dpv_offload.h"

static uint16_t fold64(uint64_t s)
{
	s = (s & 0xffffffffu) + (s >> 32);
	s = (s & 0xffffffffu) + (s >> 32);
	s = (s & 0xffff) + (s >> 16);
	s = (s & 0xffff) + (s >> 16);
	return (uint16_t)s;
}

/* The last 0..7 bytes; an odd last byte counts as the low-address byte of a 16-bit word. */
static uint64_t tail_sum(const uint8_t *p, size_t len)
{
	uint64_t s = 0;
	uint32_t w4;
	uint16_t w2 = 0;

	if (len & 4) {
		memcpy(&w4, p, 4);
		s += w4;
		p += 4;
	}
	if (len & 2) {
		memcpy(&w2, p, 2);
		s += w2;
		p += 2;
	}
	if (len & 1) {
		w2 = 0;
		*(uint8_t *)&w2 = *p;
		s += w2;
	}
	return s;
}

/* 64-bit words with end-around carries counted apart: the CPU's add-with-carry chain. */
static uint64_t sum_scalar(const uint8_t *p, size_t len)
{
	uint64_t s = 0, carries = 0;

	for (; len >= 8; len -= 8, p += 8) {
		uint64_t w;

		memcpy(&w, p, 8);
		s += w;
		carries += s < w;
	}
	/* 2^64 ≡ 1 (mod 0xffff): each carry is worth 1 */
	return (uint64_t)fold64(s) + carries + tail_sum(p, len);
}

static uint64_t sum_copy_scalar(uint8_t *dst, const uint8_t *src, size_t len)
{
	memcpy(dst, src, len);
	return sum_scalar(dst, len);
}

#ifdef CKSUM_X86
/* Each 32-bit word is added, zero-extended, to a 64-bit lane: no lane can overflow for any
 * buffer that fits in memory, and the four accumulators hide the add latency. */
__attribute__((target("avx2")))
static inline uint64_t lanes_avx2(__m256i a)
{
	uint64_t l[4];

	_mm256_storeu_si256((__m256i *)l, a);
	return (uint64_t)fold64(l[0]) + fold64(l[1]) + fold64(l[2]) + fold64(l[3]);
}

#define AVX2_ADD(acc, v, lo) \
	acc = _mm256_add_epi64(_mm256_add_epi64(acc, _mm256_and_si256(v, lo)), \
			       _mm256_srli_epi64(v, 32))

__attribute__((target("avx2")))
static uint64_t sum_avx2(const uint8_t *p, size_t len)
{
	const __m256i lo = _mm256_set1_epi64x(0xffffffff);
	__m256i a0 = _mm256_setzero_si256(), a1 = a0, a2 = a0, a3 = a0;

	for (; len >= 128; len -= 128, p += 128) {
		__m256i v0 = _mm256_loadu_si256((const __m256i *)p);
		__m256i v1 = _mm256_loadu_si256((const __m256i *)(p + 32));
		__m256i v2 = _mm256_loadu_si256((const __m256i *)(p + 64));
		__m256i v3 = _mm256_loadu_si256((const __m256i *)(p + 96));

		AVX2_ADD(a0, v0, lo);
		AVX2_ADD(a1, v1, lo);
		AVX2_ADD(a2, v2, lo);
		AVX2_ADD(a3, v3, lo);
	}
	for (; len >= 32; len -= 32, p += 32) {
		__m256i v = _mm256_loadu_si256((const __m256i *)p);

		AVX2_ADD(a0, v, lo);
	}
	a0 = _mm256_add_epi64(_mm256_add_epi64(a0, a1), _mm256_add_epi64(a2, a3));
	return lanes_avx2(a0) + sum_scalar(p, len);
}

__attribute__((target("avx2")))
static uint64_t sum_copy_avx2(uint8_t *dst, const uint8_t *src, size_t len)
{
	const __m256i lo = _mm256_set1_epi64x(0xffffffff);
	__m256i a0 = _mm256_setzero_si256(), a1 = a0;

	for (; len >= 64; len -= 64, src += 64, dst += 64) {
		__m256i v0 = _mm256_loadu_si256((const __m256i *)src);
		__m256i v1 = _mm256_loadu_si256((const __m256i *)(src + 32));

		_mm256_storeu_si256((__m256i *)dst, v0);
		_mm256_storeu_si256((__m256i *)(dst + 32), v1);
		AVX2_ADD(a0, v0, lo);
		AVX2_ADD(a1, v1, lo);
	}
	for (; len >= 32; len -= 32, src += 32, dst += 32) {
		__m256i v = _mm256_loadu_si256((const __m256i *)src);

		_mm256_storeu_si256((__m256i *)dst, v);
		AVX2_ADD(a0, v, lo);
	}
	return lanes_avx2(_mm256_add_epi64(a0, a1)) + sum_copy_scalar(dst, src, len);
}

#define AVX512_ADD(acc, v, lo) \
	acc = _mm512_add_epi64(_mm512_add_epi64(acc, _mm512_and_si512(v, lo)), \
			       _mm512_srli_epi64(v, 32))

__attribute__((target("avx512f,avx512bw")))
static inline uint64_t lanes_avx512(__m512i a)
{
	uint64_t l[8], s = 0;

	_mm512_storeu_si512(l, a);
	for (int i = 0; i < 8; i++)
		s += fold64(l[i]);
	return s;
}

/* The last 0..63 bytes in one masked load: zeros beyond the end add nothing. An odd last
 * byte lands in the low half of its word, as the scalar rule wants. */
__attribute__((target("avx512f,avx512bw,bmi2")))
static uint64_t sum_avx512(const uint8_t *p, size_t len)
{
	const __m512i lo = _mm512_set1_epi64(0xffffffff);
	__m512i a0 = _mm512_setzero_si512(), a1 = a0, a2 = a0, a3 = a0, v;

	for (; len >= 256; len -= 256, p += 256) {
		__m512i v0 = _mm512_loadu_si512(p), v1 = _mm512_loadu_si512(p + 64);
		__m512i v2 = _mm512_loadu_si512(p + 128), v3 = _mm512_loadu_si512(p + 192);

		AVX512_ADD(a0, v0, lo);
		AVX512_ADD(a1, v1, lo);
		AVX512_ADD(a2, v2, lo);
		AVX512_ADD(a3, v3, lo);
	}
	for (; len >= 64; len -= 64, p += 64) {
		v = _mm512_loadu_si512(p);
		AVX512_ADD(a0, v, lo);
	}
	if (len > 0) {
		v = _mm512_maskz_loadu_epi8(_bzhi_u64(~0ull, (unsigned)len), p);
		AVX512_ADD(a1, v, lo);
	}
	a0 = _mm512_add_epi64(_mm512_add_epi64(a0, a1), _mm512_add_epi64(a2, a3));
	return lanes_avx512(a0);
}

__attribute__((target("avx512f,avx512bw,bmi2")))
static uint64_t sum_copy_avx512(uint8_t *dst, const uint8_t *src, size_t len)
{
	const __m512i lo = _mm512_set1_epi64(0xffffffff);
	__m512i a0 = _mm512_setzero_si512(), a1 = a0, v;

	for (; len >= 128; len -= 128, src += 128, dst += 128) {
		__m512i v0 = _mm512_loadu_si512(src), v1 = _mm512_loadu_si512(src + 64);

		_mm512_storeu_si512(dst, v0);
		_mm512_storeu_si512(dst + 64, v1);
		AVX512_ADD(a0, v0, lo);
		AVX512_ADD(a1, v1, lo);
	}
	for (; len >= 64; len -= 64, src += 64, dst += 64) {
		v = _mm512_loadu_si512(src);
		_mm512_storeu_si512(dst, v);
		AVX512_ADD(a0, v, lo);
	}
	if (len > 0) {
		__mmask64 k = _bzhi_u64(~0ull, (unsigned)len);

		v = _mm512_maskz_loadu_epi8(k, src);
		_mm512_mask_storeu_epi8(dst, k, v);
		AVX512_ADD(a1, v, lo);
	}
	return lanes_avx512(_mm512_add_epi64(a0, a1));
}
#endif

static const struct dpv_cksum_impl impls[] = {
#ifdef CKSUM_X86
	{ "avx512", sum_avx512, sum_copy_avx512 },
	{ "avx2", sum_avx2, sum_copy_avx2 },
#endif
	{ "scalar", sum_scalar, sum_copy_scalar },
};

static const struct dpv_cksum_impl *active = &impls[RTE_DIM(impls) - 1];

static bool impl_supported(const struct dpv_cksum_impl *im)
{
#ifdef CKSUM_X86
	__builtin_cpu_init();
	if (strcmp(im->name, "avx512") == 0)
		return __builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512bw") &&
		       __builtin_cpu_supports("bmi2");
	if (strcmp(im->name, "avx2") == 0)
		return __builtin_cpu_supports("avx2");
#endif
	return strcmp(im->name, "scalar") == 0;
}

const struct dpv_cksum_impl *dpv__cksum_impl(const char *name)
{
	for (size_t i = 0; i < RTE_DIM(impls); i++)
		if ((name == NULL || strcmp(name, impls[i].name) == 0) && impl_supported(&impls[i]))
			return &impls[i];
	return NULL;
}

int dpv__cksum_select(const char *name)
{
	const struct dpv_cksum_impl *im = dpv__cksum_impl(name);

	if (im == NULL)
		return -ENOTSUP;
	active = im;
	return 0;
}

/* Once, before main and before any other thread: the widest kernel the CPU runs. */
__attribute__((constructor))
static void cksum_pick(void)
{
	active = dpv__cksum_impl(NULL);
}

const char *dpv__cksum_name(void)
{
	return active->name;
}

/* Below a vector's width the kernels' set-up and lane reduction cost more than the scalar
 * adds (a 64-byte frame's UDP header and payload: 30 bytes). */
#define SMALL 64

uint16_t dpv__cksum(const void *buf, size_t len)
{
	return fold64(len < SMALL ? sum_scalar(buf, len) : active->sum(buf, len));
}

/* A piece that starts at an odd offset of the summed stream has its bytes in the other
 * halves of the stream's 16-bit words: its sum, byte-swapped, is their contribution. */
static uint16_t add_at(uint16_t sum, uint16_t piece, size_t off)
{
	uint32_t s = sum + (uint32_t)((off & 1) ? rte_bswap16(piece) : piece);

	return (uint16_t)((s & 0xffff) + (s >> 16));
}

uint16_t dpv__cksum_cont(uint16_t sum, const void *buf, size_t len, size_t off)
{
	return add_at(sum, fold64(len < SMALL ? sum_scalar(buf, len) : active->sum(buf, len)), off);
}

uint16_t dpv__cksum_copy(uint16_t sum, void *dst, const void *src, size_t len, size_t off)
{
	return add_at(sum, fold64(len < SMALL ? sum_copy_scalar(dst, src, len) :
				  active->sum_copy(dst, src, len)), off);
}
