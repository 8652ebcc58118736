// SPDX-License-Identifier: MIT
/*
 * The join's x86 order (trace/attrib.c, attrib_vm.irq_after_exit): an interrupt that sends a
 * running vCPU out is handled after its kvm_exit (SVM's INTR exit, VMX's external interrupt), so
 * a running sample's chain is target -> exit -> the timer's hrtimer (apic_timer_fn) or the IRQ ->
 * entry -> guest. Blocked and poll-hit chains are the same as arm64's.
 */
#include "tests/unit/trace_stream.h"

#define SVM_EXIT_INTR 0x60
#define SVM_EXIT_IOIO 0x7b

static void x86_vm(struct attrib_vm *vm)
{
	vm_init(vm);
	vm->irq_after_exit = true;
}

/* vCPU 0 in the guest since 50 us; its timer's hrtimer interrupts the host at 101 us */
static void running(struct stream *s)
{
	put(s, 50000, 0, TID0, TEV_KVM_ENTRY, 0, 0);
	put(s, 101000, 0, TID0, TEV_KVM_EXIT, SVM_EXIT_INTR, 0);
	put(s, 101600, 0, TID0, TEV_HRTIMER_ENTRY, BGFN, 0);
	put(s, 101900, 0, TID0, TEV_HRTIMER_EXIT, 0, 0);
	put(s, 103000, 0, TID0, TEV_KVM_ENTRY, 0, 0);
}

TEST(running_the_timer_is_handled_after_the_exit)
{
	struct attrib_vm vm;
	struct stream s = { 0 };

	x86_vm(&vm);
	running(&s);
	struct attrib_result r = join_one(&vm, &s, 0, 100000, 105000);

	EXPECT_EQ(AC_RUNNING, r.cls);
	/* target -> exit 1000, exit -> hrtimer 600, hrtimer -> entry 1400, entry -> wake 2000 */
	STAGES(&r, 1000, 600, -1, 1400, 2000);
	EXPECT_EQ(0, r.residual);
	EXPECT_EQ(-1, r.irq); /* a timer, not an IRQ line */
	free(s.ev);
}

TEST(the_trip_the_interrupt_marked_not_an_earlier_io_exit)
{
	struct attrib_vm vm;
	struct stream s = { 0 };

	x86_vm(&vm);
	put(&s, 50000, 0, TID0, TEV_KVM_ENTRY, 0, 0);
	put(&s, 100200, 0, TID0, TEV_KVM_EXIT, SVM_EXIT_IOIO, 0); /* the guest's own port write */
	put(&s, 100500, 0, TID0, TEV_KVM_ENTRY, 0, 0);
	put(&s, 101000, 0, TID0, TEV_KVM_EXIT, SVM_EXIT_INTR, 0);
	put(&s, 101600, 0, TID0, TEV_HRTIMER_ENTRY, BGFN, 0);
	put(&s, 101900, 0, TID0, TEV_HRTIMER_EXIT, 0, 0);
	put(&s, 103000, 0, TID0, TEV_KVM_ENTRY, 0, 0);
	struct attrib_result r = join_one(&vm, &s, 0, 100000, 105000);

	EXPECT_EQ(AC_RUNNING, r.cls);
	STAGES(&r, 1000, 600, -1, 1400, 2000);
	free(s.ev);
}

TEST(a_device_vector_after_the_exit)
{
	struct attrib_vm vm;
	struct stream s = { 0 };

	x86_vm(&vm);
	put(&s, 50000, 0, TID0, TEV_KVM_ENTRY, 0, 0);
	put(&s, 101000, 0, TID0, TEV_KVM_EXIT, SVM_EXIT_INTR, 0);
	put(&s, 101500, 0, TID0, TEV_IRQ_ENTRY, VFIO_IRQ, 0);
	put(&s, 101800, 0, TID0, TEV_IRQ_EXIT, VFIO_IRQ, 1);
	put(&s, 103000, 0, TID0, TEV_KVM_ENTRY, 0, 0);
	/* a udp answer (workload 3): the device's vectors are its wake sources */
	struct attrib_result r = join_sample(&vm, &s, (struct attrib_sample){ .workload = 3, .target = 100000, .wake = 105000 });

	EXPECT_EQ(AC_RUNNING, r.cls);
	EXPECT_TRUE(r.vfio);
	EXPECT_EQ(VFIO_IRQ, r.irq);
	STAGES(&r, 1000, 500, -1, 1500, 2000);
	free(s.ev);
}

TEST(arm64s_order_does_not_look_after_the_exit)
{
	struct attrib_vm vm;
	struct stream s = { 0 };

	vm_init(&vm); /* irq_after_exit false */
	running(&s);
	struct attrib_result r = join_one(&vm, &s, 0, 100000, 105000);

	/* the one trip after the target, unmarked: taken, its IRQ unseen */
	EXPECT_EQ(AC_RUNNING, r.cls);
	STAGES(&r, -1, -1, -1, 2000, 2000);
	free(s.ev);
}

TEST_HARNESS_MAIN
