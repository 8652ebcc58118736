// SPDX-License-Identifier: MIT
/*
 * The filters compiled at build time against libseccomp's own from the same lists, and the
 * allowlists' description; nothing is loaded, so these run under qemu-user too.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>

#include "kselftest_harness.h"
#include "core/sandbox.h"
#include "core/sandbox_bpf.h"
#include "core/sandbox_rules.h"

/*
 * The filters vmm loads were compiled at build time, on the build machine, for this target
 * (buildtools/sandbox_gen.c): each is, instruction for instruction, what libseccomp compiles here from
 * the same lists. On arm64 (the unit run under qemu-user) that checks the x86 machine's
 * cross-compiled filters against the arm64 libseccomp's own; no filter is loaded.
 */
TEST(build_time_filters_are_libseccomps_on_this_target)
{
	for (int m = 0; m < 2; m++)
		for (int role = 0; role < SANDBOX_NR_ROLES; role++) {
			scmp_filter_ctx f = sandbox_rules_build(seccomp_arch_native(), m ? SANDBOX_LOG : SANDBOX_ENFORCE, role);
			void *insns;
			size_t len;

			ASSERT_NE(NULL, f);
			ASSERT_EQ(0, sandbox_rules_export(f, &insns, &len));
			seccomp_release(f);
			const struct sandbox_filter *g = &sandbox_filters[m][role];

			EXPECT_EQ(len, g->len) TH_LOG("%s, mode %d", sandbox_role_name(role), m);
			if (len == g->len) {
				EXPECT_EQ(0, memcmp(insns, g->insns, len * sizeof(struct sock_filter)))
					TH_LOG("%s, mode %d: the instructions differ", sandbox_role_name(role), m);
			}
			free(insns);
		}
	/* and the report's names are this target's */
	for (int nr = 0; nr < SANDBOX_MAX_NR; nr++) {
		char *s = seccomp_syscall_resolve_num_arch(SCMP_ARCH_NATIVE, nr);

		if (s && sandbox_syscall_names[nr]) {
			EXPECT_STREQ(s, sandbox_syscall_names[nr]);
		} else {
			EXPECT_EQ(!s, !sandbox_syscall_names[nr]) TH_LOG("number %d", nr);
		}
		free(s);
	}
	EXPECT_STREQ("socket", sandbox_syscall_names[__NR_socket]);
}

/* The note's table of what each thread may call, printed from the lists themselves. */
TEST(describe_lists_each_role)
{
	char buf[4096];

	for (int role = 0; role < SANDBOX_NR_ROLES; role++) {
		sandbox_describe(role, buf, sizeof(buf));
		EXPECT_NE(NULL, strstr(buf, "futex")) TH_LOG("%s", buf);
		EXPECT_EQ(NULL, strstr(buf, "socket ")) TH_LOG("%s", buf);
		EXPECT_EQ(NULL, strstr(buf, "clone")) TH_LOG("%s", buf);
		printf("# SECCOMP-ALLOW %s: %s\n", sandbox_role_name(role), buf);
	}
	sandbox_describe(SANDBOX_VCPU, buf, sizeof(buf));
	EXPECT_NE(NULL, strstr(buf, "ioctl(KVM,VFIO)")) TH_LOG("%s", buf);
	char here[4096];

	sandbox_rules_describe(seccomp_arch_native(), SANDBOX_VCPU, here, sizeof(here));
	EXPECT_STREQ(here, buf);
	EXPECT_EQ(NULL, strstr(buf, "openat")) TH_LOG("%s", buf);
}

TEST_HARNESS_MAIN
