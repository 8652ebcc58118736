/* SPDX-License-Identifier: MIT */
/* The 16550A UART on MMIO. */
#ifndef VMM_UART_H
#define VMM_UART_H

#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>

#include "vmm/console.h"

/* A 16550A on MMIO (byte registers, stride 1). */
#define UART_FIFO_SIZE 64

struct uart {
	pthread_mutex_t lock;
	struct console_out *out;
	void (*set_irq)(void *opaque, bool level);
	void *irq_opaque;
	uint8_t ier, iir, iir_fifo, lcr, mcr, scr, dll, dlm;
	bool thre_pending, irq_level;
	uint8_t rx[UART_FIFO_SIZE];
	unsigned int rx_head, rx_count;
};

void uart_init(struct uart *u, struct console_out *out, void (*set_irq)(void *, bool), void *irq_opaque);
void uart_mmio(void *opaque, uint64_t off, uint8_t *data, uint32_t len, bool is_write);
/* Queues guest input; returns how many bytes fit (the rest waits for the guest to read). */
size_t uart_push_input(void *uart, const uint8_t *buf, size_t len);

#endif
