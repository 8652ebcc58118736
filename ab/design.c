// SPDX-License-Identifier: MIT
/* Design-respecting A/B statistics: see design.h for what each function computes and why. */
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "ab/design.h"

const char *const ab_verdict_name[5] = { "B faster", "B slower", "not shown", "inconclusive", "equivalent" };

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

size_t ab_min_samples_for(double q)
{
	double n = q < 1 ? ceil(1 / (1 - q) - 1e-6) : INFINITY;

	return n < AB_MIN_EPOCH_SAMPLES ? AB_MIN_EPOCH_SAMPLES : n > 1e9 ? (size_t)1e9 : (size_t)n;
}

double ab_subsample_quantile(const double *x, size_t n, size_t m, double q, struct ab_rng *rng, double *scratch)
{
	if (!m || m > n)
		return NAN;
	memcpy(scratch, x, n * sizeof(*x));
	for (size_t i = 0; m < n && i < m; i++) { /* a partial Fisher-Yates: the first m are the draw */
		size_t j = i + ab_rng_below(rng, n - i);
		double t = scratch[i];

		scratch[i] = scratch[j];
		scratch[j] = t;
	}
	ab_sort(scratch, m);
	return ab_quantile_sorted(scratch, m, q);
}

double ab_blocks_floor(int k)
{
	double f = k <= 0 ? 1.0 : fmin(1.0, 2.0 / ldexp(1.0, k));

	/* Monte Carlo's p is (1 + hits)/(1 + draws): never below one over the draws */
	return k > AB_EXACT_MAX_BLOCKS ? fmax(f, 1.0 / (1 + AB_MC_DRAWS)) : f;
}

int ab_blocks_needed(double level)
{
	for (int k = 1; level > 0 && k <= AB_EXACT_MAX_BLOCKS + 1; k++)
		if (ab_blocks_floor(k) < level)
			return k;
	return -1;
}

/* |statistic| of a relabeling against the observed one, with a relative tolerance so that the
 * mirror and exact ties count as "at least as extreme" despite rounding. */
static double tolerance(double obs)
{
	return 1e-12 * (obs > 1 ? obs : 1);
}

static bool as_extreme(double s, double obs)
{
	return fabs(s) >= obs - tolerance(obs);
}

/* The 2^h sums of +-d[i] over h values, ascending: each value doubles the sorted list by merging
 * it shifted down and up (the set is symmetric, so |d[i]| serves). tmp holds 2^h. */
static void half_sums(const double *d, int h, double *out, double *tmp)
{
	size_t n = 1;

	out[0] = 0;
	for (int i = 0; i < h; i++, n *= 2) {
		double a = fabs(d[i]);
		size_t p = 0, q = 0, o = 0;

		while (p < n || q < n)
			tmp[o++] = q >= n || (p < n && out[p] - a <= out[q] + a) ? out[p++] - a : out[q++] + a;
		memcpy(out, tmp, 2 * n * sizeof(*out));
	}
}

/* Pairs (i, j) with a[i] + b[j] >= t, both ascending: as a[i] grows the first b[j] that reaches
 * t - a[i] only moves left. */
static unsigned long long count_ge(const double *a, size_t na, const double *b, size_t nb, double t)
{
	unsigned long long c = 0;
	size_t j = nb;

	for (size_t i = 0; i < na; i++) {
		while (j > 0 && b[j - 1] >= t - a[i])
			j--;
		c += nb - j;
	}
	return c;
}

/* Exact: the relabelings' sums split in two halves, |sum| >= obs counted pairwise. The sums are
 * symmetric, so the pairs at or below -obs are as many as those at or above obs. */
static double signflip_exact(const double *d, int k, double obs)
{
	enum { HALF = 1 << ((AB_EXACT_MAX_BLOCKS + 1) / 2) };
	double l[HALF], r[HALF], tmp[HALF];
	int h = k / 2;
	double t = obs - tolerance(obs);

	if (t <= 0)
		return 1;
	half_sums(d, h, l, tmp);
	half_sums(d + h, k - h, r, tmp);
	return 2.0 * (double)count_ge(l, (size_t)1 << h, r, (size_t)1 << (k - h), t) / ldexp(1.0, k);
}

double ab_signflip_p(const double *d, int k, struct ab_rng *rng, bool *exact)
{
	double obs = 0;

	for (int i = 0; i < k; i++)
		obs += d[i];
	obs = fabs(obs);
	if (k <= AB_EXACT_MAX_BLOCKS) {
		*exact = true;
		return signflip_exact(d, k, obs);
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

/* p of a test after shifting its data by s: the intervals and detectable shifts search over it. */
typedef double (*p_of_shift)(double s, void *ctx);

/*
 * The distance t > 0 from `from`, in direction dir, of the nearest shift whose p falls below
 * alpha: steps doubled from `step` until one does (INFINITY past `reach`), then bisected. The
 * caller makes sure the far end does reach it (the design's floor below alpha).
 */
static double boundary(p_of_shift f, void *ctx, double from, int dir, double step, double alpha, double reach)
{
	double lo = 0, hi = step;

	while (f(from + dir * hi, ctx) >= alpha) {
		lo = hi;
		hi *= 2;
		if (hi > reach)
			return INFINITY;
	}
	for (int it = 0; it < 60 && hi - lo > 1e-5 * hi; it++) { /* 0.001% of the bound: below what is printed */
		double mid = (lo + hi) / 2;

		if (f(from + dir * mid, ctx) < alpha)
			hi = mid;
		else
			lo = mid;
	}
	return hi;
}

struct shifted {
	const double *d, *x;
	int k, nx;
	double *buf;
	struct ab_rng seed; /* copied for every p: the same draws (common random numbers) */
};

static double signflip_shifted(double s, void *ctx)
{
	struct shifted *c = ctx;
	struct ab_rng rng = c->seed;
	bool exact;

	for (int i = 0; i < c->k; i++)
		c->buf[i] = c->d[i] - s;
	return ab_signflip_p(c->buf, c->k, &rng, &exact);
}

static double mean_of(const double *d, int k)
{
	double m = 0;

	for (int i = 0; i < k; i++)
		m += d[i];
	return k ? m / k : 0;
}

static double spread_of(const double *d, int k, double around)
{
	double s = 0;

	for (int i = 0; i < k; i++)
		s = fmax(s, fabs(d[i] - around));
	return s;
}

void ab_signflip_interval(const double *d, int k, double level, const struct ab_rng *seed, double *lo, double *hi)
{
	double alpha = 1 - level, est = mean_of(d, k), span = spread_of(d, k, est);
	struct shifted c = { .d = d, .k = k, .seed = *seed };

	*lo = -INFINITY;
	*hi = INFINITY;
	if (k < 1 || ab_blocks_floor(k) >= alpha || !(c.buf = malloc(k * sizeof(double))))
		return;
	/* past est +- span every d - s has one sign: p is the floor, below alpha */
	double step = span / 8 + 1e-12, reach = 2 * span + 1e-9;

	*hi = est + boundary(signflip_shifted, &c, est, 1, step, alpha, reach);
	*lo = est - boundary(signflip_shifted, &c, est, -1, step, alpha, reach);
	free(c.buf);
}

/* The normal distribution's quantile, by bisection on erfc: called a few times per report. */
static double normal_quantile(double p)
{
	double lo = -40, hi = 40;

	for (int i = 0; i < 100; i++) {
		double mid = (lo + hi) / 2;

		if (0.5 * erfc(-mid / M_SQRT2) < p)
			lo = mid;
		else
			hi = mid;
	}
	return (lo + hi) / 2;
}

/*
 * The shift to quote from the one that just reaches alpha on this noise (half; found about half
 * the time): a future run's test rejects when its mean reaches its own critical value c s'/sqrt(k),
 * and both this run's s and the future s' are estimates (sqrt(chi2/nu) around sigma). With a the
 * quoted shift in units of s/sqrt(k), P(Z + a S - c S') = AB_POWER asks, to first order,
 * (a - c)(1 - 1/(4 nu)) = z sqrt(1 + (a^2 + c^2)/(2 nu)): solved by iteration.
 */
static double with_power(double half, double sd, int k)
{
	double se = sd / sqrt(k), nu = k - 1, z = normal_quantile(AB_POWER);

	if (!(se > 0) || !isfinite(half))
		return half;
	double c = half / se, a = c + z;

	for (int i = 0; i < 50; i++)
		a = c + z * sqrt(1 + (a * a + c * c) / (2 * nu)) / (1 - 1 / (4 * nu));
	return a * se;
}

void ab_min_detectable(const double *d, int k, double alpha, const struct ab_rng *seed, double *up, double *down)
{
	*up = *down = INFINITY;
	if (k < 2 || ab_blocks_floor(k) >= alpha)
		return;
	double mean = mean_of(d, k), span = spread_of(d, k, mean), *r = malloc(k * sizeof(*r)), var = 0;
	struct shifted c = { .d = r, .k = k, .seed = *seed, .buf = malloc(k * sizeof(double)) };

	if (r && c.buf) {
		for (int i = 0; i < k; i++) {
			r[i] = d[i] - mean;
			var += r[i] * r[i] / (k - 1);
		}
		double step = span / 8 + 1e-12, reach = 2 * span + 1e-9;

		/* p of r + t: signflip_shifted subtracts, so up searches the mirrored direction */
		*up = with_power(boundary(signflip_shifted, &c, 0, -1, step, alpha, reach), sqrt(var), k);
		*down = with_power(boundary(signflip_shifted, &c, 0, 1, step, alpha, reach), sqrt(var), k);
	}
	free(r);
	free(c.buf);
}

static double binom(int n, int k)
{
	double c = 1;

	for (int i = 1; i <= k; i++)
		c = c * (n - k + i) / i;
	return c;
}

/* Welch's statistic of a split: y' (sum sy, squares qy, ny units) against the rest. One unit on a
 * side has no variance of its own: the plain difference then. */
static double welch(double sy, double qy, int ny, double all, double qall, int nx)
{
	double sx = all - sy, qx = qall - qy, my = sy / ny, mx = sx / nx;

	if (nx < 2 || ny < 2)
		return my - mx;
	double vy = fmax(0, (qy - sy * my) / (ny - 1)), vx = fmax(0, (qx - sx * mx) / (nx - 1));

	/* a tiny floor keeps identical units finite: every split with a difference is then extreme */
	return (my - mx) / sqrt(vx / nx + vy / ny + 1e-30);
}

double ab_perm2_p(const double *x, int nx, const double *y, int ny, struct ab_rng *rng, bool *exact, double *floor)
{
	int n = nx + ny;
	double all = 0, qall = 0, sy = 0, qy = 0, centre = 0, *v = malloc(n * sizeof(*v));

	if (!v) {
		*exact = false;
		*floor = 1;
		return 1;
	}
	memcpy(v, x, nx * sizeof(*v));
	memcpy(v + nx, y, ny * sizeof(*v));
	for (int i = 0; i < n; i++)
		centre += v[i] / n;
	for (int i = 0; i < n; i++) { /* centred: the sums of squares lose nothing to cancellation */
		v[i] -= centre;
		all += v[i];
		qall += v[i] * v[i];
	}
	for (int i = nx; i < n; i++) {
		sy += v[i];
		qy += v[i] * v[i];
	}
	double obs = fabs(welch(sy, qy, ny, all, qall, nx)), splits = binom(n, ny);
	unsigned long long hits = 0, total = 0;

	*floor = fmin(1, (nx == ny ? 2.0 : 1.0) / splits);
	if (splits <= AB_EXACT_MAX_SPLITS && ny <= 64) {
		int idx[64];

		for (int i = 0; i < ny; i++) /* the lexicographic combinations of ny of n */
			idx[i] = i;
		for (;;) {
			double s = 0, q = 0;

			for (int i = 0; i < ny; i++) {
				s += v[idx[i]];
				q += v[idx[i]] * v[idx[i]];
			}
			hits += as_extreme(welch(s, q, ny, all, qall, nx), obs);
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
		double s = 0, q = 0;

		memcpy(w, v, n * sizeof(*w));
		for (int i = 0; i < ny; i++) { /* a partial Fisher-Yates: the first ny are y' */
			int j = i + (int)ab_rng_below(rng, n - i);
			double t = w[i];

			w[i] = w[j];
			w[j] = t;
			s += w[i];
			q += w[i] * w[i];
		}
		hits += as_extreme(welch(s, q, ny, all, qall, nx), obs);
	}
	free(w);
	free(v);
	*exact = false;
	*floor = fmax(*floor, 1.0 / (1 + AB_MC_DRAWS));
	return (1.0 + hits) / (1.0 + AB_MC_DRAWS);
}

static double perm2_shifted(double s, void *ctx)
{
	struct shifted *c = ctx;
	struct ab_rng rng = c->seed;
	bool exact;
	double floor;

	for (int i = 0; i < c->k; i++)
		c->buf[i] = c->d[i] - s;
	return ab_perm2_p(c->x, c->nx, c->buf, c->k, &rng, &exact, &floor);
}

void ab_perm2_interval(const double *x, int nx, const double *y, int ny, double level, const struct ab_rng *seed,
		       double *lo, double *hi)
{
	struct shifted c = { .d = y, .k = ny, .x = x, .nx = nx, .seed = *seed };
	struct ab_rng rng = *seed;
	bool exact;
	double floor, alpha = 1 - level, est = mean_of(y, ny) - mean_of(x, nx);

	*lo = -INFINITY;
	*hi = INFINITY;
	ab_perm2_p(x, nx, y, ny, &rng, &exact, &floor);
	if (nx < 2 || ny < 2 || floor >= alpha || !(c.buf = malloc(ny * sizeof(double))))
		return;
	/* once the shifted sides separate, the studentized statistic of the observed split grows
	 * without bound while every other split's stays bounded: p reaches the floor */
	double span = fmax(spread_of(x, nx, mean_of(x, nx)), spread_of(y, ny, mean_of(y, ny))) * 2 + 1e-12;

	*hi = est + boundary(perm2_shifted, &c, est, 1, span / 8, alpha, 1e6 * span);
	*lo = est - boundary(perm2_shifted, &c, est, -1, span / 8, alpha, 1e6 * span);
	free(c.buf);
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

/* The regularized incomplete beta I_x(a, b) by its continued fraction (modified Lentz), on the
 * side where it converges fast. */
static double betacf(double a, double b, double x)
{
	double c = 1, d = 1 - (a + b) * x / (a + 1), h;

	d = 1 / (fabs(d) < 1e-300 ? 1e-300 : d);
	h = d;
	for (int m = 1; m <= 300; m++) {
		for (int odd = 0; odd < 2; odd++) {
			double num = odd ? -(a + m) * (a + b + m) * x / ((a + 2 * m) * (a + 2 * m + 1))
					 : m * (b - m) * x / ((a + 2 * m - 1) * (a + 2 * m));

			d = 1 + num * d;
			d = 1 / (fabs(d) < 1e-300 ? 1e-300 : d);
			c = 1 + num / c;
			c = fabs(c) < 1e-300 ? 1e-300 : c;
			h *= d * c;
			if (odd && fabs(d * c - 1) < 1e-14)
				return h;
		}
	}
	return h;
}

static double ibeta(double a, double b, double x)
{
	if (x <= 0)
		return 0;
	if (x >= 1)
		return 1;
	double front = exp(lgamma(a + b) - lgamma(a) - lgamma(b) + a * log(x) + b * log1p(-x));

	return x < (a + 1) / (a + b + 2) ? front * betacf(a, b, x) / a : 1 - front * betacf(b, a, 1 - x) / b;
}

/* Two-sided p of Student's t with nu (real) degrees of freedom, and its inverse. */
static double t_two_sided(double t, double nu)
{
	return ibeta(nu / 2, 0.5, nu / (nu + t * t));
}

static double t_critical(double p, double nu)
{
	double lo = 0, hi = 1e6;

	for (int i = 0; i < 200 && hi - lo > 1e-12 * hi; i++) {
		double mid = (lo + hi) / 2;

		if (t_two_sided(mid, nu) > p)
			lo = mid;
		else
			hi = mid;
	}
	return hi;
}

/* Welch's t test of mean y - mean x: p, and the interval at level; the degrees of freedom from
 * Welch-Satterthwaite. Both sides need two units; identical units give p 1 or 0. */
static double welch_test(const double *x, int nx, const double *y, int ny, double level, double *lo, double *hi)
{
	double mx = mean_of(x, nx), my = mean_of(y, ny), vx = 0, vy = 0;

	for (int i = 0; i < nx; i++)
		vx += (x[i] - mx) * (x[i] - mx) / (nx - 1) / nx;
	for (int i = 0; i < ny; i++)
		vy += (y[i] - my) * (y[i] - my) / (ny - 1) / ny;
	double se = sqrt(vx + vy), nu = (vx + vy) * (vx + vy) / (vx * vx / (nx - 1) + vy * vy / (ny - 1));

	if (!(se > 0)) {
		*lo = *hi = my - mx;
		return my == mx ? 1 : 0;
	}
	double tc = t_critical(1 - level, nu);

	*lo = my - mx - tc * se;
	*hi = my - mx + tc * se;
	return t_two_sided((my - mx) / se, nu);
}

static double rel(double logv)

{
	return isfinite(logv) ? expm1(logv) : logv;
}

/* The shift on the data's scale: relative (exp of a mean log ratio, minus 1) or the difference itself. */
static double shift_of(double v, bool ratio)
{
	return ratio ? rel(v) : v;
}

static int judge_blocks(const double *d, int k, double alpha_each, struct ab_rng *rng, struct ab_judged *j, bool ratio)
{
	struct ab_rng seed = *rng;
	double lo, hi, up, down;

	memset(j, 0, sizeof(*j));
	j->blocks = k;
	j->floor = ab_blocks_floor(k);
	j->p = 1;
	j->lo = j->eq_lo = -INFINITY;
	j->hi = j->eq_hi = j->mde = j->mde_up = j->mde_down = INFINITY;
	if (k < 1)
		return 0;
	j->p = ab_signflip_p(d, k, rng, &j->exact);
	j->effect = shift_of(mean_of(d, k), ratio);
	ab_signflip_interval(d, k, 0.95, &seed, &lo, &hi);
	j->lo = shift_of(lo, ratio);
	j->hi = shift_of(hi, ratio);
	ab_signflip_interval(d, k, 1 - 2 * alpha_each, &seed, &lo, &hi);
	j->eq_lo = shift_of(lo, ratio);
	j->eq_hi = shift_of(hi, ratio);
	ab_min_detectable(d, k, alpha_each, &seed, &up, &down);
	j->mde_up = shift_of(up, ratio);
	j->mde_down = !ratio ? down : isfinite(down) ? -expm1(-down) : INFINITY;
	j->mde = fmin(j->mde_up, j->mde_down);
	return 0;
}

int ab_judge_blocks(const double *d, int k, double alpha_each, struct ab_rng *rng, struct ab_judged *j)
{
	return judge_blocks(d, k, alpha_each, rng, j, true);
}

int ab_judge_blocks_diff(const double *d, int k, double alpha_each, struct ab_rng *rng, struct ab_judged *j)
{
	return judge_blocks(d, k, alpha_each, rng, j, false);
}

/*
 * Runs: the permutation test of Welch's statistic is exact when the runs are alike, but with few
 * runs of unequal precision a side (4 runs of 1 epoch against 8 of 40) it calls identical sides
 * different too often; Welch's t test holds its level there but leans on normality. p is the
 * larger of the two, valid whenever either is, and the interval (the test inverted) the union of
 * theirs.
 */
static void runs_interval(const double *x, int nx, const double *y, int ny, double level, const struct ab_rng *seed,
			  double *lo, double *hi)
{
	double wlo, whi;

	ab_perm2_interval(x, nx, y, ny, level, seed, lo, hi);
	if (nx >= 2 && ny >= 2 && isfinite(*lo)) {
		welch_test(x, nx, y, ny, level, &wlo, &whi);
		*lo = fmin(*lo, wlo);
		*hi = fmax(*hi, whi);
	}
}

static int judge_runs(const double *x, int nx, const double *y, int ny, double alpha_each, struct ab_rng *rng,
		      struct ab_judged *j, bool ratio)
{
	struct ab_rng seed = *rng;
	double lo, hi;

	memset(j, 0, sizeof(*j));
	j->blocks = nx + ny;
	j->p = ab_perm2_p(x, nx, y, ny, rng, &j->exact, &j->floor);
	if (nx >= 2 && ny >= 2)
		j->p = fmax(j->p, welch_test(x, nx, y, ny, 0.95, &lo, &hi));
	j->effect = shift_of(mean_of(y, ny) - mean_of(x, nx), ratio);
	runs_interval(x, nx, y, ny, 0.95, &seed, &lo, &hi);
	j->lo = shift_of(lo, ratio);
	j->hi = shift_of(hi, ratio);
	runs_interval(x, nx, y, ny, 1 - 2 * alpha_each, &seed, &lo, &hi);
	j->eq_lo = shift_of(lo, ratio);
	j->eq_hi = shift_of(hi, ratio);
	j->mde = j->mde_up = j->mde_down = INFINITY; /* runs carry no such figure */
	return 0;
}

int ab_judge_runs(const double *x, int nx, const double *y, int ny, double alpha_each, struct ab_rng *rng,
		  struct ab_judged *j)
{
	return judge_runs(x, nx, y, ny, alpha_each, rng, j, true);
}

int ab_judge_runs_diff(const double *x, int nx, const double *y, int ny, double alpha_each, struct ab_rng *rng,
		       struct ab_judged *j)
{
	return judge_runs(x, nx, y, ny, alpha_each, rng, j, false);
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
		/* a shift below the minimum effect is not one to act on: nothing smaller is "detectable" */
		j[i].mde_up = fmax(j[i].mde_up, min_effect);
		j[i].mde_down = fmax(j[i].mde_down, min_effect);
		j[i].mde = fmin(j[i].mde_up, j[i].mde_down);
		if (rej[i] && fabs(j[i].effect) >= min_effect)
			j[i].verdict = (j[i].effect < 0) != higher_better ? AB_FASTER : AB_SLOWER;
		else if (j[i].eq_lo >= -min_effect && j[i].eq_hi <= min_effect)
			j[i].verdict = AB_EQUIVALENT;
		else if (j[i].floor >= alpha / m)
			j[i].verdict = AB_INCONCLUSIVE;
		else
			j[i].verdict = AB_NOT_SHOWN;
	}
}

enum ab_verdict ab_verdict_overall(const enum ab_verdict *v, int n)
{
	int count[5] = { 0 };

	if (!n) /* nothing could be judged: the notes say why */
		return AB_INCONCLUSIVE;
	for (int i = 0; i < n; i++)
		count[v[i]]++;
	if (count[AB_SLOWER])
		return AB_SLOWER;
	if (count[AB_FASTER])
		return AB_FASTER;
	if (count[AB_EQUIVALENT] == n)
		return AB_EQUIVALENT;
	return count[AB_INCONCLUSIVE] ? AB_INCONCLUSIVE : AB_NOT_SHOWN;
}
