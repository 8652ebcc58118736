/* SPDX-License-Identifier: MIT */
/*
 * Where vmm's start-up time goes: CLOCK_MONOTONIC marks at each phase of the board's build, printed
 * at exit when the environment has VMM_TIMINGS=1 (make bench reads them). Absolute times, so a
 * caller that noted the clock when it started vmm gets launch-to-phase figures from the same line.
 */
#ifndef VMM_TIMINGS_H
#define VMM_TIMINGS_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

enum boot_phase {
	PHASE_START,	     /* board_run entered */
	PHASE_VM_RAM,	     /* VM created, RAM mapped, arch vm_init (irqchip device) done */
	PHASE_VCPUS,	     /* every vCPU created and initialised */
	PHASE_DEVICES,	     /* irqchip initialised, PCI host and devices up */
	PHASE_KERNEL_READ,   /* kernel and initrd files opened and mapped (read into RAM by the load) */
	PHASE_KERNEL_DECODE, /* kernel image parsed (and decompressed) */
	PHASE_GUEST_COPY,    /* kernel and initrd copied into guest RAM */
	PHASE_FDT,	     /* platform description built, boot registers set */
	PHASE_RUN,	     /* the vCPU threads are started: the guest's first instruction follows */
	PHASE_KVM_RUN,	     /* vCPU 0's thread, its sandbox loaded, enters KVM_RUN the first time */
	PHASE_RELEASED,	     /* the boot ended and start-up's memory went back (core/host_mem.h) */
	PHASE_EXIT,	     /* the guest stopped (poweroff, reset, crash or signal) */
	NR_BOOT_PHASES
};

struct boot_times {
	bool on;
	uint64_t ns[NR_BOOT_PHASES]; /* 0: not reached */
};

/* on from the environment (VMM_TIMINGS=1); marks PHASE_START. */
void boot_times_init(struct boot_times *t);
void boot_times_mark(struct boot_times *t, enum boot_phase p);
/* One line, "vmm: timings: start=NS vm_ram=NS ...", phases not reached left out; nothing when off. */
void boot_times_print(const struct boot_times *t, FILE *f);
const char *boot_phase_name(enum boot_phase p);

#endif
