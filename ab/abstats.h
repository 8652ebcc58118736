/* SPDX-License-Identifier: MIT */
/*
 * A/B statistics for latency samples: quantiles with bootstrap confidence intervals, the
 * Mann-Whitney U test and Cliff's delta. Pure arithmetic, no KVM: it lives in its own header so
 * the A/B driver, the report writer and the tests include it without linux/kvm.h.
 * Randomness comes from a generator the caller owns and seeds, so every result is reproducible.
 */
#ifndef VMM_AB_ABSTATS_H
#define VMM_AB_ABSTATS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

/* xoshiro256** (Blackman and Vigna), seeded through splitmix64. */
struct ab_rng {
	uint64_t s[4];
};
void ab_rng_seed(struct ab_rng *r, uint64_t seed);
uint64_t ab_rng_next(struct ab_rng *r);
uint64_t ab_rng_below(struct ab_rng *r, uint64_t n); /* uniform in [0, n), n > 0, unbiased */
double ab_rng_double(struct ab_rng *r);		     /* uniform in [0, 1), 53 bits */

/* Fewer samples per arm than this are refused: the normal approximation of U (and any
 * quantile's interval) means little below it. */
#define AB_MIN_SAMPLES 8

/* The quantiles every report shows: p50, p90, p99, p99.9 and the max. */
#define AB_NQ 5
extern const double ab_report_q[AB_NQ];
extern const char *const ab_report_q_name[AB_NQ];

void ab_sort(double *x, size_t n);
/*
 * The q-quantile (0 <= q <= 1) of sorted x, n >= 1, by linear interpolation between order
 * statistics (Hyndman and Fan type 7; R's default, NumPy's "linear"): with h = (n-1)q,
 * x[floor h] + (h - floor h)(x[floor h + 1] - x[floor h]). q = 1 gives the max.
 */
double ab_quantile_sorted(const double *x, size_t n, double q);

struct ab_ci {
	double est; /* on the samples themselves */
	double lo, hi;
};

struct ab_opts {
	unsigned int iters; /* bootstrap resamples; 0 means 2000 */
	double level;	    /* confidence level; 0 means 0.95 */
};

/*
 * Bootstrap percentile intervals for the quantiles q[0..nq) of sorted x: each resample draws n
 * samples with replacement; the interval is the ((1-level)/2, (1+level)/2) quantiles of the
 * resampled statistic. O(iters * n): a resample is a count per sample, not a sorted copy.
 */
int ab_bootstrap_quantiles(const double *sorted, size_t n, const double *q, int nq, const struct ab_opts *o,
			   struct ab_rng *rng, struct ab_ci *out);

/*
 * Mann-Whitney U of b against a, with average ranks for ties, the tie-corrected variance and
 * the normal approximation with a continuity correction; p is two-sided. Cliff's delta comes
 * from the same ranks: delta = P(b > a) - P(b < a) = 2U/(na nb) - 1, O(N log N).
 */
struct ab_mwu {
	double u;     /* pairs (a_i, b_j) with b_j > a_i, ties counting half */
	double z;     /* 0 when every sample is equal */
	double p;     /* two-sided */
	double delta; /* Cliff's delta: > 0 when b tends to be larger */
};
int ab_mann_whitney(const double *a, size_t na, const double *b, size_t nb, struct ab_mwu *out);

struct ab_arm {
	char name[32];
	size_t n;
	double mean;
	struct ab_ci q[AB_NQ]; /* ab_report_q */
};

struct ab_cmp {
	struct ab_arm a, b;
	struct ab_ci diff[AB_NQ]; /* quantile of b minus quantile of a, bootstrapped jointly */
	struct ab_mwu mwu;
};

/* Refuses arms under AB_MIN_SAMPLES and non-finite samples, with a message naming them. */
int ab_arm_summarize(struct ab_arm *arm, const char *name, const double *x, size_t n, const struct ab_opts *o,
		     struct ab_rng *rng);
int ab_compare(struct ab_cmp *c, const char *name_a, const double *a, size_t na, const char *name_b,
	       const double *b, size_t nb, const struct ab_opts *o, struct ab_rng *rng);
/* A text table; values are multiplied by scale and printed with unit (e.g. 1e-3, "us" for ns). */
void ab_print(FILE *f, const struct ab_cmp *c, double scale, const char *unit);

/*
 * Samples come in epochs, the arms interleaved (ABAB...). The first `warmup` epochs (of either
 * arm: caches, the halt-poll window and the host's frequency settle) are discarded; the samples of
 * `arm` from the rest are concatenated into *out (malloc'd; the caller frees it).
 */
struct ab_epoch {
	int arm;
	const double *x;
	size_t n;
};
int ab_gather(const struct ab_epoch *ep, size_t nep, size_t warmup, int arm, double **out, size_t *n);


/* --- ab_epochs.c: the one-VM mode's timeline --- */

/* The knobs that change while the guest runs: the VM's halt-poll ceiling and every vCPU's
 * MSR_KVM_POLL_CONTROL (x86), each set through the control socket at an arm's switch. */
struct ab_knobs {
	bool has_halt_poll_ns;
	uint64_t halt_poll_ns;
	int poll_control; /* 0 or 1; -1 not set by the arm */
};
/* 1 when an arm's options are only run-time knobs ("--halt-poll-ns N" and/or "--poll-control
 * 0|1", each at most once), with *k set; 0 when the arm needs a boot. */
int ab_arm_runtime(char *const *argv, int argc, struct ab_knobs *k);
/* A console line "vmm-probe: clock NS" (the guest's CLOCK_MONOTONIC): true with *ns. */
bool ab_parse_clock(const char *line, size_t len, uint64_t *ns);
/* An epoch on the host's CLOCK_MONOTONIC: [start, end), under arm. */
struct ab_span {
	uint64_t start, end;
	int arm;
};
/* The epoch of sorted, disjoint spans holding host time t at least guard ns from both its ends,
 * or -1 (outside every epoch, or too near a switch to say which setting it ran under). */
int ab_epoch_of(const struct ab_span *sp, int n, uint64_t t, uint64_t guard);
/* In a stats JSON text (hp_write_json), the sum over sources of stat's "value"; -1 if absent or
 * not JSON. */
long long ab_json_sum_stat(const char *json, const char *stat);
/* The sum of the array "key":[N,...] of non-negative integers; -1 if absent or malformed. */
long long ab_json_sum_array(const char *json, const char *key);

/* --- ab_saved.c: saved runs (vmm ab --json), compared and plotted again --- */

#define AB_SAVED_NQ 3 /* p50, p90, p99 */
/* One workload and arm of a saved run: the samples of its epochs after warm-up (pooled: for plots
 * only), and the run's value per quantile, the geometric mean of its epochs' own quantiles. */
struct ab_raw {
	char workload[16];
	char arm[32];
	double *x;
	size_t n;
	int epochs;
	double logq[AB_SAVED_NQ], q[AB_SAVED_NQ];
};
struct ab_saved_st;
struct ab_saved {
	struct ab_raw *r;
	int nr;
	struct ab_saved_st *st; /* --attribute's stage figures per arm (ab/ab_stages.h); none: NULL */
	int nst;
	unsigned int epoch_ms; /* the run's --epoch-ms (0 when the file does not say) */
	int dropped_few, dropped_zero; /* workload epochs left out: under 5 samples, a p50 of 0 */
};
/* Parses a vmm ab --json text (format 2). A file of another format (an older version's pooled
 * samples) or with a problem is refused with why saying what. 0 or -EINVAL/-ENOMEM. */
int ab_saved_parse(const char *text, size_t len, struct ab_saved *s, char *why, size_t whysize);
/* Reads and parses path; messages name the file. */
int ab_saved_read(const char *path, struct ab_saved *s);
void ab_saved_free(struct ab_saved *s);
/*
 * Runs as units: for every workload and arm (only `arm` when not NULL) all na + nb runs have, per
 * quantile the runs' values, a permutation test over the splits of the runs into A and B, the
 * shift of the geometric means with an interval over resampled runs (3 runs a side at least), and
 * a verdict (Holm at alpha, min_effect). One run a side is shown and said not to be judged.
 * The text goes to out; json (NULL: none) gets the same as one object (vmm ab compare --json,
 * docs/ab.md), its comparisons written as vmm ab's report writes its own (ab_comparison_json).
 * 0; 1 when fail_on_regression and B is slower; -ENODATA when nothing was in common.
 */
int ab_saved_compare(FILE *out, FILE *json, char *const *names_a, const struct ab_saved *a, int na, char *const *names_b,
		     const struct ab_saved *b, int nb, const char *arm, uint64_t seed, double alpha, double min_effect,
		     bool fail_on_regression);
/* CDF per arm of one workload: PREFIX-W.dat and PREFIX-W.gp, rendered to PREFIX-W.svg and .png by
 * gnuplot when it is installed. sorted[i] holds n[i] samples of names[i], ascending. 1 when the
 * plots were rendered, 0 when gnuplot is missing (said on stderr), <0 when a file failed. */
int ab_write_plot(const char *prefix, const char *workload, const char *const *names, double *const *sorted,
		  const size_t *n, int nr);
/* gnuplot on the script gp (for the data file dat): 1 rendered, 0 gnuplot missing (said, with how
 * to render it later), -EIO failed (said). */
int ab_run_gnuplot(const char *gp, const char *dat);

#endif
