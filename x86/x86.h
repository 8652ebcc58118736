/* SPDX-License-Identifier: MIT */
/*
 * The x86_64 board. Memory map (guest physical), fixed so the e820 map, the MP table and the
 * devices agree:
 *
 *   0x0000_0000  RAM (low 640 KiB less the EBDA)           boot_params, command line, page tables
 *   0x0009_fc00  reserved: EBDA, VGA hole, BIOS area       the MP table at 0xf_0000
 *   0x0010_0000  RAM up to 3 GiB                           the kernel at its pref_address
 *   0xc000_0000  PCI 32-bit MMIO window                    512 MiB
 *   0xe000_0000  PCI MMCONFIG, bus 0                       1 MiB (reserved in e820)
 *   0xfec0_0000  IOAPIC
 *   0xfee0_0000  local APICs
 *   0x1_0000_0000  RAM above 3 GiB continues here
 *
 * Everything here is built on every architecture so the unit tests reach it: pure code, and the
 * userspace IOAPIC, which reaches KVM only through the VM's seam (core/kvm_seam.h). The types are
 * x86's own rather than the UAPI's so this header compiles on any host; the .c files take the
 * layouts and constants from the kernel's x86 UAPI headers.
 */
#ifndef VMM_X86_H
#define VMM_X86_H

#include <pthread.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "core/mem.h"

#define X86_LOWMEM_END 0x9fc00ULL      /* start of the EBDA: conventional RAM ends here */
#define X86_HIGHMEM_BASE 0x100000ULL   /* 1 MiB */
#define X86_BIOS_BASE 0xf0000ULL       /* Linux scans 0xf0000-0xfffff for the MP pointer */
#define X86_MMIO_HOLE 0xc0000000ULL    /* RAM below 4 GiB ends here */
#define X86_PCI_MMIO32_BASE 0xc0000000ULL
#define X86_PCI_MMIO32_SIZE 0x20000000ULL
#define X86_PCI_MMCONFIG_BASE 0xe0000000ULL
#define X86_PCI_MMCONFIG_SIZE 0x100000ULL
#define X86_IOAPIC_BASE 0xfec00000ULL
#define X86_LAPIC_BASE 0xfee00000ULL
#define X86_4G 0x100000000ULL
#define X86_MAX_PHYS (1ULL << 52) /* MAXPHYADDR's architectural limit */
#define X86_IOAPIC_PINS 24 /* KVM's IOAPIC; also KVM_CAP_SPLIT_IRQCHIP's route count */
#define X86_ISA_IRQS 16
#define X86_MAX_VCPUS 254 /* APIC IDs 0..253 fit xAPIC's 8 bits with the IOAPIC's ID after them */

/* ---- bzimage.c: the Linux boot protocol's setup header (Documentation/arch/x86/boot.rst) ---- */

/* The oldest protocol with the 64-bit entry point (XLF_KERNEL_64): Linux 3.8. */
#define X86_BOOT_PROTOCOL_MIN 0x020c

struct x86_bzimage {
	const uint8_t *setup;  /* boot sector + real-mode setup: its header goes into boot_params */
	size_t setup_len;
	const uint8_t *kernel; /* the protected-mode kernel, loaded at load_addr */
	size_t kernel_len;
	uint16_t version;      /* boot protocol, 0x020f = 2.15 */
	uint8_t loadflags;
	uint16_t xloadflags;
	bool relocatable;
	uint32_t kernel_alignment;
	uint64_t pref_address; /* where the kernel wants to run; vmm loads it there */
	uint32_t init_size;    /* bytes from pref_address the kernel needs before it relocates */
	uint32_t cmdline_size; /* longest command line, without its NUL */
	uint32_t initrd_addr_max;
};

/* Checks a bzImage (setup header, 64-bit entry, sizes against the file) and points into buf.
 * -EINVAL with a message naming the problem. */
int x86_bzimage_parse(const uint8_t *buf, size_t len, struct x86_bzimage *img);
/* The 64-bit entry point: 0x200 past where the protected-mode kernel is loaded. */
uint64_t x86_bzimage_entry64(uint64_t load_addr);

/* ---- ram.c: guest RAM split around the PCI hole below 4 GiB ---- */

#define X86_RAM_RANGES 2

struct x86_ram_range {
	uint64_t gpa, size;
};

/* The memslots of a guest with ram_size bytes of RAM, in address order: [0, min(size, hole)),
 * then the rest from 4 GiB. Returns how many, or -EINVAL with a message (not a multiple of
 * 4 KiB, more than a guest can address). */
int x86_ram_plan(uint64_t ram_size, struct x86_ram_range out[X86_RAM_RANGES]);
/* The guest physical end of RAM for ram_size bytes (RAM past the hole continues at 4 GiB). */
uint64_t x86_ram_end(uint64_t ram_size);
/* The end of the RAM below the hole: where the kernel, the initrd and the tables must fit. */
uint64_t x86_low_ram_end(uint64_t ram_size);

/* ---- boot_params.c: the zero page, its e820 map, command line and initrd ---- */

enum x86_e820_type { X86_E820_RAM = 1, X86_E820_RESERVED = 2 };

struct x86_e820_entry {
	uint64_t addr, size;
	uint32_t type;
};

#define X86_E820_MAX 8

/* The e820 map of a guest with ram_size bytes of RAM, in address order: low RAM, the legacy
 * hole, RAM from 1 MiB to the MMIO hole, MMCONFIG reserved, the rest of RAM from 4 GiB. */
unsigned int x86_e820_build(uint64_t ram_size, struct x86_e820_entry out[X86_E820_MAX]);


struct x86_boot_args {
	uint64_t ram_size;
	uint64_t cmdline_gpa;
	size_t cmdline_len; /* without the NUL */
	uint64_t initrd_gpa, initrd_len; /* len 0: none */
	uint64_t acpi_rsdp;              /* 0: none */
};

#define X86_ZERO_PAGE_SIZE 4096

/* Fills zero_page (a struct boot_params) from the image's setup header and args, as a 64-bit
 * boot loader must (boot.rst "64-bit boot protocol"). -EINVAL when the command line is longer
 * than the kernel takes or the initrd lies above its initrd_addr_max. */
int x86_boot_params_build(uint8_t zero_page[X86_ZERO_PAGE_SIZE], const struct x86_bzimage *img,
			  const struct x86_boot_args *args);

/* ---- mptable.c: the Intel MultiProcessor Specification 1.4 table, for SMP without ACPI ---- */

struct x86_mp_intx {
	uint8_t slot;	/* PCI device number on bus 0 */
	uint8_t ioapic_pin;
};

struct x86_mp_desc {
	unsigned int nr_cpus;	/* APIC IDs 0..nr_cpus-1, CPU 0 the BSP */
	const struct x86_mp_intx *intx; /* INTA# of each PCI slot, level/active-low */
	unsigned int nr_intx;
	bool no_pic; /* split irqchip: no 8259 behind LINT0, so no ExtINT entry */
};

/* Writes the floating pointer and the configuration table to buf, which the guest sees at gpa
 * (in the BIOS area); returns the bytes written or -ENOSPC / -EINVAL with a message. ISA IRQs
 * 0-15 go to IOAPIC pins 0-15 as KVM's default routing wires them. */
long x86_mptable_build(uint8_t *buf, size_t size, uint64_t gpa, const struct x86_mp_desc *d);
/* The IOAPIC's MP ID: after the CPUs' APIC IDs. */
uint8_t x86_mptable_ioapic_id(unsigned int nr_cpus);

/* ---- acpi.c: the few ACPI tables a guest needs to power off, find its CPUs, route PCI INTx ---- */

#define X86_ACPI_BASE 0xe0000ULL /* RSDP here: inside the 0xe0000-0xfffff range Linux scans */
#define X86_ACPI_SIZE 0x10000ULL
#define X86_PM1A_EVT 0x600       /* PM1a event block (status, enable), 4 bytes */
#define X86_PM1A_CNT 0x604       /* PM1a control, 2 bytes: SLP_TYP 12:10, SLP_EN 13 */
#define X86_PM1_CNT_SCI_EN 0x1
#define X86_PM1_CNT_SLP_EN (1u << 13)
#define X86_SLP_TYP_S5 5         /* the DSDT's \_S5 package: what PM1a_CNT gets for soft-off */
#define X86_SCI_IRQ 9

/* RSDP, XSDT, FADT (PM1a blocks above, SCI on IRQ 9), MADT (one local APIC per vCPU, APIC ID =
 * index; the IOAPIC after them, GSI base 0; PC-AT compatible unless d->no_pic) and a DSDT with
 * \_S5 and the PCI host bridge \_SB.PCI0 (PNP0A08: bus 0, CF8/CFC, the 32-bit window; a _PRT
 * with d's INTA# pins, the MP table's), into buf seen at gpa.
 * Returns the bytes written, or -ENOSPC / -EINVAL with a message. */
long x86_acpi_build(uint8_t *buf, size_t size, uint64_t gpa, const struct x86_mp_desc *d);

/* ---- ioapic.c: the split irqchip's IOAPIC in userspace (MMIO at X86_IOAPIC_BASE) ---- */

#define X86_IOAPIC_SIZE 0x100 /* what KVM's own IOAPIC claims */
#define X86_IOAPIC_IOREGSEL 0x00
#define X86_IOAPIC_IOWIN 0x10

struct vm;

struct x86_ioapic {
	pthread_mutex_t lock; /* vCPUs (MMIO, EOI exits), the console and device threads (lines) */
	struct vm *vm;
	uint8_t id;
	uint32_t regsel;
	uint64_t rte[X86_IOAPIC_PINS]; /* redirection entries as the guest wrote them */
	uint32_t level;		       /* input lines as their devices drive them */
	uint32_t routed;	       /* pins with an MSI route on GSI = pin now */
	uint64_t route_addr[X86_IOAPIC_PINS];
	uint32_t route_data[X86_IOAPIC_PINS];
	struct {
		uint64_t delivered, eois, resamples, route_commits, refused, bad_accesses;
		uint64_t route_errors, signal_errors;
	} stats;
};

/* Every pin masked; vm's routing table must keep GSIs 0-23 for it (irq_routing_init_reserved). */
void x86_ioapic_init(struct x86_ioapic *io, struct vm *vm, uint8_t id);
void x86_ioapic_destroy(struct x86_ioapic *io);
/* The bus handler for [X86_IOAPIC_BASE, +X86_IOAPIC_SIZE). */
void x86_ioapic_mmio(void *opaque, uint64_t off, uint8_t *data, uint32_t len, bool is_write);
/* A device's line into pin (edge pins fire on a rising edge, level pins while high). */
void x86_ioapic_set_irq(struct x86_ioapic *io, unsigned int pin, bool level);
/* KVM_EXIT_IOAPIC_EOI: the guest EOIed vector. */
void x86_ioapic_eoi(struct x86_ioapic *io, uint8_t vector);
/* The MSI a redirection entry sends; false when it sends none (masked, a delivery mode vmm does
 * not pass on, an illegal vector). */
bool x86_ioapic_msi(uint64_t rte, uint64_t *addr, uint32_t *data);
uint64_t x86_ioapic_rte(struct x86_ioapic *io, unsigned int pin);
void x86_ioapic_summary(struct x86_ioapic *io, FILE *f);

/* ---- longmode.c: what the 64-bit boot protocol wants set up before the entry ---- */

/* Low RAM the board uses before the kernel runs (below X86_LOWMEM_END, above the real-mode IVT). */
#define X86_GDT_ADDR 0x500ULL
#define X86_ZERO_PAGE_ADDR 0x7000ULL
#define X86_PML4_ADDR 0x9000ULL
#define X86_PDPT_ADDR 0xa000ULL
#define X86_PD_ADDR 0xb000ULL   /* four pages: 4 GiB in 2 MiB pages */
#define X86_CMDLINE_ADDR 0x20000ULL
#define X86_CMDLINE_MAX 0x10000ULL
#define X86_BOOT_CS 0x10 /* boot.rst: __BOOT_CS and __BOOT_DS */
#define X86_BOOT_DS 0x18
#define X86_GDT_ENTRIES 4

/* Writes the GDT (null, null, 64-bit code at X86_BOOT_CS, data at X86_BOOT_DS) and identity
 * page tables for the first 4 GiB into low, guest RAM from physical 0 (at least 0x10000 bytes).
 * -EINVAL when low is too small. */
int x86_longmode_build(uint8_t *low, size_t low_len);

/* Whether a vCPU's registers are the x86 reset state (RIP 0xfff0 in CS 0xf000 at 0xffff0000,
 * protection off): what kvm_amd leaves after a triple fault, so a KVM_EXIT_SHUTDOWN's report does
 * not give that RIP as where the guest was (vmm has no firmware at the reset vector). */
bool x86_regs_are_reset_state(uint64_t rip, uint16_t cs_selector, uint64_t cs_base, uint64_t cr0);

/* ---- boot_load.c: the kernel, initrd, command line and boot tables into low RAM ---- */

/* The guest's RAM below the MMIO hole, guest physical 0 .. size, as the board maps it. */
struct x86_low_ram {
	uint8_t *hva;
	uint64_t size;
};

struct x86_load_in {
	const uint8_t *kernel; /* the bzImage file */
	size_t kernel_len;
	const uint8_t *initrd; /* NULL: none */
	size_t initrd_len;
	/* optional: the files behind kernel and initrd, read from by vm_mem_load (NULL: memory) */
	const struct mapped_file *kernel_file, *initrd_file;
	const char *params;    /* the user's command line (vmm prepends its own) */
	uint64_t mem_size;     /* all of the guest's RAM (-m) */
	const struct x86_mp_desc *mp;
};

/* Checks the bzImage against the file and the RAM, then writes everything the 64-bit boot
 * protocol wants in place; *entry is where the boot vCPU starts. -errno with a message. */
int x86_boot_load(const struct x86_low_ram *ram, const struct x86_load_in *in, uint64_t *entry);

/* ---- pci_cf8.c: PCI configuration mechanism #1 (ports 0xcf8 / 0xcfc-0xcff) onto ECAM ---- */

#define X86_PCI_CF8 0xcf8
#define X86_PCI_CFC 0xcfc

/* The ECAM offset an access of len bytes at port (0xcfc..0xcff) reaches with address register
 * cf8; false when the access goes nowhere (enable bit clear, a bus beyond the ECAM's bus 0, or
 * an access crossing the dword): reads then return all ones, writes are dropped. */
bool x86_cf8_to_ecam(uint32_t cf8, uint16_t port, uint32_t len, uint64_t *off);

/* ---- pv.c: the PV features and hints the guest sees in CPUID 0x40000001 ---- */

/* The knobs, named as QEMU's -cpu kvm-* properties without the prefix. */
enum x86_pv_knob {
	X86_PV_IPI,
	X86_PV_UNHALT,
	X86_PV_TLB_FLUSH,
	X86_PV_SCHED_YIELD,
	X86_PV_POLL_CONTROL,
	X86_PV_MSI_EXT_DEST_ID,
	X86_PV_HINT_DEDICATED,
	X86_PV_NR_KNOBS
};

/* DEFAULT: what vmm decides (pv-ipi: auto). */
enum x86_pv_setting { X86_PV_DEFAULT, X86_PV_ON, X86_PV_OFF };

enum x86_irqchip_mode { X86_IRQCHIP_KERNEL, X86_IRQCHIP_SPLIT };

struct x86_pv_config {
	enum x86_pv_setting knob[X86_PV_NR_KNOBS];
	bool no_hlt_exit;		/* --no-hlt-exit: HLT stays in the guest */
	bool xapic;			/* --apic xapic: CPUID hides x2APIC, the guest stays xAPIC */
	enum x86_irqchip_mode irqchip;
};

const char *x86_pv_knob_name(enum x86_pv_knob k);
/* "--pv pv-ipi=off,hint-dedicated=on": each KNOB=on|off|auto (auto: vmm decides). -EINVAL with
 * a message listing the knobs on anything else; c keeps what parsed before the bad item. */
int x86_pv_parse(struct x86_pv_config *c, const char *spec);

/* What the host says about hardware IPI acceleration (pv_host.c reads it). Tri-states are
 * 1 yes, 0 no, -1 unknown (a parameter the kernel does not have, a file vmm could not read). */
enum x86_kvm_vendor { X86_KVM_NONE, X86_KVM_AMD, X86_KVM_INTEL };

struct x86_host_evidence {
	enum x86_kvm_vendor vendor; /* which of kvm_amd / kvm_intel is loaded */
	int kernel_major, kernel_minor;
	int amd_avic, amd_force_avic, amd_enable_ipiv; /* kvm_amd parameters */
	bool cpu_avic, cpu_x2avic;                     /* /proc/cpuinfo flags */
	int dmesg_avic, dmesg_x2avic;                  /* "AVIC enabled" / "x2AVIC enabled" */
	int intel_apicv, intel_ipiv;                   /* kvm_intel enable_apicv / enable_ipiv */
	bool cpu_ipi_virt;                             /* /proc/cpuinfo vmx flag ipi_virt */
};

/* Host files as text (NULL: could not be read); pv_host.c fills it from a root directory. */
struct x86_host_files {
	const char *release;  /* uname -r */
	const char *cpuinfo;
	const char *dmesg;
	const char *amd_avic, *amd_force_avic, *amd_enable_ipiv;
	const char *intel_apicv, *intel_ipiv;
	bool amd_loaded, intel_loaded; /* /sys/module/kvm_amd, kvm_intel exist */
};

void x86_host_evidence_parse(const struct x86_host_files *f, struct x86_host_evidence *e);
/* Whether root's /dev/kvm is served by kvm_pvm (root/sys/module/kvm_pvm exists): PVM runs guest
 * kernel code deprivileged at CPL 3 without VMX/SVM, so only a kernel built for PVM runs there. */
bool x86_host_kvm_is_pvm(const char *root);

/* Reads root/sys/module/kvm_{amd,intel}/parameters/..., root/proc/cpuinfo, the kernel log
 * (root/dmesg when root is not "/", else klogctl) and uname. */
void x86_host_evidence_read(const char *root, struct x86_host_evidence *e);

/* The decision for one VM. */
struct x86_pv_decision {
	uint32_t features; /* KVM_CPUID_FEATURES eax the guest sees */
	uint32_t hints;    /* its edx (KVM_HINTS_REALTIME) */
	bool x2apic;       /* CPUID.1:ECX.x2APIC kept */
	bool hw_ipi;       /* hardware IPI acceleration judged active for this guest */
	char ipi_why[320]; /* pv-ipi's decision with its evidence, one line */
};

/* Decides from KVM's supported leaf 0x40000001 (supported_eax/edx), whether KVM offers x2APIC,
 * the config and the host evidence. -EINVAL with a message when a knob is forced on that the
 * host lacks or that contradicts another option (pv-unhalt with --no-hlt-exit, msi-ext-dest-id
 * without the split irqchip). */
int x86_pv_decide(uint32_t supported_eax, uint32_t supported_edx, bool host_x2apic,
		  const struct x86_pv_config *c, const struct x86_host_evidence *e,
		  struct x86_pv_decision *d);
/* One "x86 pv: ..." line per knob, then the pv-ipi evidence. */
void x86_pv_print(FILE *f, const struct x86_pv_decision *d);

/* ---- poll_control.c: MSR_KVM_POLL_CONTROL, the per-vCPU host halt-polling switch ---- */

struct kvm_seam;

/* NULL when a guest with these KVM_CPUID_FEATURES bits can have the switch, else why not. */
const char *x86_poll_control_refusal(uint32_t guest_features);
/* set 0 or 1 writes bit 0 (1: KVM may poll for this vCPU), -1 only reads; returns the bit as KVM
 * then holds it, or -errno (-EINVAL: another set, or KVM refused the value). Call it where no
 * KVM_RUN of the vCPU is in progress (vcpu_call). */
int x86_poll_control_rw(const struct kvm_seam *k, int vcpu_fd, int set);

#endif
