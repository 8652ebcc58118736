// SPDX-License-Identifier: MIT
/* Design-respecting A/B statistics: see design.h for what each function computes and why. */
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "ab/design.h"

const char *const ab_verdict_name[4] = { "B faster", "B slower", "no difference", "inconclusive" };

void ab_epoch_reduce(double *x, size_t n, struct ab_reduced *out)
{
	double sum = 0;

	memset(out, 0, sizeof(*out));
	if (!n)
		return;
	ab_sort(x, n);
	for (size_t i = 0; i < n; i++)
		sum += x[i];
	out->n = n;
	out->p50 = ab_quantile_sorted(x, n, 0.5);
	out->p90 = ab_quantile_sorted(x, n, 0.9);
	out->p99 = ab_quantile_sorted(x, n, 0.99);
	out->mean = sum / n;
}

double ab_blocks_floor(int k)
{
	return k <= 0 ? 1.0 : fmin(1.0, 2.0 / ldexp(1.0, k));
}

int ab_blocks_needed(double level)
{
	if (level <= 0)
		return -1;
	int k = 1;

	while (ab_blocks_floor(k) >= level)
		k++;
	return k;
}

/* |sum| of the observed labels against every relabeling, with a relative tolerance so that the
 * mirror and exact ties count as "at least as extreme" despite rounding. */
static bool as_extreme(double s, double obs)
{
	return fabs(s) >= obs - 1e-12 * (obs > 1 ? obs : 1);
}

double ab_signflip_p(const double *d, int k, struct ab_rng *rng, bool *exact)
{
	double obs = 0;

	for (int i = 0; i < k; i++)
		obs += d[i];
	obs = fabs(obs);
	if (k <= AB_EXACT_MAX_BLOCKS) {
		/* Gray code: each step flips one sign, so every relabeling costs O(1) */
		double s = 0;
		unsigned long long hits = 0, total = 1ull << k;
		int sign[AB_EXACT_MAX_BLOCKS];

		for (int i = 0; i < k; i++) {
			sign[i] = 1;
			s += d[i];
		}
		hits += as_extreme(s, obs);
		for (unsigned long long g = 1; g < total; g++) {
			int i = __builtin_ctzll(g);

			s -= 2.0 * sign[i] * d[i];
			sign[i] = -sign[i];
			hits += as_extreme(s, obs);
		}
		*exact = true;
		return (double)hits / (double)total;
	}
	unsigned long hits = 0;

	for (int it = 0; it < AB_MC_DRAWS; it++) {
		double s = 0;

		for (int i = 0; i < k; i += 64) {
			uint64_t bits = ab_rng_next(rng);

			for (int j = i; j < k && j < i + 64; j++, bits >>= 1)
				s += bits & 1 ? d[j] : -d[j];
		}
		hits += as_extreme(s, obs);
	}
	*exact = false;
	return (1.0 + hits) / (1.0 + AB_MC_DRAWS);
}

/* The number of subsets of {1..k} with rank sum w, for w in [0, k(k+1)/2]: the signed-rank
 * statistic's null distribution times 2^k. Doubles: k up to a few hundred stays exact enough. */
static double *signed_rank_counts(int k)
{
	int max = k * (k + 1) / 2;
	double *c = calloc(max + 1, sizeof(*c));

	if (!c)
		return NULL;
	c[0] = 1;
	for (int r = 1; r <= k; r++)
		for (int w = r * (r + 1) / 2; w >= r; w--)
			c[w] += c[w - r];
	return c;
}

int ab_hodges_lehmann(const double *d, int k, double level, double *est, double *lo, double *hi)
{
	size_t m = (size_t)k * (k + 1) / 2, n = 0;
	double *w = malloc((m ? m : 1) * sizeof(*w));
	double *c = signed_rank_counts(k);

	if (!w || !c) {
		free(w);
		free(c);
		return -ENOMEM;
	}
	for (int i = 0; i < k; i++)
		for (int j = i; j < k; j++)
			w[n++] = (d[i] + d[j]) / 2;
	ab_sort(w, n);
	*est = ab_quantile_sorted(w, n, 0.5);
	/* the largest c with P(W <= c) <= (1 - level)/2: the interval is [w_(c+1), w_(m-c)] */
	double tail = (1 - level) / 2 * ldexp(1.0, k), cum = 0;
	long cmax = -1;

	for (size_t x = 0; x <= m; x++) {
		cum += c[x];
		if (cum > tail)
			break;
		cmax = (long)x;
	}
	if (cmax < 0 || (size_t)cmax >= m / 2) {
		*lo = -INFINITY;
		*hi = INFINITY;
	} else {
		*lo = w[cmax];
		*hi = w[m - 1 - cmax];
	}
	free(w);
	free(c);
	return 0;
}

double ab_min_detectable(const double *d, int k, double alpha, const struct ab_rng *seed)
{
	if (k < 1 || ab_blocks_floor(k) >= alpha)
		return INFINITY;
	double mean = 0, span = 0, *r = malloc(k * sizeof(*r));

	if (!r)
		return INFINITY;
	for (int i = 0; i < k; i++)
		mean += d[i] / k;
	for (int i = 0; i < k; i++)
		span = fmax(span, fabs(d[i] - mean));
	/* at delta > span every shifted d is positive: only the labels and their mirror are that
	 * extreme, p = the floor < alpha. Bisect below it; the same draws each time (common random
	 * numbers) keep p(delta) monotone in the Monte Carlo case too. */
	double lo = 0, hi = span * 1.000001 + 1e-12;

	for (int it = 0; it < 40; it++) {
		double mid = (lo + hi) / 2;
		struct ab_rng rng = *seed;
		bool exact;

		for (int i = 0; i < k; i++)
			r[i] = d[i] - mean + mid;
		if (ab_signflip_p(r, k, &rng, &exact) < alpha)
			hi = mid;
		else
			lo = mid;
		if (hi - lo < 1e-6 * hi)
			break;
	}
	free(r);
	return hi;
}

static double binom(int n, int k)
{
	double c = 1;

	for (int i = 1; i <= k; i++)
		c = c * (n - k + i) / i;
	return c;
}

double ab_perm2_p(const double *x, int nx, const double *y, int ny, struct ab_rng *rng, bool *exact, double *floor)
{
	int n = nx + ny;
	double all = 0, sy = 0, *v = malloc(n * sizeof(*v));

	if (!v) {
		*exact = false;
		*floor = 1;
		return 1;
	}
	memcpy(v, x, nx * sizeof(*v));
	memcpy(v + nx, y, ny * sizeof(*v));
	for (int i = 0; i < n; i++)
		all += v[i];
	for (int i = nx; i < n; i++)
		sy += v[i];
	/* mean(y') - mean(x') is a function of the sum of y': sy/ny - (all - sy)/nx */
	double obs = fabs(sy / ny - (all - sy) / nx), splits = binom(n, ny);
	unsigned long long hits = 0, total = 0;

	*floor = (nx == ny ? 2.0 : 1.0) / splits;
	if (*floor > 1)
		*floor = 1;
	if (splits <= AB_EXACT_MAX_SPLITS && ny <= 64) {
		int idx[64];

		for (int i = 0; i < ny; i++) /* the lexicographic combinations of ny of n */
			idx[i] = i;
		for (;;) {
			double s = 0;

			for (int i = 0; i < ny; i++)
				s += v[idx[i]];
			hits += as_extreme(s / ny - (all - s) / nx, obs);
			total++;
			int i = ny - 1;

			while (i >= 0 && idx[i] == n - ny + i)
				i--;
			if (i < 0)
				break;
			idx[i]++;
			for (int j = i + 1; j < ny; j++)
				idx[j] = idx[j - 1] + 1;
		}
		*exact = true;
		free(v);
		return (double)hits / total;
	}
	double *w = malloc(n * sizeof(*w));

	for (int it = 0; w && it < AB_MC_DRAWS; it++) {
		double s = 0;

		memcpy(w, v, n * sizeof(*w));
		for (int i = 0; i < ny; i++) { /* a partial Fisher-Yates: the first ny are y' */
			int j = i + (int)ab_rng_below(rng, n - i);
			double t = w[i];

			w[i] = w[j];
			w[j] = t;
			s += w[i];
		}
		hits += as_extreme(s / ny - (all - s) / nx, obs);
	}
	free(w);
	free(v);
	*exact = false;
	return (1.0 + hits) / (1.0 + AB_MC_DRAWS);
}

void ab_holm(const double *p, int m, double alpha, bool *reject)
{
	int order[256];

	for (int i = 0; i < m; i++) {
		reject[i] = false;
		order[i] = i;
	}
	for (int i = 1; i < m && i < 256; i++) /* insertion sort by p: m is small */
		for (int j = i; j > 0 && p[order[j]] < p[order[j - 1]]; j--) {
			int t = order[j];

			order[j] = order[j - 1];
			order[j - 1] = t;
		}
	for (int r = 0; r < m && r < 256; r++) {
		if (!(p[order[r]] < alpha / (m - r)))
			break;
		reject[order[r]] = true;
	}
}

int ab_judge_blocks(const double *d, int k, double alpha_each, struct ab_rng *rng, struct ab_judged *j)
{
	double est, lo, hi;
	struct ab_rng seed = *rng;

	memset(j, 0, sizeof(*j));
	j->blocks = k;
	j->floor = ab_blocks_floor(k);
	if (k < 1) {
		j->p = 1;
		j->lo = -INFINITY;
		j->hi = j->mde = INFINITY;
		return 0;
	}
	j->p = ab_signflip_p(d, k, rng, &j->exact);
	if (ab_hodges_lehmann(d, k, 0.95, &est, &lo, &hi) < 0)
		return -ENOMEM;
	j->effect = expm1(est);
	j->lo = isfinite(lo) ? expm1(lo) : -INFINITY;
	j->hi = isfinite(hi) ? expm1(hi) : INFINITY;
	double m = ab_min_detectable(d, k, alpha_each, &seed);

	j->mde = isfinite(m) ? expm1(m) : INFINITY;
	return 0;
}

void ab_verdicts(struct ab_judged *j, int m, double alpha, double min_effect, bool higher_better)
{
	double p[256] = { 0 };
	bool rej[256] = { false };

	if (m > 256)
		m = 256;
	for (int i = 0; i < m; i++)
		p[i] = j[i].p;
	ab_holm(p, m, alpha, rej);
	for (int i = 0; i < m; i++) {
		j[i].reject = rej[i];
		if (rej[i] && fabs(j[i].effect) >= min_effect)
			j[i].verdict = (j[i].effect < 0) != higher_better ? AB_FASTER : AB_SLOWER;
		else if (j[i].floor >= alpha / m)
			j[i].verdict = AB_INCONCLUSIVE;
		else
			j[i].verdict = AB_SAME;
	}
}
