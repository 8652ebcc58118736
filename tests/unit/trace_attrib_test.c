// SPDX-License-Identifier: MIT
/* The join (trace/attrib.c) on hand-built arm64 event streams, one per class, as the reference's
 * "Sequences" describe them, and what must stay out of a sample (another VM, another vCPU's
 * doorbell, an earlier wake source). The ambiguous cases and the event store are in
 * trace_attrib_edges_test.c. */
#include "tests/unit/trace_stream.h"

TEST(names)
{
	EXPECT_STREQ("poll hit", attrib_class_name(AC_POLL_HIT));
	EXPECT_STREQ("not visible", attrib_class_name(AC_NOT_VISIBLE));
	EXPECT_STREQ("not_visible", attrib_class_key(AC_NOT_VISIBLE));
	EXPECT_STREQ("ambiguous", attrib_class_key(AC_AMBIGUOUS));
	EXPECT_STREQ("host_irq", attrib_stage_name(AS_HOST_IRQ));
	EXPECT_STREQ("run_queue", attrib_stage_name(AS_RUN_QUEUE));
	EXPECT_STREQ("guest", attrib_stage_name(AS_GUEST));
	EXPECT_EQ(NULL, attrib_class_name(AC_MAX));
	EXPECT_EQ(NULL, attrib_class_key(AC_MAX));
	EXPECT_EQ(NULL, attrib_stage_name(AS_MAX));
}

TEST(timer_blocked_every_stage)
{
	struct attrib_vm vm;
	struct stream s = { 0 };
	uint64_t b = 5000000;

	vm_init(&vm);
	timer_blocked(&s, b, TID0, true);
	struct attrib_result r = join_one(&vm, &s, 0, b + 100000, b + 120000);

	EXPECT_EQ(AC_BLOCKED, r.cls);
	/* hrtimer - T, waking - hrtimer, switch-in - waking, entry - switch-in, W - entry */
	STAGES(&r, 2000, 1000, 7000, 5000, 5000);
	EXPECT_EQ(0, r.residual);
	EXPECT_EQ(1000, r.poll_ns); /* halt start (wakeup - ns) to the block */
	EXPECT_FALSE(r.doorbell);
	free(s.ev);
}

/* After the halt's entry the guest went out once more (an MMIO access) before its thread ran: that
 * trip is the guest's own time, in its stage; the delivery was the halt's. */
TEST(timer_blocked_then_a_trip_of_the_guests_own)
{
	struct attrib_vm vm;
	struct stream s = { 0 };

	vm_init(&vm);
	timer_blocked(&s, 0, TID0, true);
	put(&s, 117000, 0, TID0, TEV_KVM_EXIT, EC_DABT, 1);
	put(&s, 118000, 0, TID0, TEV_KVM_ENTRY, 0, 0);
	struct attrib_result r = join_one(&vm, &s, 0, 100000, 125000);

	EXPECT_EQ(AC_BLOCKED, r.cls);
	STAGES(&r, 2000, 1000, 7000, 5000, 10000);
	EXPECT_EQ(0, r.residual);
	free(s.ev);
}

TEST(timer_blocked_after_a_spurious_wake_up)
{
	struct attrib_vm vm;
	struct stream s = { 0 };

	vm_init(&vm);
	timer_blocked(&s, 0, TID0, true);
	/* woken at 50 us for nothing: back in, blocks again; the halt goes on */
	put(&s, 50000, 1, 0, TEV_SCHED_WAKING, TID0, 0);
	put(&s, 51000, 0, 0, TEV_SCHED_SWITCH, 0, TID0);
	put(&s, 52000, 0, TID0, TEV_SCHED_SWITCH, TID0, 0);
	struct attrib_result r = join_one(&vm, &s, 0, 100000, 120000);

	EXPECT_EQ(AC_BLOCKED, r.cls);
	STAGES(&r, 2000, 1000, 7000, 5000, 5000);
	EXPECT_EQ(0, r.residual);
	EXPECT_EQ(1000, r.poll_ns) TH_LOG("the poll ended at the first block");
	free(s.ev);
}

TEST(timer_blocked_without_the_bg_timer_address_has_no_source)
{
	struct attrib_vm vm;
	struct stream s = { 0 };

	vm_init(&vm);
	vm.bg_timer_fn = 0;
	timer_blocked(&s, 0, TID0, true);
	struct attrib_result r = join_one(&vm, &s, 0, 100000, 120000);

	EXPECT_EQ(AC_BLOCKED, r.cls);
	STAGES(&r, -1, -1, 7000, 5000, 5000);
	EXPECT_EQ(3000, r.residual) TH_LOG("what was not seen stays in the residual");
	free(s.ev);
}

TEST(timer_poll_hit)
{
	struct attrib_vm vm;
	struct stream s = { 0 };

	vm_init(&vm);
	put(&s, 1000, 0, TID0, TEV_KVM_EXIT, EC_WFX, 1);
	put(&s, 101000, 0, TID0, TEV_IRQ_ENTRY, VTIMER, 0);
	put(&s, 101500, 0, TID0, TEV_IRQ_EXIT, VTIMER, 1);
	put(&s, 101600, 0, TID0, TEV_TIMER_UPDATE_IRQ, 0, VTIMER);
	put(&s, 102000, 0, TID0, TEV_VCPU_WAKEUP, 101000, 0);
	put(&s, 104000, 0, TID0, TEV_KVM_ENTRY, 0, 0);
	struct attrib_result r = join_one(&vm, &s, 0, 100000, 106000);

	EXPECT_EQ(AC_POLL_HIT, r.cls);
	STAGES(&r, 1000, 1000, -1, 2000, 2000); /* no run queue on a poll hit: absent, not 0 */
	EXPECT_EQ(0, r.residual);
	EXPECT_EQ(101000, r.poll_ns);
	free(s.ev);
}

/* Halt polling off: the deadline passed while the vCPU was on its way to halt (the exit at 1 us,
 * the target at 2 us, the halt from 5 us); KVM found the timer pending and did not wait. waited = 0
 * here is no poll hit. */
TEST(deadline_past_at_the_halt_is_pending_not_a_poll_hit)
{
	struct attrib_vm vm;
	struct stream s = { 0 };

	vm_init(&vm);
	put(&s, 1000, 0, TID0, TEV_KVM_EXIT, EC_WFX, 1);
	put(&s, 3000, 0, TID0, TEV_IRQ_ENTRY, VTIMER, 0);
	put(&s, 3500, 0, TID0, TEV_IRQ_EXIT, VTIMER, 1);
	put(&s, 8000, 0, TID0, TEV_VCPU_WAKEUP, 3000, 0);
	put(&s, 10000, 0, TID0, TEV_KVM_ENTRY, 0, 0);
	struct attrib_result r = join_one(&vm, &s, 0, 2000, 12000);

	EXPECT_EQ(AC_NO_WAIT, r.cls);
	STAGES(&r, 1000, 5000, -1, 2000, 2000);
	EXPECT_EQ(0, r.residual);
	EXPECT_EQ(-1, r.poll_ns);
	EXPECT_STREQ("no_wait", attrib_class_key(AC_NO_WAIT));
	free(s.ev);
}

TEST(a_vtimer_irq_on_another_vcpus_thread_is_not_the_source)
{
	struct attrib_vm vm;
	struct stream s = { 0 };

	vm_init(&vm);
	put(&s, 1000, 0, TID0, TEV_KVM_EXIT, EC_WFX, 1);
	put(&s, 101000, 2, TID1, TEV_IRQ_ENTRY, VTIMER, 0);
	put(&s, 101200, 3, OTHER, TEV_IRQ_ENTRY, VTIMER, 0);
	put(&s, 102000, 0, TID0, TEV_VCPU_WAKEUP, 101000, 0);
	put(&s, 104000, 0, TID0, TEV_KVM_ENTRY, 0, 0);
	struct attrib_result r = join_one(&vm, &s, 0, 100000, 106000);

	EXPECT_EQ(AC_POLL_HIT, r.cls);
	STAGES(&r, -1, -1, -1, 2000, 2000);
	EXPECT_EQ(2000, r.residual);
	free(s.ev);
}

TEST(vcpu_running_irq_before_exit)
{
	struct attrib_vm vm;
	struct stream s = { 0 };

	vm_init(&vm);
	put(&s, 50000, 0, TID0, TEV_KVM_ENTRY, 0, 0);
	put(&s, 100800, 1, TID1, TEV_IRQ_ENTRY, VFIO_IRQ, 0); /* another CPU: not this exit's */
	put(&s, 101000, 0, TID0, TEV_IRQ_ENTRY, VTIMER, 0);
	put(&s, 101400, 0, TID0, TEV_IRQ_EXIT, VTIMER, 1);
	put(&s, 101500, 0, TID0, TEV_KVM_EXIT, 0, 1);
	put(&s, 103000, 0, TID0, TEV_KVM_ENTRY, 0, 0);
	struct attrib_result r = join_one(&vm, &s, 0, 100000, 105000);

	EXPECT_EQ(AC_RUNNING, r.cls);
	STAGES(&r, 1000, 500, -1, 1500, 2000);
	EXPECT_EQ(0, r.residual);
	EXPECT_EQ(-1, r.poll_ns);
	free(s.ev);
}

TEST(running_irq_before_the_target_is_not_its_source)
{
	struct attrib_vm vm;
	struct stream s = { 0 };

	vm_init(&vm);
	put(&s, 50000, 0, TID0, TEV_KVM_ENTRY, 0, 0);
	put(&s, 90000, 0, TID0, TEV_IRQ_ENTRY, VTIMER, 0);
	put(&s, 101500, 0, TID0, TEV_KVM_EXIT, 0, 1);
	put(&s, 103000, 0, TID0, TEV_KVM_ENTRY, 0, 0);
	struct attrib_result r = join_one(&vm, &s, 0, 100000, 105000);

	EXPECT_EQ(AC_RUNNING, r.cls);
	STAGES(&r, -1, -1, -1, 1500, 2000);
	EXPECT_EQ(1500, r.residual);
	free(s.ev);
}

/* Out twice after the target: the IRQ's trip is the first (its exit, the entry after it); the second
 * trip (an MMIO access) is the guest's own time. */
TEST(running_twice_after_the_target_takes_the_first_trip)
{
	struct attrib_vm vm;
	struct stream s = { 0 };

	vm_init(&vm);
	put(&s, 50000, 0, TID0, TEV_KVM_ENTRY, 0, 0);
	put(&s, 101000, 0, TID0, TEV_IRQ_ENTRY, VTIMER, 0);
	put(&s, 101500, 0, TID0, TEV_KVM_EXIT, 0, 1);
	put(&s, 102000, 0, TID0, TEV_KVM_ENTRY, 0, 0);
	put(&s, 103000, 0, TID0, TEV_KVM_EXIT, EC_DABT, 1); /* and out again before the wake-up */
	put(&s, 104000, 0, TID0, TEV_KVM_ENTRY, 0, 0);
	struct attrib_result r = join_one(&vm, &s, 0, 100000, 105000);

	EXPECT_EQ(AC_RUNNING, r.cls);
	STAGES(&r, 1000, 500, -1, 500, 3000);
	EXPECT_EQ(0, r.residual);
	free(s.ev);
}

/* Out twice after the target, the first trip not the IRQ's (an MMIO access before it fired): the
 * trip the IRQ sent out is the delivery, the first is the guest's own time before it. */
TEST(running_the_trip_an_irq_marks_not_an_earlier_one)
{
	struct attrib_vm vm;
	struct stream s = { 0 };

	vm_init(&vm);
	put(&s, 50000, 0, TID0, TEV_KVM_ENTRY, 0, 0);
	put(&s, 100500, 0, TID0, TEV_KVM_EXIT, EC_DABT, 1);
	put(&s, 101000, 0, TID0, TEV_KVM_ENTRY, 0, 0);
	put(&s, 102000, 0, TID0, TEV_IRQ_ENTRY, VTIMER, 0);
	put(&s, 102500, 0, TID0, TEV_KVM_EXIT, 0, 1);
	put(&s, 104000, 0, TID0, TEV_KVM_ENTRY, 0, 0);
	struct attrib_result r = join_one(&vm, &s, 0, 100000, 105000);

	EXPECT_EQ(AC_RUNNING, r.cls);
	STAGES(&r, 2000, 500, -1, 1500, 1000);
	EXPECT_EQ(0, r.residual);
	free(s.ev);
}

/* Out twice after the target, neither trip sent out by an IRQ nor halted: which one delivered the
 * wake-up is not known. */
TEST(ambiguous_two_unmarked_trips)
{
	struct attrib_vm vm;
	struct stream s = { 0 };

	vm_init(&vm);
	put(&s, 50000, 0, TID0, TEV_KVM_ENTRY, 0, 0);
	put(&s, 100500, 0, TID0, TEV_KVM_EXIT, EC_DABT, 1);
	put(&s, 101000, 0, TID0, TEV_KVM_ENTRY, 0, 0);
	put(&s, 102500, 0, TID0, TEV_KVM_EXIT, EC_DABT, 1);
	put(&s, 104000, 0, TID0, TEV_KVM_ENTRY, 0, 0);
	struct attrib_result r = join_one(&vm, &s, 0, 100000, 105000);

	EXPECT_EQ(AC_AMBIGUOUS, r.cls);
	EXPECT_EQ(AMB_REENTERED, r.why);
	free(s.ev);
}

TEST(not_visible_without_events)
{
	struct attrib_vm vm;
	struct stream s = { 0 };

	vm_init(&vm);
	struct attrib_result r = join_one(&vm, &s, 0, 100000, 104000);

	EXPECT_EQ(AC_NOT_VISIBLE, r.cls);
	STAGES(&r, -1, -1, -1, -1, -1);
	EXPECT_EQ(4000, r.residual) TH_LOG("the whole latency is guest + hardware");
	EXPECT_EQ(-1, r.poll_ns);
}

TEST(not_visible_in_the_guest_since_before_the_target)
{
	struct attrib_vm vm;
	struct stream s = { 0 };

	vm_init(&vm);
	put(&s, 40000, 0, TID0, TEV_KVM_EXIT, EC_DABT, 1);
	put(&s, 50000, 0, TID0, TEV_KVM_ENTRY, 0, 0);
	/* the other vCPU and another VM are busy meanwhile */
	put(&s, 100500, 2, TID1, TEV_KVM_EXIT, EC_WFX, 1);
	put(&s, 101000, 2, TID1, TEV_VCPU_WAKEUP, 400, 0);
	put(&s, 101500, 2, TID1, TEV_KVM_ENTRY, 0, 0);
	put(&s, 102000, 3, OTHER, TEV_KVM_EXIT, EC_WFX, 1);
	put(&s, 102500, 3, OTHER, TEV_KVM_ENTRY, 0, 0);
	struct attrib_result r = join_one(&vm, &s, 0, 100000, 104000);

	EXPECT_EQ(AC_NOT_VISIBLE, r.cls);
	STAGES(&r, -1, -1, -1, -1, -1);
	EXPECT_EQ(4000, r.residual);
	free(s.ev);
}

TEST(doorbell_irq_wakes_a_blocked_vcpu)
{
	struct attrib_vm vm;
	struct stream s = { 0 };

	vm_init(&vm);
	timer_blocked(&s, 0, TID0, false);
	put(&s, 102000, 2, 0, TEV_IRQ_ENTRY, DB0, 0);
	put(&s, 103000, 2, 0, TEV_SCHED_WAKING, TID0, 0);
	put(&s, 103200, 2, 0, TEV_IRQ_EXIT, DB0, 1);
	struct attrib_result r = join_one(&vm, &s, 0, 100000, 120000);

	EXPECT_EQ(AC_BLOCKED, r.cls);
	EXPECT_TRUE(r.doorbell);
	STAGES(&r, 2000, 1000, 7000, 5000, 5000);
	EXPECT_EQ(0, r.residual);
	free(s.ev);
}

TEST(another_vcpus_doorbell_is_not_the_source)
{
	struct attrib_vm vm;
	struct stream s = { 0 };

	vm_init(&vm);
	timer_blocked(&s, 0, TID0, false);
	put(&s, 102000, 2, 0, TEV_IRQ_ENTRY, DB1, 0);
	put(&s, 103000, 2, 0, TEV_SCHED_WAKING, TID0, 0);
	struct attrib_result r = join_one(&vm, &s, 0, 100000, 120000);

	EXPECT_EQ(AC_BLOCKED, r.cls);
	EXPECT_FALSE(r.doorbell);
	STAGES(&r, -1, -1, 7000, 5000, 5000);
	EXPECT_EQ(3000, r.residual);
	free(s.ev);
}

TEST(a_wake_source_that_woke_another_vcpu_first_is_not_ours)
{
	struct attrib_vm vm;
	struct stream s = { 0 };

	vm_init(&vm);
	timer_blocked(&s, 0, TID0, false);
	/* a VFIO vector woke vCPU 1; then something untraced woke vCPU 0 on the same CPU */
	put(&s, 101000, 2, 0, TEV_IRQ_ENTRY, VFIO_IRQ, 0);
	put(&s, 101500, 2, 0, TEV_SCHED_WAKING, TID1, 0);
	put(&s, 103000, 2, TID1, TEV_SCHED_WAKING, TID0, 0);
	struct attrib_result r = join_one(&vm, &s, 0, 100000, 120000);

	EXPECT_EQ(AC_BLOCKED, r.cls);
	STAGES(&r, -1, -1, 7000, 5000, 5000);
	free(s.ev);
}

TEST(another_vms_events_are_ignored)
{
	struct attrib_vm vm;
	struct stream s = { 0 };

	vm_init(&vm);
	timer_blocked(&s, 0, TID0, true);
	/* the other VM's vCPU halts and wakes in the same window */
	put(&s, 1200, 3, OTHER, TEV_KVM_EXIT, EC_WFX, 1);
	put(&s, 3500, 3, OTHER, TEV_SCHED_SWITCH, OTHER, 0);
	put(&s, 102800, 2, 0, TEV_HRTIMER_ENTRY, BGFN, 0); /* its bg timer, later than ours */
	put(&s, 102900, 2, 0, TEV_SCHED_WAKING, OTHER, 0);
	put(&s, 102950, 2, 0, TEV_HRTIMER_EXIT, 0, 0);
	put(&s, 102500, 1, 0, TEV_IRQ_ENTRY, FOREIGN_IRQ, 0);
	put(&s, 102600, 1, 0, TEV_IRQ_EXIT, FOREIGN_IRQ, 1);
	put(&s, 104000, 3, 0, TEV_SCHED_SWITCH, 0, OTHER);
	put(&s, 111500, 3, OTHER, TEV_VCPU_WAKEUP, 110000, 1);
	put(&s, 113000, 3, OTHER, TEV_KVM_ENTRY, 0, 0);
	put(&s, 114000, 3, OTHER, TEV_KVM_EXIT, EC_DABT, 1);
	put(&s, 116000, 0, OTHER, TEV_IRQ_ENTRY, FOREIGN_IRQ, 0);
	struct attrib_result r = join_one(&vm, &s, 0, 100000, 120000);

	EXPECT_EQ(AC_BLOCKED, r.cls);
	STAGES(&r, 2000, 1000, 7000, 5000, 5000);
	EXPECT_EQ(0, r.residual);
	EXPECT_EQ(1000, r.poll_ns);
	free(s.ev);
}

TEST(a_closed_hrtimer_is_not_the_source)
{
	struct attrib_vm vm;
	struct stream s = { 0 };

	vm_init(&vm);
	timer_blocked(&s, 0, TID0, false);
	/* a bg timer that ran and ended on cpu1 before the waking (another VM's) */
	put(&s, 101000, 1, 0, TEV_HRTIMER_ENTRY, BGFN, 0);
	put(&s, 101100, 1, 0, TEV_HRTIMER_EXIT, 0, 0);
	put(&s, 103000, 1, 0, TEV_SCHED_WAKING, TID0, 0);
	struct attrib_result r = join_one(&vm, &s, 0, 100000, 120000);

	EXPECT_EQ(AC_BLOCKED, r.cls);
	STAGES(&r, -1, -1, 7000, 5000, 5000);
	free(s.ev);
}

TEST_HARNESS_MAIN
