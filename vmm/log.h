/* SPDX-License-Identifier: MIT */
/* Messages: every one names the failing step and what to do; errors are returned as -errno. */
#ifndef VMM_LOG_H
#define VMM_LOG_H

void vmm_log(const char *level, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
#define pr_err(...) vmm_log("error", __VA_ARGS__)
#define pr_warn(...) vmm_log("warning", __VA_ARGS__)
#define pr_info(...) vmm_log(NULL, __VA_ARGS__)

#endif
