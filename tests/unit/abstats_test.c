// SPDX-License-Identifier: MIT
/*
 * A/B statistics on inputs with known answers: quantiles of 1..100, a Mann-Whitney example
 * worked by hand, identical arms, a clear shift, heavy ties, tiny samples refused.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "ab/abstats.h"
#include "kselftest_harness.h"

#define NEAR(want, got, tol) EXPECT_LT(fabs((double)(want) - (got)), tol) TH_LOG("want %.6g got %.6g", (double)(want), (double)(got))

TEST(rng_deterministic_and_in_range)
{
	struct ab_rng r1, r2;

	ab_rng_seed(&r1, 42);
	ab_rng_seed(&r2, 42);
	for (int i = 0; i < 1000; i++)
		ASSERT_EQ(ab_rng_next(&r1), ab_rng_next(&r2));
	ab_rng_seed(&r2, 43);
	EXPECT_NE(ab_rng_next(&r1), ab_rng_next(&r2));
	double sum = 0;

	for (int i = 0; i < 100000; i++) {
		double u = ab_rng_double(&r1);

		ASSERT_TRUE(u >= 0 && u < 1);
		ASSERT_LT(ab_rng_below(&r1, 7), 7);
		sum += u;
	}
	NEAR(0.5, sum / 100000, 0.01);
}

/* Type 7 on 1..100: h = 99q, so p50 = 50.5, p90 = 90.1, p99 = 99.01, p99.9 = 99.901. */
TEST(quantiles_1_to_100)
{
	double x[100];

	for (int i = 0; i < 100; i++)
		x[i] = 100 - i;
	ab_sort(x, 100);
	EXPECT_EQ(1, ab_quantile_sorted(x, 100, 0));
	NEAR(50.5, ab_quantile_sorted(x, 100, 0.5), 1e-9);
	NEAR(90.1, ab_quantile_sorted(x, 100, 0.9), 1e-9);
	NEAR(99.01, ab_quantile_sorted(x, 100, 0.99), 1e-9);
	NEAR(99.901, ab_quantile_sorted(x, 100, 0.999), 1e-9);
	EXPECT_EQ(100, ab_quantile_sorted(x, 100, 1));
	EXPECT_EQ(7, ab_quantile_sorted((double[]){ 7 }, 1, 0.5));
}

/*
 * Worked by hand (the textbook procedure: pool, rank with mean ranks for ties, sum B's ranks):
 *   A = 1.1 2.0 2.0 3.5 4.0 4.2 5.1 6.0 6.0 7.3     B = 2.0 3.0 4.0 5.5 6.0 6.8 7.3 8.1 9.0 9.9
 *   tied groups: 2.0 x3 (ranks 2-4 -> 3), 4.0 x2 (7,8 -> 7.5), 6.0 x3 (12-14 -> 13), 7.3 x2 (16.5)
 *   R_B = 3 + 5 + 7.5 + 11 + 13 + 15 + 16.5 + 18 + 19 + 20 = 128, U_B = 128 - 10*11/2 = 73
 *   sum(t^3 - t) = 24 + 6 + 24 + 6 = 60; var = 10*10/12 * (21 - 60/(20*19)) = 173.684
 *   z = (73 - 50 - 0.5) / sqrt(173.684) = 1.707; two-sided p = erfc(z/sqrt 2) = 0.0878
 *   Cliff's delta: 70 pairs with b > a, 6 ties, 24 with b < a: (70 - 24)/100 = 0.46 = 2*73/100 - 1
 */
TEST(mann_whitney_hand_example)
{
	static const double a[] = { 1.1, 2.0, 2.0, 3.5, 4.0, 4.2, 5.1, 6.0, 6.0, 7.3 };
	static const double b[] = { 2.0, 3.0, 4.0, 5.5, 6.0, 6.8, 7.3, 8.1, 9.0, 9.9 };
	struct ab_mwu m;

	ASSERT_EQ(0, ab_mann_whitney(a, 10, b, 10, &m));
	NEAR(73, m.u, 1e-9);
	NEAR(1.707, m.z, 5e-4);
	NEAR(0.0878, m.p, 5e-4);
	NEAR(0.46, m.delta, 1e-9);
	/* Swapping the arms mirrors U, z and delta; p stays. */
	ASSERT_EQ(0, ab_mann_whitney(b, 10, a, 10, &m));
	NEAR(27, m.u, 1e-9);
	NEAR(-1.707, m.z, 5e-4);
	NEAR(0.0878, m.p, 5e-4);
	NEAR(-0.46, m.delta, 1e-9);
}

static double *uniform(struct ab_rng *r, size_t n, double lo, double hi)
{
	double *x = malloc(n * sizeof(*x));

	for (size_t i = 0; i < n; i++)
		x[i] = lo + (hi - lo) * ab_rng_double(r);
	return x;
}

TEST(identical_samples)
{
	struct ab_rng r;
	struct ab_cmp c;

	ab_rng_seed(&r, 1);
	double *a = uniform(&r, 1000, 10, 20);

	ASSERT_EQ(0, ab_compare(&c, "A", a, 1000, "B", a, 1000, &(struct ab_opts){ .iters = 500 }, &r));
	NEAR(1000 * 1000 / 2, c.mwu.u, 1e-6);
	EXPECT_EQ(0, c.mwu.z);
	NEAR(1, c.mwu.p, 1e-12);
	NEAR(0, c.mwu.delta, 1e-12);
	for (int j = 0; j < AB_NQ; j++) {
		EXPECT_EQ(0, c.diff[j].est);
		EXPECT_LE(c.diff[j].lo, 0);
		EXPECT_GE(c.diff[j].hi, 0);
	}
	free(a);
}

/*
 * A ~ U(100, 120), B = 1.1 x U(100, 120) = U(110, 132): a +10% slowdown. Analytically
 * P(B < A) = integral over b in [110, 120] of (120 - b)/20 * 1/22 = 50/440, so Cliff's delta =
 * 1 - 2 * 50/440 = 0.7727; medians 110 and 121.
 */
TEST(clear_shift_detected)
{
	struct ab_rng r;
	struct ab_cmp c;

	ab_rng_seed(&r, 2024);
	double *a = uniform(&r, 1000, 100, 120), *b = uniform(&r, 1000, 100, 120);

	for (int i = 0; i < 1000; i++)
		b[i] *= 1.1;
	ASSERT_EQ(0, ab_compare(&c, "poll=0", a, 1000, "poll=50us", b, 1000, NULL, &r));
	EXPECT_LT(c.mwu.p, 1e-6);
	EXPECT_GT(c.mwu.z, 0);
	NEAR(1 - 2 * 50.0 / 440, c.mwu.delta, 0.03);
	NEAR(11, c.diff[0].est, 1);
	EXPECT_GT(c.diff[0].lo, 0); /* the p50 difference's interval excludes 0 */
	EXPECT_LT(c.diff[0].lo, c.diff[0].hi);
	NEAR(110, c.a.q[0].est, 1);
	EXPECT_LE(c.a.q[0].lo, c.a.q[0].est);
	EXPECT_GE(c.a.q[0].hi, c.a.q[0].est);
	NEAR(110, c.a.mean, 1);
	EXPECT_STREQ("poll=50us", c.b.name);

	char *out = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&out, &len);

	ab_print(f, &c, 1, "us");
	fclose(f);
	EXPECT_NE(NULL, strstr(out, "p99.9"));
	EXPECT_NE(NULL, strstr(out, "B tends larger"));
	TH_LOG("\n%s", out);
	free(out);
	free(a);
	free(b);
}

/* Same seed, same intervals: reports are reproducible. */
TEST(bootstrap_deterministic)
{
	double x[100];
	struct ab_ci c1[AB_NQ], c2[AB_NQ];
	struct ab_rng r;

	for (int i = 0; i < 100; i++)
		x[i] = i + 1;
	ab_rng_seed(&r, 7);
	ASSERT_EQ(0, ab_bootstrap_quantiles(x, 100, ab_report_q, AB_NQ, NULL, &r, c1));
	ab_rng_seed(&r, 7);
	ASSERT_EQ(0, ab_bootstrap_quantiles(x, 100, ab_report_q, AB_NQ, NULL, &r, c2));
	EXPECT_EQ(0, memcmp(c1, c2, sizeof(c1)));
	NEAR(50.5, c1[0].est, 1e-9);
	/* The median of 100 uniform ranks: its 95% interval is about +-10 ranks. */
	EXPECT_GT(c1[0].lo, 35);
	EXPECT_LT(c1[0].lo, 50.5);
	EXPECT_GT(c1[0].hi, 50.5);
	EXPECT_LT(c1[0].hi, 66);
	EXPECT_EQ(100, c1[4].est);
	EXPECT_LE(c1[4].hi, 100);
}

/*
 * Heavy ties. A = 60 x 1, 40 x 2 against B = 50 x 1, 50 x 2: U_B = 50*40 + (50*60 + 50*40)/2 = 5500,
 * sum(t^3 - t) over groups of 110 and 90, z = 1.416, p = 0.1567 (without the tie correction it
 * would be 0.22). All-equal arms have no variance: z = 0, p = 1, not NaN.
 */
TEST(heavy_ties)
{
	double a[100], b[100];
	struct ab_mwu m;

	for (int i = 0; i < 100; i++) {
		a[i] = i < 60 ? 1 : 2;
		b[i] = i < 50 ? 1 : 2;
	}
	ASSERT_EQ(0, ab_mann_whitney(a, 100, b, 100, &m));
	NEAR(5500, m.u, 1e-9);
	NEAR(1.416, m.z, 5e-4);
	NEAR(0.1567, m.p, 5e-4);
	NEAR(0.1, m.delta, 1e-12);
	for (int i = 0; i < 100; i++)
		a[i] = b[i] = 3;
	ASSERT_EQ(0, ab_mann_whitney(a, 100, b, 100, &m));
	EXPECT_EQ(0, m.z);
	EXPECT_EQ(1, m.p);
	EXPECT_EQ(0, m.delta);
}

TEST(tiny_and_bad_samples_refused)
{
	double x[AB_MIN_SAMPLES] = { 1, 2, 3, 4, 5, 6, 7, 8 };
	struct ab_mwu m;
	struct ab_arm arm;
	struct ab_rng r;

	ab_rng_seed(&r, 3);
	EXPECT_EQ(-EINVAL, ab_mann_whitney(x, AB_MIN_SAMPLES - 1, x, AB_MIN_SAMPLES, &m));
	EXPECT_EQ(-EINVAL, ab_mann_whitney(x, AB_MIN_SAMPLES, x, 2, &m));
	EXPECT_EQ(-EINVAL, ab_arm_summarize(&arm, "short", x, 3, NULL, &r));
	EXPECT_EQ(0, ab_mann_whitney(x, AB_MIN_SAMPLES, x, AB_MIN_SAMPLES, &m));
	x[5] = NAN;
	EXPECT_EQ(-EINVAL, ab_mann_whitney(x, AB_MIN_SAMPLES, x, AB_MIN_SAMPLES, &m));
	EXPECT_EQ(-EINVAL, ab_arm_summarize(&arm, "nan", x, AB_MIN_SAMPLES, NULL, &r));
}

TEST(gather_skips_warmup_epochs)
{
	static const double e0[] = { 100, 100 }, e1[] = { 90 }, e2[] = { 1, 2 }, e3[] = { 3 }, e4[] = { 4 };
	const struct ab_epoch ep[] = { { 0, e0, 2 }, { 1, e1, 1 }, { 0, e2, 2 }, { 1, e3, 1 }, { 0, e4, 1 } };
	double *x;
	size_t n;

	ASSERT_EQ(0, ab_gather(ep, 5, 2, 0, &x, &n));
	ASSERT_EQ(3, n);
	EXPECT_EQ(1, x[0]);
	EXPECT_EQ(2, x[1]);
	EXPECT_EQ(4, x[2]);
	free(x);
	ASSERT_EQ(0, ab_gather(ep, 5, 2, 1, &x, &n));
	ASSERT_EQ(1, n);
	EXPECT_EQ(3, x[0]);
	free(x);
	ASSERT_EQ(0, ab_gather(ep, 5, 5, 1, &x, &n));
	EXPECT_EQ(0, n);
	free(x);
}

TEST_HARNESS_MAIN
