// SPDX-License-Identifier: MIT
/* The end of start-up by the guest's first quiet spell (boot_quiet.h). */
#include "vmm/boot_quiet.h"

#include "core/hot.h"

void boot_quiet_init(struct boot_quiet *q, uint64_t quiet_ns, uint64_t deadline_ns)
{
	*q = (struct boot_quiet){ .quiet_ns = quiet_ns, .deadline_ns = deadline_ns };
}

VMM_HOT_IDLE enum boot_quiet_why boot_quiet_step(struct boot_quiet *q, uint64_t activity, uint64_t cpu_ns,
						       uint64_t now, uint64_t start)
{
	if (q->fired || !start || now < start)
		return BOOT_QUIET_NOT_YET;
	/* the first look, something happened, or the vCPUs computed more than a tenth of the spell:
	 * the quiet spell starts again */
	bool moved = q->since && activity != q->last;
	/* an unknown sum is busy; one that went back is not (and no unsigned wrap) */
	bool busy = q->since && (cpu_ns == BOOT_QUIET_CPU_UNKNOWN ||
				 (cpu_ns >= q->cpu_since && (cpu_ns - q->cpu_since) * 10 > now - q->since + q->quiet_ns / 10));

	if (!q->since || moved || busy) {
		q->by_activity += moved;
		q->by_cpu += busy && !moved;
		q->last = activity;
		q->since = now;
		if (cpu_ns != BOOT_QUIET_CPU_UNKNOWN)
			q->cpu_since = cpu_ns;
	}
	enum boot_quiet_why why = BOOT_QUIET_NOT_YET;

	if (now - q->since >= q->quiet_ns)
		why = BOOT_QUIET_QUIET;
	else if (now - start >= q->deadline_ns)
		why = BOOT_QUIET_DEADLINE;
	q->fired = why != BOOT_QUIET_NOT_YET;
	return why;
}

VMM_HOT_IDLE bool boot_quiet_cpu_tells(bool hlt_in_guest, bool wfi, enum hp_trap wfi_policy, int vlpis)
{
	if (hlt_in_guest)
		return false;
	if (!wfi)
		return true;
	/* an unknown policy value: the kernel refuses it and keeps its default */
	return wfi_policy == HP_TRAP_TRAP || (wfi_policy != HP_TRAP_NOTRAP && vlpis <= 0);
}
