/* SPDX-License-Identifier: MIT */
/*
 * Where an interrupt's latency goes (issue 37): the host's tracepoints for one VM, put on one clock
 * with the guest probe's samples, and each sample split into stages.
 *   tp_format.c   a tracepoint's `format` file (tracefs events/SYS/NAME/format): its id and the
 *                 offset, size and sign of each field. Layouts change between kernels, so they are
 *                 always read at run time, never assumed.
 *   tev.c         perf ring records (PERF_RECORD_SAMPLE with IDENTIFIER|TID|TIME|CPU|RAW, and
 *                 PERF_RECORD_LOST) into struct tev, through a table of the events asked for and
 *                 their formats. Every length and offset in a record is checked (a record is the
 *                 kernel's, but a parser that trusts lengths is one bug away from reading anything).
 *   clock.c       the guest's CLOCK_MONOTONIC -> the guest's counter -> the host's counter ->
 *                 the host's CLOCK_MONOTONIC_RAW (the trace's clock), from pairs read on each side.
 *   attrib.c      the join: each probe sample to its vCPU's halt episode and wake source, its
 *                 class (poll hit, blocked, running, not visible, ambiguous) and stages.
 *   attrib_report.c  per workload x class: n, median/p90/p99 per stage and the residual, the tail
 *                 breakdown, as text and JSON.
 *   collect.c     (app side, needs a host) perf_event_open per CPU per tracepoint, filters, one
 *                 ring per CPU, a reader thread.
 * Nothing here needs /dev/kvm: the unit and fuzz tests feed recorded streams.
 */
#ifndef VMM_TRACE_H
#define VMM_TRACE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <sys/types.h>

/* ---- tracepoint formats ---- */

#define TP_NAME_MAX 64
#define TP_FIELDS_MAX 24

struct tp_field {
	char name[TP_NAME_MAX]; /* the last word of the declaration: "irq", "prev_pid", "common_pid" */
	uint16_t offset, size;
	bool is_signed;
	bool is_array; /* "char name[16]", "__data_loc char[] name": not read as a number */
};

struct tp_format {
	char name[TP_NAME_MAX]; /* "kvm_entry" */
	uint32_t id;		 /* the perf config for PERF_TYPE_TRACEPOINT */
	size_t nfields;
	struct tp_field f[TP_FIELDS_MAX];
};

/* Parses a format file's text (not NUL-terminated; len bytes). 0, or -EINVAL with err naming what
 * is wrong (no ID, a field line that does not parse, more than TP_FIELDS_MAX fields, an offset +
 * size above 65535). */
int tp_format_parse(const char *text, size_t len, struct tp_format *out, char *err, size_t errsize);
/* The field called name, or NULL. */
const struct tp_field *tp_field_find(const struct tp_format *fmt, const char *name);
/* The field's value from a raw record (raw_len bytes): 0 with *v (sign-extended when signed), or -1
 * when the field is an array, not 1/2/4/8 bytes, or lies beyond raw_len. */
int tp_field_read(const struct tp_field *f, const void *raw, size_t raw_len, int64_t *v);

/* ---- events ---- */

/* The events vmm asks for (the stage table in docs/attribution.md). */
enum tev_kind {
	TEV_NONE = 0,
	TEV_KVM_ENTRY,		 /* kvm:kvm_entry: the vCPU enters the guest */
	TEV_KVM_EXIT,		 /* kvm:kvm_exit: a = esr_ec (arm64) or exit_reason (x86), b = ret (arm64) */
	TEV_VCPU_WAKEUP,	 /* kvm:kvm_vcpu_wakeup: a halt ends; a = ns (the whole halt, poll included), b = waited */
	TEV_WFX,		 /* kvm:kvm_wfx_arm64: a = is_wfe */
	TEV_TIMER_UPDATE_IRQ,	 /* kvm:kvm_timer_update_irq: a = vcpu_id, b = irq, c = level */
	TEV_IRQ_ENTRY,		 /* irq:irq_handler_entry: a = irq */
	TEV_IRQ_EXIT,		 /* irq:irq_handler_exit: a = irq, b = ret */
	TEV_SCHED_WAKING,	 /* sched:sched_waking: a = pid woken, b = target_cpu */
	TEV_SCHED_SWITCH,	 /* sched:sched_switch: a = prev_pid, b = next_pid, c = prev_state */
	TEV_HRTIMER_ENTRY,	 /* timer:hrtimer_expire_entry: a = function (address) */
	TEV_HRTIMER_EXIT,	 /* timer:hrtimer_expire_exit */
	TEV_KIND_MAX
};

/* One event on the trace's clock (CLOCK_MONOTONIC_RAW, ns). */
struct tev {
	uint64_t t;
	uint32_t cpu;	/* the host CPU it happened on */
	int32_t tid;	/* the task current on that CPU (perf's TID; common_pid) */
	uint16_t kind;	/* enum tev_kind */
	int64_t a, b, c;
};

const char *tev_kind_name(unsigned int kind); /* "kvm_entry", ...; NULL for TEV_NONE and out of range */
/* The tracefs system and event of a kind: "kvm", "kvm_entry". */
const char *tev_kind_system(unsigned int kind);

/* What a perf ring's records are read with: per perf sample id (PERF_EVENT_IOC_ID of each opened
 * event), its kind and format. */
#define TEV_IDS_MAX 512
struct tev_decoder {
	size_t n;
	struct {
		uint64_t perf_id;
		uint16_t kind;
		const struct tp_format *fmt; /* the caller keeps it alive and in place */
		const struct tp_field *fa, *fb, *fc; /* the kind's fields in this format (NULL: absent) */
	} id[TEV_IDS_MAX];
	/* counted while decoding */
	uint64_t lost;	   /* PERF_RECORD_LOST's counts */
	uint64_t bad;	   /* records that broke a bound or named an unknown id */
	uint64_t other;	   /* record types that carry no event (throttle, ...) */
};

void tev_decoder_init(struct tev_decoder *d);
/* Adds one opened event. -EINVAL when the format lacks a field the kind needs (the message names
 * it), -ENOSPC when full. */
int tev_decoder_add(struct tev_decoder *d, uint64_t perf_id, unsigned int kind, const struct tp_format *fmt,
		    char *err, size_t errsize);
/* Forgets an event (closed before it recorded anything); nothing when it is not there. */
void tev_decoder_remove(struct tev_decoder *d, uint64_t perf_id);
/* Decodes the records in buf[0..len) (whole records, as copied out of a ring: a record that runs
 * past len is counted bad and ends the walk). Each event goes to emit(ev, opaque). Returns the
 * bytes consumed (whole records). */
size_t tev_decode(struct tev_decoder *d, const void *buf, size_t len, void (*emit)(const struct tev *ev, void *opaque),
		  void *opaque);

/* ---- one clock ---- */

/* A (clock ns, counter) pair read together on one side. */
struct clock_pair {
	uint64_t ns, cnt;
};

/* guest CLOCK_MONOTONIC -> guest counter (from the probe's COUNTER frames), guest counter -> host
 * counter (guest = host - offset; 0 on arm64 with KVM_ARM_SET_COUNTER_OFFSET; x86: the TSC offset,
 * ratio 1 only), host counter -> CLOCK_MONOTONIC_RAW (pairs vmm reads). */
struct attrib_clock {
	struct clock_pair g[2]; /* guest pairs: the first and last seen */
	unsigned int ng;
	struct clock_pair h[2]; /* host pairs (ns = CLOCK_MONOTONIC_RAW) */
	unsigned int nh;
	uint64_t hz;		 /* the counter's frequency (both sides: one counter) */
	int64_t offset;		 /* guest counter = host counter - offset */
	uint64_t err_ns;	 /* the bound on one mapping's error, from the pairs' read windows */
};

void attrib_clock_init(struct attrib_clock *c, uint64_t hz, int64_t offset);
void attrib_clock_guest_pair(struct attrib_clock *c, struct clock_pair p);
/* window_ns: how long the host read took (the pair's uncertainty) */
void attrib_clock_host_pair(struct attrib_clock *c, struct clock_pair p, uint64_t window_ns);
/* A guest CLOCK_MONOTONIC instant on the host's CLOCK_MONOTONIC_RAW: 0, or -1 when the pairs do
 * not yet allow it (no guest or host pair, or no frequency). */
int attrib_clock_g2h(const struct attrib_clock *c, uint64_t guest_ns, uint64_t *host_ns);

/* ---- the join ---- */

enum attrib_class {
	AC_POLL_HIT = 0, /* the vCPU was halted and polling: the wake-up ended the poll (waited = 0) */
	AC_BLOCKED,	 /* the vCPU was halted and blocked: woken, run queue, resumed */
	AC_NO_WAIT,	 /* the wake-up was due before the vCPU halted: KVM found it pending and never
			  * waited (waited = 0 without a poll; common with halt polling off) */
	AC_RUNNING,	 /* the vCPU was in the guest: the interrupt made it exit and re-enter */
	AC_NOT_VISIBLE,	 /* no host event between target and wake-up: guest + hardware (resident vLPI,
			  * untrapped WFI, posted interrupt); never reported as 0 */
	AC_AMBIGUOUS,	 /* windows overlap or events disagree: marked, not guessed */
	AC_MAX
};

enum attrib_stage {
	AS_HOST_IRQ = 0, /* target -> the host's timer or device IRQ (hrtimer, vtimer, vfio-msix, doorbell) */
	AS_SIGNAL,	 /* IRQ -> the vCPU thread woken (sched_waking), or the poll's end (kvm_vcpu_wakeup) */
	AS_RUN_QUEUE,	 /* woken -> switched in (sched_switch next = the vCPU) */
	AS_RESUME,	 /* switched in, poll end or exit -> kvm_entry */
	AS_GUEST,	 /* kvm_entry -> the guest's own wake-up timestamp */
	AS_MAX
};

const char *attrib_class_name(unsigned int c);	/* "poll hit", "blocked", ... */
const char *attrib_class_key(unsigned int c);	/* JSON keys: "poll_hit", "blocked", ... */
const char *attrib_stage_name(unsigned int s);	/* "host_irq", "signal", "run_queue", "resume", "guest" */

/* Why a sample is ambiguous (struct attrib_result.why; 0 for the other classes). */
enum attrib_ambiguity {
	AMB_NONE = 0,
	AMB_NO_VCPU,	      /* its vCPU has no known thread */
	AMB_TARGET_AFTER_WAKE, /* the clock put the target after the wake-up */
	AMB_OUT_AT_WAKE,      /* the vCPU was out of the guest at the wake-up, or the search window ran out */
	AMB_LOST,	      /* an entry, halt end or exit where its pair should be: events were lost */
	AMB_TWO_HALTS,	      /* two halts ended in one episode */
	AMB_EARLIER_WAKE,     /* the wake-up's chain began before the target: woken by something else
			       * first (another interrupt, the guest's own tick), which the sample rode */
	AMB_NEGATIVE_STAGE,   /* a stage negative beyond the clock's slack */
	AMB_REENTERED,	      /* the vCPU left the guest after the target, but no trip was marked by one of
			       * the VM's IRQs or a halt: which one delivered it is not known */
	AMB_OUT_BEFORE_TARGET, /* out of the guest since before the target, no halt (userspace exit) */
	AMB_RESIDUAL,	      /* the stages add up to more than the total beyond the slack */
	AMB_TOO_LONG,	      /* target to wake-up over ATTRIB_MAX_TOTAL_NS: not joined (a sample's
			       * times are the guest's to write; the join's work stays bounded) */
	AMB_NO_ANSWER,	      /* udp: no answer of the peer's between the request and the wake-up */
	AMB_ANSWERS,	      /* udp: more than one answer in one round trip (a late one rode along) */
	AMB_NO_REACTION,      /* udp: a vector fired but no vCPU of the VM was woken, polled or exited
			       * before the wake-up */
	AMB_MAX
};
const char *attrib_ambiguity_key(unsigned int why); /* "earlier_wake", ...; NULL out of range */

#define ATTRIB_MAX_TOTAL_NS 1000000000ull /* a second: longer samples are not joined */
/* The clocks' mapping error a stage may show: a stage negative by at most this much is 0, by more
 * the sample is ambiguous. */
#define ATTRIB_SLACK_NS 1000
/* How far back from W a join looks, in events: an episode longer than this is ambiguous (the
 * lab's streams have tens of events per sample). */
#define ATTRIB_SCAN_MAX 20000

/* One sample on the host clock. */
struct attrib_sample {
	uint8_t workload;   /* PROBE_W_* */
	uint16_t vcpu;	    /* the guest's CPU, an index into the VM's vCPU threads */
	uint64_t target;    /* host ns: when the wake-up was due (timer) or the request arrived */
	uint64_t wake;	    /* host ns: when the guest's thread saw it */
};

/* What the join found for one sample. A stage whose two ends were not both seen is -1; residual =
 * (wake - target) - the sum of the stages seen. */
struct attrib_result {
	uint8_t cls;
	int64_t stage[AS_MAX];
	int64_t residual;
	int64_t poll_ns;    /* halt-poll time before the wake (poll hit: the whole poll; blocked: the
			     * poll before it blocked), -1 unknown */
	bool doorbell;	    /* the wake came through a GICv4 doorbell ("vcpu" IRQ) */
	bool vfio;	    /* the wake came through one of a passed-through device's vectors (vfio-msix) */
	int32_t irq;	    /* the wake source's host IRQ (a vector, a doorbell, the vtimer), -1 none */
	uint8_t why;	    /* AC_AMBIGUOUS: enum attrib_ambiguity, the first reason found */
};

/* The VM: its vCPU threads and the IRQ numbers that belong to it. */
#define ATTRIB_VCPUS_MAX 64
#define ATTRIB_IRQS_MAX 256
enum attrib_irq_role { AIRQ_VTIMER = 1, AIRQ_DOORBELL, AIRQ_VFIO };
struct attrib_vm {
	size_t nvcpu;
	int32_t vcpu_tid[ATTRIB_VCPUS_MAX];
	size_t nirq;
	struct {
		int32_t irq;
		uint8_t role;	/* enum attrib_irq_role */
		int16_t vcpu;	/* a doorbell's vCPU, else -1 */
	} irq[ATTRIB_IRQS_MAX];
	uint64_t bg_timer_fn; /* kvm_bg_timer_expire's address (hrtimer events' function), 0 unknown */
	bool irq_after_exit;  /* x86: an interrupt that sends a running vCPU out is handled after
			       * its kvm_exit (a timer's: the bg timer's hrtimer between exit and entry) */
};

/* The index of the VM's vCPU whose thread is tid, -1 when none is. */
int attrib_vm_vcpu(const struct attrib_vm *vm, int64_t tid);

/* The events of one VM, sorted by time (tev_sort), and the join over them. */
struct attrib_events {
	struct tev *ev;
	size_t n, cap, max; /* max: the cap on memory; events past it are counted in dropped */
	uint64_t dropped;
};

void attrib_events_init(struct attrib_events *e, size_t max);
void attrib_events_free(struct attrib_events *e);
void attrib_events_add(struct attrib_events *e, const struct tev *ev);
void attrib_events_sort(struct attrib_events *e); /* stable, by t */
/* The index of the last event at or before t in the sorted store, -1 when none. */
ssize_t attrib_events_last(const struct attrib_events *e, uint64_t t);

/* The join of one sample against the sorted events. The wake sources a sample may have are its
 * workload's: a timer sample's the vtimer, the bg timer and its vCPU's doorbell; a udp sample's a
 * passed-through device's vectors (taken on any CPU: the vector's affinity is the host's) and its
 * vCPU's doorbell. */
void attrib_join(const struct attrib_vm *vm, const struct attrib_events *e, const struct attrib_sample *s,
		 struct attrib_result *r);

/* A udp sample (attrib_udp.c): the probe's request left at sent (host ns) and its answer woke the
 * guest at s->wake. The peer's answer times (host ns, ascending, n of them) give the target: the
 * one answer in [sent, wake]. The first of the VM's device IRQs after it (a VFIO vector, a
 * doorbell) names the vCPU: a doorbell's own, a vector's the first vCPU it woke, polled or made
 * exit. Fills s->target and s->vcpu and joins; with no device IRQ at all between the answer and
 * the wake-up the sample is not visible (a resident vLPI: guest + hardware). */
void attrib_join_udp(const struct attrib_vm *vm, const struct attrib_events *e, const uint64_t *answers, size_t n,
		     uint64_t sent, struct attrib_sample *s, struct attrib_result *r);

/* ---- the report ---- */

struct attrib_report;
struct attrib_report *attrib_report_new(void);
void attrib_report_free(struct attrib_report *r);
void attrib_report_add(struct attrib_report *r, const struct attrib_sample *s, const struct attrib_result *res);
/* A name for a host IRQ in the report ("msix0"): the samples whose wake came through a
 * passed-through device's vector are tallied per vector (at most ATTRIB_REPORT_NAMES names). */
#define ATTRIB_REPORT_NAMES 32
void attrib_report_name_irq(struct attrib_report *r, int32_t irq, const char *name);
/* Text: per workload x class, n, median/p90/p99 per stage and the residual, the tail breakdown
 * (mean stage shares over the samples above the total's p99). The caller says what was lost. */
void attrib_report_text(const struct attrib_report *r, FILE *f);
/* The same numbers as one JSON object (schema in docs/attribution.md). */
void attrib_report_json(const struct attrib_report *r, FILE *f);

/* ---- a run's join as text (capture.c): the unit tests' lab fixtures ---- */

struct attrib_capture {
	struct attrib_vm vm;
	struct attrib_events ev; /* sorted */
	struct attrib_sample *s;
	uint8_t *cls;		 /* the class the run's join gave each sample */
	size_t n, cap;
};

/* The VM, samples 0..n with their results, and the events from 20 ms before the first target to
 * the last wake-up. */
void attrib_capture_write(FILE *f, const struct attrib_vm *vm, const struct attrib_events *e,
			  const struct attrib_sample *s, const struct attrib_result *r, size_t n);
/* 0, or -EINVAL on a line that does not parse (-ENOMEM); c is attrib_capture_free'd either way by
 * the caller. */
int attrib_capture_read(const char *text, size_t len, struct attrib_capture *c);
void attrib_capture_free(struct attrib_capture *c);

/* ---- collection (collect.c) ---- */

struct trace_collect;
struct trace_collect_counts {
	uint64_t events, dropped, lost, bad;
	uint64_t enabled_at, disabled_at; /* CLOCK_MONOTONIC_RAW ns of the last enable and disable */
	bool have[TEV_KIND_MAX];	   /* the kinds opened (present on this kernel and filtered) */
};

/* Opens the events for vm (its vCPU threads running, its IRQs known) on every CPU, disabled, with
 * the store capped at max_events. 0, or -errno with why naming what the host refused (tracefs not
 * mounted, a required tracepoint missing, perf_event_open denied, a filter refused). *out is set
 * either way: trace_collect_close it. */
int trace_collect_open(struct trace_collect **out, const struct attrib_vm *vm, size_t max_events, char *why, size_t n);
/* The IRQ events again, filtered for vm's IRQs as they are now (a passed-through device's vectors
 * exist once the guest enabled them), before the first enable: a tracepoint event's filter is
 * set once (the kernel says EEXIST after), so they are closed and opened anew. 0, or -errno with
 * why. */
int trace_collect_refilter(struct trace_collect *c, const struct attrib_vm *vm, char *why, size_t n);
int trace_collect_enable(struct trace_collect *c, bool on);
/* Every ring's new records into the store; the bytes read. */
size_t trace_collect_drain(struct trace_collect *c);
/* The rings' fds, to poll for a ring a quarter full. */
int trace_collect_poll_fds(const struct trace_collect *c, int *fds, int max);
int trace_collect_ncpu(const struct trace_collect *c); /* the rings there can be: the poll array's size */
struct attrib_events *trace_collect_events(struct trace_collect *c);
void trace_collect_counts(const struct trace_collect *c, struct trace_collect_counts *out);
void trace_collect_close(struct trace_collect *c);

#endif
