// SPDX-License-Identifier: MIT
/*
 * The attribution report (issue 37): per workload x class, the samples' stages as they were
 * joined, then per stage the count seen and nearest-rank median/p90/p99, the residual, the total,
 * the poll. Quantiles do not add up, so the tail is also broken down: over the samples whose
 * total is above the class's p99, the mean share of each stage (and the residual) in the total.
 * "Not visible" has no stages: it is reported as guest + hardware, never as 0. Ambiguous samples
 * are counted apart, never mixed into a class.
 */
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "core/json.h"
#include "guest/probe_proto.h"
#include "trace/trace.h"

#define REPORT_CELL_MAX 1000000 /* samples kept per workload x class; the rest are counted */
#define CELL_VECTORS 16	/* vectors tallied per cell; the rest counted together */
#define REPORT_CAP0 256
#define NSERIES (AS_MAX + 3)	/* the stages, then: */
#define S_RESIDUAL AS_MAX
#define S_TOTAL (AS_MAX + 1)
#define S_POLL (AS_MAX + 2)

struct row {
	int64_t v[NSERIES];
	bool doorbell;
};

struct cell {
	struct row *rows;
	size_t n, cap;
	uint64_t dropped, doorbell, vfio;
	uint64_t why[AMB_MAX]; /* ambiguous: the count per reason */
	uint64_t vcpu[ATTRIB_VCPUS_MAX]; /* per vCPU (a udp sample's: the one its vector reached) */
	struct {
		int32_t irq;
		uint64_t n;
	} vec[CELL_VECTORS]; /* the samples through a passed-through device's vector, per vector */
	size_t nvec;
	uint64_t vec_other;  /* through vectors past CELL_VECTORS */
};

struct attrib_report {
	struct cell c[PROBE_W_MAX][AC_MAX];
	struct {
		int32_t irq;
		char name[24];
	} names[ATTRIB_REPORT_NAMES];
	size_t nnames;
	uint64_t unknown; /* samples of no known workload or class */
};

/* One series' nearest-rank quantiles over the samples where it was seen. */
struct quant {
	size_t n;
	int64_t p50, p90, p99;
};

/* The tail: samples above the total's p99, and their mean shares (stages, then the residual). */
struct tail {
	size_t n;
	int64_t above; /* the p99 they are above */
	bool ties;     /* none was above: the tail is the samples at it */
	double pct[AS_MAX + 1];
};

void attrib_report_name_irq(struct attrib_report *r, int32_t irq, const char *name)
{
	if (r->nnames < ATTRIB_REPORT_NAMES) {
		r->names[r->nnames].irq = irq;
		snprintf(r->names[r->nnames++].name, sizeof(r->names[0].name), "%s", name);
	}
}

/* irq's name, or "irqN" into buf */
static const char *irq_name(const struct attrib_report *r, int32_t irq, char *buf, size_t n)
{
	for (size_t i = 0; i < r->nnames; i++)
		if (r->names[i].irq == irq)
			return r->names[i].name;
	snprintf(buf, n, "irq%d", irq);
	return buf;
}

static void count_vector(struct cell *c, int32_t irq)
{
	for (size_t i = 0; i < c->nvec; i++)
		if (c->vec[i].irq == irq) {
			c->vec[i].n++;
			return;
		}
	if (c->nvec < CELL_VECTORS)
		c->vec[c->nvec++] = (__typeof__(c->vec[0])){ irq, 1 };
	else
		c->vec_other++;
}

struct attrib_report *attrib_report_new(void)
{
	return calloc(1, sizeof(struct attrib_report));
}

void attrib_report_free(struct attrib_report *r)
{
	if (!r)
		return;
	for (unsigned int w = 0; w < PROBE_W_MAX; w++)
		for (unsigned int c = 0; c < AC_MAX; c++)
			free(r->c[w][c].rows);
	free(r);
}

static int cell_grow(struct cell *c)
{
	size_t cap = c->cap ? c->cap * 2 : REPORT_CAP0;

	if (cap > REPORT_CELL_MAX)
		cap = REPORT_CELL_MAX;
	struct row *p = realloc(c->rows, cap * sizeof(*p));

	if (!p)
		return -1;
	c->rows = p;
	c->cap = cap;
	return 0;
}

void attrib_report_add(struct attrib_report *r, const struct attrib_sample *s, const struct attrib_result *res)
{
	if (s->workload < 1 || s->workload > PROBE_W_MAX || res->cls >= AC_MAX) {
		r->unknown++;
		return;
	}
	struct cell *c = &r->c[s->workload - 1][res->cls];

	if (res->cls == AC_AMBIGUOUS && res->why < AMB_MAX)
		c->why[res->why]++;
	if (s->vcpu < ATTRIB_VCPUS_MAX)
		c->vcpu[s->vcpu]++;
	c->vfio += res->vfio;
	if (res->vfio)
		count_vector(c, res->irq);
	if (c->n >= REPORT_CELL_MAX || (c->n == c->cap && cell_grow(c) < 0)) {
		c->dropped++;
		return;
	}
	struct row *row = &c->rows[c->n++];

	memcpy(row->v, res->stage, sizeof(res->stage));
	row->v[S_RESIDUAL] = res->residual;
	row->v[S_TOTAL] = (int64_t)(s->wake - s->target);
	row->v[S_POLL] = res->poll_ns;
	row->doorbell = res->doorbell;
	c->doorbell += res->doorbell;
}

/* ---- the numbers ---- */

static int cmp_i64(const void *a, const void *b)
{
	int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;

	return (x > y) - (x < y);
}

/* nearest rank: the smallest value with at least pct% of the samples at or below it */
static int64_t rank(const int64_t *sorted, size_t n, unsigned int pct)
{
	size_t k = (pct * n + 99) / 100;

	return sorted[k ? k - 1 : 0];
}

/* A stage or the poll is seen when >= 0 (-1: not seen); the residual and total always are. */
static bool seen(unsigned int series, int64_t v)
{
	return series == S_RESIDUAL || series == S_TOTAL || v >= 0;
}

static struct quant quantiles(const struct cell *c, unsigned int series)
{
	struct quant q = { 0 };
	int64_t *v = malloc((c->n ? c->n : 1) * sizeof(*v));

	if (!v)
		return q;
	for (size_t i = 0; i < c->n; i++)
		if (seen(series, c->rows[i].v[series]))
			v[q.n++] = c->rows[i].v[series];
	if (q.n) {
		qsort(v, q.n, sizeof(*v), cmp_i64);
		q.p50 = rank(v, q.n, 50);
		q.p90 = rank(v, q.n, 90);
		q.p99 = rank(v, q.n, 99);
	}
	free(v);
	return q;
}

/* A stage no sample of the class saw did not happen there (a poll hit's run queue): it gets no
 * share, not a share of 0. */
static bool ever_seen(const struct cell *c, unsigned int series)
{
	for (size_t i = 0; i < c->n; i++)
		if (c->rows[i].v[series] >= 0)
			return true;
	return false;
}

static bool in_tail(const struct row *row, const struct tail *t, bool ties)
{
	return ties ? row->v[S_TOTAL] >= t->above : row->v[S_TOTAL] > t->above;
}

/* Mean shares over the samples above the total's p99; when none is above (the p99 is the
 * maximum), over those at it: the tail is never empty. */
static struct tail tail_of(const struct cell *c)
{
	struct tail t = { .above = quantiles(c, S_TOTAL).p99 };
	size_t used = 0;

	t.ties = true;
	for (size_t i = 0; i < c->n && t.ties; i++)
		if (in_tail(&c->rows[i], &t, false))
			t.ties = false;
	for (size_t i = 0; i < c->n; i++) {
		const struct row *row = &c->rows[i];

		if (!in_tail(row, &t, t.ties))
			continue;
		t.n++;
		if (row->v[S_TOTAL] <= 0)
			continue; /* no share of nothing */
		used++;
		for (unsigned int s = 0; s <= AS_MAX; s++)
			if (row->v[s] > 0)
				t.pct[s] += 100.0 * (double)row->v[s] / (double)row->v[S_TOTAL];
	}
	for (unsigned int s = 0; s <= AS_MAX && used; s++)
		t.pct[s] /= (double)used;
	return t;
}

static size_t workload_n(const struct attrib_report *r, unsigned int w)
{
	size_t n = 0;

	for (unsigned int c = 0; c < AC_MAX; c++)
		n += r->c[w][c].n;
	return n;
}

static const char *workload_name(unsigned int w)
{
	const char *name = probe_workload_name(w + 1);

	return name ? name : "?";
}

/* ---- text ---- */

static void us(char *buf, size_t size, int64_t ns)
{
	snprintf(buf, size, "%.2f µs", (double)ns / 1000.0);
}

static void text_quant(FILE *f, const char *name, struct quant q, size_t n)
{
	char count[32] = "", a[32], b[32], c[32];

	if (!q.n)
		return; /* never happened in this class (a poll hit's run queue): not a 0 */
	if (q.n < n)
		snprintf(count, sizeof(count), "(n=%zu)", q.n);
	us(a, sizeof(a), q.p50);
	us(b, sizeof(b), q.p90);
	us(c, sizeof(c), q.p99);
	fprintf(f, "  %-10s %-10s median %s  p90 %s  p99 %s\n", name, count, a, b, c);
}

static void text_tail(FILE *f, const struct cell *c)
{
	struct tail t = tail_of(c);
	char above[32];

	us(above, sizeof(above), t.above);
	fprintf(f, "  tail (n=%zu, total %s %s):", t.n, t.ties ? "at" : "above", above);
	for (unsigned int s = 0; s < AS_MAX; s++)
		if (ever_seen(c, s))
			fprintf(f, " %s %.1f%%", attrib_stage_name(s), t.pct[s]);
	fprintf(f, " residual %.1f%%\n", t.pct[AS_MAX]);
}

static void text_class(FILE *f, const struct attrib_report *r, const struct cell *c, unsigned int cls, const char *wname, size_t wn)
{
	fprintf(f, "%s  %s  n=%zu (%.1f%%)", wname, attrib_class_name(cls), c->n, 100.0 * (double)c->n / (double)wn);
	if (c->doorbell)
		fprintf(f, "  doorbell %" PRIu64, c->doorbell);
	if (c->vfio) { /* and which vectors */
		char b[16];

		fprintf(f, "  vfio vector %" PRIu64 " (", c->vfio);
		for (size_t i = 0; i < c->nvec; i++)
			fprintf(f, "%s%s:%" PRIu64, i ? " " : "", irq_name(r, c->vec[i].irq, b, sizeof(b)), c->vec[i].n);
		if (c->vec_other)
			fprintf(f, " other:%" PRIu64, c->vec_other);
		fputc(')', f);
	}
	if (!strcmp(wname, "udp")) { /* the vCPUs the answers' vectors reached */
		fputs("  vCPUs", f);
		for (unsigned int v = 0; v < ATTRIB_VCPUS_MAX; v++)
			if (c->vcpu[v])
				fprintf(f, " %u:%" PRIu64, v, c->vcpu[v]);
	}
	if (c->dropped)
		fprintf(f, "  (%" PRIu64 " more not kept)", c->dropped);
	fputc('\n', f);
	if (cls == AC_AMBIGUOUS) { /* counted with why, never broken down as if it belonged to a class */
		fputs("  why:", f);
		for (unsigned int w = 1; w < AMB_MAX; w++)
			if (c->why[w])
				fprintf(f, " %s %" PRIu64, attrib_ambiguity_key(w), c->why[w]);
		fputc('\n', f);
		return;
	}
	if (cls == AC_NOT_VISIBLE) {
		struct quant q = quantiles(c, S_TOTAL);
		char a[32], b[32], d[32];

		us(a, sizeof(a), q.p50);
		us(b, sizeof(b), q.p90);
		us(d, sizeof(d), q.p99);
		fprintf(f, "  guest + hardware: median %s  p90 %s  p99 %s (no host event to split it)\n", a, b, d);
		return;
	}
	for (unsigned int s = 0; s < AS_MAX; s++)
		text_quant(f, attrib_stage_name(s), quantiles(c, s), c->n);
	text_quant(f, "residual", quantiles(c, S_RESIDUAL), c->n);
	text_quant(f, "total", quantiles(c, S_TOTAL), c->n);
	text_quant(f, "poll", quantiles(c, S_POLL), c->n);
	text_tail(f, c);
}

void attrib_report_text(const struct attrib_report *r, FILE *f)
{
	fprintf(f, "latency attribution: host stages per sample (median, p90, p99)\n");
	for (unsigned int w = 0; w < PROBE_W_MAX; w++) {
		size_t wn = workload_n(r, w);

		for (unsigned int c = 0; c < AC_MAX && wn; c++)
			if (r->c[w][c].n)
				text_class(f, r, &r->c[w][c], c, workload_name(w), wn);
	}
	if (r->unknown)
		fprintf(f, "%" PRIu64 " samples of no known workload or class\n", r->unknown);
}

/* ---- JSON ---- */

static void json_key(FILE *f, const char *key)
{
	json_write_string(f, key);
	fputc(':', f);
}

static void json_quant(FILE *f, const char *key, struct quant q, bool with_n)
{
	json_key(f, key);
	fputc('{', f);
	if (with_n)
		fprintf(f, "\"n\":%zu%s", q.n, q.n ? "," : "");
	if (q.n || !with_n)
		fprintf(f, "\"p50\":%" PRId64 ",\"p90\":%" PRId64 ",\"p99\":%" PRId64, q.p50, q.p90, q.p99);
	fputc('}', f);
}

static void json_tail(FILE *f, const struct cell *c)
{
	struct tail t = tail_of(c);

	fprintf(f, ",\"tail\":{\"n\":%zu,\"above_ns\":%" PRId64 ",\"share_pct\":{", t.n, t.above);
	for (unsigned int s = 0; s < AS_MAX; s++) {
		if (!ever_seen(c, s))
			continue;
		json_key(f, attrib_stage_name(s));
		fprintf(f, "%.1f,", t.pct[s]);
	}
	json_key(f, "residual");
	fprintf(f, "%.1f", t.pct[AS_MAX]);
	fputs("}}", f);
}

static void json_class(FILE *f, const struct attrib_report *r, const struct cell *c, unsigned int cls, size_t wn)
{
	fputc('{', f);
	json_key(f, "class");
	json_write_string(f, attrib_class_key(cls));
	fprintf(f, ",\"n\":%zu,\"share\":%.4f,\"doorbell\":%" PRIu64 ",\"vfio\":%" PRIu64 ",\"dropped\":%" PRIu64
		   ",\"vcpus\":[", c->n, (double)c->n / (double)wn, c->doorbell, c->vfio, c->dropped);
	unsigned int last = 0;

	for (unsigned int v = 0; v < ATTRIB_VCPUS_MAX; v++)
		if (c->vcpu[v])
			last = v + 1;
	for (unsigned int v = 0; v < last; v++)
		fprintf(f, "%s%" PRIu64, v ? "," : "", c->vcpu[v]);
	fputs("],\"vectors\":{", f);
	for (size_t i = 0; i < c->nvec; i++) {
		char b[16];

		fputs(i ? "," : "", f);
		json_write_string(f, irq_name(r, c->vec[i].irq, b, sizeof(b)));
		fprintf(f, ":%" PRIu64, c->vec[i].n);
	}
	fputs("},", f);
	json_quant(f, "total_ns", quantiles(c, S_TOTAL), false);
	if (cls == AC_NOT_VISIBLE) {
		fputc(',', f);
		json_quant(f, "guest_hardware_ns", quantiles(c, S_TOTAL), false);
	} else if (cls == AC_AMBIGUOUS) {
		fputs(",\"why\":{", f);
		for (unsigned int w = 1, first = 1; w < AMB_MAX; w++)
			if (c->why[w]) {
				fprintf(f, "%s\"%s\":%" PRIu64, first ? "" : ",", attrib_ambiguity_key(w), c->why[w]);
				first = 0;
			}
		fputc('}', f);
	} else {
		fputs(",\"stages\":{", f);
		for (unsigned int s = 0; s < AS_MAX; s++) {
			json_quant(f, attrib_stage_name(s), quantiles(c, s), true);
			if (s + 1 < AS_MAX)
				fputc(',', f);
		}
		fputs("},", f);
		json_quant(f, "residual_ns", quantiles(c, S_RESIDUAL), true);
		fputc(',', f);
		json_quant(f, "poll_ns", quantiles(c, S_POLL), true);
		json_tail(f, c);
	}
	fputc('}', f);
}

void attrib_report_json(const struct attrib_report *r, FILE *f)
{
	bool first_w = true;

	fputs("{\"workloads\":[", f);
	for (unsigned int w = 0; w < PROBE_W_MAX; w++) {
		size_t wn = workload_n(r, w);
		bool first_c = true;

		if (!wn)
			continue;
		fprintf(f, "%s{", first_w ? "" : ",");
		first_w = false;
		json_key(f, "workload");
		json_write_string(f, workload_name(w));
		fprintf(f, ",\"n\":%zu,\"classes\":[", wn);
		for (unsigned int c = 0; c < AC_MAX; c++) {
			if (!r->c[w][c].n)
				continue;
			if (!first_c)
				fputc(',', f);
			first_c = false;
			json_class(f, r, &r->c[w][c], c, wn);
		}
		fputs("]}", f);
	}
	fprintf(f, "],\"unknown\":%" PRIu64 "}\n", r->unknown);
}
