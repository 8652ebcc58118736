// SPDX-License-Identifier: MIT
/*
 * What the host saw of a passed-through device's interrupts, and the device's rows of the interrupt
 * table. With an irqfd, VFIO's host IRQ handler signals the eventfd KVM injects from: vmm never sees
 * those interrupts, but the host's /proc/interrupts line of each vector (vfio-msix[i](BDF),
 * vfio-msi[i](BDF), vfio-intx(BDF)) counts every one, and the guest cannot touch it. A vector
 * forwarded as a GICv4 vLPI never reaches that handler: its count is not 0 but unknown, and the
 * table says so. Lines come and go with the guest's enables (VFIO frees the host IRQ on disable),
 * so the counts are sampled while the guest runs and summed over the IRQs a vector had.
 */
#include <stdio.h>
#include <string.h>

#include "core/hot.h"
#include "vfio/vfio.h"
#include "core/irq.h"
#include "core/proc_interrupts.h"

VMM_HOT_VF void vfio_host_count_update(struct vfio_host_count *c, const struct irq_line *l)
{
	int irq = l ? (int)l->irq : -1;
	uint64_t now = l ? l->total : 0;

	/* a new IRQ, or the same number handed out again (its count restarted) */
	if (irq != c->irq || now < c->last) {
		if (c->irq >= 0 && irq < 0)
			c->partial = true; /* freed since the last sample: its last interrupts are lost */
		c->before += c->last;
		c->last = 0;
		c->irq = irq;
	}
	if (irq >= 0)
		c->last = now;
}

VMM_HOT_VF uint64_t vfio_host_count_total(const struct vfio_host_count *c)
{
	return c->before + c->last;
}

VMM_HOT_VF void vfio_pci_host_sample(struct vfio_pci *v, const struct proc_interrupts *pi)
{
	for (unsigned int i = 0; i < v->msix_nr && i < MSIX_MAX_VECTORS; i++)
		vfio_host_count_update(&v->host_msix[i], proc_interrupts_vfio(pi, v->bdf, IRQ_LINE_VFIO_MSIX, (int)i));
	for (unsigned int i = 0; i < v->msi_max && i < VFIO_MAX_MSI; i++)
		vfio_host_count_update(&v->host_msi[i], proc_interrupts_vfio(pi, v->bdf, IRQ_LINE_VFIO_MSI, (int)i));
	if (v->has_intx)
		vfio_host_count_update(&v->host_intx, proc_interrupts_vfio(pi, v->bdf, IRQ_LINE_VFIO_INTX, -1));
}

VMM_HOT_VF void vfio_pci_host_sample_all(struct vfio_pci *const *devs, int n, const char *path)
{
	struct proc_interrupts pi;

	if (n <= 0 || proc_interrupts_read(path, &pi) < 0)
		return; /* the rows then show what the last sample saw */
	for (int i = 0; i < n; i++)
		vfio_pci_host_sample(devs[i], &pi);
	proc_interrupts_free(&pi);
}

VMM_HOT_VF static struct irq_row *row(struct vfio_pci *v, struct irq_report *r, const char *kind, int i,
			   const struct vfio_host_count *c)
{
	struct irq_row *w = irq_report_add(r);

	if (!w)
		return NULL;
	snprintf(w->device, sizeof(w->device), "vfio");
	snprintf(w->host_bdf, sizeof(w->host_bdf), "%s", v->bdf);
	snprintf(w->pci, sizeof(w->pci), "00:%02x.0", v->pci.devfn >> 3);
	if (i >= 0)
		snprintf(w->vector, sizeof(w->vector), "%s%d", kind, i);
	else
		snprintf(w->vector, sizeof(w->vector), "%s", kind);
	w->by = IRQ_BY_HOST;
	w->count = w->host_count = vfio_host_count_total(c);
	w->host_counted = true;
	w->host_irq = c->irq;
	w->host_partial = c->partial;
	return w;
}

/* An MSI or MSI-X vector's path, from the vLPI verdict taken while the guest ran. */
VMM_HOT_VF static void msi_path(const struct vfio_pci *v, unsigned int i, struct irq_row *w)
{
	if (i >= v->nr_verdict) {
		w->path = IRQ_PATH_UNKNOWN;
		snprintf(w->note, sizeof(w->note), "no vLPI verdict: the guest never had its vectors live for a second");
		return;
	}
	const struct msi_verdict *d = &v->verdict[i];

	switch (d->status) {
	case MSI_VERDICT_DIRECT:
		w->path = IRQ_PATH_VLPI;
		w->by = IRQ_BY_NONE;
		/* what the host handled for it anyway (host_count) ran while it was not forwarded:
		 * before the guest's ITS mapped it, or masked; never the vLPI's own count */
		if (w->host_count)
			snprintf(w->note, sizeof(w->note), "vLPI (not visible to the host); its host IRQ ran %llu "
				 "times while it was not forwarded", (unsigned long long)w->host_count);
		else
			snprintf(w->note, sizeof(w->note), "vLPI (not visible to the host)");
		break;
	case MSI_VERDICT_SOFTWARE:
		w->path = IRQ_PATH_IRQFD;
		break;
	case MSI_VERDICT_NOT_ENABLED:
		w->path = IRQ_PATH_IRQFD;
		snprintf(w->note, sizeof(w->note), "not enabled by VFIO when the verdict was taken");
		break;
	default:
		w->path = IRQ_PATH_UNKNOWN;
		snprintf(w->note, sizeof(w->note), "%s", d->why);
		break;
	}
}

VMM_HOT_VF int vfio_pci_irq_rows(struct vfio_pci *v, struct irq_report *r)
{
	struct irq_row *w;

	for (unsigned int i = 0; i < v->msix_nr && i < MSIX_MAX_VECTORS; i++) {
		if (!(w = row(v, r, "msix", (int)i, &v->host_msix[i])))
			return -1;
		msi_path(v, i, w);
	}
	/* MSI, on a device without MSI-X, once the guest used it */
	for (unsigned int i = 0; !v->msix_nr && v->stats.msi_enables && i < v->msi_max && i < VFIO_MAX_MSI; i++) {
		if (!(w = row(v, r, "msi", (int)i, &v->host_msi[i])))
			return -1;
		msi_path(v, i, w);
	}
	if (v->has_intx) {
		if (!(w = row(v, r, "intx", -1, &v->host_intx)))
			return -1;
		w->path = IRQ_PATH_LINE_RESAMPLE;
	}
	return 0;
}
