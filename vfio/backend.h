/* SPDX-License-Identifier: MIT */
/*
 * VFIO backends and the system calls they make. Two backends give a VM its device fds: the legacy
 * type1 container with IOMMU groups (vfio/container.c) and iommufd with VFIO device cdevs
 * (vfio/iommufd.c). Every open, ioctl and sysfs lookup they do goes through struct vfio_sys, so
 * unit tests can play the kernel (tests/unit/fake_vfio.c).
 */
#ifndef VMM_VFIO_BACKEND_H
#define VMM_VFIO_BACKEND_H

#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>

/* --vfio-backend: auto picks iommufd when /dev/iommu and /dev/vfio/devices exist. */
enum vfio_backend_kind { VFIO_BACKEND_AUTO, VFIO_BACKEND_LEGACY, VFIO_BACKEND_IOMMUFD };

/* "auto", "legacy", "iommufd" */
const char *vfio_backend_name(enum vfio_backend_kind k);
/* 0 and *k set, or -EINVAL for an unknown name. */
int vfio_backend_parse(const char *s, enum vfio_backend_kind *k);

/* The kernel as the backends see it; each returns what the libc call does (-1 and errno). */
struct vfio_sys {
	int (*open)(void *ctx, const char *path, int flags);
	int (*close)(void *ctx, int fd);
	/* arg: a pointer or an integer, as the request takes it */
	int (*ioctl)(void *ctx, int fd, unsigned long req, unsigned long arg);
	ssize_t (*readlink)(void *ctx, const char *path, char *buf, size_t size);
	int (*access)(void *ctx, const char *path, int mode);
	/* the first entry of directory dir whose name starts with prefix, into name */
	int (*dir_entry)(void *ctx, const char *dir, const char *prefix, char *name, size_t size);
	void *ctx;
};

/* The real system calls. */
extern const struct vfio_sys vfio_sys_real;

/* The automatic choice, or the wanted one: kind and, into why, the reason in a few words. A VF
 * token needs the legacy backend (the 6.12 UAPI cannot pass one when binding a cdev). */
enum vfio_backend_kind vfio_backend_choose(const struct vfio_sys *sys, enum vfio_backend_kind want,
					   bool need_token, char *why, size_t size);

#endif
