// SPDX-License-Identifier: MIT
/* Start-up phase marks (core/timings.h). */
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "core/hot.h"
#include "core/timings.h"

static const char *const names[NR_BOOT_PHASES] = {
	[PHASE_START] = "start",		 [PHASE_VM_RAM] = "vm_ram",
	[PHASE_VCPUS] = "vcpus",		 [PHASE_DEVICES] = "devices",
	[PHASE_KERNEL_READ] = "kernel_read",	 [PHASE_KERNEL_DECODE] = "kernel_decode",
	[PHASE_GUEST_COPY] = "guest_copy",	 [PHASE_FDT] = "fdt",
	[PHASE_RUN] = "run",			 [PHASE_KVM_RUN] = "kvm_run",
	[PHASE_RELEASED] = "released",
	[PHASE_EXIT] = "exit",
};

const char *boot_phase_name(enum boot_phase p)
{
	return p < NR_BOOT_PHASES ? names[p] : "?";
}

void boot_times_init(struct boot_times *t)
{
	const char *e = getenv("VMM_TIMINGS");

	memset(t, 0, sizeof(*t));
	t->on = e && !strcmp(e, "1");
	boot_times_mark(t, PHASE_START);
}

VMM_HOT_IDLE void boot_times_mark(struct boot_times *t, enum boot_phase p)
{
	struct timespec ts;

	if (!t->on || p >= NR_BOOT_PHASES)
		return;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	t->ns[p] = (uint64_t)ts.tv_sec * 1000000000ULL + ts.tv_nsec;
}

VMM_HOT void boot_times_print(const struct boot_times *t, FILE *f)
{
	if (!t->on)
		return;
	fputs("vmm: timings:", f);
	for (int p = 0; p < NR_BOOT_PHASES; p++)
		if (t->ns[p])
			fprintf(f, " %s=%llu", names[p], (unsigned long long)t->ns[p]);
	fputc('\n', f);
}
