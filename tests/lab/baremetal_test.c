// SPDX-License-Identifier: MIT
/*
 * Lab: bare-metal payloads. `vmm run --kernel-format flat` loads a flat binary (no Image header) at
 * RAM + 0x80000 with the FDT in x0; the project's own payload (tests/lab/baremetal/) finds the
 * 16550 in the FDT, echoes its command line and powers off through PSCI. Without the option the
 * same file is refused with a hint. The payload's "nisv" switch makes an MMIO access KVM cannot
 * decode (a load pair from the UART), which vmm must end as a guest fault naming the address.
 */
#include <stdio.h>
#include <string.h>

#include "arm64/arm64.h"
#include "kselftest_harness.h"
#include "tests/lab/labutil.h"

#define PAYLOAD "/lab/baremetal.bin"

FIXTURE(baremetal) {
	struct result r;
};
FIXTURE_SETUP(baremetal) { memset(&self->r, 0, sizeof(self->r)); }
FIXTURE_TEARDOWN(baremetal) { result_free(&self->r); }

TEST_F(baremetal, flat_payload_prints_and_powers_off)
{
	char *const argv[] = { VMM, "run", "-k", PAYLOAD, "--kernel-format", "flat", "-p", "hello exit=off",
			       NULL };
	char uart[96];

	run_vmm(argv, 60, &self->r);
	TH_LOG("exit %d after %.1f s", self->r.status, self->r.secs);
	snprintf(uart, sizeof(uart), "ns16550a at 0x%llx (from the FDT)", (unsigned long long)ARM64_UART_BASE);
	EXPECT_NE(NULL, strstr(self->r.out, "baremetal: hello from a flat binary")) TH_LOG("stdout: %s\nstderr: %s", self->r.out, self->r.err);
	EXPECT_NE(NULL, strstr(self->r.out, uart)) TH_LOG("stdout: %s", self->r.out);
	EXPECT_NE(NULL, strstr(self->r.out, "baremetal: command line: hello exit=off\r\n"))
		TH_LOG("stdout: %s", self->r.out);
	EXPECT_EQ(0, self->r.status) TH_LOG("stderr: %s", self->r.err);
}

/* With --console virtio a guest that only ever writes to the 16550 (a bare-metal payload, or a
 * kernel that dies before virtio probes) prints nothing: vmm says so and names --console serial. */
TEST_F(baremetal, silent_virtio_console_gets_a_hint)
{
	char *const argv[] = { VMM, "run", "-k", PAYLOAD, "--kernel-format", "flat", "--console", "virtio",
			       "-p", "hello exit=off", NULL };
	char *const serial[] = { VMM, "run", "-k", PAYLOAD, "--kernel-format", "flat", "-p", "hello exit=off",
				 NULL };

	run_vmm(argv, 60, &self->r);
	EXPECT_EQ(0, self->r.status) TH_LOG("stderr: %s", self->r.err);
	EXPECT_EQ(NULL, strstr(self->r.out, "baremetal: hello")) TH_LOG("stdout: %s", self->r.out);
	EXPECT_NE(NULL, strstr(self->r.err, "wrote nothing to its console (hvc0, virtio-console)"))
		TH_LOG("stderr: %s", self->r.err);
	EXPECT_NE(NULL, strstr(self->r.err, "run again with --console serial"));
	result_free(&self->r);
	/* on the 16550 the same run says nothing of the kind */
	run_vmm(serial, 60, &self->r);
	EXPECT_EQ(0, self->r.status);
	EXPECT_EQ(NULL, strstr(self->r.err, "wrote nothing")) TH_LOG("stderr: %s", self->r.err);
}

TEST_F(baremetal, exit_reset_gives_status_2)
{
	char *const argv[] = { VMM, "run", "-k", PAYLOAD, "--kernel-format", "flat", "-p", "exit=reset", NULL };

	run_vmm(argv, 60, &self->r);
	EXPECT_NE(NULL, strstr(self->r.out, "baremetal: command line: exit=reset\r\n"))
		TH_LOG("stdout: %s\nstderr: %s", self->r.out, self->r.err);
	EXPECT_EQ(2, self->r.status) TH_LOG("stderr: %s", self->r.err);
}

TEST_F(baremetal, refused_without_kernel_format_flat)
{
	char *const argv[] = { VMM, "run", "-k", PAYLOAD, "-p", "hello", NULL };

	EXPECT_TRUE(refused_with(argv, "not an arm64 Image", &self->r)) TH_LOG("stderr: %s", self->r.err);
	EXPECT_NE(NULL, strstr(self->r.err, "--kernel-format flat")) TH_LOG("stderr: %s", self->r.err);
	EXPECT_EQ(NULL, strstr(self->r.out, "baremetal:"));
}

/*
 * Issue 19: a boot marker the console thread finds in the coalesced MMIO ring. The payload keeps
 * IER 0 (the 16550's exact mode: THR bytes queue in KVM's ring without an exit), writes
 * "vmm-boot-end" and spins without MMIO, so the console thread's 10 ms drain is what sees the
 * line. Its allowlist has no pread64: taking the stats' boot-end snapshot there was a SIGSYS
 * (exit 5) that a guest could trigger at will. The snapshot is the main thread's to take.
 */
TEST_F(baremetal, boot_marker_in_the_coalesced_ring_ends_the_boot)
{
	char *const argv[] = { VMM, "run", "-k", PAYLOAD, "--kernel-format", "flat", "-p", "bootend", NULL };

	run_vmm(argv, 60, &self->r);
	TH_LOG("exit %d after %.1f s", self->r.status, self->r.secs);
	EXPECT_EQ(NULL, strstr(self->r.err, "seccomp allowlist refuses")) TH_LOG("stderr: %s", self->r.err);
	EXPECT_NE(NULL, strstr(self->r.out, "baremetal: bootend: spun a second after the marker"))
		TH_LOG("stdout: %s\nstderr: %s", self->r.out, self->r.err);
	ASSERT_EQ(0, self->r.status) TH_LOG("stderr: %s", self->r.err);
	/* the 16550 was in its exact mode: the marker came through the ring, not a trap */
	EXPECT_EQ(NULL, strstr(self->r.err, "exact mode entered 0 times")) TH_LOG("stderr: %s", self->r.err);
	EXPECT_NE(NULL, strstr(self->r.err, "vmm: stats of the run phase: ")) TH_LOG("stderr: %s", self->r.err);
	EXPECT_EQ(NULL, strstr(self->r.err, "the guest never marked its boot's end")) TH_LOG("stderr: %s", self->r.err);
}

/* An access with no valid ISV reaches vmm as KVM_EXIT_ARM_NISV (KVM_CAP_ARM_NISV_TO_USER): a guest
 * fault (status 3) naming the address, not a vmm error (KVM_RUN failing with ENOSYS, status 1). */
TEST_F(baremetal, undecodable_mmio_is_a_guest_fault)
{
	char *const argv[] = { VMM, "run", "-k", PAYLOAD, "--kernel-format", "flat", "-p", "nisv", NULL };
	char addr[32];

	run_vmm(argv, 60, &self->r);
	TH_LOG("exit %d after %.1f s", self->r.status, self->r.secs);
	snprintf(addr, sizeof(addr), "0x%llx", (unsigned long long)ARM64_PVPANIC_BASE);
	ASSERT_NE(NULL, strstr(self->r.out, "baremetal: nisv: ldp from MMIO at "))
		TH_LOG("stdout: %s\nstderr: %s", self->r.out, self->r.err);
	EXPECT_EQ(NULL, strstr(self->r.out, "the ldp returned"));
	EXPECT_EQ(3, self->r.status) TH_LOG("stderr: %s", self->r.err);
	EXPECT_NE(NULL, strstr(self->r.err, addr)) TH_LOG("stderr: %s", self->r.err);
	TH_LOG("%.*s", (int)strcspn(self->r.err, "\n"), self->r.err);
}

TEST_HARNESS_MAIN
