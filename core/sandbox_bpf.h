/* SPDX-License-Identifier: MIT */
/*
 * The filters buildtools/sandbox_gen.c compiled at build time (build/gen/ARCH/sandbox_bpf.c), and what
 * the SIGSYS report and the note need with them. Only core/sandbox.c and its tests read these.
 */
#ifndef VMM_SANDBOX_BPF_H
#define VMM_SANDBOX_BPF_H

#include <linux/filter.h>

#include "core/sandbox.h"

struct sandbox_filter {
	const struct sock_filter *insns;
	unsigned short len;
};

/* [0]: refused calls trap (SANDBOX_ENFORCE); [1]: they are logged (SANDBOX_LOG). */
extern const struct sandbox_filter sandbox_filters[2][SANDBOX_NR_ROLES];
/* The target's system call names by number (NULL: none), for the SIGSYS report. */
#define SANDBOX_MAX_NR 512
extern const char *const sandbox_syscall_names[SANDBOX_MAX_NR];
/* Each role's allowlist as sandbox_describe gives it. */
extern const char *const sandbox_allowlists[SANDBOX_NR_ROLES];

#endif
