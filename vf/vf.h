/* SPDX-License-Identifier: MIT */
/*
 * SR-IOV VF preparation over sysfs (and rtnetlink for VF MACs): list PFs and VFs, create VFs, set
 * a VF's MAC from its PF, bind a VF to vfio-pci and give it back, check its IOMMU group. Every
 * path goes through struct vf_sysfs so unit tests run the same code on a fake /sys tree.
 * Functions return 0 or -errno after a message that names the problem and what to do; a failed
 * change leaves the device as it was.
 */
#ifndef VMM_VF_H
#define VMM_VF_H

#include <net/if.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#include "vf/netlink.h"

struct vf_sysfs {
	const char *root; /* NULL: "/sys" */
	/* NULL: rtnetlink (vf/netlink.c); tests supply their own */
	const struct vf_nl_ops *nl;
	/* Called after every successful sysfs write with the path below root; lets a test play
	 * the kernel (relink driver on drivers_probe). NULL in vmm. */
	void (*wrote)(void *ctx, const char *path, const char *value);
	void *ctx;
	/* How long vf_unbind waits for the VF's own driver to take it (ms); 0: 5000 */
	int probe_wait_ms;
};

#define VF_BDF_LEN 16 /* "dddd:bb:dd.f" + NUL, rounded */
#define VF_NAME_LEN 64
#define VF_MAX_GROUP 64 /* members of one IOMMU group we report */

struct vf_dev {
	char bdf[VF_BDF_LEN];
	unsigned int vendor, device, class; /* class: the 24-bit class code */
	char driver[VF_NAME_LEN];	    /* "" when unbound */
	char driver_override[VF_NAME_LEN];  /* "" when unset */
	int group;			    /* -1: no IOMMU group */
	bool is_pf, is_vf;
	/* PF: */
	int totalvfs, numvfs;
	/* VF: */
	char pf[VF_BDF_LEN];
	int vf_index;
	/* the net interface a NIC driver made for it ("" when none) */
	char ifname[IF_NAMESIZE];
	int ifindex;
	bool has_mac;
	uint8_t mac[6];
	/* PF: the interface's state ("up", "down", ...) and carrier (-1: unknown) */
	char operstate[16];
	int carrier;
};

/* "dddd:bb:dd.f" or "bb:dd.f" (domain 0) into canonical out; -EINVAL (with a message) otherwise. */
int vf_parse_bdf(const char *s, char out[VF_BDF_LEN]);
/* "xx:xx:xx:xx:xx:xx" into mac; -EINVAL (with a message) when not a unicast address. */
int vf_parse_mac(const char *s, uint8_t mac[6]);

/* What sysfs says about the device at bdf (canonical): -ENODEV (with a message) when absent. */
int vf_dev_info(const struct vf_sysfs *s, const char *bdf, struct vf_dev *d);
/* PF's VF number i (its virtfnI link) into out; -errno without a message. */
int vf_virtfn(const struct vf_sysfs *s, const char *pf, int i, char out[VF_BDF_LEN]);
/* Every SR-IOV PF and its VFs, one line per device. */
int vf_list(const struct vf_sysfs *s, FILE *out);

/* Creates n VFs on pf with driver autoprobe off; n = 0 removes them. Existing VFs of another count
 * go through 0 first (the kernel takes no other change), refused while one is bound to vfio-pci. */
int vf_create(const struct vf_sysfs *s, const char *pf, int n);
/* Sets VF vf's MAC through its PF (RTM_SETLINK, IFLA_VF_MAC). */
int vf_set_mac(const struct vf_sysfs *s, const char *pf, int vf, const uint8_t mac[6]);
/* Binds the VF to vfio-pci: driver_override, unbind, drivers_probe; refused when its IOMMU group
 * is not viable. On failure driver_override and the previous driver are restored. */
int vf_bind(const struct vf_sysfs *s, const char *bdf);
/* Gives a vfio-pci VF back to its own driver: driver_override cleared, unbind, drivers_probe with
 * its PF's driver autoprobe on for the moment (off, the PCI core lets no driver take a VF). */
int vf_unbind(const struct vf_sysfs *s, const char *bdf);

/* The members of bdf's IOMMU group that keep it from VFIO: bound to a driver other than
 * vfio-pci or pci-stub and not a PCI bridge. bdf itself is skipped when skip_self (it is about to
 * be bound). Names go into culprits (n entries); returns how many there are, or -errno. */
int vf_group_blockers(const struct vf_sysfs *s, const char *bdf, bool skip_self,
		      char culprits[][VF_BDF_LEN], int n);
/* Group viability and, for a VF, its PF's link, reported on out: 0 viable (a down link is a
 * warning), -EBUSY (with a message naming the culprits) when not viable. */
int vf_check(const struct vf_sysfs *s, const char *bdf, FILE *out);

#endif
