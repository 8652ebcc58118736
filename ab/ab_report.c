// SPDX-License-Identifier: MIT
/*
 * vmm ab's analysis of a finished run: each epoch reduced to its own statistics per workload
 * (median, p90, p99, mean, count) and the vCPU CPU time per sample; then per workload and arm,
 * against the first arm, one test per quantile with the block as the unit (ab/design.h), Holm's
 * correction across every workload, quantile and arm judged, and a verdict. The samples are never
 * pooled for a test: they share their epoch's host state.
 * The --json file keeps every epoch with its own samples for re-analysis and `vmm ab compare`.
 */
#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ab/ab.h"
#include "core/json.h"
#include "ab/design.h"
#include "core/log.h"

/* The quantities judged per workload: the per-block quantiles. */
#define NJQ 3
static const char *const jq_name[NJQ] = { "p50", "p90", "p99" };
static const double jq_q[NJQ] = { 0.5, 0.9, 0.99 };
#define MAX_JUDGED ((PROBE_W_MAX + 1) * AB_MAX_ARMS * NJQ)
#define MAX_NOTES (2 * MAX_JUDGED + 8)

struct judgement {
	int w, arm, q;
	bool judged;	     /* false: every block was dropped for this quantity (why says so) */
	struct ab_judged j;
	double med_a, med_b; /* the median over blocks of each arm's value */
	double *d;	     /* per block log(B/A), j.blocks of them */
	double *va, *vb;
};

/* What the report says beside the verdicts: every quantity not judged, every block dropped, and
 * arms whose epochs hold very different sample counts. */
struct note {
	int w, arm, q; /* q -1: the workload as a whole */
	char text[200];
};

struct analysis {
	struct ab_reduced red[AB_MAX_EPOCHS][PROBE_W_MAX + 1];
	struct judgement jd[MAX_JUDGED], cpu[AB_MAX_ARMS];
	int m, njd, ncpu;
	double alpha_each;
	enum ab_verdict verdict[PROBE_W_MAX + 1][AB_MAX_ARMS];
	bool judged[PROBE_W_MAX + 1][AB_MAX_ARMS];
	struct note note[MAX_NOTES];
	int nnote;
};

static double median_of(const double *v, int n)
{
	if (!n)
		return NAN;
	double *c = malloc(n * sizeof(*c)), m;

	if (!c)
		return NAN;
	memcpy(c, v, n * sizeof(*c));
	ab_sort(c, n);
	m = ab_quantile_sorted(c, n, 0.5);
	free(c);
	return m;
}

static void add_note(struct analysis *an, int w, int arm, int q, const char *fmt, ...)
	__attribute__((format(printf, 5, 6)));
static void add_note(struct analysis *an, int w, int arm, int q, const char *fmt, ...)
{
	va_list ap;

	if (an->nnote == MAX_NOTES)
		return;
	struct note *n = &an->note[an->nnote++];

	n->w = w;
	n->arm = arm;
	n->q = q;
	va_start(ap, fmt);
	vsnprintf(n->text, sizeof(n->text), fmt, ap);
	va_end(ap);
}

/* An epoch of arm in block b, usable once warm-up is over: its index, or -1. */
static int epoch_in_block(const struct ab *ab, int b, int arm)
{
	for (int e = b * ab->nr_arms; e < (b + 1) * ab->nr_arms && e < ab->nr_runs; e++)
		if (ab->run[e].arm == arm && e >= (int)ab->warmup)
			return e;
	return -1;
}

/* The blocks where arm 0 and arm `arm` both have a complete epoch after warm-up (and, for a
 * workload w > 0, samples of it; for w = 0 the CPU time): their epochs in pairs. *incomplete
 * counts the blocks an unfinished epoch cost. */
static int pairs_of(const struct ab *ab, int w, int arm, int (*pair)[2], int *incomplete)
{
	int k = 0, nblocks = (ab->nr_runs + ab->nr_arms - 1) / ab->nr_arms;

	*incomplete = 0;
	for (int b = 0; b < nblocks; b++) {
		int ea = epoch_in_block(ab, b, 0), eb = epoch_in_block(ab, b, arm);

		if (ea < 0 || eb < 0)
			continue;
		if (!ab->run[ea].complete || !ab->run[eb].complete) {
			*incomplete += 1;
			continue;
		}
		if (w ? !ab->run[ea].n[w] || !ab->run[eb].n[w] : !(ab->run[ea].cpu_s > 0 && ab->run[eb].cpu_s > 0))
			continue;
		pair[k][0] = ea;
		pair[k][1] = eb;
		k++;
	}
	return k;
}

static size_t epoch_samples(const struct ab_run *r)
{
	size_t n = 0;

	for (int w = 1; w <= PROBE_W_MAX; w++)
		n += r->n[w];
	return n;
}

/* One block's quantiles of both epochs at the smaller one's count (ab_subsample_quantile): v[side][q]. */
static int block_quantiles(const struct ab_run *ra, const struct ab_run *rb, int w, struct ab_rng *rng,
			   double (*v)[NJQ], size_t *m)
{
	const struct ab_run *r[2] = { ra, rb };
	size_t n = ra->n[w] > rb->n[w] ? ra->n[w] : rb->n[w];
	double *scratch = malloc(n * sizeof(*scratch));

	if (!scratch)
		return -ENOMEM;
	*m = ra->n[w] < rb->n[w] ? ra->n[w] : rb->n[w];
	for (int s = 0; s < 2; s++) {
		/* one draw per epoch, its quantiles all from it */
		ab_subsample_quantile(r[s]->x[w], r[s]->n[w], *m, 0.5, rng, scratch);
		for (int q = 0; q < NJQ; q++)
			v[s][q] = ab_quantile_sorted(scratch, *m, jq_q[q]);
	}
	free(scratch);
	return 0;
}

static void note_counts(struct analysis *an, const struct ab *ab, int w, int arm, int (*pair)[2], int k)
{
	double *na = malloc(k * sizeof(double)), *nb = malloc(k * sizeof(double));

	for (int b = 0; na && nb && b < k; b++) {
		na[b] = ab->run[pair[b][0]].n[w];
		nb[b] = ab->run[pair[b][1]].n[w];
	}
	if (na && nb && k) {
		double ma = median_of(na, k), mb = median_of(nb, k);

		if (ma > 2 * mb || mb > 2 * ma)
			add_note(an, w, arm, -1, "%s yields %.0f samples per epoch against %s's %.0f (medians): each block "
				 "compares the two at the smaller epoch's count, the larger subsampled", ab->arm[arm].name, mb,
				 ab->arm[0].name, ma);
	}
	free(na);
	free(nb);
}

/* The per-block values of workload w, arm against arm 0, for each quantile; blocks whose smaller
 * epoch has too few samples for a quantile, or a quantile of 0 (no log ratio), are dropped and
 * said. The judgements come after, when their number (Holm's m) is known. */
static int collect(struct analysis *an, const struct ab *ab, int w, int arm, struct ab_rng *rng)
{
	int pair[AB_MAX_EPOCHS][2], incomplete, k = pairs_of(ab, w, arm, pair, &incomplete);
	int few[NJQ] = { 0 }, zero[NJQ] = { 0 };
	size_t minm = SIZE_MAX;
	struct judgement *x = &an->jd[an->njd];

	if (!k && !incomplete)
		return 0;
	if (incomplete)
		add_note(an, w, arm, -1, "%d block%s dropped: an epoch did not finish at its switch", incomplete,
			 incomplete > 1 ? "s" : "");
	note_counts(an, ab, w, arm, pair, k);
	for (int q = 0; q < NJQ; q++) {
		x[q] = (struct judgement){ .w = w, .arm = arm, .q = q };
		x[q].d = malloc((k + 1) * sizeof(double));
		x[q].va = malloc((k + 1) * sizeof(double));
		x[q].vb = malloc((k + 1) * sizeof(double));
		if (!x[q].d || !x[q].va || !x[q].vb)
			return -ENOMEM;
	}
	an->njd += NJQ;
	an->judged[w][arm] = true;
	for (int b = 0; b < k; b++) {
		double v[2][NJQ];
		size_t m;

		if (block_quantiles(&ab->run[pair[b][0]], &ab->run[pair[b][1]], w, rng, v, &m) < 0)
			return -ENOMEM;
		minm = m < minm ? m : minm;
		for (int q = 0; q < NJQ; q++) {
			struct judgement *j = &x[q];

			if (m < ab_min_samples_for(jq_q[q])) {
				few[q]++;
			} else if (!(v[0][q] > 0 && v[1][q] > 0)) {
				zero[q]++;
			} else {
				j->va[j->j.blocks] = v[0][q];
				j->vb[j->j.blocks] = v[1][q];
				j->d[j->j.blocks++] = log(v[1][q] / v[0][q]);
			}
		}
	}
	for (int q = 0; q < NJQ; q++) {
		x[q].judged = x[q].j.blocks > 0;
		if (few[q])
			add_note(an, w, arm, q, "%s: %d of %d blocks dropped: an epoch under the %zu samples a %s needs "
				 "(the smallest has %zu)", jq_name[q], few[q], k, ab_min_samples_for(jq_q[q]), jq_name[q], minm);
		if (zero[q])
			add_note(an, w, arm, q, "%s: %d of %d blocks dropped: a %s of 0 us (below the probe's resolution: "
				 "no ratio)", jq_name[q], zero[q], k, jq_name[q]);
		if (!x[q].judged)
			add_note(an, w, arm, q, "%s not judged: no block left%s", jq_name[q],
				 k ? "" : " (every block had an unfinished epoch)");
	}
	return 0;
}

/* The vCPU CPU time per probe sample, per block too: the other side of the trade. */
static int judge_cpu(struct analysis *an, const struct ab *ab, int arm, struct ab_rng *rng)
{
	int pair[AB_MAX_EPOCHS][2], incomplete, k = pairs_of(ab, 0, arm, pair, &incomplete), n = 0;
	double d[AB_MAX_EPOCHS], va[AB_MAX_EPOCHS], vb[AB_MAX_EPOCHS];

	for (int b = 0; b < k; b++) {
		size_t sa = epoch_samples(&ab->run[pair[b][0]]), sb = epoch_samples(&ab->run[pair[b][1]]);

		if (!sa || !sb)
			continue;
		va[n] = 1e6 * ab->run[pair[b][0]].cpu_s / sa;
		vb[n] = 1e6 * ab->run[pair[b][1]].cpu_s / sb;
		d[n] = log(vb[n] / va[n]);
		n++;
	}
	if (!n)
		return 0;
	struct judgement *x = &an->cpu[an->ncpu++];

	*x = (struct judgement){ .arm = arm, .judged = true };
	if (ab_judge_blocks(d, n, ab->alpha, rng, &x->j) < 0)
		return -ENOMEM;
	x->med_a = median_of(va, n);
	x->med_b = median_of(vb, n);
	return 0;
}

static void analysis_free(struct analysis *an)
{
	for (int i = 0; an && i < an->njd; i++) {
		free(an->jd[i].d);
		free(an->jd[i].va);
		free(an->jd[i].vb);
	}
	free(an);
}

/* Everything the report and the JSON say, computed once: see the file's comment. */
static int analyze(const struct ab *ab, struct analysis *an)
{
	struct ab_rng rng, sub;
	static struct ab_judged all[MAX_JUDGED];
	int r = 0;

	ab_rng_seed(&rng, ab->seed + 1);
	ab_rng_seed(&sub, ab->seed + 2);
	for (int e = 0; e < ab->nr_runs; e++)
		for (int w = 1; w <= PROBE_W_MAX; w++) {
			double *c = malloc((ab->run[e].n[w] + 1) * sizeof(*c));

			if (!c)
				return -ENOMEM;
			if (ab->run[e].n[w]) /* x may be NULL then */
				memcpy(c, ab->run[e].x[w], ab->run[e].n[w] * sizeof(*c));
			ab_epoch_reduce(c, ab->run[e].n[w], &an->red[e][w]);
			free(c);
		}
	for (int w = 1; w <= PROBE_W_MAX && !r; w++)
		for (int a = 1; a < ab->nr_arms && !r; a++)
			r = collect(an, ab, w, a, &sub);
	for (int i = 0; i < an->njd; i++)
		an->m += an->jd[i].judged;
	if (r || !an->m)
		return r ? r : -ENODATA;
	/* Holm's m is known: the first step's level for the detectable shift and equivalence */
	an->alpha_each = ab->alpha / an->m;
	int n = 0;

	for (int i = 0; i < an->njd; i++) {
		struct judgement *x = &an->jd[i];

		if (!x->judged)
			continue;
		if (ab_judge_blocks(x->d, x->j.blocks, an->alpha_each, &rng, &x->j) < 0)
			return -ENOMEM;
		x->med_a = median_of(x->va, x->j.blocks);
		x->med_b = median_of(x->vb, x->j.blocks);
		all[n++] = x->j;
	}
	ab_verdicts(all, n, ab->alpha, ab->min_effect, false);
	n = 0;
	for (int i = 0; i < an->njd; i++)
		if (an->jd[i].judged)
			an->jd[i].j = all[n++];
	for (int i = 0; i < an->njd; i += NJQ) {
		enum ab_verdict v[NJQ];
		int nv = 0;

		for (int q = 0; q < NJQ; q++)
			if (an->jd[i + q].judged)
				v[nv++] = an->jd[i + q].j.verdict;
		an->verdict[an->jd[i].w][an->jd[i].arm] = ab_verdict_overall(v, nv);
	}
	for (int a = 1; a < ab->nr_arms && !r; a++)
		r = judge_cpu(an, ab, a, &rng);
	return r;
}

static void pct(char *buf, size_t n, double x)
{
	if (isinf(x))
		snprintf(buf, n, "%s", x > 0 ? "+inf" : "-inf");
	else
		snprintf(buf, n, "%+.1f%%", 100 * x);
}

static void print_judgement(const struct judgement *jd, const struct analysis *an)
{
	const struct ab_judged *j = &jd->j;
	char e[16], lo[16], hi[16], mde[40];

	if (!jd->judged) {
		printf("%-5s not judged (see the notes below)\n", jq_name[jd->q]);
		return;
	}
	pct(e, sizeof(e), j->effect);
	pct(lo, sizeof(lo), j->lo);
	pct(hi, sizeof(hi), j->hi);
	if (isinf(j->mde_up) && isinf(j->mde_down))
		snprintf(mde, sizeof(mde), "none");
	else
		snprintf(mde, sizeof(mde), "+%.1f%%/-%.1f%%", 100 * j->mde_up, 100 * j->mde_down);
	printf("%-5s %-12.4g %-12.4g %7s [%s, %s]%*s p %-8.3g %-15s %s", jq_name[jd->q], jd->med_a, jd->med_b, e, lo, hi,
	       (int)(18 - strlen(lo) - strlen(hi)), "", j->p, mde, ab_verdict_name[j->verdict]);
	if (jd->j.blocks != jd[-jd->q].j.blocks)
		printf(" (%d blocks)", jd->j.blocks);
	putchar('\n');
	(void)an;
}

/* The verdict line's reason: what a user may conclude, and no more. */
static void print_verdict_reason(const struct ab *ab, const struct analysis *an, const struct judgement *x,
				 enum ab_verdict v)
{
	const struct judgement *p50 = &x[0];
	char lo[16], hi[16], e[16];

	switch (v) {
	case AB_INCONCLUSIVE: {
		if (!p50->judged) {
			printf(" (no block could be judged for p50: see the notes above)\n");
			break;
		}
		int needed = ab_blocks_needed(an->alpha_each), warm = (ab->warmup + ab->nr_arms - 1) / ab->nr_arms;

		printf(" (%d blocks can give p %.3g at best; p < %.3g, alpha %g over %d judgements, ", p50->j.blocks,
		       p50->j.floor, an->alpha_each, ab->alpha, an->m);
		if (needed < 0)
			printf("which no number of blocks reaches: raise --alpha)\n");
		else
			printf("needs %d blocks: --epochs %d with --warmup %u)\n", needed, needed + warm, ab->warmup);
		break;
	}
	case AB_NOT_SHOWN:
		pct(e, sizeof(e), p50->j.effect);
		pct(lo, sizeof(lo), p50->j.lo);
		pct(hi, sizeof(hi), p50->j.hi);
		printf(" (no shift of at least %.0f%% was shown; p50 %s [%s, %s]; with %.0f%% power this run would "
		       "find B slower by %.1f%% or faster by %.1f%% at p50)\n", 100 * ab->min_effect, e, lo, hi, 100 * AB_POWER,
		       100 * p50->j.mde_up, 100 * p50->j.mde_down);
		break;
	case AB_EQUIVALENT:
		printf(" (every judged quantile's %.4g%% interval lies within +-%.0f%%: two one-sided tests)\n",
		       100 * (1 - 2 * an->alpha_each), 100 * ab->min_effect);
		break;
	default:
		printf(" (p below %g after Holm and a shift of at least %.0f%%)\n", ab->alpha, 100 * ab->min_effect);
	}
}

static void print_notes(const struct ab *ab, const struct analysis *an, int w, int arm)
{
	for (int i = 0; i < an->nnote; i++)
		if (an->note[i].w == w && an->note[i].arm == arm)
			printf("note %s, %s against %s: %s\n", ab_wname[w], ab->arm[arm].name, ab->arm[0].name, an->note[i].text);
}

static void print_workload(const struct ab *ab, const struct analysis *an, int w, int a)
{
	const struct judgement *x = NULL;

	for (int i = 0; i < an->njd && !x; i += NJQ)
		if (an->jd[i].w == w && an->jd[i].arm == a)
			x = &an->jd[i];
	if (!x)
		return;
	printf("== %s (us): %s against %s, %d blocks (smallest possible p %.3g%s)\n", ab_wname[w], ab->arm[a].name,
	       ab->arm[0].name, x->j.blocks, x->j.floor, x->j.exact ? ", exact" : ", Monte Carlo");
	printf("%-5s %-12s %-12s %-32s %-10s %-15s %s\n", "", ab->arm[0].name, ab->arm[a].name, "shift B/A-1 [95%]", "p",
	       "detectable", "");
	for (int q = 0; q < NJQ; q++)
		print_judgement(&x[q], an);
	print_notes(ab, an, w, a);
	enum ab_verdict v = an->verdict[w][a];

	printf("verdict %s, %s against %s: %s", ab_wname[w], ab->arm[a].name, ab->arm[0].name, ab_verdict_name[v]);
	print_verdict_reason(ab, an, x, v);
}

static void write_json(const struct ab *ab, FILE *f, const struct analysis *an, const struct ab_stage_analysis *sa)
{
	fprintf(f, "{\"format\":2,\"tool\":\"vmm ab\",\"seed\":%llu,\"mode\":\"%s\",\"blocks\":%u,\"warmup\":%u,"
		   "\"epoch_ms\":%u,\"alpha\":%g,\"min_effect\":%g,\"power\":%g,\"arms\":[",
		(unsigned long long)ab->seed, ab->mode == AB_ONE_VM ? "one-vm" : "boots", ab->epochs, ab->warmup,
		ab->epoch_ms, ab->alpha, ab->min_effect, AB_POWER);
	for (int a = 0; a < ab->nr_arms; a++) {
		fprintf(f, "%s{\"name\":\"%s\",\"options\":", a ? "," : "", ab->arm[a].name);
		fputc('[', f);
		for (int i = 0; i < ab->arm[a].argc; i++) {
			if (i)
				fputc(',', f);
			json_write_string(f, ab->arm[a].argv[i]);
		}
		fputs("]}", f);
	}
	fputs("],\"epochs\":[", f);
	for (int e = 0; e < ab->nr_runs; e++) {
		const struct ab_run *r = &ab->run[e];

		fprintf(f, "%s{\"index\":%d,\"block\":%d,\"arm\":\"%s\",\"warmup\":%s,\"complete\":%s,\"start_ns\":%llu,"
			   "\"end_ns\":%llu,\"wall_s\":%.6f,\"cpu_s\":%.6f,\"halt_successful_poll\":%lld,"
			   "\"halt_attempted_poll\":%lld,\"workloads\":{", e ? "," : "", e, r->block, ab->arm[r->arm].name,
			e < (int)ab->warmup ? "true" : "false", r->complete ? "true" : "false",
			(unsigned long long)r->start_ns, (unsigned long long)r->end_ns, r->wall_s, r->cpu_s, r->polls_ok,
			r->polls_tried);
		bool first = true;

		for (int w = 1; w <= PROBE_W_MAX; w++) {
			if (!r->n[w])
				continue;
			const struct ab_reduced *x = &an->red[e][w];

			fprintf(f, "%s\"%s\":{\"unit\":\"us\",\"n\":%zu,\"p50\":%.3f,\"p90\":%.3f,\"p99\":%.3f,\"mean\":%.3f,"
				   "\"samples\":[", first ? "" : ",", ab_wname[w], x->n, x->p50, x->p90, x->p99, x->mean);
			for (size_t i = 0; i < r->n[w]; i++) /* in the order they were taken */
				fprintf(f, "%s%.3f", i ? "," : "", r->x[w][i]);
			fputs("]}", f);
			first = false;
		}
		fputc('}', f);
		if (ab->at.any && !ab->at.off) { /* --attribute: the epoch's stage figures, for judge and compare */
			fputs(",\"stages\":", f);
			ab_stage_epoch_json(f, &r->st);
		}
		fputc('}', f);
	}
	fputs("],\"comparisons\":[", f);
	bool first = true;

	for (int i = 0; i < an->njd + an->ncpu; i++) {
		const struct judgement *x = i < an->njd ? &an->jd[i] : &an->cpu[i - an->njd];
		bool cpu = i >= an->njd;
		const struct ab_comparison c = {
			.workload = cpu ? "all" : ab_wname[x->w], .quantity = cpu ? "cpu_s_per_sample" : jq_name[x->q],
			.a = ab->arm[0].name, .b = ab->arm[x->arm].name, .unit = "epoch", .a_median = x->med_a,
			.b_median = x->med_b, .j = &x->j, .with_verdict = !cpu,
		};

		if (!x->judged) /* in "notes" */
			continue;
		if (!first)
			fputc(',', f);
		ab_comparison_json(f, &c);
		first = false;
	}
	fputs("],\"notes\":[", f);
	for (int i = 0; i < an->nnote; i++) {
		const struct note *n = &an->note[i];

		fprintf(f, "%s{\"workload\":\"%s\",\"a\":\"%s\",\"b\":\"%s\",\"quantity\":%s%s%s,\"note\":", i ? "," : "",
			ab_wname[n->w], ab->arm[0].name, ab->arm[n->arm].name, n->q < 0 ? "" : "\"",
			n->q < 0 ? "null" : jq_name[n->q], n->q < 0 ? "" : "\"");
		json_write_string(f, n->text);
		fputc('}', f);
	}
	fputs("],\"verdicts\":[", f);
	first = true;
	for (int w = 1; w <= PROBE_W_MAX; w++)
		for (int a = 1; a < ab->nr_arms; a++)
			if (an->judged[w][a]) {
				fprintf(f, "%s{\"workload\":\"%s\",\"a\":\"%s\",\"b\":\"%s\",\"verdict\":\"%s\"}", first ? "" : ",",
					ab_wname[w], ab->arm[0].name, ab->arm[a].name, ab_verdict_name[an->verdict[w][a]]);
				first = false;
			}
	fputc(']', f);
	if (sa)
		ab_stages_json(ab, sa, f);
	fputs("}\n", f);
}

/* The CDF plots of each workload: every usable epoch's samples of an arm (plots show shapes; the
 * tests above never pool). */
static int plots(const struct ab *ab)
{
	int r = 0;

	for (int w = 1; w <= PROBE_W_MAX; w++) {
		double *x[AB_MAX_ARMS] = { NULL };
		size_t n[AB_MAX_ARMS] = { 0 };
		const char *names[AB_MAX_ARMS];
		struct ab_epoch ep[AB_MAX_EPOCHS];
		bool any = false;

		for (int e = 0; e < ab->nr_runs; e++)
			ep[e] = (struct ab_epoch){ ab->run[e].arm, ab->run[e].x[w], ab->run[e].complete ? ab->run[e].n[w] : 0 };
		for (int a = 0; a < ab->nr_arms; a++) {
			names[a] = ab->arm[a].name;
			if (ab_gather(ep, ab->nr_runs, ab->warmup, a, &x[a], &n[a]) == 0) {
				ab_sort(x[a], n[a]);
				any |= n[a] > 0;
			}
		}
		if (any && ab_write_plot(ab->plot, ab_wname[w], names, x, n, ab->nr_arms) < 0)
			r = -EIO;
		for (int a = 0; a < ab->nr_arms; a++)
			free(x[a]);
	}
	return r;
}

static void print_trade(const struct ab *ab, const struct analysis *an)
{
	printf("== the other side of the trade (epochs after warm-up; CPU: %s)\n",
	       ab->mode == AB_ONE_VM ? "the vCPU threads" : "the whole vmm process");
	for (int a = 0; a < ab->nr_arms; a++) {
		double cpu_s = 0;
		size_t samples = 0;
		long long ok = 0, tried = 0;

		for (int e = (int)ab->warmup; e < ab->nr_runs; e++) {
			const struct ab_run *run = &ab->run[e];

			if (!run->complete || run->arm != a)
				continue;
			cpu_s += run->cpu_s;
			ok += run->polls_ok;
			tried += run->polls_tried;
			samples += epoch_samples(run);
		}
		printf("%-12s host CPU %.2f s for %zu probe samples (%.1f us per sample); halt polls %lld of "
		       "%lld successful\n", ab->arm[a].name, cpu_s, samples, samples ? 1e6 * cpu_s / samples : 0.0, ok, tried);
	}
	for (int i = 0; i < an->ncpu; i++) {
		const struct judgement *c = &an->cpu[i];
		char e[16], lo[16], hi[16];

		pct(e, sizeof(e), c->j.effect);
		pct(lo, sizeof(lo), c->j.lo);
		pct(hi, sizeof(hi), c->j.hi);
		printf("CPU per sample, %s against %s: %.2f vs %.2f us (block medians), shift %s [%s, %s], p %.3g over %d "
		       "blocks\n", ab->arm[c->arm].name, ab->arm[0].name, c->med_b, c->med_a, e, lo, hi, c->j.p, c->j.blocks);
	}
}

static int save_json(const struct ab *ab, const struct analysis *an, const struct ab_stage_analysis *sa)
{
	FILE *f = fopen(ab->json, "w");

	if (!f) {
		pr_err("vmm ab: cannot write %s: %s", ab->json, strerror(errno));
		return -EIO;
	}
	write_json(ab, f, an, sa);
	if (fclose(f) != 0) {
		pr_err("vmm ab: writing %s failed", ab->json);
		return -EIO;
	}
	fprintf(stderr, "vmm ab: results in %s\n", ab->json);
	return 0;
}

int ab_report(struct ab *ab)
{
	struct analysis *an = calloc(1, sizeof(*an));
	int r = an ? analyze(ab, an) : -ENOMEM, slower = 0;

	if (r == -ENODATA) {
		for (int i = 0; an && i < an->nnote; i++)
			pr_err("vmm ab: %s, %s against %s: %s", ab_wname[an->note[i].w], ab->arm[an->note[i].arm].name,
			       ab->arm[0].name, an->note[i].text);
		pr_err("vmm ab: no workload had samples in a complete block of every arm after warm-up%s",
		       an && an->nnote ? " (the blocks dropped are named above)"
				       : ": is vmm.probe= in the guest's command line (-p) of the shared options?");
	}
	if (r < 0) {
		analysis_free(an);
		return r;
	}
	printf("== the unit is the epoch: per workload and block both epochs' p50/p90/p99 at the smaller epoch's\n"
	       "   count, then log(B/A); randomization test within blocks, Holm over %d judgements at alpha %g,\n"
	       "   minimum effect %.0f%%, detectable shifts (slower/faster) at %.0f%% power\n", an->m, ab->alpha,
	       100 * ab->min_effect, 100 * AB_POWER);
	for (int w = 1; w <= PROBE_W_MAX; w++)
		for (int a = 1; a < ab->nr_arms; a++)
			if (an->judged[w][a]) {
				print_workload(ab, an, w, a);
				slower += an->verdict[w][a] == AB_SLOWER;
			}
	/* --attribute: where the difference is (no section when a FILE was refused or none came) */
	struct ab_stage_analysis *sa = ab->at.any && !ab->at.off ? ab_stages_analyze(ab) : NULL;

	if (sa)
		ab_stages_print(ab, sa, stdout);
	print_trade(ab, an);
	if (ab->plot && plots(ab) < 0)
		r = -EIO;
	if (ab->plot && sa && ab_stages_plot(ab, ab->plot) < 0)
		r = -EIO;
	if (ab->json && save_json(ab, an, sa) < 0)
		r = -EIO;
	ab_stages_free(sa);
	analysis_free(an);
	if (r == 0 && ab->fail_on_regression && slower) {
		fprintf(stderr, "vmm ab: --fail-on-regression: B is slower in %d workload and arm comparison%s\n", slower,
			slower > 1 ? "s" : "");
		return 1;
	}
	return r;
}

int ab_report_verdicts(const struct ab *ab, enum ab_verdict (*verdict)[AB_MAX_ARMS])
{
	struct analysis *an = calloc(1, sizeof(*an));
	int r = an ? analyze(ab, an) : -ENOMEM;

	for (int w = 0; r == 0 && w <= PROBE_W_MAX; w++)
		for (int a = 0; a < AB_MAX_ARMS; a++)
			verdict[w][a] = an->judged[w][a] ? an->verdict[w][a] : AB_INCONCLUSIVE;
	analysis_free(an);
	return r;
}
