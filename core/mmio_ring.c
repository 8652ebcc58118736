// SPDX-License-Identifier: MIT
/*
 * The coalesced MMIO ring's consumer. KVM (the producer) fills an entry, then publishes it by moving
 * `last`; vmm reads entries from `first` and publishes their release by moving `first`. The indices
 * live in a page shared with the kernel: each is read once and range-checked before use.
 */
#include <errno.h>
#include <string.h>

#include "core/hot.h"
#include "core/log.h"
#include "core/mmio_ring.h"

void mmio_ring_init(struct mmio_ring *r, void *ring, size_t page_size, struct kvm_seam kvm)
{
	memset(r, 0, sizeof(*r));
	pthread_mutex_init(&r->lock, NULL);
	r->kvm = kvm;
	atomic_init(&r->zones_on, 0);
	atomic_init(&r->entries, 0);
	atomic_init(&r->stray, 0);
	if (!ring || page_size <= sizeof(struct kvm_coalesced_mmio_ring) + sizeof(struct kvm_coalesced_mmio))
		return;
	r->ring = ring;
	/* KVM_COALESCED_MMIO_MAX, with the host's page size that the kernel's PAGE_SIZE is */
	r->max = (page_size - sizeof(struct kvm_coalesced_mmio_ring)) / sizeof(struct kvm_coalesced_mmio);
}

VMM_HOT int mmio_ring_bind(struct mmio_ring *r, uint64_t addr, uint32_t size, bus_fn fn, void *opaque)
{
	if (r->nr_zones == MMIO_RING_MAX_ZONES || !size || addr + size < addr)
		return -EINVAL;
	r->zone[r->nr_zones] = (struct mmio_ring_zone){ addr, size, fn, opaque, false };
	return r->nr_zones++;
}

VMM_HOT int mmio_ring_switch(struct mmio_ring *r, int zone, bool on)
{
	if (zone < 0 || zone >= r->nr_zones || !r->ring)
		return -EINVAL;
	struct mmio_ring_zone *z = &r->zone[zone];

	if (z->on == on)
		return 0;
	int ret = r->kvm.ops->coalesced_mmio(r->kvm.ctx, z->addr, z->size, on);

	if (ret < 0)
		return ret;
	z->on = on;
	atomic_fetch_add(&r->zones_on, on ? 1 : -1);
	return 0;
}

VMM_HOT_IDLE bool mmio_ring_active(struct mmio_ring *r)
{
	return atomic_load(&r->zones_on) > 0;
}

/* Lock held. The bound zone holding the whole write, or NULL. */
static const struct mmio_ring_zone *ring_zone(const struct mmio_ring *r, uint64_t addr, uint32_t len)
{
	for (int i = 0; i < r->nr_zones; i++) {
		const struct mmio_ring_zone *z = &r->zone[i];

		if (addr >= z->addr && addr - z->addr < z->size && len <= z->size - (addr - z->addr))
			return z;
	}
	return NULL;
}

VMM_HOT_IDLE unsigned int mmio_ring_drain(struct mmio_ring *r)
{
	struct kvm_coalesced_mmio_ring *ring = r->ring;
	unsigned int n = 0;

	if (!ring || __atomic_load_n(&ring->first, __ATOMIC_RELAXED) ==
			     __atomic_load_n(&ring->last, __ATOMIC_ACQUIRE))
		return 0;
	pthread_mutex_lock(&r->lock);
	/* At most one ring's worth: whatever was queued when a vCPU exited is in it, and a guest that
	 * keeps writing from another vCPU cannot hold this caller here. */
	for (uint32_t i = 0; i < r->max; i++) {
		uint32_t first = __atomic_load_n(&ring->first, __ATOMIC_RELAXED);
		uint32_t last = __atomic_load_n(&ring->last, __ATOMIC_ACQUIRE); /* pairs with KVM's smp_wmb */

		if (first == last)
			break;
		if (first >= r->max || last >= r->max) { /* not KVM's doing: start over from where it is */
			pr_err("coalesced MMIO ring: index out of range (first %u, last %u, %u entries); "
			       "dropping what it holds", first, last, r->max);
			atomic_fetch_add(&r->stray, 1);
			__atomic_store_n(&ring->first, last < r->max ? last : 0, __ATOMIC_RELEASE);
			break;
		}
		struct kvm_coalesced_mmio e = ring->coalesced_mmio[first];
		const struct mmio_ring_zone *z =
			e.len && e.len <= sizeof(e.data) ? ring_zone(r, e.phys_addr, e.len) : NULL;

		if (z) {
			z->fn(z->opaque, e.phys_addr - z->addr, e.data, e.len, true);
			atomic_fetch_add(&r->entries, 1);
		} else {
			atomic_fetch_add(&r->stray, 1);
		}
		n++;
		/* released only now: an empty ring means every write in it has been handled */
		__atomic_store_n(&ring->first, (first + 1) % r->max, __ATOMIC_RELEASE);
	}
	pthread_mutex_unlock(&r->lock);
	return n;
}
