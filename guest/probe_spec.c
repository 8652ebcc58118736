// SPDX-License-Identifier: MIT
/*
 * The guest latency probe's spec: vmm.probe= parsed strictly (syntax in guest/probe.c); anything
 * else is refused whole, with a line naming what is wrong.
 */
#include <stddef.h>
#include <stdio.h>
#include <string.h>

#include "guest/probe_internal.h"

static int bad(const char *what, const char *s, size_t n)
{
	dprintf(1, "vmm-probe: error: vmm.probe: %s '%.*s'; nothing run\n", what, (int)n, s);
	return -1;
}

/* Decimal digits only, within [lo, hi]. */
static int parse_uint(const char *s, size_t n, uint32_t lo, uint32_t hi, uint32_t *out)
{
	uint64_t v = 0;

	if (!n || n > 10)
		return -1;
	for (size_t i = 0; i < n; i++) {
		if (s[i] < '0' || s[i] > '9')
			return -1;
		v = v * 10 + (uint64_t)(s[i] - '0');
	}
	if (v < lo || v > hi)
		return -1;
	*out = (uint32_t)v;
	return 0;
}

struct key {
	const char *name;
	unsigned int workloads; /* bit per workload id */
	uint32_t lo, hi;
	size_t off; /* of the uint32_t in struct workload_spec */
};

#define WB(w) (1u << (w))
static const struct key keys[] = {
	{ "interval_us", WB(PROBE_W_TIMER) | WB(PROBE_W_UDP), 1, 1000000,
	  offsetof(struct workload_spec, interval_us) },
	{ "count", WB(PROBE_W_TIMER) | WB(PROBE_W_PINGPONG) | WB(PROBE_W_UDP), 1, PROBE_MAX_COUNT,
	  offsetof(struct workload_spec, count) },
	{ "prio", WB(PROBE_W_TIMER) | WB(PROBE_W_PINGPONG), 0, 99, offsetof(struct workload_spec, prio) },
	{ "cpu_a", WB(PROBE_W_PINGPONG), 0, PROBE_MAX_CPUS - 1, offsetof(struct workload_spec, cpu_a) },
	{ "cpu_b", WB(PROBE_W_PINGPONG), 0, PROBE_MAX_CPUS - 1, offsetof(struct workload_spec, cpu_b) },
	{ "port", WB(PROBE_W_UDP), 1, 65535, offsetof(struct workload_spec, port) },
	{ "dev", WB(PROBE_W_UDP), 0, 0, 0 }, /* a string: handled apart */
};
#define NKEYS (sizeof(keys) / sizeof(keys[0]))

static int parse_item(struct spec *sp, const char *s, size_t n)
{
	size_t nl = strcspn(s, ":");
	unsigned int w = 0;

	if (nl > n)
		nl = n;
	for (unsigned int i = 1; i <= PROBE_W_MAX; i++)
		if (strlen(probe_workload_name(i)) == nl && !strncmp(s, probe_workload_name(i), nl))
			w = i;
	if (!w)
		return bad("unknown workload", s, nl);
	struct workload_spec *ws = &sp->w[w];

	if (ws->on)
		return bad("workload given twice", s, nl);
	ws->on = true;
	sp->order[sp->n++] = (uint8_t)w;
	if (nl == n)
		return 0;
	const char *p = s + nl + 1, *end = s + n;
	unsigned int seen = 0;

	if (p == end)
		return bad("empty parameter list after", s, nl + 1);
	while (p <= end) {
		size_t kvl = strcspn(p, ",");

		if (p + kvl > end)
			kvl = (size_t)(end - p);
		const char *eq = memchr(p, '=', kvl);
		unsigned int k;

		if (!eq)
			return bad("expected KEY=VALUE, got", p, kvl);
		size_t klen = (size_t)(eq - p), vlen = kvl - klen - 1;

		for (k = 0; k < NKEYS; k++)
			if (strlen(keys[k].name) == klen && !strncmp(p, keys[k].name, klen))
				break;
		if (k == NKEYS || !(keys[k].workloads & WB(w)))
			return bad("unknown parameter", p, kvl);
		if (seen & (1u << k))
			return bad("parameter given twice", p, kvl);
		seen |= 1u << k;
		if (!strcmp(keys[k].name, "dev")) {
			if (!vlen || vlen >= IF_NAMESIZE || strspn(eq + 1, "abcdefghijklmnopqrstuvwxyz"
					"ABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_.-") < vlen)
				return bad("bad interface name", p, kvl);
			memcpy(ws->dev, eq + 1, vlen);
			ws->dev[vlen] = 0;
		} else if (parse_uint(eq + 1, vlen, keys[k].lo, keys[k].hi,
				      (uint32_t *)((char *)ws + keys[k].off))) {
			return bad("value out of range or not a number", p, kvl);
		}
		ws->cpu_a_set |= !strcmp(keys[k].name, "cpu_a");
		ws->cpu_b_set |= !strcmp(keys[k].name, "cpu_b");
		p += kvl + 1;
	}
	return 0;
}

int parse_spec(struct spec *sp, const char *s)
{
	memset(sp, 0, sizeof(*sp));
	for (unsigned int w = 1; w <= PROBE_W_MAX; w++) {
		sp->w[w].count = 1000;
		sp->w[w].interval_us = 1000;
		sp->w[w].prio = 80;
		sp->w[w].port = 7777;
	}
	if (!*s)
		return bad("empty", s, 0);
	for (;;) {
		size_t n = strcspn(s, ";");

		if (!n)
			return bad("empty workload in", s, strlen(s));
		if (parse_item(sp, s, n))
			return -1;
		if (!s[n])
			return 0;
		s += n + 1;
	}
}

const char *cmdline_value(const char *cmdline, const char *key, char *buf, size_t size)
{
	size_t kl = strlen(key);

	for (const char *p = cmdline; *p; p += strcspn(p, " \t\n"), p += strspn(p, " \t\n")) {
		if (strncmp(p, key, kl))
			continue;
		size_t n = strcspn(p + kl, " \t\n");

		if (n >= size)
			n = size - 1; /* too long: cut, then refused by the parser as it stands */
		memcpy(buf, p + kl, n);
		buf[n] = 0;
		return buf;
	}
	return NULL;
}
