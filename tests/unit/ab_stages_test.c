// SPDX-License-Identifier: MIT
/*
 * vmm ab --attribute without KVM: a vmm run's attribution FILE (a hand-written fixture,
 * tests/unit/fixtures/ab_stages/) read and its rows put into one-VM epochs by the probe's own
 * tagging; each epoch's stage medians; the stage section of a made-up run where one stage clearly
 * moved and others did not, its JSON read back by vmm ab judge, and saved runs compared; a FILE
 * missing (the child's reason said once) or malformed (refused with why, the A/B result intact).
 * Run from the repository's top (make check does).
 */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "ab/ab.h"
#include "kselftest_harness.h"

#define FIX "tests/unit/fixtures/ab_stages/"
#define NEAR(want, got, tol) EXPECT_LT(fabs((double)(want) - (got)), tol) TH_LOG("want %.6g got %.6g", (double)(want), (double)(got))

static char *slurp(const char *path, size_t *len)
{
	char *t = ab_file_read(path, 1 << 20, len);

	return t;
}

/* What fn printed on fd (1 or 2) while it ran, NUL-terminated (malloc'd). */
struct call {
	void (*fn)(void *arg);
	void *arg;
};

static char *capture(int fd, struct call c)
{
	char path[] = "/tmp/ab_stages_test.XXXXXX";
	int tmp = mkstemp(path), saved = dup(fd);

	fflush(fd == 1 ? stdout : stderr);
	dup2(tmp, fd);
	c.fn(c.arg);
	fflush(fd == 1 ? stdout : stderr);
	dup2(saved, fd);
	close(saved);
	char *text = calloc(1, 1 << 20);

	lseek(tmp, 0, SEEK_SET);
	if (read(tmp, text, (1 << 20) - 1) < 0)
		text[0] = 0;
	close(tmp);
	unlink(path);
	return text;
}

static int count_of(const char *hay, const char *needle)
{
	int n = 0;

	for (const char *p = hay; (p = strstr(p, needle)); p++)
		n++;
	return n;
}

static void free_runs(struct ab *ab)
{
	for (int e = 0; e < ab->nr_runs; e++)
		for (int w = 0; w <= PROBE_W_MAX; w++)
			free(ab->run[e].x[w]);
	memset(ab, 0, sizeof(*ab));
}

/* The fixture's epochs: four 1 s epochs on the host's clock from 2 s, hp0 hp500us | hp500us hp0 */
static void fixture_epochs(struct ab *ab)
{
	memset(ab, 0, sizeof(*ab));
	ab->at.err.fd = -1;
	ab->nr_arms = 2;
	snprintf(ab->arm[0].name, sizeof(ab->arm[0].name), "hp0");
	snprintf(ab->arm[1].name, sizeof(ab->arm[1].name), "hp500us");
	ab->epoch_ms = 1000;
	ab->nr_runs = 4;
	for (int e = 0; e < 4; e++) {
		int arm = e == 1 || e == 2;

		ab->span[e] = (struct ab_span){ 2000000000ull + e * 1000000000ull, 3000000000ull + e * 1000000000ull, arm };
		ab->run[e] = (struct ab_run){ .arm = arm, .block = e / 2, .complete = true };
	}
}

/* The fixture read and tagged as one VM tags the probe's samples (host = guest + 1 s), each epoch
 * reduced to its medians per class. */
TEST(fixture_into_epochs)
{
	static struct ab ab;
	struct ab_attr_file f;
	char why[256];
	size_t len;
	char *text = slurp(FIX "attribution.json", &len);

	ASSERT_NE(NULL, text);
	ASSERT_EQ(0, ab_attr_parse(text, len, AB_ATTR_MAX_ROWS, &f, why, sizeof(why))) TH_LOG("%s", why);
	EXPECT_EQ(15, f.n);
	EXPECT_EQ(7, f.lost);
	EXPECT_EQ(1, f.row[3].vcpu);
	EXPECT_EQ(1400000000ull, f.row[3].guest_ns);
	EXPECT_EQ(AC_POLL_HIT, f.row[3].cls);
	EXPECT_EQ(-1, f.row[3].stage[AS_RUN_QUEUE]);
	fixture_epochs(&ab);
	ab_attr_into_epochs(&ab, &f, &(struct ab_tagger){ .fixed = -1, .offset = 1000000000, .guard = ab_switch_guard_ns(&ab) });
	EXPECT_TRUE(ab.at.any);
	EXPECT_EQ(15, ab.at.rows);
	EXPECT_EQ(3, ab.at.outside); /* 0.5 ms after a switch, 1.5 ms before one, after the last epoch */
	EXPECT_EQ(1, ab.at.other);   /* the pingpong's */
	EXPECT_EQ(7, ab.at.lost);
	/* epoch 0: three blocked, one poll hit, one not visible */
	const struct ab_stage_epoch *s0 = &ab.run[0].st;

	EXPECT_EQ(5, s0->n);
	EXPECT_EQ(3, s0->nc[AC_BLOCKED]);
	EXPECT_EQ(1, s0->nc[AC_POLL_HIT]);
	EXPECT_EQ(0, s0->nc[AC_NO_WAIT]);
	EXPECT_EQ(3, s0->seen[AC_BLOCKED][AS_RUN_QUEUE]);
	NEAR(2.0, s0->med[AC_BLOCKED][AS_HOST_IRQ], 1e-9);
	NEAR(1.0, s0->med[AC_BLOCKED][AS_SIGNAL], 1e-9);
	NEAR(5.0, s0->med[AC_BLOCKED][AS_RUN_QUEUE], 1e-9);
	NEAR(0.6, s0->med[AC_BLOCKED][AS_RESUME], 1e-9);
	NEAR(3.0, s0->med[AC_BLOCKED][AS_GUEST], 1e-9);
	EXPECT_EQ(0, s0->seen[AC_POLL_HIT][AS_RUN_QUEUE]);
	EXPECT_TRUE(isnan(s0->med[AC_POLL_HIT][AS_RUN_QUEUE]));
	NEAR(1.5, s0->med[AC_POLL_HIT][AS_HOST_IRQ], 1e-9);
	/* epoch 1: the row near its start left out; two poll hits (median of two) and one no-wait */
	EXPECT_EQ(3, ab.run[1].st.n);
	EXPECT_EQ(2, ab.run[1].st.nc[AC_POLL_HIT]);
	EXPECT_EQ(1, ab.run[1].st.nc[AC_NO_WAIT]);
	NEAR(1.65, ab.run[1].st.med[AC_POLL_HIT][AS_HOST_IRQ], 1e-9);
	NEAR(0.8, ab.run[1].st.med[AC_NO_WAIT][AS_RESUME], 1e-9);
	/* epoch 2: an ambiguous row counts in n only */
	EXPECT_EQ(2, ab.run[2].st.n);
	EXPECT_EQ(1, ab.run[2].st.nc[AC_BLOCKED]);
	NEAR(30.0, ab.run[2].st.med[AC_BLOCKED][AS_RUN_QUEUE], 1e-9);
	/* epoch 3: the row 1.5 ms before its end left out */
	EXPECT_EQ(1, ab.run[3].st.n);
	EXPECT_EQ(1, ab.run[3].st.nc[AC_RUNNING]);
	/* an epoch's figure needs 5 samples, as a p50 does */
	double v;

	EXPECT_TRUE(ab_stage_value(s0, AC_BLOCKED, AB_ST_SHARE, &v));
	NEAR(0.6, v, 1e-9);
	EXPECT_FALSE(ab_stage_value(s0, AC_BLOCKED, AS_RUN_QUEUE, &v));
	EXPECT_FALSE(ab_stage_value(&ab.run[1].st, AC_POLL_HIT, AB_ST_SHARE, &v));
	/* a boot per epoch: every timer row is its run's epoch */
	fixture_epochs(&ab);
	ab_attr_into_epochs(&ab, &f, &(struct ab_tagger){ .fixed = 2 });
	EXPECT_EQ(14, ab.run[2].st.n);
	EXPECT_EQ(0, ab.run[0].st.n);
	EXPECT_EQ(0, ab.at.outside);
	ab_attr_file_free(&f);
	free(text);
}

static double gauss(struct ab_rng *r)
{
	return sqrt(-2 * log(ab_rng_double(r) + 1e-300)) * cos(2 * M_PI * ab_rng_double(r));
}

/* A made-up finished run of `blocks` blocks (AB BA ...): timer samples around 100 us in both arms,
 * and stage figures per epoch: hp500us's blocked samples wait `rq_shift` us longer in the run
 * queue and `poll` of its samples are poll hits; the other stages are the same in both arms, noise
 * only. */
static void fake_run(struct ab *ab, int blocks, double rq_shift, double poll, uint64_t seed)
{
	struct ab_rng r;

	free_runs(ab);
	ab->at.err.fd = -1;
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
	ab->at.any = true;
	for (int e = 0; e < 2 * blocks; e++) {
		struct ab_run *x = &ab->run[e];
		struct ab_stage_epoch *st = &x->st;
		double off = 0.05 * gauss(&r);

		x->arm = (e + e / 2) % 2;
		x->block = e / 2;
		x->complete = true;
		x->cpu_s = 0.1 * (1 + 0.02 * gauss(&r));
		x->n[1] = 200;
		x->x[1] = malloc(200 * sizeof(double));
		for (int i = 0; i < 200; i++)
			x->x[1][i] = 100 * exp(off + 0.5 * gauss(&r));
		st->n = 200;
		st->nc[AC_POLL_HIT] = x->arm ? (uint32_t)(poll * 180) : 0;
		st->nc[AC_BLOCKED] = 180 - st->nc[AC_POLL_HIT];
		for (int c = 0; c < AB_ST_CLASSES; c++)
			for (int s = 0; s < AS_MAX; s++) {
				static const double base[AS_MAX] = { 2.0, 1.0, 5.0, 0.6, 3.0 };
				bool seen = c == AC_BLOCKED || (c == AC_POLL_HIT && s != AS_RUN_QUEUE);

				st->seen[c][s] = seen ? st->nc[c] : 0;
				/* to the ns, as saved: a run read back is the same run */
				st->med[c][s] = seen && st->nc[c] ? round(1e3 * base[s] * (1 + 0.05 * gauss(&r))) / 1e3 : NAN;
				if (seen && st->nc[c] && c == AC_BLOCKED && s == AS_RUN_QUEUE && x->arm)
					st->med[c][s] += rq_shift;
			}
	}
	ab->nr_runs = 2 * blocks;
}

struct report_call {
	struct ab *ab;
	int ret;
};

static void do_report(void *arg)
{
	struct report_call *c = arg;

	c->ret = ab_report(c->ab);
}

/* ab_report's stdout */
static char *report(struct ab *ab, const char *json, int *ret)
{
	struct report_call c = { ab, 0 };

	ab->json = json;
	char *out = capture(1, (struct call){ do_report, &c });

	*ret = c.ret;
	return out;
}

/* The run queue of blocked samples moved by +12 us and a share of poll hits appeared: both named
 * in the verdict; host_irq, signal, resume and guest, the same in both arms, did not move. The
 * verdicts above the section are those of a run without --attribute. */
TEST(stage_that_moved_and_stages_that_did_not)
{
	static struct ab ab;
	char json[] = "/tmp/ab_stages_json.XXXXXX";
	int ret, fd = mkstemp(json);

	close(fd);
	fake_run(&ab, 12, 12.0, 0.6, 5);
	char *out = report(&ab, json, &ret);

	EXPECT_EQ(0, ret);
	EXPECT_NE(NULL, strstr(out, "verdict timer, hp500us against hp0: not shown")) TH_LOG("%s", out);
	EXPECT_NE(NULL, strstr(out, "== where the difference is: stage medians per class")) TH_LOG("%s", out);
	EXPECT_NE(NULL, strstr(out, "== stages (timer, us): hp500us against hp0, 11 blocks")) TH_LOG("%s", out);
	EXPECT_NE(NULL, strstr(out, "Holm over 7 stage judgements")) TH_LOG("%s", out);
	const char *v = strstr(out, "verdict stages, hp500us against hp0: moved: ");

	ASSERT_NE(NULL, v) TH_LOG("%s", out);
	char line[1024];

	snprintf(line, sizeof(line), "%.*s", (int)strcspn(v, "\n"), v);
	EXPECT_NE(NULL, strstr(line, "blocked.run_queue +12.")) TH_LOG("%s", line);
	EXPECT_NE(NULL, strstr(line, "poll_hit.share +54.0 pp [54.0, 54.0], p 0.000977")) TH_LOG("%s", line);
	EXPECT_NE(NULL, strstr(line, "blocked.share -54.0 pp")) TH_LOG("%s", line);
	EXPECT_EQ(NULL, strstr(line, "host_irq")) TH_LOG("%s", line);
	EXPECT_EQ(NULL, strstr(line, "blocked.signal")) TH_LOG("%s", line);
	EXPECT_EQ(NULL, strstr(line, "blocked.guest")) TH_LOG("%s", line);
	EXPECT_NE(NULL, strstr(out, "poll_hit  not judged: host_irq, signal, run_queue, resume, guest (fewer than 5 "
				    "samples for it in an epoch of every block")) TH_LOG("%s", out);
	EXPECT_NE(NULL, strstr(out, "no_wait   no samples of this class in the blocks: not judged")) TH_LOG("%s", out);
	/* the same figures in the JSON, and each epoch's stages for judge and compare */
	size_t len;
	char *j = ab_file_read(json, 8 << 20, &len);

	ASSERT_NE(NULL, j);
	EXPECT_NE(NULL, strstr(j, "\"stages\":{\"workload\":\"timer\",\"n\":200,\"classes\":{\"poll_hit\":"));
	EXPECT_NE(NULL, strstr(j, "\"stage_judgements\":7,\"stage_comparisons\":[{\"workload\":\"timer\",\"class\":"
				  "\"poll_hit\",\"figure\":\"share\",\"scale\":\"fraction\",\"a\":\"hp0\",\"b\":\"hp500us\","
				  "\"unit\":\"epoch\",\"blocks\":11,\"dropped_blocks\":0,\"exact\":true"));
	EXPECT_NE(NULL, strstr(j, "\"figure\":\"host_irq\",\"scale\":\"us\"")) TH_LOG("%s", strstr(j, "stage_comp"));
	EXPECT_NE(NULL, strstr(j, "\"stage_verdicts\":[{\"workload\":\"timer\",\"a\":\"hp0\",\"b\":\"hp500us\",\"moved\":"
				  "[\"poll_hit.share\",\"blocked.run_queue\",\"blocked.share\"]}]"))
		TH_LOG("%s", strstr(j, "stage_verdicts") ?: j);
	EXPECT_EQ(NULL, strstr(j, "\"attribution\":")) TH_LOG("only a run with --attribute has its counts");
	/* vmm ab judge: the saved run's stages judged again, the same numbers */
	static struct ab again;
	char why[256];

	ASSERT_EQ(0, ab_saved_load(j, len, &again, why, sizeof(why))) TH_LOG("%s", why);
	EXPECT_TRUE(again.at.any);
	char *second = report(&again, NULL, &ret), *a = strstr(out, "== where the difference is"),
	     *b = strstr(second, "== where the difference is");

	ASSERT_NE(NULL, a);
	ASSERT_NE(NULL, b);
	EXPECT_EQ(0, strncmp(a, b, strstr(a, "== the other side") - a)) TH_LOG("%s\n--- again:\n%s", a, b);
	ab_saved_unload(&again);
	/* a broken "stages" is refused as the rest of a saved file is */
	char *bad = strdup(j), *n = strstr(bad, "\"workload\":\"timer\",\"n\":200");

	ASSERT_NE(NULL, n);
	memcpy(n + strlen("\"workload\":\"timer\",\"n\":"), "-20", 3);
	EXPECT_EQ(-EINVAL, ab_saved_load(bad, len, &again, why, sizeof(why)));
	EXPECT_NE(NULL, strstr(why, "an epoch's \"stages\" without its workload")) TH_LOG("%s", why);
	free(bad);
	free(second);
	free(j);
	free(out);
	free_runs(&ab);
	unlink(json);
}

/* The stage figures' A/A: identical arms, each epoch's stage medians with their own noise (5%).
 * Holm over the figures holds the family's level: some figure is rejected in about alpha of the
 * experiments (0.05; 300 experiments, within the binomial 99.9% bounds, 3 to 27). */
TEST(identical_arms_reject_at_the_level)
{
	static struct ab ab;
	int any = 0, figures = 0;

	for (int x = 0; x < 300; x++) {
		fake_run(&ab, 12, 0, 0, 1000 + x);
		ab.alpha = 0.05;
		struct ab_stage_analysis *sa = ab_stages_analyze(&ab);
		char *j = NULL;
		size_t len = 0;
		FILE *f = open_memstream(&j, &len);

		ASSERT_NE(NULL, sa);
		ASSERT_NE(NULL, f);
		ab_stages_json(&ab, sa, f);
		fclose(f);
		any += count_of(j, "\"holm_reject\":true") > 0;
		figures += count_of(j, "\"holm_reject\":");
		free(j);
		ab_stages_free(sa);
	}
	EXPECT_EQ(300 * 6, figures) TH_LOG("blocked's five stages and its share");
	/* 14 of 300 (4.7%) as seeded; a test that never rejects would be no test either */
	EXPECT_LE(any, 27) TH_LOG("%d of 300 A/A experiments rejected some figure at alpha 0.05", any);
	EXPECT_GE(any, 3) TH_LOG("%d of 300", any);
	free_runs(&ab);
}

/* Stacked bars per class in every arm: blocked (both arms), not poll_hit (none in hp0) */
TEST(plot_files)
{
	static struct ab ab;
	char dir[] = "/tmp/ab_stages_plot.XXXXXX", prefix[64], path[128];

	ASSERT_NE(NULL, mkdtemp(dir));
	snprintf(prefix, sizeof(prefix), "%s/ab", dir);
	fake_run(&ab, 6, 12.0, 0.6, 7);
	setenv("PATH", "/nonexistent", 1); /* no gnuplot: the data and script are still written */
	EXPECT_EQ(0, ab_stages_plot(&ab, prefix));
	snprintf(path, sizeof(path), "%s-stages-blocked.dat", prefix);
	size_t len;
	char *dat = ab_file_read(path, 1 << 20, &len);

	ASSERT_NE(NULL, dat);
	EXPECT_NE(NULL, strstr(dat, "# arm host_irq signal run_queue resume guest\nhp0 ")) TH_LOG("%s", dat);
	EXPECT_NE(NULL, strstr(dat, "\nhp500us ")) TH_LOG("%s", dat);
	snprintf(path, sizeof(path), "%s-stages-blocked.gp", prefix);
	char *gp = ab_file_read(path, 1 << 20, &len);

	ASSERT_NE(NULL, gp);
	EXPECT_NE(NULL, strstr(gp, "set style histogram rowstacked"));
	EXPECT_NE(NULL, strstr(gp, "using 2:xtic(1) title 'host_irq'"));
	unlink(path);
	snprintf(path, sizeof(path), "%s-stages-blocked.dat", prefix);
	unlink(path);
	snprintf(path, sizeof(path), "%s-stages-poll_hit.dat", prefix);
	EXPECT_NE(0, access(path, F_OK)) TH_LOG("hp0 has no poll hits: no chart");
	rmdir(dir);
	free(dat);
	free(gp);
	free_runs(&ab);
}

/* Saved runs as units: six a side, B's hp500us run queue 12 us longer. Each run's figure is the
 * mean of its epochs'; an old file without stages has none (and compares as before). */
TEST(saved_runs_compared)
{
	static struct ab ab;
	static struct ab_saved a[6], b[6];
	char json[] = "/tmp/ab_stages_saved.XXXXXX", *names_a[6], *names_b[6];
	int ret, fd = mkstemp(json);

	close(fd);
	for (int i = 0; i < 12; i++) {
		fake_run(&ab, 6, i < 6 ? 0.0 : 12.0, 0.6, 100 + i);
		free(report(&ab, json, &ret));
		ASSERT_EQ(0, ab_saved_read(json, i < 6 ? &a[i] : &b[i - 6]));
		(i < 6 ? names_a : names_b)[i % 6] = i < 6 ? "a.json" : "b.json";
	}
	EXPECT_EQ(2, a[0].nst);
	/* 6 blocks, the warm-up epoch hp0's: hp500us (the first arm after it) has 6 epochs */
	EXPECT_STREQ("hp500us", a[0].st[0].arm);
	EXPECT_EQ(6, a[0].st[0].epochs[AC_BLOCKED][AS_RUN_QUEUE]);
	EXPECT_EQ(5, a[0].st[1].epochs[AC_BLOCKED][AS_RUN_QUEUE]);
	char out_path[] = "/tmp/ab_stages_cmp.XXXXXX";
	int ofd = mkstemp(out_path);
	FILE *out = fdopen(ofd, "w+"), *cj = tmpfile();

	ASSERT_EQ(0, ab_saved_compare(out, cj, names_a, a, 6, names_b, b, 6, NULL, 1, 0.05, 0.05, false));
	fflush(out);
	char *text = calloc(1, 1 << 20), *jtext = calloc(1, 1 << 20);

	rewind(out);
	rewind(cj);
	EXPECT_LT(0, fread(text, 1, (1 << 20) - 1, out));
	EXPECT_LT(0, fread(jtext, 1, (1 << 20) - 1, cj));
	EXPECT_NE(NULL, strstr(text, "== where the difference is, arm hp500us: stage medians per class")) TH_LOG("%s", text);
	EXPECT_NE(NULL, strstr(text, "verdict stages, arm hp500us, B against A: moved: blocked.run_queue +11.99 us")) TH_LOG("%s", text);
	EXPECT_NE(NULL, strstr(text, "verdict stages, arm hp0, B against A: none moved")) TH_LOG("%s", text);
	EXPECT_EQ(NULL, strstr(text, "no_wait")) TH_LOG("a class no run has is not judged: %s", text);
	EXPECT_NE(NULL, strstr(jtext, "\"stage_comparisons\":[{\"workload\":\"timer\",\"class\":\"poll_hit\""));
	EXPECT_NE(NULL, strstr(jtext, "{\"workload\":\"timer\",\"class\":\"poll_hit\",\"figure\":\"share\",\"scale\":"
				      "\"fraction\",\"a\":\"A\",\"b\":\"B\",\"arm\":\"hp500us\",\"unit\":\"run\",\"blocks\":12"))
		TH_LOG("%s", jtext);
	EXPECT_NE(NULL, strstr(jtext, "{\"workload\":\"timer\",\"a\":\"A\",\"b\":\"B\",\"arm\":\"hp500us\",\"moved\":"
				      "[\"blocked.run_queue\"]}")) TH_LOG("%s", jtext);
	fclose(out);
	fclose(cj);
	unlink(out_path);
	free(text);
	free(jtext);
	/* an old saved file (no "stages"): read as before, no stage figures */
	ab.at.any = false;
	free(report(&ab, json, &ret));
	struct ab_saved old;

	ASSERT_EQ(0, ab_saved_read(json, &old));
	EXPECT_EQ(0, old.nst);
	EXPECT_EQ(NULL, old.st);
	ab_saved_free(&old);
	for (int i = 0; i < 6; i++) {
		ab_saved_free(&a[i]);
		ab_saved_free(&b[i]);
	}
	free_runs(&ab);
	unlink(json);
}

struct load_call {
	struct ab *ab;
	const char *path;
	int ret;
};

static void do_load(void *arg)
{
	struct load_call *c = arg;

	c->ret = ab_attr_load(c->ab, c->path, &(struct ab_tagger){ .fixed = 0 });
}

static void do_feed(void *arg)
{
	struct ab *ab = arg;
	static const char text[] = "vmm: warning: --attribute: perf_event_open: Permission denied; the run goes on "
				   "without attribution\nvmm: attribution: none: perf_event_open: Permission denied (root "
				   "or CAP_PERFMON)\nvmm: exit";

	ab_stderr_feed(&ab->at.err, text, sizeof(text) - 1);
	ab_stderr_end(&ab->at.err);
}

/* vmm run said why it has no attribution and wrote no FILE: vmm ab says the reason once over all
 * its runs, passes the child's other lines on, and the A/B result has no stage section. */
TEST(missing_file_says_the_reason_once)
{
	static struct ab ab;

	fake_run(&ab, 12, 0, 0, 11);
	ab.at = (struct ab_attr){ .on = true, .err.fd = -1 };
	char *passed = capture(2, (struct call){ do_feed, &ab });

	EXPECT_NE(NULL, strstr(passed, "vmm: warning: --attribute: perf_event_open")) TH_LOG("%s", passed);
	EXPECT_NE(NULL, strstr(passed, "vmm: exit\n")) TH_LOG("the last line, unfinished, at the end");
	EXPECT_EQ(NULL, strstr(passed, "attribution: none")) TH_LOG("kept, not passed on: %s", passed);
	EXPECT_STREQ("perf_event_open: Permission denied (root or CAP_PERFMON)", ab.at.err.none);
	struct load_call c = { &ab, "/nonexistent/ab/attribution.json", 0 };
	char *said = capture(2, (struct call){ do_load, &c });

	EXPECT_EQ(-ENOENT, c.ret);
	EXPECT_EQ(1, count_of(said, "vmm ab: attribution: none: perf_event_open: Permission denied (root or CAP_PERFMON); "
				    "the A/B result goes on without the stage section")) TH_LOG("%s", said);
	free(said);
	said = capture(2, (struct call){ do_load, &c }); /* the next run's: said already */
	EXPECT_EQ(0, count_of(said, "attribution: none")) TH_LOG("once: %s", said);
	EXPECT_FALSE(ab.at.any);
	int ret;
	char *out = report(&ab, NULL, &ret);

	EXPECT_EQ(0, ret);
	EXPECT_NE(NULL, strstr(out, "verdict timer, hp500us against hp0:")) TH_LOG("%s", out);
	EXPECT_EQ(NULL, strstr(out, "where the difference is")) TH_LOG("%s", out);
	free(out);
	free(said);
	free(passed);
	free_runs(&ab);
}

static void do_feed_long(void *arg)
{
	struct ab_stderr *e = arg;
	char line[1200];

	memset(line, 'x', sizeof(line));
	line[sizeof(line) - 1] = '\n';
	ab_stderr_feed(e, line, 700); /* a line longer than kept, in two reads */
	ab_stderr_feed(e, line + 700, sizeof(line) - 700);
	ab_stderr_feed(e, "vmm: attribution: none: later\n", 30);
	ab_stderr_end(e);
}

/* A child's line longer than the buffer is passed on whole, its newline included */
TEST(stderr_long_line_passed_on)
{
	struct ab_stderr e = { .fd = -1 };
	char *out = capture(2, (struct call){ do_feed_long, &e });

	EXPECT_EQ(1200, strlen(out)) TH_LOG("%zu", strlen(out));
	EXPECT_EQ('\n', out[1199]);
	EXPECT_STREQ("later", e.none);
	free(out);
}

static int parse(const char *text, size_t max_rows, char *why)
{
	struct ab_attr_file f;
	int r = ab_attr_parse(text, strlen(text), max_rows, &f, why, 256);

	ab_attr_file_free(&f);
	return r;
}

#define HEAD "{\"clock\":{},\"trace\":{\"events\":1,\"lost\":0,\"dropped\":0,\"bad\":0},"

/* A FILE that is not what vmm run writes is refused with why, and the A/B result goes on. */
TEST(malformed_file_refused)
{
	static struct ab ab;
	char why[256];
	size_t len;
	char *fixture = slurp(FIX "attribution.json", &len);

	ASSERT_NE(NULL, fixture);
	/* wrong types */
	EXPECT_EQ(-EINVAL, parse(HEAD "\"counts\":{\"joined\":1},\"samples\":{}}", 10, why));
	EXPECT_NE(NULL, strstr(why, "no \"samples\" list")) TH_LOG("%s", why);
	EXPECT_EQ(-EINVAL, parse(HEAD "\"counts\":{\"joined\":1},\"samples\":[[1,0,\"5\",1,1,1,1,1,1,0,-1]]}", 10, why));
	EXPECT_NE(NULL, strstr(why, "not a list of 11 numbers")) TH_LOG("%s", why);
	EXPECT_EQ(-EINVAL, parse(HEAD "\"counts\":{\"joined\":\"1\"},\"samples\":[]}", 10, why));
	EXPECT_NE(NULL, strstr(why, "no \"counts\" object")) TH_LOG("%s", why);
	EXPECT_EQ(-EINVAL, parse(HEAD "\"counts\":{\"joined\":1},\"samples\":[[1,0,5,1,1.5,1,1,1,1,0,-1]]}", 10, why));
	EXPECT_NE(NULL, strstr(why, "integer of ns")) TH_LOG("%s", why);
	EXPECT_EQ(-EINVAL, parse(HEAD "\"counts\":{\"joined\":1},\"samples\":[[1,0,5,9,1,1,1,1,1,0,-1]]}", 10, why));
	EXPECT_NE(NULL, strstr(why, "class is not 0 to 5")) TH_LOG("%s", why);
	/* negative vcpu */
	EXPECT_EQ(-EINVAL, parse(HEAD "\"counts\":{\"joined\":1},\"samples\":[[1,-1,5,1,1,1,1,1,1,0,-1]]}", 10, why));
	EXPECT_NE(NULL, strstr(why, "vcpu is not 0 to 63")) TH_LOG("%s", why);
	/* too many rows, and rows not as many as joined */
	EXPECT_EQ(-EINVAL, ab_attr_parse(fixture, len, 14, &(struct ab_attr_file){ 0 }, why, sizeof(why)));
	EXPECT_NE(NULL, strstr(why, "more rows than vmm ab takes")) TH_LOG("%s", why);
	EXPECT_EQ(-EINVAL, parse(HEAD "\"counts\":{\"joined\":2},\"samples\":[[1,0,5,1,1,1,1,1,1,0,-1]]}", 10, why));
	EXPECT_NE(NULL, strstr(why, "another length")) TH_LOG("%s", why);
	/* the key "samples" twice (the first FILE format) and text that is no JSON */
	EXPECT_EQ(-EINVAL, parse(HEAD "\"samples\":{\"joined\":0},\"samples\":[]}", 10, why));
	EXPECT_NE(NULL, strstr(why, "twice")) TH_LOG("%s", why);
	EXPECT_EQ(-EINVAL, parse("{\"counts\":", 10, why));
	EXPECT_NE(NULL, strstr(why, "at byte")) TH_LOG("%s", why);
	/* through the loader: said, no stages, the rest of the result intact */
	char path[] = "/tmp/ab_stages_bad.XXXXXX";
	int fd = mkstemp(path);
	static const char bad[] = HEAD "\"counts\":{\"joined\":1},\"samples\":[[1,-1,5,1,1,1,1,1,1,0,-1]]}";

	ASSERT_EQ((ssize_t)sizeof(bad) - 1, write(fd, bad, sizeof(bad) - 1));
	close(fd);
	fake_run(&ab, 12, 0, 0, 12);
	ab.at = (struct ab_attr){ .on = true, .err.fd = -1 };
	struct load_call c = { &ab, path, 0 };
	char *said = capture(2, (struct call){ do_load, &c });

	EXPECT_EQ(-EINVAL, c.ret);
	EXPECT_NE(NULL, strstr(said, "a row whose vcpu is not 0 to 63; the A/B result goes on without the stage section"))
		TH_LOG("%s", said);
	EXPECT_TRUE(ab.at.off);
	EXPECT_NE(0, access(path, F_OK)) TH_LOG("removed: the next run writes its own");
	int ret;
	char *out = report(&ab, NULL, &ret);

	EXPECT_EQ(0, ret);
	EXPECT_NE(NULL, strstr(out, "verdict timer, hp500us against hp0:")) TH_LOG("%s", out);
	EXPECT_NE(NULL, strstr(out, "== the other side of the trade")) TH_LOG("%s", out);
	EXPECT_EQ(NULL, strstr(out, "where the difference is")) TH_LOG("%s", out);
	free(out);
	free(said);
	free(fixture);
	free_runs(&ab);
}

TEST_HARNESS_MAIN
