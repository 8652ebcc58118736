// SPDX-License-Identifier: MIT
/*
 * Saved A/B runs (vmm ab --json, format 2: every epoch with its own samples), read back by `vmm
 * ab compare` (runs on two host kernels, say: each run is one unit) and `vmm ab plot`, and the CDF
 * plots both write. A saved file may come from anywhere: it is parsed strictly (ab/json.h: bounded,
 * duplicate keys refused) and every value is checked before use.
 */
#include <errno.h>
#include <math.h>
#include <spawn.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>

#include "ab/abstats.h"
#include "ab/design.h"
#include "ab/json.h"
#include "halt_poll/halt_poll.h"
#include "vmm/log.h"

#define SAVED_MAX (256u << 20) /* bytes of a saved file */
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
		if (x->n < MIN_EPOCH_SAMPLES)
			continue;
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

		if (v[0] <= 0)
			continue;
		for (int q = 0; q < AB_SAVED_NQ; q++)
			r->logq[q] += log(v[q] > 0 ? v[q] : 1e-9);
		r->epochs++;
	}
	return NULL;
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
	FILE *f = fopen(path, "r");
	char *buf = NULL, why[256];
	size_t len = 0;

	memset(s, 0, sizeof(*s));
	if (!f) {
		int e = errno;

		pr_err("%s: cannot open it: %s", path, strerror(e));
		return -e;
	}
	buf = malloc(SAVED_MAX + 1);
	if (buf)
		len = fread(buf, 1, SAVED_MAX + 1, f);
	fclose(f);
	if (!buf || len > SAVED_MAX) {
		pr_err("%s: %s", path, buf ? "larger than 256 MiB: not a vmm ab --json file" : "out of memory");
		free(buf);
		return -EINVAL;
	}
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
	memset(s, 0, sizeof(*s));
}

static const struct ab_raw *find(const struct ab_saved *s, const char *w, const char *a)
{
	for (int i = 0; i < s->nr; i++)
		if (!strcmp(s->r[i].workload, w) && !strcmp(s->r[i].arm, a) && s->r[i].epochs)
			return &s->r[i];
	return NULL;
}

struct run_judgement {
	const struct ab_raw *first;
	int q;
	double ma, mb;
	struct ab_judged j;
};

/* The percentile interval of exp(mean log b - mean log a) - 1 over resampled runs within each side. */
static void runs_interval(const double *x, int nx, const double *y, int ny, struct ab_rng *rng, double *lo,
			  double *hi)
{
	enum { ITERS = 4000 };
	static double t[ITERS];

	if (nx < 3 || ny < 3) { /* a resample of two runs says nothing of the spread */
		*lo = -INFINITY;
		*hi = INFINITY;
		return;
	}
	for (int it = 0; it < ITERS; it++) {
		double sx = 0, sy = 0;

		for (int i = 0; i < nx; i++)
			sx += x[ab_rng_below(rng, nx)];
		for (int i = 0; i < ny; i++)
			sy += y[ab_rng_below(rng, ny)];
		t[it] = sy / ny - sx / nx;
	}
	ab_sort(t, ITERS);
	*lo = expm1(ab_quantile_sorted(t, ITERS, 0.025));
	*hi = expm1(ab_quantile_sorted(t, ITERS, 0.975));
}

/* The comparison as JSON: the runs on each side, then each judged quantity. */
static void compare_json(FILE *f, char *const *names_a, int na, char *const *names_b, int nb, uint64_t seed,
			 double alpha, double min_effect, const struct run_judgement *rj, const struct ab_judged *all,
			 int m)
{
	bool judged = na >= 2 && nb >= 2;

	fprintf(f, "{\"format\":2,\"tool\":\"vmm ab compare\",\"unit\":\"run\",\"seed\":%llu,\"alpha\":%g,"
		   "\"min_effect\":%g,\"judged\":%s,\"a\":[",
		(unsigned long long)seed, alpha, min_effect, judged ? "true" : "false");
	for (int i = 0; i < na; i++) {
		if (i)
			fputc(',', f);
		hp_json_string(f, names_a[i]);
	}
	fputs("],\"b\":[", f);
	for (int i = 0; i < nb; i++) {
		if (i)
			fputc(',', f);
		hp_json_string(f, names_b[i]);
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
	fputs("]}\n", f);
}

int ab_saved_compare(FILE *out, FILE *json, char *const *names_a, const struct ab_saved *a, int na, char *const *names_b,
		     const struct ab_saved *b, int nb, const char *arm, uint64_t seed, double alpha, double min_effect,
		     bool fail_on_regression)
{
	static struct run_judgement rj[SAVED_MAX_RAW * AB_SAVED_NQ];
	double x[64], y[64];
	struct ab_rng rng;
	int m = 0, slower = 0;

	ab_rng_seed(&rng, seed);
	fprintf(out, "== the unit is the run: %d run%s against %d; per run each epoch's own quantile, their geometric "
		     "mean\n", na, na > 1 ? "s" : "", nb);
	for (int i = 0; i < na; i++)
		fprintf(out, "A%d %s\n", i + 1, names_a[i]);
	for (int i = 0; i < nb; i++)
		fprintf(out, "B%d %s\n", i + 1, names_b[i]);
	/* the workloads and arms every run has */
	for (int e = 0; e < a[0].nr; e++) {
		const struct ab_raw *r0 = &a[0].r[e];
		bool all = r0->epochs > 0 && (!arm || !strcmp(r0->arm, arm));

		for (int i = 0; all && i < na; i++)
			all = find(&a[i], r0->workload, r0->arm) != NULL;
		for (int i = 0; all && i < nb; i++)
			all = find(&b[i], r0->workload, r0->arm) != NULL;
		for (int q = 0; all && q < AB_SAVED_NQ; q++) {
			struct run_judgement *x0 = &rj[m++];
			double va[64], vb[64];

			*x0 = (struct run_judgement){ .first = r0, .q = q };
			for (int i = 0; i < na; i++) {
				va[i] = find(&a[i], r0->workload, r0->arm)->q[q];
				x[i] = log(va[i]);
			}
			for (int i = 0; i < nb; i++) {
				vb[i] = find(&b[i], r0->workload, r0->arm)->q[q];
				y[i] = log(vb[i]);
			}
			double sx = 0, sy = 0;

			for (int i = 0; i < na; i++)
				sx += x[i] / na;
			for (int i = 0; i < nb; i++)
				sy += y[i] / nb;
			x0->j.blocks = na + nb;
			x0->j.p = ab_perm2_p(x, na, y, nb, &rng, &x0->j.exact, &x0->j.floor);
			x0->j.effect = expm1(sy - sx);
			runs_interval(x, na, y, nb, &rng, &x0->j.lo, &x0->j.hi);
			x0->j.mde = INFINITY;
			x0->ma = exp(sx);
			x0->mb = exp(sy);
		}
	}
	if (!m) {
		pr_err("vmm ab compare: the runs have no workload and arm%s%s in common (with epochs after warm-up)",
		       arm ? " named " : "", arm ? arm : "");
		return -ENODATA;
	}
	static struct ab_judged all[SAVED_MAX_RAW * AB_SAVED_NQ];

	for (int i = 0; i < m; i++)
		all[i] = rj[i].j;
	ab_verdicts(all, m, alpha, min_effect, false);
	for (int i = 0; i < m; i++) {
		const struct run_judgement *x0 = &rj[i];
		const struct ab_judged *j = &all[i];

		if (x0->q == 0)
			fprintf(out, "== %s, arm %s (us; geometric mean over runs)\n", x0->first->workload, x0->first->arm);
		fprintf(out, "%-4s A %-10.4g B %-10.4g shift %+.1f%%", q_name[x0->q], x0->ma, x0->mb, 100 * j->effect);
		if (isfinite(j->lo))
			fprintf(out, " [%+.1f%%, %+.1f%%]", 100 * j->lo, 100 * j->hi);
		if (na < 2 || nb < 2)
			fprintf(out, "  cannot be judged: one run a side is one observation per kernel, however many "
				     "samples it holds (alternate the kernels over several boots)\n");
		else
			fprintf(out, "  p %.3g (smallest possible %.3g, %s), %s\n", j->p, j->floor,
				j->exact ? "every split" : "Monte Carlo", ab_verdict_name[j->verdict]);
		slower += j->verdict == AB_SLOWER && na >= 2 && nb >= 2;
	}
	fprintf(out, "unit run: %d runs, Holm over %d judgements at alpha %g, minimum effect %.0f%%\n", na + nb, m, alpha,
		100 * min_effect);
	if (json)
		compare_json(json, names_a, na, names_b, nb, seed, alpha, min_effect, rj, all, m);
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
