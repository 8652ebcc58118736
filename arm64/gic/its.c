// SPDX-License-Identifier: MIT
/* vITS creation (Documentation/virt/kvm/devices/arm-vgic-its.rst). */
#include <errno.h>
#include <string.h>
#include <sys/ioctl.h>
#include <unistd.h>

#include "arm64/gic/gic.h"
#include "core/log.h"
#include "core/kvm.h"
#include "core/vm.h"

int its_create(struct vm *vm, struct its *its, uint64_t base)
{
	struct kvm_create_device cd = { .type = KVM_DEV_TYPE_ARM_VGIC_ITS };

	its->fd = -1;
	its->base = base;
	if (ioctl(vm->fd, KVM_CREATE_DEVICE, &cd) < 0) {
		int err = errno;

		pr_err("its: KVM_CREATE_DEVICE(VGIC_ITS) failed: %s%s", strerror(err),
		       err == ENODEV ? " (the host kernel has no vITS support, or no GICv3 was created first)" : "");
		return -err;
	}
	its->fd = cd.fd;

	struct kvm_device_attr a = {
		.group = KVM_DEV_ARM_VGIC_GRP_ADDR, .attr = KVM_VGIC_ITS_ADDR_TYPE, .addr = (uintptr_t)&base,
	};
	int r = kvm_ioctl_ret(ioctl(its->fd, KVM_SET_DEVICE_ATTR, &a), "its: setting the ITS address");

	if (r == 0) {
		a = (struct kvm_device_attr){ .group = KVM_DEV_ARM_VGIC_GRP_CTRL,
					      .attr = KVM_DEV_ARM_VGIC_CTRL_INIT };
		r = kvm_ioctl_ret(ioctl(its->fd, KVM_SET_DEVICE_ATTR, &a), "its: KVM_DEV_ARM_VGIC_CTRL_INIT");
	}
	if (r < 0) {
		its_destroy(its);
		return r;
	}
	/* From now on KVM requires the requester ID on every MSI (KVM_MSI_VALID_DEVID). */
	vm->msi_needs_devid = kvm_check_ext(vm->fd, KVM_CAP_MSI_DEVID) > 0;
	return 0;
}

void its_destroy(struct its *its)
{
	if (its->fd >= 0)
		close(its->fd);
	its->fd = -1;
}
