// SPDX-License-Identifier: MIT
/*
 * The join (issue 37): one probe sample, target T and wake-up W on the trace's clock, against its
 * vCPU's host events. The episode is the vCPU's last stay out of the guest that ended by W:
 * (X = kvm_exit, E = kvm_entry]. Inside it, the halt's end (kvm_vcpu_wakeup) gives the class; the
 * wake source, the waking, the switch-in give the stages:
 *   blocked   T -> IRQ/hrtimer -> sched_waking -> sched_switch(in) -> kvm_entry -> W
 *   poll hit  T -> IRQ -> kvm_vcpu_wakeup -> kvm_entry -> W
 *   running   T -> IRQ -> kvm_exit -> kvm_entry -> W        (arm64: the IRQ is traced before the exit)
 * Consecutive stages share their ends, so when all are seen they add up to W - T (residual 0).
 * What is not seen stays -1, never 0; what disagrees is AC_AMBIGUOUS, never guessed. So a halt's
 * wake source is looked for from the episode's start, not from T: one that came before the target
 * (beyond the clocks' slack) makes a negative stage, and the sample ambiguous, rather than being
 * skipped for an older or missing one.
 * Samples are joined one at a time: a binary search finds W in the sorted events and every scan
 * walks back from there over a bounded window, so a run costs O(samples x (log n + episode)).
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/types.h>

#include "guest/probe_proto.h"
#include "trace/trace.h"

#define EVENTS_CAP0 1024
#define SORT_RUN 32

static const char *const class_names[AC_MAX] = { "poll hit", "blocked", "pending at halt", "running", "not visible",
						  "ambiguous" };
static const char *const class_keys[AC_MAX] = { "poll_hit", "blocked", "no_wait", "running", "not_visible", "ambiguous" };
static const char *const stage_names[AS_MAX] = { "host_irq", "signal", "run_queue", "resume", "guest" };

static const char *const amb_keys[AMB_MAX] = {
	[AMB_NONE] = "none", [AMB_NO_VCPU] = "no_vcpu", [AMB_TARGET_AFTER_WAKE] = "target_after_wake",
	[AMB_OUT_AT_WAKE] = "out_at_wake", [AMB_LOST] = "lost", [AMB_TWO_HALTS] = "two_halts",
	[AMB_EARLIER_WAKE] = "earlier_wake", [AMB_NEGATIVE_STAGE] = "negative_stage", [AMB_REENTERED] = "reentered",
	[AMB_OUT_BEFORE_TARGET] = "out_before_target", [AMB_RESIDUAL] = "residual", [AMB_TOO_LONG] = "too_long",
	[AMB_NO_ANSWER] = "no_answer", [AMB_ANSWERS] = "answers", [AMB_NO_REACTION] = "no_reaction",
};

const char *attrib_ambiguity_key(unsigned int why)
{
	return why < AMB_MAX ? amb_keys[why] : NULL;
}

/* The first reason sticks: it is the one that made the sample unusable */
static void amb(uint8_t *why, uint8_t reason)
{
	if (!*why)
		*why = reason;
}

const char *attrib_class_name(unsigned int c)
{
	return c < AC_MAX ? class_names[c] : NULL;
}

const char *attrib_class_key(unsigned int c)
{
	return c < AC_MAX ? class_keys[c] : NULL;
}

const char *attrib_stage_name(unsigned int s)
{
	return s < AS_MAX ? stage_names[s] : NULL;
}

/* ---- the events ---- */

/* max 0: no cap but the address space's */
void attrib_events_init(struct attrib_events *e, size_t max)
{
	size_t most = SIZE_MAX / sizeof(struct tev) / 2;

	*e = (struct attrib_events){ .max = max && max < most ? max : most };
}

void attrib_events_free(struct attrib_events *e)
{
	free(e->ev);
	e->ev = NULL;
	e->n = e->cap = 0;
}

static int events_grow(struct attrib_events *e)
{
	if (e->cap >= e->max)
		return -1;
	size_t cap = e->cap ? e->cap * 2 : EVENTS_CAP0;

	if (cap > e->max)
		cap = e->max;
	struct tev *p = realloc(e->ev, cap * sizeof(*p));

	if (!p)
		return -1;
	e->ev = p;
	e->cap = cap;
	return 0;
}

void attrib_events_add(struct attrib_events *e, const struct tev *ev)
{
	if (e->n == e->cap && events_grow(e) < 0) {
		e->dropped++;
		return;
	}
	e->ev[e->n++] = *ev;
}

static void insertion_sort(struct tev *a, size_t n)
{
	for (size_t i = 1; i < n; i++) {
		struct tev x = a[i];
		size_t j = i;

		for (; j > 0 && a[j - 1].t > x.t; j--)
			a[j] = a[j - 1];
		a[j] = x;
	}
}

/* src[lo, mid) and src[mid, hi) into dst[lo, hi); on a tie the left run first: stable */
static void merge(const struct tev *src, struct tev *dst, size_t lo, size_t mid, size_t hi)
{
	size_t i = lo, j = mid;

	for (size_t k = lo; k < hi; k++)
		dst[k] = j < hi && (i >= mid || src[j].t < src[i].t) ? src[j++] : src[i++];
}

/* Bottom-up merge sort: stable, O(n log n), no recursion; per-CPU streams arrive interleaved. */
void attrib_events_sort(struct attrib_events *e)
{
	size_t n = e->n;

	for (size_t lo = 0; lo < n; lo += SORT_RUN)
		insertion_sort(e->ev + lo, n - lo < SORT_RUN ? n - lo : SORT_RUN);
	if (n <= SORT_RUN)
		return;
	struct tev *tmp = malloc(n * sizeof(*tmp));

	if (!tmp) {
		insertion_sort(e->ev, n); /* slow but still right */
		return;
	}
	struct tev *src = e->ev, *dst = tmp;

	for (size_t w = SORT_RUN; w < n; w *= 2) {
		for (size_t lo = 0; lo < n; lo += 2 * w) {
			size_t mid = lo + w < n ? lo + w : n, hi = lo + 2 * w < n ? lo + 2 * w : n;

			merge(src, dst, lo, mid, hi);
		}
		struct tev *t = src;

		src = dst;
		dst = t;
	}
	if (src != e->ev)
		memcpy(e->ev, src, n * sizeof(*tmp));
	free(tmp);
}

/* ---- the join ---- */

struct join {
	const struct attrib_vm *vm;
	const struct tev *ev;
	unsigned int vcpu;
	int32_t tid;
	bool device;   /* a device's answer (udp): its vectors wake, not the timer */
	uint64_t T, W;
	ssize_t floor; /* the first index any scan may look at */
	ssize_t iw;    /* the last event at or before W */
};

/* The vCPU's episode: (x, e], its halt ends h (the last of nh), -1 for what was not seen. */
struct episode {
	ssize_t x, e, h;
	unsigned int nh;
	ssize_t start;	 /* the first index inside the episode */
};

/* A point of a sample's chain: an event's time when seen. */
struct pt {
	bool seen;
	uint64_t t;
};

static struct pt at(const struct join *j, ssize_t i)
{
	return i >= 0 ? (struct pt){ true, j->ev[i].t } : (struct pt){ false, 0 };
}

static bool is(const struct tev *v, unsigned int kind, int32_t tid)
{
	return v->kind == kind && v->tid == tid;
}

/* The index of the last event at or before t, -1 when none. */
static ssize_t last_at_or_before(const struct tev *ev, size_t n, uint64_t t);

ssize_t attrib_events_last(const struct attrib_events *e, uint64_t t)
{
	return last_at_or_before(e->ev, e->n, t);
}

static ssize_t last_at_or_before(const struct tev *ev, size_t n, uint64_t t)
{
	size_t lo = 0, hi = n;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (ev[mid].t <= t)
			lo = mid + 1;
		else
			hi = mid;
	}
	return (ssize_t)lo - 1;
}

int attrib_vm_vcpu(const struct attrib_vm *vm, int64_t tid)
{
	for (size_t v = 0; v < vm->nvcpu && v < ATTRIB_VCPUS_MAX; v++)
		if (vm->vcpu_tid[v] == tid)
			return (int)v;
	return -1;
}

/* The role of an IRQ that can wake this vCPU for this sample: this vCPU's doorbell; for a timer
 * sample the vtimer PPI taken on this vCPU's thread; for a device's answer any VFIO vector (its
 * target vCPU is not in the trace); 0 for any other. */
static unsigned int irq_role(const struct join *j, const struct tev *v)
{
	if (v->kind != TEV_IRQ_ENTRY)
		return 0;
	for (size_t k = 0; k < j->vm->nirq && k < ATTRIB_IRQS_MAX; k++) {
		const __typeof__(j->vm->irq[0]) *q = &j->vm->irq[k];

		if (q->irq != v->a)
			continue;
		if ((q->role == AIRQ_DOORBELL && q->vcpu == (int)j->vcpu) ||
		    (j->device ? q->role == AIRQ_VFIO : q->role == AIRQ_VTIMER && v->tid == j->tid))
			return q->role;
	}
	return 0;
}

/* The role of event v as the IRQ that sent a vCPU on cpu out of the guest: a doorbell or the
 * vtimer is taken on that CPU; a vector on whichever CPU the host routes it to (it kicks the vCPU
 * with an IPI) */
static unsigned int irq_role_on(const struct join *j, const struct tev *v, uint32_t cpu)
{
	unsigned int role = irq_role(j, v);

	return role && (role == AIRQ_VFIO || v->cpu == cpu) ? role : 0;
}

/* One of the VM's IRQs for this vCPU that sent exit x out, at or after from and before x */
static ssize_t irq_before_exit(const struct join *j, ssize_t x, uint64_t from)
{
	for (ssize_t i = x - 1; i >= j->floor && j->ev[i].t >= from; i--)
		if (irq_role_on(j, &j->ev[i], j->ev[x].cpu))
			return i;
	return -1;
}

/* Where the host handles the interrupt after the exit (x86): one of the VM's IRQs for this
 * vCPU, or for a timer sample its bg timer's hrtimer, on the exit's CPU inside the trip (x, e);
 * -1 when none or not this host's order. Its role into *role (AIRQ_VTIMER for the hrtimer). */
static ssize_t irq_after_exit(const struct join *j, ssize_t x, ssize_t e, unsigned int *role)
{
	uint32_t cpu = j->ev[x].cpu;

	*role = 0;
	if (!j->vm->irq_after_exit || e < 0)
		return -1;
	for (ssize_t i = x + 1; i < e; i++) {
		const struct tev *v = &j->ev[i];

		if ((*role = irq_role_on(j, v, cpu)))
			return i;
		if (!j->device && v->kind == TEV_HRTIMER_ENTRY && v->cpu == cpu && j->vm->bg_timer_fn &&
		    (uint64_t)v->a == j->vm->bg_timer_fn) {
			*role = AIRQ_VTIMER;
			return i;
		}
	}
	return -1;
}

/* From exit x: its entry (and the halts ended on the way) into ep. 0, or -2 when still out at W. */
static int trip_from(const struct join *j, ssize_t x, struct episode *ep)
{
	*ep = (struct episode){ .x = x, .e = -1, .h = -1, .start = x + 1 };
	for (ssize_t i = x + 1; i <= j->iw; i++) {
		const struct tev *v = &j->ev[i];

		if (is(v, TEV_VCPU_WAKEUP, j->tid)) {
			ep->h = i; /* the last halt's end before the entry */
			ep->nh++;
		} else if (is(v, TEV_KVM_ENTRY, j->tid)) {
			ep->e = i;
			return 0;
		} else if (is(v, TEV_KVM_EXIT, j->tid)) {
			return -3; /* two exits in a row: events were lost */
		}
	}
	return -2;
}

/* The trip out of the guest that delivered the wake-up: the one under way at the target (its exit
 * before T), or, when the vCPU was in the guest at T, the first trip after T that halted or that
 * one of the VM's IRQs sent out (trips before it were the guest's own: an MMIO access, ...). What
 * follows its entry up to W is the guest's stage. A single trip after T is taken unmarked (its IRQ
 * unseen: the stages show what was). 0 with ep filled; -1 when the vCPU stayed in the guest from T
 * to W (nothing of the host to see); -2 out at W or the window ran out; -3 events lost (an entry
 * or halt end without its exit); -4 several trips after T, none of them marked. */
static int find_trip(const struct join *j, struct episode *ep)
{
	ssize_t it = last_at_or_before(j->ev, (size_t)j->iw + 1, j->T), i;
	uint64_t from = j->T > ATTRIB_SLACK_NS ? j->T - ATTRIB_SLACK_NS : 0;
	struct episode first;
	unsigned int trips = 0;

	for (i = it; i >= j->floor; i--) /* out or in at T: its last exit or entry before */
		if (is(&j->ev[i], TEV_KVM_EXIT, j->tid) || is(&j->ev[i], TEV_KVM_ENTRY, j->tid))
			break;
	if (i < j->floor && j->floor > 0)
		return -2;
	if (i >= j->floor && j->ev[i].kind == TEV_KVM_EXIT)
		return trip_from(j, i, ep);
	bool known = i >= j->floor; /* an entry seen before T; else the trace began with the vCPU out */
	for (i = it + 1; i <= j->iw; i++) {
		const struct tev *v = &j->ev[i];

		if (is(v, TEV_KVM_ENTRY, j->tid) || is(v, TEV_VCPU_WAKEUP, j->tid))
			return known ? -3 : -2;
		if (!is(v, TEV_KVM_EXIT, j->tid))
			continue;
		int r = trip_from(j, i, ep);

		if (r < 0)
			return r;
		unsigned int role;

		if (ep->h >= 0 || irq_before_exit(j, i, from) >= 0 || irq_after_exit(j, ep->x, ep->e, &role) >= 0)
			return 0;
		if (trips++ == 0)
			first = *ep;
		from = j->ev[ep->e].t; /* an IRQ before this trip's entry was not the next one's */
		i = ep->e;
	}
	if (trips == 1)
		*ep = first;
	return trips == 1 ? 0 : trips ? -4 : -1;
}

/* The last event in [from, to) (to > from: backwards) matching kind, tid ignored, field a == a. */
static ssize_t last_a(const struct join *j, ssize_t from, ssize_t to, unsigned int kind, int64_t a)
{
	for (ssize_t i = to - 1; i >= from; i--)
		if (j->ev[i].kind == kind && j->ev[i].a == a)
			return i;
	return -1;
}

/* The first sched_switch in (from, to) with next_pid == tid (the switch-in). */
static ssize_t first_switch_in(const struct join *j, ssize_t from, ssize_t to)
{
	for (ssize_t i = from + 1; i < to; i++)
		if (j->ev[i].kind == TEV_SCHED_SWITCH && j->ev[i].b == j->tid)
			return i;
	return -1;
}

/* Blocked: the wake source of the waking wk, on its CPU, searched back to the episode's start: a
 * bg-timer hrtimer still running (no hrtimer exit on that CPU since), or one of the VM's IRQs for
 * this vCPU. Another of the VM's wakings on that CPU in between was that source's: none then. */
static ssize_t blocked_source(const struct join *j, ssize_t start, ssize_t wk, struct attrib_result *r)
{
	uint32_t cpu = j->ev[wk].cpu;
	bool closed = false;

	for (ssize_t i = wk - 1; i >= start; i--) {
		const struct tev *v = &j->ev[i];
		unsigned int role;

		if (v->cpu != cpu)
			continue;
		if (v->kind == TEV_HRTIMER_EXIT)
			closed = true;
		else if (v->kind == TEV_HRTIMER_ENTRY && !closed && j->vm->bg_timer_fn &&
			 (uint64_t)v->a == j->vm->bg_timer_fn)
			return i;
		else if (v->kind == TEV_SCHED_WAKING && attrib_vm_vcpu(j->vm, v->a) >= 0)
			return -1;
		else if ((role = irq_role(j, v))) {
			r->doorbell = role == AIRQ_DOORBELL;
			r->vfio = role == AIRQ_VFIO;
			r->irq = (int32_t)v->a;
			return i;
		}
	}
	return -1;
}

/* b - a when both were seen, else -1; negative within the slack is 0, beyond it -1 and ambiguous */
static int64_t span(struct pt a, struct pt b, uint8_t *why)
{
	if (!a.seen || !b.seen)
		return -1;
	if (b.t >= a.t)
		return b.t - a.t > INT64_MAX ? INT64_MAX : (int64_t)(b.t - a.t);
	if (a.t - b.t <= ATTRIB_SLACK_NS)
		return 0;
	amb(why, AMB_NEGATIVE_STAGE);
	return -1;
}

/* The first seen point of a chain, which must not precede the target beyond the slack. */
static bool lead_ok(const struct join *j, const struct pt *chain, size_t n)
{
	for (size_t k = 0; k < n; k++)
		if (chain[k].seen)
			return chain[k].t + ATTRIB_SLACK_NS >= j->T;
	return true;
}

/* A chain that began before the target (beyond the slack, far above the clocks' error): something
 * else had already woken the vCPU (the guest's own earlier timer; for a device's answer the
 * request's transmit completion, other traffic) and the sample rode along. Said before the
 * negative stage it makes, which is its consequence. */
static void lead_first(const struct join *j, const struct pt *chain, size_t n, uint8_t *why)
{
	if (!lead_ok(j, chain, n))
		amb(why, AMB_EARLIER_WAKE);
}

static void join_blocked(const struct join *j, const struct episode *ep, struct attrib_result *r, uint8_t *why)
{
	const struct tev *h = &j->ev[ep->h];
	/* the last waking before the halt's end: a spurious one comes before, and blocks again */
	ssize_t wk = last_a(j, ep->start, ep->h, TEV_SCHED_WAKING, j->tid);
	ssize_t irq = wk >= 0 ? blocked_source(j, ep->start, wk, r) : -1;
	ssize_t in = wk >= 0 ? first_switch_in(j, wk, ep->h) : -1;
	struct pt I = at(j, irq), Wk = at(j, wk), S = at(j, in), H = at(j, ep->h), E = at(j, ep->e);
	struct pt T = { true, j->T }, W = { true, j->W };

	lead_first(j, (struct pt[]){ I, Wk, S, H }, 4, why);
	r->stage[AS_HOST_IRQ] = span(T, I, why);
	r->stage[AS_SIGNAL] = span(I, Wk, why);
	r->stage[AS_RUN_QUEUE] = span(Wk, S, why);
	/* switch-in -> entry (from the halt's end would leave switch-in -> halt end to no stage) */
	r->stage[AS_RESUME] = span(S.seen ? S : H, E, why);
	r->stage[AS_GUEST] = span(E, W, why);

	/* the poll: from the halt's start to the first block after it (a switch-out before it was
	 * a preemption, not the block) */
	if (h->a < 0 || (uint64_t)h->a > h->t)
		return;
	uint64_t start = h->t - (uint64_t)h->a;

	for (ssize_t i = ep->start; i < (wk >= 0 ? wk : ep->h); i++) {
		const struct tev *v = &j->ev[i];

		if (v->kind != TEV_SCHED_SWITCH || v->a != j->tid || v->t + ATTRIB_SLACK_NS < start)
			continue;
		r->poll_ns = v->t > start ? (int64_t)(v->t - start) : 0;
		break;
	}
}

/* waited = 0 is a poll hit only when the wake-up came during the halt: a deadline already past
 * when the vCPU halted was found pending at once (with halt polling off as well) */
static bool halted_after(const struct tev *h, uint64_t T)
{
	uint64_t start = h->a >= 0 && (uint64_t)h->a <= h->t ? h->t - (uint64_t)h->a : 0;

	return T + ATTRIB_SLACK_NS < start;
}

static void join_poll_hit(const struct join *j, const struct episode *ep, struct attrib_result *r, uint8_t *why)
{
	ssize_t irq = -1;
	unsigned int role = 0;

	for (ssize_t i = ep->h; i >= ep->start && irq < 0; i--)
		if ((role = irq_role(j, &j->ev[i])))
			irq = i;
	r->doorbell = role == AIRQ_DOORBELL;
	r->vfio = role == AIRQ_VFIO;
	r->irq = irq >= 0 ? (int32_t)j->ev[irq].a : -1;

	struct pt I = at(j, irq), H = at(j, ep->h), E = at(j, ep->e);
	struct pt T = { true, j->T }, W = { true, j->W };

	lead_first(j, (struct pt[]){ I, H }, 2, why);
	r->stage[AS_HOST_IRQ] = span(T, I, why);
	r->stage[AS_SIGNAL] = span(I, H, why);
	r->stage[AS_RESUME] = span(H, E, why);
	r->stage[AS_GUEST] = span(E, W, why);
	r->poll_ns = j->ev[ep->h].a >= 0 ? j->ev[ep->h].a : -1; /* the whole halt was polling */
}

/* Running: the IRQ that made the vCPU exit, on the exit's CPU, after the target (less the slack)
 * and after the vCPU last entered; arm64 traces it before kvm_exit:
 *   T -> IRQ (host_irq) -> exit (signal) -> entry (resume) -> W
 * x86 handles it after the exit, which is the interrupt's arrival:
 *   T -> exit (host_irq) -> IRQ or the timer's hrtimer (signal) -> entry (resume) -> W */
static void join_running(const struct join *j, const struct episode *ep, struct attrib_result *r, uint8_t *why)
{
	const struct tev *x = &j->ev[ep->x];
	uint64_t from = j->T > ATTRIB_SLACK_NS ? j->T - ATTRIB_SLACK_NS : 0;
	ssize_t irq = -1;
	unsigned int role = 0;

	for (ssize_t i = ep->x - 1; i >= j->floor && j->ev[i].t >= from; i--) {
		const struct tev *v = &j->ev[i];

		if (is(v, TEV_KVM_ENTRY, j->tid))
			break; /* its previous trip: the IRQ came after that entry */
		if (irq < 0 && (role = irq_role_on(j, v, x->cpu)))
			irq = i;
	}
	ssize_t after = irq < 0 ? irq_after_exit(j, ep->x, ep->e, &role) : -1;

	if (after >= 0)
		irq = after;
	r->doorbell = role == AIRQ_DOORBELL;
	r->vfio = role == AIRQ_VFIO;
	r->irq = irq >= 0 && j->ev[irq].kind == TEV_IRQ_ENTRY ? (int32_t)j->ev[irq].a : -1;

	struct pt I = at(j, irq), X = at(j, ep->x), E = at(j, ep->e);
	struct pt T = { true, j->T }, W = { true, j->W };

	if (after >= 0) {
		r->stage[AS_HOST_IRQ] = span(T, X, why);
		r->stage[AS_SIGNAL] = span(X, I, why);
		r->stage[AS_RESUME] = span(I, E, why);
	} else {
		r->stage[AS_HOST_IRQ] = span(T, I, why);
		r->stage[AS_SIGNAL] = span(I, X, why);
		r->stage[AS_RESUME] = span(X, E, why);
	}
	r->stage[AS_GUEST] = span(E, W, why);
}

/* W - T, saturated (T <= W) */
static int64_t total_ns(uint64_t T, uint64_t W)
{
	return W - T > INT64_MAX ? INT64_MAX : (int64_t)(W - T);
}

/* The residual: what the stages seen leave of W - T (negative within the slack: 0). */
static void finish(struct attrib_result *r, uint64_t T, uint64_t W, uint8_t why)
{
	int64_t sum = 0, total = total_ns(T, W);

	/* saturating: times come from a trace, and a broken one must not overflow */
	for (unsigned int s = 0; s < AS_MAX; s++)
		if (r->stage[s] >= 0 && __builtin_add_overflow(sum, r->stage[s], &sum))
			sum = INT64_MAX;
	r->residual = total - sum;
	if (r->residual < 0 && r->residual >= -ATTRIB_SLACK_NS)
		r->residual = 0;
	else if (r->residual < 0)
		amb(&why, AMB_RESIDUAL);
	if (why)
		r->cls = AC_AMBIGUOUS;
	r->why = why;
}

void attrib_join(const struct attrib_vm *vm, const struct attrib_events *e, const struct attrib_sample *s,
		 struct attrib_result *r)
{
	/* T > W: ambiguous, with the (negative) difference for a residual */
	*r = (struct attrib_result){ .cls = AC_AMBIGUOUS, .poll_ns = -1, .irq = -1,
				     .residual = s->target <= s->wake ? total_ns(s->target, s->wake) :
									-total_ns(s->wake, s->target) };
	for (unsigned int k = 0; k < AS_MAX; k++)
		r->stage[k] = -1;
	if (s->target > s->wake)
		r->why = AMB_TARGET_AFTER_WAKE;
	else if (s->wake - s->target > ATTRIB_MAX_TOTAL_NS)
		r->why = AMB_TOO_LONG;
	else if (s->vcpu >= vm->nvcpu || s->vcpu >= ATTRIB_VCPUS_MAX || vm->vcpu_tid[s->vcpu] <= 0)
		r->why = AMB_NO_VCPU;
	if (r->why)
		return;

	ssize_t iw = last_at_or_before(e->ev, e->n, s->wake);
	/* no scan reaches further back than ATTRIB_SCAN_MAX events or a second before the target */
	ssize_t by_time = s->target > ATTRIB_MAX_TOTAL_NS ? last_at_or_before(e->ev, e->n, s->target - ATTRIB_MAX_TOTAL_NS) + 1 : 0;
	ssize_t floor = iw > ATTRIB_SCAN_MAX ? iw - ATTRIB_SCAN_MAX : 0;
	struct join j = { .vm = vm, .ev = e->ev, .vcpu = s->vcpu, .tid = vm->vcpu_tid[s->vcpu],
			  .device = s->workload == PROBE_W_UDP, .T = s->target, .W = s->wake, .floor = floor > by_time ? floor : by_time, .iw = iw };
	struct episode ep;
	int trip = find_trip(&j, &ep);

	if (trip < 0) {
		/* in the guest from T to W: the wake-up went through guest and hardware alone */
		if (trip == -1)
			r->cls = AC_NOT_VISIBLE;
		else
			r->why = trip == -3 ? AMB_LOST : trip == -4 ? AMB_REENTERED : AMB_OUT_AT_WAKE;
		return;
	}
	/* two halts in one trip: events were lost */
	uint8_t why = ep.nh > 1 ? AMB_TWO_HALTS : AMB_NONE;

	if (ep.h >= 0) {
		r->cls = j.ev[ep.h].b ? AC_BLOCKED : halted_after(&j.ev[ep.h], j.T) ? AC_NO_WAIT : AC_POLL_HIT;
		if (r->cls == AC_BLOCKED)
			join_blocked(&j, &ep, r, &why);
		else
			join_poll_hit(&j, &ep, r, &why);
		if (r->cls == AC_NO_WAIT)
			r->poll_ns = -1; /* it never polled: the halt found the interrupt pending */
	} else if (j.ev[ep.x].t >= j.T) {
		r->cls = AC_RUNNING;
		join_running(&j, &ep, r, &why);
	} else {
		/* out of the guest since before the target, for something else (userspace MMIO, ...):
		 * only the guest's own stage is known */
		r->stage[AS_GUEST] = j.ev[ep.e].t <= j.W ? total_ns(j.ev[ep.e].t, j.W) : -1;
		why = AMB_OUT_BEFORE_TARGET;
	}
	finish(r, j.T, j.W, why);
}
