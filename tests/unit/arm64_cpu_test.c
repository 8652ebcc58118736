// SPDX-License-Identifier: MIT
/*
 * The arm64 vCPU features (arm64/cpu_feat.c) against a fake KVM that keeps KVM's rules
 * (api.rst, devices/vcpu.rst) and refuses what KVM refuses: SVE_VLS only before FINALIZE,
 * FINALIZE only with the SVE feature, pointer auth's two flags together, the PMU's IRQ a PPI
 * equal on every vCPU and set before PMU_V3_INIT, PMU_V3_INIT only after the vGIC's CTRL_INIT.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "arm64/arm64.h"
#include "arm64/gic/gic.h"
#include "kselftest_harness.h"
#include "tests/unit/fake_kvm.h"
#include "core/vcpu.h"
#include "core/vm.h"

#define VCPU_FD0 100
#define GIC_FD 200
#define NCPU 2

enum ev { EV_INIT, EV_GET_VLS, EV_SET_VLS, EV_FINALIZE, EV_GIC_INIT, EV_PMU_IRQ, EV_PMU_INIT };

struct fake_arm {
	bool cap_sve, cap_pauth_a, cap_pauth_g, cap_pmu;
	uint64_t host_vls[KVM_ARM64_SVE_VLS_WORDS];
	bool gic_ready;
	struct {
		uint32_t features;
		bool inited, finalized, vls_set;
		uint64_t vls[KVM_ARM64_SVE_VLS_WORDS];
		int pmu_irq;
		bool pmu_ready;
	} cpu[NCPU];
	struct { enum ev ev; int cpu; } log[64];
	int nr;
};

static void note(struct fake_arm *a, enum ev ev, int cpu)
{
	if (a->nr < 64)
		a->log[a->nr++] = (typeof(a->log[0])){ ev, cpu };
}

static int vcpu_call_(struct fake_arm *a, int i, unsigned long req, void *data)
{
	typeof(a->cpu[0]) *c = &a->cpu[i];

	if (req == KVM_ARM_VCPU_INIT) {
		const struct kvm_vcpu_init *init = data;
		uint32_t f = init->features[0];
		uint32_t pa = 1u << KVM_ARM_VCPU_PTRAUTH_ADDRESS, pg = 1u << KVM_ARM_VCPU_PTRAUTH_GENERIC;

		if (!!(f & pa) != !!(f & pg))
			return -EINVAL; /* one pointer-auth flag without the other */
		if (((f & 1u << KVM_ARM_VCPU_SVE) && !a->cap_sve) || ((f & pa) && !a->cap_pauth_a) ||
		    ((f & 1u << KVM_ARM_VCPU_PMU_V3) && !a->cap_pmu))
			return -EINVAL;
		c->features = f;
		c->inited = true;
		note(a, EV_INIT, i);
		return 0;
	}
	if (req == KVM_GET_ONE_REG || req == KVM_SET_ONE_REG) {
		const struct kvm_one_reg *reg = data;

		if (reg->id != KVM_REG_ARM64_SVE_VLS || !c->inited || !(c->features & 1u << KVM_ARM_VCPU_SVE))
			return -ENOENT;
		if (req == KVM_GET_ONE_REG) {
			memcpy((void *)(uintptr_t)reg->addr, c->vls_set ? c->vls : a->host_vls, sizeof(c->vls));
			note(a, EV_GET_VLS, i);
			return 0;
		}
		if (c->finalized)
			return -EPERM;
		const uint64_t *v = (const void *)(uintptr_t)reg->addr;

		for (int w = 0; w < KVM_ARM64_SVE_VLS_WORDS; w++)
			if (v[w] & ~a->host_vls[w])
				return -EINVAL; /* a length the host lacks */
		memcpy(c->vls, v, sizeof(c->vls));
		c->vls_set = true;
		note(a, EV_SET_VLS, i);
		return 0;
	}
	if (req == KVM_ARM_VCPU_FINALIZE) {
		if (*(int *)data != KVM_ARM_VCPU_SVE || !(c->features & 1u << KVM_ARM_VCPU_SVE) || c->finalized)
			return -EINVAL;
		c->finalized = true;
		note(a, EV_FINALIZE, i);
		return 0;
	}
	if (req == KVM_SET_DEVICE_ATTR) {
		const struct kvm_device_attr *at = data;

		if (at->group != KVM_ARM_VCPU_PMU_V3_CTRL || !(c->features & 1u << KVM_ARM_VCPU_PMU_V3))
			return -ENODEV;
		if (at->attr == KVM_ARM_VCPU_PMU_V3_IRQ) {
			int irq = *(int *)(uintptr_t)at->addr;

			if (irq < 16 || irq > 31)
				return -EINVAL; /* vmm's board: a PPI */
			for (int k = 0; k < NCPU; k++)
				if (a->cpu[k].pmu_irq && a->cpu[k].pmu_irq != irq)
					return -EINVAL; /* a PPI is the same INTID on every vCPU */
			if (c->pmu_irq)
				return -EBUSY;
			c->pmu_irq = irq;
			note(a, EV_PMU_IRQ, i);
			return 0;
		}
		if (at->attr == KVM_ARM_VCPU_PMU_V3_INIT) {
			if (!a->gic_ready)
				return -ENODEV;
			if (!c->pmu_irq)
				return -ENXIO;
			c->pmu_ready = true;
			note(a, EV_PMU_INIT, i);
			return 0;
		}
	}
	return -ENOTTY;
}

static int fake_arm_ioctl(void *arg, int fd, unsigned long req, void *data)
{
	struct fake_arm *a = arg;

	if (req == KVM_CHECK_EXTENSION) {
		long cap = (long)data;

		return cap == KVM_CAP_ARM_SVE ? a->cap_sve : cap == KVM_CAP_ARM_PTRAUTH_ADDRESS ? a->cap_pauth_a
		     : cap == KVM_CAP_ARM_PTRAUTH_GENERIC ? a->cap_pauth_g : cap == KVM_CAP_ARM_PMU_V3 ? a->cap_pmu : 0;
	}
	if (req == KVM_ARM_PREFERRED_TARGET)
		return 0;
	if (req == KVM_CREATE_DEVICE) {
		((struct kvm_create_device *)data)->fd = GIC_FD;
		return 0;
	}
	if (fd == GIC_FD) {
		const struct kvm_device_attr *at = data;

		if (at->group == KVM_DEV_ARM_VGIC_GRP_CTRL && at->attr == KVM_DEV_ARM_VGIC_CTRL_INIT) {
			a->gic_ready = true;
			note(a, EV_GIC_INIT, -1);
		}
		return 0;
	}
	if (fd >= VCPU_FD0 && fd < VCPU_FD0 + NCPU)
		return vcpu_call_(a, fd - VCPU_FD0, req, data);
	return -EBADF;
}

/* vq n is bit n-1: 128..2048-bit vectors are vq 1..16 */
static void host_vls(struct fake_arm *a, const unsigned int *vq, int n)
{
	memset(a->host_vls, 0, sizeof(a->host_vls));
	for (int i = 0; i < n; i++)
		a->host_vls[(vq[i] - 1) / 64] |= 1ULL << ((vq[i] - 1) % 64);
}

FIXTURE(cpu) {
	struct vm *vm;
	struct fake_kvm *fk;
	struct fake_arm a;
	struct vcpu v[NCPU];
	struct vgic gic;
};

FIXTURE_SETUP(cpu)
{
	static const unsigned int all[] = { 1, 2, 4, 8, 16 }; /* 128, 256, 512, 1024, 2048 bits */

	self->vm = calloc(1, sizeof(*self->vm));
	self->fk = calloc(1, sizeof(*self->fk));
	ASSERT_EQ(0, fake_vm_init(self->vm, self->fk, 0, 0));
	memset(&self->a, 0, sizeof(self->a));
	self->a.cap_sve = self->a.cap_pauth_a = self->a.cap_pauth_g = self->a.cap_pmu = true;
	host_vls(&self->a, all, 5);
	self->fk->on_ioctl = fake_arm_ioctl;
	self->fk->on_ioctl_arg = &self->a;
	for (int i = 0; i < NCPU; i++) {
		self->v[i] = (struct vcpu){ .vm = self->vm, .id = i, .fd = VCPU_FD0 + i };
		self->vm->vcpus[i] = &self->v[i];
	}
	self->vm->nr_vcpus = NCPU;
}

FIXTURE_TEARDOWN(cpu)
{
	fake_vm_free(self->vm);
	free(self->vm);
	free(self->fk);
}

/* What the board does: resolve, every vCPU's init, then the vGIC's CTRL_INIT and the PMUs. */
static int board_steps(struct vm *vm, struct vgic *gic, const struct cpu_opts *o, struct arm64_cpu_feat *f)
{
	struct arm64_cpu_host h;
	int r;

	arm64_cpu_host_read(vm, &h);
	if ((r = arm64_cpu_resolve(o, &h, f)) < 0)
		return r;
	if ((r = vgic_create(vm, gic, ARM64_GICD_BASE, ARM64_GICR_BASE, ARM64_GICR_LIMIT, NCPU)) < 0)
		return r;
	for (int i = 0; i < vm->nr_vcpus; i++)
		if ((r = arm64_vcpu_init(vm->vcpus[i], i > 0, f)) < 0)
			return r;
	return arm64_irqchip_pmu_init(gic, ARM64_NR_IRQS, vm, f);
}

static int find(const struct fake_arm *a, enum ev ev, int cpu)
{
	for (int i = 0; i < a->nr; i++)
		if (a->log[i].ev == ev && a->log[i].cpu == cpu)
			return i;
	return -1;
}

/* By default every vCPU gets what the host offers, each step in KVM's order. */
TEST_F(cpu, default_takes_all_in_order)
{
	struct cpu_opts o = { 0 };
	struct arm64_cpu_feat f;
	int gic;

	ASSERT_EQ(0, board_steps(self->vm, &self->gic, &o, &f));
	EXPECT_TRUE(f.sve);
	EXPECT_TRUE(f.pauth);
	EXPECT_TRUE(f.pmu);
	EXPECT_EQ(2048, f.sve_vl_bits);
	EXPECT_EQ(ARM64_PMU_INTID, f.pmu_intid);
	gic = find(&self->a, EV_GIC_INIT, -1);
	ASSERT_LE(0, gic);
	for (int i = 0; i < NCPU; i++) {
		uint32_t want = 1u << KVM_ARM_VCPU_PSCI_0_2 | 1u << KVM_ARM_VCPU_SVE | 1u << KVM_ARM_VCPU_PMU_V3 |
				1u << KVM_ARM_VCPU_PTRAUTH_ADDRESS | 1u << KVM_ARM_VCPU_PTRAUTH_GENERIC |
				(i ? 1u << KVM_ARM_VCPU_POWER_OFF : 0);

		EXPECT_EQ(want, self->a.cpu[i].features);
		EXPECT_TRUE(self->a.cpu[i].finalized);
		EXPECT_LT(find(&self->a, EV_INIT, i), find(&self->a, EV_SET_VLS, i));
		EXPECT_LT(find(&self->a, EV_SET_VLS, i), find(&self->a, EV_FINALIZE, i));
		EXPECT_LT(find(&self->a, EV_FINALIZE, i), gic);
		EXPECT_LT(gic, find(&self->a, EV_PMU_IRQ, i));
		EXPECT_LT(find(&self->a, EV_PMU_IRQ, i), find(&self->a, EV_PMU_INIT, i));
		EXPECT_TRUE(self->a.cpu[i].pmu_ready);
		EXPECT_EQ(ARM64_PMU_INTID, self->a.cpu[i].pmu_irq);
		EXPECT_EQ(0x808b, self->a.cpu[i].vls[0]); /* all the host's lengths */
	}
}

/* sve=BITS keeps the host's lengths up to BITS (a length between two the host has: the lower). */
TEST_F(cpu, sve_vector_length_cap)
{
	struct cpu_opts o = { 0 };
	struct arm64_cpu_feat f;

	ASSERT_EQ(0, cpu_opts_parse(&o, "sve=768"));
	ASSERT_EQ(0, board_steps(self->vm, &self->gic, &o, &f));
	EXPECT_EQ(512, f.sve_vl_bits);
	for (int i = 0; i < NCPU; i++)
		EXPECT_EQ(0xb, self->a.cpu[i].vls[0]); /* vq 1, 2, 4 */
}

TEST_F(cpu, sve_length_below_the_hosts_smallest_refused)
{
	static const unsigned int big[] = { 2, 4 };
	struct cpu_opts o = { 0 };
	struct arm64_cpu_feat f;

	host_vls(&self->a, big, 2);
	ASSERT_EQ(0, cpu_opts_parse(&o, "sve=128"));
	EXPECT_EQ(-EINVAL, board_steps(self->vm, &self->gic, &o, &f));
	EXPECT_EQ(-1, find(&self->a, EV_SET_VLS, 0));
}

/* Each feature turned off is left out of KVM_ARM_VCPU_INIT and its later steps. */
TEST_F(cpu, all_off)
{
	struct cpu_opts o = { 0 };
	struct arm64_cpu_feat f;

	ASSERT_EQ(0, cpu_opts_parse(&o, "sve=off,pauth=off,pmu=off"));
	ASSERT_EQ(0, board_steps(self->vm, &self->gic, &o, &f));
	EXPECT_EQ(1u << KVM_ARM_VCPU_PSCI_0_2, self->a.cpu[0].features);
	EXPECT_EQ(-1, find(&self->a, EV_GET_VLS, 0));
	EXPECT_EQ(-1, find(&self->a, EV_FINALIZE, 0));
	EXPECT_EQ(-1, find(&self->a, EV_PMU_IRQ, 0));
	EXPECT_FALSE(f.pmu);
	EXPECT_EQ(0u, f.pmu_intid); /* and the FDT gets no PMU node */
}

/* A host without the features: left out silently by default, refused when asked for. */
TEST_F(cpu, host_lacks_them)
{
	static const char *const ask[] = { "sve=on", "sve=256", "pauth=on", "pmu=on" };
	struct cpu_opts o = { 0 };
	struct arm64_cpu_feat f;

	self->a.cap_sve = self->a.cap_pauth_g = self->a.cap_pmu = false; /* ADDRESS alone is not enough */
	ASSERT_EQ(0, board_steps(self->vm, &self->gic, &o, &f));
	EXPECT_FALSE(f.sve || f.pauth || f.pmu);
	EXPECT_EQ(1u << KVM_ARM_VCPU_PSCI_0_2, self->a.cpu[0].features);
	for (size_t i = 0; i < sizeof(ask) / sizeof(ask[0]); i++) {
		struct cpu_opts w = { 0 };

		ASSERT_EQ(0, cpu_opts_parse(&w, ask[i]));
		EXPECT_EQ(-EOPNOTSUPP, board_steps(self->vm, &self->gic, &w, &f)) TH_LOG("%s", ask[i]);
	}
}

/* The PMU before the vGIC is KVM's -ENODEV: the board's step does it the other way round. */
TEST_F(cpu, pmu_needs_the_vgic_first)
{
	struct cpu_opts o = { 0 };
	struct arm64_cpu_feat f;
	struct arm64_cpu_host h;

	arm64_cpu_host_read(self->vm, &h);
	ASSERT_EQ(0, arm64_cpu_resolve(&o, &h, &f));
	for (int i = 0; i < NCPU; i++)
		ASSERT_EQ(0, arm64_vcpu_init(&self->v[i], i > 0, &f));
	EXPECT_EQ(-ENODEV, arm64_pmu_init(self->vm, &f)); /* what the fake (and KVM) say */
}

/* A KVM failure in the middle is reported, not skipped. */
TEST_F(cpu, failures_propagate)
{
	struct cpu_opts o = { 0 };
	struct arm64_cpu_feat f;

	self->fk->fail_op = FK_FD_IOCTL;
	self->fk->fail_nth = 8; /* 4 CHECK_EXTENSIONs, KVM_CREATE_DEVICE, 2 addresses, then the target */
	self->fk->fail_errno = EIO;
	EXPECT_EQ(-EIO, board_steps(self->vm, &self->gic, &o, &f));
}

TEST(describe_and_json)
{
	struct arm64_cpu_feat f = { .sve = true, .pauth = true, .pmu = true, .sve_vl_bits = 2048,
				    .pmu_intid = 23 };
	char line[128], *buf = NULL;
	size_t n = 0;
	FILE *m = open_memstream(&buf, &n);

	arm64_cpu_describe(&f, line, sizeof(line));
	EXPECT_STREQ("sve (vectors up to 2048 bits), pauth on, pmu on (overflow INTID 23)", line);
	arm64_cpu_json(&f, m);
	fclose(m);
	EXPECT_STREQ(",\"cpu_features\":{\"sve\":true,\"sve_max_vl_bits\":2048,\"pauth\":true,\"pmu\":true,"
		     "\"pmu_intid\":23}", buf);
	free(buf);
	f = (struct arm64_cpu_feat){ 0 };
	arm64_cpu_describe(&f, line, sizeof(line));
	EXPECT_STREQ("sve off, pauth off, pmu off", line);
}

TEST_HARNESS_MAIN
