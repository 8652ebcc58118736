/* SPDX-License-Identifier: MIT */
/* One MSI or MSI-X vector delivered by KVM: its GSI, eventfd, committed route and irqfd. */
#ifndef VMM_MSI_ROUTE_H
#define VMM_MSI_ROUTE_H

#include <stdbool.h>
#include <stdint.h>

struct vm;

struct msi_route {
	int gsi, fd;
	bool routed; /* the committed route matches addr/data */
	bool irqfd;  /* KVM's irqfd is on fd: delivery without vmm */
	uint64_t addr;
	uint32_t data;
};

/* A GSI and a new eventfd for r; -ENOSPC when either is not to be had. */
int msi_route_init(struct msi_route *r, struct vm *vm);
/* Brings r's route and irqfd in line with the vector as the guest left it: live (enabled and not
 * masked) with the message (addr, data) from requester ID rid, or not live. 0, or -errno when KVM
 * refused a route or an irqfd: what is raised stays pending in the eventfd until the next call. */
int msi_route_update(struct msi_route *r, struct vm *vm, bool live, uint64_t addr, uint32_t data,
		     uint32_t rid);
/* Raised while it could not be delivered: counted in the eventfd with no irqfd consuming it. */
bool msi_route_pending(const struct msi_route *r);
/* Drops what the eventfd holds (the vector's owner was disabled). */
void msi_route_drop(const struct msi_route *r);

#endif
