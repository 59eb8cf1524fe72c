/* SPDX-License-Identifier: BSD-3-Clause */
/* Reading a fuzzer's input as a stream of numbers: past its end every read gives 0, so any
 * input, however short, decodes to something. */
#ifndef FUZZ_INPUT_H
#define FUZZ_INPUT_H

#include <stddef.h>
#include <stdint.h>

struct fuzz_input {
	const uint8_t *p;
	size_t left;
};

static inline uint8_t fuzz_u8(struct fuzz_input *in)
{
	if (in->left == 0)
		return 0;
	in->left--;
	return *in->p++;
}

static inline uint16_t fuzz_u16(struct fuzz_input *in)
{
	return (uint16_t)(fuzz_u8(in) | fuzz_u8(in) << 8);
}

static inline uint32_t fuzz_u32(struct fuzz_input *in)
{
	return (uint32_t)fuzz_u16(in) | (uint32_t)fuzz_u16(in) << 16;
}

/* Up to @n bytes into @out; returns how many there were. */
static inline size_t fuzz_bytes(struct fuzz_input *in, uint8_t *out, size_t n)
{
	size_t k = n < in->left ? n : in->left;

	for (size_t i = 0; i < k; i++)
		out[i] = in->p[i];
	in->p += k;
	in->left -= k;
	return k;
}

/* Invert bits of up to seven bytes of @f (@len bytes) at places and with masks the input
 * gives (a valid frame's mutations); returns @len. */
static inline size_t fuzz_flip(struct fuzz_input *in, uint8_t *f, size_t len)
{
	for (int k = fuzz_u8(in) % 8; k > 0 && len > 0; k--) {
		uint16_t at = fuzz_u16(in);

		f[at % len] ^= fuzz_u8(in);
	}
	return len;
}

#endif
