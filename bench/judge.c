// SPDX-License-Identifier: MIT
/*
 * One report's ratios judged from their repetitions (bench.h, bench_judge): a median ratio of
 * three boots against three says little in the lab's noise, so each ratio gets its interval and a
 * goal is called met or not only when the interval says so.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "bench/bench.h"
#include "ab/abstats.h"
#include "ab/design.h"
#include "core/hot.h"

#define JUDGE_ITERS 2000
#define JUDGE_ALPHA 0.05

/* The median of n draws with replacement from x. */
static double resampled_median(const double *x, size_t n, struct ab_rng *rng)
{
	double s[BENCH_MAX_SAMPLES];

	for (size_t i = 0; i < n; i++)
		s[i] = x[ab_rng_below(rng, n)];
	ab_sort(s, n);
	return ab_quantile_sorted(s, n, 0.5);
}

/* Bootstrap percentile interval of median(a) / median(b), each side resampled on its own; b NULL:
 * median(a) / by. false when a resample's divisor is 0. */
static bool ratio_interval(const struct bench_figure *a, const struct bench_figure *b, double by,
			   struct ab_rng *rng, double *lo, double *hi)
{
	double r[JUDGE_ITERS];

	for (int i = 0; i < JUDGE_ITERS; i++) {
		double d = b ? resampled_median(b->x, b->n, rng) : by;

		if (d == 0)
			return false;
		r[i] = resampled_median(a->x, a->n, rng) / d;
	}
	ab_sort(r, JUDGE_ITERS);
	*lo = ab_quantile_sorted(r, JUDGE_ITERS, JUDGE_ALPHA / 2);
	*hi = ab_quantile_sorted(r, JUDGE_ITERS, 1 - JUDGE_ALPHA / 2);
	return true;
}

/* The verdict on a goal from the interval: where the goal lies against [lo, hi]. */
static const char *goal_verdict(double goal, bool goal_max, double lo, double hi)
{
	if (goal_max ? hi <= goal : lo >= goal)
		return "met";
	if (goal_max ? lo > goal : hi < goal)
		return "NOT met";
	return "undecided: the goal is inside the interval";
}

/* One ratio's line; returns 1 when its goal was judged NOT met. */
static int judge_one(const char *name, const struct bench_figure *a, const struct bench_figure *b, double by,
		     double goal, bool goal_max, struct ab_rng *rng, FILE *f)
{
	double lo, hi, ma, mb = by, x;
	char g[24] = "-", ns[24];

	bench_summary(a, &lo, &ma, &hi);
	if (b)
		bench_summary(b, &lo, &mb, &hi);
	if (goal > 0)
		snprintf(g, sizeof(g), "%s %.3g", goal_max ? "<=" : ">=", goal);
	if (b)
		snprintf(ns, sizeof(ns), "%zu/%zu", a->n, b->n);
	else
		snprintf(ns, sizeof(ns), "%zu", a->n);
	if (mb == 0)
		return 0;
	if (a->n < AB_MIN_SAMPLES || (b && b->n < AB_MIN_SAMPLES)) {
		fprintf(f, "%-46s %7s %8.3f %-20s %8s %10s  not judged: fewer than %d repetitions a side\n", name, ns,
			ma / mb, "-", "-", g, AB_MIN_SAMPLES);
		return 0;
	}
	if (!ratio_interval(a, b, by, rng, &lo, &hi)) {
		fprintf(f, "%-46s %7s %8.3f %-20s %8s %10s  not judged: a resampled divisor was 0\n", name, ns, ma / mb,
			"-", "-", g);
		return 0;
	}
	char ci[40], ps[16] = "-";
	const char *v;

	snprintf(ci, sizeof(ci), "[%.3f, %.3f]", lo, hi);
	if (b) {
		bool exact;
		double floor, p = ab_perm2_p(b->x, (int)b->n, a->x, (int)a->n, rng, &exact, &floor);

		snprintf(ps, sizeof(ps), "%.3g", p);
		x = p;
	} else {
		x = NAN;
	}
	if (goal > 0)
		v = goal_verdict(goal, goal_max, lo, hi);
	else if (b && x < JUDGE_ALPHA && ma != mb)
		v = (ma > mb) == a->higher_better ? "vmm ahead" : "vmm behind";
	else if (b)
		v = "no significant difference";
	else
		v = "-";
	fprintf(f, "%-46s %7s %8.3f %-20s %8s %10s  %s\n", name, ns, ma / mb, ci, ps, g, v);
	return goal > 0 && !strcmp(v, "NOT met");
}

VMM_HOT_VF int bench_judge(const struct bench_report *r, unsigned long long seed, FILE *f)
{
	struct ab_rng rng;
	struct bench_peer_ratio q;
	int not_met = 0;
	bool head = false;

	ab_rng_seed(&rng, seed);
#define HEAD()                                                                                                   \
	do {                                                                                                     \
		if (!head)                                                                                       \
			fprintf(f, "judged (repetitions as units; interval: bootstrap 95%% of the ratio of medians; "   \
				   "p: permutation test, two-sided)\n%-46s %7s %8s %-20s %8s %10s  %s\n",           \
				"ratio", "n", "median", "interval", "p", "goal", "verdict");                         \
		head = true;                                                                                     \
	} while (0)
	for (size_t i = 0; i < r->nratio; i++) {
		const struct bench_ratio *o = &r->ratio[i];
		const struct bench_figure *a = o->num[0] ? bench_find(r, o->num) : NULL;
		const struct bench_figure *b = o->den[0] ? bench_find(r, o->den) : NULL;

		if (!a || !a->n || (o->den[0] && (!b || !b->n)) || (!o->den[0] && o->by == 0))
			continue; /* computed by hand, or its figures are not in this report */
		HEAD();
		not_met += judge_one(o->name, a, b, o->by, o->goal, o->goal_max, &rng, f);
	}
	for (size_t i = 0; bench_peer_ratio(r, i, &q); i++) {
		bool covered = false;
		char name[BENCH_NAME_MAX + 20];

		for (size_t k = 0; k < r->nratio && !covered; k++)
			covered = !strcmp(r->ratio[k].num, q.vmm->name) && !strcmp(r->ratio[k].den, q.peer->name);
		if (covered)
			continue;
		HEAD();
		snprintf(name, sizeof(name), "%s / %s", q.vmm->name, q.peer_name);
		not_met += judge_one(name, q.vmm, q.peer, 0, q.goal, q.goal_max, &rng, f);
	}
#undef HEAD
	if (head)
		fprintf(f, "%d goal%s judged NOT met\n", not_met, not_met == 1 ? "" : "s");
	return not_met;
}
