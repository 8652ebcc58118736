/* SPDX-License-Identifier: MIT */
/* The MMIO/PIO bus: address ranges dispatched to device handlers. */
#ifndef VMM_BUS_H
#define VMM_BUS_H

#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>

#define BUS_MAX_DEVS 64

/* A sorted table of non-overlapping address ranges. Devices may come and go while vCPUs
 * run (a guest moving a PCI BAR): lookups take a read lock, copy the entry and call the handler
 * unlocked, so a handler may itself change the bus. Devices live as long as the VM. */
typedef void (*bus_fn)(void *opaque, uint64_t offset, uint8_t *data, uint32_t len, bool is_write);

struct bus_dev {
	uint64_t base, size;
	bus_fn fn;
	void *opaque;
	const char *name;
};

struct bus {
	pthread_rwlock_t lock;
	struct bus_dev devs[BUS_MAX_DEVS];
	int nr;
};

void bus_init(struct bus *bus);
int bus_register(struct bus *bus, uint64_t base, uint64_t size, bus_fn fn, void *opaque,
		 const char *name);
/* The same without a message: for addresses a guest chose, so a guest cannot flood the log. */
int bus_try_register(struct bus *bus, uint64_t base, uint64_t size, bus_fn fn, void *opaque,
		     const char *name);
int bus_unregister(struct bus *bus, uint64_t base, void *opaque);
/* Copies the device covering [addr, addr+len) into *out; false when nobody claims it all. */
bool bus_find(struct bus *bus, uint64_t addr, uint32_t len, struct bus_dev *out);
/* Dispatches one access; an access nobody claims reads as zero and is counted, never fatal. */
bool bus_access(struct bus *bus, uint64_t addr, uint8_t *data, uint32_t len, bool is_write);

#endif
