// SPDX-License-Identifier: MIT
/* The 64-bit boot state's tables, walked as the MMU would, and config mechanism #1 onto ECAM. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "kselftest_harness.h"
#include "x86/x86.h"

#define LOW_LEN 0x10000

static uint64_t get64(const uint8_t *p)
{
	uint64_t v;

	memcpy(&v, p, 8);
	return v;
}

/* A 4-level walk (SDM 4.5) of va through tables in low; -1 if not present. */
static int64_t walk(const uint8_t *low, uint64_t va)
{
	uint64_t e = X86_PML4_ADDR;
	int shift[] = { 39, 30, 21 };

	for (int l = 0; l < 3; l++) {
		uint64_t table = e & 0x000ffffffffff000ULL;

		if (table + 4096 > LOW_LEN)
			return -1;
		e = get64(low + table + ((va >> shift[l]) & 511) * 8);
		if (!(e & 1) || !(e & 2))
			return -1;
		if (l == 2) /* a 2 MiB page must have PS */
			return (e & 0x80) ? (int64_t)((e & 0x000fffffffe00000ULL) | (va & 0x1fffff)) : -1;
		if (e & 0x80)
			return -1; /* no 1 GiB pages expected */
	}
	return -1;
}

TEST(identity_map_of_4g)
{
	uint8_t *low = calloc(1, LOW_LEN);
	uint64_t probes[] = { 0, X86_ZERO_PAGE_ADDR, X86_CMDLINE_ADDR, 0x1000000 + 0x200,
			      0x3fffffff, 0x40000000, X86_PCI_MMIO32_BASE, X86_IOAPIC_BASE,
			      X86_LAPIC_BASE + 0x300, 0xffffffff };

	ASSERT_EQ(0, x86_longmode_build(low, LOW_LEN));
	for (size_t n = 0; n < sizeof(probes) / sizeof(probes[0]); n++) {
		TH_LOG("va 0x%lx", (long)probes[n]);
		EXPECT_EQ((int64_t)probes[n], walk(low, probes[n]));
	}
	EXPECT_EQ(-1, walk(low, X86_4G)); /* not mapped: nothing the boot needs lies there */
	/* the tables live in RAM the e820 map gives the kernel, below the EBDA */
	EXPECT_LT(X86_PD_ADDR + 4 * 4096, X86_CMDLINE_ADDR);
	EXPECT_LE(X86_CMDLINE_ADDR + X86_CMDLINE_MAX, X86_LOWMEM_END);
	free(low);
}

TEST(gdt_segments)
{
	uint8_t *low = calloc(1, LOW_LEN);
	uint64_t cs, ds;

	ASSERT_EQ(0, x86_longmode_build(low, LOW_LEN));
	EXPECT_EQ(0, get64(low + X86_GDT_ADDR));
	cs = get64(low + X86_GDT_ADDR + X86_BOOT_CS);
	ds = get64(low + X86_GDT_ADDR + X86_BOOT_DS);
	/* code: present, S=1, type 0xb (execute/read, accessed), L=1, D=0, G=1 */
	EXPECT_EQ(1, (cs >> 47) & 1);
	EXPECT_EQ(1, (cs >> 44) & 1);
	EXPECT_EQ(0xb, (cs >> 40) & 0xf);
	EXPECT_EQ(1, (cs >> 53) & 1);
	EXPECT_EQ(0, (cs >> 54) & 1);
	EXPECT_EQ(1, (cs >> 55) & 1);
	EXPECT_EQ(0, (cs >> 45) & 3); /* DPL 0 */
	/* data: present, type 3 (read/write, accessed), D/B=1, base 0, limit 0xfffff pages */
	EXPECT_EQ(1, (ds >> 47) & 1);
	EXPECT_EQ(3, (ds >> 40) & 0xf);
	EXPECT_EQ(1, (ds >> 54) & 1);
	EXPECT_EQ(0xffff, ds & 0xffff);
	EXPECT_EQ(0xf, (ds >> 48) & 0xf);
	EXPECT_EQ(0, (ds >> 16) & 0xffffff);
	EXPECT_EQ(-EINVAL, x86_longmode_build(low, 0x8000));
	free(low);
}

TEST(cf8_to_ecam)
{
	uint64_t off = 0;
	/* enable, bus 0, device 3, function 1, register 0x10 */
	uint32_t cf8 = 0x80000000u | 3 << 11 | 1 << 8 | 0x10;

	ASSERT_TRUE(x86_cf8_to_ecam(cf8, 0xcfc, 4, &off));
	EXPECT_EQ(3 << 15 | 1 << 12 | 0x10, off);
	ASSERT_TRUE(x86_cf8_to_ecam(cf8, 0xcfe, 2, &off)); /* the upper word */
	EXPECT_EQ(3 << 15 | 1 << 12 | 0x12, off);
	ASSERT_TRUE(x86_cf8_to_ecam(cf8 | 3, 0xcff, 1, &off)); /* bits 1:0 are not address */
	EXPECT_EQ(3 << 15 | 1 << 12 | 0x13, off);
	ASSERT_TRUE(x86_cf8_to_ecam(0x80000000u | 31 << 11 | 7 << 8 | 0xfc, 0xcfc, 4, &off));
	EXPECT_EQ(0xff0fc, off); /* mechanism #1 reaches the first 256 bytes of each 4 KiB */
	EXPECT_FALSE(x86_cf8_to_ecam(cf8 & ~0x80000000u, 0xcfc, 4, &off)); /* disabled */
	EXPECT_FALSE(x86_cf8_to_ecam(cf8 | 1 << 16, 0xcfc, 4, &off));      /* bus 1 */
	EXPECT_FALSE(x86_cf8_to_ecam(cf8, 0xcfe, 4, &off));               /* crosses the dword */
	EXPECT_FALSE(x86_cf8_to_ecam(cf8, 0xcfb, 1, &off));               /* not a data port */
	EXPECT_FALSE(x86_cf8_to_ecam(cf8, 0xcfc, 0, &off));
}

/* The reset state is told apart from a guest that runs anywhere else: its own entry state and a
 * real-mode guest elsewhere are not it. */
TEST(reset_state_is_rip_fff0_in_cs_f000_at_ffff0000_protection_off)
{
	EXPECT_TRUE(x86_regs_are_reset_state(0xfff0, 0xf000, 0xffff0000, 0x60000010));
	EXPECT_FALSE(x86_regs_are_reset_state(0xfff0, 0xf000, 0xffff0000, 0x80050033)); /* PE, PG */
	EXPECT_FALSE(x86_regs_are_reset_state(0x1000000, X86_BOOT_CS, 0, 0x80050033));
	EXPECT_FALSE(x86_regs_are_reset_state(0xfff0, 0, 0, 0x10));   /* real mode at 0xfff0 */
	EXPECT_FALSE(x86_regs_are_reset_state(0xfff1, 0xf000, 0xffff0000, 0x60000010));
}

TEST_HARNESS_MAIN
