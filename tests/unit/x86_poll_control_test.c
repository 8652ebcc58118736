// SPDX-License-Identifier: MIT
/* MSR_KVM_POLL_CONTROL through the fake KVM seam (x86/poll_control.c): which MSR, per vCPU fd,
 * read back after each write, bad values kept from KVM, and the CPUID bit that gates it. */
#include <asm/kvm_para.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "kselftest_harness.h"
#include "tests/unit/fake_kvm.h"
#include "x86/x86.h"

TEST(msr_written_then_read_back)
{
	struct fake_kvm *fk = calloc(1, sizeof(*fk));
	struct kvm_seam k = fake_kvm_seam(fk);

	fk->msr_reset = 1;
	EXPECT_EQ(1, x86_poll_control_rw(&k, 7, -1)); /* reset value, read only */
	EXPECT_EQ(0, fake_kvm_count(fk, FK_MSR_SET));
	EXPECT_EQ(0, x86_poll_control_rw(&k, 7, 0));
	EXPECT_EQ(1, x86_poll_control_rw(&k, 8, -1)); /* per vCPU */
	ASSERT_EQ(1, fake_kvm_count(fk, FK_MSR_SET));
	int i = fake_kvm_find(fk, FK_MSR_SET, 0);

	EXPECT_EQ(MSR_KVM_POLL_CONTROL, fk->call[i].msr);
	EXPECT_EQ(7, fk->call[i].fd);
	EXPECT_EQ(0, fk->call[i].size);
	EXPECT_EQ(FK_MSR_GET, fk->call[i + 1].op); /* read back after the write */
	EXPECT_EQ(1, x86_poll_control_rw(&k, 7, 1));
	/* only 0, 1 and -1: nothing reaches KVM otherwise */
	int before = fk->nr;

	EXPECT_EQ(-EINVAL, x86_poll_control_rw(&k, 7, 2));
	EXPECT_EQ(-EINVAL, x86_poll_control_rw(&k, 7, -2));
	EXPECT_EQ(before, fk->nr);
	/* KVM's refusal comes back */
	fk->fail_op = FK_MSR_SET;
	fk->fail_nth = 1;
	fk->fail_errno = EINVAL;
	EXPECT_EQ(-EINVAL, x86_poll_control_rw(&k, 7, 0));
	EXPECT_EQ(1, x86_poll_control_rw(&k, 7, -1));
	free(fk);
}

/* the core's seam has no MSR access; x86's vm_init adds it */
TEST(no_msr_access_in_the_seam)
{
	struct kvm_seam_ops ops = { 0 };
	struct kvm_seam k = { &ops, NULL };

	EXPECT_EQ(-EOPNOTSUPP, x86_poll_control_rw(&k, 3, -1));
	EXPECT_EQ(NULL, kvm_seam_ioctl_ops.vcpu_msr);
}

TEST(refused_without_poll_control_in_cpuid)
{
	EXPECT_EQ(NULL, x86_poll_control_refusal(1u << KVM_FEATURE_POLL_CONTROL));
	const char *why = x86_poll_control_refusal(~(1u << KVM_FEATURE_POLL_CONTROL));

	ASSERT_NE(NULL, why);
	EXPECT_NE(NULL, strstr(why, "POLL_CONTROL"));
	EXPECT_NE(NULL, strstr(why, "--pv poll-control=on"));
}

TEST_HARNESS_MAIN
