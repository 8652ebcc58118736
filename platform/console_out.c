// SPDX-License-Identifier: MIT
/*
 * Guest console output, shared by the 16550 and virtio-console: buffered in a ring the console
 * thread drains to stdout (so a stalled reader never stops a vCPU), and watched for the kernel's
 * panic banner.
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <poll.h>
#include <stdio.h>
#include <string.h>
#include <sys/eventfd.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "core/hot.h"
#include "core/log.h"
#include "platform/console.h"
#include "core/host_mem.h"

int console_out_init(struct console_out *co, int fd, void (*on_panic)(void *opaque), void *opaque)
{
	struct stat st;

	host_mem_clear(co, sizeof(*co)); /* the ring's pages: resident only once written */
	pthread_mutex_init(&co->lock, NULL);
	co->on_panic = on_panic;
	co->panic_opaque = opaque;
	co->fd = fd;
	co->wake_fd = eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
	if (co->wake_fd < 0) {
		int err = errno;

		pr_err("console: eventfd failed: %s", strerror(err));
		return -err;
	}
	if (fd < 0 || fstat(fd, &st) < 0 || S_ISREG(st.st_mode) || S_ISBLK(st.st_mode))
		return 0; /* files never hold a writer for long */
	char path[64];

	snprintf(path, sizeof(path), "/proc/self/fd/%d", fd);
	int nfd = open(path, O_WRONLY | O_NONBLOCK | O_NOCTTY | O_CLOEXEC);

	if (nfd >= 0) {
		co->fd = nfd;
		co->owned = co->nonblock = true;
	} /* else (no /proc, a socket): each write waits for POLLOUT and stays within PIPE_BUF */
	return 0;
}

VMM_HOT void console_out_destroy(struct console_out *co)
{
	if (co->owned)
		close(co->fd);
	if (co->wake_fd >= 0)
		close(co->wake_fd);
	co->fd = co->wake_fd = -1;
	co->owned = false;
}

VMM_HOT_IDLE static bool eat_digits(const char *l, size_t len, size_t *i)
{
	size_t k = *i;

	while (k < len && l[k] >= '0' && l[k] <= '9')
		k++;
	if (k == *i)
		return false;
	*i = k;
	return true;
}

/* printk's fields: the time "[%5lu.%06lu]" and, with CONFIG_PRINTK_CALLER, "[%6s]" of T<pid>/C<cpu> */
VMM_HOT_IDLE static bool eat_field(const char *l, size_t len, size_t *i, bool caller)
{
	size_t k = *i;

	if (k >= len || l[k++] != '[')
		return false;
	while (k < len && l[k] == ' ')
		k++;
	if (caller) {
		if (k >= len || (l[k] != 'T' && l[k] != 'C'))
			return false;
		k++;
	}
	if (!eat_digits(l, len, &k))
		return false;
	if (!caller && (k >= len || l[k++] != '.' || !eat_digits(l, len, &k)))
		return false;
	if (k >= len || l[k++] != ']')
		return false;
	*i = k;
	return true;
}

VMM_HOT_IDLE bool console_line_is_panic(const char *line, size_t len)
{
	static const char banner[] = GUEST_PANIC_BANNER;
	size_t i = 0;

	while (i < len && line[i] == '\r')
		i++;
	if (!eat_field(line, len, &i, false))
		return false;
	eat_field(line, len, &i, true);
	if (i >= len || line[i++] != ' ')
		return false;
	return len - i >= sizeof(banner) - 1 && !memcmp(line + i, banner, sizeof(banner) - 1);
}

VMM_HOT_IDLE static bool boot_marker(const char *line, size_t len)
{
	static const char *const mark[] = { "vmm-guest: ", "vmm-probe: clock ", "vmm-boot-end" };

	for (size_t k = 0; k < sizeof(mark) / sizeof(mark[0]); k++)
		if (len >= strlen(mark[k]) && !memcmp(line, mark[k], strlen(mark[k])))
			return true;
	return false;
}

/* Lock held. Collects the start of each line and checks it once the banner could be complete. */
VMM_HOT_IDLE static void console_watch(struct console_out *co, const uint8_t *buf, size_t len)
{
	for (size_t i = 0; i < len && (co->on_panic || co->on_boot_end); i++) {
		char c = (char)buf[i];

		if (c == '\n') {
			if (co->on_boot_end && !co->boot_seen && boot_marker(co->line, co->line_len)) {
				co->boot_seen = true;
				co->on_boot_end(co->boot_opaque);
			}
			co->line_len = 0;
			co->line_done = false;
			continue;
		}
		if (co->line_done)
			continue;
		if (co->line_len == sizeof(co->line)) {
			co->line_done = true;
			continue;
		}
		co->line[co->line_len++] = c;
		if (co->on_panic && c == GUEST_PANIC_BANNER[sizeof(GUEST_PANIC_BANNER) - 2] &&
		    console_line_is_panic(co->line, co->line_len)) {
			co->line_done = true;
			co->on_panic(co->panic_opaque);
		}
	}
}

VMM_HOT_IDLE void console_out_write(struct console_out *co, const uint8_t *buf, size_t len)
{
	pthread_mutex_lock(&co->lock);
	console_watch(co, buf, len);
	if (co->on_text)
		co->on_text(co->text_opaque, buf, len);
	co->bytes += len;
	if (co->fd < 0) {
		pthread_mutex_unlock(&co->lock);
		return;
	}
	bool was_empty = co->len == 0;
	size_t room = sizeof(co->ring) - co->len;
	size_t n = co->broken ? 0 : len < room ? len : room;

	co->dropped += len - n;
	for (size_t done = 0; done < n;) {
		size_t tail = (co->head + co->len) % sizeof(co->ring);
		size_t chunk = sizeof(co->ring) - tail;

		if (chunk > n - done)
			chunk = n - done;
		memcpy(co->ring + tail, buf + done, chunk);
		co->len += chunk;
		done += chunk;
	}
	pthread_mutex_unlock(&co->lock);
	if (was_empty && n)
		console_out_wake(co);
}

VMM_HOT_IDLE void console_out_wake(struct console_out *co)
{
	uint64_t one = 1;

	if (co->wake_fd >= 0 && write(co->wake_fd, &one, sizeof(one)) < 0) {
		/* the counter is already non-zero: the drainer is awake anyway */
	}
}

VMM_HOT_IDLE size_t console_out_drain(struct console_out *co)
{
	for (;;) {
		pthread_mutex_lock(&co->lock);
		/* the drainer alone moves head, so [head, head + n) stays put while it is written */
		size_t n = co->len, left = co->len;
		const uint8_t *p = co->ring + co->head;

		if (co->head + n > sizeof(co->ring))
			n = sizeof(co->ring) - co->head;
		pthread_mutex_unlock(&co->lock);
		if (!n || co->fd < 0)
			return left;
		if (!co->nonblock) {
			struct pollfd pf = { .fd = co->fd, .events = POLLOUT };

			if (poll(&pf, 1, 0) <= 0 || !(pf.revents & POLLOUT))
				return left;
			if (pf.revents & (POLLERR | POLLHUP))
				n = 1; /* the write below fails and says why */
			else if (n > PIPE_BUF)
				n = PIPE_BUF; /* POLLOUT on a pipe promises room for PIPE_BUF */
		}
		ssize_t w = write(co->fd, p, n);

		if (w < 0 && errno == EINTR)
			continue;
		if (w < 0 && (errno == EAGAIN || errno == EWOULDBLOCK))
			return left;
		pthread_mutex_lock(&co->lock);
		if (w <= 0) { /* EPIPE or worse: the reader is gone; the guest runs on without it */
			co->broken = true;
			co->dropped += co->len;
			co->len = 0;
		} else {
			co->head = (co->head + (size_t)w) % sizeof(co->ring);
			co->len -= (size_t)w;
			if (!co->len) /* empty: the next bytes go to the ring's first pages, so only
				       * the longest backlog's pages are ever touched, not all 64 KiB */
				co->head = 0;
		}
		pthread_mutex_unlock(&co->lock);
	}
}

static double mono_ms(void)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return t.tv_sec * 1e3 + t.tv_nsec / 1e6;
}

VMM_HOT void console_out_flush(struct console_out *co, int timeout_ms)
{
	double end = mono_ms() + timeout_ms;

	while (co->fd >= 0 && console_out_drain(co)) {
		int left = (int)(end - mono_ms());
		struct pollfd pf = { .fd = co->fd, .events = POLLOUT };

		if (left <= 0)
			break;
		poll(&pf, 1, left);
	}
	pthread_mutex_lock(&co->lock);
	co->dropped += co->len;
	co->len = 0;
	pthread_mutex_unlock(&co->lock);
}
