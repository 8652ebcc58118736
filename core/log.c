// SPDX-License-Identifier: MIT
/* One place that formats messages, so every subsystem's errors read the same way; and the rate
 * limit for the messages a guest can repeat at will. */
#include <stdarg.h>
#include <stdio.h>
#include <time.h>

#include "core/hot.h"
#include "core/log.h"

VMM_HOT static void vlog(const char *level, const char *fmt, va_list ap)
{
	if (level)
		fprintf(stderr, "vmm: %s: ", level);
	else
		fputs("vmm: ", stderr);
	vfprintf(stderr, fmt, ap);
	fputc('\n', stderr);
}

VMM_HOT void vmm_log(const char *level, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vlog(level, fmt, ap);
	va_end(ap);
}

void log_limit_init(struct log_limit *l, unsigned int burst, unsigned int window_ms)
{
	*l = (struct log_limit){ .burst = burst, .window_ns = window_ms * 1000000ull };
	pthread_mutex_init(&l->lock, NULL);
}

static uint64_t now_ns(void)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return (uint64_t)t.tv_sec * 1000000000ull + (uint64_t)t.tv_nsec;
}

/* lock held */
static void say_suppressed(struct log_limit *l)
{
	if (!l->suppressed)
		return;
	vmm_log("warning", "suppressed %llu messages the guest caused (at most %u per %g s are shown; "
		"the exit summary counts the guest's errors)", (unsigned long long)l->suppressed, l->burst,
		(double)l->window_ns / 1e9);
	l->suppressed = 0;
}

VMM_HOT void vmm_log_limited(struct log_limit *l, const char *level, const char *fmt, ...)
{
	uint64_t t;
	va_list ap;

	/* The clock is read under the lock: a time taken before it can be older than the window a
	 * faster thread just opened, and t - start_ns would wrap into "a new window" (more lines). */
	pthread_mutex_lock(&l->lock);
	t = now_ns();
	if (t - l->start_ns >= l->window_ns) {
		l->start_ns = t;
		l->n = 0;
	}
	if (l->n >= l->burst) {
		l->suppressed++;
		l->suppressed_all++;
		pthread_mutex_unlock(&l->lock);
		return;
	}
	l->n++;
	say_suppressed(l);
	va_start(ap, fmt);
	vlog(level, fmt, ap);
	va_end(ap);
	pthread_mutex_unlock(&l->lock);
}

void log_limit_flush(struct log_limit *l)
{
	pthread_mutex_lock(&l->lock);
	say_suppressed(l);
	pthread_mutex_unlock(&l->lock);
}
