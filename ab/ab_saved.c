// SPDX-License-Identifier: MIT
/*
 * Saved A/B runs (vmm ab --json, format 2: every epoch with its own samples), read back by `vmm
 * ab compare` (runs on two host kernels, say: each run is one unit) and `vmm ab plot`, and the CDF
 * plots both write. A saved file may come from anywhere: it is parsed strictly (ab/json.h: bounded,
 * duplicate keys refused) and every value is checked before use.
 */
#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <spawn.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>

#include "ab/ab.h"
#include "ab/abstats.h"
#include "ab/design.h"
#include "core/json.h"
#include "core/log.h"

#define SAVED_MAX_RAW 64       /* workload x arm entries */
#define MIN_EPOCH_SAMPLES 5    /* as vmm ab: an epoch with fewer says little about its quantiles */

extern char **environ;

static const char *const q_name[AB_SAVED_NQ] = { "p50", "p90", "p99" };

static bool name_ok(const struct json *v, size_t max)
{
	return v && v->t == JSON_STR && v->str[0] && strlen(v->str) < max &&
	       strspn(v->str, "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789_.-") == strlen(v->str);
}

/* The entry for workload w and arm a, made on first use; NULL when full. */
static struct ab_raw *entry_of(struct ab_saved *s, const char *w, const char *a)
{
	for (int i = 0; i < s->nr; i++)
		if (!strcmp(s->r[i].workload, w) && !strcmp(s->r[i].arm, a))
			return &s->r[i];
	if (s->nr == SAVED_MAX_RAW)
		return NULL;
	struct ab_raw *r = &s->r[s->nr++];

	snprintf(r->workload, sizeof(r->workload), "%s", w);
	snprintf(r->arm, sizeof(r->arm), "%s", a);
	return r;
}

/* One epoch's workloads into the entries: the samples pooled (for plots only) and the epoch's own
 * quantiles' logs summed (a run's value is their geometric mean over its epochs). */
static const char *take_epoch(struct ab_saved *s, const struct json *ep)
{
	const struct json *arm = json_get(ep, "arm"), *wu = json_get(ep, "warmup"), *co = json_get(ep, "complete"),
			  *wl = json_get(ep, "workloads");

	if (!ep || ep->t != JSON_OBJ || !name_ok(arm, 32) || !wu || wu->t != JSON_BOOL || !co || co->t != JSON_BOOL ||
	    !wl || wl->t != JSON_OBJ)
		return "an epoch without its arm (a plain name), warmup, complete or workloads";
	if (wu->b || !co->b)
		return NULL;
	for (size_t i = 0; i < wl->n; i++) {
		const struct json *w = &wl->items[i], *x = json_get(w, "samples"), *u = json_get(w, "unit");

		if (strlen(wl->keys[i]) >= 16 || strspn(wl->keys[i], "abcdefghijklmnopqrstuvwxyz0123456789_") != strlen(wl->keys[i]) ||
		    !wl->keys[i][0])
			return "a workload name that is not a short lower-case word";
		if (!u || u->t != JSON_STR || strcmp(u->str, "us"))
			return "a workload without its unit \"us\"";
		if (!x || (x->t != JSON_NUMS && !(x->t == JSON_ARR && x->n == 0)))
			return "a workload whose samples are not a list of numbers";
		if (x->n < MIN_EPOCH_SAMPLES) {
			s->dropped_few++;
			continue;
		}
		for (size_t k = 0; k < x->n; k++)
			if (!(x->nums[k] >= 0))
				return "a sample that is not a non-negative number of us";
		struct ab_raw *r = entry_of(s, wl->keys[i], arm->str);

		if (!r)
			return "more than 64 workload and arm entries";
		double *np = realloc(r->x, (r->n + x->n) * sizeof(*np)), *c;

		if (!np)
			return "out of memory";
		r->x = np;
		if (!(c = malloc(x->n * sizeof(*c))))
			return "out of memory";
		memcpy(r->x + r->n, x->nums, x->n * sizeof(double));
		r->n += x->n;
		memcpy(c, x->nums, x->n * sizeof(double));
		struct ab_reduced red;

		ab_epoch_reduce(c, x->n, &red);
		free(c);
		double v[AB_SAVED_NQ] = { red.p50, red.p90, red.p99 };

		if (v[0] <= 0) {
			s->dropped_zero++;
			continue;
		}
		for (int q = 0; q < AB_SAVED_NQ; q++)
			r->logq[q] += log(v[q] > 0 ? v[q] : 1e-9);
		r->epochs++;
	}
	const struct json *st = json_get(ep, "stages"); /* --attribute's; absent in older files: no stages */

	return st ? ab_saved_stages_take(s, arm->str, st) : NULL;
}

int ab_saved_parse(const char *text, size_t len, struct ab_saved *s, char *why, size_t whysize)
{
	struct json root;
	const char *w = NULL;
	int r = json_parse(text, len, &root, why, whysize);

	memset(s, 0, sizeof(*s));
	if (r < 0)
		return r;
	const struct json *fmt = json_get(&root, "format"), *eps = json_get(&root, "epochs");

	if (root.t != JSON_OBJ)
		w = "not a JSON object";
	else if (!fmt && json_get(&root, "raw"))
		w = "written by an older vmm ab (one pooled, sorted array per arm, no epochs): its samples "
		    "cannot be told apart by epoch, so it cannot be judged with the epoch or the run as the "
		    "unit; run the experiment again with this vmm";
	else if (!fmt || fmt->t != JSON_NUM || fmt->num != 2)
		w = "not a vmm ab --json file of format 2";
	else if (!eps || (eps->t != JSON_ARR && !(eps->t == JSON_NUMS && eps->n == 0)))
		w = "no \"epochs\" list";
	else if (!(s->r = calloc(SAVED_MAX_RAW, sizeof(*s->r))))
		w = "out of memory";
	for (size_t i = 0; !w && eps->t == JSON_ARR && i < eps->n; i++)
		w = take_epoch(s, &eps->items[i]);
	const struct json *ems = json_get(&root, "epoch_ms");

	if (!w && ems && ems->t == JSON_NUM && ems->num >= 0 && ems->num <= 3600000)
		s->epoch_ms = (unsigned int)ems->num;
	for (int i = 0; !w && i < s->nr; i++)
		for (int q = 0; q < AB_SAVED_NQ; q++)
			s->r[i].q[q] = s->r[i].epochs ? exp(s->r[i].logq[q] / s->r[i].epochs) : NAN;
	json_free(&root);
	if (w) {
		snprintf(why, whysize, "%s", w);
		ab_saved_free(s);
		return -EINVAL;
	}
	return 0;
}

int ab_saved_read(const char *path, struct ab_saved *s)
{
	char why[256];
	size_t len;
	char *buf = ab_file_read(path, AB_SAVED_MAX, &len);

	memset(s, 0, sizeof(*s));
	if (!buf)
		return -EINVAL;
	int r = ab_saved_parse(buf, len, s, why, sizeof(why));

	free(buf);
	if (r < 0)
		pr_err("%s: %s", path, why);
	return r;
}

void ab_saved_free(struct ab_saved *s)
{
	for (int i = 0; s->r && i < s->nr; i++)
		free(s->r[i].x);
	free(s->r);
	free(s->st);
	memset(s, 0, sizeof(*s));
}

static const struct ab_raw *find(const struct ab_saved *s, const char *w, const char *a)
{
	for (int i = 0; i < s->nr; i++)
		if (!strcmp(s->r[i].workload, w) && !strcmp(s->r[i].arm, a) && s->r[i].epochs)
			return &s->r[i];
	return NULL;
}

static double mean_log(const double *v, int n)
{
	double m = 0;

	for (int i = 0; i < n; i++)
		m += v[i] / n;
	return m;
}

struct run_judgement {
	const struct ab_raw *first;
	int q;
	double ma, mb;
	struct ab_judged j;
};

#define MAX_NOTES 64

struct compare_notes {
	char text[MAX_NOTES][240];
	int n;
};

static void note(struct compare_notes *cn, FILE *out, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
static void note(struct compare_notes *cn, FILE *out, const char *fmt, ...)
{
	va_list ap;
	char buf[240];

	va_start(ap, fmt);
	vsnprintf(buf, sizeof(buf), fmt, ap);
	va_end(ap);
	fprintf(out, "note: %s\n", buf);
	if (cn->n < MAX_NOTES)
		snprintf(cn->text[cn->n++], sizeof(cn->text[0]), "%s", buf);
}

/* The comparison as JSON: the runs on each side, then each judged quantity, then the notes. */
static void compare_json(FILE *f, char *const *names_a, int na, char *const *names_b, int nb, uint64_t seed,
			 double alpha, double min_effect, const struct run_judgement *rj, const struct ab_judged *all,
			 int m, const struct compare_notes *cn, const struct ab_stage_runs *sr)
{
	bool judged = na >= 2 && nb >= 2;

	fprintf(f, "{\"format\":2,\"tool\":\"vmm ab compare\",\"unit\":\"run\",\"seed\":%llu,\"alpha\":%g,"
		   "\"min_effect\":%g,\"judged\":%s,\"a\":[",
		(unsigned long long)seed, alpha, min_effect, judged ? "true" : "false");
	for (int i = 0; i < na; i++) {
		if (i)
			fputc(',', f);
		json_write_string(f, names_a[i]);
	}
	fputs("],\"b\":[", f);
	for (int i = 0; i < nb; i++) {
		if (i)
			fputc(',', f);
		json_write_string(f, names_b[i]);
	}
	fputs("],\"comparisons\":[", f);
	for (int i = 0; i < m; i++) {
		const struct ab_comparison c = {
			.workload = rj[i].first->workload, .quantity = q_name[rj[i].q], .a = "A", .b = "B",
			.arm = rj[i].first->arm, .unit = "run", .a_median = rj[i].ma, .b_median = rj[i].mb,
			.j = &all[i], .with_verdict = judged,
		};

		if (i)
			fputc(',', f);
		ab_comparison_json(f, &c);
	}
	fputs("],\"notes\":[", f);
	for (int i = 0; i < cn->n; i++) {
		if (i)
			fputc(',', f);
		json_write_string(f, cn->text[i]);
	}
	fputc(']', f);
	ab_stage_runs_json(f, sr);
	fputs("}\n", f);
}

struct sides {
	char *const *names[2];
	const struct ab_saved *s[2];
	int n[2];
};

/* A workload and arm some run lacks is dropped, and said, never silently. */
static bool in_every_run(const struct sides *sd, const struct ab_raw *r, struct compare_notes *cn, FILE *out)
{
	for (int side = 0; side < 2; side++)
		for (int i = 0; i < sd->n[side]; i++)
			if (!find(&sd->s[side][i], r->workload, r->arm)) {
				note(cn, out, "%s, arm %s dropped: %s has no epoch of it after warm-up", r->workload, r->arm,
				     sd->names[side][i]);
				return false;
			}
	return true;
}

/* Runs of very different precision make the runs less alike: the studentized test copes, but the
 * user should know (epochs per run, samples per epoch, and each file's epoch_ms). */
static void note_mismatch(const struct sides *sd, const struct ab_raw *r, struct compare_notes *cn, FILE *out)
{
	double lo[2] = { INFINITY, INFINITY }, hi[2] = { 0, 0 };
	const char *at[2][2] = { { "", "" }, { "", "" } };

	for (int side = 0; side < 2; side++)
		for (int i = 0; i < sd->n[side]; i++) {
			const struct ab_raw *x = find(&sd->s[side][i], r->workload, r->arm);
			double v[2] = { x->epochs, (double)x->n / x->epochs };

			for (int k = 0; k < 2; k++) {
				if (v[k] < lo[k]) {
					lo[k] = v[k];
					at[k][0] = sd->names[side][i];
				}
				if (v[k] > hi[k]) {
					hi[k] = v[k];
					at[k][1] = sd->names[side][i];
				}
			}
		}
	if (hi[0] > 2 * lo[0])
		note(cn, out, "%s, arm %s: the runs differ in precision: %.0f epochs in %s against %.0f in %s "
		     "(the test is studentized, but runs alike judge best)", r->workload, r->arm, lo[0], at[0][0], hi[0], at[0][1]);
	if (hi[1] > 2 * lo[1])
		note(cn, out, "%s, arm %s: %.0f samples per epoch in %s against %.0f in %s: their quantiles are not "
		     "alike (a p99 from few samples is biased low)", r->workload, r->arm, lo[1], at[1][0], hi[1], at[1][1]);
}

/* Epochs each file's reader left out (ab_saved_parse), by file. */
static void note_dropped(const struct sides *sd, struct compare_notes *cn, FILE *out)
{
	for (int side = 0; side < 2; side++)
		for (int i = 0; i < sd->n[side]; i++) {
			const struct ab_saved *s = &sd->s[side][i];

			if (s->dropped_few)
				note(cn, out, "%s: %d workload epoch%s dropped: under %d samples", sd->names[side][i],
				     s->dropped_few, s->dropped_few > 1 ? "s" : "", MIN_EPOCH_SAMPLES);
			if (s->dropped_zero)
				note(cn, out, "%s: %d workload epoch%s dropped: a p50 of 0 us (no ratio)", sd->names[side][i],
				     s->dropped_zero, s->dropped_zero > 1 ? "s" : "");
		}
}

static void note_epoch_ms(const struct sides *sd, struct compare_notes *cn, FILE *out)
{
	const struct ab_saved *s0 = &sd->s[0][0];

	for (int side = 0; side < 2; side++)
		for (int i = 0; i < sd->n[side]; i++)
			if (sd->s[side][i].epoch_ms != s0->epoch_ms) {
				note(cn, out, "the runs' epochs differ in length: %u ms in %s, %u ms in %s", s0->epoch_ms,
				     sd->names[0][0], sd->s[side][i].epoch_ms, sd->names[side][i]);
				return;
			}
}

/* Every (workload, arm) of any run, once: the first run that has it names it. */
static const struct ab_raw *next_entry(const struct sides *sd, int *side, int *run, int *e)
{
	for (; *side < 2; (*side)++, *run = 0)
		for (; *run < sd->n[*side]; (*run)++, *e = 0)
			for (; *e < sd->s[*side][*run].nr; (*e)++) {
				const struct ab_raw *r = &sd->s[*side][*run].r[*e];
				bool seen = !r->epochs;

				for (int s2 = 0; s2 <= *side && !seen; s2++)
					for (int i = 0; i < (s2 < *side ? sd->n[s2] : *run) && !seen; i++)
						seen = find(&sd->s[s2][i], r->workload, r->arm) != NULL;
				if (!seen) {
					(*e)++;
					return r;
				}
			}
	return NULL;
}

int ab_saved_compare(FILE *out, FILE *json, char *const *names_a, const struct ab_saved *a, int na, char *const *names_b,
		     const struct ab_saved *b, int nb, const char *arm, uint64_t seed, double alpha, double min_effect,
		     bool fail_on_regression)
{
	static struct run_judgement rj[SAVED_MAX_RAW * AB_SAVED_NQ];
	static struct ab_judged all[SAVED_MAX_RAW * AB_SAVED_NQ];
	static double x[SAVED_MAX_RAW * AB_SAVED_NQ][64], y[SAVED_MAX_RAW * AB_SAVED_NQ][64];
	const struct sides sd = { { names_a, names_b }, { a, b }, { na, nb } };
	struct compare_notes cn = { .n = 0 };
	struct ab_rng rng;
	int m = 0, slower = 0, side = 0, run = 0, e = 0;
	const struct ab_raw *r0;

	ab_rng_seed(&rng, seed);
	fprintf(out, "== the unit is the run: %d run%s against %d; per run each epoch's own quantile, their geometric "
		     "mean\n", na, na > 1 ? "s" : "", nb);
	for (int i = 0; i < na; i++)
		fprintf(out, "A%d %s\n", i + 1, names_a[i]);
	for (int i = 0; i < nb; i++)
		fprintf(out, "B%d %s\n", i + 1, names_b[i]);
	note_epoch_ms(&sd, &cn, out);
	note_dropped(&sd, &cn, out);
	while ((r0 = next_entry(&sd, &side, &run, &e))) {
		if ((arm && strcmp(r0->arm, arm)) || !in_every_run(&sd, r0, &cn, out))
			continue;
		note_mismatch(&sd, r0, &cn, out);
		for (int q = 0; q < AB_SAVED_NQ; q++, m++) {
			rj[m] = (struct run_judgement){ .first = r0, .q = q };
			for (int i = 0; i < na; i++)
				x[m][i] = log(find(&a[i], r0->workload, r0->arm)->q[q]);
			for (int i = 0; i < nb; i++)
				y[m][i] = log(find(&b[i], r0->workload, r0->arm)->q[q]);
		}
	}
	if (!m) {
		pr_err("vmm ab compare: the runs have no workload and arm%s%s in common (with epochs after warm-up)",
		       arm ? " named " : "", arm ? arm : "");
		return -ENODATA;
	}
	for (int i = 0; i < m; i++) {
		struct run_judgement *x0 = &rj[i];

		ab_judge_runs(x[i], na, y[i], nb, alpha / m, &rng, &x0->j);
		x0->ma = exp(mean_log(x[i], na));
		x0->mb = exp(mean_log(y[i], nb));
		all[i] = x0->j;
	}
	ab_verdicts(all, m, alpha, min_effect, false);
	for (int i = 0; i < m; i++) {
		const struct run_judgement *x0 = &rj[i];
		const struct ab_judged *j = &all[i];

		if (x0->q == 0)
			fprintf(out, "== %s, arm %s (us; geometric mean over runs)\n", x0->first->workload, x0->first->arm);
		fprintf(out, "%-4s A %-10.4g B %-10.4g shift %+.1f%%", q_name[x0->q], x0->ma, x0->mb, 100 * j->effect);
		if (isfinite(j->lo) && isfinite(j->hi))
			fprintf(out, " [%+.1f%%, %+.1f%%]", 100 * j->lo, 100 * j->hi);
		else
			fprintf(out, " [no 95%% interval: too few runs]");
		if (na < 2 || nb < 2)
			fprintf(out, "  cannot be judged: one run a side is one observation per kernel, however many "
				     "samples it holds (alternate the kernels over several boots)\n");
		else
			fprintf(out, "  p %.3g (smallest possible %.3g, %s), %s\n", j->p, j->floor,
				j->exact ? "every split" : "Monte Carlo", ab_verdict_name[j->verdict]);
		slower += j->verdict == AB_SLOWER && na >= 2 && nb >= 2;
	}
	fprintf(out, "unit run: %d runs, Welch's statistic permuted over the runs, Holm over %d judgements at alpha %g, "
		     "minimum effect %.0f%%\n", na + nb, m, alpha, 100 * min_effect);
	/* --attribute's stages, when the runs carry them: where a difference is */
	struct ab_stage_runs *sr = ab_stage_runs_judge(out, a, na, b, nb, arm, seed, alpha, min_effect);

	if (json)
		compare_json(json, names_a, na, names_b, nb, seed, alpha, min_effect, rj, all, m, &cn, sr);
	ab_stage_runs_free(sr);
	return fail_on_regression && slower ? 1 : 0;
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
	int r = ab_run_gnuplot(gp, dat);

	if (r > 0)
		fprintf(stderr, "vmm ab: plots %s-%s.svg and %s-%s.png\n", prefix, workload, prefix, workload);
	return r;
}

int ab_run_gnuplot(const char *gp, const char *dat)
{
	pid_t pid;
	char *argv[] = { "gnuplot", (char *)gp, NULL };
	int st = 0, e = posix_spawnp(&pid, "gnuplot", NULL, NULL, argv, environ);
	bool waited = !e && waitpid(pid, &st, 0) == pid;

	/* not found: ENOENT from the spawn or, where the spawn cannot report the exec's failure (an
	 * emulator that forks for it: qemu-user), the child's 127 */
	if (e == ENOENT || (waited && WIFEXITED(st) && WEXITSTATUS(st) == 127)) {
		fprintf(stderr, "vmm ab: gnuplot is not installed (apt-get install gnuplot-nox): %s holds the plot "
				"script for %s, render it with `gnuplot %s`\n", gp, dat, gp);
		return 0;
	}
	if (e || !waited || !WIFEXITED(st) || WEXITSTATUS(st)) {
		pr_err("vmm ab: gnuplot %s failed (%s)", gp, e ? strerror(e) : "its messages are above");
		return -EIO;
	}
	return 1;
}
