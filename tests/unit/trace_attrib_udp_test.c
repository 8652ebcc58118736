// SPDX-License-Identifier: MIT
/*
 * The udp sample's join (trace/attrib_udp.c) on hand-built arm64 streams: the peer's answer is the
 * target, the first of the VM's device IRQs after it names the vCPU (a vector on any CPU, a
 * doorbell its own), and the chain is then a timer sample's. A vector is no timer sample's source.
 */
#include "tests/unit/trace_stream.h"

#define PROBE_UDP 3 /* PROBE_W_UDP */

static struct attrib_result join_udp(const struct attrib_vm *vm, const struct stream *s, const uint64_t *answers,
				     size_t n, uint64_t sent, uint64_t W, struct attrib_sample *smp)
{
	struct attrib_events e;
	struct attrib_result r;

	*smp = (struct attrib_sample){ .workload = PROBE_UDP, .vcpu = 0, .target = sent, .wake = W };
	stream_store(s, &e);
	attrib_join_udp(vm, &e, answers, n, sent, smp, &r);
	attrib_events_free(&e);
	return r;
}

/* vCPU 1 halts on cpu1 and blocks; the answer at 100 us comes back as irq on cpu0 at 110 us */
static void vcpu1_blocked(struct stream *s, int irq)
{
	put(s, 1000, 1, TID1, TEV_KVM_EXIT, EC_WFX, 1);
	put(s, 1500, 1, TID1, TEV_WFX, 0, 0);
	put(s, 3000, 1, TID1, TEV_SCHED_SWITCH, TID1, 0);
	put(s, 110000, 0, 0, TEV_IRQ_ENTRY, irq, 0);
	put(s, 110500, 0, 0, TEV_SCHED_WAKING, TID1, 1);
	put(s, 111000, 0, 0, TEV_IRQ_EXIT, irq, 1);
	put(s, 115000, 1, 0, TEV_SCHED_SWITCH, 0, TID1);
	put(s, 116000, 1, TID1, TEV_VCPU_WAKEUP, 115000, 1);
	put(s, 118000, 1, TID1, TEV_KVM_ENTRY, 0, 0);
}

TEST(a_vector_wakes_a_blocked_vcpu)
{
	struct attrib_vm vm;
	struct stream s = { 0 };
	struct attrib_sample smp;
	const uint64_t answers[] = { 100000 };

	vm_init(&vm);
	vcpu1_blocked(&s, VFIO_IRQ);
	struct attrib_result r = join_udp(&vm, &s, answers, 1, 90000, 125000, &smp);

	EXPECT_EQ(AC_BLOCKED, r.cls);
	EXPECT_EQ(1, smp.vcpu);
	EXPECT_EQ(100000, smp.target);
	EXPECT_TRUE(r.vfio);
	EXPECT_FALSE(r.doorbell);
	EXPECT_EQ(VFIO_IRQ, r.irq); /* the vector, for the per-vector tally */
	STAGES(&r, 10000, 500, 4500, 3000, 7000);
	EXPECT_EQ(0, r.residual);
	free(s.ev);
}

TEST(a_vector_kicks_a_running_vcpu_from_another_cpu)
{
	struct attrib_vm vm;
	struct stream s = { 0 };
	struct attrib_sample smp;
	const uint64_t answers[] = { 100000 };

	vm_init(&vm);
	put(&s, 50000, 1, TID0, TEV_KVM_ENTRY, 0, 0);
	put(&s, 110000, 0, 0, TEV_IRQ_ENTRY, VFIO_IRQ, 0);
	put(&s, 110800, 0, 0, TEV_IRQ_EXIT, VFIO_IRQ, 1);
	put(&s, 111000, 1, TID0, TEV_KVM_EXIT, 0, 1);
	put(&s, 113000, 1, TID0, TEV_KVM_ENTRY, 0, 0);
	struct attrib_result r = join_udp(&vm, &s, answers, 1, 90000, 120000, &smp);

	EXPECT_EQ(AC_RUNNING, r.cls);
	EXPECT_EQ(0, smp.vcpu);
	EXPECT_TRUE(r.vfio);
	STAGES(&r, 10000, 1000, -1, 2000, 7000);
	EXPECT_EQ(0, r.residual);
	free(s.ev);
}

TEST(a_doorbell_names_its_own_vcpu)
{
	struct attrib_vm vm;
	struct stream s = { 0 };
	struct attrib_sample smp;
	const uint64_t answers[] = { 100000 };

	vm_init(&vm);
	vcpu1_blocked(&s, DB1);
	/* vCPU 0 exits right after, for its own reasons: the doorbell, not the order, names vCPU 1 */
	put(&s, 110200, 2, TID0, TEV_KVM_EXIT, EC_DABT, 1);
	struct attrib_result r = join_udp(&vm, &s, answers, 1, 90000, 125000, &smp);

	EXPECT_EQ(AC_BLOCKED, r.cls);
	EXPECT_EQ(1, smp.vcpu);
	EXPECT_TRUE(r.doorbell);
	EXPECT_FALSE(r.vfio);
	EXPECT_EQ(DB1, r.irq);
	STAGES(&r, 10000, 500, 4500, 3000, 7000);
	free(s.ev);
}

TEST(no_device_irq_between_answer_and_wake_is_not_visible)
{
	struct attrib_vm vm;
	struct stream s = { 0 };
	struct attrib_sample smp;
	const uint64_t answers[] = { 100000 };

	vm_init(&vm);
	put(&s, 50000, 1, TID0, TEV_KVM_ENTRY, 0, 0);
	put(&s, 95000, 0, 0, TEV_IRQ_ENTRY, VFIO_IRQ, 0); /* the request's own, before the answer */
	put(&s, 104000, 1, TID0, TEV_IRQ_ENTRY, VTIMER, 0); /* not a device's */
	struct attrib_result r = join_udp(&vm, &s, answers, 1, 90000, 120000, &smp);

	EXPECT_EQ(AC_NOT_VISIBLE, r.cls);
	EXPECT_EQ(20000, r.residual);
	STAGES(&r, -1, -1, -1, -1, -1);
	free(s.ev);
}

TEST(the_answer_inside_the_round_trip_is_the_target)
{
	struct attrib_vm vm;
	struct stream s = { 0 };
	struct attrib_sample smp;
	const uint64_t answers[] = { 50000, 100000, 200000 };

	vm_init(&vm);
	vcpu1_blocked(&s, VFIO_IRQ);
	struct attrib_result r = join_udp(&vm, &s, answers, 3, 90000, 125000, &smp);

	EXPECT_EQ(AC_BLOCKED, r.cls);
	EXPECT_EQ(100000, smp.target);
	free(s.ev);
}

TEST(no_answer_or_two_answers_are_ambiguous)
{
	struct attrib_vm vm;
	struct stream s = { 0 };
	struct attrib_sample smp;
	const uint64_t none[] = { 50000, 200000 }, two[] = { 95000, 100000 };

	vm_init(&vm);
	vcpu1_blocked(&s, VFIO_IRQ);
	struct attrib_result r = join_udp(&vm, &s, none, 2, 90000, 125000, &smp);

	EXPECT_EQ(AC_AMBIGUOUS, r.cls);
	EXPECT_EQ(AMB_NO_ANSWER, r.why);
	EXPECT_EQ(35000, r.residual);
	EXPECT_STREQ("no_answer", attrib_ambiguity_key(AMB_NO_ANSWER));
	r = join_udp(&vm, &s, two, 2, 90000, 125000, &smp);
	EXPECT_EQ(AC_AMBIGUOUS, r.cls);
	EXPECT_EQ(AMB_ANSWERS, r.why);
	r = join_udp(&vm, &s, NULL, 0, 90000, 125000, &smp);
	EXPECT_EQ(AMB_NO_ANSWER, r.why);
	free(s.ev);
}

TEST(a_vector_that_reached_no_vcpu_is_ambiguous)
{
	struct attrib_vm vm;
	struct stream s = { 0 };
	struct attrib_sample smp;
	const uint64_t answers[] = { 100000 };

	vm_init(&vm);
	put(&s, 110000, 0, 0, TEV_IRQ_ENTRY, VFIO_IRQ, 0);
	put(&s, 110500, 0, 0, TEV_SCHED_WAKING, OTHER, 0); /* another VM's vCPU */
	put(&s, 111000, 0, 0, TEV_IRQ_EXIT, VFIO_IRQ, 1);
	struct attrib_result r = join_udp(&vm, &s, answers, 1, 90000, 125000, &smp);

	EXPECT_EQ(AC_AMBIGUOUS, r.cls);
	EXPECT_EQ(AMB_NO_REACTION, r.why);
	free(s.ev);
}

TEST(a_round_trip_the_wrong_way_or_too_long_is_not_joined)
{
	struct attrib_vm vm;
	struct stream s = { 0 };
	struct attrib_sample smp;
	const uint64_t answers[] = { 100000 };

	vm_init(&vm);
	struct attrib_result r = join_udp(&vm, &s, answers, 1, 130000, 125000, &smp);

	EXPECT_EQ(AMB_TARGET_AFTER_WAKE, r.why);
	r = join_udp(&vm, &s, answers, 1, 90000, 90000 + ATTRIB_MAX_TOTAL_NS + 1, &smp);
	EXPECT_EQ(AMB_TOO_LONG, r.why);
	free(s.ev);
}

TEST(woken_before_the_answer_is_an_earlier_wake)
{
	struct attrib_vm vm;
	struct stream s = { 0 };
	struct attrib_sample smp;
	const uint64_t answers[] = { 100000 };

	vm_init(&vm);
	put(&s, 1000, 1, TID1, TEV_KVM_EXIT, EC_WFX, 1);
	put(&s, 3000, 1, TID1, TEV_SCHED_SWITCH, TID1, 0);
	/* the request's transmit completion wakes vCPU 1 before the answer is sent */
	put(&s, 95000, 0, 0, TEV_IRQ_ENTRY, VFIO_IRQ, 0);
	put(&s, 95500, 0, 0, TEV_SCHED_WAKING, TID1, 1);
	put(&s, 96000, 0, 0, TEV_IRQ_EXIT, VFIO_IRQ, 1);
	put(&s, 101000, 0, 0, TEV_IRQ_ENTRY, VFIO_IRQ, 0); /* the answer's: the vCPU is already woken */
	put(&s, 101500, 0, 0, TEV_IRQ_EXIT, VFIO_IRQ, 1);
	put(&s, 103000, 1, 0, TEV_SCHED_SWITCH, 0, TID1);
	put(&s, 104000, 1, TID1, TEV_VCPU_WAKEUP, 103000, 1);
	put(&s, 106000, 1, TID1, TEV_KVM_ENTRY, 0, 0);
	struct attrib_result r = join_udp(&vm, &s, answers, 1, 90000, 110000, &smp);

	EXPECT_EQ(1, smp.vcpu);
	EXPECT_EQ(AC_AMBIGUOUS, r.cls);
	EXPECT_EQ(AMB_EARLIER_WAKE, r.why);
	free(s.ev);
}

TEST(a_vector_is_no_timer_samples_source)
{
	struct attrib_vm vm;
	struct stream s = { 0 };

	vm_init(&vm);
	put(&s, 50000, 0, TID0, TEV_KVM_ENTRY, 0, 0);
	put(&s, 101000, 0, TID0, TEV_IRQ_ENTRY, VFIO_IRQ, 0);
	put(&s, 101400, 0, TID0, TEV_IRQ_EXIT, VFIO_IRQ, 1);
	put(&s, 101500, 0, TID0, TEV_KVM_EXIT, 0, 1);
	put(&s, 103000, 0, TID0, TEV_KVM_ENTRY, 0, 0);
	struct attrib_result r = join_one(&vm, &s, 0, 100000, 105000);

	EXPECT_EQ(AC_RUNNING, r.cls);
	EXPECT_FALSE(r.vfio);
	STAGES(&r, -1, -1, -1, 1500, 2000);
	free(s.ev);
}

TEST_HARNESS_MAIN
