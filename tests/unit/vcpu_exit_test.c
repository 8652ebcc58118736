// SPDX-License-Identifier: MIT
/*
 * vcpu_handle_exit over synthetic kvm_run exits, without /dev/kvm: MMIO and port I/O reach the
 * bus (or are counted as nobody's), KVM's length and offset fields are not trusted, system events
 * become the VM's exit code (the first reason wins), KVM's refusals and unknown exits stop the VM
 * as a crash with a message naming the vCPU, and the counters say what happened.
 */
#include <linux/kvm.h>
#include <stdlib.h>
#include <string.h>

#include "kselftest_harness.h"
#include "tests/unit/log_capture.h"
#include "core/arch.h"
#include "core/bus.h"
#include "core/vcpu.h"
#include "core/vm.h"

#define RUN_SIZE 4096

/* What the device at DEV_BASE saw: each access in order. */
struct seen {
	int n;
	uint64_t offset[8];
	uint32_t len[8];
	bool write[8];
	uint8_t data[8][8];
};

#define DEV_BASE 0x10000000ull
#define PORT 0x3f8

static void dev_access(void *opaque, uint64_t offset, uint8_t *data, uint32_t len, bool is_write)
{
	struct seen *s = opaque;

	if (s->n < 8) {
		s->offset[s->n] = offset;
		s->len[s->n] = len;
		s->write[s->n] = is_write;
		memcpy(s->data[s->n], data, len <= 8 ? len : 8);
		s->n++;
	}
	if (!is_write)
		for (uint32_t i = 0; i < len; i++)
			data[i] = (uint8_t)(0xa0 + i);
}

/* The arch's exit hooks (core/arch.h), reached through the VM's machine. */
static int eoi_vector = -1;
static struct machine *eoi_machine;

static void eoi(struct machine *m, uint8_t vector)
{
	eoi_machine = m;
	eoi_vector = vector;
}

static int vcpu_pc(struct vcpu *v, struct kvm_error_pc *pc)
{
	*pc = (struct kvm_error_pc){ .name = "PC", .value = 0x1000u + v->id };
	return 0;
}

static const struct arch_ops hooks = { .name = "hooks", .ioapic_eoi = eoi, .vcpu_pc = vcpu_pc };

FIXTURE(exit)
{
	struct vm *vm;
	struct vcpu v;
	struct seen mmio, pio;
};

FIXTURE_SETUP(exit)
{
	static struct vm vm; /* large: not on the stack */

	memset(&vm, 0, sizeof(vm));
	atomic_init(&vm.exit_code, -1);
	bus_init(&vm.mmio);
	bus_init(&vm.pio);
	self->vm = &vm;
	memset(&self->v, 0, sizeof(self->v));
	self->v.vm = &vm;
	self->v.id = 3;
	self->v.run = calloc(1, RUN_SIZE);
	self->v.run_size = RUN_SIZE;
	ASSERT_NE(NULL, self->v.run);
	ASSERT_EQ(0, bus_register(&vm.mmio, DEV_BASE, 0x1000, dev_access, &self->mmio, "dev"));
	ASSERT_EQ(0, bus_register(&vm.pio, PORT, 8, dev_access, &self->pio, "port"));
}

FIXTURE_TEARDOWN(exit)
{
	free(self->v.run);
}

static void mmio_exit(struct kvm_run *run, uint64_t addr, uint32_t len, bool write, uint64_t value)
{
	run->exit_reason = KVM_EXIT_MMIO;
	run->mmio.phys_addr = addr;
	run->mmio.len = len;
	run->mmio.is_write = write;
	memcpy(run->mmio.data, &value, sizeof(run->mmio.data));
}

/* Runs one exit with stderr caught; what vmm said (freed by the caller). */
static char *handle(struct vcpu *v)
{
	struct log_capture c;

	if (log_capture_start(&c) < 0)
		return NULL;
	vcpu_handle_exit(v);
	return log_capture_end(&c);
}

TEST_F(exit, mmio_reaches_the_device_at_its_offset)
{
	struct kvm_run *run = self->v.run;

	mmio_exit(run, DEV_BASE + 0x10, 4, true, 0x11223344);
	free(handle(&self->v));
	mmio_exit(run, DEV_BASE + 0x20, 2, false, 0);
	free(handle(&self->v));
	ASSERT_EQ(2, self->mmio.n);
	EXPECT_EQ(0x10, self->mmio.offset[0]);
	EXPECT_EQ(4, self->mmio.len[0]);
	EXPECT_TRUE(self->mmio.write[0]);
	EXPECT_EQ(0x44, self->mmio.data[0][0]);
	EXPECT_EQ(0x11, self->mmio.data[0][3]);
	EXPECT_EQ(0x20, self->mmio.offset[1]);
	EXPECT_FALSE(self->mmio.write[1]);
	/* the read's answer goes back to KVM through kvm_run */
	EXPECT_EQ(0xa0, run->mmio.data[0]);
	EXPECT_EQ(0xa1, run->mmio.data[1]);
	EXPECT_EQ(2, atomic_load(&self->v.exits.mmio));
	EXPECT_EQ(0, atomic_load(&self->v.exits.mmio_unclaimed));
	EXPECT_FALSE(atomic_load(&self->vm->stop));
}

/* Nobody's address reads as zero and is counted; a length KVM never gives (0, past the 8-byte
 * data field) reaches no device. Neither stops the guest. */
TEST_F(exit, mmio_unclaimed_or_of_a_bad_length_is_counted_not_fatal)
{
	struct kvm_run *run = self->v.run;

	mmio_exit(run, 0x20000000, 4, false, ~0ull);
	free(handle(&self->v));
	EXPECT_EQ(0, run->mmio.data[0]);
	EXPECT_EQ(0, run->mmio.data[3]);
	mmio_exit(run, DEV_BASE, 0, true, 1);
	free(handle(&self->v));
	mmio_exit(run, DEV_BASE, 9, true, 1);
	free(handle(&self->v));
	mmio_exit(run, DEV_BASE, 0xffffffffu, false, 1);
	free(handle(&self->v));
	EXPECT_EQ(0, self->mmio.n);
	EXPECT_EQ(4, atomic_load(&self->v.exits.mmio));
	EXPECT_EQ(4, atomic_load(&self->v.exits.mmio_unclaimed));
	EXPECT_FALSE(atomic_load(&self->vm->stop));
}

/* A string OUT (rep outsb) is one exit of count accesses from data_offset; an offset or a
 * count past the kvm_run mapping reaches no device. */
TEST_F(exit, port_io_in_strings_and_within_the_mapping)
{
	struct kvm_run *run = self->v.run;
	uint8_t *data = (uint8_t *)run + 1024;

	run->exit_reason = KVM_EXIT_IO;
	run->io.direction = KVM_EXIT_IO_OUT;
	run->io.size = 1;
	run->io.port = PORT + 1;
	run->io.count = 3;
	run->io.data_offset = 1024;
	memcpy(data, "abc", 3);
	free(handle(&self->v));
	ASSERT_EQ(3, self->pio.n);
	EXPECT_EQ(1, self->pio.offset[2]);
	EXPECT_EQ('c', self->pio.data[2][0]);
	EXPECT_TRUE(self->pio.write[0]);
	/* an IN fills the data area */
	run->io.direction = KVM_EXIT_IO_IN;
	run->io.count = 1;
	run->io.size = 2;
	free(handle(&self->v));
	EXPECT_EQ(4, self->pio.n);
	EXPECT_EQ(0xa0, data[0]);
	EXPECT_EQ(0xa1, data[1]);
	/* past the mapping: nothing */
	run->io.data_offset = RUN_SIZE - 1;
	free(handle(&self->v));
	run->io.data_offset = 1024;
	run->io.count = 0x40000000u;
	run->io.size = 4;
	free(handle(&self->v));
	run->io.data_offset = 0xffffffffffffff00ull;
	run->io.count = 1;
	free(handle(&self->v));
	EXPECT_EQ(4, self->pio.n);
	EXPECT_EQ(5, atomic_load(&self->v.exits.pio));
	EXPECT_FALSE(atomic_load(&self->vm->stop));
}

static int event_code(struct _test_data_exit *self, uint32_t type, bool panicked)
{
	atomic_store(&self->vm->exit_code, -1);
	atomic_store(&self->vm->stop, false);
	atomic_store(&self->vm->guest_panicked, panicked);
	self->v.run->exit_reason = KVM_EXIT_SYSTEM_EVENT;
	self->v.run->system_event.type = type;
	free(handle(&self->v));
	return atomic_load(&self->vm->stop) ? atomic_load(&self->vm->exit_code) : -2;
}

TEST_F(exit, system_events_become_the_exit_code)
{
	EXPECT_EQ(VM_EXIT_POWEROFF, event_code(self, KVM_SYSTEM_EVENT_SHUTDOWN, false));
	EXPECT_EQ(VM_EXIT_RESET, event_code(self, KVM_SYSTEM_EVENT_RESET, false));
	/* a guest that panicked first (pvpanic) and then powered off or reset crashed */
	EXPECT_EQ(VM_EXIT_CRASH, event_code(self, KVM_SYSTEM_EVENT_SHUTDOWN, true));
	EXPECT_EQ(VM_EXIT_CRASH, event_code(self, KVM_SYSTEM_EVENT_RESET, true));
	EXPECT_EQ(VM_EXIT_CRASH, event_code(self, KVM_SYSTEM_EVENT_CRASH, false));
	EXPECT_EQ(VM_EXIT_CRASH, event_code(self, 0x7777, false));
	EXPECT_EQ(6, atomic_load(&self->v.exits.system_event));
	/* the first reason wins: a reset after a power-off is not the VM's exit code */
	atomic_store(&self->vm->exit_code, -1);
	atomic_store(&self->vm->guest_panicked, false);
	self->v.run->system_event.type = KVM_SYSTEM_EVENT_SHUTDOWN;
	free(handle(&self->v));
	self->v.run->system_event.type = KVM_SYSTEM_EVENT_RESET;
	free(handle(&self->v));
	EXPECT_EQ(VM_EXIT_POWEROFF, atomic_load(&self->vm->exit_code));
}

/* x86's triple fault: a reset, said as a warning naming the vCPU. */
TEST_F(exit, shutdown_is_a_reset_with_a_warning)
{
	self->v.run->exit_reason = KVM_EXIT_SHUTDOWN;
	char *said = handle(&self->v);

	EXPECT_TRUE(atomic_load(&self->vm->stop));
	EXPECT_EQ(VM_EXIT_RESET, atomic_load(&self->vm->exit_code));
	ASSERT_NE(NULL, said);
	EXPECT_NE(NULL, strstr(said, "vCPU 3")) TH_LOG("%s", said);
	free(said);
}

/* The arch says where the vCPU was: the warning names it. */
TEST_F(exit, shutdown_names_where_the_arch_says_the_vcpu_was)
{
	struct machine m = { .vm = self->vm, .arch = &hooks };

	self->vm->machine = &m;
	self->v.run->exit_reason = KVM_EXIT_SHUTDOWN;
	char *said = handle(&self->v);

	self->vm->machine = NULL;
	ASSERT_NE(NULL, said);
	EXPECT_NE(NULL, strstr(said, "vCPU 3: the guest triple-faulted (KVM_EXIT_SHUTDOWN) at PC 0x1003"))
		TH_LOG("%s", said);
	free(said);
}

struct refusal {
	uint32_t reason;
	const char *says;
	bool kvm_refused;
};

/* KVM's refusals to run the guest, an exit vmm does not know, and arm64's undecodable access: the
 * VM stops as a crash, with a message naming the vCPU and what happened. */
TEST_F(exit, refusals_and_unknown_exits_stop_the_vm_as_a_crash)
{
	static const struct refusal cases[] = {
		{ KVM_EXIT_FAIL_ENTRY, "KVM_EXIT_FAIL_ENTRY, hardware reason 0x1234", true },
		{ KVM_EXIT_INTERNAL_ERROR, "vCPU 3", true },
		{ KVM_EXIT_ARM_NISV, "0x9000 with an instruction KVM cannot decode", false },
		{ 0xdead, "unhandled exit reason 57005", false },
		{ KVM_EXIT_HYPERCALL, "unhandled exit reason", false },
	};

	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		atomic_store(&self->vm->exit_code, -1);
		atomic_store(&self->vm->stop, false);
		atomic_store(&self->vm->kvm_refused, false);
		memset(self->v.run, 0, RUN_SIZE);
		self->v.run->exit_reason = cases[i].reason;
		self->v.run->fail_entry.hardware_entry_failure_reason = 0x1234;
		if (cases[i].reason == KVM_EXIT_ARM_NISV)
			self->v.run->arm_nisv.fault_ipa = 0x9000;
		char *said = handle(&self->v);

		EXPECT_TRUE(atomic_load(&self->vm->stop)) TH_LOG("exit %u", cases[i].reason);
		EXPECT_EQ(VM_EXIT_CRASH, atomic_load(&self->vm->exit_code)) TH_LOG("exit %u", cases[i].reason);
		EXPECT_EQ(cases[i].kvm_refused, atomic_load(&self->vm->kvm_refused)) TH_LOG("exit %u", cases[i].reason);
		ASSERT_NE(NULL, said);
		EXPECT_NE(NULL, strstr(said, cases[i].says)) TH_LOG("exit %u said: %s", cases[i].reason, said);
		free(said);
	}
	EXPECT_EQ(3, atomic_load(&self->v.exits.other)); /* NISV and the two unknown ones */
}

/* A signal's exit and a userspace IOAPIC's EOI: counted, the hook called, the guest runs on. */
TEST_F(exit, intr_and_eoi_counted_and_the_guest_runs_on)
{
	self->v.run->exit_reason = KVM_EXIT_INTR;
	free(handle(&self->v));
	EXPECT_EQ(1, atomic_load(&self->v.exits.intr));
	self->v.run->exit_reason = KVM_EXIT_IOAPIC_EOI;
	self->v.run->eoi.vector = 0x31;
	free(handle(&self->v)); /* no machine: counted only */
	struct machine m = { .vm = self->vm, .arch = &hooks };

	self->vm->machine = &m;
	free(handle(&self->v));
	self->vm->machine = NULL;
	EXPECT_EQ(0x31, eoi_vector);
	EXPECT_EQ(&m, eoi_machine);
	EXPECT_EQ(2, atomic_load(&self->v.exits.ioapic_eoi));
	EXPECT_FALSE(atomic_load(&self->vm->stop));
}

TEST_HARNESS_MAIN
