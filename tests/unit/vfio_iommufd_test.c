// SPDX-License-Identifier: MIT
/*
 * The VFIO backends against a fake kernel (tests/unit/fake_vfio.c): the automatic choice and the
 * override; iommufd's calls in order (IOAS_ALLOC, the cdev opened, KVM told before the bind, BIND
 * with the iommufd, ATTACH_PT to the IOAS, IOVA_RANGES after it, a MAP per RAM region at IOVA =
 * GPA), RAM over a reserved range refused naming both ranges, no cdev, a busy device, a VF token;
 * and the legacy container's calls, which the refactor behind the seam must keep as they were.
 */
#include <errno.h>
#include <fcntl.h>
#include <linux/iommufd.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "kselftest_harness.h"
#include "tests/unit/fake_kvm.h"
#include "tests/unit/fake_vfio.h"
#include "vfio/vfio.h"

#define BDF "0000:00:13.0"
#define TOKEN "2ab74924-c335-45f4-9b16-8569e5b08258"
#define RAM2 0x100000000ULL

static struct vm vm;

FIXTURE(be) {
	struct fake_kvm fk;
	struct fake_vfio fv;
	struct vfio_sys sys;
	struct vfio_container c;
	char err[4096];
	FILE *cap;
	int saved_stderr;
};

FIXTURE_SETUP(be)
{
	ASSERT_EQ(0, fake_vm_init(&vm, &self->fk, 1 << 20, 32));
	fake_vfio_init(&self->fv);
	self->sys = fake_vfio_sys(&self->fv);
	self->cap = NULL;
}

FIXTURE_TEARDOWN(be)
{
	/* regions after the first came from vm_mem_add: mmap'd, not the fake's heap RAM */
	for (int i = 1; i < vm.nr_mem; i++)
		munmap(vm.mem[i].hva, vm.mem[i].size);
	vm.nr_mem = vm.nr_mem ? 1 : 0;
	fake_vm_free(&vm);
}

/* stderr into self->err between these two, to check what the backends say */
static void capture(FIXTURE_DATA(be) *self)
{
	fflush(stderr);
	self->cap = tmpfile();
	self->saved_stderr = dup(2);
	dup2(fileno(self->cap), 2);
}

static const char *captured(FIXTURE_DATA(be) *self)
{
	fflush(stderr);
	dup2(self->saved_stderr, 2);
	close(self->saved_stderr);
	rewind(self->cap);
	size_t n = fread(self->err, 1, sizeof(self->err) - 1, self->cap);

	self->err[n] = 0;
	fclose(self->cap);
	self->cap = NULL;
	return self->err;
}

static int open_be(FIXTURE_DATA(be) *self, enum vfio_backend_kind kind, bool token)
{
	return vfio_open(&self->c, &vm, kind, token, &self->sys);
}

/* The fd an open of path returned (-1: no such open). */
static int opened(FIXTURE_DATA(be) *self, const char *path)
{
	int i = fake_vfio_find_open(&self->fv, path, 0);

	return i < 0 ? -1 : self->fv.call[i].fd;
}

TEST_F(be, auto_choice)
{
	char why[96];

	EXPECT_EQ(VFIO_BACKEND_IOMMUFD, vfio_backend_choose(&self->sys, VFIO_BACKEND_AUTO, false, why, sizeof(why)));
	EXPECT_NE(NULL, strstr(why, "/dev/iommu and /dev/vfio/devices exist")) TH_LOG("%s", why);
	/* a VF token needs the legacy backend */
	EXPECT_EQ(VFIO_BACKEND_LEGACY, vfio_backend_choose(&self->sys, VFIO_BACKEND_AUTO, true, why, sizeof(why)));
	EXPECT_NE(NULL, strstr(why, "VF token")) TH_LOG("%s", why);
	self->fv.dev_vfio_devices = false;
	EXPECT_EQ(VFIO_BACKEND_LEGACY, vfio_backend_choose(&self->sys, VFIO_BACKEND_AUTO, false, why, sizeof(why)));
	EXPECT_NE(NULL, strstr(why, "no /dev/vfio/devices")) TH_LOG("%s", why);
	self->fv.dev_vfio_devices = true;
	self->fv.dev_iommu = false;
	EXPECT_EQ(VFIO_BACKEND_LEGACY, vfio_backend_choose(&self->sys, VFIO_BACKEND_AUTO, false, why, sizeof(why)));
	EXPECT_NE(NULL, strstr(why, "no /dev/iommu")) TH_LOG("%s", why);
	self->fv.dev_vfio_devices = false;
	EXPECT_EQ(VFIO_BACKEND_LEGACY, vfio_backend_choose(&self->sys, VFIO_BACKEND_AUTO, false, why, sizeof(why)));
}

TEST_F(be, override)
{
	char why[96];

	EXPECT_EQ(VFIO_BACKEND_LEGACY, vfio_backend_choose(&self->sys, VFIO_BACKEND_LEGACY, false, why, sizeof(why)));
	EXPECT_STREQ("--vfio-backend legacy", why);
	self->fv.dev_iommu = false;
	EXPECT_EQ(VFIO_BACKEND_IOMMUFD, vfio_backend_choose(&self->sys, VFIO_BACKEND_IOMMUFD, false, why, sizeof(why)));
	EXPECT_STREQ("--vfio-backend iommufd", why);
	/* forced onto a host without iommufd: a clear refusal, nothing left open */
	capture(self);
	EXPECT_EQ(-ENOENT, open_be(self, VFIO_BACKEND_IOMMUFD, false));
	const char *e = captured(self);

	EXPECT_NE(NULL, strstr(e, "vfio backend: iommufd (--vfio-backend iommufd)")) TH_LOG("%s", e);
	EXPECT_NE(NULL, strstr(e, "cannot open /dev/iommu")) TH_LOG("%s", e);
	EXPECT_NE(NULL, strstr(e, "--vfio-backend legacy")) TH_LOG("%s", e);
	EXPECT_EQ(0, self->fv.open_fds);
	vfio_close(&self->c);
	/* legacy forced on an iommufd host */
	self->fv.dev_iommu = true;
	capture(self);
	ASSERT_EQ(0, open_be(self, VFIO_BACKEND_LEGACY, false));
	EXPECT_NE(NULL, strstr(captured(self), "vfio backend: legacy (--vfio-backend legacy)"));
	EXPECT_LE(0, opened(self, "/dev/vfio/vfio"));
	EXPECT_EQ(-1, opened(self, "/dev/iommu"));
	vfio_close(&self->c);
	EXPECT_EQ(0, self->fv.open_fds);
}

TEST_F(be, iommufd_sequence)
{
	struct fake_vfio *fv = &self->fv;

	capture(self);
	ASSERT_EQ(0, open_be(self, VFIO_BACKEND_AUTO, false));
	EXPECT_NE(NULL, strstr(captured(self), "vfio backend: iommufd (auto: /dev/iommu and /dev/vfio/devices exist)"))
		TH_LOG("%s", self->err);
	int iommufd = opened(self, "/dev/iommu");
	int alloc = fake_vfio_find(fv, IOMMU_IOAS_ALLOC, 0);
	int kvmdev = fake_vfio_find(fv, KVM_CREATE_DEVICE, 0);

	ASSERT_LE(0, iommufd);
	ASSERT_LE(0, alloc);
	EXPECT_EQ(iommufd, fv->call[alloc].fd);
	ASSERT_LT(alloc, kvmdev);
	kvmdev = fv->call[kvmdev].arg_fd;
	EXPECT_EQ(0, fake_vfio_count(fv, IOMMU_IOAS_MAP)) TH_LOG("nothing is mapped before a device is attached");

	int from = fv->nr;
	int dev = vfio_add_device(&self->c, BDF, NULL);

	ASSERT_LE(0, dev);
	EXPECT_EQ(dev, opened(self, "/dev/vfio/devices/vfio3"));
	int add = fake_vfio_find(fv, KVM_SET_DEVICE_ATTR, from);
	int bind = fake_vfio_find(fv, VFIO_DEVICE_BIND_IOMMUFD, from);
	int attach = fake_vfio_find(fv, VFIO_DEVICE_ATTACH_IOMMUFD_PT, from);
	int ranges = fake_vfio_find(fv, IOMMU_IOAS_IOVA_RANGES, from);
	int map = fake_vfio_find(fv, IOMMU_IOAS_MAP, from);

	/* KVM first (drivers that need it take it at bind), then bind, attach, ranges, map */
	ASSERT_LT(fake_vfio_find_open(fv, "/dev/vfio/devices/vfio3", from), add);
	ASSERT_LT(add, bind);
	ASSERT_LT(bind, attach);
	ASSERT_LT(attach, ranges);
	ASSERT_LT(ranges, map);
	EXPECT_EQ(kvmdev, fv->call[add].fd);
	EXPECT_EQ(dev, fv->call[add].arg_fd);
	EXPECT_EQ(dev, fv->call[bind].fd);
	EXPECT_EQ(iommufd, fv->call[bind].arg_fd);
	EXPECT_EQ(0, fv->call[bind].flags);
	EXPECT_EQ(dev, fv->call[attach].fd);
	EXPECT_EQ(7, fv->call[attach].id);
	EXPECT_EQ(iommufd, fv->call[ranges].fd);
	EXPECT_EQ(7, fv->call[ranges].id);
	EXPECT_EQ(2, self->c.nr_valid);
	EXPECT_EQ(0x8100000, self->c.valid[1].start);
	EXPECT_EQ(iommufd, fv->call[map].fd);
	EXPECT_EQ(7, fv->call[map].id);
	EXPECT_EQ(IOMMU_IOAS_MAP_FIXED_IOVA | IOMMU_IOAS_MAP_READABLE | IOMMU_IOAS_MAP_WRITEABLE, fv->call[map].flags);
	EXPECT_EQ(FAKE_RAM_BASE, fv->call[map].iova);
	EXPECT_EQ(1 << 20, fv->call[map].size);
	EXPECT_EQ((uintptr_t)vm.mem[0].hva, fv->call[map].va);
	EXPECT_EQ(1, fake_vfio_count(fv, IOMMU_IOAS_MAP));

	/* RAM added later is mapped too, once */
	ASSERT_EQ(0, vm_mem_add(&vm, RAM2, 2 << 20));
	ASSERT_EQ(2, fake_vfio_count(fv, IOMMU_IOAS_MAP));
	map = fake_vfio_find(fv, IOMMU_IOAS_MAP, map + 1);
	EXPECT_EQ(RAM2, fv->call[map].iova);
	EXPECT_EQ(2 << 20, fv->call[map].size);
	EXPECT_EQ((uintptr_t)vm.mem[1].hva, fv->call[map].va);
	EXPECT_EQ(3ULL << 20, self->c.dma_bytes);

	/* a second device: its own bind and attach, the ranges read again, RAM not mapped again */
	int dev2 = vfio_add_device(&self->c, BDF, NULL);

	ASSERT_LE(0, dev2);
	EXPECT_EQ(2, fake_vfio_count(fv, VFIO_DEVICE_BIND_IOMMUFD));
	EXPECT_EQ(2, fake_vfio_count(fv, IOMMU_IOAS_IOVA_RANGES));
	EXPECT_EQ(2, fake_vfio_count(fv, IOMMU_IOAS_MAP));

	/* the devices close first (vfio_pci_destroy), then the backend: nothing stays open */
	self->sys.close(self->sys.ctx, dev);
	self->sys.close(self->sys.ctx, dev2);
	vfio_close(&self->c);
	EXPECT_EQ(0, fv->open_fds);
	EXPECT_EQ(FV_CLOSE, fv->call[fv->nr - 1].kind);
	EXPECT_EQ(iommufd, fv->call[fv->nr - 1].fd) TH_LOG("the iommufd goes last");
	EXPECT_EQ(kvmdev, fv->call[fv->nr - 2].fd);
}

TEST_F(be, iommufd_reserved_clash)
{
	/* guest RAM at 0x8000_0000 (1 MiB) over a reserved window at 0x8008_0000 */
	self->fv.ranges[0] = (struct vfio_valid_range){ 0, 0x8007ffff };
	self->fv.ranges[1] = (struct vfio_valid_range){ 0x800a0000, UINT64_MAX };
	ASSERT_EQ(0, open_be(self, VFIO_BACKEND_IOMMUFD, false));
	capture(self);
	EXPECT_EQ(-EINVAL, vfio_add_device(&self->c, BDF, NULL));
	const char *e = captured(self);

	EXPECT_NE(NULL, strstr(e, "guest RAM 0x80000000-0x800fffff overlaps the IOMMU's reserved IOVA range "
			       "0x80080000-0x8009ffff")) TH_LOG("%s", e);
	EXPECT_EQ(0, fake_vfio_count(&self->fv, IOMMU_IOAS_MAP));
	vfio_close(&self->c);
}

TEST_F(be, iommufd_no_cdev)
{
	ASSERT_EQ(0, open_be(self, VFIO_BACKEND_IOMMUFD, false));
	self->fv.cdev = NULL;
	capture(self);
	EXPECT_EQ(-ENODEV, vfio_add_device(&self->c, BDF, NULL));
	const char *e = captured(self);

	EXPECT_NE(NULL, strstr(e, "no VFIO device cdev in /sys/bus/pci/devices/" BDF "/vfio-dev")) TH_LOG("%s", e);
	EXPECT_NE(NULL, strstr(e, "CONFIG_VFIO_DEVICE_CDEV")) TH_LOG("%s", e);
	EXPECT_NE(NULL, strstr(e, "vmm vf bind")) TH_LOG("%s", e);
	/* no such device at all */
	self->fv.pci_exists = false;
	capture(self);
	EXPECT_EQ(-ENODEV, vfio_add_device(&self->c, BDF, NULL));
	e = captured(self);
	EXPECT_NE(NULL, strstr(e, "no PCI device " BDF " on this host")) TH_LOG("%s", e);
	EXPECT_EQ(0, fake_vfio_count(&self->fv, VFIO_DEVICE_BIND_IOMMUFD));
	vfio_close(&self->c);
	EXPECT_EQ(0, self->fv.open_fds);
}

TEST_F(be, iommufd_bind_busy)
{
	ASSERT_EQ(0, open_be(self, VFIO_BACKEND_IOMMUFD, false));
	self->fv.bind_errno = EBUSY;
	capture(self);
	EXPECT_EQ(-EBUSY, vfio_add_device(&self->c, BDF, NULL));
	const char *e = captured(self);

	EXPECT_NE(NULL, strstr(e, "VFIO_DEVICE_BIND_IOMMUFD: Device or resource busy (the device is in use"))
		TH_LOG("%s", e);
	EXPECT_EQ(0, fake_vfio_count(&self->fv, VFIO_DEVICE_ATTACH_IOMMUFD_PT));
	EXPECT_EQ(0, fake_vfio_count(&self->fv, IOMMU_IOAS_MAP));
	vfio_close(&self->c);
	EXPECT_EQ(0, self->fv.open_fds) TH_LOG("the cdev fd must be closed on the way out");
}

TEST_F(be, iommufd_token_refused)
{
	ASSERT_EQ(0, open_be(self, VFIO_BACKEND_IOMMUFD, true));
	capture(self);
	EXPECT_EQ(-EOPNOTSUPP, vfio_add_device(&self->c, BDF, TOKEN));
	const char *e = captured(self);

	EXPECT_NE(NULL, strstr(e, "cannot pass a VF token")) TH_LOG("%s", e);
	EXPECT_NE(NULL, strstr(e, "--vfio-backend legacy")) TH_LOG("%s", e);
	EXPECT_EQ(-1, opened(self, "/dev/vfio/devices/vfio3"));
	vfio_close(&self->c);
}

TEST_F(be, legacy_sequence)
{
	struct fake_vfio *fv = &self->fv;

	fv->dev_iommu = false;
	capture(self);
	ASSERT_EQ(0, open_be(self, VFIO_BACKEND_AUTO, false));
	EXPECT_NE(NULL, strstr(captured(self), "vfio backend: legacy (auto: no /dev/iommu"));
	int container = opened(self, "/dev/vfio/vfio");
	int ver = fake_vfio_find(fv, VFIO_GET_API_VERSION, 0);
	int ext = fake_vfio_find(fv, VFIO_CHECK_EXTENSION, 0);
	int kvmdev = fake_vfio_find(fv, KVM_CREATE_DEVICE, 0);

	ASSERT_LE(0, container);
	ASSERT_LE(0, ver);
	ASSERT_LT(ver, ext);
	ASSERT_LT(ext, kvmdev);
	EXPECT_EQ(container, fv->call[ver].fd);
	EXPECT_EQ(container, fv->call[ext].fd);
	EXPECT_EQ(VFIO_TYPE1v2_IOMMU, fv->call[ext].arg);
	kvmdev = fv->call[kvmdev].arg_fd;

	int from = fv->nr;
	int dev = vfio_add_device(&self->c, BDF, NULL);

	ASSERT_LE(0, dev);
	int group = opened(self, "/dev/vfio/12");
	int st = fake_vfio_find(fv, VFIO_GROUP_GET_STATUS, from);
	int set = fake_vfio_find(fv, VFIO_GROUP_SET_CONTAINER, from);
	int iommu = fake_vfio_find(fv, VFIO_SET_IOMMU, from);
	int info = fake_vfio_find(fv, VFIO_IOMMU_GET_INFO, from);
	int map = fake_vfio_find(fv, VFIO_IOMMU_MAP_DMA, from);
	int add = fake_vfio_find(fv, KVM_SET_DEVICE_ATTR, from);
	int get = fake_vfio_find(fv, VFIO_GROUP_GET_DEVICE_FD, from);

	ASSERT_LE(0, group);
	ASSERT_LT(fake_vfio_find_open(fv, "/dev/vfio/12", from), st);
	ASSERT_LT(st, set);
	ASSERT_LT(set, iommu);
	ASSERT_LT(iommu, info);
	ASSERT_LT(info, map);
	ASSERT_LT(map, add);
	ASSERT_LT(add, get);
	EXPECT_EQ(group, fv->call[st].fd);
	EXPECT_EQ(group, fv->call[set].fd);
	EXPECT_EQ(container, fv->call[set].arg_fd);
	EXPECT_EQ(container, fv->call[iommu].fd);
	EXPECT_EQ(VFIO_TYPE1v2_IOMMU, fv->call[iommu].arg);
	EXPECT_EQ(2, fake_vfio_count(fv, VFIO_IOMMU_GET_INFO)) TH_LOG("a probe, then the capability chain");
	EXPECT_EQ(2, self->c.nr_valid);
	EXPECT_EQ(0x7ffffff, self->c.valid[0].end);
	EXPECT_EQ(0x8100000, self->c.valid[1].start);
	EXPECT_EQ(container, fv->call[map].fd);
	EXPECT_EQ(VFIO_DMA_MAP_FLAG_READ | VFIO_DMA_MAP_FLAG_WRITE, fv->call[map].flags);
	EXPECT_EQ(FAKE_RAM_BASE, fv->call[map].iova);
	EXPECT_EQ(1 << 20, fv->call[map].size);
	EXPECT_EQ((uintptr_t)vm.mem[0].hva, fv->call[map].va);
	EXPECT_EQ(kvmdev, fv->call[add].fd);
	EXPECT_EQ(group, fv->call[add].arg_fd) TH_LOG("legacy tells KVM the group");
	EXPECT_EQ(group, fv->call[get].fd);
	EXPECT_STREQ(BDF, fv->call[get].path);

	/* RAM added later is mapped; a second device of the same group reuses it */
	ASSERT_EQ(0, vm_mem_add(&vm, RAM2, 1 << 20));
	EXPECT_EQ(2, fake_vfio_count(fv, VFIO_IOMMU_MAP_DMA));
	int dev2 = vfio_add_device(&self->c, BDF, TOKEN);

	ASSERT_LE(0, dev2);
	EXPECT_EQ(1, fake_vfio_count(fv, VFIO_GROUP_SET_CONTAINER));
	EXPECT_EQ(1, fake_vfio_count(fv, VFIO_SET_IOMMU));
	get = fake_vfio_find(fv, VFIO_GROUP_GET_DEVICE_FD, get + 1);
	EXPECT_STREQ(BDF " vf_token=" TOKEN, fv->call[get].path);

	self->sys.close(self->sys.ctx, dev);
	self->sys.close(self->sys.ctx, dev2);
	from = fv->nr;
	vfio_close(&self->c);
	int unset = fake_vfio_find(fv, VFIO_GROUP_UNSET_CONTAINER, from);

	ASSERT_LE(0, unset);
	EXPECT_EQ(group, fv->call[unset].fd);
	EXPECT_EQ(group, fv->call[unset + 1].fd);
	EXPECT_EQ(kvmdev, fv->call[unset + 2].fd);
	EXPECT_EQ(container, fv->call[unset + 3].fd);
	EXPECT_EQ(0, fv->open_fds);
}

TEST_F(be, legacy_not_viable)
{
	self->fv.viable = false;
	ASSERT_EQ(0, open_be(self, VFIO_BACKEND_LEGACY, false));
	capture(self);
	EXPECT_EQ(-EPERM, vfio_add_device(&self->c, BDF, NULL));
	const char *e = captured(self);

	EXPECT_NE(NULL, strstr(e, "IOMMU group 12 of " BDF " is not viable")) TH_LOG("%s", e);
	EXPECT_EQ(0, fake_vfio_count(&self->fv, VFIO_GROUP_SET_CONTAINER));
	vfio_close(&self->c);
	EXPECT_EQ(0, self->fv.open_fds);
}

TEST_F(be, legacy_errors)
{
	ASSERT_EQ(0, open_be(self, VFIO_BACKEND_LEGACY, false));
	/* the device fd refused: the message hints at the token */
	self->fv.get_fd_errno = EINVAL;
	capture(self);
	EXPECT_EQ(-EINVAL, vfio_add_device(&self->c, BDF, NULL));
	const char *e = captured(self);

	EXPECT_NE(NULL, strstr(e, "VFIO_GROUP_GET_DEVICE_FD: Invalid argument (a VF of a PF bound to vfio-pci "
			       "needs its VF token")) TH_LOG("%s", e);
	self->fv.get_fd_errno = EBUSY;
	capture(self);
	EXPECT_EQ(-EBUSY, vfio_add_device(&self->c, BDF, TOKEN));
	e = captured(self);
	EXPECT_NE(NULL, strstr(e, "(the device is in use")) TH_LOG("%s", e);
	vfio_close(&self->c);
	/* RAM over the reserved window: GET_INFO's ranges are checked the same way */
	self->fv.get_fd_errno = 0;
	self->fv.ranges[0] = (struct vfio_valid_range){ 0, 0x8007ffff };
	self->fv.ranges[1] = (struct vfio_valid_range){ 0x800a0000, UINT64_MAX };
	ASSERT_EQ(0, open_be(self, VFIO_BACKEND_LEGACY, false));
	capture(self);
	EXPECT_EQ(-EINVAL, vfio_add_device(&self->c, BDF, NULL));
	e = captured(self);
	EXPECT_NE(NULL, strstr(e, "0x80000000-0x800fffff overlaps the IOMMU's reserved IOVA range "
			       "0x80080000-0x8009ffff")) TH_LOG("%s", e);
	vfio_close(&self->c);
	/* no IOMMU group */
	self->fv.group = -1;
	ASSERT_EQ(0, open_be(self, VFIO_BACKEND_LEGACY, false));
	capture(self);
	EXPECT_EQ(-ENODEV, vfio_add_device(&self->c, BDF, NULL));
	e = captured(self);
	EXPECT_NE(NULL, strstr(e, "has no IOMMU group")) TH_LOG("%s", e);
	vfio_close(&self->c);
	EXPECT_EQ(0, self->fv.open_fds);
}

TEST_HARNESS_MAIN
