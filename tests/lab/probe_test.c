// SPDX-License-Identifier: MIT
/*
 * Lab: the built-in guest's latency probe (guest/probe.c) on two vCPUs. Its summary lines must be
 * there and ordered, and its VMM-PROBE frames on the console must decode (with libvmm's decoder)
 * without a single error into the sample counts asked for. Nested TCG numbers are no hardware
 * latencies: they are printed, never held to a bound.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "guest/probe_decode.h"
#include "kselftest_harness.h"
#include "tests/lab/labutil.h"

#define COUNT 500

/* A value the probe printed ("12.3us", "2.1ms", "850ns", "1.20s") in ns; -1 when unreadable. */
static double parse_ns(const char *s)
{
	char *end;
	double v = strtod(s, &end);

	if (end == s)
		return -1;
	if (!strncmp(end, "ns", 2))
		return v;
	if (!strncmp(end, "us", 2))
		return v * 1e3;
	if (!strncmp(end, "ms", 2))
		return v * 1e6;
	if (*end == 's')
		return v * 1e9;
	return -1;
}

struct line {
	long n;
	double min, p50, p99, max;
};

/* The summary line "vmm-probe: WHAT n=... min=... p50=... p99=... max=..." parsed; 0 when found. */
static int summary(const char *out, const char *what, struct line *l, char *text, size_t size)
{
	char key[64];

	snprintf(key, sizeof(key), "vmm-probe: %s n=", what);
	const char *s = strstr(out, key), *f;

	if (!s)
		return -1;
	snprintf(text, size, "%.*s", (int)strcspn(s, "\r\n"), s);
	l->n = strtol(s + strlen(key), NULL, 10);
	l->min = (f = strstr(text, " min=")) ? parse_ns(f + 5) : -1;
	l->p50 = (f = strstr(text, " p50=")) ? parse_ns(f + 5) : -1;
	l->p99 = (f = strstr(text, " p99=")) ? parse_ns(f + 5) : -1;
	l->max = (f = strstr(text, " max=")) ? parse_ns(f + 5) : -1;
	return 0;
}

/* Each frame line that does not decode on its own, shown with its length and ends. */
static void log_bad_lines(struct __test_metadata *_metadata, const char *out)
{
	for (const char *p = strstr(out, PROBE_TEXT_PREFIX); p; p = strstr(p + 1, PROBE_TEXT_PREFIX)) {
		size_t n = strcspn(p, "\n");
		struct probe_decoder *d = malloc(sizeof(*d));

		probe_decoder_init(d);
		probe_decode_text(d, p, n);
		probe_decode_text(d, "\n", 1);
		if (d->st.bad_frames || d->st.bad_lines)
			TH_LOG("bad line, %zu chars: '%.60s' ... '%.60s'", n, p, p + (n > 60 ? n - 60 : 0));
		probe_decoder_free(d);
		free(d);
	}
}

FIXTURE(probe) {
	struct result r;
	struct probe_decoder d;
};
FIXTURE_SETUP(probe)
{
	memset(&self->r, 0, sizeof(self->r));
	probe_decoder_init(&self->d);
}
FIXTURE_TEARDOWN(probe)
{
	result_free(&self->r);
	probe_decoder_free(&self->d);
}

TEST_F_TIMEOUT(probe, timer_and_pingpong_two_cpus, 600)
{
	/* the nested lab stalls vCPUs for seconds: the kernel's lockup and RCU stall reports then
	 * land inside frame lines, which the decoder must put back together (counted as rejoined) */
	char *const argv[] = { VMM, "run", "-c", "2", "-m", "512M", "-p",
			       "console=ttyS0 earlycon panic=-1 quiet "
			       "vmm.probe=timer:interval_us=1000,count=500;pingpong:count=500", NULL };
	static const struct {
		const char *what;
		unsigned int w, cpu;
	} want[] = {
		{ "timer cpu0", PROBE_W_TIMER, 0 },
		{ "timer cpu1", PROBE_W_TIMER, 1 },
		{ "pingpong cpu0<->cpu1", PROBE_W_PINGPONG, 0 },
	};
	struct result *r = &self->r;
	struct probe_decoder *d = &self->d;

	run_vmm(argv, 540, r);
	TH_LOG("exit %d after %.1f s", r->status, r->secs);
	ASSERT_NE(NULL, strstr(r->out, "vmm-probe: done")) TH_LOG("out: %s\nerr: %s", r->out, r->err);
	EXPECT_EQ(0, r->status) TH_LOG("stderr: %s", r->err);
	EXPECT_EQ(NULL, strstr(r->out, "vmm-probe: error"));

	probe_decode_text(d, r->out, strlen(r->out));
	const struct probe_decode_stats *st = &d->st;

	TH_LOG("decoded %llu frames (%llu rejoined around kernel messages); %llu bad frames, %llu bad "
	       "lines, %llu bad records, %llu lost, %llu count mismatches",
	       (unsigned long long)st->frames, (unsigned long long)st->rejoined,
	       (unsigned long long)st->bad_frames,
	       (unsigned long long)st->bad_lines, (unsigned long long)st->bad_records,
	       (unsigned long long)st->lost_frames, (unsigned long long)st->count_mismatch);
	EXPECT_EQ(0, probe_decode_errors(d)) {
		log_bad_lines(_metadata, r->out);
		TH_LOG("stderr: %s", r->err);
	}
	ASSERT_TRUE(d->started[PROBE_W_TIMER]);
	ASSERT_TRUE(d->started[PROBE_W_PINGPONG]);
	EXPECT_EQ(2, d->start[PROBE_W_TIMER].ncpus);
	EXPECT_EQ(1000000, d->start[PROBE_W_TIMER].interval_ns);
	EXPECT_EQ(COUNT, d->start[PROBE_W_TIMER].count);
	EXPECT_EQ(1, d->start[PROBE_W_PINGPONG].cpu_b);

	for (size_t i = 0; i < sizeof(want) / sizeof(want[0]); i++) {
		struct line l;
		char text[256];

		ASSERT_EQ(0, summary(r->out, want[i].what, &l, text, sizeof(text)))
			TH_LOG("no summary line for %s", want[i].what);
		printf("# PROBE %s\n", text);
		EXPECT_EQ(COUNT, l.n);
		EXPECT_GT(l.min, 0) TH_LOG("%s", text);
		EXPECT_LE(l.min, l.p50) TH_LOG("%s", text);
		EXPECT_LE(l.p50, l.p99) TH_LOG("%s", text);
		EXPECT_LE(l.p99, l.max) TH_LOG("%s", text);

		/* the frames carry every sample, and their END agrees with the samples */
		const struct probe_series *s = probe_series_get(d, want[i].w, want[i].cpu);

		ASSERT_NE(NULL, s) TH_LOG("no frames for %s", want[i].what);
		EXPECT_EQ(COUNT, s->n);
		EXPECT_TRUE(s->ended);
		EXPECT_EQ(PROBE_S_OK, s->end.status);
		EXPECT_EQ(COUNT, s->end.sum.count);
		int64_t *v = malloc(s->n * sizeof(*v));
		struct probe_summary sum;

		memcpy(v, s->v_ns, s->n * sizeof(*v));
		probe_summarize(v, s->n, &sum);
		free(v);
		EXPECT_EQ(sum.min, s->end.sum.min);
		EXPECT_EQ(sum.p50, s->end.sum.p50);
		EXPECT_EQ(sum.p99, s->end.sum.p99);
		EXPECT_EQ(sum.max, s->end.sum.max);
		EXPECT_GT(sum.min, 0);
		/* timestamps span at least the run: count periods for the timer */
		if (want[i].w == PROBE_W_TIMER)
			EXPECT_GE(s->t_ns[s->n - 1] - s->t_ns[0], (uint64_t)(COUNT - 1) * 1000000u);
	}
}

/* A bad spec runs nothing, says why, and the guest still powers off cleanly. */
TEST_F_TIMEOUT(probe, bad_spec_refused, 600)
{
	char *const argv[] = { VMM, "run", "-c", "2", "-m", "256M", "-p",
			       "console=ttyS0 earlycon panic=-1 quiet vmm.probe=timer:count=0", NULL };
	struct result *r = &self->r;

	run_vmm(argv, 540, r);
	TH_LOG("exit %d after %.1f s", r->status, r->secs);
	EXPECT_NE(NULL, strstr(r->out, "vmm-probe: error: vmm.probe: value out of range"))
		TH_LOG("out: %s", r->out);
	EXPECT_EQ(NULL, strstr(r->out, PROBE_TEXT_PREFIX));
	EXPECT_EQ(0, r->status) TH_LOG("stderr: %s", r->err);
}

TEST_HARNESS_MAIN
