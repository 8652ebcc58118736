// SPDX-License-Identifier: MIT
/*
 * One vector's delivery by KVM, the part MSI and MSI-X share (core/msix.c for MSI-X, vfio/irq.c
 * for a passed-through device's MSI): whoever raises the vector writes its eventfd (vmm's device
 * model, or the host device once VFIO has the eventfd as its trigger), and while the vector is
 * live its MSI route (devid = the requester ID) is committed and an irqfd is on the eventfd, so
 * KVM injects without vmm and, for VFIO, the kernel's IRQ bypass can pair the irqfd with the
 * trigger and map a GICv4 vLPI. Masking removes the irqfd: what is raised meanwhile stays counted
 * in the eventfd, and assigning the irqfd again on unmask makes KVM inject it.
 *
 * Order, as KVM needs it: the route is committed before the irqfd is assigned, the irqfd removed
 * before a live route changes, then assigned again (which also re-pairs a bypass the route change
 * broke).
 */
#include <errno.h>
#include <poll.h>
#include <sys/eventfd.h>

#include "core/hot.h"
#include "core/irq.h"
#include "core/msi_route.h"

int msi_route_init(struct msi_route *r, struct vm *vm)
{
	r->fd = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
	int gsi = irq_gsi_alloc(vm);

	if (r->fd < 0 || gsi < 0)
		return -ENOSPC;
	r->gsi = gsi;
	return 0;
}

VMM_HOT static int irqfd_set(struct msi_route *r, struct vm *vm, bool on)
{
	if (r->irqfd == on)
		return 0;
	int e = irq_irqfd(vm, r->fd, r->gsi, -1, on);

	if (e == 0)
		r->irqfd = on;
	return on ? e : 0; /* a deassign KVM refused leaves nothing pending */
}

VMM_HOT int msi_route_update(struct msi_route *r, struct vm *vm, bool live, uint64_t addr, uint32_t data,
		     uint32_t rid)
{
	if (!live)
		return irqfd_set(r, vm, false); /* interrupts now wait in the eventfd */
	if (!r->routed || r->addr != addr || r->data != data) {
		struct kvm_irq_routing_entry e;

		irqfd_set(r, vm, false);
		irq_msi_entry(vm, &e, r->gsi, addr, data, rid);
		int err = irq_route_update(vm, r->gsi, &e);

		r->routed = err == 0;
		if (err < 0) /* pending in the eventfd, retried on the guest's next change */
			return err;
		r->addr = addr;
		r->data = data;
	}
	return irqfd_set(r, vm, true);
}

VMM_HOT bool msi_route_pending(const struct msi_route *r)
{
	struct pollfd p = { .fd = r->fd, .events = POLLIN };

	/* poll, not read: looking must not consume it */
	return !r->irqfd && poll(&p, 1, 0) == 1;
}

VMM_HOT void msi_route_drop(const struct msi_route *r)
{
	eventfd_t drop;

	eventfd_read(r->fd, &drop);
}
