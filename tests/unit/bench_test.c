// SPDX-License-Identifier: MIT
/*
 * make bench's reports: min/median/max of known samples, JSON written and read back unchanged,
 * malformed files refused with where, and `vmm bench compare` on known inputs: identical runs
 * unchanged, a clear shift judged by each figure's direction, too few repetitions not judged;
 * peers (qemu.NAME beside NAME): their ratios, goals and verdicts in the table, kept through the
 * JSON, old reports without peers unchanged, and compare's old/new ratio lines.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bench/bench.h"
#include "kselftest_harness.h"

static struct bench_report *report(void)
{
	struct bench_report *r = calloc(1, sizeof(*r));

	snprintf(r->where, sizeof(r->where), "unit test");
	return r;
}

/* The compare table printed into a string. */
static int compare_text(const struct bench_report *a, const struct bench_report *b, char *out, size_t size)
{
	FILE *f = fmemopen(out, size, "w");
	int worse = bench_compare(a, b, 7, f);

	fclose(f);
	return worse;
}

/* The line of the compare table for figure name. */
static const char *line_of(const char *text, const char *name, char *buf, size_t size)
{
	const char *p = strstr(text, name);

	if (!p)
		return NULL;
	snprintf(buf, size, "%.*s", (int)strcspn(p, "\n"), p);
	return buf;
}

TEST(summary_of_known_samples)
{
	struct bench_report *r = report();
	double lo, med, hi;

	for (int v = 10; v >= 1; v--) /* 10..1: the median interpolates between 5 and 6 */
		ASSERT_EQ(0, bench_add(r, "startup.exit", "ms", false, v));
	EXPECT_EQ(-1, bench_add(r, "startup.exit", "ms", false, 0.0 / 0.0)); /* NaN refused */
	bench_summary(bench_find(r, "startup.exit"), &lo, &med, &hi);
	EXPECT_EQ(1, lo);
	EXPECT_EQ(5.5, med);
	EXPECT_EQ(10, hi);
	EXPECT_EQ(10, bench_find(r, "startup.exit")->n);
	free(r);
}

TEST(json_round_trip)
{
	struct bench_report *r = report(), *back = calloc(1, sizeof(*back));
	char buf[8192], err[160];

	for (int i = 0; i < 9; i++) {
		bench_add(r, "blk.randread.qd1", "IOPS", true, 1000 + i * 0.25);
		bench_add(r, "mem.rss_beyond_ram", "MiB", false, 2.5);
	}
	bench_ratio(r, "boot.verbose_over_quiet", 1.08, 1.10, true, "verbose \"serial\" boot / quiet");
	FILE *f = fmemopen(buf, sizeof(buf), "w");

	bench_write_json(r, f);
	fclose(f);
	ASSERT_EQ(0, bench_parse(buf, back, err, sizeof(err))) TH_LOG("%s\n%s", err, buf);
	EXPECT_STREQ("unit test", back->where);
	ASSERT_EQ(2, back->nfig);
	EXPECT_STREQ("blk.randread.qd1", back->fig[0].name);
	EXPECT_STREQ("IOPS", back->fig[0].unit);
	EXPECT_TRUE(back->fig[0].higher_better);
	EXPECT_FALSE(back->fig[1].higher_better);
	ASSERT_EQ(9, back->fig[0].n);
	for (int i = 0; i < 9; i++)
		EXPECT_EQ(1000 + i * 0.25, back->fig[0].x[i]);
	ASSERT_EQ(1, back->nratio);
	EXPECT_EQ(1.08, back->ratio[0].value);
	EXPECT_EQ(1.10, back->ratio[0].goal);
	EXPECT_TRUE(back->ratio[0].goal_max);
	EXPECT_STREQ("verbose \"serial\" boot / quiet", back->ratio[0].what);
	free(r);
	free(back);
}

TEST(malformed_refused_with_offset)
{
	static const struct {
		const char *text, *msg;
	} bad[] = {
		{ "", "expected '{'" },
		{ "{\"where\":\"x\",\"figures\":[]}", "no \"vmm_bench\" version" },
		{ "{\"vmm_bench\":2}", "unknown vmm_bench version" },
		{ "{\"vmm_bench\":1,\"figures\":[{\"name\":\"a\",\"samples\":[1,\"x\"]}]}", "expected a number" },
		{ "{\"vmm_bench\":1,\"figures\":[{\"samples\":[1]}]}", "a figure without a name" },
		{ "{\"vmm_bench\":1,\"figures\":[{\"name\":\"a\"},{\"name\":\"a\"}]}", "a figure named twice" },
		{ "{\"vmm_bench\":1,\"figures\":[{\"name\":\"a\",\"better\":\"up\"}]}", "\"better\" must be" },
		{ "{\"vmm_bench\":1} x", "trailing text" },
		{ "{\"vmm_bench\":1,\"x\":[[[[[[[[[[[[[[[[[[[[1]]]]]]]]]]]]]]]]]]]}", "nested too deeply" },
		{ "{\"vmm_bench\":1,\"where\":\"abc", "unterminated string" },
		/* issue 19: any JSON reader refuses a key twice (the second "samples" appended to the first) */
		{ "{\"vmm_bench\":1,\"figures\":[{\"name\":\"a\",\"samples\":[1],\"samples\":[2]}]}", "a key twice" },
		{ "{\"vmm_bench\":1,\"vmm_bench\":1}", "a key twice" },
	};
	struct bench_report *r = calloc(1, sizeof(*r));
	char err[160];

	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		EXPECT_GT(0, bench_parse(bad[i].text, r, err, sizeof(err))) TH_LOG("%s", bad[i].text);
		EXPECT_NE(NULL, strstr(err, bad[i].msg)) TH_LOG("%s: got '%s'", bad[i].text, err);
		EXPECT_NE(NULL, strstr(err, "at byte ")) TH_LOG("%s", err);
	}
	/* unknown keys, nested or not, are skipped */
	EXPECT_EQ(0, bench_parse("{\"vmm_bench\":1,\"new\":{\"a\":[true,null,{}]},\"figures\":[{\"name\":\"a\","
				 "\"extra\":[1],\"samples\":[]}]}", r, err, sizeof(err))) TH_LOG("%s", err);
	EXPECT_EQ(1, r->nfig);
	free(r);
}

TEST(compare_identical_shifted_and_too_few)
{
	struct bench_report *a = report(), *b = report();
	char out[8192], line[512];

	for (int i = 0; i < 12; i++) {
		double jitter = (i % 4) * 0.1;

		/* the same samples on both sides */
		bench_add(a, "startup.run", "ms", false, 50 + jitter);
		bench_add(b, "startup.run", "ms", false, 50 + jitter);
		/* latency went from ~10 to ~20: lower is better, so worse */
		bench_add(a, "exits.mmio_round_trip", "us", false, 10 + jitter);
		bench_add(b, "exits.mmio_round_trip", "us", false, 20 + jitter);
		/* IOPS went from ~100 to ~200: higher is better, so better */
		bench_add(a, "blk.randread.qd1", "IOPS", true, 100 + jitter);
		bench_add(b, "blk.randread.qd1", "IOPS", true, 200 + jitter);
	}
	for (int i = 0; i < 3; i++) { /* three repetitions: shown, not judged */
		bench_add(a, "net.bulk", "MiB/s", true, 5 + i);
		bench_add(b, "net.bulk", "MiB/s", true, 50 + i);
	}
	bench_add(a, "only.old", "ms", false, 1);
	bench_add(b, "only.new", "ms", false, 1);

	EXPECT_EQ(1, compare_text(a, b, out, sizeof(out))) TH_LOG("%s", out);
	ASSERT_NE(NULL, line_of(out, "startup.run", line, sizeof(line))) TH_LOG("%s", out);
	EXPECT_NE(NULL, strstr(line, "no significant change")) TH_LOG("%s", line);
	ASSERT_NE(NULL, line_of(out, "exits.mmio_round_trip", line, sizeof(line)));
	EXPECT_NE(NULL, strstr(line, "WORSE")) TH_LOG("%s", line);
	EXPECT_NE(NULL, strstr(line, "+10 [")) TH_LOG("%s", line); /* the p50 difference */
	/* repetitions as units, through ab/design's permutation test over runs: C(24, 12) splits are
	 * past the exact limit, so 20000 seeded draws, none as extreme: p = 1/20001 (Mann-Whitney's
	 * normal approximation, used before, gave 3.22e-05) */
	EXPECT_NE(NULL, strstr(line, "   5e-05 ")) TH_LOG("%s", line);
	EXPECT_NE(NULL, strstr(out, "p: permutation test over the splits of the repetitions")) TH_LOG("%s", out);
	ASSERT_NE(NULL, line_of(out, "blk.randread.qd1", line, sizeof(line)));
	EXPECT_NE(NULL, strstr(line, "better")) TH_LOG("%s", line);
	EXPECT_EQ(NULL, strstr(line, "WORSE")) TH_LOG("%s", line);
	ASSERT_NE(NULL, line_of(out, "net.bulk", line, sizeof(line)));
	EXPECT_NE(NULL, strstr(line, "not judged: 3 and 3 repetitions")) TH_LOG("%s", line);
	EXPECT_NE(NULL, strstr(out, "only.old                             only in the old report")) TH_LOG("%s", out);
	EXPECT_NE(NULL, strstr(out, "only.new                             only in the new report")) TH_LOG("%s", out);
	EXPECT_NE(NULL, strstr(out, "3 figures compared, 1 significantly worse")) TH_LOG("%s", out);
	/* the other way round, the IOPS figure is the worse one */
	EXPECT_EQ(1, compare_text(b, a, out, sizeof(out))) TH_LOG("%s", out);
	ASSERT_NE(NULL, line_of(out, "blk.randread.qd1", line, sizeof(line)));
	EXPECT_NE(NULL, strstr(line, "WORSE")) TH_LOG("%s", line);
	free(a);
	free(b);
}

TEST(table_shows_ratio_goals)
{
	struct bench_report *r = report();
	char out[4096];

	for (int i = 1; i <= 3; i++)
		bench_add(r, "mem.rss_beyond_ram", "MiB", false, i);
	bench_ratio(r, "mem.rss_vs_goal", 2.0 / 3.0, 1, true, "median RSS beyond RAM / 3 MiB");
	bench_ratio(r, "boot.verbose_over_quiet", 5.0, 1.1, true, "verbose / quiet boot");
	FILE *f = fmemopen(out, sizeof(out), "w");

	bench_print_table(r, f);
	fclose(f);
	EXPECT_NE(NULL, strstr(out, "mem.rss_beyond_ram                       MiB         3            1            2            3"))
		TH_LOG("%s", out);
	EXPECT_NE(NULL, strstr(out, "median RSS beyond RAM / 3 MiB [met]")) TH_LOG("%s", out);
	EXPECT_NE(NULL, strstr(out, "verbose / quiet boot [NOT met]")) TH_LOG("%s", out);
	free(r);
}

/* The table printed into out. */
static void table_text(const struct bench_report *r, char *out, size_t size)
{
	FILE *f = fmemopen(out, size, "w");

	bench_print_table(r, f);
	fclose(f);
}

TEST(peer_names)
{
	char peer[16];

	EXPECT_STREQ("startup.guest_init", bench_peer_of("qemu.startup.guest_init", peer, sizeof(peer)));
	EXPECT_STREQ("qemu", peer);
	EXPECT_STREQ("net.udp_rr.round_trip", bench_peer_of("qemu_vhost.net.udp_rr.round_trip", peer, sizeof(peer)));
	EXPECT_STREQ("qemu_vhost", peer);
	EXPECT_STREQ("startup.first_entry", bench_peer_of("kvmtool.startup.first_entry", peer, sizeof(peer)));
	EXPECT_STREQ("kvmtool", peer);
	EXPECT_EQ(NULL, bench_peer_of("startup.guest_init", peer, sizeof(peer)));
	EXPECT_EQ(NULL, bench_peer_of("qemux.startup", peer, sizeof(peer)));
	EXPECT_EQ(NULL, bench_peer_of("qemu.", peer, sizeof(peer)));
	EXPECT_EQ(NULL, bench_peer_of("qemu", peer, sizeof(peer)));
}

/* A report with vmm and QEMU figures: medians 110 vs 220 ms, 1000 vs 2000 IOPS, 10 vs 5 us. */
static struct bench_report *peer_report(double vmm_scale)
{
	struct bench_report *r = report();

	for (int i = 0; i < 3; i++) {
		bench_add(r, "startup.guest_init", "ms", false, (100 + 10 * i) * vmm_scale);
		bench_add(r, "qemu.startup.guest_init", "ms", false, 200 + 20 * i);
		bench_add(r, "blk.randread_4k.qd32", "IOPS", true, 1000 + i);
		bench_add(r, "qemu.blk.randread_4k.qd32", "IOPS", true, 2000 + 2 * i);
		bench_add(r, "net.udp_rr.round_trip", "us", false, 10);
		bench_add(r, "qemu_vhost.net.udp_rr.round_trip", "us", false, 5);
		bench_add(r, "qemu.only_peer", "ms", false, 1);		  /* no vmm figure: no ratio */
		bench_add(r, "startup.process_exit", "ms", false, 1);
		bench_add(r, "qemu.startup.process_exit", "s", false, 1); /* another unit: no ratio */
	}
	bench_figure(r, "blk.randread_4k.qd1", "IOPS", true); /* no samples: no ratio */
	bench_add(r, "qemu.blk.randread_4k.qd1", "IOPS", true, 5);
	return r;
}

TEST(peer_ratios_goals_and_verdicts)
{
	struct bench_report *r = peer_report(1);
	struct bench_peer_ratio q;
	char out[8192];

	ASSERT_TRUE(bench_peer_ratio(r, 0, &q));
	EXPECT_STREQ("startup.guest_init", q.vmm->name);
	EXPECT_STREQ("qemu.startup.guest_init", q.peer->name);
	EXPECT_STREQ("qemu", q.peer_name);
	EXPECT_EQ(110, q.vmm_median);
	EXPECT_EQ(220, q.peer_median);
	EXPECT_EQ(0.5, q.ratio);
	EXPECT_EQ(0.8, q.goal);
	EXPECT_TRUE(q.goal_max);
	ASSERT_TRUE(bench_peer_ratio(r, 1, &q));
	EXPECT_STREQ("blk.randread_4k.qd32", q.vmm->name);
	EXPECT_EQ(0.5, q.ratio);
	EXPECT_EQ(1.2, q.goal);
	EXPECT_FALSE(q.goal_max);
	ASSERT_TRUE(bench_peer_ratio(r, 2, &q));
	EXPECT_STREQ("net.udp_rr.round_trip", q.vmm->name);
	EXPECT_STREQ("qemu_vhost", q.peer_name);
	EXPECT_EQ(2, q.ratio);
	EXPECT_EQ(0, q.goal);
	EXPECT_FALSE(bench_peer_ratio(r, 3, &q));

	table_text(r, out, sizeof(out));
	EXPECT_NE(NULL, strstr(out, "vmm / peer (medians)")) TH_LOG("%s", out);
	EXPECT_NE(NULL, strstr(out, "startup.guest_init                       qemu       ms                110          220     0.500    <= 0.8  vmm ahead [met]"))
		TH_LOG("%s", out);
	EXPECT_NE(NULL, strstr(out, "blk.randread_4k.qd32                     qemu       IOPS             1001         2002     0.500    >= 1.2  vmm behind [NOT met]"))
		TH_LOG("%s", out);
	EXPECT_NE(NULL, strstr(out, "net.udp_rr.round_trip                    qemu_vhost us                 10            5     2.000         -  vmm behind\n"))
		TH_LOG("%s", out);
	free(r);
}

/* Issue 22's launch-to-first-instruction goal: at most half of QEMU's, for the poweroff payload. */
TEST(first_instruction_goal)
{
	struct bench_report *r = report();
	struct bench_peer_ratio q;
	char out[8192];

	for (int i = 0; i < 3; i++) {
		bench_add(r, "startup.first_instruction_exit", "ms", false, 60 + i);
		bench_add(r, "qemu.startup.first_instruction_exit", "ms", false, 100 + 10 * i);
	}
	ASSERT_TRUE(bench_peer_ratio(r, 0, &q));
	EXPECT_STREQ("startup.first_instruction_exit", q.vmm->name);
	EXPECT_EQ(0.5, q.goal);
	EXPECT_TRUE(q.goal_max);
	table_text(r, out, sizeof(out));
	EXPECT_NE(NULL, strstr(out, "startup.first_instruction_exit           qemu       ms                 61          110     0.555    <= 0.5  vmm ahead [NOT met]"))
		TH_LOG("%s", out);
	free(r);
}

/* The same goals against kvmtool (issue 22), and launch to the first kvm_entry against both. */
TEST(kvmtool_peer_and_first_entry_goals)
{
	struct bench_report *r = report();
	struct bench_peer_ratio q;
	char out[8192];

	for (int i = 0; i < 3; i++) {
		bench_add(r, "startup.first_entry", "ms", false, 40 + i);
		bench_add(r, "qemu.startup.first_entry", "ms", false, 400 + 10 * i);
		bench_add(r, "kvmtool.startup.first_entry", "ms", false, 60 + i);
		bench_add(r, "startup.guest_init", "ms", false, 900);
		bench_add(r, "kvmtool.startup.guest_init", "ms", false, 1000);
	}
	table_text(r, out, sizeof(out));
	EXPECT_NE(NULL, strstr(out, "startup.first_entry                      qemu       ms                 41          410     0.100    <= 0.5  vmm ahead [met]"))
		TH_LOG("%s", out);
	EXPECT_NE(NULL, strstr(out, "startup.first_entry                      kvmtool    ms                 41           61     0.672    <= 0.5  vmm ahead [NOT met]"))
		TH_LOG("%s", out);
	EXPECT_NE(NULL, strstr(out, "startup.guest_init                       kvmtool    ms                900         1000     0.900    <= 0.8  vmm ahead [NOT met]"))
		TH_LOG("%s", out);
	ASSERT_TRUE(bench_peer_ratio(r, 0, &q));
	EXPECT_FALSE(bench_peer_ratio(r, 3, &q));
	free(r);
}

TEST(peers_through_json_and_old_reports)
{
	struct bench_report *r = peer_report(1), *back = calloc(1, sizeof(*back));
	static char buf[65536], a[8192], b[8192];
	char err[160];
	FILE *f = fmemopen(buf, sizeof(buf), "w");

	bench_write_json(r, f);
	fclose(f);
	ASSERT_EQ(0, bench_parse(buf, back, err, sizeof(err))) TH_LOG("%s", err);
	table_text(r, a, sizeof(a));
	table_text(back, b, sizeof(b));
	EXPECT_STREQ(a, b); /* vmm bench show prints the same ratios from the file */
	/* a report from before the peers: no peer table, the rest as before */
	ASSERT_EQ(0, bench_parse("{\"vmm_bench\":1,\"where\":\"old\",\"figures\":[{\"name\":\"startup.guest_init\","
				 "\"unit\":\"ms\",\"better\":\"lower\",\"samples\":[1,2,3]}],\"ratios\":[]}",
				 back, err, sizeof(err))) TH_LOG("%s", err);
	table_text(back, b, sizeof(b));
	EXPECT_EQ(NULL, strstr(b, "vmm / peer")) TH_LOG("%s", b);
	EXPECT_NE(NULL, strstr(b, "startup.guest_init")) TH_LOG("%s", b);
	free(r);
	free(back);
}

TEST(compare_shows_peer_ratios_old_and_new)
{
	struct bench_report *a = peer_report(1), *b = peer_report(2), *old = report();
	static char out[16384];
	char line[512];

	compare_text(a, b, out, sizeof(out));
	ASSERT_NE(NULL, strstr(out, "vmm / peer ")) TH_LOG("%s", out);
	/* 0.5 of QEMU's time before, 1.0 after: vmm twice as slow against the same peer */
	ASSERT_NE(NULL, line_of(strstr(out, "vmm / peer "), "startup.guest_init", line, sizeof(line)));
	EXPECT_STREQ("startup.guest_init                   qemu           0.500     1.000", line);
	/* the peer's figures are compared like vmm's */
	EXPECT_NE(NULL, strstr(out, "qemu.startup.guest_init")) TH_LOG("%s", out);
	/* against a report without peers: no ratio lines */
	bench_add(old, "startup.guest_init", "ms", false, 1);
	compare_text(old, b, out, sizeof(out));
	EXPECT_EQ(NULL, strstr(out, "vmm / peer ")) TH_LOG("%s", out);
	free(a);
	free(b);
	free(old);
}

/* The judged lines printed into a string; returns the goals NOT met. */
static int judge_text(const struct bench_report *r, char *out, size_t size)
{
	FILE *f = fmemopen(out, size, "w");
	int n = bench_judge(r, 3, f);

	fclose(f);
	return n;
}

/* Ratios of figures keep their figures' names through the JSON, so a report read back is judged
 * as the run's own was. */
TEST(ratio_of_figures_through_json)
{
	struct bench_report *r = report(), *back = calloc(1, sizeof(*back));
	char buf[16384], err[160], a[8192], b[8192];

	for (int i = 0; i < 8; i++) {
		bench_add(r, "memory.rss_beyond_guest_ram", "MiB", false, 0.25 + 0.01 * i);
		bench_add(r, "kvmtool.memory.rss_beyond_guest_ram", "MiB", false, 1.1 + 0.01 * i);
	}
	bench_ratio_of(r, "memory.over_kvmtool", "memory.rss_beyond_guest_ram", "kvmtool.memory.rss_beyond_guest_ram",
		       0, 0.5, true, "vmm / kvmtool");
	bench_ratio_of(r, "memory.over_goal", "memory.rss_beyond_guest_ram", NULL, 3.0, 1.0, true, "vmm / 3 MiB");
	bench_ratio_of(r, "missing", "no.such.figure", NULL, 1, 1, true, "left out");
	bench_ratio_of(r, "by_zero", "memory.rss_beyond_guest_ram", NULL, 0, 1, true, "left out");
	ASSERT_EQ(2, r->nratio);
	EXPECT_GT(1e-9, fabs(0.285 / 1.135 - r->ratio[0].value));
	EXPECT_GT(1e-9, fabs(0.285 / 3.0 - r->ratio[1].value));
	FILE *f = fmemopen(buf, sizeof(buf), "w");

	bench_write_json(r, f);
	fclose(f);
	ASSERT_EQ(0, bench_parse(buf, back, err, sizeof(err))) TH_LOG("%s\n%s", err, buf);
	ASSERT_EQ(2, back->nratio);
	EXPECT_STREQ("memory.rss_beyond_guest_ram", back->ratio[0].num);
	EXPECT_STREQ("kvmtool.memory.rss_beyond_guest_ram", back->ratio[0].den);
	EXPECT_STREQ("", back->ratio[1].den);
	EXPECT_EQ(3.0, back->ratio[1].by);
	EXPECT_EQ(0, judge_text(r, a, sizeof(a)));
	EXPECT_EQ(0, judge_text(back, b, sizeof(b)));
	EXPECT_STREQ(a, b) TH_LOG("the same seed, the same report: the same judgement");
	free(r);
	free(back);
}

/* A goal is met or not only when the whole interval says so; a fixed amount's ratio has no p;
 * too few repetitions are shown and not judged; a peer pair no ratio covers is judged too. */
TEST(judged_goals_from_the_repetitions)
{
	struct bench_report *r = report();
	char out[16384], line[512];

	for (int i = 0; i < 8; i++) {
		double j = (i % 4) * 0.01; /* a little spread, the same on both sides */

		/* clearly under the goal: 0.3 against <= 0.5 */
		bench_add(r, "a.vmm", "MiB", false, 0.30 + j);
		bench_add(r, "a.peer", "MiB", false, 1.00 + j);
		/* clearly over it: 0.9 */
		bench_add(r, "b.vmm", "us", false, 0.90 + j);
		bench_add(r, "b.peer", "us", false, 1.00 + j);
		/* spread around the goal: the interval holds 0.5 */
		bench_add(r, "c.vmm", "us", false, i % 2 ? 0.2 : 0.9);
		bench_add(r, "c.peer", "us", false, 1.00 + j);
		/* equal, no goal */
		bench_add(r, "d.vmm", "/s", false, 11 + j);
		bench_add(r, "d.peer", "/s", false, 11 + j);
		/* a figure against a fixed 1.5 */
		bench_add(r, "e.vf", "MiB", false, 0.62 + j);
		/* a peer's figure no ratio names, with a goal of its own (>= 1.0 IOPS over QEMU's) */
		bench_add(r, "blk.randread_4k.qd1", "IOPS", true, 400 + i);
		bench_add(r, "qemu.blk.randread_4k.qd1", "IOPS", true, 300 + i);
	}
	for (int i = 0; i < 3; i++) {
		bench_add(r, "f.vmm", "ms", false, 5);
		bench_add(r, "f.peer", "ms", false, 10);
	}
	bench_ratio_of(r, "a_over_peer", "a.vmm", "a.peer", 0, 0.5, true, "");
	bench_ratio_of(r, "b_over_peer", "b.vmm", "b.peer", 0, 0.5, true, "");
	bench_ratio_of(r, "c_over_peer", "c.vmm", "c.peer", 0, 0.5, true, "");
	bench_ratio_of(r, "d_over_peer", "d.vmm", "d.peer", 0, 0, true, "");
	bench_ratio_of(r, "e_over_goal", "e.vf", NULL, 1.5, 1.0, true, "");
	bench_ratio_of(r, "f_over_peer", "f.vmm", "f.peer", 0, 1.0, true, "");
	bench_ratio(r, "by_hand", 0.7, 1.0, true, "not judged: no figures named");

	EXPECT_EQ(1, judge_text(r, out, sizeof(out))) TH_LOG("%s", out);
	ASSERT_NE(NULL, line_of(out, "a_over_peer", line, sizeof(line))) TH_LOG("%s", out);
	EXPECT_NE(NULL, strstr(line, "8/8")) TH_LOG("%s", line);
	EXPECT_NE(NULL, strstr(line, "  met")) TH_LOG("%s", line);
	ASSERT_NE(NULL, line_of(out, "b_over_peer", line, sizeof(line)));
	EXPECT_NE(NULL, strstr(line, "NOT met")) TH_LOG("%s", line);
	ASSERT_NE(NULL, line_of(out, "c_over_peer", line, sizeof(line)));
	EXPECT_NE(NULL, strstr(line, "undecided")) TH_LOG("%s", line);
	ASSERT_NE(NULL, line_of(out, "d_over_peer", line, sizeof(line)));
	EXPECT_NE(NULL, strstr(line, "no significant difference")) TH_LOG("%s", line);
	EXPECT_NE(NULL, strstr(line, "   1.000 ")) TH_LOG("%s", line);
	ASSERT_NE(NULL, line_of(out, "e_over_goal", line, sizeof(line)));
	EXPECT_NE(NULL, strstr(line, "  met")) TH_LOG("%s", line);
	EXPECT_NE(NULL, strstr(line, "       - ")) TH_LOG("no p against a fixed amount: %s", line);
	ASSERT_NE(NULL, line_of(out, "f_over_peer", line, sizeof(line)));
	EXPECT_NE(NULL, strstr(line, "not judged: fewer than 8")) TH_LOG("%s", line);
	EXPECT_EQ(NULL, strstr(out, "by_hand")) TH_LOG("%s", out);
	ASSERT_NE(NULL, line_of(out, "blk.randread_4k.qd1 / qemu", line, sizeof(line))) TH_LOG("%s", out);
	EXPECT_NE(NULL, strstr(line, ">= 1")) TH_LOG("%s", line);
	EXPECT_NE(NULL, strstr(line, "  met")) TH_LOG("%s", line);
	EXPECT_NE(NULL, strstr(out, "1 goal judged NOT met")) TH_LOG("%s", out);
	free(r);
}

TEST_HARNESS_MAIN
