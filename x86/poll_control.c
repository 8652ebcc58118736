// SPDX-License-Identifier: MIT
/*
 * The per-vCPU host halt-polling switch: bit 0 of MSR_KVM_POLL_CONTROL (1 after reset: KVM may
 * poll before it puts the halted vCPU to sleep; 0: it never polls for this vCPU). The guest owns
 * the MSR too (Linux's cpuidle-haltpoll writes 0 when it polls itself), so vmm reads back what it
 * wrote. KVM honours the MSR only for a guest whose CPUID has POLL_CONTROL. Through the KVM seam,
 * so the unit tests run it on a fake.
 */
#include <asm/kvm_para.h>
#include <errno.h>

#include "core/kvm_seam.h"
#include "x86/x86.h"

const char *x86_poll_control_refusal(uint32_t guest_features)
{
	if (guest_features & (1u << KVM_FEATURE_POLL_CONTROL))
		return NULL;
	return "the guest's CPUID has no POLL_CONTROL (--pv poll-control=off, or this KVM does not offer "
	       "it), so KVM ignores MSR_KVM_POLL_CONTROL; boot with --pv poll-control=on";
}

int x86_poll_control_rw(const struct kvm_seam *k, int vcpu_fd, int set)
{
	uint64_t v = (uint64_t)set;
	int r;

	if (set != -1 && set != 0 && set != 1)
		return -EINVAL;
	if (!k->ops->vcpu_msr)
		return -EOPNOTSUPP;
	if (set >= 0 && (r = k->ops->vcpu_msr(k->ctx, vcpu_fd, MSR_KVM_POLL_CONTROL, &v, true)) < 0)
		return r;
	if ((r = k->ops->vcpu_msr(k->ctx, vcpu_fd, MSR_KVM_POLL_CONTROL, &v, false)) < 0)
		return r;
	return (int)(v & 1);
}
