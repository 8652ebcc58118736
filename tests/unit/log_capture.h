/* SPDX-License-Identifier: MIT */
/*
 * vmm's messages (stderr) caught in a temporary file while a test drives a guest, so the test can
 * count them. Header-only: each test binary includes it once.
 */
#ifndef VMM_TESTS_LOG_CAPTURE_H
#define VMM_TESTS_LOG_CAPTURE_H

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

struct log_capture {
	FILE *tmp;
	int saved; /* the test's own stderr */
};

/* 0, or -1 when stderr cannot be redirected. */
static inline int log_capture_start(struct log_capture *c)
{
	fflush(stderr);
	c->tmp = tmpfile();
	c->saved = dup(STDERR_FILENO);
	if (!c->tmp || c->saved < 0 || dup2(fileno(c->tmp), STDERR_FILENO) < 0)
		return -1;
	return 0;
}

/* Restores stderr; what was written meanwhile, NUL-terminated (free it), or NULL. */
static inline char *log_capture_end(struct log_capture *c)
{
	fflush(stderr);
	dup2(c->saved, STDERR_FILENO);
	close(c->saved);
	long n = ftell(c->tmp);
	char *s = n >= 0 ? malloc((size_t)n + 1) : NULL;

	rewind(c->tmp);
	if (s)
		s[fread(s, 1, (size_t)n, c->tmp)] = 0;
	fclose(c->tmp);
	return s;
}

/* Lines of text holding needle (every line when needle is ""). */
static inline unsigned int log_lines(const char *text, const char *needle)
{
	unsigned int n = 0;

	for (const char *p = text; p && *p;) {
		const char *e = strchr(p, '\n');
		size_t len = e ? (size_t)(e - p) : strlen(p);

		n += memmem(p, len, needle, strlen(needle)) != NULL;
		p += len + (e != NULL);
	}
	return n;
}

#endif
