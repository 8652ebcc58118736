// SPDX-License-Identifier: MIT
/* One clock (issue 37): the guest's CLOCK_MONOTONIC through the shared counter onto the host's
 * CLOCK_MONOTONIC_RAW, and the probe's COUNTER frames (protocol 2) that carry the guest's pairs; a
 * version 1 guest's frames still decode. */
#include "guest/probe_decode.h"
#include "kselftest_harness.h"
#include "trace/trace.h"

#define HZ 62500000ull /* a 62.5 MHz counter: 16 ns a tick */

TEST(nothing_without_pairs)
{
	struct attrib_clock c;
	uint64_t h;

	attrib_clock_init(&c, HZ, 0);
	EXPECT_EQ(-1, attrib_clock_g2h(&c, 1000, &h));
	attrib_clock_guest_pair(&c, (struct clock_pair){ 1000, 5000 });
	EXPECT_EQ(-1, attrib_clock_g2h(&c, 1000, &h)); /* no host pair yet */
	attrib_clock_init(&c, 0, 0);
	attrib_clock_guest_pair(&c, (struct clock_pair){ 1000, 5000 });
	attrib_clock_host_pair(&c, (struct clock_pair){ 7000, 5000 }, 100);
	EXPECT_EQ(-1, attrib_clock_g2h(&c, 1000, &h)) TH_LOG("one pair each and no frequency: no slope");
}

TEST(one_pair_each_uses_the_frequency)
{
	struct attrib_clock c;
	uint64_t h;

	/* guest mono 1 s is counter 1e9 ticks... in 62.5 MHz: guest 1 s <-> cnt 62.5e6 */
	attrib_clock_init(&c, HZ, 0);
	attrib_clock_guest_pair(&c, (struct clock_pair){ 1000000000ull, 62500000ull });
	/* the host's mono_raw is 5 s at counter 62.5e6 (the host booted earlier) */
	attrib_clock_host_pair(&c, (struct clock_pair){ 5000000000ull, 62500000ull }, 200);
	ASSERT_EQ(0, attrib_clock_g2h(&c, 1000000000ull, &h));
	EXPECT_EQ(5000000000ull, h);
	/* 1 ms later in the guest is 1 ms later on the host */
	ASSERT_EQ(0, attrib_clock_g2h(&c, 1001000000ull, &h));
	EXPECT_EQ(5001000000ull, h);
	EXPECT_EQ(100, c.err_ns);
}

TEST(two_pairs_give_the_slope_and_the_offset_shifts)
{
	struct attrib_clock c;
	uint64_t h;

	/* the guest's clock runs 100 ppm fast against the counter; the guest's counter is the host's
	 * less 1000 ticks */
	attrib_clock_init(&c, HZ, 1000);
	attrib_clock_guest_pair(&c, (struct clock_pair){ 0, 0 });
	attrib_clock_guest_pair(&c, (struct clock_pair){ 1000100000ull, 62500000ull });
	attrib_clock_host_pair(&c, (struct clock_pair){ 2000000000ull, 1000 }, 0);
	attrib_clock_host_pair(&c, (struct clock_pair){ 3000000000ull, 62501000ull }, 0);
	ASSERT_EQ(0, attrib_clock_g2h(&c, 0, &h));
	EXPECT_EQ(2000000000ull, h);
	ASSERT_EQ(0, attrib_clock_g2h(&c, 1000100000ull, &h));
	EXPECT_EQ(3000000000ull, h);
	ASSERT_EQ(0, attrib_clock_g2h(&c, 500050000ull, &h));
	EXPECT_EQ(2500000000ull, h);
}

static size_t frame(uint8_t *out, uint8_t type, uint32_t seq, const uint8_t *p, size_t len, uint8_t version)
{
	size_t n = probe_frame(out, type, seq, p, len);

	if (version != PROBE_PROTO_VERSION) { /* rewrite as an older guest wrote it */
		out[5] = version;
		uint32_t crc = probe_crc32(probe_crc32(0, out, 12), p, len);

		out[12] = (uint8_t)crc, out[13] = (uint8_t)(crc >> 8), out[14] = (uint8_t)(crc >> 16),
		out[15] = (uint8_t)(crc >> 24);
	}
	return n;
}

TEST(counter_frames_keep_the_first_and_the_last)
{
	struct probe_decoder d;
	uint8_t p[PROBE_MAX_PAYLOAD], f[PROBE_MAX_FRAME];
	uint32_t seq = 0;

	probe_decoder_init(&d);
	for (uint64_t i = 0; i < 3; i++) {
		struct probe_counter c = { .mono_ns = 1000 + i * 10, .cnt = 50 + i, .hz = HZ, .window_ns = 40,
					   .kind = PROBE_CNT_ARM64 };
		size_t n = frame(f, PROBE_T_COUNTER, seq++, p, probe_put_counter(p, &c), PROBE_PROTO_VERSION);

		EXPECT_EQ(0, probe_decode_frame(&d, f, n));
	}
	EXPECT_EQ(3, d.counters);
	EXPECT_EQ(1000, d.counter[0].mono_ns);
	EXPECT_EQ(1020, d.counter[1].mono_ns);
	EXPECT_EQ(52, d.counter[1].cnt);
	EXPECT_EQ(HZ, d.counter[1].hz);
	EXPECT_EQ(40, d.counter[1].window_ns);
	/* going back in time, another kind, a reserved byte set, a short payload: refused */
	struct probe_counter back = { .mono_ns = 900, .cnt = 60, .kind = PROBE_CNT_ARM64 };
	struct probe_counter kind = { .mono_ns = 2000, .cnt = 60, .kind = PROBE_CNT_X86_TSC };
	size_t n = frame(f, PROBE_T_COUNTER, seq++, p, probe_put_counter(p, &back), PROBE_PROTO_VERSION);

	EXPECT_EQ(-1, probe_decode_frame(&d, f, n));
	n = frame(f, PROBE_T_COUNTER, seq++, p, probe_put_counter(p, &kind), PROBE_PROTO_VERSION);
	EXPECT_EQ(-1, probe_decode_frame(&d, f, n));
	probe_put_counter(p, &(struct probe_counter){ .mono_ns = 3000, .cnt = 70, .kind = PROBE_CNT_ARM64 });
	p[21] = 1;
	n = frame(f, PROBE_T_COUNTER, seq++, p, PROBE_COUNTER_SIZE, PROBE_PROTO_VERSION);
	EXPECT_EQ(-1, probe_decode_frame(&d, f, n));
	n = frame(f, PROBE_T_COUNTER, seq++, p, PROBE_COUNTER_SIZE - 8, PROBE_PROTO_VERSION);
	EXPECT_EQ(-1, probe_decode_frame(&d, f, n));
	EXPECT_EQ(3, d.counters);
	EXPECT_EQ(1020, d.counter[1].mono_ns);
	probe_decoder_free(&d);
}

TEST(a_version_1_guest_still_decodes_and_version_3_does_not)
{
	struct probe_decoder d;
	uint8_t p[PROBE_MAX_PAYLOAD], f[PROBE_MAX_FRAME];

	probe_decoder_init(&d);
	size_t n = frame(f, PROBE_T_CLOCK, 0, p, probe_put_clock(p, 123), 1);

	EXPECT_EQ(0, probe_decode_frame(&d, f, n));
	EXPECT_EQ(123, d.clock_ns);
	EXPECT_EQ(0, d.counters);
	n = frame(f, PROBE_T_CLOCK, 1, p, probe_put_clock(p, 456), 3);
	EXPECT_EQ(-1, probe_decode_frame(&d, f, n));
	EXPECT_EQ(123, d.clock_ns);
	probe_decoder_free(&d);
}

TEST_HARNESS_MAIN
