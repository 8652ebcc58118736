// SPDX-License-Identifier: MIT
/* The guest probe's output as vmm reads it, by the first byte's low bits:
 *   x0  binary frames from the probe's port;
 *   01  console text as it is;
 *   11  console text built by a small program (below), so that short inputs reach what raw
 *       mutation seldom does: base64 runs of any length up to and past the decoder's line and
 *       frame limits, a '[' (a kernel message) after them, valid frames (CRC right) whole or cut
 *       by a kernel message, and the text fed in chunks of a size the input picks.
 * Every series decoded is then walked. */
#include <string.h>

#include "guest/probe_decode.h"
#include "tests/fuzz/fuzz.h"

/* Text program opcodes (one byte each, mod TX_NR; operands follow). */
enum tx_op {
	TX_PREFIX,  /* "VMM-PROBE " */
	TX_RUN,	    /* u16 len (mod TX_RUN_MAX), u8 char: a run of base64 characters */
	TX_PRINTK,  /* a kernel message's start: "[   36.858284] rcu: stall" */
	TX_EOL,	    /* u8: "\n" or "\r\n" */
	TX_RAW,	    /* u8 len, then that many bytes as they are */
	TX_FRAME,   /* a frame (below) as base64 */
	TX_CUT,	    /* u16 at, a frame: its base64 cut at `at` by a kernel line, then the rest */
	TX_FEED,    /* u16 chunk: feed what is built so far in chunks of 1 + chunk % 4096 */
	TX_NR
};

/* Runs reach past the line buffer (twice a frame line) by some margin. */
#define TX_RUN_MAX (3 * PROBE_TEXT_MAX)
#define TX_TEXT_MAX (8 * PROBE_TEXT_MAX)

static const char b64_chars[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/=";

struct tx {
	char t[TX_TEXT_MAX];
	size_t n;
	size_t chunk;
};

static void tx_put(struct tx *x, const void *p, size_t n)
{
	if (n > sizeof(x->t) - x->n)
		n = sizeof(x->t) - x->n;
	memcpy(x->t + x->n, p, n);
	x->n += n;
}

static void tx_feed(struct probe_decoder *d, struct tx *x)
{
	for (size_t i = 0; i < x->n; i += x->chunk)
		probe_decode_text(d, x->t + i, x->n - i < x->chunk ? x->n - i : x->chunk);
	x->n = 0;
}

/* A frame from the input: u8 type (1..4 mostly), u8 seq, u16 payload length, payload bytes
 * (zeros past the input's end); its header and CRC are right, so the decoder looks at the
 * record. Returns its base64 in out (PROBE_TEXT_MAX). */
static size_t tx_frame(struct fz *z, char *out)
{
	uint8_t f[PROBE_MAX_FRAME], pay[PROBE_MAX_PAYLOAD] = { 0 };
	uint8_t type = fz_u8(z) % 6;
	uint32_t seq = fz_u8(z);
	size_t len = fz_u16(z) % (PROBE_MAX_PAYLOAD + 1), have;
	const uint8_t *p = fz_bytes(z, len, &have);

	memcpy(pay, p, have);
	return probe_b64_encode(out, f, probe_frame(f, type, seq, pay, len));
}

static void text_program(struct probe_decoder *d, struct fz *z)
{
	static struct tx x; /* large for a fuzzer's stack; one input at a time */
	static const char printk[] = "[   36.858284] rcu: stall";
	char b[PROBE_TEXT_MAX];
	size_t n, at;

	x.n = 0;
	x.chunk = sizeof(x.t);
	while (z->n) {
		switch (fz_u8(z) % TX_NR) {
		case TX_PREFIX:
			tx_put(&x, PROBE_TEXT_PREFIX, sizeof(PROBE_TEXT_PREFIX) - 1);
			break;
		case TX_RUN: {
			size_t len = fz_u16(z) % (TX_RUN_MAX + 1);
			char c = b64_chars[fz_u8(z) % (sizeof(b64_chars) - 1)];

			for (size_t i = 0; i < len && x.n < sizeof(x.t); i++)
				x.t[x.n++] = c;
			break;
		}
		case TX_PRINTK:
			tx_put(&x, printk, sizeof(printk) - 1);
			break;
		case TX_EOL:
			n = fz_u8(z) & 1;
			tx_put(&x, n ? "\r\n" : "\n", n + 1);
			break;
		case TX_RAW: {
			const uint8_t *p = fz_bytes(z, fz_u8(z), &n);

			tx_put(&x, p, n);
			break;
		}
		case TX_FRAME:
			tx_put(&x, b, tx_frame(z, b));
			break;
		case TX_CUT:
			at = fz_u16(z);
			n = tx_frame(z, b);
			at = n ? at % n : 0;
			tx_put(&x, b, at);
			tx_put(&x, printk, sizeof(printk) - 1);
			tx_put(&x, "\r\n", 2);
			tx_put(&x, b + at, n - at);
			break;
		case TX_FEED:
			tx_feed(d, &x);
			x.chunk = 1 + fz_u16(z) % 4096;
			break;
		}
	}
	tx_feed(d, &x);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct probe_decoder d;
	struct fz z;

	if (size < 1)
		return 0;
	z = (struct fz){ data + 1, size - 1 };
	probe_decoder_init(&d);
	if ((data[0] & 3) == 3)
		text_program(&d, &z);
	else if (data[0] & 1)
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
