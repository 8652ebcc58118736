/* SPDX-License-Identifier: MIT */
/*
 * vmm's one JSON reader and writer (saved A/B runs, bench reports, stats replies).
 *
 * The reader is strict, RFC 8259, and reads in one of two ways over the same lexer:
 *  - into a tree (json_parse), for files that may come from anywhere (saved A/B runs): nesting at
 *    most JSON_MAX_DEPTH, and an object with the same key twice is refused (two readers could
 *    otherwise see two different files in one). An array of numbers only is read straight into a
 *    double array (samples come by the hundred thousand), and the whole tree may take at most
 *    json_budget(text length) bytes: a file of 8 MiB costs tens of MiB at worst, not hundreds.
 *  - by callbacks (json_read_object, json_read_array), for a reader that fills fixed structures as
 *    it goes (bench reports): no memory, and an unknown member is skipped whole (json_skip).
 * Errors name the problem in the caller's words (enum json_error) and its byte offset.
 */
#ifndef VMM_CORE_JSON_H
#define VMM_CORE_JSON_H

#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>

#define JSON_MAX_DEPTH 32
#define JSON_BUDGET_PER_BYTE 8	      /* the tree's bytes per byte of text at most, ... */
#define JSON_BUDGET_BASE (1u << 20)   /* ... plus this much for small files */
#define JSON_ALLOC_OVERHEAD 16	      /* what malloc itself takes per block, charged to the budget */
#define JSON_WALK_MAX_KEYS 32	      /* json_read_object: keys in one object, ... */
#define JSON_WALK_KEY_MAX 64	      /* ... each compared on its first bytes, NUL included */

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
 * offset (-ENOMEM when memory ran out). *out is freed on error. err may be NULL. */
int json_parse(const char *text, size_t len, struct json *out, char *err, size_t errsize);
void json_free(struct json *j);
/* The most bytes json_parse lets the tree of a text of len bytes take. */
size_t json_budget(size_t len);
/* The member key of an object, or NULL (not an object, or no such key). */
const struct json *json_get(const struct json *obj, const char *key);

/* What the reader found wrong; each reader words them its own way (struct json_cur's words). */
enum json_error {
	JSON_E_END,	     /* the text ends where a value was expected */
	JSON_E_DEPTH,	     /* nested deeper than max_depth */
	JSON_E_WORD,	     /* not true, false or null */
	JSON_E_NOT_NUMBER,   /* a number was expected and none starts here */
	JSON_E_NUMBER,	     /* a number's syntax */
	JSON_E_NUMBER_LONG,  /* a number of 64 characters or more */
	JSON_E_NUMBER_RANGE, /* a number beyond a double */
	JSON_E_STRING,	     /* a string was expected and none starts here */
	JSON_E_UNTERMINATED, /* a string without its closing quote */
	JSON_E_CONTROL,	     /* a control character in a string */
	JSON_E_ESCAPE,	     /* an escape RFC 8259 does not have */
	JSON_E_U_ESCAPE,     /* \u without four hex digits */
	JSON_E_SURROGATE,    /* half a surrogate pair */
	JSON_E_U0000,	     /* \u0000 (strings are NUL-terminated) */
	JSON_E_OBJECT,	     /* an object was expected */
	JSON_E_ARRAY,	     /* an array was expected */
	JSON_E_KEY,	     /* an object's key was expected */
	JSON_E_COLON,	     /* ':' after a key */
	JSON_E_OBJECT_SEP,   /* ',' or '}' */
	JSON_E_ARRAY_SEP,    /* ',' or ']' */
	JSON_E_ARRAY_NUMBER, /* a number in an array of numbers (after a trailing comma) */
	JSON_E_KEY_TWICE,    /* the same key twice in one object */
	JSON_E_KEYS,	     /* more than JSON_WALK_MAX_KEYS keys in one object */
	JSON_E_TRAILING,     /* text after the value */
	JSON_NR_ERRORS
};

/* A place in a text being read, and where its first complaint goes ("WHAT at byte N"). */
struct json_cur {
	const char *s, *p, *end;
	char *err;	/* may be NULL */
	size_t errsize;
	const char *const *words; /* [enum json_error] */
	int depth, max_depth;	  /* objects and arrays open, and how many may be */
};

void json_cur_init(struct json_cur *c, const char *text, size_t len, char *err, size_t errsize,
		   const char *const words[JSON_NR_ERRORS], int max_depth);
/* Records "what at byte N" unless a complaint is there already (the innermost is the useful one);
 * returns -EINVAL. */
int json_fail(struct json_cur *c, const char *what);
int json_fail_with(struct json_cur *c, enum json_error e);
/* Skips blanks. */
void json_ws(struct json_cur *c);
/* A string into out, NUL-terminated and cut to size (out NULL: skipped). 0 or -EINVAL. */
int json_read_string(struct json_cur *c, char *out, size_t size);
/* The bytes from a string's opening quote up to its closing one (c->p stays): its copy, escapes
 * decoded, is never longer. */
long json_string_len(struct json_cur *c);
int json_read_number(struct json_cur *c, double *v);
/* true, false or null. */
int json_read_word(struct json_cur *c, enum json_type *t, bool *b);
/* Calls each(c, key, arg) on every member (the key cut to JSON_WALK_KEY_MAX - 1 bytes), which reads
 * the value; a key twice is refused. Stops at the first error. */
int json_read_object(struct json_cur *c, int (*each)(struct json_cur *c, const char *key, void *arg), void *arg);
/* Calls each(c, arg) on every element, which reads it. */
int json_read_array(struct json_cur *c, int (*each)(struct json_cur *c, void *arg), void *arg);
/* Reads any one value and forgets it. */
int json_skip(struct json_cur *c);

/* Writes s as a JSON string: quotes, \" \\ \n \t, \u00XX for the other control characters and
 * DEL; UTF-8 passes through as is. */
void json_write_string(FILE *f, const char *s);
/* Writes x as a JSON number (%.6g), or null when it is not finite (JSON has no NaN or inf). */
void json_write_number(FILE *f, double x);
/* ,"key":x the same way: a member after the object's first. */
void json_write_member_number(FILE *f, const char *key, double x);

#endif
