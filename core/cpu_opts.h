/* SPDX-License-Identifier: MIT */
/*
 * --cpu FEATURE=VALUE[,...]: the vCPU features the user asks for (arm64: SVE, pointer
 * authentication, the PMU). Each is "auto" unless given: the board then enables it when the host
 * offers it and leaves it out silently when not; "on" (or an SVE vector length) refuses to start
 * on a host without it; "off" leaves it out. Parsed here, arch-neutral; the arm64 board decides.
 */
#ifndef VMM_CPU_OPTS_H
#define VMM_CPU_OPTS_H

#include <stdbool.h>

enum cpu_want { CPU_WANT_AUTO = 0, CPU_WANT_OFF, CPU_WANT_ON };

/* Architectural bounds of an SVE vector length in bits (a multiple of 128). */
#define CPU_SVE_MIN_BITS 128
#define CPU_SVE_MAX_BITS 2048

struct cpu_opts {
	bool given; /* --cpu appeared: boards without these features refuse it */
	enum cpu_want sve, pauth, pmu;
	unsigned int sve_max_bits; /* sve=BITS: the largest vector length; 0: the host's largest */
};

/* Merges one --cpu argument into o (later values win); -EINVAL with a message on bad input. */
int cpu_opts_parse(struct cpu_opts *o, const char *arg);
const char *cpu_want_name(enum cpu_want w);

#endif
