// SPDX-License-Identifier: MIT
/*
 * The parsers behind the vLPI report: KVM's vgic-state and vgic-its-state debugfs files and the
 * host's /proc/interrupts. Every byte is untrusted text: parsed in spans (no unbounded copies),
 * numbers checked for overflow, a line that does not parse skipped and counted.
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
#include "vfio/vlpi.h"
#include "core/log.h"

/* ---- text helpers: spans, never NUL-terminated copies of unbounded input ---- */

struct span {
	const char *p;
	size_t n;
};

/* The next line of [*pos, len): without its '\n'. false at the end. */
static bool next_line(const char *text, size_t len, size_t *pos, struct span *line)
{
	if (*pos >= len)
		return false;
	const char *s = text + *pos;
	const char *nl = memchr(s, '\n', len - *pos);
	size_t n = nl ? (size_t)(nl - s) : len - *pos;

	line->p = s;
	line->n = n;
	*pos += n + (nl ? 1 : 0);
	return true;
}

static bool is_space(char c)
{
	return c == ' ' || c == '\t' || c == '\r' || c == '\f' || c == '\v' || c == '\0';
}

/* The next whitespace-separated token of *rest; false when none is left. */
VMM_HOT_VF static bool next_tok(struct span *rest, struct span *tok)
{
	while (rest->n && is_space(*rest->p)) {
		rest->p++;
		rest->n--;
	}
	if (!rest->n)
		return false;
	tok->p = rest->p;
	while (rest->n && !is_space(*rest->p)) {
		rest->p++;
		rest->n--;
	}
	tok->n = (size_t)(rest->p - tok->p);
	return true;
}

static bool tok_is(struct span t, const char *s)
{
	size_t n = strlen(s);

	return t.n == n && !memcmp(t.p, s, n);
}

static bool starts_with(struct span t, const char *s)
{
	size_t n = strlen(s);

	return t.n >= n && !memcmp(t.p, s, n);
}

static int digit_val(char c, unsigned int base)
{
	int v = -1;

	if (c >= '0' && c <= '9')
		v = c - '0';
	else if (c >= 'a' && c <= 'f')
		v = c - 'a' + 10;
	else if (c >= 'A' && c <= 'F')
		v = c - 'A' + 10;
	return v >= 0 && (unsigned int)v < base ? v : -1;
}

/* An unsigned number filling the whole token, at most max; false on garbage or overflow. */
VMM_HOT_VF static bool tok_u64(struct span t, unsigned int base, uint64_t max, uint64_t *out)
{
	uint64_t v = 0;

	if (base == 16 && t.n > 2 && t.p[0] == '0' && (t.p[1] == 'x' || t.p[1] == 'X')) {
		t.p += 2;
		t.n -= 2;
	}
	if (!t.n)
		return false;
	for (size_t i = 0; i < t.n; i++) {
		int d = digit_val(t.p[i], base);

		if (d < 0 || v > (max - (uint64_t)d) / base)
			return false;
		v = v * base + (uint64_t)d;
	}
	*out = v;
	return true;
}

static bool tok_u32(struct span t, unsigned int base, uint32_t *out)
{
	uint64_t v;

	if (!tok_u64(t, base, UINT32_MAX, &v))
		return false;
	*out = (uint32_t)v;
	return true;
}

/* A vCPU column: a small number or -1 ("none"). */
static bool tok_vcpu(struct span t, int *out)
{
	uint64_t v;

	if (tok_is(t, "-1")) {
		*out = -1;
		return true;
	}
	if (!tok_u64(t, 10, 65535, &v))
		return false;
	*out = (int)v;
	return true;
}

/* Grows *arr (elements of size sz) to hold need elements; false when out of memory. */
static bool grow_to(void **arr, size_t *cap, size_t need, size_t sz)
{
	size_t ncap = *cap ? *cap : 64;

	if (need <= *cap)
		return true;
	while (ncap < need)
		ncap *= 2;
	void *p = realloc(*arr, ncap * sz);

	if (!p)
		return false;
	*arr = p;
	*cap = ncap;
	return true;
}

static bool grow(void **arr, size_t *cap, size_t nr, size_t sz)
{
	return grow_to(arr, cap, nr + 1, sz);
}

/* ---- vgic-state ---- */

VMM_HOT_VF static void dist_field(struct span line, const char *key, int *out)
{
	struct span rest = line, tok;
	uint64_t v;

	if (!next_tok(&rest, &tok) || !tok_is(tok, key) || !next_tok(&rest, &tok))
		return;
	if (tok_u64(tok, 10, INT32_MAX, &v))
		*out = (int)v;
}

/* "VCPU n TYP ..." (or "VCPUnn", %2d leaves no space from 10 on) and "SPI  n TYP ...". Returns
 * true for a section header and sets *section and *nr_flags. */
static bool section_header(struct span line, int *section, unsigned int *nr_flags)
{
	struct span rest = line, tok, num;
	uint32_t id;

	if (!next_tok(&rest, &tok))
		return false;
	bool vcpu = starts_with(tok, "VCPU"), spi = tok_is(tok, "SPI");

	if (!vcpu && !spi)
		return false;
	if (vcpu && tok.n > 4) {	/* "VCPU12" */
		num.p = tok.p + 4;
		num.n = tok.n - 4;
	} else if (!next_tok(&rest, &num)) {
		return false;
	}
	if (!tok_u32(num, 10, &id) || id > 65535 || !next_tok(&rest, &tok) || !tok_is(tok, "TYP"))
		return false;
	*section = vcpu ? (int)id : -1;
	while (next_tok(&rest, &tok)) {
		if (tok_is(tok, "PLAEHCG"))
			*nr_flags = 7;
		else if (tok_is(tok, "PLAEHL"))
			*nr_flags = 6;
	}
	return true;
}

static bool irq_type(struct span t, enum vgic_irq_type *type)
{
	static const char *const names[] = { "SGI", "PPI", "SPI", "LPI" };

	for (unsigned int i = 0; i < 4; i++) {
		if (tok_is(t, names[i])) {
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
	if (!next_tok(&rest, &t) || !irq_type(t, &q->type) || !next_tok(&rest, &t) ||
	    !tok_u32(t, 10, &q->intid) || !next_tok(&rest, &t))
		return false;
	if (tok_is(t, "freed")) {
		q->freed = true;
		q->target_vcpu = q->vcpu = -1;
		return q->type == VGIC_LPI;
	}
	if (!tok_vcpu(t, &q->target_vcpu) || !next_tok(&rest, &t))
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

	if (!next_tok(&rest, &t) || !tok_u32(t, base, &hwid) ||
	    !next_tok(&rest, &t) || !tok_u64(t, 16, UINT64_MAX, &dummy) ||	/* TARGET (mpidr) */
	    !next_tok(&rest, &t) || !tok_u64(t, 16, UINT64_MAX, &dummy) ||	/* SRC */
	    !next_tok(&rest, &t) || !tok_u32(t, base, &pri) || pri > 255 ||
	    !next_tok(&rest, &t) || !tok_vcpu(t, &q->vcpu))
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
	while (next_line(text, len, &pos, &line)) {
		struct span rest = line, tok;
		struct vgic_irq_state q;
		unsigned int nf = 0;

		if (!next_tok(&rest, &tok))
			continue;
		if (tok_is(tok, "vgic_model:")) {
			if (next_tok(&rest, &tok) && tok.n < sizeof(st->model)) {
				memcpy(st->model, tok.p, tok.n);
				st->model[tok.n] = '\0';
			}
			continue;
		}
		if (tok_is(tok, "nr_spis:") || tok_is(tok, "nr_lpis:") || tok_is(tok, "enabled:")) {
			dist_field(line, "nr_spis:", &st->nr_spis);
			dist_field(line, "nr_lpis:", &st->nr_lpis);
			dist_field(line, "enabled:", &st->enabled);
			continue;
		}
		/* The banner, its underline, the flag legend and the header underline. */
		if (tok_is(tok, "Distributor") || tok.p[0] == '=' || tok.p[0] == '-' ||
		    starts_with(tok, "P=") || starts_with(tok, "E=") || starts_with(tok, "G="))
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
		if (!grow((void **)&st->irq, &cap, st->nr_irq, sizeof(*st->irq))) {
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
	while (next_line(text, len, &pos, &line)) {
		struct span rest = line, tok;
		struct its_ite_state e = { 0 };
		uint32_t hw;

		if (!next_tok(&rest, &tok))
			continue;
		if (tok_is(tok, "Device")) {
			/* "Device ID: 0x%x, Event ID Range: [0 - N]": the ID is the third token. */
			have_dev = next_tok(&rest, &tok) && tok_is(tok, "ID:") && next_tok(&rest, &tok) &&
				   tok.n > 1 && tok.p[tok.n - 1] == ',' &&
				   tok_u32((struct span){ tok.p, tok.n - 1 }, 16, &devid);
			if (!have_dev)
				st->skipped++;
			continue;
		}
		if (tok_is(tok, "EVENT_ID") || tok.p[0] == '-')
			continue;
		e.devid = devid;
		if (!have_dev || !tok_u32(tok, 10, &e.event) ||
		    !next_tok(&rest, &tok) || !tok_u32(tok, 10, &e.intid) ||
		    !next_tok(&rest, &tok) || !tok_u32(tok, 10, &e.hwintid) ||
		    !next_tok(&rest, &tok) || !tok_u32(tok, 10, &e.target) ||
		    !next_tok(&rest, &tok) || !tok_u32(tok, 10, &e.collection) ||
		    !next_tok(&rest, &tok) || !tok_u32(tok, 10, &hw) || hw > 1) {
			st->skipped++;
			continue;
		}
		e.hw = hw;
		if (st->nr >= VLPI_MAX_IRQS) {
			st->truncated = true;
			continue;
		}
		if (!grow((void **)&st->ite, &cap, st->nr, sizeof(*st->ite))) {
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

/* ---- /proc/interrupts ---- */

#define VLPI_MAX_CPUS 8192u

/* Finds "vfio-msix[i](BDF)", "vfio-msi[i](BDF)" or "vfio-intx(BDF)" in the actions. */
static bool vfio_action(struct span s, struct irq_line *l)
{
	static const struct { const char *pre; enum irq_line_kind kind; } k[] = {
		{ "vfio-msix[", IRQ_LINE_VFIO_MSIX },
		{ "vfio-msi[", IRQ_LINE_VFIO_MSI },
		{ "vfio-intx(", IRQ_LINE_VFIO_INTX },
	};

	for (size_t off = 0; off < s.n; off++) {
		for (size_t j = 0; j < sizeof(k) / sizeof(k[0]); j++) {
			struct span t = { s.p + off, s.n - off };
			size_t pl = strlen(k[j].pre);
			uint32_t vec = 0;

			if (!starts_with(t, k[j].pre))
				continue;
			t.p += pl;
			t.n -= pl;
			if (k[j].kind != IRQ_LINE_VFIO_INTX) {
				const char *close = memchr(t.p, ']', t.n);

				if (!close || !tok_u32((struct span){ t.p, (size_t)(close - t.p) }, 10, &vec) ||
				    vec > 2047 || (size_t)(close - t.p) + 2 > t.n || close[1] != '(')
					continue;
				t.n -= (size_t)(close + 2 - t.p);
				t.p = close + 2;
			}
			const char *end = memchr(t.p, ')', t.n);
			size_t bl = end ? (size_t)(end - t.p) : 0;

			if (!end || !bl || bl >= sizeof(l->bdf))
				continue;
			memcpy(l->bdf, t.p, bl);
			l->bdf[bl] = '\0';
			l->kind = k[j].kind;
			l->vector = k[j].kind == IRQ_LINE_VFIO_INTX ? -1 : (int)vec;
			return true;
		}
	}
	return false;
}

VMM_HOT_VF int proc_interrupts_parse(const char *text, size_t len, struct proc_interrupts *pi)
{
	struct span line;
	size_t pos = 0, cap = 0, ccap = 0;
	uint64_t *cnt = NULL;

	memset(pi, 0, sizeof(*pi));
	if (!text)
		return -EINVAL;
	while (next_line(text, len, &pos, &line)) {
		struct span rest = line, tok;
		struct irq_line l = { .vector = -1 };
		uint32_t irq;

		if (!next_tok(&rest, &tok))
			continue;
		if (!pi->nr_cpus) {
			/* The header: "CPU0 CPU1 ..." (only online CPUs; numbers may have gaps). */
			struct span r2 = line;
			unsigned int n = 0;

			while (next_tok(&r2, &tok) && starts_with(tok, "CPU") && n < VLPI_MAX_CPUS)
				n++;
			if (n) {
				pi->nr_cpus = n;
				cnt = calloc(n, sizeof(*cnt));
				if (!cnt)
					goto oom;
			} else {
				pi->skipped++;
			}
			continue;
		}
		/* "NN:" lines only; IPIs, "Err:" and the like are not ours. */
		if (tok.n < 2 || tok.p[tok.n - 1] != ':' ||
		    !tok_u32((struct span){ tok.p, tok.n - 1 }, 10, &irq))
			continue;
		l.irq = irq;
		bool ok = true;

		for (unsigned int c = 0; c < pi->nr_cpus && ok; c++) {
			ok = next_tok(&rest, &tok) && tok_u64(tok, 10, UINT64_MAX, &cnt[c]);
			if (ok && l.total + cnt[c] < l.total)
				ok = false;
			if (ok)
				l.total += cnt[c];
		}
		/* The chip, then the hwirq when the IRQ has a domain. */
		if (!ok || !next_tok(&rest, &tok) || tok.n >= sizeof(l.chip)) {
			pi->skipped++;
			continue;
		}
		memcpy(l.chip, tok.p, tok.n);
		l.chip[tok.n] = '\0';
		struct span after_chip = rest;

		if (next_tok(&rest, &tok) && tok_u64(tok, 10, UINT64_MAX, &l.hwirq))
			l.has_hwirq = true;
		else
			rest = after_chip;
		if (!strncmp(l.chip, "GICv4", 5) && strstr(l.chip, "-vpe")) {
			l.kind = IRQ_LINE_DOORBELL;
		} else if (!vfio_action(rest, &l)) {
			continue;
		}
		if (pi->nr_line >= VLPI_MAX_IRQS) {
			pi->truncated = true;
			continue;
		}
		if (!grow((void **)&pi->line, &cap, pi->nr_line, sizeof(*pi->line)) ||
		    !grow_to((void **)&pi->count, &ccap, (pi->nr_line + 1) * pi->nr_cpus,
			     sizeof(*pi->count)))
			goto oom;
		l.counts = pi->nr_line * pi->nr_cpus;
		memcpy(&pi->count[l.counts], cnt, pi->nr_cpus * sizeof(*cnt));
		pi->line[pi->nr_line++] = l;
	}
	free(cnt);
	return 0;
oom:
	free(cnt);
	pr_err("/proc/interrupts: out of memory after %zu lines: free memory and retry", pi->nr_line);
	proc_interrupts_free(pi);
	return -ENOMEM;
}

VMM_HOT_VF void proc_interrupts_free(struct proc_interrupts *pi)
{
	free(pi->line);
	free(pi->count);
	pi->line = NULL;
	pi->count = NULL;
	pi->nr_line = 0;
}

VMM_HOT_VF const struct irq_line *proc_interrupts_vfio(const struct proc_interrupts *pi, const char *bdf,
					    enum irq_line_kind kind, int vector)
{
	for (size_t i = 0; pi && bdf && i < pi->nr_line; i++) {
		const struct irq_line *l = &pi->line[i];

		if (l->kind == kind && !strcmp(l->bdf, bdf) &&
		    (kind == IRQ_LINE_VFIO_INTX || l->vector == vector))
			return l;
	}
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
