// SPDX-License-Identifier: MIT
/*
 * x86 guest RAM around the PCI hole below 4 GiB: the memslot plan for several sizes (small, odd,
 * exactly the hole, past 4 GiB), the e820 map built from it, and the memslots a VM gets from it
 * (fake KVM): the PCI window, ECAM, IOAPIC and local APICs never hold RAM.
 */
#include <asm/e820.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

#include "kselftest_harness.h"
#include "tests/unit/fake_kvm.h"
#include "core/mem.h"
#include "x86/x86.h"

#define M (1ULL << 20)
#define G (1ULL << 30)

/* Device ranges a RAM range must never reach. */
static const uint64_t devices[][2] = {
	{ X86_PCI_MMIO32_BASE, X86_PCI_MMIO32_SIZE },
	{ X86_PCI_MMCONFIG_BASE, X86_PCI_MMCONFIG_SIZE },
	{ X86_IOAPIC_BASE, 0x1000 },
	{ X86_LAPIC_BASE, 0x100000 },
};

static bool overlaps(uint64_t a, uint64_t alen, uint64_t b, uint64_t blen)
{
	return a < b + blen && b < a + alen;
}

static const uint64_t sizes[] = { 64 * M, 512 * M, 3 * G - 4096, 3 * G, 3 * G + 4096, 3073 * M,
				  4 * G, 5000 * M, 6 * G, 64 * G + 12345 * 4096 };

TEST(plan_splits_around_the_hole)
{
	for (size_t i = 0; i < sizeof(sizes) / sizeof(sizes[0]); i++) {
		struct x86_ram_range r[X86_RAM_RANGES];
		uint64_t s = sizes[i], total = 0;
		int n = x86_ram_plan(s, r);

		ASSERT_LE(1, n) TH_LOG("size 0x%llx", (unsigned long long)s);
		EXPECT_EQ(s > X86_MMIO_HOLE ? 2 : 1, n) TH_LOG("size 0x%llx", (unsigned long long)s);
		EXPECT_EQ(0, r[0].gpa);
		EXPECT_EQ(s < X86_MMIO_HOLE ? s : X86_MMIO_HOLE, r[0].size);
		EXPECT_EQ(r[0].size, x86_low_ram_end(s));
		if (n == 2) {
			EXPECT_EQ(X86_4G, r[1].gpa);
			EXPECT_EQ(s - X86_MMIO_HOLE, r[1].size);
		}
		for (int k = 0; k < n; k++) {
			total += r[k].size;
			EXPECT_EQ(0, (r[k].gpa | r[k].size) & 0xfff);
			for (size_t d = 0; d < sizeof(devices) / sizeof(devices[0]); d++)
				EXPECT_FALSE(overlaps(r[k].gpa, r[k].size, devices[d][0], devices[d][1]))
					TH_LOG("size 0x%llx range %d", (unsigned long long)s, k);
		}
		EXPECT_EQ(s, total);
		EXPECT_EQ(r[n - 1].gpa + r[n - 1].size, x86_ram_end(s));
	}
}

TEST(plan_refusals)
{
	struct x86_ram_range r[X86_RAM_RANGES];

	EXPECT_EQ(-EINVAL, x86_ram_plan(0, r));
	EXPECT_EQ(-EINVAL, x86_ram_plan(3 * G + 1024, r)); /* -m 3145729K: not whole pages */
	EXPECT_EQ(-EINVAL, x86_ram_plan(X86_MAX_PHYS, r)); /* would end past 2^52 */
	EXPECT_EQ(2, x86_ram_plan(X86_MAX_PHYS - X86_4G + X86_MMIO_HOLE, r)); /* ends at 2^52 */
	EXPECT_EQ(X86_MAX_PHYS, r[1].gpa + r[1].size);
	/* the zero page is refused too: no e820 map for a size the plan refuses */
	struct x86_e820_entry m[X86_E820_MAX];

	EXPECT_EQ(0, x86_e820_build(4097, m));
}

/* Every e820 RAM entry lies inside a planned range, all planned RAM but the legacy hole is in
 * the map, and the reserved entries (legacy area, ECAM) are where they belong. */
TEST(e820_follows_the_plan)
{
	for (size_t i = 0; i < sizeof(sizes) / sizeof(sizes[0]); i++) {
		struct x86_ram_range r[X86_RAM_RANGES];
		struct x86_e820_entry m[X86_E820_MAX];
		uint64_t s = sizes[i], ram = 0;
		int nr = x86_ram_plan(s, r);
		unsigned int n = x86_e820_build(s, m);
		bool ecam = false;

		ASSERT_LE(1, nr);
		ASSERT_EQ(s > X86_MMIO_HOLE ? 5 : 4, n) TH_LOG("size 0x%llx", (unsigned long long)s);
		for (unsigned int e = 0; e < n; e++) {
			if (e)
				EXPECT_LE(m[e - 1].addr + m[e - 1].size, m[e].addr);
			if (m[e].type == E820_RESERVED) {
				ecam |= m[e].addr == X86_PCI_MMCONFIG_BASE && m[e].size == X86_PCI_MMCONFIG_SIZE;
				continue;
			}
			ASSERT_EQ(E820_RAM, m[e].type);
			ram += m[e].size;
			bool inside = false;

			for (int k = 0; k < nr; k++)
				inside |= m[e].addr >= r[k].gpa && m[e].addr + m[e].size <= r[k].gpa + r[k].size;
			EXPECT_TRUE(inside) TH_LOG("size 0x%llx: e820 RAM 0x%llx+0x%llx outside the memslots",
						   (unsigned long long)s, (unsigned long long)m[e].addr,
						   (unsigned long long)m[e].size);
		}
		EXPECT_TRUE(ecam);
		/* the EBDA/VGA/BIOS area is backed (the MP table lives there) but not the kernel's */
		EXPECT_EQ(s - (X86_HIGHMEM_BASE - X86_LOWMEM_END), ram) TH_LOG("size 0x%llx", (unsigned long long)s);
		EXPECT_EQ(x86_ram_end(s), m[n - 1].type == E820_RAM ? m[n - 1].addr + m[n - 1].size
								    : r[0].size);
	}
}

/* The memslots a VM gets from the plan (registered as the board does), and what guest addresses
 * translate: nothing in the hole, nothing straddling it. */
TEST(memslots_of_a_6g_guest)
{
	static struct vm vm;
	static struct fake_kvm fk;
	struct x86_ram_range r[X86_RAM_RANGES];
	int n = x86_ram_plan(6 * G, r);

	ASSERT_EQ(0, fake_vm_init(&vm, &fk, 0, 0));
	ASSERT_EQ(2, n);
	for (int i = 0; i < n; i++)
		ASSERT_EQ(0, vm_mem_add(&vm, r[i].gpa, r[i].size));
	ASSERT_EQ(2, fake_kvm_count(&fk, FK_SET_MEMSLOT));
	EXPECT_EQ(0, fk.call[fake_kvm_find(&fk, FK_SET_MEMSLOT, 0)].addr);
	EXPECT_EQ(3 * G, fk.call[fake_kvm_find(&fk, FK_SET_MEMSLOT, 0)].size);
	int second = fake_kvm_find(&fk, FK_SET_MEMSLOT, fake_kvm_find(&fk, FK_SET_MEMSLOT, 0) + 1);

	ASSERT_LE(0, second);
	EXPECT_EQ(X86_4G, fk.call[second].addr);
	EXPECT_EQ(3 * G, fk.call[second].size);
	EXPECT_NE(fk.call[second].slot, fk.call[fake_kvm_find(&fk, FK_SET_MEMSLOT, 0)].slot);

	EXPECT_NE(NULL, vm_gpa_to_hva(&vm, 0, 4096));
	EXPECT_NE(NULL, vm_gpa_to_hva(&vm, X86_MMIO_HOLE - 4096, 4096));
	EXPECT_EQ(NULL, vm_gpa_to_hva(&vm, X86_MMIO_HOLE - 4096, 8192)); /* into the hole */
	for (size_t d = 0; d < sizeof(devices) / sizeof(devices[0]); d++)
		EXPECT_EQ(NULL, vm_gpa_to_hva(&vm, devices[d][0], 4));
	EXPECT_EQ(NULL, vm_gpa_to_hva(&vm, X86_4G - 4, 8)); /* across 4 GiB */
	EXPECT_NE(NULL, vm_gpa_to_hva(&vm, X86_4G, 4096));
	EXPECT_NE(NULL, vm_gpa_to_hva(&vm, 7 * G - 4096, 4096));
	EXPECT_EQ(NULL, vm_gpa_to_hva(&vm, 7 * G, 1)); /* past the end */
	/* the two ranges are distinct host mappings */
	uint8_t *lo = vm_gpa_to_hva(&vm, X86_MMIO_HOLE - 1, 1), *hi = vm_gpa_to_hva(&vm, X86_4G, 1);

	*lo = 0x5a;
	*hi = 0xa5;
	EXPECT_EQ(0x5a, *lo);
	for (int i = 0; i < vm.nr_mem; i++)
		munmap(vm.mem[i].hva, vm.mem[i].size);
	vm.nr_mem = 0;
}

TEST_HARNESS_MAIN
