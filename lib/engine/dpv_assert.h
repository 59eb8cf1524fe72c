/* SPDX-License-Identifier: BSD-3-Clause */
/* Runtime checks of invariants, for every layer (doc/contributing.md, "Assertions").
 *   DPV_ASSERT(cond)               abort() with file:line and the expression when cond is
 *                                  false; not evaluated where DPV_ASSERTS is 0 (NDEBUG).
 *   DPV_WARN_ONCE(cond, fmt, ...)  an impossible state that must not crash production: logs
 *                                  once per call site, in every build; evaluates to cond.
 *   DPV_REF_PUT(&refs)             a reference count goes down by one, never below 0.
 * DPV_LOGTYPE, what DPV_WARN_ONCE logs through, is set per layer in its meson.build. */
#ifndef DPV_ASSERT_H
#define DPV_ASSERT_H

#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>

#include <rte_branch_prediction.h>

#ifndef DPV_ASSERTS
#ifdef NDEBUG
#define DPV_ASSERTS 0
#else
#define DPV_ASSERTS 1
#endif
#endif

#ifndef DPV_LOGTYPE
#define DPV_LOGTYPE dpv_logtype_engine
#endif
extern int DPV_LOGTYPE;

/* Out of line: the check costs a compare and a jump. */
__attribute__((noreturn, cold, noinline, unused))
static void dpv__assert_fail(const char *file, int line, const char *func, const char *expr)
{
	fprintf(stderr, "dpverbs: %s:%d: %s: assertion failed: %s\n", file, line, func, expr);
	fflush(stderr);
	abort();
}

#if DPV_ASSERTS
#define DPV_ASSERT(cond) \
	((void)(likely(cond) ? 0 : (dpv__assert_fail(__FILE__, __LINE__, __func__, #cond), 0)))
#else
/* parsed (its variables count as used), never evaluated */
#define DPV_ASSERT(cond) ((void)sizeof(!(cond)))
#endif

/* Drop one of the references counted at @p (any integer type): it was not 0 (asserted). */
#define DPV_REF_PUT(p) do { \
		__typeof__(*(p)) dpv__old_ = __atomic_fetch_sub((p), 1, __ATOMIC_RELEASE); \
		DPV_ASSERT(dpv__old_ > 0); \
	} while (0)

/* DPV_WARN_ONCE's message, at WARNING on @logtype. */

__attribute__((cold, format(printf, 5, 6)))
void dpv__warn_once_log(int logtype, const char *file, int line, const char *func,
			const char *fmt, ...);

#define DPV_WARN_ONCE(cond, fmt, ...) __extension__ ({ \
	static bool dpv__warned_; \
	bool dpv__c_ = !!(cond); \
	if (unlikely(dpv__c_) && !__atomic_exchange_n(&dpv__warned_, true, __ATOMIC_RELAXED)) \
		dpv__warn_once_log(DPV_LOGTYPE, __FILE__, __LINE__, __func__, fmt, \
				   ##__VA_ARGS__); \
	unlikely(dpv__c_); \
})

#endif
