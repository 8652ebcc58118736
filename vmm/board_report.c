// SPDX-License-Identifier: MIT
/*
 * What the board reports of its own, beside KVM's stats: the interrupt table (the 16550's line,
 * each virtio device, each passed-through device, with the path each takes), the probe peer's and
 * the probe channels' counts; for the exit summary, the --stats JSON and the control socket.
 */
#include <errno.h>
#include <stdio.h>

#include "core/hot.h"
#include "vfio/vfio.h"
#include "virtio/virtio.h"
#include "core/arch.h"
#include "vmm/board.h"
#include "vmm/vcpu_state.h"
#include "core/irq.h"

/* ,"probe_peer":{...} when --probe-peer answers: in vmm ctl get and the --stats JSON */
VMM_HOT_VF void board_peer_json(void *opaque, FILE *f)
{
	struct board *b = opaque;

	if (!b->peer.open)
		return;
	fputs(",\"probe_peer\":", f);
	probe_peer_json(&b->peer, f);
}

/* ,"probe":{...}: the probe's channels, when a probe was asked for */
static void board_probe_json(void *opaque, FILE *f)
{
	struct board *b = opaque;

	if (!b->probe_on)
		return;
	fputs(",\"probe\":", f);
	probe_rx_json(&b->probe, f);
}

/* The interrupt table: the 16550's line, each virtio device, each passed-through device. */
VMM_HOT_VF static int board_irq_report(struct board *b, struct irq_report *r)
{
	struct irq_row *w = irq_report_add(r);

	if (!w)
		return -ENOMEM;
	snprintf(w->device, sizeof(w->device), "16550");
	snprintf(w->vector, sizeof(w->vector), "line");
	w->path = IRQ_PATH_LINE;
	w->by = IRQ_BY_VMM;
	pthread_mutex_lock(&b->uart.lock);
	w->count = b->uart.irqs;
	pthread_mutex_unlock(&b->uart.lock);
	for (int i = 0; i < b->nr_vdev; i++)
		if (virtio_irq_rows(b->vdev[i], r) < 0)
			return -ENOMEM;
	pthread_mutex_lock(&b->irq_lock);
	int e = 0;

	for (int i = 0; i < b->nr_vfio && !e; i++)
		e = vfio_pci_irq_rows(b->vfio[i], r);
	pthread_mutex_unlock(&b->irq_lock);
	return e < 0 ? -ENOMEM : 0;
}

/* The interrupt table as a JSON array ("null" out of memory). */
void board_irq_json(struct board *b, FILE *f)
{
	struct irq_report r = { 0 };

	if (board_irq_report(b, &r) == 0)
		irq_report_json(f, &r);
	else
		fputs("null", f);
	irq_report_free(&r);
}

/* --stats: the "vmm" section's interrupt table, the probe peer's counts and the probe's channels,
 * after its "exits". */
void board_vmm_json(void *opaque, FILE *f)
{
	struct board *b = opaque;

	if (b->machine.arch->vmm_json)
		b->machine.arch->vmm_json(&b->machine, f);
	fputs(",\"interrupts\":", f);
	board_irq_json(opaque, f);
	board_peer_json(opaque, f);
	board_probe_json(opaque, f);
	attribute_json(&b->attr, f);
	vcpu_state_json_locked(b, f); /* under b->stats.lock: write_stats_file calls this hook */
}

/* At exit: the host's last counts (lines the guest left enabled still exist), then the table. */
void board_irq_summary(struct board *b)
{
	struct irq_report r = { 0 };

	pthread_mutex_lock(&b->irq_lock);
	vfio_pci_host_sample_all(b->vfio, b->nr_vfio, NULL);
	pthread_mutex_unlock(&b->irq_lock);
	if (board_irq_report(b, &r) == 0)
		irq_report_text(stderr, &r);
	irq_report_free(&r);
}
