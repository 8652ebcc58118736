// SPDX-License-Identifier: MIT
/* A KVM internal-error exit in words (core/kvm_error.c) from a fake kvm_run: an emulation failure
 * with the instruction bytes KVM reports and where the vCPU was, the other suberrors with their
 * data, sizes KVM could get wrong clamped, and the summary's words for the exit code (vm.c). */
#include <string.h>

#include "kselftest_harness.h"
#include "core/kvm_error.h"
#include "core/vm.h"

static struct kvm_run emulation_failure(const uint8_t *bytes, uint8_t n)
{
	struct kvm_run run;

	memset(&run, 0, sizeof(run));
	run.exit_reason = KVM_EXIT_INTERNAL_ERROR;
	run.emulation_failure.suberror = KVM_INTERNAL_ERROR_EMULATION;
	run.emulation_failure.ndata = 3;
	run.emulation_failure.flags = KVM_INTERNAL_ERROR_EMULATION_FLAG_INSTRUCTION_BYTES;
	run.emulation_failure.insn_size = n;
	if (n)
		memcpy(run.emulation_failure.insn_bytes, bytes, n < 15 ? n : 15);
	return run;
}

/* What kvm_pvm reports for a stock Debian kernel's decompressor (a VEX-encoded shrx). */
TEST(emulation_failure_with_bytes_and_rip)
{
	static const uint8_t b[] = { 0xc4, 0x42, 0x69, 0xf7, 0xc0 };
	struct kvm_run run = emulation_failure(b, sizeof(b));
	struct kvm_error_pc pc = { "RIP", 0x4752e69, false };
	char line[512];

	EXPECT_EQ(KVM_INTERNAL_ERROR_EMULATION,
		  kvm_internal_error_describe(&run, 0, &pc, "this host's KVM is kvm_pvm", line, sizeof(line)));
	EXPECT_STREQ("vCPU 0: KVM could not run the guest: emulation failure (KVM_INTERNAL_ERROR_EMULATION) "
		     "at RIP 0x4752e69, instruction bytes c4 42 69 f7 c0; this host's KVM is kvm_pvm", line);
}

TEST(emulation_failure_without_bytes_or_pc)
{
	struct kvm_run run = emulation_failure(NULL, 0);
	char line[256];

	run.emulation_failure.flags = 0; /* an older KVM: no bytes */
	kvm_internal_error_describe(&run, 3, NULL, NULL, line, sizeof(line));
	EXPECT_STREQ("vCPU 3: KVM could not run the guest: emulation failure (KVM_INTERNAL_ERROR_EMULATION) "
		     "(KVM reported no instruction bytes)", line);
	run.emulation_failure.flags = KVM_INTERNAL_ERROR_EMULATION_FLAG_INSTRUCTION_BYTES;
	kvm_internal_error_describe(&run, 3, &(struct kvm_error_pc){ 0 }, NULL, line, sizeof(line));
	EXPECT_STREQ("vCPU 3: KVM could not run the guest: emulation failure (KVM_INTERNAL_ERROR_EMULATION), "
		     "instruction bytes (none fetched)", line);
}

/* kvm_run is shared memory: an insn_size beyond insn_bytes[15] prints 15 bytes, no more. */
TEST(insn_size_clamped_to_the_array)
{
	uint8_t b[15];
	struct kvm_run run;
	char line[512];

	memset(b, 0x90, sizeof(b));
	run = emulation_failure(b, 200);
	kvm_internal_error_describe(&run, 0, NULL, NULL, line, sizeof(line));
	EXPECT_NE(NULL, strstr(line, "bytes 90 90 90 90 90 90 90 90 90 90 90 90 90 90 90"));
	EXPECT_EQ(NULL, strstr(line, "90 90 90 90 90 90 90 90 90 90 90 90 90 90 90 90"));
}

TEST(other_suberrors_name_themselves_with_their_data)
{
	struct kvm_run run;
	char line[512];

	memset(&run, 0, sizeof(run));
	run.internal.suberror = KVM_INTERNAL_ERROR_DELIVERY_EV;
	run.internal.ndata = 2;
	run.internal.data[0] = 0x80000b0e;
	run.internal.data[1] = 0x31;
	EXPECT_EQ(KVM_INTERNAL_ERROR_DELIVERY_EV, kvm_internal_error_describe(&run, 1, NULL, NULL, line, sizeof(line)));
	EXPECT_STREQ("vCPU 1: KVM could not run the guest: internal error, suberror 3 (an event KVM could not "
		     "deliver), data 0x80000b0e 0x31", line);
	run.internal.suberror = 99;
	run.internal.ndata = 1000; /* more than data[16] holds */
	kvm_internal_error_describe(&run, 1, NULL, NULL, line, sizeof(line));
	EXPECT_NE(NULL, strstr(line, "suberror 99 (a suberror this vmm does not know)"));
	EXPECT_NE(NULL, strstr(line, "0x80000b0e 0x31 0x0 0x0 0x0 0x0 0x0 0x0 0x0 0x0 0x0 0x0 0x0 0x0 0x0 0x0"));
	EXPECT_EQ(NULL, strstr(line, "0x31 0x0 0x0 0x0 0x0 0x0 0x0 0x0 0x0 0x0 0x0 0x0 0x0 0x0 0x0 0x0"));
}

/* A buffer too small is cut, terminated, never overrun. */
TEST(small_buffer_truncates)
{
	static const uint8_t b[] = { 0x0f, 0x01, 0xd9 };
	struct kvm_run run = emulation_failure(b, sizeof(b));
	char line[24];

	memset(line, 'x', sizeof(line));
	kvm_internal_error_describe(&run, 0, NULL, "a long note about the host", line, 16);
	EXPECT_EQ(15, strlen(line));
	EXPECT_EQ('x', line[16]);
	EXPECT_STREQ("vCPU 0: KVM cou", line);
}

/* The summary's words: KVM refusing the guest is not the guest crashing, same exit status. */
TEST(exit_words)
{
	EXPECT_STREQ("KVM could not run the guest", vm_exit_name(VM_EXIT_CRASH, true));
	EXPECT_STREQ("the guest crashed", vm_exit_name(VM_EXIT_CRASH, false));
	EXPECT_STREQ("the guest powered off", vm_exit_name(VM_EXIT_POWEROFF, true));
	EXPECT_STREQ("vmm was stopped by a signal", vm_exit_name(130, false));
}

/* A triple fault says where the vCPU was, or that it is not known; a short buffer stays terminated. */
TEST(shutdown_names_the_triple_fault_and_where)
{
	struct kvm_error_pc pc = { "RIP", 0x1000200, false };
	char line[256], small[12];

	memset(line, 'x', sizeof(line));
	kvm_shutdown_describe(1, &pc, line, sizeof(line));
	EXPECT_STREQ("vCPU 1: the guest triple-faulted (KVM_EXIT_SHUTDOWN) at RIP 0x1000200; a PC resets "
		     "on that, so vmm stops it as a reset", line);
	kvm_shutdown_describe(0, NULL, line, sizeof(line));
	EXPECT_EQ(NULL, strstr(line, " at "));
	EXPECT_NE(NULL, strstr(line, "vCPU 0: the guest triple-faulted"));
	memset(small, 'x', sizeof(small));
	kvm_shutdown_describe(0, &pc, small, sizeof(small));
	EXPECT_STREQ("vCPU 0: the", small);
}

/* Registers in the reset state (kvm_amd re-initialises the vCPU before it reports the shutdown)
 * say nothing of where the guest was: the line says so rather than giving RIP 0xfff0. */
TEST(shutdown_with_registers_in_the_reset_state_says_where_is_lost)
{
	struct kvm_error_pc pc = { "RIP", 0xfff0, true };
	char line[256];

	kvm_shutdown_describe(1, &pc, line, sizeof(line));
	EXPECT_EQ(NULL, strstr(line, "0xfff0"));
	EXPECT_NE(NULL, strstr(line, "vCPU 1: the guest triple-faulted (KVM_EXIT_SHUTDOWN); where is lost: "
				    "KVM re-initialised the vCPU"));
	EXPECT_NE(NULL, strstr(line, "so vmm stops it as a reset"));
}

TEST_HARNESS_MAIN
