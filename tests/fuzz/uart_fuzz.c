// SPDX-License-Identifier: MIT
/* The 16550's registers: each op is a read or write of any size at any offset of its 4 KiB slot,
 * or keyboard input. The line may be up only while the guest has an interrupt enabled. */
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "tests/fuzz/fuzz.h"
#include "platform/console.h"
#include "platform/uart.h"

static struct console_out out;
static struct uart u;
static bool line;

static void set_irq(void *opaque, bool level)
{
	(void)opaque;
	line = level;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct fz z = { data, size };

	if (console_out_init(&out, -1, NULL, NULL) < 0)
		abort();
	line = false;
	uart_init(&u, &out, set_irq, NULL);
	while (z.n) {
		uint8_t op = fz_u8(&z), buf[8] = { 0 };
		uint32_t off = fz_u16(&z) & 0xfff, len = 1u << (op >> 6);
		size_t n;
		const uint8_t *p;

		switch (op & 3) {
		case 0:
			uart_mmio(&u, off, buf, len, false);
			break;
		case 1:
		case 2: {
			uint64_t v = fz_u64(&z);

			memcpy(buf, &v, sizeof(v));
			uart_mmio(&u, off, buf, len, true);
			break;
		}
		case 3:
			p = fz_bytes(&z, off & 0xff, &n);
			uart_push_input(&u, p, n);
			break;
		}
		if (line && !(u.ier & 3))
			abort(); /* an interrupt with every source disabled */
	}
	console_out_destroy(&out);
	return 0;
}
