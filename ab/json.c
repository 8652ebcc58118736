// SPDX-License-Identifier: MIT
/* The strict JSON reader: see json.h. Recursive descent, depth-bounded, every length checked. */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ab/json.h"

struct jp {
	const char *s, *p, *end;
	char *err;
	size_t errsize;
	int depth;
	bool nomem;
};

static int fail(struct jp *j, const char *what)
{
	if (j->err && !j->err[0])
		snprintf(j->err, j->errsize, "%s at byte %zu", what, (size_t)(j->p - j->s));
	return -1;
}

static void ws(struct jp *j)
{
	while (j->p < j->end && (*j->p == ' ' || *j->p == '\n' || *j->p == '\t' || *j->p == '\r'))
		j->p++;
}

static int hex4(struct jp *j, unsigned *v)
{
	*v = 0;
	for (int i = 0; i < 4; i++, j->p++) {
		char c = j->p < j->end ? *j->p : 0;

		*v <<= 4;
		if (c >= '0' && c <= '9')
			*v |= c - '0';
		else if ((c | 32) >= 'a' && (c | 32) <= 'f')
			*v |= (c | 32) - 'a' + 10;
		else
			return fail(j, "a bad \\u escape");
	}
	return 0;
}

/* A string into a malloc'd, NUL-terminated copy (UTF-8 for \u escapes; \u0000 refused). */
static int string(struct jp *j, char **out)
{
	size_t cap = 16, n = 0;
	char *b = malloc(cap);

	*out = NULL;
	if (!b)
		return j->nomem = true, fail(j, "out of memory");
	j->p++; /* the opening quote */
	for (;;) {
		if (j->p >= j->end) {
			free(b);
			return fail(j, "a string without its closing quote");
		}
		unsigned char c = (unsigned char)*j->p++;
		unsigned u = c;
		char enc[4];
		int k = 1;

		if (c == '"')
			break;
		if (c < 0x20) {
			free(b);
			return fail(j, "a control character in a string");
		}
		if (c == '\\') {
			char e = j->p < j->end ? *j->p++ : 0;
			const char *m = strchr("\"\\/bfnrt", e);

			if (e && m) {
				u = "\"\\/\b\f\n\r\t"[m - "\"\\/bfnrt"];
			} else if (e == 'u') {
				if (hex4(j, &u) < 0) {
					free(b);
					return -1;
				}
				if (u >= 0xd800 && u < 0xdc00) { /* a surrogate pair */
					unsigned lo;

					if (j->end - j->p < 6 || j->p[0] != '\\' || j->p[1] != 'u') {
						free(b);
						return fail(j, "a lone surrogate in a \\u escape");
					}
					j->p += 2;
					if (hex4(j, &lo) < 0 || lo < 0xdc00 || lo > 0xdfff) {
						free(b);
						return fail(j, "a lone surrogate in a \\u escape");
					}
					u = 0x10000 + ((u - 0xd800) << 10) + (lo - 0xdc00);
				} else if (u >= 0xdc00 && u < 0xe000) {
					free(b);
					return fail(j, "a lone surrogate in a \\u escape");
				}
				if (u == 0) {
					free(b);
					return fail(j, "\\u0000 in a string");
				}
			} else {
				free(b);
				return fail(j, "a bad escape in a string");
			}
			if (u < 0x80) {
				enc[0] = (char)u;
			} else if (u < 0x800) {
				enc[0] = (char)(0xc0 | u >> 6);
				enc[1] = (char)(0x80 | (u & 63));
				k = 2;
			} else if (u < 0x10000) {
				enc[0] = (char)(0xe0 | u >> 12);
				enc[1] = (char)(0x80 | (u >> 6 & 63));
				enc[2] = (char)(0x80 | (u & 63));
				k = 3;
			} else {
				enc[0] = (char)(0xf0 | u >> 18);
				enc[1] = (char)(0x80 | (u >> 12 & 63));
				enc[2] = (char)(0x80 | (u >> 6 & 63));
				enc[3] = (char)(0x80 | (u & 63));
				k = 4;
			}
		} else {
			enc[0] = (char)c;
		}
		if (n + k + 1 > cap) {
			char *nb = realloc(b, cap *= 2);

			if (!nb) {
				free(b);
				return j->nomem = true, fail(j, "out of memory");
			}
			b = nb;
		}
		memcpy(b + n, enc, k);
		n += k;
	}
	b[n] = 0;
	*out = b;
	return 0;
}

static int number(struct jp *j, double *v)
{
	const char *p = j->p, *start = p;
	char buf[64];

	if (p < j->end && *p == '-')
		p++;
	if (p < j->end && *p == '0')
		p++;
	else if (p < j->end && *p >= '1' && *p <= '9')
		while (p < j->end && *p >= '0' && *p <= '9')
			p++;
	else
		return fail(j, "a bad number");
	if (p < j->end && *p == '.') {
		if (++p >= j->end || *p < '0' || *p > '9')
			return fail(j, "a bad number");
		while (p < j->end && *p >= '0' && *p <= '9')
			p++;
	}
	if (p < j->end && (*p == 'e' || *p == 'E')) {
		p++;
		if (p < j->end && (*p == '+' || *p == '-'))
			p++;
		if (p >= j->end || *p < '0' || *p > '9')
			return fail(j, "a bad number");
		while (p < j->end && *p >= '0' && *p <= '9')
			p++;
	}
	if ((size_t)(p - start) >= sizeof(buf))
		return fail(j, "a number too long");
	memcpy(buf, start, p - start);
	buf[p - start] = 0;
	*v = strtod(buf, NULL);
	if (!isfinite(*v))
		return fail(j, "a number out of range");
	j->p = p;
	return 0;
}

static int value(struct jp *j, struct json *v);

static int grow(struct jp *j, struct json *v, size_t *cap, bool obj)
{
	if (v->n < *cap)
		return 0;
	size_t nc = *cap ? 2 * *cap : 8;
	struct json *it = realloc(v->items, nc * sizeof(*it));

	if (!it)
		return j->nomem = true, fail(j, "out of memory");
	v->items = it;
	if (obj) {
		char **k = realloc(v->keys, nc * sizeof(*k));

		if (!k)
			return j->nomem = true, fail(j, "out of memory");
		v->keys = k;
	}
	*cap = nc;
	return 0;
}

static int array(struct jp *j, struct json *v)
{
	size_t cap = 0;
	bool all_nums = true;

	v->t = JSON_ARR;
	j->p++;
	ws(j);
	if (j->p < j->end && *j->p == ']') {
		j->p++;
		return 0;
	}
	for (;;) {
		if (grow(j, v, &cap, false) < 0)
			return -1;
		memset(&v->items[v->n], 0, sizeof(v->items[0]));
		if (value(j, &v->items[v->n++]) < 0)
			return -1;
		all_nums &= v->items[v->n - 1].t == JSON_NUM;
		ws(j);
		if (j->p < j->end && *j->p == ',') {
			j->p++;
			continue;
		}
		if (j->p < j->end && *j->p == ']') {
			j->p++;
			break;
		}
		return fail(j, "expected ',' or ']' in an array");
	}
	if (all_nums) { /* compact: a double per item */
		double *d = malloc(v->n * sizeof(*d));

		if (!d)
			return j->nomem = true, fail(j, "out of memory");
		for (size_t i = 0; i < v->n; i++)
			d[i] = v->items[i].num;
		free(v->items);
		v->items = NULL;
		v->nums = d;
		v->t = JSON_NUMS;
	}
	return 0;
}

static int object(struct jp *j, struct json *v)
{
	size_t cap = 0;

	v->t = JSON_OBJ;
	j->p++;
	ws(j);
	if (j->p < j->end && *j->p == '}') {
		j->p++;
		return 0;
	}
	for (;;) {
		char *key;

		ws(j);
		if (j->p >= j->end || *j->p != '"')
			return fail(j, "expected a key in an object");
		if (string(j, &key) < 0)
			return -1;
		/* the same key twice: which one counts would depend on the reader */
		for (size_t i = 0; i < v->n; i++)
			if (!strcmp(v->keys[i], key)) {
				char what[96];

				snprintf(what, sizeof(what), "the key \"%.40s\" twice in one object", key);
				free(key);
				return fail(j, what);
			}
		if (grow(j, v, &cap, true) < 0) {
			free(key);
			return -1;
		}
		v->keys[v->n] = key;
		memset(&v->items[v->n], 0, sizeof(v->items[0]));
		v->n++;
		ws(j);
		if (j->p >= j->end || *j->p != ':')
			return fail(j, "expected ':' after a key");
		j->p++;
		if (value(j, &v->items[v->n - 1]) < 0)
			return -1;
		ws(j);
		if (j->p < j->end && *j->p == ',') {
			j->p++;
			continue;
		}
		if (j->p < j->end && *j->p == '}') {
			j->p++;
			return 0;
		}
		return fail(j, "expected ',' or '}' in an object");
	}
}

static bool word(struct jp *j, const char *w)
{
	size_t n = strlen(w);

	if ((size_t)(j->end - j->p) < n || memcmp(j->p, w, n))
		return false;
	j->p += n;
	return true;
}

static int value(struct jp *j, struct json *v)
{
	int r;

	ws(j);
	if (j->p >= j->end)
		return fail(j, "the text ends where a value was expected");
	if (++j->depth > JSON_MAX_DEPTH)
		return fail(j, "nested too deep");
	switch (*j->p) {
	case '{': r = object(j, v); break;
	case '[': r = array(j, v); break;
	case '"': v->t = JSON_STR; r = string(j, &v->str); break;
	case 't': v->t = JSON_BOOL; v->b = true; r = word(j, "true") ? 0 : fail(j, "a bad word"); break;
	case 'f': v->t = JSON_BOOL; r = word(j, "false") ? 0 : fail(j, "a bad word"); break;
	case 'n': v->t = JSON_NULL; r = word(j, "null") ? 0 : fail(j, "a bad word"); break;
	default: v->t = JSON_NUM; r = number(j, &v->num); break;
	}
	j->depth--;
	return r;
}

void json_free(struct json *v)
{
	if (!v)
		return;
	for (size_t i = 0; v->items && i < v->n; i++) {
		json_free(&v->items[i]);
		if (v->keys)
			free(v->keys[i]);
	}
	free(v->items);
	free(v->keys);
	free(v->nums);
	free(v->str);
	memset(v, 0, sizeof(*v));
}

int json_parse(const char *text, size_t len, struct json *out, char *err, size_t errsize)
{
	struct jp j = { text, text, text + len, err, errsize, 0, false };

	memset(out, 0, sizeof(*out));
	if (err && errsize)
		err[0] = 0;
	if (value(&j, out) == 0) {
		ws(&j);
		if (j.p == j.end)
			return 0;
		fail(&j, "text after the value");
	}
	json_free(out);
	return j.nomem ? -ENOMEM : -EINVAL;
}

const struct json *json_get(const struct json *obj, const char *key)
{
	if (!obj || obj->t != JSON_OBJ)
		return NULL;
	for (size_t i = 0; i < obj->n; i++)
		if (!strcmp(obj->keys[i], key))
			return &obj->items[i];
	return NULL;
}
