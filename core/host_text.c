// SPDX-License-Identifier: MIT
/* Host text files, read whole and scanned in spans (host_text.h). */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "core/hot.h"
#include "core/host_text.h"

VMM_HOT_VF int host_text_read(const char *path, char **out, size_t *len, char *why, size_t wsz)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	size_t cap = 65536, n = 0;
	char *buf;

	*out = NULL;
	*len = 0;
	if (fd < 0) {
		int e = errno;

		snprintf(why, wsz, "%s: %s%s", path, strerror(e),
			 e == EACCES || e == EPERM ? " (debugfs is root-only: run vmm as root)" : "");
		return -e;
	}
	buf = malloc(cap);
	if (!buf) {
		close(fd);
		snprintf(why, wsz, "%s: out of memory", path);
		return -ENOMEM;
	}
	for (;;) {
		if (n == cap) {
			if (cap >= HOST_TEXT_MAX)
				break;	/* what fits is parsed; the rest is dropped */
			char *p = realloc(buf, cap * 2);

			if (!p) {
				free(buf);
				close(fd);
				snprintf(why, wsz, "%s: out of memory", path);
				return -ENOMEM;
			}
			buf = p;
			cap *= 2;
		}
		ssize_t r = read(fd, buf + n, cap - n);

		if (r < 0 && errno == EINTR)
			continue;
		if (r < 0) {
			int e = errno;

			/* debugfs's vgic-state answers EBUSY while another reader holds its iterator. */
			snprintf(why, wsz, "%s: %s%s", path, strerror(e), e == EBUSY ? " (read by "
				 "someone else right now: retry)" : "");
			free(buf);
			close(fd);
			return -e;
		}
		if (!r)
			break;
		n += (size_t)r;
	}
	close(fd);
	*out = buf;
	*len = n;
	return 0;
}

/* The next line of [*pos, len): without its '\n'. false at the end. */
VMM_HOT_VF bool span_next_line(const char *text, size_t len, size_t *pos, struct span *line)
{
	if (*pos >= len)
		return false;
	const char *s = text + *pos;
	const char *nl = memchr(s, '\n', len - *pos);
	size_t n = nl ? (size_t)(nl - s) : len - *pos;

	line->p = s;
	line->n = n;
	*pos += n + (nl ? 1 : 0);
	return true;
}

static bool is_space(char c)
{
	return c == ' ' || c == '\t' || c == '\r' || c == '\f' || c == '\v' || c == '\0';
}

/* The next whitespace-separated token of *rest; false when none is left. */
VMM_HOT_VF bool span_next_tok(struct span *rest, struct span *tok)
{
	while (rest->n && is_space(*rest->p)) {
		rest->p++;
		rest->n--;
	}
	if (!rest->n)
		return false;
	tok->p = rest->p;
	while (rest->n && !is_space(*rest->p)) {
		rest->p++;
		rest->n--;
	}
	tok->n = (size_t)(rest->p - tok->p);
	return true;
}

VMM_HOT_VF bool span_is(struct span t, const char *s)
{
	size_t n = strlen(s);

	return t.n == n && !memcmp(t.p, s, n);
}

VMM_HOT_VF bool span_starts_with(struct span t, const char *s)
{
	size_t n = strlen(s);

	return t.n >= n && !memcmp(t.p, s, n);
}

static int digit_val(char c, unsigned int base)
{
	int v = -1;

	if (c >= '0' && c <= '9')
		v = c - '0';
	else if (c >= 'a' && c <= 'f')
		v = c - 'a' + 10;
	else if (c >= 'A' && c <= 'F')
		v = c - 'A' + 10;
	return v >= 0 && (unsigned int)v < base ? v : -1;
}

/* An unsigned number filling the whole token, at most max; false on garbage or overflow. */
VMM_HOT_VF bool span_u64(struct span t, unsigned int base, uint64_t max, uint64_t *out)
{
	uint64_t v = 0;

	if (base == 16 && t.n > 2 && t.p[0] == '0' && (t.p[1] == 'x' || t.p[1] == 'X')) {
		t.p += 2;
		t.n -= 2;
	}
	if (!t.n)
		return false;
	for (size_t i = 0; i < t.n; i++) {
		int d = digit_val(t.p[i], base);

		if (d < 0 || v > (max - (uint64_t)d) / base)
			return false;
		v = v * base + (uint64_t)d;
	}
	*out = v;
	return true;
}

VMM_HOT_VF bool span_u32(struct span t, unsigned int base, uint32_t *out)
{
	uint64_t v;

	if (!span_u64(t, base, UINT32_MAX, &v))
		return false;
	*out = (uint32_t)v;
	return true;
}

/* Grows *arr (elements of size sz) to hold need elements; false when out of memory. */
VMM_HOT_VF bool span_grow_to(void **arr, size_t *cap, size_t need, size_t sz)
{
	size_t ncap = *cap ? *cap : 64;

	if (need <= *cap)
		return true;
	while (ncap < need)
		ncap *= 2;
	void *p = realloc(*arr, ncap * sz);

	if (!p)
		return false;
	*arr = p;
	*cap = ncap;
	return true;
}

VMM_HOT_VF bool span_grow(void **arr, size_t *cap, size_t nr, size_t sz)
{
	return span_grow_to(arr, cap, nr + 1, sz);
}
