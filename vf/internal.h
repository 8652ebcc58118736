/* SPDX-License-Identifier: MIT */
/* What vf/'s files share among themselves (not a public interface). */
#ifndef VMM_VF_INTERNAL_H
#define VMM_VF_INTERNAL_H

#include "vf/vf.h"

/* sysfs.c, for vf.c: sysfs below s's root. Paths are printf formats relative to it; reads and
 * writes return 0 or -errno (a write's failure said, naming the file). */
#define VFIO_PCI "vfio-pci"
const char *vf_sys_root(const struct vf_sysfs *s);
const struct vf_nl_ops *vf_nl(const struct vf_sysfs *s);
int vf_read_str(const struct vf_sysfs *s, char *out, size_t n, const char *fmt, ...) __attribute__((format(printf, 4, 5)));
/* The last path component of a symlink's target (a driver's or group's name). */
int vf_read_link_base(const struct vf_sysfs *s, char *out, size_t n, const char *fmt, ...)
	__attribute__((format(printf, 4, 5)));
/* access(2) with mode: true when it passes. */
int vf_exists(const struct vf_sysfs *s, int mode, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
int vf_write_str(const struct vf_sysfs *s, const char *value, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
/* A directory's entries, sorted, NULL-terminated (vf_free_names); NULL with errno on failure. */
char **vf_list_dir(const struct vf_sysfs *s, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
void vf_free_names(char **v);
/* The refusal for d's group: its nr culprits named, what to do; -EBUSY. */
int vf_group_not_viable(const struct vf_sysfs *s, const struct vf_dev *d, char culprits[][VF_BDF_LEN], int nr);

#endif
