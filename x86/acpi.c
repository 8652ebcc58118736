// SPDX-License-Identifier: MIT
/*
 * Just enough ACPI (specification 6.x, chapter 5) for a guest to power off, find its CPUs and
 * route PCI interrupts: RSDP -> XSDT -> FADT (-> DSDT), MADT and MCFG. Power-off is the DSDT's \_S5
 * written to PM1a_CNT, which vmm turns into the guest's poweroff; there is no SCI source, no GPE,
 * no PM timer. The DSDT's PCI host bridge (\_SB.PCI0, PNP0A08) has the ECAM's bus 0, the CF8/CFC
 * ports and the 32-bit MMIO window as _CRS, and a _PRT giving each occupied slot's INTA# the
 * IOAPIC pin the MP table gives it (both come from the same x86_mp_desc). The kernel's UAPI has
 * no ACPI layouts, so the offsets below are the specification's.
 */
#include <errno.h>
#include <string.h>

#include "core/log.h"
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
/* MCFG (PCI Firmware Specification 3.x, 4.1.2): header, 8 reserved bytes, one 16-byte
 * allocation per ECAM range */
#define MCFG_LEN (HDR_LEN + 8 + 16)

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

/* AML (chapter 20) for the host bridge, built in a buffer: objects with a PkgLength are written
 * body first, then wrapped (aml_wrap inserts the opcode and the length before the body). */
struct aml {
	uint8_t b[2048];
	size_t n; /* past sizeof(b): it did not fit (the caller checks) */
};

static void aml_put(struct aml *a, const void *p, size_t n)
{
	if (a->n + n <= sizeof(a->b))
		memcpy(a->b + a->n, p, n);
	a->n += n;
}

static void aml_byte(struct aml *a, uint8_t v)
{
	aml_put(a, &v, 1);
}

static void aml_dword(struct aml *a, uint32_t v)
{
	uint8_t d[5] = { 0x0c, v, v >> 8, v >> 16, v >> 24 }; /* DWordPrefix */

	aml_put(a, d, 5);
}

/* Integers the smallest way: ZeroOp, OneOp, BytePrefix, DWordPrefix. */
static void aml_int(struct aml *a, uint32_t v)
{
	if (v <= 1)
		aml_byte(a, v);
	else if (v <= 0xff)
		aml_put(a, (uint8_t[]){ 0x0a, (uint8_t)v }, 2);
	else
		aml_dword(a, v);
}

/* The body from start on becomes op's: op bytes, PkgLength (20.2.4, it counts itself), body. */
static void aml_wrap(struct aml *a, size_t start, const uint8_t *op, size_t oplen)
{
	size_t body = a->n - start, lenlen = body + 1 <= 0x3f ? 1 : body + 2 <= 0xfff ? 2 : 3;
	size_t total = body + lenlen, h = oplen;
	uint8_t hdr[8];

	memcpy(hdr, op, oplen);
	if (lenlen == 1) {
		hdr[h++] = (uint8_t)total;
	} else {
		hdr[h++] = (uint8_t)((lenlen - 1) << 6 | (total & 0xf));
		hdr[h++] = (uint8_t)(total >> 4);
		if (lenlen == 3)
			hdr[h++] = (uint8_t)(total >> 12);
	}
	if (a->n + h <= sizeof(a->b)) {
		memmove(a->b + start + h, a->b + start, body);
		memcpy(a->b + start, hdr, h);
	}
	a->n += h;
}

static void aml_name(struct aml *a, const char seg[4])
{
	aml_byte(a, 0x08); /* NameOp */
	aml_put(a, seg, 4);
}

#define AML_EISA_PNP0A03 0x030ad041 /* EISAID("PNP0A03"): PCI bus */
#define AML_EISA_PNP0A08 0x080ad041 /* EISAID("PNP0A08"): PCI Express root bridge */

/* \_SB.PCI0: the ECAM's host bridge (6.1, 6.2 and 6.2.13 of the specification). */
static void aml_host_bridge(struct aml *a, const struct x86_mp_desc *d)
{
	size_t scope = a->n, dev, crs, prt, e;
	/* _CRS (6.4): bus 0 (Word Address Space, bus), the CF8 ports (IO), the 32-bit window
	 * (DWord Address Space, memory, read-write); all producer, fixed, positive decode */
	uint8_t bus[16] = { 0x88, 13, 0, 2, 0x0c, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1, 0 };
	uint8_t io[8] = { 0x47, 1, X86_PCI_CF8 & 0xff, X86_PCI_CF8 >> 8, X86_PCI_CF8 & 0xff,
			  X86_PCI_CF8 >> 8, 1, 8 };
	uint8_t mem[26] = { 0x87, 23, 0, 0, 0x0c, 1 };
	uint8_t end[2] = { 0x79, 0 };

	put32(mem + 10, (uint32_t)X86_PCI_MMIO32_BASE);
	put32(mem + 14, (uint32_t)(X86_PCI_MMIO32_BASE + X86_PCI_MMIO32_SIZE - 1));
	put32(mem + 22, (uint32_t)X86_PCI_MMIO32_SIZE);
	aml_put(a, "\\_SB_", 5);
	dev = a->n;
	aml_put(a, "PCI0", 4);
	aml_name(a, "_HID");
	aml_dword(a, AML_EISA_PNP0A08);
	aml_name(a, "_CID");
	aml_dword(a, AML_EISA_PNP0A03);
	aml_name(a, "_UID");
	aml_int(a, 0);
	aml_name(a, "_SEG");
	aml_int(a, 0);
	aml_name(a, "_BBN");
	aml_int(a, 0);
	aml_name(a, "_CRS");
	crs = a->n;
	aml_int(a, sizeof(bus) + sizeof(io) + sizeof(mem) + sizeof(end));
	aml_put(a, bus, sizeof(bus));
	aml_put(a, io, sizeof(io));
	aml_put(a, mem, sizeof(mem));
	aml_put(a, end, sizeof(end));
	aml_wrap(a, crs, (const uint8_t[]){ 0x11 }, 1); /* BufferOp */
	/* _PRT (6.2.13): {slot address 0xSSSSFFFF, pin 0 = INTA#, source 0 = a GSI, the GSI} */
	aml_name(a, "_PRT");
	prt = a->n;
	aml_byte(a, (uint8_t)d->nr_intx);
	for (unsigned int i = 0; i < d->nr_intx; i++) {
		e = a->n;
		aml_byte(a, 4);
		aml_dword(a, (uint32_t)d->intx[i].slot << 16 | 0xffff);
		aml_int(a, 0);
		aml_int(a, 0);
		aml_int(a, d->intx[i].ioapic_pin);
		aml_wrap(a, e, (const uint8_t[]){ 0x12 }, 1); /* PackageOp */
	}
	aml_wrap(a, prt, (const uint8_t[]){ 0x12 }, 1);
	aml_wrap(a, dev, (const uint8_t[]){ 0x5b, 0x82 }, 2); /* DeviceOp */
	aml_wrap(a, scope, (const uint8_t[]){ 0x10 }, 1);	  /* ScopeOp */
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

long x86_acpi_build(uint8_t *buf, size_t size, uint64_t gpa, const struct x86_mp_desc *d)
{
	const unsigned int nr_cpus = d->nr_cpus;
	const bool pic = !d->no_pic;
	struct aml aml = { .n = 0 };
	const size_t madt_len = HDR_LEN + 8 + nr_cpus * 8 + 12 + 10 + 6;
	const size_t xsdt_off = 64, fadt_off = xsdt_off + HDR_LEN + 24, madt_off = fadt_off + FADT_LEN;
	const size_t mcfg_off = madt_off + madt_len, dsdt_off = mcfg_off + MCFG_LEN;
	size_t end;
	uint8_t *rsdp = buf, *xsdt = buf + xsdt_off, *fadt = buf + fadt_off;
	uint8_t *madt = buf + madt_off, *mcfg = buf + mcfg_off, *dsdt = buf + dsdt_off, *p;

	if (!nr_cpus || nr_cpus > X86_MAX_VCPUS) {
		pr_err("acpi: %u vCPUs; the MADT describes 1 to %u", nr_cpus, X86_MAX_VCPUS);
		return -EINVAL;
	}
	for (unsigned int i = 0; i < d->nr_intx; i++)
		if (d->intx[i].slot >= 32 || d->intx[i].ioapic_pin >= X86_IOAPIC_PINS) {
			pr_err("acpi: PCI slot %u on IOAPIC pin %u: slots are 0-31, pins 0-%u",
			       d->intx[i].slot, d->intx[i].ioapic_pin, X86_IOAPIC_PINS - 1);
			return -EINVAL;
		}
	aml_put(&aml, dsdt_s5, sizeof(dsdt_s5));
	aml_host_bridge(&aml, d);
	if (aml.n > sizeof(aml.b)) {
		pr_err("acpi: the DSDT needs %zu bytes, vmm builds at most %zu", aml.n, sizeof(aml.b));
		return -ENOSPC;
	}
	end = dsdt_off + HDR_LEN + aml.n;
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

	header(xsdt, "XSDT", HDR_LEN + 24, 1);
	put64(xsdt + HDR_LEN, gpa + fadt_off);
	put64(xsdt + HDR_LEN + 8, gpa + madt_off);
	put64(xsdt + HDR_LEN + 16, gpa + mcfg_off);
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
	/* PCAT_COMPAT says dual 8259s exist: Linux (6.9+) then takes the PIC without probing it, so
	 * a split irqchip, which has none, must leave the flag clear */
	put32(madt + HDR_LEN + 4, pic ? MADT_PCAT_COMPAT : 0);
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

	/* MCFG: the ECAM vmm serves (bus 0 only, segment 0) so Linux uses it for config space
	 * past 256 bytes; e820 reserves the same range, which Linux wants before trusting it */
	header(mcfg, "MCFG", MCFG_LEN, 1);
	put64(mcfg + HDR_LEN + 8, X86_PCI_MMCONFIG_BASE);
	put16(mcfg + HDR_LEN + 16, 0); /* PCI segment group */
	mcfg[HDR_LEN + 18] = 0;	       /* start bus */
	mcfg[HDR_LEN + 19] = (uint8_t)((X86_PCI_MMCONFIG_SIZE >> 20) - 1); /* end bus */
	seal(mcfg);

	header(dsdt, "DSDT", HDR_LEN + aml.n, 2);
	memcpy(dsdt + HDR_LEN, aml.b, aml.n);
	seal(dsdt);
	return (long)end;
}
