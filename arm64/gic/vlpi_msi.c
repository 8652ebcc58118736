// SPDX-License-Identifier: MIT
/*
 * arm64's arch_ops.msi_report: the vLPI report (vlpi.c) of a passed-through device, as its line,
 * its JSON and the per-vector verdicts vfio keeps for the interrupt table.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>

#include "core/hot.h"
#include "arm64/gic/vlpi.h"
#include "core/arch.h"
#include "core/log.h"
#include "core/msix.h"
#include "core/vm.h"

VMM_HOT_VF static enum msi_verdict_status verdict_of(enum vlpi_status s)
{
	switch (s) {
	case VLPI_FORWARDED: return MSI_VERDICT_DIRECT;
	case VLPI_SOFTWARE: return MSI_VERDICT_SOFTWARE;
	case VLPI_NOT_ENABLED: return MSI_VERDICT_NOT_ENABLED;
	case VLPI_DOORBELLS: /* vLPIs on this host, but not proven this vector's */
	case VLPI_UNKNOWN: break;
	}
	return MSI_VERDICT_UNKNOWN;
}

static void put_json(FILE *f, const struct vlpi_dev *d, const struct vlpi_vector *out)
{
	/* sized to what it says: every vector's reason makes it any length */
	size_t len = vlpi_format_json(NULL, 0, d, out, d->nr_vectors) + 1;
	char *buf = malloc(len);

	if (!buf) {
		fprintf(f, "{\"bdf\":\"%s\",\"error\":\"out of memory for the vLPI report\",\"vectors\":[]}", d->bdf);
		return;
	}
	vlpi_format_json(buf, len, d, out, d->nr_vectors);
	fputs(buf, f);
	free(buf);
}

VMM_HOT_VF int vlpi_msi_report(struct vm *vm, const struct msi_dev *dev, struct msi_verdict *verdict, char *line,
		    size_t size, FILE *json)
{
	if (!vm || !dev || dev->nr_vectors > MSIX_MAX_VECTORS) {
		pr_err("vlpi_msi_report: no VM or device, or more than %u vectors: a caller bug", MSIX_MAX_VECTORS);
		return -EINVAL;
	}
	struct vlpi_vector out[MSIX_MAX_VECTORS];
	const struct vlpi_dev d = { .bdf = dev->bdf, .guest_bdf = dev->guest_bdf, .msi = dev->msi,
				    .nr_vectors = dev->nr_vectors, .devid = dev->devid, .event = dev->event,
				    .vm_vectors = dev->vm_vectors };
	const struct vlpi_src src = { .vm_fd = vm->fd };
	int r = vlpi_report(&src, &d, out);

	if (r < 0)
		return r;
	if (line)
		vlpi_format_line(line, size, &d, out, d.nr_vectors);
	if (json)
		put_json(json, &d, out);
	for (unsigned int i = 0; verdict && i < d.nr_vectors; i++) {
		verdict[i].status = verdict_of(out[i].status);
		snprintf(verdict[i].why, sizeof(verdict[i].why), "%s", out[i].reason);
	}
	return 0;
}
