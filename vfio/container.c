// SPDX-License-Identifier: MIT
/*
 * The legacy backend: the VFIO type1 container (Documentation/driver-api/vfio.rst), one per VM.
 * Groups join it after a viability check; guest RAM is mapped for DMA (vfio/dma.c, through
 * VFIO_IOMMU_MAP_DMA here) inside the IOVA ranges the IOMMU reports as usable (on arm64 the SMMU's
 * MSI window at 0x0800_0000 is reserved; vmm's RAM starts at 2 GiB, clear of it). The KVM VFIO
 * device (vfio/kvm_dev.c) learns every group. A device's fd comes from its group
 * (VFIO_GROUP_GET_DEVICE_FD, with the VF token when given).
 */
#include <errno.h>
#include <fcntl.h>
#include <libgen.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <unistd.h>

#include "core/hot.h"
#include "vfio/vfio.h"
#include "vfio/vfio_internal.h"
#include "core/log.h"

/* A region of guest RAM mapped at IOVA = its guest physical address (vfio/dma.c checks and counts). */
VMM_HOT_VF static int dma_map(struct vfio_container *c, const struct mem_region *r)
{
	struct vfio_iommu_type1_dma_map m = {
		.argsz = sizeof(m), .flags = VFIO_DMA_MAP_FLAG_READ | VFIO_DMA_MAP_FLAG_WRITE,
		.vaddr = (uintptr_t)r->hva, .iova = r->gpa, .size = r->size,
	};

	return vioctl(c, c->fd, VFIO_IOMMU_MAP_DMA, &m);
}

/* The IOVA ranges from VFIO_IOMMU_GET_INFO's capability chain (Linux >= 5.4). */
static void iova_ranges(struct vfio_container *c)
{
	struct vfio_iommu_type1_info probe = { .argsz = sizeof(probe) };

	if (vioctl(c, c->fd, VFIO_IOMMU_GET_INFO, &probe) < 0 || !(probe.flags & VFIO_IOMMU_INFO_CAPS) ||
	    probe.argsz <= sizeof(probe) || probe.argsz > 65536)
		return;
	struct vfio_iommu_type1_info *info = calloc(1, probe.argsz);

	if (!info)
		return;
	info->argsz = probe.argsz;
	if (vioctl(c, c->fd, VFIO_IOMMU_GET_INFO, info) == 0) {
		uint32_t off = info->cap_offset;

		/* every offset and count comes from the kernel, still checked against the buffer */
		for (int hops = 0; off && off + sizeof(struct vfio_info_cap_header) <= info->argsz && hops < 16; hops++) {
			struct vfio_info_cap_header *h = (void *)((uint8_t *)info + off);

			if (h->id == VFIO_IOMMU_TYPE1_INFO_CAP_IOVA_RANGE &&
			    off + sizeof(struct vfio_iommu_type1_info_cap_iova_range) <= info->argsz) {
				struct vfio_iommu_type1_info_cap_iova_range *r = (void *)h;
				size_t room = (info->argsz - off - sizeof(*r)) / sizeof(r->iova_ranges[0]);

				for (uint32_t i = 0; i < r->nr_iovas && i < room && c->nr_valid < VFIO_MAX_RANGES; i++)
					c->valid[c->nr_valid++] = (struct vfio_valid_range){
						r->iova_ranges[i].start, r->iova_ranges[i].end };
			}
			off = h->next;
		}
	}
	free(info);
}

VMM_HOT_VF static int legacy_open(struct vfio_container *c)
{
	c->fd = vsys(c, open, "/dev/vfio/vfio", O_RDWR | O_CLOEXEC);
	if (c->fd < 0) {
		int e = errno;

		pr_err("vfio: cannot open /dev/vfio/vfio: %s (load vfio-pci: modprobe vfio-pci)", strerror(e));
		return -e;
	}
	if (vioctl(c, c->fd, VFIO_GET_API_VERSION, 0) != VFIO_API_VERSION ||
	    vioctl(c, c->fd, VFIO_CHECK_EXTENSION, VFIO_TYPE1v2_IOMMU) <= 0) {
		pr_err("vfio: this kernel's VFIO has no type1v2 IOMMU (is vfio_iommu_type1 loaded?)");
		vsys(c, close, c->fd);
		c->fd = -1;
		return -ENODEV;
	}
	vfio_kvm_device(c);
	return 0;
}

/* The driver bdf is bound to, into buf ("" when none). */
static const char *driver_of(const char *bdf, char *buf, size_t size)
{
	char path[PATH_MAX], link[PATH_MAX];

	snprintf(path, sizeof(path), "/sys/bus/pci/devices/%s/driver", bdf);
	ssize_t n = readlink(path, link, sizeof(link) - 1);

	buf[0] = 0;
	if (n > 0) {
		link[n] = 0;
		snprintf(buf, size, "%s", basename(link));
	}
	return buf;
}

/* What to do for a device that is not bound to vfio-pci (for a VF, vmm vf bind does it all). */
#define HOW_TO_BIND "echo vfio-pci > /sys/bus/pci/devices/%s/driver_override, unbind it from its " \
	"driver if any, echo %s > /sys/bus/pci/drivers_probe%s%s%s"

static bool is_vf(const char *bdf)
{
	char path[PATH_MAX];

	snprintf(path, sizeof(path), "/sys/bus/pci/devices/%s/physfn", bdf);
	return access(path, F_OK) == 0;
}

#define HOW_TO_BIND_ARGS(bdf) bdf, bdf, is_vf(bdf) ? " (a VF: vmm vf bind " : "", is_vf(bdf) ? bdf : "", \
	is_vf(bdf) ? ")" : ""

/* /sys/bus/pci/devices/BDF/iommu_group -> its number. */
static int iommu_group_of(struct vfio_container *c, const char *bdf)
{
	char path[PATH_MAX], link[PATH_MAX];

	snprintf(path, sizeof(path), "/sys/bus/pci/devices/%s/iommu_group", bdf);
	ssize_t n = vsys(c, readlink, path, link, sizeof(link) - 1);

	if (n < 0) {
		int e = errno;

		if (e == ENOENT && vsys(c, access, path, F_OK) != 0 && !vfio_pci_exists(c, bdf))
			pr_err("vfio: no PCI device %s on this host (vmm vf list shows the VFs)", bdf);
		else if (!driver_of(bdf, link, sizeof(link))[0]) /* DT/SMMU hosts group on first probe */
			pr_err("vfio: %s has no IOMMU group and no driver: bind it to vfio-pci (on a host "
			       "whose IOMMU groups a device when a driver first probes it, that gives it its "
			       "group): " HOW_TO_BIND, bdf, HOW_TO_BIND_ARGS(bdf));
		else
			pr_err("vfio: %s has no IOMMU group (%s): is the IOMMU enabled (SMMU, intel_iommu=on)?",
			       bdf, strerror(e));
		return -ENODEV;
	}
	link[n] = 0;
	char *end;
	long g = strtol(basename(link), &end, 10);

	return *end || g < 0 ? -EINVAL : (int)g;
}

/* Adds the IOMMU group of device bdf (checking it is viable); returns its fd. */
static int add_group(struct vfio_container *c, const char *bdf)
{
	int id = iommu_group_of(c, bdf);

	if (id < 0)
		return id;
	for (int i = 0; i < c->nr_groups; i++)
		if (c->group_id[i] == id)
			return c->group_fd[i];
	if (c->nr_groups == VFIO_MAX_GROUPS) {
		pr_err("vfio: at most %d IOMMU groups per VM", VFIO_MAX_GROUPS);
		return -ENOSPC;
	}
	char path[64];

	snprintf(path, sizeof(path), "/dev/vfio/%d", id);
	int fd = vsys(c, open, path, O_RDWR | O_CLOEXEC);

	if (fd < 0) {
		int e = errno;
		char drv[64];

		if (e == ENOENT && strcmp(driver_of(bdf, drv, sizeof(drv)), "vfio-pci"))
			pr_err("vfio: %s is %s%s, not to vfio-pci, so VFIO has no group %s for it; to pass it "
			       "through: " HOW_TO_BIND, bdf, drv[0] ? "bound to " : "bound to no driver",
			       drv, path, HOW_TO_BIND_ARGS(bdf));
		else
			pr_err("vfio: cannot open %s for %s: %s%s", path, bdf, strerror(e),
			       e == EBUSY ? " (another process, maybe another VM, holds the group)" : "");
		return -e;
	}
	struct vfio_group_status st = { .argsz = sizeof(st) };

	if (vioctl(c, fd, VFIO_GROUP_GET_STATUS, &st) < 0 || !(st.flags & VFIO_GROUP_FLAGS_VIABLE)) {
		pr_err("vfio: IOMMU group %d of %s is not viable: every device in "
		       "/sys/kernel/iommu_groups/%d/devices must be bound to vfio-pci or have no driver "
		       "(vmm vf check %s names them)", id, bdf, id, bdf);
		vsys(c, close, fd);
		return -EPERM;
	}
	if (vioctl(c, fd, VFIO_GROUP_SET_CONTAINER, &c->fd) < 0) {
		int e = errno;

		pr_err("vfio: VFIO_GROUP_SET_CONTAINER for group %d failed: %s", id, strerror(e));
		vsys(c, close, fd);
		return -e;
	}
	if (!c->iommu_set) {
		if (vioctl(c, c->fd, VFIO_SET_IOMMU, VFIO_TYPE1v2_IOMMU) < 0) {
			int e = errno;

			pr_err("vfio: VFIO_SET_IOMMU(type1v2) failed: %s", strerror(e));
			vsys(c, close, fd);
			return -e;
		}
		c->iommu_set = true;
		iova_ranges(c);
		int r = vfio_dma_listen(c); /* the guest's RAM, now and later */

		if (r < 0) {
			vsys(c, close, fd);
			return r;
		}
	}
	int e = vfio_kvm_file_add(c, fd);

	if (e < 0)
		pr_warn("vfio: KVM_DEV_VFIO_FILE_ADD for group %d: %s", id, strerror(-e));
	c->group_fd[c->nr_groups] = fd;
	c->group_id[c->nr_groups++] = id;
	return fd;
}

static int legacy_add_device(struct vfio_container *c, const char *bdf, const char *token)
{
	int group = add_group(c, bdf);

	if (group < 0)
		return group;
	char name[128];

	if (token)
		snprintf(name, sizeof(name), "%s vf_token=%s", bdf, token);
	else
		snprintf(name, sizeof(name), "%s", bdf);
	int fd = vioctl(c, group, VFIO_GROUP_GET_DEVICE_FD, name);

	if (fd < 0) {
		int e = errno;

		pr_err("vfio %s: VFIO_GROUP_GET_DEVICE_FD: %s%s", bdf, strerror(e),
		       e == EBUSY ? " (the device is in use, maybe by another VM)"
		       : !token ? " (a VF of a PF bound to vfio-pci needs its VF token: --vfio BDF,token=UUID)" : "");
		return -e;
	}
	return fd;
}

static void legacy_close(struct vfio_container *c)
{
	for (int i = 0; i < c->nr_groups; i++) {
		vioctl(c, c->group_fd[i], VFIO_GROUP_UNSET_CONTAINER, 0);
		vsys(c, close, c->group_fd[i]);
	}
	c->nr_groups = 0;
	vfio_kvm_device_close(c);
	if (c->fd >= 0)
		vsys(c, close, c->fd);
	c->fd = -1;
}

const struct vfio_backend_ops vfio_legacy_ops = {
	.name = "legacy", .open = legacy_open, .add_device = legacy_add_device, .close = legacy_close,
	.dma_map = dma_map, .dma_map_name = "VFIO_IOMMU_MAP_DMA",
};
