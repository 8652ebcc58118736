// SPDX-License-Identifier: MIT
/* make bench's memory section: vmm's RSS beyond guest RAM read from smaps, and for --text-pages the
 * kernel's fault-around window, the resident pages of vmm's text and glibc's heap by chunk. */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <sched.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <sys/types.h>
#include <unistd.h>

#include "tests/lab/bench_lab.h"
#include "tests/lab/labutil.h"

/* The kernel's fault-around window (debugfs, mounted when it is not): the old value, -1 when it
 * cannot be set (then --text-pages' resident pages come in 64 KiB windows). */
long set_fault_around(long bytes)
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

#define MAX_TASKS 64

struct task_sw {
	int tid;
	long long n; /* voluntary_ctxt_switches */
	char comm[20];
};

/* Each thread of pid: its voluntary context switches (a sleep that ended: a wake-up) and name. */
static int task_switches(int pid, struct task_sw *t, int max)
{
	char path[320], line[128];
	struct dirent *d;
	DIR *dir;
	int k = 0;

	snprintf(path, sizeof(path), "/proc/%d/task", pid);
	if (!(dir = opendir(path)))
		return 0;
	while ((d = readdir(dir)) && k < max) {
		FILE *f;

		if (d->d_name[0] == '.')
			continue;
		t[k] = (struct task_sw){ .tid = atoi(d->d_name), .n = -1 };
		snprintf(path, sizeof(path), "/proc/%d/task/%s/status", pid, d->d_name);
		if (!(f = fopen(path, "r")))
			continue;
		while (fgets(line, sizeof(line), f)) {
			if (sscanf(line, "voluntary_ctxt_switches: %lld", &t[k].n) == 1)
				continue;
			if (!strncmp(line, "Name:", 5))
				sscanf(line + 5, " %19[^\n]", t[k].comm); /* QEMU's "CPU 0/KVM" has a space */
		}
		fclose(f);
		k += t[k].n >= 0;
	}
	closedir(dir);
	return k;
}

/* The VMM's wake-ups while the guest idles: voluntary context switches per second, summed over its
 * threads, over WAKE_SECONDS; with breakdown a line per thread (what wakes, how often). */
static void read_wakeups(int pid, struct rss_probe *p)
{
	struct task_sw a[MAX_TASKS], z[MAX_TASKS];
	int na = task_switches(pid, a, MAX_TASKS);
	double t0 = now();

	sleep(WAKE_SECONDS);
	int nz = task_switches(pid, z, MAX_TASKS);
	double secs = now() - t0, sum = 0;

	if (!na || !nz || secs <= 0) {
		printf("bench: %s: no thread's switches readable in /proc/%d/task\n", p->wake_figure, pid);
		return;
	}
	double own = 0; /* the VMM's own threads: all but the vCPUs, whose wake-ups are the guest's */
	char name[96];

	for (int i = 0; i < nz; i++)
		for (int j = 0; j < na; j++) {
			if (a[j].tid != z[i].tid)
				continue;
			sum += (double)(z[i].n - a[j].n);
			if (!comm_is_vcpu(z[i].comm))
				own += (double)(z[i].n - a[j].n);
			printf("bench: wakeups %s thread %d %-16s %.1f/s\n", p->wake_figure, z[i].tid, z[i].comm,
			       (z[i].n - a[j].n) / secs);
		}
	add(p->b, p->wake_figure, "per s", false, sum / secs);
	snprintf(name, sizeof(name), "%s.non_vcpu", p->wake_figure);
	add(p->b, name, "per s", false, own / secs);
}

/* RSS of every mapping but guest RAM (the one anonymous mapping of exactly RAM_MIB); with breakdown,
 * a line per mapping that has any ("bench: smaps KB RANGE PERMS NAME") so docs/benchmarks.md can say
 * where each 100 KiB goes, and with --text-pages the resident pages of vmm's text. */
void read_rss(int pid, void *arg)
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
			skipping = !found && hi - lo == (p->ram_bytes ? p->ram_bytes : (unsigned long long)RAM_MIB << 20);
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
		printf("bench: no mapping of exactly %llu MiB (guest RAM) in %s\n",
		       (p->ram_bytes ? p->ram_bytes : (unsigned long long)RAM_MIB << 20) >> 20, path);
	if (p->wake_figure && !p->b->text_pages)
		read_wakeups(pid, p);
}

/* What vmm said ended start-up (VMM_TIMINGS' line), as the report prints it. */
const char *release_why(const char *err)
{
	static char kept[200];
	const char *k = "start-up's memory given back at the guest's ", *n = "start-up's memory kept: ";
	const char *w = err ? strstr(err, k) : NULL;

	if (!w && err && (w = strstr(err, n))) { /* why not, as vmm said it */
		snprintf(kept, sizeof(kept), "%.*s", (int)strcspn(w, "\n"), w);
		return kept;
	}
	if (!w)
		return "vmm said nothing of it";
	w += strlen(k);
	return !strncmp(w, "first quiet", 11) ? "its first quiet second" :
	       !strncmp(w, "boot-end", 8) ? "its boot-end marker" : "the deadline";
}

/* A memory figure's name: with --text-pages (fault-around of one page) never the real figure's. */
const char *mem_figure(const struct bench *b, const char *name, char *buf, size_t n)
{
	snprintf(buf, n, "%s%s", name, b->text_pages ? ".fault_around_4k" : "");
	return buf;
}

/* The test guest up and idle on virtio-console, printing none of vmm's markers (as a user's guest
 * would not: start-up's memory then goes at its first quiet second): vmm's RSS and wake-ups; its
 * exits are the device baseline. Then the same with a disk and a NIC (a tap in a network namespace
 * of the bench's own, as net does): the configuration the 1 MiB goal is about. */
void memory(struct bench *b)
{
	char *argv[32], fig[96];
	struct rss_probe p = { b, mem_figure(b, "memory.rss_beyond_guest_ram", fig, sizeof(fig)), true, 0, 0,
				"idle.wakeups_per_s" };
	struct run_opts o = { .timeout = 300, .term_on = "GUEST-HOLD", .on_match = read_rss, .match_arg = &p };
	bool peer = b->qemu, kt = b->kvmtool;

	test_guest_argv(argv, 32, "hold vmmplain=1", NULL);
	for (int i = 0; i < b->reps; i++) {
		struct result r;
		unsigned long long mmio, kvm;

		p.breakdown = i == 0;
		run_vmm_opts(argv, &o, &r);
		double rel = timing(r.err, "released");

		if (p.breakdown) /* vmm's start-up memory goes at the guest's first quiet second */
			printf("bench: start-up memory released before the smaps read: %s (%s)\n",
			       rel > 0 && rel < p.read_at ? "yes" : "no", release_why(r.err));
		if (!strstr(r.out, "GUEST-HOLD") || exit_table(r.err, &mmio, &kvm) < 0)
			fail_note("memory (test guest, idle)", &r);
		else
			add(b, "exits.test_guest_idle_boot.userspace", "exits", false, mmio);
		result_free(&r);
		if (peer)
			peer = qemu_memory_one(b);
		if (kt)
			kt = kvmtool_memory_one(b);
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
	p.wake_figure = NULL;
	test_guest_argv(argv, 32, "hold-devices vmmplain=1", extra); /* the guest's drivers bound and used once */
	for (int i = 0; i < b->reps; i++) { /* as many as the idle figure's: a goal is judged from 8 */
		struct result r;

		p.breakdown = i == 0;
		run_vmm_opts(argv, &o, &r);
		double rel = timing(r.err, "released");

		if (p.breakdown)
			printf("bench: start-up memory released before the smaps read (disk and NIC): %s (%s)\n",
			       rel > 0 && rel < p.read_at ? "yes" : "no", release_why(r.err));
		if (!strstr(r.out, "GUEST-HOLD") || !strstr(r.out, "GUEST-DEVICES-DISK 0"))
			fail_note("memory (console, disk and NIC)", &r);
		result_free(&r);
	}
	if (setns(home, CLONE_NEWNET) < 0)
		printf("bench: back to the host's network namespace: %s (the vfio section will fail)\n", strerror(errno));
	close(home);
}
