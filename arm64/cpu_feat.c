// SPDX-License-Identifier: MIT
/*
 * The arm64 vCPUs' optional features: SVE, pointer authentication and PMUv3, the same on every
 * vCPU. What KVM requires, in its order (Documentation/virt/kvm/api.rst, devices/vcpu.rst):
 *  - KVM_ARM_VCPU_INIT with the feature bits (pointer auth's ADDRESS and GENERIC together);
 *  - SVE: KVM_REG_ARM64_SVE_VLS (the vector lengths) while not finalized, then
 *    KVM_ARM_VCPU_FINALIZE(KVM_ARM_VCPU_SVE) before KVM_RUN or any register list;
 *  - PMU: after the vGIC's CTRL_INIT, KVM_ARM_VCPU_PMU_V3_IRQ (one PPI, the same INTID on every
 *    vCPU), then KVM_ARM_VCPU_PMU_V3_INIT.
 * Every ioctl goes through the KVM seam's fd_ioctl, so a unit test plays KVM and checks the order.
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "arm64/arm64.h"
#include "arm64/gic/gic.h"
#include "core/log.h"
#include "core/vcpu.h"
#include "core/vm.h"

/* KVM_CHECK_EXTENSION on the VM: what this VM (not only the host) can have; errors read as 0 */
static bool vm_has(struct vm *vm, long cap)
{
	return vm->kvm.ops->fd_ioctl(vm->kvm.ctx, vm->fd, KVM_CHECK_EXTENSION, (void *)cap) > 0;
}

void arm64_cpu_host_read(struct vm *vm, struct arm64_cpu_host *h)
{
	h->sve = vm_has(vm, KVM_CAP_ARM_SVE);
	/* KVM refuses one pointer-auth flag without the other: the host offers both or neither */
	h->pauth = vm_has(vm, KVM_CAP_ARM_PTRAUTH_ADDRESS) && vm_has(vm, KVM_CAP_ARM_PTRAUTH_GENERIC);
	h->pmu = vm_has(vm, KVM_CAP_ARM_PMU_V3);
}

static int pick(const char *name, enum cpu_want w, bool host, const char *cap, bool *out)
{
	if (w == CPU_WANT_ON && !host) {
		pr_err("--cpu %s=on: this host's KVM does not offer it (%s is 0 in vmm caps); use "
		       "%s=off or leave it out", name, cap, name);
		return -EOPNOTSUPP;
	}
	*out = w != CPU_WANT_OFF && host;
	return 0;
}

int arm64_cpu_resolve(const struct cpu_opts *o, const struct arm64_cpu_host *h, struct arm64_cpu_feat *f)
{
	int r;

	memset(f, 0, sizeof(*f));
	if (o->sve_max_bits && !h->sve) {
		pr_err("--cpu sve=%u: this host's KVM does not offer SVE (KVM_CAP_ARM_SVE is 0 in vmm caps); "
		       "use sve=off or leave it out", o->sve_max_bits);
		return -EOPNOTSUPP;
	}
	if ((r = pick("sve", o->sve, h->sve, "KVM_CAP_ARM_SVE", &f->sve)) < 0 ||
	    (r = pick("pauth", o->pauth, h->pauth, "KVM_CAP_ARM_PTRAUTH_ADDRESS/_GENERIC", &f->pauth)) < 0 ||
	    (r = pick("pmu", o->pmu, h->pmu, "KVM_CAP_ARM_PMU_V3", &f->pmu)) < 0)
		return r;
	f->sve_max_vq = o->sve_max_bits / 128;
	f->pmu_intid = f->pmu ? ARM64_PMU_INTID : 0;
	return 0;
}

static int vcpu_ioctl(struct vcpu *v, unsigned long req, void *arg, const char *what)
{
	struct kvm_seam *k = &v->vm->kvm;
	int r = k->ops->fd_ioctl(k->ctx, v->fd, req, arg);

	if (r < 0)
		pr_err("vCPU %d: %s failed: %s", v->id, what, strerror(-r));
	return r;
}

/* vq (128-bit quadwords) n is bit n-1 of the KVM_REG_ARM64_SVE_VLS bitmap */
static bool vq_in(const uint64_t *vls, unsigned int vq)
{
	return vls[(vq - 1) / 64] >> ((vq - 1) % 64) & 1;
}

/* The host's vector lengths up to the asked-for largest: KVM takes a subset that keeps every
 * host length below its largest, so the cut is at the top only. */
static int sve_set_vls(struct vcpu *v, struct arm64_cpu_feat *f)
{
	uint64_t vls[KVM_ARM64_SVE_VLS_WORDS];
	struct kvm_one_reg reg = { .id = KVM_REG_ARM64_SVE_VLS, .addr = (uintptr_t)vls };
	unsigned int max = 0, host_min = 0;
	int r;

	memset(vls, 0, sizeof(vls));
	if ((r = vcpu_ioctl(v, KVM_GET_ONE_REG, &reg, "reading KVM_REG_ARM64_SVE_VLS")) < 0)
		return r;
	for (unsigned int vq = KVM_ARM64_SVE_VQ_MIN; vq <= KVM_ARM64_SVE_VQ_MAX; vq++) {
		if (!vq_in(vls, vq))
			continue;
		host_min = host_min ? host_min : vq;
		if (f->sve_max_vq && vq > f->sve_max_vq) {
			vls[(vq - 1) / 64] &= ~(1ULL << ((vq - 1) % 64));
			continue;
		}
		max = vq;
	}
	if (!max) {
		pr_err("--cpu sve=%u: this host's smallest SVE vector length is %u bits; ask for at "
		       "least that", f->sve_max_vq * 128, host_min * 128);
		return -EINVAL;
	}
	if (f->sve_vl_bits && f->sve_vl_bits != max * 128) {
		pr_err("vCPU %d: SVE vector lengths up to %u bits, vCPU 0 has %u: the vCPUs must agree",
		       v->id, max * 128, f->sve_vl_bits);
		return -EINVAL;
	}
	f->sve_vl_bits = max * 128;
	if ((r = vcpu_ioctl(v, KVM_SET_ONE_REG, &reg, "setting KVM_REG_ARM64_SVE_VLS")) < 0)
		return r;
	int what = KVM_ARM_VCPU_SVE;

	return vcpu_ioctl(v, KVM_ARM_VCPU_FINALIZE, &what, "KVM_ARM_VCPU_FINALIZE(SVE)");
}

int arm64_vcpu_init(struct vcpu *v, bool powered_off, struct arm64_cpu_feat *f)
{
	struct kvm_seam *k = &v->vm->kvm;
	struct kvm_vcpu_init init;

	memset(&init, 0, sizeof(init));
	int r = k->ops->fd_ioctl(k->ctx, v->vm->fd, KVM_ARM_PREFERRED_TARGET, &init);

	if (r < 0) {
		pr_err("KVM_ARM_PREFERRED_TARGET failed: %s", strerror(-r));
		return r;
	}
	init.features[0] |= 1u << KVM_ARM_VCPU_PSCI_0_2;
	if (powered_off)
		init.features[0] |= 1u << KVM_ARM_VCPU_POWER_OFF;
	if (f->sve)
		init.features[0] |= 1u << KVM_ARM_VCPU_SVE;
	if (f->pauth)
		init.features[0] |= 1u << KVM_ARM_VCPU_PTRAUTH_ADDRESS | 1u << KVM_ARM_VCPU_PTRAUTH_GENERIC;
	if (f->pmu)
		init.features[0] |= 1u << KVM_ARM_VCPU_PMU_V3;
	if ((r = vcpu_ioctl(v, KVM_ARM_VCPU_INIT, &init, "KVM_ARM_VCPU_INIT")) < 0)
		return r;
	return f->sve ? sve_set_vls(v, f) : 0;
}

int arm64_pmu_init(struct vm *vm, const struct arm64_cpu_feat *f)
{
	for (int i = 0; f->pmu && i < vm->nr_vcpus; i++) {
		struct vcpu *v = vm->vcpus[i];
		int irq = (int)f->pmu_intid;
		struct kvm_device_attr a = { .group = KVM_ARM_VCPU_PMU_V3_CTRL, .attr = KVM_ARM_VCPU_PMU_V3_IRQ,
					     .addr = (uintptr_t)&irq };
		int r = vcpu_ioctl(v, KVM_SET_DEVICE_ATTR, &a, "setting the PMU's overflow interrupt");

		if (r < 0)
			return r;
		a = (struct kvm_device_attr){ .group = KVM_ARM_VCPU_PMU_V3_CTRL, .attr = KVM_ARM_VCPU_PMU_V3_INIT };
		if ((r = vcpu_ioctl(v, KVM_SET_DEVICE_ATTR, &a, "KVM_ARM_VCPU_PMU_V3_INIT")) < 0)
			return r;
	}
	return 0;
}

int arm64_irqchip_pmu_init(struct vgic *g, uint32_t nr_irqs, struct vm *vm, const struct arm64_cpu_feat *f)
{
	int r = vgic_init(g, nr_irqs);

	return r < 0 ? r : arm64_pmu_init(vm, f);
}

int arm64_cpu_describe(const struct arm64_cpu_feat *f, char *buf, size_t n)
{
	char sve[48] = "sve off";

	if (f->sve && f->sve_vl_bits)
		snprintf(sve, sizeof(sve), "sve (vectors up to %u bits)", f->sve_vl_bits);
	else if (f->sve)
		snprintf(sve, sizeof(sve), "sve");
	if (!f->pmu)
		return snprintf(buf, n, "%s, pauth %s, pmu off", sve, f->pauth ? "on" : "off");
	return snprintf(buf, n, "%s, pauth %s, pmu on (overflow INTID %u)", sve, f->pauth ? "on" : "off",
			f->pmu_intid);
}

void arm64_cpu_json(const struct arm64_cpu_feat *f, FILE *out)
{
	fprintf(out, ",\"cpu_features\":{\"sve\":%s,\"sve_max_vl_bits\":%u,\"pauth\":%s,\"pmu\":%s,"
		"\"pmu_intid\":%u}", f->sve ? "true" : "false", f->sve ? f->sve_vl_bits : 0,
		f->pauth ? "true" : "false", f->pmu ? "true" : "false", f->pmu_intid);
}
