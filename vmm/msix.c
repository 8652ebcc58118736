// SPDX-License-Identifier: MIT
/*
 * MSI-X for emulated PCI devices: the table and PBA in their own BAR, the enable and function-mask
 * bits of the capability, and one GSI + irqfd per vector. The device raises a vector with
 * msix_notify(): an eventfd write KVM turns into an ITS MSI, or a PBA bit while the vector is masked.
 * Routes (with the requester ID as devid) are committed only when the guest's values change.
 */
#include <errno.h>
#include <linux/pci_regs.h>
#include <string.h>
#include <sys/eventfd.h>
#include <unistd.h>

#include "vmm/vmm.h"

static bool vec_live(const struct msix *m, const struct msix_vector *v)
{
	return m->enabled && !m->fmask && !(v->ctrl & PCI_MSIX_ENTRY_CTRL_MASKBIT);
}

/* Called with m->lock held after anything that can change a vector's delivery. */
static void msix_vector_update(struct msix *m, unsigned int i)
{
	struct msix_vector *v = &m->vec[i];

	if (!vec_live(m, v))
		return;
	uint64_t addr = (uint64_t)v->addr_hi << 32 | v->addr_lo;

	if (!v->routed || v->route_addr != addr || v->route_data != v->data) {
		struct kvm_irq_routing_entry e;

		irq_msi_entry(m->vm, &e, v->gsi, addr, v->data, pci_dev_rid(m->dev));
		if (irq_route_update(m->vm, v->gsi, &e) == 0) {
			v->routed = true;
			v->route_addr = addr;
			v->route_data = v->data;
		}
	}
	if (m->pba & (1ULL << i)) { /* deliver what arrived while masked */
		m->pba &= ~(1ULL << i);
		eventfd_write(v->fd, 1);
		atomic_fetch_add(&m->irqs, 1);
	}
}

void msix_notify(struct msix *m, unsigned int i)
{
	if (i >= m->nr)
		return; /* a guest-chosen vector number out of range (VIRTIO_MSI_NO_VECTOR too) */
	pthread_mutex_lock(&m->lock);
	if (vec_live(m, &m->vec[i])) {
		eventfd_write(m->vec[i].fd, 1);
		atomic_fetch_add(&m->irqs, 1);
	} else {
		m->pba |= 1ULL << i;
	}
	pthread_mutex_unlock(&m->lock);
}

static void msix_bar(void *opaque, uint64_t off, uint8_t *data, uint32_t len, bool is_write)
{
	struct msix *m = opaque;

	if (!is_write)
		memset(data, 0, len);
	if ((len != 4 && len != 8) || off % len)
		return;
	pthread_mutex_lock(&m->lock);
	if (off >= MSIX_PBA_OFFSET) {
		if (!is_write && off - MSIX_PBA_OFFSET < 8) /* the PBA is read-only */
			memcpy(data, (uint8_t *)&m->pba + (off - MSIX_PBA_OFFSET), len);
		goto out;
	}
	for (uint32_t done = 0; done < len; done += 4) {
		uint64_t o = off + done;
		unsigned int i = o / PCI_MSIX_ENTRY_SIZE;

		if (i >= m->nr)
			break;
		struct msix_vector *v = &m->vec[i];
		uint32_t *reg[4] = { &v->addr_lo, &v->addr_hi, &v->data, &v->ctrl };
		uint32_t *r = reg[(o % PCI_MSIX_ENTRY_SIZE) / 4];

		if (is_write) {
			uint32_t val;

			memcpy(&val, data + done, 4);
			*r = (r == &v->ctrl) ? (val & PCI_MSIX_ENTRY_CTRL_MASKBIT) : val;
			msix_vector_update(m, i);
		} else {
			memcpy(data + done, r, 4);
		}
	}
out:
	pthread_mutex_unlock(&m->lock);
}

void msix_cfg_written(struct msix *m, uint32_t off, uint32_t len)
{
	uint32_t flags = m->cap + PCI_MSIX_FLAGS;

	if (off >= flags + 2 || off + len <= flags)
		return;
	uint16_t ctl;

	memcpy(&ctl, m->dev->cfg + flags, 2);
	pthread_mutex_lock(&m->lock);
	m->enabled = ctl & PCI_MSIX_FLAGS_ENABLE;
	m->fmask = ctl & PCI_MSIX_FLAGS_MASKALL;
	for (unsigned int i = 0; i < m->nr; i++)
		msix_vector_update(m, i);
	pthread_mutex_unlock(&m->lock);
}

int msix_init(struct msix *m, struct vm *vm, struct pci_dev *d, unsigned int nr, int bar)
{
	if (nr == 0 || nr > MSIX_MAX_VECTORS)
		return -EINVAL;
	memset(m, 0, sizeof(*m));
	pthread_mutex_init(&m->lock, NULL);
	m->vm = vm;
	m->dev = d;
	m->nr = nr;
	int cap = pci_cap_add(d, PCI_CAP_ID_MSIX, PCI_CAP_MSIX_SIZEOF);

	if (cap < 0)
		return cap;
	m->cap = cap;
	uint16_t ctl = nr - 1, wm = PCI_MSIX_FLAGS_ENABLE | PCI_MSIX_FLAGS_MASKALL;
	uint32_t table = bar, pba = MSIX_PBA_OFFSET | bar;

	memcpy(d->cfg + cap + PCI_MSIX_FLAGS, &ctl, 2);
	memcpy(d->wmask + cap + PCI_MSIX_FLAGS, &wm, 2);
	memcpy(d->cfg + cap + PCI_MSIX_TABLE, &table, 4);
	memcpy(d->cfg + cap + PCI_MSIX_PBA, &pba, 4);
	for (unsigned int i = 0; i < nr; i++) {
		struct msix_vector *v = &m->vec[i];

		v->ctrl = PCI_MSIX_ENTRY_CTRL_MASKBIT; /* vectors start masked */
		v->fd = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
		int gsi = irq_gsi_alloc(vm);

		if (v->fd < 0 || gsi < 0)
			return -ENOSPC;
		v->gsi = gsi;
		int r = irq_irqfd(vm, v->fd, v->gsi, -1, true);

		if (r < 0)
			return r;
	}
	return pci_bar_add(d, bar, MSIX_BAR_SIZE, false, msix_bar, m, "msix");
}
