// SPDX-License-Identifier: MIT
/*
 * The guest latency probe's output: frames (guest/probe_proto.h) to a port or as console text
 * lines, and one human-readable summary line per series on the console.
 */
#ifndef _GNU_SOURCE /* the unit test includes this file, built with -D_GNU_SOURCE */
#define _GNU_SOURCE
#endif
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <termios.h>
#include <unistd.h>

#include "guest/probe_internal.h"

static void write_all(int fd, const void *buf, size_t len)
{
	const char *p = buf;

	while (len) {
		ssize_t n = write(fd, p, len);

		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			return; /* the reader is gone: the summary lines still tell the story */
		p += n;
		len -= (size_t)n;
	}
}

static void emit(struct sink *o, uint8_t type, const uint8_t *payload, size_t len)
{
	uint8_t f[PROBE_MAX_FRAME];
	size_t fl = probe_frame(f, type, o->seq++, payload, len);

	if (o->text) {
		char line[PROBE_TEXT_MAX + 1];
		size_t n = strlen(PROBE_TEXT_PREFIX);

		memcpy(line, PROBE_TEXT_PREFIX, n);
		n += probe_b64_encode(line + n, f, fl);
		line[n++] = '\n';
		write_all(o->fd, line, n);
	} else {
		write_all(o->fd, f, fl);
	}
}

void sink_open(struct sink *o, const char *path)
{
	o->fd = 1;
	o->text = true;
	if (path && !strcmp(path, "console"))
		return;
	int fd = open(path ? path : "/dev/hvc1", O_WRONLY | O_NOCTTY | O_CLOEXEC);
	struct termios t;

	if (fd < 0) {
		if (path)
			dprintf(1, "vmm-probe: %s: %s; frames go to the console\n", path, strerror(errno));
		return;
	}
	/* a tty port carries the frames as bytes: no newline translation */
	if (!tcgetattr(fd, &t)) {
		cfmakeraw(&t);
		tcsetattr(fd, TCSANOW, &t);
	}
	o->fd = fd;
	o->text = false;
}

void settle(const struct sink *o)
{
	tcdrain(o->fd);
	tcdrain(1);
}

static void fmt_ns(char *buf, size_t size, int64_t ns)
{
	double a = ns < 0 ? -(double)ns : (double)ns;

	if (a < 1e3)
		snprintf(buf, size, "%lldns", (long long)ns);
	else if (a < 1e6)
		snprintf(buf, size, "%.1fus", ns / 1e3);
	else if (a < 1e9)
		snprintf(buf, size, "%.1fms", ns / 1e6);
	else
		snprintf(buf, size, "%.2fs", ns / 1e9);
}

void emit_start(struct probe *pr, const struct probe_start *s)
{
	uint8_t p[PROBE_MAX_PAYLOAD];

	emit(&pr->out, PROBE_T_START, p, probe_put_start(p, s));
}

void emit_series(struct probe *pr, uint8_t w, uint16_t cpu, const struct probe_sample *s,
		 uint32_t n, uint32_t overruns, const char *label, const char *extra)
{
	uint8_t p[PROBE_MAX_PAYLOAD];
	struct probe_batch b = { .workload = w, .cpu = cpu };
	struct probe_end e = { .workload = w, .status = PROBE_S_OK, .cpu = cpu, .overruns = overruns };
	int64_t *v = malloc((n ? n : 1) * sizeof(*v));

	for (uint32_t i = 0; i < n; i += b.n) {
		b.n = (uint16_t)(n - i < PROBE_BATCH_MAX ? n - i : PROBE_BATCH_MAX);
		memcpy(b.s, s + i, b.n * sizeof(*s));
		emit(&pr->out, PROBE_T_BATCH, p, probe_put_batch(p, &b));
	}
	if (!v) {
		e.status = PROBE_S_ERROR;
	} else {
		for (uint32_t i = 0; i < n; i++)
			v[i] = s[i].value_ns;
		probe_summarize(v, n, &e.sum);
	}
	e.sum.count = n;
	if (e.status != PROBE_S_OK)
		e.sum = (struct probe_summary){ 0 };
	emit(&pr->out, PROBE_T_END, p, probe_put_end(p, &e));
	free(v);
	char mn[32], p50[32], p99[32], mx[32];

	fmt_ns(mn, sizeof(mn), e.sum.min);
	fmt_ns(p50, sizeof(p50), e.sum.p50);
	fmt_ns(p99, sizeof(p99), e.sum.p99);
	fmt_ns(mx, sizeof(mx), e.sum.max);
	dprintf(1, "vmm-probe: %s %s n=%u min=%s p50=%s p99=%s max=%s%s\n", probe_workload_name(w),
		label, n, mn, p50, p99, mx, extra);
}

void emit_not_run(struct probe *pr, uint8_t w, uint16_t cpu, uint8_t status, const char *why)
{
	uint8_t p[PROBE_MAX_PAYLOAD];
	struct probe_end e = { .workload = w, .status = status, .cpu = cpu };

	emit(&pr->out, PROBE_T_END, p, probe_put_end(p, &e));
	dprintf(1, "vmm-probe: %s %s: %s\n", probe_workload_name(w),
		status == PROBE_S_SKIPPED ? "skipped" : "error", why);
}
