// SPDX-License-Identifier: MIT
/* The strict JSON reader: see json.h. Recursive descent, depth-bounded, every length checked. */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/json.h"

struct jp {
	const char *s, *p, *end;
	char *err;
	size_t errsize;
	int depth;
	bool nomem;
	size_t used, budget; /* bytes of the tree so far, and what the text's size allows */
};

static int fail(struct jp *j, const char *what)
{
	if (j->err && !j->err[0])
		snprintf(j->err, j->errsize, "%s at byte %zu", what, (size_t)(j->p - j->s));
	return -1;
}

/* Every allocation of the tree goes through here: it is charged, with malloc's own overhead, against
 * a budget set by the text's size, so a hostile file costs at most a small multiple of itself. */
static void *jalloc(struct jp *j, void *old, size_t oldsize, size_t size)
{
	size_t charge = size + JSON_ALLOC_OVERHEAD, refund = old ? oldsize + JSON_ALLOC_OVERHEAD : 0;
	void *p;

	if (j->used - refund + charge > j->budget) {
		char what[160];

		snprintf(what, sizeof(what),
			 "more values than a file of its size holds (its tree would need more than %zu MiB)",
			 j->budget >> 20);
		fail(j, what);
		return NULL;
	}
	if (!(p = realloc(old, size ? size : 1))) {
		j->nomem = true;
		fail(j, "out of memory");
		return NULL;
	}
	j->used = j->used - refund + charge;
	return p;
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

/* A string into a malloc'd, NUL-terminated copy (UTF-8 for \u escapes; \u0000 refused). The copy
 * is sized by the raw text up to the closing quote: escapes only ever shrink, so it never grows. */
static int string(struct jp *j, char **out)
{
	const char *q = j->p + 1;
	size_t n = 0;
	char *b;

	*out = NULL;
	while (q < j->end && *q != '"')
		q += *q == '\\' ? 2 : 1;
	if (q >= j->end) {
		j->p = j->end;
		return fail(j, "a string without its closing quote");
	}
	if (!(b = jalloc(j, NULL, 0, (size_t)(q - j->p))))
		return -1;
	j->p++; /* the opening quote */
	for (;;) {
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
		memcpy(b + n, enc, k); /* an escape of 2 (6, 12) raw bytes gives at most 1 (3, 4) */
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
	size_t nc = *cap ? 2 * *cap : 4;
	struct json *it = jalloc(j, v->items, *cap * sizeof(*it), nc * sizeof(*it));

	if (!it)
		return -1;
	v->items = it;
	if (obj) {
		char **k = jalloc(j, v->keys, *cap * sizeof(*k), nc * sizeof(*k));

		if (!k)
			return -1;
		v->keys = k;
	}
	*cap = nc;
	return 0;
}

/* The spare capacity given back once a list's length is known. */
static void shrink(struct jp *j, struct json *v, size_t cap, bool obj)
{
	struct json *it;
	char **k;

	if (v->n == cap || !v->n)
		return;
	if ((it = realloc(v->items, v->n * sizeof(*it)))) {
		v->items = it;
		j->used -= (cap - v->n) * sizeof(*it);
	}
	if (obj && (k = realloc(v->keys, v->n * sizeof(*k)))) {
		v->keys = k;
		j->used -= (cap - v->n) * sizeof(*k);
	}
}

/* How many numbers a list holds when it holds nothing else (its text is only number characters,
 * blanks and commas up to its ']'), else 0: such a list is read straight into doubles. */
static size_t numbers_ahead(const struct jp *j)
{
	size_t commas = 0;
	bool digit = false;

	for (const char *q = j->p + 1; q < j->end; q++) {
		char c = *q;

		if (c == ']')
			return digit ? commas + 1 : 0;
		if (c == ',')
			commas++;
		else if (c >= '0' && c <= '9')
			digit = true;
		else if (!strchr("+-.eE \t\r\n", c) || !c)
			return 0;
	}
	return 0;
}

static int number(struct jp *j, double *v);

static int number_list(struct jp *j, struct json *v, size_t count)
{
	v->t = JSON_NUMS;
	if (!(v->nums = jalloc(j, NULL, 0, count * sizeof(*v->nums))))
		return -1;
	j->p++;
	for (;;) {
		ws(j);
		if (v->n == count) /* a trailing comma left a count too high */
			return fail(j, "expected a number in an array");
		if (number(j, &v->nums[v->n]) < 0)
			return -1;
		v->n++;
		ws(j);
		if (j->p < j->end && *j->p == ',') {
			j->p++;
			continue;
		}
		if (j->p < j->end && *j->p == ']' && v->n == count) {
			j->p++;
			return 0;
		}
		return fail(j, "expected ',' or ']' in an array");
	}
}

static int array(struct jp *j, struct json *v)
{
	size_t cap = 0, nums = numbers_ahead(j);

	if (nums)
		return number_list(j, v, nums);
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
		ws(j);
		if (j->p < j->end && *j->p == ',') {
			j->p++;
			continue;
		}
		if (j->p < j->end && *j->p == ']') {
			j->p++;
			shrink(j, v, cap, false);
			return 0;
		}
		return fail(j, "expected ',' or ']' in an array");
	}
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
			shrink(j, v, cap, true);
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
	if (v->t == JSON_ARR || v->t == JSON_OBJ) {
		for (size_t i = 0; v->items && i < v->n; i++) {
			json_free(&v->items[i]);
			if (v->t == JSON_OBJ && v->keys)
				free(v->keys[i]);
		}
		free(v->items);
		if (v->t == JSON_OBJ)
			free(v->keys);
	} else if (v->t == JSON_NUMS) {
		free(v->nums);
	} else if (v->t == JSON_STR) {
		free(v->str);
	}
	memset(v, 0, sizeof(*v));
}

int json_parse(const char *text, size_t len, struct json *out, char *err, size_t errsize)
{
	struct jp j = { text, text, text + len, err, errsize, 0, false, 0, json_budget(len) };

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

size_t json_budget(size_t len)
{
	return JSON_BUDGET_PER_BYTE * len + JSON_BUDGET_BASE;
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
