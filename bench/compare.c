// SPDX-License-Identifier: MIT
/*
 * `vmm bench compare OLD.json NEW.json`: each figure in both reports with its repetitions as the
 * units (each one a run of its own): medians with bootstrap 95% intervals, the median's difference
 * with its interval, Cliff's delta, and p from the same permutation test over runs as `vmm ab
 * compare` (ab/design.h: every split of the pooled repetitions into old and new). A figure is
 * called better or worse only when p < 0.05; with fewer than AB_MIN_SAMPLES repetitions on a side
 * it is shown but not judged.
 */
#include <errno.h>
#include <getopt.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "bench/bench.h"
#include "ab/abstats.h"
#include "ab/design.h"
#include "core/hot.h"
#include "core/log.h"

#define ALPHA 0.05

static const char *verdict(const struct bench_figure *f, const struct ab_cmp *c, double p)
{
	double d = c->b.q[0].est - c->a.q[0].est; /* p50 */

	if (p >= ALPHA || d == 0)
		return "no significant change";
	return (d > 0) == f->higher_better ? "better" : "WORSE";
}

/* Report r's ratio of vmm's figure name over peer, if it has one. */
static bool peer_ratio_of(const struct bench_report *r, const char *name, const char *peer, struct bench_peer_ratio *q)
{
	for (size_t i = 0; bench_peer_ratio(r, i, q); i++)
		if (!strcmp(q->vmm->name, name) && !strcmp(q->peer_name, peer))
			return true;
	return false;
}

/* vmm over each peer in both reports: each ratio is taken within its own run (the peer measured
 * alongside), so it is steadier across runs than either side's figure on its own. */
static void compare_peers(const struct bench_report *a, const struct bench_report *b, FILE *f)
{
	struct bench_peer_ratio qa, qb;
	bool head = false;

	for (size_t i = 0; bench_peer_ratio(b, i, &qb); i++) {
		if (!peer_ratio_of(a, qb.vmm->name, qb.peer_name, &qa))
			continue;
		if (!head)
			fprintf(f, "%-36s %-10s %9s %9s  (vmm / peer medians, each within its own run)\n",
				"vmm / peer", "peer", "old", "new");
		head = true;
		fprintf(f, "%-36s %-10s %9.3f %9.3f\n", qb.vmm->name, qb.peer_name, qa.ratio, qb.ratio);
	}
}

VMM_HOT_VF int bench_compare(const struct bench_report *a, const struct bench_report *b, unsigned long long seed,
		  FILE *f)
{
	struct ab_opts o = { 0 };
	struct ab_rng rng;
	int worse = 0, compared = 0;

	ab_rng_seed(&rng, seed);
	fprintf(f, "old: %s; new: %s (repetitions as units: medians with bootstrap 95%% intervals; p: "
		   "permutation test over the splits of the repetitions, two-sided; delta: Cliff's, > 0 "
		   "when new tends larger)\n", a->where, b->where);
	fprintf(f, "%-36s %-7s %-34s %-34s %-26s %8s %7s  %s\n", "figure", "unit", "old p50", "new p50",
		"new - old", "p", "delta", "verdict");
	for (size_t i = 0; i < a->nfig; i++) {
		const struct bench_figure *fa = &a->fig[i], *fb = bench_find(b, fa->name);
		struct ab_cmp c;
		char sa[40], sb[40], sd[40];

		if (!fb) {
			fprintf(f, "%-36s only in the old report\n", fa->name);
			continue;
		}
		if (strcmp(fa->unit, fb->unit) || fa->higher_better != fb->higher_better) {
			fprintf(f, "%-36s not comparable: unit or direction differs (%s vs %s)\n", fa->name,
				fa->unit, fb->unit);
			continue;
		}
		if (fa->n < AB_MIN_SAMPLES || fb->n < AB_MIN_SAMPLES) {
			double lo, ma = NAN, mb = NAN, hi;

			if (fa->n)
				bench_summary(fa, &lo, &ma, &hi);
			if (fb->n)
				bench_summary(fb, &lo, &mb, &hi);
			fprintf(f, "%-36s %-7s %-34.4g %-34.4g %-26s %8s %7s  not judged: %zu and %zu repetitions "
				   "(the tests need %d each)\n", fa->name, fa->unit, ma, mb, "-", "-", "-", fa->n, fb->n,
				AB_MIN_SAMPLES);
			continue;
		}
		if (ab_compare(&c, "old", fa->x, fa->n, "new", fb->x, fb->n, &o, &rng) < 0) {
			fprintf(f, "%-36s not compared (see the error above)\n", fa->name);
			continue;
		}
		bool exact;
		double floor, p = ab_perm2_p(fa->x, (int)fa->n, fb->x, (int)fb->n, &rng, &exact, &floor);

		compared++;
		snprintf(sa, sizeof(sa), "%.4g [%.4g, %.4g]", c.a.q[0].est, c.a.q[0].lo, c.a.q[0].hi);
		snprintf(sb, sizeof(sb), "%.4g [%.4g, %.4g]", c.b.q[0].est, c.b.q[0].lo, c.b.q[0].hi);
		snprintf(sd, sizeof(sd), "%+.3g [%+.3g, %+.3g]", c.diff[0].est, c.diff[0].lo, c.diff[0].hi);
		const char *v = verdict(fa, &c, p);

		worse += !strcmp(v, "WORSE");
		fprintf(f, "%-36s %-7s %-34s %-34s %-26s %8.3g %+7.3f  %s\n", fa->name, fa->unit, sa, sb, sd,
			p, c.mwu.delta, v);
	}
	for (size_t i = 0; i < b->nfig; i++)
		if (!bench_find(a, b->fig[i].name))
			fprintf(f, "%-36s only in the new report\n", b->fig[i].name);
	compare_peers(a, b, f);
	fprintf(f, "%d figures compared, %d significantly worse\n", compared, worse);
	return worse;
}

static void usage(FILE *f)
{
	fprintf(f, "usage: vmm bench compare [--seed N] OLD.json NEW.json\n"
		   "       vmm bench show FILE.json\n\n"
		   "compare: every figure in both make bench reports (build/bench/*.json) through the A/B\n"
		   "statistics on its repetitions; exit status 0, or 1 when a figure got significantly worse.\n"
		   "show: the report's table (min / median / max) and ratios, then each ratio judged from\n"
		   "its repetitions (bootstrap 95%% interval, permutation p, the goal met, NOT met or undecided).\n");
}

VMM_HOT_VF int bench_cmd(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "seed", required_argument, NULL, 's' },
		{ "help", no_argument, NULL, 'h' },
		{ 0 },
	};
	unsigned long long seed = 1;
	char *end;
	int c, r = 1;

	if (argc < 2) {
		pr_err("vmm bench takes a subcommand: compare or show (vmm bench --help)");
		return 1;
	}
	if (!strcmp(argv[1], "--help") || !strcmp(argv[1], "-h")) {
		usage(stdout);
		return 0;
	}
	const char *sub = argv[1];

	if (strcmp(sub, "compare") && strcmp(sub, "show")) {
		pr_err("vmm bench: unknown subcommand '%s' (compare or show; vmm bench --help)", sub);
		return 1;
	}
	argc--, argv++;
	optind = 1;
	opterr = 0;
	while ((c = getopt_long(argc, argv, "h", opts, NULL)) != -1) {
		switch (c) {
		case 's':
			errno = 0;
			seed = strtoull(optarg, &end, 0);
			if (errno || *end || end == optarg) {
				pr_err("vmm bench: --seed '%s' is not a number", optarg);
				return 1;
			}
			break;
		case 'h':
			usage(stdout);
			return 0;
		default:
			pr_err("vmm bench %s: unknown option or missing value '%s' (vmm bench --help)", sub,
			       argv[optind - 1]);
			return 1;
		}
	}
	int want = !strcmp(sub, "compare") ? 2 : 1;

	if (argc - optind != want) {
		pr_err("vmm bench %s takes %s", sub, want == 2 ? "two files: OLD.json NEW.json" : "one file");
		return 1;
	}
	struct bench_report *a = calloc(1, sizeof(*a)), *b = calloc(1, sizeof(*b));

	if (!a || !b) {
		pr_err("vmm bench: out of memory");
		goto out;
	}
	if (bench_read(argv[optind], a) < 0 || (want == 2 && bench_read(argv[optind + 1], b) < 0))
		goto out;
	if (want == 1) {
		bench_print_table(a, stdout);
		bench_judge(a, seed, stdout);
		r = 0;
	} else {
		r = bench_compare(a, b, seed, stdout) > 0;
	}
out:
	free(a);
	free(b);
	return r;
}
