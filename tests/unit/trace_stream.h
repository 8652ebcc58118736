/* SPDX-License-Identifier: MIT */
/*
 * The join's unit tests' hand-built arm64 event streams (trace_attrib_test.c: one per class and
 * wake source; trace_attrib_edges_test.c: what makes a sample ambiguous, the event store, long and
 * random streams): the VM, a stream builder, one sample joined, the reference's blocked timer.
 */
#ifndef VMM_TESTS_TRACE_STREAM_H
#define VMM_TESTS_TRACE_STREAM_H

#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "kselftest_harness.h"
#include "trace/trace.h"

#define TID0 1001
#define TID1 1002
#define OTHER 2001 /* another VM's vCPU */
#define VTIMER 27
#define VFIO_IRQ 60
#define DB0 70 /* vCPU 0's doorbell */
#define DB1 71
#define FOREIGN_IRQ 99
#define BGFN 0xffff800080a1b2c0ll
#define EC_WFX 0x01
#define EC_DABT 0x24

struct stream {
	struct tev *ev;
	size_t n, cap;
};

static inline void put(struct stream *s, uint64_t t, uint32_t cpu, int32_t tid, unsigned int kind, int64_t a, int64_t b)
{
	if (s->n == s->cap) {
		s->cap = s->cap ? s->cap * 2 : 64;
		s->ev = realloc(s->ev, s->cap * sizeof(*s->ev));
		if (!s->ev)
			abort();
	}
	s->ev[s->n++] = (struct tev){ .t = t, .cpu = cpu, .tid = tid, .kind = kind, .a = a, .b = b };
}

static inline void vm_init(struct attrib_vm *vm)
{
	memset(vm, 0, sizeof(*vm));
	vm->nvcpu = 2;
	vm->vcpu_tid[0] = TID0;
	vm->vcpu_tid[1] = TID1;
	vm->nirq = 4;
	vm->irq[0].irq = VTIMER, vm->irq[0].role = AIRQ_VTIMER, vm->irq[0].vcpu = -1;
	vm->irq[1].irq = VFIO_IRQ, vm->irq[1].role = AIRQ_VFIO, vm->irq[1].vcpu = -1;
	vm->irq[2].irq = DB0, vm->irq[2].role = AIRQ_DOORBELL, vm->irq[2].vcpu = 0;
	vm->irq[3].irq = DB1, vm->irq[3].role = AIRQ_DOORBELL, vm->irq[3].vcpu = 1;
	vm->bg_timer_fn = (uint64_t)BGFN;
}

/* The stream into a sorted store (attrib_events_free it). */
static inline void stream_store(const struct stream *s, struct attrib_events *e)
{
	attrib_events_init(e, 0);
	for (size_t i = 0; i < s->n; i++)
		attrib_events_add(e, &s->ev[i]);
	attrib_events_sort(e);
}

/* The stream into a sorted store, and one sample of any workload joined against it. */
static inline struct attrib_result join_sample(const struct attrib_vm *vm, const struct stream *s,
					       struct attrib_sample smp)
{
	struct attrib_events e;
	struct attrib_result r;

	stream_store(s, &e);
	attrib_join(vm, &e, &smp, &r);
	attrib_events_free(&e);
	return r;
}

/* A timer sample (workload 1) of vCPU vcpu: target T, wake-up W. */
static inline struct attrib_result join_one(const struct attrib_vm *vm, const struct stream *s, uint16_t vcpu, uint64_t T,
				     uint64_t W)
{
	return join_sample(vm, s, (struct attrib_sample){ .workload = 1, .vcpu = vcpu, .target = T, .wake = W });
}

/* arm64 timer, blocked (vCPU on cpu0, its bg timer fires on cpu1): target at base + 100 us, the
 * guest sees it at base + 120 us. The halt started at base + 2 us and blocked at + 3 us. */
static inline void timer_blocked(struct stream *s, uint64_t b, int32_t tid, bool hrtimer)
{
	put(s, b + 1000, 0, tid, TEV_KVM_EXIT, EC_WFX, 1);
	put(s, b + 1500, 0, tid, TEV_WFX, 0, 0);
	put(s, b + 3000, 0, tid, TEV_SCHED_SWITCH, tid, 0);
	if (hrtimer) {
		put(s, b + 102000, 1, 0, TEV_HRTIMER_ENTRY, BGFN, 0);
		put(s, b + 103000, 1, 0, TEV_SCHED_WAKING, tid, 0);
		put(s, b + 103500, 1, 0, TEV_HRTIMER_EXIT, 0, 0);
	}
	put(s, b + 110000, 0, 0, TEV_SCHED_SWITCH, 0, tid);
	put(s, b + 111000, 0, tid, TEV_TIMER_UPDATE_IRQ, 0, VTIMER);
	put(s, b + 112000, 0, tid, TEV_VCPU_WAKEUP, 110000, 1);
	put(s, b + 115000, 0, tid, TEV_KVM_ENTRY, 0, 0);
}

static inline void expect_stages(struct __test_metadata *_metadata, const struct attrib_result *r, int64_t irq,
			  int64_t signal, int64_t rq, int64_t resume, int64_t guest)
{
	EXPECT_EQ(irq, r->stage[AS_HOST_IRQ]);
	EXPECT_EQ(signal, r->stage[AS_SIGNAL]);
	EXPECT_EQ(rq, r->stage[AS_RUN_QUEUE]);
	EXPECT_EQ(resume, r->stage[AS_RESUME]);
	EXPECT_EQ(guest, r->stage[AS_GUEST]);
}
#define STAGES(r, ...) expect_stages(_metadata, r, __VA_ARGS__)

#endif
