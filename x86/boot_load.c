// SPDX-License-Identifier: MIT
/*
 * Loading an x86 guest into its low RAM before the first vCPU runs: the bzImage's kernel where it
 * asks to run, the initrd under the kernel's ceiling, the command line, the zero page, the boot
 * page tables, the MP table and ACPI. Only plain memory: the board hands it the RAM below the
 * hole, so the whole load runs in unit and fuzz tests without KVM.
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "core/log.h"
#include "x86/x86.h"

/* x86 boards need this on every command line: reset through the i8042. PCI config access needs
 * no parameter: the ACPI MCFG table and the e820 reservation let Linux use the ECAM. PCI interrupts
 * route through the DSDT's _PRT (the MP table says the same to a guest booted with acpi=off). */
#define X86_PARAMS "reboot=k "

/* Where [gpa, gpa + len) lies in low RAM, or NULL when it does not (no sum that could wrap). */
static void *ram_at(const struct x86_low_ram *ram, uint64_t gpa, uint64_t len)
{
	if (!ram->hva || gpa >= ram->size || len > ram->size - gpa)
		return NULL;
	return ram->hva + gpa;
}

/* Copies len bytes to gpa (read from f's file when src is a slice of it); every size here came
 * from a file, so a copy that would leave RAM is refused rather than trusted to the checks before
 * it. */
static int copy_in(const struct x86_low_ram *ram, uint64_t gpa, const void *src, uint64_t len,
		   const struct mapped_file *f, const char *what)
{
	uint8_t *dst = ram_at(ram, gpa, len);
	int r;

	if (!dst) {
		pr_err("kernel: the %s (%llu bytes at 0x%llx) does not fit the guest's %llu MiB below "
		       "the MMIO hole; give more with -m", what, (unsigned long long)len,
		       (unsigned long long)gpa, (unsigned long long)(ram->size >> 20));
		return -E2BIG;
	}
	if ((r = vm_mem_load(dst, src, len, f)) < 0)
		pr_err("%s: reading it into guest RAM failed: %s", what,
		       r == -ENODATA ? "the file shrank while vmm loaded it" : strerror(-r));
	return r;
}

int x86_boot_load(const struct x86_low_ram *ram, const struct x86_load_in *in, uint64_t *entry)
{
	struct x86_bzimage img;
	char *cmdline = ram_at(ram, X86_CMDLINE_ADDR, X86_CMDLINE_MAX);
	uint8_t *low = ram_at(ram, 0, X86_LOWMEM_END);
	struct x86_boot_args a = { .ram_size = in->mem_size, .cmdline_gpa = X86_CMDLINE_ADDR,
				   .acpi_rsdp = X86_ACPI_BASE };
	uint64_t top, kend;
	long n;
	int r;

	if (!cmdline || !low || x86_low_ram_end(in->mem_size) > ram->size) {
		pr_err("x86: %llu bytes of low RAM for a %llu MiB guest: the board mapped too little",
		       (unsigned long long)ram->size, (unsigned long long)(in->mem_size >> 20));
		return -EINVAL;
	}
	if ((r = x86_bzimage_parse(in->kernel, in->kernel_len, &img)) < 0)
		return r;
	/* the kernel where it asks to run (it relocates itself from there if it likes), with the
	 * room it says it needs; sizes come from the file, so check before copying, without sums
	 * that could wrap */
	if (__builtin_add_overflow(img.pref_address, (uint64_t)img.init_size, &kend) ||
	    x86_low_ram_end(in->mem_size) < kend) {
		pr_err("-m %lluM is too small for this kernel: it needs RAM up to 0x%llx + 0x%x",
		       (unsigned long long)(in->mem_size >> 20), (unsigned long long)img.pref_address,
		       img.init_size);
		return -E2BIG;
	}
	if ((r = copy_in(ram, img.pref_address, img.kernel, img.kernel_len, in->kernel_file, "kernel")) < 0)
		return r;
	if (in->initrd) {
		/* as high as the kernel allows, above everything the kernel unpacks into */
		top = x86_low_ram_end(in->mem_size);
		if (top > (uint64_t)img.initrd_addr_max + 1)
			top = (uint64_t)img.initrd_addr_max + 1;
		if (in->initrd_len > top || ((top - in->initrd_len) & ~0xfffULL) < kend) {
			pr_err("-m %lluM is too small for this kernel (%u MiB unpacked) and initrd (%zu MiB)",
			       (unsigned long long)(in->mem_size >> 20), img.init_size >> 20,
			       in->initrd_len >> 20);
			return -E2BIG;
		}
		a.initrd_gpa = (top - in->initrd_len) & ~0xfffULL;
		a.initrd_len = in->initrd_len;
		if ((r = copy_in(ram, a.initrd_gpa, in->initrd, a.initrd_len, in->initrd_file, "initrd")) < 0)
			return r;
	}
	n = snprintf(cmdline, X86_CMDLINE_MAX, "%s%s", X86_PARAMS, in->params);
	if (n < 0 || n >= (long)X86_CMDLINE_MAX) {
		pr_err("-p: the command line is longer than %llu bytes", (unsigned long long)X86_CMDLINE_MAX);
		return -E2BIG;
	}
	a.cmdline_len = n;
	if ((r = x86_boot_params_build(low + X86_ZERO_PAGE_ADDR, &img, &a)) < 0 ||
	    (r = x86_longmode_build(low, X86_LOWMEM_END)) < 0)
		return r;
	/* ACPI for the guest (MADT, poweroff); the MP table for one booted with acpi=off */
	n = x86_mptable_build(ram_at(ram, X86_BIOS_BASE, 0x10000), 0x10000, X86_BIOS_BASE, in->mp);
	if (n < 0)
		return (int)n;
	n = x86_acpi_build(ram_at(ram, X86_ACPI_BASE, X86_ACPI_SIZE), X86_ACPI_SIZE, X86_ACPI_BASE,
			   in->mp);
	if (n < 0)
		return (int)n;
	*entry = x86_bzimage_entry64(img.pref_address);
	return 0;
}
