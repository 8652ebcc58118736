// SPDX-License-Identifier: MIT
/*
 * The arm64 arch operations: the IPA size as the VM type, a vGICv3 with a vITS, vCPUs with PSCI 0.2
 * (secondaries powered off) and their MPIDRs, CTRL_INIT after every vCPU, kernel images, the FDT,
 * and SPI wiring. RAM layout: kernel at RAM_BASE + text_offset; FDT in the top 2 MiB; initrd just
 * below it. The generic lifecycle around these is vmm/board.c.
 */
#include <errno.h>
#include <libfdt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <unistd.h>

#include "core/hot.h"
#include "arm64/arm64.h"
#include "arm64/gic/gic.h"
#include "arm64/gic/vlpi.h"
#include "core/arch.h"
#include "core/host_text.h"
#include "core/kvm.h"
#include "core/log.h"
#include "core/mem.h"
#include "core/timings.h"
#include "core/vcpu.h"
#include "core/vm.h"

#ifndef SZ_64K
#define SZ_64K 0x10000ULL /* KVM_VGIC_V3_REDIST_SIZE is written in terms of it (as in vgic.c) */
#endif
_Static_assert((ARM64_GICR_LIMIT - ARM64_GICR_BASE) / KVM_VGIC_V3_REDIST_SIZE == VM_MAX_VCPUS,
	       "VM_MAX_VCPUS must match the board's redistributor room");

struct arm64_board {
	struct vgic gic;
	struct its its;
	uint64_t mpidr[VM_MAX_VCPUS];
	uint64_t fdt; /* where the FDT went, for --dump-dtb */
	struct arm64_cpu_feat cpu; /* SVE, pointer auth, PMU: the same on every vCPU */
	struct arch_clock clock;   /* the guest's counter against the host's (issue 37) */
};

static struct arm64_board *priv(struct machine *m)
{
	return m->arch_priv;
}

static int arm64_type(int kvm_fd, const struct machine_spec *s, unsigned long *type)
{
	int ipa_bits;

	return arm64_vm_type(kvm_fd, s->mem_size, type, &ipa_bits);
}

static int arm64_vm_init(struct machine *m, const struct machine_spec *s)
{
	struct arm64_board *a = calloc(1, sizeof(*a));
	int r;

	if (!a)
		return -ENOMEM;
	a->gic.fd = a->its.fd = -1;
	m->arch_priv = a;
	if (s->x86_given) {
		pr_err("--pv, --pv-ipi, --irqchip, --apic and --no-hlt-exit are x86_64 options; this "
		       "vmm boots arm64 guests");
		return -EINVAL;
	}
	struct arm64_cpu_host host;

	arm64_cpu_host_read(m->vm, &host);
	if ((r = arm64_cpu_resolve(&s->cpu, &host, &a->cpu)) < 0)
		return r;
	if (ARM64_RAM_BASE + s->mem_size > ARM64_PCI_MMIO64_BASE) {
		pr_err("-m %lluM: RAM would run into the PCI window at 0x%llx; use at most %llu MiB",
		       (unsigned long long)(s->mem_size >> 20), (unsigned long long)ARM64_PCI_MMIO64_BASE,
		       (unsigned long long)((ARM64_PCI_MMIO64_BASE - ARM64_RAM_BASE) >> 20));
		return -EINVAL;
	}
	/* An MMIO access KVM cannot decode (no ISV: a load pair, a writeback) then reaches vmm as
	 * KVM_EXIT_ARM_NISV, a guest fault, instead of failing KVM_RUN with ENOSYS. */
	if (kvm_check_ext(m->vm->fd, KVM_CAP_ARM_NISV_TO_USER) > 0 &&
	    (r = vm_enable_cap(m->vm, KVM_CAP_ARM_NISV_TO_USER, 0)) < 0)
		return r;
	arm64_counter_offset_zero(m->vm, &a->clock);
	if ((r = vgic_create(m->vm, &a->gic, ARM64_GICD_BASE, ARM64_GICR_BASE, ARM64_GICR_LIMIT,
			     s->nr_cpus)) < 0)
		return r;
	return its_create(m->vm, &a->its, ARM64_GITS_BASE);
}

static int arm64_vcpu_setup(struct machine *m, struct vcpu *v)
{
	struct kvm_one_reg reg = { .id = ARM64_SYS_REG(3, 0, 0, 0, 5), /* MPIDR_EL1 */
				   .addr = (uintptr_t)&priv(m)->mpidr[v->id] };
	int r = arm64_vcpu_init(v, v->id > 0, &priv(m)->cpu);

	if (r == 0 && v->id == 0 && !priv(m)->clock.known)
		arm64_counter_offset_estimate(v, &priv(m)->clock); /* before it runs: no vCPU lock wait */
	return r < 0 ? r : kvm_ioctl_ret(ioctl(v->fd, KVM_GET_ONE_REG, &reg), "reading MPIDR_EL1");
}

static void arm64_clock(struct machine *m, struct arch_clock *c)
{
	*c = priv(m)->clock;
}

/* The vGIC's CTRL_INIT, then each vCPU's PMU (KVM wants its interrupt controller first). */
static int arm64_irqchip_init(struct machine *m)
{
	struct arm64_board *a = priv(m);
	char line[128];
	int r = arm64_irqchip_pmu_init(&a->gic, ARM64_NR_IRQS, m->vm, &a->cpu);

	if (r < 0)
		return r;
	arm64_cpu_describe(&a->cpu, line, sizeof(line));
	pr_info("arm64 vCPUs: %s", line);
	return 0;
}

static void arm64_vmm_json(struct machine *m, FILE *f)
{
	arm64_cpu_json(&priv(m)->cpu, f);
}

static void arm64_decoded(void *opaque)
{
	boot_times_mark(((struct machine *)opaque)->times, PHASE_KERNEL_DECODE);
}

static int arm64_load(struct machine *m, const struct machine_spec *s, const struct boot_files *f)
{
	struct arm64_board *a = priv(m);
	struct mapped_file kf = { f->kernel, f->kernel_len, f->kernel_fd };
	struct mapped_file inf = { f->initrd, f->initrd_len, f->initrd_fd };
	struct arm64_load_in in = { .kernel = f->kernel, .kernel_len = f->kernel_len,
				    .format = s->kernel_format, .initrd = f->initrd,
				    .initrd_len = f->initrd_len, .kernel_file = &kf, .initrd_file = &inf,
				    .decoded = arm64_decoded, .opaque = m,
				    .fdt_room = arm64_fdt_room(&(struct arm64_fdt_desc){ .bootargs = s->cmdline }) };
	struct arm64_boot_layout l;
	int r = arm64_boot_load(vm_gpa_to_hva(m->vm, ARM64_RAM_BASE, s->mem_size), s->mem_size, &in, &l);

	if (r < 0) {
		pr_err("%s: cannot boot this kernel file", f->kernel_path);
		return r;
	}
	uint64_t kaddr = l.kernel, fdt = l.fdt;

	boot_times_mark(m->times, PHASE_GUEST_COPY);

	struct arm64_fdt_desc d = {
		.nr_cpus = s->nr_cpus, .mpidr = a->mpidr,
		.ram_base = ARM64_RAM_BASE, .ram_size = s->mem_size,
		.gicd = ARM64_GICD_BASE, .gicr = ARM64_GICR_BASE, .gicr_size = a->gic.redist_size,
		.its = ARM64_GITS_BASE, .uart = ARM64_UART_BASE, .uart_spi = ARM64_UART_SPI,
		.console_uart = s->serial_console,
		.bootargs = s->cmdline,
		.pci = true, .pvpanic = ARM64_PVPANIC_BASE, .pvpanic_reg = m->pvpanic_reg, .pmu_intid = a->cpu.pmu_intid,
		.initrd_start = f->initrd ? l.initrd : 0, .initrd_end = f->initrd ? l.initrd + l.initrd_len : 0,
	};

	r = arm64_fdt_place(&d, vm_gpa_to_hva(m->vm, fdt, l.fdt_room), l.fdt_room);
	if (r < 0)
		return r;
	a->fdt = fdt;
	/* booting.rst: the kernel's entry with the FDT's address in x0 */
	struct vcpu *boot = m->vm->vcpus[0];

	if ((r = arm64_core_reg_set(boot, ARM64_CORE(regs.pc), kaddr)) < 0 ||
	    (r = arm64_core_reg_set(boot, ARM64_XREG(0), fdt)) < 0)
		return r;
	boot_times_mark(m->times, PHASE_FDT);
	return 0;
}

VMM_HOT_IDLE static uint32_t arm64_line_irq(uint32_t spi)
{
	return (KVM_ARM_IRQ_TYPE_SPI << KVM_ARM_IRQ_TYPE_SHIFT) | ((32 + spi) << KVM_ARM_IRQ_NUM_SHIFT);
}

static int arm64_dump_dtb(struct machine *m, const char *path)
{
	const void *fdt = vm_gpa_to_hva(m->vm, priv(m)->fdt, ARM64_FDT_MAX);
	uint32_t size = fdt_totalsize(fdt);
	FILE *f = fopen(path, "wb");

	if (!f || fwrite(fdt, 1, size, f) != size || fclose(f) != 0) {
		pr_err("--dump-dtb: cannot write %s", path);
		return -EIO;
	}
	return 0;
}

static void arm64_destroy(struct machine *m)
{
	struct arm64_board *a = priv(m);

	its_destroy(&a->its);
	vgic_destroy(&a->gic);
	free(a);
	m->arch_priv = NULL;
}

static const struct board_layout arm64_layout = {
	.ram_base = ARM64_RAM_BASE,
	.uart_base = ARM64_UART_BASE, .uart_size = ARM64_UART_SIZE,
	.pvpanic_base = ARM64_PVPANIC_BASE, .pvpanic_size = ARM64_PVPANIC_SIZE,
	.pci = { ARM64_PCI_ECAM_BASE, ARM64_PCI_ECAM_SIZE, ARM64_PCI_MMIO32_BASE, ARM64_PCI_MMIO32_SIZE,
		 ARM64_PCI_MMIO64_BASE, ARM64_PCI_MMIO64_SIZE },
	.nr_irqchip_gsis = ARM64_NR_IRQS - 32, /* GSI n is SPI n */
	.uart_line = ARM64_UART_SPI,
	.intx_line_base = ARM64_PCI_INTX_SPI_BASE,
};

static const struct arch_cap arm64_caps[] = {
	{ "KVM_CAP_ARM_VM_IPA_SIZE", KVM_CAP_ARM_VM_IPA_SIZE },
	{ "KVM_CAP_ARM_PSCI_0_2", KVM_CAP_ARM_PSCI_0_2 },
	{ "KVM_CAP_COUNTER_OFFSET", KVM_CAP_COUNTER_OFFSET },
	{ "KVM_CAP_ARM_NISV_TO_USER", KVM_CAP_ARM_NISV_TO_USER },
	/* the vCPU features --cpu asks for (sve, pauth, pmu); MTE is listed, not offered yet */
	{ "KVM_CAP_ARM_SVE", KVM_CAP_ARM_SVE },
	{ "KVM_CAP_ARM_PTRAUTH_ADDRESS", KVM_CAP_ARM_PTRAUTH_ADDRESS },
	{ "KVM_CAP_ARM_PTRAUTH_GENERIC", KVM_CAP_ARM_PTRAUTH_GENERIC },
	{ "KVM_CAP_ARM_PMU_V3", KVM_CAP_ARM_PMU_V3 },
	{ "KVM_CAP_ARM_MTE", KVM_CAP_ARM_MTE },
};

/*
 * The UART's register page: vmm writes it cacheable, the guest reads it through a Device mapping.
 * With FEAT_S2FWB KVM forces the guest's view cacheable and both agree; without, the guest's reads
 * go to memory: clean each line to the point of coherency (Linux lets EL0 do so: SCTLR_EL1.UCI),
 * the line size from CTR_EL0.DminLine (readable at EL0: SCTLR_EL1.UCT).
 */
VMM_HOT_VF static void arm64_publish_to_guest(const void *p, size_t len)
{
	uint64_t ctr;

	__asm__ volatile("mrs %0, ctr_el0" : "=r"(ctr));
	uintptr_t line = 4u << ((ctr >> 16) & 0xf), a = (uintptr_t)p & ~(line - 1);

	for (; a < (uintptr_t)p + len; a += line)
		__asm__ volatile("dc cvac, %0" : : "r"(a) : "memory");
	__asm__ volatile("dsb sy" : : : "memory");
}

/* The vLPIs KVM's vgic-state (debugfs) shows per vCPU: what governs a halted vCPU's wake-ups. */
VMM_HOT_VF static void arm64_vcpu_vlpis(struct vm *vm, int *vlpis, int n)
{
	char path[96], *text = malloc(HOST_TEXT_MAX);
	size_t len = 0;
	FILE *s = NULL;

	/* KVM's debugfs directory for this VM is named <pid>-<vm fd> */
	snprintf(path, sizeof(path), "/sys/kernel/debug/kvm/%d-%d/vgic-state", (int)getpid(), vm->fd);
	if (text)
		s = fopen(path, "r");
	if (s) {
		len = fread(text, 1, HOST_TEXT_MAX - 1, s);
		fclose(s);
		text[len] = 0;
	}
	vlpi_count_per_vcpu(s ? text : NULL, len, vlpis, n);
	free(text);
}

static const struct arch_ops arm64_arch_ops = {
	.name = "arm64",
	.layout = &arm64_layout,
	.max_vcpus = VM_MAX_VCPUS,
	.max_vcpus_why = "the board's GIC has room for 123 redistributors (vCPUs)",
	.vm_type = arm64_type,
	.vm_init = arm64_vm_init,
	.vcpu_init = arm64_vcpu_setup,
	.irqchip_init = arm64_irqchip_init,
	.load = arm64_load,
	.line_irq = arm64_line_irq,
	.dump_platform = arm64_dump_dtb,
	.vmm_json = arm64_vmm_json,
	.destroy = arm64_destroy,
	.publish_to_guest = arm64_publish_to_guest,
	.vcpu_vlpis = arm64_vcpu_vlpis,
	.clock = arm64_clock,
	.counter_read = arm64_counter_read,
	.trace_timer_fn = "kvm_bg_timer_expire",
	.trace_timer_irq = "kvm guest vtimer",
	.caps = arm64_caps,
	.nr_caps = sizeof(arm64_caps) / sizeof(arm64_caps[0]),
	.msi_report = vlpi_msi_report,
};

VMM_HOT_VF const struct arch_ops *arch_native(void)
{
	return &arm64_arch_ops;
}
