// SPDX-License-Identifier: MIT
/*
 * vmm ab's pieces that need no VM: which arms can switch inside one VM, the guest's clock line,
 * samples to epochs by host time, the sums taken from control-socket replies, saved runs written,
 * read back (and malformed ones refused), compared on known inputs, and plotted through gnuplot.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "ab/abstats.h"
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

/* A saved run with arms hp0 (timer: x0) and hp500us (timer: x1), as vmm ab --json writes it. */
static void save(const char *path, const double *x0, const double *x1)
{
	struct ab_raw r[2] = { { "timer", "hp0", (double *)x0, 100 }, { "timer", "hp500us", (double *)x1, 100 } };
	FILE *f = fopen(path, "w");

	fputs("{\"seed\":1,\"workloads\":[],", f);
	ab_saved_write_raw(f, r, 2);
	fputs("}\n", f);
	fclose(f);
}

static void put(const char *path, const char *text)
{
	FILE *f = fopen(path, "w");

	fputs(text, f);
	fclose(f);
}

TEST_F(saved, written_and_read_back)
{
	char p[128];
	struct ab_saved s;

	snprintf(p, sizeof(p), "%s/a.json", self->dir);
	save(p, self->lo, self->hi);
	ASSERT_EQ(0, ab_saved_read(p, &s));
	ASSERT_EQ(2, s.nr);
	EXPECT_STREQ("timer", s.r[0].workload);
	EXPECT_STREQ("hp500us", s.r[1].arm);
	ASSERT_EQ(100, s.r[1].n);
	EXPECT_EQ(101.0, s.r[1].x[0]);
	EXPECT_EQ(200.0, s.r[1].x[99]);
	ab_saved_free(&s);
}

/* The same arm of two runs: identical samples give p 1 and delta 0; a shift of 100 is found. */
TEST_F(saved, compare_known_inputs)
{
	char pa[128], pb[128], *out = NULL;
	size_t len = 0;
	struct ab_saved a, b;

	snprintf(pa, sizeof(pa), "%s/a.json", self->dir);
	snprintf(pb, sizeof(pb), "%s/b.json", self->dir);
	save(pa, self->lo, self->lo); /* run A: both arms 1..100 */
	save(pb, self->lo, self->hi); /* run B: hp0 the same, hp500us 101..200 */
	ASSERT_EQ(0, ab_saved_read(pa, &a));
	ASSERT_EQ(0, ab_saved_read(pb, &b));
	FILE *m = open_memstream(&out, &len);

	ASSERT_EQ(0, ab_saved_compare(m, "A", &a, "B", &b, "hp0", 1));
	fclose(m);
	EXPECT_NE(NULL, strstr(out, "== timer, arm hp0 (us): A A, B B")) TH_LOG("%s", out);
	EXPECT_NE(NULL, strstr(out, "p 1; Cliff's delta +0.000")) TH_LOG("%s", out);
	EXPECT_EQ(NULL, strstr(out, "hp500us"));
	free(out);
	out = NULL;
	m = open_memstream(&out, &len);
	ASSERT_EQ(0, ab_saved_compare(m, "A", &a, "B", &b, "hp500us", 1));
	fclose(m);
	/* every B sample above every A sample: U = 100 * 100, delta +1, p far below 1e-6 */
	EXPECT_NE(NULL, strstr(out, "Mann-Whitney U 10000.0")) TH_LOG("%s", out);
	EXPECT_NE(NULL, strstr(out, "Cliff's delta +1.000 (B tends larger)")) TH_LOG("%s", out);
	EXPECT_NE(NULL, strstr(out, "p50    50.5 [")) TH_LOG("%s", out);
	EXPECT_NE(NULL, strstr(out, "+100 [")) TH_LOG("%s", out);
	free(out);
	EXPECT_EQ(-ENODATA, ab_saved_compare(stderr, "A", &a, "B", &b, "nosuch", 1));
	ab_saved_free(&a);
	ab_saved_free(&b);
}

TEST_F(saved, malformed_refused)
{
	static const char *const bad[] = {
		"{\"seed\":1}",							/* no raw */
		"{\"raw\":{}}",							/* not a list */
		"{\"raw\":[{\"workload\":\"timer\",\"arm\":\"a\",\"unit\":\"us\",\"samples\":[1,x]}]}",
		"{\"raw\":[{\"workload\":\"timer\",\"arm\":\"a\",\"unit\":\"us\",\"samples\":[1,nan]}]}",
		"{\"raw\":[{\"workload\":\"timer\",\"arm\":\"a\",\"unit\":\"ms\",\"samples\":[1]}]}",
		"{\"raw\":[{\"workload\":\"timer\",\"arm\":\"a\",\"unit\":\"us\",\"evil\":1}]}",
		"{\"raw\":[{\"workload\":\"timer\",\"arm\":\"a\\\"b\",\"unit\":\"us\",\"samples\":[]}]}",
		"{\"raw\":[{\"workload\":\"timer\",\"arm\":\"a\",\"unit\":\"us\",\"samples\":[1,2]",	/* cut */
		"{\"raw\":[{\"arm\":\"a\",\"unit\":\"us\",\"samples\":[1]}]}",	/* no workload */
	};
	char p[128];
	struct ab_saved s;

	snprintf(p, sizeof(p), "%s/bad.json", self->dir);
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		put(p, bad[i]);
		EXPECT_EQ(-EINVAL, ab_saved_read(p, &s)) TH_LOG("accepted: %s", bad[i]);
		EXPECT_EQ(0, s.nr);
	}
	snprintf(p, sizeof(p), "%s/none.json", self->dir);
	EXPECT_GT(0, ab_saved_read(p, &s));
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

TEST_HARNESS_MAIN
