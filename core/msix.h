/* SPDX-License-Identifier: MIT */
/* MSI-X for emulated PCI devices. */
#ifndef VMM_MSIX_H
#define VMM_MSIX_H

#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>

#include "core/msi_route.h"
#include "core/pci.h"

struct vm;

/* MSI-X: one model for emulated and passed-through devices (see msix.c). */
#define MSIX_MAX_VECTORS 64 /* the PBA is one 64-bit word */
#define MSIX_BAR_SIZE 0x1000
#define MSIX_PBA_OFFSET 0x800

struct msix_vector {
	uint32_t addr_lo, addr_hi, data, ctrl; /* as the guest wrote them */
	struct msi_route route;		       /* its delivery by KVM, as MSI's vectors have it */
	atomic_uint_fast64_t raised; /* msix_notify() calls on it: vmm wrote its eventfd */
};

/* What a device that owns the vectors' sources (VFIO) is told. Called with the MSI-X lock held. */
struct msix_ops {
	/* MSI-X was enabled or disabled: VFIO attaches or detaches the eventfds as triggers */
	void (*enable)(void *opaque, bool on);
};

struct msix {
	struct vm *vm;
	struct pci_dev *dev;
	pthread_mutex_t lock; /* the guest's changes; held across route commits, never by delivery */
	uint32_t cap;
	unsigned int nr;
	bool enabled, fmask;	 /* under lock */
	atomic_bool live_enabled; /* enabled, read by delivery without the lock */
	const struct msix_ops *ops;
	void *opaque;
	struct msix_vector vec[MSIX_MAX_VECTORS];
	atomic_uint_fast64_t irqs;	   /* interrupts raised by vmm's device models */
	atomic_uint_fast64_t route_errors; /* a route or irqfd KVM refused: the vector stays pending */
};

/* An emulated device's MSI-X: capability, and table + PBA in their own BAR. */
int msix_init(struct msix *m, struct vm *vm, struct pci_dev *d, unsigned int nr, int bar);
/* Only the vectors (GSIs, eventfds): for a device whose capability and table live elsewhere. */
int msix_init_vectors(struct msix *m, struct vm *vm, struct pci_dev *d, unsigned int nr,
		      const struct msix_ops *ops, void *opaque);
/* The device's cfg_written hook must pass writes on, for the enable and mask-all bits. */
void msix_cfg_written(struct msix *m, uint32_t off, uint32_t len);
/* The capability's control word as the guest wrote it (enable, function mask). */
void msix_ctrl_write(struct msix *m, uint16_t ctl);
/* Guest accesses to the table and to the PBA, offsets relative to each. */
void msix_table_access(struct msix *m, uint64_t off, uint8_t *data, uint32_t len, bool is_write);
void msix_pba_access(struct msix *m, uint64_t off, uint8_t *data, uint32_t len, bool is_write);
/* Raises vector i (an eventfd write: KVM delivers it, or it waits for the unmask); false when
 * MSI-X is disabled and nothing was done, so the caller uses INTx instead. Never blocks. */
bool msix_notify(struct msix *m, unsigned int vector);
bool msix_enabled(struct msix *m);
int msix_vector_eventfd(const struct msix *m, unsigned int i);

#endif
