// SPDX-License-Identifier: MIT
/* Bench figures: collection, summary, JSON and the table (bench/bench.h). */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "bench/bench.h"
#include "ab/abstats.h"
#include "core/json.h"

struct bench_figure *bench_figure(struct bench_report *r, const char *name, const char *unit,
				  bool higher_better)
{
	for (size_t i = 0; i < r->nfig; i++)
		if (!strcmp(r->fig[i].name, name))
			return &r->fig[i];
	if (r->nfig == BENCH_MAX_FIGURES)
		return NULL;
	struct bench_figure *f = &r->fig[r->nfig++];

	memset(f, 0, sizeof(*f));
	snprintf(f->name, sizeof(f->name), "%s", name);
	snprintf(f->unit, sizeof(f->unit), "%s", unit);
	f->higher_better = higher_better;
	return f;
}

int bench_add(struct bench_report *r, const char *name, const char *unit, bool higher_better, double v)
{
	struct bench_figure *f = bench_figure(r, name, unit, higher_better);

	if (!f || !isfinite(v) || f->n == BENCH_MAX_SAMPLES)
		return -1;
	f->x[f->n++] = v;
	return 0;
}

void bench_ratio(struct bench_report *r, const char *name, double value, double goal, bool goal_max,
		 const char *what)
{
	if (r->nratio == BENCH_MAX_FIGURES || !isfinite(value))
		return;
	struct bench_ratio *q = &r->ratio[r->nratio++];

	snprintf(q->name, sizeof(q->name), "%s", name);
	snprintf(q->what, sizeof(q->what), "%s", what);
	q->value = value;
	q->goal = goal;
	q->goal_max = goal_max;
}

void bench_ratio_of(struct bench_report *r, const char *name, const char *num, const char *den, double by,
		    double goal, bool goal_max, const char *what)
{
	const struct bench_figure *a = bench_find(r, num), *b = den ? bench_find(r, den) : NULL;
	double lo, hi, ma, mb = by;

	if (!a || !a->n || (den && (!b || !b->n)))
		return;
	bench_summary(a, &lo, &ma, &hi);
	if (b)
		bench_summary(b, &lo, &mb, &hi);
	if (mb == 0 || r->nratio == BENCH_MAX_FIGURES)
		return;
	bench_ratio(r, name, ma / mb, goal, goal_max, what);
	struct bench_ratio *q = &r->ratio[r->nratio - 1];

	snprintf(q->num, sizeof(q->num), "%s", num);
	snprintf(q->den, sizeof(q->den), "%s", den ? den : "");
	q->by = den ? 0 : by;
}

const struct bench_figure *bench_find(const struct bench_report *r, const char *name)
{
	for (size_t i = 0; i < r->nfig; i++)
		if (!strcmp(r->fig[i].name, name))
			return &r->fig[i];
	return NULL;
}

void bench_summary(const struct bench_figure *f, double *min, double *median, double *max)
{
	double s[BENCH_MAX_SAMPLES];

	memcpy(s, f->x, f->n * sizeof(*s));
	ab_sort(s, f->n);
	*min = s[0];
	*max = s[f->n - 1];
	*median = ab_quantile_sorted(s, f->n, 0.5);
}

void bench_write_json(const struct bench_report *r, FILE *f)
{
	fputs("{\"vmm_bench\":1,\"where\":", f);
	json_write_string(f, r->where);
	fputs(",\"figures\":[", f);
	for (size_t i = 0; i < r->nfig; i++) {
		const struct bench_figure *g = &r->fig[i];
		double lo = 0, med = 0, hi = 0;

		if (g->n)
			bench_summary(g, &lo, &med, &hi);
		fprintf(f, "%s\n{\"name\":", i ? "," : "");
		json_write_string(f, g->name);
		fputs(",\"unit\":", f);
		json_write_string(f, g->unit);
		fprintf(f, ",\"better\":\"%s\",\"n\":%zu,\"min\":%.9g,\"median\":%.9g,\"max\":%.9g,\"samples\":[",
			g->higher_better ? "higher" : "lower", g->n, lo, med, hi);
		for (size_t k = 0; k < g->n; k++)
			fprintf(f, "%s%.9g", k ? "," : "", g->x[k]);
		fputs("]}", f);
	}
	fputs("],\"ratios\":[", f);
	for (size_t i = 0; i < r->nratio; i++) {
		const struct bench_ratio *q = &r->ratio[i];

		fprintf(f, "%s\n{\"name\":", i ? "," : "");
		json_write_string(f, q->name);
		fprintf(f, ",\"value\":%.9g,\"goal\":%.9g,\"goal_is\":\"%s\",", q->value, q->goal,
			q->goal_max ? "max" : "min");
		if (q->num[0]) { /* what bench_judge needs */
			fputs("\"num\":", f);
			json_write_string(f, q->num);
			if (q->den[0]) {
				fputs(",\"den\":", f);
				json_write_string(f, q->den);
			} else {
				fprintf(f, ",\"by\":%.9g", q->by);
			}
			fputc(',', f);
		}
		fputs("\"what\":", f);
		json_write_string(f, q->what);
		fputc('}', f);
	}
	fputs("]}\n", f);
}

static const char *const peers[] = { "qemu", "qemu_vhost", "kvmtool" };

/* Goals against a peer (issue 22): vmm / peer medians. */
static const struct {
	const char *figure, *peer;
	double goal;
	bool goal_max;
} peer_goals[] = {
	{ "startup.guest_init", "qemu", 0.8, true },
	/* the poweroff payload's launch to exit: launch to the first instruction plus the teardown */
	{ "startup.first_instruction_exit", "qemu", 0.5, true },
	/* launch to the first kvm_entry on the host: the goal's own figure, no teardown in it */
	{ "startup.first_entry", "qemu", 0.5, true },
	{ "startup.guest_init", "kvmtool", 0.8, true },
	{ "startup.first_instruction_exit", "kvmtool", 0.5, true },
	{ "startup.first_entry", "kvmtool", 0.5, true },
	{ "blk.randread_4k.qd32", "qemu", 1.2, false },
	{ "blk.randread_4k.qd1", "qemu", 1.0, false },
};

const char *bench_peer_of(const char *name, char *peer, size_t size)
{
	for (size_t i = 0; i < sizeof(peers) / sizeof(peers[0]); i++) {
		size_t n = strlen(peers[i]);

		if (!strncmp(name, peers[i], n) && name[n] == '.' && name[n + 1]) {
			snprintf(peer, size, "%s", peers[i]);
			return name + n + 1;
		}
	}
	return NULL;
}

bool bench_peer_ratio(const struct bench_report *r, size_t i, struct bench_peer_ratio *out)
{
	for (size_t k = 0; k < r->nfig; k++) {
		const struct bench_figure *p = &r->fig[k], *v;
		const char *base = bench_peer_of(p->name, out->peer_name, sizeof(out->peer_name));
		double lo, hi;

		/* a pair counts only with samples on both sides and the same unit and direction */
		if (!base || !(v = bench_find(r, base)) || !v->n || !p->n || strcmp(v->unit, p->unit) ||
		    v->higher_better != p->higher_better)
			continue;
		bench_summary(v, &lo, &out->vmm_median, &hi);
		bench_summary(p, &lo, &out->peer_median, &hi);
		if (out->peer_median == 0 || i--)
			continue;
		out->vmm = v;
		out->peer = p;
		out->ratio = out->vmm_median / out->peer_median;
		out->goal = 0;
		out->goal_max = false;
		for (size_t g = 0; g < sizeof(peer_goals) / sizeof(peer_goals[0]); g++)
			if (!strcmp(peer_goals[g].figure, base) && !strcmp(peer_goals[g].peer, out->peer_name)) {
				out->goal = peer_goals[g].goal;
				out->goal_max = peer_goals[g].goal_max;
			}
		return true;
	}
	return false;
}

static void print_peers(const struct bench_report *r, FILE *f)
{
	struct bench_peer_ratio q;

	if (!bench_peer_ratio(r, 0, &q))
		return;
	fprintf(f, "%-40s %-10s %-8s %12s %12s %9s %9s  %s\n", "vmm / peer (medians)", "peer", "unit", "vmm",
		"peer", "vmm/peer", "goal", "verdict");
	for (size_t i = 0; bench_peer_ratio(r, i, &q); i++) {
		char goal[24] = "-";
		bool ahead = q.vmm->higher_better ? q.ratio > 1 : q.ratio < 1;
		const char *verdict = q.ratio == 1 ? "even" : ahead ? "vmm ahead" : "vmm behind";

		if (q.goal > 0)
			snprintf(goal, sizeof(goal), "%s %.3g", q.goal_max ? "<=" : ">=", q.goal);
		fprintf(f, "%-40s %-10s %-8s %12.4g %12.4g %9.3f %9s  %s%s\n", q.vmm->name, q.peer_name, q.vmm->unit,
			q.vmm_median, q.peer_median, q.ratio, goal, verdict,
			q.goal <= 0 ? "" : (q.goal_max ? q.ratio <= q.goal : q.ratio >= q.goal) ? " [met]" : " [NOT met]");
	}
}

void bench_print_table(const struct bench_report *r, FILE *f)
{
	fprintf(f, "vmm bench (%s): min / median / max over n repetitions\n", r->where);
	fprintf(f, "%-40s %-8s %4s %12s %12s %12s\n", "figure", "unit", "n", "min", "median", "max");
	for (size_t i = 0; i < r->nfig; i++) {
		const struct bench_figure *g = &r->fig[i];
		double lo, med, hi;

		if (!g->n) {
			fprintf(f, "%-40s %-8s %4d %12s\n", g->name, g->unit, 0, "(no sample)");
			continue;
		}
		bench_summary(g, &lo, &med, &hi);
		fprintf(f, "%-40s %-8s %4zu %12.4g %12.4g %12.4g\n", g->name, g->unit, g->n, lo, med, hi);
	}
	if (r->nratio)
		fprintf(f, "%-40s %12s %12s  %s\n", "ratio", "value", "goal", "what");
	for (size_t i = 0; i < r->nratio; i++) {
		const struct bench_ratio *q = &r->ratio[i];
		char goal[24] = "-";
		const char *verdict = "";

		if (q->goal > 0) {
			snprintf(goal, sizeof(goal), "%s %.4g", q->goal_max ? "<=" : ">=", q->goal);
			verdict = (q->goal_max ? q->value <= q->goal : q->value >= q->goal) ? " [met]" : " [NOT met]";
		}
		fprintf(f, "%-40s %12.4g %12s  %s%s\n", q->name, q->value, goal, q->what, verdict);
	}
	print_peers(r, f);
}
