// SPDX-License-Identifier: MIT
/*
 * x86 KVM-API tests with a tiny guest (guest.S), kselftests-style: they need /dev/kvm but no
 * Linux guest, so they run wherever an x86 /dev/kvm runs hand-made code: natively on hosts with
 * kvm_amd / kvm_intel / kvm_pvm, and in the x86 lab (nested SVM). Cases: the in-kernel irqchip
 * (an MSI route + irqfd reaches the guest's IDT), the split irqchip (a level vector's EOI exits
 * as KVM_EXIT_IOAPIC_EOI), MSI routes and KVM_SIGNAL_MSI, MSR_KVM_POLL_CONTROL from both sides,
 * the PV send-IPI hypercall waking a halted vCPU, the halt stats moving, a vCPU that never
 * exits failing its wait fast, an emulation failure reported with its instruction bytes (what
 * a stock kernel meets on kvm_pvm) in vmm's words, and a triple fault's report.
 * Every case first finds out what the host has: no /dev/kvm, one that cannot be opened, or a KVM
 * (named by its vendor module) without a capability or a PV feature is a skip naming it.
 */
#include <asm/kvm_para.h>
#include <linux/kvm_para.h>
#include <cpuid.h>
#include <errno.h>
#include <fcntl.h>
#include <linux/kvm.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "halt_poll/halt_poll.h"
#include "kselftest_harness.h"
#include "tests/kvm/x86/guest.h"
#include "tests/kvm/x86/tvm.h"
#include "core/kvm_error.h"
#include "x86/x86.h"

/* ---- the cases ---- */

FIXTURE(kvm)
{
	struct host h;
	struct tvm t;
};

FIXTURE_SETUP(kvm)
{
	char why[320];

	self->t.fd = -1;
	if (host_open(&self->h, why, sizeof(why)) < 0)
		SKIP(return, "%s", why);
	TH_LOG("host: %s", self->h.what);
}

FIXTURE_TEARDOWN(kvm)
{
	tvm_destroy(&self->t);
	host_close(&self->h);
}

#define NEED_CAP(cap) do { \
	if (!has_cap(&self->h, cap)) \
		SKIP(return, "%s has no " #cap, self->h.module); \
} while (0)

/* KVM_CREATE_IRQCHIP: an MSI route with an irqfd delivers its vector to the guest's IDT, twice
 * (the first EOI reached the in-kernel LAPIC). */
TEST_F(kvm, in_kernel_irqchip_msi_irqfd)
{
	uint32_t gsi = 1, data = 0x41, v;
	int efd;

	NEED_CAP(KVM_CAP_IRQCHIP);
	NEED_CAP(KVM_CAP_IRQ_ROUTING);
	NEED_CAP(KVM_CAP_IRQFD);
	ASSERT_EQ(0, tvm_create(&self->t, &self->h, IRQCHIP_KERNEL));
	ASSERT_EQ(0, tvcpu_add(&self->t, &self->h, MODE_IDLE));
	ASSERT_EQ(0, next_io(&self->t.v[0], PORT_READY, &v));
	EXPECT_EQ(0, v); /* APIC ID 0 */
	ASSERT_EQ(0, set_msi_routes(&self->t, &gsi, &data, 1));
	ASSERT_LE(0, efd = irqfd(&self->t, gsi));
	for (int i = 0; i < 2; i++) {
		ASSERT_EQ(0, fire(efd));
		ASSERT_EQ(0, next_io(&self->t.v[0], PORT_VECTOR, &v));
		EXPECT_EQ(0x41, v);
	}
	close(efd);
}

/* KVM_CAP_SPLIT_IRQCHIP: vectors of level-triggered MSI routes on IOAPIC pins (GSI < 24) are the
 * ones whose EOI KVM hands to userspace's IOAPIC as KVM_EXIT_IOAPIC_EOI; an edge vector's EOI
 * stays in the kernel. */
TEST_F(kvm, split_irqchip_level_eoi_exits)
{
	uint32_t gsi[2] = { 5, 6 }, data[2] = { 0x43 | MSI_DATA_LEVEL | MSI_DATA_ASSERT, 0x44 }, v;
	int lvl, edge, r;

	NEED_CAP(KVM_CAP_SPLIT_IRQCHIP);
	NEED_CAP(KVM_CAP_IRQ_ROUTING);
	NEED_CAP(KVM_CAP_IRQFD);
	ASSERT_EQ(0, tvm_create(&self->t, &self->h, IRQCHIP_SPLIT));
	ASSERT_EQ(0, tvcpu_add(&self->t, &self->h, MODE_IDLE));
	ASSERT_EQ(0, next_io(&self->t.v[0], PORT_READY, &v));
	ASSERT_EQ(0, set_msi_routes(&self->t, gsi, data, 2));
	ASSERT_LE(0, lvl = irqfd(&self->t, gsi[0]));
	ASSERT_LE(0, edge = irqfd(&self->t, gsi[1]));
	ASSERT_EQ(0, fire(edge));
	ASSERT_EQ(0, next_io(&self->t.v[0], PORT_VECTOR, &v));
	EXPECT_EQ(0x44, v);
	/* pending before the guest EOIs 0x44: the next exit is 0x43's report, not an EOI exit */
	ASSERT_EQ(0, fire(lvl));
	ASSERT_EQ(0, next_io(&self->t.v[0], PORT_VECTOR, &v));
	EXPECT_EQ(0x43, v);
	r = vrun(&self->t.v[0]);
	ASSERT_EQ(KVM_EXIT_IOAPIC_EOI, r);
	EXPECT_EQ(0x43, self->t.v[0].run->eoi.vector);
	close(lvl);
	close(edge);
}

/* KVM_SET_GSI_ROUTING with several MSI routes, each with an irqfd; a route rewritten while its
 * irqfd stays bound; KVM_SIGNAL_MSI straight to the LAPIC, and to an APIC ID nobody has. */
TEST_F(kvm, msi_routes_and_signal_msi)
{
	uint32_t gsi[2] = { 30, 31 }, data[2] = { 0x44, 0x45 }, v;
	struct kvm_msi msi = { .address_lo = MSI_ADDR(0), .data = 0x46 };
	int e30, e31;

	NEED_CAP(KVM_CAP_IRQCHIP);
	NEED_CAP(KVM_CAP_IRQ_ROUTING);
	NEED_CAP(KVM_CAP_IRQFD);
	NEED_CAP(KVM_CAP_SIGNAL_MSI);
	ASSERT_EQ(0, tvm_create(&self->t, &self->h, IRQCHIP_KERNEL));
	ASSERT_EQ(0, tvcpu_add(&self->t, &self->h, MODE_IDLE));
	ASSERT_EQ(0, next_io(&self->t.v[0], PORT_READY, &v));
	ASSERT_EQ(0, set_msi_routes(&self->t, gsi, data, 2));
	ASSERT_LE(0, e30 = irqfd(&self->t, 30));
	ASSERT_LE(0, e31 = irqfd(&self->t, 31));
	ASSERT_EQ(0, fire(e31));
	ASSERT_EQ(0, next_io(&self->t.v[0], PORT_VECTOR, &v));
	EXPECT_EQ(0x45, v);
	ASSERT_EQ(0, fire(e30));
	ASSERT_EQ(0, next_io(&self->t.v[0], PORT_VECTOR, &v));
	EXPECT_EQ(0x44, v);
	EXPECT_EQ(1, ioctl(self->t.fd, KVM_SIGNAL_MSI, &msi)); /* 1: delivered */
	ASSERT_EQ(0, next_io(&self->t.v[0], PORT_VECTOR, &v));
	EXPECT_EQ(0x46, v);
	msi.address_lo = MSI_ADDR(7);
	EXPECT_EQ(0, ioctl(self->t.fd, KVM_SIGNAL_MSI, &msi)); /* 0: no such destination */
	data[0] = 0x47;
	ASSERT_EQ(0, set_msi_routes(&self->t, gsi, data, 2));
	ASSERT_EQ(0, fire(e30));
	ASSERT_EQ(0, next_io(&self->t.v[0], PORT_VECTOR, &v));
	EXPECT_EQ(0x47, v);
	close(e30);
	close(e31);
}

/* MSR_KVM_POLL_CONTROL with POLL_CONTROL in the guest's CPUID: reset value 1, the guest's writes
 * seen by KVM_GET_MSRS, the host's KVM_SET_MSRS seen by the guest, reserved bits refused. */
TEST_F(kvm, poll_control_msr)
{
	struct tvcpu *c;
	uint32_t v;
	uint64_t m = 0;

	if (!(self->h.pv_eax & (1u << KVM_FEATURE_POLL_CONTROL)))
		SKIP(return, "%s does not offer POLL_CONTROL (KVM_GET_SUPPORTED_CPUID 0x40000001 eax=0x%08x)",
		     self->h.module, self->h.pv_eax);
	ASSERT_EQ(0, tvm_create(&self->t, &self->h, IRQCHIP_KERNEL));
	ASSERT_EQ(0, tvcpu_add(&self->t, &self->h, MODE_POLL));
	c = &self->t.v[0];
	ASSERT_EQ(1, msr_get(c, MSR_KVM_POLL_CONTROL, &m));
	EXPECT_EQ(1, m); /* reset value: polling allowed */
	ASSERT_EQ(0, next_io(c, PORT_READY, &v));
	ASSERT_EQ(0, next_io(c, PORT_RESULT, &v));
	EXPECT_EQ(self->h.pv_eax, v); /* the guest's CPUID leaf is KVM's */
	EXPECT_NE(0, v & (1u << KVM_FEATURE_POLL_CONTROL));
	ASSERT_EQ(0, next_io(c, PORT_SYNC, &v)); /* the guest wrote 0 */
	ASSERT_EQ(1, msr_get(c, MSR_KVM_POLL_CONTROL, &m));
	EXPECT_EQ(0, m);
	ASSERT_EQ(0, next_io(c, PORT_SYNC, &v)); /* the guest wrote 1 */
	ASSERT_EQ(1, msr_get(c, MSR_KVM_POLL_CONTROL, &m));
	EXPECT_EQ(1, m);
	EXPECT_EQ(0, msr_set(c, MSR_KVM_POLL_CONTROL, 2)); /* bit 1 reserved: nothing written */
	ASSERT_EQ(1, msr_set(c, MSR_KVM_POLL_CONTROL, 0));
	ASSERT_EQ(0, next_io(c, PORT_RESULT, &v)); /* the guest's rdmsr */
	EXPECT_EQ(0, v);
}

/* KVM_HC_SEND_IPI from vCPU 0 wakes vCPU 1, halted in the kernel, with the vector it names. */
TEST_F_TIMEOUT(kvm, pv_send_ipi_wakes_halted_vcpu, 60)
{
	struct runner r = { .port = PORT_VECTOR };
	struct hp_stats st = { .fd = -1 };
	char why[320];
	uint32_t v;

	if (!(self->h.pv_eax & (1u << KVM_FEATURE_PV_SEND_IPI)))
		SKIP(return, "%s does not offer PV_SEND_IPI (KVM_GET_SUPPORTED_CPUID 0x40000001 eax=0x%08x)",
		     self->h.module, self->h.pv_eax);
	NEED_CAP(KVM_CAP_IRQCHIP);
	ASSERT_EQ(0, tvm_create(&self->t, &self->h, IRQCHIP_KERNEL));
	ASSERT_EQ(0, tvcpu_add(&self->t, &self->h, MODE_IPI));
	ASSERT_EQ(0, tvcpu_add(&self->t, &self->h, MODE_IDLE));
	if (vcpu_stats(&self->h, &self->t.v[1], &st, why, sizeof(why)) < 0)
		SKIP(return, "cannot tell when vCPU 1 halts: %s", why);
	ASSERT_EQ(0, next_io(&self->t.v[1], PORT_READY, &v));
	EXPECT_EQ(1, v);
	uint64_t halts = stat_of(&st, "halt_exits");

	r.v = &self->t.v[1];
	ASSERT_EQ(0, pthread_create(&r.thread, NULL, runner_main, &r));
	EXPECT_TRUE(wait_halted(&st, halts));
	ASSERT_EQ(0, next_io(&self->t.v[0], PORT_READY, &v));
	ASSERT_EQ(0, next_io(&self->t.v[0], PORT_SYNC, &v));
	if (next_io(&self->t.v[0], PORT_RESULT, &v) < 0 && self->t.v[0].fault == X86_VECTOR_UD &&
	    !strcmp(self->h.module, "kvm_pvm")) {
		runner_stop(&r);
		hp_stats_close(&st);
		SKIP(return, "kvm_pvm offers PV_SEND_IPI in CPUID but runs no KVM hypercall made with %s "
		     "or the other vendor's instruction: the guest took #UD at it. (With "
		     "KVM_X86_QUIRK_FIX_HYPERCALL_INSN, which tvm_create disables, KVM rewrites it to "
		     "its own 0f 01 c1 and re-executes it forever.) A PVM guest calls KVM through PVM's "
		     "own hypercall entry", self->h.amd_hypercall ? "vmmcall" : "vmcall");
	}
	ASSERT_EQ(-1, self->t.v[0].fault);
	EXPECT_EQ(1, v); /* the hypercall reached one vCPU */
	ASSERT_EQ(0, runner_join(&r));
	EXPECT_EQ(IPI_VECTOR, r.val);
	hp_stats_close(&st);
}

/* A triple fault ends KVM_RUN with KVM_EXIT_SHUTDOWN. kvm_amd re-initialises the vCPU before it
 * reports it (the VMCB is undefined after a SHUTDOWN intercept), so the registers read afterwards
 * are the reset state and vmm's report must not give RIP 0xfff0 as where the guest was; kvm_intel
 * leaves RIP on the faulting instruction, which the report gives. */
TEST_F(kvm, triple_fault_report_says_where_or_that_it_is_lost)
{
	struct kvm_regs regs;
	struct kvm_sregs sregs;
	char line[256];
	uint32_t v, ud;

	ASSERT_EQ(0, tvm_create(&self->t, &self->h, IRQCHIP_KERNEL));
	ASSERT_EQ(0, tvcpu_add(&self->t, &self->h, MODE_TRIPLE));
	ASSERT_EQ(0, next_io(&self->t.v[0], PORT_READY, &v));
	ASSERT_EQ(0, next_io(&self->t.v[0], PORT_RESULT, &ud));
	int r = vrun(&self->t.v[0]);

	if (r != KVM_EXIT_SHUTDOWN && !strcmp(self->h.module, "kvm_pvm"))
		SKIP(return, "kvm_pvm ended the triple fault with exit reason %d, not KVM_EXIT_SHUTDOWN", r);
	ASSERT_EQ(KVM_EXIT_SHUTDOWN, r);
	ASSERT_EQ(0, ioctl(self->t.v[0].fd, KVM_GET_REGS, &regs));
	ASSERT_EQ(0, ioctl(self->t.v[0].fd, KVM_GET_SREGS, &sregs));
	struct kvm_error_pc pc = { "RIP", regs.rip,
				   x86_regs_are_reset_state(regs.rip, sregs.cs.selector, sregs.cs.base,
							    sregs.cr0) };

	kvm_shutdown_describe(0, &pc, line, sizeof(line));
	TH_LOG("%s on %s: RIP 0x%llx, CS 0x%x base 0x%llx, the ud2 at 0x%x", line, self->h.module,
	       (unsigned long long)regs.rip, sregs.cs.selector, (unsigned long long)sregs.cs.base, ud);
	if (!strcmp(self->h.module, "kvm_amd")) {
		EXPECT_TRUE(pc.reset);
		EXPECT_EQ(NULL, strstr(line, "0xfff0"));
		EXPECT_NE(NULL, strstr(line, "where is lost"));
	} else if (!strcmp(self->h.module, "kvm_intel")) {
		EXPECT_FALSE(pc.reset);
		EXPECT_EQ(ud, regs.rip);
		char at[32];

		snprintf(at, sizeof(at), " at RIP 0x%x;", ud);
		EXPECT_NE(NULL, strstr(line, at));
	} else {
		EXPECT_EQ(pc.reset, strstr(line, "where is lost") != NULL);
	}
}

/* A guest that never exits (interrupts off, a jump to itself) fails its wait within the vCPU's
 * deadline, saying what was waited for and where the vCPU is, instead of hanging the run. */
TEST_F_TIMEOUT(kvm, stuck_vcpu_fails_fast, 30)
{
	struct timespec t0, t1;
	uint32_t v;

	ASSERT_EQ(0, tvm_create(&self->t, &self->h, IRQCHIP_KERNEL));
	ASSERT_EQ(0, tvcpu_add(&self->t, &self->h, MODE_SPIN));
	ASSERT_EQ(0, next_io(&self->t.v[0], PORT_READY, &v));
	self->t.v[0].wait_ms = 300;
	clock_gettime(CLOCK_MONOTONIC, &t0);
	EXPECT_EQ(-1, next_io(&self->t.v[0], PORT_RESULT, &v));
	clock_gettime(CLOCK_MONOTONIC, &t1);
	double secs = (double)(t1.tv_sec - t0.tv_sec) + (double)(t1.tv_nsec - t0.tv_nsec) / 1e9;

	TH_LOG("next_io gave up after %.3f s", secs);
	EXPECT_LE(0.3, secs);
	EXPECT_GT(5.0, secs);
}

/* An MMIO read KVM cannot emulate (a VEX-encoded shrx) ends KVM_RUN with KVM_EXIT_INTERNAL_ERROR,
 * suberror KVM_INTERNAL_ERROR_EMULATION, and the instruction's bytes at the guest's RIP: what
 * vmm run reports (core/kvm_error.c) when kvm_pvm stops a stock kernel. Every x86 KVM does this
 * for a guest in kernel mode, with or without KVM_CAP_EXIT_ON_EMULATION_FAILURE. */
TEST_F(kvm, emulation_failure_reports_bytes)
{
	static const uint8_t shrx[] = { 0xc4, 0xe2, 0x7b, 0xf7, 0x16 };
	struct kvm_run *run;
	struct kvm_regs regs;
	char line[512];
	uint32_t v;
	int r;

	ASSERT_EQ(0, tvm_create(&self->t, &self->h, IRQCHIP_KERNEL));
	ASSERT_EQ(0, tvcpu_add(&self->t, &self->h, MODE_EMUL));
	ASSERT_EQ(0, next_io(&self->t.v[0], PORT_READY, &v));
	run = self->t.v[0].run;
	r = vrun(&self->t.v[0]);
	if (r == KVM_EXIT_IO && run->io.port == PORT_FAULT &&
	    *((uint8_t *)run + run->io.data_offset) == X86_VECTOR_UD)
		SKIP(return, "this CPU has no BMI2: shrx is #UD before it reads anything");
	ASSERT_EQ(KVM_EXIT_INTERNAL_ERROR, r);
	ASSERT_EQ(KVM_INTERNAL_ERROR_EMULATION, run->emulation_failure.suberror);
	ASSERT_EQ(0, ioctl(self->t.v[0].fd, KVM_GET_REGS, &regs));
	struct kvm_error_pc pc = { "RIP", regs.rip, false };

	kvm_internal_error_describe(run, 0, &pc, NULL, line, sizeof(line));
	TH_LOG("%s", line);
	EXPECT_EQ(0, memcmp(self->t.ram + regs.rip, shrx, sizeof(shrx))); /* RIP stayed on it */
	ASSERT_NE(0, run->emulation_failure.flags & KVM_INTERNAL_ERROR_EMULATION_FLAG_INSTRUCTION_BYTES);
	ASSERT_LE(sizeof(shrx), run->emulation_failure.insn_size);
	EXPECT_EQ(0, memcmp(run->emulation_failure.insn_bytes, shrx, sizeof(shrx)));
	EXPECT_NE(NULL, strstr(line, "emulation failure"));
	EXPECT_NE(NULL, strstr(line, "instruction bytes c4 e2 7b f7 16"));
}

/* An interrupt waking a vCPU halted in the kernel moves its binary stats halt_exits and
 * halt_wakeup (halt_poll/kvm_stats.c reads them), and the time it waited. */
struct firer {
	struct hp_stats *st;
	uint64_t halts;
	int efd;
	bool halted;
};

static void *firer_main(void *arg)
{
	struct firer *f = arg;

	f->halted = wait_halted(f->st, f->halts);
	fire(f->efd);
	return NULL;
}

TEST_F_TIMEOUT(kvm, halt_stats_move, 60)
{
	uint32_t gsi = 1, data = 0x41, v;
	struct hp_stats st = { .fd = -1 };
	struct firer f;
	pthread_t th;
	char why[320];
	uint64_t wake0, wait0, x;

	NEED_CAP(KVM_CAP_IRQCHIP);
	NEED_CAP(KVM_CAP_IRQ_ROUTING);
	NEED_CAP(KVM_CAP_IRQFD);
	ASSERT_EQ(0, tvm_create(&self->t, &self->h, IRQCHIP_KERNEL));
	ASSERT_EQ(0, tvcpu_add(&self->t, &self->h, MODE_IDLE));
	if (vcpu_stats(&self->h, &self->t.v[0], &st, why, sizeof(why)) < 0)
		SKIP(return, "%s", why);
	if (hp_stats_get(&st, "halt_exits", &x) < 0 || hp_stats_get(&st, "halt_wakeup", &x) < 0)
		SKIP(return, "%s's vCPU stats lack halt_exits or halt_wakeup", self->h.module);
	ASSERT_EQ(0, next_io(&self->t.v[0], PORT_READY, &v));
	ASSERT_EQ(0, set_msi_routes(&self->t, &gsi, &data, 1));
	f = (struct firer){ .st = &st, .halts = stat_of(&st, "halt_exits"), .efd = irqfd(&self->t, gsi) };
	ASSERT_LE(0, f.efd);
	wake0 = stat_of(&st, "halt_wakeup");
	wait0 = stat_of(&st, "halt_wait_ns");
	ASSERT_EQ(0, pthread_create(&th, NULL, firer_main, &f));
	ASSERT_EQ(0, next_io(&self->t.v[0], PORT_VECTOR, &v));
	pthread_join(th, NULL);
	EXPECT_EQ(0x41, v);
	EXPECT_TRUE(f.halted);
	TH_LOG("halt_exits %llu -> %llu, halt_wakeup %llu -> %llu, halt_wait_ns +%llu",
	       (unsigned long long)f.halts, (unsigned long long)stat_of(&st, "halt_exits"),
	       (unsigned long long)wake0, (unsigned long long)stat_of(&st, "halt_wakeup"),
	       (unsigned long long)(stat_of(&st, "halt_wait_ns") - wait0));
	EXPECT_LT(f.halts, stat_of(&st, "halt_exits"));
	EXPECT_LT(wake0, stat_of(&st, "halt_wakeup"));
	close(f.efd);
	hp_stats_close(&st);
}

TEST_HARNESS_MAIN
