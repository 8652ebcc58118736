// SPDX-License-Identifier: MIT
/* The ACPI tables read back as a guest's ACPI code would: RSDP -> XSDT -> FADT -> DSDT, MADT. */
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
	long n = x86_acpi_build(buf, sizeof(buf), X86_ACPI_BASE, 3);
	const uint8_t *xsdt, *fadt, *madt, *dsdt, *p, *end;
	unsigned int cpus = 0, ioapics = 0, isos = 0, nmis = 0;

	ASSERT_GT(n, 0);
	EXPECT_EQ(0, memcmp(buf, "RSD PTR ", 8));
	EXPECT_EQ(0, sum(buf, 20));
	EXPECT_EQ(0, sum(buf, 36));
	EXPECT_EQ(2, buf[15]);
	xsdt = table(_metadata, le(buf + 24, 8), "XSDT");
	ASSERT_NE(NULL, xsdt);
	ASSERT_EQ(36 + 16, le(xsdt + 4, 4));
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
	ASSERT_EQ(36 + sizeof(s5), le(dsdt + 4, 4));
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

TEST(refusals)
{
	long n = x86_acpi_build(buf, sizeof(buf), X86_ACPI_BASE, X86_MAX_VCPUS);

	ASSERT_GT(n, 0);
	EXPECT_EQ(-ENOSPC, x86_acpi_build(buf, n - 1, X86_ACPI_BASE, X86_MAX_VCPUS));
	EXPECT_EQ(-EINVAL, x86_acpi_build(buf, sizeof(buf), X86_ACPI_BASE, 0));
	EXPECT_EQ(-EINVAL, x86_acpi_build(buf, sizeof(buf), X86_ACPI_BASE, X86_MAX_VCPUS + 1));
	EXPECT_EQ(-EINVAL, x86_acpi_build(buf, sizeof(buf), X86_ACPI_BASE + 4, 1));
}

TEST_HARNESS_MAIN
