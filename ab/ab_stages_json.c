// SPDX-License-Identifier: MIT
/*
 * An epoch's stage figures in vmm ab --json, written beside its samples and read back by vmm ab
 * judge and vmm ab compare. Only the reduced figures are kept (a row per sample would double a
 * saved run): per class its sample count, how many saw each stage, and each stage's median. A saved
 * file may come from anywhere: every value is checked as the rest of the file is.
 */
#include <math.h>
#include <string.h>

#include "ab/ab.h"

bool ab_stage_value(const struct ab_stage_epoch *st, int c, int cell, double *v)
{
	size_t need = ab_min_samples_for(0.5);

	if (cell == AB_ST_SHARE) {
		if (st->n < need)
			return false;
		*v = (double)st->nc[c] / st->n;
		return true;
	}
	if (st->seen[c][cell] < need || !isfinite(st->med[c][cell]))
		return false;
	*v = st->med[c][cell];
	return true;
}

const char *ab_stage_cell_name(int cell)
{
	return cell == AB_ST_SHARE ? "share" : attrib_stage_name((unsigned int)cell);
}

static void uint_list(FILE *f, const uint32_t *v, int n)
{
	fputc('[', f);
	for (int i = 0; i < n; i++)
		fprintf(f, "%s%u", i ? "," : "", v[i]);
	fputc(']', f);
}

void ab_stage_epoch_json(FILE *f, const struct ab_stage_epoch *st)
{
	fprintf(f, "{\"workload\":\"timer\",\"n\":%u,\"classes\":{", st->n);
	for (int c = 0; c < AB_ST_CLASSES; c++) {
		fprintf(f, "%s\"%s\":{\"n\":%u,\"seen\":", c ? "," : "", attrib_class_key(c), st->nc[c]);
		uint_list(f, st->seen[c], AS_MAX);
		fputs(",\"median_us\":[", f);
		for (int s = 0; s < AS_MAX; s++) {
			if (s)
				fputc(',', f);
			if (st->seen[c][s] && isfinite(st->med[c][s]))
				fprintf(f, "%.3f", st->med[c][s]);
			else
				fputs("null", f);
		}
		fputs("]}", f);
	}
	fputs("}}", f);
}

static bool count_ok(const struct json *v, double max)
{
	return v && v->t == JSON_NUM && v->num >= 0 && v->num <= max && v->num == floor(v->num);
}

/* One class's member: {"n":N,"seen":[AS_MAX counts],"median_us":[AS_MAX numbers or null]} */
static const char *take_class(const struct json *v, uint32_t n_epoch, struct ab_stage_epoch *st, int c)
{
	const struct json *n = json_get(v, "n"), *seen = json_get(v, "seen"), *med = json_get(v, "median_us");

	if (!count_ok(n, n_epoch))
		return "a class whose \"n\" is not a count within its epoch's";
	st->nc[c] = (uint32_t)n->num;
	if (!seen || seen->t != JSON_NUMS || seen->n != AS_MAX || !med || (med->t != JSON_NUMS && med->t != JSON_ARR) ||
	    med->n != AS_MAX)
		return "a class without its 5 \"seen\" counts and 5 \"median_us\"";
	for (int s = 0; s < AS_MAX; s++) {
		double m = med->t == JSON_NUMS ? med->nums[s]
			 : med->items[s].t == JSON_NUM ? med->items[s].num : NAN;

		if (!(seen->nums[s] >= 0 && seen->nums[s] <= st->nc[c] && seen->nums[s] == floor(seen->nums[s])))
			return "a stage seen more often than its class has samples";
		if (med->t == JSON_ARR && med->items[s].t != JSON_NUM && med->items[s].t != JSON_NULL)
			return "a stage median that is neither a number nor null";
		st->seen[c][s] = (uint32_t)seen->nums[s];
		/* a median exactly when the stage was seen, of at most an hour */
		if (st->seen[c][s] ? !(m >= 0 && m <= 3600e6) : !isnan(m))
			return "a stage median that is not a number of us where the stage was seen, null elsewhere";
		st->med[c][s] = st->seen[c][s] ? m : NAN;
	}
	return NULL;
}

const char *ab_stage_epoch_parse(const struct json *v, struct ab_stage_epoch *st)
{
	const struct json *n, *w, *cl;
	uint32_t sum = 0;

	memset(st, 0, sizeof(*st));
	if (!v || v->t != JSON_OBJ)
		return "an epoch's \"stages\" that is not an object";
	n = json_get(v, "n");
	w = json_get(v, "workload");
	cl = json_get(v, "classes");
	if (!w || w->t != JSON_STR || strcmp(w->str, "timer") || !count_ok(n, AB_ATTR_MAX_ROWS) || !cl ||
	    cl->t != JSON_OBJ)
		return "an epoch's \"stages\" without its workload \"timer\", \"n\" and \"classes\"";
	st->n = (uint32_t)n->num;
	for (size_t i = 0; i < cl->n; i++) {
		int c = -1;

		for (int k = 0; k < AB_ST_CLASSES; k++)
			if (!strcmp(cl->keys[i], attrib_class_key(k)))
				c = k;
		if (c < 0)
			return "an epoch's \"stages\" with a class other than poll_hit, blocked, no_wait, running";
		const char *why = take_class(&cl->items[i], st->n, st, c);

		if (why)
			return why;
		sum += st->nc[c];
	}
	if (sum > st->n)
		return "an epoch's \"stages\" whose classes hold more samples than the epoch";
	for (int c = 0; c < AB_ST_CLASSES; c++)
		for (int s = 0; s < AS_MAX; s++)
			if (!st->seen[c][s])
				st->med[c][s] = NAN;
	return NULL;
}
