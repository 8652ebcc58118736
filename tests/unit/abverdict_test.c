// SPDX-License-Identifier: MIT
/*
 * vmm ab's verdicts, simulated: seeded experiments with no KVM, each judged the way a run is, and
 * each rate checked against its binomial bounds (the nominal rate +- 3.3 standard errors over the
 * experiments, about one failure in a thousand runs of this file when the code is right).
 *  - arms whose epochs yield different sample counts (A 500 per epoch, B 20): identical arms
 *    must be called different at no more than alpha (the per-epoch p90 of 20 samples is biased
 *    low; comparing it with one of 500 called them different in most experiments);
 *  - vmm ab compare with runs of unequal precision (4 runs of 1 epoch against 8 of 40): no more
 *    than alpha;
 *  - the detectable shift: a true shift of the printed size is found with AB_POWER power;
 *  - the intervals cover the true shift at their level, and agree with the test's p.
 * Each case is kept cheap (a few hundred experiments, small epochs) to run under ASan, TSan and
 * qemu-user on a loaded machine.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ab/ab.h"
#include "ab/design.h"
#include "kselftest_harness.h"
#include "sim_normal.h"


/* At most `hits` of `n` at rate p: within 3.3 standard errors above (and, lower not NULL, below). */
static bool within(int hits, int n, double p, bool two_sided)
{
	double se = sqrt(p * (1 - p) / n), rate = (double)hits / n;

	return rate <= p + 3.3 * se + 0.5 / n && (!two_sided || rate >= p - 3.3 * se - 0.5 / n);
}

#define RATE(hits, n) (100.0 * (hits) / (n))

FIXTURE(sim) {};
FIXTURE_SETUP(sim) {}
FIXTURE_TEARDOWN(sim) {}

/* A made-up vmm ab run in one VM: k blocks of arms A and B (no warm-up), each epoch's timer
 * samples log-normal (sigma 0.5) around 100 us with a 5% per-epoch offset; B's scaled by
 * 1 + shift. n_a and n_b samples per epoch. */
static void fake_run(struct ab *ab, struct gauss *g, int k, int n_a, int n_b, double shift, double alpha)
{
	for (int e = 0; e < ab->nr_runs; e++)
		free(ab->run[e].x[PROBE_W_TIMER]);
	memset(ab, 0, sizeof(*ab));
	snprintf(ab->arm[0].name, sizeof(ab->arm[0].name), "A");
	snprintf(ab->arm[1].name, sizeof(ab->arm[1].name), "B");
	ab->nr_arms = 2;
	ab->epochs = k;
	ab->alpha = alpha;
	ab->min_effect = 0.001; /* the level of the test itself, not the minimum effect, is checked */
	ab->seed = ab_rng_next(&g->r);
	ab->mode = AB_ONE_VM;
	for (int e = 0; e < 2 * k; e++) {
		struct ab_run *x = &ab->run[e];
		double off = 0.05 * normal(g);

		x->arm = (e + e / 2) % 2;
		x->block = e / 2;
		x->complete = true;
		x->cpu_s = 0.1;
		x->n[PROBE_W_TIMER] = x->arm ? n_b : n_a;
		x->x[PROBE_W_TIMER] = malloc(x->n[PROBE_W_TIMER] * sizeof(double));
		for (size_t i = 0; i < x->n[PROBE_W_TIMER]; i++)
			x->x[PROBE_W_TIMER][i] = 100 * exp(off + 0.5 * normal(g)) * (x->arm ? 1 + shift : 1);
	}
	ab->nr_runs = 2 * k;
}

static bool different(enum ab_verdict v)
{
	return v == AB_FASTER || v == AB_SLOWER;
}

/* A 500 samples per epoch, B 20, the same distribution: called different at most alpha of the
 * time (before: B's p90 and p99 from 20 samples, biased low, made B "faster" in most runs). */
TEST_F_TIMEOUT(sim, unequal_counts_hold_the_level, 120)
{
	static struct ab ab;
	struct gauss g = { 0 };
	enum ab_verdict v[PROBE_W_MAX + 1][AB_MAX_ARMS];
	int diff = 0, n = 0;

	for (int seed = 1; seed <= 3; seed++) {
		ab_rng_seed(&g.r, 100 + seed);
		for (int e = 0; e < 100; e++, n++) {
			fake_run(&ab, &g, 12, 500, 20, 0, 0.05);
			ASSERT_EQ(0, ab_report_verdicts(&ab, v));
			diff += different(v[PROBE_W_TIMER][1]);
		}
	}
	TH_LOG("A/A, 500 against 20 samples per epoch: different in %.1f%% of %d experiments (alpha 0.05)",
	       RATE(diff, n), n);
	EXPECT_TRUE(within(diff, n, 0.05, false)) TH_LOG("%d of %d", diff, n);
	fake_run(&ab, &g, 0, 0, 0, 0, 0.05);
}

/* The same with a real 20% shift: still found (the subsample keeps the test's power). */
TEST_F_TIMEOUT(sim, unequal_counts_still_find_a_shift, 120)
{
	static struct ab ab;
	struct gauss g = { 0 };
	enum ab_verdict v[PROBE_W_MAX + 1][AB_MAX_ARMS];
	int found = 0, n = 0;

	ab_rng_seed(&g.r, 7);
	for (int e = 0; e < 100; e++, n++) {
		fake_run(&ab, &g, 12, 500, 20, 0.2, 0.05);
		ASSERT_EQ(0, ab_report_verdicts(&ab, v));
		found += v[PROBE_W_TIMER][1] == AB_SLOWER;
	}
	TH_LOG("a 20%% shift, 500 against 20 samples per epoch: found in %.1f%%", RATE(found, n));
	EXPECT_GE(found, 80);
	fake_run(&ab, &g, 0, 0, 0, 0, 0.05);
}

/* vmm ab compare's judgement: na runs whose values carry a run offset (sigma 0.05) and the mean of
 * `ea` epochs' offsets (sigma 0.3 each) against nb runs of eb epochs. */
static void runs(struct gauss *g, double *v, int n, int epochs, double shift)
{
	for (int i = 0; i < n; i++)
		v[i] = log1p(shift) + 0.05 * normal(g) + 0.3 * normal(g) / sqrt(epochs);
}

TEST_F_TIMEOUT(sim, unequal_runs_hold_the_level, 120)
{
	struct gauss g = { 0 };
	int diff05 = 0, diff01 = 0, n = 0;

	ab_rng_seed(&g.r, 11);
	for (int e = 0; e < 600; e++, n++) {
		double x[4], y[8];
		struct ab_judged j;

		runs(&g, x, 4, 1, 0);
		runs(&g, y, 8, 40, 0);
		ab_judge_runs(x, 4, y, 8, 0.05, &g.r, &j);
		diff05 += j.p < 0.05;
		diff01 += j.p < 0.01;
	}
	TH_LOG("A/A, 4 runs of 1 epoch against 8 of 40: p < 0.05 in %.1f%%, p < 0.01 in %.1f%% of %d", RATE(diff05, n),
	       RATE(diff01, n), n);
	EXPECT_TRUE(within(diff05, n, 0.05, false));
	EXPECT_TRUE(within(diff01, n, 0.01, false));
}

/* The printed detectable shift (B slower, 80% power), then a new experiment with that true shift
 * and the same noise: found AB_POWER of the time. 12 blocks, one quantity at alpha 0.05. */
TEST_F_TIMEOUT(sim, detectable_shift_has_its_power, 120)
{
	struct gauss g = { 0 };
	int found = 0, n = 0, below_min = 0;

	ab_rng_seed(&g.r, 13);
	for (int e = 0; e < 500; e++, n++) {
		double d[12];
		struct ab_judged j;

		for (int b = 0; b < 12; b++)
			d[b] = 0.1 * normal(&g);
		ab_judge_blocks(d, 12, 0.05, &g.r, &j);
		ab_verdicts(&j, 1, 0.05, 0.01, false);
		below_min += j.mde_up < 0.01 || j.mde_down < 0.01;
		double shift = log1p(j.mde_up);

		for (int b = 0; b < 12; b++)
			d[b] = shift + 0.1 * normal(&g);
		ab_judge_blocks(d, 12, 0.05, &g.r, &j);
		ab_verdicts(&j, 1, 0.05, 0.01, false);
		found += j.verdict == AB_SLOWER;
	}
	TH_LOG("a true shift of the printed detectable size found in %.1f%% of %d (power %.0f%%)", RATE(found, n), n,
	       100 * AB_POWER);
	EXPECT_TRUE(within(found, n, AB_POWER, true));
	EXPECT_EQ(0, below_min);
}

/* The blocks' 95% interval covers a true 10% shift 95% of the time, and excludes 0 exactly when
 * p < 0.05; the runs' interval (4 and 6 runs a side) covers at its level too. */
TEST_F_TIMEOUT(sim, intervals_cover_and_agree_with_p, 120)
{
	struct gauss g = { 0 };
	int cover = 0, agree = 0, n = 0, rcover[2] = { 0, 0 }, rn = 0;

	ab_rng_seed(&g.r, 17);
	for (int e = 0; e < 600; e++, n++) {
		double d[10];
		struct ab_judged j;

		for (int b = 0; b < 10; b++)
			d[b] = log(1.1) + 0.1 * normal(&g);
		ab_judge_blocks(d, 10, 0.05, &g.r, &j);
		cover += j.lo <= 0.1 + 1e-9 && j.hi >= 0.1 - 1e-9;
		agree += (j.p < 0.05) == (j.lo > 0 || j.hi < 0);
	}
	for (int e = 0; e < 300; e++, rn++)
		for (int s = 0; s < 2; s++) {
			int na = s ? 6 : 4;
			double x[8], y[8];
			struct ab_judged j;

			runs(&g, x, na, 10, 0);
			runs(&g, y, na, 10, 0.1);
			ab_judge_runs(x, na, y, na, 0.05, &g.r, &j);
			rcover[s] += j.lo <= 0.1 + 1e-9 && j.hi >= 0.1 - 1e-9;
		}
	TH_LOG("blocks: the 95%% interval covered in %.1f%%, agreed with p in %.1f%% of %d", RATE(cover, n),
	       RATE(agree, n), n);
	TH_LOG("runs: covered in %.1f%% (4 a side), %.1f%% (6 a side) of %d", RATE(rcover[0], rn), RATE(rcover[1], rn), rn);
	EXPECT_TRUE(within(n - cover, n, 0.05, true));
	EXPECT_EQ(n, agree);
	EXPECT_TRUE(within(rn - rcover[0], rn, 0.05, false));
	EXPECT_TRUE(within(rn - rcover[1], rn, 0.05, false));
}

TEST_HARNESS_MAIN
