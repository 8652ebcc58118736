/* SPDX-License-Identifier: MIT */
/* Guest console output (a bounded ring drained by the console thread) and keyboard input. */
#ifndef VMM_CONSOLE_H
#define VMM_CONSOLE_H

#include <pthread.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* Guest console output. Writers (vCPUs, virtio workers) only copy into a bounded ring
 * and never block; the console thread drains it to stdout with non-blocking writes. When the
 * reader stalls, what does not fit is dropped and counted; when it goes away (EPIPE), output is
 * discarded from then on. The output is also watched, line by line, for the kernel's panic banner
 * (console_line_is_panic() says which lines count). */
#define CONSOLE_RING_SIZE (64 << 10)
#define CONSOLE_LINE_MAX 96 /* a printk prefix plus the banner fit; longer lines are not watched */

struct console_out {
	int fd;	    /* -1: output is dropped; else non-blocking, vmm's own (see console_out_init) */
	bool owned; /* fd is vmm's own reopening of stdout, closed by console_out_destroy */
	bool nonblock;
	int wake_fd; /* eventfd: output arrived in an empty ring */
	pthread_mutex_t lock;
	uint8_t ring[CONSOLE_RING_SIZE];
	size_t head, len;
	bool broken; /* the reader went away */
	uint64_t bytes, dropped;
	void (*on_panic)(void *opaque);
	void *panic_opaque;
	char line[CONSOLE_LINE_MAX];
	size_t line_len;
	bool line_done;
	/* the guest's boot has ended: once, at the first line starting "vmm-guest: " (the built-in
	 * init's banner), "vmm-probe: clock " or "vmm-boot-end" (any guest can echo it) */
	void (*on_boot_end)(void *opaque);
	void *boot_opaque;
	bool boot_seen;
	/* every byte of output as it is written, lock held (the probe's console lines); set before
	 * the VM runs */
	void (*on_text)(void *opaque, const uint8_t *buf, size_t len);
	void *text_opaque;
};

/* fd -1 drops output. A pipe, FIFO, terminal or socket is reopened through /proc/self/fd with
 * O_NONBLOCK (a file description of vmm's own: the shell's stays blocking); a regular file is
 * written as is. on_panic is called when a kernel panic banner line is seen. */
int console_out_init(struct console_out *co, int fd, void (*on_panic)(void *opaque), void *opaque);
void console_out_destroy(struct console_out *co);
void console_out_write(struct console_out *co, const uint8_t *buf, size_t len);
/* Wakes the thread that drains co (its poll on wake_fd): new output, or time to stop. */
void console_out_wake(struct console_out *co);
/* Writes what the ring holds as far as the fd takes it without blocking; one drainer at a time.
 * Returns the bytes still buffered. */
size_t console_out_drain(struct console_out *co);
/* At exit: drains for at most timeout_ms, then drops (and counts) what is left. */
void console_out_flush(struct console_out *co, int timeout_ms);
/* True when line (without its newline) is the kernel's panic banner: printk's time prefix
 * "[    1.234567] " (and the caller id "[     T1] " when the kernel has it) right before "Kernel
 * panic - not syncing". Userspace text at the start of a line carries no prefix and never counts;
 * guests booted with printk.time=0 are reported through pvpanic (or their reset) only. */
bool console_line_is_panic(const char *line, size_t len);

/* The keyboard filter: Ctrl-A x quits, Ctrl-A Ctrl-A sends one Ctrl-A, Ctrl-A with any
 * other key sends both. The state carries an escape begun at the end of one read into the next. */
struct console_escape {
	bool pending;
};

/* Filters n bytes of in into out, which must not overlap in and needs room for n + 1 bytes (an
 * escape carried over from the last read can add one); returns the bytes to send. *quit is set on
 * Ctrl-A x, and what follows it is not sent. */
size_t console_filter(struct console_escape *e, const uint8_t *in, size_t n, uint8_t *out, bool *quit);

/* Where the console thread delivers keyboard input: returns how many bytes the guest took. */
struct console_in_sink {
	size_t (*push)(void *opaque, const uint8_t *buf, size_t len);
	void *opaque;
};

/* The line Linux prints when it panics (see console_line_is_panic()). */
#define GUEST_PANIC_BANNER "Kernel panic - not syncing"

#endif
