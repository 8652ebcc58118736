// SPDX-License-Identifier: MIT
/*
 * A passed-through device's BARs with the fake VFIO (tests/unit/fake_vfio.c answers its region
 * info, sparse-mmap areas and MSIX_MAPPABLE included) and the fake KVM (its memslots): the device is
 * a memfd holding its config space at 0 and each BAR's region where the region info says, so vmm
 * mmaps and reads it as it would a VFIO device. What must hold: the whole MSI-X table and PBA stay
 * trapped and emulated whatever their size and offset, the rest of the BAR mapped; any number of
 * sparse areas; the device decodes memory whenever a memslot covers its BAR; the vLPI JSON stays
 * JSON however many vectors.
 */
#include <linux/pci_regs.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "kselftest_harness.h"
#include "tests/unit/fake_driver.h"
#include "tests/unit/fake_vfio.h"
#include "tests/unit/json_valid.h"
#include "vfio/vfio.h"
#include "vfio/vfio_internal.h"

#define SLOT 5
#define REGION0 0x100000ULL /* BAR i's region at (i + 1) MiB in the memfd */
#define MEMFD_SIZE 0x800000ULL

static struct vm vm;
static struct pci_host host;
static struct fake_kvm fk;
static struct fake_vfio fv;

/* A device with an MSI-X table of nr entries in BAR tbar at toff, its PBA in BAR pbar at poff;
 * 64-bit memory BARs 0 and 2 (BAR 2 only when something lives there). */
static void host_config(uint8_t *c, unsigned int nr, int tbar, uint32_t toff, int pbar, uint32_t poff)
{
	memset(c, 0, 4096);
	fake_vfio_cfg_put(c, PCI_VENDOR_ID, 0x15b3, 2);
	fake_vfio_cfg_put(c, PCI_DEVICE_ID, 0x101e, 2);
	fake_vfio_cfg_put(c, PCI_CLASS_REVISION, 0x02000000, 4);
	fake_vfio_cfg_put(c, PCI_STATUS, PCI_STATUS_CAP_LIST, 2);
	fake_vfio_cfg_put(c, PCI_BASE_ADDRESS_0, PCI_BASE_ADDRESS_MEM_TYPE_64, 4);
	fake_vfio_cfg_put(c, PCI_BASE_ADDRESS_2, PCI_BASE_ADDRESS_MEM_TYPE_64, 4);
	fake_vfio_cfg_put(c, PCI_CAPABILITY_LIST, 0x40, 1);
	fake_vfio_cfg_put(c, 0x40, PCI_CAP_ID_MSIX, 2);
	fake_vfio_cfg_put(c, 0x42, nr - 1, 2);
	fake_vfio_cfg_put(c, 0x44, toff | tbar, 4);
	fake_vfio_cfg_put(c, 0x48, poff | pbar, 4);
}

static void region(int bar, uint64_t size)
{
	fv.region[bar] = (struct fake_vfio_region){ .size = size, .offset = REGION0 * (bar + 1),
		.flags = VFIO_REGION_INFO_FLAG_READ | VFIO_REGION_INFO_FLAG_WRITE | VFIO_REGION_INFO_FLAG_MMAP };
}

FIXTURE(vbar) {
	struct vfio_sys sys;
	struct vfio_container c;
	struct vfio_pci *v;
};

FIXTURE_SETUP(vbar)
{
	ASSERT_EQ(0, fake_vm_init(&vm, &fk, 1 << 20, 96));
	ASSERT_EQ(0, pci_host_init(&host, &vm, &fd_layout));
	fake_vfio_init(&fv);
	self->sys = fake_vfio_sys(&fv);
	memset(&self->c, 0, sizeof(self->c));
	self->c.vm = &vm;
	self->c.fd = self->c.kvm_dev = -1;
	self->c.sys = &self->sys;
	self->v = calloc(1, sizeof(*self->v));
	ASSERT_NE(NULL, self->v);
}

FIXTURE_TEARDOWN(vbar)
{
	struct vfio_pci *v = self->v;

	for (int i = 0; i < PCI_STD_NUM_BARS; i++)
		if (v->bar_map[i])
			munmap(v->bar_map[i], v->bar_region[i].size);
	for (unsigned int i = 0; i < v->msix.nr; i++)
		close(v->msix.vec[i].route.fd);
	if (v->fd > 0)
		close(v->fd);
	free(v);
	fake_vm_free(&vm);
}

/* The device (config space cfg, fv's regions) opened as vfio_pci_create would, up to its BARs. */
static int open_device(FIXTURE_DATA(vbar) *self, const uint8_t *cfg)
{
	struct vfio_pci *v = self->v;

	if (fake_vfio_device(v, &self->c, cfg, "0000:01:00.0", MEMFD_SIZE) < 0)
		return -1;
	if (vfio_config_setup(v, &host, SLOT) < 0)
		return -1;
	return vfio_bars_setup(v);
}

static void cfg_wr(uint32_t reg, uint32_t val, uint32_t len)
{
	bus_access(&vm.mmio, FD_ECAM + (SLOT << 15) + reg, (uint8_t *)&val, len, true);
}

/* Memory decode on; BAR i's guest address. */
static uint64_t enable(FIXTURE_DATA(vbar) *self, int i)
{
	cfg_wr(PCI_COMMAND, PCI_COMMAND_MEMORY, 2);
	return self->v->pci.bar[i].mapped ? self->v->pci.bar[i].mapped_addr : 0;
}

static uint32_t dev_rd32(FIXTURE_DATA(vbar) *self, int bar, uint64_t off)
{
	uint32_t x = 0;

	pread(self->v->fd, &x, 4, REGION0 * (bar + 1) + off);
	return x;
}

static void dev_fill(FIXTURE_DATA(vbar) *self, int bar, uint64_t size, uint8_t byte)
{
	uint8_t *buf = malloc(size);

	memset(buf, byte, size);
	pwrite(self->v->fd, buf, size, REGION0 * (bar + 1));
	free(buf);
}

/* A guest access as KVM carries it out: 1 when it exited to vmm (trapped). */
static int guest32(uint64_t gpa, uint32_t *x, bool write)
{
	return fake_kvm_guest_access(&fk, &vm, gpa, (uint8_t *)x, 4, write);
}

/* Every page of [off, off + len) of the BAR at a is trapped (no memslot), or every one mapped. */
static bool pages_trapped(uint64_t a, uint64_t off, uint64_t len)
{
	for (uint64_t p = off; p < off + len; p += 4096)
		if (fake_kvm_slot_at(&fk, a + p, 4096))
			return false;
	return true;
}

static bool pages_mapped(uint64_t a, uint64_t off, uint64_t len)
{
	for (uint64_t p = off; p < off + len; p += 4096)
		if (!fake_kvm_slot_at(&fk, a + p, 4096))
			return false;
	return true;
}

/* A 2048-entry table (32 KiB, 8 pages) at 0x4000 of a 64 KiB BAR, its PBA (256 bytes) right after
 * it, VFIO letting the table be mapped (MSIX_MAPPABLE): the guest sees 64 vectors, and every
 * page of the table and PBA stays trapped; entries past the 64 read 0 and never reach the device. */
TEST_F(vbar, msix_table_of_2048_entries_trapped_whole)
{
	uint8_t cfg[4096];
	uint32_t x;

	host_config(cfg, 2048, 0, 0x4000, 0, 0xc000);
	region(0, 0x10000);
	fv.region[0].msix_mappable = true;
	ASSERT_EQ(0, open_device(self, cfg));
	EXPECT_EQ(64, self->v->msix_nr);
	dev_fill(self, 0, 0x10000, 0x5a);
	uint64_t a = enable(self, 0);

	ASSERT_NE(0, a);
	EXPECT_TRUE(pages_mapped(a, 0, 0x4000)) TH_LOG("below the table: mapped");
	EXPECT_TRUE(pages_trapped(a, 0x4000, 0x9000)) TH_LOG("every page of the table and PBA trapped");
	EXPECT_TRUE(pages_mapped(a, 0xd000, 0x3000)) TH_LOG("above the PBA: mapped");
	/* entry 1's address, through the emulation */
	x = 0xfee01000;
	EXPECT_EQ(1, guest32(a + 0x4000 + 16, &x, true));
	x = 0;
	EXPECT_EQ(1, guest32(a + 0x4000 + 16, &x, false));
	EXPECT_EQ(0xfee01000, x);
	EXPECT_EQ(0x5a5a5a5a, dev_rd32(self, 0, 0x4000 + 16)) TH_LOG("the device's table is not the guest's");
	/* entries 64 (in the first page), 300 and 2047 (past it): trapped, never the device's */
	unsigned int past[] = { 64, 100, 300, 2047 };

	for (unsigned int k = 0; k < sizeof(past) / sizeof(past[0]); k++) {
		uint64_t off = 0x4000 + 16 * past[k];

		x = 0x12345678;
		EXPECT_EQ(1, guest32(a + off, &x, true)) TH_LOG("entry %u: not trapped", past[k]);
		EXPECT_EQ(0x5a5a5a5a, dev_rd32(self, 0, off)) TH_LOG("entry %u: a write reached the device", past[k]);
		x = 1;
		EXPECT_EQ(1, guest32(a + off, &x, false));
		EXPECT_EQ(0, x) TH_LOG("entry %u: the guest has 64 vectors, read 0x%x", past[k], x);
	}
	/* the PBA's words past the first (vectors 64-2047) */
	x = ~0u;
	EXPECT_EQ(1, guest32(a + 0xc000 + 0xf8, &x, true));
	EXPECT_EQ(0x5a5a5a5a, dev_rd32(self, 0, 0xc000 + 0xf8));
	EXPECT_EQ(1, guest32(a + 0xc000 + 0xf8, &x, false));
	EXPECT_EQ(0, x);
}

/* A guest's unaligned accesses across an edge of the table or the PBA (vfio_config_fuzz's find: an
 * 8-byte write at the byte before the table wrote 7 bytes of the device's entry 0): the part
 * outside reaches the device, none of the part inside does, and a read of the part inside gives
 * the guest's view, not the device's entries. 16 entries at 0x100 (to 0x200), the PBA at 0x800,
 * both in BAR 0's first page, which stays trapped. */
TEST_F(vbar, accesses_across_the_table_and_pba_edges_are_split_there)
{
	uint8_t cfg[4096];
	uint64_t x = 0x1122334455667788ULL;

	host_config(cfg, 16, 0, 0x100, 0, 0x800);
	region(0, 0x4000);
	ASSERT_EQ(0, open_device(self, cfg));
	dev_fill(self, 0, 0x4000, 0x5a);
	uint64_t a = enable(self, 0);

	ASSERT_NE(0, a);
	ASSERT_TRUE(pages_trapped(a, 0, 0x1000));
	/* into the table's start: 0x88 to the device's 0xff, 0x77..0x11 to entry 0, emulated */
	EXPECT_EQ(1, fake_kvm_guest_access(&fk, &vm, a + 0xff, (uint8_t *)&x, 8, true));
	EXPECT_EQ(0x885a5a5a, dev_rd32(self, 0, 0xfc)) TH_LOG("the byte before the table reaches the device");
	EXPECT_EQ(0x5a5a5a5a, dev_rd32(self, 0, 0x100)) TH_LOG("entry 0 of the device's table was written");
	EXPECT_EQ(0x5a5a5a5a, dev_rd32(self, 0, 0x104));
	/* out of the table's end: entry 15's control word emulated, 0x200..0x203 to the device */
	x = 0xaabbccdd00000001ULL;
	EXPECT_EQ(1, fake_kvm_guest_access(&fk, &vm, a + 0x1fc, (uint8_t *)&x, 8, true));
	EXPECT_EQ(0x5a5a5a5a, dev_rd32(self, 0, 0x1fc)) TH_LOG("entry 15 of the device's table was written");
	EXPECT_EQ(0xaabbccdd, dev_rd32(self, 0, 0x200));
	EXPECT_EQ(1, self->v->msix.vec[15].ctrl) TH_LOG("the emulated entry took the masked bit");
	/* a read across the table's start: the device's bytes, then entry 0's address (0), not 0x5a */
	x = 0;
	EXPECT_EQ(1, fake_kvm_guest_access(&fk, &vm, a + 0xfc, (uint8_t *)&x, 8, false));
	EXPECT_EQ(0x885a5a5aULL, x) TH_LOG("read 0x%llx", (unsigned long long)x);
	/* into the PBA, which is read-only: only 0x7fc..0x7ff reach the device */
	x = ~0ULL;
	EXPECT_EQ(1, fake_kvm_guest_access(&fk, &vm, a + 0x7fc, (uint8_t *)&x, 8, true));
	EXPECT_EQ(0xffffffff, dev_rd32(self, 0, 0x7fc));
	EXPECT_EQ(0x5a5a5a5a, dev_rd32(self, 0, 0x800)) TH_LOG("the device's PBA was written");
}

/* The table at 0x2000 of BAR 0 (2048 entries: up to 0xa000), its PBA at 0x800 of BAR 2: each BAR
 * keeps its mapping around its own hole. */
TEST_F(vbar, msix_table_and_pba_in_different_bars_off_zero)
{
	uint8_t cfg[4096];
	uint32_t x = 0x77;

	host_config(cfg, 2048, 0, 0x2000, 2, 0x800);
	region(0, 0x20000);
	region(2, 0x4000);
	fv.region[0].msix_mappable = fv.region[2].msix_mappable = true;
	ASSERT_EQ(0, open_device(self, cfg));
	uint64_t a = enable(self, 0), b = self->v->pci.bar[2].mapped_addr;

	ASSERT_NE(0, a);
	ASSERT_TRUE(self->v->pci.bar[2].mapped);
	EXPECT_TRUE(pages_mapped(a, 0, 0x2000));
	EXPECT_TRUE(pages_trapped(a, 0x2000, 0x8000));
	EXPECT_TRUE(pages_mapped(a, 0xa000, 0x16000));
	EXPECT_TRUE(pages_trapped(b, 0, 0x1000));
	EXPECT_TRUE(pages_mapped(b, 0x1000, 0x3000));
	EXPECT_EQ(1, guest32(a + 0x9ff0, &x, true)) TH_LOG("the table's last entry");
	EXPECT_EQ(0, dev_rd32(self, 0, 0x9ff0));
}

/* 31 sparse areas, one per page but the table's: all mapped, only the table's page trapped
 * (no area beyond the eighth may be dropped). */
TEST_F(vbar, many_contiguous_sparse_areas_all_mapped)
{
	uint8_t cfg[4096];

	host_config(cfg, 3, 0, 0x2000, 0, 0x2800);
	region(0, 0x20000);
	fv.region[0].sparse = true;
	for (uint32_t p = 0; p < 32; p++)
		if (p != 2)
			fv.region[0].area[fv.region[0].nr_areas++] =
				(struct vfio_region_sparse_mmap_area){ p * 0x1000ULL, 0x1000 };
	ASSERT_EQ(0, open_device(self, cfg));
	uint64_t a = enable(self, 0);

	ASSERT_NE(0, a);
	EXPECT_TRUE(pages_mapped(a, 0, 0x2000));
	EXPECT_TRUE(pages_trapped(a, 0x2000, 0x1000));
	EXPECT_TRUE(pages_mapped(a, 0x3000, 0x1d000)) TH_LOG("areas past the eighth must be mapped");
}

/* 40 areas with a gap after each: more holes than a BAR can keep mapped, so the whole BAR is
 * trapped (each access through VFIO's read/write); the gaps' count must not overrun anything. */
TEST_F(vbar, many_sparse_gaps_trap_the_bar_whole)
{
	uint8_t cfg[4096];
	uint32_t x = 0;

	/* the table and PBA first (two ranges of their own), then a gap before each area */
	host_config(cfg, 3, 0, 0x60000, 0, 0x70000);
	region(0, 0x80000);
	fv.region[0].sparse = true;
	for (uint32_t k = 0; k < 40; k++)
		fv.region[0].area[fv.region[0].nr_areas++] =
			(struct vfio_region_sparse_mmap_area){ 0x1000 + k * 0x2000ULL, 0x1000 };
	ASSERT_EQ(0, open_device(self, cfg));
	dev_fill(self, 0, 0x80000, 0x3c);
	uint64_t a = enable(self, 0);

	ASSERT_NE(0, a);
	EXPECT_TRUE(pages_trapped(a, 0, 0x80000));
	EXPECT_EQ(1, guest32(a + 0x4000, &x, false));
	EXPECT_EQ(0x3c3c3c3c, x) TH_LOG("a trapped access goes to the device");
}

/* A sparse-mmap capability with no area: nothing may be mapped (the fuzzer's find: an empty list
 * must not reach qsort). */
TEST_F(vbar, sparse_capability_with_no_area_traps_the_bar_whole)
{
	uint8_t cfg[4096];

	host_config(cfg, 3, 0, 0x2000, 0, 0x2800);
	region(0, 0x10000);
	fv.region[0].sparse = true;
	ASSERT_EQ(0, open_device(self, cfg));
	uint64_t a = enable(self, 0);

	ASSERT_NE(0, a);
	EXPECT_TRUE(pages_trapped(a, 0, 0x10000));
}

/* What the device's command register held at each memslot change of the BAR. */
struct order_log {
	int fd;
	int n;
	struct { uint64_t size; uint16_t cmd; } ev[32];
};

static void on_memslot(void *arg, uint32_t slot, uint64_t gpa, uint64_t size)
{
	struct order_log *l = arg;
	uint16_t cmd = 0;

	(void)slot;
	(void)gpa;
	pread(l->fd, &cmd, 2, PCI_COMMAND);
	if (l->n < 32)
		l->ev[l->n++] = (typeof(l->ev[0])){ size, cmd };
}

/* vfio-pci zaps a BAR's mmap when its memory decode goes off and answers a fault on it with
 * SIGBUS until it is on again: KVM_RUN then fails with EFAULT. So the device must have
 * MEMORY=1 before the BAR's memslots are added, and keep it until they are removed. */
TEST_F(vbar, memory_decode_forwarded_before_memslots_and_removed_after)
{
	uint8_t cfg[4096];
	struct order_log l = { 0 };

	host_config(cfg, 3, 0, 0x2000, 0, 0x2800);
	region(0, 0x10000);
	ASSERT_EQ(0, open_device(self, cfg));
	l.fd = self->v->fd;
	fk.on_memslot = on_memslot;
	fk.on_memslot_arg = &l;
	for (int round = 0; round < 2; round++) {
		int from = l.n;

		cfg_wr(PCI_COMMAND, PCI_COMMAND_MEMORY | PCI_COMMAND_MASTER, 2);
		ASSERT_LT(from, l.n) TH_LOG("enabling memory added no memslot");
		for (int k = from; k < l.n; k++) {
			EXPECT_NE(0, l.ev[k].size);
			EXPECT_TRUE(l.ev[k].cmd & PCI_COMMAND_MEMORY) TH_LOG("round %d: a memslot added while the "
									     "device's memory decode was off", round);
		}
		from = l.n;
		cfg_wr(PCI_COMMAND, PCI_COMMAND_MASTER, 2);
		ASSERT_LT(from, l.n) TH_LOG("disabling memory removed no memslot");
		for (int k = from; k < l.n; k++) {
			EXPECT_EQ(0, l.ev[k].size);
			EXPECT_TRUE(l.ev[k].cmd & PCI_COMMAND_MEMORY) TH_LOG("round %d: a memslot removed after the "
									     "device's memory decode went off", round);
		}
		uint16_t cmd = 0;

		pread(self->v->fd, &cmd, 2, PCI_COMMAND);
		EXPECT_EQ(PCI_COMMAND_MASTER, cmd & (PCI_COMMAND_MEMORY | PCI_COMMAND_MASTER));
	}
	fk.on_memslot = NULL;
}

/* The vLPI report as JSON for a device with the most vectors vmm shows (64, of a 2048-entry
 * table): whatever its length, the output must parse. */
TEST_F(vbar, vlpi_json_of_every_vector_parses)
{
	uint8_t cfg[4096];
	char *buf = NULL;
	size_t len = 0;

	host_config(cfg, 2048, 0, 0x4000, 0, 0xc000);
	region(0, 0x10000);
	ASSERT_EQ(0, open_device(self, cfg));
	ASSERT_EQ(64, self->v->msix_nr);
	FILE *f = open_memstream(&buf, &len);

	ASSERT_NE(NULL, f);
	vfio_pci_vlpi_json(self->v, 0, f);
	fclose(f);
	TH_LOG("%zu bytes of JSON", len);
	EXPECT_TRUE(json_valid(buf, len)) TH_LOG("not JSON: ...%s", len > 200 ? buf + len - 200 : buf);
	EXPECT_NE(NULL, strstr(buf, "{\"vector\":63,")) TH_LOG("the last vector is missing");
	const char *ok = "{\"a\":[1,-2.5e3,\"x\\\"\",true,null,{}]}";

	EXPECT_TRUE(json_valid(ok, strlen(ok))) TH_LOG("the checker itself");
	EXPECT_FALSE(json_valid("{\"a\":[1,2", 9));
	free(buf);
}

TEST_HARNESS_MAIN
