// SPDX-License-Identifier: MIT
/*
 * The per-device interrupt table: rows filled by each device (virtio, the 16550, VFIO), printed as
 * the exit summary's lines and as JSON. Text and JSON come from the same rows, so a test reading
 * the JSON checks what a person reads. A vLPI's count is not 0 but unknown to the host: the JSON
 * says null, the text "not visible to the host".
 */
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "core/json.h"
#include "core/irq.h"

struct irq_row *irq_report_add(struct irq_report *r)
{
	if (r->nr == r->cap) {
		size_t cap = r->cap ? r->cap * 2 : 16;
		struct irq_row *p = realloc(r->row, cap * sizeof(*p));

		if (!p)
			return NULL;
		r->row = p;
		r->cap = cap;
	}
	struct irq_row *row = &r->row[r->nr++];

	memset(row, 0, sizeof(*row));
	row->host_irq = -1;
	return row;
}

void irq_report_free(struct irq_report *r)
{
	free(r->row);
	*r = (struct irq_report){ 0 };
}

const char *irq_path_name(enum irq_path p)
{
	static const char *const n[] = { "irqfd", "vlpi", "line", "line-resample", "unknown" };

	return (unsigned int)p < sizeof(n) / sizeof(n[0]) ? n[p] : "unknown";
}

const char *irq_counted_by_name(enum irq_counted_by b)
{
	return b == IRQ_BY_VMM ? "vmm" : b == IRQ_BY_HOST ? "host" : "none";
}

/* What raises it into the path: vmm itself, the host's handler, or the device straight to the GIC. */
static const char *signalled_by(const struct irq_row *w)
{
	if (w->path == IRQ_PATH_VLPI)
		return "device";
	return w->by == IRQ_BY_VMM ? "vmm" : "host";
}

/* How the path is driven, for people and for the JSON's "via". */
static const char *via(const struct irq_row *w)
{
	switch (w->path) {
	case IRQ_PATH_IRQFD:
		return w->by == IRQ_BY_VMM ? "eventfd write -> KVM irqfd" : "VFIO host IRQ handler -> eventfd -> KVM irqfd";
	case IRQ_PATH_VLPI:
		return "GICv4 direct injection";
	case IRQ_PATH_LINE:
		return "KVM_IRQ_LINE";
	case IRQ_PATH_LINE_RESAMPLE:
		return "VFIO host IRQ handler -> KVM irqfd + resamplefd";
	default:
		return "KVM irqfd, or a vLPI the kernel paired it with";
	}
}

void irq_report_json(FILE *f, const struct irq_report *r)
{
	fputc('[', f);
	for (size_t i = 0; i < r->nr; i++) {
		const struct irq_row *w = &r->row[i];

		fprintf(f, "%s{\"device\":", i ? "," : "");
		json_write_string(f, w->device);
		if (w->host_bdf[0]) {
			fputs(",\"host_bdf\":", f);
			json_write_string(f, w->host_bdf);
		}
		fputs(",\"pci\":", f);
		json_write_string(f, w->pci);
		fputs(",\"vector\":", f);
		json_write_string(f, w->vector);
		fprintf(f, ",\"path\":\"%s\",\"via\":\"%s\",\"signalled_by\":\"%s\",\"counted_by\":\"%s\",\"count\":",
			irq_path_name(w->path), via(w), signalled_by(w), irq_counted_by_name(w->by));
		if (w->by == IRQ_BY_NONE)
			fputs("null", f);
		else
			fprintf(f, "%" PRIu64, w->count);
		if (w->host_counted)
			fprintf(f, ",\"host_count\":%" PRIu64 ",\"host_irq\":%d,\"host_partial\":%s", w->host_count,
				w->host_irq, w->host_partial ? "true" : "false");
		if (w->note[0]) {
			fputs(",\"note\":", f);
			json_write_string(f, w->note);
		}
		fputc('}', f);
	}
	fputc(']', f);
}

static bool same_device(const struct irq_row *a, const struct irq_row *b)
{
	return !strcmp(a->device, b->device) && !strcmp(a->host_bdf, b->host_bdf) && !strcmp(a->pci, b->pci);
}

void irq_report_text(FILE *f, const struct irq_report *r)
{
	for (size_t i = 0; i < r->nr; i++) {
		const struct irq_row *w = &r->row[i];

		if (!i || !same_device(w, &r->row[i - 1]))
			fprintf(f, "%svmm: interrupts: %s%s%s%s%s:", i ? "\n" : "", w->device, w->host_bdf[0] ? " " : "",
				w->host_bdf, w->pci[0] ? " -> " : "", w->pci);
		else
			fputc(',', f);
		const char *path = w->path == IRQ_PATH_VLPI ? "vLPI" : irq_path_name(w->path);

		/* a device with one line names it by its path alone: "16550: line 4" */
		if (strcmp(w->vector, path))
			fprintf(f, " %s", w->vector);
		fprintf(f, " %s", path);
		if (w->by == IRQ_BY_NONE)
			fputs(" (not visible to the host)", f);
		else
			fprintf(f, " %s%" PRIu64 "%s", w->host_partial ? ">=" : "", w->count,
				w->by == IRQ_BY_HOST ? " (host)" : "");
	}
	if (r->nr)
		fputc('\n', f);
}
