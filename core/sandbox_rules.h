/* SPDX-License-Identifier: MIT */
/*
 * The per-thread allowlists as libseccomp rules. Used at build time only: vmm/sandbox_gen.c
 * compiles every role's filter for the target into BPF (build/gen/ARCH/sandbox_bpf.c), so vmm
 * itself neither links libseccomp nor compiles a filter at start-up; the unit tests compile them
 * again on the target to check what was generated.
 */
#ifndef VMM_SANDBOX_RULES_H
#define VMM_SANDBOX_RULES_H

#include <seccomp.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "core/sandbox.h"

/* The constants the rules compare ioctl and openat arguments with, as the generator saw them:
 * the generated file asserts the target's headers agree. */
struct sandbox_rule_consts {
	const char *name;
	unsigned long value;
};
extern const struct sandbox_rule_consts sandbox_rule_consts[];
extern const size_t sandbox_rule_nconsts;

/* role's allowlist for arch (an SCMP_ARCH_ value, the native one or another), refusing by SIGSYS
 * (enforce) or by the audit log (log). NULL, with a message on stderr, when it cannot be built. */
scmp_filter_ctx sandbox_rules_build(uint32_t arch, enum sandbox_mode mode, enum sandbox_role role);
/* The names, space-separated, of what role may call on arch, each with its argument rule. */
void sandbox_rules_describe(uint32_t arch, enum sandbox_role role, char *out, size_t size);
/* Whether the filters let a sandboxed thread (vCPU, main) make vhost request req: what
 * virtio/vhost_net.c asks after set-up must be one (tests/unit/vhost_net_test.c). */
bool sandbox_rules_vhost_request(unsigned long req);
/* The filter as the kernel's BPF (malloc'd into *insns, *len instructions). 0 or -errno. */
int sandbox_rules_export(scmp_filter_ctx f, void **insns, size_t *len);

#endif
