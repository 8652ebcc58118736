// SPDX-License-Identifier: MIT
/*
 * The Intel MultiProcessor Specification 1.4 table: how a guest without ACPI finds its CPUs
 * (one processor entry per APIC ID), the IOAPIC, and where ISA and PCI interrupts arrive. The
 * kernel has no UAPI for it, so the layouts below are the specification's (chapter 4).
 */
#include <errno.h>
#include <string.h>

#include "core/log.h"
#include "x86/x86.h"

struct mpf { /* 4.1 the floating pointer, 16 bytes on a 16-byte boundary */
	char signature[4];
	uint32_t physptr;
	uint8_t length; /* in 16-byte units */
	uint8_t spec_rev;
	uint8_t checksum;
	uint8_t feature[5]; /* feature[0] 0: a configuration table is present */
} __attribute__((packed));

struct mpc { /* 4.2 the configuration table header */
	char signature[4];
	uint16_t length;
	uint8_t spec_rev;
	uint8_t checksum;
	char oem[8], product[12];
	uint32_t oem_ptr;
	uint16_t oem_size, count;
	uint32_t lapic;
	uint16_t ext_length;
	uint8_t ext_checksum, reserved;
} __attribute__((packed));

struct mpc_cpu { /* 4.3.1 */
	uint8_t type, apic_id, apic_ver, flags;
	uint32_t signature, features;
	uint32_t reserved[2];
} __attribute__((packed));

struct mpc_bus { /* 4.3.2 */
	uint8_t type, id;
	char name[6];
} __attribute__((packed));

struct mpc_ioapic { /* 4.3.3 */
	uint8_t type, id, ver, flags;
	uint32_t addr;
} __attribute__((packed));

struct mpc_irq { /* 4.3.4 I/O and 4.3.5 local interrupt assignments */
	uint8_t type, irq_type;
	uint16_t flags;
	uint8_t src_bus, src_irq, dst_id, dst_pin;
} __attribute__((packed));

enum { MP_PROCESSOR, MP_BUS, MP_IOAPIC, MP_INTSRC, MP_LINTSRC };
enum { MP_INT, MP_NMI, MP_SMI, MP_EXTINT };
#define CPU_ENABLED 1
#define CPU_BSP 2
#define IOAPIC_ENABLED 1
#define SPEC_REV 4		/* 1.4 */
#define LAPIC_VERSION 0x14	/* an integrated local APIC, as KVM's reports */
#define IOAPIC_VERSION 0x11	/* KVM's IOAPIC version register */
#define IRQ_ACTIVE_LOW 0x3	/* flags: polarity bits 1:0 */
#define IRQ_LEVEL 0xc		/* flags: trigger bits 3:2 */
#define BUS_PCI 0
#define BUS_ISA 1
#define ALL_APICS 0xff
/* CPUID.1 of a family-6 CPU with an on-chip APIC and FPU: what the processor entries claim. */
#define CPU_SIGNATURE 0x600
#define CPU_FEATURES 0x201 /* FPU, APIC */

uint8_t x86_mptable_ioapic_id(unsigned int nr_cpus)
{
	return (uint8_t)nr_cpus;
}

static uint8_t checksum(const uint8_t *p, size_t n)
{
	uint8_t s = 0;

	while (n--)
		s += *p++;
	return (uint8_t)-s;
}

long x86_mptable_build(uint8_t *buf, size_t size, uint64_t gpa, const struct x86_mp_desc *d)
{
	size_t need = sizeof(struct mpf) + sizeof(struct mpc) + d->nr_cpus * sizeof(struct mpc_cpu) +
		      2 * sizeof(struct mpc_bus) + sizeof(struct mpc_ioapic) +
		      (X86_ISA_IRQS + d->nr_intx + 2) * sizeof(struct mpc_irq);
	uint8_t ioapic = x86_mptable_ioapic_id(d->nr_cpus);
	struct mpf *mpf = (struct mpf *)buf;
	struct mpc *mpc = (struct mpc *)(buf + sizeof(*mpf));
	uint8_t *p = (uint8_t *)(mpc + 1);
	uint16_t count = 0;

	if (!d->nr_cpus || d->nr_cpus > X86_MAX_VCPUS) {
		pr_err("mptable: %u vCPUs; the MP table describes 1 to %u", d->nr_cpus, X86_MAX_VCPUS);
		return -EINVAL;
	}
	if (gpa % 16 || gpa + need > X86_4G) {
		pr_err("mptable: 0x%llx is not a 16-byte aligned address below 4 GiB",
		       (unsigned long long)gpa);
		return -EINVAL;
	}
	if (need > size) {
		pr_err("mptable: %zu bytes needed, %zu available", need, size);
		return -ENOSPC;
	}
	memset(buf, 0, need);
	for (unsigned int i = 0; i < d->nr_cpus; i++, count++) {
		struct mpc_cpu c = { .type = MP_PROCESSOR, .apic_id = (uint8_t)i,
				     .apic_ver = LAPIC_VERSION,
				     .flags = CPU_ENABLED | (i == 0 ? CPU_BSP : 0),
				     .signature = CPU_SIGNATURE, .features = CPU_FEATURES };
		memcpy(p, &c, sizeof(c));
		p += sizeof(c);
	}
	struct mpc_bus buses[] = { { MP_BUS, BUS_PCI, "PCI   " }, { MP_BUS, BUS_ISA, "ISA   " } };
	memcpy(p, buses, sizeof(buses));
	p += sizeof(buses);
	count += 2;
	struct mpc_ioapic io = { .type = MP_IOAPIC, .id = ioapic, .ver = IOAPIC_VERSION,
				 .flags = IOAPIC_ENABLED, .addr = (uint32_t)X86_IOAPIC_BASE };
	memcpy(p, &io, sizeof(io));
	p += sizeof(io);
	count++;
	/* ISA IRQ n on pin n: KVM's default GSI routing wires them so (the PIT on pin 0). Flags 0:
	 * the bus's own polarity and trigger (ISA: edge, active high). */
	for (uint8_t i = 0; i < X86_ISA_IRQS; i++, count++) {
		struct mpc_irq irq = { .type = MP_INTSRC, .irq_type = MP_INT, .src_bus = BUS_ISA,
				       .src_irq = i, .dst_id = ioapic, .dst_pin = i };
		memcpy(p, &irq, sizeof(irq));
		p += sizeof(irq);
	}
	/* PCI: the source IRQ is (device << 2) | INTx, here INTA# (0). */
	for (unsigned int i = 0; i < d->nr_intx; i++, count++) {
		const struct x86_mp_intx *x = &d->intx[i];

		if (x->slot >= 32 || x->ioapic_pin < X86_ISA_IRQS || x->ioapic_pin >= X86_IOAPIC_PINS) {
			pr_err("mptable: PCI slot %u on IOAPIC pin %u: slots are 0-31 and PCI pins %u-%u",
			       x->slot, x->ioapic_pin, X86_ISA_IRQS, X86_IOAPIC_PINS - 1);
			return -EINVAL;
		}
		struct mpc_irq irq = { .type = MP_INTSRC, .irq_type = MP_INT,
				       .flags = IRQ_ACTIVE_LOW | IRQ_LEVEL, .src_bus = BUS_PCI,
				       .src_irq = (uint8_t)(x->slot << 2), .dst_id = ioapic,
				       .dst_pin = x->ioapic_pin };
		memcpy(p, &irq, sizeof(irq));
		p += sizeof(irq);
	}
	/* Every local APIC: the PIC's ExtINT on LINT0 (when there is a PIC), NMI on LINT1, as on a PC. */
	struct mpc_irq lint[] = {
		{ .type = MP_LINTSRC, .irq_type = MP_EXTINT, .src_bus = BUS_ISA, .dst_id = ALL_APICS,
		  .dst_pin = 0 },
		{ .type = MP_LINTSRC, .irq_type = MP_NMI, .src_bus = BUS_ISA, .dst_id = ALL_APICS,
		  .dst_pin = 1 },
	};
	unsigned int first = d->no_pic ? 1 : 0;

	memcpy(p, lint + first, sizeof(lint) - first * sizeof(lint[0]));
	p += sizeof(lint) - first * sizeof(lint[0]);
	count += 2 - first;

	memcpy(mpc->signature, "PCMP", 4);
	mpc->length = (uint16_t)(p - (uint8_t *)mpc);
	mpc->spec_rev = SPEC_REV;
	memcpy(mpc->oem, "VMM     ", 8);
	memcpy(mpc->product, "VMM x86     ", 12);
	mpc->count = count;
	mpc->lapic = (uint32_t)X86_LAPIC_BASE;
	mpc->checksum = checksum((uint8_t *)mpc, mpc->length);

	memcpy(mpf->signature, "_MP_", 4);
	mpf->physptr = (uint32_t)(gpa + sizeof(*mpf));
	mpf->length = 1;
	mpf->spec_rev = SPEC_REV;
	mpf->checksum = checksum((uint8_t *)mpf, sizeof(*mpf));
	return (long)(p - buf);
}
