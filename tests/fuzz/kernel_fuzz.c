// SPDX-License-Identifier: MIT
/* Kernel images: raw arm64 Image, Image.gz and EFI zboot (gzip), and flat payloads. The first byte
 * picks the format as --kernel-format would; the rest is the file. */
#include <stdlib.h>
#include <string.h>

#include "arm64/arm64.h"
#include "vmm/config.h"

#define MAX_OUT (8u << 20) /* what RAM would hold: a gzip bomb stops here */

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct arm64_image img;
	uint8_t *owned = NULL;

	if (size < 1)
		return 0;
	enum kernel_format fmt = data[0] % 3;

	if (arm64_kernel_load(data + 1, size - 1, MAX_OUT, fmt, &owned, &img) == 0) {
		/* what the loader then copies into RAM must lie inside what it was given */
		const uint8_t *base = owned ? owned : data + 1;

		if (img.len && (img.data < base || img.len > MAX_OUT))
			abort();
		volatile uint8_t sink = img.len ? img.data[0] ^ img.data[img.len - 1] : 0;
		(void)sink;
	}
	free(owned);
	return 0;
}
