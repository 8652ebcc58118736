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
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ab/ab.h"
#include "ab/design.h"
#include "halt_poll/halt_poll.h"
#include "vmm/log.h"

/* The quantities judged per workload: the per-epoch quantiles. */
#define NJQ 3
static const char *const jq_name[NJQ] = { "p50", "p90", "p99" };
/* An epoch with fewer samples of a workload says little about its quantiles: left out. */
#define MIN_EPOCH_SAMPLES 5
#define MAX_JUDGED ((PROBE_W_MAX + 1) * AB_MAX_ARMS * NJQ)

static double jq_of(const struct ab_reduced *r, int q)
{
	return q == 0 ? r->p50 : q == 1 ? r->p90 : r->p99;
}

struct judgement {
	int w, arm, q;
	struct ab_judged j;
	double med_a, med_b; /* the median over blocks of each arm's per-epoch value */
};

static double median_of(double *v, int n)
{
	if (!n)
		return NAN;
	ab_sort(v, n);
	return ab_quantile_sorted(v, n, 0.5);
}

/* The epochs of arm 0 and arm `arm` in every block where both are usable for workload w (or for
 * the CPU when w is 0): their indices in pairs. */
static int pairs_of(const struct ab *ab, struct ab_reduced (*red)[PROBE_W_MAX + 1], int w, int arm,
		    int (*pair)[2])
{
	int k = 0, nblocks = (ab->nr_runs + ab->nr_arms - 1) / ab->nr_arms;

	for (int b = 0; b < nblocks; b++) {
		int ea = -1, eb = -1;

		for (int e = b * ab->nr_arms; e < (b + 1) * ab->nr_arms && e < ab->nr_runs; e++) {
			const struct ab_run *r = &ab->run[e];
			bool ok = e >= (int)ab->warmup && r->complete &&
				  (w ? red[e][w].n >= MIN_EPOCH_SAMPLES && red[e][w].p50 > 0 : r->cpu_s > 0);

			if (ok && r->arm == 0)
				ea = e;
			if (ok && r->arm == arm)
				eb = e;
		}
		if (ea >= 0 && eb >= 0) {
			pair[k][0] = ea;
			pair[k][1] = eb;
			k++;
		}
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

static void pct(char *buf, size_t n, double x)
{
	if (isinf(x))
		snprintf(buf, n, "%s", x > 0 ? "+inf" : "-inf");
	else
		snprintf(buf, n, "%+.1f%%", 100 * x);
}

static void print_judgement(const struct judgement *jd, const struct ab *ab)
{
	const struct ab_judged *j = &jd->j;
	char e[16], lo[16], hi[16], mde[24];

	pct(e, sizeof(e), j->effect);
	pct(lo, sizeof(lo), j->lo);
	pct(hi, sizeof(hi), j->hi);
	if (isinf(j->mde))
		snprintf(mde, sizeof(mde), "none");
	else
		snprintf(mde, sizeof(mde), "%.1f%%", 100 * j->mde);
	printf("%-5s %-12.4g %-12.4g %7s [%s, %s]%*s p %-8.3g %-9s %s\n", jq_name[jd->q], jd->med_a, jd->med_b, e, lo,
	       hi, (int)(18 - strlen(lo) - strlen(hi)), "", j->p, mde, ab_verdict_name[j->verdict]);
	(void)ab;
}

/* One workload and arm's verdict from its quantiles': slower wins (a regression is never hidden
 * by a gain elsewhere), then faster, then inconclusive, else no difference. */
static enum ab_verdict overall(const struct judgement *jd, int n)
{
	bool slower = false, faster = false, inconcl = false;

	for (int i = 0; i < n; i++) {
		slower |= jd[i].j.verdict == AB_SLOWER;
		faster |= jd[i].j.verdict == AB_FASTER;
		inconcl |= jd[i].j.verdict == AB_INCONCLUSIVE;
	}
	return slower ? AB_SLOWER : faster ? AB_FASTER : inconcl ? AB_INCONCLUSIVE : AB_SAME;
}

static void write_json(const struct ab *ab, FILE *f, struct ab_reduced (*red)[PROBE_W_MAX + 1],
		       const struct judgement *jd, int m, const struct judgement *cpu, int ncpu,
		       const enum ab_verdict (*verdict)[AB_MAX_ARMS], const bool (*judged)[AB_MAX_ARMS])
{
	fprintf(f, "{\"format\":2,\"tool\":\"vmm ab\",\"seed\":%llu,\"mode\":\"%s\",\"blocks\":%u,\"warmup\":%u,"
		   "\"epoch_ms\":%u,\"alpha\":%g,\"min_effect\":%g,\"arms\":[",
		(unsigned long long)ab->seed, ab->mode == AB_ONE_VM ? "one-vm" : "boots", ab->epochs, ab->warmup,
		ab->epoch_ms, ab->alpha, ab->min_effect);
	for (int a = 0; a < ab->nr_arms; a++) {
		fprintf(f, "%s{\"name\":\"%s\",\"options\":", a ? "," : "", ab->arm[a].name);
		fputc('[', f);
		for (int i = 0; i < ab->arm[a].argc; i++) {
			if (i)
				fputc(',', f);
			hp_json_string(f, ab->arm[a].argv[i]);
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
			const struct ab_reduced *x = &red[e][w];

			fprintf(f, "%s\"%s\":{\"unit\":\"us\",\"n\":%zu,\"p50\":%.3f,\"p90\":%.3f,\"p99\":%.3f,\"mean\":%.3f,"
				   "\"samples\":[", first ? "" : ",", ab_wname[w], x->n, x->p50, x->p90, x->p99, x->mean);
			for (size_t i = 0; i < r->n[w]; i++) /* in the order they were taken */
				fprintf(f, "%s%.3f", i ? "," : "", r->x[w][i]);
			fputs("]}", f);
			first = false;
		}
		fputs("}}", f);
	}
	fputs("],\"comparisons\":[", f);
	for (int i = 0; i < m + ncpu; i++) {
		const struct judgement *x = i < m ? &jd[i] : &cpu[i - m];
		const struct ab_comparison c = {
			.workload = i < m ? ab_wname[x->w] : "all", .quantity = i < m ? jq_name[x->q] : "cpu_s_per_sample",
			.a = ab->arm[0].name, .b = ab->arm[x->arm].name, .unit = "epoch", .a_median = x->med_a,
			.b_median = x->med_b, .j = &x->j, .with_verdict = i < m,
		};

		if (i)
			fputc(',', f);
		ab_comparison_json(f, &c);
	}
	fputs("],\"verdicts\":[", f);
	bool first = true;

	for (int w = 1; w <= PROBE_W_MAX; w++)
		for (int a = 1; a < ab->nr_arms; a++)
			if (judged[w][a]) {
				fprintf(f, "%s{\"workload\":\"%s\",\"a\":\"%s\",\"b\":\"%s\",\"verdict\":\"%s\"}", first ? "" : ",",
					ab_wname[w], ab->arm[0].name, ab->arm[a].name, ab_verdict_name[verdict[w][a]]);
				first = false;
			}
	fputs("]}\n", f);
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

int ab_report(struct ab *ab)
{
	static struct ab_reduced red[AB_MAX_EPOCHS][PROBE_W_MAX + 1];
	static struct judgement jd[MAX_JUDGED], cpu[AB_MAX_ARMS];
	static int pair[AB_MAX_EPOCHS][2];
	static double d[AB_MAX_EPOCHS], va[AB_MAX_EPOCHS], vb[AB_MAX_EPOCHS];
	enum ab_verdict verdict[PROBE_W_MAX + 1][AB_MAX_ARMS];
	bool judged[PROBE_W_MAX + 1][AB_MAX_ARMS] = { { false } };
	struct ab_rng rng;
	int m = 0, ncpu = 0, r = 0, slower = 0;

	ab_rng_seed(&rng, ab->seed + 1);
	for (int e = 0; e < ab->nr_runs; e++)
		for (int w = 1; w <= PROBE_W_MAX; w++) {
			double *c = malloc((ab->run[e].n[w] + 1) * sizeof(*c));

			if (!c)
				return -ENOMEM;
			if (ab->run[e].n[w]) /* x may be NULL then */
				memcpy(c, ab->run[e].x[w], ab->run[e].n[w] * sizeof(*c));
			ab_epoch_reduce(c, ab->run[e].n[w], &red[e][w]);
			free(c);
		}
	/* every judgement first: Holm and the detectable shift need their number */
	for (int w = 1; w <= PROBE_W_MAX; w++)
		for (int a = 1; a < ab->nr_arms; a++) {
			int k = pairs_of(ab, red, w, a, pair);

			if (!k)
				continue;
			judged[w][a] = true;
			for (int q = 0; q < NJQ; q++)
				jd[m++] = (struct judgement){ .w = w, .arm = a, .q = q, .j.blocks = k };
		}
	if (!m) {
		pr_err("vmm ab: no workload had samples in a complete block of every arm after warm-up: is "
		       "vmm.probe= in the guest's command line (-p) of the shared options?");
		return -ENODATA;
	}
	double alpha_each = ab->alpha / m;

	for (int i = 0; i < m; i++) {
		struct judgement *x = &jd[i];
		int k = pairs_of(ab, red, x->w, x->arm, pair);

		for (int b = 0; b < k; b++) {
			va[b] = jq_of(&red[pair[b][0]][x->w], x->q);
			vb[b] = jq_of(&red[pair[b][1]][x->w], x->q);
			d[b] = log(vb[b] / va[b]);
		}
		if (ab_judge_blocks(d, k, alpha_each, &rng, &x->j) < 0)
			return -ENOMEM;
		x->med_a = median_of(va, k);
		x->med_b = median_of(vb, k);
	}
	static struct ab_judged all[MAX_JUDGED];

	for (int i = 0; i < m; i++)
		all[i] = jd[i].j;
	ab_verdicts(all, m, ab->alpha, ab->min_effect, false);
	for (int i = 0; i < m; i++)
		jd[i].j = all[i];
	/* the other side of the trade: the vCPU CPU time per probe sample, per block too */
	for (int a = 1; a < ab->nr_arms; a++) {
		int k = pairs_of(ab, red, 0, a, pair), n = 0;

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
			continue;
		struct judgement *x = &cpu[ncpu++];

		*x = (struct judgement){ .arm = a };
		if (ab_judge_blocks(d, n, ab->alpha, &rng, &x->j) < 0)
			return -ENOMEM;
		x->med_a = median_of(va, n);
		x->med_b = median_of(vb, n);
	}
	int needed = ab_blocks_needed(alpha_each), warm_blocks = (ab->warmup + ab->nr_arms - 1) / ab->nr_arms;

	printf("== the unit is the epoch: per workload each epoch's own p50/p90/p99, then per block log(B/A);\n"
	       "   randomization test within blocks, Holm over %d judgements at alpha %g, minimum effect %.0f%%\n", m,
	       ab->alpha, 100 * ab->min_effect);
	for (int w = 1; w <= PROBE_W_MAX; w++)
		for (int a = 1; a < ab->nr_arms; a++) {
			if (!judged[w][a])
				continue;
			const struct judgement *x = NULL;

			for (int i = 0; i < m && !x; i++)
				if (jd[i].w == w && jd[i].arm == a)
					x = &jd[i];
			printf("== %s (us): %s against %s, %d blocks (smallest possible p %.3g%s)\n", ab_wname[w],
			       ab->arm[a].name, ab->arm[0].name, x->j.blocks, x->j.floor, x->j.exact ? ", exact" : ", Monte Carlo");
			printf("%-5s %-12s %-12s %-32s %-10s %-9s %s\n", "", ab->arm[0].name, ab->arm[a].name,
			       "shift B/A-1 [95%]", "p", "detectable", "");
			for (int q = 0; q < NJQ; q++)
				print_judgement(&x[q], ab);
			verdict[w][a] = overall(x, NJQ);
			double mde = INFINITY;

			for (int q = 0; q < NJQ; q++)
				mde = fmin(mde, x[q].j.mde);
			printf("verdict %s, %s against %s: %s", ab_wname[w], ab->arm[a].name, ab->arm[0].name,
			       ab_verdict_name[verdict[w][a]]);
			if (verdict[w][a] == AB_INCONCLUSIVE)
				printf(" (%d blocks can give p %.3g at best; p < %.3g, alpha %g over %d judgements, needs %d "
				       "blocks: --epochs %d with --warmup %u)\n", x->j.blocks, x->j.floor, alpha_each, ab->alpha, m,
				       needed, needed + warm_blocks, ab->warmup);
			else if (verdict[w][a] == AB_SAME)
				printf(" (this run could detect shifts of %.1f%% or more at p50)\n", 100 * x[0].j.mde);
			else
				printf(" (p below %g after Holm and a shift of at least %.0f%%)\n", ab->alpha, 100 * ab->min_effect);
			slower += verdict[w][a] == AB_SLOWER;
		}
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
	for (int i = 0; i < ncpu; i++) {
		char e[16], lo[16], hi[16];

		pct(e, sizeof(e), cpu[i].j.effect);
		pct(lo, sizeof(lo), cpu[i].j.lo);
		pct(hi, sizeof(hi), cpu[i].j.hi);
		printf("CPU per sample, %s against %s: %.2f vs %.2f us (block medians), shift %s [%s, %s], p %.3g over %d "
		       "blocks\n", ab->arm[cpu[i].arm].name, ab->arm[0].name, cpu[i].med_b, cpu[i].med_a, e, lo, hi,
		       cpu[i].j.p, cpu[i].j.blocks);
	}
	if (ab->plot && plots(ab) < 0)
		r = -EIO;
	if (ab->json) {
		FILE *f = fopen(ab->json, "w");

		if (!f) {
			pr_err("vmm ab: cannot write %s: %s", ab->json, strerror(errno));
			r = -EIO;
		} else {
			write_json(ab, f, red, jd, m, cpu, ncpu, verdict, judged);
			if (fclose(f) != 0) {
				pr_err("vmm ab: writing %s failed", ab->json);
				r = -EIO;
			} else {
				fprintf(stderr, "vmm ab: results in %s\n", ab->json);
			}
		}
	}
	if (r == 0 && ab->fail_on_regression && slower) {
		fprintf(stderr, "vmm ab: --fail-on-regression: B is slower in %d workload and arm comparison%s\n", slower,
			slower > 1 ? "s" : "");
		return 1;
	}
	return r;
}
