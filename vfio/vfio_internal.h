/* SPDX-License-Identifier: MIT */
/* What vfio/'s files share among themselves (not a public interface). */
#ifndef VMM_VFIO_INTERNAL_H
#define VMM_VFIO_INTERNAL_H

#include <sys/types.h>

#include "vfio/vfio.h"

/* pread/pwrite of len bytes at off inside region r; the bytes moved or -errno. */
ssize_t vfio_region_rw(struct vfio_pci *v, const struct vfio_region_info *r, uint64_t off, void *buf,
		       size_t len, bool write);
/* config.c: the guest's view of the config space, on bus 0 of h at slot (-1: the next free). */
int vfio_config_setup(struct vfio_pci *v, struct pci_host *h, int slot);
/* irq.c */
int vfio_irqs_setup(struct vfio_pci *v);
void vfio_irqs_teardown(struct vfio_pci *v);
/* The guest changed the MSI capability (enable, address, data, mask). */
void vfio_msi_update(struct vfio_pci *v);
extern const struct msix_ops vfio_msix_ops;

#endif
