// SPDX-License-Identifier: MIT
/*
 * Guest RAM around the PCI hole below 4 GiB: RAM runs from 0 up to X86_MMIO_HOLE, and what does
 * not fit there continues at 4 GiB, so the PCI window, the ECAM, the IOAPIC, the local APICs and
 * KVM's TSS pages never overlap RAM. One memslot per range; the e820 map (boot_params.c) is built
 * from the same plan so the two cannot disagree.
 */
#include <errno.h>

#include "core/log.h"
#include "x86/x86.h"

int x86_ram_plan(uint64_t ram_size, struct x86_ram_range out[X86_RAM_RANGES])
{
	uint64_t low = ram_size < X86_MMIO_HOLE ? ram_size : X86_MMIO_HOLE;
	int n = 0;

	if (!ram_size || ram_size & 0xfff) {
		pr_err("-m: x86 guest RAM must be a non-zero multiple of 4 KiB, not %llu bytes",
		       (unsigned long long)ram_size);
		return -EINVAL;
	}
	/* RAM above 4 GiB must end where the guest can still address it (CPUID 0x80000008 says
	 * how far; 52 bits is the architectural limit). */
	if (ram_size - low > X86_MAX_PHYS - X86_4G) {
		pr_err("-m %lluM: more RAM than an x86 guest can address", (unsigned long long)(ram_size >> 20));
		return -EINVAL;
	}
	out[n++] = (struct x86_ram_range){ 0, low };
	if (ram_size > low)
		out[n++] = (struct x86_ram_range){ X86_4G, ram_size - low };
	return n;
}

uint64_t x86_ram_end(uint64_t ram_size)
{
	return ram_size <= X86_MMIO_HOLE ? ram_size : X86_4G + (ram_size - X86_MMIO_HOLE);
}

uint64_t x86_low_ram_end(uint64_t ram_size)
{
	return ram_size < X86_MMIO_HOLE ? ram_size : X86_MMIO_HOLE;
}
