/* SPDX-License-Identifier: MIT */
/*
 * The statistics that follow the experiment's design: the unit is what was randomized (an epoch in
 * a block, a boot, a saved run), never a sample. Samples inside one epoch share its host state, so
 * each epoch is first reduced to its own statistics (ab_epoch_reduce); the tests then work on those.
 *  - Blocks (vmm ab): every block runs each arm once in a random order, so the arms' labels were
 *    drawn within the block. Per block d = log(statistic of B / of A); the test re-draws the labels
 *    the way the schedule did (a sign flip of each d) on the mean of d: exact over all 2^k
 *    relabelings when they are few, seeded Monte Carlo otherwise. The smallest p it can give is
 *    2/2^k (the observed labels and their mirror), so 4 blocks never reach 0.01.
 *  - Runs (vmm ab compare, vmm bench compare): independent units on two sides; the test re-draws
 *    which units are A over all C(n, n_a) splits (or Monte Carlo), on the difference of means.
 *  - The effect is a relative shift (B/A - 1) with an interval; the verdict needs both p below
 *    alpha after Holm's correction and a shift of at least a minimum effect.
 * Pure arithmetic, no KVM; randomness from a generator the caller seeds.
 */
#ifndef VMM_AB_DESIGN_H
#define VMM_AB_DESIGN_H

#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>

#include "ab/abstats.h"

/* Exact up to 2^AB_EXACT_MAX_BLOCKS sign vectors (counted by meet-in-the-middle: two halves of
 * 2^(k/2) sums each), or as many splits; else AB_MC_DRAWS seeded Monte Carlo draws. */
#define AB_EXACT_MAX_BLOCKS 24
#define AB_EXACT_MAX_SPLITS 262144
#define AB_MC_DRAWS 20000
/* The power the detectable shift is quoted at: a true shift of that size is found this often. */
#define AB_POWER 0.8

/* One epoch (or boot) reduced: its own median, p90, p99 and mean of one workload, and the count. */
struct ab_reduced {
	size_t n;
	double p50, p90, p99, mean;
};
/* x is sorted in place. n = 0 gives all zeros. */
void ab_epoch_reduce(double *x, size_t n, struct ab_reduced *out);
/* The fewest samples an epoch needs before its q-quantile is judged: a type-7 quantile from fewer
 * than 1/(1-q) samples is mostly the maximum (p99: 100, p90: 10, p50: AB_MIN_EPOCH_SAMPLES). */
#define AB_MIN_EPOCH_SAMPLES 5
size_t ab_min_samples_for(double q);
/*
 * The q-quantile of x[0..n) as an epoch of m <= n samples would give it: m of the n drawn at
 * random (seeded; m = n takes them all). Comparing two epochs at the smaller one's count makes a
 * block's two values exchangeable when the arms do not differ: a quantile from few samples is
 * biased (p99 of 20 samples: 24% low), and the bias must not depend on which arm ran faster.
 * scratch holds n doubles. Returns NAN when m is 0.
 */
double ab_subsample_quantile(const double *x, size_t n, size_t m, double q, struct ab_rng *rng, double *scratch);

/* The smallest two-sided p a sign-flip test over k blocks can give: 2/2^k when exact, and never
 * below 1/(1 + AB_MC_DRAWS) past AB_EXACT_MAX_BLOCKS (1 for k = 0). */
double ab_blocks_floor(int k);
/* The fewest blocks whose floor is below level; -1 when no number of blocks reaches it. */
int ab_blocks_needed(double level);

/*
 * Sign-flip randomization test of d[0..k): two-sided p of |mean d| among the 2^k relabelings
 * (exact when k <= AB_EXACT_MAX_BLOCKS, else AB_MC_DRAWS seeded draws, p = (1 + hits)/(1 + draws)).
 * *exact says which. k >= 1.
 */
double ab_signflip_p(const double *d, int k, struct ab_rng *rng, bool *exact);

/*
 * The interval of the test above, inverted: every shift s whose test of d - s gives p >= 1 - level,
 * so the interval excludes 0 exactly when p < 1 - level (the same draws when Monte Carlo: seed is
 * copied for each). -INFINITY/INFINITY where the design's floor cannot go below 1 - level.
 */
void ab_signflip_interval(const double *d, int k, double level, const struct ab_rng *seed, double *lo, double *hi);

/*
 * The smallest shifts up (B slower) and down (B faster), log scale, that this run's own
 * block-to-block noise (d minus its mean) would let the sign-flip test find at p < alpha with
 * AB_POWER power: the shift that just reaches alpha on this noise (found half the time) plus
 * AB_POWER's quantile of the mean's noise. INFINITY when the floor is not below alpha.
 */
void ab_min_detectable(const double *d, int k, double alpha, const struct ab_rng *seed, double *up, double *down);

/*
 * Two independent groups (saved runs, bench repetitions): a permutation test of the studentized
 * (Welch) difference of means, y's minus x's, over every split of the pooled units into |x| and |y|
 * (or AB_MC_DRAWS draws); studentized, it stays valid when the two sides' units differ in
 * precision (runs of 1 epoch against runs of 40). *floor the smallest p the split count allows.
 * nx, ny >= 1 (with one unit a side the plain difference).
 */
double ab_perm2_p(const double *x, int nx, const double *y, int ny, struct ab_rng *rng, bool *exact, double *floor);
/* Its inversion: every shift s whose test of x against y - s gives p >= 1 - level. */
void ab_perm2_interval(const double *x, int nx, const double *y, int ny, double level, const struct ab_rng *seed,
		       double *lo, double *hi);

/* Holm's step-down: reject[i] for p[i] < alpha / (m - rank), stopping at the first that is not. */
void ab_holm(const double *p, int m, double alpha, bool *reject);

/* not shown: no test reached the level, and the interval does not lie inside +-min_effect;
 * equivalent: it does (two one-sided tests at alpha / m). */
enum ab_verdict { AB_FASTER, AB_SLOWER, AB_NOT_SHOWN, AB_INCONCLUSIVE, AB_EQUIVALENT };
extern const char *const ab_verdict_name[5];

/* One judged quantity (a quantile of one workload, arm B against arm A). Shifts are relative. */
struct ab_judged {
	int blocks;	   /* units in the test: blocks, or runs on both sides */
	bool exact;
	double p, floor;   /* the test's p and the smallest p the design can give */
	double effect;	   /* relative shift B/A - 1: exp(mean log ratio) - 1, what the test tests */
	double lo, hi;	   /* its 95% interval, the test inverted (+-INFINITY when the design is too small) */
	double eq_lo, eq_hi; /* the interval at 1 - 2 alpha / m: equivalence's two one-sided tests */
	double mde;	   /* the smaller of mde_up and mde_down (INFINITY: none) */
	double mde_up, mde_down; /* the shifts B slower / B faster this run would find with AB_POWER power,
				  * never below the minimum effect (positive fractions) */
	bool reject;	   /* after Holm */
	enum ab_verdict verdict;
};

/*
 * Judges one quantity from per-block log ratios d[0..k): p, effect with its 95% interval and the
 * equivalence interval at 1 - 2 alpha_each, the detectable shifts at alpha_each (the first Holm
 * step's level), seeded.
 */
int ab_judge_blocks(const double *d, int k, double alpha_each, struct ab_rng *rng, struct ab_judged *j);
/* The same for independent units: x and y are the two sides' log values (runs). */
int ab_judge_runs(const double *x, int nx, const double *y, int ny, double alpha_each, struct ab_rng *rng,
		  struct ab_judged *j);
/* The same two on the data's own scale, for figures that may be 0 (a class's share, a stage of 0
 * us: no ratio): d (or x and y) are differences or plain values, and effect, the intervals and the
 * detectable shifts are differences B - A in the data's unit, not relative shifts. */
int ab_judge_blocks_diff(const double *d, int k, double alpha_each, struct ab_rng *rng, struct ab_judged *j);
int ab_judge_runs_diff(const double *x, int nx, const double *y, int ny, double alpha_each, struct ab_rng *rng,
		       struct ab_judged *j);
/*
 * Verdicts of m judged quantities: Holm at alpha, then per quantity B faster/slower when rejected
 * and |effect| >= min_effect (lower is faster; higher_better flips it); equivalent when the
 * equivalence interval lies within +-min_effect; inconclusive when the design's floor cannot reach
 * alpha / m; else not shown. The detectable shifts are raised to min_effect.
 */
void ab_verdicts(struct ab_judged *j, int m, double alpha, double min_effect, bool higher_better);
/* One workload's verdict from its quantities': slower wins (a regression is never hidden by a
 * gain elsewhere), then faster, then inconclusive, then not shown; equivalent only when all are;
 * none judged (n = 0) is inconclusive. */
enum ab_verdict ab_verdict_overall(const enum ab_verdict *v, int n);

/* One comparison as the JSON of vmm ab --json and vmm ab compare --json (ab/comparison_json.c). */
struct ab_comparison {
	const char *workload, *quantity; /* e.g. "timer", "p50" */
	const char *a, *b;		 /* the sides: arm names, or "A" and "B" for saved runs */
	const char *arm;		 /* saved runs: the arm both sides ran (NULL: not written) */
	const char *unit;		 /* what was randomized: "epoch" or "run" */
	double a_median, b_median;	 /* each side's value of the quantity over its units */
	const struct ab_judged *j;
	bool with_verdict;		 /* holm_reject and verdict (quantities outside Holm's set: no) */
};

/* Writes c as one JSON object: workload, quantity, a, b, [arm,] unit, blocks, exact, p, p_floor,
 * a_median, b_median, effect, effect_ci [lo, hi], min_detectable_effect, then holm_reject and
 * verdict when c->with_verdict. A number that is not finite (no interval, no detectable shift) is
 * null. */
void ab_comparison_json(FILE *f, const struct ab_comparison *c);

#endif
