// SPDX-License-Identifier: MIT
/*
 * The iommufd backend (Documentation/userspace-api/iommufd.rst, driver-api/vfio.rst "device
 * cdev"): one iommufd and one IO address space (IOAS) per VM. Each device is opened through its
 * cdev (/dev/vfio/devices/vfioN), told to KVM, bound to the iommufd and attached to the IOAS; guest
 * RAM is mapped at IOVA = guest physical address, inside the IOVA ranges the IOAS allows. Those are
 * read after each attach: a fresh IOAS allows everything, each device narrows it (the arm64 SMMU's
 * MSI window), so querying before the first attach would never see the reserved ranges.
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <linux/iommufd.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "core/hot.h"
#include "vfio/vfio.h"
#include "vfio/vfio_internal.h"
#include "core/log.h"

/* A region of guest RAM mapped at IOVA = its guest physical address (vfio/dma.c checks and counts). */
VMM_HOT_VF static int ioas_map(struct vfio_container *c, const struct mem_region *r)
{
	struct iommu_ioas_map m = {
		.size = sizeof(m),
		.flags = IOMMU_IOAS_MAP_FIXED_IOVA | IOMMU_IOAS_MAP_READABLE | IOMMU_IOAS_MAP_WRITEABLE,
		.ioas_id = c->ioas_id, .user_va = (uintptr_t)r->hva, .length = r->size, .iova = r->gpa,
	};

	return vioctl(c, c->fd, IOMMU_IOAS_MAP, &m);
}

/* The IOVA ranges the IOAS allows now, into c->valid. */
static int iova_ranges(struct vfio_container *c)
{
	struct iommu_iova_range r[VFIO_MAX_RANGES];
	struct iommu_ioas_iova_ranges q = {
		.size = sizeof(q), .ioas_id = c->ioas_id, .num_iovas = VFIO_MAX_RANGES,
		.allowed_iovas = (uintptr_t)r,
	};

	if (vioctl(c, c->fd, IOMMU_IOAS_IOVA_RANGES, &q) < 0) {
		int e = errno;

		if (e == EMSGSIZE)
			pr_err("vfio: the IOMMU allows %u separate IOVA ranges, vmm keeps at most %d",
			       q.num_iovas, VFIO_MAX_RANGES);
		else
			pr_err("vfio: IOMMU_IOAS_IOVA_RANGES failed: %s", strerror(e));
		return -e;
	}
	c->nr_valid = 0;
	for (uint32_t i = 0; i < q.num_iovas && i < VFIO_MAX_RANGES; i++)
		c->valid[c->nr_valid++] = (struct vfio_valid_range){ r[i].start, r[i].last };
	return 0;
}

VMM_HOT_VF static int iommufd_open(struct vfio_container *c)
{
	c->fd = vsys(c, open, "/dev/iommu", O_RDWR | O_CLOEXEC);
	if (c->fd < 0) {
		int e = errno;

		pr_err("vfio: cannot open /dev/iommu: %s%s", strerror(e),
		       e == ENOENT ? " (this kernel has no iommufd, CONFIG_IOMMUFD: use --vfio-backend legacy)" : "");
		return -e;
	}
	struct iommu_ioas_alloc a = { .size = sizeof(a) };

	if (vioctl(c, c->fd, IOMMU_IOAS_ALLOC, &a) < 0) {
		int e = errno;

		pr_err("vfio: IOMMU_IOAS_ALLOC failed: %s", strerror(e));
		vsys(c, close, c->fd);
		c->fd = -1;
		return -e;
	}
	c->ioas_id = a.out_ioas_id;
	vfio_kvm_device(c);
	return 0;
}

/* /sys/bus/pci/devices/BDF/vfio-dev/vfioN -> /dev/vfio/devices/vfioN */
static int cdev_path(struct vfio_container *c, const char *bdf, char *path, size_t size)
{
	char dir[PATH_MAX], name[64];

	snprintf(dir, sizeof(dir), "/sys/bus/pci/devices/%s/vfio-dev", bdf);
	if (vsys(c, dir_entry, dir, "vfio", name, sizeof(name)) < 0) {
		if (!vfio_pci_exists(c, bdf))
			pr_err("vfio: no PCI device %s on this host (vmm vf list shows the VFs)", bdf);
		else
			pr_err("vfio %s: no VFIO device cdev in %s: bind it to vfio-pci first (vmm vf bind "
			       "BDF); if it is bound, this kernel lacks CONFIG_VFIO_DEVICE_CDEV: use "
			       "--vfio-backend legacy", bdf, dir);
		return -ENODEV;
	}
	snprintf(path, size, "/dev/vfio/devices/%s", name);
	return 0;
}

VMM_HOT_VF static int iommufd_add_device(struct vfio_container *c, const char *bdf, const char *token)
{
	char path[PATH_MAX];
	int r;

	if (token) {
		/* the token field of VFIO_DEVICE_BIND_IOMMUFD came after 6.12, the UAPI vmm builds on */
		pr_err("vfio %s: the iommufd backend cannot pass a VF token (6.12's VFIO_DEVICE_BIND_IOMMUFD "
		       "has none): use --vfio-backend legacy", bdf);
		return -EOPNOTSUPP;
	}
	if ((r = cdev_path(c, bdf, path, sizeof(path))) < 0)
		return r;
	int fd = vsys(c, open, path, O_RDWR | O_CLOEXEC);

	if (fd < 0) {
		int e = errno;

		pr_err("vfio %s: cannot open %s: %s%s", bdf, path, strerror(e),
		       e == ENOENT ? " (sysfs has it but /dev does not: is devtmpfs mounted?)" : "");
		return -e;
	}
	/* before the bind: a driver that needs KVM takes it when the device opens there
	 * (Documentation/virt/kvm/devices/vfio.rst) */
	if ((r = vfio_kvm_file_add(c, fd)) < 0)
		pr_warn("vfio %s: KVM_DEV_VFIO_FILE_ADD: %s", bdf, strerror(-r));
	struct vfio_device_bind_iommufd bind = { .argsz = sizeof(bind), .iommufd = c->fd };

	if (vioctl(c, fd, VFIO_DEVICE_BIND_IOMMUFD, &bind) < 0) {
		int e = errno;

		pr_err("vfio %s: VFIO_DEVICE_BIND_IOMMUFD: %s%s", bdf, strerror(e),
		       e == EBUSY ? " (the device is in use: another VM, or its group is open)" : "");
		vsys(c, close, fd);
		return -e;
	}
	struct vfio_device_attach_iommufd_pt at = { .argsz = sizeof(at), .pt_id = c->ioas_id };

	if (vioctl(c, fd, VFIO_DEVICE_ATTACH_IOMMUFD_PT, &at) < 0) {
		int e = errno;

		pr_err("vfio %s: VFIO_DEVICE_ATTACH_IOMMUFD_PT to IOAS %u: %s%s", bdf, c->ioas_id, strerror(e),
		       e == EADDRINUSE ? " (guest RAM already mapped overlaps an IOVA range this device's "
		       "IOMMU reserves)" : "");
		vsys(c, close, fd);
		return -e;
	}
	/* after every attach, as the UAPI asks: the device may have narrowed the ranges */
	if ((r = iova_ranges(c)) < 0) {
		vsys(c, close, fd);
		return r;
	}
	if (!c->iommu_set) {
		c->iommu_set = true;
		if ((r = vfio_dma_listen(c)) < 0) { /* the guest's RAM, now and later */
			vsys(c, close, fd);
			return r;
		}
	}
	return fd;
}

/* The device fds are closed by now, which unbinds them; KVM's references go with its device, and
 * the IOAS with its mappings goes with the iommufd. */
VMM_HOT_VF static void iommufd_close(struct vfio_container *c)
{
	vfio_kvm_device_close(c);
	if (c->fd >= 0)
		vsys(c, close, c->fd);
	c->fd = -1;
}

const struct vfio_backend_ops vfio_iommufd_ops = {
	.name = "iommufd", .open = iommufd_open, .add_device = iommufd_add_device, .close = iommufd_close,
	.dma_map = ioas_map, .dma_map_name = "IOMMU_IOAS_MAP",
};
