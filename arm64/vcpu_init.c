// SPDX-License-Identifier: MIT
/* arm64 vCPU registers: core register access through ONE_REG; the IPA size (the VM type).
 * KVM_ARM_VCPU_INIT and the vCPU features are cpu_feat.c's. */
#include <errno.h>
#include <string.h>
#include <sys/ioctl.h>

#include "arm64/arm64.h"
#include "core/hot.h"
#include "core/log.h"
#include "core/kvm.h"
#include "core/vcpu.h"
#include "core/vm.h"

static uint64_t core_reg_id(uint64_t off)
{
	return KVM_REG_ARM64 | KVM_REG_SIZE_U64 | KVM_REG_ARM_CORE | off;
}

VMM_HOT_VF int arm64_core_reg_set(struct vcpu *vcpu, uint64_t off, uint64_t val)
{
	struct kvm_one_reg reg = { .id = core_reg_id(off), .addr = (uintptr_t)&val };

	return kvm_ioctl_ret(ioctl(vcpu->fd, KVM_SET_ONE_REG, &reg), "KVM_SET_ONE_REG (core register)");
}

VMM_HOT_VF int arm64_core_reg_get(struct vcpu *vcpu, uint64_t off, uint64_t *val)
{
	struct kvm_one_reg reg = { .id = core_reg_id(off), .addr = (uintptr_t)val };

	return kvm_ioctl_ret(ioctl(vcpu->fd, KVM_GET_ONE_REG, &reg), "KVM_GET_ONE_REG (core register)");
}

/* KVM's floor for a VM's IPA size (ARM64_MIN_PARANGE_BITS) and what type 0 gives (KVM_PHYS_SHIFT):
 * kernel-internal values, not UAPI. */
#define IPA_MIN_BITS 32
#define IPA_DEFAULT_BITS 40

VMM_HOT_VF int arm64_ipa_bits_needed(uint64_t mem_size)
{
	const uint64_t pci_end = ARM64_PCI_MMIO64_BASE + ARM64_PCI_MMIO64_SIZE;
	/* a size that wraps stands for 2^64: no host can hold it, and the caller says so */
	uint64_t ram_end = mem_size > UINT64_MAX - ARM64_RAM_BASE ? UINT64_MAX : ARM64_RAM_BASE + mem_size;
	uint64_t end = ram_end > pci_end ? ram_end : pci_end;
	int bits = 64 - __builtin_clzll(end - 1);

	return bits < IPA_MIN_BITS ? IPA_MIN_BITS : bits;
}

VMM_HOT_VF long arm64_ipa_vm_type(uint64_t mem_size, int host_max, int *ipa_bits)
{
	int need = arm64_ipa_bits_needed(mem_size);
	int max = host_max > 0 ? host_max : IPA_DEFAULT_BITS;

	if (need > max) {
		if (arm64_ipa_bits_needed(0) > max)
			pr_err("KVM on this host offers %d-bit guest physical addresses; the board's PCI 64-bit "
			       "window ends at 0x%llx and needs %d bits: this host cannot run it", max,
			       (unsigned long long)(ARM64_PCI_MMIO64_BASE + ARM64_PCI_MMIO64_SIZE),
			       arm64_ipa_bits_needed(0));
		else
			pr_err("-m %lluM: RAM from 0x%llx needs %d-bit guest physical addresses but KVM on this "
			       "host offers at most %d: use a smaller -m", (unsigned long long)(mem_size >> 20),
			       (unsigned long long)ARM64_RAM_BASE, need, max);
		return -ERANGE;
	}
	/* Without KVM_CAP_ARM_VM_IPA_SIZE only type 0 (40 bits) exists; otherwise ask for no more than
	 * needed: a smaller IPA space can drop a level from every stage-2 walk. */
	*ipa_bits = host_max > 0 ? need : IPA_DEFAULT_BITS;
	return host_max > 0 ? (long)KVM_VM_TYPE_ARM_IPA_SIZE(need) : 0;
}

VMM_HOT_VF int arm64_vm_type(int kvm_fd, uint64_t mem_size, unsigned long *type, int *ipa_bits)
{
	long t = arm64_ipa_vm_type(mem_size, kvm_check_ext(kvm_fd, KVM_CAP_ARM_VM_IPA_SIZE), ipa_bits);

	if (t < 0)
		return t;
	*type = t;
	return 0;
}
