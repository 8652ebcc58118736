/* SPDX-License-Identifier: MIT */
/* MSI-X for emulated PCI devices. */
#ifndef VMM_MSIX_H
#define VMM_MSIX_H

#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>

#include "vmm/pci.h"

struct vm;

/* MSI-X table + PBA in their own 4 KiB BAR; one GSI and irqfd per vector. */
#define MSIX_MAX_VECTORS 64
#define MSIX_BAR_SIZE 0x1000
#define MSIX_PBA_OFFSET 0x800

struct msix_vector {
	uint32_t addr_lo, addr_hi, data, ctrl; /* as the guest wrote them */
	int gsi, fd;
	bool routed, irqfd; /* the committed route matches route_addr/data; the irqfd is assigned */
	uint64_t route_addr;
	uint32_t route_data;
	bool deliver; /* under dlock: live, routed and with its irqfd */
};

struct msix {
	struct vm *vm;
	struct pci_dev *dev;
	pthread_mutex_t lock;  /* guest-side changes; held across route commits */
	pthread_mutex_t dlock; /* delivery state only: never held across a commit */
	uint32_t cap;
	unsigned int nr;
	bool enabled, fmask;   /* under lock */
	bool live_enabled;     /* enabled, under dlock */
	uint64_t pba;	       /* under dlock */
	struct msix_vector vec[MSIX_MAX_VECTORS];
	atomic_uint_fast64_t irqs;	   /* interrupts sent through irqfds */
	atomic_uint_fast64_t route_errors; /* a route or irqfd KVM refused: the vector stays pending */
};

int msix_init(struct msix *m, struct vm *vm, struct pci_dev *d, unsigned int nr, int bar);
/* The device's cfg_written hook must pass writes on, for the enable and mask-all bits. */
void msix_cfg_written(struct msix *m, uint32_t off, uint32_t len);
/* Raises vector i (or sets its PBA bit); false when MSI-X is disabled and nothing was done, so
 * the caller uses INTx instead. */
bool msix_notify(struct msix *m, unsigned int vector);
bool msix_enabled(struct msix *m);

#endif
