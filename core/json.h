/* SPDX-License-Identifier: MIT */
/*
 * A strict, bounded JSON reader for files that may come from anywhere (saved A/B runs): RFC 8259
 * values, nesting at most JSON_MAX_DEPTH, and an object with the same key twice is refused (two
 * readers could otherwise see two different files in one). An array of numbers only is read straight
 * into a double array (samples come by the hundred thousand), and the whole tree may take at most
 * json_budget(text length) bytes: a file of 8 MiB costs tens of MiB at worst, not hundreds.
 */
#ifndef VMM_CORE_JSON_H
#define VMM_CORE_JSON_H

#include <stdbool.h>
#include <stddef.h>

#define JSON_MAX_DEPTH 32
#define JSON_BUDGET_PER_BYTE 8	      /* the tree's bytes per byte of text at most, ... */
#define JSON_BUDGET_BASE (1u << 20)   /* ... plus this much for small files */
#define JSON_ALLOC_OVERHEAD 16	      /* what malloc itself takes per block, charged to the budget */

enum json_type { JSON_NULL, JSON_BOOL, JSON_NUM, JSON_STR, JSON_ARR, JSON_NUMS, JSON_OBJ };

/* One value; read only the members of its type t (they share memory). */
struct json {
	enum json_type t;
	size_t n; /* JSON_ARR, JSON_NUMS, JSON_OBJ: items */
	union {
		bool b;		/* JSON_BOOL */
		double num;	/* JSON_NUM */
		char *str;	/* JSON_STR, NUL-terminated (a NUL inside is refused) */
		double *nums;	/* JSON_NUMS */
		struct {
			struct json *items; /* JSON_ARR, JSON_OBJ: the values */
			char **keys;	    /* JSON_OBJ */
		};
	};
};

/* Parses text[0..len) as one JSON value. 0, or -EINVAL with err naming the problem and its byte
 * offset (-ENOMEM when memory ran out). *out is freed on error. */
int json_parse(const char *text, size_t len, struct json *out, char *err, size_t errsize);
void json_free(struct json *j);
/* The most bytes json_parse lets the tree of a text of len bytes take. */
size_t json_budget(size_t len);
/* The member key of an object, or NULL (not an object, or no such key). */
const struct json *json_get(const struct json *obj, const char *key);

#endif
