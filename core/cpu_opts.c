// SPDX-License-Identifier: MIT
/* --cpu's parser (core/cpu_opts.h): comma-separated FEATURE=VALUE pairs. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/hot.h"
#include "core/cpu_opts.h"
#include "core/log.h"

VMM_HOT const char *cpu_want_name(enum cpu_want w)
{
	return w == CPU_WANT_ON ? "on" : w == CPU_WANT_OFF ? "off" : "auto";
}

static bool is(const char *val, size_t len, const char *word)
{
	return len == strlen(word) && !strncmp(val, word, len);
}

static int want_parse(const char *feat, const char *val, size_t len, enum cpu_want *w)
{
	if (is(val, len, "on"))
		*w = CPU_WANT_ON;
	else if (is(val, len, "off"))
		*w = CPU_WANT_OFF;
	else if (is(val, len, "auto"))
		*w = CPU_WANT_AUTO;
	else {
		pr_err("--cpu %s= takes on, off or auto, not '%.*s'", feat, (int)len, val);
		return -EINVAL;
	}
	return 0;
}

/* sve=on|off|auto|BITS: BITS caps the vector length, and asks for SVE like "on". */
static int sve_parse(struct cpu_opts *o, const char *val, size_t len)
{
	char buf[16], *end;
	unsigned long bits = 0;

	if (is(val, len, "on") || is(val, len, "off") || is(val, len, "auto")) {
		o->sve_max_bits = 0;
		return want_parse("sve", val, len, &o->sve);
	}
	if (len && len < sizeof(buf) && val[0] >= '0' && val[0] <= '9') {
		snprintf(buf, sizeof(buf), "%.*s", (int)len, val);
		bits = strtoul(buf, &end, 10);
		if (*end)
			bits = 0;
	}
	if (bits < CPU_SVE_MIN_BITS || bits > CPU_SVE_MAX_BITS || bits % 128) {
		pr_err("--cpu sve= takes on, off, auto or the largest vector length in bits (a multiple "
		       "of 128 from %d to %d, e.g. sve=512), not '%.*s'", CPU_SVE_MIN_BITS,
		       CPU_SVE_MAX_BITS, (int)len, val);
		return -EINVAL;
	}
	o->sve = CPU_WANT_ON;
	o->sve_max_bits = bits;
	return 0;
}

int cpu_opts_parse(struct cpu_opts *o, const char *arg)
{
	const char *p = arg;

	if (!*arg) {
		pr_err("--cpu takes FEATURE=VALUE[,...] (sve, pauth, pmu), not an empty string");
		return -EINVAL;
	}
	o->given = true;
	while (*p) {
		size_t n = strcspn(p, ","), k = strcspn(p, "=,");
		const char *val = p + k + 1;
		size_t vlen = n > k ? n - k - 1 : 0;
		int r;

		if (n == 0) {
			pr_err("--cpu '%s': an empty item between commas", arg);
			return -EINVAL;
		}
		if (k == n) {
			pr_err("--cpu: '%.*s' needs a value (e.g. %.*s=off)", (int)n, p, (int)n, p);
			return -EINVAL;
		}
		if (k == 3 && !strncmp(p, "sve", 3))
			r = sve_parse(o, val, vlen);
		else if (k == 5 && !strncmp(p, "pauth", 5))
			r = want_parse("pauth", val, vlen, &o->pauth);
		else if (k == 3 && !strncmp(p, "pmu", 3))
			r = want_parse("pmu", val, vlen, &o->pmu);
		else {
			pr_err("--cpu: unknown feature '%.*s' (sve, pauth and pmu exist)", (int)k, p);
			return -EINVAL;
		}
		if (r < 0)
			return r;
		p += n;
		if (*p == ',' && !*++p) {
			pr_err("--cpu '%s': a trailing comma", arg);
			return -EINVAL;
		}
	}
	return 0;
}
