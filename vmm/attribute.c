// SPDX-License-Identifier: MIT
/*
 * vmm run --attribute: the collector's thread and the report at exit (vmm/attribute.h). The thread
 * waits for the vCPU threads to run (their ids are the filters), reads what the filters need
 * (/proc/interrupts, /proc/kallsyms, tracefs formats), opens the events disabled, enters its own
 * allowlist, and switches them on at the probe's first COUNTER frame and off at the stop.
 */
#include <errno.h>
#include <inttypes.h>
#include <poll.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <time.h>
#include <unistd.h>

#include "core/host_text.h"
#include "core/json.h"
#include "core/log.h"
#include "core/proc_interrupts.h"
#include "core/vcpu.h"
#include "vmm/attribute.h"
#include "vmm/probe_peer.h"

static uint64_t mono_raw_ns(void)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC_RAW, &t);
	return (uint64_t)t.tv_sec * 1000000000ull + (uint64_t)t.tv_nsec;
}

/* (CLOCK_MONOTONIC_RAW, counter) read together: the narrowest of a few brackets */
static struct clock_pair host_pair(uint64_t (*counter_read)(void), uint64_t *window)
{
	struct clock_pair p = { 0, 0 };
	uint64_t best = UINT64_MAX;

	for (int i = 0; i < 8; i++) {
		uint64_t a = mono_raw_ns(), c = counter_read(), b = mono_raw_ns();

		if (b - a < best) {
			best = b - a;
			p = (struct clock_pair){ a + (b - a) / 2, c };
		}
	}
	if (best > *window)
		*window = best;
	return p;
}

/* The host IRQ a loaded vCPU's timer raises (arm64: "kvm guest vtimer"), by its name at the end
 * of its /proc/interrupts line (a line as long as the host has CPUs: read whole) */
static void vtimer_irqs(struct attrib_vm *v, const char *name)
{
	char *text = NULL, why[128];
	size_t len = 0, pos = 0, nl = strlen(name);
	struct span line;

	if (host_text_read("/proc/interrupts", &text, &len, why, sizeof(why)) < 0)
		return;
	while (v->nirq < ATTRIB_IRQS_MAX && span_next_line(text, len, &pos, &line)) {
		struct span rest = line, tok;
		uint64_t irq;

		while (rest.n && rest.p[rest.n - 1] == ' ')
			rest.n--;
		if (rest.n < nl || memcmp(rest.p + rest.n - nl, name, nl) || !span_next_tok(&rest, &tok) ||
		    tok.n < 2 || tok.p[tok.n - 1] != ':')
			continue;
		tok.n--;
		if (span_u64(tok, 10, INT32_MAX, &irq))
			v->irq[v->nirq++] = (typeof(v->irq[0])){ (int32_t)irq, AIRQ_VTIMER, -1 };
	}
	free(text);
}

static int cmp_uint(const void *a, const void *b)
{
	unsigned int x = *(const unsigned int *)a, y = *(const unsigned int *)b;

	return x < y ? -1 : x > y;
}

/* GICv4 vPE doorbells: one VM's are one block, vCPU i's the block's i-th (its_alloc_vcpu_irqs).
 * The host's /proc/interrupts does not say whose a block is: the newest nvcpu doorbells are taken
 * as this VM's, which holds while it is the last VM started. */
static void doorbell_irqs(struct attrib_vm *v)
{
	struct proc_interrupts pi = { 0 };
	unsigned int irqs[ATTRIB_IRQS_MAX];
	size_t n = 0;

	if (proc_interrupts_read(NULL, &pi) < 0)
		return;
	for (size_t i = 0; i < pi.nr_line && n < ATTRIB_IRQS_MAX; i++)
		if (pi.line[i].kind == IRQ_LINE_DOORBELL)
			irqs[n++] = pi.line[i].irq;
	proc_interrupts_free(&pi);
	qsort(irqs, n, sizeof(irqs[0]), cmp_uint);
	size_t first = n > v->nvcpu ? n - v->nvcpu : 0;

	for (size_t i = first; i < n && v->nirq < ATTRIB_IRQS_MAX; i++)
		v->irq[v->nirq++] = (typeof(v->irq[0])){ (int32_t)irqs[i], AIRQ_DOORBELL, (int16_t)(i - first) };
}

/* bdf as vfio-pci names it in /proc/interrupts: the same, or the same without its domain */
static bool same_bdf(const char *line, const char *bdf)
{
	size_t a = strlen(line), b = strlen(bdf);

	return !strcmp(line, bdf) || (a > b && !strcmp(line + a - b, bdf) && line[a - b - 1] == ':');
}

/* The passed-through devices' vectors the guest has enabled (vfio-msix[i](BDF), vfio-msi, vfio-intx),
 * with their names for the report */
static void vfio_irqs(struct vm_attribute *a, struct attrib_vm *v, const struct attribute_opts *o)
{
	struct proc_interrupts pi = { 0 };

	if (!o->nr_vfio || proc_interrupts_read(NULL, &pi) < 0)
		return;
	for (size_t i = 0; i < pi.nr_line && v->nirq < ATTRIB_IRQS_MAX; i++) {
		if (pi.line[i].kind == IRQ_LINE_DOORBELL)
			continue;
		for (int d = 0; d < o->nr_vfio && d < ATTRIBUTE_VFIO_MAX; d++)
			if (o->vfio_bdf[d] && same_bdf(pi.line[i].bdf, o->vfio_bdf[d])) {
				const struct irq_line *l = &pi.line[i];
				const char *kind = l->kind == IRQ_LINE_VFIO_MSIX ? "msix" : l->kind == IRQ_LINE_VFIO_MSI ? "msi" : "intx";

				v->irq[v->nirq++] = (typeof(v->irq[0])){ (int32_t)l->irq, AIRQ_VFIO, -1 };
				if (a->nvec < ATTRIB_REPORT_NAMES) {
					char dev[8] = "";

					if (d)
						snprintf(dev, sizeof(dev), "%d:", d);
					a->vec[a->nvec].irq = (int32_t)l->irq;
					if (l->vector >= 0)
						snprintf(a->vec[a->nvec++].name, sizeof(a->vec[0].name), "%s%s%d", dev,
							 kind, l->vector);
					else
						snprintf(a->vec[a->nvec++].name, sizeof(a->vec[0].name), "%s%s", dev, kind);
				}
				break;
			}
	}
	proc_interrupts_free(&pi);
}

/* The address of the hrtimer function that wakes a blocked vCPU for its timer: 0 when hidden
 * (kptr_restrict) or absent */
static uint64_t kallsyms_addr(const char *sym)
{
	FILE *f = fopen("/proc/kallsyms", "re");
	char line[512];
	uint64_t addr = 0;
	size_t sl = strlen(sym);

	while (f && !addr && fgets(line, sizeof(line), f)) {
		char *name = strchr(line, ' ');

		if (!name || !(name = strchr(name + 1, ' ')))
			continue;
		name++;
		if (!strncmp(name, sym, sl) && (name[sl] == '\n' || name[sl] == '\t' || name[sl] == ' ' || !name[sl]))
			addr = strtoull(line, NULL, 16);
	}
	if (f)
		fclose(f);
	return addr;
}

/* Until every vCPU thread runs (its id known) or the stop: true when they all run */
static bool wait_vcpus(struct vm_attribute *a)
{
	for (;;) {
		int n = 0;

		for (int i = 0; i < a->vm->nr_vcpus; i++)
			n += atomic_load(&a->vm->vcpus[i]->tid) != 0;
		if (n == a->vm->nr_vcpus)
			return true;
		struct pollfd p = { a->wake_fd, POLLIN, 0 };

		poll(&p, 1, 10);
		if (atomic_load(&a->stop))
			return false;
	}
}

static void drain_wake(int fd)
{
	uint64_t v;

	if (read(fd, &v, sizeof(v)) < 0) {
		/* nothing pending */
	}
}

static int setup(struct vm_attribute *a)
{
	struct attrib_vm *v = &a->avm;

	v->nvcpu = (size_t)a->vm->nr_vcpus > ATTRIB_VCPUS_MAX ? ATTRIB_VCPUS_MAX : (size_t)a->vm->nr_vcpus;
	for (size_t i = 0; i < v->nvcpu; i++)
		v->vcpu_tid[i] = atomic_load(&a->vm->vcpus[i]->tid);
	if (a->m->arch->trace_timer_irq)
		vtimer_irqs(v, a->m->arch->trace_timer_irq);
	doorbell_irqs(v); /* GICv4's; none elsewhere */
	if (a->m->arch->trace_timer_fn)
		v->bg_timer_fn = kallsyms_addr(a->m->arch->trace_timer_fn);
	v->irq_after_exit = a->m->arch->trace_irq_after_exit;
	return trace_collect_open(&a->tc, v, ATTRIBUTE_MAX_EVENTS, a->why, sizeof(a->why));
}

/* Until the probe's first COUNTER frame (go) or the stop: true on go (before the allowlist: at go
 * the thread still reads /proc/interrupts and sets filters) */
static bool wait_go(struct vm_attribute *a)
{
	while (!atomic_load(&a->stop)) {
		if (atomic_load(&a->go))
			return true;
		struct pollfd p = { a->wake_fd, POLLIN, 0 };

		if (poll(&p, 1, -1) > 0)
			drain_wake(a->wake_fd);
	}
	return false;
}

static void *attribute_thread(void *opaque)
{
	struct vm_attribute *a = opaque;

	/* the events are opened once the vCPUs run (the costly part: kallsyms, formats, a perf
	 * event per CPU and tracepoint, never while the probe measures); the passed-through devices'
	 * vectors are added to the IRQ filters at go: they exist once the guest's driver enabled
	 * them, which it has by the time its probe runs */
	if (!wait_vcpus(a))
		return NULL;
	if ((a->err = setup(a)) < 0) {
		pr_warn("--attribute: %s; the run goes on without attribution", a->why);
		return NULL;
	}
	if (!wait_go(a))
		return NULL;
	size_t before = a->avm.nirq;

	vfio_irqs(a, &a->avm, &a->opts);
	if (a->avm.nirq > before && (a->err = trace_collect_refilter(a->tc, &a->avm, a->why, sizeof(a->why))) < 0) {
		pr_warn("--attribute: %s; the run goes on without attribution", a->why);
		return NULL;
	}
	if (sandbox_enter(a->sandbox, SANDBOX_TRACE) < 0) {
		a->err = -EPERM;
		snprintf(a->why, sizeof(a->why), "the trace thread's allowlist could not be entered");
		return NULL;
	}
	int max = trace_collect_ncpu(a->tc);
	struct pollfd *p = calloc((size_t)max + 1, sizeof(*p));
	int *fds = calloc((size_t)max + 1, sizeof(*fds));

	if (!p || !fds) {
		free(p);
		free(fds);
		a->err = -ENOMEM;
		snprintf(a->why, sizeof(a->why), "out of memory for the rings' poll list");
		return NULL;
	}
	int n = trace_collect_poll_fds(a->tc, fds, max);

	fds[n] = a->wake_fd;
	while (!atomic_load(&a->stop)) {
		/* go has come (wait_go): on at once, then the rings are read at least every 200 ms (a
		 * quarter-full ring wakes it sooner) */
		if (atomic_load(&a->go) && !a->enabled && !a->err) {
			a->host[0] = host_pair(a->m->arch->counter_read, &a->host_window_ns);
			a->enabled = trace_collect_enable(a->tc, true) == 0;
			if (!a->enabled) { /* all off again, said at exit; never retried in a loop */
				trace_collect_enable(a->tc, false);
				a->err = -EIO;
				snprintf(a->why, sizeof(a->why), "the kernel refused to switch the perf events on");
			}
		}
		for (int i = 0; i <= n; i++)
			p[i] = (struct pollfd){ fds[i], POLLIN, 0 };
		poll(p, (nfds_t)n + 1, a->enabled ? 200 : -1);
		if (p[n].revents & POLLIN)
			drain_wake(a->wake_fd);
		if (a->enabled)
			trace_collect_drain(a->tc);
	}
	if (a->enabled) {
		trace_collect_enable(a->tc, false);
		trace_collect_drain(a->tc);
		a->host[1] = host_pair(a->m->arch->counter_read, &a->host_window_ns);
	}
	free(p);
	free(fds);
	return NULL;
}

int attribute_start(struct vm_attribute *a, struct vm *vm, const struct machine *m, enum sandbox_mode sandbox,
		    const struct attribute_opts *o)
{
	*a = (struct vm_attribute){ .on = true, .json_path = o->json_path, .opts = *o, .vm = vm, .m = m,
				    .sandbox = sandbox, .wake_fd = -1 };
	if (!m->arch->counter_read || !m->arch->clock) {
		pr_err("--attribute: %s has no shared guest/host counter in vmm yet: no attribution",
		       m->arch->name);
		return -ENOTSUP;
	}
	m->arch->clock((struct machine *)m, &a->clock);
	a->capture = getenv("VMM_ATTRIBUTE_CAPTURE");
	a->wake_fd = eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
	if (a->wake_fd < 0) {
		pr_err("--attribute: eventfd: %s", strerror(errno));
		return -errno;
	}
	int r = pthread_create(&a->th, NULL, attribute_thread, a);

	if (r) {
		pr_err("--attribute: cannot start its thread: %s", strerror(r));
		return -r;
	}
	a->started = true;
	return 0;
}

static void wake(struct vm_attribute *a)
{
	uint64_t one = 1;

	if (a->wake_fd >= 0 && write(a->wake_fd, &one, sizeof(one)) < 0) {
		/* a counter at its maximum is readable anyway */
	}
}

void attribute_go(struct vm_attribute *a)
{
	if (a->on && !atomic_exchange(&a->go, true))
		wake(a);
}

void attribute_stop(struct vm_attribute *a)
{
	if (!a->started)
		return;
	atomic_store(&a->stop, true);
	wake(a);
	pthread_join(a->th, NULL);
	a->started = false;
}

/* The timer samples of d on the host clock, inside the collection window, joined. */
/* One sample's row in --attribute=FILE's "samples": [workload, vcpu, guest ns at the wake-up,
 * class, the stages in enum attrib_stage order, residual, poll] (-1: not seen); vmm ab puts each
 * in its epoch by the guest time. */
static void sample_row(FILE *f, bool first, const struct attrib_sample *s, uint64_t guest_ns,
		       const struct attrib_result *r)
{
	if (!f)
		return;
	fprintf(f, "%s[%u,%u,%" PRIu64 ",%u", first ? "" : ",", s->workload, s->vcpu, guest_ns, r->cls);
	for (unsigned int k = 0; k < AS_MAX; k++)
		fprintf(f, ",%" PRId64, r->stage[k]);
	fprintf(f, ",%" PRId64 ",%" PRId64 "]", r->residual, r->poll_ns);
}

#define CAPTURE_SAMPLES 150 /* VMM_ATTRIBUTE_CAPTURE keeps this many: a fixture's worth */
/* Samples joined at most (the guest says how many it sends): the rest counted outside */
#define JOIN_MAX_SAMPLES 200000

struct capture_buf {
	struct attrib_sample s[CAPTURE_SAMPLES];
	struct attrib_result r[CAPTURE_SAMPLES];
	size_t n;
};

/* Whether the VM's udp samples can be joined: their answers came back through a passed-through
 * device (its vectors or doorbells known) and the peer kept its answers' times. */
static const char *udp_unjoinable(const struct vm_attribute *a, const uint64_t **answers, size_t *n)
{
	bool vfio = false;

	for (size_t i = 0; i < a->avm.nirq; i++)
		vfio |= a->avm.irq[i].role == AIRQ_VFIO;
	*answers = a->opts.peer ? probe_peer_answers(a->opts.peer, n) : NULL;
	if (!a->opts.peer)
		return "no --probe-peer answered them";
	if (!vfio)
		return "no passed-through device's vector carried them (--vfio; a tap's are vhost's, not followed)";
	return NULL;
}

static void join_samples(struct vm_attribute *a, const struct probe_decoder *d, const struct attrib_clock *ck,
			 struct attrib_report *rep, uint64_t *joined, uint64_t *outside, FILE *rows,
			 struct capture_buf *cap, uint64_t *udp_skipped)
{
	struct trace_collect_counts cc;
	const uint64_t *answers;
	size_t nanswers = 0;
	const char *no_udp = udp_unjoinable(a, &answers, &nanswers);

	trace_collect_counts(a->tc, &cc);
	for (size_t i = 0; i < d->nseries; i++) {
		const struct probe_series *s = &d->series[i];
		bool udp = s->workload == PROBE_W_UDP;

		if (s->workload != PROBE_W_TIMER && !udp)
			continue;
		if (udp && no_udp) {
			*udp_skipped += s->n;
			continue;
		}
		for (uint32_t k = 0; k < s->n; k++) {
			struct attrib_sample smp = { .workload = s->workload, .vcpu = s->cpu };
			struct attrib_result r;
			uint64_t t = s->t_ns[k], v = s->v_ns[k] > 0 ? (uint64_t)s->v_ns[k] : 0, from, end;

			/* a timer sample's t is its wake-up, v its lateness; a udp sample's t its request,
			 * v the round trip */
			if (udp && t > UINT64_MAX - v) {
				(*outside)++;
				continue;
			}
			uint64_t g0 = udp ? t : t - v, g1 = udp ? t + v : t;

			if (*joined >= JOIN_MAX_SAMPLES || (!udp && t < v) || attrib_clock_g2h(ck, g0, &from) ||
			    attrib_clock_g2h(ck, g1, &end) || from < cc.enabled_at || end > cc.disabled_at) {
				(*outside)++;
				continue;
			}
			smp.target = from;
			smp.wake = end;
			if (udp)
				attrib_join_udp(&a->avm, trace_collect_events(a->tc), answers, nanswers, from, &smp, &r);
			else
				attrib_join(&a->avm, trace_collect_events(a->tc), &smp, &r);
			attrib_report_add(rep, &smp, &r);
			sample_row(rows, *joined == 0, &smp, g1, &r);
			if (cap && cap->n < CAPTURE_SAMPLES) {
				cap->s[cap->n] = smp;
				cap->r[cap->n++] = r;
			}
			(*joined)++;
		}
	}
}

/* The report as JSON into a->json (open_memstream), and to --attribute=FILE */
static void report_json(struct vm_attribute *a, const struct attrib_clock *ck, const struct trace_collect_counts *cc,
			uint64_t joined, uint64_t outside, const struct attrib_report *rep, const char *rows,
			size_t rows_len)
{
	FILE *m = open_memstream(&a->json, &a->json_len);

	if (!m)
		return;
	fprintf(m, "{\"clock\":{\"how\":");
	json_write_string(m, a->clock.how);
	fprintf(m, ",\"offset\":%" PRId64 ",\"hz\":%" PRIu64 ",\"err_ns\":%" PRIu64 "},\"trace\":{\"events\":%" PRIu64
		   ",\"lost\":%" PRIu64 ",\"dropped\":%" PRIu64 ",\"bad\":%" PRIu64 "},\"counts\":{\"joined\":%" PRIu64
		   ",\"outside\":%" PRIu64 "},\"report\":",
		a->clock.offset, ck->hz, a->clock.err_ns + ck->err_ns, cc->events, cc->lost, cc->dropped, cc->bad, joined,
		outside);
	attrib_report_json(rep, m);
	fputs("}", m);
	if (fclose(m)) {
		free(a->json);
		a->json = NULL;
		return;
	}
	if (!a->json_path)
		return;
	FILE *j = fopen(a->json_path, "we");

	/* the file: the same object, with every sample's row */
	if (!j || fwrite(a->json, 1, a->json_len - 1, j) != a->json_len - 1 || fputs(",\"samples\":[", j) == EOF ||
	    (rows && fwrite(rows, 1, rows_len, j) != rows_len) || fputs("]}\n", j) == EOF)
		pr_err("--attribute=%s: %s", a->json_path, strerror(errno));
	if (j && fclose(j))
		pr_err("--attribute=%s: %s", a->json_path, strerror(errno));
}

void attribute_json(const struct vm_attribute *a, FILE *f)
{
	if (!a->on)
		return;
	fputs(",\"attribution\":", f);
	if (a->json)
		fwrite(a->json, 1, a->json_len, f);
	else /* none: why, as the exit summary said it */
		fputs("null", f);
}

void attribute_report(struct vm_attribute *a, const struct probe_decoder *d, FILE *f)
{
	struct attrib_clock ck;
	struct trace_collect_counts cc;
	uint64_t joined = 0, outside = 0, udp_skipped = 0;

	if (!a->on)
		return;
	if (a->err < 0 || !a->tc) {
		fprintf(f, "vmm: attribution: none: %s\n", a->err < 0 ? a->why : "the guest's probe never started");
		return;
	}
	if (!d || !d->counters) {
		fprintf(f, "vmm: attribution: none: the guest's probe sent no COUNTER frame (a probe older than "
			   "protocol 2, or none ran)\n");
		return;
	}
	if (!a->clock.known) {
		fprintf(f, "vmm: attribution: none: no tie between the guest's counter and the host's (%s)\n",
			a->clock.how);
		return;
	}
	/* the host's frequency when it knows it: the guest's is only the guest's word */
	attrib_clock_init(&ck, a->clock.hz ? a->clock.hz : d->counter[0].hz, a->clock.offset);
	for (uint64_t i = 0; i < d->counters && i < 2; i++)
		attrib_clock_guest_pair(&ck, (struct clock_pair){ d->counter[i].mono_ns, d->counter[i].cnt });
	for (int i = 0; i < 2; i++)
		if (a->host[i].cnt)
			attrib_clock_host_pair(&ck, a->host[i], a->host_window_ns);
	attrib_events_sort(trace_collect_events(a->tc));
	trace_collect_counts(a->tc, &cc);
	struct attrib_report *rep = attrib_report_new();

	if (!rep)
		return;
	char *rows_buf = NULL;
	size_t rows_len = 0;
	FILE *rows = a->json_path ? open_memstream(&rows_buf, &rows_len) : NULL;

	struct capture_buf *cap = a->capture ? calloc(1, sizeof(*cap)) : NULL;

	for (size_t i = 0; i < a->nvec; i++)
		attrib_report_name_irq(rep, a->vec[i].irq, a->vec[i].name);
	join_samples(a, d, &ck, rep, &joined, &outside, rows, cap, &udp_skipped);
	if (cap) {
		FILE *cf = fopen(a->capture, "we");

		if (cf) {
			attrib_capture_write(cf, &a->avm, trace_collect_events(a->tc), cap->s, cap->r, cap->n);
			fclose(cf);
		} else {
			pr_err("VMM_ATTRIBUTE_CAPTURE=%s: %s", a->capture, strerror(errno));
		}
		free(cap);
	}
	if (rows && fclose(rows)) {
		free(rows_buf);
		rows_buf = NULL;
	}
	fprintf(f, "vmm: attribution: clock %s (+-%" PRIu64 " ns, the guest's own reads within %u ns); %" PRIu64
		   " host events, %" PRIu64 " lost, %" PRIu64 " over the cap; %" PRIu64 " samples joined, %" PRIu64
		   " outside the trace's window\n",
		a->clock.how, a->clock.err_ns + ck.err_ns, d->counter[0].window_ns, cc.events, cc.lost, cc.dropped,
		joined, outside);
	if (udp_skipped) {
		const uint64_t *ans;
		size_t nans;

		fprintf(f, "vmm: attribution: %" PRIu64 " udp samples not joined: %s\n", udp_skipped,
			udp_unjoinable(a, &ans, &nans));
	}
	attrib_report_text(rep, f);
	report_json(a, &ck, &cc, joined, outside, rep, rows_buf, rows_len);
	free(rows_buf);
	attrib_report_free(rep);
}

/* The decoder's timer and udp series and COUNTER pairs, copied: the join then runs without the probe's
 * lock, which the control thread's stats request takes (vmm ab asks while vmm reports) */
static struct probe_decoder *series_snapshot(const struct probe_decoder *d)
{
	struct probe_decoder *c = calloc(1, sizeof(*c));
	size_t n = 0;

	if (!c)
		return NULL;
	memcpy(c->counter, d->counter, sizeof(c->counter));
	c->counters = d->counters;
	c->series = calloc(d->nseries ? d->nseries : 1, sizeof(*c->series));
	for (size_t i = 0; c->series && i < d->nseries; i++) {
		const struct probe_series *s = &d->series[i];
		struct probe_series *t = &c->series[n];

		if (s->workload != PROBE_W_TIMER && s->workload != PROBE_W_UDP)
			continue;
		*t = (struct probe_series){ .workload = s->workload, .cpu = s->cpu, .n = s->n };
		t->t_ns = malloc((s->n ? s->n : 1) * sizeof(*t->t_ns));
		t->v_ns = malloc((s->n ? s->n : 1) * sizeof(*t->v_ns));
		if (!t->t_ns || !t->v_ns) {
			free(t->t_ns);
			free(t->v_ns);
			continue;
		}
		memcpy(t->t_ns, s->t_ns, s->n * sizeof(*t->t_ns));
		memcpy(t->v_ns, s->v_ns, s->n * sizeof(*t->v_ns));
		n++;
	}
	c->nseries = n;
	return c;
}

static void snapshot_free(struct probe_decoder *c)
{
	for (size_t i = 0; c && i < c->nseries; i++) {
		free(c->series[i].t_ns);
		free(c->series[i].v_ns);
	}
	if (c)
		free(c->series);
	free(c);
}

void attribute_report_of(struct vm_attribute *a, pthread_mutex_t *lock, const struct probe_decoder *d, FILE *f)
{
	if (!a->on)
		return;
	pthread_mutex_lock(lock);
	struct probe_decoder *snap = d ? series_snapshot(d) : NULL;

	pthread_mutex_unlock(lock);
	attribute_report(a, snap, f);
	snapshot_free(snap);
}

void attribute_free(struct vm_attribute *a)
{
	if (!a->on) /* never started: nothing was opened (its fds are zeros, not fds) */
		return;
	attribute_stop(a);
	trace_collect_close(a->tc);
	a->tc = NULL;
	free(a->json);
	a->json = NULL;
	if (a->wake_fd >= 0)
		close(a->wake_fd);
	a->wake_fd = -1;
}
