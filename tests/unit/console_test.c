// SPDX-License-Identifier: MIT
/* Guest console: the keyboard's Ctrl-A filter, the output buffer, the panic-banner watch. */
#include <fcntl.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <sys/ioctl.h>

#include "kselftest_harness.h"
#include "platform/console.h"

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

static double secs(void)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return t.tv_sec + t.tv_nsec / 1e9;
}

/* stdout a pipe nobody reads: writers never block, and what does not fit is dropped and counted */
TEST(stalled_reader_never_blocks_the_writer)
{
	static struct console_out co; /* 64 KiB ring: not on the stack */
	uint8_t chunk[1024];
	int p[2];

	ASSERT_EQ(0, pipe(p));
	ASSERT_EQ(0, console_out_init(&co, p[1], NULL, NULL));
	memset(chunk, 'x', sizeof(chunk));
	double t0 = secs();

	for (int i = 0; i < 1024; i++) /* 1 MiB, 16 times the pipe */
		console_out_write(&co, chunk, sizeof(chunk));
	/* the console thread's part: as far as the pipe takes it, without blocking */
	size_t left = console_out_drain(&co);

	for (int i = 0; i < 64; i++)
		console_out_write(&co, chunk, sizeof(chunk));
	left = console_out_drain(&co);
	double t = secs() - t0;

	TH_LOG("1 MiB + 64 KiB written in %.3f s; %llu bytes dropped, %zu still buffered", t,
	       (unsigned long long)co.dropped, left);
	EXPECT_LT(t, 1.0);
	EXPECT_EQ((1024 + 64) * 1024ULL, co.bytes);
	EXPECT_GT(left, 0);
	EXPECT_GE(co.dropped, (1024 + 64) * 1024ULL - 2 * CONSOLE_RING_SIZE);
	/* every byte is accounted for: in the pipe, still buffered, or dropped */
	int queued = 0;

	ASSERT_EQ(0, ioctl(p[0], FIONREAD, &queued));
	EXPECT_EQ(co.bytes, (uint64_t)queued + left + co.dropped);
	/* at exit: bounded, and what could not be written is counted too */
	t0 = secs();
	console_out_flush(&co, 200);
	EXPECT_LT(secs() - t0, 1.0);
	EXPECT_EQ(co.bytes, (uint64_t)queued + co.dropped);
	/* once the reader catches up, output flows again */
	char sink[4096];

	ASSERT_EQ(0, ioctl(p[0], FIONREAD, &queued));
	while (queued > 0) {
		ssize_t n = read(p[0], sink, sizeof(sink));

		ASSERT_LT(0, n);
		queued -= n;
	}
	console_out_write(&co, (const uint8_t *)"after", 5);
	EXPECT_EQ(0, console_out_drain(&co));
	console_out_destroy(&co);
	close(p[0]);
	close(p[1]);
}

/* The reader goes away (vmm run | head -c 100): EPIPE, output discarded, no SIGPIPE death. */
TEST(reader_gone)
{
	static struct console_out co;
	int p[2];

	signal(SIGPIPE, SIG_IGN); /* as main() does */
	ASSERT_EQ(0, pipe(p));
	ASSERT_EQ(0, console_out_init(&co, p[1], NULL, NULL));
	close(p[0]);
	console_out_write(&co, (const uint8_t *)"hello", 5);
	EXPECT_EQ(0, console_out_drain(&co));
	EXPECT_TRUE(co.broken);
	console_out_write(&co, (const uint8_t *)"more", 4);
	EXPECT_EQ(0, console_out_drain(&co));
	EXPECT_EQ(9, co.dropped);
	console_out_destroy(&co);
	close(p[1]);
}

/* Output on a regular file is written as is (a file is never reopened: offsets and O_APPEND hold). */
TEST(regular_file)
{
	static struct console_out co;
	char path[] = "/tmp/vmm-console-XXXXXX", buf[16] = { 0 };
	int fd = mkstemp(path);

	ASSERT_LE(0, fd);
	unlink(path);
	ASSERT_EQ(0, console_out_init(&co, fd, NULL, NULL));
	EXPECT_EQ(fd, co.fd);
	console_out_write(&co, (const uint8_t *)"guest", 5);
	EXPECT_EQ(0, console_out_drain(&co));
	ASSERT_EQ(5, pread(fd, buf, sizeof(buf), 0));
	EXPECT_STREQ("guest", buf);
	console_out_destroy(&co);
	close(fd);
}

#define LINE(s) console_line_is_panic(s, sizeof(s) - 1)

TEST(panic_rule_lines)
{
	/* the kernel's own line: printk's time prefix, with or without the caller id */
	EXPECT_TRUE(LINE("[    1.234567] Kernel panic - not syncing: VFS: Unable to mount root fs"));
	EXPECT_TRUE(LINE("[12345.000001] Kernel panic - not syncing"));
	EXPECT_TRUE(LINE("\r[    0.500000] Kernel panic - not syncing: No working init found."));
	EXPECT_TRUE(LINE("[    1.234567][    T1] Kernel panic - not syncing: Attempted to kill init!"));
	EXPECT_TRUE(LINE("[    1.234567][     C0] Kernel panic - not syncing: sysrq triggered crash"));
	/* userspace text, or anything short of the prefix */
	EXPECT_FALSE(LINE("Kernel panic - not syncing: only text from userspace"));
	EXPECT_FALSE(LINE("echo Kernel panic - not syncing"));
	EXPECT_FALSE(LINE(" [    1.234567] Kernel panic - not syncing"));
	EXPECT_FALSE(LINE("[    1.234567]Kernel panic - not syncing"));
	EXPECT_FALSE(LINE("[    1234567] Kernel panic - not syncing"));
	EXPECT_FALSE(LINE("[    1.] Kernel panic - not syncing"));
	EXPECT_FALSE(LINE("[ x.234567] Kernel panic - not syncing"));
	EXPECT_FALSE(LINE("[    1.234567] Kernel panic - not syncin"));
	EXPECT_FALSE(LINE("[    1.234567] kernel panic - not syncing"));
	EXPECT_FALSE(LINE("[    1.234567] [    T1] Kernel panic - not syncing"));
	EXPECT_FALSE(LINE("[    1.234567][    X1] Kernel panic - not syncing"));
	EXPECT_FALSE(LINE(""));
	EXPECT_FALSE(LINE("["));
}

static void count(void *opaque)
{
	(*(int *)opaque)++;
}

/* The watch on the output stream: byte by byte or in blocks, lines split anywhere. */
TEST(panic_watch_stream)
{
	static struct console_out co;
	static const char text[] =
		"Kernel panic - not syncing: userspace echo after init\r\n"
		"GUEST-BEGIN fakepanic\n"
		"some text Kernel panic - not syncing\n"
		"[    0.000000][    T0] Booting Linux\r\n"
		"[    2.000000] Kernel panic - not syncing: Attempted to kill init! exitcode=0x00000100\r\n"
		"[    2.000001] Kernel panic - not syncing: Attempted to kill init! again\r\n"
		"Kernel panic - not syncing";
	int hits = 0;

	ASSERT_EQ(0, console_out_init(&co, -1, count, &hits));
	for (size_t step = 1; step <= sizeof(text); step++) {
		hits = 0;
		co.line_len = 0;
		co.line_done = false;
		for (size_t i = 0; i < sizeof(text) - 1; i += step) {
			size_t n = sizeof(text) - 1 - i < step ? sizeof(text) - 1 - i : step;

			console_out_write(&co, (const uint8_t *)text + i, n);
		}
		ASSERT_EQ(2, hits) TH_LOG("written in blocks of %zu", step);
	}
	/* a long line is not watched past CONSOLE_LINE_MAX, and the next line still is */
	char longline[300];

	hits = 0;
	memset(longline, 'a', sizeof(longline));
	console_out_write(&co, (const uint8_t *)longline, sizeof(longline));
	console_out_write(&co, (const uint8_t *)"\n[    3.000000] Kernel panic - not syncing\n", 44);
	EXPECT_EQ(1, hits);
	console_out_destroy(&co);
}

/* The end of the guest's boot: once, at the first marker line, wherever the writes split it. */
TEST(boot_end_marker_once)
{
	static struct console_out co;
	static const char text[] = "[    1.0] Run /init as init process\r\n"
				   "echo vmm-guest: in a shell line does not start it\n"
				   "vmm-guest: hello from Linux 6.12\r\n"
				   "vmm-probe: clock 123\n"
				   "vmm-boot-end\n";
	int hits = 0;

	ASSERT_EQ(0, console_out_init(&co, -1, NULL, NULL));
	co.on_boot_end = count;
	co.boot_opaque = &hits;
	for (size_t i = 0; i < sizeof(text) - 1; i += 3)
		console_out_write(&co, (const uint8_t *)text + i, sizeof(text) - 1 - i < 3 ? sizeof(text) - 1 - i : 3);
	EXPECT_EQ(1, hits);
	EXPECT_TRUE(co.boot_seen);
	console_out_destroy(&co);
	/* any of the markers alone ends it; text without one never does */
	static const char *const one[] = { "vmm-probe: clock 5\n", "vmm-boot-end\r\n", "x vmm-boot-end\n" };

	for (int k = 0; k < 3; k++) {
		hits = 0;
		ASSERT_EQ(0, console_out_init(&co, -1, NULL, NULL));
		co.on_boot_end = count;
		co.boot_opaque = &hits;
		console_out_write(&co, (const uint8_t *)one[k], strlen(one[k]));
		EXPECT_EQ(k < 2 ? 1 : 0, hits) TH_LOG("%s", one[k]);
		console_out_destroy(&co);
	}
}

TEST_HARNESS_MAIN
