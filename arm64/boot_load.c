// SPDX-License-Identifier: MIT
/*
 * Placing an arm64 guest's kernel and initrd in its RAM (booting.rst): the decoded Image at
 * text_offset from the start of RAM, the initrd under the top 2 MiB, and the FDT just after the
 * Image's image_size (QEMU packs its DTB low too) where the header gives that size and there is
 * room, else in the top 2 MiB. Just after the Image the tree shares a huge page with the kernel's
 * end, which the guest touches at once, instead of faulting one of its own at the top of RAM
 * before the guest's first instruction (2 MiB cleared: about 8 ms in the lab). Only plain memory,
 * so unit and fuzz tests run the whole load without KVM.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "arm64/arm64.h"
#include "core/log.h"
#include "core/mem.h"

/* What an Image may decode to: more than any kernel, less than a gzip bomb can take. */
#define ARM64_DECODE_MAX (512ULL << 20)

int arm64_boot_load(uint8_t *ram, uint64_t mem_size, const struct arm64_load_in *in,
		    struct arm64_boot_layout *out)
{
	uint8_t *owned = NULL;
	struct arm64_image img;
	size_t ilen = in->initrd ? in->initrd_len : 0;
	const uint8_t *gz = NULL;
	size_t gz_len = 0;
	int r;

	if (!ram || mem_size <= ARM64_FDT_MAX) {
		pr_err("arm64: %llu bytes of RAM leave no room below the FDT's 2 MiB: give more with -m",
		       (unsigned long long)mem_size);
		return -EINVAL;
	}
	uint64_t top = mem_size - ARM64_FDT_MAX, fdt = top;
	uint64_t room = in->fdt_room ? in->fdt_room : ARM64_FDT_ROOM;

	if (ilen > top) {
		pr_err("-m %lluM is too small for this initrd (%zu MiB)", (unsigned long long)(mem_size >> 20),
		       ilen >> 20);
		return -E2BIG;
	}
	/* offsets into RAM; sizes come from files: compare without sums that could wrap */
	uint64_t ioff = (top - ilen) & ~0xfffULL;

	if (in->format == KERNEL_FORMAT_AUTO && (r = arm64_kernel_gzip(in->kernel, in->kernel_len, &gz, &gz_len)) < 0)
		return r;
	if (gz) { /* straight into RAM under the initrd's place: no decoded copy in the heap (the
		   * decode's mark then comes after the kernel is in RAM) */
		vm_mem_prefault(gz, gz_len);
		r = arm64_kernel_inflate(gz, gz_len, ram, ioff, ARM64_DECODE_MAX, &img);
	} else
		r = arm64_kernel_load(in->kernel, in->kernel_len, ARM64_DECODE_MAX, in->format, &owned, &img);
	if (r < 0 && (r != -E2BIG || !gz)) /* the inflate's E2BIG: img has the header's sizes */
		return r;
	if (in->decoded)
		in->decoded(in->opaque);
	uint64_t koff = img.text_offset;

	if (r == -E2BIG || img.image_size > mem_size || koff + img.image_size > ioff) {
		pr_err("-m %lluM is too small for this kernel (%llu MiB) and initrd (%zu MiB)",
		       (unsigned long long)(mem_size >> 20),
		       (unsigned long long)(img.image_size >> 20), ilen >> 20);
		free(owned);
		return -E2BIG;
	}
	if (img.sized && room <= ARM64_FDT_MAX) {
		/* 8-byte aligned is booting.rst's rule, a page keeps it apart from the BSS; kernels
		 * before 4.2 map the tree with one 2 MiB block, so it does not cross a 2 MiB boundary.
		 * koff + image_size <= ioff (checked above): no sum here wraps. */
		uint64_t after = (koff + img.image_size + 0xfff) & ~0xfffULL;

		if ((after & (ARM64_FDT_MAX - 1)) + room > ARM64_FDT_MAX)
			after = (after + ARM64_FDT_MAX - 1) & ~(ARM64_FDT_MAX - 1);
		if (after <= ioff && room <= ioff - after)
			fdt = after;
	}
	/* a plain Image is a slice of the file: read straight into RAM */
	if (img.data != ram + koff)
		r = vm_mem_load(ram + koff, img.data, img.len, owned ? NULL : in->kernel_file);
	else
		r = 0;
	free(owned);
	if (r < 0) {
		pr_err("kernel: reading it into guest RAM failed: %s",
		       r == -ENODATA ? "the file shrank while vmm loaded it" : strerror(-r));
		return r;
	}
	if (in->initrd && (r = vm_mem_load(ram + ioff, in->initrd, ilen, in->initrd_file)) < 0) {
		pr_err("initrd: reading it into guest RAM failed: %s",
		       r == -ENODATA ? "the file shrank while vmm loaded it" : strerror(-r));
		return r;
	}
	*out = (struct arm64_boot_layout){ .kernel = ARM64_RAM_BASE + koff, .kernel_size = img.image_size,
					   .initrd = ARM64_RAM_BASE + ioff, .initrd_len = ilen,
					   .fdt = ARM64_RAM_BASE + fdt,
					   .fdt_room = fdt == top ? ARM64_FDT_MAX : room };
	return 0;
}
