/* SPDX-License-Identifier: MIT */
/* What vfio/'s files share among themselves (not a public interface). */
#ifndef VMM_VFIO_INTERNAL_H
#define VMM_VFIO_INTERNAL_H

#include <sys/types.h>

#include "vfio/vfio.h"

/* The backends' system calls, through c's struct vfio_sys (a test's fake, or the real ones). */
#define vsys(c, fn, ...) ((c)->sys->fn((c)->sys->ctx, __VA_ARGS__))
#define vioctl(c, fd, req, arg) ((c)->sys->ioctl((c)->sys->ctx, (fd), (req), (unsigned long)(arg)))
/* dma.c: guest RAM, now and whenever it is added, mapped for DMA through c->ops->dma_map at
 * IOVA = guest physical address, each region checked against c->valid first. 0 or -errno. */
int vfio_dma_listen(struct vfio_container *c);
/* kvm_dev.c: the KVM VFIO device into c->kvm_dev (-1 with a warning when KVM has none). */
void vfio_kvm_device(struct vfio_container *c);
/* Tells it about a group or device fd: 0 (also when there is no KVM VFIO device) or -errno, which
 * the caller says. */
int vfio_kvm_file_add(struct vfio_container *c, int fd);
void vfio_kvm_device_close(struct vfio_container *c);
/* backend.c: /sys/bus/pci/devices/BDF exists (for "no such device" rather than a vaguer message). */
bool vfio_pci_exists(struct vfio_container *c, const char *bdf);

/* pread/pwrite of len bytes at off inside region r; the bytes moved or -errno. */
ssize_t vfio_region_rw(struct vfio_pci *v, const struct vfio_region_info *r, uint64_t off, void *buf,
		       size_t len, bool write);
/* config.c: the guest's view of the config space, on bus 0 of h at slot (-1: the next free). */
int vfio_config_setup(struct vfio_pci *v, struct pci_host *h, int slot);
/* pci.c: each BAR as its region info says (through c's struct vfio_sys), mapped with its MSI-X
 * table, PBA and unmappable parts trapped; after vfio_config_setup. */
int vfio_bars_setup(struct vfio_pci *v);
/* irq.c */
int vfio_irqs_setup(struct vfio_pci *v);
void vfio_irqs_teardown(struct vfio_pci *v);
/* The guest changed the MSI capability (enable, address, data, mask). */
void vfio_msi_update(struct vfio_pci *v);
extern const struct msix_ops vfio_msix_ops;

#endif
