// SPDX-License-Identifier: MIT
/*
 * Each thread's whole path for what a guest can make it do, not only its main loop's calls: the
 * boot marker a guest prints reaches the stats on every thread that can see it (issue 19: the
 * console thread's drain took the snapshot, a pread64 it may not make). (qemu-user cannot load
 * seccomp filters: skipped there.)
 */
#include <fcntl.h>
#include <linux/kvm.h>
#include <linux/serial_reg.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <unistd.h>

#include "halt_poll/halt_poll.h"
#include "kselftest_harness.h"
#include "tests/unit/fake_kvm.h"
#include "tests/unit/sandbox_child.h"
#include "tests/unit/stats_fixture.h"
#include "platform/console.h"
#include "core/mmio_ring.h"
#include "core/sandbox.h"
#include "platform/uart.h"
#include "core/vm.h"

/*
 * The boot marker's path on each thread that can meet it, in a forked child under that thread's
 * filter, with the hooks board_run installs (hp_run_mark_boot_end, hp_run_deferred) on a fake VM:
 * a 16550 at GPA with its exact mode, KVM's coalesced ring, the stats of a fake stats fd.
 *   vcpu:    a trapped THR write (the mode not entered yet) -> uart -> console watch -> hook
 *   device:  a virtio-console port's bytes (board_console_write is console_out_write) -> hook
 *   console: the ring's drain (exact mode) -> uart_ring_write -> console watch -> hook, then
 *            console_out_drain to stdout's stand-in
 *   main:    the last drain at exit -> hook, then the deferred work: the snapshot
 * Each child exits 0 when the marker was seen (vcpu, device, console: the main thread was woken;
 * main: the boot-end snapshot exists), VM_EXIT_SANDBOX when its filter refused a call.
 */
#define BM_GPA 0x09000000ULL

struct bm_rig {
	struct vm vm;
	struct fake_kvm fk;
	struct uart u;
	struct console_out out;
	struct hp_run run;
	int pipe[2];
	void *ring;
	bool vm_made, run_made;
};

static void bm_irq(void *opaque, bool level)
{
	(void)opaque;
	(void)level;
}

static int bm_init(struct bm_rig *r, bool fast)
{
	long page = sysconf(_SC_PAGESIZE);
	struct fx *f = fx_build(fx_arm64_vcpu, FX_ARM64_VCPU_N, "kvm-1/vcpu-0");
	int fd = fx_fd(f, 0);

	free(f);
	memset(r, 0, sizeof(*r));
	r->pipe[0] = r->pipe[1] = r->out.fd = r->out.wake_fd = -1;
	if (fd < 0 || fake_vm_init(&r->vm, &r->fk, 0, 0))
		return -1;
	r->vm_made = true;
	if (pipe2(r->pipe, O_NONBLOCK) || console_out_init(&r->out, r->pipe[1], vm_watch_panic, &r->vm))
		return -1;
	r->vm.defer_fd = eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC); /* vm_create makes it */
	uart_init(&r->u, &r->out, bm_irq, r);
	if (r->vm.defer_fd < 0 || bus_register(&r->vm.mmio, BM_GPA, page, uart_mmio, &r->u, "uart"))
		return -1;
	r->ring = calloc(1, page); /* one page, as KVM's: room for the whole line */
	if (!r->ring)
		return -1;
	mmio_ring_init(&r->vm.coalesced, r->ring, page, r->vm.kvm);
	if (fast && uart_fast_init(&r->u, &r->vm, BM_GPA, page, NULL, NULL))
		return -1;
	/* hp_run_open's work without KVM_GET_STATS_FD: one source, the start snapshot taken */
	r->run.vm = &r->vm;
	pthread_mutex_init(&r->run.lock, NULL);
	pthread_cond_init(&r->run.cond, NULL);
	r->run_made = true;
	if (hp_set_add(&r->run.set, "vcpu0", fd) || hp_run_start(&r->run))
		return -1;
	/* as board_run wires them */
	r->out.on_boot_end = hp_run_mark_boot_end;
	r->out.boot_opaque = &r->run;
	r->vm.deferred = hp_run_deferred;
	r->vm.deferred_opaque = &r->run;
	return 0;
}

static void bm_free(struct bm_rig *r)
{
	if (r->run_made)
		hp_run_close(&r->run);
	if (!r->vm_made)
		return;
	uart_destroy(&r->u);
	console_out_destroy(&r->out);
	for (int i = 0; i < 2; i++)
		if (r->pipe[i] >= 0)
			close(r->pipe[i]);
	if (r->vm.defer_fd >= 0)
		close(r->vm.defer_fd);
	free(r->ring);
	fake_vm_free(&r->vm);
}

/* The guest's THR writes: trapped (handled here, as a vCPU's exit) or queued in the ring. */
static void bm_guest_puts(struct bm_rig *r, const char *s)
{
	for (; *s; s++) {
		uint8_t c = (uint8_t)*s;

		fake_kvm_guest_access(&r->fk, &r->vm, BM_GPA + UART_TX, &c, 1, true);
	}
}

/* Whether the main thread was woken (the eventfd's count), read without blocking. */
static bool bm_woken(struct bm_rig *r)
{
	uint64_t v = 0;

	return read(r->vm.defer_fd, &v, sizeof(v)) == sizeof(v) && v;
}

enum bm_path { BM_VCPU, BM_DEVICE, BM_CONSOLE, BM_MAIN };

static const char *const bm_line = "vmm-boot-end\r\n";

static void __attribute__((noreturn)) bm_child(struct bm_rig *r, enum bm_path p)
{
	switch (p) {
	case BM_VCPU:
		bm_guest_puts(r, bm_line); /* the mode is off: every byte an exit */
		quit(bm_woken(r) ? 0 : 31);
	case BM_DEVICE:
		console_out_write(&r->out, (const uint8_t *)bm_line, strlen(bm_line));
		quit(bm_woken(r) ? 0 : 32);
	case BM_CONSOLE:
		mmio_ring_drain(&r->vm.coalesced);
		console_out_drain(&r->out);
		quit(bm_woken(r) ? 0 : 33);
	case BM_MAIN:
		mmio_ring_drain(&r->vm.coalesced);
		if (r->vm.deferred)
			r->vm.deferred(r->vm.deferred_opaque);
		quit(r->run.have_boot_end ? 0 : 34);
	}
	quit(30);
}

struct bm_case {
	struct bm_rig *r;
	enum bm_path p;
};

static void bm_case_run(const void *arg)
{
	const struct bm_case *c = arg;

	bm_child(c->r, c->p);
}

static void bm_run(struct bm_rig *r, enum sandbox_role role, enum bm_path p, struct outcome *o)
{
	const struct bm_case c = { r, p };

	run_sandboxed(SANDBOX_ENFORCE, role, bm_case_run, &c, o);
}

FIXTURE(boot_marker) {
	struct bm_rig *r;
};
FIXTURE_SETUP(boot_marker)
{
	self->r = calloc(1, sizeof(*self->r)); /* a struct vm: off the stack */
	ASSERT_NE(NULL, self->r);
}
FIXTURE_TEARDOWN(boot_marker)
{
	bm_free(self->r);
	free(self->r);
}

TEST_F(boot_marker, vcpu_thread_trapped_write)
{
	struct outcome o;

	NEED_SECCOMP();
	ASSERT_EQ(0, bm_init(self->r, false));
	bm_run(self->r, SANDBOX_VCPU, BM_VCPU, &o);
	EXPECT_EQ(0, o.status) TH_LOG("stderr: %s", o.err);
}

TEST_F(boot_marker, device_thread_console_port)
{
	struct outcome o;

	NEED_SECCOMP();
	ASSERT_EQ(0, bm_init(self->r, false));
	bm_run(self->r, SANDBOX_DEVICE, BM_DEVICE, &o);
	EXPECT_EQ(0, o.status) TH_LOG("stderr: %s", o.err);
}

/* The case: the line only the console thread's drain of the ring finds. */
TEST_F(boot_marker, console_thread_ring_drain)
{
	struct outcome o;

	NEED_SECCOMP();
	ASSERT_EQ(0, bm_init(self->r, true));
	bm_guest_puts(self->r, "hello\r\n"); /* trapped bytes put the 16550 in its exact mode */
	mmio_ring_drain(&self->r->vm.coalesced);
	ASSERT_TRUE(self->r->u.fast.on) TH_LOG("the exact mode was not entered: %s", self->r->u.fast.why);
	bm_guest_puts(self->r, bm_line);
	ASSERT_NE(__atomic_load_n(&((struct kvm_coalesced_mmio_ring *)self->r->ring)->first, __ATOMIC_RELAXED),
		  __atomic_load_n(&((struct kvm_coalesced_mmio_ring *)self->r->ring)->last, __ATOMIC_RELAXED))
		TH_LOG("the marker did not go to the ring");
	bm_run(self->r, SANDBOX_CONSOLE, BM_CONSOLE, &o);
	EXPECT_EQ(0, o.status) TH_LOG("stderr: %s", o.err);
	EXPECT_EQ(NULL, strstr(o.err, "seccomp allowlist refuses")) TH_LOG("%s", o.err);
}

/* The main thread: the last drain at exit, then the snapshot the others deferred to it. */
TEST_F(boot_marker, main_thread_takes_the_snapshot)
{
	struct outcome o;

	NEED_SECCOMP();
	ASSERT_EQ(0, bm_init(self->r, true));
	bm_guest_puts(self->r, "hello\r\n");
	mmio_ring_drain(&self->r->vm.coalesced);
	bm_guest_puts(self->r, bm_line);
	bm_run(self->r, SANDBOX_MAIN, BM_MAIN, &o);
	EXPECT_EQ(0, o.status) TH_LOG("stderr: %s", o.err);
}

TEST_HARNESS_MAIN
