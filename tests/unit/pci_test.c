// SPDX-License-Identifier: MIT
/* PCI config space through ECAM: identity, BAR sizing and placement, decode gating, BAR moves,
 * the capability list, and hostile accesses. No KVM needed: ECAM and BARs live on the vm's bus. */
#include <errno.h>
#include <linux/pci_regs.h>
#include <pthread.h>
#include <stdatomic.h>
#include <string.h>

#include "kselftest_harness.h"
#include "tests/unit/fake_kvm.h"
#include "tests/unit/log_capture.h"
#include "core/bus.h"
#include "core/pci.h"
#include "core/vm.h"

#define ECAM 0x3f000000ULL

static void bar_fn(void *opaque, uint64_t off, uint8_t *data, uint32_t len, bool is_write)
{
	(void)off; (void)len;
	if (!is_write)
		data[0] = 0x5a;
	else
		(*(int *)opaque)++;
}

static void moved(void *opaque, uint64_t old, uint64_t new)
{
	(void)opaque; (void)old; (void)new;
}

FIXTURE(pci) {
	struct vm vm;
	struct pci_host h;
	struct pci_dev d;
	int writes;
};

static uint32_t cfg_rd(struct vm *vm, int slot, uint32_t reg, uint32_t len)
{
	uint32_t v = 0;

	bus_access(&vm->mmio, ECAM + (slot << 15) + reg, (uint8_t *)&v, len, false);
	return v;
}

static void cfg_wr(struct vm *vm, int slot, uint32_t reg, uint32_t v, uint32_t len)
{
	bus_access(&vm->mmio, ECAM + (slot << 15) + reg, (uint8_t *)&v, len, true);
}

FIXTURE_SETUP(pci)
{
	const struct pci_host_layout l = { ECAM, 0x100000, 0x10000000, 0x100000, 0x8000000000ULL,
					   0x100000000ULL };

	memset(&self->vm, 0, sizeof(self->vm));
	bus_init(&self->vm.mmio);
	self->writes = 0;
	ASSERT_EQ(0, pci_host_init(&self->h, &self->vm, &l));
	ASSERT_EQ(0, pci_dev_add(&self->h, &self->d, 0x1af4, 0x1042, 0x01800001, 0x1af4, 2));
	ASSERT_EQ(0, pci_bar_add(&self->d, 0, 0x4000, false, bar_fn, &self->writes, "bar0"));
	ASSERT_EQ(0, pci_bar_add(&self->d, 2, 0x10000, true, bar_fn, &self->writes, "bar2"));
	self->d.bar[0].moved = moved;
}

FIXTURE_TEARDOWN(pci) {}

TEST_F(pci, identity_and_absent_slots)
{
	EXPECT_EQ(0x10421af4, cfg_rd(&self->vm, 1, PCI_VENDOR_ID, 4));
	EXPECT_EQ(0x018000, cfg_rd(&self->vm, 1, PCI_CLASS_REVISION, 4) >> 8);
	EXPECT_EQ(0xffffffff, cfg_rd(&self->vm, 0, PCI_VENDOR_ID, 4)); /* empty slot */
	EXPECT_EQ(0xffffffff, cfg_rd(&self->vm, 7, PCI_VENDOR_ID, 4));
	EXPECT_EQ(0xffff, cfg_rd(&self->vm, 1, (1 << 12) | PCI_VENDOR_ID, 2)); /* function 1 */
	EXPECT_EQ(1, self->d.devfn >> 3);
	EXPECT_EQ(8, pci_dev_rid(&self->d));
}

TEST_F(pci, bar_sizing)
{
	cfg_wr(&self->vm, 1, PCI_BASE_ADDRESS_0, 0xffffffff, 4);
	EXPECT_EQ(0xffffc000, cfg_rd(&self->vm, 1, PCI_BASE_ADDRESS_0, 4));
	cfg_wr(&self->vm, 1, PCI_BASE_ADDRESS_2, 0xffffffff, 4);
	cfg_wr(&self->vm, 1, PCI_BASE_ADDRESS_3, 0xffffffff, 4);
	EXPECT_EQ(0xffff0000 | PCI_BASE_ADDRESS_MEM_TYPE_64, cfg_rd(&self->vm, 1, PCI_BASE_ADDRESS_2, 4));
	EXPECT_EQ(0xffffffff, cfg_rd(&self->vm, 1, PCI_BASE_ADDRESS_3, 4));
	EXPECT_EQ(0, cfg_rd(&self->vm, 1, PCI_BASE_ADDRESS_1, 4)); /* unused BAR: not writable */
}

TEST_F(pci, decode_gated_by_command)
{
	uint8_t v = 0;

	EXPECT_EQ(0x10000000, cfg_rd(&self->vm, 1, PCI_BASE_ADDRESS_0, 4));
	EXPECT_EQ(0x8000000000ULL, (uint64_t)cfg_rd(&self->vm, 1, PCI_BASE_ADDRESS_3, 4) << 32);
	EXPECT_FALSE(bus_access(&self->vm.mmio, 0x10000000, &v, 1, false)); /* decode off */
	cfg_wr(&self->vm, 1, PCI_COMMAND, PCI_COMMAND_MEMORY, 2);
	EXPECT_TRUE(bus_access(&self->vm.mmio, 0x10000010, &v, 1, false));
	EXPECT_EQ(0x5a, v);
	EXPECT_TRUE(bus_access(&self->vm.mmio, 0x8000000000ULL, &v, 1, true));
	EXPECT_EQ(1, self->writes);
	cfg_wr(&self->vm, 1, PCI_COMMAND, 0, 2);
	EXPECT_FALSE(bus_access(&self->vm.mmio, 0x10000010, &v, 1, false));
}

TEST_F(pci, bar_moves)
{
	uint8_t v = 0;

	cfg_wr(&self->vm, 1, PCI_COMMAND, PCI_COMMAND_MEMORY, 2);
	cfg_wr(&self->vm, 1, PCI_BASE_ADDRESS_0, 0x20000000, 4);
	EXPECT_FALSE(bus_access(&self->vm.mmio, 0x10000000, &v, 1, false));
	EXPECT_TRUE(bus_access(&self->vm.mmio, 0x20000000, &v, 1, false));
	EXPECT_TRUE(self->d.bar[0].mapped);
	EXPECT_EQ(0x20000000, self->d.bar[0].mapped_addr);
	/* a guest that points a BAR at the config space itself gets nothing, and nothing breaks */
	cfg_wr(&self->vm, 1, PCI_BASE_ADDRESS_0, (uint32_t)ECAM, 4);
	EXPECT_FALSE(self->d.bar[0].mapped);
	EXPECT_EQ(0x10421af4, cfg_rd(&self->vm, 1, PCI_VENDOR_ID, 4));
	/* a 64-bit BAR placed so that it would wrap past 2^64: stays off the bus */
	cfg_wr(&self->vm, 1, PCI_BASE_ADDRESS_2, 0xffff0000, 4);
	cfg_wr(&self->vm, 1, PCI_BASE_ADDRESS_3, 0xffffffff, 4);
	EXPECT_FALSE(self->d.bar[2].mapped);
	cfg_wr(&self->vm, 1, PCI_BASE_ADDRESS_3, 0x80, 4); /* and back somewhere sane */
	EXPECT_TRUE(self->d.bar[2].mapped);
	EXPECT_EQ(0x80ffff0000ULL, self->d.bar[2].mapped_addr);
}

TEST_F(pci, capability_list)
{
	int c1 = pci_cap_add(&self->d, PCI_CAP_ID_VNDR, 16);
	int c2 = pci_cap_add(&self->d, PCI_CAP_ID_MSIX, 12);

	ASSERT_LT(0, c1);
	ASSERT_LT(c1, c2);
	EXPECT_TRUE(cfg_rd(&self->vm, 1, PCI_STATUS, 2) & PCI_STATUS_CAP_LIST);
	EXPECT_EQ((uint32_t)c1, cfg_rd(&self->vm, 1, PCI_CAPABILITY_LIST, 1));
	EXPECT_EQ(PCI_CAP_ID_VNDR, cfg_rd(&self->vm, 1, c1, 1));
	EXPECT_EQ((uint32_t)c2, cfg_rd(&self->vm, 1, c1 + 1, 1));
	EXPECT_EQ(0, cfg_rd(&self->vm, 1, c2 + 1, 1));
	EXPECT_GT(0, pci_cap_add(&self->d, PCI_CAP_ID_VNDR, 300)); /* no room */
}

TEST_F(pci, read_only_fields_and_odd_accesses)
{
	cfg_wr(&self->vm, 1, PCI_VENDOR_ID, 0x12345678, 4);
	EXPECT_EQ(0x10421af4, cfg_rd(&self->vm, 1, PCI_VENDOR_ID, 4));
	cfg_wr(&self->vm, 1, PCI_INTERRUPT_LINE, 0x33, 1);
	EXPECT_EQ(0x33, cfg_rd(&self->vm, 1, PCI_INTERRUPT_LINE, 1));
	EXPECT_EQ(1, cfg_rd(&self->vm, 1, PCI_INTERRUPT_PIN, 1));
	EXPECT_EQ(0xffffffff, cfg_rd(&self->vm, 1, 1, 4)); /* misaligned dword */
	EXPECT_EQ(0, cfg_rd(&self->vm, 1, 0xffc, 4)); /* extended space: present, empty */
}

/* The extended space (256-4095) a guest reaches only through the ECAM (x86: the MCFG's
 * MMCONFIG): a device without extended capabilities reads 0 there and keeps nothing written, at
 * every width; accesses that cross the 4 KiB function or are not 1, 2 or 4 bytes are ignored. */
TEST_F(pci, extended_space_reads_zero_and_ignores_writes)
{
	uint8_t before[PCI_CFG_SIZE];

	memcpy(before, self->d.cfg, sizeof(before));
	for (uint32_t off = PCI_CFG_SPACE_SIZE; off < PCI_CFG_SIZE; off += 4) {
		cfg_wr(&self->vm, 1, off, 0xffffffff, 4);
		cfg_wr(&self->vm, 1, off + 1, 0xff, 1);
		cfg_wr(&self->vm, 1, off + 2, 0xffff, 2);
	}
	EXPECT_EQ(0, memcmp(before, self->d.cfg, sizeof(before)));
	EXPECT_EQ(0, cfg_rd(&self->vm, 1, 0x100, 4));
	EXPECT_EQ(0, cfg_rd(&self->vm, 1, 0xffe, 2));
	EXPECT_EQ(0xffff, cfg_rd(&self->vm, 1, 0xfff, 2)); /* would cross into function 1 */
	uint64_t q = 0;

	bus_access(&self->vm.mmio, ECAM + (1 << 15) + 0x100, (uint8_t *)&q, 8, false);
	EXPECT_EQ(~0ull, q) TH_LOG("an 8-byte config read is not PCI: all ones");
	EXPECT_EQ(0xffffffff, cfg_rd(&self->vm, 1, (1 << 12) + 0x100, 4)); /* function 1: absent */
}

/* The INTx line as the board sees it: the last level set_intx was given. */
static void record_line(void *opaque, unsigned int slot, bool level)
{
	(void)slot;
	atomic_store((_Atomic int *)opaque, level);
}

#define INTX_ROUNDS 3001 /* odd: the device ends asserting */

struct intx_race {
	struct pci_dev *d;
	pthread_barrier_t go; /* both loops start together */
	atomic_bool done;
};

static void *toggle_intx(void *arg)
{
	struct intx_race *r = arg;

	pthread_barrier_wait(&r->go);
	for (int i = 0; i < INTX_ROUNDS; i++)
		pci_intx(r->d, !(i & 1));
	atomic_store(&r->done, true);
	return NULL;
}

/* A device raising and lowering INTx on its own thread while a vCPU writes the dword at COMMAND
 * (STATUS with it: all ones, which clears none of its bits) and reads STATUS, until the device's
 * last raise: no data race (TSan saw intx_update's read-modify-write of STATUS against the
 * whole-dword write), no raise lost, and a guest write never clears the pending Interrupt Status. */
TEST_F(pci, intx_status_against_command_writes)
{
	struct intx_race r = { .d = &self->d };
	_Atomic int line = -1;
	pthread_t t;
	int i;

	self->h.set_intx = record_line;
	self->h.intx_opaque = (void *)&line;
	pthread_barrier_init(&r.go, NULL, 2);
	ASSERT_EQ(0, pthread_create(&t, NULL, toggle_intx, &r));
	pthread_barrier_wait(&r.go);
	for (i = 0; i < 100 || !atomic_load(&r.done); i++) {
		cfg_wr(&self->vm, 1, PCI_COMMAND, 0xffff0000 | PCI_COMMAND_MASTER |
		       (i & 1 ? PCI_COMMAND_INTX_DISABLE : 0), 4);
		cfg_rd(&self->vm, 1, PCI_STATUS, 2);
	}
	cfg_wr(&self->vm, 1, PCI_COMMAND, PCI_COMMAND_MASTER, 2); /* INTx enabled */
	ASSERT_EQ(0, pthread_join(t, NULL));
	pthread_barrier_destroy(&r.go);
	TH_LOG("%d COMMAND writes against %d INTx changes", i, INTX_ROUNDS);
	/* the device asserts: Status shows it, the line carries it */
	EXPECT_EQ(PCI_STATUS_INTERRUPT, cfg_rd(&self->vm, 1, PCI_STATUS, 2) & PCI_STATUS_INTERRUPT);
	EXPECT_EQ(1, atomic_load(&line));
	cfg_wr(&self->vm, 1, PCI_COMMAND, 0xffff0000 | PCI_COMMAND_MASTER, 4);
	EXPECT_EQ(PCI_STATUS_INTERRUPT, cfg_rd(&self->vm, 1, PCI_STATUS, 2) & PCI_STATUS_INTERRUPT);
	EXPECT_EQ(1, atomic_load(&line));
	pci_intx(&self->d, false);
	EXPECT_EQ(0, cfg_rd(&self->vm, 1, PCI_STATUS, 2) & PCI_STATUS_INTERRUPT);
	EXPECT_EQ(0, atomic_load(&line));
}

/* A backed BAR (a VFIO region's mmap): memslots around a trapped hole, following the BAR. */
static void hole_fn(void *opaque, uint64_t off, uint8_t *data, uint32_t len, bool is_write)
{
	(void)len;
	if (!is_write)
		data[0] = 0x77;
	*(uint64_t *)opaque = off;
}

TEST(backed_bar_memslots_around_a_hole_follow_moves)
{
	static struct vm vm;
	static struct fake_kvm fk;
	static struct pci_host h;
	static struct pci_dev d;
	static uint8_t backing[0x10000] __attribute__((aligned(4096)));
	uint64_t hole_off = ~0ULL;
	const struct pci_host_layout l = { ECAM, 0x100000, 0x10000000, 0x1000000, 0x8000000000ULL,
					   0x100000000ULL };
	struct pci_bar_spec spec = { .size = 0x10000, .hva = backing, .name = "vfio-bar0",
				     .hole = { { 0x2000, 0x1000, hole_fn, &hole_off } }, .nr_holes = 1 };

	ASSERT_EQ(0, fake_vm_init(&vm, &fk, 0, 96));
	ASSERT_EQ(0, pci_host_init(&h, &vm, &l));
	ASSERT_EQ(0, pci_dev_add(&h, &d, 0x8086, 0x10ca, 0x02000001, 0x8086, 0));
	ASSERT_EQ(0, pci_bar_add_backed(&d, 0, &spec));
	int slot = d.devfn >> 3;
	uint32_t base = cfg_rd(&vm, slot, PCI_BASE_ADDRESS_0, 4) & PCI_BASE_ADDRESS_MEM_MASK;

	EXPECT_EQ(0, fake_kvm_count(&fk, FK_SET_MEMSLOT)); /* decode off: nothing mapped */
	cfg_wr(&vm, slot, PCI_COMMAND, PCI_COMMAND_MEMORY, 2);
	ASSERT_EQ(2, fake_kvm_count(&fk, FK_SET_MEMSLOT));
	int a = fake_kvm_find(&fk, FK_SET_MEMSLOT, 0), b = fake_kvm_find(&fk, FK_SET_MEMSLOT, a + 1);

	EXPECT_EQ(base, fk.call[a].addr);
	EXPECT_EQ(0x2000, fk.call[a].size);
	EXPECT_EQ(base + 0x3000, fk.call[b].addr);
	EXPECT_EQ(0xd000, fk.call[b].size);
	/* the hole is trapped, with hole-relative offsets */
	uint8_t v = 0;

	EXPECT_TRUE(bus_access(&vm.mmio, base + 0x2010, &v, 1, false));
	EXPECT_EQ(0x77, v);
	EXPECT_EQ(0x10, hole_off);
	/* a move: the old slots go (size 0) before the new ones come */
	int from = fk.nr;

	cfg_wr(&vm, slot, PCI_BASE_ADDRESS_0, base + 0x100000, 4);
	ASSERT_EQ(4, fk.nr - from);
	EXPECT_EQ(0, fk.call[from].size);
	EXPECT_EQ(0, fk.call[from + 1].size);
	EXPECT_EQ(base + 0x100000, fk.call[from + 2].addr);
	EXPECT_EQ(base + 0x103000, fk.call[from + 3].addr);
	EXPECT_FALSE(bus_access(&vm.mmio, base + 0x2010, &v, 1, false)); /* the old hole is gone */
	EXPECT_TRUE(bus_access(&vm.mmio, base + 0x102010, &v, 1, false));
	/* decode off: everything goes */
	cfg_wr(&vm, slot, PCI_COMMAND, 0, 2);
	EXPECT_EQ(0, fk.call[fk.nr - 1].size);
	EXPECT_FALSE(bus_access(&vm.mmio, base + 0x102010, &v, 1, false));
	/* holes must be page-aligned and inside the BAR */
	struct pci_bar_spec bad = spec;

	bad.hole[0].off = 0x2100;
	EXPECT_EQ(-EINVAL, pci_bar_add_backed(&d, 2, &bad));
}

/* A backed BAR (a VFIO BAR) the guest moves over RAM: KVM refuses its memslot (EEXIST) and it
 * stays unmapped; every later command or BAR write tries again, and each refusal used to be logged
 * (issue 19). They go through the VM's limit now: said, but at most its burst, then one
 * "suppressed N" line. */
TEST(backed_bar_over_ram_cannot_flood_the_log)
{
	static struct vm vm;
	static struct fake_kvm fk;
	static struct pci_host h;
	static struct pci_dev d;
	static uint8_t backing[0x10000] __attribute__((aligned(4096)));
	const struct pci_host_layout l = { ECAM, 0x100000, 0x10000000, 0x1000000, 0x8000000000ULL,
					   0x100000000ULL };
	struct pci_bar_spec spec = { .size = 0x10000, .hva = backing, .name = "vfio-bar0" };
	struct log_capture cap;

	ASSERT_EQ(0, fake_vm_init(&vm, &fk, 1 << 20, 96));
	ASSERT_EQ(0, pci_host_init(&h, &vm, &l));
	ASSERT_EQ(0, pci_dev_add(&h, &d, 0x8086, 0x10ca, 0x02000001, 0x8086, 0));
	ASSERT_EQ(0, pci_bar_add_backed(&d, 0, &spec));
	int slot = d.devfn >> 3;

	ASSERT_EQ(0, log_capture_start(&cap));
	cfg_wr(&vm, slot, PCI_BASE_ADDRESS_0, (uint32_t)FAKE_RAM_BASE, 4);
	for (int i = 0; i < 300; i++) {
		cfg_wr(&vm, slot, PCI_COMMAND, PCI_COMMAND_MEMORY, 2);
		cfg_wr(&vm, slot, PCI_COMMAND, 0, 2);
	}
	cfg_wr(&vm, slot, PCI_COMMAND, PCI_COMMAND_MEMORY, 2);
	for (int i = 0; i < 300; i++)
		cfg_wr(&vm, slot, PCI_BASE_ADDRESS_0, (uint32_t)FAKE_RAM_BASE + 0x10000 * (i % 4), 4);
	log_limit_flush(&vm.log_limit);
	char *t = log_capture_end(&cap);

	ASSERT_NE(NULL, t);
	EXPECT_FALSE(d.bar[0].mapped);
	EXPECT_LE(600, fake_kvm_count(&fk, FK_SET_MEMSLOT)); /* every write tried again */
	EXPECT_LE(1, log_lines(t, "overlaps guest RAM or another BAR")) TH_LOG("%s", t);
	EXPECT_GE(LOG_LIMIT_BURST, log_lines(t, "cannot be mapped"));
	EXPECT_GE(LOG_LIMIT_BURST + 1, log_lines(t, "")) TH_LOG("%u lines", log_lines(t, ""));
	EXPECT_EQ(1, log_lines(t, "suppressed"));
	free(t);
	/* moved off RAM, it maps */
	cfg_wr(&vm, slot, PCI_BASE_ADDRESS_0, 0x10000000, 4);
	EXPECT_TRUE(d.bar[0].mapped);
	fake_vm_free(&vm);
}

/* A board with no 64-bit window (x86): a 64-bit BAR keeps its type but gets a 32-bit address in
 * the 32-bit window, and the guest may still move it anywhere the address bits allow. */
TEST(bar64_without_a_64bit_window_lands_below_4g)
{
	static struct vm vm;
	static struct pci_host h;
	static struct pci_dev d;
	int writes = 0;
	const struct pci_host_layout l = { ECAM, 0x100000, 0xc0000000ULL, 0x20000000, 0, 0 };

	bus_init(&vm.mmio);
	ASSERT_EQ(0, pci_host_init(&h, &vm, &l));
	ASSERT_EQ(0, pci_dev_add(&h, &d, 0x8086, 0x10ca, 0x02000001, 0x8086, 0));
	ASSERT_EQ(0, pci_bar_add(&d, 0, 0x4000, true, bar_fn, &writes, "bar0"));
	ASSERT_EQ(0, pci_bar_add(&d, 2, 0x4000, false, bar_fn, &writes, "bar2"));
	int slot = d.devfn >> 3;
	uint32_t lo = cfg_rd(&vm, slot, PCI_BASE_ADDRESS_0, 4), lo2 = cfg_rd(&vm, slot, PCI_BASE_ADDRESS_2, 4);

	EXPECT_EQ(PCI_BASE_ADDRESS_MEM_TYPE_64, lo & PCI_BASE_ADDRESS_MEM_TYPE_MASK);
	EXPECT_EQ(0, cfg_rd(&vm, slot, PCI_BASE_ADDRESS_1, 4)); /* high dword: below 4 GiB */
	EXPECT_LE(0xc0000000ULL, lo & PCI_BASE_ADDRESS_MEM_MASK);
	EXPECT_GT(0xe0000000ULL, (lo & PCI_BASE_ADDRESS_MEM_MASK) + 0x4000);
	/* the two BARs share the 32-bit window without overlapping */
	EXPECT_NE(lo & PCI_BASE_ADDRESS_MEM_MASK, lo2 & PCI_BASE_ADDRESS_MEM_MASK);
	/* sizing still says 64-bit, all high bits writable */
	cfg_wr(&vm, slot, PCI_BASE_ADDRESS_1, 0xffffffff, 4);
	EXPECT_EQ(0xffffffff, cfg_rd(&vm, slot, PCI_BASE_ADDRESS_1, 4));
	/* a window that is full says which */
	EXPECT_EQ(-ENOSPC, pci_bar_add(&d, 4, 0x40000000, true, bar_fn, &writes, "huge"));
}

TEST_HARNESS_MAIN
