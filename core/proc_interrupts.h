/* SPDX-License-Identifier: MIT */
/*
 * The host's /proc/interrupts: the lines of vfio-pci's vectors (vfio-msix[i](BDF), vfio-msi[i](BDF),
 * vfio-intx(BDF)) with their counts, which vfio/host_irqs.c samples on every architecture, and
 * arm64's GICv4 vPE doorbells, which its vLPI report (arm64/gic/vlpi.h) reads.
 */
#ifndef VMM_PROC_INTERRUPTS_H
#define VMM_PROC_INTERRUPTS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define PROC_INTERRUPTS_MAX_LINES 65536u /* lines kept; more set truncated */

enum irq_line_kind { IRQ_LINE_VFIO_MSIX, IRQ_LINE_VFIO_MSI, IRQ_LINE_VFIO_INTX, IRQ_LINE_DOORBELL };

struct irq_line {
	enum irq_line_kind kind;
	unsigned int irq;	/* Linux IRQ number */
	int vector;		/* vfio-msix[i]/vfio-msi[i]: i; otherwise -1 */
	char bdf[16];		/* host device, as vfio-pci names it */
	char chip[48];		/* "ITS-PCI-MSIX-0000:00:13.0", "GICv4-vpe", ... */
	bool has_hwirq;
	uint64_t hwirq;		/* in the chip's domain: the MSI index with per-device ITS MSI
				 * domains (6.12), the vPE id for a doorbell */
	uint64_t total;		/* sum over the CPUs */
	size_t counts;		/* index of its first per-CPU count in proc_interrupts.count */
};

struct proc_interrupts {
	unsigned int nr_cpus;
	struct irq_line *line;	/* only vfio and doorbell lines are kept */
	size_t nr_line;
	uint64_t *count;	/* nr_line * nr_cpus */
	unsigned int skipped;
	bool truncated;
};

int proc_interrupts_parse(const char *text, size_t len, struct proc_interrupts *pi);
void proc_interrupts_free(struct proc_interrupts *pi);
/* Reads path (NULL: /proc/interrupts) and parses it; -errno when unreadable, -ENODATA when it has
 * no CPU header line. */
int proc_interrupts_read(const char *path, struct proc_interrupts *pi);
/* kind MSIX/MSI take a vector; INTX ignores it. NULL: no such line. */
const struct irq_line *proc_interrupts_vfio(const struct proc_interrupts *pi, const char *bdf,
					    enum irq_line_kind kind, int vector);

#endif
