// SPDX-License-Identifier: MIT
/*
 * Reading bench JSON back (bench/bench.h) with the JSON reader's callbacks (core/json.h), in the shape
 * bench_write_json writes. Unknown keys are skipped whole, so a newer writer's extra fields do not
 * break an older compare; anything malformed is refused with its byte offset.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "bench/bench.h"
#include "core/json.h"
#include "core/log.h"

#define MAX_DEPTH 16
#define MAX_FILE (16 << 20)

/* bench's words for what the reader finds wrong (the strict reader's are json_parse's own). */
static const char *const bench_words[JSON_NR_ERRORS] = {
	[JSON_E_END] = "expected a number",
	[JSON_E_DEPTH] = "nested too deeply",
	[JSON_E_WORD] = "unexpected word",
	[JSON_E_NOT_NUMBER] = "expected a number",
	[JSON_E_NUMBER] = "bad number",
	[JSON_E_NUMBER_LONG] = "bad number",
	[JSON_E_NUMBER_RANGE] = "bad number",
	[JSON_E_STRING] = "expected '\"'",
	[JSON_E_UNTERMINATED] = "unterminated string or control character",
	[JSON_E_CONTROL] = "unterminated string or control character",
	[JSON_E_ESCAPE] = "unsupported string escape",
	[JSON_E_U_ESCAPE] = "unsupported string escape",
	[JSON_E_SURROGATE] = "unsupported string escape",
	[JSON_E_U0000] = "unsupported string escape",
	[JSON_E_OBJECT] = "expected '{'",
	[JSON_E_ARRAY] = "expected '['",
	[JSON_E_KEY] = "expected '\"'",
	[JSON_E_COLON] = "expected ':'",
	[JSON_E_OBJECT_SEP] = "expected ','",
	[JSON_E_ARRAY_SEP] = "expected ','",
	[JSON_E_ARRAY_NUMBER] = "expected a number",
	[JSON_E_KEY_TWICE] = "a key twice in one object",
	[JSON_E_KEYS] = "more keys in one object than a report has",
	[JSON_E_TRAILING] = "trailing text after the report",
};

static int sample(struct json_cur *c, void *arg)
{
	struct bench_figure *f = arg;
	double v;

	if (json_read_number(c, &v) < 0)
		return -EINVAL;
	if (f->n == BENCH_MAX_SAMPLES)
		return json_fail(c, "more samples than a figure holds");
	f->x[f->n++] = v;
	return 0;
}

static int figure_member(struct json_cur *c, const char *key, void *arg)
{
	struct bench_figure *f = arg;
	char better[16];

	if (!strcmp(key, "name"))
		return json_read_string(c, f->name, sizeof(f->name));
	if (!strcmp(key, "unit"))
		return json_read_string(c, f->unit, sizeof(f->unit));
	if (!strcmp(key, "better")) {
		if (json_read_string(c, better, sizeof(better)) < 0)
			return -EINVAL;
		if (strcmp(better, "higher") && strcmp(better, "lower"))
			return json_fail(c, "\"better\" must be \"higher\" or \"lower\"");
		f->higher_better = !strcmp(better, "higher");
		return 0;
	}
	if (!strcmp(key, "samples")) {
		f->n = 0;
		return json_read_array(c, sample, f);
	}
	return json_skip(c);
}

static int figure(struct json_cur *c, void *arg)
{
	struct bench_report *r = arg;

	if (r->nfig == BENCH_MAX_FIGURES)
		return json_fail(c, "more figures than a report holds");
	struct bench_figure *f = &r->fig[r->nfig];

	memset(f, 0, sizeof(*f));
	if (json_read_object(c, figure_member, f) < 0)
		return -EINVAL;
	if (!f->name[0])
		return json_fail(c, "a figure without a name");
	if (bench_find(r, f->name))
		return json_fail(c, "a figure named twice");
	r->nfig++;
	return 0;
}

static int ratio_member(struct json_cur *c, const char *key, void *arg)
{
	struct bench_ratio *q = arg;
	char is[8];

	if (!strcmp(key, "name"))
		return json_read_string(c, q->name, sizeof(q->name));
	if (!strcmp(key, "what"))
		return json_read_string(c, q->what, sizeof(q->what));
	if (!strcmp(key, "value"))
		return json_read_number(c, &q->value);
	if (!strcmp(key, "goal"))
		return json_read_number(c, &q->goal);
	if (!strcmp(key, "num"))
		return json_read_string(c, q->num, sizeof(q->num));
	if (!strcmp(key, "den"))
		return json_read_string(c, q->den, sizeof(q->den));
	if (!strcmp(key, "by"))
		return json_read_number(c, &q->by);
	if (!strcmp(key, "goal_is")) {
		if (json_read_string(c, is, sizeof(is)) < 0)
			return -EINVAL;
		q->goal_max = !strcmp(is, "max");
		return 0;
	}
	return json_skip(c);
}

static int ratio(struct json_cur *c, void *arg)
{
	struct bench_report *r = arg;

	if (r->nratio == BENCH_MAX_FIGURES)
		return json_fail(c, "more ratios than a report holds");
	memset(&r->ratio[r->nratio], 0, sizeof(r->ratio[0]));
	if (json_read_object(c, ratio_member, &r->ratio[r->nratio]) < 0)
		return -EINVAL;
	r->nratio++;
	return 0;
}

struct top {
	struct bench_report *r;
	bool version;
};

static int top_member(struct json_cur *c, const char *key, void *arg)
{
	struct top *t = arg;
	double v;

	if (!strcmp(key, "vmm_bench")) {
		if (json_read_number(c, &v) < 0)
			return -EINVAL;
		if (v != 1)
			return json_fail(c, "unknown vmm_bench version (this vmm reads 1)");
		t->version = true;
		return 0;
	}
	if (!strcmp(key, "where"))
		return json_read_string(c, t->r->where, sizeof(t->r->where));
	if (!strcmp(key, "figures"))
		return json_read_array(c, figure, t->r);
	if (!strcmp(key, "ratios"))
		return json_read_array(c, ratio, t->r);
	return json_skip(c);
}

int bench_parse(const char *text, struct bench_report *r, char *err, size_t errsize)
{
	struct json_cur c;
	struct top t = { r, false };

	/* MAX_DEPTH levels below the report's own object */
	json_cur_init(&c, text, strlen(text), err, errsize, bench_words, MAX_DEPTH + 1);
	memset(r, 0, sizeof(*r));
	if (json_read_object(&c, top_member, &t) < 0)
		return -EINVAL;
	json_ws(&c);
	if (c.p != c.end)
		return json_fail_with(&c, JSON_E_TRAILING);
	if (!t.version)
		return json_fail(&c, "no \"vmm_bench\" version: not a make bench report");
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
