// SPDX-License-Identifier: MIT
/* make bench's launch to a VMM's first guest entry, read off the lab host's tracefs: KVM's
 * kvm_entry event (arm64 and x86 both have it), stamped with CLOCK_MONOTONIC (trace_clock mono),
 * the clock the runner's now() reads. The one measure of "launch to the guest's first
 * instruction" that is the same for every VMM: no VMM's own mark, and no teardown in it (the
 * poweroff payload's launch to exit has the VMM's teardown, and kvmtool 0.20170904 skips its
 * teardown by crashing in it). */
#include <ctype.h>
#include <errno.h>
#include <fcntl.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mount.h>
#include <unistd.h>

#include "tests/lab/bench_lab.h"
#include "tests/lab/labutil.h"

#define TRACEFS "/sys/kernel/tracing"

static bool put(const char *file, const char *text)
{
	char path[128];
	int fd;

	snprintf(path, sizeof(path), TRACEFS "/%s", file);
	/* O_TRUNC on "trace" empties the ring buffer */
	if ((fd = open(path, O_WRONLY | O_TRUNC | O_CLOEXEC)) < 0)
		return false;
	bool ok = write(fd, text, strlen(text)) == (ssize_t)strlen(text);

	close(fd);
	return ok;
}

/* The host's setting in file, into out: trace_clock's bracketed choice, or the first line. */
static bool get(const char *file, char *out, size_t len)
{
	char path[128];

	snprintf(path, sizeof(path), TRACEFS "/%s", file);
	char *text = lab_slurp(path, NULL), *a = text ? strchr(text, '[') : NULL, *b = a ? strchr(a, ']') : NULL;

	if (a && b)
		snprintf(out, len, "%.*s", (int)(b - a - 1), a + 1);
	else if (text)
		snprintf(out, len, "%.*s", (int)strcspn(text, "\n"), text);
	bool ok = text != NULL;

	free(text);
	return ok;
}

bool entry_trace_arm(struct entry_trace *t)
{
	if (access(TRACEFS "/trace_clock", W_OK) != 0 && mount("tracefs", TRACEFS, "tracefs", 0, NULL) < 0 &&
	    errno != EBUSY)
		return false;
	/* the host's own settings, put back afterwards (make bench on a machine that traces) */
	if (!get("trace_clock", t->clock, sizeof(t->clock)) || !get("tracing_on", t->on, sizeof(t->on)))
		return false;
	return put("tracing_on", "0") && put("trace_clock", "mono") && put("trace", "") &&
	       put("events/kvm/kvm_entry/enable", "1") && put("tracing_on", "1");
}

/* The first kvm_entry's time after t0 (now() just before the launch), in ms; -1 when there is
 * none. Stops the event, empties the buffer (the boots between cost nothing) and puts the host's
 * clock and tracing_on back. */
double entry_trace_first_ms(const struct entry_trace *t, double t0)
{
	FILE *f = fopen(TRACEFS "/trace", "re");
	char line[512];
	double first = -1;

	while (f && fgets(line, sizeof(line), f)) {
		/* "  vmm-vcpu-123 [001] d..2.  812.345678: kvm_entry: PC: 0x..." */
		char *k = line[0] == '#' ? NULL : strstr(line, ": kvm_entry:"), *p = k;

		while (p && p > line && (isdigit((unsigned char)p[-1]) || p[-1] == '.'))
			p--;
		if (!p || p == k)
			continue;
		double ts = strtod(p, NULL);

		if (ts >= t0) {
			first = (ts - t0) * 1e3;
			break;
		}
	}
	if (f)
		fclose(f);
	put("events/kvm/kvm_entry/enable", "0");
	put("trace", "");
	put("trace_clock", t->clock);
	put("tracing_on", t->on);
	return first;
}
