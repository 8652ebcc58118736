// SPDX-License-Identifier: MIT
/*
 * Guest console output, shared by the 16550 and virtio-console: written to the terminal (or
 * dropped), and watched for a marker string such as Linux's panic banner.
 */
#include <errno.h>
#include <unistd.h>

#include "vmm/vmm.h"

void console_out_write(struct console_out *co, const uint8_t *buf, size_t len)
{
	for (size_t i = 0; i < len && co->watch; i++) {
		uint8_t c = buf[i];

		if (c != (uint8_t)co->watch[co->watch_pos])
			co->watch_pos = 0; /* the watched strings do not repeat their first letter */
		if (c == (uint8_t)co->watch[co->watch_pos] && !co->watch[++co->watch_pos]) {
			co->watch_pos = 0;
			if (co->on_watch)
				co->on_watch(co->watch_opaque);
		}
	}
	co->bytes += len;
	while (co->fd >= 0 && len) {
		ssize_t n = write(co->fd, buf, len);

		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			break; /* the terminal went away: the guest keeps running */
		buf += n;
		len -= n;
	}
}

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
