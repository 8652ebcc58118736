// SPDX-License-Identifier: MIT
/* The ACPI tables read back as a guest's ACPI code would: RSDP -> XSDT -> FADT -> DSDT, MADT, MCFG. */
#include <errno.h>
#include <string.h>

#include "kselftest_harness.h"
#include "x86/x86.h"

static uint8_t buf[X86_ACPI_SIZE];

static uint8_t sum(const uint8_t *p, size_t n)
{
	uint8_t s = 0;

	while (n--)
		s += *p++;
	return s;
}

static uint64_t le(const uint8_t *p, int n)
{
	uint64_t v = 0;

	while (n--)
		v = v << 8 | p[n];
	return v;
}

/* The table at gpa, checked: inside buf, its length, its checksum. */
static const uint8_t *table(struct __test_metadata *_metadata, uint64_t gpa, const char *sig)
{
	const uint8_t *t;

	if (gpa < X86_ACPI_BASE || gpa + 36 > X86_ACPI_BASE + sizeof(buf))
		return NULL;
	t = buf + (gpa - X86_ACPI_BASE);
	EXPECT_EQ(0, memcmp(t, sig, 4));
	EXPECT_LE(gpa + le(t + 4, 4), X86_ACPI_BASE + sizeof(buf));
	EXPECT_EQ(0, sum(t, le(t + 4, 4)));
	return t;
}

TEST(tables_for_three_cpus)
{
	long n = x86_acpi_build(buf, sizeof(buf), X86_ACPI_BASE, &(struct x86_mp_desc){ .nr_cpus = 3 });
	const uint8_t *xsdt, *fadt, *madt, *dsdt, *p, *end;
	unsigned int cpus = 0, ioapics = 0, isos = 0, nmis = 0;

	ASSERT_GT(n, 0);
	EXPECT_EQ(0, memcmp(buf, "RSD PTR ", 8));
	EXPECT_EQ(0, sum(buf, 20));
	EXPECT_EQ(0, sum(buf, 36));
	EXPECT_EQ(2, buf[15]);
	xsdt = table(_metadata, le(buf + 24, 8), "XSDT");
	ASSERT_NE(NULL, xsdt);
	ASSERT_EQ(36 + 24, le(xsdt + 4, 4));
	fadt = table(_metadata, le(xsdt + 36, 8), "FACP");
	madt = table(_metadata, le(xsdt + 44, 8), "APIC");
	ASSERT_NE(NULL, fadt);
	ASSERT_NE(NULL, madt);
	/* FADT: DSDT (32 and 64-bit), SCI 9, PM1a blocks where vmm listens, no SMI command */
	EXPECT_EQ(le(fadt + 40, 4), le(fadt + 140, 8));
	dsdt = table(_metadata, le(fadt + 40, 4), "DSDT");
	ASSERT_NE(NULL, dsdt);
	EXPECT_EQ(X86_SCI_IRQ, le(fadt + 46, 2));
	EXPECT_EQ(0, le(fadt + 48, 4));
	EXPECT_EQ(X86_PM1A_EVT, le(fadt + 56, 4));
	EXPECT_EQ(X86_PM1A_CNT, le(fadt + 64, 4));
	EXPECT_EQ(4, fadt[88]);
	EXPECT_EQ(2, fadt[89]);
	/* DSDT: Name(_S5, Package(4){5, 5, 0, 0}) */
	const uint8_t s5[] = { 0x08, '_', 'S', '5', '_', 0x12, 0x08, 0x04, 0x0a, X86_SLP_TYP_S5,
			       0x0a, X86_SLP_TYP_S5, 0x00, 0x00 };
	ASSERT_LT(36 + sizeof(s5), le(dsdt + 4, 4)); /* \\_SB.PCI0 follows */
	EXPECT_EQ(0, memcmp(dsdt + 36, s5, sizeof(s5)));
	/* MADT: LAPIC address, PC-AT compatible, 3 enabled CPUs 0..2, the IOAPIC after them */
	EXPECT_EQ(X86_LAPIC_BASE, le(madt + 36, 4));
	EXPECT_EQ(1, le(madt + 40, 4));
	end = madt + le(madt + 4, 4);
	for (p = madt + 44; p < end; p += p[1]) {
		ASSERT_GT(p[1], 0);
		switch (p[0]) {
		case 0:
			EXPECT_EQ(cpus, p[3]);
			EXPECT_EQ(1, le(p + 4, 4));
			cpus++;
			break;
		case 1:
			EXPECT_EQ(3, p[2]);
			EXPECT_EQ(X86_IOAPIC_BASE, le(p + 4, 4));
			EXPECT_EQ(0, le(p + 8, 4));
			ioapics++;
			break;
		case 2:
			EXPECT_EQ(X86_SCI_IRQ, p[3]);
			EXPECT_EQ(X86_SCI_IRQ, le(p + 4, 4));
			EXPECT_EQ(0xd, le(p + 8, 2));
			isos++;
			break;
		case 4:
			EXPECT_EQ(0xff, p[2]);
			EXPECT_EQ(1, p[5]);
			nmis++;
			break;
		default:
			ASSERT_TRUE(false) TH_LOG("MADT entry type %u", p[0]);
		}
	}
	EXPECT_EQ(end, p);
	EXPECT_EQ(3, cpus);
	EXPECT_EQ(1, ioapics);
	EXPECT_EQ(1, isos);
	EXPECT_EQ(1, nmis);
	/* everything lies in the area the e820 map keeps from the kernel */
	EXPECT_LE(X86_ACPI_BASE + n, X86_BIOS_BASE);
}

/* AML's PkgLength (20.2.4): the length it encodes (counting itself); *hdr gets its own size. */
static size_t pkglen(const uint8_t *p, size_t *hdr)
{
	unsigned int extra = p[0] >> 6;

	*hdr = extra + 1;
	if (!extra)
		return p[0] & 0x3f;
	return (p[0] & 0xf) | (size_t)p[1] << 4 | (extra > 1 ? (size_t)p[2] << 12 : 0);
}

static const uint8_t *find(const uint8_t *p, const uint8_t *end, const char *s, size_t n)
{
	for (; p + n <= end; p++)
		if (!memcmp(p, s, n))
			return p;
	return NULL;
}

/* The DSDT's host bridge, read as an AML interpreter would, and its _PRT against the MP table's
 * PCI entries built from the same description. */
TEST(host_bridge_prt_matches_the_mp_table)
{
	static uint8_t mp[4096];
	const struct x86_mp_intx intx[] = { { 1, 17 }, { 2, 18 }, { 5, 21 } };
	const struct x86_mp_desc d = { .nr_cpus = 2, .intx = intx, .nr_intx = 3, .no_pic = true };
	long n = x86_acpi_build(buf, sizeof(buf), X86_ACPI_BASE, &d);
	const uint8_t *xsdt, *fadt, *dsdt, *end, *p, *mpc;
	size_t h, len;
	unsigned int found[32] = { 0 }, mp_pci = 0;

	ASSERT_GT(n, 0);
	xsdt = table(_metadata, le(buf + 24, 8), "XSDT");
	ASSERT_NE(NULL, xsdt);
	fadt = table(_metadata, le(xsdt + 36, 8), "FACP");
	ASSERT_NE(NULL, fadt);
	dsdt = table(_metadata, le(fadt + 40, 4), "DSDT");
	ASSERT_NE(NULL, dsdt);
	end = dsdt + le(dsdt + 4, 4);
	/* Scope (\_SB) { Device (PCI0) { ... } }, each PkgLength reaching the table's end */
	p = find(dsdt + 36, end, "\\_SB_", 5);
	ASSERT_NE(NULL, p);
	for (h = 1; h <= 3 && !(p[-1 - h] == 0x10 && p - h + pkglen(p - h, &len) == end); h++)
		;
	ASSERT_LE(h, 3) TH_LOG("ScopeOp's PkgLength does not cover the rest of the DSDT");
	p = find(p, end, "\x5b\x82", 2);
	ASSERT_NE(NULL, p);
	len = pkglen(p + 2, &h);
	EXPECT_EQ(end, p + 2 + len);
	EXPECT_EQ(0, memcmp(p + 2 + h, "PCI0", 4));
	p = find(p, end, "_HID\x0c", 5);
	ASSERT_NE(NULL, p);
	EXPECT_EQ(0x080ad041, le(p + 5, 4)); /* PNP0A08 */
	p = find(dsdt, end, "_CRS\x11", 5);
	ASSERT_NE(NULL, p);
	len = pkglen(p + 5, &h);
	const uint8_t *crs = p + 5 + h + 2, *mem = find(crs, p + 5 + len, "\x87\x17\x00\x00", 4);

	ASSERT_NE(NULL, mem); /* DWord memory: the 32-bit window */
	EXPECT_EQ(X86_PCI_MMIO32_BASE, le(mem + 10, 4));
	EXPECT_EQ(X86_PCI_MMIO32_BASE + X86_PCI_MMIO32_SIZE - 1, le(mem + 14, 4));
	EXPECT_EQ(0x79, p[5 + len - 2]); /* End tag closes the buffer */
	p = find(dsdt, end, "_PRT\x12", 5);
	ASSERT_NE(NULL, p);
	len = pkglen(p + 5, &h);
	const uint8_t *prt_end = p + 5 + len;

	ASSERT_EQ(3, p[5 + h]);
	p += 5 + h + 1;
	for (unsigned int i = 0; i < 3; i++) {
		ASSERT_EQ(0x12, p[0]);
		len = pkglen(p + 1, &h);
		const uint8_t *e = p + 1 + h;

		ASSERT_EQ(4, e[0]);
		ASSERT_EQ(0x0c, e[1]);
		EXPECT_EQ(0xffff, le(e + 2, 2)); /* any function */
		EXPECT_EQ(0, e[6]);		 /* INTA# */
		EXPECT_EQ(0, e[7]);		 /* source 0: the next is a GSI */
		ASSERT_EQ(0x0a, e[8]);
		found[le(e + 4, 2) & 31] = e[9];
		p += 1 + len;
	}
	EXPECT_EQ(prt_end, p);
	/* the MP table of the same board gives every slot the same pin */
	ASSERT_GT(x86_mptable_build(mp, sizeof(mp), X86_BIOS_BASE, &d), 0);
	mpc = mp + 16;
	p = mpc + 44;
	for (unsigned int i = 0; i < le(mpc + 34, 2); i++) {
		if (p[0] == 3 && p[4] == 0) { /* I/O interrupt from bus 0 (PCI) */
			EXPECT_EQ(found[p[5] >> 2], p[7]) TH_LOG("slot %u", p[5] >> 2);
			mp_pci++;
		}
		p += p[0] == 0 ? 20 : 8;
	}
	EXPECT_EQ(3, mp_pci);
	for (unsigned int i = 0; i < 3; i++)
		EXPECT_EQ(intx[i].ioapic_pin, found[intx[i].slot]);
}

/* The split irqchip has no 8259s: the MADT must not claim them (Linux would skip probing). */
TEST(split_irqchip_is_not_pc_at_compatible)
{
	long n = x86_acpi_build(buf, sizeof(buf), X86_ACPI_BASE, &(struct x86_mp_desc){ .nr_cpus = 2, .no_pic = true });
	const uint8_t *xsdt, *madt;

	ASSERT_GT(n, 0);
	xsdt = table(_metadata, le(buf + 24, 8), "XSDT");
	ASSERT_NE(NULL, xsdt);
	madt = table(_metadata, le(xsdt + 44, 8), "APIC");
	ASSERT_NE(NULL, madt);
	EXPECT_EQ(0, le(madt + 40, 4));
}

TEST(refusals)
{
	long n = x86_acpi_build(buf, sizeof(buf), X86_ACPI_BASE, &(struct x86_mp_desc){ .nr_cpus = X86_MAX_VCPUS });

	ASSERT_GT(n, 0);
	EXPECT_EQ(-ENOSPC, x86_acpi_build(buf, n - 1, X86_ACPI_BASE, &(struct x86_mp_desc){ .nr_cpus = X86_MAX_VCPUS }));
	EXPECT_EQ(-EINVAL, x86_acpi_build(buf, sizeof(buf), X86_ACPI_BASE, &(struct x86_mp_desc){ .nr_cpus = 0 }));
	EXPECT_EQ(-EINVAL, x86_acpi_build(buf, sizeof(buf), X86_ACPI_BASE, &(struct x86_mp_desc){ .nr_cpus = X86_MAX_VCPUS + 1 }));
	EXPECT_EQ(-EINVAL, x86_acpi_build(buf, sizeof(buf), X86_ACPI_BASE + 4, &(struct x86_mp_desc){ .nr_cpus = 1 }));
}

/* MCFG: the XSDT's third entry; one allocation, the ECAM vmm serves and e820 reserves. */
TEST(mcfg_describes_the_ecam)
{
	long n = x86_acpi_build(buf, sizeof(buf), X86_ACPI_BASE, &(struct x86_mp_desc){ .nr_cpus = 1 });
	const uint8_t *xsdt, *mcfg;

	ASSERT_GT(n, 0);
	xsdt = table(_metadata, le(buf + 24, 8), "XSDT");
	ASSERT_NE(NULL, xsdt);
	ASSERT_EQ(3, (le(xsdt + 4, 4) - 36) / 8);
	mcfg = table(_metadata, le(xsdt + 52, 8), "MCFG");
	ASSERT_NE(NULL, mcfg);
	EXPECT_EQ(36 + 8 + 16, le(mcfg + 4, 4));
	EXPECT_EQ(1, mcfg[8]);
	EXPECT_EQ(0, le(mcfg + 36, 8)); /* reserved */
	EXPECT_EQ(X86_PCI_MMCONFIG_BASE, le(mcfg + 44, 8));
	EXPECT_EQ(0, le(mcfg + 52, 2)); /* segment */
	EXPECT_EQ(0, mcfg[54]);		/* start bus */
	/* end bus: the ECAM has 1 MiB per bus */
	EXPECT_EQ(X86_PCI_MMCONFIG_SIZE, ((uint64_t)mcfg[55] + 1 - mcfg[54]) << 20);
	EXPECT_EQ(0, le(mcfg + 56, 4)); /* reserved */
	/* within the tables vmm wrote, and the checksum covers what the guest reads */
	EXPECT_LE(le(xsdt + 52, 8) + 60, X86_ACPI_BASE + (uint64_t)n);
}

TEST_HARNESS_MAIN
