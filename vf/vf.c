// SPDX-License-Identifier: MIT
/* SR-IOV VF preparation, the commands (vf/vf.h): list, create, set a VF's MAC, bind, unbind and
 * check; what they read and write of sysfs is in vf/sysfs.c. */
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

VMM_HOT static void warn_pf_link(const struct vf_dev *pf)
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
	char **m = vf_list_dir(s, "kernel/iommu_groups/%d/devices", d->group);
	size_t l = 0;

	for (size_t i = 0; m && m[i]; i++) {
		if (!strcmp(m[i], d->bdf) || l >= n)
			continue;
		int w = snprintf(out + l, n - l, "%s%s", l ? ", " : ", group shared with ", m[i]);

		if (w > 0)
			l += (size_t)w;
	}
	vf_free_names(m);
}

VMM_HOT static void print_dev(const struct vf_sysfs *s, const struct vf_dev *d, FILE *out)
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
	const struct vf_nl_ops *nl = vf_nl(s);

	print_dev(s, pf, out);
	/* a VF without a NIC driver shows its MAC only in the PF's VF info */
	if (macs && valid && pf->ifindex > 0 && nl->get_macs(nl->ctx, pf->ifindex, macs, valid, n) < 0)
		memset(valid, 0, (size_t)n * sizeof(*valid));
	for (int i = 0; i < n; i++) {
		char bdf[64];
		struct vf_dev d;

		if (vf_read_link_base(s, bdf, sizeof(bdf), "bus/pci/devices/%s/virtfn%d", pf->bdf, i) ||
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
	char **devs = vf_list_dir(s, "bus/pci/devices");
	int pfs = 0;

	if (!devs) {
		pr_err("cannot read %s/bus/pci/devices: %s (is sysfs mounted?)", vf_sys_root(s), strerror(errno));
		return -EIO;
	}
	for (size_t i = 0; devs[i]; i++) {
		struct vf_dev d;

		if (!vf_exists(s, F_OK, "bus/pci/devices/%s/sriov_totalvfs", devs[i]) || vf_dev_info(s, devs[i], &d) < 0)
			continue;
		list_pf(s, &d, out);
		pfs++;
	}
	vf_free_names(devs);
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

			if (!vf_read_link_base(s, vf, sizeof(vf), "bus/pci/devices/%s/virtfn%d", pf, i) &&
			    !vf_read_link_base(s, drv, sizeof(drv), "bus/pci/devices/%s/driver", vf) &&
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
	vf_read_str(s, autoprobe, sizeof(autoprobe), "bus/pci/devices/%s/sriov_drivers_autoprobe", pf);
	/* no host driver may grab the new VFs before they are bound to vfio-pci */
	if (n && strcmp(autoprobe, "0") &&
	    (r = vf_write_str(s, "0", "bus/pci/devices/%s/sriov_drivers_autoprobe", pf)) < 0) {
		pr_err("cannot turn VF driver autoprobe off on %s (sriov_drivers_autoprobe): %s; run as root",
		       pf, strerror(-r));
		return r;
	}
	if (via_zero && (r = vf_write_str(s, "0", "bus/pci/devices/%s/sriov_numvfs", pf)) < 0) {
		pr_err("cannot remove PF %s's %d VFs (sriov_numvfs=0): %s; is one of them in use?", pf, d.numvfs,
		       strerror(-r));
		goto restore;
	}
	snprintf(num, sizeof(num), "%d", n);
	if ((r = vf_write_str(s, num, "bus/pci/devices/%s/sriov_numvfs", pf)) < 0) {
		pr_err("PF %s refused %d VFs (sriov_numvfs): %s; its driver %s says why in dmesg%s", pf, n,
		       strerror(-r), d.driver, via_zero ? " (its previous VFs are being restored)" : "");
		if (via_zero) {
			snprintf(num, sizeof(num), "%d", d.numvfs);
			vf_write_str(s, num, "bus/pci/devices/%s/sriov_numvfs", pf);
		}
		goto restore;
	}
	return 0;
restore:
	if (autoprobe[0])
		vf_write_str(s, autoprobe, "bus/pci/devices/%s/sriov_drivers_autoprobe", pf);
	return r;
}

int vf_set_mac(const struct vf_sysfs *s, const char *pf, int vf, const uint8_t mac[6])
{
	struct vf_dev d;
	const struct vf_nl_ops *nl = vf_nl(s);
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
	return vf_write_str(s, old[0] ? old : "\n", "bus/pci/devices/%s/driver_override", bdf);
}

static void current_driver(const struct vf_sysfs *s, const char *bdf, char *out, size_t n)
{
	if (vf_read_link_base(s, out, n, "bus/pci/devices/%s/driver", bdf))
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
		vf_write_str(s, bdf, "bus/pci/drivers/%s/unbind", now);
	if (drv[0]) {
		set_override(s, bdf, drv);
		vf_write_str(s, bdf, "bus/pci/drivers_probe");
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
	if (!vf_exists(s, F_OK, "bus/pci/drivers/" VFIO_PCI)) {
		pr_err("vfio-pci is not loaded (no %s/bus/pci/drivers/vfio-pci): modprobe vfio-pci, then bind "
		       "again; %s is left on %s", vf_sys_root(s), bdf, d.driver[0] ? d.driver : "no driver");
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
			return vf_group_not_viable(s, &d, culprits, r);
	}
	struct vf_dev pf;

	if (vf_dev_info(s, d.pf, &pf) == 0)
		warn_pf_link(&pf);
	if ((r = vf_write_str(s, VFIO_PCI, "bus/pci/devices/%s/driver_override", bdf)) < 0) {
		pr_err("cannot set %s's driver_override to vfio-pci: %s; run as root", bdf, strerror(-r));
		return r;
	}
	if (d.driver[0] && (r = vf_write_str(s, bdf, "bus/pci/drivers/%s/unbind", d.driver)) < 0) {
		pr_err("cannot unbind %s from %s: %s; it stays on %s", bdf, d.driver, strerror(-r), d.driver);
		set_override(s, bdf, d.driver_override);
		return r;
	}
	/* a failed probe also shows as the driver link missing below, which says more */
	vf_write_str(s, bdf, "bus/pci/drivers_probe");
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
			return r < 0 ? r : vf_group_not_viable(s, &d, culprits, r);
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
	if (d.driver[0] && (r = vf_write_str(s, bdf, "bus/pci/drivers/" VFIO_PCI "/unbind")) < 0) {
		pr_err("cannot unbind %s from vfio-pci: %s; is it in use by a guest?", bdf, strerror(-r));
		set_override(s, bdf, d.driver_override);
		return r;
	}
	/* With its PF's autoprobe off the PCI core probes a VF for no driver without an override:
	 * on for this probe only, so the VF's own driver (whatever matches it) takes it. */
	vf_read_str(s, autoprobe, sizeof(autoprobe), "bus/pci/devices/%s/sriov_drivers_autoprobe", d.pf);
	bool toggled = !strcmp(autoprobe, "0") &&
		       !vf_write_str(s, "1", "bus/pci/devices/%s/sriov_drivers_autoprobe", d.pf);

	vf_write_str(s, bdf, "bus/pci/drivers_probe");
	int wait = s->probe_wait_ms > 0 ? s->probe_wait_ms : 5000;

	for (int t = 0;; t += 50) {
		current_driver(s, bdf, now, sizeof(now));
		if (now[0] || t >= wait)
			break;
		sleep_ms(50);
	}
	if (toggled)
		vf_write_str(s, "0", "bus/pci/devices/%s/sriov_drivers_autoprobe", d.pf);
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
		return vf_group_not_viable(s, &d, culprits, r);
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
