/* SPDX-License-Identifier: MIT */
/* KVM's coalesced MMIO ring: zones whose guest writes KVM queues instead of exiting, drained in order. */
#ifndef VMM_MMIO_RING_H
#define VMM_MMIO_RING_H

#include <linux/kvm.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "core/bus.h"
#include "core/kvm_seam.h"

#define MMIO_RING_MAX_ZONES 4

/* A zone's handler sees each queued write as a bus write at its offset in the zone. A zone stays
 * bound when it is switched off: writes KVM queued before that still reach it. */
struct mmio_ring_zone {
	uint64_t addr;
	uint32_t size;
	bus_fn fn;
	void *opaque;
	bool on; /* registered with KVM; changed by the zone's owner only */
};

/*
 * KVM writes the ring (one page shared by the VM's vCPUs, inside each vCPU's kvm_run mapping) and
 * vmm consumes it. Entries leave in the order the guest wrote them: one consumer at a time, and
 * `first` moves only after an entry's handler has run, so a drain that finds the ring empty knows
 * that every earlier write has been handled. Zones are bound before vCPUs run.
 */
struct mmio_ring {
	struct kvm_coalesced_mmio_ring *ring; /* NULL: KVM has no ring, nothing is ever queued */
	uint32_t max;			      /* entries: KVM_COALESCED_MMIO_MAX of the host's page */
	pthread_mutex_t lock;		      /* the consumer's */
	struct kvm_seam kvm;
	struct mmio_ring_zone zone[MMIO_RING_MAX_ZONES];
	int nr_zones;
	atomic_int zones_on;
	atomic_uint_fast64_t entries, stray; /* dispatched; dropped (no zone, bad length) */
};

/* ring NULL: no ring (every zone then refuses to switch on). page_size is the ring's page. */
void mmio_ring_init(struct mmio_ring *r, void *ring, size_t page_size, struct kvm_seam kvm);
/* Binds [addr, addr+size) to fn, off until mmio_ring_switch(); returns the zone's index. */
int mmio_ring_bind(struct mmio_ring *r, uint64_t addr, uint32_t size, bus_fn fn, void *opaque);
/* Registers (on) or unregisters the zone with KVM; once off returns, KVM queues nothing more. */
int mmio_ring_switch(struct mmio_ring *r, int zone, bool on);
/* Hands every queued write to its zone, in order; returns how many. Cheap when empty: vCPUs call
 * it after every KVM_RUN, before handling the exit, so no exit overtakes an earlier write. */
unsigned int mmio_ring_drain(struct mmio_ring *r);
/* A zone is on: writes may be waiting, so someone should drain now and then. */
bool mmio_ring_active(struct mmio_ring *r);

#endif
