// SPDX-License-Identifier: MIT
/* make bench's second peer in the arm64 lab: kvmtool (lkvm), beside vmm in the start-up and memory
 * sections (figures kvmtool.NAME and the pair ratios *_over_kvmtool). */
#include <signal.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "tests/lab/bench_lab.h"
#include "tests/lab/labutil.h"

/*
 * kvmtool is the one distributions ship (0.20170904, built by scripts/fetch.sh lab-kvmtool-arm64),
 * run as its users run it: `lkvm run` with the same kernel, RAM, vCPUs, kernel command line and
 * initrd as vmm's run beside it, GICv3 with an ITS as vmm's board has, the 8250 serial console
 * (its default). It loads a raw Image only: Debian's arm64 vmlinuz is one (KVMTOOL_IMAGE links to
 * it); an Image.gz is decompressed for it once, beforehand.
 */

/* argv for lkvm booting kernel with initrd and append, RAM_MIB and 2 vCPUs. */
static void kvmtool_argv(char **argv, size_t n, const char *kernel, const char *initrd, const char *append)
{
	static char mem[16];
	char *const base[] = { KVMTOOL_BIN, "run", "-k", (char *)kernel, "-i", (char *)initrd,
			       "-m", mem, "-c", "2", "--irqchip", "gicv3-its", "--console", "serial", "-p",
			       (char *)(append ? append : "") };
	size_t i = 0;

	snprintf(mem, sizeof(mem), "%d", RAM_MIB);
	for (size_t k = 0; k < sizeof(base) / sizeof(base[0]) && i + 1 < n; k++)
		argv[i++] = base[k];
	argv[i] = NULL;
}

/* Whether lkvm ended as after a guest's power-off: 0.20170904 exits by SIGSEGV in its teardown
 * after a guest's power-off in the lab (1 or 2 vCPUs, with or without the ITS; now and then it
 * hangs there instead), so that counts as its normal end; anything else (a timeout's SIGKILL, an
 * error exit) does not. */
static bool kvmtool_ended(const struct result *r)
{
	return r->status == 0 || r->status == 128 + SIGSEGV;
}

/* Runs lkvm with a stdin nobody types into (a pipe held open): on /dev/null its console thread
 * sees EOF as input forever, spins on a core and feeds the guest's UART a byte each time. */
static void kvmtool_run(char *const argv[], struct run_opts *o, struct result *r)
{
	o->input = "";
	o->input_on = NULL;
	run_vmm_opts(argv, o, r);
}

static bool kvmtool_failed(const char *what, const struct result *r)
{
	const char *e = r->err ? r->err : "", *o = r->out ? r->out : "";
	size_t n = strlen(e), m = strlen(o);

	printf("bench: kvmtool peer: %s: lkvm exited %d%s (a second failure ends the section's kvmtool runs); "
	       "its stderr ends:\n%s\nbench: kvmtool peer: the guest's console ends:\n%s\n", what, r->status,
	       r->banner_secs < 0 ? " with no guest banner" : "", e + (n > 1000 ? n - 1000 : 0),
	       o + (m > 1000 ? m - 1000 : 0));
	return false;
}

/* Whether kvmtool is there and the kernel could be made a raw Image for it; says why not. */
bool kvmtool_probe(struct bench *b)
{
	char cmd[512];
	char *const argv[] = { KVMTOOL_BIN, "version", NULL };
	struct result r;
	bool ok;

	if (access(KVMTOOL_BIN, X_OK) || access(BUILTIN_GUEST, R_OK)) {
		printf("bench: kvmtool peer skipped: no %s or %s (make bench builds it: scripts/fetch.sh "
		       "lab-kvmtool-arm64; tests/lab/run.sh --bench packs it)\n", KVMTOOL_BIN, BUILTIN_GUEST);
		return false;
	}
	/* Debian's arm64 vmlinuz is a raw Image (with the EFI stub's header), used as is; an Image.gz
	 * is decompressed */
	snprintf(cmd, sizeof(cmd), "if gzip -t '%s' 2>/dev/null; then gzip -dc '%s' >" KVMTOOL_IMAGE
		 "; else ln -sf '%s' " KVMTOOL_IMAGE "; fi", b->kernel, b->kernel, b->kernel);
	if (lab_sh(cmd)) {
		printf("bench: kvmtool peer skipped: cannot make %s from %s\n", KVMTOOL_IMAGE, b->kernel);
		return false;
	}
	/* kvmtool keeps its control sockets under $HOME/.lkvm */
	setenv("HOME", "/tmp", 0);
	run_vmm(argv, 60, &r);
	ok = r.status == 0 && strstr(r.out, "kvm tool");
	if (ok)
		printf("bench: kvmtool peer: %.*s\n", (int)strcspn(r.out, "\n"), r.out);
	else
		printf("bench: kvmtool peer skipped: lkvm version exited %d: %s\n", r.status, r.err);
	result_free(&r);
	return ok;
}

/* The built-in guest's boot to its banner (ms, -1: failed), as vmm's startup boot. */
double kvmtool_startup_one(struct bench *b)
{
	char *argv[32];
	struct result r;
	double ms = -1;
	struct run_opts o = { .timeout = 600 };

	kvmtool_argv(argv, 32, KVMTOOL_IMAGE, BUILTIN_GUEST, "console=ttyS0 earlycon panic=-1 quiet");
	kvmtool_run(argv, &o, &r);
	if (kvmtool_ended(&r) && r.banner_secs >= 0) {
		ms = r.banner_secs * 1e3;
		add(b, "kvmtool.startup.guest_init", "ms", false, ms);
		guest_clock_split(b, "kvmtool.", r.out, ms, 0);
		add(b, "kvmtool.startup.process_exit", "ms", false, r.secs * 1e3);
	} else {
		kvmtool_failed("start-up", &r);
	}
	result_free(&r);
	return ms;
}

/* The poweroff payload: launch to exit (ms, -1: failed), as vmm's is timed. */
double kvmtool_first_instruction_one(struct bench *b)
{
	char *argv[32];
	struct result r;
	double ms = -1;
	struct run_opts o = { .timeout = 60 }; /* it ends in 0.1-0.4 s, or hangs */

	/* with neither a disk nor an initrd kvmtool builds a 9p root in $HOME first, and it takes no
	 * empty initrd ("is not an initrd"): the built-in guest's 330 KiB cpio, never unpacked */
	kvmtool_argv(argv, 32, POWEROFF_IMAGE, BUILTIN_GUEST, NULL);
	kvmtool_run(argv, &o, &r);
	if (kvmtool_ended(&r)) {
		ms = r.secs * 1e3;
		add(b, "kvmtool.startup.first_instruction_exit", "ms", false, ms);
	} else {
		kvmtool_failed("poweroff payload", &r);
	}
	result_free(&r);
	return ms;
}

/* The test guest idle on the serial console, printing none of vmm's markers: kvmtool's RSS beyond
 * guest RAM and its wake-ups. Its RAM mapping is
 * RAM_MIB + 2 MiB (it aligns guest RAM to 2 MiB inside it), left out whole. */
bool kvmtool_memory_one(struct bench *b)
{
	char *argv[32];
	struct rss_probe p = { b, "kvmtool.memory.rss_beyond_guest_ram", false, 0, (RAM_MIB + 2ULL) << 20,
				"kvmtool.idle.wakeups_per_s" };
	struct run_opts o = { .timeout = 300, .term_on = "GUEST-HOLD", .on_match = read_rss, .match_arg = &p };
	struct result r;
	bool ok;

	kvmtool_argv(argv, 32, KVMTOOL_IMAGE, "/lab/guest.cpio.gz", "console=ttyS0 panic=-1 quiet vmmtest=hold vmmplain=1");
	kvmtool_run(argv, &o, &r);
	ok = strstr(r.out, "GUEST-HOLD") != NULL;
	if (!ok)
		kvmtool_failed("memory (test guest, idle)", &r);
	result_free(&r);
	return ok;
}
