// SPDX-License-Identifier: MIT
/*
 * vmm vf on a fake /sys: a temp tree with an igb-like PF, two VFs and a NIC sharing one VF's IOMMU
 * group. Writes land in regular files; a fake kernel (the wrote hook) moves driver links on
 * unbind and drivers_probe as the PCI core would, and logs every write in order.
 */
#include <errno.h>
#include <fcntl.h>
#include <ftw.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "kselftest_harness.h"
#include "vf/vf.h"

#define PF "0000:00:03.0"
#define VF0 "0000:00:13.0"
#define VF1 "0000:00:13.2"
#define NIC "0000:00:14.0"
#define BRIDGE "0000:00:10.0"

struct fake_kernel {
	char root[64];
	char log[4096];
	const char *fail_driver; /* drivers_probe does not bind this one */
	int set_ifindex, set_vf, set_ret;
	uint8_t set_mac[6];
};

static void put(const char *root, const char *rel, const char *content)
{
	char p[512], *slash;

	snprintf(p, sizeof(p), "%s/%s", root, rel);
	for (slash = strchr(p + strlen(root) + 1, '/'); slash; slash = strchr(slash + 1, '/')) {
		*slash = '\0';
		mkdir(p, 0755);
		*slash = '/';
	}
	FILE *f = fopen(p, "w");

	if (f) {
		fputs(content, f);
		fclose(f);
	}
}

static void link_to(const char *root, const char *rel, const char *target_rel)
{
	char p[512], t[512];

	snprintf(p, sizeof(p), "%s/%s", root, rel);
	snprintf(t, sizeof(t), "%s/%s", root, target_rel);
	unlink(p);
	if (symlink(t, p))
		perror(p);
}

static char *get(const char *root, const char *rel, char *buf, size_t n)
{
	char p[512];

	snprintf(p, sizeof(p), "%s/%s", root, rel);
	FILE *f = fopen(p, "r");
	size_t l = f ? fread(buf, 1, n - 1, f) : 0;

	buf[l] = '\0';
	if (f)
		fclose(f);
	return buf;
}

static const char *driver_of(const char *root, const char *bdf, char *buf, size_t n)
{
	char p[512], t[512];

	snprintf(p, sizeof(p), "%s/bus/pci/devices/%s/driver", root, bdf);
	ssize_t l = readlink(p, t, sizeof(t) - 1);

	if (l < 0)
		return "";
	t[l] = '\0';
	snprintf(buf, n, "%s", strrchr(t, '/') + 1);
	return buf;
}

static void dev(const char *root, const char *bdf, const char *ids, const char *cls, const char *drv, int group)
{
	char rel[256], v[16], d[16];

	sscanf(ids, "%4s:%4s", v, d);
	snprintf(rel, sizeof(rel), "bus/pci/devices/%s/vendor", bdf);
	put(root, rel, strcat(strcpy((char[32]){ 0 }, "0x"), v));
	snprintf(rel, sizeof(rel), "bus/pci/devices/%s/device", bdf);
	put(root, rel, strcat(strcpy((char[32]){ 0 }, "0x"), d));
	snprintf(rel, sizeof(rel), "bus/pci/devices/%s/class", bdf);
	put(root, rel, cls);
	snprintf(rel, sizeof(rel), "bus/pci/devices/%s/driver_override", bdf);
	put(root, rel, "(null)\n");
	if (drv) {
		char t[128];

		snprintf(rel, sizeof(rel), "bus/pci/devices/%s/driver", bdf);
		snprintf(t, sizeof(t), "bus/pci/drivers/%s", drv);
		link_to(root, rel, t);
	}
	char t[128];

	snprintf(rel, sizeof(rel), "kernel/iommu_groups/%d/devices/%s", group, bdf);
	put(root, rel, "");
	snprintf(rel, sizeof(rel), "bus/pci/devices/%s/iommu_group", bdf);
	snprintf(t, sizeof(t), "kernel/iommu_groups/%d", group);
	link_to(root, rel, t);
}

static void netif(const char *root, const char *bdf, const char *ifname, int ifindex, const char *mac,
		  const char *oper)
{
	char rel[256], v[32];

	snprintf(rel, sizeof(rel), "bus/pci/devices/%s/net/%s/address", bdf, ifname);
	put(root, rel, mac);
	snprintf(rel, sizeof(rel), "bus/pci/devices/%s/net/%s/ifindex", bdf, ifname);
	snprintf(v, sizeof(v), "%d\n", ifindex);
	put(root, rel, v);
	snprintf(rel, sizeof(rel), "bus/pci/devices/%s/net/%s/operstate", bdf, ifname);
	put(root, rel, oper);
}

static void build_tree(const char *r)
{
	static const char *const drivers[] = { "igb", "igbvf", "vfio-pci", "e1000e", "pcieport" };

	for (size_t i = 0; i < sizeof(drivers) / sizeof(drivers[0]); i++) {
		char rel[128];

		snprintf(rel, sizeof(rel), "bus/pci/drivers/%s/unbind", drivers[i]);
		put(r, rel, "");
		snprintf(rel, sizeof(rel), "bus/pci/drivers/%s/bind", drivers[i]);
		put(r, rel, "");
	}
	put(r, "bus/pci/drivers_probe", "");
	dev(r, PF, "8086:10c9", "0x020000\n", "igb", 3);
	put(r, "bus/pci/devices/" PF "/sriov_totalvfs", "7\n");
	put(r, "bus/pci/devices/" PF "/sriov_numvfs", "2\n");
	put(r, "bus/pci/devices/" PF "/sriov_drivers_autoprobe", "0\n");
	netif(r, PF, "eth0", 2, "52:54:00:12:34:56\n", "up\n");
	put(r, "bus/pci/devices/" PF "/net/eth0/carrier", "1\n");
	dev(r, VF0, "8086:10ca", "0x020000\n", "igbvf", 4);
	link_to(r, "bus/pci/devices/" VF0 "/physfn", "bus/pci/devices/" PF);
	link_to(r, "bus/pci/devices/" PF "/virtfn0", "bus/pci/devices/" VF0);
	netif(r, VF0, "eth1", 3, "02:00:00:00:00:13\n", "down\n");
	/* VF1 is unbound and shares group 5 with a NIC on e1000e and a bridge on pcieport */
	dev(r, VF1, "8086:10ca", "0x020000\n", NULL, 5);
	link_to(r, "bus/pci/devices/" VF1 "/physfn", "bus/pci/devices/" PF);
	link_to(r, "bus/pci/devices/" PF "/virtfn1", "bus/pci/devices/" VF1);
	dev(r, NIC, "8086:10d3", "0x020000\n", "e1000e", 5);
	dev(r, BRIDGE, "1b36:000c", "0x060400\n", "pcieport", 5);
}

/* The PCI core's part: unbind drops the driver link; drivers_probe binds the override, or with
 * the PF's autoprobe on, the VF's own driver (igbvf). */
static void fake_wrote(void *ctx, const char *path, const char *value)
{
	struct fake_kernel *k = ctx;
	char drv[64], rel[256], buf[64];
	size_t l = strlen(k->log);

	snprintf(k->log + l, sizeof(k->log) - l, "%s=%s%s", path, strcmp(value, "\n") ? value : "\\n", "\n");
	if (sscanf(path, "bus/pci/drivers/%63[^/]/unbind", drv) == 1) {
		snprintf(rel, sizeof(rel), "%s/bus/pci/devices/%s/driver", k->root, value);
		unlink(rel);
	} else if (!strcmp(path, "bus/pci/drivers_probe")) {
		snprintf(rel, sizeof(rel), "bus/pci/devices/%s/driver_override", value);
		get(k->root, rel, buf, sizeof(buf));
		buf[strcspn(buf, "\n")] = '\0';
		const char *to = NULL;

		if (buf[0] && strcmp(buf, "(null)"))
			to = buf;
		else if (get(k->root, "bus/pci/devices/" PF "/sriov_drivers_autoprobe", drv, sizeof(drv))[0] == '1')
			to = "igbvf";
		if (to && (!k->fail_driver || strcmp(to, k->fail_driver))) {
			char t[128];

			snprintf(rel, sizeof(rel), "bus/pci/devices/%s/driver", value);
			snprintf(t, sizeof(t), "bus/pci/drivers/%s", to);
			link_to(k->root, rel, t);
		}
	}
}

static int fake_set_mac(void *ctx, int ifindex, int vf, const uint8_t mac[6])
{
	struct fake_kernel *k = ctx;

	k->set_ifindex = ifindex;
	k->set_vf = vf;
	memcpy(k->set_mac, mac, 6);
	return k->set_ret;
}

static int fake_get_macs(void *ctx, int ifindex, uint8_t (*macs)[6], bool *valid, int n)
{
	(void)ctx;
	if (ifindex != 2 || n < 2)
		return -ENODEV;
	memcpy(macs[1], (uint8_t[6]){ 0x02, 0, 0, 0, 0, 0x99 }, 6);
	valid[0] = false;
	valid[1] = true;
	return 0;
}

static int rm(const char *p, const struct stat *sb, int flag, struct FTW *ftw)
{
	(void)sb;
	(void)flag;
	(void)ftw;
	return remove(p);
}

FIXTURE(sysfs) {
	struct fake_kernel k;
	struct vf_nl_ops nl;
	struct vf_sysfs s;
	char buf[4096];
};

FIXTURE_SETUP(sysfs)
{
	memset(&self->k, 0, sizeof(self->k));
	strcpy(self->k.root, "/tmp/vf_test.XXXXXX");
	ASSERT_NE(NULL, mkdtemp(self->k.root));
	build_tree(self->k.root);
	self->nl = (struct vf_nl_ops){ .set_mac = fake_set_mac, .get_macs = fake_get_macs, .ctx = &self->k };
	self->s = (struct vf_sysfs){ .root = self->k.root, .nl = &self->nl, .wrote = fake_wrote,
				     .ctx = &self->k, .probe_wait_ms = 100 };
}

FIXTURE_TEARDOWN(sysfs)
{
	nftw(self->k.root, rm, 16, FTW_DEPTH | FTW_PHYS);
}

TEST_F(sysfs, list_one_line_per_device)
{
	char *text = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&text, &len);

	ASSERT_EQ(0, vf_list(&self->s, f));
	fclose(f);
	TH_LOG("\n%s", text);
	EXPECT_NE(NULL, strstr(text, "PF " PF " 8086:10c9 igb       group 3   eth0 link up, VFs 2 of 7, mac "
					 "52:54:00:12:34:56\n"));
	/* a VF with a NIC driver: the MAC of its interface */
	EXPECT_NE(NULL, strstr(text, "VF " VF0 " 8086:10ca igbvf     group 4   vf 0 of " PF
					 ", mac 02:00:00:00:00:13\n"));
	/* an unbound VF: the MAC from the PF's VF info; its group's other members named */
	EXPECT_NE(NULL, strstr(text, "VF " VF1 " 8086:10ca -         group 5   vf 1 of " PF
					 ", mac 02:00:00:00:00:99, group shared with " BRIDGE ", " NIC "\n"));
	int lines = 0;

	for (char *p = text; (p = strchr(p, '\n')); p++)
		lines++;
	EXPECT_EQ(3, lines);
	free(text);
}

TEST_F(sysfs, dev_info)
{
	struct vf_dev d;

	ASSERT_EQ(0, vf_dev_info(&self->s, VF1, &d));
	EXPECT_TRUE(d.is_vf);
	EXPECT_FALSE(d.is_pf);
	EXPECT_STREQ(PF, d.pf);
	EXPECT_EQ(1, d.vf_index);
	EXPECT_EQ(5, d.group);
	EXPECT_STREQ("", d.driver);
	EXPECT_STREQ("", d.driver_override);
	ASSERT_EQ(0, vf_dev_info(&self->s, PF, &d));
	EXPECT_TRUE(d.is_pf);
	EXPECT_EQ(7, d.totalvfs);
	EXPECT_EQ(2, d.numvfs);
	EXPECT_STREQ("eth0", d.ifname);
	EXPECT_EQ(2, d.ifindex);
	EXPECT_EQ(-ENODEV, vf_dev_info(&self->s, "0000:00:1f.0", &d));
}

TEST(bdf_syntax)
{
	char out[VF_BDF_LEN];
	static const char *const bad[] = { "", "0000:00:13", "0000:00:13.8", "0000:00:20.0", "zz:00.0",
					   "0000:00:13.0x", "0000:00:13.0 ", "00000:00:13.0", "13.0", "-1:00.0" };

	ASSERT_EQ(0, vf_parse_bdf("0000:00:13.0", out));
	EXPECT_STREQ("0000:00:13.0", out);
	ASSERT_EQ(0, vf_parse_bdf("00:1f.7", out));
	EXPECT_STREQ("0000:00:1f.7", out);
	ASSERT_EQ(0, vf_parse_bdf("0001:82:00.1", out));
	EXPECT_STREQ("0001:82:00.1", out);
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		EXPECT_EQ(-EINVAL, vf_parse_bdf(bad[i], out)) TH_LOG("'%s' accepted", bad[i]);
	}
}

TEST(mac_syntax)
{
	uint8_t m[6];

	ASSERT_EQ(0, vf_parse_mac("02:00:00:00:00:13", m));
	EXPECT_EQ(0x13, m[5]);
	EXPECT_EQ(-EINVAL, vf_parse_mac("01:00:5e:00:00:01", m)); /* multicast */
	EXPECT_EQ(-EINVAL, vf_parse_mac("02:00:00:00:00", m));
	EXPECT_EQ(-EINVAL, vf_parse_mac("02:00:00:00:00:13:00", m));
	EXPECT_EQ(-EINVAL, vf_parse_mac("2:0:0:0:0:13", m));
}

TEST_F(sysfs, group_viable_alone)
{
	char c[4][VF_BDF_LEN];

	EXPECT_EQ(0, vf_group_blockers(&self->s, VF0, true, c, 4));
	/* but VF0 itself is on igbvf: check refuses and says how to bind it */
	EXPECT_EQ(1, vf_group_blockers(&self->s, VF0, false, c, 4));
	EXPECT_EQ(-EBUSY, vf_check(&self->s, VF0, stdout));
	EXPECT_STREQ("", self->k.log);
}

TEST_F(sysfs, group_not_viable_names_the_culprit_not_the_bridge)
{
	char c[4][VF_BDF_LEN], o[64];

	ASSERT_EQ(1, vf_group_blockers(&self->s, VF1, true, c, 4));
	EXPECT_STREQ(NIC, c[0]);
	/* bind refuses before touching anything */
	EXPECT_EQ(-EBUSY, vf_bind(&self->s, VF1));
	EXPECT_STREQ("", self->k.log);
	EXPECT_STREQ("(null)\n", get(self->k.root, "bus/pci/devices/" VF1 "/driver_override", o, sizeof(o)));
	EXPECT_STREQ("", driver_of(self->k.root, VF1, o, sizeof(o)));
	EXPECT_EQ(-EBUSY, vf_check(&self->s, VF1, stdout));
	/* with the NIC on vfio-pci the group is viable (the bridge never counted) */
	link_to(self->k.root, "bus/pci/devices/" NIC "/driver", "bus/pci/drivers/vfio-pci");
	EXPECT_EQ(0, vf_group_blockers(&self->s, VF1, true, c, 4));
}

TEST_F(sysfs, bind_writes_in_order_then_check)
{
	char o[256], *text = NULL;
	size_t len = 0;

	ASSERT_EQ(0, vf_bind(&self->s, VF0));
	EXPECT_STREQ("bus/pci/devices/" VF0 "/driver_override=vfio-pci\n"
		     "bus/pci/drivers/igbvf/unbind=" VF0 "\n"
		     "bus/pci/drivers_probe=" VF0 "\n", self->k.log);
	EXPECT_STREQ("vfio-pci", driver_of(self->k.root, VF0, o, sizeof(o)));
	EXPECT_STREQ("vfio-pci", get(self->k.root, "bus/pci/devices/" VF0 "/driver_override", o, sizeof(o)));
	FILE *f = open_memstream(&text, &len);

	EXPECT_EQ(0, vf_check(&self->s, VF0, f));
	fclose(f);
	EXPECT_STREQ(VF0 ": IOMMU group 4 is viable (/dev/vfio/4); PF " PF " eth0 link up\n", text);
	free(text);
	/* binding again changes nothing */
	self->k.log[0] = '\0';
	EXPECT_EQ(0, vf_bind(&self->s, VF0));
	EXPECT_STREQ("", self->k.log);
}

TEST_F(sysfs, unbind_gives_it_back_with_autoprobe_on_for_one_probe)
{
	char o[256];

	ASSERT_EQ(0, vf_bind(&self->s, VF0));
	self->k.log[0] = '\0';
	ASSERT_EQ(0, vf_unbind(&self->s, VF0));
	EXPECT_STREQ("bus/pci/devices/" VF0 "/driver_override=\\n\n"
		     "bus/pci/drivers/vfio-pci/unbind=" VF0 "\n"
		     "bus/pci/devices/" PF "/sriov_drivers_autoprobe=1\n"
		     "bus/pci/drivers_probe=" VF0 "\n"
		     "bus/pci/devices/" PF "/sriov_drivers_autoprobe=0\n", self->k.log);
	EXPECT_STREQ("igbvf", driver_of(self->k.root, VF0, o, sizeof(o)));
	EXPECT_STREQ("0", get(self->k.root, "bus/pci/devices/" PF "/sriov_drivers_autoprobe", o, sizeof(o)));
	/* not on vfio-pci: nothing to do */
	self->k.log[0] = '\0';
	EXPECT_EQ(0, vf_unbind(&self->s, VF0));
	EXPECT_STREQ("", self->k.log);
}

TEST_F(sysfs, unbind_with_no_driver_taking_it_goes_back_to_vfio)
{
	char o[64];

	ASSERT_EQ(0, vf_bind(&self->s, VF0));
	self->k.fail_driver = "igbvf";
	EXPECT_EQ(-ENODEV, vf_unbind(&self->s, VF0));
	EXPECT_STREQ("vfio-pci", driver_of(self->k.root, VF0, o, sizeof(o)));
	EXPECT_STREQ("vfio-pci", get(self->k.root, "bus/pci/devices/" VF0 "/driver_override", o, sizeof(o)));
	EXPECT_STREQ("0", get(self->k.root, "bus/pci/devices/" PF "/sriov_drivers_autoprobe", o, sizeof(o)));
}

TEST_F(sysfs, failed_probe_restores_driver_and_override)
{
	char o[64];

	self->k.fail_driver = "vfio-pci";
	EXPECT_EQ(-EIO, vf_bind(&self->s, VF0));
	EXPECT_STREQ("igbvf", driver_of(self->k.root, VF0, o, sizeof(o)));
	/* "(null)" before: cleared again (a lone newline is how sysfs clears it) */
	EXPECT_STREQ("\n", get(self->k.root, "bus/pci/devices/" VF0 "/driver_override", o, sizeof(o)));
}

TEST_F(sysfs, failed_unbind_restores_override)
{
	char o[64], p[512];

	snprintf(p, sizeof(p), "%s/bus/pci/drivers/igbvf/unbind", self->k.root);
	ASSERT_EQ(0, unlink(p));
	EXPECT_EQ(-ENOENT, vf_bind(&self->s, VF0));
	EXPECT_STREQ("igbvf", driver_of(self->k.root, VF0, o, sizeof(o)));
	EXPECT_STREQ("\n", get(self->k.root, "bus/pci/devices/" VF0 "/driver_override", o, sizeof(o)));
	EXPECT_STREQ("bus/pci/devices/" VF0 "/driver_override=vfio-pci\n"
		     "bus/pci/devices/" VF0 "/driver_override=\\n\n", self->k.log);
}

TEST_F(sysfs, bind_refusals_touch_nothing)
{
	char p[512];

	EXPECT_EQ(-EINVAL, vf_bind(&self->s, PF)); /* a PF */
	EXPECT_EQ(-EINVAL, vf_bind(&self->s, NIC)); /* no SR-IOV */
	EXPECT_EQ(-ENODEV, vf_bind(&self->s, "0000:00:1f.0"));
	EXPECT_EQ(-EINVAL, vf_unbind(&self->s, PF));
	snprintf(p, sizeof(p), "%s/bus/pci/drivers/vfio-pci", self->k.root);
	nftw(p, rm, 4, FTW_DEPTH | FTW_PHYS);
	EXPECT_EQ(-ENOENT, vf_bind(&self->s, VF0));
	EXPECT_STREQ("", self->k.log);
}

TEST_F(sysfs, create_goes_through_zero_with_autoprobe_off)
{
	char o[64];

	put(self->k.root, "bus/pci/devices/" PF "/sriov_drivers_autoprobe", "1\n");
	ASSERT_EQ(0, vf_create(&self->s, PF, 3));
	EXPECT_STREQ("bus/pci/devices/" PF "/sriov_drivers_autoprobe=0\n"
		     "bus/pci/devices/" PF "/sriov_numvfs=0\n"
		     "bus/pci/devices/" PF "/sriov_numvfs=3\n", self->k.log);
	EXPECT_STREQ("3", get(self->k.root, "bus/pci/devices/" PF "/sriov_numvfs", o, sizeof(o)));
	/* the same count: nothing written */
	self->k.log[0] = '\0';
	EXPECT_EQ(0, vf_create(&self->s, PF, 3));
	EXPECT_STREQ("", self->k.log);
}

TEST_F(sysfs, create_refusals)
{
	EXPECT_EQ(-ERANGE, vf_create(&self->s, PF, 8));
	EXPECT_EQ(-EINVAL, vf_create(&self->s, VF0, 1));
	EXPECT_EQ(-EINVAL, vf_create(&self->s, NIC, 1));
	/* going through 0 would pull a VF from under vfio-pci */
	link_to(self->k.root, "bus/pci/devices/" VF0 "/driver", "bus/pci/drivers/vfio-pci");
	EXPECT_EQ(-EBUSY, vf_create(&self->s, PF, 1));
	EXPECT_STREQ("", self->k.log);
}

TEST_F(sysfs, mac_through_the_pf)
{
	const uint8_t mac[6] = { 0x02, 0, 0, 0, 0, 0x13 };

	ASSERT_EQ(0, vf_set_mac(&self->s, PF, 1, mac));
	EXPECT_EQ(2, self->k.set_ifindex);
	EXPECT_EQ(1, self->k.set_vf);
	EXPECT_EQ(0, memcmp(mac, self->k.set_mac, 6));
	self->k.set_vf = -1;
	EXPECT_EQ(-EINVAL, vf_set_mac(&self->s, VF0, 0, mac)); /* a VF, not its PF */
	EXPECT_EQ(-ERANGE, vf_set_mac(&self->s, PF, 2, mac));
	EXPECT_EQ(-1, self->k.set_vf);
	self->k.set_ret = -EINVAL;
	EXPECT_EQ(-EINVAL, vf_set_mac(&self->s, PF, 0, mac));
}

TEST_HARNESS_MAIN
