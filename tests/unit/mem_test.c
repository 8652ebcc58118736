// SPDX-License-Identifier: MIT
/* Guest address translation: every guest-supplied address and length is bounds-checked. */
#include <string.h>

#include "kselftest_harness.h"
#include "vmm/vmm.h"

FIXTURE(mem) {
	struct vm vm;
	uint8_t ram0[0x2000], ram1[0x1000];
};

FIXTURE_SETUP(mem)
{
	memset(&self->vm, 0, sizeof(self->vm));
	self->vm.mem[0] = (struct mem_region){ 0x80000000, sizeof(self->ram0), self->ram0, 0 };
	self->vm.mem[1] = (struct mem_region){ 0x100000000ULL, sizeof(self->ram1), self->ram1, 1 };
	self->vm.nr_mem = 2;
}

FIXTURE_TEARDOWN(mem) {}

TEST_F(mem, inside)
{
	EXPECT_EQ((void *)self->ram0, vm_gpa_to_hva(&self->vm, 0x80000000, 1));
	EXPECT_EQ((void *)self->ram0 + 0x1ff0, vm_gpa_to_hva(&self->vm, 0x80001ff0, 0x10));
	EXPECT_EQ((void *)self->ram1 + 0x800, vm_gpa_to_hva(&self->vm, 0x100000800ULL, 0x800));
	EXPECT_EQ((void *)self->ram0, vm_gpa_to_hva(&self->vm, 0x80000000, sizeof(self->ram0)));
}

TEST_F(mem, outside_or_straddling)
{
	EXPECT_EQ((void *)NULL, vm_gpa_to_hva(&self->vm, 0x7fffffff, 1));
	EXPECT_EQ((void *)NULL, vm_gpa_to_hva(&self->vm, 0x7fffffff, 2));
	EXPECT_EQ((void *)NULL, vm_gpa_to_hva(&self->vm, 0x80001ff0, 0x11));
	EXPECT_EQ((void *)NULL, vm_gpa_to_hva(&self->vm, 0x80002000, 1));
	EXPECT_EQ((void *)NULL, vm_gpa_to_hva(&self->vm, 0x80000000, sizeof(self->ram0) + 1));
	/* lengths and addresses that wrap the 64-bit space */
	EXPECT_EQ((void *)NULL, vm_gpa_to_hva(&self->vm, 0x80000010, UINT64_MAX));
	EXPECT_EQ((void *)NULL, vm_gpa_to_hva(&self->vm, UINT64_MAX, 2));
}

TEST(no_regions)
{
	struct vm vm;

	memset(&vm, 0, sizeof(vm));
	EXPECT_EQ((void *)NULL, vm_gpa_to_hva(&vm, 0, 1));
}

TEST_HARNESS_MAIN
