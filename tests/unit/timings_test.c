// SPDX-License-Identifier: MIT
/* Start-up phase marks: off unless VMM_TIMINGS=1, then one line of increasing CLOCK_MONOTONIC
 * marks, phases not reached left out (make bench parses this line). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "kselftest_harness.h"
#include "core/timings.h"

static void print_to(const struct boot_times *t, char *buf, size_t size)
{
	FILE *f = fmemopen(buf, size, "w");

	boot_times_print(t, f);
	fclose(f);
}

TEST(off_without_the_environment)
{
	struct boot_times t;
	char buf[512] = "";

	unsetenv("VMM_TIMINGS");
	boot_times_init(&t);
	boot_times_mark(&t, PHASE_RUN);
	print_to(&t, buf, sizeof(buf));
	EXPECT_STREQ("", buf);
	setenv("VMM_TIMINGS", "yes", 1); /* only "1" turns it on */
	boot_times_init(&t);
	EXPECT_FALSE(t.on);
}

TEST(marks_increase_and_print_in_phase_order)
{
	struct boot_times t;
	char buf[512];
	unsigned long long start, run, exit_;

	setenv("VMM_TIMINGS", "1", 1);
	boot_times_init(&t);
	ASSERT_TRUE(t.on);
	boot_times_mark(&t, PHASE_VM_RAM);
	boot_times_mark(&t, PHASE_RUN);
	boot_times_mark(&t, PHASE_EXIT);
	boot_times_mark(&t, NR_BOOT_PHASES); /* out of range: ignored */
	EXPECT_LE(t.ns[PHASE_START], t.ns[PHASE_VM_RAM]);
	EXPECT_LE(t.ns[PHASE_VM_RAM], t.ns[PHASE_RUN]);
	EXPECT_LE(t.ns[PHASE_RUN], t.ns[PHASE_EXIT]);
	print_to(&t, buf, sizeof(buf));
	ASSERT_EQ(3, sscanf(buf, "vmm: timings: start=%llu vm_ram=%*u run=%llu exit=%llu\n", &start, &run, &exit_))
		TH_LOG("%s", buf);
	EXPECT_EQ(t.ns[PHASE_START], start);
	EXPECT_EQ(t.ns[PHASE_EXIT], exit_);
	EXPECT_EQ(NULL, strstr(buf, "vcpus=")) TH_LOG("%s", buf); /* not reached */
	EXPECT_STREQ("kernel_decode", boot_phase_name(PHASE_KERNEL_DECODE));
	EXPECT_STREQ("?", boot_phase_name(NR_BOOT_PHASES));
	unsetenv("VMM_TIMINGS");
}

TEST_HARNESS_MAIN
