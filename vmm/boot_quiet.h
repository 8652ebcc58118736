/* SPDX-License-Identifier: MIT */
/*
 * The end of start-up for any guest, not only one that prints vmm's boot-end marker: the first time
 * the guest has been idle for a while (no exit to vmm, no queued console write, no queue kick, and
 * its vCPUs on a host CPU a tenth of that time at most: a kernel unpacking its initramfs makes no
 * exit either), or at the latest a deadline after its vCPUs first ran. What start-up needed is then
 * given back.
 */
#ifndef VMM_BOOT_QUIET_H
#define VMM_BOOT_QUIET_H

#include <stdbool.h>
#include <stdint.h>

#include "halt_poll/halt_poll.h"

/* Defaults: a booting kernel exits to vmm (console, device probes) far more often than once a
 * second; a guest that sits at its prompt does not. The deadline bounds a guest that never rests. */
#define BOOT_QUIET_NS (1000ull * 1000 * 1000)
#define BOOT_QUIET_DEADLINE_NS (30ull * 1000 * 1000 * 1000)

enum boot_quiet_why { BOOT_QUIET_NOT_YET, BOOT_QUIET_QUIET, BOOT_QUIET_DEADLINE };

/* cpu_ns when a vCPU thread's time could not be read: counted as busy (only the deadline ends
 * start-up meanwhile) */
#define BOOT_QUIET_CPU_UNKNOWN UINT64_MAX

struct boot_quiet {
	uint64_t quiet_ns, deadline_ns; /* the settings */
	uint64_t last;			/* the activity count last seen */
	uint64_t since;			/* when the quiet spell began (0: not seen yet) */
	uint64_t cpu_since;		/* the vCPUs' CPU time then */
	unsigned long by_activity, by_cpu; /* spells ended by activity, by the vCPUs computing */
	int exits_only;			/* the most vCPUs a look judged by exits alone */
	bool fired;
};

void boot_quiet_init(struct boot_quiet *q, uint64_t quiet_ns, uint64_t deadline_ns);
/* One look at the guest: activity is a count that only grows (exits, console writes, kicks),
 * cpu_ns the vCPU threads' host CPU time summed, now and start (when the vCPUs first ran; 0: not
 * yet) CLOCK_MONOTONIC ns. Says once why start-up is over; BOOT_QUIET_NOT_YET before and after. */
enum boot_quiet_why boot_quiet_step(struct boot_quiet *q, uint64_t activity, uint64_t cpu_ns, uint64_t now,
				    uint64_t start);

/* Whether a vCPU's host CPU time tells its work from its idle: not when the guest's idle
 * instruction stays in the guest, where an idle vCPU is on the CPU all the same. That is x86 with
 * HLT kept in the guest (hlt_in_guest), and arm64 (wfi: the arch halts on WFI) under
 * kvm-arm.wfi_trap_policy=notrap, or under the default policy once the vCPU has vLPIs mapped
 * (KVM then clears the WFI trap while its thread is alone on its CPU). Such a vCPU is judged by
 * exits and kicks alone. vlpis: the vCPU's mapped vLPIs, -1 unknown (none seen). */
bool boot_quiet_cpu_tells(bool hlt_in_guest, bool wfi, enum hp_trap wfi_policy, int vlpis);

#endif
