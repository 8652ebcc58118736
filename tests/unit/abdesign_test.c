// SPDX-License-Identifier: MIT
/*
 * The design-respecting A/B statistics (ab/design.h): cases worked by hand (a 3-block permutation
 * p, the 2/2^k floor, Holm's order, a two-sample split test, a Hodges-Lehmann interval), and
 * simulated experiments with no KVM: A/A designs whose epochs carry a random host-state offset
 * must report a difference at the nominal rate (the pooled Mann-Whitney of today's vmm ab, on the
 * same data, is far above it: kept as an assertion so the reason stays visible), and a 10% shift of
 * the median must be found. Seeded: every run draws the same experiments.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ab/design.h"
#include "core/json.h"
#include "kselftest_harness.h"
#include "sim_normal.h"

#define NEAR(want, got, tol) EXPECT_LT(fabs((double)(want) - (got)), tol) TH_LOG("want %.6g got %.6g", (double)(want), (double)(got))

/* d = {0.1, 0.2, 0.3}: the 8 relabelings' sums are +-0.6, +-0.4, +-0.2, +-0.0. |0.6| is reached by
 * the labels and their mirror: p = 2/8. d = {0.1, -0.2, 0.3} sums to 0.2: 6 of 8 reach it. */
TEST(three_blocks_by_hand)
{
	struct ab_rng r;
	bool exact = false;

	ab_rng_seed(&r, 1);
	NEAR(0.25, ab_signflip_p((double[]){ 0.1, 0.2, 0.3 }, 3, &r, &exact), 1e-12);
	EXPECT_TRUE(exact);
	NEAR(0.75, ab_signflip_p((double[]){ 0.1, -0.2, 0.3 }, 3, &r, &exact), 1e-12);
	NEAR(1.0, ab_signflip_p((double[]){ 0.1, -0.1, 0.0 }, 3, &r, &exact), 1e-12);
}

/* With k blocks the most extreme labels still have their mirror: 2/2^k. 4 blocks: 0.125; the
 * first k under 0.01 is 8 (2/256), under 0.05 it is 6 (2/64 = 0.031). */
TEST(floor_two_over_two_to_the_k)
{
	struct ab_rng r;
	bool exact;

	ab_rng_seed(&r, 1);
	NEAR(0.125, ab_blocks_floor(4), 1e-15);
	NEAR(2.0 / 128, ab_blocks_floor(7), 1e-15);
	EXPECT_EQ(8, ab_blocks_needed(0.01));
	EXPECT_EQ(6, ab_blocks_needed(0.05));
	EXPECT_EQ(11, ab_blocks_needed(0.01 / 6)); /* Holm over 6 judgements: 2/2^11 = 0.00098 < 0.00167 */
	NEAR(0.125, ab_signflip_p((double[]){ 1, 2, 3, 4 }, 4, &r, &exact), 1e-15);
	NEAR(2.0 / 256, ab_signflip_p((double[]){ 5, 1, 2, 3, 4, 9, 9, 1 }, 8, &r, &exact), 1e-15);
	/* exact up to 24 blocks (2/2^24 for all positive), Monte Carlo past it: (1 + ~0)/(1 + draws) */
	double d[26];

	for (int i = 0; i < 26; i++)
		d[i] = 1;
	NEAR(2.0 / (1 << 24), ab_signflip_p(d, 24, &r, &exact), 1e-18);
	EXPECT_TRUE(exact);
	double p = ab_signflip_p(d, 26, &r, &exact);

	EXPECT_FALSE(exact);
	EXPECT_LT(p, 2.0 / AB_MC_DRAWS);
}

/* The exact count by halves against every relabeling one by one, on values with ties and zeros. */
TEST(meet_in_the_middle_counts_every_relabeling)
{
	struct ab_rng r;
	bool exact;

	ab_rng_seed(&r, 9);
	for (int k = 1; k <= 14; k++)
		for (int rep = 0; rep < 20; rep++) {
			double d[14], obs = 0;
			unsigned long hits = 0;

			for (int i = 0; i < k; i++) {
				d[i] = (double)((int)ab_rng_below(&r, 7) - 3) / 4; /* -0.75..0.75: ties, zeros */
				obs += d[i];
			}
			for (unsigned long s = 0; s < 1ul << k; s++) {
				double t = 0;

				for (int i = 0; i < k; i++)
					t += s >> i & 1 ? -d[i] : d[i];
				hits += fabs(t) >= fabs(obs) - 1e-12;
			}
			NEAR((double)hits / (1ul << k), ab_signflip_p(d, k, &r, &exact), 1e-12);
		}
}

/* p = {0.01, 0.04, 0.03, 0.005} at alpha 0.05, m = 4: 0.005 < 0.0125 and 0.01 < 0.0167 are
 * rejected; 0.03 is not below 0.025, so neither it nor 0.04 (below 0.05 alone) is. */
TEST(holm_order)
{
	bool rej[4];

	ab_holm((double[]){ 0.01, 0.04, 0.03, 0.005 }, 4, 0.05, rej);
	EXPECT_TRUE(rej[0]);
	EXPECT_FALSE(rej[1]);
	EXPECT_FALSE(rej[2]);
	EXPECT_TRUE(rej[3]);
	ab_holm((double[]){ 0.04 }, 1, 0.05, rej);
	EXPECT_TRUE(rej[0]);
}

/* x = {1, 2}, y = {3, 4}: of the 6 splits, {3,4} and {1,2} reach |2|: p = 1/3, floor 2/6. */
TEST(two_sample_splits_by_hand)
{
	struct ab_rng r;
	bool exact;
	double floor;

	ab_rng_seed(&r, 1);
	NEAR(1.0 / 3, ab_perm2_p((double[]){ 1, 2 }, 2, (double[]){ 3, 4 }, 2, &r, &exact, &floor), 1e-12);
	EXPECT_TRUE(exact);
	NEAR(1.0 / 3, floor, 1e-12);
	/* one unit a side: 2 splits, both as extreme: p 1, nothing can be judged */
	NEAR(1.0, ab_perm2_p((double[]){ 1 }, 1, (double[]){ 5 }, 1, &r, &exact, &floor), 1e-12);
	NEAR(1.0, floor, 1e-12);
}

/* The interval is the test inverted: d = 1..6 (mean 3.5) at 95%: a shift s is inside while the
 * sign-flip test of d - s gives p >= 0.05, so just inside a bound the test does not reject and just
 * outside it does; d itself gives p 2/64, so the interval excludes 0. At s = 1 the data 0..5 give
 * 4/64 (the 0 ties with its own mirror), just below 1 they give 2/64: lo = 1, and by symmetry about
 * 3.5 hi = 6. With 5 blocks the floor 2/32 is above 0.05: no interval. */
TEST(interval_inverts_the_test)
{
	struct ab_rng r;
	double lo, hi;
	bool exact;
	const double d[6] = { 1, 2, 3, 4, 5, 6 };

	ab_rng_seed(&r, 1);
	ab_signflip_interval(d, 6, 0.95, &r, &lo, &hi);
	EXPECT_LT(lo, 3.5);
	EXPECT_GT(hi, 3.5);
	NEAR(1, lo, 1e-6);
	NEAR(6, hi, 1e-6);
	double inside[6], outside[6];

	for (int i = 0; i < 6; i++) {
		inside[i] = d[i] - lo * 1.001;
		outside[i] = d[i] - lo * 0.999;
	}
	EXPECT_GE(ab_signflip_p(inside, 6, &r, &exact), 0.05) TH_LOG("inside the interval: not rejected");
	EXPECT_LT(ab_signflip_p(outside, 6, &r, &exact), 0.05) TH_LOG("outside the interval: rejected");
	ab_signflip_interval(d, 5, 0.95, &r, &lo, &hi);
	EXPECT_TRUE(isinf(lo) && isinf(hi));
}

/* Past the exact limit Monte Carlo's p never goes below 1/(1 + draws): 26 blocks cannot reach
 * alpha 0.0001 over three judgements, so they are inconclusive, not "not shown", and no shift is
 * "detectable" (the detectable shift's search would otherwise stop at a p that never reached the
 * level). 20 blocks are counted exactly (2/2^20) and can. */
TEST(monte_carlo_floor)
{
	struct ab_rng r;
	double d[26], up, down;

	ab_rng_seed(&r, 2);
	for (int i = 0; i < 26; i++)
		d[i] = 0.2 * (i % 5) - 0.4; /* too noisy for equivalence within 5%, which needs only 2 alpha / m */
	NEAR(1.0 / (1 + AB_MC_DRAWS), ab_blocks_floor(26), 1e-15);
	NEAR(2.0 / (1 << 20), ab_blocks_floor(20), 1e-15);
	ab_min_detectable(d, 26, 0.0001 / 3, &r, &up, &down);
	EXPECT_TRUE(isinf(up) && isinf(down)) TH_LOG("26 blocks at 3.3e-5: nothing detectable, got %g", up);
	ab_min_detectable(d, 20, 0.0001 / 3, &r, &up, &down);
	EXPECT_TRUE(isfinite(up) && isfinite(down));
	struct ab_judged j[3];

	for (int q = 0; q < 3; q++)
		ab_judge_blocks(d, 26, 0.0001 / 3, &r, &j[q]);
	ab_verdicts(j, 3, 0.0001, 0.05, false);
	EXPECT_EQ(AB_INCONCLUSIVE, j[0].verdict);
	EXPECT_EQ(21, ab_blocks_needed(1e-6));
	EXPECT_EQ(-1, ab_blocks_needed(1e-8)) TH_LOG("below 2/2^24 only Monte Carlo is left, and it stops at 5e-5");
}

/* The verdict needs p below alpha after Holm and a shift of at least the minimum effect; a design
 * that cannot reach alpha/m is inconclusive. */
TEST(verdict_rules)
{
	struct ab_judged j[3] = {
		{ .p = 0.001, .floor = 0.0001, .effect = -0.20, .eq_lo = -INFINITY, .eq_hi = INFINITY }, /* B faster */
		/* significant, below 5%, but its interval reaches past 5%: not shown */
		{ .p = 0.001, .floor = 0.0001, .effect = 0.02, .eq_lo = 0.001, .eq_hi = 0.06 },
		/* not significant, the interval well away from 0 (+26% [+6%, +49%]): not shown, never
		 * "no difference" */
		{ .p = 0.02, .floor = 0.0001, .effect = 0.26, .lo = 0.06, .hi = 0.49, .eq_lo = 0.01, .eq_hi = 0.6 },
	};

	ab_verdicts(j, 3, 0.01, 0.05, false);
	EXPECT_EQ(AB_FASTER, j[0].verdict);
	EXPECT_EQ(AB_NOT_SHOWN, j[1].verdict);
	EXPECT_EQ(AB_NOT_SHOWN, j[2].verdict);
	/* the whole equivalence interval inside +-5%: equivalent, significant or not */
	j[1].eq_lo = -0.01;
	j[1].eq_hi = 0.04;
	ab_verdicts(j, 3, 0.01, 0.05, false);
	EXPECT_EQ(AB_EQUIVALENT, j[1].verdict);
	EXPECT_EQ(AB_SLOWER, ab_verdict_overall((enum ab_verdict[]){ AB_EQUIVALENT, AB_FASTER, AB_SLOWER }, 3));
	EXPECT_EQ(AB_EQUIVALENT, ab_verdict_overall((enum ab_verdict[]){ AB_EQUIVALENT, AB_EQUIVALENT }, 2));
	EXPECT_EQ(AB_NOT_SHOWN, ab_verdict_overall((enum ab_verdict[]){ AB_EQUIVALENT, AB_NOT_SHOWN }, 2));
	j[1].eq_lo = 0.001;
	j[1].eq_hi = 0.06;
	j[0].effect = 0.20;
	ab_verdicts(j, 3, 0.01, 0.05, false);
	EXPECT_EQ(AB_SLOWER, j[0].verdict);
	ab_verdicts(j, 3, 0.01, 0.05, true); /* a throughput: higher is better */
	EXPECT_EQ(AB_FASTER, j[0].verdict);
	/* 4 blocks: floor 0.125, never below 0.01 */
	struct ab_judged four = { .p = 0.125, .floor = ab_blocks_floor(4), .effect = 0.5, .eq_lo = -INFINITY,
				  .eq_hi = INFINITY };

	ab_verdicts(&four, 1, 0.01, 0.05, false);
	EXPECT_EQ(AB_INCONCLUSIVE, four.verdict);
}

/* The detectable shift: a noiseless design detects anything; noise makes it larger; too few
 * blocks detect nothing. */
TEST(min_detectable_shift)
{
	struct ab_rng r;
	double quiet[8] = { 0 }, noisy[8] = { 0.1, -0.1, 0.05, -0.05, 0.2, -0.2, 0.0, 0.0 };

	double up, down;

	ab_rng_seed(&r, 3);
	ab_min_detectable(quiet, 8, 0.01, &r, &up, &down);
	EXPECT_LT(up, 1e-9);
	EXPECT_LT(down, 1e-9);
	ab_min_detectable(noisy, 8, 0.01, &r, &up, &down);
	EXPECT_GT(up, 0.05);
	EXPECT_LT(up, 0.4);
	NEAR(up, down, 1e-6); /* symmetric noise: the same both ways */
	ab_min_detectable(noisy, 4, 0.01, &r, &up, &down);
	EXPECT_TRUE(isinf(up));
}


#define SIM_N 200	     /* samples per epoch */
#define SIM_SIGMA_EPOCH 0.05 /* each epoch's host-state offset, log scale (5%) */
#define SIM_SIGMA_SAMPLE 0.5 /* samples around it: log-normal */
#define SIM_POOLED 200	     /* experiments that also run the pooled test (it sorts every sample) */

/* The median of x[0..n), n odd or even (type 7), by selection: O(n). */
static double median(double *x, int n)
{
	int lo = 0, hi = n - 1, k = (n - 1) / 2;

	while (lo < hi) {
		double piv = x[(lo + hi) / 2];
		int i = lo, j = hi;

		while (i <= j) {
			while (x[i] < piv)
				i++;
			while (x[j] > piv)
				j--;
			if (i <= j) {
				double t = x[i];

				x[i++] = x[j];
				x[j--] = t;
			}
		}
		if (k <= j)
			hi = j;
		else if (k >= i)
			lo = i;
		else
			break;
	}
	double m = x[k];

	if (n % 2 == 0) { /* type 7 at 0.5: the mean of the two middle order statistics */
		double next = INFINITY;

		for (int i = k + 1; i < n; i++)
			next = fmin(next, x[i]);
		m = (m + next) / 2;
	}
	return m;
}

/*
 * One simulated experiment of k blocks, arm B's median shifted by `shift` (relative): the new
 * test's p on per-epoch medians, and (p_pooled not NULL) today's pooled Mann-Whitney p on the same
 * samples. Samples are kept as logs: a median and the ranks are the same on either scale.
 */
static void simulate(struct gauss *g, int k, double shift, double *p_new, double *p_pooled)
{
	static double pool[2][16 * SIM_N], ep[SIM_N];
	double d[64], med[2];
	bool exact;

	for (int b = 0; b < k; b++) {
		for (int arm = 0; arm < 2; arm++) {
			double off = log(100) + SIM_SIGMA_EPOCH * normal(g) + (arm ? log1p(shift) : 0);

			for (int i = 0; i < SIM_N; i++)
				pool[arm][b * SIM_N + i] = ep[i] = off + SIM_SIGMA_SAMPLE * normal(g);
			med[arm] = median(ep, SIM_N);
		}
		d[b] = med[1] - med[0];
	}
	*p_new = ab_signflip_p(d, k, &g->r, &exact);
	if (p_pooled) {
		struct ab_mwu m;

		ab_mann_whitney(pool[0], k * SIM_N, pool[1], k * SIM_N, &m);
		*p_pooled = m.p;
	}
}

FIXTURE(sim) {};
FIXTURE_SETUP(sim) {}
FIXTURE_TEARDOWN(sim) {}

TEST_F_TIMEOUT(sim, aa_false_positive_rate_is_nominal, 300)
{
	static const int blocks[] = { 8, 16 };
	struct gauss g = { 0 };

	ab_rng_seed(&g.r, 20);
	for (int bi = 0; bi < 2; bi++) {
		int fp05 = 0, fp01 = 0, pooled05 = 0;

		for (int e = 0; e < 1000; e++) {
			double p, pp = 1;

			simulate(&g, blocks[bi], 0, &p, e < SIM_POOLED ? &pp : NULL);
			fp05 += p < 0.05;
			fp01 += p < 0.01;
			pooled05 += pp < 0.05;
		}
		TH_LOG("A/A at %d blocks: the epoch test says different in %.1f%% (alpha 0.05), %.1f%% (0.01); "
		       "the pooled Mann-Whitney in %.1f%% (0.05)", blocks[bi], fp05 / 10.0, fp01 / 10.0,
		       100.0 * pooled05 / SIM_POOLED);
		EXPECT_GE(fp05, 30);
		EXPECT_LE(fp05, 70);
		EXPECT_LT(fp01, 20);
		/* pseudo-replication: the pooled test on correlated samples is far too confident */
		EXPECT_GT(pooled05, 3 * SIM_POOLED / 20) TH_LOG("three times the nominal 5%%");
	}
}

TEST_F_TIMEOUT(sim, ten_percent_shift_found_at_16_blocks, 300)
{
	struct gauss g = { 0 };
	int found05 = 0, found01 = 0;

	ab_rng_seed(&g.r, 21);
	for (int e = 0; e < 1000; e++) {
		double p;

		simulate(&g, 16, 0.10, &p, NULL);
		found05 += p < 0.05;
		found01 += p < 0.01;
	}
	TH_LOG("a 10%% shift of the median at 16 blocks found in %.1f%% (alpha 0.05), %.1f%% (0.01)", found05 / 10.0,
	       found01 / 10.0);
	EXPECT_GE(found05, 800);
}

static char *comparison_text(const struct ab_comparison *c)
{
	char *buf = NULL;
	size_t n = 0;
	FILE *f = open_memstream(&buf, &n);

	if (!f)
		return NULL;
	ab_comparison_json(f, c);
	fclose(f);
	return buf;
}

/* The one writer of a comparison (vmm ab's report, vmm ab compare --json): every field, read back
 * by the strict reader; what is not finite is null, not "inf" (which no JSON reader takes); the
 * verdict only when asked; a name with a quote stays one string. */
TEST(comparison_json_fields)
{
	struct ab_judged j = { .blocks = 7, .exact = true, .p = 0.015625, .floor = 0.015625, .effect = 0.25,
			       .lo = 0.125, .hi = 0.5, .mde = 0.2, .reject = true, .verdict = AB_SLOWER };
	struct ab_comparison c = { .workload = "timer", .quantity = "p90", .a = "hp0", .b = "hp\"500us",
				   .unit = "epoch", .a_median = 10, .b_median = 12.5, .j = &j, .with_verdict = true };
	char *t = comparison_text(&c), err[128];
	struct json v;

	ASSERT_NE(NULL, t);
	ASSERT_EQ(0, json_parse(t, strlen(t), &v, err, sizeof(err))) TH_LOG("%s: %s", err, t);
	EXPECT_STREQ("timer", json_get(&v, "workload")->str);
	EXPECT_STREQ("p90", json_get(&v, "quantity")->str);
	EXPECT_STREQ("hp0", json_get(&v, "a")->str);
	EXPECT_STREQ("hp\"500us", json_get(&v, "b")->str);
	EXPECT_STREQ("epoch", json_get(&v, "unit")->str);
	EXPECT_EQ(7, json_get(&v, "blocks")->num);
	EXPECT_TRUE(json_get(&v, "exact")->b);
	EXPECT_EQ(0.015625, json_get(&v, "p")->num);
	EXPECT_EQ(0.015625, json_get(&v, "p_floor")->num);
	EXPECT_EQ(10, json_get(&v, "a_median")->num);
	EXPECT_EQ(12.5, json_get(&v, "b_median")->num);
	EXPECT_EQ(0.25, json_get(&v, "effect")->num);
	ASSERT_EQ(JSON_NUMS, json_get(&v, "effect_ci")->t);
	EXPECT_EQ(2, json_get(&v, "effect_ci")->n);
	EXPECT_EQ(0.125, json_get(&v, "effect_ci")->nums[0]);
	EXPECT_EQ(0.5, json_get(&v, "effect_ci")->nums[1]);
	EXPECT_EQ(0.2, json_get(&v, "min_detectable_effect")->num);
	EXPECT_TRUE(json_get(&v, "holm_reject")->b);
	EXPECT_STREQ("B slower", json_get(&v, "verdict")->str);
	json_free(&v);
	free(t);

	j.lo = -INFINITY, j.hi = INFINITY, j.mde = INFINITY, c.a_median = NAN, c.with_verdict = false;
	t = comparison_text(&c);
	ASSERT_NE(NULL, t);
	ASSERT_EQ(0, json_parse(t, strlen(t), &v, err, sizeof(err))) TH_LOG("%s: %s", err, t);
	EXPECT_EQ(JSON_NULL, json_get(&v, "a_median")->t);
	EXPECT_EQ(JSON_NULL, json_get(&v, "min_detectable_effect")->t);
	ASSERT_EQ(JSON_ARR, json_get(&v, "effect_ci")->t);
	EXPECT_EQ(JSON_NULL, json_get(&v, "effect_ci")->items[0].t);
	EXPECT_EQ(JSON_NULL, json_get(&v, "effect_ci")->items[1].t);
	EXPECT_EQ(NULL, json_get(&v, "verdict"));
	EXPECT_EQ(NULL, json_get(&v, "holm_reject"));
	json_free(&v);
	free(t);
}

TEST_HARNESS_MAIN
