// SPDX-License-Identifier: MIT
#include <errno.h>
#include <linux/iommufd.h>
#include <linux/kvm.h>
#include <linux/vfio.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "tests/unit/fake_vfio.h"
#include "vfio/vfio_internal.h"

#define SYS_PCI "/sys/bus/pci/devices/"

void fake_vfio_init(struct fake_vfio *fv)
{
	memset(fv, 0, sizeof(*fv));
	fv->dev_iommu = fv->dev_vfio_devices = fv->dev_vfio_vfio = true;
	fv->pci_exists = true;
	fv->group = 12;
	fv->viable = true;
	fv->cdev = "vfio3";
	fv->ranges[0] = (struct vfio_valid_range){ 0, 0x7ffffff };
	fv->ranges[1] = (struct vfio_valid_range){ 0x8100000, UINT64_MAX };
	fv->nr_ranges = 2;
	fv->ioas_id = 7;
	fv->next_fd = FAKE_VFIO_FD0;
}

static struct fake_vfio_call *record(struct fake_vfio *fv, struct fake_vfio_call c)
{
	/* past the log's end, the spare slot takes each call: the test sees nr stop */
	fv->call[fv->nr] = c;
	return fv->nr < FAKE_VFIO_MAX_CALLS ? &fv->call[fv->nr++] : &fv->call[fv->nr];
}

static int fail(int e)
{
	errno = e;
	return -1;
}

/* /sys/bus/pci/devices/BDF and BDF's entries: rest is what follows BDF ("" for the device). */
static bool pci_path(const char *path, const char **rest)
{
	if (strncmp(path, SYS_PCI, strlen(SYS_PCI)))
		return false;
	const char *p = strchr(path + strlen(SYS_PCI), '/');

	*rest = p ? p : "";
	return true;
}

static bool exists(struct fake_vfio *fv, const char *path)
{
	const char *rest;
	char buf[64];

	if (!strcmp(path, "/dev/iommu"))
		return fv->dev_iommu;
	if (!strcmp(path, "/dev/vfio/devices"))
		return fv->dev_vfio_devices;
	if (!strcmp(path, "/dev/vfio/vfio"))
		return fv->dev_vfio_vfio;
	if (fv->cdev && fv->dev_vfio_devices && !strncmp(path, "/dev/vfio/devices/", 18))
		return !strcmp(path + 18, fv->cdev);
	snprintf(buf, sizeof(buf), "/dev/vfio/%d", fv->group);
	if (fv->group >= 0 && !strcmp(path, buf))
		return true;
	if (pci_path(path, &rest))
		return fv->pci_exists && (!*rest || (!strcmp(rest, "/iommu_group") && fv->group >= 0) ||
					  (!strcmp(rest, "/vfio-dev") && fv->cdev));
	return false;
}

static int fv_open(void *ctx, const char *path, int flags)
{
	struct fake_vfio *fv = ctx;
	struct fake_vfio_call c = { .kind = FV_OPEN, .fd = -1 };

	(void)flags;
	snprintf(c.path, sizeof(c.path), "%s", path);
	if (!exists(fv, path) || strncmp(path, "/dev/", 5)) {
		record(fv, c);
		return fail(ENOENT);
	}
	c.fd = fv->next_fd++;
	fv->open_fds++;
	record(fv, c);
	return c.fd;
}

static int fv_close(void *ctx, int fd)
{
	struct fake_vfio *fv = ctx;

	record(fv, (struct fake_vfio_call){ .kind = FV_CLOSE, .fd = fd });
	if (fd < FAKE_VFIO_FD0 || fd >= fv->next_fd)
		return fail(EBADF);
	fv->open_fds--;
	return 0;
}

static ssize_t fv_readlink(void *ctx, const char *path, char *buf, size_t size)
{
	struct fake_vfio *fv = ctx;
	const char *rest;

	if (!pci_path(path, &rest) || strcmp(rest, "/iommu_group") || !exists(fv, path))
		return fail(ENOENT);
	int n = snprintf(buf, size, "../../../kernel/iommu_groups/%d", fv->group);

	return n < (int)size ? n : (ssize_t)size;
}

static int fv_access(void *ctx, const char *path, int mode)
{
	(void)mode;
	return exists(ctx, path) ? 0 : fail(ENOENT);
}

static int fv_dir_entry(void *ctx, const char *dir, const char *prefix, char *name, size_t size)
{
	struct fake_vfio *fv = ctx;
	const char *rest;

	if (!pci_path(dir, &rest) || strcmp(rest, "/vfio-dev") || !exists(fv, dir) ||
	    strncmp(fv->cdev, prefix, strlen(prefix)))
		return -ENOENT;
	snprintf(name, size, "%s", fv->cdev);
	return 0;
}

/* The legacy container's VFIO_IOMMU_GET_INFO: a probe learns the size, then the IOVA ranges. */
static int iommu_info(struct fake_vfio *fv, struct vfio_iommu_type1_info *i)
{
	struct vfio_iommu_type1_info_cap_iova_range *cap = (void *)(i + 1);
	uint32_t need = sizeof(*i) + sizeof(*cap) + fv->nr_ranges * sizeof(cap->iova_ranges[0]);

	i->flags = VFIO_IOMMU_INFO_PGSIZES | (fv->nr_ranges ? VFIO_IOMMU_INFO_CAPS : 0);
	i->iova_pgsizes = 4096;
	if (!fv->nr_ranges || i->argsz < need) {
		i->argsz = fv->nr_ranges ? need : sizeof(*i);
		i->cap_offset = 0;
		return 0;
	}
	i->cap_offset = sizeof(*i);
	cap->header = (struct vfio_info_cap_header){ .id = VFIO_IOMMU_TYPE1_INFO_CAP_IOVA_RANGE, .version = 1 };
	cap->nr_iovas = fv->nr_ranges;
	for (int r = 0; r < fv->nr_ranges; r++)
		cap->iova_ranges[r] = (struct vfio_iova_range){ fv->ranges[r].start, fv->ranges[r].end };
	return 0;
}

/* VFIO_DEVICE_GET_REGION_INFO: a probe with too small an argsz learns the size the capabilities
 * need (and CAPS), as the kernel answers it. */
static int region_info(struct fake_vfio *fv, struct vfio_region_info *ri)
{
	if (ri->index >= VFIO_PCI_NUM_REGIONS)
		return fail(EINVAL);
	const struct fake_vfio_region *r = &fv->region[ri->index];
	uint32_t nr = r->nr_areas < FAKE_VFIO_MAX_AREAS ? r->nr_areas : FAKE_VFIO_MAX_AREAS;
	uint32_t sparse = r->sparse ? sizeof(struct vfio_region_info_cap_sparse_mmap) +
					      nr * sizeof(struct vfio_region_sparse_mmap_area) : 0;
	uint32_t mappable = r->msix_mappable ? sizeof(struct vfio_info_cap_header) : 0;
	uint32_t need = sizeof(*ri) + sparse + mappable, argsz = ri->argsz;

	ri->size = r->size;
	ri->offset = r->offset;
	ri->flags = r->flags | (sparse || mappable ? VFIO_REGION_INFO_FLAG_CAPS : 0);
	ri->cap_offset = 0;
	if (!(sparse || mappable))
		return 0;
	ri->argsz = need;
	if (argsz < need)
		return 0;
	uint8_t *base = (uint8_t *)ri;
	uint32_t at = sizeof(*ri);

	ri->cap_offset = at;
	if (sparse) {
		struct vfio_region_info_cap_sparse_mmap *c = (void *)(base + at);

		c->header = (struct vfio_info_cap_header){ .id = VFIO_REGION_INFO_CAP_SPARSE_MMAP, .version = 1,
							   .next = mappable ? at + sparse : 0 };
		c->nr_areas = nr;
		c->reserved = 0;
		memcpy(c->areas, r->area, nr * sizeof(r->area[0]));
		at += sparse;
	}
	if (mappable)
		*(struct vfio_info_cap_header *)(base + at) =
			(struct vfio_info_cap_header){ .id = VFIO_REGION_INFO_CAP_MSIX_MAPPABLE, .version = 1 };
	return 0;
}

static int fv_ioctl(void *ctx, int fd, unsigned long req, unsigned long arg)
{
	struct fake_vfio *fv = ctx;
	struct fake_vfio_call *c = record(fv, (struct fake_vfio_call){ .kind = FV_IOCTL, .fd = fd, .req = req });
	void *p = (void *)arg;

	switch (req) {
	case VFIO_GET_API_VERSION:
		return VFIO_API_VERSION;
	case VFIO_CHECK_EXTENSION:
		c->arg = arg;
		return arg == VFIO_TYPE1v2_IOMMU;
	case VFIO_SET_IOMMU:
		c->arg = arg;
		return 0;
	case VFIO_GROUP_GET_STATUS: {
		struct vfio_group_status *st = p;

		st->flags = fv->viable ? VFIO_GROUP_FLAGS_VIABLE : 0;
		return 0;
	}
	case VFIO_GROUP_SET_CONTAINER:
		c->arg_fd = *(int *)p;
		return 0;
	case VFIO_GROUP_UNSET_CONTAINER:
		return 0;
	case VFIO_IOMMU_GET_INFO:
		return iommu_info(fv, p);
	case VFIO_IOMMU_MAP_DMA: {
		struct vfio_iommu_type1_dma_map *m = p;

		c->flags = m->flags;
		c->iova = m->iova;
		c->size = m->size;
		c->va = m->vaddr;
		return 0;
	}
	case VFIO_GROUP_GET_DEVICE_FD:
		snprintf(c->path, sizeof(c->path), "%s", (const char *)p);
		if (fv->get_fd_errno)
			return fail(fv->get_fd_errno);
		fv->open_fds++;
		return fv->next_fd++;
	case KVM_CREATE_DEVICE: {
		struct kvm_create_device *cd = p;

		if (cd->type != KVM_DEV_TYPE_VFIO)
			return fail(ENODEV);
		fv->open_fds++;
		cd->fd = fv->next_fd++;
		c->arg_fd = cd->fd;
		return 0;
	}
	case KVM_SET_DEVICE_ATTR: {
		struct kvm_device_attr *a = p;

		if (a->group != KVM_DEV_VFIO_FILE || a->attr != KVM_DEV_VFIO_FILE_ADD)
			return fail(ENXIO);
		c->arg_fd = *(int *)(uintptr_t)a->addr;
		return 0;
	}
	case IOMMU_IOAS_ALLOC:
		((struct iommu_ioas_alloc *)p)->out_ioas_id = fv->ioas_id;
		return 0;
	case IOMMU_IOAS_IOVA_RANGES: {
		struct iommu_ioas_iova_ranges *q = p;
		struct iommu_iova_range *out = (void *)(uintptr_t)q->allowed_iovas;
		uint32_t room = q->num_iovas;

		c->id = q->ioas_id;
		q->num_iovas = fv->nr_ranges;
		q->out_iova_alignment = 4096;
		if (room < (uint32_t)fv->nr_ranges)
			return fail(EMSGSIZE);
		for (int r = 0; r < fv->nr_ranges; r++)
			out[r] = (struct iommu_iova_range){ fv->ranges[r].start, fv->ranges[r].end };
		return 0;
	}
	case IOMMU_IOAS_MAP: {
		struct iommu_ioas_map *m = p;

		c->id = m->ioas_id;
		c->flags = m->flags;
		c->iova = m->iova;
		c->size = m->length;
		c->va = m->user_va;
		return 0;
	}
	case VFIO_DEVICE_BIND_IOMMUFD: {
		struct vfio_device_bind_iommufd *b = p;

		c->arg_fd = b->iommufd;
		c->flags = b->flags;
		if (fv->bind_errno)
			return fail(fv->bind_errno);
		b->out_devid = 1;
		return 0;
	}
	case VFIO_DEVICE_GET_REGION_INFO:
		c->id = ((struct vfio_region_info *)p)->index;
		return region_info(fv, p);
	case VFIO_DEVICE_ATTACH_IOMMUFD_PT:
		c->id = ((struct vfio_device_attach_iommufd_pt *)p)->pt_id;
		return fv->attach_errno ? fail(fv->attach_errno) : 0;
	}
	return fail(ENOTTY);
}

struct vfio_sys fake_vfio_sys(struct fake_vfio *fv)
{
	return (struct vfio_sys){ fv_open, fv_close, fv_ioctl, fv_readlink, fv_access, fv_dir_entry, fv };
}

int fake_vfio_find(const struct fake_vfio *fv, unsigned long req, int from)
{
	for (int i = from < 0 ? 0 : from; i < fv->nr; i++)
		if (fv->call[i].kind == FV_IOCTL && fv->call[i].req == req)
			return i;
	return -1;
}

int fake_vfio_count(const struct fake_vfio *fv, unsigned long req)
{
	int n = 0;

	for (int i = 0; i < fv->nr; i++)
		n += fv->call[i].kind == FV_IOCTL && fv->call[i].req == req;
	return n;
}

int fake_vfio_find_open(const struct fake_vfio *fv, const char *path, int from)
{
	for (int i = from < 0 ? 0 : from; i < fv->nr; i++)
		if (fv->call[i].kind == FV_OPEN && !strcmp(fv->call[i].path, path))
			return i;
	return -1;
}

void fake_vfio_cfg_put(uint8_t *cfg, uint32_t off, uint32_t v, int len)
{
	memcpy(cfg + off, &v, len);
}

int fake_vfio_device(struct vfio_pci *v, struct vfio_container *c, const uint8_t *cfg, const char *bdf,
		     size_t size)
{
	v->c = c;
	v->intx_fd = v->intx_resample = -1;
	for (int i = 0; i < VFIO_MAX_MSI; i++)
		v->msi_vec[i].fd = -1;
	snprintf(v->bdf, sizeof(v->bdf), "%s", bdf);
	v->fd = memfd_create("vfio-device", 0);
	if (v->fd < 0 || ftruncate(v->fd, size) || pwrite(v->fd, cfg, 4096, 0) != 4096)
		return -1;
	v->cfg_region = (struct vfio_region_info){ .size = 4096, .offset = 0 };
	memcpy(v->host_cfg, cfg, 4096);
	v->host_cfg_size = 4096;
	return 0;
}
