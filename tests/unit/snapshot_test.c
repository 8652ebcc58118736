// SPDX-License-Identifier: MIT
/*
 * Snapshots and deltas on fixture stats files (a VM and a vCPU): type-aware delta semantics, and
 * the text and JSON views of the same delta.
 */
#include <stdio.h>

#include "halt_poll/halt_poll.h"
#include "core/json.h"
#include "kselftest_harness.h"
#include "tests/unit/stats_fixture.h"

static const struct fx_stat vm_stats[] = {
	FX_COUNTER("remote_tlb_flush"),
	{ "max_pages", KVM_STATS_TYPE_PEAK, 0, 1, 0 },
};
static const struct fx_stat vcpu_stats[] = {
	FX_TIME_NS("halt_wait_ns"),
	{ "blocking", KVM_STATS_TYPE_INSTANT | KVM_STATS_UNIT_BOOLEAN, 0, 1, 0 },
	FX_LOGHIST_NS("halt_wait_hist", 4),
	{ "lin", KVM_STATS_TYPE_LINEAR_HIST | KVM_STATS_UNIT_BYTES, 0, 3, 100 },
};

FIXTURE(snap)
{
	struct hp_set set;
	int vm_fd, vcpu_fd; /* dups: the set owns the originals */
	struct hp_snap a, b;
	struct hp_delta d;
};

static int fx_open(const struct fx_stat *s, size_t n, const char *id)
{
	struct fx *f = fx_build(s, n, id);
	int fd = fx_fd(f, 0);

	free(f);
	return fd;
}

/* Overwrites a source's data block (the test's stand-in for KVM counting). */
static void set_data(int fd, const struct hp_set *set, int src, const uint64_t *w, size_t n)
{
	if (pwrite(fd, w, n * 8, set->src[src].st.data_offset) != (ssize_t)(n * 8))
		abort();
}

FIXTURE_SETUP(snap)
{
	int vm = fx_open(vm_stats, 2, "kvm-77"), vcpu = fx_open(vcpu_stats, 4, "kvm-77/vcpu-0");

	memset(&self->set, 0, sizeof(self->set));
	self->vm_fd = dup(vm);
	self->vcpu_fd = dup(vcpu);
	ASSERT_EQ(0, hp_set_add(&self->set, "vm", vm));
	ASSERT_EQ(0, hp_set_add(&self->set, "vcpu0", vcpu));
	set_data(self->vm_fd, &self->set, 0, (uint64_t[]){ 10, 7 }, 2);
	set_data(self->vcpu_fd, &self->set, 1, (uint64_t[]){ 1000, 1, 1, 2, 3, 4, 0, 0, 5 }, 9);
	ASSERT_EQ(0, hp_snap_take(&self->a, &self->set, "boot-end"));
	set_data(self->vm_fd, &self->set, 0, (uint64_t[]){ 25, 9 }, 2);
	set_data(self->vcpu_fd, &self->set, 1, (uint64_t[]){ 2501000, 0, 1, 12, 3, 104, 1, 0, 5 }, 9);
	ASSERT_EQ(0, hp_snap_take(&self->b, &self->set, "exit"));
	/* fixed times so the output is exact */
	self->a.t_ns = 1000;
	self->b.t_ns = 2001000;
	ASSERT_EQ(0, hp_delta_compute(&self->d, &self->set, &self->a, &self->b));
}

FIXTURE_TEARDOWN(snap)
{
	hp_delta_free(&self->d);
	hp_snap_free(&self->a);
	hp_snap_free(&self->b);
	hp_set_free(&self->set);
	close(self->vm_fd);
	close(self->vcpu_fd);
}

static const uint64_t *dv(FIXTURE_DATA(snap) *self, int src, const char *name)
{
	return hp_delta_values(&self->d, src, hp_stats_find(&self->set.src[src].st, name));
}

TEST_F(snap, delta_semantics_per_type)
{
	EXPECT_STREQ("boot-end", self->d.from);
	EXPECT_STREQ("exit", self->d.to);
	EXPECT_EQ(2000000, self->d.dt_ns);
	EXPECT_EQ(15, dv(self, 0, "remote_tlb_flush")[0]); /* cumulative: b - a */
	EXPECT_EQ(9, dv(self, 0, "max_pages")[0]);	   /* peak: b, since the fd was opened */
	EXPECT_EQ(2500000, dv(self, 1, "halt_wait_ns")[0]);
	EXPECT_EQ(0, dv(self, 1, "blocking")[0]);	   /* instant: b */
	const uint64_t *h = dv(self, 1, "halt_wait_hist"), *l = dv(self, 1, "lin");

	EXPECT_EQ(0, h[0]); /* histograms: per bucket b - a */
	EXPECT_EQ(10, h[1]);
	EXPECT_EQ(0, h[2]);
	EXPECT_EQ(100, h[3]);
	EXPECT_EQ(1, l[0]);
	EXPECT_EQ(0, l[1]);
	EXPECT_EQ(0, l[2]);
	/* the snapshots are copies: a later read does not change them */
	set_data(self->vm_fd, &self->set, 0, (uint64_t[]){ 99, 99 }, 2);
	ASSERT_EQ(0, hp_stats_read(&self->set.src[0].st));
	EXPECT_EQ(10, self->a.data[0][0]);
	EXPECT_EQ(25, self->b.data[0][0]);
}

TEST_F(snap, backwards_and_misordered_refused)
{
	struct hp_delta d;
	struct hp_snap c;

	/* reversed: b's time is before a's */
	EXPECT_EQ(-EINVAL, hp_delta_compute(&d, &self->set, &self->b, &self->a));
	set_data(self->vm_fd, &self->set, 0, (uint64_t[]){ 3, 9 }, 2); /* counter went down */
	ASSERT_EQ(0, hp_snap_take(&c, &self->set, "later"));
	EXPECT_EQ(-ERANGE, hp_delta_compute(&d, &self->set, &self->b, &c));
	EXPECT_EQ(NULL, d.data);
	hp_snap_free(&c);
}

TEST_F(snap, json_output)
{
	static const char want[] =
		"{\"from\":\"boot-end\",\"to\":\"exit\",\"dt_ns\":2000000,\"sources\":["
		"{\"name\":\"vm\",\"id\":\"kvm-77\",\"stats\":["
		"{\"name\":\"remote_tlb_flush\",\"type\":\"cumulative\",\"unit\":\"none\",\"base\":10,\"exponent\":0,"
		"\"semantics\":\"change from 'from' to 'to'\",\"value\":15},"
		"{\"name\":\"max_pages\",\"type\":\"peak\",\"unit\":\"none\",\"base\":10,\"exponent\":0,"
		"\"semantics\":\"peak since the fd was opened\",\"value\":9}]},"
		"{\"name\":\"vcpu0\",\"id\":\"kvm-77/vcpu-0\",\"stats\":["
		"{\"name\":\"halt_wait_ns\",\"type\":\"cumulative\",\"unit\":\"seconds\",\"base\":10,\"exponent\":-9,"
		"\"semantics\":\"change from 'from' to 'to'\",\"value\":2500000},"
		"{\"name\":\"blocking\",\"type\":\"instant\",\"unit\":\"boolean\",\"base\":10,\"exponent\":0,"
		"\"semantics\":\"value at 'to'\",\"value\":0},"
		"{\"name\":\"halt_wait_hist\",\"type\":\"log2-hist\",\"unit\":\"seconds\",\"base\":10,\"exponent\":-9,"
		"\"semantics\":\"change from 'from' to 'to'\",\"bucket_size\":0,\"buckets\":[0,10,0,100]},"
		"{\"name\":\"lin\",\"type\":\"linear-hist\",\"unit\":\"bytes\",\"base\":10,\"exponent\":0,"
		"\"semantics\":\"change from 'from' to 'to'\",\"bucket_size\":100,\"buckets\":[1,0,0]}]}]}\n";
	size_t len;
	char *out = NULL;
	FILE *f = open_memstream(&out, &len);

	ASSERT_EQ(0, hp_write_json(f, &self->set, &self->d));
	fclose(f);
	EXPECT_STREQ(want, out);
	free(out);
}

TEST(json_string_escaping)
{
	char *out = NULL;
	size_t len;
	FILE *f = open_memstream(&out, &len);

	json_write_string(f, "a\"b\\c\nd\te\x01\x1f\x7f interval 3 \xc2\xb5s");
	fclose(f);
	EXPECT_STREQ("\"a\\\"b\\\\c\\nd\\te\\u0001\\u001f\\u007f interval 3 \xc2\xb5s\"", out);
	free(out);
}

TEST_F(snap, text_table_and_histogram)
{
	static const char *const cols[] = { "halt_wait_ns", "blocking", "halt_wait_hist", "remote_tlb_flush" };
	static const char want_hist[] =
		"vcpu0 halt_wait_hist: 110 samples, p50 >= 4ns, p90 >= 4ns, p99 >= 4ns\n"
		"              [1ns, 2ns)         10 ####\n"
		"              [2ns, 4ns)          0 \n"
		"                  >= 4ns        100 ########################################\n";
	size_t len;
	char *out = NULL;
	FILE *f = open_memstream(&out, &len);

	hp_render_table(f, &self->set, &self->d, cols, 4);
	fclose(f);
	TH_LOG("\n%s", out);
	EXPECT_NE(NULL, strstr(out, "stats from 'boot-end' to 'exit' (0.002 s)"));
	EXPECT_NE(NULL, strstr(out, "vcpu0"));
	EXPECT_NE(NULL, strstr(out, "2.5ms"));
	/* the VM has none of the vCPU stats, the vCPU not the VM's counter */
	EXPECT_NE(NULL, strstr(out, "vm                  -          -              -               15"));
	EXPECT_NE(NULL, strstr(out, "2.5ms          0            110                -"));
	free(out);

	f = open_memstream(&out, &len);
	hp_render_hist(f, "vcpu0", hp_stats_find(&self->set.src[1].st, "halt_wait_hist"),
		       dv(self, 1, "halt_wait_hist"), 40);
	fclose(f);
	EXPECT_STREQ(want_hist, out);
	free(out);
}

/* The exit summary's default form: one line, the name once, each percentile as the bucket it falls
 * in; a sample in KVM's [0, 1 ns) bucket is "< 1ns", never an interpolated "~0.5ns". */
TEST(hist_one_line_buckets_not_interpolated)
{
	struct hp_stat h = { .flags = KVM_STATS_TYPE_LOG_HIST | KVM_STATS_UNIT_SECONDS, .exponent = -9, .size = 32 };
	uint64_t b[32] = { 0 };
	char *out = NULL;
	size_t len;

	snprintf(h.name, sizeof(h.name), "halt_wait_hist");
	b[0] = 60;  /* [0, 1ns) */
	b[11] = 35; /* [1.024us, 2.048us) */
	b[20] = 5;  /* [524.3us, 1.049ms) */
	FILE *f = open_memstream(&out, &len);

	hp_render_hist(f, "vmm: vcpu0", &h, b, 0);
	fclose(f);
	EXPECT_STREQ("vmm: vcpu0 halt_wait_hist: 100 samples, p50 < 1ns, p90 [1.024us, 2.048us), "
		     "p99 [524.3us, 1.049ms)\n", out);
	free(out);
}

TEST(fmt_value_units)
{
	struct hp_stat ns = { .flags = KVM_STATS_TYPE_CUMULATIVE | KVM_STATS_UNIT_SECONDS, .exponent = -9 };
	struct hp_stat cnt = { .flags = KVM_STATS_TYPE_CUMULATIVE };
	struct hp_stat kib = { .flags = KVM_STATS_TYPE_INSTANT | KVM_STATS_UNIT_BYTES | KVM_STATS_BASE_POW2, .exponent = 10 };
	char b[32];

	hp_fmt_value(b, sizeof(b), &ns, 750);
	EXPECT_STREQ("750ns", b);
	hp_fmt_value(b, sizeof(b), &ns, 12500);
	EXPECT_STREQ("12.5us", b);
	hp_fmt_value(b, sizeof(b), &ns, 3e9);
	EXPECT_STREQ("3s", b);
	hp_fmt_value(b, sizeof(b), &cnt, 123456789);
	EXPECT_STREQ("123456789", b);
	hp_fmt_value(b, sizeof(b), &kib, 4);
	EXPECT_STREQ("4096", b);
}

TEST_HARNESS_MAIN
