// SPDX-License-Identifier: MIT
#include <linux/pci_regs.h>
#include <stddef.h>
#include <string.h>
#include <sys/eventfd.h>

#include "tests/unit/fake_driver.h"
#include "core/bus.h"
#include "core/mem.h"
#include "core/pci.h"
#include "core/vm.h"

#define CC(f) offsetof(struct virtio_pci_common_cfg, f)

const struct pci_host_layout fd_layout = { FD_ECAM, 0x100000, 0x10000000, 0x1000000, 0x8000000000ULL,
					   0x100000000ULL };

uint32_t fd_cfg_rd(struct fake_driver *f, uint32_t reg, uint32_t len)
{
	uint32_t v = 0;

	bus_access(&f->vm->mmio, FD_ECAM + (f->slot << 15) + reg, (uint8_t *)&v, len, false);
	return v;
}

void fd_cfg_wr(struct fake_driver *f, uint32_t reg, uint32_t v, uint32_t len)
{
	bus_access(&f->vm->mmio, FD_ECAM + (f->slot << 15) + reg, (uint8_t *)&v, len, true);
}

void fd_probe(struct fake_driver *f, struct vm *vm, struct virtio_dev *vd)
{
	memset(f, 0, sizeof(*f));
	f->vm = vm;
	f->vd = vd;
	f->slot = vd->pci.devfn >> 3;
	f->ram_next = FAKE_RAM_BASE + 0x10000;
	fd_cfg_wr(f, PCI_COMMAND, PCI_COMMAND_MEMORY | PCI_COMMAND_MASTER, 2);
	f->bar0 = fd_cfg_rd(f, PCI_BASE_ADDRESS_0, 4) & PCI_BASE_ADDRESS_MEM_MASK;
	f->bar1 = fd_cfg_rd(f, PCI_BASE_ADDRESS_1, 4) & PCI_BASE_ADDRESS_MEM_MASK;
}

uint64_t fd_common_rd(struct fake_driver *f, uint32_t off, uint32_t len)
{
	uint64_t v = 0;

	bus_access(&f->vm->mmio, f->bar0 + off, (uint8_t *)&v, len, false);
	return v;
}

void fd_common_wr(struct fake_driver *f, uint32_t off, uint64_t v, uint32_t len)
{
	bus_access(&f->vm->mmio, f->bar0 + off, (uint8_t *)&v, len, true);
}

uint8_t fd_status(struct fake_driver *f)
{
	return fd_common_rd(f, CC(device_status), 1);
}

uint8_t fd_negotiate(struct fake_driver *f, uint64_t features)
{
	features |= 1ULL << VIRTIO_F_VERSION_1;
	fd_common_wr(f, CC(device_status), 0, 1);
	fd_common_wr(f, CC(device_status), VIRTIO_CONFIG_S_ACKNOWLEDGE, 1);
	fd_common_wr(f, CC(device_status), VIRTIO_CONFIG_S_ACKNOWLEDGE | VIRTIO_CONFIG_S_DRIVER, 1);
	for (uint32_t sel = 0; sel < 2; sel++) {
		fd_common_wr(f, CC(guest_feature_select), sel, 4);
		fd_common_wr(f, CC(guest_feature), (uint32_t)(features >> (32 * sel)), 4);
	}
	fd_common_wr(f, CC(device_status), VIRTIO_CONFIG_S_ACKNOWLEDGE | VIRTIO_CONFIG_S_DRIVER |
		     VIRTIO_CONFIG_S_FEATURES_OK, 1);
	return fd_status(f);
}

uint64_t fd_alloc(struct fake_driver *f, uint64_t size)
{
	uint64_t a = (f->ram_next + 63) & ~63ULL;

	f->ram_next = a + size;
	return a;
}

void *fd_hva(struct fake_driver *f, uint64_t gpa, uint64_t len)
{
	return vm_gpa_to_hva(f->vm, gpa, len);
}

void fd_queue_setup(struct fake_driver *f, unsigned int q, uint16_t size, uint16_t vector)
{
	struct fd_queue *fq = &f->q[q];

	fq->size = size;
	fq->desc = fd_alloc(f, 16ULL * size);
	fq->avail = fd_alloc(f, 6 + 2ULL * size);
	fq->used = fd_alloc(f, 6 + 8ULL * size);
	fd_common_wr(f, CC(queue_select), q, 2);
	fd_common_wr(f, CC(queue_size), size, 2);
	fd_common_wr(f, CC(queue_msix_vector), vector, 2);
	fd_common_wr(f, CC(queue_desc_lo), (uint32_t)fq->desc, 4);
	fd_common_wr(f, CC(queue_desc_hi), fq->desc >> 32, 4);
	fd_common_wr(f, CC(queue_avail_lo), (uint32_t)fq->avail, 4);
	fd_common_wr(f, CC(queue_avail_hi), fq->avail >> 32, 4);
	fd_common_wr(f, CC(queue_used_lo), (uint32_t)fq->used, 4);
	fd_common_wr(f, CC(queue_used_hi), fq->used >> 32, 4);
	fd_common_wr(f, CC(queue_enable), 1, 2);
}

void fd_driver_ok(struct fake_driver *f)
{
	fd_common_wr(f, CC(device_status), VIRTIO_CONFIG_S_ACKNOWLEDGE | VIRTIO_CONFIG_S_DRIVER |
		     VIRTIO_CONFIG_S_FEATURES_OK | VIRTIO_CONFIG_S_DRIVER_OK, 1);
}

void fd_msix_enable(struct fake_driver *f, unsigned int n)
{
	uint32_t cap = f->vd->msix.cap;

	for (unsigned int i = 0; i < n; i++) {
		uint32_t e[4] = { 0x08090040, 0, 0x40 + i, 0 };

		for (int k = 0; k < 4; k++)
			bus_access(&f->vm->mmio, f->bar1 + 16 * i + 4 * k, (uint8_t *)&e[k], 4, true);
	}
	fd_cfg_wr(f, cap + PCI_MSIX_FLAGS, fd_cfg_rd(f, cap + PCI_MSIX_FLAGS, 2) | PCI_MSIX_FLAGS_ENABLE, 2);
}

uint16_t fd_add(struct fake_driver *f, unsigned int q, const struct fd_seg *s, unsigned int n)
{
	struct fd_queue *fq = &f->q[q];
	struct vring_desc *desc = fd_hva(f, fq->desc, 16ULL * fq->size);
	struct vring_avail *avail = fd_hva(f, fq->avail, 6 + 2ULL * fq->size);
	uint16_t head = fq->next_desc % fq->size;

	for (unsigned int i = 0; i < n; i++) {
		uint16_t d = (head + i) % fq->size;

		desc[d].addr = s[i].gpa;
		desc[d].len = s[i].len;
		desc[d].flags = (s[i].write ? VRING_DESC_F_WRITE : 0) | (i + 1 < n ? VRING_DESC_F_NEXT : 0);
		desc[d].next = (d + 1) % fq->size;
	}
	fq->next_desc += n;
	avail->ring[fq->avail_idx % fq->size] = head;
	__atomic_store_n(&avail->idx, ++fq->avail_idx, __ATOMIC_RELEASE);
	return head;
}

void fd_kick(struct fake_driver *f, unsigned int q)
{
	uint16_t v = q;

	bus_access(&f->vm->mmio, f->bar0 + 0x3000 + 4 * q, (uint8_t *)&v, 2, true);
}

int fd_used(struct fake_driver *f, unsigned int q, uint32_t *id, uint32_t *len)
{
	struct fd_queue *fq = &f->q[q];
	struct vring_used *used = fd_hva(f, fq->used, 6 + 8ULL * fq->size);

	if (__atomic_load_n(&used->idx, __ATOMIC_ACQUIRE) == fq->used_seen)
		return 0;
	struct vring_used_elem *u = &used->ring[fq->used_seen++ % fq->size];

	*id = u->id;
	*len = u->len;
	return 1;
}

uint64_t fd_irqs(struct fake_driver *f, unsigned int vector)
{
	eventfd_t n = 0;

	if (eventfd_read(f->vd->msix.vec[vector].route.fd, &n) < 0)
		return 0;
	return n;
}

void fd_run(struct fake_driver *f, int ms)
{
	while (virtio_poll(f->vd, ms) > 0)
		;
}
