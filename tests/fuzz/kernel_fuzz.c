// SPDX-License-Identifier: MIT
/* Kernel images: raw arm64 Image, Image.gz and EFI zboot (gzip), and flat payloads, through the
 * whole load the arm64 board runs (decode, checks, the copies into RAM) into a 64 MiB guest,
 * with and without an initrd: ASan sees any copy that leaves RAM. The first byte picks the
 * format as --kernel-format would; the rest is the file. */
#include <stdlib.h>

#include "arm64/arm64.h"
#include "tests/fuzz/fuzz.h"
#include "vmm/config.h"

#define RAM_SIZE (64ULL << 20)
#define INITRD_LEN (1u << 20)

static void load(const uint8_t *data, size_t size, const uint8_t *initrd)
{
	struct arm64_load_in in = { .kernel = data + 1, .kernel_len = size - 1, .format = data[0] % 3,
				    .initrd = initrd, .initrd_len = initrd ? INITRD_LEN : 0 };
	struct arm64_boot_layout l;

	if (arm64_boot_load(fz_loader_ram(RAM_SIZE), RAM_SIZE, &in, &l) == 0) {
		/* the kernel, the FDT's room (or the top 2 MiB), the initrd under the top 2 MiB: all
		 * inside RAM, none over another */
		uint64_t end = ARM64_RAM_BASE + RAM_SIZE, top = end - ARM64_FDT_MAX;

		if (l.kernel < ARM64_RAM_BASE || l.kernel_size > l.fdt - l.kernel || l.fdt_room > end - l.fdt ||
		    (l.fdt != top && (l.fdt_room > ARM64_FDT_MAX - (l.fdt & (ARM64_FDT_MAX - 1)) ||
				      (in.initrd && l.fdt + l.fdt_room > l.initrd))) ||
		    l.initrd_len != in.initrd_len || (in.initrd && l.initrd - l.kernel < l.kernel_size) ||
		    l.initrd_len > top - l.initrd)
			abort();
	}
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static const uint8_t initrd[INITRD_LEN];

	if (size < 1)
		return 0;
	load(data, size, NULL);
	load(data, size, initrd);
	return 0;
}
