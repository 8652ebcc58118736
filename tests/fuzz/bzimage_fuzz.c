// SPDX-License-Identifier: MIT
/* x86 bzImages: the whole load (setup header, kernel, initrd, command line, zero page, boot
 * tables) into a guest's low RAM, the function the x86 board calls, not only the parser. Each
 * input is a kernel file, loaded as a 256 MiB guest without an initrd and as a 64 MiB guest with
 * one: ASan sees any copy that leaves RAM. */
#include <stdlib.h>

#include "tests/fuzz/fuzz.h"
#include "x86/x86.h"

#define RAM_MAX (256ULL << 20)
#define INITRD_LEN (64u << 10)

static void load(const uint8_t *data, size_t size, uint64_t mem, const uint8_t *initrd)
{
	static const struct x86_mp_desc mp = { .nr_cpus = 1 };
	struct x86_low_ram ram = { fz_loader_ram(RAM_MAX), x86_low_ram_end(mem) };
	struct x86_load_in in = { .kernel = data, .kernel_len = size, .initrd = initrd,
				  .initrd_len = initrd ? INITRD_LEN : 0, .params = "console=ttyS0",
				  .mem_size = mem, .mp = &mp };
	struct x86_bzimage img;
	uint64_t entry;

	if (x86_boot_load(&ram, &in, &entry) == 0) {
		/* loaded: the file parses, and the vCPU starts inside the RAM the kernel went to */
		if (x86_bzimage_parse(data, size, &img) || img.setup != data || img.kernel_len > size ||
		    img.version < X86_BOOT_PROTOCOL_MIN || entry < X86_HIGHMEM_BASE || entry >= ram.size)
			abort();
	}
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static const uint8_t initrd[INITRD_LEN];

	load(data, size, RAM_MAX, NULL);
	load(data, size, 64ULL << 20, initrd);
	return 0;
}
