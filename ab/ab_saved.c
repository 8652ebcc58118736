// SPDX-License-Identifier: MIT
/*
 * Saved A/B runs: the raw samples vmm ab --json keeps per workload and arm, read back by `vmm ab
 * compare` (the same arm on two host kernels, say) and `vmm ab plot`, and the CDF plots both write.
 * A saved file may come from anywhere: it is parsed strictly and bounded.
 */
#include <errno.h>
#include <math.h>
#include <spawn.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>

#include "ab/abstats.h"
#include "vmm/log.h"

#define SAVED_MAX (256u << 20) /* bytes of a saved file */
#define SAVED_MAX_RAW 64       /* workload x arm entries */

extern char **environ;

void ab_saved_write_raw(FILE *f, const struct ab_raw *r, int nr)
{
	fputs("\"raw\":[", f);
	for (int i = 0; i < nr; i++) {
		fprintf(f, "%s{\"workload\":\"%s\",\"arm\":\"%s\",\"unit\":\"us\",\"samples\":[", i ? "," : "",
			r[i].workload, r[i].arm);
		for (size_t k = 0; k < r[i].n; k++)
			fprintf(f, "%s%.3f", k ? "," : "", r[i].x[k]); /* ns resolution */
		fputs("]}", f);
	}
	fputc(']', f);
}

struct cur {
	const char *p, *end;
};

static void ws(struct cur *c)
{
	while (c->p < c->end && (*c->p == ' ' || *c->p == '\n' || *c->p == '\t' || *c->p == '\r'))
		c->p++;
}

static bool eat(struct cur *c, char ch)
{
	ws(c);
	if (c->p < c->end && *c->p == ch) {
		c->p++;
		return true;
	}
	return false;
}

/* A string of printable characters without escapes (arm and workload names need none). */
static bool str(struct cur *c, char *out, size_t size)
{
	size_t n = 0;

	if (!eat(c, '"'))
		return false;
	for (; c->p < c->end && *c->p != '"'; c->p++) {
		if (*c->p == '\\' || (unsigned char)*c->p < 0x20 || n + 1 >= size)
			return false;
		out[n++] = *c->p;
	}
	if (c->p == c->end)
		return false;
	c->p++;
	out[n] = 0;
	return true;
}

static bool samples(struct cur *c, struct ab_raw *r)
{
	size_t cap = 0;

	if (!eat(c, '['))
		return false;
	if (eat(c, ']'))
		return true;
	do {
		char num[40], *end;
		size_t n = 0;

		ws(c);
		while (c->p < c->end && n < sizeof(num) - 1 && strchr("0123456789+-.eE", *c->p))
			num[n++] = *c->p++;
		num[n] = 0;
		double v = strtod(num, &end);

		if (!n || *end || !isfinite(v))
			return false;
		if (r->n == cap) {
			cap = cap ? 2 * cap : 1024;
			double *x = realloc(r->x, cap * sizeof(*x));

			if (!x)
				return false;
			r->x = x;
		}
		r->x[r->n++] = v;
	} while (eat(c, ','));
	return eat(c, ']');
}

static const char *entry(struct cur *c, struct ab_raw *r)
{
	char key[16], unit[8] = "";

	if (!eat(c, '{'))
		return "expected '{' starting an entry";
	do {
		if (!str(c, key, sizeof(key)) || !eat(c, ':'))
			return "expected a key";
		if (strcmp(key, "workload") && strcmp(key, "arm") && strcmp(key, "unit") && strcmp(key, "samples"))
			return "an unknown key in an entry (workload, arm, unit, samples)";
		if (!strcmp(key, "workload") ? !str(c, r->workload, sizeof(r->workload))
		    : !strcmp(key, "arm")    ? !str(c, r->arm, sizeof(r->arm))
		    : !strcmp(key, "unit")   ? !str(c, unit, sizeof(unit))
					      : !samples(c, r))
			return "a bad value (names are short strings without escapes, samples finite numbers)";
	} while (eat(c, ','));
	if (!eat(c, '}'))
		return "expected '}' ending an entry";
	if (!r->workload[0] || !r->arm[0] || strcmp(unit, "us"))
		return "an entry without its workload, arm or unit \"us\"";
	return NULL;
}

int ab_saved_read(const char *path, struct ab_saved *s)
{
	FILE *f = fopen(path, "r");
	char *buf = NULL;
	const char *why = NULL;
	size_t len = 0;

	memset(s, 0, sizeof(*s));
	if (!f) {
		pr_err("%s: cannot open it: %s", path, strerror(errno));
		return -errno;
	}
	buf = malloc(SAVED_MAX + 1);
	if (buf)
		len = fread(buf, 1, SAVED_MAX + 1, f);
	fclose(f);
	if (!buf || len > SAVED_MAX) {
		free(buf);
		pr_err("%s: %s", path, buf ? "larger than 256 MiB: not a vmm ab --json file" : "out of memory");
		return -EINVAL;
	}
	const char *raw = memmem(buf, len, "\"raw\":", 6);
	struct cur c = { raw ? raw + 6 : NULL, buf + len };

	if (!raw) {
		why = "no \"raw\" samples (written by vmm ab --json of this version)";
	} else if (!eat(&c, '[')) {
		why = "\"raw\" is not a list";
	} else if (!eat(&c, ']')) {
		s->r = calloc(SAVED_MAX_RAW, sizeof(*s->r));
		if (!s->r)
			why = "out of memory";
		do {
			if (!why && s->nr == SAVED_MAX_RAW)
				why = "more than 64 workload and arm entries";
			if (!why)
				why = entry(&c, &s->r[s->nr++]);
		} while (!why && eat(&c, ','));
		if (!why && !eat(&c, ']'))
			why = "expected ']' ending \"raw\"";
	}
	free(buf);
	if (why) {
		pr_err("%s: %s", path, why);
		ab_saved_free(s);
		return -EINVAL;
	}
	return 0;
}

void ab_saved_free(struct ab_saved *s)
{
	for (int i = 0; s->r && i < s->nr; i++)
		free(s->r[i].x);
	free(s->r);
	memset(s, 0, sizeof(*s));
}

int ab_saved_compare(FILE *out, const char *name_a, const struct ab_saved *a, const char *name_b,
		     const struct ab_saved *b, const char *arm, uint64_t seed)
{
	struct ab_rng rng;
	struct ab_opts o = { 0 };
	int compared = 0, failed = 0;

	ab_rng_seed(&rng, seed);
	for (int i = 0; i < a->nr; i++) {
		const struct ab_raw *ra = &a->r[i];

		if (arm && strcmp(ra->arm, arm))
			continue;
		for (int j = 0; j < b->nr; j++) {
			const struct ab_raw *rb = &b->r[j];
			struct ab_cmp cmp;
			char la[32], lb[32];

			if (strcmp(ra->workload, rb->workload) || strcmp(ra->arm, rb->arm))
				continue;
			/* the runs' names (files) label the columns; the arm is in the heading */
			snprintf(la, sizeof(la), "%s", name_a);
			snprintf(lb, sizeof(lb), "%s", name_b);
			fprintf(out, "== %s, arm %s (us): A %s, B %s\n", ra->workload, ra->arm, name_a, name_b);
			if (ab_compare(&cmp, la, ra->x, ra->n, lb, rb->x, rb->n, &o, &rng) < 0) {
				failed++;
				continue;
			}
			ab_print(out, &cmp, 1.0, "us");
			compared++;
		}
	}
	if (!compared && !failed) {
		pr_err("vmm ab compare: %s and %s have no workload and arm%s%s in common", name_a, name_b,
		       arm ? " named " : "", arm ? arm : "");
		return -ENODATA;
	}
	return failed ? -EINVAL : 0;
}

int ab_write_plot(const char *prefix, const char *workload, const char *const *names, double *const *sorted,
		  const size_t *n, int nr)
{
	char dat[512], gp[512];

	snprintf(dat, sizeof(dat), "%s-%s.dat", prefix, workload);
	snprintf(gp, sizeof(gp), "%s-%s.gp", prefix, workload);
	FILE *f = fopen(dat, "w");

	if (!f) {
		pr_err("vmm ab: cannot write %s: %s", dat, strerror(errno));
		return -errno;
	}
	for (int a = 0; a < nr; a++) { /* one data block per arm: gnuplot's "index" */
		fprintf(f, "# arm %s\n", names[a]);
		for (size_t i = 0; i < n[a]; i++)
			fprintf(f, "%.3f %.6f\n", sorted[a][i], (double)(i + 1) / n[a]);
		fputs("\n\n", f);
	}
	if (fclose(f) != 0 || !(f = fopen(gp, "w"))) {
		pr_err("vmm ab: cannot write %s or %s", dat, gp);
		return -EIO;
	}
	for (int fmt = 0; fmt < 2; fmt++) {
		fprintf(f, "set terminal %s size 800,500\nset output '%s-%s.%s'\n", fmt ? "pngcairo" : "svg",
			prefix, workload, fmt ? "png" : "svg");
		fprintf(f, "set title 'vmm ab: %s latency, CDF per arm'\nset xlabel 'us (log)'\nset ylabel "
			   "'fraction of samples'\nset logscale x\nset key bottom right\nset grid\nplot ",
			workload);
		for (int a = 0; a < nr; a++)
			fprintf(f, "%s'%s' index %d with lines lw 2 title '%s'", a ? ", " : "", dat, a, names[a]);
		fputc('\n', f);
	}
	if (fclose(f) != 0) {
		pr_err("vmm ab: cannot write %s", gp);
		return -EIO;
	}
	pid_t pid;
	char *argv[] = { "gnuplot", gp, NULL };
	int st, e = posix_spawnp(&pid, "gnuplot", NULL, NULL, argv, environ);

	if (e == ENOENT) {
		fprintf(stderr, "vmm ab: gnuplot is not installed (apt-get install gnuplot-nox): %s holds the plot "
				"script for %s, render it with `gnuplot %s`\n", gp, dat, gp);
		return 0;
	}
	if (e || waitpid(pid, &st, 0) < 0 || !WIFEXITED(st) || WEXITSTATUS(st)) {
		pr_err("vmm ab: gnuplot %s failed (%s)", gp, e ? strerror(e) : "its messages are above");
		return -EIO;
	}
	fprintf(stderr, "vmm ab: plots %s-%s.svg and %s-%s.png\n", prefix, workload, prefix, workload);
	return 1;
}
