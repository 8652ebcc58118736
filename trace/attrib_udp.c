// SPDX-License-Identifier: MIT
/*
 * A udp sample's join (issue 37): the probe's request goes out through a passed-through NIC, vmm's
 * peer answers it (stamping the answer on the trace's clock), and the answer comes back as one of
 * the device's vectors. The sample names no vCPU that matters (the probe's thread sleeps on
 * whichever; the vector's target is the guest's choice), so the first of the VM's device IRQs
 * after the answer names it, and the join then runs as for a timer sample from the answer:
 *   software-injected (gic3, or no vLPI): answer -> vfio-msix IRQ -> irqfd wakes or kicks the vCPU
 *   GICv4 vLPI, vCPU not resident: answer -> its doorbell -> wake-up
 *   GICv4 vLPI, vCPU resident: no host event at all: not visible (guest + hardware)
 */
#include <stdint.h>
#include <sys/types.h>

#include "trace/trace.h"

/* the VM's device IRQ q's entry, or NULL: a VFIO vector or a doorbell (of any of its vCPUs) */
static const __typeof__(((struct attrib_vm *)0)->irq[0]) *device_irq(const struct attrib_vm *vm, const struct tev *v)
{
	if (v->kind != TEV_IRQ_ENTRY)
		return NULL;
	for (size_t k = 0; k < vm->nirq && k < ATTRIB_IRQS_MAX; k++)
		if (vm->irq[k].irq == v->a && (vm->irq[k].role == AIRQ_VFIO || vm->irq[k].role == AIRQ_DOORBELL))
			return &vm->irq[k];
	return NULL;
}

/* The vCPU a vector at event i reached, looking forward to iw: the first of the VM's vCPUs woken
 * (irqfd's injection runs in the vector's handler), ending a halt (a polling vCPU) or exiting (a
 * kicked one) after it; -1 when none did. */
static int reached(const struct attrib_vm *vm, const struct tev *ev, ssize_t i, ssize_t iw)
{
	for (ssize_t k = i + 1, seen = 0; k <= iw && seen < ATTRIB_SCAN_MAX; k++, seen++) {
		const struct tev *v = &ev[k];
		int vc = v->kind == TEV_SCHED_WAKING ? attrib_vm_vcpu(vm, v->a)
		       : v->kind == TEV_KVM_EXIT || v->kind == TEV_VCPU_WAKEUP ? attrib_vm_vcpu(vm, v->tid) : -1;

		if (vc >= 0)
			return vc;
	}
	return -1;
}

/* the first of n ascending answers at or after t */
static size_t lower_bound(const uint64_t *a, size_t n, uint64_t t)
{
	size_t lo = 0, hi = n;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (a[mid] < t)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo;
}

static void not_joined(struct attrib_result *r, uint8_t cls, uint8_t why, uint64_t T, uint64_t W)
{
	*r = (struct attrib_result){ .cls = cls, .why = why, .poll_ns = -1, .irq = -1,
				     .residual = W - T > INT64_MAX ? INT64_MAX : (int64_t)(W - T) };
	for (unsigned int k = 0; k < AS_MAX; k++)
		r->stage[k] = -1;
}

void attrib_join_udp(const struct attrib_vm *vm, const struct attrib_events *e, const uint64_t *answers, size_t n,
		     uint64_t sent, struct attrib_sample *s, struct attrib_result *r)
{
	s->target = sent;
	if (s->wake < sent || s->wake - sent > ATTRIB_MAX_TOTAL_NS) {
		attrib_join(vm, e, s, r); /* says why it is not joined */
		return;
	}
	size_t a = lower_bound(answers, n, sent > ATTRIB_SLACK_NS ? sent - ATTRIB_SLACK_NS : 0);
	size_t b = lower_bound(answers, n, s->wake + ATTRIB_SLACK_NS + 1);

	if (a >= b || b - a > 1) {
		not_joined(r, AC_AMBIGUOUS, a >= b ? AMB_NO_ANSWER : AMB_ANSWERS, sent, s->wake);
		return;
	}
	s->target = answers[a];
	if (s->target > s->wake) { /* within the slack: the clocks' error */
		attrib_join(vm, e, s, r);
		return;
	}
	uint64_t from = s->target > ATTRIB_SLACK_NS ? s->target - ATTRIB_SLACK_NS : 0;
	ssize_t iw = attrib_events_last(e, s->wake), i = attrib_events_last(e, from) + 1;
	const __typeof__(vm->irq[0]) *q = NULL;

	for (ssize_t seen = 0; i <= iw && seen < ATTRIB_SCAN_MAX && !q; i++, seen++)
		q = device_irq(vm, &e->ev[i]);
	if (!q) { /* nothing of the host's between the answer and the guest's wake-up */
		not_joined(r, AC_NOT_VISIBLE, AMB_NONE, s->target, s->wake);
		return;
	}
	int vc = q->role == AIRQ_DOORBELL ? q->vcpu : reached(vm, e->ev, i - 1, iw);

	if (vc < 0 || (size_t)vc >= vm->nvcpu) {
		not_joined(r, AC_AMBIGUOUS, AMB_NO_REACTION, s->target, s->wake);
		return;
	}
	s->vcpu = (uint16_t)vc;
	attrib_join(vm, e, s, r);
}
