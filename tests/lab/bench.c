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
 *   memory     vmm's RSS beyond guest RAM once the guest is up (goal: under 3 MiB; 1 MiB with a
 *              console, a disk and a NIC), and which mappings hold it
 *   vfio       userspace exits per passed-through MSI (an igb VF; goal: 0), and vmm's RSS beyond guest
 *              RAM with the VF (goal: 1.5 MiB)
 *   trace      (only when named) verbose boots under vmm and QEMU, console lines stamped with host time
 * QEMU/KVM is the peer (/lab/qemu: scripts/fetch.sh lab-qemu-arm64, or in the x86 lab this machine's
 * own qemu-system-x86_64, run-x86.sh --bench): start-up, virtio-blk,
 * virtio-net (userspace and vhost-net) and memory also boot the same kernel and guest in QEMU, one
 * QEMU run after each vmm run so that drift hits both; its figures are qemu.NAME (qemu_vhost.NAME)
 * beside vmm's NAME, and the table gives vmm / QEMU for each pair. Without QEMU (not fetched, or it
 * does not start) the peer figures are skipped with the reason.
 * Usage: bench [--quick] [--json FILE] [--disk BLOCKDEV] [--only SECTION,...] [--no-qemu] [--text-pages]
 * --text-pages is for analysis, not a figure: the kernel's fault-around set to one page for the
 * run (its memory figures are named *.fault_around_4k), and each first smaps read prints which
 * pages of vmm's text are resident ("bench: text-resident LO-HI"), what scripts/hot-text.sh maps
 * to vmm's functions and libc's members.
 * Without --json the JSON goes to stdout between BENCH-JSON-BEGIN and BENCH-JSON-END lines, after
 * each section and at the end with the ratios: the last block is the report.
 */
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <net/if.h>
#include <netinet/in.h>
#include <pthread.h>
#include <sched.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <sys/utsname.h>
#include <unistd.h>

#include "bench/bench.h"
#include "tests/lab/labutil.h"

#define RAM_MIB 512
#define TAP "vmmbench0"
/* The peer (tests/lab/mkinitramfs.sh --bench-extra): QEMU with its libraries, run through the
 * arm64 loader, and the cpio vmm links in as its built-in guest. */
#define QEMU_DIR "/lab/qemu"
#define BUILTIN_GUEST "/lab/builtin-guest.cpio.gz"
/* An arm64 Image whose first instructions power off (Makefile: tests/lab/baremetal/poweroff.S) */
#define POWEROFF_IMAGE "/lab/poweroff.img"
/* The peer as each lab packs it: arm64's from bookworm-backports' arm64 packages (fetch.sh
 * lab-qemu-arm64), x86's from this machine's own qemu-system-x86 (run-x86.sh --bench), each
 * with its firmware in QEMU_DIR (-L); the x86 lab's one disk is its vda. */
#if defined(__aarch64__)
#define QEMU_LOADER QEMU_DIR "/lib/ld-linux-aarch64.so.1"
#define QEMU_BIN QEMU_DIR "/bin/qemu-system-aarch64"
#define QEMU_MACHINE "virt,gic-version=host"
#define QEMU_CONSOLE "console=ttyAMA0"
#define QEMU_HOW "make bench fetches them: scripts/fetch.sh lab-qemu-arm64; tests/lab/run.sh --bench packs them"
#define LAB_DISK "/dev/vdb"
#elif defined(__x86_64__)
#define QEMU_LOADER QEMU_DIR "/lib/ld-linux-x86-64.so.2"
#define QEMU_BIN QEMU_DIR "/bin/qemu-system-x86_64"
#define QEMU_MACHINE "q35"
#define QEMU_CONSOLE "console=ttyS0"
#define QEMU_HOW "tests/lab/run-x86.sh --bench packs this machine's qemu-system-x86_64 (make deps installs it)"
#define LAB_DISK "/dev/vda"
#else
#error "the bench knows the arm64 and x86_64 labs"
#endif

struct bench {
	struct bench_report *rep;
	int reps;      /* repetitions of a cheap figure (a boot) */
	int slow_reps; /* of an expensive one (a verbose boot) */
	int io_reps, io_ms;
	const char *disk;
	const char *only;
	double quiet_mmio; /* median userspace exits of a quiet test-guest boot: the devices' baseline */
	bool qemu;	   /* the QEMU/KVM peer runs (qemu_probe) */
	char *kernel;	   /* the guest kernel both boot (lab_kernel) */
	bool text_pages;   /* --text-pages: fault-around of one page, the text's resident pages */
};

/* The kernel's fault-around window (debugfs, mounted when it is not): the old value, -1 when it
 * cannot be set (then --text-pages' resident pages come in 64 KiB windows). */
static long set_fault_around(long bytes)
{
	const char *path = "/sys/kernel/debug/fault_around_bytes";
	char v[32];
	long old = -1;
	int fd, n;

	if (access(path, F_OK))
		mount("debugfs", "/sys/kernel/debug", "debugfs", 0, NULL);
	if ((fd = open(path, O_RDONLY | O_CLOEXEC)) >= 0) {
		if ((n = read(fd, v, sizeof(v) - 1)) > 0)
			v[n] = 0, old = strtol(v, NULL, 10);
		close(fd);
	}
	n = snprintf(v, sizeof(v), "%ld\n", bytes);
	if (old < 0 || (fd = open(path, O_WRONLY | O_CLOEXEC)) < 0 || write(fd, v, n) != n) {
		printf("bench: fault-around not set: %s: %s\n", path, strerror(errno));
		if (old >= 0 && fd >= 0)
			close(fd);
		return -1;
	}
	close(fd);
	printf("bench: fault_around_bytes %ld (was %ld)\n", bytes, old);
	return old;
}

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

static void add(struct bench *b, const char *name, const char *unit, bool higher, double v)
{
	bench_add(b->rep, name, unit, higher, v);
}

static double median_of(const struct bench *b, const char *name)
{
	const struct bench_figure *f = bench_find(b->rep, name);
	double lo, med, hi;

	if (!f || !f->n)
		return -1;
	bench_summary(f, &lo, &med, &hi);
	return med;
}

/* vmm's "vmm: timings:" line: phase -> absolute CLOCK_MONOTONIC seconds (0: absent). */
static double timing(const char *err, const char *phase)
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

/* Sums of vmm's per-vCPU exit table: userspace MMIO exits and KVM's "exits" stat. */
static int exit_table(const char *err, unsigned long long *mmio, unsigned long long *kvm)
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

static void fail_note(const char *what, const struct result *r)
{
	const char *e = r->err ? r->err : "";
	size_t n = strlen(e);

	fprintf(stderr, "bench: %s: vmm exited %d; its stderr ends:\n%s\n", what, r->status,
		e + (n > 1500 ? n - 1500 : 0));
}

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

/* The built-in guest's banner gives its CLOCK_BOOTTIME at /init ("up S s"): launch to init splits
 * into before the guest's clock starts (the VMM, then the kernel's early boot to its timekeeping)
 * and the guest's own time from there; prefix "" for vmm, "qemu." for the peer. */
static void guest_clock_split(struct bench *b, const char *prefix, const char *out, double init_ms)
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
		guest_clock_split(b, "", r.out, out.init_ms);
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

/* The bare-metal payload's pvpanic reads: one userspace MMIO exit each. */
static void mmio_round_trip(struct bench *b)
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

/* What read_rss reads: where the figure goes, and whether to print the mappings one by one. */
struct rss_probe {
	struct bench *b;
	const char *figure;
	bool breakdown;
	double read_at; /* CLOCK_MONOTONIC s of the smaps read */
};

/* The resident pages of [lo, hi) in pid (/proc/PID/pagemap, bit 63: present), as ranges. */
static void print_resident(int pid, unsigned long long lo, unsigned long long hi)
{
	long page = sysconf(_SC_PAGESIZE);
	unsigned long long run = 0, n = 0;
	char path[64];
	int fd;

	snprintf(path, sizeof(path), "/proc/%d/pagemap", pid);
	if ((fd = open(path, O_RDONLY | O_CLOEXEC)) < 0) {
		printf("bench: text-resident unknown: %s: %s\n", path, strerror(errno));
		return;
	}
	for (unsigned long long a = lo; a <= hi; a += page) {
		uint64_t e = 0;
		bool present = a < hi && pread(fd, &e, sizeof(e), (off_t)(a / page * sizeof(e))) == sizeof(e) &&
			       (e >> 63);

		if (present && !run)
			run = a;
		if (!present && run) {
			printf("bench: text-resident 0x%llx-0x%llx %llu pages\n", run, a, (a - run) / page);
			n += (a - run) / page;
			run = 0;
		}
	}
	close(fd);
	printf("bench: text-resident total %llu pages of %llu\n", n, (hi - lo) / page);
}

/* glibc's heap as chunks (read through /proc/PID/mem: a chunk's size word, whose low bit in the
 * next chunk says in use): in-use bytes by chunk size, each size with its first bytes (what
 * allocated it shows in them), and the free bytes. For docs/benchmarks.md's heap line. */
struct chunk_size {
	uint64_t size, n;
	unsigned char head[24];
};

/* The chunks from start to top: in-use ones counted by size, free ones summed. */
static void heap_chunks(const unsigned char *m, uint64_t start, uint64_t top, struct chunk_size *by, int max,
			int *nsz, uint64_t *used, uint64_t *freeb)
{
	for (uint64_t off = start, sz, nsize; off < top; off += sz) {
		int i;

		memcpy(&sz, m + off + 8, 8);
		sz &= ~7ULL;
		memcpy(&nsize, m + off + sz + 8, 8);
		if (!(nsize & 1)) {
			*freeb += sz;
			continue;
		}
		*used += sz;
		for (i = 0; i < *nsz && by[i].size != sz; i++)
			;
		if (i == *nsz && *nsz < max) {
			by[i].size = sz;
			memcpy(by[(*nsz)++].head, m + off + 16, sizeof(by[0].head));
		}
		if (i < max)
			by[i].n++;
	}
}

static void print_heap(int pid, unsigned long long lo, unsigned long long hi)
{
	enum { SIZES = 64 };
	struct chunk_size by[SIZES] = { 0 };
	uint64_t len = hi - lo, off = 0, freeb = 0, used = 0;
	unsigned char *m = malloc(len);
	char path[64];
	int fd, nsz = 0;

	snprintf(path, sizeof(path), "/proc/%d/mem", pid);
	if (!m || (fd = open(path, O_RDONLY | O_CLOEXEC)) < 0) {
		free(m);
		return;
	}
	bool ok = pread(fd, m, len, (off_t)lo) == (ssize_t)len;

	close(fd);
	/* a static binary's heap starts with the main thread's TLS block: the first chunk is where a
	 * walk along the size words ends exactly at the heap's end (the top chunk) */
	for (uint64_t start = 0; ok && start < 16384 && start < len; start += 16) {
		uint64_t sz = 0;
		bool top = false;

		for (off = start; off + 16 <= len && !top; off += sz) {
			memcpy(&sz, m + off + 8, 8);
			sz &= ~7ULL;
			if (sz < 16 || off + sz > len)
				break;
			if ((top = off + sz == len))
				break;
		}
		if (top) { /* off: the top chunk */
			heap_chunks(m, start, off, by, SIZES, &nsz, &used, &freeb);
			break;
		}
		off = 0;
	}
	printf("bench: heap %llu kB: %llu kB in use, %llu kB free, top from +%llu kB\n",
	       (unsigned long long)len >> 10, (unsigned long long)used >> 10, (unsigned long long)freeb >> 10,
	       (unsigned long long)off >> 10);
	for (int i = 0; i < nsz; i++) {
		char text[sizeof(by[0].head) + 1];

		for (size_t k = 0; k < sizeof(by[0].head); k++)
			text[k] = by[i].head[k] >= 32 && by[i].head[k] < 127 ? by[i].head[k] : '.';
		text[sizeof(by[0].head)] = 0;
		printf("bench: heap-chunks %6llu B x %3llu = %6llu B  %s\n", (unsigned long long)by[i].size,
		       (unsigned long long)by[i].n, (unsigned long long)(by[i].size * by[i].n), text);
	}
	free(m);
}

/* RSS of every mapping but guest RAM (the one anonymous mapping of exactly RAM_MIB); with breakdown,
 * a line per mapping that has any ("bench: smaps KB RANGE PERMS NAME") so docs/benchmarks.md can say
 * where each 100 KiB goes, and with --text-pages the resident pages of vmm's text. */
static void read_rss(int pid, void *arg)
{
	struct rss_probe *p = arg;
	char path[64], line[512], head[512] = "";
	unsigned long long lo, hi, kb, total = 0, text_lo = 0, text_hi = 0, heap_lo = 0, heap_hi = 0;
	bool skipping = false, found = false;
	FILE *f;

	snprintf(path, sizeof(path), "/proc/%d/smaps", pid);
	p->read_at = now();
	if (!(f = fopen(path, "r")))
		return;
	while (fgets(line, sizeof(line), f)) {
		if (sscanf(line, "%llx-%llx ", &lo, &hi) == 2 && strchr(line, '-') < strchr(line, ' ')) {
			skipping = !found && hi - lo == (unsigned long long)RAM_MIB << 20;
			found |= skipping;
			snprintf(head, sizeof(head), "%s", line);
			head[strcspn(head, "\n")] = 0;
			/* the first executable mapping of a file: vmm's text */
			if (!text_hi && strstr(head, " r-xp ") && strchr(head, '/'))
				text_lo = lo, text_hi = hi;
			if (strstr(head, "[heap]"))
				heap_lo = lo, heap_hi = hi;
		} else if (!skipping && sscanf(line, "Rss: %llu kB", &kb) == 1) {
			total += kb;
			if (p->breakdown && kb)
				printf("bench: smaps %s %4llu kB %s (%llu kB mapped)\n", p->figure, kb, head,
				       (hi - lo) >> 10);
		}
	}
	fclose(f);
	if (p->b->text_pages && p->breakdown && text_hi)
		print_resident(pid, text_lo, text_hi);
	if (p->b->text_pages && p->breakdown && heap_hi)
		print_heap(pid, heap_lo, heap_hi);
	if (found)
		add(p->b, p->figure, "MiB", false, total / 1024.0);
	else
		printf("bench: no mapping of exactly %d MiB (guest RAM) in %s\n", RAM_MIB, path);
}

/* The test guest up and idle on virtio-console: vmm's RSS; its exits are the device baseline. Then
 * the same with a disk and a NIC (a tap in a network namespace of the bench's own, as net does):
 * the configuration the 1 MiB goal is about. */
static bool qemu_memory_one(struct bench *b);

/* A memory figure's name: with --text-pages (fault-around of one page) never the real figure's. */
static const char *mem_figure(const struct bench *b, const char *name, char *buf, size_t n)
{
	snprintf(buf, n, "%s%s", name, b->text_pages ? ".fault_around_4k" : "");
	return buf;
}

static void memory(struct bench *b)
{
	char *argv[32], fig[96];
	struct rss_probe p = { b, mem_figure(b, "memory.rss_beyond_guest_ram", fig, sizeof(fig)), true, 0 };
	struct run_opts o = { .timeout = 300, .term_on = "GUEST-HOLD", .on_match = read_rss, .match_arg = &p };
	bool peer = b->qemu;

	test_guest_argv(argv, 32, "hold", NULL);
	for (int i = 0; i < b->slow_reps; i++) {
		struct result r;
		unsigned long long mmio, kvm;

		p.breakdown = i == 0;
		run_vmm_opts(argv, &o, &r);
		double rel = timing(r.err, "released");

		if (p.breakdown) /* vmm's start-up memory goes at the guest's boot-end marker */
			printf("bench: start-up memory released before the smaps read: %s\n",
			       rel > 0 && rel < p.read_at ? "yes" : "no");
		if (!strstr(r.out, "GUEST-HOLD") || exit_table(r.err, &mmio, &kvm) < 0)
			fail_note("memory (test guest, idle)", &r);
		else
			add(b, "exits.test_guest_idle_boot.userspace", "exits", false, mmio);
		result_free(&r);
		if (peer)
			peer = qemu_memory_one(b);
	}
	b->quiet_mmio = median_of(b, "exits.test_guest_idle_boot.userspace");

	struct stat st;
	char dev[128];

	snprintf(dev, sizeof(dev), "%s", b->disk);
	char *const extra[] = { "-d", dev, "--net", "tap=" TAP ",mac=02:00:00:00:00:02", NULL };

	/* the tap in a namespace of its own, left again afterwards: the vfio section needs the PF */
	int home = open("/proc/self/ns/net", O_RDONLY | O_CLOEXEC);

	if (stat(b->disk, &st) < 0 || !S_ISBLK(st.st_mode) || home < 0 || unshare(CLONE_NEWNET) < 0) {
		printf("bench: memory with a disk and a NIC skipped: needs --disk BLOCKDEV and root\n");
		if (home >= 0)
			close(home);
		return;
	}
	p.figure = mem_figure(b, "memory.rss_beyond_guest_ram.console_disk_nic", fig, sizeof(fig));
	test_guest_argv(argv, 32, "hold-devices", extra); /* the guest's drivers bound and used once */
	for (int i = 0; i < b->slow_reps; i++) {
		struct result r;

		p.breakdown = i == 0;
		run_vmm_opts(argv, &o, &r);
		double rel = timing(r.err, "released");

		if (p.breakdown)
			printf("bench: start-up memory released before the smaps read (disk and NIC): %s\n",
			       rel > 0 && rel < p.read_at ? "yes" : "no");
		if (!strstr(r.out, "GUEST-HOLD") || !strstr(r.out, "GUEST-DEVICES-DISK 0"))
			fail_note("memory (console, disk and NIC)", &r);
		result_free(&r);
	}
	if (setns(home, CLONE_NEWNET) < 0)
		printf("bench: back to the host's network namespace: %s (the vfio section will fail)\n", strerror(errno));
	close(home);
}

/* A device's exits: notifies by MMIO exit per notify, and the boot's userspace exits beyond the
 * idle boot's per notify + interrupt (the steady-state cost; the goal is 0). */
static void device_exits(struct bench *b, const char *err, const char *dev, const char *prefix)
{
	struct devstats d;
	unsigned long long mmio, kvm;
	char name[80];

	if (dev_summary(err, dev, 2, &d) < 0 || exit_table(err, &mmio, &kvm) < 0)
		return;
	snprintf(name, sizeof(name), "exits.%s.per_notify", prefix);
	if (d.kicks + d.kick_exits)
		add(b, name, "exits", false, (double)d.kick_exits / (d.kicks + d.kick_exits));
	snprintf(name, sizeof(name), "exits.%s.notifies", prefix);
	add(b, name, "count", false, d.kicks + d.kick_exits);
	snprintf(name, sizeof(name), "exits.%s.interrupts", prefix);
	add(b, name, "count", false, d.irqs);
	if (b->quiet_mmio >= 0 && d.kicks + d.irqs) {
		snprintf(name, sizeof(name), "exits.%s.extra_per_notify_or_irq", prefix);
		add(b, name, "exits", false, ((double)mmio - b->quiet_mmio) / (d.kicks + d.kick_exits + d.irqs));
	}
}

/* blkbench's lines (GUEST-BLKBENCH ...) as figures, named prefix + blk.KIND_SIZE.qdN. */
static void blk_figures(struct bench *b, const char *out, const char *prefix)
{
	for (const char *p = out; (p = strstr(p, "GUEST-BLKBENCH ")); p++) {
		char kind[16], name[80];
		unsigned long bs, qd, ops, rep;
		unsigned long long ns;

		if (sscanf(p, "GUEST-BLKBENCH %15s bs=%lu qd=%lu rep=%lu ops=%lu ns=%llu", kind, &bs, &qd, &rep, &ops,
			   &ns) != 6 || !ns)
			continue;
		if (bs == 4096) {
			snprintf(name, sizeof(name), "%sblk.%s_4k.qd%lu", prefix, kind, qd);
			add(b, name, "IOPS", true, ops / (ns / 1e9));
		} else {
			snprintf(name, sizeof(name), "%sblk.%s_1m.qd%lu", prefix, kind, qd);
			add(b, name, "MiB/s", true, ops * (bs / 1048576.0) / (ns / 1e9));
		}
	}
}

/* One vmm boot of the test guest running blkbench reps times on the disk. */
static void blk_vmm(struct bench *b, int reps)
{
	char *argv[32], step[64], dev[128];

	snprintf(step, sizeof(step), "blkbench vmmbenchreps=%d vmmbenchms=%d", reps, b->io_ms);
	snprintf(dev, sizeof(dev), "%s", b->disk);
	char *const extra[] = { "-d", dev, NULL };
	struct result r;

	test_guest_argv(argv, 32, step, extra);
	run_vmm(argv, 900, &r);
	blk_figures(b, r.out, "");
	if (!strstr(r.out, "GUEST-BLKBENCH ") || r.status)
		fail_note("virtio-blk", &r);
	device_exits(b, r.err, "virtio-blk", "virtio_blk");
	result_free(&r);
}

static bool qemu_blk_one(struct bench *b, int reps);

/* With the peer, one repetition per boot, vmm's and QEMU's boots alternating. */
static void blk(struct bench *b)
{
	struct stat st;
	bool peer = b->qemu;
	int rounds = peer ? b->io_reps : 2;

	if (stat(b->disk, &st) < 0 || !S_ISBLK(st.st_mode)) {
		printf("bench: virtio-blk skipped: %s is not a block device (--disk BLOCKDEV)\n", b->disk);
		return;
	}
	for (int i = 0; i < rounds; i++) {
		blk_vmm(b, b->io_reps / rounds);
		if (peer)
			peer = qemu_blk_one(b, b->io_reps / rounds);
	}
}

/* The host side of the network figures: a UDP echo on 7777 and a TCP sink on 7778 that answers
 * with the byte count once the client shuts down its side. */
static void *udp_echo(void *arg)
{
	int s = *(int *)arg;
	char buf[2048];

	for (;;) {
		struct sockaddr_in6 from;
		socklen_t fl = sizeof(from);
		ssize_t n = recvfrom(s, buf, sizeof(buf), 0, (struct sockaddr *)&from, &fl);

		if (n > 0)
			sendto(s, buf, n, 0, (struct sockaddr *)&from, fl);
	}
	return NULL;
}

static void *tcp_sink(void *arg)
{
	int s = *(int *)arg;
	static char buf[1 << 16];

	for (;;) {
		int c = accept(s, NULL, NULL);
		unsigned long long got = 0;
		ssize_t n;

		if (c < 0)
			continue;
		while ((n = read(c, buf, sizeof(buf))) > 0)
			got += n;
		if (write(c, &got, sizeof(got)) < 0)
			perror("bench: tcp sink");
		close(c);
	}
	return NULL;
}

static int listen_on(int type, int port)
{
	struct sockaddr_in6 a = { .sin6_family = AF_INET6, .sin6_port = htons(port), .sin6_addr = IN6ADDR_ANY_INIT };
	int s = socket(AF_INET6, type, 0), one = 1;

	if (s < 0 || setsockopt(s, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one)) ||
	    bind(s, (struct sockaddr *)&a, sizeof(a)) || (type == SOCK_STREAM && listen(s, 4)))
		return -1;
	return s;
}

/* Gives vmm's tap fe80::1 once it exists. */
static void *tap_up(void *arg)
{
	(void)arg;
	for (int i = 0; i < 600; i++) {
		if (if_nametoindex(TAP)) { /* not /sys/class/net: sysfs shows the namespace that mounted it */
			int r = system("echo 0 > /proc/sys/net/ipv6/conf/" TAP "/accept_dad; ip link set " TAP
				       " up && ip -6 addr add fe80::1/64 dev " TAP);

			if (r)
				fprintf(stderr, "bench: setting up %s failed\n", TAP);
			return NULL;
		}
		usleep(100000);
	}
	return NULL;
}

/* netbench's lines as figures, named prefix + net.KIND.DIR + suffix. */
static void net_figures(struct bench *b, const char *out, const char *prefix, const char *suffix)
{
	char name[80];

	for (const char *p = out; (p = strstr(p, "GUEST-NETBENCH ")); p++) {
		unsigned long rep;
		unsigned long long n, ns;

		if (sscanf(p, "GUEST-NETBENCH rr rep=%lu ops=%llu ns=%llu", &rep, &n, &ns) == 3 && n && ns) {
			snprintf(name, sizeof(name), "%snet.udp_rr.round_trip%s", prefix, suffix);
			add(b, name, "us", false, ns / 1e3 / n);
		} else if (sscanf(p, "GUEST-NETBENCH bulk rep=%lu bytes=%llu ns=%llu", &rep, &n, &ns) == 3 && ns) {
			snprintf(name, sizeof(name), "%snet.tcp_bulk.guest_to_host%s", prefix, suffix);
			add(b, name, "MiB/s", true, n / 1048576.0 / (ns / 1e9));
		}
	}
}

/* The previous run's tap gone (it goes with its last file descriptor), so tap_up configures the
 * next run's. */
static void tap_gone(void)
{
	for (int i = 0; i < 100 && if_nametoindex(TAP); i++)
		usleep(50000);
}

/* One vmm boot of the test guest running netbench reps times: the default (vhost-net where it
 * opens) or vhost=off, whose figures are *.vhost_off. */
static void net_vmm(struct bench *b, int reps, bool vhost_off)
{
	pthread_t t3;
	char *argv[32], step[64];
	char *const extra[] = { "--net",
				vhost_off ? "tap=" TAP ",mac=02:00:00:00:00:02,vhost=off" : "tap=" TAP ",mac=02:00:00:00:00:02",
				NULL };
	const char *suffix = vhost_off ? ".vhost_off" : "";
	struct result r;

	tap_gone();
	pthread_create(&t3, NULL, tap_up, NULL);
	snprintf(step, sizeof(step), "netbench vmmbenchreps=%d vmmbenchms=%d", reps, b->io_ms);
	test_guest_argv(argv, 32, step, extra);
	run_vmm(argv, 900, &r);
	pthread_join(t3, NULL);
	net_figures(b, r.out, "", suffix);
	if (!strstr(r.out, "GUEST-NETBENCH ") || r.status)
		fail_note("virtio-net", &r);
	const char *off = strstr(r.err, "vhost-net off: ");

	if (!vhost_off && off) /* the default ran without vhost: say so next to its figures */
		printf("bench: virtio-net default: %.*s\n", (int)strcspn(off, "\n"), off);
	/* vmm's kicks and interrupts: the userspace path's (vhost's are the kernel's, uncounted), one
	 * boot's */
	if (vhost_off && !bench_find(b->rep, "exits.virtio_net.notifies"))
		device_exits(b, r.err, "virtio-net", "virtio_net");
	result_free(&r);
}

static bool qemu_net_one(struct bench *b, int reps, bool vhost);
static bool qemu_vhost_usable(void);

/* vmm with vhost-net (the default where it opens) and with vhost=off, QEMU without vhost-net and
 * with it, in turn: QEMU's userspace virtio-net is qemu.net.*.vhost_off beside vmm's vhost=off,
 * QEMU's vhost-net qemu_vhost.net.* beside vmm's default. With the peer one repetition per boot;
 * without it two boots of each of vmm's, alternating (on, off, off, on), so that a drifting load
 * weighs on both alike. */
static void net(struct bench *b)
{
	static int us, ts;
	pthread_t t1, t2;
	bool peer = b->qemu, vhost = peer && qemu_vhost_usable();
	int rounds = peer ? b->io_reps : 2;

	/* our own namespace: the tap, its address and the servers are seen by nobody else */
	if (unshare(CLONE_NEWNET) < 0) {
		printf("bench: virtio-net skipped: unshare(CLONE_NEWNET): %s (needs root)\n", strerror(errno));
		return;
	}
	if ((us = listen_on(SOCK_DGRAM, 7777)) < 0 || (ts = listen_on(SOCK_STREAM, 7778)) < 0) {
		printf("bench: virtio-net skipped: cannot listen on ports 7777/7778: %s\n", strerror(errno));
		return;
	}
	pthread_create(&t1, NULL, udp_echo, &us);
	pthread_create(&t2, NULL, tcp_sink, &ts);
	for (int i = 0; i < rounds; i++) {
		int reps = peer ? b->io_reps / rounds : b->io_reps;

		net_vmm(b, reps, i % 2 == 1);
		net_vmm(b, reps, i % 2 == 0);
		if (peer)
			peer = qemu_net_one(b, reps, false);
		if (vhost)
			vhost = qemu_net_one(b, reps, true);
	}
}

/* The lab's igb: a VF passed through, pinging the PF. */
#define PF LAB_PF
#define VF LAB_VF

/* One VF boot: the guest pings the PF `pings` times; its MSI-X interrupts and vmm's exits. */
static int vf_boot(int pings, unsigned long long *irqs, unsigned long long *mmio)
{
	char *argv[40], step[64];
	char *const extra[] = { "--vfio", VF, NULL };
	unsigned long long kvm;
	struct result r;
	int ret = -1;

	snprintf(step, sizeof(step), "vf vmmpings=%d", pings);
	test_guest_argv(argv, 40, step, extra);
	run_vmm(argv, 600, &r);
	*irqs = 0;
	for (const char *p = r.out; (p = strstr(p, "GUEST-IRQ ")); p++) {
		unsigned long c0 = 0, c1 = 0;
		char line[256];

		snprintf(line, sizeof(line), "%.*s", (int)strcspn(p, "\n"), p);
		if (strstr(line, "MSIX") && !strstr(line, "virtio") &&
		    sscanf(line, "GUEST-IRQ %*d: %lu %lu", &c0, &c1) >= 1)
			*irqs += c0 + c1;
	}
	if (r.status == 0 && strstr(r.out, "GUEST-PING6 1") && exit_table(r.err, mmio, &kvm) == 0)
		ret = 0;
	else
		fail_note("VF passthrough", &r);
	result_free(&r);
	return ret;
}

/* vmm's RSS beyond guest RAM with the VF passed through (the guest's igbvf up, its link pinged,
 * then idle): the 1.5 MiB goal. In the host's own network namespace (the PF's). */
static void vf_memory(struct bench *b)
{
	char *argv[40], fig[96];
	char *const extra[] = { "--vfio", VF, NULL };
	struct rss_probe p = { b, mem_figure(b, "memory.rss_beyond_guest_ram.vf", fig, sizeof(fig)), true, 0 };
	struct run_opts o = { .timeout = 600, .term_on = "GUEST-HOLD", .on_match = read_rss, .match_arg = &p };

	test_guest_argv(argv, 40, "vf-hold vmmpings=5", extra);
	for (int i = 0; i < b->slow_reps; i++) {
		struct result r;

		p.breakdown = i == 0;
		run_vmm_opts(argv, &o, &r);
		if (!strstr(r.out, "GUEST-HOLD") || !strstr(r.out, "GUEST-PING6 1"))
			fail_note("memory (VF passed through)", &r);
		result_free(&r);
	}
}

/* Userspace exits per passed-through MSI: two boots that differ only in the pings' count. */
static void vfio(struct bench *b)
{
	char cmd[512], dev[64] = "";

	if (access("/sys/bus/pci/devices/" PF "/sriov_totalvfs", F_OK)) {
		printf("bench: passthrough skipped: no SR-IOV PF at " PF " (the lab's igb)\n");
		return;
	}
	if (lab_vf_create(dev, sizeof(dev))) {
		printf("bench: passthrough skipped: vmm vf create failed\n");
		return;
	}
	snprintf(cmd, sizeof(cmd), "echo 0 > /proc/sys/net/ipv6/conf/%s/accept_dad; ip link set %s up && "
		 "ip -6 addr flush dev %s && ip -6 addr add fe80::1/64 dev %s", dev, dev, dev, dev);
	if (!dev[0] || lab_sh(cmd) || lab_vf_bind()) {
		printf("bench: passthrough skipped: preparing the VF failed\n");
		lab_vf_remove();
		return;
	}
	for (int i = 0; i < (b->slow_reps + 1) / 2; i++) {
		unsigned long long ia, ib, ma, mb;

		if (vf_boot(50, &ia, &ma) < 0 || vf_boot(400, &ib, &mb) < 0)
			continue;
		if (ib > ia) {
			add(b, "exits.passthrough_msi.per_msi", "exits", false,
			    ((double)mb - (double)ma) / (double)(ib - ia));
			add(b, "exits.passthrough_msi.extra_msis", "count", false, ib - ia);
		}
	}
	vf_memory(b);
	lab_vf_remove();
}

static double qemu_startup_one(struct bench *b);
static double qemu_first_instruction_one(struct bench *b);

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

/* Quiet boots of the built-in guest and the poweroff payload, each vmm run followed by QEMU's:
 * the lab's load drifts by 2-4x over minutes, so each pair's vmm / QEMU ratio is steadier than
 * the ratio of the medians. */
static void startup_quiet(struct bench *b)
{
	bool peer = b->qemu, payload = access(POWEROFF_IMAGE, R_OK) == 0;

	if (!payload)
		printf("bench: startup.first_instruction_exit skipped: no %s\n", POWEROFF_IMAGE);
	for (int i = 0; i < b->reps; i++) {
		double v = startup_one(b, false).init_ms, q = peer ? qemu_startup_one(b) : -1;

		peer = q > 0;
		if (v > 0 && q > 0)
			add(b, "startup.pair.guest_init_over_qemu", "x", false, v / q);
		if (!payload)
			continue;
		v = first_instruction_one(b);
		q = peer ? qemu_first_instruction_one(b) : -1;
		peer = q > 0;
		if (v > 0 && q > 0)
			add(b, "startup.pair.first_instruction_exit_over_qemu", "x", false, v / q);
	}
}

/* Verbose boots, each paired with a quiet one just before it: load on the lab host drifts over
 * minutes, so the ratio of a pair is steadier than the ratio of two sections' medians. The extra
 * time per console byte of a pair is what a verbose boot costs per byte, to set beside
 * exits.console_byte (the same bytes timed in a bare-metal loop). */
static void startup_verbose(struct bench *b)
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

static void qemu_argv(const struct bench *b, char **argv, size_t n, const char *initrd, const char *append,
		      char *const extra[]);

/* --only trace (never by default): a verbose (earlycon) boot of the built-in guest under vmm, then
 * under QEMU, each console line stamped with the host's time since the launch, and vmm's
 * VMM_TIMINGS marks; the phases that differ are where vmm's launch-to-init goes. */
static void trace(struct bench *b)
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

/*
 * QEMU/KVM as the peer: the same kernel, guest, RAM and vCPUs as vmm's runs, on a virt machine
 * with the host's GIC, KVM and the host's CPU; no default devices and no NIC unless the step
 * asks for one (a tap in the bench's own namespace). The guest's console is the PL011.
 */

/* argv for QEMU booting kernel with initrd and append (either NULL: none), RAM_MIB and 2 vCPUs,
 * followed by extra. */
static void qemu_argv_kernel(char **argv, size_t n, const char *kernel, const char *initrd, const char *append,
			     char *const extra[])
{
	static char mem[16];
	char *const base[] = { QEMU_LOADER, "--library-path", QEMU_DIR "/lib",
			       QEMU_BIN, "-L", QEMU_DIR, "-M", QEMU_MACHINE,
			       "-accel", "kvm", "-cpu", "host", "-smp", "2", "-m", mem, "-nodefaults", "-nic",
			       "none", "-display", "none", "-serial", "stdio", "-no-reboot", "-kernel", (char *)kernel };
	size_t i = 0;

	snprintf(mem, sizeof(mem), "%dM", RAM_MIB);
	for (size_t k = 0; k < sizeof(base) / sizeof(base[0]) && i + 1 < n; k++)
		argv[i++] = base[k];
	if (initrd && i + 3 < n) {
		argv[i++] = "-initrd";
		argv[i++] = (char *)initrd;
	}
	if (append && i + 3 < n) {
		argv[i++] = "-append";
		argv[i++] = (char *)append;
	}
	for (size_t k = 0; extra && extra[k] && i + 1 < n; k++)
		argv[i++] = extra[k];
	argv[i] = NULL;
}

/* argv for QEMU booting the bench's kernel with initrd and append. */
static void qemu_argv(const struct bench *b, char **argv, size_t n, const char *initrd, const char *append,
		      char *const extra[])
{
	qemu_argv_kernel(argv, n, b->kernel, initrd, append, extra);
}

/* A failed QEMU run: what it printed, and that this section's peer figures stop here. */
static bool qemu_failed(const char *what, const struct result *r)
{
	const char *e = r->err && r->err[0] ? r->err : r->out ? r->out : "";
	size_t n = strlen(e);

	printf("bench: QEMU peer: %s: QEMU exited %d; the section's further QEMU figures are skipped; its "
	       "output ends:\n%s\n", what, r->status, e + (n > 1500 ? n - 1500 : 0));
	return false;
}

/* Whether QEMU is there and starts; says why not. */
static bool qemu_probe(void)
{
	char *const argv[] = { QEMU_LOADER, "--library-path", QEMU_DIR "/lib", QEMU_BIN, "-version", NULL };
	struct result r;
	bool ok;

	if (access(QEMU_BIN, X_OK) || access(BUILTIN_GUEST, R_OK)) {
		printf("bench: QEMU peer skipped: no %s or %s (" QEMU_HOW ")\n", QEMU_BIN, BUILTIN_GUEST);
		return false;
	}
	run_vmm(argv, 120, &r);
	ok = r.status == 0 && strstr(r.out, "QEMU emulator version");
	if (ok)
		printf("bench: QEMU peer: %.*s\n", (int)strcspn(r.out, "\n"), r.out);
	else
		printf("bench: QEMU peer skipped: %s -version exited %d: %s\n", QEMU_DIR, r.status, r.err);
	result_free(&r);
	return ok;
}

/* vmm's start-up boot in QEMU: the built-in guest's cpio, to its banner and to QEMU's exit; the
 * ms to the banner, -1 when it failed. */
static double qemu_startup_one(struct bench *b)
{
	char *argv[48];
	struct result r;
	double ms = -1;

	qemu_argv(b, argv, 48, BUILTIN_GUEST, QEMU_CONSOLE " earlycon panic=-1 quiet", NULL);
	run_vmm(argv, 600, &r);
	if (r.status == 0 && r.banner_secs >= 0) {
		ms = r.banner_secs * 1e3;
		add(b, "qemu.startup.guest_init", "ms", false, ms);
		guest_clock_split(b, "qemu.", r.out, ms);
		add(b, "qemu.startup.process_exit", "ms", false, r.secs * 1e3);
	} else {
		qemu_failed("start-up", &r);
	}
	result_free(&r);
	return ms;
}

/* The poweroff payload in QEMU: launch to exit, as first_instruction_one times vmm's (ms, -1:
 * failed). */
static double qemu_first_instruction_one(struct bench *b)
{
	char *argv[48];
	struct result r;
	double ms = -1;

	qemu_argv_kernel(argv, 48, POWEROFF_IMAGE, NULL, NULL, NULL);
	run_vmm(argv, 120, &r);
	if (r.status == 0) {
		ms = r.secs * 1e3;
		add(b, "qemu.startup.first_instruction_exit", "ms", false, ms);
	} else {
		qemu_failed("poweroff payload", &r);
	}
	result_free(&r);
	return ms;
}

/* The test guest idle: QEMU's RSS beyond guest RAM. */
static bool qemu_memory_one(struct bench *b)
{
	char *argv[48];
	struct rss_probe p = { b, "qemu.memory.rss_beyond_guest_ram", false, 0 };
	struct run_opts o = { .timeout = 300, .term_on = "GUEST-HOLD", .on_match = read_rss, .match_arg = &p };
	struct result r;
	bool ok;

	qemu_argv(b, argv, 48, "/lab/guest.cpio.gz", QEMU_CONSOLE " panic=-1 quiet vmmtest=hold", NULL);
	run_vmm_opts(argv, &o, &r);
	ok = strstr(r.out, "GUEST-HOLD") != NULL;
	if (!ok)
		qemu_failed("memory (test guest, idle)", &r);
	result_free(&r);
	return ok;
}

/* blkbench on the same disk: raw, O_DIRECT (cache=none) with Linux AIO, virtio-blk-pci with
 * QEMU's defaults (a queue per vCPU). */
static bool qemu_blk_one(struct bench *b, int reps)
{
	char *argv[48], append[160], drive[200];
	char *const extra[] = { "-drive", drive, "-device", "virtio-blk-pci,drive=d0", NULL };
	struct result r;
	bool ok;

	snprintf(append, sizeof(append), QEMU_CONSOLE " panic=-1 quiet vmmtest=blkbench vmmbenchreps=%d "
		 "vmmbenchms=%d", reps, b->io_ms);
	snprintf(drive, sizeof(drive), "file=%s,if=none,id=d0,format=raw,cache=none,aio=native", b->disk);
	qemu_argv(b, argv, 48, "/lab/guest.cpio.gz", append, extra);
	run_vmm(argv, 900, &r);
	blk_figures(b, r.out, "qemu.");
	ok = r.status == 0 && strstr(r.out, "GUEST-BLKBENCH ");
	if (!ok)
		qemu_failed("virtio-blk", &r);
	result_free(&r);
	return ok;
}

/* Whether QEMU can have vhost-net here (the module loaded, /dev/vhost-net usable); says why not. */
static bool qemu_vhost_usable(void)
{
	if (lab_sh("modprobe vhost_net 2>/dev/null; [ -c /dev/vhost-net ]") || access("/dev/vhost-net", R_OK | W_OK)) {
		printf("bench: QEMU peer with vhost-net skipped: no usable /dev/vhost-net (modprobe vhost_net)\n");
		return false;
	}
	return true;
}

/* netbench over a tap QEMU opens in the bench's namespace: QEMU's userspace virtio-net, or the
 * kernel's vhost-net. */
static bool qemu_net_one(struct bench *b, int reps, bool vhost)
{
	pthread_t t;
	char *argv[48], append[160];
	char *const extra[] = { "-netdev",
				vhost ? "tap,id=n0,ifname=" TAP ",script=no,downscript=no,vhost=on"
				      : "tap,id=n0,ifname=" TAP ",script=no,downscript=no,vhost=off",
				/* romfile=: no option ROM (-kernel boots; QEMU's data files are not packed) */
				"-device", "virtio-net-pci,netdev=n0,mac=02:00:00:00:00:02,romfile=", NULL };
	struct result r;
	bool ok;

	snprintf(append, sizeof(append), QEMU_CONSOLE " panic=-1 quiet vmmtest=netbench vmmbenchreps=%d "
		 "vmmbenchms=%d", reps, b->io_ms);
	qemu_argv(b, argv, 48, "/lab/guest.cpio.gz", append, extra);
	tap_gone();
	pthread_create(&t, NULL, tap_up, NULL);
	run_vmm(argv, 900, &r);
	pthread_join(t, NULL);
	net_figures(b, r.out, vhost ? "qemu_vhost." : "qemu.", vhost ? "" : ".vhost_off");
	ok = r.status == 0 && strstr(r.out, "GUEST-NETBENCH ");
	if (!ok)
		qemu_failed(vhost ? "virtio-net with vhost-net" : "virtio-net", &r);
	result_free(&r);
	return ok;
}

static void ratios(struct bench *b)
{
	double q = median_of(b, "startup.poweroff"), v = median_of(b, "startup.verbose.poweroff");
	double m = median_of(b, "memory.rss_beyond_guest_ram");

	if (q > 0 && v > 0)
		bench_ratio(b->rep, "boot.verbose_over_quiet", v / q, 1.10, true,
			    "median poweroff time, verbose / quiet serial boot");
	if ((v = median_of(b, "boot.pair.verbose_over_quiet.poweroff")) > 0)
		bench_ratio(b->rep, "boot.pair.verbose_over_quiet.poweroff", v, 1.10, true,
			    "median over pairs (quiet, then verbose) of poweroff time, verbose / quiet");
	if ((v = median_of(b, "boot.pair.verbose_over_quiet.init")) > 0)
		bench_ratio(b->rep, "boot.pair.verbose_over_quiet.init", v, 1.10, true,
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
	if (m >= 0)
		bench_ratio(b->rep, "memory.rss_beyond_ram_over_goal", m / 3.0, 1.0, true,
			    "median RSS beyond guest RAM / 3 MiB (Firecracker: < 5 MiB)");
	if ((m = median_of(b, "memory.rss_beyond_guest_ram.console_disk_nic")) >= 0)
		bench_ratio(b->rep, "memory.console_disk_nic_over_goal", m / 1.0, 1.0, true,
			    "median RSS beyond guest RAM with a console, a disk and a NIC / 1 MiB (issue 22)");
	if ((m = median_of(b, "memory.rss_beyond_guest_ram.vf")) >= 0)
		bench_ratio(b->rep, "memory.vf_over_goal", m / 1.5, 1.0, true,
			    "median RSS beyond guest RAM with a VF passed through / 1.5 MiB (issue 22)");
	if ((v = median_of(b, "startup.pair.guest_init_over_qemu")) > 0)
		bench_ratio(b->rep, "startup.pair.guest_init_over_qemu", v, 0.8, true,
			    "median over pairs (vmm, then QEMU) of launch to the guest's init, vmm / QEMU");
	if ((v = median_of(b, "startup.pair.first_instruction_exit_over_qemu")) > 0)
		bench_ratio(b->rep, "startup.pair.first_instruction_exit_over_qemu", v, 0.5, true,
			    "median over pairs of launch to exit of the Image that powers off at once, vmm / QEMU");
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
		{ "no-qemu", no_argument, NULL, 'n' }, { "text-pages", no_argument, NULL, 't' }, { 0 },
	};
	struct bench b = { .reps = 8, .slow_reps = 4, .io_reps = 8, .io_ms = 500, .disk = LAB_DISK,
			   .quiet_mmio = -1 };
	const char *json = NULL;
	struct utsname u;
	bool peer = true;
	int c;

	while ((c = getopt_long(argc, argv, "", opts, NULL)) != -1) {
		switch (c) {
		case 'q': b.reps = 3, b.slow_reps = 2, b.io_reps = 3, b.io_ms = 300; break;
		case 'j': json = optarg; break;
		case 'd': b.disk = optarg; break;
		case 'o': b.only = optarg; break;
		case 'n': peer = false; break;
		case 't': b.text_pages = true; break;
		default:
			fprintf(stderr, "usage: bench [--quick] [--json FILE] [--disk BLOCKDEV] "
					"[--only startup,verbose,mmio,memory,blk,vfio,net,trace] [--no-qemu] [--text-pages]\n");
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
	struct {
		const char *name;
		void (*run)(struct bench *b);
	} sections[] = {
		{ "startup", startup_quiet }, { "verbose", startup_verbose }, { "mmio", mmio_round_trip },
		{ "memory", memory }, { "blk", blk }, { "vfio", vfio }, { "net", net }, { "trace", trace },
	};
	for (size_t i = 0; i < sizeof(sections) / sizeof(sections[0]); i++) {
		double t0 = now();

		/* trace is a diagnosis, not figures: only when named */
		if (!want(&b, sections[i].name) || (!b.only && !strcmp(sections[i].name, "trace")))
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
