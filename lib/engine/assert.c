/* SPDX-License-Identifier: BSD-3-Clause */
/* The out-of-line half of DPV_WARN_ONCE (dpv_assert.h): the message, once per call site. */
#include <stdarg.h>
#include <stdio.h>

#include <rte_log.h>

#include "dpv_assert.h"

void dpv__warn_once_log(int logtype, const char *file, int line, const char *func,
			const char *fmt, ...)
{
	char msg[256];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	rte_log(RTE_LOG_WARNING, logtype,
		"dpverbs: %s:%d: %s: %s (this must not happen: please report it)\n",
		file, line, func, msg);
}
