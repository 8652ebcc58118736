// SPDX-License-Identifier: MIT
/* arm64 vCPU set-up: the preferred target with PSCI 0.2, and core register access through ONE_REG. */
#include <errno.h>
#include <string.h>
#include <sys/ioctl.h>

#include "arm64/arm64.h"

int arm64_vcpu_init(struct vcpu *vcpu, bool powered_off)
{
	struct kvm_vcpu_init init;

	memset(&init, 0, sizeof(init));
	int r = kvm_ioctl_ret(ioctl(vcpu->vm->fd, KVM_ARM_PREFERRED_TARGET, &init),
			      "KVM_ARM_PREFERRED_TARGET");

	if (r < 0)
		return r;
	init.features[0] |= 1u << KVM_ARM_VCPU_PSCI_0_2;
	if (powered_off)
		init.features[0] |= 1u << KVM_ARM_VCPU_POWER_OFF;
	return kvm_ioctl_ret(ioctl(vcpu->fd, KVM_ARM_VCPU_INIT, &init), "KVM_ARM_VCPU_INIT");
}

static uint64_t core_reg_id(uint64_t off)
{
	return KVM_REG_ARM64 | KVM_REG_SIZE_U64 | KVM_REG_ARM_CORE | off;
}

int arm64_core_reg_set(struct vcpu *vcpu, uint64_t off, uint64_t val)
{
	struct kvm_one_reg reg = { .id = core_reg_id(off), .addr = (uintptr_t)&val };

	return kvm_ioctl_ret(ioctl(vcpu->fd, KVM_SET_ONE_REG, &reg), "KVM_SET_ONE_REG (core register)");
}

int arm64_core_reg_get(struct vcpu *vcpu, uint64_t off, uint64_t *val)
{
	struct kvm_one_reg reg = { .id = core_reg_id(off), .addr = (uintptr_t)val };

	return kvm_ioctl_ret(ioctl(vcpu->fd, KVM_GET_ONE_REG, &reg), "KVM_GET_ONE_REG (core register)");
}

unsigned long arm64_vm_type(int kvm_fd, int *ipa_bits)
{
	int max = kvm_check_ext(kvm_fd, KVM_CAP_ARM_VM_IPA_SIZE);

	/* 0: the kernel predates configurable IPA sizes and gives every VM 40 bits. */
	*ipa_bits = max > 0 ? max : 40;
	return max > 0 ? KVM_VM_TYPE_ARM_IPA_SIZE(max) : 0;
}
