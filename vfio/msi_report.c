// SPDX-License-Identifier: MIT
/*
 * The per-vector report of a passed-through device where the architecture has no msi_report
 * (core/arch.h; x86): every vector the host has an IRQ for reaches the guest through KVM's
 * irqfd, and /proc/interrupts says which ones VFIO enabled. Its line and JSON read as arm64's
 * vLPI report does (arm64/gic/vlpi.c), so what consumes them needs no architecture.
 */
#include <errno.h>
#include <stdarg.h>
#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include "vfio/vfio.h"
#include "core/log.h"
#include "core/proc_interrupts.h"

struct host_vector {
	enum msi_verdict_status status;
	int host_irq;
	int64_t hwirq;
	uint64_t host_count;
	char why[160];
};

static void judge(const struct proc_interrupts *pi, const char *pi_why, const struct msi_dev *d,
		  unsigned int i, struct host_vector *h)
{
	const struct irq_line *l = pi ? proc_interrupts_vfio(pi, d->bdf, d->msi ? IRQ_LINE_VFIO_MSI
								    : IRQ_LINE_VFIO_MSIX, (int)i) : NULL;

	memset(h, 0, sizeof(*h));
	h->host_irq = -1;
	h->hwirq = -1;
	if (!pi) {
		h->status = MSI_VERDICT_UNKNOWN;
		snprintf(h->why, sizeof(h->why), "%s", pi_why);
	} else if (!l) {
		h->status = MSI_VERDICT_NOT_ENABLED;
		snprintf(h->why, sizeof(h->why), "no %s[%u](%s) in /proc/interrupts: VFIO has not enabled it",
			 d->msi ? "vfio-msi" : "vfio-msix", i, d->bdf);
	} else {
		h->status = MSI_VERDICT_SOFTWARE;
		h->host_irq = (int)l->irq;
		h->hwirq = l->has_hwirq && l->hwirq <= INT64_MAX ? (int64_t)l->hwirq : -1;
		h->host_count = l->total;
		snprintf(h->why, sizeof(h->why), "KVM injects it from VFIO's irqfd (vmm knows of no direct "
			 "injection on this architecture)");
	}
}

static const char *status_text(enum msi_verdict_status s)
{
	switch (s) {
	case MSI_VERDICT_SOFTWARE: return "software-injected";
	case MSI_VERDICT_NOT_ENABLED: return "not enabled";
	case MSI_VERDICT_DIRECT: return "vLPI";
	case MSI_VERDICT_UNKNOWN: break;
	}
	return "unknown";
}

static const char *status_name(enum msi_verdict_status s)
{
	switch (s) {
	case MSI_VERDICT_SOFTWARE: return "software";
	case MSI_VERDICT_NOT_ENABLED: return "not-enabled";
	case MSI_VERDICT_DIRECT: return "vlpi";
	case MSI_VERDICT_UNKNOWN: break;
	}
	return "unknown";
}

/* snprintf at the end of what buf holds; a full buf stays terminated. */
static void put(char *buf, size_t size, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
static void put(char *buf, size_t size, const char *fmt, ...)
{
	size_t len = strnlen(buf, size);
	va_list ap;

	if (len + 1 >= size)
		return;
	va_start(ap, fmt);
	vsnprintf(buf + len, size - len, fmt, ap);
	va_end(ap);
}

static void json_str(FILE *f, const char *s)
{
	fputc('"', f);
	for (; *s; s++) {
		unsigned char c = (unsigned char)*s;

		if (c == '"' || c == '\\')
			fprintf(f, "\\%c", c);
		else if (c < 0x20)
			fprintf(f, "\\u%04x", c);
		else
			fputc(c, f);
	}
	fputc('"', f);
}

static void write_line(char *line, size_t size, const struct msi_dev *d, const struct host_vector *h)
{
	line[0] = '\0';
	put(line, size, "vfio %s", d->bdf);
	if (d->guest_bdf)
		put(line, size, " -> %s", d->guest_bdf);
	put(line, size, ":");
	for (unsigned int i = 0; i < d->nr_vectors;) {
		unsigned int j = i + 1;

		/* a run of vectors that read the same is folded */
		while (j < d->nr_vectors && h[j].status == h[i].status &&
		       (h[i].status != MSI_VERDICT_UNKNOWN || !strcmp(h[i].why, h[j].why)))
			j++;
		if (j - i > 1)
			put(line, size, "%s vectors %u-%u %s", i ? "," : "", i, j - 1, status_text(h[i].status));
		else
			put(line, size, "%s vector %u %s", i ? "," : "", i, status_text(h[i].status));
		if (h[i].status == MSI_VERDICT_UNKNOWN)
			put(line, size, ": %s", h[i].why);
		i = j;
	}
}

static void write_json(FILE *f, const struct msi_dev *d, const struct host_vector *h)
{
	fputs("{\"bdf\":", f);
	json_str(f, d->bdf);
	fputs(",\"guest_bdf\":", f);
	json_str(f, d->guest_bdf ? d->guest_bdf : "");
	fputs(",\"vectors\":[", f);
	for (unsigned int i = 0; i < d->nr_vectors; i++) {
		fprintf(f, "%s{\"vector\":%u,\"status\":\"%s\",\"evidence\":\"%s\",\"host_irq\":%d,\"hwirq\":%" PRId64
			",\"host_count\":%" PRIu64 ",\"lpi\":-1,\"vcpu\":-1,\"reason\":", i ? "," : "", i,
			status_name(h[i].status), h[i].status == MSI_VERDICT_UNKNOWN ? "none" : "proc-interrupts",
			h[i].host_irq, h[i].hwirq, h[i].host_count);
		json_str(f, h[i].why);
		fputc('}', f);
	}
	fputs("]}", f);
}

int vfio_msi_report_host(const struct msi_dev *dev, const char *interrupts, struct msi_verdict *verdict,
			 char *line, size_t size, FILE *json)
{
	struct host_vector h[MSIX_MAX_VECTORS];
	struct proc_interrupts pi;
	char pi_why[160];

	if (!dev || !dev->bdf || dev->nr_vectors > MSIX_MAX_VECTORS) {
		pr_err("vfio_msi_report_host: no device, or more than %u vectors: a caller bug", MSIX_MAX_VECTORS);
		return -EINVAL;
	}
	int r = proc_interrupts_read(interrupts, &pi);

	if (r < 0)
		snprintf(pi_why, sizeof(pi_why), "%s: %s", interrupts ? interrupts : "/proc/interrupts",
			 r == -ENODATA ? "no CPU header line" : strerror(-r));
	for (unsigned int i = 0; i < dev->nr_vectors; i++)
		judge(r < 0 ? NULL : &pi, pi_why, dev, i, &h[i]);
	if (r >= 0)
		proc_interrupts_free(&pi);
	if (line && size)
		write_line(line, size, dev, h);
	if (json)
		write_json(json, dev, h);
	for (unsigned int i = 0; verdict && i < dev->nr_vectors; i++) {
		verdict[i].status = h[i].status;
		snprintf(verdict[i].why, sizeof(verdict[i].why), "%s", h[i].why);
	}
	return 0;
}
