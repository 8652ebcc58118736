// SPDX-License-Identifier: MIT
/* The VM object: KVM_CREATE_VM, VM-wide capabilities, and tear-down in reverse order. */
#include <errno.h>
#include <string.h>
#include <sys/eventfd.h>
#include <sys/mman.h>
#include <unistd.h>

#include "core/hot.h"
#include "core/log.h"
#include "core/kvm.h"
#include "core/kvm_seam.h"
#include "core/bus.h"
#include "core/host_mem.h"
#include "core/vcpu.h"
#include "core/vm.h"

int vm_create(struct vm *vm, unsigned long type)
{
	host_mem_clear(vm, sizeof(*vm)); /* its routing table is 48 KiB: untouched until used */
	vm->fd = vm->defer_fd = -1;
	vm->kvm = (struct kvm_seam){ &kvm_seam_ioctl_ops, vm }; /* ctx: the VM (its fd, its log limit) */
	mmio_ring_init(&vm->coalesced, NULL, 0, vm->kvm);
	atomic_init(&vm->exit_code, -1);
	pthread_mutex_init(&vm->mem_lock, NULL);
	log_limit_init(&vm->log_limit, LOG_LIMIT_BURST, LOG_LIMIT_WINDOW_MS);
	bus_init(&vm->mmio);
	bus_init(&vm->pio);
	vm->kvm_fd = kvm_open();
	if (vm->kvm_fd < 0)
		return vm->kvm_fd;

	vm->vcpu_mmap_size = kvm_do_ioctl(vm->kvm_fd, KVM_GET_VCPU_MMAP_SIZE, NULL);
	if (vm->vcpu_mmap_size < (int)sizeof(struct kvm_run)) {
		pr_err("KVM_GET_VCPU_MMAP_SIZE returned %d", vm->vcpu_mmap_size);
		vm_destroy(vm);
		return -EINVAL;
	}
	int fd;

	do /* KVM_CREATE_VM can fail transiently with EINTR while the kernel sets up the mm */
		fd = kvm_do_ioctl(vm->kvm_fd, KVM_CREATE_VM, (void *)type);
	while (fd < 0 && errno == EINTR);
	if ((fd = kvm_ioctl_said(fd, "KVM_CREATE_VM (type 0x%lx)", type)) < 0) {
		vm_destroy(vm);
		return fd;
	}
	vm->fd = fd;
	/* the VM's lifetime, not vm_run's: virtio workers run before it and after it returns */
	vm->defer_fd = eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
	if (vm->defer_fd < 0) {
		int err = errno;

		pr_err("eventfd for the VM's deferred work failed: %s", strerror(err));
		vm_destroy(vm);
		return -err;
	}
	return 0;
}

int vm_enable_cap(struct vm *vm, uint32_t cap, uint64_t arg0)
{
	struct kvm_enable_cap ec = { .cap = cap, .args = { arg0 } };

	int r = kvm_ioctl(vm->fd, KVM_ENABLE_CAP, &ec, "(%u, %llu)", cap, (unsigned long long)arg0);

	return r < 0 ? r : 0;
}

void vm_coalesced_init(struct vm *vm)
{
	long page = sysconf(_SC_PAGESIZE);
	/* the ring's page offset in a vCPU's mapping, 0 when KVM has none */
	int off = kvm_check_ext(vm->fd, KVM_CAP_COALESCED_MMIO);
	void *ring = NULL;

	if (off > 0 && page > 0 && vm->nr_vcpus && vm->vcpu_mmap_size >= (long)(off + 1) * page)
		ring = (uint8_t *)vm->vcpus[0]->run + (size_t)off * page;
	mmio_ring_init(&vm->coalesced, ring, page > 0 ? (size_t)page : 0, vm->kvm);
}

void vm_request_stop(struct vm *vm, int exit_code)
{
	int expected = -1;

	/* The first reason wins: a crash report is not overwritten by the shutdown it causes. */
	atomic_compare_exchange_strong(&vm->exit_code, &expected, exit_code);
	atomic_store(&vm->stop, true);
	for (int i = 0; i < vm->nr_vcpus; i++)
		vcpu_kick(vm->vcpus[i]);
	/* the main thread sleeps in poll until woken or its 100 ms tick: a guest's power-off was
	 * seen up to 100 ms late, most of an instant power-off's run in the lab. Only a running VM's:
	 * a VM the tests and fuzzers zeroed by hand has fd 0 there. */
	if (atomic_load(&vm->main_waits))
		vm_defer(vm);
}

void vm_destroy(struct vm *vm)
{
	for (int i = vm->nr_vcpus - 1; i >= 0; i--)
		vcpu_destroy(vm->vcpus[i]);
	vm->nr_vcpus = 0;
	for (int i = vm->nr_mem - 1; i >= 0; i--)
		munmap(vm->mem[i].hva, vm->mem[i].size);
	vm->nr_mem = 0;
	if (vm->fd >= 0)
		close(vm->fd);
	if (vm->kvm_fd >= 0)
		close(vm->kvm_fd);
	if (vm->defer_fd >= 0)
		close(vm->defer_fd);
	vm->fd = vm->kvm_fd = vm->defer_fd = -1;
	log_limit_flush(&vm->log_limit);
}

VMM_HOT_IDLE void vm_defer(struct vm *vm)
{
	uint64_t one = 1;

	if (vm->defer_fd >= 0 && write(vm->defer_fd, &one, sizeof(one)) < 0) {
		/* the counter is already non-zero: the waiting thread is woken anyway */
	}
}

void vm_watch_panic(void *opaque)
{
	struct vm *vm = opaque;

	atomic_store(&vm->guest_panicked, true);
}

const char *vm_exit_name(int code, bool kvm_refused)
{
	switch (code) {
	case VM_EXIT_POWEROFF: return "the guest powered off";
	case VM_EXIT_ERROR: return "vmm stopped on an error";
	case VM_EXIT_RESET: return "the guest asked for a reset";
	case VM_EXIT_CRASH: return kvm_refused ? "KVM could not run the guest" : "the guest crashed";
	case VM_EXIT_HUNG: return "the guest hung (--timeout)";
	case VM_EXIT_SANDBOX: return "a vmm thread broke its seccomp allowlist";
	default: return code > 128 ? "vmm was stopped by a signal" : "unknown";
	}
}
