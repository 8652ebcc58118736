// SPDX-License-Identifier: MIT
/*
 * The JSON reader's lexer and its reading by callbacks (core/json.h): blanks, strings, numbers and
 * words, strictly to RFC 8259, every length checked against the text's end. json_parse's tree is
 * built from the same pieces.
 */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/json.h"

void json_cur_init(struct json_cur *c, const char *text, size_t len, char *err, size_t errsize,
		   const char *const words[JSON_NR_ERRORS], int max_depth)
{
	*c = (struct json_cur){ .s = text, .p = text, .end = text + len, .err = err, .errsize = errsize,
				.words = words, .max_depth = max_depth };
	if (err && errsize)
		err[0] = 0;
}

int json_fail(struct json_cur *c, const char *what)
{
	if (c->err && c->errsize && !c->err[0])
		snprintf(c->err, c->errsize, "%s at byte %zu", what, (size_t)(c->p - c->s));
	return -EINVAL;
}

int json_fail_with(struct json_cur *c, enum json_error e)
{
	return json_fail(c, c->words[e]);
}

void json_ws(struct json_cur *c)
{
	while (c->p < c->end && (*c->p == ' ' || *c->p == '\n' || *c->p == '\t' || *c->p == '\r'))
		c->p++;
}

static int hex4(struct json_cur *c, unsigned *v)
{
	*v = 0;
	for (int i = 0; i < 4; i++, c->p++) {
		char h = c->p < c->end ? *c->p : 0;

		*v <<= 4;
		if (h >= '0' && h <= '9')
			*v |= h - '0';
		else if ((h | 32) >= 'a' && (h | 32) <= 'f')
			*v |= (h | 32) - 'a' + 10;
		else
			return json_fail_with(c, JSON_E_U_ESCAPE);
	}
	return 0;
}

/* The code point of a \u escape, c->p just past the 'u' (a surrogate pair is one). */
static int u_escape(struct json_cur *c, unsigned *u)
{
	unsigned lo;

	if (hex4(c, u) < 0)
		return -EINVAL;
	if (*u >= 0xd800 && *u < 0xdc00) { /* a surrogate pair */
		if (c->end - c->p < 6 || c->p[0] != '\\' || c->p[1] != 'u')
			return json_fail_with(c, JSON_E_SURROGATE);
		c->p += 2;
		if (hex4(c, &lo) < 0 || lo < 0xdc00 || lo > 0xdfff)
			return json_fail_with(c, JSON_E_SURROGATE);
		*u = 0x10000 + ((*u - 0xd800) << 10) + (lo - 0xdc00);
	} else if (*u >= 0xdc00 && *u < 0xe000) {
		return json_fail_with(c, JSON_E_SURROGATE);
	}
	if (*u == 0)
		return json_fail_with(c, JSON_E_U0000);
	return 0;
}

/* A code point as UTF-8 into enc; its length. */
static int utf8(unsigned u, char enc[4])
{
	if (u < 0x80) {
		enc[0] = (char)u;
		return 1;
	}
	if (u < 0x800) {
		enc[0] = (char)(0xc0 | u >> 6);
		enc[1] = (char)(0x80 | (u & 63));
		return 2;
	}
	if (u < 0x10000) {
		enc[0] = (char)(0xe0 | u >> 12);
		enc[1] = (char)(0x80 | (u >> 6 & 63));
		enc[2] = (char)(0x80 | (u & 63));
		return 3;
	}
	enc[0] = (char)(0xf0 | u >> 18);
	enc[1] = (char)(0x80 | (u >> 12 & 63));
	enc[2] = (char)(0x80 | (u >> 6 & 63));
	enc[3] = (char)(0x80 | (u & 63));
	return 4;
}

/* One character of a string, c->p on it, as UTF-8 into enc: its length, 0 at the closing quote. */
static int string_char(struct json_cur *c, char enc[4])
{
	unsigned char ch = (unsigned char)*c->p++;
	unsigned u;

	if (ch == '"')
		return 0;
	if (ch < 0x20)
		return json_fail_with(c, JSON_E_CONTROL);
	if (ch != '\\') {
		enc[0] = (char)ch;
		return 1;
	}
	char e = c->p < c->end ? *c->p++ : 0;
	const char *m = strchr("\"\\/bfnrt", e);

	if (e && m) {
		enc[0] = "\"\\/\b\f\n\r\t"[m - "\"\\/bfnrt"];
		return 1;
	}
	if (e != 'u')
		return json_fail_with(c, JSON_E_ESCAPE);
	if (u_escape(c, &u) < 0)
		return -EINVAL;
	return utf8(u, enc); /* an escape of 2 (6, 12) raw bytes gives at most 1 (3, 4) */
}

long json_string_len(struct json_cur *c)
{
	const char *q;

	json_ws(c);
	if (c->p >= c->end || *c->p != '"')
		return json_fail_with(c, JSON_E_STRING);
	for (q = c->p + 1; q < c->end && *q != '"';)
		q += *q == '\\' ? 2 : 1;
	if (q >= c->end) {
		c->p = c->end;
		return json_fail_with(c, JSON_E_UNTERMINATED);
	}
	return q - c->p;
}

int json_read_string(struct json_cur *c, char *out, size_t size)
{
	size_t n = 0;
	int k;

	if (json_string_len(c) < 0)
		return -EINVAL;
	c->p++; /* the opening quote */
	for (;;) {
		char enc[4];

		if ((k = string_char(c, enc)) < 0)
			return k;
		if (!k)
			break;
		for (int i = 0; i < k; i++)
			if (out && n + 1 < size)
				out[n++] = enc[i];
	}
	if (out && size)
		out[n] = 0;
	return 0;
}

int json_read_number(struct json_cur *c, double *v)
{
	const char *p, *start;
	char buf[64];

	json_ws(c);
	p = start = c->p;
	if (p < c->end && *p == '-')
		p++;
	if (p < c->end && *p == '0')
		p++;
	else if (p < c->end && *p >= '1' && *p <= '9')
		while (p < c->end && *p >= '0' && *p <= '9')
			p++;
	else
		return json_fail_with(c, p == start ? JSON_E_NOT_NUMBER : JSON_E_NUMBER);
	if (p < c->end && *p == '.') {
		if (++p >= c->end || *p < '0' || *p > '9')
			return json_fail_with(c, JSON_E_NUMBER);
		while (p < c->end && *p >= '0' && *p <= '9')
			p++;
	}
	if (p < c->end && (*p == 'e' || *p == 'E')) {
		p++;
		if (p < c->end && (*p == '+' || *p == '-'))
			p++;
		if (p >= c->end || *p < '0' || *p > '9')
			return json_fail_with(c, JSON_E_NUMBER);
		while (p < c->end && *p >= '0' && *p <= '9')
			p++;
	}
	if ((size_t)(p - start) >= sizeof(buf))
		return json_fail_with(c, JSON_E_NUMBER_LONG);
	memcpy(buf, start, p - start);
	buf[p - start] = 0;
	*v = strtod(buf, NULL);
	if (!isfinite(*v))
		return json_fail_with(c, JSON_E_NUMBER_RANGE);
	c->p = p;
	return 0;
}

int json_read_word(struct json_cur *c, enum json_type *t, bool *b)
{
	static const struct {
		const char *w;
		enum json_type t;
		bool b;
	} words[] = { { "true", JSON_BOOL, true }, { "false", JSON_BOOL, false }, { "null", JSON_NULL, false } };

	json_ws(c);
	for (size_t i = 0; i < sizeof(words) / sizeof(words[0]); i++) {
		size_t n = strlen(words[i].w);

		if (c->p < c->end && *c->p == words[i].w[0]) {
			if ((size_t)(c->end - c->p) < n || memcmp(c->p, words[i].w, n))
				break;
			c->p += n;
			*t = words[i].t;
			*b = words[i].b;
			return 0;
		}
	}
	return json_fail_with(c, JSON_E_WORD);
}

/* Opens an object or array: blanks, then open, one level deeper. */
static int open_level(struct json_cur *c, char open, enum json_error what)
{
	json_ws(c);
	if (c->depth + 1 > c->max_depth)
		return json_fail_with(c, JSON_E_DEPTH);
	if (c->p >= c->end || *c->p != open)
		return json_fail_with(c, what);
	c->p++;
	c->depth++;
	json_ws(c);
	return 0;
}

/* After a member or element: 1 at the close (taken), 0 after a ',' (taken), else the error. */
static int next_or_close(struct json_cur *c, char close, enum json_error what)
{
	json_ws(c);
	if (c->p < c->end && *c->p == close) {
		c->p++;
		c->depth--;
		return 1;
	}
	if (c->p < c->end && *c->p == ',') {
		c->p++;
		return 0;
	}
	return json_fail_with(c, what);
}

int json_read_object(struct json_cur *c, int (*each)(struct json_cur *c, const char *key, void *arg), void *arg)
{
	char key[JSON_WALK_KEY_MAX], seen[JSON_WALK_MAX_KEYS][JSON_WALK_KEY_MAX];
	int nseen = 0, r;

	if (open_level(c, '{', JSON_E_OBJECT) < 0)
		return -EINVAL;
	if (c->p < c->end && *c->p == '}') {
		c->p++;
		c->depth--;
		return 0;
	}
	do {
		json_ws(c);
		if (c->p >= c->end || *c->p != '"')
			return json_fail_with(c, JSON_E_KEY);
		if (json_read_string(c, key, sizeof(key)) < 0)
			return -EINVAL;
		/* the same key twice: which one counts would depend on the reader */
		for (int i = 0; i < nseen; i++)
			if (!strcmp(seen[i], key))
				return json_fail_with(c, JSON_E_KEY_TWICE);
		if (nseen == JSON_WALK_MAX_KEYS)
			return json_fail_with(c, JSON_E_KEYS);
		memcpy(seen[nseen++], key, sizeof(key));
		json_ws(c);
		if (c->p >= c->end || *c->p != ':')
			return json_fail_with(c, JSON_E_COLON);
		c->p++;
		if (each(c, key, arg) < 0)
			return -EINVAL;
	} while (!(r = next_or_close(c, '}', JSON_E_OBJECT_SEP)));
	return r < 0 ? r : 0;
}

int json_read_array(struct json_cur *c, int (*each)(struct json_cur *c, void *arg), void *arg)
{
	int r;

	if (open_level(c, '[', JSON_E_ARRAY) < 0)
		return -EINVAL;
	if (c->p < c->end && *c->p == ']') {
		c->p++;
		c->depth--;
		return 0;
	}
	do {
		if (each(c, arg) < 0)
			return -EINVAL;
	} while (!(r = next_or_close(c, ']', JSON_E_ARRAY_SEP)));
	return r < 0 ? r : 0;
}

static int skip_member(struct json_cur *c, const char *key, void *arg)
{
	(void)key;
	(void)arg;
	return json_skip(c);
}

static int skip_element(struct json_cur *c, void *arg)
{
	(void)arg;
	return json_skip(c);
}

int json_skip(struct json_cur *c)
{
	enum json_type t;
	double v;
	bool b;

	json_ws(c);
	if (c->p >= c->end)
		return json_fail_with(c, JSON_E_END);
	if (c->depth + 1 > c->max_depth) /* a word or number a level down counts as one too */
		return json_fail_with(c, JSON_E_DEPTH);
	switch (*c->p) {
	case '{': return json_read_object(c, skip_member, NULL);
	case '[': return json_read_array(c, skip_element, NULL);
	case '"': return json_read_string(c, NULL, 0);
	case 't': case 'f': case 'n': return json_read_word(c, &t, &b);
	default: return json_read_number(c, &v);
	}
}
