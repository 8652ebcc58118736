// SPDX-License-Identifier: MIT
/*
 * Lab: the 16550 console. The guest's 8250 driver probes it as a 16550A, drives tty output with
 * its THRE interrupt and reads typed input; and a verbose boot (every kernel message on the
 * console) costs about what a quiet one does, because console bytes need no exit each.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/utsname.h>

#include "kselftest_harness.h"
#include "tests/lab/labutil.h"

FIXTURE(serial) {
	struct result r;
};
FIXTURE_SETUP(serial) { memset(&self->r, 0, sizeof(self->r)); }
FIXTURE_TEARDOWN(serial) { result_free(&self->r); }

/* What a run's exit summary says: console bytes, MMIO exits of vCPU 0 and of all vCPUs, and KVM's
 * count of vCPU 0's exits (those it handles itself too: a coalesced write is one). */
enum { FIG_INIT, FIG_BYTES, FIG_MMIO0, FIG_MMIO, FIG_KVM0, NR_FIGS };
struct boot_fig {
	double v[NR_FIGS]; /* FIG_INIT: vmm start to the built-in guest's banner (its init), s */
};

static int parse_summary(const struct result *r, struct boot_fig *f)
{
	const char *p = strstr(r->err, "vmm: console: ");
	unsigned long long bytes;
	int rows = 0;

	memset(f, 0, sizeof(*f));
	f->v[FIG_INIT] = r->banner_secs;
	if (!p || sscanf(p, "vmm: console: %llu bytes", &bytes) != 1)
		return -1;
	f->v[FIG_BYTES] = bytes;
	for (p = r->err; (p = strstr(p, "vmm: ")); p++) {
		int id, n;
		unsigned long long mmio, unclaimed, kicks, kvm = 0;

		if ((p != r->err && p[-1] != '\n') ||
		    (n = sscanf(p, "vmm: %d %llu %llu %llu %llu", &id, &mmio, &unclaimed, &kicks, &kvm)) < 4)
			continue;
		if (id == 0) {
			f->v[FIG_MMIO0] = mmio;
			f->v[FIG_KVM0] = n == 5 ? (double)kvm : -1; /* -1: no binary stats */
		}
		f->v[FIG_MMIO] += mmio;
		rows++;
	}
	return rows ? 0 : -1;
}

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return x < y ? -1 : x > y;
}

/* Three pairs: a median that one slow boot cannot move, at 6 boots (5 pairs were 10 boots, 3
 * minutes of the lab's CI time). */
#define ROUNDS 3

/* Min, median and max of one figure over the rounds. */
static void stats(const struct boot_fig *f, int fig, double out[3])
{
	double v[ROUNDS];

	for (int i = 0; i < ROUNDS; i++)
		v[i] = f[i].v[fig];
	qsort(v, ROUNDS, sizeof(v[0]), cmp_double);
	out[0] = v[0];
	out[1] = v[ROUNDS / 2];
	out[2] = v[ROUNDS - 1];
}

/* The built-in guest, quiet and verbose in turn (so load on the lab host hits both alike). */
TEST_F_TIMEOUT(serial, verbose_boot_costs_about_a_quiet_one, 1500)
{
	char *const quiet[] = { VMM, "run", "-c", "2", "-m", "512M", "-p",
				"console=ttyS0 earlycon panic=-1 quiet", NULL };
	char *const verbose[] = { VMM, "run", "-c", "2", "-m", "512M", "-p",
				  "console=ttyS0 earlycon panic=-1", NULL };
	struct boot_fig q[ROUNDS], v[ROUNDS];
	const char *name[2] = { "quiet", "verbose" };

	for (int i = 0; i < ROUNDS; i++) {
		for (int k = 0; k < 2; k++) {
			struct result *r = &self->r;
			struct boot_fig *f = k ? &v[i] : &q[i];

			result_free(r);
			run_vmm(k ? verbose : quiet, 600, r);
			ASSERT_EQ(0, r->status) TH_LOG("%s boot: stderr: %s", name[k], r->err);
			ASSERT_LT(0, r->banner_secs) TH_LOG("%s boot: no banner; stderr: %s", name[k], r->err);
			ASSERT_EQ(0, parse_summary(r, f)) TH_LOG("%s boot: no exit summary: %s", name[k], r->err);
			TH_LOG("%s round %d: init at %.2f s, %.0f console bytes, MMIO exits vCPU 0 %.0f, all %.0f",
			       name[k], i, f->v[FIG_INIT], f->v[FIG_BYTES], f->v[FIG_MMIO0], f->v[FIG_MMIO]);
			if (i == ROUNDS - 1 && k == 1) /* the fast mode's own line, when there is one */
				for (const char *p = r->err; (p = strstr(p, "vmm: uart")); p++)
					printf("# %.*s\n", (int)strcspn(p, "\n"), p);
		}
	}
	double qt[3], vt[3], qe[3], ve[3], qa[3], va[3], qb[3], vb[3], qk[3], vk[3];

	stats(q, FIG_INIT, qt);
	stats(v, FIG_INIT, vt);
	stats(q, FIG_MMIO0, qe);
	stats(v, FIG_MMIO0, ve);
	stats(q, FIG_MMIO, qa);
	stats(v, FIG_MMIO, va);
	stats(q, FIG_BYTES, qb);
	stats(v, FIG_BYTES, vb);
	stats(q, FIG_KVM0, qk);
	stats(v, FIG_KVM0, vk);
	printf("# SERIAL-BOOT quiet:   init %.2f/%.2f/%.2f s (min/median/max), vCPU 0 MMIO exits %.0f (KVM's "
	       "exits %.0f), all vCPUs %.0f, %.0f console bytes\n", qt[0], qt[1], qt[2], qe[1], qk[1], qa[1],
	       qb[1]);
	printf("# SERIAL-BOOT verbose: init %.2f/%.2f/%.2f s (min/median/max), vCPU 0 MMIO exits %.0f (KVM's "
	       "exits %.0f), all vCPUs %.0f, %.0f console bytes\n", vt[0], vt[1], vt[2], ve[1], vk[1], va[1],
	       vb[1]);
	/* each verbose boot against the quiet one just before it: the lab host's load hits both alike */
	struct boot_fig ratio[ROUNDS];
	double rt[3];

	for (int i = 0; i < ROUNDS; i++)
		ratio[i].v[FIG_INIT] = v[i].v[FIG_INIT] / q[i].v[FIG_INIT];
	stats(ratio, FIG_INIT, rt);
	printf("# SERIAL-BOOT-RATIO verbose/quiet: init time %.2f (median of %d pairs, %.2f..%.2f), vCPU 0 "
	       "MMIO exits %.2f\n", rt[1], ROUNDS, rt[0], rt[2], ve[1] / (qe[1] ? qe[1] : 1));
	/* the verbose boot really is verbose */
	ASSERT_GT(vb[1], qb[1] + 10000);
	/* Its extra console bytes cost next to no exits (trapped, each costs two: LSR, then THR).
	 * Counts, not times: the lab's timing belongs to benchmarks. */
	EXPECT_LT(va[1] - qa[1], (vb[1] - qb[1]) / 32)
	TH_LOG("%.0f more MMIO exits for %.0f more console bytes", va[1] - qa[1], vb[1] - qb[1]);
}

/* Lab's test guest on ttyS0: the driver's probe, THRE-interrupt tty output, input echoed. */
TEST_F_TIMEOUT(serial, driver_probes_echoes_and_interrupts, 600)
{
	static char kernel[300];
	struct utsname u;
	struct result *r = &self->r;
	const struct run_opts o = { .timeout = 500, .input_on = "GUEST-READY", .input = "hello-16550\n" };
	char buf[256];

	uname(&u);
	snprintf(kernel, sizeof(kernel), "/boot/vmlinuz-%s", u.release);
	char *const argv[] = { VMM, "run", "-k", kernel, "-i", "/lab/guest.cpio.gz", "-m", "512M", "-c", "2",
			       "-p", "console=ttyS0 panic=-1 quiet vmmtest=serial", NULL };

	run_vmm_opts(argv, &o, r);
	TH_LOG("exit %d after %.1f s", r->status, r->secs);
	ASSERT_NE(NULL, strstr(r->out, "GUEST-END serial")) TH_LOG("out: %s\nerr: %s", r->out, r->err);
	EXPECT_EQ(0, r->status) TH_LOG("stderr: %s", r->err);

	/* autoconfig's scratch, loopback and FIFO probes all passed */
	ASSERT_NE(NULL, marker(r->out, "GUEST-8250", buf, sizeof(buf))) TH_LOG("out: %s", r->out);
	printf("# %s\n", buf);
	EXPECT_NE(NULL, strstr(buf, "is a 16550A"));

	/* the 50 lines went out through the tty, driven by the THRE interrupt */
	int lines = 0;

	for (const char *p = r->out; (p = strstr(p, "GUEST-TTY line ")); p++)
		lines++;
	EXPECT_EQ(50, lines);
	unsigned long long a = 0, b = 0;

	ASSERT_NE(NULL, marker(r->out, "GUEST-TTY-IRQS", buf, sizeof(buf))) TH_LOG("out: %s", r->out);
	ASSERT_EQ(2, sscanf(buf, "%llu %llu", &a, &b)) TH_LOG("GUEST-TTY-IRQS %s", buf);
	printf("# ttyS0 interrupts: %llu before the 50 lines (10 bursts), %llu after\n", a, b);
	EXPECT_GE(b, a + 5);

	/* typed input: echoed by the tty as it arrives, then read whole by the shell */
	const char *ready = strstr(r->out, "GUEST-READY");
	const char *echo = strstr(r->out, "GUEST-ECHO hello-16550");

	ASSERT_NE(NULL, echo) TH_LOG("out: %s", r->out);
	const char *typed = strstr(ready, "hello-16550");

	EXPECT_TRUE(typed && typed < echo) TH_LOG("the tty did not echo the input: %s", ready);
	for (const char *p = r->err; (p = strstr(p, "vmm: uart")); p++)
		printf("# %.*s\n", (int)strcspn(p, "\n"), p);
}

TEST_HARNESS_MAIN
