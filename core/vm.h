/* SPDX-License-Identifier: MIT */
/* The VM object: its fd, memory, buses, vCPUs, routing table and how it stops. */
#ifndef VMM_VM_H
#define VMM_VM_H

#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>

#include "core/bus.h"
#include "core/irq.h"
#include "core/kvm_error.h"
#include "core/kvm_seam.h"
#include "core/log.h"
#include "core/mem.h"
#include "core/mmio_ring.h"
#include "core/sandbox.h"

/* Exit codes of a VM run; main() returns them as the process status. */
enum vm_exit_code {
	VM_EXIT_POWEROFF = 0, /* the guest powered off (PSCI SYSTEM_OFF) */
	VM_EXIT_ERROR = 1,    /* vmm failed: bad input, a KVM error */
	VM_EXIT_RESET = 2,    /* the guest asked for a reset and the board does not reboot */
	VM_EXIT_CRASH = 3,    /* the guest crashed or KVM could not run it */
	VM_EXIT_HUNG = 4,     /* --timeout expired: the guest never stopped by itself */
	VM_EXIT_SANDBOX = 5,  /* a vmm thread made a system call its seccomp allowlist refuses */
};

/* The arm64 board's room for GICv3 redistributors (arm64.h's map; config.c asserts it): -c's
 * limit, so the option and the README agree. KVM may allow fewer on a given host. */
#define VM_MAX_VCPUS 123

struct machine;
struct vcpu;

struct vm {
	int kvm_fd;
	int fd;
	int vcpu_mmap_size;
	struct mem_region mem[VM_MAX_MEM_REGIONS];
	int nr_mem;
	pthread_mutex_t mem_lock; /* memslot numbers and listeners: BARs move from vCPU threads */
	uint64_t memslot_used[VM_MAX_MEMSLOTS / 64];
	struct mem_listener mem_listeners[VM_MAX_MEM_LISTENERS];
	int nr_mem_listeners;
	struct bus mmio;
	struct bus pio;
	struct vcpu *vcpus[VM_MAX_VCPUS];
	int nr_vcpus;
	atomic_bool stop;
	atomic_int exit_code;
	_Atomic uint64_t first_run_ns; /* CLOCK_MONOTONIC as vCPU 0 first enters KVM_RUN; 0: not yet */
	atomic_bool guest_panicked; /* a reset after this is reported as a crash */
	atomic_bool pvpanicked;	    /* the guest said so through pvpanic (pvpanic.c) */
	atomic_bool kvm_refused;    /* VM_EXIT_CRASH because KVM could not run the guest (an internal
				     * error, a failed entry), not because the guest crashed */
	/* optional (the arch's): a sentence about the host said with a KVM internal error */
	const char *kvm_note;
	bool msi_needs_devid; /* set once a vITS exists (KVM_CAP_MSI_DEVID) */
	struct irq_routing routing;
	struct kvm_seam kvm; /* how devices reach KVM: the ioctls, or a test's fake */
	struct mmio_ring coalesced; /* KVM's coalesced MMIO ring, once vCPUs exist */
	/* the board this VM is part of: its arch's hooks on vCPU exits (vcpu_pc, ioapic_eoi); NULL:
	 * none (a test's VM) */
	struct machine *machine;
	/* optional: called by the thread that waits for the VM to stop, first at once, then again
	 * after the milliseconds it returns; -1: never again. Without a tick due that thread sleeps
	 * until a signal, deferred work or --timeout. */
	int (*tick)(void *opaque);
	void *tick_opaque;
	/* optional: work another thread hands to that same thread (vm_defer), whose allowlist has
	 * what the work needs (the stats' boot-end snapshot reads KVM's stats fds); run when woken,
	 * and once more after every thread has stopped */
	void (*deferred)(void *opaque);
	void *deferred_opaque;
	int defer_fd; /* the eventfd vm_run's waiting thread polls (vm_create's; -1: none, a test's VM) */
	atomic_bool main_waits; /* vm_run's main thread is in its loop: vm_request_stop wakes it */
	enum sandbox_mode sandbox; /* the allowlists vm_run's threads enter (core/sandbox.h) */
	unsigned int timeout;	   /* --timeout: seconds until a still-running guest is hung; 0: none */
	struct log_limit log_limit; /* the messages the guest can cause at will (pr_warn_guest) */
};

int vm_create(struct vm *vm, unsigned long type);
void vm_destroy(struct vm *vm);
int vm_enable_cap(struct vm *vm, uint32_t cap, uint64_t arg0);
/* Finds KVM's coalesced MMIO ring in vCPU 0's kvm_run mapping (none without KVM_CAP_COALESCED_MMIO);
 * before any zone is bound. */
void vm_coalesced_init(struct vm *vm);
/* Asks every vCPU to leave KVM_RUN and stop; safe from any thread, including a vCPU's own. */
void vm_request_stop(struct vm *vm, int exit_code);

/* The words for a VM exit code in vmm's summary; kvm_refused: see struct vm. */
const char *vm_exit_name(int code, bool kvm_refused);

/* Any thread: wakes vm_run's waiting thread to call vm->deferred (at once, or at the latest when
 * the VM stops). Never blocks, makes no call beyond write(2) on an eventfd. */
void vm_defer(struct vm *vm);

/* Marks the VM as panicked (a reset after it is reported as a crash): the console watch's hook. */
void vm_watch_panic(void *vm);

#endif
