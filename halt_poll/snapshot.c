// SPDX-License-Identifier: MIT
/*
 * Snapshots of KVM stats (the VM and each vCPU), deltas between two of them, and the two views of
 * a delta: a text report and JSON. Reports show what happened in a phase ("boot-end" to "exit"),
 * not totals since the fd was opened with boot mixed in; both views render the same hp_delta.
 */
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "core/hot.h"
#include "halt_poll/halt_poll.h"
#include "core/json.h"
#include "core/log.h"

VMM_HOT_VF int hp_set_add(struct hp_set *set, const char *name, int fd)
{
	struct hp_source *src = realloc(set->src, (set->nr + 1) * sizeof(*src));
	int r;

	if (!src) {
		pr_err("stats %s: out of memory", name);
		if (fd >= 0)
			close(fd);
		return -ENOMEM;
	}
	set->src = src;
	src += set->nr;
	snprintf(src->name, sizeof(src->name), "%s", name);
	r = hp_stats_open(&src->st, fd);
	if (r < 0)
		return r;
	set->nr++;
	return 0;
}

VMM_HOT_VF void hp_set_free(struct hp_set *set)
{
	for (int i = 0; i < set->nr; i++)
		hp_stats_close(&set->src[i].st);
	free(set->src);
	memset(set, 0, sizeof(*set));
}

VMM_HOT_VF static uint64_t **alloc_blocks(const struct hp_set *set)
{
	uint64_t **d = calloc(set->nr ? set->nr : 1, sizeof(*d));

	for (int i = 0; d && i < set->nr; i++) {
		d[i] = calloc(set->src[i].st.data_words, sizeof(uint64_t));
		if (!d[i]) {
			while (i--)
				free(d[i]);
			free(d);
			return NULL;
		}
	}
	return d;
}

static void free_blocks(uint64_t **d, int nr)
{
	for (int i = 0; d && i < nr; i++)
		free(d[i]);
	free(d);
}

VMM_HOT_VF int hp_snap_take(struct hp_snap *sn, struct hp_set *set, const char *label)
{
	struct timespec t;
	int r;

	memset(sn, 0, sizeof(*sn));
	snprintf(sn->label, sizeof(sn->label), "%s", label);
	sn->data = alloc_blocks(set);
	if (!sn->data) {
		pr_err("stats snapshot '%s': out of memory", label);
		return -ENOMEM;
	}
	sn->nr = set->nr;
	clock_gettime(CLOCK_MONOTONIC, &t);
	sn->t_ns = t.tv_sec * 1000000000ull + t.tv_nsec;
	for (int i = 0; i < set->nr; i++) {
		struct hp_stats *st = &set->src[i].st;

		r = hp_stats_read(st); /* one pread per fd */
		if (r < 0) {
			hp_snap_free(sn);
			return r;
		}
		memcpy(sn->data[i], st->data, st->data_words * sizeof(uint64_t));
	}
	return 0;
}

VMM_HOT_VF void hp_snap_free(struct hp_snap *sn)
{
	free_blocks(sn->data, sn->nr);
	memset(sn, 0, sizeof(*sn));
}

VMM_HOT_VF int hp_delta_compute(struct hp_delta *d, const struct hp_set *set, const struct hp_snap *a, const struct hp_snap *b)
{
	memset(d, 0, sizeof(*d));
	if (a->nr != set->nr || b->nr != set->nr || b->t_ns < a->t_ns) {
		pr_err("stats delta '%s' -> '%s': the snapshots are of another set of sources or out of order",
		       a->label, b->label);
		return -EINVAL;
	}
	snprintf(d->from, sizeof(d->from), "%s", a->label);
	snprintf(d->to, sizeof(d->to), "%s", b->label);
	d->dt_ns = b->t_ns - a->t_ns;
	d->data = alloc_blocks(set);
	if (!d->data) {
		pr_err("stats delta '%s' -> '%s': out of memory", a->label, b->label);
		return -ENOMEM;
	}
	d->nr = set->nr;
	for (int i = 0; i < set->nr; i++) {
		const struct hp_stats *st = &set->src[i].st;

		for (int k = 0; k < st->nr; k++) {
			const struct hp_stat *s = &st->stat[k];
			uint32_t type = s->flags & KVM_STATS_TYPE_MASK;

			for (unsigned int j = 0; j < s->size; j++) {
				uint64_t va = a->data[i][s->offset + j], vb = b->data[i][s->offset + j];

				/* instant: the value at b; peak: the high-water mark since the fd was
				 * opened, which a delta cannot narrow to the phase */
				if (type == KVM_STATS_TYPE_INSTANT || type == KVM_STATS_TYPE_PEAK) {
					d->data[i][s->offset + j] = vb;
					continue;
				}
				if (vb < va) {
					pr_err("stats delta '%s' -> '%s': %s %s went backwards (%llu -> %llu); "
					       "were the snapshots taken from different fds?", a->label, b->label,
					       set->src[i].name, s->name, (unsigned long long)va, (unsigned long long)vb);
					hp_delta_free(d);
					return -ERANGE;
				}
				d->data[i][s->offset + j] = vb - va;
			}
		}
	}
	return 0;
}

VMM_HOT_VF void hp_delta_free(struct hp_delta *d)
{
	free_blocks(d->data, d->nr);
	memset(d, 0, sizeof(*d));
}

VMM_HOT_VF const uint64_t *hp_delta_values(const struct hp_delta *d, int src, const struct hp_stat *s)
{
	return d->data[src] + s->offset;
}

/* A value in human units: times scaled to ns/us/ms/s, everything else as the number. */
VMM_HOT_VF void hp_fmt_value(char *buf, size_t len, const struct hp_stat *s, double raw)
{
	double v = hp_stat_to_base_units(s, raw);

	if ((s->flags & KVM_STATS_UNIT_MASK) != KVM_STATS_UNIT_SECONDS)
		snprintf(buf, len, "%.15g", v);
	else if (v == 0)
		snprintf(buf, len, "0");
	else if (v < 1e-6)
		snprintf(buf, len, "%.4gns", v * 1e9);
	else if (v < 1e-3)
		snprintf(buf, len, "%.4gus", v * 1e6);
	else if (v < 1)
		snprintf(buf, len, "%.4gms", v * 1e3);
	else
		snprintf(buf, len, "%.4gs", v);
}

VMM_HOT_VF void hp_render_table(FILE *f, const struct hp_set *set, const struct hp_delta *d, const char *const *names, int n)
{
	fprintf(f, "stats from '%s' to '%s' (%.3f s)\n%-8s", d->from, d->to, d->dt_ns / 1e9, "source");
	for (int k = 0; k < n; k++)
		fprintf(f, " %*s", (int)strlen(names[k]) > 10 ? (int)strlen(names[k]) : 10, names[k]);
	fputc('\n', f);
	for (int i = 0; i < set->nr; i++) {
		fprintf(f, "%-8s", set->src[i].name);
		for (int k = 0; k < n; k++) {
			const struct hp_stat *s = hp_stats_find(&set->src[i].st, names[k]);
			int w = (int)strlen(names[k]) > 10 ? (int)strlen(names[k]) : 10;
			char v[32] = "-";

			if (s && !hp_stat_is_hist(s))
				hp_fmt_value(v, sizeof(v), s, (double)hp_delta_values(d, i, s)[0]);
			else if (s)
				snprintf(v, sizeof(v), "%llu", (unsigned long long)hp_hist_total(s, hp_delta_values(d, i, s)));
			fprintf(f, " %*s", w, v);
		}
		fputc('\n', f);
	}
}

void hp_fmt_bucket(char *buf, size_t len, const struct hp_stat *s, unsigned int i)
{
	uint64_t lo, hi;
	char l[32], h[32];

	if (hp_hist_bucket(s, i, &lo, &hi) < 0) {
		snprintf(buf, len, "?");
		return;
	}
	hp_fmt_value(l, sizeof(l), s, (double)lo);
	if (hi != UINT64_MAX)
		hp_fmt_value(h, sizeof(h), s, (double)hi);
	if (hi == UINT64_MAX)
		snprintf(buf, len, ">= %s", l);
	else if (lo == 0)
		snprintf(buf, len, "< %s", h);
	else
		snprintf(buf, len, "[%s, %s)", l, h);
}

void hp_render_hist(FILE *f, const char *title, const struct hp_stat *s, const uint64_t *b, int width)
{
	uint64_t total = hp_hist_total(s, b), max = 0;
	int first = -1, last = -1;
	char l[48];

	for (int i = 0; i < s->size; i++) {
		if (b[i] && first < 0)
			first = i;
		if (b[i])
			last = i;
		if (b[i] > max)
			max = b[i];
	}
	fprintf(f, "%s %s: %llu samples", title, s->name, (unsigned long long)total);
	if (!total) {
		fputc('\n', f);
		return;
	}
	for (int k = 0; k < 3; k++) {
		static const double q[] = { 0.5, 0.9, 0.99 };
		static const char *const qn[] = { "p50", "p90", "p99" };
		unsigned int i;

		if (hp_hist_quantile_bucket(s, b, q[k], &i) == 0) {
			hp_fmt_bucket(l, sizeof(l), s, i);
			fprintf(f, ", %s %s", qn[k], l);
		}
	}
	fputc('\n', f);
	if (width > 80)
		width = 80;
	for (int i = first; width > 0 && i <= last; i++) {
		int bar = (int)((b[i] * (uint64_t)width + max - 1) / max);

		hp_fmt_bucket(l, sizeof(l), s, i);
		fprintf(f, "  %22s %10llu %.*s\n", l, (unsigned long long)b[i], bar,
			"################################################################################");
	}
}

static const char *json_unit(uint32_t flags)
{
	static const char *const u[] = { "none", "bytes", "seconds", "cycles", "boolean" };

	return u[(flags & KVM_STATS_UNIT_MASK) >> KVM_STATS_UNIT_SHIFT]; /* open() refused others */
}

static const char *json_semantics(uint32_t flags)
{
	switch (flags & KVM_STATS_TYPE_MASK) {
	case KVM_STATS_TYPE_INSTANT: return "value at 'to'";
	case KVM_STATS_TYPE_PEAK: return "peak since the fd was opened";
	default: return "change from 'from' to 'to'";
	}
}

int hp_write_json(FILE *f, const struct hp_set *set, const struct hp_delta *d)
{
	fputs("{\"from\":", f);
	json_write_string(f, d->from);
	fputs(",\"to\":", f);
	json_write_string(f, d->to);
	fprintf(f, ",\"dt_ns\":%llu,\"sources\":[", (unsigned long long)d->dt_ns);
	for (int i = 0; i < set->nr; i++) {
		const struct hp_stats *st = &set->src[i].st;

		fputs(i ? ",{\"name\":" : "{\"name\":", f);
		json_write_string(f, set->src[i].name);
		fputs(",\"id\":", f);
		json_write_string(f, st->id);
		fputs(",\"stats\":[", f);
		for (int k = 0; k < st->nr; k++) {
			const struct hp_stat *s = &st->stat[k];
			const uint64_t *v = hp_delta_values(d, i, s);

			fputs(k ? ",{\"name\":" : "{\"name\":", f);
			json_write_string(f, s->name);
			fprintf(f, ",\"type\":\"%s\",\"unit\":\"%s\",\"base\":%u,\"exponent\":%d,\"semantics\":\"%s\"",
				hp_stat_type_name(s->flags), json_unit(s->flags), hp_stat_base(s), s->exponent,
				json_semantics(s->flags));
			if (hp_stat_is_hist(s)) {
				fprintf(f, ",\"bucket_size\":%u,\"buckets\":[", s->bucket_size);
				for (unsigned int j = 0; j < s->size; j++)
					fprintf(f, "%s%llu", j ? "," : "", (unsigned long long)v[j]);
				fputc(']', f);
			} else if (s->size == 1) {
				fprintf(f, ",\"value\":%llu", (unsigned long long)v[0]);
			} else {
				fputs(",\"values\":[", f);
				for (unsigned int j = 0; j < s->size; j++)
					fprintf(f, "%s%llu", j ? "," : "", (unsigned long long)v[j]);
				fputc(']', f);
			}
			fputc('}', f);
		}
		fputs("]}", f);
	}
	fputs("]}\n", f);
	if (ferror(f)) {
		pr_err("stats JSON: write failed; check the output file's disk and permissions");
		return -EIO;
	}
	return 0;
}

void hp_write_json_compact(FILE *f, const struct hp_set *set, const struct hp_delta *d)
{
	fputs("{\"from\":", f);
	json_write_string(f, d->from);
	fputs(",\"to\":", f);
	json_write_string(f, d->to);
	fprintf(f, ",\"dt_ns\":%llu,\"values\":{", (unsigned long long)d->dt_ns);
	for (int i = 0; i < set->nr; i++) {
		const struct hp_stats *st = &set->src[i].st;
		bool first = true;

		fputs(i ? "," : "", f);
		json_write_string(f, set->src[i].name);
		fputs(":{", f);
		for (int k = 0; k < st->nr; k++) {
			const struct hp_stat *s = &st->stat[k];
			const uint64_t *v = hp_delta_values(d, i, s);

			if (hp_stat_is_hist(s) || s->size != 1 || !v[0])
				continue;
			fputs(first ? "" : ",", f);
			first = false;
			json_write_string(f, s->name);
			fprintf(f, ":%llu", (unsigned long long)v[0]);
		}
		fputc('}', f);
	}
	fputs("}}", f);
}
