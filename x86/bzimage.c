// SPDX-License-Identifier: MIT
/*
 * bzImage: the Linux/x86 boot protocol's setup header (Documentation/arch/x86/boot.rst). vmm
 * enters the kernel at its 64-bit entry, so it needs protocol 2.12+ with XLF_KERNEL_64; every
 * size comes from the file and is checked against the file.
 */
#include <errno.h>
#include <stddef.h>
#include <string.h>

#include <asm/bootparam.h>

#include "core/log.h"
#include "x86/x86.h"

/* boot.rst's magic numbers: the boot sector's signature and "HdrS" (the kernel's UAPI has no
 * name for either). */
#define BOOT_FLAG 0xaa55
#define HDRS_MAGIC 0x53726448
#define SECTOR 512
/* setup_sects 0 means 4 (boot.rst: "for backwards compatibility"). */
#define SETUP_SECTS_DEFAULT 4
/* The 64-bit entry point lies 0x200 into the protected-mode kernel (boot.rst, 64-bit protocol). */
#define ENTRY64_OFFSET 0x200

#define HDR_OFF offsetof(struct boot_params, hdr)
#define HDR_END (HDR_OFF + sizeof(struct setup_header))

uint64_t x86_bzimage_entry64(uint64_t load_addr)
{
	return load_addr + ENTRY64_OFFSET;
}

static bool pow2(uint64_t v)
{
	return v && !(v & (v - 1));
}

int x86_bzimage_parse(const uint8_t *buf, size_t len, struct x86_bzimage *img)
{
	struct setup_header h;
	size_t setup_len;
	uint64_t end;

	if (len < HDR_END) {
		pr_err("kernel: %zu bytes is too short for an x86 bzImage (its setup header ends at "
		       "byte %zu)", len, (size_t)HDR_END);
		return -EINVAL;
	}
	memcpy(&h, buf + HDR_OFF, sizeof(h));
	if (h.boot_flag != BOOT_FLAG || h.header != HDRS_MAGIC) {
		pr_err("kernel: not an x86 bzImage (no 0xAA55 boot flag and \"HdrS\" header); vmm takes "
		       "a bzImage such as /boot/vmlinuz-*, not an ELF vmlinux");
		return -EINVAL;
	}
	if (h.version < X86_BOOT_PROTOCOL_MIN) {
		pr_err("kernel: boot protocol %u.%02u is older than 2.12, which has the 64-bit entry "
		       "vmm uses (Linux 3.8+)", h.version >> 8, h.version & 0xff);
		return -EINVAL;
	}
	if (!(h.xloadflags & XLF_KERNEL_64)) {
		pr_err("kernel: the bzImage has no 64-bit entry point (XLF_KERNEL_64 clear): a 32-bit "
		       "kernel; vmm boots x86_64 kernels only");
		return -EINVAL;
	}
	if (!(h.loadflags & LOADED_HIGH)) {
		pr_err("kernel: a zImage loaded at 0x10000 (LOADED_HIGH clear); vmm needs a bzImage");
		return -EINVAL;
	}
	setup_len = ((size_t)(h.setup_sects ? h.setup_sects : SETUP_SECTS_DEFAULT) + 1) * SECTOR;
	if (setup_len >= len) {
		pr_err("kernel: the setup code claims %zu bytes but the file has %zu: truncated or "
		       "corrupt bzImage", setup_len, len);
		return -EINVAL;
	}
	img->setup = buf;
	img->setup_len = setup_len;
	img->kernel = buf + setup_len;
	img->kernel_len = len - setup_len;
	/* syssize counts 16-byte paragraphs of the protected-mode kernel (32 bits since 2.04). */
	if ((uint64_t)h.syssize * 16 > img->kernel_len) {
		pr_err("kernel: the setup header says the kernel has %llu bytes but the file holds %zu "
		       "after the setup code: truncated bzImage", (unsigned long long)h.syssize * 16,
		       img->kernel_len);
		return -EINVAL;
	}
	if ((uint64_t)h.payload_offset + h.payload_length > img->kernel_len) {
		pr_err("kernel: the compressed payload (offset %u, %u bytes) runs past the end of the "
		       "file: corrupt bzImage", h.payload_offset, h.payload_length);
		return -EINVAL;
	}
	if (h.relocatable_kernel && !pow2(h.kernel_alignment)) {
		pr_err("kernel: kernel_alignment 0x%x is not a power of two: corrupt setup header",
		       h.kernel_alignment);
		return -EINVAL;
	}
	/* both from the file: a pref_address near 2^64 would wrap the sum back into RAM */
	if (h.pref_address < X86_HIGHMEM_BASE || h.pref_address % 4096 ||
	    __builtin_add_overflow(h.pref_address, (uint64_t)h.init_size, &end) || end > X86_MMIO_HOLE) {
		pr_err("kernel: pref_address 0x%llx with init_size 0x%x does not fit RAM between 1 MiB "
		       "and the MMIO hole at 3 GiB (or is not page-aligned): corrupt setup header",
		       (unsigned long long)h.pref_address, h.init_size);
		return -EINVAL;
	}
	if (h.init_size < img->kernel_len) {
		pr_err("kernel: init_size 0x%x is smaller than the %zu-byte kernel it must hold: "
		       "corrupt setup header", h.init_size, img->kernel_len);
		return -EINVAL;
	}
	if (!h.cmdline_size) {
		pr_err("kernel: cmdline_size 0 (a 2.06+ header must say how long a command line it "
		       "takes): corrupt setup header");
		return -EINVAL;
	}
	img->version = h.version;
	img->loadflags = h.loadflags;
	img->xloadflags = h.xloadflags;
	img->relocatable = h.relocatable_kernel;
	img->kernel_alignment = h.kernel_alignment;
	img->pref_address = h.pref_address;
	img->init_size = h.init_size;
	img->cmdline_size = h.cmdline_size;
	img->initrd_addr_max = h.initrd_addr_max;
	return 0;
}
