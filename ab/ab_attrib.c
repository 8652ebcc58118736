// SPDX-License-Identifier: MIT
/*
 * vmm ab --attribute: what a vmm run's --attribute=FILE says (vmm/attribute.c writes it), read back
 * and put into epochs. FILE is another process's output: it is parsed strictly (core/json.h) and
 * every value is checked before it becomes a figure; a FILE that fails is said and the A/B result
 * goes on without stages. Each row goes into its epoch as the probe's samples do
 * (ab_epoch_of_guest: the same clock placement and guard), and each epoch keeps only its medians.
 */
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "ab/ab.h"
#include "core/log.h"

/* Row fields: [workload, vcpu, guest_ns, class, AS_MAX stages, residual, poll] */
#define ROW_LEN (4 + AS_MAX + 2)
/* A stage, residual or poll time beyond an hour is no latency of a timer sample */
#define NS_MAX 3600e9

static const char none_key[] = "vmm: attribution: none: ";

static void stderr_line(struct ab_stderr *e)
{
	size_t k = sizeof(none_key) - 1;

	if (e->passing) { /* the end of a line too long to be the "none" line */
		fwrite(e->line, 1, e->len, stderr);
		fputc('\n', stderr);
	} else if (e->len >= k && !memcmp(e->line, none_key, k)) {
		if (!e->none[0]) /* the reason is said once, by vmm ab, when the FILE is found missing */
			snprintf(e->none, sizeof(e->none), "%.*s", (int)(e->len - k), e->line + k);
	} else if (e->len) {
		fwrite(e->line, 1, e->len, stderr);
		fputc('\n', stderr);
	}
	e->len = 0;
	e->passing = false;
}

void ab_stderr_feed(struct ab_stderr *e, const char *buf, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		if (buf[i] == '\n') {
			stderr_line(e);
			continue;
		}
		if (e->len == sizeof(e->line)) { /* a line too long to be the "none" line: passed on as is */
			fwrite(e->line, 1, e->len, stderr);
			e->len = 0;
			e->passing = true;
		}
		e->line[e->len++] = buf[i];
	}
	fflush(stderr);
}

void ab_stderr_end(struct ab_stderr *e)
{
	if (e->len || e->passing)
		stderr_line(e);
	fflush(stderr);
}

/* An integer-valued number in [lo, hi] */
static bool int_in(double v, double lo, double hi)
{
	return v >= lo && v <= hi && v == floor(v);
}

static const char *take_row(const struct json *r, struct ab_attr_row *out)
{
	if (r->t != JSON_NUMS || r->n != ROW_LEN)
		return "a row that is not a list of 11 numbers";
	const double *v = r->nums;

	if (!int_in(v[0], 1, PROBE_W_MAX))
		return "a row whose workload is not 1 to 3";
	if (!int_in(v[1], 0, ATTRIB_VCPUS_MAX - 1))
		return "a row whose vcpu is not 0 to 63";
	/* 2^53: past it a double no longer holds every nanosecond */
	if (!int_in(v[2], 0, 9007199254740992.0))
		return "a row whose guest time is not a non-negative integer of ns";
	if (!int_in(v[3], 0, AC_MAX - 1))
		return "a row whose class is not 0 to 5";
	for (int s = 0; s < AS_MAX + 2; s++) {
		double lo = s == AS_MAX ? -NS_MAX : -1; /* the residual may be negative */

		if (!int_in(v[4 + s], lo, NS_MAX))
			return "a row whose stage, residual or poll is not -1 or an integer of ns up to an hour";
	}
	*out = (struct ab_attr_row){ .guest_ns = (uint64_t)v[2], .workload = (uint8_t)v[0], .cls = (uint8_t)v[3],
				     .vcpu = (uint16_t)v[1] };
	for (int s = 0; s < AS_MAX; s++)
		out->stage[s] = (int64_t)v[4 + s];
	return NULL;
}

/* A non-negative integer member of obj, or fails */
static bool count_of(const struct json *obj, const char *key, double max, unsigned long long *out)
{
	const struct json *v = json_get(obj, key);

	if (!v || v->t != JSON_NUM || !int_in(v->num, 0, max))
		return false;
	*out = (unsigned long long)v->num;
	return true;
}

static const char *take_file(const struct json *root, size_t max_rows, struct ab_attr_file *f)
{
	const struct json *counts = json_get(root, "counts"), *trace = json_get(root, "trace"),
			  *rows = json_get(root, "samples");
	unsigned long long joined;

	if (root->t != JSON_OBJ)
		return "not a JSON object";
	if (!counts || counts->t != JSON_OBJ || !count_of(counts, "joined", 1e15, &joined))
		return "no \"counts\" object with the samples \"joined\" (a vmm run older than vmm ab --attribute?)";
	if (!trace || trace->t != JSON_OBJ || !count_of(trace, "lost", 1e18, &f->lost) ||
	    !count_of(trace, "dropped", 1e18, &f->dropped))
		return "no \"trace\" object with its \"lost\" and \"dropped\" counts";
	if (!rows || (rows->t != JSON_ARR && rows->t != JSON_NUMS))
		return "no \"samples\" list of rows";
	if (rows->n > max_rows)
		return "more rows than vmm ab takes from one run";
	if (rows->n != joined)
		return "a \"samples\" list of another length than the samples \"joined\"";
	if (rows->t == JSON_NUMS && rows->n)
		return "a row that is not a list of 11 numbers";
	if (rows->n && !(f->row = calloc(rows->n, sizeof(*f->row))))
		return "out of memory";
	for (size_t i = 0; i < rows->n; i++, f->n++) {
		const char *why = take_row(&rows->items[i], &f->row[i]);

		if (why)
			return why;
	}
	return NULL;
}

int ab_attr_parse(const char *text, size_t len, size_t max_rows, struct ab_attr_file *f, char *why, size_t whysize)
{
	struct json root;
	int r = json_parse(text, len, &root, why, whysize);

	memset(f, 0, sizeof(*f));
	if (r < 0)
		return r;
	const char *w = take_file(&root, max_rows, f);

	json_free(&root);
	if (w) {
		snprintf(why, whysize, "%s", w);
		ab_attr_file_free(f);
		return -EINVAL;
	}
	return 0;
}

void ab_attr_file_free(struct ab_attr_file *f)
{
	free(f->row);
	memset(f, 0, sizeof(*f));
}

/* One epoch's rows (idx[0..n) into f->row) reduced: counts per class and stage, and medians (us) */
static void reduce_epoch(struct ab_stage_epoch *st, const struct ab_attr_file *f, const size_t *idx, size_t n,
			 double *scratch)
{
	memset(st, 0, sizeof(*st));
	st->n = (uint32_t)n;
	for (size_t i = 0; i < n; i++)
		if (f->row[idx[i]].cls < AB_ST_CLASSES)
			st->nc[f->row[idx[i]].cls]++;
	for (int c = 0; c < AB_ST_CLASSES; c++)
		for (int s = 0; s < AS_MAX; s++) {
			size_t k = 0;

			for (size_t i = 0; i < n; i++) {
				const struct ab_attr_row *r = &f->row[idx[i]];

				if (r->cls == c && r->stage[s] >= 0)
					scratch[k++] = r->stage[s] / 1e3;
			}
			st->seen[c][s] = (uint32_t)k;
			ab_sort(scratch, k);
			st->med[c][s] = k ? ab_quantile_sorted(scratch, k, 0.5) : NAN;
		}
}

void ab_attr_into_epochs(struct ab *ab, const struct ab_attr_file *f, const struct ab_tagger *t)
{
	int *ep = malloc((f->n + 1) * sizeof(*ep));
	size_t *idx = malloc((f->n + 1) * sizeof(*idx)), start[AB_MAX_EPOCHS + 1] = { 0 };
	double *scratch = malloc((f->n + 1) * sizeof(*scratch));

	if (!ep || !idx || !scratch) {
		pr_err("vmm ab: --attribute: out of memory");
		ab->at.off = true;
		goto out;
	}
	ab->at.rows += f->n;
	ab->at.lost += f->lost;
	ab->at.dropped += f->dropped;
	for (size_t i = 0; i < f->n; i++) {
		const struct ab_attr_row *r = &f->row[i];

		ep[i] = r->workload != PROBE_W_TIMER ? -1
			: t->fixed >= 0		     ? t->fixed
						     : ab_epoch_of_guest(ab, r->guest_ns, t->offset, t->guard);
		ab->at.other += r->workload != PROBE_W_TIMER;
		ab->at.outside += r->workload == PROBE_W_TIMER && ep[i] < 0;
		if (ep[i] >= 0)
			start[ep[i] + 1]++;
	}
	/* the rows by epoch (a counting sort): each epoch's rows are then one run of idx */
	for (int e = 0; e < AB_MAX_EPOCHS; e++)
		start[e + 1] += start[e];
	size_t fill[AB_MAX_EPOCHS];

	memcpy(fill, start, sizeof(fill));
	for (size_t i = 0; i < f->n; i++)
		if (ep[i] >= 0)
			idx[fill[ep[i]]++] = i;
	for (int e = 0; e < ab->nr_runs && e < AB_MAX_EPOCHS; e++)
		if (start[e + 1] > start[e] || t->fixed == e) {
			reduce_epoch(&ab->run[e].st, f, idx + start[e], start[e + 1] - start[e], scratch);
			ab->at.any |= ab->run[e].st.n > 0;
		}
out:
	free(ep);
	free(idx);
	free(scratch);
}

/* The FILE is missing: vmm run said why on its stderr (kept), or said nothing we saw */
static void say_missing(struct ab *ab, const char *path)
{
	if (ab->at.said)
		return;
	ab->at.said = true;
	if (ab->at.err.none[0])
		fprintf(stderr, "vmm ab: attribution: none: %s; the A/B result goes on without the stage section\n",
			ab->at.err.none);
	else
		fprintf(stderr, "vmm ab: attribution: none: vmm run wrote no %s (its messages are above); the A/B "
			"result goes on without the stage section\n", path);
}

int ab_attr_load(struct ab *ab, const char *path, const struct ab_tagger *t)
{
	struct stat st;
	struct ab_attr_file f;
	char why[256];
	size_t len;
	int r = -EINVAL;

	if (ab->at.off)
		return -EINVAL;
	if (stat(path, &st) < 0) {
		say_missing(ab, path);
		return -ENOENT;
	}
	char *text = S_ISREG(st.st_mode) ? ab_file_read(path, AB_ATTR_MAX_BYTES, &len) : NULL;

	if (!S_ISREG(st.st_mode))
		snprintf(why, sizeof(why), "not a file");
	else if (!text) /* ab_file_read said why */
		snprintf(why, sizeof(why), "unreadable");
	else
		r = ab_attr_parse(text, len, AB_ATTR_MAX_ROWS, &f, why, sizeof(why));
	free(text);
	unlink(path); /* the next run must write its own: a stale FILE would be another run's rows */
	if (r < 0) {
		pr_warn("vmm ab: --attribute: %s: %s; the A/B result goes on without the stage section", path, why);
		ab->at.off = true;
		return r;
	}
	ab_attr_into_epochs(ab, &f, t);
	ab_attr_file_free(&f);
	return ab->at.off ? -ENOMEM : 0;
}
