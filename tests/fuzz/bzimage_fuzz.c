// SPDX-License-Identifier: MIT
/* x86 bzImages: the setup header (boot protocol, 64-bit entry, sizes) against the file. */
#include <stdlib.h>

#include "x86/x86.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct x86_bzimage img;

	if (x86_bzimage_parse(data, size, &img) == 0) {
		/* what the loader copies (setup into the zero page, the kernel into RAM) lies in the file */
		if (img.setup != data || img.setup_len > size || img.kernel < data ||
		    img.kernel_len > size - (size_t)(img.kernel - data) || img.version < X86_BOOT_PROTOCOL_MIN)
			abort();
		volatile uint8_t sink = img.kernel_len ? img.kernel[img.kernel_len - 1] : 0;
		(void)sink;
	}
	return 0;
}
