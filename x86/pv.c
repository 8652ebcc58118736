// SPDX-License-Identifier: MIT
/*
 * The PV policy: which KVM_CPUID_FEATURES bits and hints the guest sees, starting from what KVM
 * supports. Everything KVM offers is passed on except where it costs the guest: PV_SEND_IPI
 * where hardware IPI acceleration would be bypassed (kernel-interfaces.md 1.4: in xAPIC mode
 * Linux sends even unicast IPIs by hypercall, so AVIC or IPIv would never see them; in x2APIC
 * mode unicast writes the ICR and only multicast takes the hypercall, which AVIC does badly),
 * PV_UNHALT when HLT never exits (KVM masks it then), and MSI_EXT_DEST_ID and the REALTIME hint,
 * which are the VMM's to offer.
 */
#include <errno.h>
#include <stdarg.h>
#include <string.h>

#include <asm/kvm_para.h>

#include "core/log.h"
#include "x86/x86.h"

static const struct {
	const char *name;
	int bit; /* KVM_CPUID_FEATURES eax bit, or the edx hint for hint-dedicated */
} knobs[X86_PV_NR_KNOBS] = {
	[X86_PV_IPI] = { "pv-ipi", KVM_FEATURE_PV_SEND_IPI },
	[X86_PV_UNHALT] = { "pv-unhalt", KVM_FEATURE_PV_UNHALT },
	[X86_PV_TLB_FLUSH] = { "pv-tlb-flush", KVM_FEATURE_PV_TLB_FLUSH },
	[X86_PV_SCHED_YIELD] = { "pv-sched-yield", KVM_FEATURE_PV_SCHED_YIELD },
	[X86_PV_POLL_CONTROL] = { "poll-control", KVM_FEATURE_POLL_CONTROL },
	[X86_PV_MSI_EXT_DEST_ID] = { "msi-ext-dest-id", KVM_FEATURE_MSI_EXT_DEST_ID },
	[X86_PV_HINT_DEDICATED] = { "hint-dedicated", KVM_HINTS_REALTIME },
};

const char *x86_pv_knob_name(enum x86_pv_knob k)
{
	return k < X86_PV_NR_KNOBS ? knobs[k].name : "?";
}

static int knob_by_name(const char *s, size_t n)
{
	for (int k = 0; k < X86_PV_NR_KNOBS; k++)
		if (strlen(knobs[k].name) == n && !strncmp(knobs[k].name, s, n))
			return k;
	return -1;
}

int x86_pv_parse(struct x86_pv_config *c, const char *spec)
{
	const char *p = spec;

	for (;;) { /* every item, the last too, is KNOB=VALUE: "" and "a=on," are refused */
		const char *comma = strchrnul(p, ','), *eq = memchr(p, '=', comma - p);
		int k = eq ? knob_by_name(p, eq - p) : -1;
		size_t vlen = eq ? (size_t)(comma - eq - 1) : 0;

		if (k < 0) {
			pr_err("--pv: '%.*s' is not KNOB=on|off|auto; the knobs are pv-ipi, pv-unhalt, "
			       "pv-tlb-flush, pv-sched-yield, poll-control, msi-ext-dest-id, "
			       "hint-dedicated", (int)(comma - p), p);
			return -EINVAL;
		}
		if (vlen == 2 && !strncmp(eq + 1, "on", 2))
			c->knob[k] = X86_PV_ON;
		else if (vlen == 3 && !strncmp(eq + 1, "off", 3))
			c->knob[k] = X86_PV_OFF;
		else if (vlen == 4 && !strncmp(eq + 1, "auto", 4))
			c->knob[k] = X86_PV_DEFAULT;
		else {
			pr_err("--pv: %s takes on, off or auto, not '%.*s'", knobs[k].name, (int)vlen,
			       eq + 1);
			return -EINVAL;
		}
		if (!*comma)
			return 0;
		p = comma + 1;
	}
}

static void why(struct x86_pv_decision *d, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));
static void why(struct x86_pv_decision *d, const char *fmt, ...)
{
	size_t n = strlen(d->ipi_why);
	va_list ap;

	if (n >= sizeof(d->ipi_why) - 1)
		return;
	va_start(ap, fmt);
	vsnprintf(d->ipi_why + n, sizeof(d->ipi_why) - n, fmt, ap);
	va_end(ap);
}

static const char *tri(int v)
{
	return v > 0 ? "Y" : v == 0 ? "N" : "?";
}

static bool kernel_at_least(const struct x86_host_evidence *e, int major, int minor)
{
	return e->kernel_major > major || (e->kernel_major == major && e->kernel_minor >= minor);
}

/* Whether the hardware delivers this guest's unicast IPIs without an exit; the evidence goes
 * into d->ipi_why. */
static bool hw_ipi_active(const struct x86_host_evidence *e, bool x2apic,
			  struct x86_pv_decision *d)
{
	bool avic;

	why(d, "kernel %d.%d, ", e->kernel_major, e->kernel_minor);
	switch (e->vendor) {
	case X86_KVM_AMD:
		why(d, "kvm_amd avic=%s force_avic=%s enable_ipiv=%s, cpu flags%s%s, dmesg %s",
		    tri(e->amd_avic), tri(e->amd_force_avic), tri(e->amd_enable_ipiv),
		    e->cpu_avic ? " avic" : " -avic", e->cpu_x2avic ? " x2avic" : " -x2avic",
		    e->dmesg_avic < 0 ? "unreadable" : e->dmesg_avic ? "'AVIC enabled'" :
		    "no 'AVIC enabled'");
		/* Before 6.18 the parameter reads back what kvm_amd enabled; from 6.18 it reads N in
		 * auto mode even while AVIC is on (Zen4+ with x2AVIC), so the kernel log's "AVIC
		 * enabled" decides, and without a readable log the default wins over an explicit N
		 * vmm cannot tell apart. */
		if (e->dmesg_avic > 0 || e->amd_avic > 0)
			avic = true;
		else if (kernel_at_least(e, 6, 18) && e->cpu_x2avic && e->dmesg_avic < 0) {
			why(d, "; 6.18+ with x2AVIC and no kernel log: avic=N may be auto mode, taken as on");
			avic = true;
		} else
			avic = false;
		if (!avic) {
			why(d, "; AVIC off");
			return false;
		}
		if (e->amd_enable_ipiv == 0) {
			why(d, "; AVIC on but its IPI virtualization off (enable_ipiv=N)");
			return false;
		}
		if (x2apic && !(e->dmesg_x2avic > 0 || (e->cpu_x2avic && kernel_at_least(e, 6, 0)))) {
			why(d, "; AVIC on but no x2AVIC: an x2APIC guest inhibits it");
			return false;
		}
		why(d, x2apic ? "; x2AVIC on" : "; AVIC on");
		return true;
	case X86_KVM_INTEL:
		why(d, "kvm_intel enable_apicv=%s enable_ipiv=%s, vmx flag%s", tri(e->intel_apicv),
		    tri(e->intel_ipiv), e->cpu_ipi_virt ? " ipi_virt" : " -ipi_virt");
		if (e->intel_apicv <= 0) {
			why(d, "; APICv off");
			return false;
		}
		if (e->intel_ipiv <= 0 || !e->cpu_ipi_virt) {
			why(d, "; APICv on, IPIv off");
			return false;
		}
		why(d, "; APICv and IPIv on");
		return true;
	default:
		why(d, "neither kvm_amd nor kvm_intel loaded: no hardware IPI acceleration known");
		return false;
	}
}

static bool want(const struct x86_pv_config *c, enum x86_pv_knob k, bool dflt)
{
	return c->knob[k] == X86_PV_DEFAULT ? dflt : c->knob[k] == X86_PV_ON;
}

int x86_pv_decide(uint32_t sup_eax, uint32_t sup_edx, bool host_x2apic,
		  const struct x86_pv_config *c, const struct x86_host_evidence *e,
		  struct x86_pv_decision *d)
{
	bool on[X86_PV_NR_KNOBS];

	memset(d, 0, sizeof(*d));
	d->x2apic = host_x2apic && !c->xapic;
	d->hw_ipi = hw_ipi_active(e, d->x2apic, d);
	why(d, "; guest %s", d->x2apic ? "x2APIC" : "xAPIC");

	if (c->no_hlt_exit && c->knob[X86_PV_UNHALT] == X86_PV_ON) {
		pr_err("--pv pv-unhalt=on contradicts --no-hlt-exit: with HLT kept in the guest KVM "
		       "cannot wake a halted vCPU by hypercall; drop one of them");
		return -EINVAL;
	}
	if (c->irqchip != X86_IRQCHIP_SPLIT && c->knob[X86_PV_MSI_EXT_DEST_ID] == X86_PV_ON) {
		pr_err("--pv msi-ext-dest-id=on needs --irqchip split (the in-kernel IOAPIC has no "
		       "extended destination IDs)");
		return -EINVAL;
	}
	/* Everything KVM offers is on by default; the exceptions below are the policy. */
	for (int k = 0; k < X86_PV_NR_KNOBS; k++)
		on[k] = want(c, k, true);
	on[X86_PV_UNHALT] = want(c, X86_PV_UNHALT, !c->no_hlt_exit);
	on[X86_PV_MSI_EXT_DEST_ID] = want(c, X86_PV_MSI_EXT_DEST_ID, false);
	on[X86_PV_HINT_DEDICATED] = want(c, X86_PV_HINT_DEDICATED, false);
	/* Hardware delivers unicast IPIs without exits; a hypercall would take them in xAPIC mode
	 * and bypass it, while in x2APIC mode it takes only multicast, which AVIC handles badly. */
	on[X86_PV_IPI] = want(c, X86_PV_IPI, !(d->hw_ipi && !d->x2apic));

	if (c->knob[X86_PV_IPI] != X86_PV_DEFAULT)
		why(d, " -> pv-ipi %s: forced by --pv", on[X86_PV_IPI] ? "on" : "off");
	else if (!(sup_eax & (1u << KVM_FEATURE_PV_SEND_IPI)))
		why(d, " -> pv-ipi off: KVM does not offer PV_SEND_IPI");
	else if (!on[X86_PV_IPI])
		why(d, " -> pv-ipi off: hardware delivers this xAPIC guest's IPIs and the hypercall "
		       "would take even unicast ones");
	else if (d->hw_ipi)
		why(d, " -> pv-ipi on: unicast IPIs go to hardware (x2APIC ICR), multicast by "
		       "hypercall");
	else
		why(d, " -> pv-ipi on: every IPI exits anyway, the hypercall saves exits on multicast");

	for (int k = 0; k < X86_PV_NR_KNOBS; k++) {
		bool hint = k == X86_PV_HINT_DEDICATED, vmm_owned = hint || k == X86_PV_MSI_EXT_DEST_ID;
		uint32_t bit = 1u << knobs[k].bit;

		if (!on[k])
			continue;
		if (!vmm_owned && !(sup_eax & bit)) {
			if (c->knob[k] == X86_PV_ON) {
				pr_err("--pv %s=on: this host's KVM does not offer it (KVM_GET_SUPPORTED_CPUID "
				       "0x40000001 eax=0x%08x)", knobs[k].name, sup_eax);
				return -EINVAL;
			}
			continue;
		}
		if (hint)
			d->hints |= bit;
		else
			d->features |= bit;
	}
	/* Bits no knob names (clocksource, async PF, PV EOI ...) pass as KVM offers them. */
	for (int k = 0; k < X86_PV_NR_KNOBS; k++)
		if (k != X86_PV_HINT_DEDICATED)
			sup_eax &= ~(1u << knobs[k].bit);
	d->features |= sup_eax;
	(void)sup_edx; /* KVM leaves every hint to the VMM */
	return 0;
}

void x86_pv_print(FILE *f, const struct x86_pv_decision *d)
{
	fprintf(f, "vmm: x86 pv:");
	for (int k = 0; k < X86_PV_NR_KNOBS; k++) {
		uint32_t bit = 1u << knobs[k].bit;
		bool on = k == X86_PV_HINT_DEDICATED ? d->hints & bit : d->features & bit;

		fprintf(f, " %s=%s", knobs[k].name, on ? "on" : "off");
	}
	fprintf(f, " (0x40000001 eax=0x%08x edx=0x%08x, %s)\n", d->features, d->hints,
		d->x2apic ? "x2APIC" : "xAPIC");
	fprintf(f, "vmm: x86 pv-ipi: %s\n", d->ipi_why);
}
