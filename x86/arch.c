// SPDX-License-Identifier: MIT
/*
 * The x86_64 arch operations: the in-kernel irqchip (PIC, IOAPIC, LAPIC) with a PIT that drops
 * missed ticks, or the split irqchip (KVM_CAP_SPLIT_IRQCHIP: LAPICs in KVM, the IOAPIC in
 * ioapic.c, no PIC and no PIT: the guest's timer is the LAPIC's, in TSC-deadline mode), CPUID from KVM_GET_SUPPORTED_CPUID through the PV policy (pv.c), a bzImage entered
 * at its 64-bit entry in long mode (boot.rst's 64-bit protocol), an MP table for SMP, the 8250 at
 * 0x3f8 on IRQ 4, PCI config mechanism #1 onto the ECAM, and the i8042's reset line. The generic
 * lifecycle around these is vmm/board.c; memory map in x86.h.
 */
#include <asm/kvm_para.h>
#include <asm/processor-flags.h>
#include <errno.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>

#include "core/arch.h"
#include "core/kvm.h"
#include "core/log.h"
#include "core/mem.h"
#include "core/vcpu.h"
#include "core/vm.h"
#include "x86/x86.h"

/* Architectural numbers no UAPI header names: EFER (SDM vol. 3, 2.2.1), CPUID.1:ECX.x2APIC,
 * the i8042's ports and its "pulse reset line" command, the COM1 port and its ISA IRQ. */
#define EFER_LME (1ULL << 8)
#define EFER_LMA (1ULL << 10)
#define CPUID_1_ECX_X2APIC (1u << 21)
#define CPUID_1_ECX_TSC_DEADLINE (1u << 24)
#define CPUID_1_ECX_HYPERVISOR (1u << 31) /* what makes a guest look at 0x40000000 */
#define I8042_DATA 0x60
#define I8042_CMD 0x64
#define I8042_RESET 0xfe
#define COM1 0x3f8
#define COM1_IRQ 4
/* Where KVM keeps VMX's real-mode TSS (three pages) and identity page table: in the hole below
 * the BIOS, as QEMU places them. */
#define TSS_ADDR 0xfffbd000ULL
#define IDENTITY_MAP_ADDR 0xfffbc000ULL
#define CPUID_MAX_ENTRIES 256
/* PCI slots whose INTA# has an IOAPIC pin: 16 + slot up to the last of the 24 pins. */
#define INTX_PIN_BASE X86_ISA_IRQS
#define INTX_SLOTS (X86_IOAPIC_PINS - X86_ISA_IRQS)

struct x86_board {
	struct x86_pv_config pv;
	bool split;		 /* --irqchip split */
	struct x86_ioapic ioapic; /* split only */
	struct x86_pv_decision decision;
	struct kvm_cpuid2 *cpuid;
	atomic_uint cf8;
	struct vm *vm;
	uint64_t ecam;
	struct kvm_seam_ops seam;	       /* the VM's seam while the board lives */
	const struct kvm_seam_ops *core_seam; /* given back at destroy: teardown still uses it */
	struct arch_clock clock; /* the guest's TSC against the host's (issue 37) */
};

static struct x86_board *priv(struct machine *m)
{
	return m->arch_priv;
}

static int x86_type(int kvm_fd, const struct machine_spec *s, unsigned long *type)
{
	(void)kvm_fd;
	(void)s;
	*type = 0;
	return 0;
}

static void cf8_access(void *opaque, uint64_t off, uint8_t *data, uint32_t len, bool is_write)
{
	struct x86_board *x = opaque;
	uint32_t v;

	if (off != 0 || len != 4) /* byte accesses to 0xcf8-0xcfb are not config cycles */
		return;
	if (is_write) {
		memcpy(&v, data, 4);
		atomic_store(&x->cf8, v);
	} else {
		v = atomic_load(&x->cf8);
		memcpy(data, &v, 4);
	}
}

static void cfc_access(void *opaque, uint64_t off, uint8_t *data, uint32_t len, bool is_write)
{
	struct x86_board *x = opaque;
	uint64_t ecam_off;

	if (x86_cf8_to_ecam(atomic_load(&x->cf8), X86_PCI_CFC + off, len, &ecam_off))
		bus_access(&x->vm->mmio, x->ecam + ecam_off, data, len, is_write);
	else if (!is_write)
		memset(data, 0xff, len);
}

static void i8042_access(void *opaque, uint64_t off, uint8_t *data, uint32_t len, bool is_write)
{
	struct x86_board *x = opaque;

	/* Status and data read 0: never busy, nothing to read. A reset pulse resets the PC. */
	if (!is_write)
		memset(data, 0, len);
	else if (off == I8042_CMD - I8042_DATA && data[0] == I8042_RESET)
		vm_request_stop(x->vm, atomic_load(&x->vm->guest_panicked) ? VM_EXIT_CRASH : VM_EXIT_RESET);
}

/* ACPI's PM1a blocks: no events ever; SCI_EN reads set (always in ACPI mode); writing SLP_EN
 * with the DSDT's \_S5 type is the guest's poweroff. */
static void pm_access(void *opaque, uint64_t off, uint8_t *data, uint32_t len, bool is_write)
{
	struct x86_board *x = opaque;
	uint16_t v = 0;

	if (!is_write) {
		memset(data, 0, len);
		if (off == X86_PM1A_CNT - X86_PM1A_EVT)
			data[0] = X86_PM1_CNT_SCI_EN;
		return;
	}
	if (off != X86_PM1A_CNT - X86_PM1A_EVT || len != 2)
		return;
	memcpy(&v, data, 2);
	if ((v & X86_PM1_CNT_SLP_EN) && ((v >> 10) & 7) == X86_SLP_TYP_S5)
		vm_request_stop(x->vm, atomic_load(&x->vm->guest_panicked) ? VM_EXIT_CRASH
									   : VM_EXIT_POWEROFF);
}

static int get_supported_cpuid(struct machine *m, struct kvm_cpuid2 **out)
{
	struct kvm_cpuid2 *c = calloc(1, sizeof(*c) + CPUID_MAX_ENTRIES * sizeof(c->entries[0]));

	if (!c)
		return -ENOMEM;
	c->nent = CPUID_MAX_ENTRIES;
	if (ioctl(m->vm->kvm_fd, KVM_GET_SUPPORTED_CPUID, c) < 0) {
		int r = kvm_ioctl_ret(-1, "KVM_GET_SUPPORTED_CPUID");

		free(c);
		return r;
	}
	*out = c;
	return 0;
}

static struct kvm_cpuid_entry2 *leaf(struct kvm_cpuid2 *c, uint32_t fn)
{
	for (uint32_t i = 0; i < c->nent; i++)
		if (c->entries[i].function == fn)
			return &c->entries[i];
	return NULL;
}

/* vmm caps: every leaf KVM_GET_SUPPORTED_CPUID offers, before vmm's policy; the x86 lab holds
 * the guest's own CPUID against it to list what the guest is not given. */
static void x86_caps_print(int kvm_fd, FILE *f)
{
	struct kvm_cpuid2 *c = calloc(1, sizeof(*c) + CPUID_MAX_ENTRIES * sizeof(c->entries[0]));

	if (!c)
		return;
	c->nent = CPUID_MAX_ENTRIES;
	if (ioctl(kvm_fd, KVM_GET_SUPPORTED_CPUID, c) < 0) {
		fprintf(f, "supported-cpuid: KVM_GET_SUPPORTED_CPUID failed: %s\n", strerror(errno));
		free(c);
		return;
	}
	fprintf(f, "KVM_GET_SUPPORTED_CPUID (leaf.subleaf eax ebx ecx edx):\n");
	for (uint32_t i = 0; i < c->nent; i++) {
		const struct kvm_cpuid_entry2 *e = &c->entries[i];

		fprintf(f, "supported-cpuid 0x%x.%u 0x%08x 0x%08x 0x%08x 0x%08x\n", e->function, e->index,
			e->eax, e->ebx, e->ecx, e->edx);
	}
	free(c);
}

/* The PV policy on KVM's supported CPUID: decided once per VM, printed with its evidence. */
static int x86_cpuid_policy(struct machine *m)
{
	struct x86_board *x = priv(m);
	struct x86_host_evidence e;
	struct kvm_cpuid_entry2 *pv, *l1;
	int r = get_supported_cpuid(m, &x->cpuid);

	if (r < 0)
		return r;
	pv = leaf(x->cpuid, KVM_CPUID_FEATURES);
	l1 = leaf(x->cpuid, 1);
	if (!l1) {
		pr_err("KVM_GET_SUPPORTED_CPUID has no leaf 1: cannot describe a CPU to the guest");
		return -ENODEV;
	}
	x86_host_evidence_read("/", &e);
	r = x86_pv_decide(pv ? pv->eax : 0, pv ? pv->edx : 0, l1->ecx & CPUID_1_ECX_X2APIC, &x->pv,
			  &e, &x->decision);
	if (r < 0)
		return r;
	if (pv) {
		pv->eax = x->decision.features;
		pv->edx = x->decision.hints;
	}
	if (!x->decision.x2apic)
		l1->ecx &= ~CPUID_1_ECX_X2APIC;
	/* KVM's LAPIC has the TSC-deadline timer in either mode but leaves advertising it to the VMM
	 * (KVM_CAP_TSC_DEADLINE_TIMER). Without a PIT it is what spares Linux calibrating the LAPIC
	 * timer against a timer that is not there. */
	if (x->split && kvm_check_ext(m->vm->fd, KVM_CAP_TSC_DEADLINE_TIMER) > 0)
		l1->ecx |= CPUID_1_ECX_TSC_DEADLINE;
	/* KVM leaves the hypervisor bit to the VMM; without it Linux ignores KVM's leaves (no
	 * kvm-clock, no PV features) and believes it runs on bare hardware. */
	l1->ecx |= CPUID_1_ECX_HYPERVISOR;
	x86_pv_print(stderr, &x->decision);
	return 0;
}

/* KVM_EXIT_IOAPIC_EOI: only the split irqchip's IOAPIC, vmm's, asked KVM for them. */
static void x86_eoi(struct machine *m, uint8_t vector)
{
	struct x86_board *x = priv(m);

	if (x->split)
		x86_ioapic_eoi(&x->ioapic, vector);
}

/* KVM keeps the LAPICs and reserves the IOAPIC's 24 GSIs (before any vCPU); the IOAPIC answers
 * its MMIO page and the EOI exits (x86_eoi). */
static int split_irqchip_init(struct machine *m, unsigned int nr_cpus)
{
	struct x86_board *x = priv(m);
	int r;

	if (kvm_check_ext(m->vm->fd, KVM_CAP_SPLIT_IRQCHIP) <= 0) {
		pr_err("--irqchip split: this host's KVM has no KVM_CAP_SPLIT_IRQCHIP (Linux >= 4.4); "
		       "use --irqchip kernel");
		return -EOPNOTSUPP;
	}
	if ((r = vm_enable_cap(m->vm, KVM_CAP_SPLIT_IRQCHIP, X86_IOAPIC_PINS)) < 0)
		return r;
	x86_ioapic_init(&x->ioapic, m->vm, x86_mptable_ioapic_id(nr_cpus));
	pr_info("x86 irqchip: split (LAPICs in KVM; IOAPIC in vmm at 0x%llx; no PIC, no PIT: the "
		"guest's timer is its LAPIC's)", (unsigned long long)X86_IOAPIC_BASE);
	return bus_register(&m->vm->mmio, X86_IOAPIC_BASE, X86_IOAPIC_SIZE, x86_ioapic_mmio, &x->ioapic,
			    "ioapic");
}

static int x86_ram(uint64_t mem_size, struct ram_range out[ARCH_RAM_RANGES])
{
	struct x86_ram_range r[X86_RAM_RANGES];
	int n = x86_ram_plan(mem_size, r);

	for (int i = 0; i < n; i++)
		out[i] = (struct ram_range){ r[i].gpa, r[i].size };
	return n;
}

static int x86_seam_vcpu_msr(void *ctx, int vcpu_fd, uint32_t index, uint64_t *data, bool write)
{
	/* kvm_msrs ends in a flexible array: room for its one entry behind it */
	union {
		struct kvm_msrs h;
		uint8_t room[sizeof(struct kvm_msrs) + sizeof(struct kvm_msr_entry)];
	} m;

	memset(&m, 0, sizeof(m));
	m.h.nmsrs = 1;
	m.h.entries[0] = (struct kvm_msr_entry){ .index = index, .data = write ? *data : 0 };
	int r = ioctl(vcpu_fd, write ? KVM_SET_MSRS : KVM_GET_MSRS, &m);

	(void)ctx;
	if (r < 0)
		return kvm_ioctl_ret(r, write ? "KVM_SET_MSRS" : "KVM_GET_MSRS");
	if (r != 1) /* the count of MSRs done: 0 means KVM refused this one */
		return -EINVAL;
	if (!write)
		*data = m.h.entries[0].data;
	return 0;
}

/* For a KVM internal error's report (arch_ops.vcpu_pc), on the vCPU's thread. */
static int x86_vcpu_pc(struct vcpu *v, struct kvm_error_pc *pc)
{
	struct kvm_regs regs;
	struct kvm_sregs sregs;

	if (ioctl(v->fd, KVM_GET_REGS, &regs) < 0)
		return -errno;
	*pc = (struct kvm_error_pc){ .name = "RIP", .value = regs.rip };
	if (ioctl(v->fd, KVM_GET_SREGS, &sregs) == 0)
		pc->reset = x86_regs_are_reset_state(regs.rip, sregs.cs.selector, sregs.cs.base, sregs.cr0);
	return 0;
}

/* KVM_CAP_EXIT_ON_EMULATION_FAILURE stays off: with it, an instruction KVM cannot emulate in the
 * guest's user space would stop the whole VM instead of raising #UD in that process. KVM reports
 * the bytes of a kernel-mode failure without it. */
#define X86_PVM_NOTE "this host's KVM is kvm_pvm, which runs only guest kernels built for PVM"

static int x86_vm_init(struct machine *m, const struct machine_spec *s)
{
	struct x86_board *x = calloc(1, sizeof(*x));
	struct kvm_pit_config pit = { .flags = KVM_PIT_SPEAKER_DUMMY };
	struct kvm_reinject_control reinject = { .pit_reinject = 0 };
	uint64_t tss = TSS_ADDR, idmap = IDENTITY_MAP_ADDR;
	int r;

	if (!x)
		return -ENOMEM;
	m->arch_priv = x;
	x->vm = m->vm;
	if (x86_host_kvm_is_pvm("/")) {
		pr_warn("this host's /dev/kvm is served by kvm_pvm (Pagetable-based Virtual Machine: no VMX/SVM, "
			"guest kernel code runs deprivileged at CPL 3): it runs only guest kernels built for PVM; "
			"a stock kernel stops at the first privileged instruction KVM cannot emulate");
		m->vm->kvm_note = X86_PVM_NOTE;
	}
	/* the core's seam plus x86's MSR access (poll_control.c goes through it) */
	x->core_seam = m->vm->kvm.ops;
	x->seam = *m->vm->kvm.ops;
	x->seam.vcpu_msr = x86_seam_vcpu_msr;
	m->vm->kvm.ops = &x->seam;
	x->ecam = m->arch->layout->pci.ecam_base;
	if (s->cpu.given) {
		pr_err("--cpu (sve, pauth, pmu) is an arm64 option; an x86_64 guest gets the host's CPUID "
		       "features as KVM_GET_SUPPORTED_CPUID reports them");
		return -EINVAL;
	}
	if (s->pv && s->pv[0] && (r = x86_pv_parse(&x->pv, s->pv)) < 0)
		return r;
	if (s->apic && strcmp(s->apic, "x2apic") && strcmp(s->apic, "xapic")) {
		pr_err("--apic takes x2apic or xapic, not '%s'", s->apic);
		return -EINVAL;
	}
	x->pv.xapic = s->apic && !strcmp(s->apic, "xapic");
	x->pv.no_hlt_exit = s->no_hlt_exit;
	if (s->irqchip && strcmp(s->irqchip, "kernel") && strcmp(s->irqchip, "split")) {
		pr_err("--irqchip takes kernel or split, not '%s'", s->irqchip);
		return -EINVAL;
	}
	x->split = s->irqchip && !strcmp(s->irqchip, "split");
	x->pv.irqchip = x->split ? X86_IRQCHIP_SPLIT : X86_IRQCHIP_KERNEL;
	if (s->no_hlt_exit) {
		int exits = kvm_check_ext(m->vm->fd, KVM_CAP_X86_DISABLE_EXITS);

		if (!(exits & KVM_X86_DISABLE_EXITS_HLT)) {
			pr_err("--no-hlt-exit: this host's KVM cannot leave HLT in the guest "
			       "(KVM_CAP_X86_DISABLE_EXITS 0x%x)", exits);
			return -EOPNOTSUPP;
		}
		/* per VM, before any vCPU exists */
		if ((r = vm_enable_cap(m->vm, KVM_CAP_X86_DISABLE_EXITS, KVM_X86_DISABLE_EXITS_HLT)) < 0)
			return r;
	}
	if ((r = kvm_ioctl_ret(ioctl(m->vm->fd, KVM_SET_TSS_ADDR, (unsigned long)tss), "KVM_SET_TSS_ADDR")) < 0 ||
	    (r = kvm_ioctl_ret(ioctl(m->vm->fd, KVM_SET_IDENTITY_MAP_ADDR, &idmap),
			       "KVM_SET_IDENTITY_MAP_ADDR")) < 0)
		return r;
	if (x->split) {
		if ((r = split_irqchip_init(m, s->nr_cpus)) < 0)
			return r;
	} else {
		if ((r = kvm_ioctl_ret(ioctl(m->vm->fd, KVM_CREATE_IRQCHIP), "KVM_CREATE_IRQCHIP")) < 0 ||
		    (r = kvm_ioctl_ret(ioctl(m->vm->fd, KVM_CREATE_PIT2, &pit), "KVM_CREATE_PIT2")) < 0)
			return r;
		/* Discard missed PIT ticks rather than reinject them: reinjection inhibits AVIC. */
		if ((r = kvm_ioctl_ret(ioctl(m->vm->fd, KVM_REINJECT_CONTROL, &reinject),
				       "KVM_REINJECT_CONTROL")) < 0)
			return r;
	}
	if ((r = x86_cpuid_policy(m)) < 0)
		return r;
	if ((r = bus_register(&m->vm->pio, X86_PCI_CF8, 4, cf8_access, x, "pci-cf8")) < 0 ||
	    (r = bus_register(&m->vm->pio, X86_PCI_CFC, 4, cfc_access, x, "pci-cfc")) < 0)
		return r;
	if ((r = bus_register(&m->vm->pio, X86_PM1A_EVT, X86_PM1A_CNT + 2 - X86_PM1A_EVT, pm_access, x,
			      "acpi-pm1a")) < 0)
		return r;
	return bus_register(&m->vm->pio, I8042_DATA, I8042_CMD - I8042_DATA + 1, i8042_access, x, "i8042");
}

static int x86_vcpu_setup(struct machine *m, struct vcpu *v)
{
	struct kvm_cpuid2 *c = priv(m)->cpuid;

	/* The vCPU's APIC ID is its index: leaf 1 EBX[31:24], and the x2APIC ID of leaves 0xb/0x1f. */
	for (uint32_t i = 0; i < c->nent; i++) {
		struct kvm_cpuid_entry2 *e = &c->entries[i];

		if (e->function == 1)
			e->ebx = (e->ebx & 0x00ffffff) | (uint32_t)v->id << 24;
		else if (e->function == 0xb || e->function == 0x1f)
			e->edx = v->id;
	}
	return kvm_ioctl_ret(ioctl(v->fd, KVM_SET_CPUID2, c), "KVM_SET_CPUID2");
}

/* The guest's TSC against the host's (issue 37's one clock): guest TSC = host TSC + KVM's offset
 * when vmm leaves the rate alone (it never sets KVM_SET_TSC_KHZ: the ratio is 1). Read from the
 * boot vCPU after every vCPU exists (KVM matches their offsets as they are created) and before
 * any runs (a vCPU ioctl waits for KVM_RUN to return). */
static void x86_clock_read(struct machine *m)
{
	struct arch_clock *c = &priv(m)->clock;
	struct vcpu *v = m->vm->nr_vcpus ? m->vm->vcpus[0] : NULL;
	uint64_t off = 0;
	struct kvm_device_attr a = { .group = KVM_VCPU_TSC_CTRL, .attr = KVM_VCPU_TSC_OFFSET, .addr = (uintptr_t)&off };
	int khz = v ? ioctl(v->fd, KVM_GET_TSC_KHZ) : -1;

	*c = (struct arch_clock){ .hz = khz > 0 ? (uint64_t)khz * 1000 : 0 };
	if (!v || ioctl(v->fd, KVM_GET_DEVICE_ATTR, &a) < 0) {
		snprintf(c->how, sizeof(c->how), "KVM_VCPU_TSC_OFFSET unreadable (Linux < 5.16?): %s",
			 v ? strerror(errno) : "no vCPU");
		return;
	}
	c->offset = -(int64_t)off;
	c->known = true;
	snprintf(c->how, sizeof(c->how), "KVM_VCPU_TSC_OFFSET (the guest's TSC at the host's rate)");
}

static void x86_clock(struct machine *m, struct arch_clock *c)
{
	*c = priv(m)->clock;
}

static uint64_t x86_counter_read(void)
{
	uint32_t lo, hi;

	__asm__ volatile("lfence; rdtsc" : "=a"(lo), "=d"(hi)::"memory");
	return (uint64_t)hi << 32 | lo;
}

static int x86_irqchip_init(struct machine *m)
{
	x86_clock_read(m);
	return 0;
}

static void seg(struct kvm_segment *s, uint16_t sel, uint8_t type, bool code)
{
	*s = (struct kvm_segment){ .base = 0, .limit = 0xffffffff, .selector = sel, .type = type,
				   .present = 1, .dpl = 0, .db = !code, .s = 1, .l = code, .g = 1 };
}

static int boot_cpu_state(struct vcpu *v, uint64_t entry)
{
	struct kvm_sregs sr;
	struct kvm_regs regs = { .rip = entry, .rsi = X86_ZERO_PAGE_ADDR, .rflags = X86_EFLAGS_FIXED };
	int r = kvm_ioctl_ret(ioctl(v->fd, KVM_GET_SREGS, &sr), "KVM_GET_SREGS");

	if (r < 0)
		return r;
	seg(&sr.cs, X86_BOOT_CS, 0xb, true);
	seg(&sr.ds, X86_BOOT_DS, 0x3, false);
	sr.es = sr.fs = sr.gs = sr.ss = sr.ds;
	sr.gdt.base = X86_GDT_ADDR;
	sr.gdt.limit = X86_GDT_ENTRIES * 8 - 1;
	sr.cr3 = X86_PML4_ADDR;
	sr.cr4 |= X86_CR4_PAE;
	sr.cr0 |= X86_CR0_PE | X86_CR0_PG;
	sr.efer |= EFER_LME | EFER_LMA;
	if ((r = kvm_ioctl_ret(ioctl(v->fd, KVM_SET_SREGS, &sr), "KVM_SET_SREGS")) < 0)
		return r;
	return kvm_ioctl_ret(ioctl(v->fd, KVM_SET_REGS, &regs), "KVM_SET_REGS");
}

static int x86_load(struct machine *m, const struct machine_spec *s, const struct boot_files *f)
{
	struct x86_mp_intx intx[INTX_SLOTS];
	struct x86_mp_desc mp = { .nr_cpus = s->nr_cpus, .intx = intx, .no_pic = priv(m)->split };
	uint64_t low_size = x86_low_ram_end(s->mem_size);
	struct x86_low_ram ram = { vm_gpa_to_hva(m->vm, 0, low_size), low_size };
	struct mapped_file kf = { f->kernel, f->kernel_len, f->kernel_fd };
	struct mapped_file inf = { f->initrd, f->initrd_len, f->initrd_fd };
	struct x86_load_in in = {
		.kernel = f->kernel, .kernel_len = f->kernel_len,
		.initrd = f->initrd, .initrd_len = f->initrd_len, .kernel_file = &kf, .initrd_file = &inf,
		.params = s->cmdline, .mem_size = s->mem_size, .mp = &mp,
	};
	uint64_t entry;
	int r;

	if (s->kernel_format != KERNEL_FORMAT_AUTO) {
		pr_err("--kernel-format: x86 boots bzImages only (the option is arm64's)");
		return -EINVAL;
	}
	/* INTA# of each slot that has an IOAPIC pin, as the board routes it (intx_line_base + s) */
	for (unsigned int slot = 1; slot < INTX_SLOTS; slot++)
		if (m->pci->slot[slot])
			intx[mp.nr_intx++] = (struct x86_mp_intx){ slot, INTX_PIN_BASE + slot };
	if ((r = x86_boot_load(&ram, &in, &entry)) < 0) {
		pr_err("%s: cannot boot this kernel file", f->kernel_path);
		return r;
	}
	return boot_cpu_state(m->vm->vcpus[0], entry);
}

static uint32_t x86_line_irq(uint32_t line)
{
	return line; /* KVM_IRQ_LINE takes the GSI; the routing table maps it to an IOAPIC pin */
}

/* A board line is IOAPIC pin `line` in both modes; in split mode the IOAPIC is vmm's. */
static void x86_set_line(struct machine *m, uint32_t line, bool level)
{
	struct x86_board *x = priv(m);

	if (x->split)
		x86_ioapic_set_irq(&x->ioapic, line, level);
	else
		irq_line(m->vm, line, level);
}

/* Split: GSIs 0-23 are the IOAPIC's pins, MSI routes it programs; vmm signals level irqfds'
 * resamplefds itself on the EOI exits (KVM takes none without its own IOAPIC). */
static int x86_routing_init(struct machine *m)
{
	const struct board_layout *l = m->arch->layout;

	if (!priv(m)->split)
		return irq_routing_init_chip(m->vm, l->nr_irqchip_gsis, l->irqchip);
	m->vm->routing.user_resample = true;
	return irq_routing_init_reserved(m->vm, X86_IOAPIC_PINS);
}

static int x86_dump_platform(struct machine *m, const char *path)
{
	(void)m;
	pr_err("--dump-dtb %s: an x86 guest has no device tree (its platform is the MP table)", path);
	return -EINVAL;
}

static void x86_destroy(struct machine *m)
{
	struct x86_board *x = priv(m);

	if (x->split && x->ioapic.vm) {
		x86_ioapic_summary(&x->ioapic, stderr);
		x86_ioapic_destroy(&x->ioapic);
	}
	if (x->core_seam)
		m->vm->kvm.ops = x->core_seam;
	free(x->cpuid);
	free(x);
	m->arch_priv = NULL;
}

static const char *x86_poll_control_refusal_of(struct machine *m)
{
	return x86_poll_control_refusal(priv(m)->decision.features);
}

static int x86_poll_control(struct machine *m, struct vcpu *v, int set)
{
	return x86_poll_control_rw(&m->vm->kvm, v->fd, set);
}

static bool x86_ipi_path(struct machine *m, struct arch_ipi_path *p)
{
	const struct x86_pv_decision *d = &priv(m)->decision;

	*p = (struct arch_ipi_path){ d->hw_ipi, d->features & (1u << KVM_FEATURE_PV_SEND_IPI) };
	return true;
}

static const struct board_layout x86_layout = {
	.ram_base = 0,
	.uart_base = COM1, .uart_size = 8, .uart_pio = true,
	.pci = { X86_PCI_MMCONFIG_BASE, X86_PCI_MMCONFIG_SIZE, X86_PCI_MMIO32_BASE,
		 X86_PCI_MMIO32_SIZE, 0, 0 },
	.nr_irqchip_gsis = X86_IOAPIC_PINS, /* GSI n is IOAPIC pin n */
	.irqchip = KVM_IRQCHIP_IOAPIC,
	.uart_line = COM1_IRQ,
	.intx_line_base = INTX_PIN_BASE,
};

static const struct arch_cap x86_caps[] = {
	{ "KVM_CAP_SPLIT_IRQCHIP", KVM_CAP_SPLIT_IRQCHIP },
	{ "KVM_CAP_X86_DISABLE_EXITS", KVM_CAP_X86_DISABLE_EXITS },
	{ "KVM_CAP_X2APIC_API", KVM_CAP_X2APIC_API },
	{ "KVM_CAP_PIT2", KVM_CAP_PIT2 },
	{ "KVM_CAP_REINJECT_CONTROL", KVM_CAP_REINJECT_CONTROL },
};

static const struct arch_ops x86_arch_ops = {
	.name = "x86_64",
	.layout = &x86_layout,
	.max_vcpus = X86_MAX_VCPUS < VM_MAX_VCPUS ? X86_MAX_VCPUS : VM_MAX_VCPUS,
	.max_vcpus_why = "the board has room for 123 vCPUs",
	.ram_plan = x86_ram,
	.vm_type = x86_type,
	.vm_init = x86_vm_init,
	.vcpu_init = x86_vcpu_setup,
	.irqchip_init = x86_irqchip_init,
	.clock = x86_clock,
	.counter_read = x86_counter_read,
	.trace_timer_fn = "apic_timer_fn",
	.trace_irq_after_exit = true,
	.load = x86_load,
	.line_irq = x86_line_irq,
	.set_line = x86_set_line,
	.routing_init = x86_routing_init,
	.dump_platform = x86_dump_platform,
	.destroy = x86_destroy,
	.poll_control_refusal = x86_poll_control_refusal_of,
	.poll_control = x86_poll_control,
	.ipi_path = x86_ipi_path,
	.vcpu_pc = x86_vcpu_pc,
	.ioapic_eoi = x86_eoi,
	.caps = x86_caps,
	.caps_print = x86_caps_print,
	.nr_caps = sizeof(x86_caps) / sizeof(x86_caps[0]),
};

const struct arch_ops *arch_native(void)
{
	return &x86_arch_ops;
}
