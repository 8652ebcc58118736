// SPDX-License-Identifier: MIT
/* pvpanic-mmio: what the guest reads, and a PANICKED write stopping the VM as a crash. */
#include <misc/pvpanic.h>
#include <string.h>

#include "kselftest_harness.h"
#include "platform/pvpanic.h"
#include "core/vm.h"

FIXTURE(pvpanic) {
	struct vm vm;
	struct pvpanic p;
};

FIXTURE_SETUP(pvpanic)
{
	memset(&self->vm, 0, sizeof(self->vm)); /* no vCPUs: vm_request_stop only records */
	atomic_init(&self->vm.exit_code, -1);
	pvpanic_init(&self->p, &self->vm);
}

FIXTURE_TEARDOWN(pvpanic) {}

static uint8_t rd8(struct pvpanic *p, uint64_t off)
{
	uint8_t v = 0xee;

	pvpanic_mmio(p, off, &v, 1, false);
	return v;
}

static void wr8(struct pvpanic *p, uint64_t off, uint8_t v)
{
	pvpanic_mmio(p, off, &v, 1, true);
}

TEST_F(pvpanic, reads_the_supported_events)
{
	EXPECT_EQ(PVPANIC_PANICKED | PVPANIC_CRASH_LOADED, rd8(&self->p, 0));
	EXPECT_EQ(0, rd8(&self->p, 1));
	EXPECT_EQ(0, rd8(&self->p, 0x800));
}

TEST_F(pvpanic, panicked_is_a_crash)
{
	wr8(&self->p, 0, PVPANIC_PANICKED);
	EXPECT_TRUE(atomic_load(&self->vm.stop));
	EXPECT_EQ(VM_EXIT_CRASH, atomic_load(&self->vm.exit_code));
	EXPECT_TRUE(atomic_load(&self->vm.pvpanicked));
	EXPECT_TRUE(atomic_load(&self->vm.guest_panicked));
}

/* A crash kernel is loaded and takes over: the guest runs on. */
TEST_F(pvpanic, crash_loaded_alone_does_not_stop)
{
	wr8(&self->p, 0, PVPANIC_CRASH_LOADED);
	EXPECT_FALSE(atomic_load(&self->vm.stop));
	EXPECT_EQ(PVPANIC_CRASH_LOADED, atomic_load(&self->p.events));
	wr8(&self->p, 1, PVPANIC_PANICKED); /* outside the register */
	EXPECT_FALSE(atomic_load(&self->vm.stop));
}

TEST_HARNESS_MAIN
