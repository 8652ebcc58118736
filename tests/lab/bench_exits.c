// SPDX-License-Identifier: MIT
/*
 * make bench's exits section (--only exits, issue 38): where a quiet boot's MMIO accesses go, by
 * guest physical region, under vmm and under kvmtool, read off the lab host's KVM tracepoints.
 *
 * What the host's kernel (6.12, arch/arm64/kvm/mmio.c io_mem_abort) traces, per access:
 *   a write:  kvm_mmio "write", then the access goes to the kernel's MMIO bus (the vGIC, an
 *             ioeventfd, a coalesced zone) or, when nothing there takes it, to userspace;
 *   a read:   kvm_mmio "unsatisfied-read" before the bus is even tried, then "read" when the data
 *             is in: at once when the kernel took it, at the next KVM_RUN when userspace did.
 * So every read traces "unsatisfied-read" and the kvm_mmio type alone cannot tell the kernel's
 * accesses from userspace's. KVM_RUN's return does: it traces kvm_userspace_exit with the exit
 * reason. An access went to userspace exactly when the next of these events on its thread is
 * kvm_userspace_exit with KVM_EXIT_MMIO (each exit to userspace follows its own kvm_mmio event),
 * and stayed in the kernel when anything else comes next. Both events, and only they, are on.
 *
 * The trace is the VMM's own: the instance's set_event_pid holds the VMM's pid, written by the
 * child itself before its exec (trace_self), with option event-fork adding every thread and child
 * it creates from then on. Reading /proc/PID/task while it runs would miss a short-lived thread;
 * the filter in the kernel misses none, and keeps out any other VM's accesses.
 */
#include <ctype.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <unistd.h>

#include "tests/lab/bench_lab.h"
#include "tests/lab/labutil.h"

#if !defined(__aarch64__)
void exits_by_region(struct bench *b)
{
	(void)b;
	printf("bench: exits skipped: its regions are the arm64 boards' (vmm's arm64/arm64.h, kvmtool's), "
	       "and the x86 lab has no kvmtool\n");
}
#else
#include "arm64/arm64.h"

#define TRACEFS "/sys/kernel/tracing"
#define INSTANCE TRACEFS "/instances/vmm-bench-exits"
/* the guest kernel's pr_emerg at its power-off: printed even with quiet */
#define POWER_DOWN "reboot: Power down"
#define QUIET "console=ttyS0 earlycon panic=-1 quiet"
#define MAX_WINDOWS 64 /* 64 KiB windows one boot touches: a dozen or so */
#define MAX_THREADS 64 /* a VMM's threads that make kvm_mmio events: its vCPUs */
#define MAX_RUNS 64

enum region {
	R_GICD, R_GICR, R_GITS, R_UART, R_PVPANIC, R_PCI_ECAM, R_PCI_MMIO, R_PCI_MMIO64, R_VIRTIO_MMIO, R_IOPORT,
	R_OTHER, NREG
};
static const char *const region_name[NREG] = {
	"gicd", "gicr", "gits", "uart", "pvpanic", "pci_ecam", "pci_mmio", "pci_mmio64", "virtio_mmio", "ioport",
	"other",
};

struct span {
	enum region r;
	uint64_t base, end;
};

/* vmm's board: arm64/arm64.h. Its redistributors take 128 KiB per vCPU from GICR_BASE up. */
static const struct span vmm_map[] = {
	{ R_GICD, ARM64_GICD_BASE, ARM64_GICD_BASE + ARM64_GICD_SIZE },
	{ R_GITS, ARM64_GITS_BASE, ARM64_GITS_BASE + ARM64_GITS_SIZE },
	{ R_GICR, ARM64_GICR_BASE, ARM64_GICR_LIMIT },
	{ R_UART, ARM64_UART_BASE, ARM64_UART_BASE + ARM64_UART_SIZE },
	{ R_PVPANIC, ARM64_PVPANIC_BASE, ARM64_PVPANIC_BASE + ARM64_PVPANIC_SIZE },
	{ R_PCI_ECAM, ARM64_PCI_ECAM_BASE, ARM64_PCI_ECAM_BASE + ARM64_PCI_ECAM_SIZE },
	{ R_PCI_MMIO, ARM64_PCI_MMIO32_BASE, ARM64_PCI_MMIO32_BASE + ARM64_PCI_MMIO32_SIZE },
	{ R_PCI_MMIO64, ARM64_PCI_MMIO64_BASE, ARM64_PCI_MMIO64_BASE + ARM64_PCI_MMIO64_SIZE },
};

/* kvmtool 0.20170904's arm64 map, as facts read from its source (arm/include/arm-common/kvm-arch.h,
 * arm/gic.c, hw/serial.c, arm/pci.c), for the bench's 2 vCPUs and --irqchip gicv3-its: the
 * distributor is the 64 KiB below 0x40000000, a 128 KiB redistributor per vCPU below it, then the
 * ITS (128 KiB, and a 64 KiB page it reserves beside it); its I/O port window at 0 holds the four
 * 8250s (ttyS0-3 at 0x3f8, 0x2f8, 0x3e8, 0x2e8, 8 bytes each), virtio-mmio devices are placed from
 * 0x10000 up, and PCI's config space (CAM, not ECAM, 16 MiB: named pci_ecam for the pairing) and
 * memory window follow 0x40000000. The windows table below shows the raw addresses either way. */
#define KT_GICD 0x3fff0000ULL
#define KT_GICR (KT_GICD - 2 * 0x20000ULL)
#define KT_GITS (KT_GICR - 0x30000ULL)
static const struct span kvmtool_map[] = {
	{ R_GICD, KT_GICD, 0x40000000ULL },
	{ R_GICR, KT_GICR, KT_GICD },
	{ R_GITS, KT_GITS, KT_GICR },
	{ R_UART, 0x2e8, 0x400 }, /* before ioport: the first span that holds an address names it */
	{ R_IOPORT, 0, 0x10000 },
	{ R_VIRTIO_MMIO, 0x10000, KT_GITS },
	{ R_PCI_ECAM, 0x40000000ULL, 0x41000000ULL },
	{ R_PCI_MMIO, 0x41000000ULL, 0x80000000ULL },
};

struct vmm_kind {
	const char *who, *prefix; /* "vmm", ""; "kvmtool", "kvmtool." */
	const struct span *map;
	size_t nmap;
};

/* One boot's accesses (each counted once: its "write" or "unsatisfied-read"). */
struct tally {
	bool ok;
	unsigned all[NREG], kern[NREG], user[NREG];
	unsigned unclassified; /* the trace ended before anything followed the access */
	unsigned unparsed;     /* lines that did not parse, and MMIO exits with no access before them */
	uint64_t win[MAX_WINDOWS];
	unsigned win_n[MAX_WINDOWS];
	size_t nwin;
	unsigned win_over; /* accesses past MAX_WINDOWS windows */
};

/* A thread's access waiting for the event after it. */
struct pending {
	int tid;
	int region; /* -1: none */
};

static bool iput(const char *file, const char *text)
{
	char path[160];
	int fd;

	snprintf(path, sizeof(path), INSTANCE "/%s", file);
	/* O_TRUNC: on "trace" it empties the buffer, on "set_event_pid" it clears the list */
	if ((fd = open(path, O_WRONLY | O_TRUNC | O_CLOEXEC)) < 0)
		return false;
	bool ok = write(fd, text, strlen(text)) == (ssize_t)strlen(text);

	close(fd);
	return ok;
}

/* Whether the event's format file holds every string in want (NULL-terminated). */
static bool format_has(const char *event, const char *const want[])
{
	char path[128];

	snprintf(path, sizeof(path), TRACEFS "/events/kvm/%s/format", event);
	char *f = lab_slurp(path, NULL);
	bool ok = f != NULL;

	for (size_t i = 0; ok && want[i]; i++)
		ok = strstr(f, want[i]) != NULL;
	free(f);
	return ok;
}

/* The instance, fresh, with the two events on and tracing off; NULL, or why not. */
static const char *instance_up(void)
{
	static char why[192];
	static const char *const mmio_fmt[] = { "\"mmio %s len %u gpa 0x%llx val 0x%llx\"", "\"unsatisfied-read\"",
						"\"read\"", "\"write\"", NULL };
	/* (its reason names are "KVM_EXIT_" "MMIO" in the format file: two literals, not checked) */
	static const char *const exit_fmt[] = { "\"reason %s (%d)\"", NULL };

	if (access(TRACEFS "/instances", W_OK) && mount("tracefs", TRACEFS, "tracefs", 0, NULL) < 0 && errno != EBUSY)
		return "no writable tracefs at " TRACEFS " (not root, or a kernel without tracing)";
	if (access(TRACEFS "/events/kvm/kvm_mmio/format", R_OK) ||
	    access(TRACEFS "/events/kvm/kvm_userspace_exit/format", R_OK))
		return "the host has no kvm:kvm_mmio or kvm:kvm_userspace_exit event (KVM not loaded?)";
	/* the text this file parses: the print formats of 6.12's include/trace/events/kvm.h */
	if (!format_has("kvm_mmio", mmio_fmt) || !format_has("kvm_userspace_exit", exit_fmt))
		return "the host's kvm_mmio or kvm_userspace_exit prints another format than the one parsed here";
	if (rmdir(INSTANCE) && errno != ENOENT) {
		snprintf(why, sizeof(why), "a stale %s cannot be removed: %s", INSTANCE, strerror(errno));
		return why;
	}
	if (mkdir(INSTANCE, 0755)) {
		snprintf(why, sizeof(why), "cannot create %s: %s", INSTANCE, strerror(errno));
		return why;
	}
	iput("options/record-tgid", "0"); /* the line's layout parse_head reads; it copes with either */
	/* a new instance traces at once; mono: one clock for every CPU, so a thread's events stay in
	 * order when it moves between CPUs */
	if (!iput("tracing_on", "0") || !iput("buffer_size_kb", "4096") || !iput("trace_clock", "mono") ||
	    !iput("options/event-fork", "1") || !iput("events/kvm/kvm_mmio/enable", "1") ||
	    !iput("events/kvm/kvm_userspace_exit/enable", "1"))
		return "cannot set up " INSTANCE " (buffer_size_kb, trace_clock, options/event-fork or the events)";
	return NULL;
}

static void instance_down(void)
{
	iput("tracing_on", "0");
	if (rmdir(INSTANCE) && errno != ENOENT)
		printf("bench: exits: cannot remove %s: %s\n", INSTANCE, strerror(errno));
}

/* text into an instance file, in the child after fork: open, write and close only */
static bool child_put(const char *path, const char *text, size_t len)
{
	int fd = open(path, O_WRONLY | O_TRUNC);
	bool ok = fd >= 0 && write(fd, text, len) == (ssize_t)len;

	if (fd >= 0)
		close(fd);
	return ok;
}

/* In the VMM's process before its exec: its pid into the filter, then tracing on. Without the
 * filter it exits 126: an unfiltered trace would count others' accesses, a failed run says so. */
static void trace_self(const void *arg)
{
	char num[24], *p = num + sizeof(num);
	unsigned long pid = (unsigned long)getpid();

	(void)arg;
	do
		*--p = (char)('0' + pid % 10);
	while ((pid /= 10));
	if (!child_put(INSTANCE "/set_event_pid", p, (size_t)(num + sizeof(num) - p)) ||
	    !child_put(INSTANCE "/tracing_on", "1", 1))
		_exit(126);
}

/* After the guest's power-off line: up to 10 s for the VMM to end by itself (run_vmm_opts then
 * sends SIGKILL, a no-op on a process that ended). kvmtool 0.20170904 now and then hangs in its
 * teardown (bench_kvmtool.c); its guest's accesses are all traced by then. */
static void wait_exit(int pid, void *arg)
{
	char path[40];

	(void)arg;
	snprintf(path, sizeof(path), "/proc/%d/stat", pid);
	for (int i = 0; i < 200; i++) {
		char *s = lab_slurp(path, NULL), *p = s ? strrchr(s, ')') : NULL;
		bool ended = !p || (p[1] == ' ' && (p[2] == 'Z' || p[2] == 'X'));

		free(s);
		if (ended)
			return;
		usleep(50 * 1000);
	}
}

/* "<comm>-<tid> [<cpu>] <flags> <secs>: <event>: <text>" (with record-tgid "-<tid> (<tgid>) [").
 * The comm may hold spaces and dashes: the tid is read back from the CPU's bracket. The event's
 * start, or NULL. */
static const char *parse_head(const char *line, int *tid)
{
	for (const char *p = strstr(line, " ["); p; p = strstr(p + 1, " [")) {
		const char *q = p + 2, *e = p, *d;

		while (isdigit((unsigned char)*q))
			q++;
		if (q == p + 2 || *q != ']')
			continue;
		while (e > line && e[-1] == ' ')
			e--;
		if (e > line && e[-1] == ')') {
			while (e > line && e[-1] != '(')
				e--;
			while (e > line && (e[-1] == '(' || e[-1] == ' '))
				e--;
		}
		for (d = e; d > line && isdigit((unsigned char)d[-1]);)
			d--;
		if (d == e || e - d > 9 || d == line || d[-1] != '-')
			return NULL;
		*tid = atoi(d);
		const char *ts = strstr(q, ": ");

		return ts ? ts + 2 : NULL;
	}
	return NULL;
}

static enum region region_of(const struct vmm_kind *k, uint64_t gpa)
{
	for (size_t i = 0; i < k->nmap; i++)
		if (gpa >= k->map[i].base && gpa < k->map[i].end)
			return k->map[i].r;
	return R_OTHER;
}

static void count_window(struct tally *t, uint64_t gpa)
{
	uint64_t w = gpa & ~0xffffULL;
	size_t i = 0;

	while (i < t->nwin && t->win[i] != w)
		i++;
	if (i == t->nwin) {
		if (t->nwin == MAX_WINDOWS) {
			t->win_over++;
			return;
		}
		t->win[t->nwin++] = w;
	}
	t->win_n[i]++;
}

static struct pending *thread_of(struct pending *th, size_t *n, int tid)
{
	for (size_t i = 0; i < *n; i++)
		if (th[i].tid == tid)
			return &th[i];
	if (*n == MAX_THREADS)
		return NULL;
	th[*n] = (struct pending){ tid, -1 };
	return &th[(*n)++];
}

/* The thread's waiting access, if any, resolved: to userspace or kept in the kernel. */
static void resolve(struct tally *t, struct pending *p, bool user)
{
	if (p->region < 0)
		return;
	(user ? t->user : t->kern)[p->region]++;
	p->region = -1;
}

/* One event line of the VMM's into t. */
static void account(const struct vmm_kind *k, struct tally *t, struct pending *th, size_t *nth, const char *line)
{
	int tid;
	const char *ev = parse_head(line, &tid);
	struct pending *p = ev ? thread_of(th, nth, tid) : NULL;
	char type[24];
	unsigned len;
	unsigned long long gpa, val;

	if (!p) {
		t->unparsed++;
	} else if (!strncmp(ev, "kvm_userspace_exit: ", 20)) {
		bool mmio = !strncmp(ev + 20, "reason KVM_EXIT_MMIO ", 21);

		if (mmio && p->region < 0)
			t->unparsed++; /* an exit to userspace for MMIO with no access traced before it */
		resolve(t, p, mmio);
	} else if (strncmp(ev, "kvm_mmio: ", 10) ||
		   sscanf(ev + 10, "mmio %23s len %u gpa %llx val %llx", type, &len, &gpa, &val) != 4) {
		t->unparsed++;
	} else if (!strcmp(type, "read")) {
		resolve(t, p, false); /* the data came at once: the kernel's (userspace's is resolved above) */
	} else if (!strcmp(type, "write") || !strcmp(type, "unsatisfied-read")) {
		resolve(t, p, false); /* another access first: the earlier one stayed in the kernel */
		p->region = region_of(k, gpa);
		t->all[p->region]++;
		count_window(t, gpa);
	} else {
		t->unparsed++;
	}
}

/* The instance's trace into t; false (said why) when it is unreadable or lost events. */
static bool read_trace(const struct vmm_kind *k, struct tally *t)
{
	FILE *f = fopen(INSTANCE "/trace", "re");
	struct pending th[MAX_THREADS];
	size_t nth = 0, cap = 0;
	unsigned long kept = 0, written = 0;
	char *line = NULL;

	if (!f) {
		printf("bench: exits: %s: cannot read %s/trace: %s\n", k->who, INSTANCE, strerror(errno));
		return false;
	}
	while (getline(&line, &cap, f) > 0) {
		if (line[0] == '#')
			sscanf(line, "# entries-in-buffer/entries-written: %lu/%lu", &kept, &written);
		else
			account(k, t, th, &nth, line);
	}
	free(line);
	fclose(f);
	for (size_t i = 0; i < nth; i++)
		t->unclassified += th[i].region >= 0;
	if (written > kept) {
		printf("bench: exits: %s: the trace lost %lu of %lu events (buffer_size_kb too small); run "
		       "left out\n", k->who, written - kept, written);
		return false;
	}
	return true;
}

static unsigned sum(const unsigned *v)
{
	unsigned s = 0;

	for (int r = 0; r < NREG; r++)
		s += v[r];
	return s;
}

/* One traced quiet boot of argv to its power-off, into t (t->ok: it counts). */
static void traced_boot(const struct vmm_kind *k, char *const argv[], bool kvmtool, int run, struct tally *t)
{
	struct run_opts o = { .timeout = 300, .term_on = POWER_DOWN, .on_match = wait_exit, .signal = SIGKILL,
			      .child = trace_self };
	struct result r;
	unsigned long long mmio, kvm;

	/* lkvm gets a stdin nobody types into, as bench_kvmtool.c gives it: on /dev/null its console
	 * thread reads EOF forever and feeds the guest's UART */
	if (kvmtool)
		o.input = "";
	memset(t, 0, sizeof(*t));
	iput("tracing_on", "0");
	iput("set_event_pid", "");
	iput("trace", "");
	run_vmm_opts(argv, &o, &r);
	iput("tracing_on", "0");
	if (r.banner_secs < 0 || !strstr(r.out, POWER_DOWN)) {
		size_t e = strlen(r.err);

		printf("bench: exits: %s run %d: no power-off (exit %d); left out\n", k->who, run + 1, r.status);
		if (kvmtool)
			printf("bench: exits: lkvm's stderr ends:\n%s\n", r.err + (e > 1000 ? e - 1000 : 0));
		else
			fail_note("exits, quiet boot", &r);
	} else {
		t->ok = read_trace(k, t);
	}
	iput("set_event_pid", "");
	iput("trace", "");
	if (t->ok) {
		printf("bench: exits: %s run %d: %u MMIO accesses, %u in the kernel, %u to userspace", k->who, run + 1,
		       sum(t->all), sum(t->kern), sum(t->user));
		/* vmm's own count of its MMIO exits, to check the trace's classification against */
		if (!kvmtool && exit_table(r.err, &mmio, &kvm) == 0)
			printf(" (vmm's exit table: %llu)", mmio);
		if (t->unclassified || t->unparsed || t->win_over)
			printf("; %u unclassified, %u lines unparsed, %u past %d windows", t->unclassified, t->unparsed,
			       t->win_over, MAX_WINDOWS);
		printf("\n");
	}
	result_free(&r);
}

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return (x > y) - (x < y);
}

/* The median of v[0..n) (sorted in place), as bench_summary takes it; -1 for none. */
static double median(double *v, size_t n)
{
	if (!n)
		return -1;
	qsort(v, n, sizeof(*v), cmp_double);
	return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

/* Which count of a tally a median is taken of. */
enum part { P_ALL, P_KERN, P_USER };

static double region_count(const struct tally *t, int r, enum part p)
{
	const unsigned *v = p == P_ALL ? t->all : p == P_KERN ? t->kern : t->user;

	return r == NREG ? sum(v) : v[r]; /* NREG: the total */
}

/* The median over the runs that count; -1 when none does, or (r < NREG) none touched region r. */
static double region_median(const struct tally *t, int n, int r, enum part p)
{
	double v[MAX_RUNS];
	size_t k = 0;
	bool seen = r == NREG; /* the total is a figure even at 0 */

	for (int i = 0; i < n && k < MAX_RUNS; i++) {
		if (!t[i].ok)
			continue;
		if (r < NREG && t[i].all[r])
			seen = true;
		v[k++] = region_count(&t[i], r, p);
	}
	return seen ? median(v, k) : -1;
}

static double window_median(const struct tally *t, int n, uint64_t w)
{
	double v[MAX_RUNS];
	size_t k = 0;
	bool seen = false;

	for (int i = 0; i < n && k < MAX_RUNS; i++) {
		if (!t[i].ok)
			continue;
		v[k] = 0;
		for (size_t j = 0; j < t[i].nwin; j++)
			if (t[i].win[j] == w)
				v[k] = t[i].win_n[j], seen = true;
		k++;
	}
	return seen ? median(v, k) : -1;
}

/* Each run's counts as figures PREFIX exits.quiet_boot.mmio.REGION (the regions some run touched)
 * and .total, .in_kernel, .userspace. */
static void add_figures(struct bench *b, const struct vmm_kind *k, const struct tally *t, int n)
{
	char name[80];

	for (int r = 0; r <= NREG; r++) {
		if (region_median(t, n, r, P_ALL) < 0)
			continue;
		for (int i = 0; i < n; i++) {
			if (!t[i].ok)
				continue;
			snprintf(name, sizeof(name), "%sexits.quiet_boot.mmio.%s", k->prefix,
				 r < NREG ? region_name[r] : "total");
			add(b, name, "exits", false, region_count(&t[i], r, P_ALL));
			if (r < NREG)
				continue;
			snprintf(name, sizeof(name), "%sexits.quiet_boot.mmio.in_kernel", k->prefix);
			add(b, name, "exits", false, region_count(&t[i], r, P_KERN));
			snprintf(name, sizeof(name), "%sexits.quiet_boot.mmio.userspace", k->prefix);
			add(b, name, "exits", false, region_count(&t[i], r, P_USER));
		}
	}
}

/* "401 (312/89)": a region's median accesses, then the medians of its in-kernel and userspace
 * ones (each a median of its own, so the parts need not add up); "-" when untouched. */
static const char *cell(char *buf, size_t n, const struct tally *t, int runs, int r)
{
	double a = region_median(t, runs, r, P_ALL);

	if (a < 0)
		snprintf(buf, n, "-");
	else
		snprintf(buf, n, "%g (%g/%g)", a, region_median(t, runs, r, P_KERN), region_median(t, runs, r, P_USER));
	return buf;
}

/* The region a map gives r first, as "0x08000000"; "" for other and the total. */
static const char *base_of(char *buf, size_t n, const struct vmm_kind *k, int r)
{
	buf[0] = 0;
	for (size_t i = 0; r < NREG && i < k->nmap; i++)
		if (k->map[i].r == (enum region)r) {
			snprintf(buf, n, "0x%08llx", (unsigned long long)k->map[i].base);
			break;
		}
	return buf;
}

static void region_table(const struct vmm_kind *kv, const struct tally *v, const struct vmm_kind *kk,
			 const struct tally *kt, int n)
{
	char a[48], c[48], ba[24], bc[24];

	printf("bench: exits: MMIO accesses per quiet boot by region of each VMM's own map, medians over the "
	       "runs: all (in the kernel/to userspace)\n");
	printf("bench: exits: %-12s %-12s %-18s %-12s %s\n", "region", "vmm at", "vmm", "kvmtool at", "kvmtool");
	for (int r = 0; r <= NREG; r++) {
		if (region_median(v, n, r, P_ALL) < 0 && region_median(kt, n, r, P_ALL) < 0)
			continue;
		printf("bench: exits: %-12s %-12s %-18s %-12s %s\n", r < NREG ? region_name[r] : "total",
		       base_of(ba, sizeof(ba), kv, r), cell(a, sizeof(a), v, n, r), base_of(bc, sizeof(bc), kk, r),
		       cell(c, sizeof(c), kt, n, r));
	}
}

static int cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return (x > y) - (x < y);
}

/* Every 64 KiB window either VMM touched, in address order, with each one's median accesses. */
static void window_table(const struct tally *v, const struct tally *kt, int n)
{
	uint64_t *w = calloc((size_t)n * 2 * MAX_WINDOWS, sizeof(*w));
	size_t nw = 0;

	for (int i = 0; w && i < n; i++) {
		for (size_t j = 0; j < v[i].nwin; j++)
			w[nw++] = v[i].win[j];
		for (size_t j = 0; j < kt[i].nwin; j++)
			w[nw++] = kt[i].win[j];
	}
	qsort(w, nw, sizeof(*w), cmp_u64);
	printf("bench: exits: by 64 KiB window (its base), medians over the runs\n");
	printf("bench: exits: %-14s %8s %8s\n", "window", "vmm", "kvmtool");
	for (size_t i = 0; i < nw; i++) {
		if (i && w[i] == w[i - 1])
			continue;
		double a = window_median(v, n, w[i]), c = window_median(kt, n, w[i]);
		char base[24], sa[16] = "-", sc[16] = "-";

		snprintf(base, sizeof(base), "0x%08llx", (unsigned long long)w[i]);
		if (a >= 0)
			snprintf(sa, sizeof(sa), "%g", a);
		if (c >= 0)
			snprintf(sc, sizeof(sc), "%g", c);
		printf("bench: exits: %-14s %8s %8s\n", base, sa, sc);
	}
	free(w);
}

/* b->reps traced quiet boots of the built-in guest under vmm and (when the peer runs) kvmtool, in
 * turns (kvmtool first in odd rounds, so that drift in the lab hits both), then the figures and
 * the two tables. */
void exits_by_region(struct bench *b)
{
	static const struct vmm_kind kv = { "vmm", "", vmm_map, sizeof(vmm_map) / sizeof(vmm_map[0]) };
	static const struct vmm_kind kk = { "kvmtool", "kvmtool.", kvmtool_map,
					    sizeof(kvmtool_map) / sizeof(kvmtool_map[0]) };
	char *const vargv[] = { VMM, "run", "-c", "2", "-m", "512M", "-p", QUIET, NULL };
	/* as bench_kvmtool.c runs it: the same kernel, RAM, vCPUs, command line and cpio */
	char *const kargv[] = { KVMTOOL_BIN, "run", "-k", KVMTOOL_IMAGE, "-i", BUILTIN_GUEST, "-m", "512", "-c", "2",
				"--irqchip", "gicv3-its", "--console", "serial", "-p", QUIET, NULL };
	const char *why = instance_up();
	int n = b->reps < MAX_RUNS ? b->reps : MAX_RUNS;
	int kt_fails = b->kvmtool ? 0 : 2; /* as startup: a second failure ends kvmtool's runs */

	_Static_assert(RAM_MIB == 512, "kargv's -m and vargv's 512M are RAM_MIB");
	if (why) {
		printf("bench: exits skipped: %s\n", why);
		instance_down();
		return;
	}
	if (!b->kvmtool)
		printf("bench: exits: vmm only: the kvmtool peer is not running (the line above says why)\n");
	struct tally *v = calloc(n, sizeof(*v)), *kt = calloc(n, sizeof(*kt));

	for (int i = 0; v && kt && i < n; i++) {
		for (int j = 0; j < 2; j++) {
			if (j == i % 2) {
				traced_boot(&kv, vargv, false, i, &v[i]);
			} else if (kt_fails < 2) {
				traced_boot(&kk, kargv, true, i, &kt[i]);
				kt_fails += !kt[i].ok;
			}
		}
	}
	instance_down();
	if (v && kt) {
		add_figures(b, &kv, v, n);
		add_figures(b, &kk, kt, n);
		region_table(&kv, v, &kk, kt, n);
		window_table(v, kt, n);
	}
	free(v);
	free(kt);
}
#endif
