// SPDX-License-Identifier: MIT
/* The JSON reader's tree (json_parse, core/json.h): recursive descent over json_lex.c's lexer,
 * depth-bounded, every allocation charged to a budget set by the text's size. */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/json.h"

/* The words of json_parse's complaints. */
static const char *const strict_words[JSON_NR_ERRORS] = {
	[JSON_E_END] = "the text ends where a value was expected",
	[JSON_E_DEPTH] = "nested too deep",
	[JSON_E_WORD] = "a bad word",
	[JSON_E_NOT_NUMBER] = "a bad number",
	[JSON_E_NUMBER] = "a bad number",
	[JSON_E_NUMBER_LONG] = "a number too long",
	[JSON_E_NUMBER_RANGE] = "a number out of range",
	[JSON_E_STRING] = "expected a string",
	[JSON_E_UNTERMINATED] = "a string without its closing quote",
	[JSON_E_CONTROL] = "a control character in a string",
	[JSON_E_ESCAPE] = "a bad escape in a string",
	[JSON_E_U_ESCAPE] = "a bad \\u escape",
	[JSON_E_SURROGATE] = "a lone surrogate in a \\u escape",
	[JSON_E_U0000] = "\\u0000 in a string",
	[JSON_E_OBJECT] = "expected an object",
	[JSON_E_ARRAY] = "expected an array",
	[JSON_E_KEY] = "expected a key in an object",
	[JSON_E_COLON] = "expected ':' after a key",
	[JSON_E_OBJECT_SEP] = "expected ',' or '}' in an object",
	[JSON_E_ARRAY_SEP] = "expected ',' or ']' in an array",
	[JSON_E_ARRAY_NUMBER] = "expected a number in an array",
	[JSON_E_KEY_TWICE] = "a key twice in one object",
	[JSON_E_KEYS] = "more keys in one object than the reader takes",
	[JSON_E_TRAILING] = "text after the value",
};

struct jp {
	struct json_cur c;
	bool nomem;
	size_t used, budget; /* bytes of the tree so far, and what the text's size allows */
};

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
		json_fail(&j->c, what);
		return NULL;
	}
	if (!(p = realloc(old, size ? size : 1))) {
		j->nomem = true;
		json_fail(&j->c, "out of memory");
		return NULL;
	}
	j->used = j->used - refund + charge;
	return p;
}

/* A string into a malloc'd, NUL-terminated copy, sized by the raw text up to the closing quote. */
static int string(struct jp *j, char **out)
{
	long len = json_string_len(&j->c);
	char *b;

	*out = NULL;
	if (len < 0)
		return -1;
	if (!(b = jalloc(j, NULL, 0, (size_t)len)))
		return -1;
	if (json_read_string(&j->c, b, (size_t)len) < 0) {
		free(b);
		return -1;
	}
	*out = b;
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

	for (const char *q = j->c.p + 1; q < j->c.end; q++) {
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

static int number_list(struct jp *j, struct json *v, size_t count)
{
	v->t = JSON_NUMS;
	if (!(v->nums = jalloc(j, NULL, 0, count * sizeof(*v->nums))))
		return -1;
	j->c.p++;
	for (;;) {
		json_ws(&j->c);
		if (v->n == count) /* a trailing comma left a count too high */
			return json_fail_with(&j->c, JSON_E_ARRAY_NUMBER);
		if (json_read_number(&j->c, &v->nums[v->n]) < 0)
			return -1;
		v->n++;
		json_ws(&j->c);
		if (j->c.p < j->c.end && *j->c.p == ',') {
			j->c.p++;
			continue;
		}
		if (j->c.p < j->c.end && *j->c.p == ']' && v->n == count) {
			j->c.p++;
			return 0;
		}
		return json_fail_with(&j->c, JSON_E_ARRAY_SEP);
	}
}

static int array(struct jp *j, struct json *v)
{
	size_t cap = 0, nums = numbers_ahead(j);

	if (nums)
		return number_list(j, v, nums);
	v->t = JSON_ARR;
	j->c.p++;
	json_ws(&j->c);
	if (j->c.p < j->c.end && *j->c.p == ']') {
		j->c.p++;
		return 0;
	}
	for (;;) {
		if (grow(j, v, &cap, false) < 0)
			return -1;
		memset(&v->items[v->n], 0, sizeof(v->items[0]));
		if (value(j, &v->items[v->n++]) < 0)
			return -1;
		json_ws(&j->c);
		if (j->c.p < j->c.end && *j->c.p == ',') {
			j->c.p++;
			continue;
		}
		if (j->c.p < j->c.end && *j->c.p == ']') {
			j->c.p++;
			shrink(j, v, cap, false);
			return 0;
		}
		return json_fail_with(&j->c, JSON_E_ARRAY_SEP);
	}
}

static int object(struct jp *j, struct json *v)
{
	size_t cap = 0;

	v->t = JSON_OBJ;
	j->c.p++;
	json_ws(&j->c);
	if (j->c.p < j->c.end && *j->c.p == '}') {
		j->c.p++;
		return 0;
	}
	for (;;) {
		char *key;

		json_ws(&j->c);
		if (j->c.p >= j->c.end || *j->c.p != '"')
			return json_fail_with(&j->c, JSON_E_KEY);
		if (string(j, &key) < 0)
			return -1;
		/* the same key twice: which one counts would depend on the reader */
		for (size_t i = 0; i < v->n; i++)
			if (!strcmp(v->keys[i], key)) {
				char what[96];

				snprintf(what, sizeof(what), "the key \"%.40s\" twice in one object", key);
				free(key);
				return json_fail(&j->c, what);
			}
		if (grow(j, v, &cap, true) < 0) {
			free(key);
			return -1;
		}
		v->keys[v->n] = key;
		memset(&v->items[v->n], 0, sizeof(v->items[0]));
		v->n++;
		json_ws(&j->c);
		if (j->c.p >= j->c.end || *j->c.p != ':')
			return json_fail_with(&j->c, JSON_E_COLON);
		j->c.p++;
		if (value(j, &v->items[v->n - 1]) < 0)
			return -1;
		json_ws(&j->c);
		if (j->c.p < j->c.end && *j->c.p == ',') {
			j->c.p++;
			continue;
		}
		if (j->c.p < j->c.end && *j->c.p == '}') {
			j->c.p++;
			shrink(j, v, cap, true);
			return 0;
		}
		return json_fail_with(&j->c, JSON_E_OBJECT_SEP);
	}
}

static int value(struct jp *j, struct json *v)
{
	int r;

	json_ws(&j->c);
	if (j->c.p >= j->c.end)
		return json_fail_with(&j->c, JSON_E_END);
	if (++j->c.depth > JSON_MAX_DEPTH)
		return json_fail_with(&j->c, JSON_E_DEPTH);
	switch (*j->c.p) {
	case '{': r = object(j, v); break;
	case '[': r = array(j, v); break;
	case '"': v->t = JSON_STR; r = string(j, &v->str); break;
	case 't': case 'f': case 'n': r = json_read_word(&j->c, &v->t, &v->b); break;
	default: v->t = JSON_NUM; r = json_read_number(&j->c, &v->num); break;
	}
	j->c.depth--;
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
	struct jp j = { .budget = json_budget(len) };

	json_cur_init(&j.c, text, len, err, errsize, strict_words, JSON_MAX_DEPTH);
	memset(out, 0, sizeof(*out));
	if (value(&j, out) == 0) {
		json_ws(&j.c);
		if (j.c.p == j.c.end)
			return 0;
		json_fail_with(&j.c, JSON_E_TRAILING);
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
