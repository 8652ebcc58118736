// SPDX-License-Identifier: MIT
/*
 * The KVM VFIO device (Documentation/virt/kvm/devices/vfio.rst), the same for either backend: one
 * per VM, told every group (legacy) or device cdev (iommufd) the VM uses, as KVM wants for
 * assigned devices (coherent DMA, a driver that needs KVM). A VM goes on without it.
 */
#include <errno.h>
#include <string.h>

#include "core/hot.h"
#include "vfio/vfio.h"
#include "vfio/vfio_internal.h"
#include "core/kvm.h"
#include "core/log.h"
#include "core/vm.h"

VMM_HOT_VF void vfio_kvm_device(struct vfio_container *c)
{
	struct kvm_create_device cd = { .type = KVM_DEV_TYPE_VFIO };

	if (vioctl(c, c->vm->fd, KVM_CREATE_DEVICE, &cd) == 0)
		c->kvm_dev = cd.fd;
	else
		pr_warn("vfio: KVM_CREATE_DEVICE(KVM_DEV_TYPE_VFIO) failed: %s; going on without it",
			strerror(errno));
}

VMM_HOT_VF int vfio_kvm_file_add(struct vfio_container *c, int fd)
{
	struct kvm_device_attr a = { .group = KVM_DEV_VFIO_FILE, .attr = KVM_DEV_VFIO_FILE_ADD,
				     .addr = (uintptr_t)&fd };

	if (c->kvm_dev < 0)
		return 0;
	return vioctl(c, c->kvm_dev, KVM_SET_DEVICE_ATTR, &a) < 0 ? -errno : 0;
}

VMM_HOT_VF void vfio_kvm_device_close(struct vfio_container *c)
{
	if (c->kvm_dev >= 0)
		vsys(c, close, c->kvm_dev);
	c->kvm_dev = -1;
}
