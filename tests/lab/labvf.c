// SPDX-License-Identifier: MIT
/* The lab host's igb VF prepared for passthrough with `vmm vf`, as the lab tests and bench use it. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "tests/lab/labutil.h"

#define PF_DIR "/sys/bus/pci/devices/" LAB_PF

/* Waits (up to 10 s) for path to appear. */
static void wait_for(const char *path)
{
	for (int i = 0; i < 100 && access(path, F_OK); i++)
		usleep(100 * 1000);
}

int lab_vf_create(char *dev, size_t n)
{
	FILE *p;

	dev[0] = 0;
	lab_sh("modprobe igb; modprobe vfio-pci; modprobe vfio_iommu_type1");
	lab_sh("echo 0 > " PF_DIR "/sriov_numvfs 2>/dev/null"); /* a failed run's leftovers */
	wait_for(PF_DIR "/net");
	if (lab_sh(VMM " vf create " LAB_PF " 1 >/dev/null"))
		return -1;
	p = popen("ls " PF_DIR "/net/ 2>/dev/null | head -1", "r");
	if (p) {
		if (!fgets(dev, n, p))
			dev[0] = 0;
		pclose(p);
	}
	dev[strcspn(dev, "\n")] = 0;
	return 0;
}

int lab_vf_bind(void)
{
	/* the SMMU gives the new VF its IOMMU group a moment after it appears */
	wait_for("/sys/bus/pci/devices/" LAB_VF "/iommu_group");
	if (lab_sh(VMM " vf mac " LAB_PF " 0 02:00:00:00:00:13 >/dev/null") ||
	    lab_sh(VMM " vf bind " LAB_VF " >/dev/null"))
		return -1;
	return 0;
}

void lab_vf_remove(void)
{
	lab_sh("echo 0 > " PF_DIR "/sriov_numvfs");
}
