// SPDX-License-Identifier: MIT
/*
 * The state Linux's 64-bit boot protocol expects at its entry (boot.rst): long mode with paging,
 * identity page tables over the kernel, zero page and command line, and a GDT whose __BOOT_CS is
 * a 64-bit code segment and __BOOT_DS a data segment. vmm maps the first 4 GiB with 2 MiB pages,
 * so every RAM address below the hole, and the MMIO above it, is mapped.
 */
#include <asm/processor-flags.h>
#include <errno.h>
#include <string.h>

#include "core/log.h"
#include "x86/x86.h"

/* Page-table entry bits (Intel SDM vol. 3, 4.5): present, writable, 2 MiB page. */
#define PTE_P (1ULL << 0)
#define PTE_RW (1ULL << 1)
#define PTE_PS (1ULL << 7)
#define PAGE_2M (2ULL << 20)

/* Segment descriptors (SDM vol. 3, 3.4.5): flat 4 GiB, granularity 4 KiB, present, DPL 0;
 * code: execute/read, accessed, L=1 (64-bit); data: read/write, accessed, D/B=1. */
#define GDT_CODE64 0x00af9b000000ffffULL
#define GDT_DATA 0x00cf93000000ffffULL

static void put64(uint8_t *p, uint64_t v)
{
	memcpy(p, &v, 8); /* x86 guests are little-endian, as are the hosts vmm builds for */
}

int x86_longmode_build(uint8_t *low, size_t low_len)
{
	if (low_len < X86_PD_ADDR + 4 * 4096) {
		pr_err("x86: %zu bytes of low RAM cannot hold the boot page tables", low_len);
		return -EINVAL;
	}
	memset(low + X86_GDT_ADDR, 0, X86_GDT_ENTRIES * 8);
	put64(low + X86_GDT_ADDR + X86_BOOT_CS, GDT_CODE64);
	put64(low + X86_GDT_ADDR + X86_BOOT_DS, GDT_DATA);

	memset(low + X86_PML4_ADDR, 0, 4096);
	memset(low + X86_PDPT_ADDR, 0, 4096);
	put64(low + X86_PML4_ADDR, X86_PDPT_ADDR | PTE_P | PTE_RW);
	for (uint64_t g = 0; g < 4; g++) {
		uint8_t *pd = low + X86_PD_ADDR + g * 4096;

		put64(low + X86_PDPT_ADDR + g * 8, (X86_PD_ADDR + g * 4096) | PTE_P | PTE_RW);
		for (uint64_t i = 0; i < 512; i++)
			put64(pd + i * 8, ((g << 30) + i * PAGE_2M) | PTE_P | PTE_RW | PTE_PS);
	}
	return 0;
}

bool x86_regs_are_reset_state(uint64_t rip, uint16_t cs_selector, uint64_t cs_base, uint64_t cr0)
{
	/* what INIT and RESET load (SDM vol. 3, 10.1.1): CS 0xf000 based at 0xffff0000, RIP 0xfff0 */
	return rip == 0xfff0 && cs_selector == 0xf000 && cs_base == 0xffff0000 && !(cr0 & X86_CR0_PE);
}
