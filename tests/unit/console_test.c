// SPDX-License-Identifier: MIT
/* Guest console: the keyboard's Ctrl-A filter, the output buffer, the panic-banner watch. */
#include <string.h>
#include <unistd.h>

#include "kselftest_harness.h"
#include "vmm/vmm.h"

/* Feeds in through the filter in chunks cut at the given positions, as successive reads would
 * arrive; returns the bytes sent to the guest, and whether Ctrl-A x asked to quit. */
static size_t filter_split(const char *in, size_t n, const size_t *cuts, int nr_cuts, uint8_t *out,
			   bool *quit)
{
	struct console_escape e = { false };
	size_t pos = 0, have = 0;

	*quit = false;
	for (int c = 0; c <= nr_cuts && !*quit; c++) {
		size_t end = c < nr_cuts ? cuts[c] : n;
		have += console_filter(&e, (const uint8_t *)in + pos, end - pos, out + have, quit);
		pos = end;
	}
	return have;
}

static void expect_filter(struct __test_metadata *_metadata, const char *in, size_t n,
			  const char *want, size_t want_n, bool want_quit)
{
	uint8_t out[256];
	bool quit;

	/* whole, then split at every position, then at every pair of positions */
	for (size_t a = 0; a <= n; a++) {
		for (size_t b = a; b <= n; b++) {
			size_t cuts[2] = { a, b };
			size_t got = filter_split(in, n, cuts, 2, out, &quit);

			ASSERT_EQ(want_n, got) TH_LOG("input %zu bytes cut at %zu,%zu", n, a, b);
			ASSERT_EQ(0, memcmp(want, out, want_n)) TH_LOG("cut at %zu,%zu: %02x %02x ...", a, b,
								     out[0], out[1]);
			ASSERT_EQ(want_quit, quit);
		}
	}
}

#define EXPECT_FILTER(in, want, q) \
	expect_filter(_metadata, in, sizeof(in) - 1, want, sizeof(want) - 1, q)

TEST(filter_plain)
{
	EXPECT_FILTER("hello", "hello", false);
}

TEST(filter_ctrl_a_then_key_sends_both)
{
	EXPECT_FILTER("a\001bc", "a\001bc", false);
	EXPECT_FILTER("\001bc", "\001bc", false);
}

TEST(filter_ctrl_a_twice_sends_one)
{
	EXPECT_FILTER("\001\001z", "\001z", false);
	EXPECT_FILTER("\001\001\001\001", "\001\001", false);
}

TEST(filter_ctrl_a_x_quits)
{
	EXPECT_FILTER("ab\001xcd", "ab", true);
	EXPECT_FILTER("\001\001\001x", "\001", true);
}

/* The reported case: Ctrl-A at the end of one read, "bc" in the next. */
TEST(filter_escape_split_across_reads)
{
	uint8_t out[8];
	bool quit;
	size_t cut = 1;

	ASSERT_EQ(3, filter_split("\001bc", 3, &cut, 1, out, &quit));
	EXPECT_EQ(0, memcmp("\001bc", out, 3)) TH_LOG("sent %02x %02x %02x", out[0], out[1], out[2]);
}

TEST_HARNESS_MAIN
