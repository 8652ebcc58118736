// SPDX-License-Identifier: MIT
/*
 * A 16550A UART on MMIO, enough for Linux's 8250 driver and earlycon: THR/RBR with a 64-byte receive
 * FIFO, IER/IIR with the THR-empty interrupt semantics the 8250 driver relies on, LSR, DLAB divisor
 * latch, scratch. Output goes straight to an fd; input is pushed by the console thread. vCPU threads
 * and the console thread share it under a mutex. All guest-written values are plain register bytes.
 * Its accesses arrive by exit, or as THR writes from KVM's coalesced ring in the exact mode
 * (uart_fast.c), which every change of state here keeps up to date.
 */
#include <errno.h>
#include <string.h>
#include <unistd.h>

#include "core/hot.h"
#include "platform/console.h"
#include "platform/uart.h"

#define UART_RX 0 /* RBR / THR / DLL */
#define UART_IER 1
#define UART_IIR 2 /* read: IIR, write: FCR */
#define UART_LCR 3
#define UART_MCR 4
#define UART_LSR 5
#define UART_MSR 6
#define UART_SCR 7

#define IER_RDI 0x01
#define IER_THRI 0x02
#define IIR_NO_INT 0x01
#define IIR_THRI 0x02
#define IIR_RDI 0x04
#define IIR_FIFO 0xc0
#define LCR_DLAB 0x80
#define MCR_LOOP 0x10
#define LSR_DR 0x01
#define LSR_THRE 0x20
#define LSR_TEMT 0x40
#define MSR_IDLE 0xb0 /* DCD | DSR | CTS */
#define FCR_ENABLE 0x01
#define FCR_CLEAR_RX 0x02

void uart_init(struct uart *u, struct console_out *out, void (*set_irq)(void *, bool), void *irq_opaque)
{
	memset(u, 0, sizeof(*u));
	pthread_mutex_init(&u->lock, NULL);
	u->out = out;
	u->set_irq = set_irq;
	u->irq_opaque = irq_opaque;
	u->iir = IIR_NO_INT;
	u->lcr = 0x03;
	u->mcr = 0x08;
	u->fast.slot = u->fast.zone = -1;
	u->fast.why = "not offered";
}

bool uart_exact(const struct uart *u, enum uart_leave *why)
{
	enum uart_leave w = u->rx_count ? UART_LEAVE_INPUT : (u->ier & IER_THRI) ? UART_LEAVE_THRI
			  : (u->mcr & MCR_LOOP) ? UART_LEAVE_LOOP : (u->lcr & LCR_DLAB) ? UART_LEAVE_DLAB
			  : UART_NR_LEAVE;

	if (why)
		*why = w;
	return w == UART_NR_LEAVE;
}

/*
 * Called with the lock held after every access: recompute IIR, bring the exact mode and its page
 * up to date, then drive the line when it changes. In that order: a guest whose interrupt handler
 * runs on another vCPU must find a page (or a trap) that already shows why.
 */
VMM_HOT static void uart_settle(struct uart *u, bool thr_exit)
{
	uint8_t iir = IIR_NO_INT;

	if ((u->ier & IER_RDI) && u->rx_count)
		iir = IIR_RDI;
	else if ((u->ier & IER_THRI) && u->thre_pending)
		iir = IIR_THRI;
	u->iir = iir;
	uart_fast_sync(u, thr_exit);
	bool level = iir != IIR_NO_INT;

	if (level != u->irq_level) {
		u->irq_level = level;
		u->irqs += level;
		if (u->set_irq)
			u->set_irq(u->irq_opaque, level);
	}
}

/* Lock held. False when the receive FIFO is full. */
static bool uart_rx_put(struct uart *u, uint8_t c)
{
	if (u->rx_count == UART_FIFO_SIZE)
		return false;
	u->rx[(u->rx_head + u->rx_count++) % UART_FIFO_SIZE] = c;
	return true;
}

VMM_HOT static void uart_tx(struct uart *u, uint8_t c)
{
	if (u->mcr & MCR_LOOP) {
		uart_rx_put(u, c); /* loopback: what is sent comes back as input */
		return;
	}
	if (u->out)
		console_out_write(u->out, &c, 1);
}

VMM_HOT uint8_t uart_peek(const struct uart *u, uint64_t off)
{
	switch (off) {
	case UART_RX:
		if (u->lcr & LCR_DLAB)
			return u->dll;
		return u->rx_count ? u->rx[u->rx_head] : 0;
	case UART_IER:
		return (u->lcr & LCR_DLAB) ? u->dlm : u->ier;
	case UART_IIR:
		return u->iir | u->iir_fifo;
	case UART_LCR:
		return u->lcr;
	case UART_MCR:
		return u->mcr;
	case UART_LSR:
		return LSR_THRE | LSR_TEMT | (u->rx_count ? LSR_DR : 0);
	case UART_MSR:
		return MSR_IDLE;
	case UART_SCR:
		return u->scr;
	}
	return 0;
}

/* What a read does besides returning uart_peek()'s value. */
static uint8_t uart_read(struct uart *u, uint64_t off)
{
	uint8_t v = uart_peek(u, off);

	if (off == UART_RX && !(u->lcr & LCR_DLAB) && u->rx_count) {
		u->rx_head = (u->rx_head + 1) % UART_FIFO_SIZE;
		u->rx_count--;
	}
	/* Reading IIR while it reports THR-empty acknowledges that interrupt (16550 data sheet). */
	if (off == UART_IIR && (u->iir & 0x0f) == IIR_THRI)
		u->thre_pending = false;
	return v;
}

static void uart_write(struct uart *u, uint64_t off, uint8_t v)
{
	switch (off) {
	case UART_RX:
		if (u->lcr & LCR_DLAB) {
			u->dll = v;
			return;
		}
		uart_tx(u, v);
		u->thre_pending = true; /* transmitted at once: THR is empty again */
		return;
	case UART_IER:
		if (u->lcr & LCR_DLAB) {
			u->dlm = v;
			return;
		}
		/* Enabling THRI while THR is empty raises the interrupt right away. */
		if (!(u->ier & IER_THRI) && (v & IER_THRI))
			u->thre_pending = true;
		u->ier = v & 0x0f;
		return;
	case UART_IIR: /* FCR */
		u->iir_fifo = (v & FCR_ENABLE) ? IIR_FIFO : 0;
		if (v & FCR_CLEAR_RX)
			u->rx_count = 0;
		return;
	case UART_LCR:
		u->lcr = v;
		return;
	case UART_MCR:
		u->mcr = v & 0x1f;
		return;
	case UART_SCR:
		u->scr = v;
		return;
	}
}

VMM_HOT void uart_mmio(void *opaque, uint64_t off, uint8_t *data, uint32_t len, bool is_write)
{
	struct uart *u = opaque;
	bool thr = false;

	/* Byte registers at stride 1. A wider write touches its low byte's register only; a wider
	 * read reads one register per byte, which is what the exact mode's page gives too. */
	if (!is_write)
		memset(data, 0, len);
	if (off > UART_SCR)
		return;
	pthread_mutex_lock(&u->lock);
	if (is_write) {
		thr = off == UART_RX && !(u->lcr & LCR_DLAB);
		if (thr && u->fast.on)
			u->fast.thr_exit_on++; /* the ring was full (or the mode was on its way in) */
		else if (thr)
			u->fast.thr_exit_off++;
		uart_write(u, off, data[0]);
	} else {
		for (uint32_t i = 0; i < len && off + i <= UART_SCR; i++)
			data[i] = uart_read(u, off + i);
	}
	uart_settle(u, thr);
	pthread_mutex_unlock(&u->lock);
}

void uart_ring_write(void *opaque, uint64_t off, uint8_t *data, uint32_t len, bool is_write)
{
	struct uart *u = opaque;

	if (!is_write || off != UART_RX || len != 1) /* the zone is THR's byte: nothing else */
		return;
	pthread_mutex_lock(&u->lock);
	u->fast.thr_ring++;
	/* in the state it was written in: any later DLAB or loopback write exits, and an exit drains
	 * the ring before it is handled */
	uart_write(u, off, data[0]);
	uart_settle(u, false);
	pthread_mutex_unlock(&u->lock);
}

size_t uart_push_input(void *opaque, const uint8_t *buf, size_t len)
{
	struct uart *u = opaque;
	size_t n = 0;

	pthread_mutex_lock(&u->lock);
	while (n < len && uart_rx_put(u, buf[n]))
		n++;
	uart_settle(u, false); /* input pending: the mode is left before the guest is told */
	pthread_mutex_unlock(&u->lock);
	return n;
}
