/* SPDX-License-Identifier: MIT */
/*
 * A strict JSON syntax check (RFC 8259) for tests of vmm's JSON output: one value, then only
 * white space. No tree is built; nesting is bounded, so a hostile input cannot blow the stack.
 */
#ifndef VMM_TESTS_JSON_VALID_H
#define VMM_TESTS_JSON_VALID_H

#include <stdbool.h>
#include <string.h>

struct json_cur {
	const char *p, *end;
	int depth;
};

static inline void json_ws(struct json_cur *c)
{
	while (c->p < c->end && (*c->p == ' ' || *c->p == '\t' || *c->p == '\n' || *c->p == '\r'))
		c->p++;
}

static inline bool json_lit(struct json_cur *c, const char *s)
{
	size_t n = strlen(s);

	if ((size_t)(c->end - c->p) < n || memcmp(c->p, s, n))
		return false;
	c->p += n;
	return true;
}

static inline bool json_string(struct json_cur *c)
{
	if (c->p >= c->end || *c->p++ != '"')
		return false;
	while (c->p < c->end) {
		unsigned char ch = *c->p++;

		if (ch == '"')
			return true;
		if (ch < 0x20)
			return false;
		if (ch != '\\')
			continue;
		if (c->p >= c->end)
			return false;
		ch = *c->p++;
		if (ch == 'u') {
			for (int i = 0; i < 4; i++, c->p++)
				if (c->p >= c->end || !strchr("0123456789abcdefABCDEF", *c->p) || !*c->p)
					return false;
		} else if (!strchr("\"\\/bfnrt", ch) || !ch) {
			return false;
		}
	}
	return false;
}

static inline bool json_digits(struct json_cur *c)
{
	const char *s = c->p;

	while (c->p < c->end && *c->p >= '0' && *c->p <= '9')
		c->p++;
	return c->p > s;
}

static inline bool json_number(struct json_cur *c)
{
	if (c->p < c->end && *c->p == '-')
		c->p++;
	if (c->p < c->end && *c->p == '0')
		c->p++;
	else if (!json_digits(c))
		return false;
	if (c->p < c->end && *c->p == '.' && (c->p++, !json_digits(c)))
		return false;
	if (c->p < c->end && (*c->p == 'e' || *c->p == 'E')) {
		c->p++;
		if (c->p < c->end && (*c->p == '+' || *c->p == '-'))
			c->p++;
		if (!json_digits(c))
			return false;
	}
	return true;
}

static inline bool json_value(struct json_cur *c)
{
	json_ws(c);
	if (c->p >= c->end || ++c->depth > 64)
		return false;
	bool ok = false;
	char open = *c->p;

	if (open == '{' || open == '[') {
		char close = open == '{' ? '}' : ']';

		c->p++;
		json_ws(c);
		if (c->p < c->end && *c->p == close) {
			c->p++;
			ok = true;
		} else {
			for (;;) {
				if (open == '{') {
					json_ws(c);
					if (!json_string(c))
						break;
					json_ws(c);
					if (c->p >= c->end || *c->p++ != ':')
						break;
				}
				if (!json_value(c))
					break;
				json_ws(c);
				if (c->p < c->end && *c->p == ',') {
					c->p++;
					continue;
				}
				ok = c->p < c->end && *c->p++ == close;
				break;
			}
		}
	} else if (open == '"') {
		ok = json_string(c);
	} else if (open == 't' || open == 'f' || open == 'n') {
		ok = json_lit(c, "true") || json_lit(c, "false") || json_lit(c, "null");
	} else {
		ok = json_number(c);
	}
	c->depth--;
	return ok;
}

/* true when [s, s+len) is exactly one JSON value (white space around it allowed). */
static inline bool json_valid(const char *s, size_t len)
{
	struct json_cur c = { s, s + len, 0 };

	if (!json_value(&c))
		return false;
	json_ws(&c);
	return c.p == c.end;
}

#endif
