// SPDX-License-Identifier: MIT
/* One place that formats messages, so every subsystem's errors read the same way. */
#include <stdarg.h>
#include <stdio.h>

#include "vmm/log.h"

void vmm_log(const char *level, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	if (level)
		fprintf(stderr, "vmm: %s: ", level);
	else
		fputs("vmm: ", stderr);
	vfprintf(stderr, fmt, ap);
	fputc('\n', stderr);
	va_end(ap);
}
