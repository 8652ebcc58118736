// SPDX-License-Identifier: MIT
/*
 * vmm ab compare over saved runs that carry --attribute's stages: the run is the unit, as for the
 * quantiles (ab_saved.c). A run's figure for an arm, class and stage (or share) is the mean over
 * its epochs of each epoch's own figure (a difference scale: a share or a stage may be 0, where
 * the quantiles' geometric mean cannot go); the two sides' runs are judged with
 * ab_judge_runs_diff, Holm over every cell judged. A file without "stages" (older, or run without
 * --attribute) has none, and a cell some run lacks is not judged.
 */
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "ab/ab.h"
#include "core/json.h"

#define MAX_RUNS 64 /* a side, as vmm ab compare takes them */

const char *ab_saved_stages_take(struct ab_saved *s, const char *arm, const struct json *v)
{
	struct ab_stage_epoch st;
	struct ab_saved_st *t = NULL;
	const char *why = ab_stage_epoch_parse(v, &st);

	if (why)
		return why;
	for (int i = 0; i < s->nst && !t; i++)
		if (!strcmp(s->st[i].arm, arm))
			t = &s->st[i];
	if (!t) {
		struct ab_saved_st *n = s->nst < AB_MAX_ARMS ? realloc(s->st, (s->nst + 1) * sizeof(*n)) : NULL;

		if (!n)
			return s->nst < AB_MAX_ARMS ? "out of memory" : "stages of more than 4 arms";
		s->st = n;
		t = memset(&s->st[s->nst++], 0, sizeof(*t));
		snprintf(t->arm, sizeof(t->arm), "%s", arm);
	}
	for (int c = 0; c < AB_ST_CLASSES; c++)
		for (int cell = 0; cell < AB_ST_CELLS; cell++) {
			double x;

			if (ab_stage_value(&st, c, cell, &x)) {
				t->epochs[c][cell]++;
				t->sum[c][cell] += x;
			}
		}
	return NULL;
}

struct run_cell {
	const char *arm;
	int c, cell;
	double ma, mb; /* each side's mean over its runs */
	struct ab_judged j;
	bool moved;
};

struct ab_stage_runs {
	struct run_cell cell[AB_MAX_ARMS * AB_ST_CLASSES * AB_ST_CELLS];
	int n;
	bool judged; /* two runs a side at least */
};

/* One run's figure: the mean of its epochs' */
static bool run_value(const struct ab_saved *s, const char *arm, int c, int cell, double *v)
{
	for (int i = 0; i < s->nst; i++)
		if (!strcmp(s->st[i].arm, arm) && s->st[i].epochs[c][cell]) {
			*v = s->st[i].sum[c][cell] / s->st[i].epochs[c][cell];
			return true;
		}
	return false;
}

/* Every run's figure of one cell, x for A's and y for B's: false when a run lacks it */
static bool side_values(const struct ab_saved *a, int na, const struct ab_saved *b, int nb, const char *arm, int c,
			int cell, double *x, double *y)
{
	for (int i = 0; i < na; i++)
		if (!run_value(&a[i], arm, c, cell, &x[i]))
			return false;
	for (int i = 0; i < nb; i++)
		if (!run_value(&b[i], arm, c, cell, &y[i]))
			return false;
	return true;
}

static double mean(const double *v, int n)
{
	double m = 0;

	for (int i = 0; i < n; i++)
		m += v[i] / n;
	return m;
}

/* Whether some run has samples of the class (its share above 0 somewhere) */
static bool class_seen(const double *x, int na, const double *y, int nb)
{
	for (int i = 0; i < na; i++)
		if (x[i] > 0)
			return true;
	for (int i = 0; i < nb; i++)
		if (y[i] > 0)
			return true;
	return false;
}

/* The cells every run has, of the arms of the first A run (every run must have them anyway), for
 * the classes some run has samples of (as an epoch's analysis skips a class no block has) */
static void find_cells(struct ab_stage_runs *sr, const struct ab_saved *a, int na, const struct ab_saved *b, int nb,
		       const char *arm)
{
	double x[MAX_RUNS], y[MAX_RUNS];

	for (int i = 0; i < a[0].nst; i++) {
		const char *name = a[0].st[i].arm;

		if (arm && strcmp(arm, name))
			continue;
		for (int c = 0; c < AB_ST_CLASSES; c++) {
			if (!side_values(a, na, b, nb, name, c, AB_ST_SHARE, x, y) || !class_seen(x, na, y, nb))
				continue;
			for (int cell = 0; cell < AB_ST_CELLS; cell++)
				if (side_values(a, na, b, nb, name, c, cell, x, y))
					sr->cell[sr->n++] = (struct run_cell){ .arm = name, .c = c, .cell = cell };
		}
	}
}

static void print_cell(FILE *out, const struct ab_stage_runs *sr, const struct run_cell *x)
{
	double scale = x->cell == AB_ST_SHARE ? 100 : 1;
	const char *unit = x->cell == AB_ST_SHARE ? "pp" : "us", *fmt = x->cell == AB_ST_SHARE ? "%.1f" : "%.2f";

	fprintf(out, "%-9s %-10s A %-10.4g B %-10.4g shift ", attrib_class_key(x->c), ab_stage_cell_name(x->cell),
		scale * x->ma, scale * x->mb);
	fprintf(out, x->cell == AB_ST_SHARE ? "%+.1f" : "%+.2f", scale * x->j.effect);
	fprintf(out, " %s", unit);
	if (isfinite(x->j.lo) && isfinite(x->j.hi)) {
		fputs(" [", out);
		fprintf(out, fmt, scale * x->j.lo);
		fputs(", ", out);
		fprintf(out, fmt, scale * x->j.hi);
		fputc(']', out);
	} else {
		fputs(" [no 95% interval: too few runs]", out);
	}
	if (sr->judged)
		fprintf(out, "  p %.3g%s\n", x->j.p, x->moved ? " moved" : "");
	else
		fputs("  cannot be judged: one run a side\n", out);
}

static void print_arm(FILE *out, const struct ab_stage_runs *sr, const char *arm, double alpha, double min_effect)
{
	int moved = 0;

	fprintf(out, "== where the difference is, arm %s: stage medians per class (timer; us, share %%; per run the mean "
		     "of its epochs' figures)\n", arm);
	for (int i = 0; i < sr->n; i++)
		if (!strcmp(sr->cell[i].arm, arm))
			print_cell(out, sr, &sr->cell[i]);
	if (!sr->judged)
		return;
	fprintf(out, "verdict stages, arm %s, B against A: ", arm);
	for (int i = 0; i < sr->n; i++) {
		const struct run_cell *x = &sr->cell[i];

		if (strcmp(x->arm, arm) || !x->moved)
			continue;
		fputs(moved++ ? "; " : "moved: ", out);
		ab_stage_shift_text(out, x->c, x->cell, x->j.effect, x->j.lo, x->j.hi, x->j.p);
	}
	if (!moved)
		fprintf(out, "none moved (none reached p < %g after Holm with a shift of at least %.0f%%)", alpha,
			100 * min_effect);
	fputc('\n', out);
}

struct ab_stage_runs *ab_stage_runs_judge(FILE *out, const struct ab_saved *a, int na, const struct ab_saved *b,
					  int nb, const char *arm, uint64_t seed, double alpha, double min_effect)
{
	double x[MAX_RUNS], y[MAX_RUNS], p[AB_MAX_ARMS * AB_ST_CLASSES * AB_ST_CELLS];
	bool rej[AB_MAX_ARMS * AB_ST_CLASSES * AB_ST_CELLS], any = false;
	struct ab_stage_runs *sr;
	struct ab_rng rng;

	for (int i = 0; i < na; i++)
		any |= a[i].nst > 0;
	for (int i = 0; i < nb; i++)
		any |= b[i].nst > 0;
	if (!any || na > MAX_RUNS || nb > MAX_RUNS || !(sr = calloc(1, sizeof(*sr))))
		return NULL;
	find_cells(sr, a, na, b, nb, arm);
	if (!sr->n) {
		fprintf(out, "note: stages: no arm, class and figure that every run has (a run without --attribute, or "
			     "classes that differ): not judged\n");
		return sr;
	}
	sr->judged = na >= 2 && nb >= 2;
	ab_rng_seed(&rng, seed + 3); /* the quantiles' draws stay as they were */
	for (int i = 0; i < sr->n; i++) {
		struct run_cell *c = &sr->cell[i];

		side_values(a, na, b, nb, c->arm, c->c, c->cell, x, y);
		ab_judge_runs_diff(x, na, y, nb, alpha / sr->n, &rng, &c->j);
		c->ma = mean(x, na);
		c->mb = mean(y, nb);
		p[i] = c->j.p;
	}
	ab_holm(p, sr->n, alpha, rej);
	for (int i = 0; i < sr->n; i++) {
		struct run_cell *c = &sr->cell[i];

		c->j.reject = sr->judged && rej[i];
		c->moved = ab_stage_moved(c->cell, c->j.reject, c->j.effect, c->ma, min_effect);
	}
	for (int i = 0; i < sr->n; i++)
		if (i == 0 || strcmp(sr->cell[i].arm, sr->cell[i - 1].arm))
			print_arm(out, sr, sr->cell[i].arm, alpha, min_effect);
	if (sr->judged)
		fprintf(out, "stages: Holm over %d stage judgements at alpha %g (apart from the verdicts above)\n", sr->n, alpha);
	return sr;
}


void ab_stage_runs_json(FILE *f, const struct ab_stage_runs *sr)
{
	if (!sr)
		return;
	fputs(",\"stage_comparisons\":[", f);
	for (int i = 0; i < sr->n; i++) {
		const struct run_cell *x = &sr->cell[i];

		fprintf(f, "%s{\"workload\":\"timer\",\"class\":\"%s\",\"figure\":\"%s\",\"scale\":\"%s\",\"a\":\"A\","
			   "\"b\":\"B\",\"arm\":", i ? "," : "", attrib_class_key(x->c), ab_stage_cell_name(x->cell),
			x->cell == AB_ST_SHARE ? "fraction" : "us");
		json_write_string(f, x->arm);
		fprintf(f, ",\"unit\":\"run\",\"blocks\":%d,\"exact\":%s", x->j.blocks, x->j.exact ? "true" : "false");
		json_write_member_number(f, "p", x->j.p);
		json_write_member_number(f, "p_floor", x->j.floor);
		json_write_member_number(f, "a_median", x->ma);
		json_write_member_number(f, "b_median", x->mb);
		json_write_member_number(f, "shift", x->j.effect);
		fputs(",\"shift_ci\":[", f);
		json_write_number(f, x->j.lo);
		fputc(',', f);
		json_write_number(f, x->j.hi);
		fputc(']', f);
		if (sr->judged)
			fprintf(f, ",\"holm_reject\":%s,\"moved\":%s", x->j.reject ? "true" : "false",
				x->moved ? "true" : "false");
		fputc('}', f);
	}
	fputs("],\"stage_verdicts\":[", f);
	for (int i = 0, first = 1; sr->judged && i < sr->n; i++) {
		if (i && !strcmp(sr->cell[i].arm, sr->cell[i - 1].arm))
			continue;
		int n = 0;

		fprintf(f, "%s{\"workload\":\"timer\",\"a\":\"A\",\"b\":\"B\",\"arm\":", first ? "" : ",");
		json_write_string(f, sr->cell[i].arm);
		fputs(",\"moved\":[", f);
		for (int k = i; k < sr->n && !strcmp(sr->cell[k].arm, sr->cell[i].arm); k++)
			if (sr->cell[k].moved)
				fprintf(f, "%s\"%s.%s\"", n++ ? "," : "", attrib_class_key(sr->cell[k].c),
					ab_stage_cell_name(sr->cell[k].cell));
		fputs("]}", f);
		first = 0;
	}
	fputc(']', f);
}

void ab_stage_runs_free(struct ab_stage_runs *sr)
{
	free(sr);
}
