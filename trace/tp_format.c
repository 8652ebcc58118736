// SPDX-License-Identifier: MIT
/* A tracepoint's format file (tracefs events/SYS/NAME/format): "name:", "ID:", then one line per
 * field, "field:DECL;<tab>offset:N;<tab>size:N;<tab>signed:N;", until "print fmt:". The text
 * comes from the kernel but is parsed as untrusted: every piece is a bounded span of the input
 * (never NUL-terminated), every number is checked, and names that do not fit are refused rather
 * than cut. */
#include <errno.h>
#include <stdarg.h>
#include <string.h>

#include "trace/trace.h"

/* offset + size of a field: both are u16 in struct tp_field */
#define TP_LIMIT 65535u

/* A piece of the text: p[0..n), not NUL-terminated. */
struct span {
	const char *p;
	size_t n;
};

__attribute__((format(printf, 3, 4))) static int fail(char *err, size_t errsize, const char *fmt, ...)
{
	va_list ap;

	if (err && errsize) {
		va_start(ap, fmt);
		vsnprintf(err, errsize, fmt, ap);
		va_end(ap);
	}
	return -EINVAL;
}

/* '\r' counts as space: a file with Windows line ends parses as the kernel's does */
static bool is_space(char c)
{
	return c == ' ' || c == '\t' || c == '\r' || c == '\v' || c == '\f';
}

static bool is_ident(char c)
{
	return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_';
}

static struct span trim(struct span s)
{
	while (s.n && is_space(s.p[0]))
		s.p++, s.n--;
	while (s.n && is_space(s.p[s.n - 1]))
		s.n--;
	return s;
}

/* When s starts with lit: true, and s is what follows it. */
static bool take_prefix(struct span *s, const char *lit)
{
	size_t k = strlen(lit);

	if (s->n < k || memcmp(s->p, lit, k))
		return false;
	s->p += k;
	s->n -= k;
	return true;
}

static bool span_is(struct span s, const char *lit)
{
	return s.n == strlen(lit) && !memcmp(s.p, lit, s.n);
}

/* Decimal digits only (no sign, no space, no hex), at most max. */
static bool parse_dec(struct span s, uint64_t max, uint64_t *v)
{
	uint64_t x = 0;

	if (!s.n)
		return false;
	for (size_t i = 0; i < s.n; i++) {
		if (s.p[i] < '0' || s.p[i] > '9')
			return false;
		x = x * 10 + (uint64_t)(s.p[i] - '0');
		if (x > max) /* checked each digit: x * 10 never wraps */
			return false;
	}
	*v = x;
	return true;
}

/* Copies s into dst (TP_NAME_MAX) or refuses: a name cut short would find the wrong field. */
static bool copy_name(char dst[TP_NAME_MAX], struct span s)
{
	if (!s.n || s.n > TP_NAME_MAX - 1)
		return false;
	memcpy(dst, s.p, s.n);
	dst[s.n] = '\0';
	return true;
}

/* "name: sched_switch": one word of printable characters. */
static int parse_name(struct span s, struct tp_format *out, size_t line, char *err, size_t errsize)
{
	s = trim(s);
	if (out->name[0])
		return fail(err, errsize, "line %zu: a second name line", line);
	for (size_t i = 0; i < s.n; i++)
		if (s.p[i] <= ' ' || s.p[i] > '~')
			return fail(err, errsize, "line %zu: the event's name is not one printable word", line);
	if (!copy_name(out->name, s))
		return fail(err, errsize, "line %zu: the event's name is empty or longer than %d characters", line,
			    TP_NAME_MAX - 1);
	return 0;
}

static int parse_id(struct span s, struct tp_format *out, bool *have, size_t line, char *err, size_t errsize)
{
	uint64_t v;

	if (*have)
		return fail(err, errsize, "line %zu: a second ID line", line);
	if (!parse_dec(trim(s), UINT32_MAX, &v))
		return fail(err, errsize, "line %zu: the ID is not a decimal number below 2^32", line);
	out->id = (uint32_t)v;
	*have = true;
	return 0;
}

/* The declaration: "TYPE NAME", "TYPE NAME[LEN]", "__data_loc TYPE[] NAME" (or __rel_loc). The
 * name is the identifier at its end; what comes before is the type and must not be empty. */
static int parse_decl(struct span d, struct tp_field *f, size_t line, char *err, size_t errsize)
{
	struct span type;
	size_t end;

	d = trim(d);
	if (d.n && d.p[d.n - 1] == ']') {
		const char *open = memrchr(d.p, '[', d.n);

		if (!open)
			return fail(err, errsize, "line %zu: a field's ']' without '['", line);
		d.n = (size_t)(open - d.p);
		d = trim(d);
		f->is_array = true;
	}
	end = d.n;
	while (end && is_ident(d.p[end - 1]))
		end--;
	type = trim((struct span){ d.p, end });
	if (end == d.n || !type.n)
		return fail(err, errsize, "line %zu: a field declaration without a type and a name", line);
	if (!copy_name(f->name, (struct span){ d.p + end, d.n - end }))
		return fail(err, errsize, "line %zu: a field name longer than %d characters", line, TP_NAME_MAX - 1);
	/* dynamic arrays: the field holds (length << 16 | offset), not a number to read */
	if (memchr(type.p, '[', type.n) || take_prefix(&type, "__data_loc") || take_prefix(&type, "__rel_loc"))
		f->is_array = true;
	return 0;
}

enum { K_OFFSET, K_SIZE, K_SIGNED, K_NR };

/* One "key:value" item. Keys other than offset, size and signed are a newer kernel's: skipped. */
static int parse_item(struct span item, uint64_t val[K_NR], bool seen[K_NR], const struct tp_field *f, size_t line,
		      char *err, size_t errsize)
{
	static const char *const keys[K_NR] = { "offset", "size", "signed" };
	const char *colon = memchr(item.p, ':', item.n);
	struct span key, v;

	if (!colon)
		return fail(err, errsize, "line %zu: field '%s': an item without ':'", line, f->name);
	key = trim((struct span){ item.p, (size_t)(colon - item.p) });
	v = trim((struct span){ colon + 1, item.n - (size_t)(colon + 1 - item.p) });
	for (int k = 0; k < K_NR; k++) {
		if (!span_is(key, keys[k]))
			continue;
		if (seen[k])
			return fail(err, errsize, "line %zu: field '%s': %s given twice", line, f->name, keys[k]);
		if (!parse_dec(v, k == K_SIGNED ? 1 : TP_LIMIT, &val[k]))
			return fail(err, errsize, "line %zu: field '%s': %s is not %s", line, f->name, keys[k],
				    k == K_SIGNED ? "0 or 1" : "a decimal number up to 65535");
		seen[k] = true;
	}
	return 0;
}

/* The items after the declaration, each ended by ';', in any order. */
static int parse_items(struct span s, struct tp_field *f, size_t line, char *err, size_t errsize)
{
	static const char *const what[K_NR] = { "offset", "size", "signed" };
	uint64_t val[K_NR] = { 0 };
	bool seen[K_NR] = { false };
	int r;

	for (s = trim(s); s.n; s = trim(s)) {
		const char *semi = memchr(s.p, ';', s.n);

		if (!semi)
			return fail(err, errsize, "line %zu: field '%s': an item not ended by ';' (a line cut short?)",
				    line, f->name);
		r = parse_item(trim((struct span){ s.p, (size_t)(semi - s.p) }), val, seen, f, line, err, errsize);
		if (r)
			return r;
		s.n -= (size_t)(semi + 1 - s.p);
		s.p = semi + 1;
	}
	for (int k = 0; k < K_NR; k++)
		if (!seen[k])
			return fail(err, errsize, "line %zu: field '%s': no %s", line, f->name, what[k]);
	if (val[K_OFFSET] + val[K_SIZE] > TP_LIMIT)
		return fail(err, errsize, "line %zu: field '%s': offset %u + size %u is beyond %u", line, f->name,
			    (unsigned int)val[K_OFFSET], (unsigned int)val[K_SIZE], TP_LIMIT);
	f->offset = (uint16_t)val[K_OFFSET];
	f->size = (uint16_t)val[K_SIZE];
	f->is_signed = val[K_SIGNED];
	return 0;
}

/* "field:DECL;<items>" (s is what follows "field:"). */
static int parse_field(struct span s, struct tp_format *out, size_t line, char *err, size_t errsize)
{
	const char *semi = memchr(s.p, ';', s.n);
	struct tp_field f = { .name = "" };
	int r;

	if (out->nfields == TP_FIELDS_MAX)
		return fail(err, errsize, "line %zu: more than %d fields", line, TP_FIELDS_MAX);
	if (!semi)
		return fail(err, errsize, "line %zu: a field declaration not ended by ';' (a line cut short?)", line);
	r = parse_decl((struct span){ s.p, (size_t)(semi - s.p) }, &f, line, err, errsize);
	if (!r)
		r = parse_items((struct span){ semi + 1, s.n - (size_t)(semi + 1 - s.p) }, &f, line, err, errsize);
	if (r)
		return r;
	if (tp_field_find(out, f.name))
		return fail(err, errsize, "line %zu: field '%s' given twice", line, f.name);
	out->f[out->nfields++] = f;
	return 0;
}

/* One line, trimmed. Lines the parser does not know ("format:", blank, a newer kernel's) are
 * skipped; *done at "print fmt:", whose text is C and may hold anything. */
static int parse_line(struct span s, struct tp_format *out, bool *have_id, bool *done, size_t line, char *err,
		      size_t errsize)
{
	s = trim(s);
	if (take_prefix(&s, "print fmt:")) {
		*done = true;
		return 0;
	}
	if (take_prefix(&s, "field:"))
		return parse_field(s, out, line, err, errsize);
	if (take_prefix(&s, "name:"))
		return parse_name(s, out, line, err, errsize);
	if (take_prefix(&s, "ID:"))
		return parse_id(s, out, have_id, line, err, errsize);
	return 0;
}

int tp_format_parse(const char *text, size_t len, struct tp_format *out, char *err, size_t errsize)
{
	bool have_id = false, done = false;
	size_t at = 0, line = 0;
	int r;

	memset(out, 0, sizeof(*out));
	if (!text && len)
		return fail(err, errsize, "no text");
	while (at < len && !done) {
		const char *nl = memchr(text + at, '\n', len - at);
		size_t end = nl ? (size_t)(nl - text) : len;

		r = parse_line((struct span){ text + at, end - at }, out, &have_id, &done, ++line, err, errsize);
		if (r)
			return r;
		at = end + 1;
	}
	if (!out->name[0])
		return fail(err, errsize, "no name line");
	if (!have_id)
		return fail(err, errsize, "%s: no ID line", out->name);
	if (!out->nfields)
		return fail(err, errsize, "%s: no field lines", out->name);
	return 0;
}

const struct tp_field *tp_field_find(const struct tp_format *fmt, const char *name)
{
	if (!fmt || !name)
		return NULL;
	for (size_t i = 0; i < fmt->nfields && i < TP_FIELDS_MAX; i++)
		if (!strcmp(fmt->f[i].name, name))
			return &fmt->f[i];
	return NULL;
}

int tp_field_read(const struct tp_field *f, const void *raw, size_t raw_len, int64_t *v)
{
	const uint8_t *p = raw;
	uint64_t u;

	if (!f || !raw || f->is_array || f->offset > raw_len || f->size > raw_len - f->offset)
		return -1;
	p += f->offset;
	/* memcpy: a raw record's fields need not be aligned in the buffer it was copied to */
	switch (f->size) {
	case 1: {
		uint8_t x;

		memcpy(&x, p, 1);
		*v = f->is_signed ? (int64_t)(int8_t)x : (int64_t)x;
		return 0;
	}
	case 2: {
		uint16_t x;

		memcpy(&x, p, 2);
		*v = f->is_signed ? (int64_t)(int16_t)x : (int64_t)x;
		return 0;
	}
	case 4: {
		uint32_t x;

		memcpy(&x, p, 4);
		*v = f->is_signed ? (int64_t)(int32_t)x : (int64_t)x;
		return 0;
	}
	case 8:
		memcpy(&u, p, 8);
		*v = (int64_t)u; /* unsigned 64-bit values (addresses) keep their bits */
		return 0;
	}
	return -1;
}
