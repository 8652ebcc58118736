// SPDX-License-Identifier: MIT
/*
 * The one-VM A/B mode's pieces that need no VM: which arms differ only in run-time knobs, the
 * guest's clock marker, which epoch a sample's host time falls in, and the sums vmm ab takes from
 * the control socket's replies (stats JSON, the vCPU threads' CPU time).
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <unistd.h>

#include "ab/ab.h"
#include "ab/abstats.h"
#include "core/json.h"
#include "core/log.h"

int ab_arm_runtime(char *const *argv, int argc, struct ab_knobs *k)
{
	struct ab_knobs o = { .poll_control = -1 };

	if (argc < 2 || argc % 2)
		return 0;
	for (int i = 0; i < argc; i += 2) {
		const char *v = argv[i + 1];
		char *end;

		if (!v[0] || v[0] == '-')
			return 0;
		errno = 0;
		unsigned long long n = strtoull(v, &end, 10);

		if (*end || errno)
			return 0;
		if (!strcmp(argv[i], "--halt-poll-ns") && !o.has_halt_poll_ns && n <= UINT32_MAX) {
			o.has_halt_poll_ns = true;
			o.halt_poll_ns = n;
		} else if (!strcmp(argv[i], "--poll-control") && o.poll_control < 0 && n <= 1) {
			o.poll_control = (int)n;
		} else {
			return 0;
		}
	}
	*k = o;
	return 1;
}

bool ab_parse_clock(const char *line, size_t len, uint64_t *ns)
{
	static const char key[] = "vmm-probe: clock ";
	char digits[24];
	size_t n = 0;
	const char *p = memmem(line, len, key, sizeof(key) - 1);

	if (!p)
		return false;
	p += sizeof(key) - 1;
	while (p < line + len && *p >= '0' && *p <= '9' && n < sizeof(digits) - 1)
		digits[n++] = *p++;
	/* the number must end the line (a kernel message may share it: then it is not trusted) */
	if (!n || n >= 20 || (p < line + len && *p != '\r' && *p != '\n'))
		return false;
	digits[n] = 0;
	*ns = strtoull(digits, NULL, 10);
	return true;
}

int ab_epoch_of(const struct ab_span *sp, int n, uint64_t t, uint64_t guard)
{
	int lo = 0, hi = n; /* the first span ending after t */

	while (lo < hi) {
		int mid = lo + (hi - lo) / 2;

		if (sp[mid].end <= t)
			lo = mid + 1;
		else
			hi = mid;
	}
	if (lo == n || t < sp[lo].start)
		return -1;
	/* a sample near a switch may have been taken under either setting: it belongs to neither */
	if (t - sp[lo].start < guard || sp[lo].end - t <= guard)
		return -1;
	return lo;
}

int ab_epoch_of_guest(const struct ab *ab, uint64_t guest_ns, int64_t offset, uint64_t guard)
{
	int e = ab_epoch_of(ab->span, ab->nr_runs, guest_ns + (uint64_t)offset, guard);

	/* an epoch the VM ended in has no final counters: its samples are left out with it */
	return e >= 0 && ab->run[e].complete ? e : -1;
}

uint64_t ab_switch_guard_ns(const struct ab *ab)
{
	uint64_t epoch_ns = ab->epoch_ms * 1000000ull;

	return epoch_ns / 10 < 2000000 ? epoch_ns / 10 : 2000000;
}

void ab_attr_path(const struct ab *ab, char *buf, size_t size)
{
	snprintf(buf, size, "%s/%s", ab->tmpdir, AB_ATTR_FILE);
}

/* Adds to *sum the "value" of every object named stat in v and below; whether there was one. */
static bool sum_stat(const struct json *v, const char *stat, long long *sum)
{
	const struct json *name = json_get(v, "name"), *value = json_get(v, "value");
	bool found = false;

	if (name && name->t == JSON_STR && !strcmp(name->str, stat) && value && value->t == JSON_NUM) {
		*sum += (long long)value->num;
		found = true;
	}
	if (v->t == JSON_ARR || v->t == JSON_OBJ)
		for (size_t i = 0; i < v->n; i++)
			found |= sum_stat(&v->items[i], stat, sum);
	return found;
}

long long ab_json_sum_stat(const char *json, const char *stat)
{
	struct json root;
	long long sum = 0;
	bool found;

	if (json_parse(json, strlen(json), &root, NULL, 0) < 0)
		return -1;
	found = sum_stat(&root, stat, &sum);
	json_free(&root);
	return found ? sum : -1;
}

/* The first array named key in v or below (in the text's order), or NULL. */
static const struct json *find_array(const struct json *v, const char *key)
{
	const struct json *a;

	if (v->t != JSON_ARR && v->t != JSON_OBJ)
		return NULL;
	for (size_t i = 0; i < v->n; i++) {
		if (v->t == JSON_OBJ && !strcmp(v->keys[i], key) &&
		    (v->items[i].t == JSON_ARR || v->items[i].t == JSON_NUMS))
			return &v->items[i];
		if ((a = find_array(&v->items[i], key)))
			return a;
	}
	return NULL;
}

long long ab_json_sum_array(const char *json, const char *key)
{
	struct json root;
	const struct json *a;
	long long sum = -1;

	if (json_parse(json, strlen(json), &root, NULL, 0) < 0)
		return -1;
	a = find_array(&root, key);
	if (a && (a->t == JSON_NUMS || !a->n)) {
		sum = 0;
		for (size_t i = 0; a->t == JSON_NUMS && i < a->n && sum >= 0; i++)
			/* a thread gone reads -1; a fraction is no count of nanoseconds */
			sum = a->nums[i] < 0 || a->nums[i] != (long long)a->nums[i] ? -1 : sum + (long long)a->nums[i];
	}
	json_free(&root);
	return sum;
}

int ab_tmpdir_make(char *dir, size_t size)
{
	const char *t = getenv("TMPDIR");

	if (!t || t[0] != '/' || strlen(t) > size - 16)
		t = "/tmp";
	snprintf(dir, size, "%s/vmm-ab.XXXXXX", t);
	if (!mkdtemp(dir)) {
		int e = errno;

		pr_err("vmm ab: cannot make a directory %s for the control socket: %s (set TMPDIR to a writable "
		       "directory)", dir, strerror(e));
		dir[0] = 0;
		return -e;
	}
	return 0;
}

void ab_tmpdir_remove(char *dir)
{
	static const char *const files[] = { "ctl", "stats.json", AB_ATTR_FILE };
	char p[128];

	if (!dir[0])
		return;
	for (size_t i = 0; i < sizeof(files) / sizeof(files[0]); i++) {
		snprintf(p, sizeof(p), "%s/%s", dir, files[i]);
		unlink(p);
	}
	if (rmdir(dir) < 0 && errno != ENOENT)
		pr_warn("vmm ab: could not remove %s: %s", dir, strerror(errno));
	dir[0] = 0;
}
