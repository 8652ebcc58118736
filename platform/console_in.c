// SPDX-License-Identifier: MIT
/* Guest console input from the host's keyboard: the Ctrl-A escape filter. */
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "platform/console.h"

#define CTRL_A 0x01

size_t console_filter(struct console_escape *e, const uint8_t *in, size_t n, uint8_t *out, bool *quit)
{
	size_t have = 0;

	*quit = false;
	for (size_t i = 0; i < n; i++) {
		if (e->pending) {
			e->pending = false;
			if (in[i] == 'x') {
				*quit = true;
				return have;
			}
			if (in[i] != CTRL_A)
				out[have++] = CTRL_A;
		} else if (in[i] == CTRL_A) {
			e->pending = true;
			continue;
		}
		out[have++] = in[i];
	}
	return have;
}
