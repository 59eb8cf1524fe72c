/* SPDX-License-Identifier: BSD-3-Clause */
/* The checks of dpverbs' tests: CHECK and CHECK_EQ count and report, test_done says the
 * counts and gives the exit code. Alone for the programs that do not link dpverbs (the
 * compat tests load libibverbs with dlopen); dpv_test.h includes it. */
#ifndef DPV_CHECK_H
#define DPV_CHECK_H

#include <stdio.h>

static int t_pass, t_fail;

#define CHECK(cond, ...) do { \
	if (cond) { \
		t_pass++; \
	} else { \
		t_fail++; \
		fprintf(stderr, "FAIL %s:%d: %s: ", __FILE__, __LINE__, #cond); \
		fprintf(stderr, " " __VA_ARGS__); \
		fputc('\n', stderr); \
	} \
} while (0)

#define CHECK_EQ(a, b) do { \
	long long _a = (long long)(a), _b = (long long)(b); \
	CHECK(_a == _b, "%s = %lld, expected %lld", #a, _a, _b); \
} while (0)

/* Returns the process exit code; prints a summary line. */
static inline int test_done(const char *name)
{
	printf("%s: %d checks passed, %d failed\n", name, t_pass, t_fail);
	return t_fail != 0 || t_pass == 0;
}

#endif
