// SPDX-License-Identifier: MIT
/* The attribution report (trace/attrib_report.c): nearest-rank quantiles over known samples, the
 * text's lines, "not visible" never shown as stages of 0, the tail's shares, and JSON that parses
 * and holds the numbers. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "kselftest_harness.h"
#include "core/json.h"
#include "guest/probe_proto.h"
#include "trace/trace.h"

#define EXPECT_NEAR(want, got, tol) \
	EXPECT_LT(fabs((double)(want) - (double)(got)), tol) TH_LOG("want %.6g got %.6g", (double)(want), (double)(got))

/* One sample of total ns whose stages are st[] (-1: not seen); the residual is what they leave. */
static void add(struct attrib_report *r, unsigned int workload, unsigned int cls, int64_t total,
		const int64_t st[AS_MAX], int64_t poll_ns)
{
	struct attrib_sample s = { .workload = workload, .target = 1000000, .wake = 1000000 + (uint64_t)total };
	struct attrib_result res = { .cls = cls, .residual = total, .poll_ns = poll_ns };

	for (unsigned int k = 0; k < AS_MAX; k++) {
		res.stage[k] = st ? st[k] : -1;
		if (res.stage[k] >= 0)
			res.residual -= res.stage[k];
	}
	attrib_report_add(r, &s, &res);
}

/* not inlined: GCC's dangling-pointer check misreads open_memstream's buffer once inlined */
__attribute__((noinline)) static char *text_of(const struct attrib_report *r, bool json, size_t *len)
{
	char *buf = NULL;
	size_t n = 0;
	FILE *f = open_memstream(&buf, &n);

	if (!f)
		abort();
	if (json)
		attrib_report_json(r, f);
	else
		attrib_report_text(r, f);
	fclose(f);
	if (len)
		*len = n;
	return buf;
}

/* The report as a parsed tree; fails the test when it does not parse. */
static int parse(struct __test_metadata *_metadata, const struct attrib_report *r, struct json *j)
{
	size_t len;
	char *text = text_of(r, true, &len), err[128] = "";
	int rc = json_parse(text, len, j, err, sizeof(err));

	EXPECT_EQ(0, rc) TH_LOG("%s in %s", err, text);
	free(text);
	return rc;
}

/* workloads[w].classes[c] */
static const struct json *class_at(const struct json *root, size_t w, size_t c)
{
	const struct json *ws = json_get(root, "workloads"), *cs;

	if (!ws || ws->t != JSON_ARR || w >= ws->n)
		return NULL;
	cs = json_get(&ws->items[w], "classes");
	return cs && cs->t == JSON_ARR && c < cs->n ? &cs->items[c] : NULL;
}

static double num(const struct json *obj, const char *a, const char *b, const char *c)
{
	const struct json *j = json_get(obj, a);

	if (j && b)
		j = json_get(j, b);
	if (j && c)
		j = json_get(j, c);
	return j && j->t == JSON_NUM ? j->num : NAN;
}

TEST(quantiles_are_nearest_rank)
{
	struct attrib_report *r = attrib_report_new();
	struct json j;

	ASSERT_NE(NULL, r);
	/* totals 1..100 us, in a scrambled order; host_irq 10 ns per us */
	for (int i = 1; i <= 100; i++) {
		int k = (i * 37) % 100 + 1;
		int64_t st[AS_MAX] = { k * 10, k * 1000 - k * 10, -1, -1, -1 };

		add(r, PROBE_W_TIMER, AC_POLL_HIT, k * 1000, st, k);
	}
	/* three samples: 5, 1, 3 us */
	add(r, PROBE_W_UDP, AC_RUNNING, 5000, NULL, -1);
	add(r, PROBE_W_UDP, AC_RUNNING, 1000, NULL, -1);
	add(r, PROBE_W_UDP, AC_RUNNING, 3000, NULL, -1);
	ASSERT_EQ(0, parse(_metadata, r, &j));

	const struct json *c = class_at(&j, 0, 0);

	ASSERT_NE(NULL, c);
	EXPECT_EQ(100, num(c, "n", NULL, NULL));
	EXPECT_EQ(50000, num(c, "total_ns", "p50", NULL));
	EXPECT_EQ(90000, num(c, "total_ns", "p90", NULL));
	EXPECT_EQ(99000, num(c, "total_ns", "p99", NULL));
	EXPECT_EQ(100, num(c, "stages", "host_irq", "n"));
	EXPECT_EQ(500, num(c, "stages", "host_irq", "p50"));
	EXPECT_EQ(990, num(c, "stages", "host_irq", "p99"));
	EXPECT_EQ(0, num(c, "stages", "run_queue", "n"));
	EXPECT_TRUE(isnan(num(c, "stages", "run_queue", "p50"))) TH_LOG("never seen: no number, not 0");
	EXPECT_EQ(50, num(c, "poll_ns", "p50", NULL));
	EXPECT_EQ(0, num(c, "residual_ns", "p99", NULL));

	c = class_at(&j, 1, 0);
	ASSERT_NE(NULL, c);
	EXPECT_EQ(3000, num(c, "total_ns", "p50", NULL)); /* rank ceil(1.5) = 2 */
	EXPECT_EQ(5000, num(c, "total_ns", "p90", NULL)); /* rank ceil(2.7) = 3 */
	EXPECT_EQ(5000, num(c, "total_ns", "p99", NULL));
	EXPECT_EQ(3000, num(c, "residual_ns", "p50", NULL));
	json_free(&j);
	attrib_report_free(r);
}

TEST(text_has_the_class_and_stage_lines)
{
	struct attrib_report *r = attrib_report_new();

	ASSERT_NE(NULL, r);
	for (int i = 0; i < 8; i++) {
		int64_t st[AS_MAX] = { 2000, 1000, i < 6 ? 7000 : -1, 5000, 5000 };

		add(r, PROBE_W_TIMER, AC_BLOCKED, 20000, st, 1000);
	}
	for (int i = 0; i < 2; i++) {
		int64_t st[AS_MAX] = { 1000, 1000, -1, 2000, 2000 };

		add(r, PROBE_W_TIMER, AC_POLL_HIT, 6000, st, 101000);
	}
	add(r, PROBE_W_PINGPONG, AC_AMBIGUOUS, 9000, NULL, -1);
	add(r, 0, AC_BLOCKED, 9000, NULL, -1);
	add(r, PROBE_W_TIMER, AC_MAX, 9000, NULL, -1);

	char *t = text_of(r, false, NULL);

	EXPECT_NE(NULL, strstr(t, "timer  blocked  n=8 (80.0%)\n")) TH_LOG("%s", t);
	EXPECT_NE(NULL, strstr(t, "timer  poll hit  n=2 (20.0%)\n"));
	EXPECT_NE(NULL, strstr(t, "  host_irq              median 2.00 µs  p90 2.00 µs  p99 2.00 µs\n")) TH_LOG("%s", t);
	EXPECT_NE(NULL, strstr(t, "  run_queue  (n=6)      median 7.00 µs")) TH_LOG("seen in 6 of 8: %s", t);
	EXPECT_NE(NULL, strstr(t, "  residual              median 0.00 µs"));
	EXPECT_NE(NULL, strstr(t, "  total                 median 20.00 µs"));
	EXPECT_NE(NULL, strstr(t, "  poll                  median 101.00 µs"));
	EXPECT_NE(NULL, strstr(t, "pingpong  ambiguous  n=1 (100.0%)\n"));
	EXPECT_NE(NULL, strstr(t, "2 samples of no known workload or class\n"));
	/* a poll hit's run queue did not happen: no line for it */
	char *poll = strstr(t, "timer  poll hit");

	ASSERT_NE(NULL, poll);
	char *next = strstr(poll + 1, "\ntimer  blocked");

	ASSERT_NE(NULL, next);
	*next = 0;
	EXPECT_EQ(NULL, strstr(poll, "run_queue")) TH_LOG("%s", poll);
	free(t);
	attrib_report_free(r);
}

TEST(not_visible_is_guest_and_hardware_never_zero_stages)
{
	struct attrib_report *r = attrib_report_new();
	struct json j;

	ASSERT_NE(NULL, r);
	for (int i = 1; i <= 5; i++)
		add(r, PROBE_W_UDP, AC_NOT_VISIBLE, i * 3000, NULL, -1);

	char *t = text_of(r, false, NULL);

	/* a udp sample's vCPU is the one its vector reached: tallied */
	EXPECT_NE(NULL, strstr(t, "udp  not visible  n=5 (100.0%)  vCPUs 0:5\n")) TH_LOG("%s", t);
	EXPECT_NE(NULL, strstr(t, "  guest + hardware: median 9.00 µs")) TH_LOG("%s", t);
	/* no stage line, no tail of stages, no zero */
	for (unsigned int s = 0; s < AS_MAX; s++)
		if (s != AS_GUEST)
			EXPECT_EQ(NULL, strstr(t, attrib_stage_name(s))) TH_LOG("%s", t);
	EXPECT_EQ(NULL, strstr(t, "\n  guest   ")) TH_LOG("%s", t);
	EXPECT_EQ(NULL, strstr(t, "tail"));
	EXPECT_EQ(NULL, strstr(t, " 0.00 µs"));
	free(t);

	ASSERT_EQ(0, parse(_metadata, r, &j));
	const struct json *c = class_at(&j, 0, 0);

	ASSERT_NE(NULL, c);
	EXPECT_STREQ("not_visible", json_get(c, "class")->str);
	EXPECT_EQ(NULL, json_get(c, "stages"));
	EXPECT_EQ(9000, num(c, "guest_hardware_ns", "p50", NULL));
	EXPECT_EQ(0, num(c, "vfio", NULL, NULL));
	const struct json *v = json_get(c, "vcpus");

	ASSERT_NE(NULL, v);
	ASSERT_EQ(JSON_NUMS, v->t); /* an array of numbers */
	ASSERT_EQ(1, v->n);
	EXPECT_EQ(5, v->nums[0]);
	json_free(&j);
	attrib_report_free(r);
}

static double share_sum(const struct json *c)
{
	const struct json *sh = json_get(json_get(c, "tail"), "share_pct");
	double sum = 0;

	for (size_t k = 0; sh && k < sh->n; k++)
		sum += sh->items[k].num;
	return sh ? sum : NAN;
}

TEST(tail_shares_sum_to_the_total)
{
	struct attrib_report *r = attrib_report_new();
	struct json j;

	ASSERT_NE(NULL, r);
	/* 200 samples; the two slowest (above p99) spend it in the run queue */
	for (int i = 1; i <= 200; i++) {
		int64_t rq = i > 198 ? 90000 : 1000;
		int64_t st[AS_MAX] = { 1000, 1000, rq, 3000, 4000 };

		add(r, PROBE_W_TIMER, AC_BLOCKED, 9000 + rq + i, st, -1);
	}
	/* all of one total: the tail is the samples at the p99 */
	for (int i = 0; i < 10; i++) {
		int64_t st[AS_MAX] = { 500, 500, -1, 500, 500 };

		add(r, PROBE_W_TIMER, AC_POLL_HIT, 2000, st, 100);
	}
	ASSERT_EQ(0, parse(_metadata, r, &j));

	const struct json *c = class_at(&j, 0, 1);

	ASSERT_NE(NULL, c);
	EXPECT_STREQ("blocked", json_get(c, "class")->str);
	EXPECT_EQ(2, num(c, "tail", "n", NULL));
	EXPECT_NEAR(100.0, share_sum(c), 0.5);
	EXPECT_GT(num(c, "tail", "share_pct", "run_queue"), 85.0);
	EXPECT_LT(num(c, "tail", "share_pct", "residual"), 0.5);

	c = class_at(&j, 0, 0);
	ASSERT_NE(NULL, c);
	EXPECT_EQ(10, num(c, "tail", "n", NULL));
	EXPECT_NEAR(100.0, share_sum(c), 0.5);
	EXPECT_NEAR(25.0, num(c, "tail", "share_pct", "host_irq"), 0.05);

	char *t = text_of(r, false, NULL);

	EXPECT_NE(NULL, strstr(t, "  tail (n=2, total above ")) TH_LOG("%s", t);
	EXPECT_NE(NULL, strstr(t, "  tail (n=10, total at 2.00 µs): host_irq 25.0% signal 25.0% resume 25.0% guest "
				  "25.0% residual 0.0%\n")) TH_LOG("no run queue on a poll hit: %s", t);
	free(t);
	json_free(&j);
	attrib_report_free(r);
}

TEST(json_parses_and_holds_the_numbers)
{
	struct attrib_report *r = attrib_report_new();
	struct json j;

	ASSERT_NE(NULL, r);
	/* an empty report is JSON too */
	ASSERT_EQ(0, parse(_metadata, r, &j));
	EXPECT_EQ(0, json_get(&j, "workloads")->n);
	json_free(&j);

	int64_t st[AS_MAX] = { 2000, 1000, 7000, 5000, 5000 };
	struct attrib_sample s = { .workload = PROBE_W_PINGPONG, .target = 10, .wake = 20010 };
	struct attrib_result res = { .cls = AC_BLOCKED, .poll_ns = 1000, .doorbell = true };

	memcpy(res.stage, st, sizeof(st));
	attrib_report_add(r, &s, &res);
	add(r, PROBE_W_PINGPONG, AC_AMBIGUOUS, 4000, NULL, -1);
	add(r, PROBE_W_PINGPONG, AC_RUNNING, 4000, (int64_t[AS_MAX]){ 1000, 500, -1, 1500, 1000 }, -1);
	ASSERT_EQ(0, parse(_metadata, r, &j));

	const struct json *ws = json_get(&j, "workloads");

	ASSERT_EQ(1, ws->n);
	EXPECT_STREQ("pingpong", json_get(&ws->items[0], "workload")->str);
	const struct json *c = class_at(&j, 0, 0);

	ASSERT_NE(NULL, c);
	EXPECT_STREQ("blocked", json_get(c, "class")->str);
	EXPECT_EQ(1, num(c, "n", NULL, NULL));
	EXPECT_NEAR(1.0 / 3, num(c, "share", NULL, NULL), 0.001);
	EXPECT_EQ(1, num(c, "doorbell", NULL, NULL));
	EXPECT_EQ(20000, num(c, "total_ns", "p99", NULL));
	EXPECT_EQ(7000, num(c, "stages", "run_queue", "p50"));
	EXPECT_EQ(5000, num(c, "stages", "guest", "p90"));
	EXPECT_EQ(0, num(c, "residual_ns", "p50", NULL));
	EXPECT_EQ(1000, num(c, "poll_ns", "p50", NULL));
	EXPECT_NEAR(35.0, num(c, "tail", "share_pct", "run_queue"), 0.05);

	c = class_at(&j, 0, 1);
	ASSERT_NE(NULL, c);
	EXPECT_STREQ("running", json_get(c, "class")->str);
	EXPECT_EQ(-1 + 1, num(c, "stages", "run_queue", "n"));

	c = class_at(&j, 0, 2);
	ASSERT_NE(NULL, c);
	EXPECT_STREQ("ambiguous", json_get(c, "class")->str);
	EXPECT_EQ(1, num(c, "n", NULL, NULL));
	EXPECT_EQ(NULL, json_get(c, "stages")) TH_LOG("ambiguous samples are counted, not broken down");
	json_free(&j);
	attrib_report_free(r);
}

TEST(a_cell_keeps_a_million_samples_and_counts_the_rest)
{
	struct attrib_report *r = attrib_report_new();
	struct json j;

	ASSERT_NE(NULL, r);
	for (int i = 0; i < 1000000 + 7; i++)
		add(r, PROBE_W_TIMER, AC_NOT_VISIBLE, 1000 + i % 1000, NULL, -1);
	ASSERT_EQ(0, parse(_metadata, r, &j));
	const struct json *c = class_at(&j, 0, 0);

	ASSERT_NE(NULL, c);
	EXPECT_EQ(1000000, num(c, "n", NULL, NULL));
	EXPECT_EQ(7, num(c, "dropped", NULL, NULL));
	json_free(&j);
	attrib_report_free(r);
}

TEST(udp_samples_are_tallied_per_vector_and_vcpu)
{
	struct attrib_report *r = attrib_report_new();
	struct json j;
	static const int32_t irqs[] = { 33, 33, 34, -1 };

	ASSERT_NE(NULL, r);
	attrib_report_name_irq(r, 33, "msix0");
	for (int i = 0; i < 4; i++) {
		struct attrib_sample s = { .workload = PROBE_W_UDP, .vcpu = (uint16_t)(i & 1), .target = 1000,
					   .wake = 5000 };
		struct attrib_result res = { .cls = AC_BLOCKED, .residual = 4000, .poll_ns = -1, .irq = irqs[i],
					     .vfio = irqs[i] >= 0 };

		for (unsigned int k = 0; k < AS_MAX; k++)
			res.stage[k] = -1;
		attrib_report_add(r, &s, &res);
	}
	char *t = text_of(r, false, NULL);

	EXPECT_NE(NULL, strstr(t, "udp  blocked  n=4 (100.0%)  vfio vector 3 (msix0:2 irq34:1)  vCPUs 0:2 1:2\n"))
		TH_LOG("%s", t);
	free(t);
	ASSERT_EQ(0, parse(_metadata, r, &j));
	const struct json *c = class_at(&j, 0, 0);

	ASSERT_NE(NULL, c);
	EXPECT_EQ(3, num(c, "vfio", NULL, NULL));
	EXPECT_EQ(2, num(c, "vectors", "msix0", NULL));
	EXPECT_EQ(1, num(c, "vectors", "irq34", NULL));
	json_free(&j);
	attrib_report_free(r);
}

TEST_HARNESS_MAIN
