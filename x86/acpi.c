// SPDX-License-Identifier: MIT
/*
 * Just enough ACPI (specification 6.x, chapter 5) for a guest to power off and find its CPUs:
 * RSDP -> XSDT -> FADT (-> DSDT) and MADT. Power-off is the DSDT's \_S5 written to PM1a_CNT, which
 * vmm turns into the guest's poweroff; there is no SCI source, no GPE, no PM timer. The kernel's
 * UAPI has no ACPI layouts, so the offsets below are the specification's.
 */
#include <errno.h>
#include <string.h>

#include "vmm/log.h"
#include "x86/x86.h"

#define HDR_LEN 36
#define RSDP_LEN 36
#define FADT_LEN 276 /* revision 6 */
#define FADT_REV 6
/* FADT offsets (table 5.9) */
#define FADT_DSDT 40
#define FADT_SCI_INT 46
#define FADT_PM1A_EVT 56
#define FADT_PM1A_CNT 64
#define FADT_PM1_EVT_LEN 88
#define FADT_PM1_CNT_LEN 89
#define FADT_IAPC_BOOT_ARCH 109
#define FADT_FLAGS 112
#define FADT_MINOR 131
#define FADT_X_DSDT 140
/* FADT flags: WBINVD works; no fixed power or sleep button. IAPC: no VGA, no MSI problems. */
#define FADT_F_WBINVD (1u << 0)
#define FADT_F_PWR_BUTTON (1u << 4)
#define FADT_F_SLP_BUTTON (1u << 5)
#define IAPC_VGA_NOT_PRESENT (1u << 2)
/* MADT (5.2.12) */
#define MADT_PCAT_COMPAT 1
#define MADT_LAPIC 0
#define MADT_IOAPIC 1
#define MADT_ISO 2
#define MADT_LAPIC_NMI 4
#define MADT_ENABLED 1
#define ISO_ACTIVE_HIGH_LEVEL 0x000d /* polarity 01 (high), trigger 11 (level) */

/* AML (20.2): Name (_S5, Package (4) { 5, 5, Zero, Zero }) */
static const uint8_t dsdt_s5[] = {
	0x08, '_', 'S', '5', '_',       /* NameOp, NameSeg */
	0x12, 0x08, 0x04,               /* PackageOp, PkgLength 8, NumElements 4 */
	0x0a, X86_SLP_TYP_S5, 0x0a, X86_SLP_TYP_S5, /* BytePrefix 5, BytePrefix 5 */
	0x00, 0x00,                     /* Zero, Zero */
};

static void put16(uint8_t *p, uint16_t v)
{
	p[0] = v;
	p[1] = v >> 8;
}

static void put32(uint8_t *p, uint32_t v)
{
	put16(p, v);
	put16(p + 2, v >> 16);
}

static void put64(uint8_t *p, uint64_t v)
{
	put32(p, v);
	put32(p + 4, v >> 32);
}

static uint8_t checksum(const uint8_t *p, size_t n)
{
	uint8_t s = 0;

	while (n--)
		s += *p++;
	return (uint8_t)-s;
}

/* The common header (5.2.6); the checksum is set once the table is complete. */
static void header(uint8_t *t, const char *sig, uint32_t len, uint8_t rev)
{
	memcpy(t, sig, 4);
	put32(t + 4, len);
	t[8] = rev;
	memcpy(t + 10, "VMM   ", 6);
	memcpy(t + 16, "VMMX86  ", 8);
	put32(t + 24, 1);
	memcpy(t + 28, "VMM ", 4);
	put32(t + 32, 1);
}

static void seal(uint8_t *t)
{
	uint32_t len = t[4] | t[5] << 8 | t[6] << 16 | (uint32_t)t[7] << 24;

	t[9] = 0;
	t[9] = checksum(t, len);
}

long x86_acpi_build(uint8_t *buf, size_t size, uint64_t gpa, unsigned int nr_cpus)
{
	const size_t madt_len = HDR_LEN + 8 + nr_cpus * 8 + 12 + 10 + 6;
	const size_t xsdt_off = 64, fadt_off = xsdt_off + HDR_LEN + 16, madt_off = fadt_off + FADT_LEN;
	const size_t dsdt_off = madt_off + madt_len, end = dsdt_off + HDR_LEN + sizeof(dsdt_s5);
	uint8_t *rsdp = buf, *xsdt = buf + xsdt_off, *fadt = buf + fadt_off;
	uint8_t *madt = buf + madt_off, *dsdt = buf + dsdt_off, *p;

	if (!nr_cpus || nr_cpus > X86_MAX_VCPUS) {
		pr_err("acpi: %u vCPUs; the MADT describes 1 to %u", nr_cpus, X86_MAX_VCPUS);
		return -EINVAL;
	}
	if (gpa % 16 || gpa + end > X86_4G) {
		pr_err("acpi: 0x%llx is not a 16-byte aligned address below 4 GiB",
		       (unsigned long long)gpa);
		return -EINVAL;
	}
	if (end > size) {
		pr_err("acpi: %zu bytes needed, %zu available", end, size);
		return -ENOSPC;
	}
	memset(buf, 0, end);

	/* RSDP (5.2.5.3), revision 2: the XSDT; the first 20 bytes and all 36 have checksums */
	memcpy(rsdp, "RSD PTR ", 8);
	memcpy(rsdp + 9, "VMM   ", 6);
	rsdp[15] = 2;
	put32(rsdp + 20, RSDP_LEN);
	put64(rsdp + 24, gpa + xsdt_off);
	rsdp[8] = checksum(rsdp, 20);
	rsdp[32] = checksum(rsdp, RSDP_LEN);

	header(xsdt, "XSDT", HDR_LEN + 16, 1);
	put64(xsdt + HDR_LEN, gpa + fadt_off);
	put64(xsdt + HDR_LEN + 8, gpa + madt_off);
	seal(xsdt);

	header(fadt, "FACP", FADT_LEN, FADT_REV);
	put32(fadt + FADT_DSDT, (uint32_t)(gpa + dsdt_off));
	put16(fadt + FADT_SCI_INT, X86_SCI_IRQ);
	/* SMI_CMD 0: the platform is always in ACPI mode, nothing to switch */
	put32(fadt + FADT_PM1A_EVT, X86_PM1A_EVT);
	put32(fadt + FADT_PM1A_CNT, X86_PM1A_CNT);
	fadt[FADT_PM1_EVT_LEN] = 4;
	fadt[FADT_PM1_CNT_LEN] = 2;
	put16(fadt + FADT_IAPC_BOOT_ARCH, IAPC_VGA_NOT_PRESENT);
	put32(fadt + FADT_FLAGS, FADT_F_WBINVD | FADT_F_PWR_BUTTON | FADT_F_SLP_BUTTON);
	fadt[FADT_MINOR] = 0;
	put64(fadt + FADT_X_DSDT, gpa + dsdt_off);
	seal(fadt);

	header(madt, "APIC", madt_len, 5);
	put32(madt + HDR_LEN, (uint32_t)X86_LAPIC_BASE);
	put32(madt + HDR_LEN + 4, MADT_PCAT_COMPAT);
	p = madt + HDR_LEN + 8;
	for (unsigned int i = 0; i < nr_cpus; i++, p += 8) {
		p[0] = MADT_LAPIC;
		p[1] = 8;
		p[2] = (uint8_t)i; /* ACPI processor UID */
		p[3] = (uint8_t)i; /* APIC ID */
		put32(p + 4, MADT_ENABLED);
	}
	p[0] = MADT_IOAPIC;
	p[1] = 12;
	p[2] = x86_mptable_ioapic_id(nr_cpus);
	put32(p + 4, (uint32_t)X86_IOAPIC_BASE);
	put32(p + 8, 0); /* GSI base */
	p += 12;
	/* The SCI is level, active high (as the FADT's SCI_INT says, on IOAPIC pin 9). ISA IRQs
	 * without an override are identity-mapped and edge, KVM's default routing. */
	p[0] = MADT_ISO;
	p[1] = 10;
	p[2] = 0; /* ISA */
	p[3] = X86_SCI_IRQ;
	put32(p + 4, X86_SCI_IRQ);
	put16(p + 8, ISO_ACTIVE_HIGH_LEVEL);
	p += 10;
	p[0] = MADT_LAPIC_NMI; /* NMI on LINT1 of every processor */
	p[1] = 6;
	p[2] = 0xff;
	put16(p + 3, 0);
	p[5] = 1;
	seal(madt);

	header(dsdt, "DSDT", HDR_LEN + sizeof(dsdt_s5), 2);
	memcpy(dsdt + HDR_LEN, dsdt_s5, sizeof(dsdt_s5));
	seal(dsdt);
	return (long)end;
}
