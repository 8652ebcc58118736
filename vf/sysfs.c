// SPDX-License-Identifier: MIT
/*
 * What sysfs says about a PCI device for SR-IOV VF preparation (vf/vf.h): the reads and writes
 * every path goes through (under struct vf_sysfs's root, so tests run on a fake tree), a device's
 * identity, driver, IOMMU group, PF/VF links and net interface, and whether its group lets VFIO
 * in. The commands built on them are in vf/vf.c.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "core/hot.h"
#include "vf/internal.h"
#include "vf/vf.h"
#include "core/log.h"

/* Not UAPI: the PCI Code and ID Assignment spec's base class 06 (bridge), subclass 04
 * (PCI-to-PCI). Bridges in a group do not keep VFIO from it. */
#define PCI_BRIDGE_CLASS 0x0604

const char *vf_sys_root(const struct vf_sysfs *s)
{
	return s->root ? s->root : "/sys";
}

const struct vf_nl_ops *vf_nl(const struct vf_sysfs *s)
{
	return s->nl ? s->nl : &vf_nl_rtnetlink;
}

static int copy_str(char *out, size_t n, const char *src)
{
	size_t l = strlen(src);

	if (l >= n)
		return -ENAMETOOLONG;
	memcpy(out, src, l + 1);
	return 0;
}

static int vpath(const struct vf_sysfs *s, char *buf, size_t n, const char *fmt, va_list ap)
{
	int l = snprintf(buf, n, "%s/", vf_sys_root(s));

	if (l < 0 || (size_t)l >= n)
		return -ENAMETOOLONG;
	int m = vsnprintf(buf + l, n - l, fmt, ap);

	return m < 0 || (size_t)m >= n - l ? -ENAMETOOLONG : l;
}

/* Opens root/fmt...; the fd or -errno. *rel is where the root-relative part starts in p. */
static int vopen(const struct vf_sysfs *s, int flags, char *p, size_t n, int *rel, const char *fmt, va_list ap)
{
	int l = vpath(s, p, n, fmt, ap);

	if (l < 0)
		return l;
	*rel = l;
	int fd = open(p, flags | O_CLOEXEC);

	return fd < 0 ? -errno : fd;
}

/* The file's first line without its newline into out. */
int vf_read_str(const struct vf_sysfs *s, char *out, size_t n, const char *fmt, ...)
{
	char p[512];
	va_list ap;
	int rel, r;

	va_start(ap, fmt);
	int fd = vopen(s, O_RDONLY, p, sizeof(p), &rel, fmt, ap);

	va_end(ap);
	if (fd < 0)
		return fd;
	ssize_t got = read(fd, out, n - 1);

	r = got < 0 ? -errno : 0;
	close(fd);
	if (r)
		return r;
	out[got] = '\0';
	out[strcspn(out, "\n")] = '\0';
	return 0;
}

/* The last component of a symlink's target (a driver's, a group's, a PCI device's name). */
int vf_read_link_base(const struct vf_sysfs *s, char *out, size_t n, const char *fmt, ...)
{
	char p[512], t[512];
	va_list ap;

	va_start(ap, fmt);
	int r = vpath(s, p, sizeof(p), fmt, ap);

	va_end(ap);
	if (r < 0)
		return r;
	ssize_t l = readlink(p, t, sizeof(t) - 1);

	if (l < 0)
		return -errno;
	t[l] = '\0';
	const char *b = strrchr(t, '/');

	return copy_str(out, n, b ? b + 1 : t);
}

int vf_exists(const struct vf_sysfs *s, int mode, const char *fmt, ...)
{
	char p[512];
	va_list ap;

	va_start(ap, fmt);
	int r = vpath(s, p, sizeof(p), fmt, ap);

	va_end(ap);
	return r >= 0 && access(p, mode) == 0;
}

/* One sysfs write, as `echo value > path` does (no O_CREAT: a missing attribute is an error,
 * in a fake tree too). */
int vf_write_str(const struct vf_sysfs *s, const char *value, const char *fmt, ...)
{
	char p[512];
	va_list ap;
	int l;

	va_start(ap, fmt);
	int fd = vopen(s, O_WRONLY | O_TRUNC, p, sizeof(p), &l, fmt, ap);

	va_end(ap);
	if (fd < 0)
		return fd;
	size_t len = strlen(value);
	ssize_t w = write(fd, value, len);
	int r = w < 0 ? -errno : (size_t)w != len ? -EIO : 0;

	if (close(fd) < 0 && !r)
		r = -errno;
	if (!r && s->wrote)
		s->wrote(s->ctx, p + l, value);
	return r;
}

static int cmp_str(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

/* The entries of a directory (no dot files), sorted, as a NULL-terminated array to free with
 * free_names. */
char **vf_list_dir(const struct vf_sysfs *s, const char *fmt, ...)
{
	char p[512];
	va_list ap;

	va_start(ap, fmt);
	int r = vpath(s, p, sizeof(p), fmt, ap);

	va_end(ap);
	if (r < 0)
		return NULL;
	DIR *d = opendir(p);

	if (!d)
		return NULL;
	size_t n = 0, cap = 16;
	char **v = malloc(cap * sizeof(*v));

	for (struct dirent *e; v && (e = readdir(d));) {
		if (e->d_name[0] == '.')
			continue;
		if (n + 1 >= cap) {
			char **nv = realloc(v, (cap *= 2) * sizeof(*v));

			if (!nv)
				break;
			v = nv;
		}
		if (!(v[n] = strdup(e->d_name)))
			break;
		n++;
	}
	closedir(d);
	if (!v)
		return NULL;
	v[n] = NULL;
	qsort(v, n, sizeof(*v), cmp_str);
	return v;
}

void vf_free_names(char **v)
{
	for (size_t i = 0; v && v[i]; i++)
		free(v[i]);
	free(v);
}

int vf_parse_bdf(const char *s, char out[VF_BDF_LEN])
{
	unsigned int dom = 0, bus, dev, fn;
	int end = -1;

	if (s && (sscanf(s, "%4x:%2x:%2x.%1x%n", &dom, &bus, &dev, &fn, &end) == 4 ||
		  (dom = 0, sscanf(s, "%2x:%2x.%1x%n", &bus, &dev, &fn, &end) == 3)) &&
	    end > 0 && s[end] == '\0' && dev < 32 && fn < 8 && strspn(s, "0123456789abcdefABCDEF:.") == strlen(s)) {
		snprintf(out, VF_BDF_LEN, "%04x:%02x:%02x.%x", dom, bus, dev, fn);
		return 0;
	}
	pr_err("'%s' is not a PCI address: give DOMAIN:BUS:DEVICE.FUNCTION in hex, such as 0000:00:13.0 "
	       "(vmm vf list shows the PFs and VFs)", s ? s : "");
	return -EINVAL;
}

int vf_parse_mac(const char *s, uint8_t mac[6])
{
	int end = -1;

	if (sscanf(s, "%2hhx:%2hhx:%2hhx:%2hhx:%2hhx:%2hhx%n", &mac[0], &mac[1], &mac[2], &mac[3], &mac[4],
		   &mac[5], &end) == 6 && end == (int)strlen(s) && end == 17) {
		if (!(mac[0] & 1))
			return 0;
		pr_err("MAC %s is a multicast address (low bit of the first byte set): a VF needs a unicast "
		       "one, such as 02:00:00:00:00:01 (locally administered)", s);
		return -EINVAL;
	}
	pr_err("'%s' is not a MAC address: give six hex bytes separated by colons, such as "
	       "02:00:00:00:00:01", s);
	return -EINVAL;
}

static void net_info(const struct vf_sysfs *s, struct vf_dev *d)
{
	char **ifs = vf_list_dir(s, "bus/pci/devices/%s/net", d->bdf), buf[64];

	if (ifs && ifs[0]) {
		snprintf(d->ifname, sizeof(d->ifname), "%s", ifs[0]);
		if (!vf_read_str(s, buf, sizeof(buf), "bus/pci/devices/%s/net/%s/ifindex", d->bdf, d->ifname))
			d->ifindex = atoi(buf);
		if (!vf_read_str(s, buf, sizeof(buf), "bus/pci/devices/%s/net/%s/address", d->bdf, d->ifname) &&
		    sscanf(buf, "%2hhx:%2hhx:%2hhx:%2hhx:%2hhx:%2hhx", &d->mac[0], &d->mac[1], &d->mac[2],
			   &d->mac[3], &d->mac[4], &d->mac[5]) == 6)
			d->has_mac = true;
		vf_read_str(s, d->operstate, sizeof(d->operstate), "bus/pci/devices/%s/net/%s/operstate", d->bdf,
			 d->ifname);
		/* reading carrier of a down interface is EINVAL: unknown then */
		if (!vf_read_str(s, buf, sizeof(buf), "bus/pci/devices/%s/net/%s/carrier", d->bdf, d->ifname))
			d->carrier = atoi(buf);
	}
	vf_free_names(ifs);
}

int vf_dev_info(const struct vf_sysfs *s, const char *bdf, struct vf_dev *d)
{
	char buf[64];

	memset(d, 0, sizeof(*d));
	snprintf(d->bdf, sizeof(d->bdf), "%s", bdf);
	d->group = d->vf_index = d->carrier = -1;
	if (!vf_exists(s, F_OK, "bus/pci/devices/%s", bdf)) {
		pr_err("no PCI device %s (no %s/bus/pci/devices/%s): check the address with vmm vf list",
		       bdf, vf_sys_root(s), bdf);
		return -ENODEV;
	}
	if (!vf_read_str(s, buf, sizeof(buf), "bus/pci/devices/%s/vendor", bdf))
		d->vendor = strtoul(buf, NULL, 16);
	if (!vf_read_str(s, buf, sizeof(buf), "bus/pci/devices/%s/device", bdf))
		d->device = strtoul(buf, NULL, 16);
	if (!vf_read_str(s, buf, sizeof(buf), "bus/pci/devices/%s/class", bdf))
		d->class = strtoul(buf, NULL, 16);
	vf_read_link_base(s, d->driver, sizeof(d->driver), "bus/pci/devices/%s/driver", bdf);
	/* the kernel shows an unset override as "(null)" */
	if (!vf_read_str(s, d->driver_override, sizeof(d->driver_override), "bus/pci/devices/%s/driver_override",
		      bdf) && !strcmp(d->driver_override, "(null)"))
		d->driver_override[0] = '\0';
	if (!vf_read_link_base(s, buf, sizeof(buf), "bus/pci/devices/%s/iommu_group", bdf))
		d->group = atoi(buf);
	if (!vf_read_str(s, buf, sizeof(buf), "bus/pci/devices/%s/sriov_totalvfs", bdf)) {
		d->is_pf = true;
		d->totalvfs = atoi(buf);
		if (!vf_read_str(s, buf, sizeof(buf), "bus/pci/devices/%s/sriov_numvfs", bdf))
			d->numvfs = atoi(buf);
	}
	if (!vf_read_link_base(s, d->pf, sizeof(d->pf), "bus/pci/devices/%s/physfn", bdf)) {
		d->is_vf = true;
		for (int i = 0; i < 4096; i++) {
			if (vf_read_link_base(s, buf, sizeof(buf), "bus/pci/devices/%s/virtfn%d", d->pf, i))
				break;
			if (!strcmp(buf, bdf)) {
				d->vf_index = i;
				break;
			}
		}
	}
	net_info(s, d);
	return 0;
}

int vf_virtfn(const struct vf_sysfs *s, const char *pf, int i, char out[VF_BDF_LEN])
{
	return vf_read_link_base(s, out, VF_BDF_LEN, "bus/pci/devices/%s/virtfn%d", pf, i);
}

static bool driver_ok_for_vfio(const struct vf_dev *d)
{
	return !d->driver[0] || !strcmp(d->driver, VFIO_PCI) || !strcmp(d->driver, "pci-stub") ||
	       (d->class >> 8) == PCI_BRIDGE_CLASS;
}

int vf_group_blockers(const struct vf_sysfs *s, const char *bdf, bool skip_self,
		      char culprits[][VF_BDF_LEN], int n)
{
	struct vf_dev d;
	int r = vf_dev_info(s, bdf, &d), nr = 0;

	if (r < 0)
		return r;
	if (d.group < 0) {
		pr_err("%s has no IOMMU group: VFIO needs the IOMMU on (arm64: an SMMU in the firmware "
		       "tables; x86: intel_iommu=on or amd_iommu=on on the host command line)", bdf);
		return -ENODEV;
	}
	char **m = vf_list_dir(s, "kernel/iommu_groups/%d/devices", d.group);

	if (!m) {
		pr_err("cannot read %s/kernel/iommu_groups/%d/devices: %s", vf_sys_root(s), d.group, strerror(errno));
		return -EIO;
	}
	for (size_t i = 0; m[i]; i++) {
		struct vf_dev o;

		if (skip_self && !strcmp(m[i], bdf))
			continue;
		if (vf_dev_info(s, m[i], &o) < 0 || driver_ok_for_vfio(&o))
			continue;
		if (nr < n)
			snprintf(culprits[nr], VF_BDF_LEN, "%s", m[i]);
		nr++;
	}
	vf_free_names(m);
	return nr;
}

/* The culprits as "0000:00:14.0 (igbvf), ..." for a message. */
static void name_culprits(const struct vf_sysfs *s, char culprits[][VF_BDF_LEN], int nr, char *out, size_t n)
{
	size_t l = 0;

	out[0] = '\0';
	for (int i = 0; i < nr && i < VF_MAX_GROUP && l < n; i++) {
		struct vf_dev o;

		if (vf_dev_info(s, culprits[i], &o) < 0)
			o.driver[0] = '\0';
		int w = snprintf(out + l, n - l, "%s%s (%s)", i ? ", " : "", culprits[i], o.driver);

		if (w < 0)
			break;
		l += (size_t)w;
	}
}

VMM_HOT_VF int vf_group_not_viable(const struct vf_sysfs *s, const struct vf_dev *d, char culprits[][VF_BDF_LEN],
			    int nr)
{
	char names[1024];

	name_culprits(s, culprits, nr, names, sizeof(names));
	pr_err("IOMMU group %d of %s is not viable for VFIO: it also holds %s, bound to a host driver. "
	       "Bind those to vfio-pci too (vmm vf bind BDF, or unbind them), or give %s a group of its "
	       "own (a slot behind an ACS-capable port, or pci=config_acs=... on the host command line)",
	       d->group, d->bdf, names, d->bdf);
	return -EBUSY;
}

