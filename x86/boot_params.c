// SPDX-License-Identifier: MIT
/*
 * The zero page (struct boot_params) a 64-bit boot loader hands the kernel in %rsi: the image's
 * own setup header copied in (boot.rst: "copy the setup header ... into boot_params"), then the
 * fields a loader owns: type_of_loader, the command line and initrd pointers, and the e820 map.
 */
#include <errno.h>
#include <string.h>

#include <asm/bootparam.h>
#include <asm/e820.h>

#include "core/log.h"
#include "x86/x86.h"

_Static_assert(sizeof(struct boot_params) == X86_ZERO_PAGE_SIZE, "boot_params is one page");
_Static_assert(X86_E820_RAM == E820_RAM && X86_E820_RESERVED == E820_RESERVED, "e820 types");

/* boot.rst: 0xff is "undefined" loader; a loader without an assigned ID uses it. */
#define LOADER_UNDEFINED 0xff

static void add(struct x86_e820_entry *out, unsigned int *n, uint64_t addr, uint64_t end,
		uint32_t type)
{
	if (end > addr)
		out[(*n)++] = (struct x86_e820_entry){ .addr = addr, .size = end - addr, .type = type };
}

unsigned int x86_e820_build(uint64_t ram_size, struct x86_e820_entry out[X86_E820_MAX])
{
	struct x86_ram_range ram[X86_RAM_RANGES];
	int nr = x86_ram_plan(ram_size, ram);
	unsigned int n = 0;

	if (nr < 1) /* the board refused this size before building any table */
		return 0;
	add(out, &n, 0, X86_LOWMEM_END, X86_E820_RAM);
	/* EBDA, VGA and the BIOS area: the MP table lives in it, so the kernel must not take it. */
	add(out, &n, X86_LOWMEM_END, X86_HIGHMEM_BASE, X86_E820_RESERVED);
	add(out, &n, X86_HIGHMEM_BASE, ram[0].size, X86_E820_RAM);
	/* Linux trusts MMCONFIG only where the firmware reserved it. */
	add(out, &n, X86_PCI_MMCONFIG_BASE, X86_PCI_MMCONFIG_BASE + X86_PCI_MMCONFIG_SIZE,
	    X86_E820_RESERVED);
	for (int i = 1; i < nr; i++)
		add(out, &n, ram[i].gpa, ram[i].gpa + ram[i].size, X86_E820_RAM);
	return n;
}

int x86_boot_params_build(uint8_t zero_page[X86_ZERO_PAGE_SIZE], const struct x86_bzimage *img,
			  const struct x86_boot_args *a)
{
	const size_t hdr_off = offsetof(struct boot_params, hdr);
	struct x86_e820_entry map[X86_E820_MAX];
	struct boot_params bp;
	unsigned int n;
	size_t hdr_len;
	uint64_t end;

	if (a->cmdline_len > img->cmdline_size) {
		pr_err("kernel: the command line has %zu bytes but this kernel takes at most %u; "
		       "shorten -p", a->cmdline_len, img->cmdline_size);
		return -EINVAL;
	}
	if (a->initrd_len && a->initrd_gpa + a->initrd_len - 1 > img->initrd_addr_max) {
		pr_err("kernel: the initrd would end at 0x%llx, above the kernel's initrd_addr_max "
		       "0x%x", (unsigned long long)(a->initrd_gpa + a->initrd_len - 1),
		       img->initrd_addr_max);
		return -EINVAL;
	}
	if (a->cmdline_gpa + a->cmdline_len >= X86_4G || a->initrd_gpa + a->initrd_len > X86_4G) {
		pr_err("kernel: command line and initrd must lie below 4 GiB");
		return -EINVAL;
	}
	if (__builtin_add_overflow(img->pref_address, (uint64_t)img->init_size, &end) ||
	    x86_low_ram_end(a->ram_size) < end) {
		pr_err("kernel: it needs RAM up to 0x%llx (pref_address + init_size) but the guest has "
		       "%llu MiB; give more with -m", (unsigned long long)end,
		       (unsigned long long)(a->ram_size >> 20));
		return -EINVAL;
	}
	memset(&bp, 0, sizeof(bp));
	/* The header runs from 0x1f1 to 0x202 + the byte at 0x201 (the jump's offset), boot.rst's
	 * rule for how much of it the image defines; never past what the file has. */
	hdr_len = 0x202 + img->setup[0x201] - hdr_off;
	if (hdr_len > sizeof(bp.hdr))
		hdr_len = sizeof(bp.hdr);
	memcpy(&bp.hdr, img->setup + hdr_off, hdr_len);
	bp.hdr.type_of_loader = LOADER_UNDEFINED;
	/* No real-mode code runs: no heap, and the kernel keeps the segments we set. */
	bp.hdr.loadflags &= ~(CAN_USE_HEAP | QUIET_FLAG);
	bp.hdr.cmd_line_ptr = (uint32_t)a->cmdline_gpa;
	bp.ext_cmd_line_ptr = 0;
	bp.hdr.ramdisk_image = a->initrd_len ? (uint32_t)a->initrd_gpa : 0;
	bp.hdr.ramdisk_size = (uint32_t)a->initrd_len;
	bp.hdr.code32_start = (uint32_t)img->pref_address;
	bp.acpi_rsdp_addr = a->acpi_rsdp; /* 2.14+: saves the kernel its scan of the BIOS area */
	n = x86_e820_build(a->ram_size, map);
	if (!n)
		return -EINVAL; /* x86_ram_plan said why */
	for (unsigned int i = 0; i < n; i++) {
		bp.e820_table[i].addr = map[i].addr;
		bp.e820_table[i].size = map[i].size;
		bp.e820_table[i].type = map[i].type;
	}
	bp.e820_entries = n;
	memcpy(zero_page, &bp, sizeof(bp));
	return 0;
}
