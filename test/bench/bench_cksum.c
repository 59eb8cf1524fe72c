/* SPDX-License-Identifier: BSD-3-Clause */
/* ns per checksum of a 1500-byte frame (from the cache): dpverbs' raw sum with each kernel
 * the CPU runs, beside rte_raw_cksum (DPDK 22.11, inlined here with the same compiler flags),
 * in the same run, alternating, medians of 7 rounds; and dpverbs' sum while copying beside
 * rte_memcpy followed by rte_raw_cksum. Not a test: it never fails on a number. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <rte_ip.h>
#include <rte_memcpy.h>

#include "dpv_offload.h"

#define ROUNDS 7
#define ITERS 200000

static uint8_t buf[1500 + 64] __attribute__((aligned(64)));
static uint8_t out[1500 + 64] __attribute__((aligned(64)));
static volatile uint64_t sink;

static double now(void)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return t.tv_sec * 1e9 + t.tv_nsec;
}

static int cmp(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return (x > y) - (x < y);
}

/* ns per call of case @c (0: rte_raw_cksum, 1: dpv__cksum, 2: memcpy + rte_raw_cksum,
 * 3: dpv__cksum_copy) over @len bytes. */
static double run(int c, size_t len)
{
	uint64_t s = 0;
	double t0 = now();

	for (int i = 0; i < ITERS; i++) {
		switch (c) {
		case 0: s += rte_raw_cksum(buf + (i & 1), len); break;
		case 1: s += dpv__cksum(buf + (i & 1), len); break;
		case 2: rte_memcpy(out, buf + (i & 1), len); s += rte_raw_cksum(out, len); break;
		default: s += dpv__cksum_copy(0, out, buf + (i & 1), len, 0); break;
		}
	}
	sink = s;
	return (now() - t0) / ITERS;
}

static double median_of(int c, size_t len)
{
	double v[ROUNDS];

	for (int r = 0; r < ROUNDS; r++)
		v[r] = run(c, len);
	qsort(v, ROUNDS, sizeof(v[0]), cmp);
	return v[ROUNDS / 2];
}

int main(int argc, char **argv)
{
	static const char *const kernels[] = { "avx512", "avx2", "scalar" };
	size_t len = argc > 1 ? strtoul(argv[1], NULL, 0) : 1500;

	for (size_t i = 0; i < sizeof(buf); i++)
		buf[i] = (uint8_t)rand();
	printf("checksum of %zu B (odd and even start, from the cache), ns per call, median of %d\n",
	       len, ROUNDS);
	printf("%-10s %10s %10s %8s %14s %14s %8s\n", "kernel", "dpverbs", "rte_raw", "ratio",
	       "copy+sum", "memcpy+rte", "ratio");
	for (size_t k = 0; k < sizeof(kernels) / sizeof(kernels[0]); k++) {
		double d, r, dc, rc;

		if (dpv__cksum_select(kernels[k]) != 0)
			continue;
		r = median_of(0, len);
		d = median_of(1, len);
		rc = median_of(2, len);
		dc = median_of(3, len);
		printf("%-10s %10.1f %10.1f %8.2f %14.1f %14.1f %8.2f\n", kernels[k], d, r, d / r,
		       dc, rc, dc / rc);
	}
	return 0;
}
