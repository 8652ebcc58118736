// SPDX-License-Identifier: MIT
/*
 * The host's tracepoints for one VM, with perf_event_open and no library: per CPU, one event per
 * tracepoint (system-wide, pid -1: an event on a task's own fd misses a sched_waking raised from
 * another CPU's context), filtered in the kernel to this VM's vCPU threads and IRQ numbers, all of
 * a CPU's events into one ring (PERF_EVENT_IOC_SET_OUTPUT), stamped with CLOCK_MONOTONIC_RAW. Opened
 * disabled: trace_collect_enable switches them on for a workload's window. Lost records arrive as
 * PERF_RECORD_LOST and are counted; the event store's cap counts what it turned away.
 */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <linux/perf_event.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "trace/trace.h"

#define RING_PAGES 256 /* data pages per CPU ring: 1 MiB with 4 KiB pages */
#define FORMAT_MAX 16384
#define FILTER_MAX 4096

struct trace_collect {
	int ncpu;
	struct tp_format fmt[TEV_KIND_MAX];
	bool have[TEV_KIND_MAX];
	struct tev_decoder dec;
	int *fd; /* ncpu * TEV_KIND_MAX, -1 unused; the first opened per CPU owns the ring */
	int *ring_fd; /* per CPU */
	void **ring;  /* per CPU: the mmap (metadata page + data) */
	size_t ring_len, data_len;
	uint8_t *copy; /* a ring's records copied out, unwrapped */
	struct attrib_events ev;
	uint64_t enabled_at, disabled_at; /* CLOCK_MONOTONIC_RAW ns */
	bool on;
};

static const char *const tracefs_roots[] = { "/sys/kernel/tracing", "/sys/kernel/debug/tracing" };

static bool required(unsigned int kind)
{
	return kind == TEV_KVM_ENTRY || kind == TEV_KVM_EXIT || kind == TEV_VCPU_WAKEUP || kind == TEV_SCHED_WAKING ||
	       kind == TEV_SCHED_SWITCH;
}

static uint64_t mono_raw_ns(void)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC_RAW, &t);
	return (uint64_t)t.tv_sec * 1000000000ull + (uint64_t)t.tv_nsec;
}

static const char *tracefs_root(void)
{
	for (size_t i = 0; i < sizeof(tracefs_roots) / sizeof(tracefs_roots[0]); i++) {
		char p[96];

		snprintf(p, sizeof(p), "%s/events", tracefs_roots[i]);
		if (access(p, R_OK | X_OK) == 0)
			return tracefs_roots[i];
	}
	return NULL;
}

/* 0, 1 when the event is missing on this kernel, -errno when unreadable */
static int format_read(const char *root, unsigned int kind, struct tp_format *f, char *why, size_t n)
{
	char path[192], err[128], *text = malloc(FORMAT_MAX);
	ssize_t len = -1;

	if (!text)
		return -ENOMEM;
	snprintf(path, sizeof(path), "%s/events/%s/%s/format", root, tev_kind_system(kind), tev_kind_name(kind));
	int fd = open(path, O_RDONLY | O_CLOEXEC);

	if (fd >= 0) {
		len = read(fd, text, FORMAT_MAX);
		close(fd);
	}
	int e = len < 0 ? errno : 0;

	if (len < 0) {
		free(text);
		if (e == ENOENT)
			return 1;
		snprintf(why, n, "%s: %s", path, strerror(e));
		return -e;
	}
	int r = tp_format_parse(text, (size_t)len, f, err, sizeof(err));

	free(text);
	if (r < 0)
		snprintf(why, n, "%s: %s", path, err);
	return r;
}

static void cat(char *buf, size_t size, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
static void cat(char *buf, size_t size, const char *fmt, ...)
{
	size_t l = strlen(buf);
	va_list ap;

	if (l + 1 >= size)
		return;
	va_start(ap, fmt);
	vsnprintf(buf + l, size - l, fmt, ap);
	va_end(ap);
}

/* The kernel-side filter that keeps a kind's events to this VM; "" when it takes none (the kind
 * is then not opened). */
static void filter_for(unsigned int kind, const struct attrib_vm *vm, char *f, size_t size)
{
	f[0] = 0;
	switch (kind) {
	case TEV_SCHED_WAKING:
	case TEV_SCHED_SWITCH:
		for (size_t i = 0; i < vm->nvcpu; i++) {
			if (kind == TEV_SCHED_WAKING)
				cat(f, size, "%spid == %d", i ? " || " : "", vm->vcpu_tid[i]);
			else
				cat(f, size, "%sprev_pid == %d || next_pid == %d", i ? " || " : "", vm->vcpu_tid[i],
				    vm->vcpu_tid[i]);
		}
		break;
	case TEV_IRQ_ENTRY:
	case TEV_IRQ_EXIT:
		for (size_t i = 0; i < vm->nirq; i++)
			cat(f, size, "%sirq == %d", i ? " || " : "", vm->irq[i].irq);
		break;
	case TEV_HRTIMER_ENTRY:
		if (vm->bg_timer_fn)
			cat(f, size, "function == 0x%" PRIx64, vm->bg_timer_fn);
		break;
	case TEV_HRTIMER_EXIT:
		break; /* nothing to tell one VM's from another's: left out; the join takes the bg-timer
			* entry nearest before the waking on its CPU */
	default:
		for (size_t i = 0; i < vm->nvcpu; i++)
			cat(f, size, "%scommon_pid == %d", i ? " || " : "", vm->vcpu_tid[i]);
	}
	if (strlen(f) + 1 >= size) /* cut: refuse rather than filter wrongly */
		f[0] = 0;
}

static int open_one(struct trace_collect *c, unsigned int kind, int cpu, const char *filter, char *why, size_t n)
{
	struct perf_event_attr a = {
		.type = PERF_TYPE_TRACEPOINT, .size = sizeof(a), .config = c->fmt[kind].id, .sample_period = 1,
		.sample_type = PERF_SAMPLE_IDENTIFIER | PERF_SAMPLE_TID | PERF_SAMPLE_TIME | PERF_SAMPLE_CPU |
			       PERF_SAMPLE_RAW,
		.disabled = 1, .sample_id_all = 1, .use_clockid = 1, .clockid = CLOCK_MONOTONIC_RAW, .watermark = 1,
		.wakeup_watermark = (uint32_t)(c->data_len / 4),
	};
	int fd = (int)syscall(SYS_perf_event_open, &a, -1, cpu, -1, PERF_FLAG_FD_CLOEXEC);
	uint64_t id;

	if (fd < 0) {
		int e = errno;

		snprintf(why, n, "perf_event_open(%s:%s, cpu %d): %s%s", tev_kind_system(kind), tev_kind_name(kind), cpu,
			 strerror(e),
			 e == EACCES || e == EPERM ? " (needs root or CAP_PERFMON, or kernel.perf_event_paranoid = -1)"
						   : "");
		return -e;
	}
	c->fd[cpu * TEV_KIND_MAX + kind] = fd;
	if (ioctl(fd, PERF_EVENT_IOC_SET_FILTER, filter) < 0) {
		snprintf(why, n, "%s:%s: the kernel refused the filter \"%.80s\": %s", tev_kind_system(kind),
			 tev_kind_name(kind), filter, strerror(errno));
		return -EINVAL;
	}
	if (c->ring_fd[cpu] < 0) {
		void *m = mmap(NULL, c->ring_len, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);

		if (m == MAP_FAILED) {
			snprintf(why, n, "mapping cpu %d's perf ring (%zu KiB): %s", cpu, c->ring_len >> 10,
				 strerror(errno));
			return -errno;
		}
		c->ring[cpu] = m;
		c->ring_fd[cpu] = fd;
	} else if (ioctl(fd, PERF_EVENT_IOC_SET_OUTPUT, c->ring_fd[cpu]) < 0) {
		snprintf(why, n, "PERF_EVENT_IOC_SET_OUTPUT: %s", strerror(errno));
		return -errno;
	}
	if (ioctl(fd, PERF_EVENT_IOC_ID, &id) < 0) {
		snprintf(why, n, "PERF_EVENT_IOC_ID: %s", strerror(errno));
		return -errno;
	}
	char err[160];

	if (tev_decoder_add(&c->dec, id, kind, &c->fmt[kind], err, sizeof(err)) < 0) {
		snprintf(why, n, "%s", err);
		return -EINVAL;
	}
	return 0;
}

int trace_collect_open(struct trace_collect **out, const struct attrib_vm *vm, size_t max_events, char *why, size_t n)
{
	const char *root = tracefs_root();
	long cpus = sysconf(_SC_NPROCESSORS_CONF), page = sysconf(_SC_PAGESIZE);
	struct trace_collect *c;
	int r = 0;

	*out = NULL;
	if (!root) {
		snprintf(why, n, "tracefs is not mounted (mount -t tracefs nodev /sys/kernel/tracing)");
		return -ENOENT;
	}
	if (!vm->nvcpu) {
		snprintf(why, n, "no vCPU thread to follow");
		return -EINVAL;
	}
	if (cpus < 1 || cpus > 4096 || page < 4096) {
		snprintf(why, n, "sysconf gave %ld CPUs and %ld-byte pages", cpus, page);
		return -EINVAL;
	}
	c = calloc(1, sizeof(*c));
	if (!c)
		return -ENOMEM;
	c->ncpu = (int)cpus;
	c->data_len = (size_t)RING_PAGES * (size_t)page;
	c->ring_len = c->data_len + (size_t)page;
	c->fd = malloc(sizeof(int) * (size_t)cpus * TEV_KIND_MAX);
	c->ring_fd = malloc(sizeof(int) * (size_t)cpus);
	c->ring = calloc((size_t)cpus, sizeof(void *));
	c->copy = malloc(c->data_len);
	tev_decoder_init(&c->dec);
	attrib_events_init(&c->ev, max_events);
	/* every fd -1 before c is anyone's to close (trace_collect_close closes what is >= 0) */
	for (long i = 0; c->fd && i < cpus * TEV_KIND_MAX; i++)
		c->fd[i] = -1;
	for (long i = 0; c->ring_fd && i < cpus; i++)
		c->ring_fd[i] = -1;
	*out = c;
	if (!c->fd || !c->ring_fd || !c->ring || !c->copy) {
		snprintf(why, n, "out of memory for the perf rings' bookkeeping");
		return -ENOMEM;
	}
	for (unsigned int k = TEV_NONE + 1; k < TEV_KIND_MAX && r >= 0; k++) {
		char filter[FILTER_MAX];

		if ((r = format_read(root, k, &c->fmt[k], why, n)) == 1) {
			if (required(k)) {
				snprintf(why, n, "this kernel has no %s:%s tracepoint", tev_kind_system(k), tev_kind_name(k));
				r = -ENOENT;
			}
			r = r == 1 ? 0 : r;
			continue;
		}
		filter_for(k, vm, filter, sizeof(filter));
		if (r < 0 || !filter[0])
			continue;
		c->have[k] = true;
		for (int cpu = 0; cpu < c->ncpu && r >= 0; cpu++) {
			r = open_one(c, k, cpu, filter, why, n);
			if (r == -ENODEV)
				r = 0; /* an offline CPU */
		}
	}
	return r < 0 ? r : 0;
}

int trace_collect_refilter(struct trace_collect *c, const struct attrib_vm *vm, char *why, size_t n)
{
	static const unsigned int kinds[] = { TEV_IRQ_ENTRY, TEV_IRQ_EXIT };
	int r = 0;

	for (size_t i = 0; i < sizeof(kinds) / sizeof(kinds[0]) && r >= 0; i++) {
		unsigned int k = kinds[i];
		char filter[FILTER_MAX];

		filter_for(k, vm, filter, sizeof(filter));
		if (!filter[0] || !c->fmt[k].id)
			continue; /* nothing to take, or no such tracepoint on this kernel */
		for (int cpu = 0; cpu < c->ncpu && r >= 0; cpu++) {
			int *fd = &c->fd[cpu * TEV_KIND_MAX + k];
			uint64_t id;

			if (*fd >= 0 && *fd == c->ring_fd[cpu])
				continue; /* it holds the CPU's ring (never so: the KVM events are opened first) */
			if (*fd >= 0) {
				if (ioctl(*fd, PERF_EVENT_IOC_ID, &id) == 0)
					tev_decoder_remove(&c->dec, id);
				close(*fd);
				*fd = -1;
			} else if (c->have[k]) {
				continue; /* an offline CPU */
			}
			r = open_one(c, k, cpu, filter, why, n);
			r = r == -ENODEV ? 0 : r;
		}
		c->have[k] = r >= 0;
	}
	return r;
}

int trace_collect_enable(struct trace_collect *c, bool on)
{
	int e = 0;

	if (on)
		c->enabled_at = mono_raw_ns();
	for (int i = 0; i < c->ncpu * TEV_KIND_MAX; i++)
		if (c->fd[i] >= 0 && ioctl(c->fd[i], on ? PERF_EVENT_IOC_ENABLE : PERF_EVENT_IOC_DISABLE, 0) < 0)
			e = -errno;
	if (!on)
		c->disabled_at = mono_raw_ns();
	c->on = on;
	return e;
}

static void keep(const struct tev *ev, void *opaque)
{
	attrib_events_add(opaque, ev);
}

/* One ring's new records: copied out unwrapped, decoded, the tail moved past them. */
static size_t drain_ring(struct trace_collect *c, int cpu)
{
	struct perf_event_mmap_page *m = c->ring[cpu];
	const uint8_t *data = (const uint8_t *)m + (c->ring_len - c->data_len);
	uint64_t head = __atomic_load_n(&m->data_head, __ATOMIC_ACQUIRE), tail = m->data_tail;
	size_t avail = head - tail > c->data_len ? c->data_len : (size_t)(head - tail);
	size_t off = (size_t)(tail % c->data_len), first = c->data_len - off < avail ? c->data_len - off : avail;

	if (!avail)
		return 0;
	memcpy(c->copy, data + off, first);
	memcpy(c->copy + first, data, avail - first);
	size_t used = tev_decode(&c->dec, c->copy, avail, keep, &c->ev);

	/* a record the decoder could not walk is given up with the rest: the ring must move on */
	__atomic_store_n(&m->data_tail, tail + (used ? used : avail), __ATOMIC_RELEASE);
	return avail;
}

size_t trace_collect_drain(struct trace_collect *c)
{
	size_t n = 0;

	for (int cpu = 0; cpu < c->ncpu; cpu++)
		if (c->ring[cpu])
			n += drain_ring(c, cpu);
	return n;
}

int trace_collect_poll_fds(const struct trace_collect *c, int *fds, int max)
{
	int n = 0;

	for (int cpu = 0; cpu < c->ncpu && n < max; cpu++)
		if (c->ring_fd[cpu] >= 0)
			fds[n++] = c->ring_fd[cpu];
	return n;
}

struct attrib_events *trace_collect_events(struct trace_collect *c)
{
	return &c->ev;
}

void trace_collect_counts(const struct trace_collect *c, struct trace_collect_counts *out)
{
	*out = (struct trace_collect_counts){ .events = c->ev.n, .dropped = c->ev.dropped, .lost = c->dec.lost,
					      .bad = c->dec.bad, .enabled_at = c->enabled_at,
					      .disabled_at = c->disabled_at };
	for (unsigned int k = 0; k < TEV_KIND_MAX; k++)
		out->have[k] = c->have[k];
}

int trace_collect_ncpu(const struct trace_collect *c)
{
	return c->ncpu;
}

void trace_collect_close(struct trace_collect *c)
{
	if (!c)
		return;
	for (int cpu = 0; c->ring && cpu < c->ncpu; cpu++)
		if (c->ring[cpu])
			munmap(c->ring[cpu], c->ring_len);
	for (int i = 0; c->fd && i < c->ncpu * TEV_KIND_MAX; i++)
		if (c->fd[i] >= 0)
			close(c->fd[i]);
	attrib_events_free(&c->ev);
	free(c->fd);
	free(c->ring_fd);
	free(c->ring);
	free(c->copy);
	free(c);
}
