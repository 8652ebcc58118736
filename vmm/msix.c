// SPDX-License-Identifier: MIT
/*
 * MSI-X for emulated PCI devices: the table and PBA in their own BAR, the enable and function-mask
 * bits of the capability, and one GSI + irqfd per vector. The device raises a vector with
 * msix_notify(): an eventfd write KVM turns into an ITS MSI, or a PBA bit while the vector cannot
 * be delivered (masked, or its route could not be committed).
 *
 * Two locks: `lock` serialises the guest's changes (table and capability writes) and is held across
 * route commits, which are slow (KVM_SET_GSI_ROUTING waits for an SRCU grace period); `dlock` guards
 * only what delivery reads (enabled, the per-vector deliver flag, the PBA), so a device raising an
 * interrupt never waits for a commit. A route is committed when a vector becomes live (unmask,
 * enable) or a live vector's address or data really changed, and its irqfd is assigned only once the
 * route exists.
 */
#include <errno.h>
#include <linux/pci_regs.h>
#include <string.h>
#include <sys/eventfd.h>
#include <unistd.h>

#include "vmm/pci.h"
#include "vmm/msix.h"
#include "vmm/irq.h"
#include "vmm/vm.h"

static bool vec_live(const struct msix *m, const struct msix_vector *v)
{
	return m->enabled && !m->fmask && !(v->ctrl & PCI_MSIX_ENTRY_CTRL_MASKBIT);
}

/* dlock held. */
static void deliver(struct msix *m, unsigned int i)
{
	eventfd_write(m->vec[i].fd, 1);
	atomic_fetch_add(&m->irqs, 1);
}

/* lock held: brings vector i's route, irqfd and delivery in line with what the guest wrote. */
static void msix_vector_update(struct msix *m, unsigned int i)
{
	struct msix_vector *v = &m->vec[i];
	bool ok = false;

	if (vec_live(m, v)) {
		uint64_t addr = (uint64_t)v->addr_hi << 32 | v->addr_lo;

		ok = v->routed && v->route_addr == addr && v->route_data == v->data;
		if (!ok) {
			struct kvm_irq_routing_entry e;

			irq_msi_entry(m->vm, &e, v->gsi, addr, v->data, pci_dev_rid(m->dev));
			v->routed = irq_route_update(m->vm, v->gsi, &e) == 0;
			if (v->routed) {
				v->route_addr = addr;
				v->route_data = v->data;
			}
			/* the irqfd follows its route: KVM resolves a GSI when the irqfd is assigned */
			if (v->routed && !v->irqfd)
				v->irqfd = irq_irqfd(m->vm, v->fd, v->gsi, -1, true) == 0;
			ok = v->routed && v->irqfd;
			if (!ok) /* pending in the PBA, retried on the guest's next change */
				atomic_fetch_add(&m->route_errors, 1);
		}
	}
	pthread_mutex_lock(&m->dlock);
	v->deliver = ok;
	m->live_enabled = m->enabled;
	if (ok && (m->pba & (1ULL << i))) { /* deliver what arrived while it could not be */
		m->pba &= ~(1ULL << i);
		deliver(m, i);
	}
	pthread_mutex_unlock(&m->dlock);
}

bool msix_notify(struct msix *m, unsigned int i)
{
	bool enabled;

	pthread_mutex_lock(&m->dlock);
	enabled = m->live_enabled;
	/* a guest-chosen vector number out of range (VIRTIO_MSI_NO_VECTOR too) raises nothing */
	if (enabled && i < m->nr) {
		if (m->vec[i].deliver)
			deliver(m, i);
		else
			m->pba |= 1ULL << i;
	}
	pthread_mutex_unlock(&m->dlock);
	return enabled;
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
		if (!is_write && off - MSIX_PBA_OFFSET < 8) { /* the PBA is read-only */
			pthread_mutex_lock(&m->dlock);
			memcpy(data, (uint8_t *)&m->pba + (off - MSIX_PBA_OFFSET), len);
			pthread_mutex_unlock(&m->dlock);
		}
		goto out;
	}
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

void msix_cfg_written(struct msix *m, uint32_t off, uint32_t len)
{
	uint32_t flags = m->cap + PCI_MSIX_FLAGS;

	if (off >= flags + 2 || off + len <= flags)
		return;
	uint16_t ctl;

	memcpy(&ctl, m->dev->cfg + flags, 2);
	pthread_mutex_lock(&m->lock);
	bool en = ctl & PCI_MSIX_FLAGS_ENABLE, fm = ctl & PCI_MSIX_FLAGS_MASKALL;

	if (en != m->enabled || fm != m->fmask) {
		m->enabled = en;
		m->fmask = fm;
		if (!en) { /* disabling MSI-X drops what was pending */
			pthread_mutex_lock(&m->dlock);
			m->pba = 0;
			pthread_mutex_unlock(&m->dlock);
		}
		for (unsigned int i = 0; i < m->nr; i++)
			msix_vector_update(m, i);
	}
	pthread_mutex_unlock(&m->lock);
}

bool msix_enabled(struct msix *m)
{
	pthread_mutex_lock(&m->dlock);
	bool en = m->live_enabled;

	pthread_mutex_unlock(&m->dlock);
	return en;
}

int msix_init(struct msix *m, struct vm *vm, struct pci_dev *d, unsigned int nr, int bar)
{
	if (nr == 0 || nr > MSIX_MAX_VECTORS)
		return -EINVAL;
	memset(m, 0, sizeof(*m));
	pthread_mutex_init(&m->lock, NULL);
	pthread_mutex_init(&m->dlock, NULL);
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
	}
	return pci_bar_add(d, bar, MSIX_BAR_SIZE, false, msix_bar, m, "msix");
}
