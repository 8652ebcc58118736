// SPDX-License-Identifier: MIT
/*
 * Lab: an igb VF passed through with --vfio. The lab host's PF (0000:00:03.0) gets one VF
 * (0000:00:13.0, its own IOMMU group) prepared with `vmm vf`; the test guest loads igbvf and pings
 * the PF over IPv6 link-local (the igb switches VF<->PF traffic inside the emulated NIC; nothing
 * leaves the machine). The VF's MSI-X interrupts must reach the guest with no userspace exit per
 * packet, and vmm's vLPI report must say, per vector, that KVM forwards them as GICv4 vLPIs under
 * gic-version=4 and injects them in software under gic-version=3. After exit the VF is back on
 * the host, reset, still bound to vfio-pci.
 */
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "kselftest_harness.h"
#include "tests/lab/labutil.h"

#define PF "0000:00:03.0"
#define VF "0000:00:13.0"

static int sh(const char *cmd)
{
	return system(cmd);
}

/* The PF's network interface name. */
static const char *pf_dev(char *buf, size_t n)
{
	FILE *p = popen("ls /sys/bus/pci/devices/" PF "/net/ 2>/dev/null | head -1", "r");

	buf[0] = 0;
	if (p) {
		if (!fgets(buf, n, p))
			buf[0] = 0;
		pclose(p);
	}
	buf[strcspn(buf, "\n")] = 0;
	return buf;
}

static bool gicv4(void)
{
	return sh("dmesg | grep -q 'GICv4 support enabled'") == 0;
}

/* Sums a numeric column ("vmm: N  mmio ...") of vmm's per-vCPU exit table. */
static unsigned long long mmio_exits(const char *err)
{
	unsigned long long sum = 0, mmio;
	int id;

	for (const char *p = err; (p = strstr(p, "vmm: ")); p++)
		if (sscanf(p, "vmm: %d %llu", &id, &mmio) == 2 && id >= 0 && id < 64)
			sum += mmio;
	return sum;
}

FIXTURE(vfio) {
	struct result r;
	char dev[64];
};

FIXTURE_SETUP(vfio)
{
	char cmd[512];

	memset(&self->r, 0, sizeof(self->r));
	sh("modprobe igb; modprobe vfio-pci; modprobe vfio_iommu_type1");
	for (int i = 0; i < 100 && access("/sys/bus/pci/devices/" PF "/net", F_OK); i++)
		usleep(100 * 1000);
	ASSERT_EQ(0, sh(VMM " vf create " PF " 1 >/dev/null"));
	ASSERT_NE(0, pf_dev(self->dev, sizeof(self->dev))[0]);
	snprintf(cmd, sizeof(cmd), "echo 0 > /proc/sys/net/ipv6/conf/%s/accept_dad; ip link set %s up && "
		 "ip -6 addr add fe80::1/64 dev %s", self->dev, self->dev, self->dev);
	ASSERT_EQ(0, sh(cmd));
	ASSERT_EQ(0, sh(VMM " vf mac " PF " 0 02:00:00:00:00:13 >/dev/null"));
	ASSERT_EQ(0, sh(VMM " vf bind " VF " >/dev/null"));
}

FIXTURE_TEARDOWN(vfio)
{
	result_free(&self->r);
	sh("echo 0 > /sys/bus/pci/devices/" PF "/sriov_numvfs");
}

TEST_F_TIMEOUT(vfio, igb_vf_pings_with_per_vector_vlpi_report, 900)
{
	char *argv[40], v[64], drv[256];
	char *const extra[] = { "--vfio", VF, NULL };
	bool v4 = gicv4();

	test_guest_argv(argv, 40, "vf", extra);
	run_vmm(argv, 600, &self->r);
	TH_LOG("exit %d after %.1f s", self->r.status, self->r.secs);
	printf("%s", self->r.err);
	ASSERT_EQ(0, self->r.status) TH_LOG("stderr: %s\nstdout: %s", self->r.err, self->r.out);
	ASSERT_NE(NULL, marker(self->r.out, "GUEST-PING6", v, sizeof(v))) TH_LOG("%s", self->r.out);
	EXPECT_STREQ("1", v) TH_LOG("the guest's VF could not reach the PF: %s", self->r.out);
	unsigned long long pings = marker(self->r.out, "GUEST-PINGS", v, sizeof(v)) ? strtoull(v, NULL, 10) : 0;
	/* the guest's MSI-X vectors of the VF fired */
	unsigned long long guest_irqs = 0;

	for (const char *p = self->r.out; (p = strstr(p, "GUEST-IRQ ")); p++) {
		unsigned long c0 = 0, c1 = 0;
		size_t n = strcspn(p, "\n");
		char line[256];

		snprintf(line, sizeof(line), "%.*s", (int)n, p);
		if (strstr(line, "MSIX") && !strstr(line, "virtio") &&
		    sscanf(line, "GUEST-IRQ %*d: %lu %lu", &c0, &c1) >= 1)
			guest_irqs += c0 + c1;
	}
	EXPECT_GT(guest_irqs, 0) TH_LOG("%s", self->r.out);
	/* the report: one line for the device, every vector judged */
	const char *rep = strstr(self->r.err, "vmm: vfio " VF " -> ");

	ASSERT_NE(NULL, rep) TH_LOG("no vLPI report in: %s", self->r.err);
	char line[1024];

	snprintf(line, sizeof(line), "%.*s", (int)strcspn(rep, "\n"), rep);
	if (v4) {
		EXPECT_NE(NULL, strstr(line, "vLPI")) TH_LOG("%s", line);
		EXPECT_EQ(NULL, strstr(line, "software")) TH_LOG("%s", line);
	} else {
		EXPECT_NE(NULL, strstr(line, "software")) TH_LOG("%s", line);
		EXPECT_EQ(NULL, strstr(line, "vLPI (")) TH_LOG("%s", line);
	}
	unsigned long long exits = mmio_exits(self->r.err);

	printf("# VFIO gic%d: %s\n", v4 ? 4 : 3, line);
	printf("# VFIO gic%d: %llu pings, %llu guest VF interrupts, %llu userspace MMIO exits in the whole "
	       "run (%.1f per 1000 packets, set-up included)\n", v4 ? 4 : 3, pings, guest_irqs, exits,
	       pings ? 1000.0 * exits / pings : 0.0);
	/* after exit: the VF is back on the host, still on vfio-pci (reset by vmm on the way out) */
	snprintf(line, sizeof(line), "readlink /sys/bus/pci/devices/" VF "/driver | grep -q vfio-pci");
	EXPECT_EQ(0, sh(line));
	(void)drv;
}

TEST_F(vfio, refusals_leave_the_device_as_it_was)
{
	char *const bad[] = { VMM, "run", "--vfio", "zz:00.0", NULL };
	char *const absent[] = { VMM, "run", "--vfio", "0000:00:1f.0", NULL };
	char *const held[] = { VMM, "run", "--vfio", PF, NULL };

	EXPECT_TRUE(refused_with(bad, "expected a PCI address", &self->r)) TH_LOG("%s", self->r.err);
	EXPECT_TRUE(refused_with(absent, "no PCI device", &self->r)) TH_LOG("%s", self->r.err);
	/* the PF is held by igb: its group cannot be opened for vfio */
	EXPECT_TRUE(refused_with(held, "vfio", &self->r)) TH_LOG("%s", self->r.err);
	EXPECT_EQ(0, sh("readlink /sys/bus/pci/devices/" PF "/driver | grep -q igb"));
}

TEST_HARNESS_MAIN
