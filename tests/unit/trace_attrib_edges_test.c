// SPDX-License-Identifier: MIT
/* The join's edges (trace/attrib.c): what makes a sample ambiguous, and why; the event store
 * (sort, cap); an episode beyond the window; random streams keeping the invariants; a long stream
 * joined fast. */
#include <inttypes.h>
#include <time.h>

#include "tests/unit/trace_stream.h"

TEST(ambiguous_two_halts_in_one_episode)
{
	struct attrib_vm vm;
	struct stream s = { 0 };

	vm_init(&vm);
	timer_blocked(&s, 0, TID0, true);
	put(&s, 111500, 0, TID0, TEV_VCPU_WAKEUP, 500, 0);
	struct attrib_result r = join_one(&vm, &s, 0, 100000, 120000);

	EXPECT_EQ(AC_AMBIGUOUS, r.cls);
	EXPECT_EQ(AMB_TWO_HALTS, r.why);
	/* the stages found are kept, for the report to show apart */
	EXPECT_EQ(2000, r.stage[AS_HOST_IRQ]);
	EXPECT_EQ(5000, r.stage[AS_GUEST]);
	free(s.ev);
}

TEST(ambiguous_a_chain_that_began_before_the_target)
{
	struct attrib_vm vm;
	struct stream s = { 0 };

	vm_init(&vm);
	timer_blocked(&s, 0, TID0, false);
	/* the vCPU's bg timer fired 5 us before the target, far beyond the clocks' error: an earlier
	 * timer of the guest's woke it, and the sample rode along */
	put(&s, 95000, 1, 0, TEV_HRTIMER_ENTRY, BGFN, 0);
	put(&s, 96000, 1, 0, TEV_SCHED_WAKING, TID0, 0);
	put(&s, 96500, 1, 0, TEV_HRTIMER_EXIT, 0, 0);
	struct attrib_result r = join_one(&vm, &s, 0, 100000, 120000);

	EXPECT_EQ(AC_AMBIGUOUS, r.cls);
	EXPECT_EQ(AMB_EARLIER_WAKE, r.why);
	EXPECT_EQ(-1, r.stage[AS_HOST_IRQ]); /* negative: not kept */
	EXPECT_EQ(1000, r.stage[AS_SIGNAL]);
	free(s.ev);
}

TEST(a_stage_negative_within_the_slack_is_zero)
{
	struct attrib_vm vm;
	struct stream s = { 0 };

	vm_init(&vm);
	timer_blocked(&s, 0, TID0, false);
	put(&s, 99500, 1, 0, TEV_HRTIMER_ENTRY, BGFN, 0); /* 500 ns early: the mapping's error */
	put(&s, 101000, 1, 0, TEV_SCHED_WAKING, TID0, 0);
	put(&s, 101500, 1, 0, TEV_HRTIMER_EXIT, 0, 0);
	struct attrib_result r = join_one(&vm, &s, 0, 100000, 120000);

	EXPECT_EQ(AC_BLOCKED, r.cls);
	STAGES(&r, 0, 1500, 9000, 5000, 5000);
	EXPECT_EQ(0, r.residual);
	free(s.ev);
}

TEST(ambiguous_out_of_the_guest_since_before_the_target_without_a_halt)
{
	struct attrib_vm vm;
	struct stream s = { 0 };

	vm_init(&vm);
	put(&s, 50000, 0, TID0, TEV_KVM_ENTRY, 0, 0);
	put(&s, 90000, 0, TID0, TEV_KVM_EXIT, EC_DABT, 1); /* userspace MMIO */
	put(&s, 103000, 0, TID0, TEV_KVM_ENTRY, 0, 0);
	struct attrib_result r = join_one(&vm, &s, 0, 100000, 105000);

	EXPECT_EQ(AC_AMBIGUOUS, r.cls);
	EXPECT_EQ(AMB_OUT_BEFORE_TARGET, r.why);
	STAGES(&r, -1, -1, -1, -1, 2000);
	free(s.ev);
}

TEST(ambiguous_out_of_the_guest_at_the_wake_up)
{
	struct attrib_vm vm;
	struct stream s = { 0 };

	vm_init(&vm);
	put(&s, 50000, 0, TID0, TEV_KVM_ENTRY, 0, 0);
	put(&s, 90000, 0, TID0, TEV_KVM_EXIT, EC_DABT, 1);
	struct attrib_result r = join_one(&vm, &s, 0, 100000, 105000);

	EXPECT_EQ(AC_AMBIGUOUS, r.cls);
	EXPECT_EQ(AMB_OUT_AT_WAKE, r.why);
	STAGES(&r, -1, -1, -1, -1, -1);

	put(&s, 95000, 0, TID0, TEV_KVM_ENTRY, 0, 0);
	put(&s, 101000, 0, TID0, TEV_KVM_EXIT, EC_WFX, 1); /* left after the target, not back */
	r = join_one(&vm, &s, 0, 100000, 105000);
	EXPECT_EQ(AC_AMBIGUOUS, r.cls);
	EXPECT_EQ(AMB_OUT_AT_WAKE, r.why);
	free(s.ev);
}

/* The trace began with the vCPU halted: nothing before the target says where it was; its halt's
 * end and entry after the target are no sign of lost events. */
TEST(trace_began_with_the_vcpu_out_is_not_lost)
{
	struct attrib_vm vm;
	struct stream s = { 0 };

	vm_init(&vm);
	put(&s, 102000, 0, TID0, TEV_VCPU_WAKEUP, 50000, 1);
	put(&s, 103000, 0, TID0, TEV_KVM_ENTRY, 0, 0);
	struct attrib_result r = join_one(&vm, &s, 0, 100000, 105000);

	EXPECT_EQ(AC_AMBIGUOUS, r.cls);
	EXPECT_EQ(AMB_OUT_AT_WAKE, r.why);
	free(s.ev);
}

/* A sample whose wake-up is over a second after its target (the guest writes both) is not
 * joined: counted too_long, no event looked at. */
TEST(a_sample_over_a_second_is_too_long)
{
	struct attrib_vm vm;
	struct stream s = { 0 };

	vm_init(&vm);
	timer_blocked(&s, 0, TID0, true);
	struct attrib_result r = join_one(&vm, &s, 0, 100000, 100000 + ATTRIB_MAX_TOTAL_NS + 1);

	EXPECT_EQ(AC_AMBIGUOUS, r.cls);
	EXPECT_EQ(AMB_TOO_LONG, r.why);
	STAGES(&r, -1, -1, -1, -1, -1);
	EXPECT_STREQ("too_long", attrib_ambiguity_key(AMB_TOO_LONG));
	free(s.ev);
}

TEST(ambiguous_lost_exit)
{
	struct attrib_vm vm;
	struct stream s = { 0 };

	vm_init(&vm);
	put(&s, 50000, 0, TID0, TEV_KVM_ENTRY, 0, 0);
	put(&s, 102000, 0, TID0, TEV_VCPU_WAKEUP, 1000, 0);
	put(&s, 103000, 0, TID0, TEV_KVM_ENTRY, 0, 0);
	struct attrib_result r = join_one(&vm, &s, 0, 100000, 105000);

	EXPECT_EQ(AC_AMBIGUOUS, r.cls);
	EXPECT_EQ(AMB_LOST, r.why);
	free(s.ev);
}

TEST(ambiguous_target_after_wake)
{
	struct attrib_vm vm;
	struct stream s = { 0 };

	vm_init(&vm);
	timer_blocked(&s, 0, TID0, true);
	struct attrib_result r = join_one(&vm, &s, 0, 120001, 120000);

	EXPECT_EQ(AC_AMBIGUOUS, r.cls);
	EXPECT_EQ(AMB_TARGET_AFTER_WAKE, r.why);
	STAGES(&r, -1, -1, -1, -1, -1);
	free(s.ev);
}

TEST(a_vcpu_without_a_thread_is_ambiguous)
{
	struct attrib_vm vm;
	struct stream s = { 0 };

	vm_init(&vm);
	vm.vcpu_tid[1] = 0;
	timer_blocked(&s, 0, TID0, true);
	struct attrib_result r = join_one(&vm, &s, 1, 100000, 120000);

	EXPECT_EQ(AC_AMBIGUOUS, r.cls);
	EXPECT_EQ(AMB_NO_VCPU, r.why);
	STAGES(&r, -1, -1, -1, -1, -1);
	r = join_one(&vm, &s, 7, 100000, 120000);
	EXPECT_EQ(AC_AMBIGUOUS, r.cls);
	EXPECT_EQ(AMB_NO_VCPU, r.why);
	r = join_one(&vm, &s, ATTRIB_VCPUS_MAX + 1, 100000, 120000);
	EXPECT_EQ(AC_AMBIGUOUS, r.cls);
	EXPECT_EQ(AMB_NO_VCPU, r.why);
	STAGES(&r, -1, -1, -1, -1, -1);
	free(s.ev);
}

TEST(events_out_of_order_are_sorted_before_the_join)
{
	struct attrib_vm vm;
	struct stream s = { 0 }, rev = { 0 };

	vm_init(&vm);
	timer_blocked(&s, 0, TID0, true);
	for (size_t i = s.n; i-- > 0;)
		put(&rev, s.ev[i].t, s.ev[i].cpu, s.ev[i].tid, s.ev[i].kind, s.ev[i].a, s.ev[i].b);
	struct attrib_result r = join_one(&vm, &rev, 0, 100000, 120000);

	EXPECT_EQ(AC_BLOCKED, r.cls);
	STAGES(&r, 2000, 1000, 7000, 5000, 5000);
	free(s.ev);
	free(rev.ev);
}

TEST(sort_is_stable_by_time)
{
	struct attrib_events e;
	const size_t n = 5000;

	attrib_events_init(&e, 0);
	for (size_t i = 0; i < n; i++) {
		struct tev v = { .t = (i * 7919) % 61, .a = (int64_t)i };

		attrib_events_add(&e, &v);
	}
	attrib_events_sort(&e);
	ASSERT_EQ(n, e.n);
	for (size_t i = 1; i < n; i++) {
		ASSERT_LE(e.ev[i - 1].t, e.ev[i].t);
		if (e.ev[i - 1].t == e.ev[i].t)
			ASSERT_LT(e.ev[i - 1].a, e.ev[i].a) TH_LOG("equal times keep their order at %zu", i);
	}
	attrib_events_free(&e);
	EXPECT_EQ(0, e.n);
}

TEST(events_past_the_cap_are_counted_dropped)
{
	struct attrib_events e;
	struct tev v = { .t = 1 };

	attrib_events_init(&e, 4);
	for (int i = 0; i < 10; i++)
		attrib_events_add(&e, &v);
	EXPECT_EQ(4, e.n);
	EXPECT_EQ(6, e.dropped);
	attrib_events_free(&e);

	attrib_events_init(&e, 3000); /* growth by doubling stops at the cap, not a power of two */
	for (int i = 0; i < 3001; i++)
		attrib_events_add(&e, &v);
	EXPECT_EQ(3000, e.n);
	EXPECT_EQ(1, e.dropped);
	attrib_events_free(&e);
}

TEST(an_episode_beyond_the_window_is_ambiguous)
{
	struct attrib_vm vm;
	struct stream s = { 0 };

	vm_init(&vm);
	put(&s, 1000, 0, TID0, TEV_KVM_EXIT, EC_WFX, 1);
	for (uint64_t i = 0; i < 150000; i++)
		put(&s, 2000 + i, 3, OTHER, TEV_KVM_EXIT, EC_DABT, 1);
	put(&s, 200000, 0, TID0, TEV_VCPU_WAKEUP, 190000, 0);
	put(&s, 201000, 0, TID0, TEV_KVM_ENTRY, 0, 0);
	struct attrib_result r = join_one(&vm, &s, 0, 199000, 202000);

	EXPECT_EQ(AC_AMBIGUOUS, r.cls);
	EXPECT_EQ(AMB_OUT_AT_WAKE, r.why);
	free(s.ev);
}

/* Random streams, unsorted or sorted, random samples: whatever the events say, a class's stages
 * are -1 or >= 0 and add up with the residual to the total (run under the sanitizers too). */
TEST(random_streams_keep_the_invariants)
{
	struct attrib_vm vm;
	struct attrib_events e;
	uint64_t x = 88172645463325252ull;
	unsigned int seen[AC_MAX] = { 0 };

	vm_init(&vm);
	for (int round = 0; round < 20; round++) {
		attrib_events_init(&e, 0);
		for (int i = 0; i < 3000; i++) {
			x ^= x << 13, x ^= x >> 7, x ^= x << 17;
			static const int32_t tids[] = { TID0, TID1, OTHER, 0 };
			static const int64_t as[] = { TID0, TID1, OTHER, VTIMER, VFIO_IRQ, DB0, DB1, BGFN, 0, 1 };
			struct tev v = { .t = (x >> 8) % 1000000, .cpu = (x >> 40) % 4, .tid = tids[(x >> 44) % 4],
					 .kind = 1 + (x >> 48) % (TEV_KIND_MAX - 1), .a = as[(x >> 52) % 10],
					 .b = as[(x >> 58) % 10] };

			if (round % 5 == 4)
				v.t = x; /* anywhere on the clock */
			attrib_events_add(&e, &v);
		}
		if (round % 2)
			attrib_events_sort(&e);
		for (int k = 0; k < 500; k++) {
			x ^= x << 13, x ^= x >> 7, x ^= x << 17;
			uint64_t T = (x >> 4) % 1000000, W = T + (x >> 40) % 50000;
			struct attrib_sample smp = { 1, (uint16_t)(x % 3), T, round % 5 == 3 ? x : W };
			struct attrib_result r;
			__int128 sum = 0;

			attrib_join(&vm, &e, &smp, &r);
			ASSERT_LT(r.cls, AC_MAX);
			seen[r.cls]++;
			if (r.cls == AC_AMBIGUOUS)
				continue;
			for (unsigned int st = 0; st < AS_MAX; st++) {
				ASSERT_GE(r.stage[st], -1);
				sum += r.stage[st] > 0 ? r.stage[st] : 0;
			}
			ASSERT_GE(r.residual, 0);
			/* exact, but for stages up to the slack (1 us) early clamped to 0, which the
			 * residual cannot give back when it is 0 */
			__int128 total = (__int128)(smp.wake - smp.target), got = sum + r.residual;

			if (total < INT64_MAX / 2) /* else they saturate */
				ASSERT_TRUE(r.residual ? got == total : got >= total && got <= total + AS_MAX * 1000)
					TH_LOG("round %d class %u: %" PRId64 " %" PRId64 " %" PRId64 " %" PRId64 " %" PRId64
					       " + %" PRId64 " of %" PRIu64, round, r.cls, r.stage[0], r.stage[1], r.stage[2],
					       r.stage[3], r.stage[4], r.residual, smp.wake - smp.target);
			if (r.cls == AC_NOT_VISIBLE)
				ASSERT_EQ(-1, r.stage[AS_GUEST]);
		}
		attrib_events_free(&e);
	}
	EXPECT_GT(seen[AC_AMBIGUOUS], 0);
	EXPECT_GT(seen[AC_NOT_VISIBLE] + seen[AC_BLOCKED] + seen[AC_POLL_HIT] + seen[AC_RUNNING], 0);
}

/* 10k samples on each of two vCPUs, blocked and poll hit interleaved, plus another VM's noise:
 * 200k events. An O(n^2) join would take minutes; this takes milliseconds. */
TEST(a_long_stream_joins_in_n_log_n)
{
	struct attrib_vm vm;
	struct stream s = { 0 };
	struct attrib_events e;
	const unsigned int N = 10000;
	struct timespec t0, t1;

	vm_init(&vm);
	for (unsigned int i = 0; i < N; i++) {
		uint64_t b = 1000000 + (uint64_t)i * 200000, p = b + 7000;

		timer_blocked(&s, b, TID0, true);
		put(&s, p + 1000, 2, TID1, TEV_KVM_EXIT, EC_WFX, 1);
		put(&s, p + 101000, 2, TID1, TEV_IRQ_ENTRY, VTIMER, 0);
		put(&s, p + 101500, 2, TID1, TEV_IRQ_EXIT, VTIMER, 1);
		put(&s, p + 102000, 2, TID1, TEV_VCPU_WAKEUP, 101000, 0);
		put(&s, p + 104000, 2, TID1, TEV_KVM_ENTRY, 0, 0);
		put(&s, b + 50000, 3, OTHER, TEV_KVM_EXIT, EC_DABT, 1);
		put(&s, b + 51000, 3, OTHER, TEV_KVM_ENTRY, 0, 0);
		put(&s, b + 52000, 3, 0, TEV_SCHED_SWITCH, 0, OTHER);
		put(&s, b + 150000, 4, 0, TEV_IRQ_ENTRY, FOREIGN_IRQ, 0);
		put(&s, b + 150500, 4, 0, TEV_IRQ_EXIT, FOREIGN_IRQ, 1);
	}
	ASSERT_EQ(200000, s.n);
	clock_gettime(CLOCK_MONOTONIC, &t0);
	attrib_events_init(&e, 0);
	for (size_t i = 0; i < s.n; i++)
		attrib_events_add(&e, &s.ev[i]);
	attrib_events_sort(&e);
	unsigned int blocked = 0, poll = 0;

	for (unsigned int i = 0; i < N; i++) {
		uint64_t b = 1000000 + (uint64_t)i * 200000, p = b + 7000;
		struct attrib_sample s0 = { 1, 0, b + 100000, b + 120000 }, s1 = { 1, 1, p + 100000, p + 106000 };
		struct attrib_result r0, r1;

		attrib_join(&vm, &e, &s0, &r0);
		attrib_join(&vm, &e, &s1, &r1);
		blocked += r0.cls == AC_BLOCKED && r0.stage[AS_RUN_QUEUE] == 7000 && r0.stage[AS_HOST_IRQ] == 2000 &&
			   r0.residual == 0;
		poll += r1.cls == AC_POLL_HIT && r1.stage[AS_SIGNAL] == 1000 && r1.residual == 0;
	}
	clock_gettime(CLOCK_MONOTONIC, &t1);
	EXPECT_EQ(N, blocked);
	EXPECT_EQ(N, poll);
	double secs = (double)(t1.tv_sec - t0.tv_sec) + (double)(t1.tv_nsec - t0.tv_nsec) / 1e9;

	EXPECT_LT(secs, 5.0) TH_LOG("sort and 20k joins took %.2f s", secs);
	attrib_events_free(&e);
	free(s.ev);
}

TEST_HARNESS_MAIN
