// SPDX-License-Identifier: MIT
/*
 * The per-vCPU host polling switch on the board's side (vmm/board_poll.c): the control socket's
 * set/get and the exit summary on a board whose arch ops are x86's two (x86/poll_control.c over
 * the fake KVM seam), or none (arm64's case).
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "kselftest_harness.h"
#include "tests/unit/fake_kvm.h"
#include "vmm/board.h"
#include "core/vcpu.h"
#include "x86/x86.h"

/* KVM_CPUID_FEATURES eax as KVM offers it (lab.md), POLL_CONTROL among them; 0: a guest with no PV
 * features. x86_poll_control_test checks the bit itself against asm/kvm_para.h. */
#define KVM_LEAF_EAX 0x01007efb

/* A board with two vCPUs (no threads: calls run on the caller) and x86's ops over the fake. */
static uint32_t guest_features;

static const char *t_refusal(struct machine *m)
{
	(void)m;
	return x86_poll_control_refusal(guest_features);
}

static int t_poll_control(struct machine *m, struct vcpu *v, int set)
{
	return x86_poll_control_rw(&m->vm->kvm, v->fd, set);
}

static const struct arch_ops x86_like = { .name = "x86-like", .poll_control_refusal = t_refusal,
					  .poll_control = t_poll_control };
static const struct arch_ops none = { .name = "arm64-like" };

FIXTURE(board)
{
	struct board *b;
	struct fake_kvm *fk;
	char err[320];
};

FIXTURE_SETUP(board)
{
	self->b = calloc(1, sizeof(*self->b));
	self->fk = calloc(1, sizeof(*self->fk));
	self->fk->msr_reset = 1;
	self->b->machine = (struct machine){ .vm = &self->b->vm, .arch = &x86_like };
	self->b->vm.kvm = fake_kvm_seam(self->fk);
	for (int i = 0; i < 2; i++) {
		struct vcpu *v = calloc(1, sizeof(*v));

		v->id = i;
		v->fd = 100 + i;
		vcpu_kicker_init(&v->kicker);
		vcpu_call_init(&v->call);
		self->b->vm.vcpus[self->b->vm.nr_vcpus++] = v;
	}
	guest_features = KVM_LEAF_EAX;
}

FIXTURE_TEARDOWN(board)
{
	for (int i = 0; i < self->b->vm.nr_vcpus; i++)
		free(self->b->vm.vcpus[i]);
	free(self->b);
	free(self->fk);
}

static const char *json(struct board *b)
{
	static char buf[512];
	FILE *f = fmemopen(buf, sizeof(buf), "w");

	board_poll_control_json(b, f);
	fclose(f);
	return buf;
}

TEST_F(board, set_one_and_all)
{
	EXPECT_STREQ(",\"poll_control\":[1,1]", json(self->b));
	EXPECT_EQ(0, board_poll_control(self->b, 1, 0, self->err, sizeof(self->err)));
	EXPECT_STREQ(",\"poll_control\":[1,0]", json(self->b));
	EXPECT_EQ(0, board_poll_control(self->b, -1, 0, self->err, sizeof(self->err)));
	EXPECT_STREQ(",\"poll_control\":[0,0]", json(self->b));
	EXPECT_EQ(0, board_poll_control(self->b, 0, 1, self->err, sizeof(self->err)));
	EXPECT_STREQ(",\"poll_control\":[1,0]", json(self->b));
}

TEST_F(board, bad_vcpu_or_value_refused_untouched)
{
	int calls = self->fk->nr;

	EXPECT_EQ(-EINVAL, board_poll_control(self->b, 2, 0, self->err, sizeof(self->err)));
	EXPECT_NE(NULL, strstr(self->err, "no vCPU 2 (this VM has vCPUs 0..1, or all)"));
	EXPECT_EQ(-EINVAL, board_poll_control(self->b, -2, 0, self->err, sizeof(self->err)));
	EXPECT_EQ(-EINVAL, board_poll_control(self->b, 0, 5, self->err, sizeof(self->err)));
	EXPECT_EQ(calls, self->fk->nr);
}

TEST_F(board, kvm_refusal_is_reported)
{
	self->fk->fail_op = FK_MSR_SET;
	self->fk->fail_nth = 2; /* vCPU 1's write, after vCPU 0's went through */
	EXPECT_EQ(-EINVAL, board_poll_control(self->b, -1, 0, self->err, sizeof(self->err)));
	EXPECT_NE(NULL, strstr(self->err, "vCPU 1")) TH_LOG("%s", self->err);
	EXPECT_STREQ(",\"poll_control\":[0,1]", json(self->b));
}

TEST_F(board, guest_without_poll_control_refused)
{
	guest_features = 0;
	EXPECT_EQ(-EOPNOTSUPP, board_poll_control(self->b, 0, 0, self->err, sizeof(self->err)));
	EXPECT_NE(NULL, strstr(self->err, "poll-control: the guest's CPUID has no POLL_CONTROL"));
	EXPECT_EQ(0, self->fk->nr);
	EXPECT_NE(NULL, strstr(json(self->b), ",\"poll_control\":null,\"poll_control_why\":\"the guest's"));
}

TEST_F(board, arch_without_the_switch_refused)
{
	char buf[256] = "";
	FILE *f = fmemopen(buf, sizeof(buf), "w");

	self->b->machine.arch = &none;
	EXPECT_EQ(-EOPNOTSUPP, board_poll_control(self->b, 0, 0, self->err, sizeof(self->err)));
	EXPECT_NE(NULL, strstr(self->err, "no per-vCPU host polling switch (MSR_KVM_POLL_CONTROL is x86's)"));
	EXPECT_NE(NULL, strstr(json(self->b), "\"poll_control\":null"));
	board_poll_control_summary(self->b, f); /* arm64's exit summary stays as it was */
	fclose(f);
	EXPECT_STREQ("", buf);
	EXPECT_EQ(0, self->fk->nr);
}

TEST_F(board, exit_summary_line)
{
	char buf[256] = "";
	FILE *f = fmemopen(buf, sizeof(buf), "w");

	board_poll_control(self->b, 0, 0, self->err, sizeof(self->err));
	board_poll_control_summary(self->b, f);
	fclose(f);
	EXPECT_NE(NULL, strstr(buf, "vmm: poll-control at exit")) TH_LOG("%s", buf);
	EXPECT_NE(NULL, strstr(buf, " vcpu0=0 vcpu1=1\n")) TH_LOG("%s", buf);
}

TEST_HARNESS_MAIN
