// SPDX-License-Identifier: MIT
/* Tracepoint formats and perf ring records (trace/tp_format.c, trace/tev.c) and the join
 * (trace/attrib.c, attrib_udp.c), by the first byte's low two bits:
 *   0, 2  the rest is a format file's text: parsed; a format it takes is checked against the
 *      bounds it promises, its fields are read from the input's own bytes as a raw record, and it
 *      is offered to a decoder as every kind;
 *   1  the rest is a perf ring's records, decoded through Linux 6.12's formats below under perf
 *      ids 1..5 (tests/fuzz/seeds_trace.c writes records for the same ids and layouts);
 *   3  the rest is a sample (its times are the guest's: hostile), the peer's answers and an
 *      event stream, joined as a udp and as a timer sample: every class, stage and reason in
 *      range, a joined sample's stages never below -1 nor its residual below 0.
 * A broken promise (a field past 64 KiB, a name without its NUL, more bytes consumed than given,
 * an unknown kind emitted) aborts. */
#include <stdlib.h>
#include <string.h>

#include "trace/trace.h"

#define COMMON                                                                              \
	"format:\n"                                                                         \
	"\tfield:unsigned short common_type;\toffset:0;\tsize:2;\tsigned:0;\n"              \
	"\tfield:unsigned char common_flags;\toffset:2;\tsize:1;\tsigned:0;\n"              \
	"\tfield:unsigned char common_preempt_count;\toffset:3;\tsize:1;\tsigned:0;\n"      \
	"\tfield:int common_pid;\toffset:4;\tsize:4;\tsigned:1;\n"                          \
	"\n"

static const struct {
	uint64_t perf_id;
	unsigned int kind;
	const char *text;
} events[] = {
	{ 1, TEV_SCHED_SWITCH,
	  "name: sched_switch\nID: 316\n" COMMON
	  "\tfield:char prev_comm[16];\toffset:8;\tsize:16;\tsigned:0;\n"
	  "\tfield:pid_t prev_pid;\toffset:24;\tsize:4;\tsigned:1;\n"
	  "\tfield:int prev_prio;\toffset:28;\tsize:4;\tsigned:1;\n"
	  "\tfield:long prev_state;\toffset:32;\tsize:8;\tsigned:1;\n"
	  "\tfield:char next_comm[16];\toffset:40;\tsize:16;\tsigned:0;\n"
	  "\tfield:pid_t next_pid;\toffset:56;\tsize:4;\tsigned:1;\n"
	  "\tfield:int next_prio;\toffset:60;\tsize:4;\tsigned:1;\n" },
	{ 2, TEV_IRQ_ENTRY,
	  "name: irq_handler_entry\nID: 151\n" COMMON
	  "\tfield:int irq;\toffset:8;\tsize:4;\tsigned:1;\n"
	  "\tfield:__data_loc char[] name;\toffset:12;\tsize:4;\tsigned:0;\n" },
	{ 3, TEV_VCPU_WAKEUP,
	  "name: kvm_vcpu_wakeup\nID: 1561\n" COMMON
	  "\tfield:__u64 ns;\toffset:8;\tsize:8;\tsigned:0;\n"
	  "\tfield:bool waited;\toffset:16;\tsize:1;\tsigned:0;\n"
	  "\tfield:bool valid;\toffset:17;\tsize:1;\tsigned:0;\n" },
	{ 4, TEV_KVM_EXIT,
	  "name: kvm_exit\nID: 1599\n" COMMON
	  "\tfield:int ret;\toffset:8;\tsize:4;\tsigned:1;\n"
	  "\tfield:unsigned int esr_ec;\toffset:12;\tsize:4;\tsigned:0;\n"
	  "\tfield:unsigned long vcpu_pc;\toffset:16;\tsize:8;\tsigned:0;\n" },
	{ 5, TEV_HRTIMER_ENTRY,
	  "name: hrtimer_expire_entry\nID: 112\n" COMMON
	  "\tfield:void * hrtimer;\toffset:8;\tsize:8;\tsigned:0;\n"
	  "\tfield:s64 now;\toffset:16;\tsize:8;\tsigned:1;\n"
	  "\tfield:void * function;\toffset:24;\tsize:8;\tsigned:0;\n" },
};
#define NEVENTS (sizeof(events) / sizeof(events[0]))

static void check(bool ok)
{
	if (!ok)
		abort();
}

static void emit(const struct tev *ev, void *opaque)
{
	uint64_t *sum = opaque;

	check(ev->kind > TEV_NONE && ev->kind < TEV_KIND_MAX);
	*sum += ev->t + ev->cpu + (uint64_t)ev->tid + (uint64_t)ev->a + (uint64_t)ev->b + (uint64_t)ev->c;
}

static void one_format(const uint8_t *p, size_t n)
{
	struct tp_format fmt;
	struct tev_decoder *d;
	char err[128];
	int64_t v;

	if (tp_format_parse((const char *)p, n, &fmt, err, sizeof(err))) {
		check(strnlen(err, sizeof(err)) < sizeof(err) && err[0]);
		return;
	}
	check(fmt.nfields > 0 && fmt.nfields <= TP_FIELDS_MAX);
	check(strnlen(fmt.name, TP_NAME_MAX) < TP_NAME_MAX);
	for (size_t i = 0; i < fmt.nfields; i++) {
		const struct tp_field *f = &fmt.f[i];

		check(strnlen(f->name, TP_NAME_MAX) < TP_NAME_MAX && f->name[0]);
		check((unsigned int)f->offset + f->size <= 65535);
		check(tp_field_find(&fmt, f->name) == f);
		if (tp_field_read(f, p, n, &v) == 0)
			check(!f->is_array && (size_t)f->offset + f->size <= n);
	}
	d = malloc(sizeof(*d)); /* 24 KiB: off the fuzzer's stack */
	check(d != NULL);
	tev_decoder_init(d);
	for (unsigned int k = 0; k <= TEV_KIND_MAX; k++)
		tev_decoder_add(d, k, k, &fmt, err, sizeof(err));
	/* the text's bytes as a ring, through whatever kinds took the format */
	check(tev_decode(d, p, n, NULL, NULL) <= n);
	free(d);
}

static void ring(const uint8_t *p, size_t n)
{
	struct tp_format fmt[NEVENTS];
	struct tev_decoder *d = malloc(sizeof(*d));
	uint64_t sum = 0, bad;
	char err[128];
	size_t used;

	check(d != NULL);
	tev_decoder_init(d);
	for (size_t i = 0; i < NEVENTS; i++) {
		check(!tp_format_parse(events[i].text, strlen(events[i].text), &fmt[i], err, sizeof(err)));
		check(!tev_decoder_add(d, events[i].perf_id, events[i].kind, &fmt[i], err, sizeof(err)));
	}
	used = tev_decode(d, p, n, emit, &sum);
	check(used <= n);
	check(used == n || d->bad > 0); /* a walk ends early only at a broken record */
	/* a reader decodes what it has and keeps the rest: what was consumed decodes the same again */
	bad = d->bad;
	check(tev_decode(d, p, used, emit, &sum) == used);
	check(d->bad - bad <= bad);
	__asm__ volatile("" : : "r"(sum));
	free(d);
}

static uint64_t rd(const uint8_t *p, size_t k)
{
	uint64_t v = 0;

	for (size_t i = 0; i < k; i++)
		v |= (uint64_t)p[i] << (8 * i);
	return v;
}

static int cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return x < y ? -1 : x > y;
}

static void check_result(const struct attrib_sample *s, const struct attrib_result *r, const struct attrib_vm *vm)
{
	check(r->cls < AC_MAX && r->why < AMB_MAX && attrib_class_key(r->cls) && attrib_ambiguity_key(r->why));
	check((r->cls == AC_AMBIGUOUS) == (r->why != AMB_NONE));
	if (r->cls == AC_AMBIGUOUS)
		return;
	check(r->residual >= 0 && r->poll_ns >= -1 && s->vcpu < vm->nvcpu);
	for (unsigned int k = 0; k < AS_MAX; k++)
		check(r->stage[k] >= -1);
}

/* 16 bytes: the request's and the wake-up's times (u64 each, only their low 32 bits unless the
 * last byte's top bit is set); then 12-byte events:
 * u32 t, u8 cpu, u8 tid (0: none, 1-2 the vCPUs, 3 another), u8 kind (0xff: an answer at t),
 * u8 a (small: IRQ numbers 10-12 are the VM's), u32 b */
static void join(const uint8_t *p, size_t n)
{
	struct attrib_vm vm = { .nvcpu = 2, .vcpu_tid = { 1, 2 }, .nirq = 4, .bg_timer_fn = 13 };
	struct attrib_events e;
	uint64_t answers[64];
	size_t na = 0;

	if (n < 16)
		return;
	vm.irq[0].irq = 10, vm.irq[0].role = AIRQ_VFIO, vm.irq[0].vcpu = -1;
	vm.irq[1].irq = 11, vm.irq[1].role = AIRQ_DOORBELL, vm.irq[1].vcpu = 0;
	vm.irq[2].irq = 12, vm.irq[2].role = AIRQ_VTIMER, vm.irq[2].vcpu = -1;
	vm.irq[3].irq = 14, vm.irq[3].role = AIRQ_DOORBELL, vm.irq[3].vcpu = 1;
	attrib_events_init(&e, 4096);
	for (size_t o = 16; o + 12 <= n; o += 12) {
		const uint8_t *q = p + o;
		struct tev ev = { .t = rd(q, 4), .cpu = q[4] & 3, .tid = q[5] & 3, .kind = q[6] % TEV_KIND_MAX,
				  .a = q[7] < 3 ? q[7] : q[7] % 16, .b = (int64_t)rd(q + 8, 4) - 100 };

		if (q[6] == 0xff) {
			if (na < 64)
				answers[na++] = ev.t;
			continue;
		}
		if (ev.kind == TEV_SCHED_WAKING || ev.kind == TEV_SCHED_SWITCH)
			ev.a = q[7] & 3; /* a pid: the vCPUs' tids are 1, 2 */
		attrib_events_add(&e, &ev);
	}
	attrib_events_sort(&e);
	for (size_t i = 1; i < e.n; i++)
		check(e.ev[i - 1].t <= e.ev[i].t);
	qsort(answers, na, sizeof(answers[0]), cmp_u64);

	bool wide = p[15] & 0x80; /* else the times are near the events' */
	uint64_t sent = wide ? rd(p, 8) : rd(p, 4);
	struct attrib_sample s = { .workload = 3, .vcpu = p[0] & 1, .wake = wide ? rd(p + 8, 8) : rd(p + 8, 4) };
	struct attrib_result r;

	attrib_join_udp(&vm, &e, answers, na, sent, &s, &r);
	check_result(&s, &r, &vm);
	s = (struct attrib_sample){ .workload = 1, .vcpu = p[1] & 1, .target = sent, .wake = s.wake };
	attrib_join(&vm, &e, &s, &r);
	check_result(&s, &r, &vm);
	attrib_events_free(&e);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	if (size < 1)
		return 0;
	if ((data[0] & 3) == 3)
		join(data + 1, size - 1);
	else if (data[0] & 1)
		ring(data + 1, size - 1);
	else
		one_format(data + 1, size - 1);
	return 0;
}
