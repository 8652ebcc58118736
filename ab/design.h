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

/* Exact enumeration up to 2^AB_EXACT_MAX_BLOCKS sign vectors (or as many splits); else Monte Carlo. */
#define AB_EXACT_MAX_BLOCKS 18
#define AB_EXACT_MAX_SPLITS 262144
#define AB_MC_DRAWS 20000

/* One epoch (or boot) reduced: its own median, p90, p99 and mean of one workload, and the count. */
struct ab_reduced {
	size_t n;
	double p50, p90, p99, mean;
};
/* x is sorted in place. n = 0 gives all zeros. */
void ab_epoch_reduce(double *x, size_t n, struct ab_reduced *out);

/* The smallest two-sided p of a sign-flip test over k blocks: 2/2^k (1 for k = 0). */
double ab_blocks_floor(int k);
/* The fewest blocks whose floor is below level (a level <= 0 gives -1). */
int ab_blocks_needed(double level);

/*
 * Sign-flip randomization test of d[0..k): two-sided p of |mean d| among the 2^k relabelings
 * (exact when k <= AB_EXACT_MAX_BLOCKS, else AB_MC_DRAWS seeded draws, p = (1 + hits)/(1 + draws)).
 * *exact says which. k >= 1.
 */
double ab_signflip_p(const double *d, int k, struct ab_rng *rng, bool *exact);

/*
 * The Hodges-Lehmann estimate of d's centre (the median of the k(k+1)/2 Walsh averages) and its
 * exact signed-rank interval at level (e.g. 0.95); lo/hi are -INFINITY/INFINITY when k is too small
 * for any interval at that level. 0 or -ENOMEM.
 */
int ab_hodges_lehmann(const double *d, int k, double level, double *est, double *lo, double *hi);

/*
 * The smallest shift delta >= 0 (log scale) that, added to this run's own block-to-block noise
 * (d minus its mean), makes the sign-flip test reach p < alpha: what this run could have detected.
 * INFINITY when the design's floor is not below alpha.
 */
double ab_min_detectable(const double *d, int k, double alpha, const struct ab_rng *seed);

/*
 * Two independent groups (saved runs, bench repetitions): the permutation test of the difference
 * of means, y's minus x's, over every split of the pooled units into |x| and |y| (or AB_MC_DRAWS
 * draws). *floor the smallest p the split count allows. nx, ny >= 1.
 */
double ab_perm2_p(const double *x, int nx, const double *y, int ny, struct ab_rng *rng, bool *exact, double *floor);

/* Holm's step-down: reject[i] for p[i] < alpha / (m - rank), stopping at the first that is not. */
void ab_holm(const double *p, int m, double alpha, bool *reject);

enum ab_verdict { AB_FASTER, AB_SLOWER, AB_SAME, AB_INCONCLUSIVE };
extern const char *const ab_verdict_name[4];

/* One judged quantity (a quantile of one workload, arm B against arm A). */
struct ab_judged {
	int blocks;	   /* units in the test: blocks, or runs on both sides */
	bool exact;
	double p, floor;   /* the test's p and the smallest p the design can give */
	double effect;	   /* relative shift B/A - 1 */
	double lo, hi;	   /* its 95% interval (+-INFINITY when the design is too small) */
	double mde;	   /* the smallest relative shift this run could detect (INFINITY: none) */
	bool reject;	   /* after Holm */
	enum ab_verdict verdict;
};

/*
 * Judges one quantity from per-block log ratios d[0..k): p, effect (exp(HL) - 1) with its exact
 * interval, the detectable shift at level alpha_each (the first Holm step's level), seeded.
 */
int ab_judge_blocks(const double *d, int k, double alpha_each, struct ab_rng *rng, struct ab_judged *j);
/*
 * Verdicts of m judged quantities: Holm at alpha, then per quantity B faster/slower when rejected
 * and |effect| >= min_effect (lower is faster; higher_better flips it), inconclusive when the
 * design's floor cannot reach alpha / m, else no difference.
 */
void ab_verdicts(struct ab_judged *j, int m, double alpha, double min_effect, bool higher_better);

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
