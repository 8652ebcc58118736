// SPDX-License-Identifier: MIT
/*
 * MSI-X, one model for emulated devices (virtio) and passed-through ones (VFIO): the table and PBA
 * in a BAR, the enable and function-mask bits of the capability, and per vector one GSI and one
 * eventfd. Whoever raises the vector writes the eventfd: vmm's device model through msix_notify(),
 * or the host device itself once VFIO has the same eventfd as its trigger.
 *
 * Delivery is KVM's, per vector as core/msi_route.c does it for MSI too: a live vector (enabled,
 * not masked) has its route committed and an irqfd on its eventfd; a masked one keeps what is
 * raised in the eventfd, which the PBA bit reads.
 */
#include <errno.h>
#include <linux/pci_regs.h>
#include <string.h>
#include <sys/eventfd.h>

#include "core/hot.h"
#include "core/msix.h"
#include "core/pci.h"
#include "core/vm.h"

static bool vec_live(const struct msix *m, const struct msix_vector *v)
{
	return m->enabled && !m->fmask && !(v->ctrl & PCI_MSIX_ENTRY_CTRL_MASKBIT);
}

/* lock held: brings vector i's route and irqfd in line with what the guest wrote. */
VMM_HOT static void msix_vector_update(struct msix *m, unsigned int i)
{
	struct msix_vector *v = &m->vec[i];
	uint64_t addr = (uint64_t)v->addr_hi << 32 | v->addr_lo;

	if (msi_route_update(&v->route, m->vm, vec_live(m, v), addr, v->data, pci_dev_rid(m->dev)) < 0)
		atomic_fetch_add(&m->route_errors, 1);
}

VMM_HOT_IDLE bool msix_notify(struct msix *m, unsigned int i)
{
	if (!atomic_load(&m->live_enabled))
		return false;
	/* a guest-chosen vector number out of range (VIRTIO_MSI_NO_VECTOR too) raises nothing */
	if (i < m->nr) {
		eventfd_write(m->vec[i].route.fd, 1);
		atomic_fetch_add(&m->vec[i].raised, 1);
		atomic_fetch_add(&m->irqs, 1);
	}
	return true;
}

static void msix_pba_read(struct msix *m, uint64_t off, uint8_t *data, uint32_t len)
{
	uint64_t pba = 0;

	for (unsigned int i = 0; i < m->nr; i++)
		if (msi_route_pending(&m->vec[i].route))
			pba |= 1ULL << i;
	if (off < 8)
		memcpy(data, (uint8_t *)&pba + off, len <= 8 - off ? len : 8 - off);
}

VMM_HOT void msix_table_access(struct msix *m, uint64_t off, uint8_t *data, uint32_t len, bool is_write)
{
	if (!is_write)
		memset(data, 0, len);
	if ((len != 4 && len != 8) || off % len)
		return;
	pthread_mutex_lock(&m->lock);
	unsigned int i = off / PCI_MSIX_ENTRY_SIZE;

	if (i >= m->nr)
		goto out;
	struct msix_vector *v = &m->vec[i];
	/* an 8-byte access stays inside one 16-byte entry (it is 8-aligned) */
	uint32_t *reg[4] = { &v->addr_lo, &v->addr_hi, &v->data, &v->ctrl };
	bool changed = false;

	for (uint32_t done = 0; done < len; done += 4) {
		uint32_t *r = reg[((off + done) % PCI_MSIX_ENTRY_SIZE) / 4];

		if (is_write) {
			uint32_t val;

			memcpy(&val, data + done, 4);
			if (r == &v->ctrl)
				val &= PCI_MSIX_ENTRY_CTRL_MASKBIT;
			changed |= *r != val;
			*r = val;
		} else {
			memcpy(data + done, r, 4);
		}
	}
	if (changed) /* one update per access: a 64-bit address write is one change */
		msix_vector_update(m, i);
out:
	pthread_mutex_unlock(&m->lock);
}

VMM_HOT void msix_pba_access(struct msix *m, uint64_t off, uint8_t *data, uint32_t len, bool is_write)
{
	if (!is_write)
		memset(data, 0, len);
	if (is_write || (len != 4 && len != 8) || off % len)
		return; /* the PBA is read-only */
	pthread_mutex_lock(&m->lock);
	msix_pba_read(m, off, data, len);
	pthread_mutex_unlock(&m->lock);
}

/* The emulated layout: table at 0, PBA at MSIX_PBA_OFFSET of the device's own MSI-X BAR. */
VMM_HOT static void msix_bar(void *opaque, uint64_t off, uint8_t *data, uint32_t len, bool is_write)
{
	struct msix *m = opaque;

	if (off >= MSIX_PBA_OFFSET)
		msix_pba_access(m, off - MSIX_PBA_OFFSET, data, len, is_write);
	else
		msix_table_access(m, off, data, len, is_write);
}

VMM_HOT void msix_ctrl_write(struct msix *m, uint16_t ctl)
{
	pthread_mutex_lock(&m->lock);
	bool en = ctl & PCI_MSIX_FLAGS_ENABLE, fm = ctl & PCI_MSIX_FLAGS_MASKALL;

	if (en != m->enabled || fm != m->fmask) {
		bool was = m->enabled;

		m->enabled = en;
		m->fmask = fm;
		atomic_store(&m->live_enabled, en);
		/* the owner first (VFIO hands the device its triggers), then routes and irqfds */
		if (en != was && m->ops && m->ops->enable)
			m->ops->enable(m->opaque, en);
		for (unsigned int i = 0; i < m->nr; i++) {
			msix_vector_update(m, i);
			if (!en) /* disabling MSI-X drops what was pending */
				msi_route_drop(&m->vec[i].route);
		}
	}
	pthread_mutex_unlock(&m->lock);
}

VMM_HOT void msix_cfg_written(struct msix *m, uint32_t off, uint32_t len)
{
	uint32_t flags = m->cap + PCI_MSIX_FLAGS;

	if (off >= flags + 2 || off + len <= flags)
		return;
	uint16_t ctl;

	memcpy(&ctl, m->dev->cfg + flags, 2);
	msix_ctrl_write(m, ctl);
}

VMM_HOT bool msix_enabled(struct msix *m)
{
	return atomic_load(&m->live_enabled);
}

VMM_HOT int msix_vector_eventfd(const struct msix *m, unsigned int i)
{
	return i < m->nr ? m->vec[i].route.fd : -1;
}

VMM_HOT int msix_init_vectors(struct msix *m, struct vm *vm, struct pci_dev *d, unsigned int nr,
		      const struct msix_ops *ops, void *opaque)
{
	if (nr == 0 || nr > MSIX_MAX_VECTORS)
		return -EINVAL;
	memset(m, 0, sizeof(*m));
	pthread_mutex_init(&m->lock, NULL);
	m->vm = vm;
	m->dev = d;
	m->nr = nr;
	m->ops = ops;
	m->opaque = opaque;
	for (unsigned int i = 0; i < nr; i++) {
		m->vec[i].ctrl = PCI_MSIX_ENTRY_CTRL_MASKBIT; /* vectors start masked */
		int r = msi_route_init(&m->vec[i].route, vm);

		if (r < 0)
			return r;
	}
	return 0;
}

int msix_init(struct msix *m, struct vm *vm, struct pci_dev *d, unsigned int nr, int bar)
{
	int r = msix_init_vectors(m, vm, d, nr, NULL, NULL);

	if (r < 0)
		return r;
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
	return pci_bar_add(d, bar, MSIX_BAR_SIZE, false, msix_bar, m, "msix");
}
