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
