// SPDX-License-Identifier: MIT
/* A/B statistics: see abstats.h for the definitions each function implements. */
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "ab/abstats.h"
#include "core/hot.h"
#include "core/log.h"

const double ab_report_q[AB_NQ] = { 0.5, 0.9, 0.99, 0.999, 1.0 };
const char *const ab_report_q_name[AB_NQ] = { "p50", "p90", "p99", "p99.9", "max" };

static uint64_t splitmix64(uint64_t *x)
{
	uint64_t z = (*x += 0x9e3779b97f4a7c15ull);

	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
	return z ^ (z >> 31);
}

VMM_HOT_VF void ab_rng_seed(struct ab_rng *r, uint64_t seed)
{
	/* splitmix64 never yields an all-zero state from 4 consecutive outputs */
	for (int i = 0; i < 4; i++)
		r->s[i] = splitmix64(&seed);
}

static uint64_t rotl(uint64_t x, int k)
{
	return (x << k) | (x >> (64 - k));
}

VMM_HOT_VF uint64_t ab_rng_next(struct ab_rng *r)
{
	uint64_t *s = r->s, res = rotl(s[1] * 5, 7) * 9, t = s[1] << 17;

	s[2] ^= s[0];
	s[3] ^= s[1];
	s[1] ^= s[2];
	s[0] ^= s[3];
	s[2] ^= t;
	s[3] = rotl(s[3], 45);
	return res;
}

VMM_HOT_VF uint64_t ab_rng_below(struct ab_rng *r, uint64_t n)
{
	/* Reject the top partial copy of [0, n) so every value is equally likely. */
	uint64_t limit = UINT64_MAX - UINT64_MAX % n, x;

	do
		x = ab_rng_next(r);
	while (x >= limit);
	return x % n;
}

double ab_rng_double(struct ab_rng *r)
{
	return (ab_rng_next(r) >> 11) * 0x1.0p-53;
}

VMM_HOT_VF static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return (x > y) - (x < y);
}

void ab_sort(double *x, size_t n)
{
	qsort(x, n, sizeof(*x), cmp_double);
}

double ab_quantile_sorted(const double *x, size_t n, double q)
{
	double h = (n - 1) * q;
	size_t k = (size_t)h;

	if (k + 1 >= n)
		return x[n - 1];
	return x[k] + (h - k) * (x[k + 1] - x[k]);
}

static void opts_defaults(const struct ab_opts *o, unsigned int *iters, double *level)
{
	*iters = o && o->iters ? o->iters : 2000;
	*level = o && o->level > 0 && o->level < 1 ? o->level : 0.95;
}

VMM_HOT_VF static int check_samples(const char *what, const double *x, size_t n)
{
	if (n < AB_MIN_SAMPLES) {
		pr_err("%s: %zu samples, at least %d are needed; run longer or with more epochs", what, n,
		       AB_MIN_SAMPLES);
		return -EINVAL;
	}
	for (size_t i = 0; i < n; i++)
		if (!isfinite(x[i])) {
			pr_err("%s: sample %zu is not a finite number; drop it before the comparison", what, i);
			return -EINVAL;
		}
	return 0;
}

/*
 * One resample of sorted x as counts per sample; order statistic k of the resample is then
 * x[first i with cum[i] > k]. Quantile q of the resample, type 7, from those order statistics.
 */
VMM_HOT_VF static void resample(const double *x, size_t n, uint32_t *cum, struct ab_rng *rng, const double *q, int nq,
		     double *out)
{
	memset(cum, 0, n * sizeof(*cum));
	for (size_t i = 0; i < n; i++)
		cum[ab_rng_below(rng, n)]++;
	for (size_t i = 1; i < n; i++)
		cum[i] += cum[i - 1];
	for (int j = 0; j < nq; j++) {
		double h = (n - 1) * q[j], v[2];
		size_t k = (size_t)h;

		for (int e = 0; e < 2; e++) {
			size_t want = k + e < n ? k + e : n - 1, lo = 0, hi = n - 1;

			while (lo < hi) { /* first i with cum[i] > want */
				size_t mid = lo + (hi - lo) / 2;

				if (cum[mid] > want)
					hi = mid;
				else
					lo = mid + 1;
			}
			v[e] = x[lo];
		}
		out[j] = v[0] + (h - k) * (v[1] - v[0]);
	}
}

/* stats[it * nq + j] for each of nq statistics over iters resamples -> the percentile interval. */
static void intervals(double *stats, unsigned int iters, int nq, double level, double *col, struct ab_ci *out)
{
	for (int j = 0; j < nq; j++) {
		for (unsigned int it = 0; it < iters; it++)
			col[it] = stats[(size_t)it * nq + j];
		ab_sort(col, iters);
		out[j].lo = ab_quantile_sorted(col, iters, (1 - level) / 2);
		out[j].hi = ab_quantile_sorted(col, iters, (1 + level) / 2);
	}
}

/* The bootstrap for one arm (b == NULL) or the difference b - a, both arms sorted. */
static int bootstrap(const double *a, size_t na, const double *b, size_t nb, const double *q, int nq,
		     const struct ab_opts *o, struct ab_rng *rng, struct ab_ci *out)
{
	unsigned int iters;
	double level, qa[AB_NQ], qb[AB_NQ];
	size_t nmax = na > nb ? na : nb;
	uint32_t *cum = malloc(nmax * sizeof(*cum));
	double *stats, *col;

	opts_defaults(o, &iters, &level);
	stats = malloc((size_t)iters * nq * sizeof(*stats));
	col = malloc(iters * sizeof(*col));
	if (nq > AB_NQ || !cum || !stats || !col) {
		free(cum);
		free(stats);
		free(col);
		pr_err("bootstrap: %s", nq > AB_NQ ? "too many quantiles at once" : "out of memory");
		return nq > AB_NQ ? -EINVAL : -ENOMEM;
	}
	for (unsigned int it = 0; it < iters; it++) {
		resample(a, na, cum, rng, q, nq, qa);
		if (b)
			resample(b, nb, cum, rng, q, nq, qb);
		for (int j = 0; j < nq; j++)
			stats[(size_t)it * nq + j] = b ? qb[j] - qa[j] : qa[j];
	}
	intervals(stats, iters, nq, level, col, out);
	for (int j = 0; j < nq; j++)
		out[j].est = b ? ab_quantile_sorted(b, nb, q[j]) - ab_quantile_sorted(a, na, q[j])
			       : ab_quantile_sorted(a, na, q[j]);
	free(cum);
	free(stats);
	free(col);
	return 0;
}

int ab_bootstrap_quantiles(const double *sorted, size_t n, const double *q, int nq, const struct ab_opts *o,
			   struct ab_rng *rng, struct ab_ci *out)
{
	int r = check_samples("bootstrap", sorted, n);

	return r < 0 ? r : bootstrap(sorted, n, NULL, 0, q, nq, o, rng, out);
}

struct tagged {
	double v;
	int in_b;
};

VMM_HOT_VF static int cmp_tagged(const void *a, const void *b)
{
	return cmp_double(&((const struct tagged *)a)->v, &((const struct tagged *)b)->v);
}

int ab_mann_whitney(const double *a, size_t na, const double *b, size_t nb, struct ab_mwu *out)
{
	size_t n = na + nb;
	struct tagged *t;
	double rank_b = 0, ties = 0;
	int r;

	if ((r = check_samples("Mann-Whitney, arm A", a, na)) < 0 ||
	    (r = check_samples("Mann-Whitney, arm B", b, nb)) < 0)
		return r;
	t = malloc(n * sizeof(*t));
	if (!t) {
		pr_err("Mann-Whitney: out of memory for %zu samples", n);
		return -ENOMEM;
	}
	for (size_t i = 0; i < n; i++)
		t[i] = i < na ? (struct tagged){ a[i], 0 } : (struct tagged){ b[i - na], 1 };
	qsort(t, n, sizeof(*t), cmp_tagged);
	for (size_t i = 0, j; i < n; i = j) {
		for (j = i; j < n && t[j].v == t[i].v; j++)
			;
		double avg = (i + 1 + j) / 2.0, k = j - i; /* ranks i+1..j share their mean */

		ties += k * k * k - k;
		for (size_t m = i; m < j; m++)
			rank_b += t[m].in_b ? avg : 0;
	}
	free(t);

	double mu = (double)na * nb / 2, N = n;
	double var = (double)na * nb / 12 * ((N + 1) - ties / (N * (N - 1)));

	out->u = rank_b - (double)nb * (nb + 1) / 2;
	out->delta = 2 * out->u / ((double)na * nb) - 1;
	double d = fabs(out->u - mu);

	/* The continuity correction moves U half a step toward the mean, never past it. */
	out->z = var > 0 && d > 0.5 ? copysign((d - 0.5) / sqrt(var), out->u - mu) : 0;
	out->p = erfc(fabs(out->z) / sqrt(2));
	return 0;
}

int ab_arm_summarize(struct ab_arm *arm, const char *name, const double *x, size_t n, const struct ab_opts *o,
		     struct ab_rng *rng)
{
	double *s, sum = 0;
	int r;

	memset(arm, 0, sizeof(*arm));
	snprintf(arm->name, sizeof(arm->name), "%s", name);
	if ((r = check_samples(arm->name, x, n)) < 0)
		return r;
	s = malloc(n * sizeof(*s));
	if (!s) {
		pr_err("%s: out of memory for %zu samples", arm->name, n);
		return -ENOMEM;
	}
	memcpy(s, x, n * sizeof(*s));
	ab_sort(s, n);
	for (size_t i = 0; i < n; i++)
		sum += s[i];
	arm->n = n;
	arm->mean = sum / n;
	r = bootstrap(s, n, NULL, 0, ab_report_q, AB_NQ, o, rng, arm->q);
	free(s);
	return r;
}

int ab_compare(struct ab_cmp *c, const char *name_a, const double *a, size_t na, const char *name_b,
	       const double *b, size_t nb, const struct ab_opts *o, struct ab_rng *rng)
{
	double *sa, *sb;
	int r;

	memset(c, 0, sizeof(*c));
	if ((r = ab_arm_summarize(&c->a, name_a, a, na, o, rng)) < 0 ||
	    (r = ab_arm_summarize(&c->b, name_b, b, nb, o, rng)) < 0 ||
	    (r = ab_mann_whitney(a, na, b, nb, &c->mwu)) < 0)
		return r;
	sa = malloc(na * sizeof(*sa));
	sb = malloc(nb * sizeof(*sb));
	if (!sa || !sb) {
		free(sa);
		free(sb);
		pr_err("A/B %s vs %s: out of memory", name_a, name_b);
		return -ENOMEM;
	}
	memcpy(sa, a, na * sizeof(*sa));
	memcpy(sb, b, nb * sizeof(*sb));
	ab_sort(sa, na);
	ab_sort(sb, nb);
	r = bootstrap(sa, na, sb, nb, ab_report_q, AB_NQ, o, rng, c->diff);
	free(sa);
	free(sb);
	return r;
}

void ab_print(FILE *f, const struct ab_cmp *c, double scale, const char *unit)
{
	fprintf(f, "%-6s %-28s %-28s %s\n", "", c->a.name, c->b.name, "B - A");
	for (int j = 0; j < AB_NQ; j++) {
		const struct ab_ci *qa = &c->a.q[j], *qb = &c->b.q[j], *d = &c->diff[j];
		char sa[40], sb[40];

		snprintf(sa, sizeof(sa), "%.4g [%.4g, %.4g]", qa->est * scale, qa->lo * scale, qa->hi * scale);
		snprintf(sb, sizeof(sb), "%.4g [%.4g, %.4g]", qb->est * scale, qb->lo * scale, qb->hi * scale);
		fprintf(f, "%-6s %-28s %-28s %+.4g [%+.4g, %+.4g] %s\n", ab_report_q_name[j], sa, sb,
			d->est * scale, d->lo * scale, d->hi * scale, unit);
	}
	fprintf(f, "n %zu / %zu; Mann-Whitney U %.1f, z %.2f, p %.3g; Cliff's delta %+.3f (B %s)\n", c->a.n,
		c->b.n, c->mwu.u, c->mwu.z, c->mwu.p, c->mwu.delta,
		c->mwu.delta > 0 ? "tends larger" : c->mwu.delta < 0 ? "tends smaller" : "no tendency");
}

int ab_gather(const struct ab_epoch *ep, size_t nep, size_t warmup, int arm, double **out, size_t *n)
{
	size_t total = 0, k = 0;

	for (size_t e = warmup; e < nep; e++)
		total += ep[e].arm == arm ? ep[e].n : 0;
	*n = 0;
	*out = malloc((total ? total : 1) * sizeof(**out));
	if (!*out) {
		pr_err("A/B: out of memory gathering %zu samples of arm %d", total, arm);
		return -ENOMEM;
	}
	for (size_t e = warmup; e < nep; e++)
		if (ep[e].arm == arm && ep[e].n) { /* an epoch without samples may have x NULL */
			memcpy(*out + k, ep[e].x, ep[e].n * sizeof(**out));
			k += ep[e].n;
		}
	*n = total;
	return 0;
}
