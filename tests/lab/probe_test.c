// SPDX-License-Identifier: MIT
/*
 * Lab: the built-in guest's latency probe (guest/probe.c) on two vCPUs. Its summary lines must be
 * there and ordered, and its frames must decode (with libvmm's decoder) without a single error
 * into the sample counts asked for: over the probe's virtio-console port (vmm --probe-out), with
 * none of them on the serial console, or, when the guest is told to, as VMM-PROBE console lines;
 * vmm's --stats JSON counts them per channel. Nested TCG numbers are no hardware
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

#define PROBE_BIN "/tmp/vmm-probe.bin"
#define PROBE_JSON "/tmp/vmm-probe.json"

/* The number after key in the --stats JSON's "probe" object, within its object obj ("port",
 * "console"); -1 when absent. */
static long long probe_stat(const char *json, const char *obj, const char *key)
{
	char k[32];
	const char *p = json ? strstr(json, "\"probe\":{") : NULL;

	snprintf(k, sizeof(k), "\"%s\":{", obj);
	p = p ? strstr(p, k) : NULL;
	snprintf(k, sizeof(k), "\"%s\":", key);
	p = p ? strstr(p, k) : NULL;
	return p ? strtoll(p + strlen(k), NULL, 10) : -1;
}

/* Runs the built-in guest's timer and ping-pong workloads (count samples each) with the probe's
 * frames to PROBE_BIN (its port) and the stats to PROBE_JSON; the frames, wherever they came, go
 * into d. */
static void run_probe(struct __test_metadata *_metadata, struct result *r, struct probe_decoder *d,
		      int count, const char *extra)
{
	char params[512];

	/* the nested lab stalls vCPUs for seconds: the kernel's lockup and RCU stall reports then
	 * land inside console frame lines, which the decoder must put back together (rejoined) */
	snprintf(params, sizeof(params), "console=ttyS0 earlycon panic=-1 quiet "
		 "vmm.probe=timer:interval_us=1000,count=%d;pingpong:count=%d%s", count, count, extra);
	char *const argv[] = { VMM, "run", "-c", "2", "-m", "512M", "-p", params, "--probe-out", PROBE_BIN,
			       "--stats", PROBE_JSON, NULL };
	size_t len = 0;

	unlink(PROBE_BIN);
	unlink(PROBE_JSON);
	run_vmm(argv, 540, r);
	TH_LOG("exit %d after %.1f s", r->status, r->secs);
	char *bin = lab_slurp(PROBE_BIN, &len);

	if (bin)
		probe_decode_bytes(d, bin, len);
	free(bin);
	probe_decode_text(d, r->out, strlen(r->out));
	TH_LOG("%zu bytes of frames from the port", len);
}

/* Every series there, complete, and agreeing with its summary line and its END. */
static void check_series(struct __test_metadata *_metadata, const struct result *r, struct probe_decoder *d,
			 unsigned int count)
{
	static const struct {
		const char *what;
		unsigned int w, cpu;
	} want[] = {
		{ "timer cpu0", PROBE_W_TIMER, 0 },
		{ "timer cpu1", PROBE_W_TIMER, 1 },
		{ "pingpong cpu0<->cpu1", PROBE_W_PINGPONG, 0 },
	};
	const struct probe_decode_stats *st = &d->st;

	ASSERT_NE(NULL, strstr(r->out, "vmm-probe: done")) TH_LOG("out: %s\nerr: %s", r->out, r->err);
	EXPECT_EQ(0, r->status) TH_LOG("stderr: %s", r->err);
	EXPECT_EQ(NULL, strstr(r->out, "vmm-probe: error"));
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
	EXPECT_EQ(count, d->start[PROBE_W_TIMER].count);
	EXPECT_EQ(1, d->start[PROBE_W_PINGPONG].cpu_b);

	for (size_t i = 0; i < sizeof(want) / sizeof(want[0]); i++) {
		struct line l;
		char text[256];

		ASSERT_EQ(0, summary(r->out, want[i].what, &l, text, sizeof(text)))
			TH_LOG("no summary line for %s", want[i].what);
		printf("# PROBE %s\n", text);
		EXPECT_EQ(count, l.n);
		EXPECT_GT(l.min, 0) TH_LOG("%s", text);
		EXPECT_LE(l.min, l.p50) TH_LOG("%s", text);
		EXPECT_LE(l.p50, l.p99) TH_LOG("%s", text);
		EXPECT_LE(l.p99, l.max) TH_LOG("%s", text);

		/* the frames carry every sample, and their END agrees with the samples */
		const struct probe_series *s = probe_series_get(d, want[i].w, want[i].cpu);

		ASSERT_NE(NULL, s) TH_LOG("no frames for %s", want[i].what);
		EXPECT_EQ(count, s->n);
		EXPECT_TRUE(s->ended);
		EXPECT_EQ(PROBE_S_OK, s->end.status);
		EXPECT_EQ(count, s->end.sum.count);
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
			EXPECT_GE(s->t_ns[s->n - 1] - s->t_ns[0], (uint64_t)(count - 1) * 1000000u);
	}
}

/* The probe's port: every frame and both clocks over it, none of it on the serial console. */
TEST_F_TIMEOUT(probe, timer_and_pingpong_two_cpus, 600)
{
	struct result *r = &self->r;
	struct probe_decoder *d = &self->d;
	char *j;

	run_probe(_metadata, r, d, COUNT, "");
	check_series(_metadata, r, d, COUNT);
	EXPECT_EQ(NULL, strstr(r->out, PROBE_TEXT_PREFIX)) TH_LOG("frames on the console");
	EXPECT_EQ(NULL, strstr(r->out, "vmm-probe: clock")) TH_LOG("a clock line on the console");
	EXPECT_EQ(2, d->clocks); /* one per workload, as frames */
	ASSERT_NE(NULL, j = lab_slurp(PROBE_JSON, NULL)) TH_LOG("no --stats JSON: %s", r->err);
	EXPECT_NE(NULL, strstr(j, "\"probe\":{\"channel\":\"port\"")) TH_LOG("%s", strstr(j, "\"probe\""));
	EXPECT_EQ((long long)d->st.frames, probe_stat(j, "port", "frames"));
	EXPECT_GT(probe_stat(j, "port", "bytes"), 0);
	EXPECT_NE(NULL, strstr(j, "\"console\":{\"frames\":0,\"bytes\":0}"));
	EXPECT_NE(NULL, strstr(j, "{\"workload\":\"timer\",\"cpu\":1,\"n\":500,\"ended\":true,\"status\":0,"));
	EXPECT_NE(NULL, strstr(r->err, "vmm: virtio-console: multiport, control messages ")) TH_LOG("%s", r->err);
	EXPECT_NE(NULL, strstr(r->err, "port 0 org.vmm.probe: ")) TH_LOG("%s", r->err);
	EXPECT_NE(NULL, strstr(r->err, "vmm: probe: ")) TH_LOG("%s", r->err);
	printf("# PROBE-CHANNEL port: %lld frames, %lld bytes; console: %lld frames, %lld bytes\n",
	       probe_stat(j, "port", "frames"), probe_stat(j, "port", "bytes"), probe_stat(j, "console", "frames"),
	       probe_stat(j, "console", "bytes"));
	free(j);
}

/* Each console frame goes out through the guest's tty: 200 samples a workload took 70 s of the lab,
 * 100 still give a dozen frames among the kernel's lines. */
#define FALLBACK_COUNT 100

/* vmm.probe_out=console: the guest ignores the port and falls back to console lines, which vmm
 * decodes into the same stats. */
TEST_F_TIMEOUT(probe, console_fallback, 600)
{
	struct result *r = &self->r;
	struct probe_decoder *d = &self->d;
	size_t len = 1;
	char *bin, *j;

	run_probe(_metadata, r, d, FALLBACK_COUNT, " vmm.probe_out=console");
	check_series(_metadata, r, d, FALLBACK_COUNT);
	EXPECT_NE(NULL, strstr(r->out, "vmm-probe: clock "));
	EXPECT_NE(NULL, bin = lab_slurp(PROBE_BIN, &len));
	EXPECT_EQ(0, len) TH_LOG("frames on the port");
	free(bin);
	ASSERT_NE(NULL, j = lab_slurp(PROBE_JSON, NULL)) TH_LOG("no --stats JSON: %s", r->err);
	EXPECT_NE(NULL, strstr(j, "\"probe\":{\"channel\":\"console\",\"port\":{\"frames\":0,\"bytes\":0}"))
		TH_LOG("%s", strstr(j, "\"probe\""));
	EXPECT_EQ((long long)d->st.frames, probe_stat(j, "console", "frames"));
	EXPECT_GT(probe_stat(j, "console", "bytes"), 0);
	printf("# PROBE-CHANNEL fallback: port: %lld frames; console: %lld frames, %lld bytes\n",
	       probe_stat(j, "port", "frames"), probe_stat(j, "console", "frames"), probe_stat(j, "console", "bytes"));
	free(j);
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
