// SPDX-License-Identifier: MIT
/* The MP table: read back entry by entry as a guest's MP parser would (MP spec 1.4, ch. 4). */
#include <errno.h>
#include <string.h>

#include "kselftest_harness.h"
#include "x86/x86.h"

static uint8_t sum(const uint8_t *p, size_t n)
{
	uint8_t s = 0;

	while (n--)
		s += *p++;
	return s;
}

static uint32_t le32(const uint8_t *p)
{
	return p[0] | p[1] << 8 | p[2] << 16 | (uint32_t)p[3] << 24;
}

static uint16_t le16(const uint8_t *p)
{
	return p[0] | p[1] << 8;
}

/* Entry sizes by type: processor 20, the rest 8. */
static size_t entry_len(uint8_t type)
{
	return type == 0 ? 20 : 8;
}

TEST(four_cpus_two_pci_slots)
{
	static uint8_t buf[4096];
	const uint64_t gpa = X86_BIOS_BASE;
	struct x86_mp_intx intx[] = { { 1, 17 }, { 2, 18 } };
	struct x86_mp_desc d = { .nr_cpus = 4, .intx = intx, .nr_intx = 2 };
	long n = x86_mptable_build(buf, sizeof(buf), gpa, &d);
	unsigned int cpus = 0, bsp = 0, buses = 0, ioapics = 0, isa = 0, pci = 0, lint = 0;
	const uint8_t *mpc, *p;
	uint16_t count;
	uint8_t ioapic_id = 0xee;

	ASSERT_GT(n, 0);
	/* floating pointer: "_MP_", physptr, 1 paragraph, rev 1.4, sums to 0, table present */
	EXPECT_EQ(0, memcmp(buf, "_MP_", 4));
	EXPECT_EQ(gpa + 16, le32(buf + 4));
	EXPECT_EQ(1, buf[8]);
	EXPECT_EQ(4, buf[9]);
	EXPECT_EQ(0, sum(buf, 16));
	EXPECT_EQ(0, buf[11]);
	mpc = buf + (le32(buf + 4) - gpa);
	EXPECT_EQ(0, memcmp(mpc, "PCMP", 4));
	EXPECT_EQ(n - 16, le16(mpc + 4));
	EXPECT_EQ(0, sum(mpc, le16(mpc + 4)));
	EXPECT_EQ(X86_LAPIC_BASE, le32(mpc + 36));
	count = le16(mpc + 34);
	/* 4 CPUs, 2 buses, 1 IOAPIC, 16 ISA, 2 PCI, 2 local */
	EXPECT_EQ(27, count);
	p = mpc + 44;
	for (unsigned int i = 0; i < count; i++) {
		ASSERT_LT(p - buf, n);
		switch (p[0]) {
		case 0:
			EXPECT_EQ(cpus, p[1]); /* APIC IDs in order */
			EXPECT_TRUE(p[3] & 1); /* enabled */
			if (p[3] & 2) {
				bsp++;
				EXPECT_EQ(0, p[1]);
			}
			cpus++;
			break;
		case 1:
			EXPECT_EQ(0, memcmp(p + 2, buses ? "ISA   " : "PCI   ", 6));
			EXPECT_EQ(buses, p[1]);
			buses++;
			break;
		case 2:
			ioapic_id = p[1];
			EXPECT_EQ(1, p[3] & 1);
			EXPECT_EQ(X86_IOAPIC_BASE, le32(p + 4));
			ioapics++;
			break;
		case 3:
			EXPECT_EQ(ioapic_id, p[6]);
			if (p[4] == 1) { /* ISA: identity pins, bus-default flags */
				EXPECT_EQ(isa, p[5]);
				EXPECT_EQ(isa, p[7]);
				EXPECT_EQ(0, le16(p + 2));
				isa++;
			} else { /* PCI: INTA# of slot 1/2 on pins 17/18, level, active low */
				EXPECT_EQ(0, p[4]);
				EXPECT_EQ(intx[pci].slot << 2, p[5]);
				EXPECT_EQ(intx[pci].ioapic_pin, p[7]);
				EXPECT_EQ(0xf, le16(p + 2));
				pci++;
			}
			break;
		case 4:
			EXPECT_EQ(0xff, p[6]);
			EXPECT_EQ(lint, p[7]); /* LINT0 ExtINT (3), LINT1 NMI (1) */
			EXPECT_EQ(lint ? 1 : 3, p[1]);
			lint++;
			break;
		default:
			ASSERT_TRUE(false) TH_LOG("entry %u has type %u", i, p[0]);
		}
		p += entry_len(p[0]);
	}
	EXPECT_EQ(n, p - buf);
	EXPECT_EQ(4, cpus);
	EXPECT_EQ(1, bsp);
	EXPECT_EQ(2, buses);
	EXPECT_EQ(1, ioapics);
	EXPECT_EQ(4, ioapic_id); /* after the CPUs' APIC IDs */
	EXPECT_EQ(16, isa);
	EXPECT_EQ(2, pci);
	EXPECT_EQ(2, lint);
}

/* The split irqchip: no PIC behind LINT0, so only the NMI entry on LINT1 is left. */
TEST(no_pic_no_extint)
{
	static uint8_t buf[4096];
	struct x86_mp_desc d = { .nr_cpus = 2, .no_pic = true };
	long n = x86_mptable_build(buf, sizeof(buf), X86_BIOS_BASE, &d);
	const uint8_t *mpc = buf + 16, *p;
	unsigned int lint = 0;

	ASSERT_GT(n, 0);
	EXPECT_EQ(0, sum(mpc, le16(mpc + 4)));
	EXPECT_EQ(2 + 2 + 1 + 16 + 1, le16(mpc + 34));
	p = mpc + 44;
	for (unsigned int i = 0; i < le16(mpc + 34); i++) {
		if (p[0] == 4) {
			EXPECT_EQ(1, p[1]); /* NMI */
			EXPECT_EQ(1, p[7]); /* LINT1 */
			lint++;
		}
		p += entry_len(p[0]);
	}
	EXPECT_EQ(n, p - buf);
	EXPECT_EQ(1, lint);
}

TEST(limits_and_refusals)
{
	static uint8_t buf[8192];
	struct x86_mp_intx bad_pin = { 1, 5 }, bad_slot = { 32, 16 };
	struct x86_mp_desc d = { .nr_cpus = X86_MAX_VCPUS };
	long n = x86_mptable_build(buf, sizeof(buf), X86_BIOS_BASE, &d);

	ASSERT_GT(n, 0);
	EXPECT_EQ(16 + 44 + 20 * X86_MAX_VCPUS + 8 * (2 + 1 + 16 + 2), n);
	EXPECT_EQ(0, sum(buf + 16, n - 16));
	EXPECT_EQ(-ENOSPC, x86_mptable_build(buf, n - 1, X86_BIOS_BASE, &d));
	d.nr_cpus = 0;
	EXPECT_EQ(-EINVAL, x86_mptable_build(buf, sizeof(buf), X86_BIOS_BASE, &d));
	d.nr_cpus = X86_MAX_VCPUS + 1;
	EXPECT_EQ(-EINVAL, x86_mptable_build(buf, sizeof(buf), X86_BIOS_BASE, &d));
	d.nr_cpus = 2;
	EXPECT_EQ(-EINVAL, x86_mptable_build(buf, sizeof(buf), X86_BIOS_BASE + 8, &d));
	d.intx = &bad_pin;
	d.nr_intx = 1;
	EXPECT_EQ(-EINVAL, x86_mptable_build(buf, sizeof(buf), X86_BIOS_BASE, &d));
	d.intx = &bad_slot;
	EXPECT_EQ(-EINVAL, x86_mptable_build(buf, sizeof(buf), X86_BIOS_BASE, &d));
}

TEST_HARNESS_MAIN
