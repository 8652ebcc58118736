// SPDX-License-Identifier: MIT
/*
 * The backend seam: which backend a VM uses (iommufd when the host has it, else the legacy
 * container; --vfio-backend overrides), and the real system calls behind struct vfio_sys.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <string.h>
#include <sys/ioctl.h>
#include <unistd.h>

#include "core/hot.h"
#include "vfio/backend.h"
#include "vfio/vfio.h"
#include "vfio/vfio_internal.h"
#include "core/log.h"

static const char *const names[] = {
	[VFIO_BACKEND_AUTO] = "auto", [VFIO_BACKEND_LEGACY] = "legacy", [VFIO_BACKEND_IOMMUFD] = "iommufd",
};

const char *vfio_backend_name(enum vfio_backend_kind k)
{
	return (unsigned int)k < sizeof(names) / sizeof(names[0]) ? names[k] : "?";
}

int vfio_backend_parse(const char *s, enum vfio_backend_kind *k)
{
	for (unsigned int i = 0; i < sizeof(names) / sizeof(names[0]); i++)
		if (!strcmp(s, names[i])) {
			*k = i;
			return 0;
		}
	return -EINVAL;
}

static int real_open(void *ctx, const char *path, int flags)
{
	(void)ctx;
	return open(path, flags);
}

static int real_close(void *ctx, int fd)
{
	(void)ctx;
	return close(fd);
}

static int real_ioctl(void *ctx, int fd, unsigned long req, unsigned long arg)
{
	(void)ctx;
	return ioctl(fd, req, arg);
}

static ssize_t real_readlink(void *ctx, const char *path, char *buf, size_t size)
{
	(void)ctx;
	return readlink(path, buf, size);
}

static int real_access(void *ctx, const char *path, int mode)
{
	(void)ctx;
	return access(path, mode);
}

VMM_HOT_VF static int real_dir_entry(void *ctx, const char *dir, const char *prefix, char *name, size_t size)
{
	DIR *d = opendir(dir);
	struct dirent *e;
	int r = -ENOENT;

	(void)ctx;
	if (!d)
		return -errno;
	while ((e = readdir(d)))
		if (!strncmp(e->d_name, prefix, strlen(prefix))) {
			snprintf(name, size, "%s", e->d_name);
			r = 0;
			break;
		}
	closedir(d);
	return r;
}

const struct vfio_sys vfio_sys_real = {
	real_open, real_close, real_ioctl, real_readlink, real_access, real_dir_entry, NULL,
};

VMM_HOT_VF bool vfio_pci_exists(struct vfio_container *c, const char *bdf)
{
	char path[PATH_MAX];

	snprintf(path, sizeof(path), "/sys/bus/pci/devices/%s", bdf);
	return vsys(c, access, path, F_OK) == 0;
}

enum vfio_backend_kind vfio_backend_choose(const struct vfio_sys *sys, enum vfio_backend_kind want,
					   bool need_token, char *why, size_t size)
{
	if (want != VFIO_BACKEND_AUTO) {
		snprintf(why, size, "--vfio-backend %s", vfio_backend_name(want));
		return want;
	}
	bool iommu = sys->access(sys->ctx, "/dev/iommu", F_OK) == 0;
	bool cdevs = sys->access(sys->ctx, "/dev/vfio/devices", F_OK) == 0;

	if (iommu && cdevs && !need_token) {
		snprintf(why, size, "auto: /dev/iommu and /dev/vfio/devices exist");
		return VFIO_BACKEND_IOMMUFD;
	}
	snprintf(why, size, "auto: %s", need_token && iommu && cdevs ? "a VF token needs it"
		 : !iommu ? "no /dev/iommu (no CONFIG_IOMMUFD, or iommufd not loaded)"
		 : "no /dev/vfio/devices (kernel without CONFIG_VFIO_DEVICE_CDEV)");
	return VFIO_BACKEND_LEGACY;
}

int vfio_open(struct vfio_container *c, struct vm *vm, enum vfio_backend_kind kind, bool need_token,
	      const struct vfio_sys *sys)
{
	char why[96];

	memset(c, 0, sizeof(*c));
	c->vm = vm;
	c->sys = sys ? sys : &vfio_sys_real;
	c->fd = c->kvm_dev = -1;
	kind = vfio_backend_choose(c->sys, kind, need_token, why, sizeof(why));
	c->ops = kind == VFIO_BACKEND_IOMMUFD ? &vfio_iommufd_ops : &vfio_legacy_ops;
	pr_info("vfio backend: %s (%s)", c->ops->name, why);
	int r = c->ops->open(c);

	if (r < 0)
		c->ops = NULL;
	return r;
}

int vfio_add_device(struct vfio_container *c, const char *bdf, const char *token)
{
	return c->ops->add_device(c, bdf, token);
}

void vfio_close(struct vfio_container *c)
{
	if (c->ops)
		c->ops->close(c);
	c->ops = NULL;
}
