/* SPDX-License-Identifier: MIT */
/* The 16550A UART on MMIO, and its exact mode where console bytes cost no exit. */
#ifndef VMM_UART_H
#define VMM_UART_H

#include <pthread.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "platform/console.h"

/* A 16550A on MMIO (byte registers, stride 1). */
#define UART_FIFO_SIZE 64
#define UART_NR_REGS 8
/* THR writes that exit in a row, in a state where the mode holds, before it is entered: printk
 * between bursts of interrupt-driven tty output would otherwise switch it on and off per line. */
#define UART_FAST_ENTER_AFTER 4

struct vm;

/* Why the exact mode was left. */
enum uart_leave { UART_LEAVE_INPUT, UART_LEAVE_THRI, UART_LEAVE_LOOP, UART_LEAVE_DLAB, UART_NR_LEAVE };

/*
 * The exact mode. While DLAB is clear, the THR interrupt disabled, loopback off and no input
 * pending, no register read has a side effect: the register window is then a read-only memslot
 * holding the registers' values (reads never exit), and THR is a coalesced MMIO zone (writes go to
 * KVM's ring, drained in order). Every other write still exits, and vmm rewrites the page before
 * the writing vCPU resumes. The mode is left (zone unregistered, memslot deleted) the moment any
 * of the four conditions stops holding.
 */
struct uart_fast {
	struct vm *vm;	  /* NULL: not offered */
	const char *why;  /* why the mode is unavailable (NULL: it is available) */
	uint64_t gpa;
	uint8_t *page;	  /* one host page: the registers' values at offsets 0..7, zeros after */
	size_t page_size;
	int slot;	  /* the read-only memslot, -1 while trapping */
	int zone;	  /* THR's zone in vm->coalesced */
	bool on;
	void (*publish)(const void *p, size_t len); /* the arch's publish_to_guest (core/arch.h) or NULL */
	unsigned int enter_after, exact_thr;
	uint64_t enters, leaves[UART_NR_LEAVE];
	uint64_t thr_ring, thr_exit_on, thr_exit_off; /* THR bytes: by ring, by exit in / out of the mode */
};

struct uart {
	pthread_mutex_t lock;
	struct console_out *out;
	void (*set_irq)(void *opaque, bool level);
	void *irq_opaque;
	uint8_t ier, iir, iir_fifo, lcr, mcr, scr, dll, dlm;
	bool thre_pending, irq_level;
	uint64_t irqs; /* irq_level raised: interrupts sent on its line (lock) */
	uint8_t rx[UART_FIFO_SIZE];
	unsigned int rx_head, rx_count;
	struct uart_fast fast;
};

void uart_init(struct uart *u, struct console_out *out, void (*set_irq)(void *, bool), void *irq_opaque);
/* Offers the exact mode for the window [gpa, gpa + size), one host page, once vm's coalesced ring
 * exists. why (the board's capability check) non-NULL: never, and the summary says why. publish
 * (NULL: none needed) runs after each update of the page, before the guest may read it. */
int uart_fast_init(struct uart *u, struct vm *vm, uint64_t gpa, size_t size, const char *why,
		   void (*publish)(const void *p, size_t len));
/* After the VM is gone (its memslot points at the page). */
void uart_destroy(struct uart *u);
/* An access that exited. A read of several bytes reads that many registers, as the page does. */
void uart_mmio(void *opaque, uint64_t off, uint8_t *data, uint32_t len, bool is_write);
/* A THR write KVM queued in the coalesced ring (the zone's handler). */
void uart_ring_write(void *opaque, uint64_t off, uint8_t *data, uint32_t len, bool is_write);
/* Queues guest input; returns how many bytes fit (the rest waits for the guest to read). */
size_t uart_push_input(void *uart, const uint8_t *buf, size_t len);
/* The exact mode's line of the exit summary. */
void uart_summary(struct uart *u, FILE *f);

/* Between uart.c and uart_fast.c, lock held. */
/* True when no register read has a side effect; else *why (may be NULL) says what has one. */
bool uart_exact(const struct uart *u, enum uart_leave *why);
uint8_t uart_peek(const struct uart *u, uint64_t off); /* a register's value, no side effect */
/* After every change of state: leaves or enters the mode, keeps the page exact. */
void uart_fast_sync(struct uart *u, bool thr_exit);

#endif
