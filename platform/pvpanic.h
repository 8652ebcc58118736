/* SPDX-License-Identifier: MIT */
/* The pvpanic-mmio device. */
#ifndef VMM_PVPANIC_H
#define VMM_PVPANIC_H

#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>

struct vm;

/* The guest's panic notifier (qemu,pvpanic-mmio): a write of PVPANIC_PANICKED stops
 * the VM as crashed. */
#define PVPANIC_MMIO_SIZE 2 /* the register window the FDT describes */

struct pvpanic {
	struct vm *vm;
	atomic_uint events; /* every event the guest wrote */
};

void pvpanic_init(struct pvpanic *p, struct vm *vm);
void pvpanic_mmio(void *opaque, uint64_t off, uint8_t *data, uint32_t len, bool is_write);

#endif
