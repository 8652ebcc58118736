/* SPDX-License-Identifier: MIT */
/*
 * A fake guest driver for virtio-pci devices in unit tests: config space through ECAM, the common
 * configuration through BAR 0, split rings laid out in the fake VM's RAM, MSI-X through the table
 * in BAR 1, all by bus accesses as a vCPU would make them.
 */
#ifndef VMM_TESTS_FAKE_DRIVER_H
#define VMM_TESTS_FAKE_DRIVER_H

#include "tests/unit/fake_kvm.h"
#include "virtio/virtio.h"

#define FD_ECAM 0x3f000000ULL

struct fake_driver {
	struct vm *vm;
	struct virtio_dev *vd;
	int slot;
	uint64_t bar0, bar1;
	uint64_t ram_next; /* bump allocator in guest RAM */
	struct fd_queue {
		uint64_t desc, avail, used;
		uint16_t size, avail_idx, used_seen, next_desc;
	} q[VIRTIO_MAX_QUEUES];
};

struct fd_seg {
	uint64_t gpa;
	uint32_t len;
	bool write; /* device-writable */
};

/* The host bridge layout the fake driver expects (ECAM at FD_ECAM). */
extern const struct pci_host_layout fd_layout;

uint32_t fd_cfg_rd(struct fake_driver *f, uint32_t reg, uint32_t len);
void fd_cfg_wr(struct fake_driver *f, uint32_t reg, uint32_t v, uint32_t len);
/* Enables memory decode and bus mastering and reads BAR 0 and 1. */
void fd_probe(struct fake_driver *f, struct vm *vm, struct virtio_dev *vd);
uint64_t fd_common_rd(struct fake_driver *f, uint32_t off, uint32_t len);
void fd_common_wr(struct fake_driver *f, uint32_t off, uint64_t v, uint32_t len);
uint8_t fd_status(struct fake_driver *f);
/* reset, ACKNOWLEDGE, DRIVER, features (VERSION_1 added), FEATURES_OK; returns the status read back */
uint8_t fd_negotiate(struct fake_driver *f, uint64_t features);
/* Lays out queue q with size entries in RAM, routes it to vector, enables it. */
void fd_queue_setup(struct fake_driver *f, unsigned int q, uint16_t size, uint16_t vector);
void fd_driver_ok(struct fake_driver *f);
/* Enables MSI-X and programs + unmasks vectors [0, n) with data = 0x40 + i. */
void fd_msix_enable(struct fake_driver *f, unsigned int n);
uint64_t fd_alloc(struct fake_driver *f, uint64_t size);
void *fd_hva(struct fake_driver *f, uint64_t gpa, uint64_t len);
/* Makes a chain of the segments available; returns its head. */
uint16_t fd_add(struct fake_driver *f, unsigned int q, const struct fd_seg *s, unsigned int n);
/* Writes the queue index to its notify address (an MMIO exit, the fake seam has no ioeventfd). */
void fd_kick(struct fake_driver *f, unsigned int q);
/* Next used element: 1 with id/len, 0 when none. */
int fd_used(struct fake_driver *f, unsigned int q, uint32_t *id, uint32_t *len);
/* Interrupts delivered on MSI-X vector i since the last call (reads its eventfd). */
uint64_t fd_irqs(struct fake_driver *f, unsigned int vector);
/* Steps the device's worker until nothing is ready for ms milliseconds. */
void fd_run(struct fake_driver *f, int ms);

#endif
