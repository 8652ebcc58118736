// SPDX-License-Identifier: MIT
/*
 * vCPUs: creation, the KVM_RUN loop and exit dispatch. A vCPU leaves KVM_RUN when asked through
 * run->immediate_exit plus a kick signal whose handler does nothing: the flag closes the race where
 * the signal lands just before the ioctl, the signal ends a KVM_RUN already in progress.
 */
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>
#include <unistd.h>

#include "core/hot.h"
#include "core/arch.h"
#include "core/log.h"
#include "core/bus.h"
#include "core/kvm.h"
#include "core/vcpu.h"
#include "core/vm.h"

#define VCPU_KICK_SIGNAL SIGUSR1

static void vcpu_kick_handler(int sig)
{
	(void)sig;
}

static void vcpu_kick_signal_install(void)
{
	/* No SA_RESTART: the interrupted KVM_RUN must return EINTR to the loop. */
	struct sigaction sa = { .sa_handler = vcpu_kick_handler };

	sigemptyset(&sa.sa_mask);
	sigaction(VCPU_KICK_SIGNAL, &sa, NULL);
}

int vcpu_create(struct vm *vm, int id, struct vcpu **out)
{
	if (vm->nr_vcpus == VM_MAX_VCPUS) {
		pr_err("vcpu: at most %d vCPUs", VM_MAX_VCPUS);
		return -ENOSPC;
	}
	struct vcpu *v = calloc(1, sizeof(*v));

	if (!v)
		return -ENOMEM;
	v->vm = vm;
	v->id = id;
	atomic_init(&v->end_voluntary, -1);
	atomic_init(&v->end_preempted, -1);
	v->fd = kvm_ioctl(vm->fd, KVM_CREATE_VCPU, (void *)(unsigned long)id, " %d", id);
	if (v->fd < 0) {
		int err = v->fd;

		free(v);
		return err;
	}
	v->run_size = vm->vcpu_mmap_size;
	v->run = mmap(NULL, v->run_size, PROT_READ | PROT_WRITE, MAP_SHARED, v->fd, 0);
	if (v->run == MAP_FAILED) {
		int err = errno;

		pr_err("mmap of vCPU %d's kvm_run failed: %s", id, strerror(err));
		close(v->fd);
		free(v);
		return -err;
	}
	vcpu_kicker_init(&v->kicker);
	vcpu_call_init(&v->call);
	vcpu_kick_signal_install();
	vm->vcpus[vm->nr_vcpus++] = v;
	*out = v;
	return 0;
}

void vcpu_destroy(struct vcpu *v)
{
	if (!v)
		return;
	munmap(v->run, v->run_size);
	close(v->fd);
	free(v);
}

void vcpu_kicker_init(struct vcpu_kicker *k)
{
	pthread_mutex_init(&k->lock, NULL);
	atomic_init(&k->running, false);
	k->kill = pthread_kill;
}

void vcpu_kicker_enter(struct vcpu_kicker *k)
{
	pthread_mutex_lock(&k->lock);
	k->thread = pthread_self();
	atomic_store(&k->running, true);
	pthread_mutex_unlock(&k->lock);
}

/* Takes the lock a kick holds while signalling: once this returns, no kick is in flight, and the
 * thread may exit and be joined. */
void vcpu_kicker_leave(struct vcpu_kicker *k)
{
	pthread_mutex_lock(&k->lock);
	atomic_store(&k->running, false);
	pthread_mutex_unlock(&k->lock);
}

VMM_HOT void vcpu_kicker_kick(struct vcpu_kicker *k, int sig)
{
	pthread_mutex_lock(&k->lock);
	if (atomic_load(&k->running) && !pthread_equal(k->thread, pthread_self()))
		k->kill(k->thread, sig);
	pthread_mutex_unlock(&k->lock);
}

VMM_HOT void vcpu_kick(struct vcpu *v)
{
	__atomic_store_n(&v->run->immediate_exit, 1, __ATOMIC_SEQ_CST);
	vcpu_kicker_kick(&v->kicker, VCPU_KICK_SIGNAL);
}

void vcpu_call_init(struct vcpu_call *c)
{
	pthread_mutex_init(&c->serial, NULL);
	pthread_mutex_init(&c->lock, NULL);
	pthread_cond_init(&c->done, NULL);
	atomic_init(&c->pending, false);
}

int vcpu_call(struct vcpu *v, int (*fn)(struct vcpu *v, void *arg), void *arg, int timeout_ms)
{
	struct vcpu_call *c = &v->call;
	struct timespec dl;
	int r = 0;

	pthread_mutex_lock(&c->serial);
	pthread_mutex_lock(&c->lock);
	if (!atomic_load(&v->kicker.running)) { /* no KVM_RUN holds the vCPU */
		r = fn(v, arg);
		goto out;
	}
	c->fn = fn;
	c->arg = arg;
	atomic_store(&c->pending, true);
	vcpu_kick(v);
	clock_gettime(CLOCK_REALTIME, &dl);
	dl.tv_sec += timeout_ms / 1000;
	dl.tv_nsec += (long)(timeout_ms % 1000) * 1000000;
	if (dl.tv_nsec >= 1000000000) {
		dl.tv_sec++;
		dl.tv_nsec -= 1000000000;
	}
	while (atomic_load(&c->pending) && r != ETIMEDOUT)
		r = pthread_cond_timedwait(&c->done, &c->lock, &dl);
	if (atomic_load(&c->pending)) { /* withdrawn under the lock: the thread cannot run it now */
		atomic_store(&c->pending, false);
		r = -ETIMEDOUT;
	} else {
		r = c->ret;
	}
out:
	pthread_mutex_unlock(&c->lock);
	pthread_mutex_unlock(&c->serial);
	return r;
}

VMM_HOT_IDLE void vcpu_call_serve(struct vcpu *v)
{
	struct vcpu_call *c = &v->call;

	if (!atomic_load(&c->pending)) /* the common case: one load per KVM_RUN */
		return;
	pthread_mutex_lock(&c->lock);
	if (atomic_load(&c->pending)) {
		c->ret = c->fn(v, c->arg);
		atomic_store(&c->pending, false);
		pthread_cond_broadcast(&c->done);
	}
	pthread_mutex_unlock(&c->lock);
}

VMM_HOT_VF int64_t vcpu_cpu_ns(struct vcpu *v)
{
	char path[64];
	unsigned long long ns;
	int tid = atomic_load(&v->tid);

	if (!tid)
		return -1;
	/* schedstat's first field: time on a CPU in ns (stat's utime/stime are whole ticks) */
	snprintf(path, sizeof(path), "/proc/self/task/%d/schedstat", tid);
	FILE *f = fopen(path, "r");

	if (f) {
		int ok = fscanf(f, "%llu", &ns) == 1;

		fclose(f);
		if (ok)
			return (int64_t)ns;
	}
	/* a kernel without CONFIG_SCHED_INFO: utime and stime (fields 14, 15) in clock ticks */
	snprintf(path, sizeof(path), "/proc/self/task/%d/stat", tid);
	char buf[1024], *p;
	unsigned long long ut, st;

	if (!(f = fopen(path, "r")))
		return -1;
	size_t n = fread(buf, 1, sizeof(buf) - 1, f);

	fclose(f);
	buf[n] = 0;
	/* the name (field 2) may hold spaces and parentheses: count from its last ')' */
	if (!(p = strrchr(buf, ')')) || sscanf(p + 1, " %*c %*d %*d %*d %*d %*d %*u %*u %*u %*u %*u %llu %llu", &ut, &st) != 2)
		return -1;
	return (int64_t)((ut + st) * (1000000000ull / (unsigned long long)sysconf(_SC_CLK_TCK)));
}

int vcpu_stats_fd(struct vcpu *v)
{
	int fd = kvm_do_ioctl(v->fd, KVM_GET_STATS_FD, NULL);

	if (fd < 0) {
		int err = errno;

		pr_err("KVM_GET_STATS_FD on vCPU %d failed: %s (binary stats need Linux >= 5.14)",
		       v->id, strerror(err));
		return -err;
	}
	return fd;
}

VMM_HOT_IDLE static void vcpu_handle_mmio(struct vcpu *v)
{
	struct kvm_run *run = v->run;
	uint32_t len = run->mmio.len;

	atomic_fetch_add(&v->exits.mmio, 1);
	if (len == 0 || len > sizeof(run->mmio.data)) { /* KVM bounds this to 8; stay defensive */
		atomic_fetch_add(&v->exits.mmio_unclaimed, 1);
		return;
	}
	if (!bus_access(&v->vm->mmio, run->mmio.phys_addr, run->mmio.data, len, run->mmio.is_write))
		atomic_fetch_add(&v->exits.mmio_unclaimed, 1);
}

VMM_HOT static void vcpu_handle_io(struct vcpu *v)
{
	struct kvm_run *run = v->run;
	uint64_t total = (uint64_t)run->io.size * run->io.count;

	atomic_fetch_add(&v->exits.pio, 1);
	if (run->io.data_offset > v->run_size || total > v->run_size - run->io.data_offset)
		return;
	uint8_t *data = (uint8_t *)run + run->io.data_offset;

	for (uint32_t i = 0; i < run->io.count; i++, data += run->io.size)
		bus_access(&v->vm->pio, run->io.port, data, run->io.size,
			   run->io.direction == KVM_EXIT_IO_OUT);
}

/* PSCI SYSTEM_OFF -> poweroff; SYSTEM_RESET -> reset, or a crash when the guest panicked first. */
static int vcpu_system_event_code(struct vm *vm, uint32_t type)
{
	switch (type) {
	case KVM_SYSTEM_EVENT_SHUTDOWN:
		return atomic_load(&vm->guest_panicked) ? VM_EXIT_CRASH : VM_EXIT_POWEROFF;
	case KVM_SYSTEM_EVENT_RESET:
		return atomic_load(&vm->guest_panicked) ? VM_EXIT_CRASH : VM_EXIT_RESET;
	default:
		return VM_EXIT_CRASH;
	}
}

/* Where the vCPU is, as its arch reads it; an arch without the hook leaves pc as it was. */
static int vcpu_pc(struct vcpu *v, struct kvm_error_pc *pc)
{
	const struct machine *m = v->vm->machine;

	return m && m->arch->vcpu_pc ? m->arch->vcpu_pc(v, pc) : 0;
}

/* An MMIO access whose syndrome has no valid ISV (a load/store pair, a writeback): KVM cannot say what
 * was accessed, and vmm does not decode guest instructions, so the guest has faulted. */
static void vcpu_report_internal_error(struct vcpu *v)
{
	struct kvm_error_pc pc = { 0 };
	char line[512];

	if (vcpu_pc(v, &pc) < 0)
		pc.name = NULL;
	kvm_internal_error_describe(v->run, v->id, &pc, v->vm->kvm_note, line, sizeof(line));
	pr_err("%s", line);
}

/* A guest that asked for a reboot went through the reset port or PSCI, not here. */
static void vcpu_report_shutdown(struct vcpu *v)
{
	struct kvm_error_pc pc = { 0 };
	char line[256];

	if (vcpu_pc(v, &pc) < 0)
		pc.name = NULL;
	kvm_shutdown_describe(v->id, &pc, line, sizeof(line));
	pr_warn("%s", line);
}

static void vcpu_report_nisv(struct vcpu *v)
{
	atomic_fetch_add(&v->exits.other, 1);
	pr_err("vCPU %d: the guest accessed guest physical address 0x%llx with an instruction KVM cannot "
	       "decode for device emulation (no valid ISV, ESR ISS 0x%llx: a load/store pair or a "
	       "writeback on a device address?); stopping it as a guest fault", v->id,
	       (unsigned long long)v->run->arm_nisv.fault_ipa, (unsigned long long)v->run->arm_nisv.esr_iss);
	vm_request_stop(v->vm, VM_EXIT_CRASH);
}

/* One exit of KVM_RUN, as kvm_run says: dispatched to the bus, counted, or the VM asked to stop.
 * Apart from the loop so a unit test can hand it synthetic exits without /dev/kvm. */
VMM_HOT_IDLE void vcpu_handle_exit(struct vcpu *v)
{
	struct vm *vm = v->vm;

	switch (v->run->exit_reason) {
	case KVM_EXIT_MMIO:
		vcpu_handle_mmio(v);
		break;
	case KVM_EXIT_IO:
		vcpu_handle_io(v);
		break;
	case KVM_EXIT_INTR:
		atomic_fetch_add(&v->exits.intr, 1);
		break;
	case KVM_EXIT_SYSTEM_EVENT:
		atomic_fetch_add(&v->exits.system_event, 1);
		vm_request_stop(vm, vcpu_system_event_code(vm, v->run->system_event.type));
		break;
	case KVM_EXIT_SHUTDOWN: /* x86: a triple fault, which is how a PC resets */
		atomic_fetch_add(&v->exits.system_event, 1);
		vcpu_report_shutdown(v);
		vm_request_stop(vm, vcpu_system_event_code(vm, KVM_SYSTEM_EVENT_RESET));
		break;
	case KVM_EXIT_IOAPIC_EOI: /* only with a userspace IOAPIC (x86's split irqchip) */
		atomic_fetch_add(&v->exits.ioapic_eoi, 1);
		if (vm->machine && vm->machine->arch->ioapic_eoi)
			vm->machine->arch->ioapic_eoi(vm->machine, v->run->eoi.vector);
		break;
	case KVM_EXIT_ARM_NISV:
		vcpu_report_nisv(v);
		break;
	case KVM_EXIT_FAIL_ENTRY:
		pr_err("vCPU %d: KVM could not enter the guest: KVM_EXIT_FAIL_ENTRY, hardware reason 0x%llx",
		       v->id, (unsigned long long)v->run->fail_entry.hardware_entry_failure_reason);
		atomic_store(&vm->kvm_refused, true);
		vm_request_stop(vm, VM_EXIT_CRASH);
		break;
	case KVM_EXIT_INTERNAL_ERROR:
		vcpu_report_internal_error(v);
		atomic_store(&vm->kvm_refused, true);
		vm_request_stop(vm, VM_EXIT_CRASH);
		break;
	default:
		atomic_fetch_add(&v->exits.other, 1);
		pr_err("vCPU %d: unhandled exit reason %u", v->id, v->run->exit_reason);
		vm_request_stop(vm, VM_EXIT_CRASH);
		break;
	}
}

VMM_HOT_IDLE int vcpu_run_loop(struct vcpu *v)
{
	struct vm *vm = v->vm;

	vcpu_kicker_enter(&v->kicker);
	while (!atomic_load(&vm->stop)) {
		vcpu_call_serve(v);
		int r = kvm_do_ioctl(v->fd, KVM_RUN, NULL);

		/* writes KVM queued (from any vCPU) come before whatever made this one exit */
		mmio_ring_drain(&vm->coalesced);
		if (r < 0) {
			if (errno == EINTR || errno == EAGAIN) {
				atomic_fetch_add(&v->exits.intr, 1);
				__atomic_store_n(&v->run->immediate_exit, 0, __ATOMIC_SEQ_CST);
				continue;
			}
			int err = errno;

			pr_err("KVM_RUN on vCPU %d failed: %s", v->id, strerror(err));
			vm_request_stop(vm, VM_EXIT_ERROR);
			vcpu_kicker_leave(&v->kicker);
			vcpu_call_serve(v);
			return -err;
		}
		vcpu_handle_exit(v);
	}
	vcpu_kicker_leave(&v->kicker);
	vcpu_call_serve(v); /* a call posted while the loop ended: no KVM_RUN to wait for now */
	return atomic_load(&vm->exit_code);
}
