// SPDX-License-Identifier: MIT
/*
 * The binary stats reader on files built the way the kernel lays them out (no /dev/kvm here),
 * and on corrupt ones: every bad field must be refused, never read past.
 */
#include <math.h>

#include "halt_poll/halt_poll.h"
#include "kselftest_harness.h"
#include "tests/unit/stats_fixture.h"

static const struct fx_stat small[] = {
	FX_COUNTER("halt_successful_poll"),
	FX_TIME_NS("halt_wait_ns"),
	FX_LOGHIST_NS("halt_wait_hist", 32),
	{ "blocking", KVM_STATS_TYPE_INSTANT | KVM_STATS_UNIT_BOOLEAN, 0, 1, 0 },
};
#define NSMALL (sizeof(small) / sizeof(small[0]))

static int open_fx(struct hp_stats *st, struct fx *f, size_t len)
{
	int r = hp_stats_open(st, fx_fd(f, len));

	free(f);
	return r;
}

TEST(parse_and_read)
{
	struct hp_stats st;
	uint64_t v;

	ASSERT_EQ(0, open_fx(&st, fx_build(small, NSMALL, "kvm-1234/vcpu-0"), 0));
	EXPECT_STREQ("kvm-1234/vcpu-0", st.id);
	EXPECT_EQ((int)NSMALL, st.nr);
	ASSERT_EQ(0, hp_stats_get(&st, "halt_successful_poll", &v));
	EXPECT_EQ(1000, v);
	ASSERT_EQ(0, hp_stats_get(&st, "halt_wait_ns", &v));
	EXPECT_EQ(1001, v);

	const struct hp_stat *h = hp_stats_find(&st, "halt_wait_hist");

	ASSERT_NE(NULL, h);
	EXPECT_EQ(32, h->size);
	EXPECT_STREQ("log2-hist", hp_stat_type_name(h->flags));
	EXPECT_STREQ("s", hp_stat_unit_name(h->flags));
	EXPECT_EQ(1002 + 31, hp_stats_value(&st, h, 31));
	EXPECT_EQ(1002 + 31, hp_stats_values(&st, h)[31]);
	EXPECT_EQ(0, hp_stats_value(&st, h, 32)); /* past the histogram */
	EXPECT_EQ(-ENOENT, hp_stats_get(&st, "no_such_stat", &v));
	hp_stats_close(&st);
}

TEST(reread_sees_new_values)
{
	struct hp_stats st;
	uint64_t v = 77;
	struct fx *f = fx_build(small, NSMALL, "kvm-1/vcpu-0");
	int fd = fx_fd(f, 0);

	free(f);
	ASSERT_EQ(0, hp_stats_open(&st, fd));
	ASSERT_EQ(8, pwrite(fd, &v, 8, st.data_offset));
	ASSERT_EQ(0, hp_stats_read(&st));
	ASSERT_EQ(0, hp_stats_get(&st, "halt_successful_poll", &v));
	EXPECT_EQ(77, v);
	/* A data block that shrinks under the reader is an error, not stale values. */
	ASSERT_EQ(0, ftruncate(fd, st.data_offset + 8));
	EXPECT_EQ(-EIO, hp_stats_read(&st));
	hp_stats_close(&st);
}

/* Every type, unit and base the UAPI defines is accepted and reported. */
TEST(all_types_units_bases)
{
	static const struct fx_stat all[] = {
		{ "c", KVM_STATS_TYPE_CUMULATIVE | KVM_STATS_UNIT_NONE, 0, 1, 0 },
		{ "i", KVM_STATS_TYPE_INSTANT | KVM_STATS_UNIT_BYTES | KVM_STATS_BASE_POW2, 10, 1, 0 },
		{ "p", KVM_STATS_TYPE_PEAK | KVM_STATS_UNIT_CYCLES, 0, 1, 0 },
		{ "lin", KVM_STATS_TYPE_LINEAR_HIST | KVM_STATS_UNIT_SECONDS, -6, 4, 50 },
		{ "log", KVM_STATS_TYPE_LOG_HIST | KVM_STATS_UNIT_SECONDS, -9, 8, 0 },
		{ "b", KVM_STATS_TYPE_INSTANT | KVM_STATS_UNIT_BOOLEAN, 0, 1, 0 },
	};
	static const char *const types[] = { "cumulative", "instant", "peak", "linear-hist", "log2-hist", "instant" };
	static const char *const units[] = { "", "bytes", "cycles", "s", "s", "bool" };
	struct hp_stats st;

	ASSERT_EQ(0, open_fx(&st, fx_build(all, 6, "kvm-9"), 0));
	for (int i = 0; i < 6; i++) {
		EXPECT_STREQ(types[i], hp_stat_type_name(st.stat[i].flags));
		EXPECT_STREQ(units[i], hp_stat_unit_name(st.stat[i].flags));
		EXPECT_EQ(i == 3 || i == 4, hp_stat_is_hist(&st.stat[i]));
	}
	EXPECT_EQ(2, hp_stat_base(&st.stat[1]));
	EXPECT_EQ(10, hp_stat_base(&st.stat[3]));
	/* 3 KiB as POW2 exponent 10; 1500 us as seconds; 2.5e9 ns as 2.5 s */
	EXPECT_EQ(3072.0, hp_stat_to_base_units(&st.stat[1], 3));
	EXPECT_LT(fabs(hp_stat_to_base_units(&st.stat[3], 1500) - 1.5e-3), 1e-15);
	EXPECT_LT(fabs(hp_stat_to_base_units(&st.stat[4], 2.5e9) - 2.5), 1e-12);
	EXPECT_EQ(1.0, hp_stat_scale(&st.stat[0]));
	hp_stats_close(&st);
}

TEST(hist_bucket_bounds)
{
	struct hp_stat lin = { .flags = KVM_STATS_TYPE_LINEAR_HIST, .size = 4, .bucket_size = 50 };
	struct hp_stat log = { .flags = KVM_STATS_TYPE_LOG_HIST, .size = 32 };
	struct hp_stat ctr = { .flags = KVM_STATS_TYPE_CUMULATIVE, .size = 1 };
	uint64_t lo, hi;

	ASSERT_EQ(0, hp_hist_bucket(&lin, 0, &lo, &hi));
	EXPECT_EQ(0, lo);
	EXPECT_EQ(50, hi);
	ASSERT_EQ(0, hp_hist_bucket(&lin, 2, &lo, &hi));
	EXPECT_EQ(100, lo);
	EXPECT_EQ(150, hi);
	ASSERT_EQ(0, hp_hist_bucket(&lin, 3, &lo, &hi));
	EXPECT_EQ(150, lo);
	EXPECT_EQ(UINT64_MAX, hi); /* open-ended */
	ASSERT_EQ(0, hp_hist_bucket(&log, 0, &lo, &hi));
	EXPECT_EQ(0, lo);
	EXPECT_EQ(1, hi);
	ASSERT_EQ(0, hp_hist_bucket(&log, 1, &lo, &hi));
	EXPECT_EQ(1, lo);
	EXPECT_EQ(2, hi);
	ASSERT_EQ(0, hp_hist_bucket(&log, 11, &lo, &hi));
	EXPECT_EQ(1024, lo);
	EXPECT_EQ(2048, hi);
	ASSERT_EQ(0, hp_hist_bucket(&log, 31, &lo, &hi));
	EXPECT_EQ(1ULL << 30, lo); /* ~1.07 s in ns: the halt histograms' last bucket */
	EXPECT_EQ(UINT64_MAX, hi);
	EXPECT_EQ(-EINVAL, hp_hist_bucket(&log, 32, &lo, &hi));
	EXPECT_EQ(-EINVAL, hp_hist_bucket(&ctr, 0, &lo, &hi));
}

TEST(hist_quantile_bucket)
{
	struct hp_stat lin = { .flags = KVM_STATS_TYPE_LINEAR_HIST, .size = 4, .bucket_size = 100 };
	struct hp_stat log = { .flags = KVM_STATS_TYPE_LOG_HIST, .size = 8 };
	uint64_t lb[4] = { 0, 50, 50, 0 }, gb[8] = { 0 }, zero[8] = { 0 };
	unsigned int i;

	/* 50 values in [100, 200), 50 in [200, 300): rank 50 is the first bucket's last */
	ASSERT_EQ(0, hp_hist_quantile_bucket(&lin, lb, 0.5, &i));
	EXPECT_EQ(1, i);
	ASSERT_EQ(0, hp_hist_quantile_bucket(&lin, lb, 0.9, &i));
	EXPECT_EQ(2, i);
	ASSERT_EQ(0, hp_hist_quantile_bucket(&lin, lb, 0.0, &i));
	EXPECT_EQ(1, i); /* the first non-empty bucket, not the empty one before it */
	/* log2: 10 in [32, 64), 10 in the open last bucket [64, inf) */
	gb[6] = 10;
	gb[7] = 10;
	ASSERT_EQ(0, hp_hist_quantile_bucket(&log, gb, 0.25, &i));
	EXPECT_EQ(6, i);
	ASSERT_EQ(0, hp_hist_quantile_bucket(&log, gb, 0.99, &i));
	EXPECT_EQ(7, i);
	EXPECT_EQ(-ENODATA, hp_hist_quantile_bucket(&log, zero, 0.5, &i));
	EXPECT_EQ(-EINVAL, hp_hist_quantile_bucket(&log, gb, 1.5, &i));
	EXPECT_EQ(20, hp_hist_total(&log, gb));
}

/* A vCPU file laid out like arm64's on 6.12, with values from a guest that idled a while. */
TEST(arm64_vcpu_fixture)
{
	struct fx *f = fx_build(fx_arm64_vcpu, FX_ARM64_VCPU_N, "kvm-4242/vcpu-1");
	struct hp_stats st;
	uint64_t v;
	unsigned int p50;

	*fx_val(f, 0, 0) = 120;  /* halt_successful_poll */
	*fx_val(f, 1, 0) = 400;  /* halt_attempted_poll */
	*fx_val(f, 6, 0) = 3000000000ull; /* halt_wait_ns: 3 s */
	for (int b = 0; b < 32; b++)
		*fx_val(f, 9, b) = b == 21 ? 280 : 0; /* halt_wait_hist: all in [1.05 ms, 2.1 ms) */
	ASSERT_EQ(0, open_fx(&st, f, 0));
	EXPECT_EQ((int)FX_ARM64_VCPU_N, st.nr);
	EXPECT_EQ(3 * 32 + 15, st.data_words); /* three histograms, 15 single values */
	ASSERT_EQ(0, hp_stats_get(&st, "halt_attempted_poll", &v));
	EXPECT_EQ(400, v);

	const struct hp_stat *w = hp_stats_find(&st, "halt_wait_ns");
	const struct hp_stat *h = hp_stats_find(&st, "halt_wait_hist");

	ASSERT_NE(NULL, w);
	ASSERT_NE(NULL, h);
	EXPECT_EQ(-9, w->exponent);
	EXPECT_LT(fabs(hp_stat_to_base_units(w, hp_stats_value(&st, w, 0)) - 3.0), 1e-9);
	EXPECT_EQ(280, hp_hist_total(h, hp_stats_values(&st, h)));
	ASSERT_EQ(0, hp_hist_quantile_bucket(h, hp_stats_values(&st, h), 0.5, &p50));
	EXPECT_EQ(21, p50);
	ASSERT_EQ(0, hp_stats_get(&st, "exits", &v));
	EXPECT_EQ(1000 + st.data_words - 1, v); /* the last word */
	ASSERT_NE(NULL, hp_stats_find(&st, "blocking"));
	hp_stats_close(&st);
}

/* Each mutation makes one field of an otherwise good file wrong. */
enum corruption {
	NUM_DESC_ZERO, NUM_DESC_HUGE, NAME_SIZE_ZERO, NAME_SIZE_HUGE, DESC_PAST_EOF, DATA_PAST_EOF,
	ID_OVERLAPS_HEADER, DESCS_OVERLAP_ID, DATA_INSIDE_DESCS, DESC_OFFSET_WRAPS,
	UNKNOWN_TYPE, UNKNOWN_UNIT, UNKNOWN_BASE, NAME_EMPTY, NAME_UNTERMINATED, NAME_BINARY,
	OFFSET_UNALIGNED, SIZE_ZERO, STAT_PAST_DATA_END, STAT_FAR_OUT, LINEAR_NO_BUCKET_SIZE,
	LOG_TOO_MANY_BUCKETS, ID_UNTERMINATED, NR_CORRUPTIONS
};

static void corrupt(struct fx *f, enum corruption c)
{
	struct kvm_stats_header *h = fx_hdr(f);

	switch (c) {
	case NUM_DESC_ZERO: h->num_desc = 0; break;
	case NUM_DESC_HUGE: h->num_desc = 1u << 30; break; /* would allocate gigabytes */
	case NAME_SIZE_ZERO: h->name_size = 0; break;
	case NAME_SIZE_HUGE: h->name_size = 1u << 20; break;
	case DESC_PAST_EOF: h->desc_offset = 1u << 20; h->data_offset = 1u << 21; break;
	case DATA_PAST_EOF: h->data_offset = 1u << 20; break;
	case ID_OVERLAPS_HEADER: h->id_offset = 4; break;
	case DESCS_OVERLAP_ID: h->desc_offset = h->id_offset + 8; break;
	case DATA_INSIDE_DESCS: h->data_offset = h->desc_offset + 16; break;
	case DESC_OFFSET_WRAPS: h->desc_offset = 0xfffffff0u; break;
	case UNKNOWN_TYPE: fx_desc(f, 1)->flags = KVM_STATS_TYPE_MAX + 1; break;
	case UNKNOWN_UNIT: fx_desc(f, 1)->flags |= KVM_STATS_UNIT_MAX + (1 << KVM_STATS_UNIT_SHIFT); break;
	case UNKNOWN_BASE: fx_desc(f, 1)->flags |= KVM_STATS_BASE_MAX + (1 << KVM_STATS_BASE_SHIFT); break;
	case NAME_EMPTY: fx_desc(f, 0)->name[0] = 0; break;
	case NAME_UNTERMINATED: memset(fx_desc(f, 2)->name, 'x', FX_NAME_SIZE); break;
	case NAME_BINARY: fx_desc(f, 0)->name[3] = '\n'; break;
	case OFFSET_UNALIGNED: fx_desc(f, 1)->offset += 4; break;
	case SIZE_ZERO: fx_desc(f, 0)->size = 0; break;
	case STAT_PAST_DATA_END: fx_desc(f, 3)->offset += 8; break; /* the last stat crosses EOF */
	case STAT_FAR_OUT: fx_desc(f, 0)->offset = 0xfffffff8u; fx_desc(f, 0)->size = 0xffff; break;
	case LINEAR_NO_BUCKET_SIZE: fx_desc(f, 2)->flags = KVM_STATS_TYPE_LINEAR_HIST; break;
	case LOG_TOO_MANY_BUCKETS:
		fx_desc(f, 2)->size = 65;
		fx_desc(f, 3)->offset += 33 * 8;
		f->len += 33 * 8;
		break;
	case ID_UNTERMINATED: memset(f->buf + h->id_offset, 'k', FX_NAME_SIZE); break;
	case NR_CORRUPTIONS: break;
	}
}

TEST(corrupt_files_refused)
{
	for (int c = 0; c < NR_CORRUPTIONS; c++) {
		struct fx *f = fx_build(small, NSMALL, "kvm-1234/vcpu-0");
		struct hp_stats st;

		corrupt(f, c);
		int r = open_fx(&st, f, 0);

		EXPECT_LT(r, 0) TH_LOG("corruption %d accepted", c);
		EXPECT_EQ(-1, st.fd);
		EXPECT_EQ(NULL, st.stat);
		EXPECT_EQ(NULL, st.data);
	}
}

/* A name size that is not a multiple of 4 (the kernel's is 48, but the format allows any)
 * leaves the descriptors unaligned in the file: read correctly, never as a misaligned struct
 * (found by tests/fuzz/stats_fuzz.c under UBSan). */
TEST(odd_name_size_descriptors_unaligned)
{
	enum { NAME = 49, DSZ = sizeof(struct kvm_stats_desc) + NAME, DESCS = 24 + NAME, DATA = 208 };
	uint8_t buf[DATA + 16] = { 0 };
	struct kvm_stats_header h = { .name_size = NAME, .num_desc = 2, .id_offset = 24,
				      .desc_offset = DESCS, .data_offset = DATA };
	struct kvm_stats_desc d = { .flags = KVM_STATS_TYPE_CUMULATIVE, .size = 1 };
	uint64_t v[2] = { 7, 9 };
	struct hp_stats st;

	memcpy(buf, &h, sizeof(h));
	strcpy((char *)buf + 24, "kvm-1/vcpu-0");
	for (int i = 0; i < 2; i++) {
		d.offset = 8 * i;
		memcpy(buf + DESCS + i * DSZ, &d, sizeof(d));
		strcpy((char *)buf + DESCS + i * DSZ + sizeof(d), i ? "wfi_exit_stat" : "exits");
	}
	memcpy(buf + DATA, v, sizeof(v));
	int fd = memfd_create("stats", 0);

	ASSERT_EQ((ssize_t)sizeof(buf), write(fd, buf, sizeof(buf)));
	ASSERT_EQ(0, hp_stats_open(&st, fd));
	uint64_t x = 0;

	ASSERT_EQ(0, hp_stats_read(&st));
	EXPECT_EQ(0, hp_stats_get(&st, "exits", &x));
	EXPECT_EQ(7, x);
	EXPECT_EQ(0, hp_stats_get(&st, "wfi_exit_stat", &x));
	EXPECT_EQ(9, x);
	hp_stats_close(&st);
}

/* Cut anywhere (inside the header, id, descriptors or data), the file is refused. */
TEST(truncated_files_refused)
{
	struct fx *f = fx_build(small, NSMALL, "kvm-1234/vcpu-0");
	size_t cuts[] = { 0, 10, sizeof(struct kvm_stats_header) + 5,
			  fx_hdr(f)->desc_offset + 3, fx_hdr(f)->data_offset - 1, fx_hdr(f)->data_offset + 4,
			  f->len - 8 };

	for (size_t i = 0; i < sizeof(cuts) / sizeof(cuts[0]); i++) {
		struct hp_stats st;

		EXPECT_LT(hp_stats_open(&st, fx_fd(f, cuts[i] ? cuts[i] : 1)), 0) TH_LOG("cut at %zu", cuts[i]);
	}
	free(f);
}

TEST_HARNESS_MAIN
