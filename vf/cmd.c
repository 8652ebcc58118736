// SPDX-License-Identifier: MIT
/* `vmm vf`: the command line over vf/vf.h. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/hot.h"
#include "vf/cmd.h"
#include "vf/vf.h"
#include "core/log.h"

static const struct {
	const char *name, *args, *summary, *help;
	int nargs;
} cmds[] = {
	{ "list", "", "SR-IOV PFs and VFs: driver, IOMMU group, MAC, PF link", "every SR-IOV PF and its VFs, one line each: vendor:device, driver, IOMMU group,\n"
		      "PF interface and link, VF MAC (from the VF's interface, else the PF's VF info)", 0 },
	{ "create", "PF N", "create N VFs on PF (driver autoprobe off); 0 removes them", "create N VFs on PF with VF driver autoprobe off (sriov_drivers_autoprobe=0,\n"
			    "then sriov_numvfs=N); N=0 removes them. Another existing count goes through 0\n"
			    "first (the kernel takes no other change), refused while a VF is on vfio-pci", 2 },
	{ "mac", "PF VFINDEX MAC", "set a VF's MAC from its PF (IFLA_VF_MAC)", "set VF number VFINDEX's MAC from its PF over rtnetlink (IFLA_VF_MAC, what\n"
				   "`ip link set PFDEV vf VFINDEX mac MAC` does)", 3 },
	{ "bind", "VF", "bind a VF to vfio-pci", "bind the VF to vfio-pci (driver_override, unbind, drivers_probe) once its IOMMU\n"
			"group is viable; on failure it goes back to its previous driver. vfio-pci must\n"
			"be loaded (modprobe vfio-pci)", 1 },
	{ "unbind", "VF", "give a VF back from vfio-pci to its own driver", "give the VF back from vfio-pci to its own driver (driver_override cleared,\n"
			  "unbind, drivers_probe)", 1 },
	{ "check", "BDF", "is it ready for VFIO: IOMMU group viable, PF link up", "is the device on vfio-pci with a viable IOMMU group (every member on\n"
			  "vfio-pci, pci-stub, no driver, or a PCI bridge), and is its PF's link up\n"
			  "(a VF of a PF whose link is down never leaves reset)", 1 },
};

#define NR_CMDS (sizeof(cmds) / sizeof(cmds[0]))

static void usage(FILE *f)
{
	fprintf(f, "usage: vmm vf COMMAND [ARGS]   SR-IOV VF preparation (PF and VF are PCI addresses,\n"
		   "                               such as 0000:00:03.0)\n\ncommands:\n");
	for (size_t i = 0; i < NR_CMDS; i++)
		fprintf(f, "  %-6s %-15s %s\n", cmds[i].name, cmds[i].args, cmds[i].summary);
	fprintf(f, "\nvmm vf COMMAND --help says more. Exit status: 0 done, 1 refused or failed (the device "
		   "is left as it was).\n");
}

static void cmd_usage(FILE *f, size_t i)
{
	fprintf(f, "usage: vmm vf %s %s\n\n%s\n", cmds[i].name, cmds[i].args, cmds[i].help);
}

static int parse_int(const char *s, const char *what, int *v)
{
	char *end;
	long l = strtol(s, &end, 10);

	if (!*s || *end || l < 0 || l > 65535) {
		pr_err("'%s' is not a %s: give a decimal number such as 1", s, what);
		return -1;
	}
	*v = (int)l;
	return 0;
}

static void print_mac(const uint8_t m[6])
{
	printf("%02x:%02x:%02x:%02x:%02x:%02x", m[0], m[1], m[2], m[3], m[4], m[5]);
}

static int run(size_t c, char **a, const struct vf_sysfs *s)
{
	char bdf[VF_BDF_LEN], vf[VF_BDF_LEN];
	struct vf_dev d;
	uint8_t mac[6];
	int n;

	if (c == 0)
		return vf_list(s, stdout);
	if (vf_parse_bdf(a[0], bdf) < 0)
		return -1;
	switch (c) {
	case 1: /* create */
		if (parse_int(a[1], "VF count", &n) < 0 || vf_create(s, bdf, n) < 0 || vf_dev_info(s, bdf, &d) < 0)
			return -1;
		printf("%s: %d VFs (driver autoprobe off)", bdf, d.numvfs);
		for (int i = 0; i < d.numvfs; i++)
			if (vf_virtfn(s, bdf, i, vf) == 0)
				printf("%s%s", i ? ", " : ": ", vf);
		printf("\n");
		return 0;
	case 2: /* mac */
		if (parse_int(a[1], "VF index", &n) < 0 || vf_parse_mac(a[2], mac) < 0 ||
		    vf_set_mac(s, bdf, n, mac) < 0)
			return -1;
		printf("%s: VF %d MAC ", bdf, n);
		print_mac(mac);
		printf("\n");
		return 0;
	case 3: /* bind */
	{
		char was[sizeof(d.driver)];

		if (vf_dev_info(s, bdf, &d) < 0 || vf_bind(s, bdf) < 0)
			return -1;
		snprintf(was, sizeof(was), "%s", d.driver[0] ? d.driver : "no driver");
		/* a fresh VF got its IOMMU group only now, from vfio-pci's probe: read it again */
		if (vf_dev_info(s, bdf, &d) < 0)
			return -1;
		printf("%s: bound to vfio-pci (was %s); IOMMU group %d: /dev/vfio/%d\n", bdf, was, d.group,
		       d.group);
		return 0;
	}
	case 4: /* unbind */
		if (vf_unbind(s, bdf) < 0 || vf_dev_info(s, bdf, &d) < 0)
			return -1;
		printf("%s: bound to %s\n", bdf, d.driver[0] ? d.driver : "no driver");
		return 0;
	case 5: /* check */
		return vf_check(s, bdf, stdout) < 0 ? -1 : 0;
	}
	return -1;
}

VMM_HOT_VF int vf_cmd(int argc, char **argv)
{
	const struct vf_sysfs s = { 0 };

	if (argc < 2) {
		pr_err("vmm vf takes a command (vmm vf --help lists them)");
		return 1;
	}
	if (!strcmp(argv[1], "--help") || !strcmp(argv[1], "-h")) {
		usage(stdout);
		return 0;
	}
	for (size_t i = 0; i < NR_CMDS; i++) {
		if (strcmp(argv[1], cmds[i].name))
			continue;
		for (int k = 2; k < argc; k++)
			if (!strcmp(argv[k], "--help") || !strcmp(argv[k], "-h")) {
				cmd_usage(stdout, i);
				return 0;
			}
		if (argc - 2 != cmds[i].nargs) {
			pr_err("vmm vf %s takes %s%s", cmds[i].name, cmds[i].nargs ? cmds[i].args : "no arguments",
			       " (vmm vf --help)");
			return 1;
		}
		return run(i, argv + 2, &s) < 0 ? 1 : 0;
	}
	pr_err("unknown command 'vf %s' (vmm vf --help lists them)", argv[1]);
	return 1;
}
