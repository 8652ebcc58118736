// SPDX-License-Identifier: MIT
/* Saved A/B runs (vmm ab --json, read back by vmm ab compare, judge and plot): the input is the
 * file's text. What parses is compared with itself (runs as units, one a side), as vmm ab compare
 * would, and judged again by epochs, as vmm ab judge would. */
#include <stdio.h>
#include <stdlib.h>

#include "ab/ab.h"
#include "ab/abstats.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct ab_saved s;
	char why[256];

	static struct ab ab;
	enum ab_verdict v[PROBE_W_MAX + 1][AB_MAX_ARMS];

	if (ab_saved_load((const char *)data, size, &ab, why, sizeof(why)) == 0) {
		/* past 24 blocks the tests are Monte Carlo: correct, but too slow for a fuzzer's pace */
		if (ab.nr_runs <= 24 * ab.nr_arms)
			ab_report_verdicts(&ab, v);
		ab_saved_unload(&ab);
	}
	if (ab_saved_parse((const char *)data, size, &s, why, sizeof(why)) < 0)
		return 0;
	FILE *null = fopen("/dev/null", "w");
	char *names[] = { "a" };

	if (!null)
		abort();
	ab_saved_compare(null, null, names, &s, 1, names, &s, 1, NULL, 1, 0.01, 0.05, true);
	fclose(null);
	ab_saved_free(&s);
	return 0;
}
