/* SPDX-License-Identifier: MIT */
/* Messages: every one names the failing step and what to do; errors are returned as -errno. */
#ifndef VMM_LOG_H
#define VMM_LOG_H

#include <pthread.h>
#include <stdint.h>

void vmm_log(const char *level, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
#define pr_err(...) vmm_log("error", __VA_ARGS__)
#define pr_warn(...) vmm_log("warning", __VA_ARGS__)
#define pr_info(...) vmm_log(NULL, __VA_ARGS__)

/*
 * A rate limit for messages a guest can cause as often as it likes (a config write, a BAR move, a
 * malformed ring): at most burst of them per window, from all sources together; the rest are
 * counted, and the next message let through after a window with some dropped, or
 * log_limit_flush(), says how many with one "suppressed N" line. The state is the VM's (struct
 * vm owns one): two VMs in one process, or a unit test's, do not share it. Thread-safe: vCPU
 * threads and device workers log through the same limit.
 */
struct log_limit {
	pthread_mutex_t lock;
	uint64_t window_ns;
	unsigned int burst;
	uint64_t start_ns;	 /* the current window's start */
	unsigned int n;		 /* messages let through in it */
	uint64_t suppressed;	 /* dropped since the last "suppressed" line */
	uint64_t suppressed_all; /* dropped in all */
};

#define LOG_LIMIT_BURST 20
#define LOG_LIMIT_WINDOW_MS 10000

void log_limit_init(struct log_limit *l, unsigned int burst, unsigned int window_ms);
void vmm_log_limited(struct log_limit *l, const char *level, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));
/* The "suppressed N" line for what was dropped since the last one, if anything (at exit). */
void log_limit_flush(struct log_limit *l);
/* A warning the guest can repeat at will, under the VM's limit. */
#define pr_warn_guest(vm, ...) vmm_log_limited(&(vm)->log_limit, "warning", __VA_ARGS__)

#endif
