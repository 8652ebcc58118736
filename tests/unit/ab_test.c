// SPDX-License-Identifier: MIT
/*
 * vmm ab's pieces that need no VM: which arms can switch inside one VM, the guest's clock line,
 * samples to epochs by host time, the sums taken from control-socket replies, saved runs written,
 * read back (and malformed ones refused), compared on known inputs, and plotted through gnuplot.
 */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "ab/ab.h"
#include "ab/abstats.h"
#include "core/json.h"
#include "kselftest_harness.h"

TEST(runtime_arms)
{
	char *hp[] = { "--halt-poll-ns", "500000" }, *neg[] = { "--halt-poll-ns", "-1" },
	     *junk[] = { "--halt-poll-ns", "5x" }, *big[] = { "--halt-poll-ns", "99999999999" },
	     *more[] = { "--halt-poll-ns", "0", "-c", "2" }, *boot[] = { "--console", "virtio" };
	struct ab_knobs k = { .halt_poll_ns = 7 };

	EXPECT_EQ(1, ab_arm_runtime(hp, 2, &k));
	EXPECT_TRUE(k.has_halt_poll_ns);
	EXPECT_EQ(500000, k.halt_poll_ns);
	EXPECT_EQ(-1, k.poll_control);
	EXPECT_EQ(0, ab_arm_runtime(neg, 2, &k));
	EXPECT_EQ(0, ab_arm_runtime(junk, 2, &k));
	EXPECT_EQ(0, ab_arm_runtime(big, 2, &k));
	EXPECT_EQ(0, ab_arm_runtime(more, 4, &k));
	EXPECT_EQ(0, ab_arm_runtime(boot, 2, &k));
	EXPECT_EQ(0, ab_arm_runtime(hp, 0, &k));
}

/* MSR_KVM_POLL_CONTROL per vCPU is the other run-time knob: alone or with the ceiling, once each. */
TEST(runtime_arms_poll_control)
{
	char *pc[] = { "--poll-control", "0" }, *both[] = { "--poll-control", "1", "--halt-poll-ns", "0" },
	     *two[] = { "--poll-control", "1", "--poll-control", "0" }, *bad[] = { "--poll-control", "2" },
	     *odd[] = { "--poll-control", "1", "--halt-poll-ns" }, *neg[] = { "--poll-control", "-1" };
	struct ab_knobs k;

	EXPECT_EQ(1, ab_arm_runtime(pc, 2, &k));
	EXPECT_FALSE(k.has_halt_poll_ns);
	EXPECT_EQ(0, k.poll_control);
	EXPECT_EQ(1, ab_arm_runtime(both, 4, &k));
	EXPECT_TRUE(k.has_halt_poll_ns);
	EXPECT_EQ(0, k.halt_poll_ns);
	EXPECT_EQ(1, k.poll_control);
	EXPECT_EQ(0, ab_arm_runtime(two, 4, &k));
	EXPECT_EQ(0, ab_arm_runtime(bad, 2, &k));
	EXPECT_EQ(0, ab_arm_runtime(odd, 3, &k));
	EXPECT_EQ(0, ab_arm_runtime(neg, 2, &k));
}

TEST(clock_line)
{
	uint64_t ns = 0;
	const char *ok = "vmm-probe: clock 1234567890\r\n", *kmsg = "vmm-probe: clock 12[    3.1] rcu: x\n";

	EXPECT_TRUE(ab_parse_clock(ok, strlen(ok), &ns));
	EXPECT_EQ(1234567890ull, ns);
	EXPECT_TRUE(ab_parse_clock("x vmm-probe: clock 5", 20, &ns));
	EXPECT_EQ(5, ns);
	EXPECT_FALSE(ab_parse_clock(kmsg, strlen(kmsg), &ns));
	EXPECT_FALSE(ab_parse_clock("vmm-probe: clock \n", 18, &ns));
	EXPECT_FALSE(ab_parse_clock("vmm-probe: clock 123456789012345678901\n", 39, &ns));
	EXPECT_FALSE(ab_parse_clock("vmm-probe: timer cpu0 n=5\n", 26, &ns));
}

TEST(samples_to_epochs)
{
	const struct ab_span sp[] = { { 100, 200, 0 }, { 200, 300, 1 }, { 350, 450, 0 } };

	EXPECT_EQ(0, ab_epoch_of(sp, 3, 150, 10));
	EXPECT_EQ(1, ab_epoch_of(sp, 3, 250, 10));
	EXPECT_EQ(2, ab_epoch_of(sp, 3, 400, 10));
	EXPECT_EQ(0, ab_epoch_of(sp, 3, 100, 0));
	EXPECT_EQ(1, ab_epoch_of(sp, 3, 200, 0)); /* [start, end) */
	EXPECT_EQ(-1, ab_epoch_of(sp, 3, 105, 10)); /* near a switch: either setting */
	EXPECT_EQ(-1, ab_epoch_of(sp, 3, 195, 10));
	EXPECT_EQ(-1, ab_epoch_of(sp, 3, 320, 10)); /* between epochs */
	EXPECT_EQ(-1, ab_epoch_of(sp, 3, 50, 10));  /* before the first */
	EXPECT_EQ(-1, ab_epoch_of(sp, 3, 500, 10)); /* after the last */
	EXPECT_EQ(-1, ab_epoch_of(sp, 0, 150, 10));
}

TEST(reply_sums)
{
	const char *stats = "{\"sources\":[{\"name\":\"vm\",\"id\":\"x\",\"stats\":[]},"
			    "{\"name\":\"vcpu0\",\"id\":\"y\",\"stats\":[{\"name\":\"halt_successful_poll\","
			    "\"type\":\"cumulative\",\"value\":7},{\"name\":\"halt_wait_hist\",\"buckets\":[1,2]}]},"
			    "{\"name\":\"vcpu1\",\"id\":\"z\",\"stats\":[{\"name\":\"halt_successful_poll\","
			    "\"type\":\"cumulative\",\"value\":35}]}]}";

	EXPECT_EQ(42, ab_json_sum_stat(stats, "halt_successful_poll"));
	EXPECT_EQ(-1, ab_json_sum_stat(stats, "halt_attempted_poll"));
	EXPECT_EQ(-1, ab_json_sum_stat(stats, "halt_wait_hist")); /* a histogram has no value */
	EXPECT_EQ(3000, ab_json_sum_array("{\"ok\":true,\"vcpu_cpu_ns\":[1000,2000]}", "vcpu_cpu_ns"));
	EXPECT_EQ(0, ab_json_sum_array("{\"vcpu_cpu_ns\":[]}", "vcpu_cpu_ns"));
	EXPECT_EQ(-1, ab_json_sum_array("{\"vcpu_cpu_ns\":[1000,-1]}", "vcpu_cpu_ns")); /* a thread gone */
	EXPECT_EQ(-1, ab_json_sum_array("{\"vcpu_cpu_ns\":[1000,x]}", "vcpu_cpu_ns"));
	EXPECT_EQ(-1, ab_json_sum_array("{\"ok\":true}", "vcpu_cpu_ns"));
}

FIXTURE(saved) {
	char dir[64];
	double lo[100], hi[100];
};
FIXTURE_SETUP(saved)
{
	snprintf(self->dir, sizeof(self->dir), "/tmp/ab_test.XXXXXX");
	ASSERT_NE(NULL, mkdtemp(self->dir));
	for (int i = 0; i < 100; i++) {
		self->lo[i] = i + 1;
		self->hi[i] = i + 101;
	}
}
FIXTURE_TEARDOWN(saved)
{
	char cmd[128];

	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", self->dir);
	if (system(cmd))
		TH_LOG("could not remove %s", self->dir);
}

/* A saved run (format 2) with arms hp0 and hp500us, 4 epochs each after one warm-up epoch; the
 * timer samples of epoch e are base * (1 + i/100), i = 0..99, times scale for hp500us. */
static void save(const char *path, double base, double scale)
{
	FILE *f = fopen(path, "w");

	fputs("{\"format\":2,\"seed\":1,\"epochs\":[", f);
	for (int e = 0; e < 9; e++) {
		bool b = e % 2;

		fprintf(f, "%s{\"index\":%d,\"arm\":\"%s\",\"warmup\":%s,\"complete\":true,\"workloads\":{\"timer\":"
			   "{\"unit\":\"us\",\"samples\":[", e ? "," : "", e, b ? "hp500us" : "hp0", e ? "false" : "true");
		for (int i = 0; i < 100; i++)
			fprintf(f, "%s%.3f", i ? "," : "", base * (1 + i / 100.0) * (b ? scale : 1) * (e ? 1 : 50));
		fputs("]}}}", f);
	}
	fputs("]}\n", f);
	fclose(f);
}

static void put(const char *path, const char *text)
{
	FILE *f = fopen(path, "w");

	fputs(text, f);
	fclose(f);
}

/* Type 7 p50 of base * (1 + i/100), i = 0..99: base * 1.495; the run's value is the geometric
 * mean of its epochs' (equal) medians, the warm-up epoch (50 times larger) left out. */
TEST_F(saved, written_and_read_back)
{
	char p[128];
	struct ab_saved s;

	snprintf(p, sizeof(p), "%s/a.json", self->dir);
	save(p, 100, 2);
	ASSERT_EQ(0, ab_saved_read(p, &s));
	ASSERT_EQ(2, s.nr);
	EXPECT_STREQ("timer", s.r[0].workload);
	EXPECT_STREQ("hp500us", s.r[0].arm); /* in the order first seen after warm-up */
	EXPECT_STREQ("hp0", s.r[1].arm);
	EXPECT_EQ(4, s.r[0].epochs);
	ASSERT_EQ(400, s.r[1].n);
	EXPECT_LT(fabs(299.0 - s.r[0].q[0]), 1e-6) TH_LOG("%g", s.r[0].q[0]);
	EXPECT_LT(fabs(149.5 - s.r[1].q[0]), 1e-6) TH_LOG("%g", s.r[1].q[0]);
	ab_saved_free(&s);
}

/* json: NULL, or where vmm ab compare --json's text goes (the caller frees it). */
static char *compare_both(const char *dir, int na, int nb, double scale_b, bool fail, int *ret, char **json)
{
	static struct ab_saved a[8], b[8];
	char *names_a[8], *names_b[8], *out = NULL;
	size_t len = 0, jlen = 0;

	for (int i = 0; i < na + nb; i++) {
		char *p = malloc(128);

		snprintf(p, 128, "%s/run%d.json", dir, i);
		/* each run a little different (host state per boot), B's hp0 arm scaled by scale_b */
		save(p, 100 * (1 + 0.01 * (i % 3)) * (i < na ? 1 : scale_b), 1.0);
		if (i < na) {
			names_a[i] = p;
			ab_saved_read(p, &a[i]);
		} else {
			names_b[i - na] = p;
			ab_saved_read(p, &b[i - na]);
		}
	}
	FILE *m = open_memstream(&out, &len), *j = json ? open_memstream(json, &jlen) : NULL;

	*ret = ab_saved_compare(m, j, names_a, a, na, names_b, b, nb, "hp0", 1, 0.01, 0.05, fail);
	fclose(m);
	if (j)
		fclose(j);
	for (int i = 0; i < na; i++) {
		ab_saved_free(&a[i]);
		free(names_a[i]);
	}
	for (int i = 0; i < nb; i++) {
		ab_saved_free(&b[i]);
		free(names_b[i]);
	}
	return out;
}

static char *compare_text(const char *dir, int na, int nb, double scale_b, bool fail, int *ret)
{
	return compare_both(dir, na, nb, scale_b, fail, ret, NULL);
}

/* Runs as units: 6 against 6 runs, B 20% slower: C(12,6) = 924 splits, the observed one and its
 * mirror the most extreme, p = 2/924 = 0.0022 < 0.01/3: B slower; 3 against 3 (floor 2/20) cannot
 * reach 0.01: inconclusive; one a side is shown, not judged. */
TEST_F(saved, compare_runs_as_units)
{
	int r;
	char *out = compare_text(self->dir, 6, 6, 1.2, false, &r);

	EXPECT_EQ(0, r);
	EXPECT_NE(NULL, strstr(out, "== the unit is the run: 6 runs against 6")) TH_LOG("%s", out);
	EXPECT_NE(NULL, strstr(out, "p50  A 151")) TH_LOG("%s", out);
	EXPECT_NE(NULL, strstr(out, "shift +20.0%")) TH_LOG("%s", out);
	EXPECT_NE(NULL, strstr(out, "p 0.00216 (smallest possible 0.00216, every split), B slower")) TH_LOG("%s", out);
	free(out);
	out = compare_text(self->dir, 6, 6, 1.2, true, &r);
	EXPECT_EQ(1, r) TH_LOG("--fail-on-regression: %s", out);
	free(out);
	out = compare_text(self->dir, 3, 3, 1.2, true, &r);
	EXPECT_EQ(0, r);
	EXPECT_NE(NULL, strstr(out, "p 0.1 (smallest possible 0.1, every split), inconclusive")) TH_LOG("%s", out);
	free(out);
	out = compare_text(self->dir, 1, 1, 1.2, true, &r);
	EXPECT_EQ(0, r);
	EXPECT_NE(NULL, strstr(out, "cannot be judged: one run a side")) TH_LOG("%s", out);
	free(out);
	/* identical sides: the intervals lie within +-5%: equivalent (never a bare "no difference") */
	out = compare_text(self->dir, 6, 6, 1.0, true, &r);
	EXPECT_EQ(0, r);
	EXPECT_NE(NULL, strstr(out, "p 1 (smallest possible 0.00216, every split), equivalent")) TH_LOG("%s", out);
	free(out);
}

/* Runs that do not match are said: a workload and arm one run lacks is dropped by name, runs of
 * very different epoch counts are named with their counts. */
TEST_F(saved, compare_says_what_it_drops_and_mismatches)
{
	static struct ab_saved a[2], b[2];
	char *na[2], *nb[2], *out = NULL, p[4][128];
	size_t len = 0;

	for (int i = 0; i < 4; i++) {
		snprintf(p[i], sizeof(p[i]), "%s/m%d.json", self->dir, i);
		save(p[i], 100 + i, 1.0);
	}
	/* m2: one more epoch of hp0 with 3 samples, dropped by the reader and said */
	put(p[2], "{\"format\":2,\"epochs\":[{\"arm\":\"hp0\",\"warmup\":false,\"complete\":true,\"workloads\":"
		  "{\"timer\":{\"unit\":\"us\",\"samples\":[100,101,102]}}},{\"arm\":\"hp0\",\"warmup\":false,"
		  "\"complete\":true,\"workloads\":{\"timer\":{\"unit\":\"us\",\"samples\":[100,101,102,103,104,105]}}},"
		  "{\"arm\":\"hp500us\",\"warmup\":false,\"complete\":true,\"workloads\":{\"timer\":{\"unit\":\"us\","
		  "\"samples\":[100,101,102,103,104,105]}}}]}");
	/* m3: one epoch of hp0 only (and the warm-up): hp500us is missing, hp0 has 1 epoch against 4 */
	put(p[3], "{\"format\":2,\"epochs\":[{\"arm\":\"hp0\",\"warmup\":true,\"complete\":true,\"workloads\":{}},"
		  "{\"arm\":\"hp0\",\"warmup\":false,\"complete\":true,\"workloads\":{\"timer\":{\"unit\":\"us\","
		  "\"samples\":[100,101,102,103,104,105]}}}]}");
	for (int i = 0; i < 2; i++) {
		na[i] = p[i];
		nb[i] = p[2 + i];
		ASSERT_EQ(0, ab_saved_read(p[i], &a[i]));
		ASSERT_EQ(0, ab_saved_read(p[2 + i], &b[i]));
	}
	FILE *f = open_memstream(&out, &len);

	EXPECT_EQ(0, ab_saved_compare(f, NULL, na, a, 2, nb, b, 2, NULL, 1, 0.01, 0.05, false));
	fclose(f);
	EXPECT_NE(NULL, strstr(out, "note: timer, arm hp500us dropped: ")) TH_LOG("%s", out);
	EXPECT_NE(NULL, strstr(out, "m3.json has no epoch of it after warm-up")) TH_LOG("%s", out);
	EXPECT_NE(NULL, strstr(out, "note: timer, arm hp0: the runs differ in precision: 1 epochs in ")) TH_LOG("%s", out);
	EXPECT_NE(NULL, strstr(out, "m2.json: 1 workload epoch dropped: under 5 samples")) TH_LOG("%s", out);
	free(out);
	for (int i = 0; i < 2; i++) {
		ab_saved_free(&a[i]);
		ab_saved_free(&b[i]);
	}
}

/* vmm ab compare --json: the text's numbers as one object, the comparisons with the fields of
 * vmm ab's own (docs/ab.md) and "unit":"run"; one run a side: judged false and no verdicts. */
TEST_F(saved, compare_json)
{
	static const char *const keys[] = { "workload", "quantity", "a", "b", "arm", "unit", "blocks", "exact",
					    "p", "p_floor", "a_median", "b_median", "effect", "effect_ci",
					    "equivalence_ci", "min_detectable_effect", "min_detectable_slower",
					    "min_detectable_faster", "holm_reject", "verdict" };
	char *json = NULL, err[128];
	int r;
	char *out = compare_both(self->dir, 6, 6, 1.2, false, &r, &json);
	struct json v;

	EXPECT_EQ(0, r);
	ASSERT_NE(NULL, json);
	ASSERT_EQ(0, json_parse(json, strlen(json), &v, err, sizeof(err))) TH_LOG("%s: %s", err, json);
	EXPECT_STREQ("vmm ab compare", json_get(&v, "tool")->str);
	EXPECT_STREQ("run", json_get(&v, "unit")->str);
	EXPECT_TRUE(json_get(&v, "judged")->b);
	EXPECT_EQ(6, json_get(&v, "a")->n);
	EXPECT_EQ(6, json_get(&v, "b")->n);
	EXPECT_NE(NULL, strstr(json_get(&v, "b")->items[0].str, "/run6.json"));
	const struct json *c = json_get(&v, "comparisons");

	ASSERT_NE(NULL, c);
	ASSERT_EQ(3, c->n) TH_LOG("%s", json); /* hp0's timer: p50, p90, p99 */
	for (size_t i = 0; i < sizeof(keys) / sizeof(keys[0]); i++) {
		EXPECT_NE(NULL, json_get(&c->items[0], keys[i])) TH_LOG("no %s: %s", keys[i], json);
	}
	EXPECT_EQ(sizeof(keys) / sizeof(keys[0]), c->items[0].n);
	EXPECT_STREQ("timer", json_get(&c->items[0], "workload")->str);
	EXPECT_STREQ("p50", json_get(&c->items[0], "quantity")->str);
	EXPECT_STREQ("hp0", json_get(&c->items[0], "arm")->str);
	EXPECT_STREQ("run", json_get(&c->items[0], "unit")->str);
	EXPECT_EQ(12, json_get(&c->items[0], "blocks")->num);
	/* the text's numbers: p 0.00216, +20.0%, B slower */
	EXPECT_LT(fabs(json_get(&c->items[0], "p")->num - 2.0 / 924), 1e-5);
	EXPECT_LT(fabs(json_get(&c->items[0], "effect")->num - 0.2), 1e-3);
	EXPECT_STREQ("B slower", json_get(&c->items[0], "verdict")->str);
	EXPECT_NE(NULL, strstr(out, "p 0.00216 (smallest possible 0.00216, every split), B slower")) TH_LOG("%s", out);
	json_free(&v);
	free(json);
	free(out);
	json = NULL;
	out = compare_both(self->dir, 1, 1, 1.2, false, &r, &json);
	ASSERT_NE(NULL, json);
	ASSERT_EQ(0, json_parse(json, strlen(json), &v, err, sizeof(err))) TH_LOG("%s: %s", err, json);
	EXPECT_FALSE(json_get(&v, "judged")->b);
	c = json_get(&v, "comparisons");
	ASSERT_NE(NULL, c);
	ASSERT_LT(0, c->n);
	EXPECT_EQ(NULL, json_get(&c->items[0], "verdict")) TH_LOG("%s", json);
	json_free(&v);
	free(json);
	free(out);
}

/* Issue 19: a second "samples" key overflowed the heap (the capacity was a local of the first
 * read). Any repeated key is refused now, by the JSON reader itself. */
TEST_F(saved, duplicate_keys_refused)
{
	char p[128], why[256];
	struct ab_saved s;
	FILE *f;

	snprintf(p, sizeof(p), "%s/dup.json", self->dir);
	f = fopen(p, "w");
	fputs("{\"format\":2,\"epochs\":[{\"arm\":\"a\",\"warmup\":false,\"complete\":true,\"workloads\":{\"timer\":"
	      "{\"unit\":\"us\",\"samples\":[1],\"samples\":[", f);
	for (int i = 0; i < 2000; i++)
		fprintf(f, "%s%d", i ? "," : "", i);
	fputs("]}}}]}", f);
	fclose(f);
	EXPECT_EQ(-EINVAL, ab_saved_read(p, &s));
	EXPECT_EQ(0, s.nr);
	const char *two = "{\"format\":2,\"format\":2,\"epochs\":[]}";

	EXPECT_EQ(-EINVAL, ab_saved_parse(two, strlen(two), &s, why, sizeof(why)));
	EXPECT_NE(NULL, strstr(why, "the key \"format\" twice in one object")) TH_LOG("%s", why);
}

TEST_F(saved, malformed_refused)
{
	static const char *const bad[] = {
		"{\"seed\":1}",								/* no format */
		"{\"format\":2,\"epochs\":{}}",						/* not a list */
		"{\"format\":2,\"epochs\":[{\"arm\":\"a\",\"warmup\":false,\"complete\":true,\"workloads\":"
		"{\"timer\":{\"unit\":\"us\",\"samples\":[1,x]}}}]}",
		"{\"format\":2,\"epochs\":[{\"arm\":\"a\",\"warmup\":false,\"complete\":true,\"workloads\":"
		"{\"timer\":{\"unit\":\"ms\",\"samples\":[1,2,3,4,5]}}}]}",
		"{\"format\":2,\"epochs\":[{\"arm\":\"a b\",\"warmup\":false,\"complete\":true,\"workloads\":{}}]}",
		"{\"format\":2,\"epochs\":[{\"arm\":\"a\",\"warmup\":false,\"complete\":true,\"workloads\":"
		"{\"timer\":{\"unit\":\"us\",\"samples\":[1,2]", /* cut */
		"{\"format\":2,\"epochs\":[{\"warmup\":false,\"complete\":true,\"workloads\":{}}]}", /* no arm */
		"{\"format\":2,\"epochs\":[{\"arm\":\"a\",\"warmup\":false,\"complete\":true,\"workloads\":"
		"{\"timer\":{\"unit\":\"us\",\"samples\":[1,2,3,4,-5]}}}]}",
		"{\"format\":2,\"epochs\":[]} x",
		"[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]",
	};
	char p[128], why[256];
	struct ab_saved s;

	snprintf(p, sizeof(p), "%s/bad.json", self->dir);
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		put(p, bad[i]);
		EXPECT_EQ(-EINVAL, ab_saved_read(p, &s)) TH_LOG("accepted: %s", bad[i]);
		EXPECT_EQ(0, s.nr);
	}
	snprintf(p, sizeof(p), "%s/none.json", self->dir);
	EXPECT_GT(0, ab_saved_read(p, &s));
	/* a file of the older format is refused with why */
	const char *old = "{\"seed\":1,\"workloads\":[],\"raw\":[{\"workload\":\"timer\",\"arm\":\"a\",\"unit\":\"us\","
			  "\"samples\":[1,2,3]}]}";

	EXPECT_EQ(-EINVAL, ab_saved_parse(old, strlen(old), &s, why, sizeof(why)));
	EXPECT_NE(NULL, strstr(why, "written by an older vmm ab (one pooled, sorted array per arm, no epochs)")) TH_LOG("%s", why);
}

/* The CDF plot of a saved run: data, script, and gnuplot's SVG and PNG (gnuplot-nox, make deps). */
TEST_F(saved, plots_rendered)
{
	char prefix[128], path[160];
	const char *names[2] = { "hp0", "hp500us" };
	double *x[2] = { self->lo, self->hi };
	size_t n[2] = { 100, 100 };
	struct stat st;

	snprintf(prefix, sizeof(prefix), "%s/ab", self->dir);
	int r = ab_write_plot(prefix, "timer", names, x, n, 2);

	ASSERT_LE(0, r);
	snprintf(path, sizeof(path), "%s-timer.dat", prefix);
	ASSERT_EQ(0, stat(path, &st));
	EXPECT_GT(st.st_size, 200 * 10);
	snprintf(path, sizeof(path), "%s-timer.gp", prefix);
	ASSERT_EQ(0, stat(path, &st));
	if (r == 0)
		SKIP(return, "gnuplot is not installed (make deps installs gnuplot-nox)");
	static const char *const ext[] = { "svg", "png" };

	for (int i = 0; i < 2; i++) {
		snprintf(path, sizeof(path), "%s-timer.%s", prefix, ext[i]);
		EXPECT_EQ(0, stat(path, &st)) TH_LOG("no %s", path);
		EXPECT_GT(st.st_size, 1000) TH_LOG("%s is nearly empty", path);
	}
	snprintf(path, sizeof(path), "%s-timer.png", prefix);
	FILE *f = fopen(path, "rb");
	unsigned char sig[8] = { 0 };

	ASSERT_NE(NULL, f);
	EXPECT_EQ(8, fread(sig, 1, 8, f));
	fclose(f);
	EXPECT_EQ(0, memcmp(sig, "\x89PNG\r\n\x1a\n", 8));
}

/* The control socket and stats file live in a fresh 0700 directory, not at /tmp/vmm-ab-PID.* (a
 * predictable name another user could plant a symlink at); removed with its contents. */
TEST(tmpdir_private_and_removed)
{
	char a[64], b[64], p[96], old[64];
	struct stat st;

	ASSERT_EQ(0, ab_tmpdir_make(a, sizeof(a)));
	ASSERT_EQ(0, ab_tmpdir_make(b, sizeof(b)));
	EXPECT_STRNE(a, b);
	snprintf(old, sizeof(old), "%d", getpid());
	EXPECT_EQ(NULL, strstr(a, old)) TH_LOG("%s holds the pid", a);
	ASSERT_EQ(0, lstat(a, &st));
	EXPECT_TRUE(S_ISDIR(st.st_mode));
	EXPECT_EQ(0700, st.st_mode & 0777);
	EXPECT_EQ(getuid(), st.st_uid);
	snprintf(p, sizeof(p), "%s/stats.json", a);
	FILE *f = fopen(p, "w");

	ASSERT_NE(NULL, f);
	fclose(f);
	ab_tmpdir_remove(a);
	EXPECT_EQ('\0', a[0]);
	EXPECT_NE(0, access(p, F_OK));
	ab_tmpdir_remove(b);
}

static double gauss(struct ab_rng *r)
{
	return sqrt(-2 * log(ab_rng_double(r) + 1e-300)) * cos(2 * M_PI * ab_rng_double(r));
}

/* A finished run made up: blocks of hp0 and hp500us epochs, each epoch's timer samples log-normal
 * around 100 us with a 5% per-epoch offset, hp500us's scaled by scale. */
static void fake_run(struct ab *ab, int blocks, double scale, uint64_t seed)
{
	struct ab_rng r;

	for (int e = 0; e < ab->nr_runs; e++)
		free(ab->run[e].x[1]);
	memset(ab, 0, sizeof(*ab));
	ab_rng_seed(&r, seed);
	snprintf(ab->arm[0].name, sizeof(ab->arm[0].name), "hp0");
	snprintf(ab->arm[1].name, sizeof(ab->arm[1].name), "hp500us");
	ab->nr_arms = 2;
	ab->epochs = blocks;
	ab->warmup = 1;
	ab->epoch_ms = 500;
	ab->alpha = 0.01;
	ab->min_effect = 0.05;
	ab->seed = seed;
	ab->mode = AB_ONE_VM;
	for (int e = 0; e < 2 * blocks; e++) {
		struct ab_run *x = &ab->run[e];
		double off = 0.05 * gauss(&r);

		x->arm = (e + e / 2) % 2; /* AB BA AB ... */
		x->block = e / 2;
		x->complete = true;
		x->cpu_s = 0.1 * (1 + 0.02 * gauss(&r));
		x->n[1] = 200;
		x->x[1] = malloc(200 * sizeof(double));
		for (int i = 0; i < 200; i++)
			x->x[1][i] = 100 * exp(off + 0.5 * gauss(&r)) * (x->arm ? scale : 1);
	}
	ab->nr_runs = 2 * blocks;
}

/* ab_report's text, its return value and the --json file. */
static char *report(struct ab *ab, const char *json, int *ret)
{
	char path[] = "/tmp/ab_report.XXXXXX";
	int fd = mkstemp(path), saved = dup(1);

	fflush(stdout);
	dup2(fd, 1);
	ab->json = json;
	*ret = ab_report(ab);
	fflush(stdout);
	dup2(saved, 1);
	close(saved);
	char *text = calloc(1, 1 << 20);

	lseek(fd, 0, SEEK_SET);
	if (read(fd, text, (1 << 20) - 1) < 0)
		text[0] = 0;
	close(fd);
	unlink(path);
	return text;
}

/* The runner's analysis on made-up epochs: identical arms give no difference, a 30% slower arm B
 * is "B slower" (and --fail-on-regression exits 1), 4 blocks are inconclusive with the blocks
 * needed; the JSON keeps every epoch's samples and the comparisons with the epoch as the unit. */
TEST(report_verdicts)
{
	static struct ab ab;
	char json[] = "/tmp/ab_report_json.XXXXXX";
	int ret, fd = mkstemp(json);
	char *out;

	close(fd);
	fake_run(&ab, 12, 1.0, 5);
	out = report(&ab, json, &ret);
	EXPECT_EQ(0, ret);
	EXPECT_NE(NULL, strstr(out, "== timer (us): hp500us against hp0, 11 blocks (smallest possible p 0.000977, exact)"))
		TH_LOG("%s", out);
	EXPECT_NE(NULL, strstr(out, "verdict timer, hp500us against hp0: not shown (no shift of at least 5% was shown; p50 "))
		TH_LOG("%s", out);
	char *j = calloc(1, 8 << 20);
	FILE *f = fopen(json, "r");

	ASSERT_NE(NULL, f);
	EXPECT_LT(0, fread(j, 1, (8 << 20) - 1, f));
	fclose(f);
	EXPECT_NE(NULL, strstr(j, "{\"format\":2,"));
	EXPECT_NE(NULL, strstr(j, "\"epochs\":[{\"index\":0,\"block\":0,\"arm\":\"hp0\",\"warmup\":true"));
	EXPECT_NE(NULL, strstr(j, "\"workloads\":{\"timer\":{\"unit\":\"us\",\"n\":200,\"p50\":"));
	EXPECT_NE(NULL, strstr(j, "\"quantity\":\"p50\",\"a\":\"hp0\",\"b\":\"hp500us\",\"unit\":\"epoch\",\"blocks\":11"));
	EXPECT_NE(NULL, strstr(j, "\"min_detectable_effect\":"));
	EXPECT_NE(NULL, strstr(j, "\"verdicts\":[{\"workload\":\"timer\",\"a\":\"hp0\",\"b\":\"hp500us\",\"verdict\":\"not shown\"}]"));
	/* the file reads back as a saved run */
	struct ab_saved s;

	EXPECT_EQ(0, ab_saved_read(json, &s));
	EXPECT_EQ(2, s.nr);
	ab_saved_free(&s);
	free(j);
	free(out);
	fake_run(&ab, 12, 1.3, 6);
	ab.fail_on_regression = true;
	out = report(&ab, NULL, &ret);
	EXPECT_EQ(1, ret);
	EXPECT_NE(NULL, strstr(out, "verdict timer, hp500us against hp0: B slower")) TH_LOG("%s", out);
	free(out);
	fake_run(&ab, 4, 1.3, 7);
	out = report(&ab, NULL, &ret);
	EXPECT_EQ(0, ret);
	EXPECT_NE(NULL, strstr(out, "inconclusive (3 blocks can give p 0.25 at best; p < 0.00333, alpha 0.01 over 3 "
				    "judgements, needs 10 blocks: --epochs 11 with --warmup 1)")) TH_LOG("%s", out);
	free(out);
	fake_run(&ab, 0, 1, 1);
	unlink(json);
}

/* Arms whose epochs hold very different sample counts: said, compared at the smaller count, and a
 * quantile the smaller epochs cannot give (p99 from 20 samples) is not judged, with the reason, in
 * the text and the JSON's notes. An epoch whose p50 is 0 drops its block, said too. */
TEST(report_unequal_counts_and_drops)
{
	static struct ab ab;
	char json[] = "/tmp/ab_report_json.XXXXXX";
	int ret, fd = mkstemp(json);

	close(fd);
	fake_run(&ab, 12, 1.0, 8);
	for (int e = 0; e < ab.nr_runs; e++)
		if (ab.run[e].arm == 1)
			ab.run[e].n[1] = 20;
	for (int i = 0; i < 200; i++) /* block 3's hp0 epoch: every sample 0 us */
		ab.run[ab.run[6].arm == 0 ? 6 : 7].x[1][i] = 0;
	char *out = report(&ab, json, &ret);

	EXPECT_EQ(0, ret);
	EXPECT_NE(NULL, strstr(out, "note timer, hp500us against hp0: hp500us yields 20 samples per epoch against hp0's 200 "
				    "(medians): each block compares the two at the smaller epoch's count")) TH_LOG("%s", out);
	EXPECT_NE(NULL, strstr(out, "p99: 11 of 11 blocks dropped: an epoch under the 100 samples a p99 needs (the "
				    "smallest has 20)")) TH_LOG("%s", out);
	EXPECT_NE(NULL, strstr(out, "p99 not judged: no block left")) TH_LOG("%s", out);
	EXPECT_NE(NULL, strstr(out, "p50: 1 of 11 blocks dropped: a p50 of 0 us")) TH_LOG("%s", out);
	EXPECT_NE(NULL, strstr(out, "Holm over 2 judgements")) TH_LOG("%s", out);
	char *j = calloc(1, 8 << 20);
	FILE *f = fopen(json, "r");

	ASSERT_NE(NULL, f);
	EXPECT_LT(0, fread(j, 1, (8 << 20) - 1, f));
	fclose(f);
	EXPECT_NE(NULL, strstr(j, "\"notes\":[{\"workload\":\"timer\",\"a\":\"hp0\",\"b\":\"hp500us\",\"quantity\":null,"
				  "\"note\":\"hp500us yields 20 samples")) TH_LOG("%s", strstr(j, "\"notes\"") ?: j);
	EXPECT_NE(NULL, strstr(j, "\"quantity\":\"p99\",\"note\":\"p99 not judged: no block left\"}"));
	EXPECT_EQ(NULL, strstr(j, "\"quantity\":\"p99\",\"a\":")) TH_LOG("p99 is in no comparison");
	free(j);
	free(out);
	fake_run(&ab, 0, 1, 1);
	unlink(json);
}

/* vmm ab judge: a saved run judged again gives the run's own report (same seed, same numbers);
 * a new --min-effect changes the verdict; files it cannot take are refused. */
TEST(judge_a_saved_run_again)
{
	static struct ab ab, again;
	char json[] = "/tmp/ab_judge_json.XXXXXX", why[256];
	int ret, fd = mkstemp(json);
	size_t len;

	close(fd);
	fake_run(&ab, 12, 1.08, 9);
	char *first = report(&ab, json, &ret), *text = ab_file_read(json, AB_SAVED_MAX, &len);

	ASSERT_NE(NULL, text);
	ASSERT_EQ(0, ab_saved_load(text, len, &again, why, sizeof(why))) TH_LOG("%s", why);
	EXPECT_EQ(ab.nr_runs, again.nr_runs);
	EXPECT_EQ(ab.seed, again.seed);
	char *second = report(&again, NULL, &ret), *trade = strstr(first, "== the other side");

	/* the same verdicts and numbers (the CPU figures, saved to the microsecond, may round apart) */
	ASSERT_NE(NULL, trade);
	EXPECT_EQ(0, strncmp(first, second, trade - first)) TH_LOG("%s\n--- again:\n%s", first, second);
	again.min_effect = 0.5;
	char *third = report(&again, NULL, &ret);

	EXPECT_NE(NULL, strstr(third, "minimum effect 50%")) TH_LOG("%s", third);
	EXPECT_EQ(NULL, strstr(third, ": B slower")) TH_LOG("an 8%% shift is below 50%%: %s", third);
	ab_saved_unload(&again);
	/* a block that runs one arm twice, and a compare file, are refused */
	char *bad = strdup(text), *arm1 = strstr(bad, "\"arm\":\"hp500us\",\"warmup\"");

	ASSERT_NE(NULL, arm1);
	memcpy(arm1, "\"arm\":\"hp0\"    ", 15); /* the same length: the file stays well-formed */
	EXPECT_EQ(-EINVAL, ab_saved_load(bad, strlen(bad), &again, why, sizeof(why)));
	EXPECT_NE(NULL, strstr(why, "one arm twice")) TH_LOG("%s", why);
	const char *cmp = "{\"format\":2,\"tool\":\"vmm ab compare\",\"comparisons\":[]}";

	EXPECT_EQ(-EINVAL, ab_saved_load(cmp, strlen(cmp), &again, why, sizeof(why)));
	EXPECT_NE(NULL, strstr(why, "judged already")) TH_LOG("%s", why);
	char *argv[] = { "judge", json, "--alpha", "2", NULL };

	EXPECT_EQ(1, ab_judge_cmd(4, argv)) TH_LOG("--alpha 2 is refused");
	free(bad);
	free(text);
	free(first);
	free(second);
	free(third);
	fake_run(&ab, 0, 1, 1);
	unlink(json);
}

TEST_HARNESS_MAIN
