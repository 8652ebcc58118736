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
	bool fired;
};

void boot_quiet_init(struct boot_quiet *q, uint64_t quiet_ns, uint64_t deadline_ns);
/* One look at the guest: activity is a count that only grows (exits, console writes, kicks),
 * cpu_ns the vCPU threads' host CPU time summed, now and start (when the vCPUs first ran; 0: not
 * yet) CLOCK_MONOTONIC ns. Says once why start-up is over; BOOT_QUIET_NOT_YET before and after. */
enum boot_quiet_why boot_quiet_step(struct boot_quiet *q, uint64_t activity, uint64_t cpu_ns, uint64_t now,
				    uint64_t start);

#endif
