/* SPDX-License-Identifier: MIT */
/*
 * The arm64 board. Memory map (guest physical), fixed and documented so guests, tests and FDT agree:
 *
 *   0x0800_0000  GICv3 distributor             64 KiB
 *   0x0808_0000  GICv3 ITS                     128 KiB
 *   0x080a_0000  GICv3 redistributors          128 KiB per vCPU, up to 0x0900_0000 (123 vCPUs)
 *   0x0900_0000  16550 UART                    4 KiB
 *   0x0901_0000  pvpanic (qemu,pvpanic-mmio)   4 KiB (a 2-byte register)
 *   0x0a00_0000  test/debug MMIO window        64 KiB (claimed only by tests)
 *   0x1000_0000  PCI 32-bit MMIO window        ~751 MiB
 *   0x3f00_0000  PCI ECAM config space         1 MiB (bus 0)
 *   0x8000_0000  RAM                           up to 2 GiB below 4 GiB, the rest above
 *   0x80_0000_0000  PCI 64-bit MMIO window     64 GiB (RAM must end below it)
 *
 * Everything sits below 4 GiB + RAM, so a 40-bit IPA host (the smallest KVM supports by default)
 * and a 52-bit one both run it; RAM avoids the SMMU MSI window at 0x0800_0000 as an IOVA.
 */
#ifndef VMM_ARM64_H
#define VMM_ARM64_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "core/arch.h"
#include "core/cpu_opts.h"
#include "core/mem.h"
#include "core/vcpu.h"

struct vm;

#define ARM64_GICD_BASE 0x08000000ULL
#define ARM64_GITS_BASE 0x08080000ULL
#define ARM64_GICR_BASE 0x080a0000ULL
#define ARM64_GICR_LIMIT 0x09000000ULL
#define ARM64_UART_BASE 0x09000000ULL
#define ARM64_PVPANIC_BASE 0x09010000ULL
#define ARM64_PVPANIC_SIZE 0x1000ULL
#define ARM64_TESTDEV_BASE 0x0a000000ULL
#define ARM64_TESTDEV_SIZE 0x10000ULL
#define ARM64_RAM_BASE 0x80000000ULL
#define ARM64_GICD_SIZE 0x10000ULL
#define ARM64_GITS_SIZE 0x20000ULL
#define ARM64_UART_SIZE 0x1000ULL
#define ARM64_UART_SPI 1 /* SPI number (INTID 33) */
#define ARM64_NR_IRQS 128 /* 32 private + 96 SPIs */
#define ARM64_PCI_ECAM_BASE 0x3f000000ULL
#define ARM64_PCI_ECAM_SIZE 0x100000ULL
#define ARM64_PCI_MMIO32_BASE 0x10000000ULL
#define ARM64_PCI_MMIO32_SIZE 0x2eff0000ULL
#define ARM64_PCI_MMIO64_BASE 0x8000000000ULL
#define ARM64_PCI_MMIO64_SIZE 0x1000000000ULL
#define ARM64_PCI_INTX_SPI_BASE 4 /* slot s's INTA# is SPI 4 + s */
#define ARM64_FDT_MAX (2ULL << 20) /* booting.rst: the DTB must not exceed 2 MiB */
/* What a tree needs besides its command line: 123 vCPUs take under 20 KiB (tests/unit/fdt_test.c) */
#define ARM64_FDT_ROOM (64ULL << 10)
#define ARM64_MPIDR_AFF_MASK 0xff00ffffffULL

/* Architectural PPI of the EL1 virtual timer (KVM's default; the FDT names the same). */
#define ARM64_VTIMER_PPI 27
/* The PMU's overflow interrupt, an INTID (PPI 7): the timers hold 26, 27, 29 and 30, and Linux's
 * own guests (QEMU's virt board) use 23 too. */
#define ARM64_PMU_INTID 23

/* cpu_feat.c: SVE, pointer authentication and PMUv3 on the vCPUs (--cpu, core/cpu_opts.h). */
struct arm64_cpu_host {
	bool sve, pauth, pmu; /* what KVM offers this VM (pauth: both ADDRESS and GENERIC) */
};

struct arm64_cpu_feat {
	bool sve, pauth, pmu;	  /* what every vCPU gets */
	unsigned int sve_max_vq;  /* --cpu sve=BITS / 128; 0: the host's largest */
	unsigned int sve_vl_bits; /* the largest vector length the vCPUs got (set at vCPU init) */
	uint32_t pmu_intid;	  /* the PMU's overflow PPI (ARM64_PMU_INTID), 0 without a PMU */
};

void arm64_cpu_host_read(struct vm *vm, struct arm64_cpu_host *h);
/* The features the vCPUs get: auto takes what the host offers, on refuses (-EOPNOTSUPP, with a
 * message) a host without it, off leaves it out. */
int arm64_cpu_resolve(const struct cpu_opts *o, const struct arm64_cpu_host *h, struct arm64_cpu_feat *f);
/* KVM_ARM_PREFERRED_TARGET + KVM_ARM_VCPU_INIT with PSCI 0.2 and f's features (secondaries start
 * powered off); with SVE, the vector lengths and KVM_ARM_VCPU_FINALIZE. Records the vector length
 * in f (and refuses vCPUs that disagree). */
int arm64_vcpu_init(struct vcpu *vcpu, bool powered_off, struct arm64_cpu_feat *f);
/* Every vCPU's PMU: its overflow PPI, then PMU_V3_INIT. Only after the vGIC's CTRL_INIT. */
int arm64_pmu_init(struct vm *vm, const struct arm64_cpu_feat *f);
/* The board's step after every vCPU exists: the vGIC's CTRL_INIT (vgic_init), then the PMUs. */
struct vgic;
int arm64_irqchip_pmu_init(struct vgic *g, uint32_t nr_irqs, struct vm *vm, const struct arm64_cpu_feat *f);
/* "sve (vectors up to 2048 bits), pauth on, pmu on (overflow INTID 23)": the start-up line. */
int arm64_cpu_describe(const struct arm64_cpu_feat *f, char *buf, size_t n);
/* ,"cpu_features":{...}: the --stats JSON's "vmm" member. */
void arm64_cpu_json(const struct arm64_cpu_feat *f, FILE *out);
/* clock.c: the counter guest and host share (issue 37) */
struct arch_clock;
uint64_t arm64_counter_read(void);
uint64_t arm64_counter_hz(void); /* CNTFRQ_EL0 */
/* KVM_ARM_SET_COUNTER_OFFSET 0, before any vCPU; c says whether it took and why not. */
void arm64_counter_offset_zero(struct vm *vm, struct arch_clock *c);
/* Where that failed: the offset from the vCPU's KVM_REG_ARM_TIMER_CNT, before it runs. */
void arm64_counter_offset_estimate(struct vcpu *v, struct arch_clock *c);
int arm64_core_reg_set(struct vcpu *vcpu, uint64_t off, uint64_t val);
int arm64_core_reg_get(struct vcpu *vcpu, uint64_t off, uint64_t *val);
/* IPA bits the memory map needs with mem_size of RAM: its end (RAM or the PCI 64-bit window,
 * whichever is higher) rounded up to a power of two, at least KVM's minimum of 32. */
int arm64_ipa_bits_needed(uint64_t mem_size);
/* KVM_CREATE_VM's type for the smallest IPA size that fits, given the host's
 * KVM_CAP_ARM_VM_IPA_SIZE (0: a kernel without it, fixed 40 bits); -ERANGE with a message when the
 * host's maximum is too small. */
long arm64_ipa_vm_type(uint64_t mem_size, int host_max, int *ipa_bits);
/* The same, asking the host (kvm_fd) for its maximum. */
int arm64_vm_type(int kvm_fd, uint64_t mem_size, unsigned long *type, int *ipa_bits);

/* kernel.c: a parsed raw Image; data points into the caller's buffer or a decoded copy. */
struct arm64_image {
	const uint8_t *data;
	size_t len;
	uint64_t text_offset, image_size, flags;
	bool sized; /* image_size is the header's: the kernel's BSS and all (not pre-3.17, not flat) */
};

int arm64_image_parse(const uint8_t *buf, size_t len, struct arm64_image *img);
/* Raw Image, Image.gz or EFI zboot (gzip). *owned is the decoded buffer to free, or NULL. */
int arm64_kernel_decode(const uint8_t *buf, size_t len, size_t max_out, uint8_t **owned,
			struct arm64_image *img);
/* A gzip-compressed Image, or an EFI zboot image's gzip payload: 1 with the stream in *gz,
 * 0 when buf is neither (a raw Image, or not a kernel: the parse says which), -errno said why. */
int arm64_kernel_gzip(const uint8_t *buf, size_t len, const uint8_t **gz, size_t *gz_len);
/* Inflates gz straight into ram, no buffer between: the Image's header first (where it goes:
 * text_offset; what it says it takes: image_size), then the rest in place, to at most room bytes
 * from ram's start (and max_out of Image). img as arm64_image_parse gives it, data in ram.
 * -E2BIG without a message when the header's Image cannot fit (img's sizes say how big). */
int arm64_kernel_inflate(const uint8_t *gz, size_t gz_len, uint8_t *ram, uint64_t room, size_t max_out,
			 struct arm64_image *img);
/* --kernel-format: auto is arm64_kernel_decode(), image a raw Image only, flat the bytes as they
 * are at text_offset 0x80000 (what the boot protocol's pre-3.17 default gives a kernel). */
int arm64_kernel_load(const uint8_t *buf, size_t len, size_t max_out, enum kernel_format fmt,
		      uint8_t **owned, struct arm64_image *img);

/* boot_load.c: the kernel and initrd into RAM (mem_size bytes at ARM64_RAM_BASE, hva ram). */
struct arm64_load_in {
	const uint8_t *kernel; /* the file, in the format --kernel-format names */
	size_t kernel_len;
	enum kernel_format format;
	const uint8_t *initrd; /* NULL: none */
	size_t initrd_len;
	/* optional: the files behind kernel and initrd, read from by vm_mem_load (NULL: memory) */
	const struct mapped_file *kernel_file, *initrd_file;
	/* optional: called once the kernel is decoded, before anything is copied (boot timings) */
	void (*decoded)(void *opaque);
	void *opaque;
	size_t fdt_room; /* what the tree may take (arm64_fdt_room); 0: ARM64_FDT_ROOM */
};

struct arm64_boot_layout {
	uint64_t kernel;		/* the entry: the Image's first byte */
	uint64_t kernel_size;		/* what it takes from there (image_size), file and BSS */
	uint64_t initrd, initrd_len;	/* len 0: none */
	/* where the tree goes, fdt_room bytes: just after image_size, or the top 2 MiB of RAM */
	uint64_t fdt, fdt_room;
};

/* Decodes the kernel, checks that it and the initrd fit below RAM's top 2 MiB, copies both in and
 * finds the FDT its place. -errno with a message. */
int arm64_boot_load(uint8_t *ram, uint64_t mem_size, const struct arm64_load_in *in,
		    struct arm64_boot_layout *out);

/* fdt.c: what the device tree describes; plain data so unit tests can build one without KVM. */
struct arm64_fdt_desc {
	unsigned int nr_cpus;
	const uint64_t *mpidr; /* nr_cpus entries, as KVM reports MPIDR_EL1 */
	uint64_t ram_base, ram_size;
	uint64_t gicd, gicr, gicr_size;
	uint64_t its; /* 0: no ITS */
	uint64_t uart;
	uint32_t uart_spi;
	bool console_uart;
	const char *bootargs;
	uint64_t initrd_start, initrd_end; /* equal: no initrd */
	bool pci; /* a host bridge with the ARM64_PCI_* layout */
	uint64_t pvpanic; /* 0: no pvpanic device */
	uint64_t pvpanic_reg; /* the size of its register window (PVPANIC_MMIO_SIZE): the device's */
	uint32_t pmu_intid; /* the PMU's overflow PPI as an INTID (16..31); 0: no PMU node */
};

int arm64_fdt_build(const struct arm64_fdt_desc *d, void *buf, size_t size);
/* Room to build d's tree in: ARM64_FDT_ROOM and the command line, at most ARM64_FDT_MAX. */
size_t arm64_fdt_room(const struct arm64_fdt_desc *d);
/* Builds d's tree in a buffer of its own and copies it to dst (room for max bytes): dst gets the
 * tree's bytes and nothing else. */
int arm64_fdt_place(const struct arm64_fdt_desc *d, void *dst, size_t max);


/* Offset of a core register for arm64_core_reg_*(), e.g. ARM64_CORE(regs.pc) or ARM64_XREG(0). */
#define ARM64_CORE(name) KVM_REG_ARM_CORE_REG(name)
#define ARM64_XREG(n) KVM_REG_ARM_CORE_REG(regs.regs[n])

#endif
