// SPDX-License-Identifier: MIT
/*
 * What governs halting on an arm64 host, per vCPU: the kvm module's poll parameters, the
 * WFI/WFE trap policies and GICv4 enablement from the host's command line, and the vCPU's mapped
 * vLPIs. KVM clears WFI trapping (kvm_vcpu_should_clear_twi) under kvm-arm.wfi_trap_policy=notrap,
 * and by default whenever the vCPU thread is alone on its CPU and the vCPU has vLPIs: the guest's
 * WFI then never reaches KVM, so there is no halt and no halt polling, and the counters' zeros
 * mean that, not "polling failed". The decision is text in, text out, so tests feed it anything.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/hot.h"
#include "halt_poll/halt_poll.h"
#include "core/json.h"

VMM_HOT_VF static enum hp_trap trap_value(const char *cmdline, const char *key)
{
	size_t klen = strlen(key);

	/* the last occurrence wins, as the kernel's own parser has it */
	enum hp_trap t = HP_TRAP_DEFAULT;

	for (const char *p = cmdline; (p = strstr(p, key)); p += klen) {
		if (p != cmdline && p[-1] != ' ')
			continue;
		const char *v = p + klen;
		size_t n = strcspn(v, " \n");

		t = n == 4 && !strncmp(v, "trap", 4) ? HP_TRAP_TRAP : n == 6 && !strncmp(v, "notrap", 6) ? HP_TRAP_NOTRAP
												    : HP_TRAP_OTHER;
	}
	return t;
}

VMM_HOT_VF void hp_host_parse_cmdline(struct hp_host *h, const char *cmdline)
{
	static const char v4[] = "kvm-arm.vgic_v4_enable=";

	h->wfi = trap_value(cmdline, "kvm-arm.wfi_trap_policy=");
	h->wfe = trap_value(cmdline, "kvm-arm.wfe_trap_policy=");
	h->vgic_v4 = -1;
	for (const char *p = cmdline; (p = strstr(p, v4)); p += sizeof(v4) - 1)
		if (p == cmdline || p[-1] == ' ') {
			const char *v = p + sizeof(v4) - 1;

			/* a kernel bool: 1/y/Y/on enable it */
			h->vgic_v4 = *v == '1' || *v == 'y' || *v == 'Y' || !strncmp(v, "on", 2);
		}
}

VMM_HOT_VF void hp_host_read(struct hp_host *h)
{
	char buf[4096] = "";
	FILE *f = fopen("/proc/cmdline", "r");

	memset(h, 0, sizeof(*h));
	if (f) {
		size_t n = fread(buf, 1, sizeof(buf) - 1, f);

		buf[n] = 0;
		fclose(f);
	}
	hp_host_parse_cmdline(h, buf);
	h->poll_ns = hp_module_param("halt_poll_ns", UINT64_MAX);
	h->have_params = h->poll_ns != UINT64_MAX;
	h->grow = hp_module_param("halt_poll_ns_grow", 0);
	h->grow_start = hp_module_param("halt_poll_ns_grow_start", 0);
	h->shrink = hp_module_param("halt_poll_ns_shrink", 0);
}

VMM_HOT_VF const char *hp_trap_name(enum hp_trap t)
{
	return t == HP_TRAP_TRAP ? "trap" : t == HP_TRAP_NOTRAP ? "notrap" : t == HP_TRAP_OTHER ? "unknown" : "default";
}

VMM_HOT_VF const char *hp_halting_name(enum hp_halting v)
{
	static const char *const n[] = { "polls", "no-poll", "never-halts", "never-halts-when-alone" };

	return n[v];
}

VMM_HOT_VF enum hp_halting hp_halting_of(const struct hp_host *h, uint64_t ceiling_ns, int vlpis, char *why, size_t n)
{
	if (h->wfi == HP_TRAP_NOTRAP) {
		snprintf(why, n, "kvm-arm.wfi_trap_policy=notrap: the guest's WFI runs on the CPU and never "
				 "reaches KVM, so halt polling never happens");
		return HP_HALT_NEVER;
	}
	if (h->wfi != HP_TRAP_TRAP && vlpis > 0) {
		snprintf(why, n, "%d vLPI%s mapped and the default WFI policy: while its thread is alone on "
				 "its CPU, WFI is not trapped and halt polling never happens "
				 "(kvm-arm.wfi_trap_policy=trap makes KVM see every WFI)", vlpis, vlpis == 1 ? "" : "s");
		return HP_HALT_NOT_WHEN_ALONE;
	}
	if (!ceiling_ns) {
		snprintf(why, n, "WFI traps to KVM, which halts the vCPU without polling (ceiling 0)");
		return HP_HALT_NO_POLL;
	}
	snprintf(why, n, "WFI traps to KVM, which polls up to %llu ns before sleeping%s",
		 (unsigned long long)ceiling_ns,
		 vlpis < 0 ? " (vLPIs unknown: mount debugfs to see them)" : "");
	return HP_HALT_POLLS;
}

VMM_HOT_VF const char *hp_observed_name(enum hp_observed o)
{
	return o == HP_OBS_WFI_TRAPPED ? "wfi-trapped" : o == HP_OBS_WFI_RARE ? "wfi-rarely-trapped" : "no-wfi-exits";
}

VMM_HOT_VF enum hp_observed hp_observed_of(enum hp_halting predicted, int vlpis, uint64_t wfi, double win_s, uint64_t out_wfi,
				double out_s, char *why, size_t n)
{
	double in = win_s > 0 ? wfi / win_s : 0, out = out_s > 0 ? out_wfi / out_s : 0;
	bool no_trap = predicted == HP_HALT_NOT_WHEN_ALONE || predicted == HP_HALT_NEVER;

	if (!wfi) {
		snprintf(why, n, "no WFI reached KVM in %.1f s (%.1f/s outside the window)%s", win_s, out,
			 no_trap ? ": WFI was not trapped, as predicted, so no halt polling" : ": the guest never idled on it");
		return HP_OBS_NO_WFI_EXITS;
	}
	if (predicted == HP_HALT_NOT_WHEN_ALONE && out > 0 && in * 4 <= out) {
		snprintf(why, n, "%d vLPI%s mapped: KVM trapped only %llu WFIs in %.1f s (%.1f/s, against %.1f/s "
			 "outside the window): WFI mostly ran on the CPU, as predicted; the few trapped came while "
			 "the vCPU thread was not alone on its host CPU when it loaded", vlpis, vlpis == 1 ? "" : "s",
			 (unsigned long long)wfi, win_s, in, out);
		return HP_OBS_WFI_RARE;
	}
	if (predicted == HP_HALT_NOT_WHEN_ALONE)
		snprintf(why, n, "%d vLPI%s mapped, yet KVM trapped %llu WFIs in %.1f s (%.1f/s, against %.1f/s "
			 "outside the window): the vCPU thread was often not alone on its host CPU when it loaded "
			 "(KVM clears the WFI trap only then), so it halted and halt polling applied", vlpis,
			 vlpis == 1 ? "" : "s", (unsigned long long)wfi, win_s, in, out);
	else if (predicted == HP_HALT_NEVER)
		snprintf(why, n, "KVM trapped %llu WFIs although wfi_trap_policy=notrap: the host's policy is "
			 "not what its command line says", (unsigned long long)wfi);
	else
		snprintf(why, n, "KVM trapped %llu WFIs in %.1f s (%.1f/s, %.1f/s outside the window), as predicted",
			 (unsigned long long)wfi, win_s, in, out);
	return HP_OBS_WFI_TRAPPED;
}

VMM_HOT_VF void hp_governor_report(FILE *f, const struct hp_host *h, uint64_t ceiling_ns, const int *vlpis, int nr_vcpus,
			bool json)
{
	char why[256];

	if (json) {
		fprintf(f, "{\"halt_poll_ns\":%llu,\"halt_poll_ns_grow\":%llu,\"halt_poll_ns_grow_start\":%llu,"
			   "\"halt_poll_ns_shrink\":%llu,\"wfi_trap_policy\":\"%s\",\"wfe_trap_policy\":\"%s\","
			   "\"vgic_v4_enable\":%s,\"vcpus\":[",
			(unsigned long long)(h->have_params ? h->poll_ns : 0), (unsigned long long)h->grow,
			(unsigned long long)h->grow_start, (unsigned long long)h->shrink, hp_trap_name(h->wfi),
			hp_trap_name(h->wfe), h->vgic_v4 < 0 ? "null" : h->vgic_v4 ? "true" : "false");
		for (int i = 0; i < nr_vcpus; i++) {
			enum hp_halting v = hp_halting_of(h, ceiling_ns, vlpis[i], why, sizeof(why));

			fprintf(f, "%s{\"vcpu\":%d,\"vlpis\":%d,\"halting\":\"%s\",\"why\":", i ? "," : "", i, vlpis[i],
				hp_halting_name(v));
			json_write_string(f, why);
			fputc('}', f);
		}
		fputs("]}", f);
		return;
	}
	fprintf(f, "vmm: what governs halting: kvm halt_poll_ns %s%llu (grow %llu, grow_start %llu, shrink %llu), "
		   "wfi_trap_policy %s, wfe_trap_policy %s, vgic_v4_enable %s\n",
		h->have_params ? "" : "(not readable) ", (unsigned long long)(h->have_params ? h->poll_ns : 0),
		(unsigned long long)h->grow, (unsigned long long)h->grow_start, (unsigned long long)h->shrink,
		hp_trap_name(h->wfi), hp_trap_name(h->wfe),
		h->vgic_v4 < 0 ? "not on the command line (off)" : h->vgic_v4 ? "1" : "0");
	for (int i = 0; i < nr_vcpus; i++) {
		enum hp_halting v = hp_halting_of(h, ceiling_ns, vlpis[i], why, sizeof(why));

		fprintf(f, "vmm: vcpu%d %s: %s\n", i, hp_halting_name(v), why);
	}
}
