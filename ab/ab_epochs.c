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

long long ab_json_sum_stat(const char *json, const char *stat)
{
	char key[96];
	long long sum = 0;
	int found = 0;

	snprintf(key, sizeof(key), "{\"name\":\"%s\",", stat);
	for (const char *p = json; (p = strstr(p, key)); p++) {
		const char *v = strstr(p, "\"value\":"), *end = strchr(p, '}');

		if (v && (!end || v < end)) {
			sum += strtoll(v + 8, NULL, 10);
			found = 1;
		}
	}
	return found ? sum : -1;
}

long long ab_json_sum_array(const char *json, const char *key)
{
	char k[64];
	long long sum = 0;

	snprintf(k, sizeof(k), "\"%s\":[", key);
	const char *p = strstr(json, k);

	if (!p)
		return -1;
	for (p += strlen(k); *p && *p != ']';) {
		char *end;
		long long v = strtoll(p, &end, 10);

		if (end == p || v < 0)
			return -1;
		sum += v;
		p = end;
		if (*p == ',')
			p++;
		else if (*p != ']')
			return -1;
	}
	return *p == ']' ? sum : -1;
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
	static const char *const files[] = { "ctl", "stats.json" };
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
