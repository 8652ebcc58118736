// SPDX-License-Identifier: MIT
/*
 * The parsers behind the vLPI report: KVM's vgic-state and vgic-its-state debugfs files (the
 * host's /proc/interrupts is core/proc_interrupts.c's). Every byte is untrusted text: parsed in
 * spans (core/host_text.h), a line that does not parse skipped and counted.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "core/hot.h"
#include "arm64/gic/vlpi.h"
#include "core/log.h"

/* A vCPU column: a small number or -1 ("none"). */
static bool tok_vcpu(struct span t, int *out)
{
	uint64_t v;

	if (span_is(t, "-1")) {
		*out = -1;
		return true;
	}
	if (!span_u64(t, 10, 65535, &v))
		return false;
	*out = (int)v;
	return true;
}

/* ---- vgic-state ---- */

VMM_HOT_VF static void dist_field(struct span line, const char *key, int *out)
{
	struct span rest = line, tok;
	uint64_t v;

	if (!span_next_tok(&rest, &tok) || !span_is(tok, key) || !span_next_tok(&rest, &tok))
		return;
	if (span_u64(tok, 10, INT32_MAX, &v))
		*out = (int)v;
}

/* "VCPU n TYP ..." (or "VCPUnn", %2d leaves no space from 10 on) and "SPI  n TYP ...". Returns
 * true for a section header and sets *section and *nr_flags. */
static bool section_header(struct span line, int *section, unsigned int *nr_flags)
{
	struct span rest = line, tok, num;
	uint32_t id;

	if (!span_next_tok(&rest, &tok))
		return false;
	bool vcpu = span_starts_with(tok, "VCPU"), spi = span_is(tok, "SPI");

	if (!vcpu && !spi)
		return false;
	if (vcpu && tok.n > 4) {	/* "VCPU12" */
		num.p = tok.p + 4;
		num.n = tok.n - 4;
	} else if (!span_next_tok(&rest, &num)) {
		return false;
	}
	if (!span_u32(num, 10, &id) || id > 65535 || !span_next_tok(&rest, &tok) || !span_is(tok, "TYP"))
		return false;
	*section = vcpu ? (int)id : -1;
	while (span_next_tok(&rest, &tok)) {
		if (span_is(tok, "PLAEHCG"))
			*nr_flags = 7;
		else if (span_is(tok, "PLAEHL"))
			*nr_flags = 6;
	}
	return true;
}

static bool irq_type(struct span t, enum vgic_irq_type *type)
{
	static const char *const names[] = { "SGI", "PPI", "SPI", "LPI" };

	for (unsigned int i = 0; i < 4; i++) {
		if (span_is(t, names[i])) {
			*type = (enum vgic_irq_type)i;
			return true;
		}
	}
	return false;
}

/* One IRQ line; false when it is not one (or is damaged). */
static bool irq_line(struct span line, unsigned int nr_flags, int section, struct vgic_irq_state *q,
		     unsigned int *nf_seen)
{
	struct span rest = line, t;
	uint32_t hwid, pri;
	uint64_t dummy;

	memset(q, 0, sizeof(*q));
	q->section = section;
	if (!span_next_tok(&rest, &t) || !irq_type(t, &q->type) || !span_next_tok(&rest, &t) ||
	    !span_u32(t, 10, &q->intid) || !span_next_tok(&rest, &t))
		return false;
	if (span_is(t, "freed")) {
		q->freed = true;
		q->target_vcpu = q->vcpu = -1;
		return q->type == VGIC_LPI;
	}
	if (!tok_vcpu(t, &q->target_vcpu) || !span_next_tok(&rest, &t))
		return false;
	/* The flags: 7 digits (PLAEHCG) or 6 (PLAEHL); without a header, whichever this is. */
	unsigned int nf = nr_flags ? nr_flags : (unsigned int)t.n;

	if (t.n != nf || (nf != 6 && nf != 7))
		return false;
	*nf_seen = nf;
	for (size_t i = 0; i < t.n; i++)
		if (t.p[i] != '0' && t.p[i] != '1')
			return false;
	q->pending = t.p[0] == '1';
	q->line_level = t.p[1] == '1';
	q->active = t.p[2] == '1';
	q->enabled = t.p[3] == '1';
	q->hw = t.p[4] == '1';
	q->level = t.p[5] == '1';
	q->group = nf == 7 && t.p[6] == '1';
	/* 4.15's six-flag format printed HWID and PRI in hex, later ones in decimal. */
	unsigned int base = nf == 6 ? 16 : 10;

	if (!span_next_tok(&rest, &t) || !span_u32(t, base, &hwid) ||
	    !span_next_tok(&rest, &t) || !span_u64(t, 16, UINT64_MAX, &dummy) ||	/* TARGET (mpidr) */
	    !span_next_tok(&rest, &t) || !span_u64(t, 16, UINT64_MAX, &dummy) ||	/* SRC */
	    !span_next_tok(&rest, &t) || !span_u32(t, base, &pri) || pri > 255 ||
	    !span_next_tok(&rest, &t) || !tok_vcpu(t, &q->vcpu))
		return false;
	q->hwid = hwid;
	q->priority = pri;
	return true;
}

VMM_HOT_VF int vgic_state_parse(const char *text, size_t len, struct vgic_state *st)
{
	struct span line;
	size_t pos = 0, cap = 0;
	int section = -1;

	memset(st, 0, sizeof(*st));
	st->nr_spis = st->nr_lpis = st->enabled = -1;
	if (!text)
		return -EINVAL;
	while (span_next_line(text, len, &pos, &line)) {
		struct span rest = line, tok;
		struct vgic_irq_state q;
		unsigned int nf = 0;

		if (!span_next_tok(&rest, &tok))
			continue;
		if (span_is(tok, "vgic_model:")) {
			if (span_next_tok(&rest, &tok) && tok.n < sizeof(st->model)) {
				memcpy(st->model, tok.p, tok.n);
				st->model[tok.n] = '\0';
			}
			continue;
		}
		if (span_is(tok, "nr_spis:") || span_is(tok, "nr_lpis:") || span_is(tok, "enabled:")) {
			dist_field(line, "nr_spis:", &st->nr_spis);
			dist_field(line, "nr_lpis:", &st->nr_lpis);
			dist_field(line, "enabled:", &st->enabled);
			continue;
		}
		/* The banner, its underline, the flag legend and the header underline. */
		if (span_is(tok, "Distributor") || tok.p[0] == '=' || tok.p[0] == '-' ||
		    span_starts_with(tok, "P=") || span_starts_with(tok, "E=") || span_starts_with(tok, "G="))
			continue;
		if (section_header(line, &section, &st->nr_flags)) {
			st->nr_sections++;
			continue;
		}
		if (!irq_line(line, st->nr_flags, section, &q, &nf)) {
			st->skipped++;
			continue;
		}
		if (!st->nr_flags && nf)	/* no header seen: the first line sets the format */
			st->nr_flags = nf;
		if (st->nr_irq >= VLPI_MAX_IRQS) {
			st->truncated = true;
			continue;
		}
		if (!span_grow((void **)&st->irq, &cap, st->nr_irq, sizeof(*st->irq))) {
			pr_err("vgic-state: out of memory after %zu IRQs: free memory and retry",
			       st->nr_irq);
			vgic_state_free(st);
			return -ENOMEM;
		}
		st->irq[st->nr_irq++] = q;
	}
	return 0;
}

VMM_HOT_VF void vgic_state_free(struct vgic_state *st)
{
	free(st->irq);
	st->irq = NULL;
	st->nr_irq = 0;
}

/* ---- vgic-its-state@ADDR ---- */

VMM_HOT_VF int its_state_parse(const char *text, size_t len, struct its_state *st)
{
	struct span line;
	size_t pos = 0, cap = 0;
	bool have_dev = false;
	uint32_t devid = 0;

	memset(st, 0, sizeof(*st));
	if (!text)
		return -EINVAL;
	while (span_next_line(text, len, &pos, &line)) {
		struct span rest = line, tok;
		struct its_ite_state e = { 0 };
		uint32_t hw;

		if (!span_next_tok(&rest, &tok))
			continue;
		if (span_is(tok, "Device")) {
			/* "Device ID: 0x%x, Event ID Range: [0 - N]": the ID is the third token. */
			have_dev = span_next_tok(&rest, &tok) && span_is(tok, "ID:") && span_next_tok(&rest, &tok) &&
				   tok.n > 1 && tok.p[tok.n - 1] == ',' &&
				   span_u32((struct span){ tok.p, tok.n - 1 }, 16, &devid);
			if (!have_dev)
				st->skipped++;
			continue;
		}
		if (span_is(tok, "EVENT_ID") || tok.p[0] == '-')
			continue;
		e.devid = devid;
		if (!have_dev || !span_u32(tok, 10, &e.event) ||
		    !span_next_tok(&rest, &tok) || !span_u32(tok, 10, &e.intid) ||
		    !span_next_tok(&rest, &tok) || !span_u32(tok, 10, &e.hwintid) ||
		    !span_next_tok(&rest, &tok) || !span_u32(tok, 10, &e.target) ||
		    !span_next_tok(&rest, &tok) || !span_u32(tok, 10, &e.collection) ||
		    !span_next_tok(&rest, &tok) || !span_u32(tok, 10, &hw) || hw > 1) {
			st->skipped++;
			continue;
		}
		e.hw = hw;
		if (st->nr >= VLPI_MAX_IRQS) {
			st->truncated = true;
			continue;
		}
		if (!span_grow((void **)&st->ite, &cap, st->nr, sizeof(*st->ite))) {
			pr_err("vgic-its-state: out of memory after %zu entries: free memory and retry",
			       st->nr);
			its_state_free(st);
			return -ENOMEM;
		}
		st->ite[st->nr++] = e;
	}
	return 0;
}

VMM_HOT_VF void its_state_free(struct its_state *st)
{
	free(st->ite);
	st->ite = NULL;
	st->nr = 0;
}

VMM_HOT_VF const struct its_ite_state *its_state_find(const struct its_state *st, uint32_t devid,
					   uint32_t event)
{
	for (size_t i = 0; st && i < st->nr; i++)
		if (st->ite[i].devid == devid && st->ite[i].event == event)
			return &st->ite[i];
	return NULL;
}

VMM_HOT_VF int vlpi_count_per_vcpu(const char *vgic_state, size_t len, int *count, int nr_vcpus)
{
	struct vgic_state st;

	for (int i = 0; i < nr_vcpus; i++)
		count[i] = -1;
	if (!vgic_state || vgic_state_parse(vgic_state, len, &st) < 0)
		return -ENODATA;
	for (int i = 0; i < nr_vcpus; i++)
		count[i] = 0;
	/* a GICv4 vLPI is an LPI KVM marks hw; it belongs to the vCPU it targets */
	for (size_t k = 0; k < st.nr_irq; k++) {
		const struct vgic_irq_state *q = &st.irq[k];

		if (q->type == VGIC_LPI && q->hw && !q->freed && q->target_vcpu >= 0 && q->target_vcpu < nr_vcpus)
			count[q->target_vcpu]++;
	}
	vgic_state_free(&st);
	return 0;
}
