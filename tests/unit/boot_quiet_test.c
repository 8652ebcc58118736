// SPDX-License-Identifier: MIT
/* Start-up's end for a guest that prints no marker: a quiet spell of the whole window after the
 * last activity with the vCPUs mostly off the CPU, or the deadline; said once; never before the
 * vCPUs ran. */
#include "kselftest_harness.h"
#include "vmm/boot_quiet.h"

#define MS (1000ull * 1000)

TEST(nothing_before_the_vcpus_run)
{
	struct boot_quiet q;

	boot_quiet_init(&q, 1000 * MS, 30000 * MS);
	for (uint64_t t = 0; t < 60000; t += 100)
		ASSERT_EQ(BOOT_QUIET_NOT_YET, boot_quiet_step(&q, 0, 0, t * MS, 0));
}

TEST(a_quiet_spell_of_the_whole_window_ends_start_up_once)
{
	struct boot_quiet q;
	uint64_t start = 5000 * MS, act = 0;

	boot_quiet_init(&q, 1000 * MS, 30000 * MS);
	/* a boot that exits every 100 ms for 3 s: never quiet */
	for (uint64_t t = 0; t <= 3000; t += 100)
		ASSERT_EQ(BOOT_QUIET_NOT_YET, boot_quiet_step(&q, ++act, 0, start + t * MS, start));
	/* then quiet: not at 900 ms after the last exit, at 1000 */
	EXPECT_EQ(BOOT_QUIET_NOT_YET, boot_quiet_step(&q, act, 0, start + 3900 * MS, start));
	EXPECT_EQ(BOOT_QUIET_QUIET, boot_quiet_step(&q, act, 0, start + 4000 * MS, start));
	/* said once */
	EXPECT_EQ(BOOT_QUIET_NOT_YET, boot_quiet_step(&q, act, 0, start + 9000 * MS, start));
}

TEST(activity_restarts_the_window)
{
	struct boot_quiet q;
	uint64_t start = 1 * MS;

	boot_quiet_init(&q, 1000 * MS, 30000 * MS);
	EXPECT_EQ(BOOT_QUIET_NOT_YET, boot_quiet_step(&q, 7, 0, start + 100 * MS, start));
	EXPECT_EQ(BOOT_QUIET_NOT_YET, boot_quiet_step(&q, 7, 0, start + 1000 * MS, start));
	EXPECT_EQ(BOOT_QUIET_NOT_YET, boot_quiet_step(&q, 8, 0, start + 1050 * MS, start));
	EXPECT_EQ(BOOT_QUIET_NOT_YET, boot_quiet_step(&q, 8, 0, start + 2000 * MS, start));
	EXPECT_EQ(BOOT_QUIET_QUIET, boot_quiet_step(&q, 8, 0, start + 2050 * MS, start));
}

TEST(a_guest_that_never_rests_ends_start_up_at_the_deadline)
{
	struct boot_quiet q;
	uint64_t start = 2000 * MS, act = 0;
	enum boot_quiet_why w = BOOT_QUIET_NOT_YET;
	uint64_t t;

	boot_quiet_init(&q, 1000 * MS, 30000 * MS);
	for (t = 0; t <= 40000 && w == BOOT_QUIET_NOT_YET; t += 100)
		w = boot_quiet_step(&q, ++act, 0, start + t * MS, start);
	EXPECT_EQ(BOOT_QUIET_DEADLINE, w);
	EXPECT_EQ(30000, t - 100);
	EXPECT_EQ(300, q.by_activity) TH_LOG("every look after the first saw an exit");
	EXPECT_EQ(0, q.by_cpu);
}

TEST(vcpus_that_compute_without_exits_are_not_idle)
{
	struct boot_quiet q;
	uint64_t start = 1000 * MS, cpu = 0;
	enum boot_quiet_why w = BOOT_QUIET_NOT_YET;
	uint64_t t;

	boot_quiet_init(&q, 1000 * MS, 30000 * MS);
	/* a kernel unpacking its initramfs for 5 s: no exit, a vCPU on the CPU all the time */
	for (t = 0; t <= 5000; t += 200, cpu += 200 * MS)
		ASSERT_EQ(BOOT_QUIET_NOT_YET, boot_quiet_step(&q, 1, cpu, start + t * MS, start));
	/* then idle, a few ms of CPU a second (timer ticks): quiet a second later */
	for (; t <= 7000 && w == BOOT_QUIET_NOT_YET; t += 200, cpu += 1 * MS)
		w = boot_quiet_step(&q, 1, cpu, start + t * MS, start);
	EXPECT_EQ(BOOT_QUIET_QUIET, w);
	EXPECT_GE(6400, t - 200);
	EXPECT_EQ(0, q.by_activity);
	EXPECT_LE(20, q.by_cpu) TH_LOG("each busy look ended a spell: %lu", q.by_cpu);
}

TEST(a_cpu_sum_that_goes_back_is_not_busy)
{
	struct boot_quiet q;
	uint64_t start = 1000 * MS;

	boot_quiet_init(&q, 1000 * MS, 30000 * MS);
	EXPECT_EQ(BOOT_QUIET_NOT_YET, boot_quiet_step(&q, 1, 500 * MS, start, start));
	/* a smaller sum (no unsigned wrap into "busy"): the spell goes on and ends quiet */
	EXPECT_EQ(BOOT_QUIET_NOT_YET, boot_quiet_step(&q, 1, 400 * MS, start + 500 * MS, start));
	EXPECT_EQ(BOOT_QUIET_QUIET, boot_quiet_step(&q, 1, 400 * MS, start + 1000 * MS, start));
	EXPECT_EQ(0, q.by_cpu);
}

TEST(an_unknown_cpu_sum_is_busy_and_the_deadline_still_ends_start_up)
{
	struct boot_quiet q;
	uint64_t start = 1000 * MS, t;
	enum boot_quiet_why w = BOOT_QUIET_NOT_YET;

	boot_quiet_init(&q, 1000 * MS, 30000 * MS);
	for (t = 0; t <= 40000 && w == BOOT_QUIET_NOT_YET; t += 200)
		w = boot_quiet_step(&q, 1, BOOT_QUIET_CPU_UNKNOWN, start + t * MS, start);
	EXPECT_EQ(BOOT_QUIET_DEADLINE, w);
	EXPECT_EQ(30000, t - 200);
	EXPECT_LE(100, q.by_cpu);
}

/* A vCPU whose idle instruction stays in the guest is on the CPU while idle: its time is not work. */
TEST(cpu_time_tells_work_only_where_idle_leaves_the_cpu)
{
	/* x86: HLT exits unless --no-hlt-exit kept it in the guest */
	EXPECT_TRUE(boot_quiet_cpu_tells(false, false, HP_TRAP_DEFAULT, -1));
	EXPECT_FALSE(boot_quiet_cpu_tells(true, false, HP_TRAP_DEFAULT, -1));
	/* arm64, default policy: WFI traps until the vCPU has vLPIs (ef2e78ddadbb) */
	EXPECT_TRUE(boot_quiet_cpu_tells(false, true, HP_TRAP_DEFAULT, -1));
	EXPECT_TRUE(boot_quiet_cpu_tells(false, true, HP_TRAP_DEFAULT, 0));
	EXPECT_FALSE(boot_quiet_cpu_tells(false, true, HP_TRAP_DEFAULT, 3));
	/* trap: always; notrap: never, vLPIs or not; a value the kernel refused keeps the default */
	EXPECT_TRUE(boot_quiet_cpu_tells(false, true, HP_TRAP_TRAP, 3));
	EXPECT_FALSE(boot_quiet_cpu_tells(false, true, HP_TRAP_NOTRAP, -1));
	EXPECT_TRUE(boot_quiet_cpu_tells(false, true, HP_TRAP_OTHER, 0));
	EXPECT_FALSE(boot_quiet_cpu_tells(false, true, HP_TRAP_OTHER, 1));
}

/* A guest idling on the CPU, its vCPUs left out of the sum (the board's 0): the first quiet second
 * ends start-up, where the same CPU time counted would have kept it to the deadline. */
TEST(an_idle_vcpu_on_the_cpu_left_out_ends_start_up_at_its_quiet_second)
{
	struct boot_quiet with, without;
	uint64_t start = 1000 * MS;
	enum boot_quiet_why w1 = BOOT_QUIET_NOT_YET, w2 = BOOT_QUIET_NOT_YET;
	uint64_t t, t1 = 0;

	boot_quiet_init(&with, 1000 * MS, 30000 * MS);
	boot_quiet_init(&without, 1000 * MS, 30000 * MS);
	for (t = 0; t <= 40000 && w2 == BOOT_QUIET_NOT_YET; t += 200) {
		if (w1 == BOOT_QUIET_NOT_YET && (w1 = boot_quiet_step(&without, 7, 0, start + t * MS, start)))
			t1 = t;
		/* two vCPUs on the CPU all the time */
		w2 = boot_quiet_step(&with, 7, 2 * t * MS, start + t * MS, start);
	}
	EXPECT_EQ(BOOT_QUIET_QUIET, w1);
	EXPECT_EQ(1000, t1);
	EXPECT_EQ(BOOT_QUIET_DEADLINE, w2);
}

TEST_HARNESS_MAIN
