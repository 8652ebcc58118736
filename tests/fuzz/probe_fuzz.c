// SPDX-License-Identifier: MIT
/* The guest probe's output as vmm reads it: binary frames from the probe's port (first byte even)
 * or console text with VMM-PROBE base64 lines (odd); every series decoded is then walked. */
#include "guest/probe_decode.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct probe_decoder d;

	if (size < 1)
		return 0;
	probe_decoder_init(&d);
	if (data[0] & 1)
		probe_decode_text(&d, (const char *)data + 1, size - 1);
	else
		probe_decode_bytes(&d, data + 1, size - 1);
	for (unsigned int w = 0; w <= PROBE_W_MAX; w++)
		for (unsigned int cpu = 0; cpu < 4; cpu++) {
			const struct probe_series *s = probe_series_get(&d, w, cpu);
			uint64_t sum = 0;

			for (uint32_t i = 0; s && i < s->n; i++)
				sum += (uint64_t)s->v_ns[i] + s->t_ns[i];
			__asm__ volatile("" : : "r"(sum)); /* the samples must be readable */
		}
	probe_decode_errors(&d);
	probe_decoder_free(&d);
	return 0;
}
