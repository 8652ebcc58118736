// SPDX-License-Identifier: MIT
/*
 * Reading bench JSON back (bench/bench.h): a small recursive-descent reader for the shape
 * bench_write_json writes. Unknown keys are skipped whole, so a newer writer's extra fields do not
 * break an older compare; anything malformed is refused with its byte offset.
 */
#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "bench/bench.h"
#include "core/log.h"

#define MAX_DEPTH 16
#define MAX_FILE (16 << 20)

struct cur {
	const char *s, *p;
	char *err;
	size_t errsize;
};

static int fail(struct cur *c, const char *what)
{
	if (!c->err[0]) /* the innermost complaint is the useful one */
		snprintf(c->err, c->errsize, "%s at byte %td", what, c->p - c->s);
	return -EINVAL;
}

static void ws(struct cur *c)
{
	while (*c->p == ' ' || *c->p == '\n' || *c->p == '\r' || *c->p == '\t')
		c->p++;
}

static int eat(struct cur *c, char ch)
{
	ws(c);
	if (*c->p != ch) {
		char m[32];

		snprintf(m, sizeof(m), "expected '%c'", ch);
		return fail(c, m);
	}
	c->p++;
	return 0;
}

/* A string into out (truncated to size; escapes \" \\ \/ and \n\t kept simple, \u refused). */
static int string(struct cur *c, char *out, size_t size)
{
	size_t n = 0;

	if (eat(c, '"') < 0)
		return -EINVAL;
	for (;;) {
		char ch = *c->p++;

		if (!ch || (unsigned char)ch < 0x20)
			return c->p--, fail(c, "unterminated string or control character");
		if (ch == '"')
			break;
		if (ch == '\\') {
			ch = *c->p++;
			switch (ch) {
			case '"': case '\\': case '/': break;
			case 'n': ch = '\n'; break;
			case 't': ch = '\t'; break;
			default: return c->p--, fail(c, "unsupported string escape");
			}
		}
		if (out && n + 1 < size)
			out[n++] = ch;
	}
	if (out && size)
		out[n] = 0;
	return 0;
}

static int number(struct cur *c, double *v)
{
	char *end;

	ws(c);
	if (!(*c->p == '-' || (*c->p >= '0' && *c->p <= '9')))
		return fail(c, "expected a number");
	*v = strtod(c->p, &end);
	if (end == c->p || !isfinite(*v))
		return fail(c, "bad number");
	c->p = end;
	return 0;
}

static int skip(struct cur *c, int depth);

/* Calls each(c, key, arg) on every member of an object. A key twice is refused: which value
 * counted would depend on the reader (a second "samples" would append to the first). */
static int object(struct cur *c, int depth, int (*each)(struct cur *, const char *, void *), void *arg)
{
	enum { MAX_KEYS = 32 };
	char key[64], seen[MAX_KEYS][64];
	int nseen = 0;

	if (depth > MAX_DEPTH)
		return fail(c, "nested too deeply");
	if (eat(c, '{') < 0)
		return -EINVAL;
	ws(c);
	if (*c->p == '}')
		return c->p++, 0;
	for (;;) {
		if (string(c, key, sizeof(key)) < 0)
			return -EINVAL;
		for (int i = 0; i < nseen; i++)
			if (!strcmp(seen[i], key))
				return fail(c, "a key twice in one object");
		if (nseen == MAX_KEYS)
			return fail(c, "more keys in one object than a report has");
		snprintf(seen[nseen++], sizeof(seen[0]), "%s", key);
		if (eat(c, ':') < 0 || each(c, key, arg) < 0)
			return -EINVAL;
		ws(c);
		if (*c->p == '}')
			return c->p++, 0;
		if (eat(c, ',') < 0)
			return -EINVAL;
	}
}

/* Calls each(c, arg) on every element of an array. */
static int array(struct cur *c, int (*each)(struct cur *, void *), void *arg)
{
	if (eat(c, '[') < 0)
		return -EINVAL;
	ws(c);
	if (*c->p == ']')
		return c->p++, 0;
	for (;;) {
		if (each(c, arg) < 0)
			return -EINVAL;
		ws(c);
		if (*c->p == ']')
			return c->p++, 0;
		if (eat(c, ',') < 0)
			return -EINVAL;
	}
}

static int skip_member(struct cur *c, const char *key, void *depth)
{
	(void)key;
	return skip(c, *(int *)depth + 1);
}

static int skip_elem(struct cur *c, void *depth)
{
	return skip(c, *(int *)depth + 1);
}

static int skip(struct cur *c, int depth)
{
	double v;

	if (depth > MAX_DEPTH)
		return fail(c, "nested too deeply");
	ws(c);
	switch (*c->p) {
	case '{': return object(c, depth, skip_member, &depth);
	case '[': return array(c, skip_elem, &depth);
	case '"': return string(c, NULL, 0);
	case 't': case 'f': case 'n': {
		static const char *const words[] = { "true", "false", "null" };

		for (int i = 0; i < 3; i++)
			if (!strncmp(c->p, words[i], strlen(words[i])))
				return c->p += strlen(words[i]), 0;
		return fail(c, "unexpected word");
	}
	default: return number(c, &v);
	}
}

static int sample(struct cur *c, void *arg)
{
	struct bench_figure *f = arg;
	double v;

	if (number(c, &v) < 0)
		return -EINVAL;
	if (f->n == BENCH_MAX_SAMPLES)
		return fail(c, "more samples than a figure holds");
	f->x[f->n++] = v;
	return 0;
}

static int figure_member(struct cur *c, const char *key, void *arg)
{
	struct bench_figure *f = arg;
	char better[16];

	if (!strcmp(key, "name"))
		return string(c, f->name, sizeof(f->name));
	if (!strcmp(key, "unit"))
		return string(c, f->unit, sizeof(f->unit));
	if (!strcmp(key, "better")) {
		if (string(c, better, sizeof(better)) < 0)
			return -EINVAL;
		if (strcmp(better, "higher") && strcmp(better, "lower"))
			return fail(c, "\"better\" must be \"higher\" or \"lower\"");
		f->higher_better = !strcmp(better, "higher");
		return 0;
	}
	if (!strcmp(key, "samples")) {
		f->n = 0;
		return array(c, sample, f);
	}
	return skip(c, 2);
}

static int figure(struct cur *c, void *arg)
{
	struct bench_report *r = arg;

	if (r->nfig == BENCH_MAX_FIGURES)
		return fail(c, "more figures than a report holds");
	struct bench_figure *f = &r->fig[r->nfig];

	memset(f, 0, sizeof(*f));
	if (object(c, 2, figure_member, f) < 0)
		return -EINVAL;
	if (!f->name[0])
		return fail(c, "a figure without a name");
	if (bench_find(r, f->name))
		return fail(c, "a figure named twice");
	r->nfig++;
	return 0;
}

static int ratio_member(struct cur *c, const char *key, void *arg)
{
	struct bench_ratio *q = arg;
	char is[8];

	if (!strcmp(key, "name"))
		return string(c, q->name, sizeof(q->name));
	if (!strcmp(key, "what"))
		return string(c, q->what, sizeof(q->what));
	if (!strcmp(key, "value"))
		return number(c, &q->value);
	if (!strcmp(key, "goal"))
		return number(c, &q->goal);
	if (!strcmp(key, "goal_is")) {
		if (string(c, is, sizeof(is)) < 0)
			return -EINVAL;
		q->goal_max = !strcmp(is, "max");
		return 0;
	}
	return skip(c, 2);
}

static int ratio(struct cur *c, void *arg)
{
	struct bench_report *r = arg;

	if (r->nratio == BENCH_MAX_FIGURES)
		return fail(c, "more ratios than a report holds");
	memset(&r->ratio[r->nratio], 0, sizeof(r->ratio[0]));
	if (object(c, 2, ratio_member, &r->ratio[r->nratio]) < 0)
		return -EINVAL;
	r->nratio++;
	return 0;
}

struct top {
	struct bench_report *r;
	bool version;
};

static int top_member(struct cur *c, const char *key, void *arg)
{
	struct top *t = arg;
	double v;

	if (!strcmp(key, "vmm_bench")) {
		if (number(c, &v) < 0)
			return -EINVAL;
		if (v != 1)
			return fail(c, "unknown vmm_bench version (this vmm reads 1)");
		t->version = true;
		return 0;
	}
	if (!strcmp(key, "where"))
		return string(c, t->r->where, sizeof(t->r->where));
	if (!strcmp(key, "figures"))
		return array(c, figure, t->r);
	if (!strcmp(key, "ratios"))
		return array(c, ratio, t->r);
	return skip(c, 1);
}

int bench_parse(const char *text, struct bench_report *r, char *err, size_t errsize)
{
	struct cur c = { text, text, err, errsize };
	struct top t = { r, false };

	memset(r, 0, sizeof(*r));
	err[0] = 0;
	if (object(&c, 0, top_member, &t) < 0)
		return -EINVAL;
	ws(&c);
	if (*c.p)
		return fail(&c, "trailing text after the report");
	if (!t.version)
		return fail(&c, "no \"vmm_bench\" version: not a make bench report");
	return 0;
}

int bench_read(const char *path, struct bench_report *r)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	char *buf = NULL, err[160];
	size_t len = 0;
	ssize_t n;
	int ret = -EIO;

	if (fd < 0) {
		ret = -errno;
		pr_err("bench: cannot open %s: %s", path, strerror(errno));
		return ret;
	}
	buf = malloc(MAX_FILE + 1);
	while (buf && len < MAX_FILE && (n = read(fd, buf + len, MAX_FILE - len)) > 0)
		len += n;
	close(fd);
	if (!buf) {
		pr_err("bench: out of memory reading %s", path);
		return -ENOMEM;
	}
	if (len == MAX_FILE) {
		pr_err("bench: %s is larger than %d MiB: not a make bench report", path, MAX_FILE >> 20);
		goto out;
	}
	buf[len] = 0;
	if (strlen(buf) != len) {
		pr_err("bench: %s holds a NUL byte: not a make bench report", path);
		goto out;
	}
	ret = bench_parse(buf, r, err, sizeof(err));
	if (ret < 0)
		pr_err("bench: %s: %s (write it with make bench)", path, err);
out:
	free(buf);
	return ret;
}
