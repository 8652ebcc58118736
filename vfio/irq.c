// SPDX-License-Identifier: MIT
/*
 * A passed-through device's interrupts, all delivered by KVM with no userspace relay:
 * - MSI-X: the MSI-X model (core/msix.c) owns one eventfd per vector; enabling MSI-X in the guest
 *   hands those eventfds to VFIO as the vectors' triggers (VFIO_DEVICE_SET_IRQS), and the model's
 *   route + irqfd on the same eventfd let the kernel's IRQ bypass map a GICv4 vLPI.
 * - MSI (one or more vectors): the capability emulated here, each vector taking MSI-X's path: its
 *   eventfd the VFIO trigger, its route + irqfd kept by core/msi_route.c as for an MSI-X vector.
 * - INTx: level-triggered through a KVM irqfd with a resamplefd that VFIO's unmask listens on
 *   (KVM_IRQFD_FLAG_RESAMPLE + VFIO_IRQ_SET_ACTION_UNMASK), so a guest EOI re-arms the device's
 *   line inside the kernel. Only one kind is live at a time, as VFIO requires.
 */
#include <errno.h>
#include <linux/pci_regs.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <sys/ioctl.h>
#include <unistd.h>

#include "vfio/vfio.h"
#include "vfio/vfio_internal.h"
#include "core/irq.h"
#include "core/log.h"
#include "core/msi_route.h"
#include "core/vm.h"

static int set_irqs(struct vfio_pci *v, uint32_t index, uint32_t flags, uint32_t count, const int *fds)
{
	size_t sz = sizeof(struct vfio_irq_set) + count * sizeof(int32_t);
	struct vfio_irq_set *s = calloc(1, sz);

	if (!s)
		return -ENOMEM;
	s->argsz = sz;
	s->flags = flags;
	s->index = index;
	s->start = 0;
	s->count = count;
	if (count && fds)
		memcpy(s->data, fds, count * sizeof(int32_t));
	int r = ioctl(v->fd, VFIO_DEVICE_SET_IRQS, s) < 0 ? -errno : 0;

	free(s);
	v->stats.set_irqs++;
	if (r < 0)
		/* the guest toggles MSI/MSI-X as often as it likes: under the VM's limit */
		pr_warn_guest(v->c->vm, "vfio %s: VFIO_DEVICE_SET_IRQS(index %u, flags 0x%x, %u) failed: %s",
			      v->bdf, index, flags, count, strerror(-r));
	return r;
}

static void intx_enable(struct vfio_pci *v, bool on)
{
	if (!v->has_intx || on == v->intx_on)
		return;
	if (on) {
		if (set_irqs(v, VFIO_PCI_INTX_IRQ_INDEX, VFIO_IRQ_SET_DATA_EVENTFD | VFIO_IRQ_SET_ACTION_TRIGGER,
			     1, &v->intx_fd) < 0 ||
		    set_irqs(v, VFIO_PCI_INTX_IRQ_INDEX, VFIO_IRQ_SET_DATA_EVENTFD | VFIO_IRQ_SET_ACTION_UNMASK,
			     1, &v->intx_resample) < 0)
			return;
		if (irq_irqfd(v->c->vm, v->intx_fd, v->intx_gsi, v->intx_resample, true) < 0)
			return;
		v->stats.intx_enables++;
	} else {
		irq_irqfd(v->c->vm, v->intx_fd, v->intx_gsi, -1, false);
		set_irqs(v, VFIO_PCI_INTX_IRQ_INDEX, VFIO_IRQ_SET_DATA_NONE | VFIO_IRQ_SET_ACTION_TRIGGER, 0, NULL);
	}
	v->intx_on = on;
}

/* MSI-X enabled or disabled by the guest (MSI-X lock held): the vectors' eventfds become the
 * device's triggers before any vector is unmasked, so each unmask (route, then irqfd) pairs with
 * a producer that already exists. */
static void msix_enable(void *opaque, bool on)
{
	struct vfio_pci *v = opaque;
	int fds[MSIX_MAX_VECTORS];

	if (on) {
		intx_enable(v, false);
		for (unsigned int i = 0; i < v->msix_nr; i++)
			fds[i] = msix_vector_eventfd(&v->msix, i);
		if (set_irqs(v, VFIO_PCI_MSIX_IRQ_INDEX, VFIO_IRQ_SET_DATA_EVENTFD | VFIO_IRQ_SET_ACTION_TRIGGER,
			     v->msix_nr, fds) == 0)
			v->stats.msix_enables++;
	} else {
		set_irqs(v, VFIO_PCI_MSIX_IRQ_INDEX, VFIO_IRQ_SET_DATA_NONE | VFIO_IRQ_SET_ACTION_TRIGGER, 0, NULL);
		intx_enable(v, true);
	}
}

const struct msix_ops vfio_msix_ops = { .enable = msix_enable };

/* The MSI capability as the guest wrote it. */
static void msi_read(struct vfio_pci *v, uint16_t *ctl, uint64_t *addr, uint32_t *data, uint32_t *mask)
{
	const uint8_t *c = v->pci.cfg + v->msi_cap;
	bool is64 = v->msi_flags & PCI_MSI_FLAGS_64BIT;
	uint32_t lo, hi = 0;
	uint16_t d16;

	memcpy(ctl, c + PCI_MSI_FLAGS, 2);
	memcpy(&lo, c + PCI_MSI_ADDRESS_LO, 4);
	if (is64)
		memcpy(&hi, c + PCI_MSI_ADDRESS_HI, 4);
	memcpy(&d16, c + (is64 ? PCI_MSI_DATA_64 : PCI_MSI_DATA_32), 2);
	*addr = (uint64_t)hi << 32 | lo;
	*data = d16;
	*mask = 0;
	if (v->msi_flags & PCI_MSI_FLAGS_MASKBIT)
		memcpy(mask, c + (is64 ? PCI_MSI_MASK_64 : PCI_MSI_MASK_32), 4);
}

/* MSI enabled or disabled by the guest: as msix_enable, the vectors' eventfds are the device's
 * triggers before any vector's route and irqfd (msi_vector_update). */
static void msi_enable(struct vfio_pci *v, bool on)
{
	int fds[VFIO_MAX_MSI];

	if (on) {
		intx_enable(v, false);
		for (unsigned int i = 0; i < v->msi_nr; i++)
			fds[i] = v->msi_vec[i].fd;
		if (set_irqs(v, VFIO_PCI_MSI_IRQ_INDEX, VFIO_IRQ_SET_DATA_EVENTFD | VFIO_IRQ_SET_ACTION_TRIGGER,
			     v->msi_nr, fds) == 0)
			v->stats.msi_enables++;
	} else {
		set_irqs(v, VFIO_PCI_MSI_IRQ_INDEX, VFIO_IRQ_SET_DATA_NONE | VFIO_IRQ_SET_ACTION_TRIGGER, 0, NULL);
		intx_enable(v, true);
	}
}

/* Vector i's route and irqfd, the path an MSI-X vector takes (core/msi_route.c); its data carries
 * the vector number in its low bits, as multiple-message MSI does. */
static void msi_vector_update(struct vfio_pci *v, unsigned int i)
{
	bool live = v->msi_enabled && !(v->msi_mask & (1u << i));

	/* a refusal was logged by the seam; the vector stays pending until the guest's next write */
	msi_route_update(&v->msi_vec[i], v->c->vm, live, v->msi_addr, v->msi_data | i, pci_dev_rid(&v->pci));
}

/* The guest wrote the MSI capability: the owner first (VFIO's triggers), then each vector, in the
 * order msix_ctrl_write takes for MSI-X. */
void vfio_msi_update(struct vfio_pci *v)
{
	uint16_t ctl;
	uint64_t addr;
	uint32_t data, mask;

	msi_read(v, &ctl, &addr, &data, &mask);
	bool on = ctl & PCI_MSI_FLAGS_ENABLE;
	unsigned int want = 1u << ((ctl & PCI_MSI_FLAGS_QSIZE) >> 4);

	if (want > v->msi_max) /* more than the device said it can: clamp what the guest asked */
		want = v->msi_max;
	if (on && !v->msi_enabled)
		v->msi_nr = want; /* the vectors are fixed while MSI stays on */
	v->msi_addr = addr;
	v->msi_data = data;
	v->msi_mask = mask;
	if (on != v->msi_enabled) {
		v->msi_enabled = on;
		msi_enable(v, on);
	}
	for (unsigned int i = 0; i < v->msi_nr; i++)
		msi_vector_update(v, i);
}

int vfio_irqs_setup(struct vfio_pci *v)
{
	struct vfio_irq_info info = { .argsz = sizeof(info), .index = VFIO_PCI_INTX_IRQ_INDEX };
	struct pci_host *h = v->pci.host;

	for (unsigned int i = 0; i < v->msi_max; i++) {
		int r = msi_route_init(&v->msi_vec[i], v->c->vm);

		if (r < 0)
			return r;
	}
	v->has_intx = v->pci.cfg[PCI_INTERRUPT_PIN] && h->intx_gsi &&
		      ioctl(v->fd, VFIO_DEVICE_GET_IRQ_INFO, &info) == 0 && info.count > 0;
	if (!v->has_intx)
		return 0;
	v->intx_fd = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
	v->intx_resample = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
	if (v->intx_fd < 0 || v->intx_resample < 0)
		return -EMFILE;
	v->intx_gsi = h->intx_gsi(h->intx_opaque, v->pci.devfn >> 3);
	intx_enable(v, true); /* what a device starts with until its driver turns on MSI(-X) */
	return 0;
}

void vfio_irqs_teardown(struct vfio_pci *v)
{
	if (v->msix_nr)
		msix_ctrl_write(&v->msix, 0);
	if (v->msi_enabled) {
		v->msi_enabled = false;
		set_irqs(v, VFIO_PCI_MSI_IRQ_INDEX, VFIO_IRQ_SET_DATA_NONE | VFIO_IRQ_SET_ACTION_TRIGGER, 0, NULL);
		for (unsigned int i = 0; i < v->msi_nr; i++)
			msi_vector_update(v, i);
	}
	intx_enable(v, false);
	v->has_intx = false;
	for (unsigned int i = 0; i < VFIO_MAX_MSI; i++)
		if (v->msi_vec[i].fd >= 0)
			close(v->msi_vec[i].fd);
	if (v->intx_fd >= 0)
		close(v->intx_fd);
	if (v->intx_resample >= 0)
		close(v->intx_resample);
}
