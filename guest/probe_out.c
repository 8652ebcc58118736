// SPDX-License-Identifier: MIT
/*
 * The guest latency probe's output: frames (guest/probe_proto.h) to a port or as console text
 * lines, and one human-readable summary line per series on the console.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <termios.h>
#include <unistd.h>

#include "guest/probe_internal.h"

#define PORT_POLL_MS 10
#define PORT_WAIT_MS 5000
#define VMM_PORT_NAME_MAX 64

static void write_all(int fd, const void *buf, size_t len)
{
	const char *p = buf;

	while (len) {
		ssize_t n = write(fd, p, len);

		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			return; /* the reader is gone: the summary lines still tell the story */
		p += n;
		len -= (size_t)n;
	}
}

static void emit(struct sink *o, uint8_t type, const uint8_t *payload, size_t len)
{
	uint8_t f[PROBE_MAX_FRAME];
	size_t fl = probe_frame(f, type, o->seq++, payload, len);

	if (o->text) {
		char line[PROBE_TEXT_MAX + 1];
		size_t n = strlen(PROBE_TEXT_PREFIX);

		memcpy(line, PROBE_TEXT_PREFIX, n);
		n += probe_b64_encode(line + n, f, fl);
		line[n++] = '\n';
		write_all(o->fd, line, n);
	} else {
		write_all(o->fd, f, fl);
	}
}

/* True when the guest has a virtio-console device: then the probe's port is worth waiting for. */
static bool have_virtio_console(void)
{
	DIR *d = opendir("/sys/bus/virtio/drivers/virtio_console");
	struct dirent *e;
	bool found = false;

	while (d && !found && (e = readdir(d)))
		found = !strncmp(e->d_name, "virtio", 6);
	if (d)
		closedir(d);
	return found;
}

/* The device node of the virtio-console port vmm names PROBE_PORT_NAME, into dev: the built-in
 * init has no udev, so sysfs is scanned (/sys/class/virtio-ports/vportNpM/name; devtmpfs makes
 * /dev/vportNpM). A port arrives through the device's control messages after the driver probed,
 * possibly after /init started: while a virtio-console device exists it is waited for. */
static bool find_port(char *dev, size_t size)
{
	bool wait = have_virtio_console();

	for (unsigned int ms = 0;; ms += PORT_POLL_MS) {
		DIR *d = opendir("/sys/class/virtio-ports");
		struct dirent *e;
		bool found = false;

		while (d && !found && (e = readdir(d))) {
			char path[300], name[VMM_PORT_NAME_MAX + 2];

			if (e->d_name[0] == '.')
				continue;
			snprintf(path, sizeof(path), "/sys/class/virtio-ports/%s/name", e->d_name);
			int fd = open(path, O_RDONLY | O_CLOEXEC);
			ssize_t n = fd >= 0 ? read(fd, name, sizeof(name) - 1) : -1;

			if (fd >= 0)
				close(fd);
			name[n > 0 ? n : 0] = 0;
			name[strcspn(name, "\n")] = 0;
			if (!strcmp(name, PROBE_PORT_NAME)) {
				snprintf(dev, size, "/dev/%s", e->d_name);
				found = true;
			}
		}
		if (d)
			closedir(d);
		if (found)
			return true;
		if (!wait || ms >= PORT_WAIT_MS)
			return false;
		usleep(PORT_POLL_MS * 1000);
	}
}

void sink_open(struct sink *o, const char *path)
{
	char dev[300];

	o->fd = 1;
	o->text = true;
	if (path && !strcmp(path, "console"))
		return;
	if (!path && !find_port(dev, sizeof(dev)))
		return; /* no port: console lines */
	int fd = open(path ? path : dev, O_WRONLY | O_NOCTTY | O_CLOEXEC);
	struct termios t;

	if (fd < 0) {
		dprintf(1, "vmm-probe: %s: %s; frames go to the console\n", path ? path : dev, strerror(errno));
		return;
	}
	/* a tty carries the frames as bytes: no newline translation */
	if (!tcgetattr(fd, &t)) {
		cfmakeraw(&t);
		tcsetattr(fd, TCSANOW, &t);
	}
	o->fd = fd;
	o->text = false;
}

void emit_clock(struct probe *pr)
{
	uint64_t ns = now_ns();

	if (pr->out.text) {
		dprintf(1, "vmm-probe: clock %llu\n", (unsigned long long)ns);
	} else {
		uint8_t p[PROBE_MAX_PAYLOAD];

		emit(&pr->out, PROBE_T_CLOCK, p, probe_put_clock(p, ns));
	}
}

static uint64_t counter_now(void)
{
#if defined(__aarch64__)
	uint64_t v;

	__asm__ volatile("isb; mrs %0, cntvct_el0" : "=r"(v)::"memory");
	return v;
#elif defined(__x86_64__)
	uint32_t lo, hi;

	__asm__ volatile("lfence; rdtsc" : "=a"(lo), "=d"(hi)::"memory");
	return (uint64_t)hi << 32 | lo;
#else
	return 0;
#endif
}

static uint64_t counter_hz(void)
{
#if defined(__aarch64__)
	uint64_t v;

	__asm__ volatile("mrs %0, cntfrq_el0" : "=r"(v));
	return v;
#else
	return 0; /* the host knows the TSC's rate (KVM_GET_TSC_KHZ) */
#endif
}

void emit_counter(struct probe *pr)
{
#if defined(__aarch64__) || defined(__x86_64__)
#if defined(__aarch64__)
	struct probe_counter c = { .hz = counter_hz(), .kind = PROBE_CNT_ARM64 };
#else
	struct probe_counter c = { .hz = counter_hz(), .kind = PROBE_CNT_X86_TSC };
#endif
	uint64_t best = UINT64_MAX;
	uint8_t p[PROBE_MAX_PAYLOAD];

	/* the narrowest of a few brackets: an interrupt inside one only widens it */
	for (int i = 0; i < 8; i++) {
		uint64_t a = now_ns(), cnt = counter_now(), b = now_ns();

		if (b - a < best) {
			best = b - a;
			c.mono_ns = a + (b - a) / 2;
			c.cnt = cnt;
		}
	}
	c.window_ns = best > UINT32_MAX ? UINT32_MAX : (uint32_t)best;
	emit(&pr->out, PROBE_T_COUNTER, p, probe_put_counter(p, &c));
#else
	(void)pr;
#endif
}

void settle(const struct sink *o)
{
	tcdrain(o->fd);
	tcdrain(1);
}

static void fmt_ns(char *buf, size_t size, int64_t ns)
{
	double a = ns < 0 ? -(double)ns : (double)ns;

	if (a < 1e3)
		snprintf(buf, size, "%lldns", (long long)ns);
	else if (a < 1e6)
		snprintf(buf, size, "%.1fus", ns / 1e3);
	else if (a < 1e9)
		snprintf(buf, size, "%.1fms", ns / 1e6);
	else
		snprintf(buf, size, "%.2fs", ns / 1e9);
}

void emit_start(struct probe *pr, const struct probe_start *s)
{
	uint8_t p[PROBE_MAX_PAYLOAD];

	emit(&pr->out, PROBE_T_START, p, probe_put_start(p, s));
}

void emit_series(struct probe *pr, uint8_t w, uint16_t cpu, const struct probe_sample *s,
		 uint32_t n, uint32_t overruns, const char *label, const char *extra)
{
	uint8_t p[PROBE_MAX_PAYLOAD];
	struct probe_batch b = { .workload = w, .cpu = cpu };
	struct probe_end e = { .workload = w, .status = PROBE_S_OK, .cpu = cpu, .overruns = overruns };
	int64_t *v = malloc((n ? n : 1) * sizeof(*v));

	for (uint32_t i = 0; i < n; i += b.n) {
		b.n = (uint16_t)(n - i < PROBE_BATCH_MAX ? n - i : PROBE_BATCH_MAX);
		memcpy(b.s, s + i, b.n * sizeof(*s));
		emit(&pr->out, PROBE_T_BATCH, p, probe_put_batch(p, &b));
	}
	if (!v) {
		e.status = PROBE_S_ERROR;
	} else {
		for (uint32_t i = 0; i < n; i++)
			v[i] = s[i].value_ns;
		probe_summarize(v, n, &e.sum);
	}
	e.sum.count = n;
	if (e.status != PROBE_S_OK)
		e.sum = (struct probe_summary){ 0 };
	emit(&pr->out, PROBE_T_END, p, probe_put_end(p, &e));
	free(v);
	char mn[32], p50[32], p99[32], mx[32];

	fmt_ns(mn, sizeof(mn), e.sum.min);
	fmt_ns(p50, sizeof(p50), e.sum.p50);
	fmt_ns(p99, sizeof(p99), e.sum.p99);
	fmt_ns(mx, sizeof(mx), e.sum.max);
	dprintf(1, "vmm-probe: %s %s n=%u min=%s p50=%s p99=%s max=%s%s\n", probe_workload_name(w),
		label, n, mn, p50, p99, mx, extra);
}

void emit_not_run(struct probe *pr, uint8_t w, uint16_t cpu, uint8_t status, const char *why)
{
	uint8_t p[PROBE_MAX_PAYLOAD];
	struct probe_end e = { .workload = w, .status = status, .cpu = cpu };

	emit(&pr->out, PROBE_T_END, p, probe_put_end(p, &e));
	dprintf(1, "vmm-probe: %s %s: %s\n", probe_workload_name(w),
		status == PROBE_S_SKIPPED ? "skipped" : "error", why);
}
