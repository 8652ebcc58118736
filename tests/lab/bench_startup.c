// SPDX-License-Identifier: MIT
/* make bench's start-up and boot-exit sections (startup, verbose, mmio) and --only trace: vmm's
 * boots of the built-in guest and the poweroff payload, each beside QEMU's where the peer runs. */
#include <math.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#if defined(__aarch64__)
#include "arm64/arm64.h"
#endif
#include "tests/lab/bench_lab.h"
#include "tests/lab/labutil.h"

/* One built-in guest boot's figures; 0 when the boot failed. */
struct boot {
	double init_ms, poweroff_ms, console_bytes;
};

/* All THR bytes the 16550 saw: through the coalesced ring, by exit in the exact mode, outside it. */
static double console_bytes(const char *err)
{
	unsigned long long a, c, d;
	const char *u = strstr(err, "THR bytes: ");

	if (!u || sscanf(u, "THR bytes: %llu through the coalesced ring, %llu by exit in the mode (ring full), "
			    "%llu by exit outside it", &a, &c, &d) != 3)
		return -1;
	return (double)(a + c + d);
}

/* The host's counter less CLOCK_MONOTONIC, in seconds, read back to back (arm64; NAN elsewhere):
 * what turns a counter value into the timings' clock. */
static double counter_minus_monotonic(void)
{
#if defined(__aarch64__)
	uint64_t v = arm64_counter_read(), hz = arm64_counter_hz();
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return hz ? (double)v / (double)hz - ((double)t.tv_sec + t.tv_nsec / 1e9) : NAN;
#else
	return NAN;
#endif
}

/* The built-in guest's banner gives its CLOCK_BOOTTIME at /init ("up S s"): launch to init splits
 * into before the guest's clock starts (the VMM, then the kernel's early boot to its timekeeping)
 * and the guest's own time from there; prefix "" for vmm, "qemu." for the peer. vcpus_at: vmm's
 * `vcpus` timing mark (CLOCK_MONOTONIC s), 0 for a peer. */
void guest_clock_split(struct bench *b, const char *prefix, const char *out, double init_ms, double vcpus_at)
{
	const char *p = strstr(out, "vmm-guest: hello from ");
	const char *u = p ? strstr(p, ", up ") : NULL;
	char name[80];
	double up;

	if (!u || sscanf(u, ", up %lf s", &up) != 1 || up * 1e3 > init_ms)
		return;
	snprintf(name, sizeof(name), "%sstartup.split.guest_clock_to_init", prefix);
	add(b, name, "ms", false, up * 1e3);
	snprintf(name, sizeof(name), "%sstartup.split.launch_to_guest_clock", prefix);
	add(b, name, "ms", false, init_ms - up * 1e3);
	/* arm64: the virtual counter at /init. KVM sets it to about 0 as each vCPU is created, and it
	 * runs at the host's pace before and after the guest's clocksource switch, so this split does
	 * not lean late as the uptime's can: the VMM's start to its vCPUs, then all of the guest's
	 * boot (for vmm also its load after the vCPUs). */
	const char *c = strstr(out, "vmm-guest: virtual counter at /init ");
	double cnt;

	if (!c || sscanf(c, "vmm-guest: virtual counter at /init %lf s", &cnt) != 1 || cnt < 0)
		return;
	/* vmm sets the VM's counter offset to 0 (issue 37's one clock: arm64/clock.c), so its guest
	 * reads the host's counter, not one KVM started near 0 at the first vCPU: from the host's
	 * counter to CLOCK_MONOTONIC, then from vmm's vCPUs on, which is what the peers' counters
	 * count */
	if (cnt * 1e3 > init_ms && vcpus_at > 0)
		cnt = cnt - counter_minus_monotonic() - vcpus_at;
	if (!(cnt >= 0) || cnt * 1e3 > init_ms)
		return;
	snprintf(name, sizeof(name), "%sstartup.split.guest_counter_to_init", prefix);
	add(b, name, "ms", false, cnt * 1e3);
	snprintf(name, sizeof(name), "%sstartup.split.launch_to_guest_counter", prefix);
	add(b, name, "ms", false, init_ms - cnt * 1e3);
}

/* A built-in guest boot with its start-up phases and exits. */
static struct boot startup_one(struct bench *b, bool verbose)
{
	const char *params = verbose ? "console=ttyS0 earlycon panic=-1" : "console=ttyS0 earlycon panic=-1 quiet";
	char *const argv[] = { VMM, "run", "-c", "2", "-m", "512M", "-p", (char *)params, NULL };
	struct boot out = { 0, 0, 0 };
	struct result r;
	unsigned long long mmio, kvm;

	run_vmm(argv, 600, &r);
	double t[] = { timing(r.err, "start"),	       timing(r.err, "vm_ram"),
		       timing(r.err, "vcpus"),	       timing(r.err, "devices"),
		       timing(r.err, "kernel_read"),   timing(r.err, "kernel_decode"),
		       timing(r.err, "fdt"),	       timing(r.err, "run"),
		       timing(r.err, "exit") };
	bool all = true, decode_fdt = t[5] > 0 && t[6] > 0; /* arm64's marks; x86 loads in one step */

	for (size_t k = 0; k < sizeof(t) / sizeof(t[0]); k++)
		all &= t[k] > 0 || k == 5 || k == 6;
	if (r.status != 0 || !all || r.banner_secs < 0 || exit_table(r.err, &mmio, &kvm) < 0) {
		fail_note(verbose ? "verbose boot" : "quiet boot", &r);
		result_free(&r);
		return out;
	}
	out.init_ms = r.banner_secs * 1e3;
	out.poweroff_ms = (t[8] - r.t0) * 1e3;
	out.console_bytes = console_bytes(r.err);
	if (verbose) {
		add(b, "startup.verbose.guest_init", "ms", false, out.init_ms);
		add(b, "startup.verbose.poweroff", "ms", false, out.poweroff_ms);
		add(b, "exits.verbose_boot.userspace", "exits", false, mmio);
		add(b, "exits.verbose_boot.kvm", "exits", false, kvm);
		if (out.console_bytes >= 0)
			add(b, "startup.verbose.console_bytes", "bytes", false, out.console_bytes);
	} else {
		add(b, "startup.first_instruction", "ms", false, (t[7] - r.t0) * 1e3);
		add(b, "startup.guest_init", "ms", false, out.init_ms);
		guest_clock_split(b, "", r.out, out.init_ms, t[2]);
		add(b, "startup.poweroff", "ms", false, out.poweroff_ms);
		add(b, "startup.process_exit", "ms", false, r.secs * 1e3);
		add(b, "startup.split.exec_to_main", "ms", false, (t[0] - r.t0) * 1e3);
		add(b, "startup.split.vm_and_ram", "ms", false, (t[1] - t[0]) * 1e3);
		add(b, "startup.split.vcpus", "ms", false, (t[2] - t[1]) * 1e3);
		add(b, "startup.split.irqchip_and_devices", "ms", false, (t[3] - t[2]) * 1e3);
		add(b, "startup.split.kernel_read", "ms", false, (t[4] - t[3]) * 1e3);
		if (decode_fdt) {
			add(b, "startup.split.kernel_decode", "ms", false, (t[5] - t[4]) * 1e3);
			add(b, "startup.split.memory_and_fdt", "ms", false, (t[6] - t[5]) * 1e3);
		} else { /* x86: the bzImage, the zero page, ACPI and the MP table */
			add(b, "startup.split.load_to_run", "ms", false, (t[7] - t[4]) * 1e3);
		}
		double kr = timing(r.err, "kvm_run"); /* vCPU 0's first KVM_RUN, after its sandbox */

		if (kr > 0) {
			add(b, "startup.first_kvm_run", "ms", false, (kr - r.t0) * 1e3);
			add(b, "startup.split.run_to_kvm_run", "ms", false, (kr - t[7]) * 1e3);
		}
		add(b, "exits.quiet_boot.userspace", "exits", false, mmio);
		add(b, "exits.quiet_boot.kvm", "exits", false, kvm);
	}
	result_free(&r);
	return out;
}

/* The built-in guest's quiet boot with the vCPU features this kvmtool build gives (no PMU, SVE or
 * pointer authentication: it predates them): the guest's own counter at /init, the figure to set
 * beside kvmtool's. Under the lab's emulated CPU pointer authentication costs the guest's every
 * function call. */
static void startup_kvmtool_features(struct bench *b)
{
	char *const argv[] = { VMM, "run", "-c", "2", "-m", "512M", "--cpu", "pmu=off,sve=off,pauth=off", "-p",
			       "console=ttyS0 earlycon panic=-1 quiet", NULL };
	struct result r;

	run_vmm(argv, 600, &r);
	if (r.status != 0 || r.banner_secs < 0)
		fail_note("quiet boot, --cpu pmu=off,sve=off,pauth=off", &r);
	else
		guest_clock_split(b, "kvmtool_features.", r.out, r.banner_secs * 1e3, timing(r.err, "vcpus"));
	result_free(&r);
}

/* The bare-metal payload's pvpanic reads: one userspace MMIO exit each. */
void mmio_round_trip(struct bench *b)
{
	char *const argv[] = { VMM, "run", "-k", "/lab/baremetal.bin", "--kernel-format", "flat", "-p",
			       "mmiobench", NULL };

	for (int i = 0; i < b->reps; i++) {
		struct result r;
		unsigned long long reads, ticks, freq;
		const char *p;

		run_vmm(argv, 120, &r);
		p = strstr(r.out, "baremetal: mmiobench ");
		if (r.status || !p || sscanf(p, "baremetal: mmiobench reads=%llx ticks=%llx freq=%llx", &reads,
					     &ticks, &freq) != 3 || !reads || !freq) {
			fail_note("mmio round trip", &r);
			result_free(&r);
			continue;
		}
		add(b, "exits.mmio_round_trip", "us", false, ticks * 1e6 / freq / reads);
		/* the console bytes: only a figure when they really went through the coalesced ring */
		unsigned long long bytes, ring = 0;
		const char *q = strstr(r.out, "baremetal: thrbench ");
		const char *u = strstr(r.err, "THR bytes: ");

		if (u)
			sscanf(u, "THR bytes: %llu through the coalesced ring", &ring);
		if (q && sscanf(q, "baremetal: thrbench bytes=%llx ticks=%llx", &bytes, &ticks) == 2 && bytes &&
		    ring >= bytes)
			add(b, "exits.console_byte", "us", false, ticks * 1e6 / freq / bytes);
		else
			printf("bench: console byte figure skipped: %llu bytes went through the coalesced ring%s\n",
			       ring, q ? "" : ", no thrbench line");
		result_free(&r);
	}
}

/* Launch to exit of the Image whose first instructions power off (baremetal/poweroff.S), booted
 * as a kernel with no initrd, 512M and 2 vCPUs: launch to the guest's first instruction plus the
 * teardown, measured the same way for vmm and QEMU (QEMU has no mark of its own). */
static double first_instruction_one(struct bench *b)
{
	char *const argv[] = { VMM, "run", "-c", "2", "-m", "512M", "-k", POWEROFF_IMAGE, NULL };
	struct result r;
	double ms = -1;

	run_vmm(argv, 120, &r);
	double run = timing(r.err, "run"), exit = timing(r.err, "exit");

	if (r.status != 0 || run <= 0 || exit <= 0) {
		fail_note("poweroff payload", &r);
	} else {
		ms = r.secs * 1e3;
		add(b, "startup.first_instruction_exit", "ms", false, ms);
		add(b, "startup.first_instruction_exit.split.launch_to_run", "ms", false, (run - r.t0) * 1e3);
		add(b, "startup.first_instruction_exit.split.run_to_exit", "ms", false, (exit - run) * 1e3);
	}
	result_free(&r);
	return ms;
}

/* Runs one poweroff payload launch (run: vmm's or a peer's, its ms launch to exit or -1) with the
 * lab host's kvm_entry event on: launch to the VMM's first guest entry goes to figure and *entry.
 * *trace goes false, with the reason printed once, where the host cannot trace. */
static double entry_timed(struct bench *b, const char *figure, double (*run)(struct bench *), double *entry,
			  bool *trace)
{
	struct entry_trace et;

	if (*trace && !(*trace = entry_trace_arm(&et)))
		printf("bench: startup.first_entry skipped: the host's tracefs (/sys/kernel/tracing) with KVM's "
		       "kvm_entry event cannot be set up (not root, or no tracing in its kernel)\n");
	double t0 = now(), ms = run(b);

	if (*trace) {
		*entry = entry_trace_first_ms(&et, t0);
		if (ms > 0 && *entry > 0 && *entry < ms)
			add(b, figure, "ms", false, *entry);
		else
			*entry = -1;
	}
	return ms;
}

/* Quiet boots of the built-in guest, each vmm boot followed by QEMU's and kvmtool's (their order
 * swapped every other round), then the poweroff payload under each (vmm first in even rounds, last
 * in odd ones): the lab's load drifts by 2-4x over minutes, so each pair's ratio is steadier than
 * the ratio of the medians. vmm and kvmtool boot the same kernel file (Debian's arm64 vmlinuz is
 * a raw Image) and the same cpio. */
void startup_quiet(struct bench *b)
{
	bool peer = b->qemu, payload = access(POWEROFF_IMAGE, R_OK) == 0, trace = payload;
	/* kvmtool's runs a second failure stops: 0.20170904 now and then hangs in its teardown
	 * instead of crashing there (bench_kvmtool.c), one lost sample, not the section's figures */
	int kt_fails = b->kvmtool ? 0 : 2;

	if (!payload)
		printf("bench: startup.first_instruction_exit skipped: no %s\n", POWEROFF_IMAGE);
	for (int i = 0; i < b->reps; i++) {
		double v = startup_one(b, false).init_ms, q = -1, k = -1;

		for (int j = 0; j < 2; j++) {
			if (j == i % 2 && peer)
				peer = (q = qemu_startup_one(b)) > 0;
			else if (j != i % 2 && kt_fails < 2)
				kt_fails += (k = kvmtool_startup_one(b)) <= 0;
		}
		if (v > 0 && q > 0)
			add(b, "startup.pair.guest_init_over_qemu", "x", false, v / q);
		if (v > 0 && k > 0)
			add(b, "startup.pair.guest_init_over_kvmtool", "x", false, v / k);
		if (kt_fails < 2) /* the same vCPU features as kvmtool's, right after its boot */
			startup_kvmtool_features(b);
		if (!payload)
			continue;
		double ve = -1, qe = -1, ke = -1;

		/* vmm, QEMU, kvmtool in even rounds and the reverse in odd ones: in a fixed order vmm's
		 * payload always ran first after the boots above, the peers' after a payload */
		v = q = k = -1;
		for (int j = 0; j < 3; j++) {
			int who = i % 2 ? 2 - j : j;

			if (who == 0)
				v = entry_timed(b, "startup.first_entry", first_instruction_one, &ve, &trace);
			else if (who == 1 && peer)
				peer = (q = entry_timed(b, "qemu.startup.first_entry", qemu_first_instruction_one, &qe,
							&trace)) > 0;
			else if (who == 2 && kt_fails < 2)
				kt_fails += (k = entry_timed(b, "kvmtool.startup.first_entry",
							     kvmtool_first_instruction_one, &ke, &trace)) <= 0;
		}
		if (v > 0 && q > 0)
			add(b, "startup.pair.first_instruction_exit_over_qemu", "x", false, v / q);
		if (v > 0 && k > 0)
			add(b, "startup.pair.first_instruction_exit_over_kvmtool", "x", false, v / k);
		if (ve > 0 && qe > 0)
			add(b, "startup.pair.first_entry_over_qemu", "x", false, ve / qe);
		if (ve > 0 && ke > 0)
			add(b, "startup.pair.first_entry_over_kvmtool", "x", false, ve / ke);
	}
}

/* Verbose boots, each paired with a quiet one just before it: load on the lab host drifts over
 * minutes, so the ratio of a pair is steadier than the ratio of two sections' medians. The extra
 * time per console byte of a pair is what a verbose boot costs per byte, to set beside
 * exits.console_byte (the same bytes timed in a bare-metal loop). */
void startup_verbose(struct bench *b)
{
	for (int i = 0; i < b->slow_reps; i++) {
		struct boot q = startup_one(b, false), v = startup_one(b, true);

		if (q.init_ms <= 0 || v.init_ms <= 0)
			continue;
		add(b, "boot.pair.verbose_over_quiet.init", "x", false, v.init_ms / q.init_ms);
		add(b, "boot.pair.verbose_over_quiet.poweroff", "x", false, v.poweroff_ms / q.poweroff_ms);
		if (v.console_bytes > q.console_bytes)
			add(b, "boot.pair.verbose_extra_per_console_byte", "us", false,
			    (v.poweroff_ms - q.poweroff_ms) * 1e3 / (v.console_bytes - q.console_bytes));
	}
}

/* Splits a boot's stdout into lines as they arrive and prints each with the host's seconds since
 * the launch: the guest's own printk time is 0 until its timer starts, which is after much of the
 * launch-to-init. */
struct stamper {
	const char *who;
	char line[512];
	size_t len;
	double start; /* secs of the line's first byte */
};

static void stamp_out(const char *buf, size_t len, double secs, void *arg)
{
	struct stamper *s = arg;

	for (size_t i = 0; i < len; i++) {
		if (!s->len)
			s->start = secs;
		if (buf[i] == '\r')
			continue;
		if (buf[i] != '\n' && s->len + 1 < sizeof(s->line)) {
			s->line[s->len++] = buf[i];
			continue;
		}
		if (buf[i] == '\n') {
			printf("trace %s %9.3f %.*s\n", s->who, s->start, (int)s->len, s->line);
			s->len = 0;
		}
	}
}

/* --only trace (never by default): a verbose (earlycon) boot of the built-in guest under vmm, then
 * under QEMU, each console line stamped with the host's time since the launch, and vmm's
 * VMM_TIMINGS marks; the phases that differ are where vmm's launch-to-init goes. */
void trace(struct bench *b)
{
	char *const vargv[] = { VMM, "run", "-c", "2", "-m", "512M", "-p", "console=ttyS0 earlycon panic=-1", NULL };
	char *qargv[48];

	for (int i = 0; i < (b->qemu ? 2 : 1); i++) {
		struct stamper st = { .who = i ? "qemu" : "vmm " };
		struct run_opts o = { .timeout = 600, .on_out = stamp_out, .out_arg = &st };
		struct result r;

		if (i)
			qemu_argv(b, qargv, 48, BUILTIN_GUEST, QEMU_CONSOLE " earlycon panic=-1", NULL);
		/* whether guest RAM got huge pages: each 4 KiB one is a stage-2 fault of its own */
		lab_sh("echo \"trace thp: $(cat /sys/kernel/mm/transparent_hugepage/enabled) defrag "
		       "$(cat /sys/kernel/mm/transparent_hugepage/defrag) $(grep -E '^thp_fault' /proc/vmstat | "
		       "tr '\\n' ' ')\"");
		run_vmm_opts(i ? qargv : vargv, &o, &r);
		lab_sh("echo \"trace thp after: $(grep -E '^thp_fault' /proc/vmstat | tr '\\n' ' ')\"");
		printf("trace %s %9.3f exit %d\n", st.who, r.secs, r.status);
		if (!i) {
			const char *t = strstr(r.err, "vmm: timings:");

			if (t)
				printf("trace vmm  launch t0=%.9f %.*s\n", r.t0, (int)strcspn(t, "\n"), t);
		}
		result_free(&r);
	}
}
