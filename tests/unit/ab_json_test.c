// SPDX-License-Identifier: MIT
/*
 * The strict JSON reader's memory: a saved A/B run costs a small multiple of its size to read,
 * and a file of any shape is refused at json_budget() rather than read at any cost. Measured as
 * the peak resident memory of a child that reads it.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "ab/ab.h"
#include "core/json.h"
#include "kselftest_harness.h"

#ifdef __SANITIZE_ADDRESS__
#define RSS_IS_THE_PROGRAMS false /* ASan keeps freed blocks in quarantine, with redzones around all */
#else
#define RSS_IS_THE_PROGRAMS true
#endif

/* The peak of this process's resident memory in KiB since the last reset_peak(), or -1. */
static long peak_kib(void)
{
	char line[128];
	long kib = -1;
	FILE *f = fopen("/proc/self/status", "r");

	while (f && fgets(line, sizeof(line), f))
		if (!strncmp(line, "VmHWM:", 6))
			kib = strtol(line + 6, NULL, 10);
	if (f)
		fclose(f);
	return kib;
}

static bool reset_peak(void)
{
	int fd = open("/proc/self/clear_refs", O_WRONLY);
	bool ok = fd >= 0 && write(fd, "5", 1) == 1;

	if (fd >= 0)
		close(fd);
	return ok;
}

/* A saved run of 4 MiB as vmm ab writes it: an epoch of 600,000 samples printed "%.3f" (a minute of
 * UDP round trips), and one of 1000. The digits are put by hand: printf's "%.3f" is slow under
 * qemu-user. */
static char *big_saved(size_t *len)
{
	size_t cap = 5u << 20, n = 0;
	char *t = malloc(cap);

	n += snprintf(t + n, cap - n, "{\"format\":2,\"seed\":1,\"epochs\":[");
	for (int e = 0; e < 2; e++) {
		n += snprintf(t + n, cap - n, "%s{\"index\":%d,\"arm\":\"%s\",\"warmup\":false,\"complete\":true,"
				     "\"workloads\":{\"timer\":{\"unit\":\"us\",\"samples\":[", e ? "," : "", e, e ? "b" : "a");
		for (long i = 0; i < (e ? 1000 : 600000); i++) {
			long v = 10000 + i * 7919 % 600000; /* 10.000 to 609.999 us */

			if (i)
				t[n++] = ',';
			n += snprintf(t + n, cap - n, "%ld", v / 1000);
			t[n++] = '.';
			for (long d = 100; d; d /= 10)
				t[n++] = (char)('0' + v / d % 10);
		}
		n += snprintf(t + n, cap - n, "]}}}");
	}
	n += snprintf(t + n, cap - n, "]}");
	*len = n;
	return t;
}

/* What reading text costs at its peak, measured in a child so that nothing else moves the peak:
 * the KiB above the text itself, and whether it was read (ab_saved_parse when saved, else
 * json_parse). -1 when the peak cannot be reset here. */
static long read_peak_kib(const char *text, size_t len, bool saved, int *ok)
{
	int fd[2];
	long r[2] = { -1, 0 };
	pid_t pid;

	if (pipe(fd) < 0 || (pid = fork()) < 0)
		return -1;
	if (!pid) {
		char why[256];
		struct ab_saved s;
		struct json v;

		close(fd[0]);
		bool reset = reset_peak();
		long before = peak_kib();

		r[1] = saved ? ab_saved_parse(text, len, &s, why, sizeof(why)) == 0
			     : json_parse(text, len, &v, why, sizeof(why)) == 0;
		r[0] = reset && before >= 0 ? peak_kib() - before : -1;
		if (write(fd[1], r, sizeof(r)) != sizeof(r))
			_exit(1);
		_exit(0);
	}
	close(fd[1]);
	if (read(fd[0], r, sizeof(r)) != sizeof(r))
		r[0] = -1;
	close(fd[0]);
	waitpid(pid, NULL, 0);
	*ok = (int)r[1];
	return r[0];
}

/* Issue 35: the reader made a 56-byte node per sample before packing them (10 times this 4 MiB file,
 * 19 times a file of empty lists; the audit saw 263 MiB for an 8 MiB file of its own), and accepted
 * up to 256 MiB of text. Samples now go straight into doubles, and a tree of any shape may take at
 * most json_budget() bytes. */
TEST(saved_memory_a_small_multiple_of_the_file)
{
	size_t len;
	char *text = big_saved(&len);
	int ok;
	long kib = read_peak_kib(text, len, false, &ok);
	/* the peak is this code's only where it can be reset and malloc is plain */
	bool rss = kib >= 0 && RSS_IS_THE_PROGRAMS;

	EXPECT_TRUE(ok);
	TH_LOG("reading %zu KiB took %ld KiB above the text%s", len / 1024, kib, rss ? "" : " (not judged here)");
	/* 8 bytes per sample of 7 or 8 characters, and the tree around them */
	if (rss)
		EXPECT_LT(kib, (long)(2 * len / 1024) + 8192) TH_LOG("%ld KiB to read %zu KiB", kib, len / 1024);
	kib = read_peak_kib(text, len, true, &ok); /* the tree, and the samples copied out of it */
	EXPECT_TRUE(ok);
	if (rss)
		EXPECT_LT(kib, (long)(4 * len / 1024) + 8192) TH_LOG("%ld KiB to read and take %zu KiB", kib, len / 1024);

	/* 2 MiB of empty lists: a node for every 3 bytes of text, refused at the budget */
	memset(text, 0, len);
	text[0] = '[';
	for (size_t i = 1; i + 3 < 2u << 20; i += 3)
		memcpy(text + i, "[],", 3);
	len = strlen(text);
	text[len - 1] = ']';
	kib = read_peak_kib(text, len, false, &ok);
	EXPECT_FALSE(ok);
	if (rss)
		EXPECT_LT(kib, (long)((JSON_BUDGET_PER_BYTE + 3) * len / 1024) + 8192) TH_LOG("%ld KiB", kib);
	char why[256];
	struct json v;

	EXPECT_EQ(-EINVAL, json_parse(text, len, &v, why, sizeof(why)));
	EXPECT_NE(NULL, strstr(why, "more values than a file of its size holds")) TH_LOG("%s", why);
	/* the same lists in a small file are read: the budget has a floor */
	text[3 * 1000] = ']';
	EXPECT_EQ(0, json_parse(text, 3 * 1000 + 1, &v, why, sizeof(why))) TH_LOG("%s", why);
	EXPECT_EQ(1000, v.n);
	json_free(&v);
	free(text);
}

TEST_HARNESS_MAIN
