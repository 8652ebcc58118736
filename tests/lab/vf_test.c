// SPDX-License-Identifier: MIT
/*
 * Lab: `vmm vf` on the lab host's igb PF (0000:00:03.0): create a VF (0000:00:13.0, its own IOMMU
 * group), set its MAC from the PF, give it to igbvf, bind it to vfio-pci, check it, give it back,
 * and the refusals: each exits 1 with a clear message and leaves the device as it was. No traffic.
 * The PF is left with 0 VFs so later lab tests start clean.
 */
#include <dirent.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "kselftest_harness.h"
#include "tests/lab/labutil.h"

#define PF "0000:00:03.0"
#define VF "0000:00:13.0"
#define DEVS "/sys/bus/pci/devices/"

static void put(const char *path, const char *v)
{
	FILE *f = fopen(path, "w");

	if (f) {
		fputs(v, f);
		fclose(f);
	}
}

static char *get(const char *path, char *buf, size_t n)
{
	FILE *f = fopen(path, "r");

	buf[0] = '\0';
	if (f) {
		if (!fgets(buf, (int)n, f))
			buf[0] = '\0';
		fclose(f);
	}
	buf[strcspn(buf, "\n")] = '\0';
	return buf;
}

/* The driver's name, "" when none. */
static const char *driver(const char *bdf, char *buf, size_t n)
{
	char p[128], t[256];

	snprintf(p, sizeof(p), DEVS "%s/driver", bdf);
	ssize_t l = readlink(p, t, sizeof(t) - 1);

	if (l < 0)
		return "";
	t[l] = '\0';
	snprintf(buf, n, "%s", strrchr(t, '/') + 1);
	return buf;
}

/* Waits (bounded: igbvf may probe slowly) until bdf's driver is want. */
static bool wait_driver(const char *bdf, const char *want, int secs)
{
	char d[64];

	for (int i = 0; i < secs * 10; i++) {
		if (!strcmp(driver(bdf, d, sizeof(d)), want))
			return true;
		usleep(100 * 1000);
	}
	return false;
}

static void pf_ifname(char *out, size_t n)
{
	DIR *d = opendir(DEVS PF "/net");
	struct dirent *e;

	out[0] = '\0';
	while (d && (e = readdir(d)))
		if (e->d_name[0] != '.')
			snprintf(out, n, "%s", e->d_name);
	if (d)
		closedir(d);
}

static int vf_run(struct result *r, char *const argv[])
{
	result_free(r);
	run_vmm(argv, 60, r);
	return r->status;
}

FIXTURE(vf) {
	struct result r;
};

FIXTURE_SETUP(vf)
{
	memset(&self->r, 0, sizeof(self->r));
	/* loading drivers is the user's job, so the test does it; the PF's driver (igb) comes first */
	ASSERT_EQ(0, system("modprobe igb && modprobe igbvf && modprobe vfio-pci"));
	for (int i = 0; i < 50 && access(DEVS PF "/net", F_OK); i++)
		usleep(100 * 1000);
}

FIXTURE_TEARDOWN(vf)
{
	result_free(&self->r);
	put(DEVS PF "/sriov_numvfs", "0");
}

TEST_F_TIMEOUT(vf, refusals_without_vfs, 300)
{
	char *const bad_bdf[] = { VMM, "vf", "bind", "0000:00:13", NULL };
	char *const absent[] = { VMM, "vf", "check", "0000:00:1f.0", NULL };
	char *const edu_mac[] = { VMM, "vf", "mac", "0000:00:05.0", "0", "02:00:00:00:00:13", NULL };
	char *const too_many[] = { VMM, "vf", "create", PF, "8", NULL };
	char *const pf_bind[] = { VMM, "vf", "bind", PF, NULL };
	char d[64], n[16];

	EXPECT_TRUE(refused_with(bad_bdf, "'0000:00:13' is not a PCI address", &self->r)) TH_LOG("%s", self->r.err);
	EXPECT_TRUE(refused_with(absent, "no PCI device 0000:00:1f.0", &self->r)) TH_LOG("%s", self->r.err);
	EXPECT_TRUE(refused_with(edu_mac, "0000:00:05.0 is not an SR-IOV PF", &self->r)) TH_LOG("%s", self->r.err);
	EXPECT_TRUE(refused_with(too_many, "offers at most 7 VFs", &self->r)) TH_LOG("%s", self->r.err);
	EXPECT_TRUE(refused_with(pf_bind, "is an SR-IOV PF, not a VF", &self->r)) TH_LOG("%s", self->r.err);
	/* the PF as it was */
	EXPECT_STREQ("igb", driver(PF, d, sizeof(d)));
	EXPECT_STREQ("0", get(DEVS PF "/sriov_numvfs", n, sizeof(n)));
}

TEST_F_TIMEOUT(vf, create_mac_bind_check_unbind, 600)
{
	char *const create[] = { VMM, "vf", "create", PF, "1", NULL };
	char *const mac[] = { VMM, "vf", "mac", PF, "0", "02:00:00:00:00:13", NULL };
	char *const list[] = { VMM, "vf", "list", NULL };
	char *const check[] = { VMM, "vf", "check", VF, NULL };
	char *const bind[] = { VMM, "vf", "bind", VF, NULL };
	char *const unbind[] = { VMM, "vf", "unbind", VF, NULL };
	char *const vf_mac[] = { VMM, "vf", "mac", VF, "0", "02:00:00:00:00:14", NULL };
	char *const remove[] = { VMM, "vf", "create", PF, "0", NULL };
	struct result *r = &self->r;
	char ifname[300], cmd[400], buf[128], d[64];

	pf_ifname(ifname, sizeof(ifname));
	ASSERT_NE(0, ifname[0]) TH_LOG("igb made no interface under " DEVS PF "/net");

	ASSERT_EQ(0, vf_run(r, create)) TH_LOG("%s", r->err);
	EXPECT_NE(NULL, strstr(r->out, PF ": 1 VFs (driver autoprobe off): " VF)) TH_LOG("%s", r->out);
	EXPECT_STREQ("0", get(DEVS PF "/sriov_drivers_autoprobe", buf, sizeof(buf)));
	ASSERT_EQ(0, access(DEVS VF, F_OK));
	EXPECT_STREQ("", driver(VF, d, sizeof(d))); /* autoprobe off: nobody took it */

	/* a VF of a PF whose link is down never leaves reset: the PF up first */
	snprintf(cmd, sizeof(cmd), "ip link set %s up", ifname);
	ASSERT_EQ(0, system(cmd));
	snprintf(cmd, sizeof(cmd), "/sys/class/net/%s/operstate", ifname);
	for (int i = 0; i < 100 && strcmp(get(cmd, buf, sizeof(buf)), "up"); i++)
		usleep(100 * 1000);
	TH_LOG("PF %s operstate %s", ifname, buf);

	ASSERT_EQ(0, vf_run(r, mac)) TH_LOG("%s", r->err);
	ASSERT_EQ(0, vf_run(r, list)) TH_LOG("%s", r->err);
	TH_LOG("vmm vf list:\n%s", r->out);
	/* unbound: its MAC comes from the PF's VF info over netlink */
	EXPECT_NE(NULL, strstr(r->out, "VF " VF " ")) TH_LOG("%s", r->out);
	EXPECT_NE(NULL, strstr(r->out, "vf 0 of " PF ", mac 02:00:00:00:00:13")) TH_LOG("%s", r->out);
	EXPECT_NE(NULL, strstr(r->out, "PF " PF " ")) TH_LOG("%s", r->out);

	/* unbound, check refuses and says to bind */
	EXPECT_TRUE(refused_with(check, "is bound to no driver", r)) TH_LOG("%s", r->err);

	/* from no driver, unbind hands it to its own driver */
	ASSERT_EQ(0, vf_run(r, unbind)) TH_LOG("%s", r->err);
	ASSERT_TRUE(wait_driver(VF, "igbvf", 20));
	EXPECT_STREQ("0", get(DEVS PF "/sriov_drivers_autoprobe", buf, sizeof(buf)));
	/* held by igbvf: check refuses, igbvf keeps it */
	EXPECT_TRUE(refused_with(check, "is held by igbvf", r)) TH_LOG("%s", r->err);
	EXPECT_STREQ("igbvf", driver(VF, d, sizeof(d)));

	ASSERT_EQ(0, vf_run(r, bind)) TH_LOG("%s", r->err);
	TH_LOG("%s", r->out);
	EXPECT_STREQ("vfio-pci", driver(VF, d, sizeof(d)));
	char group[16], dev[64];

	snprintf(cmd, sizeof(cmd), DEVS VF "/iommu_group");
	ssize_t l = readlink(cmd, buf, sizeof(buf) - 1);

	ASSERT_GT(l, 0);
	buf[l] = '\0';
	snprintf(group, sizeof(group), "%s", strrchr(buf, '/') + 1);
	snprintf(dev, sizeof(dev), "/dev/vfio/%s", group);
	EXPECT_EQ(0, access(dev, F_OK)) TH_LOG("no %s", dev);
	EXPECT_NE(NULL, strstr(r->out, dev)) TH_LOG("%s", r->out);

	ASSERT_EQ(0, vf_run(r, check)) TH_LOG("%s", r->err);
	TH_LOG("%s%s", r->out, r->err);
	EXPECT_NE(NULL, strstr(r->out, "is viable")) TH_LOG("%s", r->out);
	EXPECT_NE(NULL, strstr(r->out, "link up")) TH_LOG("%s", r->out);

	/* mac on the VF's own address: refused, names its PF; nothing changes */
	EXPECT_TRUE(refused_with(vf_mac, VF " is a VF (number 0 of PF " PF "), not a PF", r)) TH_LOG("%s", r->err);
	EXPECT_STREQ("vfio-pci", driver(VF, d, sizeof(d)));

	ASSERT_EQ(0, vf_run(r, unbind)) TH_LOG("%s", r->err);
	EXPECT_TRUE(wait_driver(VF, "igbvf", 20)) TH_LOG("driver now '%s'", driver(VF, d, sizeof(d)));
	EXPECT_STREQ("", get(DEVS VF "/driver_override", buf, sizeof(buf))[0] == '(' ? "" : buf);

	ASSERT_EQ(0, vf_run(r, remove)) TH_LOG("%s", r->err);
	EXPECT_STREQ("0", get(DEVS PF "/sriov_numvfs", buf, sizeof(buf)));
}

TEST_HARNESS_MAIN
