// SPDX-License-Identifier: MIT
/*
 * First real-KVM test (runs inside the lab's emulated arm64 host): the project's own core creates a
 * VM with RAM, one vCPU, a vGICv3 and a vITS; the guest stores to a device on vmm's MMIO bus, sleeps
 * in WFI until its virtual timer fires, and stores again.
 */
#include <linux/psci.h>
#include <string.h>
#include <sys/ioctl.h>
#include <time.h>
#include <unistd.h>

#include "arm64/arm64.h"
#include "arm64/gic/gic.h"
#include "halt_poll/halt_poll.h"
#include "kselftest_harness.h"
#include "core/kvm.h"
#include "core/bus.h"
#include "core/mem.h"
#include "core/vcpu.h"
#include "core/vm.h"

extern const uint8_t guest_wfi_start[], guest_wfi_end[];
extern const uint8_t guest_hvc_start[], guest_hvc_end[];

#define RAM_SIZE (2ULL << 20)

struct testdev {
	struct vm *vm;
	uint64_t reg[4];
	int writes;
};

static void testdev_fn(void *opaque, uint64_t off, uint8_t *data, uint32_t len, bool is_write)
{
	struct testdev *t = opaque;
	uint64_t v = 0;

	if (!is_write || len != 8 || off % 8 || off / 8 >= 4) {
		if (!is_write)
			memset(data, 0, len);
		return;
	}
	memcpy(&v, data, 8);
	t->reg[off / 8] = v;
	t->writes++;
	if (off == 24)
		vm_request_stop(t->vm, VM_EXIT_POWEROFF);
}

static void *watchdog(void *arg)
{
	sleep(20);
	vm_request_stop(arg, VM_EXIT_ERROR);
	return NULL;
}

FIXTURE(vgic) {
	struct vm vm;
	struct vgic gic;
	struct its its;
	struct vcpu *vcpu;
	struct testdev dev;
	int ipa_bits;
};

FIXTURE_SETUP(vgic)
{
	int kfd = kvm_open();

	ASSERT_LE(0, kfd) TH_LOG("no /dev/kvm inside the lab host");
	unsigned long type;

	ASSERT_EQ(0, arm64_vm_type(kfd, RAM_SIZE, &type, &self->ipa_bits));
	close(kfd);
	ASSERT_EQ(0, vm_create(&self->vm, type));
	ASSERT_EQ(0, vm_mem_add(&self->vm, ARM64_RAM_BASE, RAM_SIZE));
	ASSERT_EQ(0, vgic_create(&self->vm, &self->gic, ARM64_GICD_BASE, ARM64_GICR_BASE,
				 ARM64_GICR_LIMIT, 1));
	EXPECT_EQ(0, kvm_check_ext(self->vm.fd, KVM_CAP_MSI_DEVID))
		TH_LOG("KVM_CAP_MSI_DEVID already set before any vITS exists");
	ASSERT_EQ(0, its_create(&self->vm, &self->its, ARM64_GITS_BASE));
	ASSERT_EQ(0, vcpu_create(&self->vm, 0, &self->vcpu));
	struct arm64_cpu_feat plain = { 0 }; /* no SVE, pointer auth or PMU: the test's tiny guest */

	ASSERT_EQ(0, arm64_vcpu_init(self->vcpu, false, &plain));
	ASSERT_EQ(0, vgic_init(&self->gic, 128));
	self->dev.vm = &self->vm;
	ASSERT_EQ(0, bus_register(&self->vm.mmio, ARM64_TESTDEV_BASE, ARM64_TESTDEV_SIZE, testdev_fn,
				  &self->dev, "testdev"));
}

FIXTURE_TEARDOWN(vgic)
{
	its_destroy(&self->its);
	vgic_destroy(&self->gic);
	vm_destroy(&self->vm);
}

TEST_F(vgic, msi_devid_once_its_exists)
{
	TH_LOG("IPA size %d bits", self->ipa_bits);
	EXPECT_EQ(1, kvm_check_ext(self->vm.fd, KVM_CAP_MSI_DEVID));
}

/* The board's map ends with the PCI 64-bit window (below 2^40): vmm asks for 40 bits, not the host's
 * largest, since every extra bit can add a level to each stage-2 walk. KVM must agree: a memslot at
 * 1 TiB lies outside the VM. */
TEST_F(vgic, ipa_size_is_the_smallest_that_fits)
{
	TH_LOG("host offers %d bits", kvm_check_ext(self->vm.kvm_fd, KVM_CAP_ARM_VM_IPA_SIZE));
	EXPECT_EQ(40, self->ipa_bits);
	EXPECT_EQ(-EFAULT, vm_mem_add(&self->vm, 1ULL << 40, 2ULL << 20));
}

static const char *const halt_stats[] = {
	"halt_successful_poll", "halt_attempted_poll", "halt_poll_invalid", "halt_wakeup",
	"halt_poll_success_ns", "halt_poll_fail_ns", "halt_wait_ns", "halt_poll_success_hist",
	"halt_poll_fail_hist", "halt_wait_hist",
};

TEST_F(vgic, vcpu_stats_list_halt_stats)
{
	struct hp_stats st;
	int fd = vcpu_stats_fd(self->vcpu);

	ASSERT_LE(0, fd);
	ASSERT_EQ(0, hp_stats_open(&st, fd));
	TH_LOG("stats id %s, %d stats", st.id, st.nr);
	for (size_t i = 0; i < sizeof(halt_stats) / sizeof(halt_stats[0]); i++) {
		const char *name = halt_stats[i];

		EXPECT_NE(NULL, hp_stats_find(&st, name)) TH_LOG("missing %s", name);
	}
	const struct hp_stat *h = hp_stats_find(&st, "halt_wait_hist");

	ASSERT_NE(NULL, h);
	EXPECT_STREQ("log2-hist", hp_stat_type_name(h->flags));
	EXPECT_GT(h->size, 1);
	hp_stats_close(&st);
}

static uint64_t stat(struct hp_stats *st, const char *name)
{
	uint64_t v = 0;

	if (hp_stats_get(st, name, &v) < 0)
		return ~0ULL;
	return v;
}

TEST_F_TIMEOUT(vgic, store_wfi_timer_store, 60)
{
	size_t len = guest_wfi_end - guest_wfi_start;
	void *ram = vm_gpa_to_hva(&self->vm, ARM64_RAM_BASE, len);
	struct hp_stats st;
	pthread_t wd;

	ASSERT_NE(NULL, ram);
	memcpy(ram, guest_wfi_start, len);
	/* Poll 0: the vCPU must really block, so the wake-up is the timer's, not a poll's. */
	ASSERT_EQ(0, vm_enable_cap(&self->vm, KVM_CAP_HALT_POLL, 0));
	ASSERT_EQ(0, arm64_core_reg_set(self->vcpu, ARM64_CORE(regs.pc), ARM64_RAM_BASE));
	ASSERT_EQ(0, arm64_core_reg_set(self->vcpu, ARM64_XREG(0), ARM64_TESTDEV_BASE));
	ASSERT_EQ(0, arm64_core_reg_set(self->vcpu, ARM64_XREG(1), ARM64_GICD_BASE));
	ASSERT_EQ(0, arm64_core_reg_set(self->vcpu, ARM64_XREG(2), ARM64_GICR_BASE + 0x10000));
	ASSERT_EQ(0, hp_stats_open(&st, vcpu_stats_fd(self->vcpu)));
	uint64_t wfi0 = stat(&st, "wfi_exit_stat"), wake0 = stat(&st, "halt_wakeup");

	ASSERT_EQ(0, pthread_create(&wd, NULL, watchdog, &self->vm));
	struct timespec t0, t1;

	clock_gettime(CLOCK_MONOTONIC, &t0);
	int rc = vcpu_run_loop(self->vcpu);

	clock_gettime(CLOCK_MONOTONIC, &t1);
	pthread_cancel(wd);
	pthread_join(wd, NULL);
	ASSERT_EQ(VM_EXIT_POWEROFF, rc) TH_LOG("the guest did not finish (watchdog fired?)");
	ASSERT_EQ(0, hp_stats_read(&st));

	uint64_t wfi = stat(&st, "wfi_exit_stat") - wfi0, wake = stat(&st, "halt_wakeup") - wake0;
	uint64_t wait_ns = stat(&st, "halt_wait_ns");

	TH_LOG("run %.1f ms; guest slept %llu ticks (programmed %llu) over %llu WFI; wfi exits %llu, "
	       "halt_wakeup %llu, halt_wait_ns %llu; exits: mmio %llu unclaimed %llu",
	       (t1.tv_sec - t0.tv_sec) * 1e3 + (t1.tv_nsec - t0.tv_nsec) / 1e6,
	       (unsigned long long)self->dev.reg[1], (unsigned long long)self->dev.reg[2],
	       (unsigned long long)self->dev.reg[3], (unsigned long long)wfi, (unsigned long long)wake,
	       (unsigned long long)wait_ns, (unsigned long long)self->vcpu->exits.mmio,
	       (unsigned long long)self->vcpu->exits.mmio_unclaimed);
	/* The device saw both stores through the bus. */
	EXPECT_EQ(0x1111, self->dev.reg[0]);
	EXPECT_EQ(4, self->dev.writes);
	EXPECT_EQ(4, self->vcpu->exits.mmio);
	EXPECT_EQ(0, self->vcpu->exits.mmio_unclaimed);
	/* The guest saw its timer fire, after at least the programmed interval. */
	EXPECT_GT(self->dev.reg[2], 0);
	EXPECT_GE(self->dev.reg[1], self->dev.reg[2]);
	EXPECT_GE(self->dev.reg[3], 1);
	/* KVM saw the WFI, blocked the vCPU and woke it. */
	EXPECT_GE(wfi, 1);
	EXPECT_GE(wake, 1);
	EXPECT_GT(wait_ns, 0);
	hp_stats_close(&st);
}

/* PSCI SYSTEM_OFF and SYSTEM_RESET end the run with vmm's documented exit codes (0 and 2), and a
 * reset after the guest printed a panic is reported as a crash (3). */
static int run_psci(struct __test_metadata *_metadata, FIXTURE_DATA(vgic) *self, uint32_t fn, bool panicked)
{
	void *ram = vm_gpa_to_hva(&self->vm, ARM64_RAM_BASE, guest_hvc_end - guest_hvc_start);

	if (!ram)
		return -1;
	memcpy(ram, guest_hvc_start, guest_hvc_end - guest_hvc_start);
	atomic_store(&self->vm.guest_panicked, panicked);
	EXPECT_EQ(0, arm64_core_reg_set(self->vcpu, ARM64_CORE(regs.pc), ARM64_RAM_BASE));
	EXPECT_EQ(0, arm64_core_reg_set(self->vcpu, ARM64_XREG(0), fn));
	return vcpu_run_loop(self->vcpu);
}

TEST_F(vgic, psci_system_off_exits_0)
{
	EXPECT_EQ(VM_EXIT_POWEROFF, run_psci(_metadata, self, PSCI_0_2_FN_SYSTEM_OFF, false));
	EXPECT_EQ(1, self->vcpu->exits.system_event);
}

TEST_F(vgic, psci_system_reset_exits_2)
{
	EXPECT_EQ(VM_EXIT_RESET, run_psci(_metadata, self, PSCI_0_2_FN_SYSTEM_RESET, false));
	EXPECT_EQ(1, self->vcpu->exits.system_event);
}

TEST_F(vgic, reset_after_panic_is_a_crash)
{
	EXPECT_EQ(VM_EXIT_CRASH, run_psci(_metadata, self, PSCI_0_2_FN_SYSTEM_RESET, true));
}

TEST(vgic_refuses_too_many_vcpus)
{
	struct vm vm;
	struct vgic g;
	int kfd = kvm_open(), ipa;

	ASSERT_LE(0, kfd);
	unsigned long type;

	ASSERT_EQ(0, arm64_vm_type(kfd, RAM_SIZE, &type, &ipa));
	close(kfd);
	ASSERT_EQ(0, vm_create(&vm, type));
	/* a 256 KiB window holds two vCPUs' redistributors, not three */
	EXPECT_EQ(-E2BIG, vgic_create(&vm, &g, ARM64_GICD_BASE, ARM64_GICR_BASE,
				       ARM64_GICR_BASE + vgic_redist_size(2), 3));
	ASSERT_EQ(0, vgic_create(&vm, &g, ARM64_GICD_BASE, ARM64_GICR_BASE,
				 ARM64_GICR_BASE + vgic_redist_size(2), 2));
	vgic_destroy(&g);
	vm_destroy(&vm);
}

TEST_HARNESS_MAIN
