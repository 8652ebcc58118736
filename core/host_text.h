/* SPDX-License-Identifier: MIT */
/*
 * Text files the host kernel writes (procfs, debugfs): read whole, and scanned in spans. Every
 * byte is untrusted: no unbounded copies, numbers checked for overflow. /proc/interrupts
 * (core/proc_interrupts.c) and arm64's vgic-state parsers (arm64/gic/vlpi_parse.c) share them.
 */
#ifndef VMM_HOST_TEXT_H
#define VMM_HOST_TEXT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define HOST_TEXT_MAX (16u << 20) /* bytes read from any one file */

/* The whole file (debugfs and procfs files have no size: read to EOF), at most HOST_TEXT_MAX
 * bytes. 0 or -errno; on error why says what to do. */
int host_text_read(const char *path, char **out, size_t *len, char *why, size_t wsz);

/* A piece of the text, never NUL-terminated. */
struct span {
	const char *p;
	size_t n;
};

/* The next line of [*pos, len): without its '\n'. false at the end. */
bool span_next_line(const char *text, size_t len, size_t *pos, struct span *line);
/* The next whitespace-separated token of *rest; false when none is left. */
bool span_next_tok(struct span *rest, struct span *tok);
bool span_is(struct span t, const char *s);
bool span_starts_with(struct span t, const char *s);
/* An unsigned number filling the whole token, at most max; false on garbage or overflow. Base 16
 * takes an optional 0x. */
bool span_u64(struct span t, unsigned int base, uint64_t max, uint64_t *out);
bool span_u32(struct span t, unsigned int base, uint32_t *out);

/* Grows *arr (elements of size sz) to hold need elements; false when out of memory. */
bool span_grow_to(void **arr, size_t *cap, size_t need, size_t sz);
/* Room for one more after nr. */
bool span_grow(void **arr, size_t *cap, size_t nr, size_t sz);

#endif
