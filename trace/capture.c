// SPDX-License-Identifier: MIT
/*
 * A capture of one run's join (VMM_ATTRIBUTE_CAPTURE=FILE with vmm run --attribute): the VM (vCPU
 * threads, IRQs, the bg-timer function), samples with the class the join gave them, and the
 * events around them, as text. The unit tests keep a lab capture as a fixture and join it again,
 * so a change of the join shows against what real KVM traced.
 *
 *   vmm-attrib-capture 1
 *   vcpus TID...
 *   irq IRQ ROLE VCPU
 *   bgfn HEX
 *   after_exit                   (x86: IRQs are handled after the exit; absent on arm64)
 *   sample WORKLOAD VCPU TARGET WAKE CLASS WHY
 *   event T CPU TID KIND A B C
 */
#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "trace/trace.h"

#define CAPTURE_LEAD_NS 20000000ull /* events this long before the first target: its episode */

void attrib_capture_write(FILE *f, const struct attrib_vm *vm, const struct attrib_events *e,
			  const struct attrib_sample *s, const struct attrib_result *r, size_t n)
{
	uint64_t lo = UINT64_MAX, hi = 0;

	fprintf(f, "vmm-attrib-capture 1\nvcpus");
	for (size_t i = 0; i < vm->nvcpu; i++)
		fprintf(f, " %d", vm->vcpu_tid[i]);
	fputc('\n', f);
	for (size_t i = 0; i < vm->nirq; i++)
		fprintf(f, "irq %d %u %d\n", vm->irq[i].irq, vm->irq[i].role, vm->irq[i].vcpu);
	fprintf(f, "bgfn %" PRIx64 "\n", vm->bg_timer_fn);
	if (vm->irq_after_exit)
		fputs("after_exit\n", f);
	for (size_t i = 0; i < n; i++) {
		fprintf(f, "sample %u %u %" PRIu64 " %" PRIu64 " %u %u\n", s[i].workload, s[i].vcpu, s[i].target,
			s[i].wake, r[i].cls, r[i].why);
		lo = s[i].target < lo ? s[i].target : lo;
		hi = s[i].wake > hi ? s[i].wake : hi;
	}
	lo = lo > CAPTURE_LEAD_NS ? lo - CAPTURE_LEAD_NS : 0;
	for (size_t i = 0; i < e->n; i++)
		if (e->ev[i].t >= lo && e->ev[i].t <= hi)
			fprintf(f, "event %" PRIu64 " %u %d %u %" PRId64 " %" PRId64 " %" PRId64 "\n", e->ev[i].t, e->ev[i].cpu,
				e->ev[i].tid, e->ev[i].kind, e->ev[i].a, e->ev[i].b, e->ev[i].c);
}

static int line_sample(const char *l, struct attrib_capture *c)
{
	unsigned int w, v, cls, why;
	uint64_t t, wk;

	if (sscanf(l, "sample %u %u %" SCNu64 " %" SCNu64 " %u %u", &w, &v, &t, &wk, &cls, &why) != 6 || cls >= AC_MAX ||
	    why >= AMB_MAX || v > UINT16_MAX || w > UINT8_MAX)
		return -EINVAL;
	if (c->n == c->cap) {
		size_t cap = c->cap ? 2 * c->cap : 64;
		struct attrib_sample *ns = realloc(c->s, cap * sizeof(*ns));

		if (!ns)
			return -ENOMEM;
		c->s = ns;
		uint8_t *nc = realloc(c->cls, cap);

		if (!nc)
			return -ENOMEM;
		c->cls = nc;
		c->cap = cap;
	}
	c->s[c->n] = (struct attrib_sample){ .workload = (uint8_t)w, .vcpu = (uint16_t)v, .target = t, .wake = wk };
	c->cls[c->n++] = (uint8_t)cls;
	return 0;
}

static int line_other(const char *l, struct attrib_capture *c)
{
	struct tev ev = { 0 };
	unsigned int kind, role;
	int irq, vcpu, n = 0;

	if (!strncmp(l, "event ", 6)) {
		if (sscanf(l, "event %" SCNu64 " %u %d %u %" SCNd64 " %" SCNd64 " %" SCNd64, &ev.t, &ev.cpu, &ev.tid, &kind,
			   &ev.a, &ev.b, &ev.c) != 7 || kind == TEV_NONE || kind >= TEV_KIND_MAX)
			return -EINVAL;
		ev.kind = (uint16_t)kind;
		attrib_events_add(&c->ev, &ev);
		return 0;
	}
	if (!strncmp(l, "vcpus", 5)) {
		for (const char *p = l + 5; c->vm.nvcpu < ATTRIB_VCPUS_MAX && sscanf(p, " %d%n", &irq, &n) == 1; p += n)
			c->vm.vcpu_tid[c->vm.nvcpu++] = irq;
		return 0;
	}
	if (!strncmp(l, "irq ", 4)) {
		if (sscanf(l, "irq %d %u %d", &irq, &role, &vcpu) != 3 || c->vm.nirq >= ATTRIB_IRQS_MAX)
			return -EINVAL;
		c->vm.irq[c->vm.nirq++] = (__typeof__(c->vm.irq[0])){ irq, (uint8_t)role, (int16_t)vcpu };
		return 0;
	}
	if (!strcmp(l, "after_exit")) {
		c->vm.irq_after_exit = true;
		return 0;
	}
	if (!strncmp(l, "bgfn ", 5))
		return sscanf(l, "bgfn %" SCNx64, &c->vm.bg_timer_fn) == 1 ? 0 : -EINVAL;
	return strncmp(l, "vmm-attrib-capture 1", 20) ? -EINVAL : 0;
}

int attrib_capture_read(const char *text, size_t len, struct attrib_capture *c)
{
	char line[256];

	memset(c, 0, sizeof(*c));
	attrib_events_init(&c->ev, 0);
	for (size_t at = 0; at < len;) {
		size_t n = 0;

		while (at + n < len && text[at + n] != '\n')
			n++;
		if (n >= sizeof(line))
			return -EINVAL;
		memcpy(line, text + at, n);
		line[n] = 0;
		at += n + 1;
		if (!n)
			continue;
		int r = !strncmp(line, "sample ", 7) ? line_sample(line, c) : line_other(line, c);

		if (r < 0)
			return r;
	}
	attrib_events_sort(&c->ev);
	return 0;
}

void attrib_capture_free(struct attrib_capture *c)
{
	attrib_events_free(&c->ev);
	free(c->s);
	free(c->cls);
	memset(c, 0, sizeof(*c));
}
