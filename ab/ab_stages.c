// SPDX-License-Identifier: MIT
/*
 * vmm ab --attribute's judgements: per arm against the first, each class's stage medians and share
 * over the blocks, as the timer's p50 is judged (ab_report.c): both epochs of a block after warm-up
 * and complete, each epoch's own figure, the sign-flip test of the blocks' differences, its
 * inversion for the interval, Holm over every cell judged. The cells are differences B - A (a
 * share or a stage may be 0: no ratio), and Holm's set is their own: they say where a difference
 * is, and never change the verdicts above them.
 */
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "ab/ab.h"
#include "core/json.h"

struct cell {
	bool judged;
	int k, dropped; /* blocks used; blocks left out (an epoch with too few samples for it) */
	struct ab_judged j;
	double med_a, med_b; /* the median over the blocks of each side's figure */
	bool moved;
};

struct ab_stage_analysis {
	struct cell cell[AB_MAX_ARMS][AB_ST_CLASSES][AB_ST_CELLS];
	bool present[AB_MAX_ARMS][AB_ST_CLASSES]; /* the class has samples in some paired epoch */
	int blocks[AB_MAX_ARMS];		   /* blocks with both epochs complete after warm-up */
	int m;					   /* cells judged: Holm's m */
	double alpha_each;
};

static double median_of(const double *v, int n)
{
	double c[AB_MAX_EPOCHS];

	if (n <= 0)
		return NAN;
	memcpy(c, v, (size_t)n * sizeof(*c));
	ab_sort(c, (size_t)n);
	return ab_quantile_sorted(c, (size_t)n, 0.5);
}

/* arm's epoch in block b once warm-up is over, or -1 (as ab_report.c pairs them) */
static int epoch_in_block(const struct ab *ab, int b, int arm)
{
	for (int e = b * ab->nr_arms; e < (b + 1) * ab->nr_arms && e < ab->nr_runs; e++)
		if (ab->run[e].arm == arm && e >= (int)ab->warmup)
			return e;
	return -1;
}

static int pairs_of(const struct ab *ab, int arm, int (*pair)[2])
{
	int k = 0, nblocks = (ab->nr_runs + ab->nr_arms - 1) / ab->nr_arms;

	for (int b = 0; b < nblocks; b++) {
		int ea = epoch_in_block(ab, b, 0), eb = epoch_in_block(ab, b, arm);

		if (ea < 0 || eb < 0 || !ab->run[ea].complete || !ab->run[eb].complete)
			continue;
		pair[k][0] = ea;
		pair[k][1] = eb;
		k++;
	}
	return k;
}

/* The blocks' figures of one cell: va, vb and d = vb - va for the blocks that have it */
static int cell_values(const struct ab *ab, int (*pair)[2], int np, int c, int cell, double *va, double *vb, double *d)
{
	int k = 0;

	for (int b = 0; b < np; b++)
		if (ab_stage_value(&ab->run[pair[b][0]].st, c, cell, &va[k]) &&
		    ab_stage_value(&ab->run[pair[b][1]].st, c, cell, &vb[k])) {
			d[k] = vb[k] - va[k];
			k++;
		}
	return k;
}

bool ab_stage_moved(int cell, bool holm_reject, double shift, double a_median, double min_effect)
{
	/* the minimum effect as vmm ab's verdicts have it: of A's figure for a stage, in points of share */
	double least = cell == AB_ST_SHARE ? min_effect : min_effect * fabs(a_median);

	return holm_reject && fabs(shift) >= least;
}

/* Which cells have blocks: their count is Holm's m, known before any is judged */
static void count_cells(const struct ab *ab, struct ab_stage_analysis *sa)
{
	int pair[AB_MAX_EPOCHS][2];
	double va[AB_MAX_EPOCHS], vb[AB_MAX_EPOCHS], d[AB_MAX_EPOCHS];

	for (int a = 1; a < ab->nr_arms; a++) {
		int np = pairs_of(ab, a, pair);

		sa->blocks[a] = np;
		for (int c = 0; c < AB_ST_CLASSES; c++) {
			for (int b = 0; b < np; b++)
				sa->present[a][c] |= ab->run[pair[b][0]].st.nc[c] || ab->run[pair[b][1]].st.nc[c];
			for (int cell = 0; sa->present[a][c] && cell < AB_ST_CELLS; cell++) {
				struct cell *x = &sa->cell[a][c][cell];

				x->k = cell_values(ab, pair, np, c, cell, va, vb, d);
				x->dropped = np - x->k;
				x->judged = x->k > 0;
				sa->m += x->judged;
			}
		}
	}
}

static void judge_cells(const struct ab *ab, struct ab_stage_analysis *sa)
{
	int pair[AB_MAX_EPOCHS][2], n = 0;
	double va[AB_MAX_EPOCHS], vb[AB_MAX_EPOCHS], d[AB_MAX_EPOCHS], p[AB_MAX_ARMS * AB_ST_CLASSES * AB_ST_CELLS];
	bool rej[AB_MAX_ARMS * AB_ST_CLASSES * AB_ST_CELLS];
	struct ab_rng rng;

	/* a seed of its own: the verdicts above draw exactly as without --attribute */
	ab_rng_seed(&rng, ab->seed + 3);
	sa->alpha_each = ab->alpha / (sa->m ? sa->m : 1);
	for (int a = 1; a < ab->nr_arms; a++) {
		int np = pairs_of(ab, a, pair);

		for (int c = 0; c < AB_ST_CLASSES; c++)
			for (int cell = 0; cell < AB_ST_CELLS; cell++) {
				struct cell *x = &sa->cell[a][c][cell];

				if (!x->judged)
					continue;
				int k = cell_values(ab, pair, np, c, cell, va, vb, d);

				ab_judge_blocks_diff(d, k, sa->alpha_each, &rng, &x->j);
				x->med_a = median_of(va, k);
				x->med_b = median_of(vb, k);
				p[n++] = x->j.p;
			}
	}
	ab_holm(p, n, ab->alpha, rej);
	n = 0;
	for (int a = 1; a < ab->nr_arms; a++)
		for (int c = 0; c < AB_ST_CLASSES; c++)
			for (int cell = 0; cell < AB_ST_CELLS; cell++) {
				struct cell *x = &sa->cell[a][c][cell];

				if (!x->judged)
					continue;
				x->j.reject = rej[n++];
				x->moved = ab_stage_moved(cell, x->j.reject, x->j.effect, x->med_a, ab->min_effect);
			}
}

struct ab_stage_analysis *ab_stages_analyze(const struct ab *ab)
{
	struct ab_stage_analysis *sa = calloc(1, sizeof(*sa));

	if (!sa)
		return NULL;
	count_cells(ab, sa);
	judge_cells(ab, sa);
	return sa;
}

void ab_stages_free(struct ab_stage_analysis *sa)
{
	free(sa);
}

/* ---- text ---- */

/* A shift or bound as printed: us to the 10 ns (stages are a few us), a share in points */
static void bound(char *buf, size_t n, double x, int cell, bool sign)
{
	if (isinf(x))
		snprintf(buf, n, "%s", x > 0 ? "+inf" : "-inf");
	else if (cell == AB_ST_SHARE)
		snprintf(buf, n, sign ? "%+.1f" : "%.1f", 100 * x);
	else
		snprintf(buf, n, sign ? "%+.2f" : "%.2f", x);
}

/* "+12.10 us [4.10, 20.20]" */
static void shift_words(char *buf, size_t n, int cell, double shift, double lo, double hi)
{
	char s[24], l[24], h[24];

	bound(s, sizeof(s), shift, cell, true);
	bound(l, sizeof(l), lo, cell, false);
	bound(h, sizeof(h), hi, cell, false);
	snprintf(buf, n, "%s %s [%s, %s]", s, cell == AB_ST_SHARE ? "pp" : "us", l, h);
}

void ab_stage_shift_text(FILE *f, int c, int cell, double shift, double lo, double hi, double p)
{
	char s[80];

	shift_words(s, sizeof(s), cell, shift, lo, hi);
	fprintf(f, "%s.%s %s, p %.3g", attrib_class_key(c), ab_stage_cell_name(cell), s, p);
}

static void figure(char *buf, size_t n, int cell, double v)
{
	if (cell == AB_ST_SHARE)
		snprintf(buf, n, "%.1f%%", 100 * v);
	else
		snprintf(buf, n, "%.2f", v);
}

/* A class's cells that could not be judged, and why, in words: false when there are none */
static bool class_note(const struct ab_stage_analysis *sa, int a, int c, char *buf, size_t n)
{
	size_t len = 0;

	buf[0] = 0;
	if (!sa->present[a][c]) {
		snprintf(buf, n, "no samples of this class in the blocks: not judged");
		return true;
	}
	for (int cell = 0; cell < AB_ST_CELLS; cell++)
		if (!sa->cell[a][c][cell].judged && len < n)
			len += (size_t)snprintf(buf + len, n - len, "%s%s", len ? ", " : "not judged: ",
						ab_stage_cell_name(cell));
	if (len && len < n)
		snprintf(buf + len, n - len, " (fewer than %zu samples for it in an epoch of every block: of the "
			 "class that saw the stage; for the share, in the epoch)", ab_min_samples_for(0.5));
	return len > 0;
}

static void print_cell(const struct ab_stage_analysis *sa, int a, int c, int cell, FILE *f)
{
	const struct cell *x = &sa->cell[a][c][cell];
	char va[16], vb[16], shift[80];

	figure(va, sizeof(va), cell, x->med_a);
	figure(vb, sizeof(vb), cell, x->med_b);
	shift_words(shift, sizeof(shift), cell, x->j.effect, x->j.lo, x->j.hi);
	fprintf(f, "%-9s %-10s %-10s %-10s %-30s ", attrib_class_key(c), ab_stage_cell_name(cell), va, vb, shift);
	if (x->moved)
		fprintf(f, "%-9.3g moved", x->j.p);
	else
		fprintf(f, "%.3g", x->j.p);
	if (x->k != sa->blocks[a])
		fprintf(f, " (%d blocks)", x->k);
	fputc('\n', f);
}

static void print_verdict(const struct ab *ab, const struct ab_stage_analysis *sa, int a, FILE *f)
{
	int moved = 0, judged = 0;

	fprintf(f, "verdict stages, %s against %s: ", ab->arm[a].name, ab->arm[0].name);
	for (int c = 0; c < AB_ST_CLASSES; c++)
		for (int cell = 0; cell < AB_ST_CELLS; cell++) {
			const struct cell *x = &sa->cell[a][c][cell];

			judged += x->judged;
			if (!x->moved)
				continue;
			fputs(moved++ ? "; " : "moved: ", f);
			ab_stage_shift_text(f, c, cell, x->j.effect, x->j.lo, x->j.hi, x->j.p);
		}
	if (!judged)
		fputs("not judged (no class had samples in both epochs of a block)", f);
	else if (!moved)
		fprintf(f, "none moved (none reached p < %g after Holm with a shift of at least %.0f%%)", ab->alpha,
			100 * ab->min_effect);
	fputc('\n', f);
}

static void print_arm(const struct ab *ab, const struct ab_stage_analysis *sa, int a, FILE *f)
{
	char note[256];

	fprintf(f, "== stages (timer, us): %s against %s, %d blocks\n", ab->arm[a].name, ab->arm[0].name, sa->blocks[a]);
	fprintf(f, "%-9s %-10s %-10s %-10s %-30s %s\n", "class", "figure", ab->arm[0].name, ab->arm[a].name,
		"shift B-A [95%]", "p");
	for (int c = 0; c < AB_ST_CLASSES; c++) {
		for (int cell = 0; cell < AB_ST_CELLS; cell++)
			if (sa->cell[a][c][(cell + AB_ST_SHARE) % AB_ST_CELLS].judged) /* the share first */
				print_cell(sa, a, c, (cell + AB_ST_SHARE) % AB_ST_CELLS, f);
		if (class_note(sa, a, c, note, sizeof(note)))
			fprintf(f, "%-9s %s\n", attrib_class_key(c), note);
	}
	print_verdict(ab, sa, a, f);
}

void ab_stages_print(const struct ab *ab, const struct ab_stage_analysis *sa, FILE *f)
{
	fprintf(f, "== where the difference is: stage medians per class (--attribute): per block B - A of each\n"
		   "   epoch's median of each stage (us, over the samples that saw it) and of each class's share of\n"
		   "   the epoch's samples; randomization test within blocks, Holm over %d stage judgements at\n"
		   "   alpha %g (apart from the verdicts above); moved: p < alpha after Holm and a shift of at least\n"
		   "   %.0f%% (of A's median; points of share)\n", sa->m, ab->alpha, 100 * ab->min_effect);
	if (ab->at.outside || ab->at.other)
		fprintf(f, "note stages: %llu of %llu rows of the runs' attribution left out: %llu in no epoch or near a "
			   "switch, %llu not the timer's\n", ab->at.outside + ab->at.other, ab->at.rows, ab->at.outside,
			ab->at.other);
	if (ab->at.lost || ab->at.dropped)
		fprintf(f, "note stages: the trace lost %llu events and dropped %llu over its cap: some stages went "
			   "unseen\n", ab->at.lost, ab->at.dropped);
	for (int a = 1; a < ab->nr_arms; a++)
		print_arm(ab, sa, a, f);
}

/* ---- JSON ---- */


static void pair_json(FILE *f, const char *key, double lo, double hi)
{
	fprintf(f, ",\"%s\":[", key);
	if (isfinite(lo))
		fprintf(f, "%.6g,", lo);
	else
		fputs("null,", f);
	if (isfinite(hi))
		fprintf(f, "%.6g]", hi);
	else
		fputs("null]", f);
}

static void cell_json(FILE *f, const struct ab *ab, int a, int c, int cell, const struct cell *x)
{
	fprintf(f, "{\"workload\":\"timer\",\"class\":\"%s\",\"figure\":\"%s\",\"scale\":\"%s\",\"a\":\"%s\",\"b\":\"%s\","
		   "\"unit\":\"epoch\",\"blocks\":%d,\"dropped_blocks\":%d,\"exact\":%s",
		attrib_class_key(c), ab_stage_cell_name(cell), cell == AB_ST_SHARE ? "fraction" : "us", ab->arm[0].name,
		ab->arm[a].name, x->k, x->dropped, x->j.exact ? "true" : "false");
	json_write_member_number(f, "p", x->j.p);
	json_write_member_number(f, "p_floor", x->j.floor);
	json_write_member_number(f, "a_median", x->med_a);
	json_write_member_number(f, "b_median", x->med_b);
	json_write_member_number(f, "shift", x->j.effect);
	pair_json(f, "shift_ci", x->j.lo, x->j.hi);
	json_write_member_number(f, "min_detectable_up", x->j.mde_up);
	json_write_member_number(f, "min_detectable_down", x->j.mde_down);
	fprintf(f, ",\"holm_reject\":%s,\"moved\":%s}", x->j.reject ? "true" : "false", x->moved ? "true" : "false");
}

void ab_stages_json(const struct ab *ab, const struct ab_stage_analysis *sa, FILE *f)
{
	bool first = true;
	char note[256];

	if (ab->at.on)
		fprintf(f, ",\"attribution\":{\"rows\":%llu,\"outside\":%llu,\"other_workloads\":%llu,\"lost\":%llu,"
			   "\"dropped\":%llu}", ab->at.rows, ab->at.outside, ab->at.other, ab->at.lost, ab->at.dropped);
	fprintf(f, ",\"stage_judgements\":%d,\"stage_comparisons\":[", sa->m);
	for (int a = 1; a < ab->nr_arms; a++)
		for (int c = 0; c < AB_ST_CLASSES; c++)
			for (int cell = 0; cell < AB_ST_CELLS; cell++)
				if (sa->cell[a][c][cell].judged) {
					fputs(first ? "" : ",", f);
					cell_json(f, ab, a, c, cell, &sa->cell[a][c][cell]);
					first = false;
				}
	fputs("],\"stage_notes\":[", f);
	first = true;
	for (int a = 1; a < ab->nr_arms; a++)
		for (int c = 0; c < AB_ST_CLASSES; c++)
			if (class_note(sa, a, c, note, sizeof(note))) {
				fprintf(f, "%s{\"a\":\"%s\",\"b\":\"%s\",\"class\":\"%s\",\"note\":", first ? "" : ",",
					ab->arm[0].name, ab->arm[a].name, attrib_class_key(c));
				json_write_string(f, note);
				fputc('}', f);
				first = false;
			}
	fputs("],\"stage_verdicts\":[", f);
	for (int a = 1; a < ab->nr_arms; a++) {
		int n = 0;

		fprintf(f, "%s{\"workload\":\"timer\",\"a\":\"%s\",\"b\":\"%s\",\"moved\":[", a > 1 ? "," : "",
			ab->arm[0].name, ab->arm[a].name);
		for (int c = 0; c < AB_ST_CLASSES; c++)
			for (int cell = 0; cell < AB_ST_CELLS; cell++)
				if (sa->cell[a][c][cell].moved)
					fprintf(f, "%s\"%s.%s\"", n++ ? "," : "", attrib_class_key(c), ab_stage_cell_name(cell));
		fputs("]}", f);
	}
	fputc(']', f);
}
