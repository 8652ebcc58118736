/* SPDX-License-Identifier: MIT */
/*
 * Reading a recorded fixture file (tests/unit/fixtures/) whole, for the unit tests that parse
 * kernel text (vgic-state, /proc/interrupts). Header-only: each test binary includes it once.
 */
#ifndef VMM_TESTS_FIXTURE_FILE_H
#define VMM_TESTS_FIXTURE_FILE_H

#include <stdio.h>
#include <stdlib.h>

/* The file's bytes, NUL-terminated (len without it), or NULL when it cannot be read. */
static inline char *fixture_slurp(const char *path, size_t *len)
{
	FILE *f = fopen(path, "rb");
	char *buf = NULL;
	size_t n = 0;

	if (!f)
		return NULL;
	FILE *m = open_memstream(&buf, &n);
	char chunk[4096];
	size_t k;

	if (!m) {
		fclose(f);
		return NULL;
	}
	while ((k = fread(chunk, 1, sizeof(chunk), f)) > 0)
		fwrite(chunk, 1, k, m);
	fclose(m); /* open_memstream NUL-terminates */
	fclose(f);
	*len = n;
	return buf;
}

#endif
