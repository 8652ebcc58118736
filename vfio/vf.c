// SPDX-License-Identifier: MIT
/* SR-IOV VF preparation over sysfs: see vfio/vf.h. */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "vfio/vf.h"
#include "vmm/log.h"

/* Not UAPI: the PCI Code and ID Assignment spec's base class 06 (bridge), subclass 04
 * (PCI-to-PCI). Bridges in a group do not keep VFIO from it. */
#define PCI_BRIDGE_CLASS 0x0604
#define VFIO_PCI "vfio-pci"

static const char *root_of(const struct vf_sysfs *s)
{
	return s->root ? s->root : "/sys";
}

static const struct vf_nl_ops *nl_of(const struct vf_sysfs *s)
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
	int l = snprintf(buf, n, "%s/", root_of(s));

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
static int __attribute__((format(printf, 4, 5)))
read_str(const struct vf_sysfs *s, char *out, size_t n, const char *fmt, ...)
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
static int __attribute__((format(printf, 4, 5)))
read_link_base(const struct vf_sysfs *s, char *out, size_t n, const char *fmt, ...)
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

static int __attribute__((format(printf, 3, 4)))
exists(const struct vf_sysfs *s, int mode, const char *fmt, ...)
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
static int __attribute__((format(printf, 3, 4)))
write_str(const struct vf_sysfs *s, const char *value, const char *fmt, ...)
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
static char **list_dir(const struct vf_sysfs *s, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static char **list_dir(const struct vf_sysfs *s, const char *fmt, ...)
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

static void free_names(char **v)
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
	char **ifs = list_dir(s, "bus/pci/devices/%s/net", d->bdf), buf[64];

	if (ifs && ifs[0]) {
		snprintf(d->ifname, sizeof(d->ifname), "%s", ifs[0]);
		if (!read_str(s, buf, sizeof(buf), "bus/pci/devices/%s/net/%s/ifindex", d->bdf, d->ifname))
			d->ifindex = atoi(buf);
		if (!read_str(s, buf, sizeof(buf), "bus/pci/devices/%s/net/%s/address", d->bdf, d->ifname) &&
		    sscanf(buf, "%2hhx:%2hhx:%2hhx:%2hhx:%2hhx:%2hhx", &d->mac[0], &d->mac[1], &d->mac[2],
			   &d->mac[3], &d->mac[4], &d->mac[5]) == 6)
			d->has_mac = true;
		read_str(s, d->operstate, sizeof(d->operstate), "bus/pci/devices/%s/net/%s/operstate", d->bdf,
			 d->ifname);
		/* reading carrier of a down interface is EINVAL: unknown then */
		if (!read_str(s, buf, sizeof(buf), "bus/pci/devices/%s/net/%s/carrier", d->bdf, d->ifname))
			d->carrier = atoi(buf);
	}
	free_names(ifs);
}

int vf_dev_info(const struct vf_sysfs *s, const char *bdf, struct vf_dev *d)
{
	char buf[64];

	memset(d, 0, sizeof(*d));
	snprintf(d->bdf, sizeof(d->bdf), "%s", bdf);
	d->group = d->vf_index = d->carrier = -1;
	if (!exists(s, F_OK, "bus/pci/devices/%s", bdf)) {
		pr_err("no PCI device %s (no %s/bus/pci/devices/%s): check the address with vmm vf list",
		       bdf, root_of(s), bdf);
		return -ENODEV;
	}
	if (!read_str(s, buf, sizeof(buf), "bus/pci/devices/%s/vendor", bdf))
		d->vendor = strtoul(buf, NULL, 16);
	if (!read_str(s, buf, sizeof(buf), "bus/pci/devices/%s/device", bdf))
		d->device = strtoul(buf, NULL, 16);
	if (!read_str(s, buf, sizeof(buf), "bus/pci/devices/%s/class", bdf))
		d->class = strtoul(buf, NULL, 16);
	read_link_base(s, d->driver, sizeof(d->driver), "bus/pci/devices/%s/driver", bdf);
	/* the kernel shows an unset override as "(null)" */
	if (!read_str(s, d->driver_override, sizeof(d->driver_override), "bus/pci/devices/%s/driver_override",
		      bdf) && !strcmp(d->driver_override, "(null)"))
		d->driver_override[0] = '\0';
	if (!read_link_base(s, buf, sizeof(buf), "bus/pci/devices/%s/iommu_group", bdf))
		d->group = atoi(buf);
	if (!read_str(s, buf, sizeof(buf), "bus/pci/devices/%s/sriov_totalvfs", bdf)) {
		d->is_pf = true;
		d->totalvfs = atoi(buf);
		if (!read_str(s, buf, sizeof(buf), "bus/pci/devices/%s/sriov_numvfs", bdf))
			d->numvfs = atoi(buf);
	}
	if (!read_link_base(s, d->pf, sizeof(d->pf), "bus/pci/devices/%s/physfn", bdf)) {
		d->is_vf = true;
		for (int i = 0; i < 4096; i++) {
			if (read_link_base(s, buf, sizeof(buf), "bus/pci/devices/%s/virtfn%d", d->pf, i))
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
	return read_link_base(s, out, VF_BDF_LEN, "bus/pci/devices/%s/virtfn%d", pf, i);
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
	char **m = list_dir(s, "kernel/iommu_groups/%d/devices", d.group);

	if (!m) {
		pr_err("cannot read %s/kernel/iommu_groups/%d/devices: %s", root_of(s), d.group, strerror(errno));
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
	free_names(m);
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

static int group_not_viable(const struct vf_sysfs *s, const struct vf_dev *d, char culprits[][VF_BDF_LEN],
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

static void warn_pf_link(const struct vf_dev *pf)
{
	if (!pf->ifname[0])
		pr_warn("PF %s has no net interface (driver %s): its link cannot be checked; a VF of a PF "
			"whose link is down never leaves reset", pf->bdf, pf->driver[0] ? pf->driver : "none");
	else if (strcmp(pf->operstate, "up") && pf->carrier != 1)
		pr_warn("PF %s (%s) link is %s: a VF of a PF whose link is down never leaves reset; bring it "
			"up with ip link set %s up", pf->bdf, pf->ifname, pf->operstate[0] ? pf->operstate : "down",
			pf->ifname);
}

static const char *link_state(const struct vf_dev *d)
{
	if (!d->ifname[0])
		return "no interface";
	if (!strcmp(d->operstate, "up") || d->carrier == 1)
		return "up";
	return d->operstate[0] ? d->operstate : "down";
}

/* ", group shared with A, B" when the group has other members. */
static void group_peers(const struct vf_sysfs *s, const struct vf_dev *d, char *out, size_t n)
{
	out[0] = '\0';
	if (d->group < 0)
		return;
	char **m = list_dir(s, "kernel/iommu_groups/%d/devices", d->group);
	size_t l = 0;

	for (size_t i = 0; m && m[i]; i++) {
		if (!strcmp(m[i], d->bdf) || l >= n)
			continue;
		int w = snprintf(out + l, n - l, "%s%s", l ? ", " : ", group shared with ", m[i]);

		if (w > 0)
			l += (size_t)w;
	}
	free_names(m);
}

static void print_dev(const struct vf_sysfs *s, const struct vf_dev *d, FILE *out)
{
	char group[16], peers[512];

	snprintf(group, sizeof(group), d->group < 0 ? "-" : "%d", d->group);
	group_peers(s, d, peers, sizeof(peers));
	fprintf(out, "%s %s %04x:%04x %-9s group %-3s ", d->is_pf ? "PF" : "VF", d->bdf, d->vendor, d->device,
		d->driver[0] ? d->driver : "-", group);
	if (d->is_pf)
		fprintf(out, "%s link %s, VFs %d of %d", d->ifname[0] ? d->ifname : "-", link_state(d), d->numvfs,
			d->totalvfs);
	else
		fprintf(out, "vf %d of %s", d->vf_index, d->pf);
	if (d->has_mac)
		fprintf(out, ", mac %02x:%02x:%02x:%02x:%02x:%02x", d->mac[0], d->mac[1], d->mac[2], d->mac[3],
			d->mac[4], d->mac[5]);
	fprintf(out, "%s\n", peers);
}

static void list_pf(const struct vf_sysfs *s, const struct vf_dev *pf, FILE *out)
{
	int n = pf->numvfs;
	uint8_t (*macs)[6] = n > 0 ? calloc((size_t)n, sizeof(*macs)) : NULL;
	bool *valid = n > 0 ? calloc((size_t)n, sizeof(*valid)) : NULL;
	const struct vf_nl_ops *nl = nl_of(s);

	print_dev(s, pf, out);
	/* a VF without a NIC driver shows its MAC only in the PF's VF info */
	if (macs && valid && pf->ifindex > 0 && nl->get_macs(nl->ctx, pf->ifindex, macs, valid, n) < 0)
		memset(valid, 0, (size_t)n * sizeof(*valid));
	for (int i = 0; i < n; i++) {
		char bdf[64];
		struct vf_dev d;

		if (read_link_base(s, bdf, sizeof(bdf), "bus/pci/devices/%s/virtfn%d", pf->bdf, i) ||
		    vf_dev_info(s, bdf, &d) < 0)
			continue;
		if (!d.has_mac && valid && valid[i]) {
			memcpy(d.mac, macs[i], 6);
			d.has_mac = true;
		}
		print_dev(s, &d, out);
	}
	free(macs);
	free(valid);
}

int vf_list(const struct vf_sysfs *s, FILE *out)
{
	char **devs = list_dir(s, "bus/pci/devices");
	int pfs = 0;

	if (!devs) {
		pr_err("cannot read %s/bus/pci/devices: %s (is sysfs mounted?)", root_of(s), strerror(errno));
		return -EIO;
	}
	for (size_t i = 0; devs[i]; i++) {
		struct vf_dev d;

		if (!exists(s, F_OK, "bus/pci/devices/%s/sriov_totalvfs", devs[i]) || vf_dev_info(s, devs[i], &d) < 0)
			continue;
		list_pf(s, &d, out);
		pfs++;
	}
	free_names(devs);
	if (!pfs)
		fprintf(out, "no SR-IOV PF here (no PCI device has sriov_totalvfs)\n");
	return 0;
}

/* The device as a PF, or -EINVAL with a message naming what it is instead. */
static int need_pf(const struct vf_sysfs *s, const char *bdf, struct vf_dev *d, const char *what)
{
	int r = vf_dev_info(s, bdf, d);

	if (r < 0)
		return r;
	if (d->is_pf)
		return 0;
	if (d->is_vf)
		pr_err("%s is a VF (number %d of PF %s), not a PF: %s takes the PF", bdf, d->vf_index, d->pf, what);
	else
		pr_err("%s is not an SR-IOV PF (no sriov_totalvfs): vmm vf list shows the PFs", bdf);
	return -EINVAL;
}

static int need_vf(const struct vf_sysfs *s, const char *bdf, struct vf_dev *d)
{
	int r = vf_dev_info(s, bdf, d);

	if (r < 0)
		return r;
	if (d->is_vf)
		return 0;
	if (d->is_pf)
		pr_err("%s is an SR-IOV PF, not a VF: vmm vf binds VFs (vmm vf list shows %s's VFs; vmm vf "
		       "create %s N makes some)", bdf, bdf, bdf);
	else
		pr_err("%s is not an SR-IOV VF (no physfn link): vmm vf handles VFs only", bdf);
	return -EINVAL;
}

int vf_create(const struct vf_sysfs *s, const char *pf, int n)
{
	struct vf_dev d;
	char autoprobe[16] = "", num[16];
	int r = need_pf(s, pf, &d, "vmm vf create");

	if (r < 0)
		return r;
	if (n < 0 || n > d.totalvfs) {
		pr_err("PF %s offers at most %d VFs (sriov_totalvfs), not %d", pf, d.totalvfs, n);
		return -ERANGE;
	}
	if (!d.driver[0]) {
		pr_err("PF %s has no driver: the kernel creates VFs through the PF's driver; load it (for the "
		       "igb: modprobe igb)", pf);
		return -ENOENT;
	}
	if (d.numvfs == n) {
		pr_info("PF %s already has %d VFs: nothing to do", pf, n);
		return 0;
	}
	bool via_zero = d.numvfs && n;

	if (via_zero) {
		for (int i = 0; i < d.numvfs; i++) {
			char vf[64], drv[64];

			if (!read_link_base(s, vf, sizeof(vf), "bus/pci/devices/%s/virtfn%d", pf, i) &&
			    !read_link_base(s, drv, sizeof(drv), "bus/pci/devices/%s/driver", vf) &&
			    !strcmp(drv, VFIO_PCI)) {
				pr_err("PF %s has %d VFs and the kernel changes the count only through 0, which "
				       "removes VF %s, bound to vfio-pci: stop its user and vmm vf unbind %s first",
				       pf, d.numvfs, vf, vf);
				return -EBUSY;
			}
		}
		pr_info("PF %s has %d VFs: the kernel changes the count only through 0, so they are removed "
			"first", pf, d.numvfs);
	}
	read_str(s, autoprobe, sizeof(autoprobe), "bus/pci/devices/%s/sriov_drivers_autoprobe", pf);
	/* no host driver may grab the new VFs before they are bound to vfio-pci */
	if (n && strcmp(autoprobe, "0") &&
	    (r = write_str(s, "0", "bus/pci/devices/%s/sriov_drivers_autoprobe", pf)) < 0) {
		pr_err("cannot turn VF driver autoprobe off on %s (sriov_drivers_autoprobe): %s; run as root",
		       pf, strerror(-r));
		return r;
	}
	if (via_zero && (r = write_str(s, "0", "bus/pci/devices/%s/sriov_numvfs", pf)) < 0) {
		pr_err("cannot remove PF %s's %d VFs (sriov_numvfs=0): %s; is one of them in use?", pf, d.numvfs,
		       strerror(-r));
		goto restore;
	}
	snprintf(num, sizeof(num), "%d", n);
	if ((r = write_str(s, num, "bus/pci/devices/%s/sriov_numvfs", pf)) < 0) {
		pr_err("PF %s refused %d VFs (sriov_numvfs): %s; its driver %s says why in dmesg%s", pf, n,
		       strerror(-r), d.driver, via_zero ? " (its previous VFs are being restored)" : "");
		if (via_zero) {
			snprintf(num, sizeof(num), "%d", d.numvfs);
			write_str(s, num, "bus/pci/devices/%s/sriov_numvfs", pf);
		}
		goto restore;
	}
	return 0;
restore:
	if (autoprobe[0])
		write_str(s, autoprobe, "bus/pci/devices/%s/sriov_drivers_autoprobe", pf);
	return r;
}

int vf_set_mac(const struct vf_sysfs *s, const char *pf, int vf, const uint8_t mac[6])
{
	struct vf_dev d;
	const struct vf_nl_ops *nl = nl_of(s);
	int r = need_pf(s, pf, &d, "vmm vf mac PF VFINDEX MAC");

	if (r < 0)
		return r;
	if (vf < 0 || vf >= d.numvfs) {
		pr_err("PF %s has %d VFs, so no VF number %d%s", pf, d.numvfs, vf,
		       d.numvfs ? "" : ": create them with vmm vf create PF N");
		return -ERANGE;
	}
	if (d.ifindex <= 0) {
		pr_err("PF %s has no net interface (driver %s): VF MACs are set through the PF's net driver; "
		       "bind the PF to it (for the igb: modprobe igb)", pf, d.driver[0] ? d.driver : "none");
		return -ENODEV;
	}
	warn_pf_link(&d);
	r = nl->set_mac(nl->ctx, d.ifindex, vf, mac);
	if (r < 0) {
		pr_err("PF %s (%s, driver %s) refused MAC %02x:%02x:%02x:%02x:%02x:%02x for VF %d "
		       "(RTM_SETLINK IFLA_VF_MAC): %s%s", pf, d.ifname, d.driver, mac[0], mac[1], mac[2], mac[3],
		       mac[4], mac[5], vf, strerror(-r),
		       r == -EPERM ? "; it needs CAP_NET_ADMIN: run as root" : "; dmesg may say why");
		return r;
	}
	return 0;
}

/* driver_override back to old ("" clears it: the kernel takes a lone newline as unset). */
static int set_override(const struct vf_sysfs *s, const char *bdf, const char *old)
{
	return write_str(s, old[0] ? old : "\n", "bus/pci/devices/%s/driver_override", bdf);
}

static void current_driver(const struct vf_sysfs *s, const char *bdf, char *out, size_t n)
{
	if (read_link_base(s, out, n, "bus/pci/devices/%s/driver", bdf))
		out[0] = '\0';
}

/* Puts the device back on driver drv (or on none) with driver_override old: the override names drv
 * for the probe, since with its PF's autoprobe off the PCI core probes a VF only for an override. */
static void restore_driver(const struct vf_sysfs *s, const char *bdf, const char *drv, const char *old)
{
	char now[VF_NAME_LEN];

	current_driver(s, bdf, now, sizeof(now));
	if (!strcmp(now, drv))
		goto override;
	if (now[0])
		write_str(s, bdf, "bus/pci/drivers/%s/unbind", now);
	if (drv[0]) {
		set_override(s, bdf, drv);
		write_str(s, bdf, "bus/pci/drivers_probe");
	}
override:
	set_override(s, bdf, old);
}

int vf_bind(const struct vf_sysfs *s, const char *bdf)
{
	struct vf_dev d;
	char culprits[VF_MAX_GROUP][VF_BDF_LEN], now[VF_NAME_LEN];
	int r = need_vf(s, bdf, &d);

	if (r < 0)
		return r;
	if (!strcmp(d.driver, VFIO_PCI)) {
		pr_info("%s is already bound to vfio-pci", bdf);
		return 0;
	}
	if (!exists(s, F_OK, "bus/pci/drivers/" VFIO_PCI)) {
		pr_err("vfio-pci is not loaded (no %s/bus/pci/drivers/vfio-pci): modprobe vfio-pci, then bind "
		       "again; %s is left on %s", root_of(s), bdf, d.driver[0] ? d.driver : "no driver");
		return -ENOENT;
	}
	/* On arm64 with an SMMU described by the device tree, a device gets its IOMMU group when a
	 * driver first probes it (dma_configure): a fresh VF with no driver has none yet. Its group is
	 * then checked once vfio-pci has it, and the bind undone if it is not viable. */
	bool group_known = d.group >= 0 || d.driver[0];

	if (group_known) {
		r = vf_group_blockers(s, bdf, true, culprits, VF_MAX_GROUP);
		if (r < 0)
			return r;
		if (r > 0)
			return group_not_viable(s, &d, culprits, r);
	}
	struct vf_dev pf;

	if (vf_dev_info(s, d.pf, &pf) == 0)
		warn_pf_link(&pf);
	if ((r = write_str(s, VFIO_PCI, "bus/pci/devices/%s/driver_override", bdf)) < 0) {
		pr_err("cannot set %s's driver_override to vfio-pci: %s; run as root", bdf, strerror(-r));
		return r;
	}
	if (d.driver[0] && (r = write_str(s, bdf, "bus/pci/drivers/%s/unbind", d.driver)) < 0) {
		pr_err("cannot unbind %s from %s: %s; it stays on %s", bdf, d.driver, strerror(-r), d.driver);
		set_override(s, bdf, d.driver_override);
		return r;
	}
	/* a failed probe also shows as the driver link missing below, which says more */
	write_str(s, bdf, "bus/pci/drivers_probe");
	current_driver(s, bdf, now, sizeof(now));
	if (strcmp(now, VFIO_PCI)) {
		pr_err("vfio-pci did not take %s (driver now: %s); dmesg says why. It is given back to %s",
		       bdf, now[0] ? now : "none", d.driver[0] ? d.driver : "no driver");
		restore_driver(s, bdf, d.driver, d.driver_override);
		return -EIO;
	}
	if (!group_known) {
		r = vf_group_blockers(s, bdf, true, culprits, VF_MAX_GROUP);
		if (r != 0) {
			restore_driver(s, bdf, d.driver, d.driver_override);
			return r < 0 ? r : group_not_viable(s, &d, culprits, r);
		}
	}
	return 0;
}

static void sleep_ms(int ms)
{
	struct timespec ts = { ms / 1000, (ms % 1000) * 1000000L };

	nanosleep(&ts, NULL);
}

int vf_unbind(const struct vf_sysfs *s, const char *bdf)
{
	struct vf_dev d;
	char autoprobe[16] = "", now[VF_NAME_LEN] = "";
	int r = need_vf(s, bdf, &d);

	if (r < 0)
		return r;
	if (d.driver[0] && strcmp(d.driver, VFIO_PCI)) {
		pr_info("%s is bound to %s, not vfio-pci: nothing to give back", bdf, d.driver);
		return 0;
	}
	if ((r = set_override(s, bdf, "")) < 0) {
		pr_err("cannot clear %s's driver_override: %s; run as root", bdf, strerror(-r));
		return r;
	}
	if (d.driver[0] && (r = write_str(s, bdf, "bus/pci/drivers/" VFIO_PCI "/unbind")) < 0) {
		pr_err("cannot unbind %s from vfio-pci: %s; is it in use by a guest?", bdf, strerror(-r));
		set_override(s, bdf, d.driver_override);
		return r;
	}
	/* With its PF's autoprobe off the PCI core probes a VF for no driver without an override:
	 * on for this probe only, so the VF's own driver (whatever matches it) takes it. */
	read_str(s, autoprobe, sizeof(autoprobe), "bus/pci/devices/%s/sriov_drivers_autoprobe", d.pf);
	bool toggled = !strcmp(autoprobe, "0") &&
		       !write_str(s, "1", "bus/pci/devices/%s/sriov_drivers_autoprobe", d.pf);

	write_str(s, bdf, "bus/pci/drivers_probe");
	int wait = s->probe_wait_ms > 0 ? s->probe_wait_ms : 5000;

	for (int t = 0;; t += 50) {
		current_driver(s, bdf, now, sizeof(now));
		if (now[0] || t >= wait)
			break;
		sleep_ms(50);
	}
	if (toggled)
		write_str(s, "0", "bus/pci/devices/%s/sriov_drivers_autoprobe", d.pf);
	if (!now[0]) {
		pr_err("no driver took %s back within %d ms: load the VF's driver (for igb VFs: modprobe "
		       "igbvf) and run vmm vf unbind again; it is back on %s meanwhile", bdf, wait,
		       d.driver[0] ? d.driver : "no driver");
		restore_driver(s, bdf, d.driver, d.driver_override);
		return -ENODEV;
	}
	return 0;
}

int vf_check(const struct vf_sysfs *s, const char *bdf, FILE *out)
{
	struct vf_dev d, pf;
	char culprits[VF_MAX_GROUP][VF_BDF_LEN];
	int r = vf_dev_info(s, bdf, &d);

	if (r < 0)
		return r;
	r = vf_group_blockers(s, bdf, true, culprits, VF_MAX_GROUP);
	if (r < 0)
		return r;
	if (r > 0)
		return group_not_viable(s, &d, culprits, r);
	if (strcmp(d.driver, VFIO_PCI)) {
		if (d.driver[0])
			pr_err("%s is held by %s: VFIO can take it only from vfio-pci; vmm vf bind %s moves it "
			       "there (its IOMMU group %d is otherwise viable)", bdf, d.driver, bdf, d.group);
		else
			pr_err("%s is bound to no driver: vmm vf bind %s binds it to vfio-pci (its IOMMU group %d "
			       "is otherwise viable)", bdf, bdf, d.group);
		return -EBUSY;
	}
	fprintf(out, "%s: IOMMU group %d is viable (/dev/vfio/%d)", bdf, d.group, d.group);
	if (d.is_vf && vf_dev_info(s, d.pf, &pf) == 0) {
		fprintf(out, "; PF %s %s link %s\n", pf.bdf, pf.ifname[0] ? pf.ifname : "-", link_state(&pf));
		warn_pf_link(&pf);
	} else {
		fprintf(out, "\n");
	}
	return 0;
}
