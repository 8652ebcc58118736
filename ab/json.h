/* SPDX-License-Identifier: MIT */
/*
 * A strict, bounded JSON reader for files that may come from anywhere (saved A/B runs): RFC 8259
 * values, nesting at most JSON_MAX_DEPTH, and an object with the same key twice is refused (two
 * readers could otherwise see two different files in one). An array of numbers only is kept as a
 * double array (samples come by the hundred thousand).
 */
#ifndef VMM_AB_JSON_H
#define VMM_AB_JSON_H

#include <stdbool.h>
#include <stddef.h>

#define JSON_MAX_DEPTH 32

enum json_type { JSON_NULL, JSON_BOOL, JSON_NUM, JSON_STR, JSON_ARR, JSON_NUMS, JSON_OBJ };

struct json {
	enum json_type t;
	bool b;
	double num;
	char *str;	     /* JSON_STR, NUL-terminated (a NUL inside is refused) */
	size_t n;	     /* JSON_ARR, JSON_NUMS, JSON_OBJ: items */
	struct json *items;  /* JSON_ARR, JSON_OBJ: the values */
	char **keys;	     /* JSON_OBJ */
	double *nums;	     /* JSON_NUMS */
};

/* Parses text[0..len) as one JSON value. 0, or -EINVAL with err naming the problem and its byte
 * offset (-ENOMEM when memory ran out). *out is freed on error. */
int json_parse(const char *text, size_t len, struct json *out, char *err, size_t errsize);
void json_free(struct json *j);
/* The member key of an object, or NULL (not an object, or no such key). */
const struct json *json_get(const struct json *obj, const char *key);

#endif
