// SPDX-License-Identifier: MIT
/*
 * One counter for guest and host (issue 37): the guest's CNTVCT is the host's CNTPCT less the VM's
 * counter offset. vmm sets the offset to 0 where KVM lets it (KVM_ARM_SET_COUNTER_OFFSET, 6.4+),
 * before any vCPU exists, so a guest timestamp on the counter is a host one as it stands. Where it
 * cannot, the offset is estimated from the boot vCPU's KVM_REG_ARM_TIMER_CNT read between two host
 * reads of the counter, and the bound is half the bracket.
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <sys/ioctl.h>

#include "arm64/arm64.h"
#include "core/kvm.h"
#include "core/vcpu.h"
#include "core/vm.h"

uint64_t arm64_counter_read(void)
{
	uint64_t v;

	/* the isb keeps the read from being taken early (the Arm ARM's counter-read sequence) */
	__asm__ volatile("isb; mrs %0, cntvct_el0" : "=r"(v)::"memory");
	return v;
}

uint64_t arm64_counter_hz(void)
{
	uint64_t v;

	__asm__ volatile("mrs %0, cntfrq_el0" : "=r"(v));
	return v;
}

void arm64_counter_offset_zero(struct vm *vm, struct arch_clock *c)
{
	struct kvm_arm_counter_offset off = { .counter_offset = 0 };

	memset(c, 0, sizeof(*c));
	c->hz = arm64_counter_hz();
	if (kvm_check_ext(vm->fd, KVM_CAP_COUNTER_OFFSET) <= 0) {
		snprintf(c->how, sizeof(c->how), "KVM has no KVM_CAP_COUNTER_OFFSET (Linux < 6.4)");
		return;
	}
	if (ioctl(vm->fd, KVM_ARM_SET_COUNTER_OFFSET, &off) < 0) {
		snprintf(c->how, sizeof(c->how), "KVM_ARM_SET_COUNTER_OFFSET: %s", strerror(errno));
		return;
	}
	c->known = true;
	snprintf(c->how, sizeof(c->how), "KVM_ARM_SET_COUNTER_OFFSET 0: the guest's counter is the host's");
}

void arm64_counter_offset_estimate(struct vcpu *v, struct arch_clock *c)
{
	uint64_t best = UINT64_MAX, guest = 0;
	struct kvm_one_reg reg = { .id = KVM_REG_ARM_TIMER_CNT, .addr = (uintptr_t)&guest };
	char why[sizeof(c->how)];

	snprintf(why, sizeof(why), "%s", c->how);
	/* the narrowest of a few brackets */
	for (int i = 0; i < 8; i++) {
		uint64_t a = arm64_counter_read();

		if (ioctl(v->fd, KVM_GET_ONE_REG, &reg) < 0)
			return; /* c stays unknown, its how says why the offset was not set */
		uint64_t b = arm64_counter_read();

		if (b - a < best) {
			best = b - a;
			c->offset = (int64_t)(a + (b - a) / 2 - guest);
		}
	}
	c->known = true;
	c->err_ns = c->hz ? (best / 2) * 1000000000ull / c->hz + 1 : 0;
	snprintf(c->how, sizeof(c->how), "estimated from KVM_REG_ARM_TIMER_CNT (%.40s)", why);
}
