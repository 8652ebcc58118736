// SPDX-License-Identifier: MIT
/* The host's /proc/interrupts, parsed (proc_interrupts.h). */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "core/hot.h"
#include "core/host_text.h"
#include "core/log.h"
#include "core/proc_interrupts.h"

#define PROC_INTERRUPTS_MAX_CPUS 8192u

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

			if (!span_starts_with(t, k[j].pre))
				continue;
			t.p += pl;
			t.n -= pl;
			if (k[j].kind != IRQ_LINE_VFIO_INTX) {
				const char *close = memchr(t.p, ']', t.n);

				if (!close || !span_u32((struct span){ t.p, (size_t)(close - t.p) }, 10, &vec) ||
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
	while (span_next_line(text, len, &pos, &line)) {
		struct span rest = line, tok;
		struct irq_line l = { .vector = -1 };
		uint32_t irq;

		if (!span_next_tok(&rest, &tok))
			continue;
		if (!pi->nr_cpus) {
			/* The header: "CPU0 CPU1 ..." (only online CPUs; numbers may have gaps). */
			struct span r2 = line;
			unsigned int n = 0;

			while (span_next_tok(&r2, &tok) && span_starts_with(tok, "CPU") && n < PROC_INTERRUPTS_MAX_CPUS)
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
		    !span_u32((struct span){ tok.p, tok.n - 1 }, 10, &irq))
			continue;
		l.irq = irq;
		bool ok = true;

		for (unsigned int c = 0; c < pi->nr_cpus && ok; c++) {
			ok = span_next_tok(&rest, &tok) && span_u64(tok, 10, UINT64_MAX, &cnt[c]);
			if (ok && l.total + cnt[c] < l.total)
				ok = false;
			if (ok)
				l.total += cnt[c];
		}
		/* The chip, then the hwirq when the IRQ has a domain. */
		if (!ok || !span_next_tok(&rest, &tok) || tok.n >= sizeof(l.chip)) {
			pi->skipped++;
			continue;
		}
		memcpy(l.chip, tok.p, tok.n);
		l.chip[tok.n] = '\0';
		struct span after_chip = rest;

		if (span_next_tok(&rest, &tok) && span_u64(tok, 10, UINT64_MAX, &l.hwirq))
			l.has_hwirq = true;
		else
			rest = after_chip;
		if (!strncmp(l.chip, "GICv4", 5) && strstr(l.chip, "-vpe")) {
			l.kind = IRQ_LINE_DOORBELL;
		} else if (!vfio_action(rest, &l)) {
			continue;
		}
		if (pi->nr_line >= PROC_INTERRUPTS_MAX_LINES) {
			pi->truncated = true;
			continue;
		}
		if (!span_grow((void **)&pi->line, &cap, pi->nr_line, sizeof(*pi->line)) ||
		    !span_grow_to((void **)&pi->count, &ccap, (pi->nr_line + 1) * pi->nr_cpus,
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

VMM_HOT_VF int proc_interrupts_read(const char *path, struct proc_interrupts *pi)
{
	char *text, why[192];
	size_t len;
	int r = host_text_read(path ? path : "/proc/interrupts", &text, &len, why, sizeof(why));

	memset(pi, 0, sizeof(*pi));
	if (r < 0)
		return r;
	r = proc_interrupts_parse(text, len, pi);
	free(text);
	if (!r && !pi->nr_cpus) { /* not a /proc/interrupts */
		proc_interrupts_free(pi);
		r = -ENODATA;
	}
	return r;
}
