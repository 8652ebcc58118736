// SPDX-License-Identifier: MIT
/*
 * make bench: what people pick a VMM for, measured with vmm as a user runs it (inside the lab, or
 * directly on a KVM host through VMM_LAB_DIR). Each figure is repeated; the table gives min /
 * median / max and the JSON (bench/bench.h) keeps every repetition for `vmm bench compare`.
 *   start-up   launch -> first instruction / guest init / poweroff, split by phase (VMM_TIMINGS)
 *   exits      userspace MMIO exits per quiet and verbose boot (vmm's counters, KVM's exits stat),
 *              an MMIO exit round trip (bare-metal payload), per virtio notify and interrupt
 *   virtio-blk 4 KiB random read/write IOPS at QD 1/8/32, 1 MiB sequential, O_DIRECT, on a block
 *              device of the host (/dev/vdb in the arm64 lab, /dev/vda in the x86 lab)
 *   virtio-net UDP request/response and TCP bulk over tap, in a network namespace of its own: the
 *              default (vhost-net where it opens), then vhost=off (*.vhost_off: vmm's worker)
 *   cpu.*      host CPU per block request and per packet, all threads, and the VMM's own threads
 *              (*.own_threads: all but the vCPUs, comm_is_vcpu)
 *   memory     vmm's RSS beyond guest RAM once a guest that prints no vmm marker is up, and its
 *              wake-ups per second while that guest idles (goal: under 3 MiB; 1 MiB with a
 *              console, a disk and a NIC), and which mappings hold it
 *   vfio       userspace exits per passed-through MSI (an igb VF; goal: 0), and vmm's RSS beyond guest
 *              RAM with the VF and a guest that prints no vmm marker (goal: 1.5 MiB; --vf-marker: the
 *              marker guest's instead)
 *   trace      (only when named) verbose boots under vmm and QEMU, console lines stamped with host time
 *   exits      (only when named) a quiet boot's MMIO accesses by guest physical region, in the kernel
 *              and to userspace, under vmm and kvmtool (the host's kvm_mmio events; bench_exits.c)
 * QEMU/KVM is the peer (/lab/qemu: scripts/fetch.sh lab-qemu-arm64, or in the x86 lab this machine's
 * own qemu-system-x86_64, run-x86.sh --bench): start-up, virtio-blk,
 * virtio-net (userspace and vhost-net) and memory also boot the same kernel and guest in QEMU, one
 * QEMU run after each vmm run so that drift hits both; its figures are qemu.NAME (qemu_vhost.NAME)
 * beside vmm's NAME, and the table gives vmm / QEMU for each pair. Without QEMU (not fetched, or it
 * does not start) the peer figures are skipped with the reason. In the arm64 lab kvmtool is the
 * second peer (/lab/kvmtool: scripts/fetch.sh lab-kvmtool-arm64) in start-up and memory: figures
 * kvmtool.NAME and the pairs *_over_kvmtool (bench_kvmtool.c).
 * Usage: bench [--quick] [--json FILE] [--disk BLOCKDEV] [--only SECTION,...] [--no-qemu] [--no-kvmtool]
 *              [--text-pages] [--vf-marker]
 * --text-pages is for analysis, not a figure: the kernel's fault-around set to one page for the
 * run (its memory figures are named *.fault_around_4k), and each first smaps read prints which
 * pages of vmm's text are resident ("bench: text-resident LO-HI"), what scripts/hot-text.sh maps
 * to vmm's functions and libc's members.
 * The table ends with each ratio judged from its repetitions (bench_judge: interval, p, the goal met,
 * NOT met or undecided).
 * Without --json the JSON goes to stdout between BENCH-JSON-BEGIN and BENCH-JSON-END lines, after
 * each section and at the end with the ratios: the last block is the report.
 */
/* This file: the options, the section table, the ratios and what every section uses; the sections
 * are in bench_startup.c, bench_memory.c, bench_io.c, bench_vfio.c and bench_qemu.c (bench_lab.h). */
#include <errno.h>
#include <getopt.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/utsname.h>

#include "bench/bench.h"
#include "tests/lab/bench_lab.h"
#include "tests/lab/labutil.h"

static bool want(const struct bench *b, const char *section)
{
	char list[256], *save, *t;

	if (!b->only)
		return true;
	snprintf(list, sizeof(list), "%s", b->only);
	/* '+' too: the lab's kernel command line carries the runner's arguments split at commas */
	for (t = strtok_r(list, ",+", &save); t; t = strtok_r(NULL, ",+", &save))
		if (!strcmp(t, section))
			return true;
	return false;
}

void add(struct bench *b, const char *name, const char *unit, bool higher, double v)
{
	bench_add(b->rep, name, unit, higher, v);
}

double median_of(const struct bench *b, const char *name)
{
	const struct bench_figure *f = bench_find(b->rep, name);
	double lo, med, hi;

	if (!f || !f->n)
		return -1;
	bench_summary(f, &lo, &med, &hi);
	return med;
}

/* vmm's "vmm: timings:" line: phase -> absolute CLOCK_MONOTONIC seconds (0: absent). */
double timing(const char *err, const char *phase)
{
	const char *line = strstr(err, "vmm: timings:");
	char key[32];

	if (!line)
		return 0;
	snprintf(key, sizeof(key), " %s=", phase);
	const char *p = strstr(line, key);
	const char *eol = strchr(line, '\n');

	if (!p || (eol && p > eol))
		return 0;
	return strtoull(p + strlen(key), NULL, 10) / 1e9;
}

bool comm_is_vcpu(const char *comm)
{
	return strstr(comm, "vcpu") || strstr(comm, "VCPU") || (!strncmp(comm, "CPU ", 4) && strstr(comm, "/KVM"));
}

/* Sums of vmm's per-vCPU exit table: userspace MMIO exits and KVM's "exits" stat. */
int exit_table(const char *err, unsigned long long *mmio, unsigned long long *kvm)
{
	const char *p = strstr(err, "vmm: vcpu ");
	int rows = 0;

	*mmio = *kvm = 0;
	while (p && (p = strchr(p, '\n'))) {
		unsigned long long m, u, k, e;
		int id;

		p++;
		if (sscanf(p, "vmm: %d %llu %llu %llu %llu", &id, &m, &u, &k, &e) != 5)
			break;
		*mmio += m;
		*kvm += e;
		rows++;
	}
	return rows ? 0 : -1;
}

void fail_note(const char *what, const struct result *r)
{
	const char *e = r->err ? r->err : "";
	size_t n = strlen(e);

	fprintf(stderr, "bench: %s: vmm exited %d; its stderr ends:\n%s\n", what, r->status,
		e + (n > 1500 ? n - 1500 : 0));
	/* the guest's own last lines say where a hung or reset guest stopped */
	e = r->out ? r->out : "";
	n = strlen(e);
	fprintf(stderr, "bench: %s: the guest's console ends:\n%s\n", what, e + (n > 1000 ? n - 1000 : 0));
}

/* num's median over den's as a ratio, when both were measured (den non-zero): judged later from
 * the repetitions (bench_judge) */
static void median_ratio(struct bench *b, const char *num, const char *den, const char *name, double goal,
			 const char *what)
{
	bench_ratio_of(b->rep, name, num, den, 0, goal, true, what);
}

/* A figure's median against a fixed amount (by), or by 1 a figure that is itself a ratio per pair */
static void figure_ratio(struct bench *b, const char *fig, double by, const char *name, double goal, const char *what)
{
	bench_ratio_of(b->rep, name, fig, NULL, by, goal, true, what);
}

static void ratios(struct bench *b)
{
	double q = median_of(b, "startup.poweroff"), v = median_of(b, "startup.verbose.poweroff");

	if (q > 0 && v > 0)
		bench_ratio(b->rep, "boot.verbose_over_quiet", v / q, 1.10, true,
			    "median poweroff time, verbose / quiet serial boot");
	figure_ratio(b, "boot.pair.verbose_over_quiet.poweroff", 1, "boot.pair.verbose_over_quiet.poweroff", 1.10,
		     "median over pairs (quiet, then verbose) of poweroff time, verbose / quiet");
	figure_ratio(b, "boot.pair.verbose_over_quiet.init", 1, "boot.pair.verbose_over_quiet.init", 1.10,
		     "median over pairs of the time to the guest's init, verbose / quiet");
	q = median_of(b, "exits.console_byte");
	v = median_of(b, "boot.pair.verbose_extra_per_console_byte");
	if (q > 0 && v > 0)
		bench_ratio(b->rep, "boot.verbose_extra_time_over_console_byte_cost", v / q, 0, true,
			    "a verbose boot's extra time per console byte / one console byte's cost (~1: the "
			    "bytes' traps are the whole difference)");
	q = median_of(b, "exits.quiet_boot.userspace");
	v = median_of(b, "exits.verbose_boot.userspace");
	if (q > 0 && v >= 0)
		bench_ratio(b->rep, "exits.verbose_over_quiet", v / q, 0, true,
			    "median userspace exits, verbose / quiet serial boot");
	figure_ratio(b, "memory.rss_beyond_guest_ram", 3.0, "memory.rss_beyond_ram_over_goal", 1.0,
		     "median RSS beyond guest RAM / 3 MiB (Firecracker: < 5 MiB)");
	figure_ratio(b, "memory.rss_beyond_guest_ram.console_disk_nic", 1.0, "memory.console_disk_nic_over_goal", 1.0,
		     "median RSS beyond guest RAM with a console, a disk and a NIC / 1 MiB (issue 22)");
	figure_ratio(b, "memory.rss_beyond_guest_ram.vf", 1.5, "memory.vf_over_goal", 1.0,
		     "median RSS beyond guest RAM with a VF passed through, a guest printing no vmm marker / 1.5 MiB (issue 22)");
	/* the per-pair figures' medians against their goals (each sample is one pair's vmm / peer) */
	static const struct {
		const char *fig;
		double goal;
		const char *what;
	} pairs[] = {
		{ "startup.pair.guest_init_over_qemu", 0.8,
		  "median over pairs (vmm, then QEMU) of launch to the guest's init, vmm / QEMU" },
		{ "startup.pair.first_instruction_exit_over_qemu", 0.5,
		  "median over pairs of launch to exit of the Image that powers off at once, vmm / QEMU" },
		{ "startup.pair.guest_init_over_kvmtool", 0.8,
		  "median over pairs (vmm, then kvmtool) of launch to the guest's init, vmm / kvmtool" },
		{ "startup.pair.first_instruction_exit_over_kvmtool", 0.5,
		  "median over pairs of launch to exit of the Image that powers off at once, vmm / kvmtool" },
		{ "startup.pair.first_entry_over_qemu", 0.5,
		  "median over pairs of launch to the first guest entry (the host's kvm_entry), vmm / QEMU" },
		{ "startup.pair.first_entry_over_kvmtool", 0.5,
		  "median over pairs of launch to the first guest entry (the host's kvm_entry), vmm / kvmtool" },
	};

	for (size_t i = 0; i < sizeof(pairs) / sizeof(pairs[0]); i++)
		figure_ratio(b, pairs[i].fig, 1, pairs[i].fig, pairs[i].goal, pairs[i].what);
	median_ratio(b, "kvmtool_features.startup.split.guest_counter_to_init",
		     "kvmtool.startup.split.guest_counter_to_init",
		     "startup.guest_counter_to_init_same_features_over_kvmtool", 1.0,
		     "median guest counter at /init (the guest's own boot), vmm --cpu pmu=off,sve=off,pauth=off / "
		     "kvmtool (none of them): the same vCPU features (issue 38)");
	/* issue 38's figures against the peers: memory and wake-ups with a guest that prints no vmm
	 * marker, host CPU per operation (a figure wall-clock noise moves less) */
	median_ratio(b, "memory.rss_beyond_guest_ram", "kvmtool.memory.rss_beyond_guest_ram",
		     "memory.rss_beyond_guest_ram_over_kvmtool", 0.5,
		     "median RSS beyond guest RAM, the idle test guest printing no vmm marker, vmm "
		     "(virtio-console) / kvmtool (8250 serial) (issue 38)");
	median_ratio(b, "idle.wakeups_per_s", "kvmtool.idle.wakeups_per_s", "idle.wakeups_over_kvmtool", 1.0,
		     "median voluntary context switches per second over all threads while the test guest "
		     "idles, vmm / kvmtool (issue 38)");
	median_ratio(b, "idle.wakeups_per_s", "qemu.idle.wakeups_per_s", "idle.wakeups_over_qemu", 0,
		     "median voluntary context switches per second while the test guest idles, vmm / QEMU");
	median_ratio(b, "cpu.blk.randread_4k.qd1", "qemu.cpu.blk.randread_4k.qd1", "cpu.blk.randread_4k.qd1_over_qemu",
		     0.8, "median host CPU per 4 KiB random read at QD 1 (all threads), vmm / QEMU (issue 38)");
	median_ratio(b, "cpu.blk.randread_4k.qd32", "qemu.cpu.blk.randread_4k.qd32",
		     "cpu.blk.randread_4k.qd32_over_qemu", 0.8,
		     "median host CPU per 4 KiB random read at QD 32 (all threads), vmm / QEMU (issue 38)");
	median_ratio(b, "cpu.net.udp_rr.vhost_off", "qemu.cpu.net.udp_rr.vhost_off", "cpu.net.udp_rr.vhost_off_over_qemu",
		     0.8, "median host CPU per UDP packet (round trips / 2), vhost off on both, vmm / QEMU (issue 38)");
	q = median_of(b, "blk.randread_4k.qd1");
	v = median_of(b, "blk.randread_4k.qd32");
	if (q > 0 && v > 0)
		bench_ratio(b->rep, "blk.randread_qd32_over_qd1", v / q, 0, true, "median 4 KiB random read IOPS, QD 32 / QD 1");
}

int main(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "quick", no_argument, NULL, 'q' }, { "json", required_argument, NULL, 'j' },
		{ "disk", required_argument, NULL, 'd' }, { "only", required_argument, NULL, 'o' },
		{ "no-qemu", no_argument, NULL, 'n' }, { "no-kvmtool", no_argument, NULL, 'k' },
		{ "text-pages", no_argument, NULL, 't' }, { "vf-marker", no_argument, NULL, 'p' },
		{ "io-reps", required_argument, NULL, 'r' }, { 0 },
	};
	struct bench b = { .reps = 8, .slow_reps = 4, .io_reps = 8, .io_ms = 500, .disk = LAB_DISK,
			   .quiet_mmio = -1 };
	const char *json = NULL;
	struct utsname u;
	bool peer = true, kvmtool_peer = true;
	int c;

	while ((c = getopt_long(argc, argv, "", opts, NULL)) != -1) {
		switch (c) {
		case 'q': b.reps = 3, b.slow_reps = 2, b.io_reps = 3, b.io_ms = 300; break;
		case 'j': json = optarg; break;
		case 'd': b.disk = optarg; break;
		case 'o': b.only = optarg; break;
		case 'n': peer = false; break;
		case 'k': kvmtool_peer = false; break;
		case 't': b.text_pages = true; break;
		case 'p': b.vf_marker = true; break;
		case 'r': { /* more boots a side narrow the judged interval of the blk and net figures */
			char *end;
			long n = strtol(optarg, &end, 10);

			if (*end || n < 2 || n > 64) {
				fprintf(stderr, "bench: --io-reps %s: give a whole number of boots a side, 2 to 64\n",
					optarg);
				return 2;
			}
			b.io_reps = (int)n;
			break;
		}
		default:
			fprintf(stderr, "usage: bench [--quick] [--json FILE] [--disk BLOCKDEV] "
					"[--only startup,verbose,mmio,memory,blk,vfio,net,trace,exits] [--no-qemu] [--no-kvmtool] "
					"[--text-pages] [--vf-marker] [--io-reps N]\n");
			return 2;
		}
	}
	b.rep = calloc(1, sizeof(*b.rep));
	setenv("VMM_TIMINGS", "1", 1);
	uname(&u);
	snprintf(b.rep->where, sizeof(b.rep->where), "%.10s %.30s%s", u.machine, u.release,
		 getenv("VMM_BENCH_HOST") ? ", KVM host" : ", lab (nested, TCG)");
	setvbuf(stdout, NULL, _IOLBF, 0);
	b.kernel = lab_kernel();
	long fault_around = b.text_pages ? set_fault_around(4096) : -1;
	if (!peer)
		printf("bench: QEMU peer skipped: --no-qemu\n");
	else if (want(&b, "startup") || want(&b, "memory") || want(&b, "blk") || want(&b, "net") ||
		 want(&b, "trace"))
		b.qemu = qemu_probe();
#if defined(__aarch64__)
	if (!kvmtool_peer)
		printf("bench: kvmtool peer skipped: --no-kvmtool\n");
	else if (want(&b, "startup") || want(&b, "memory") || want(&b, "exits"))
		b.kvmtool = kvmtool_probe(&b);
#else
	(void)kvmtool_peer; /* the x86 lab has QEMU alone: kvmtool is built for arm64 only */
#endif
	struct {
		const char *name;
		void (*run)(struct bench *b);
	} sections[] = {
		{ "startup", startup_quiet }, { "verbose", startup_verbose }, { "mmio", mmio_round_trip },
		{ "memory", memory }, { "blk", blk }, { "vfio", vfio }, { "net", net }, { "trace", trace },
		{ "exits", exits_by_region },
	};
	for (size_t i = 0; i < sizeof(sections) / sizeof(sections[0]); i++) {
		double t0 = now();

		/* trace is a diagnosis, not figures, and exits a traced diagnosis of 2 x reps boots: only
		 * when named */
		if (!want(&b, sections[i].name) ||
		    (!b.only && (!strcmp(sections[i].name, "trace") || !strcmp(sections[i].name, "exits"))))
			continue;
		printf("bench: %s ...\n", sections[i].name);
		sections[i].run(&b);
		printf("bench: %s took %.0f s\n", sections[i].name, now() - t0);
		if (!json) { /* what is done so far survives a run that times out later */
			printf("BENCH-JSON-BEGIN\n");
			bench_write_json(b.rep, stdout);
			printf("BENCH-JSON-END\n");
		}
	}
	if (fault_around > 0)
		set_fault_around(fault_around);
	ratios(&b);
	bench_print_table(b.rep, stdout);
	bench_judge(b.rep, 1, stdout);
	if (json) {
		FILE *f = fopen(json, "w");

		if (!f) {
			fprintf(stderr, "bench: cannot write %s: %s\n", json, strerror(errno));
			return 1;
		}
		bench_write_json(b.rep, f);
		fclose(f);
	} else {
		printf("BENCH-JSON-BEGIN\n");
		bench_write_json(b.rep, stdout);
		printf("BENCH-JSON-END\n");
	}
	return 0;
}
