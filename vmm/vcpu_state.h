/* SPDX-License-Identifier: MIT */
/*
 * Each vCPU's real halt state (issue 37): whether its WFI (arm64) or HLT (x86) reaches KVM, what
 * decides that (the host's kvm-arm.wfi_trap_policy, the vCPU's mapped vLPIs, whether its thread
 * had its host CPU to itself, --no-hlt-exit), and what KVM counted over the run: WFI or HLT exits,
 * halt polls that succeeded and failed, GICv4 doorbells taken. For the exit summary, the --stats
 * JSON and `vmm stat`.
 *
 * The reading (vcpu_state_read) is separate from the pure parts (parsers, the verdict, the
 * doorbell block, the line, the JSON) so tests feed those text and numbers without KVM.
 */
#ifndef VMM_VCPU_STATE_H
#define VMM_VCPU_STATE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "core/proc_interrupts.h"
#include "halt_poll/halt_poll.h"

struct board;
struct json;

/* What halts the vCPU: WFI (arm64, the architecture has vLPIs) or HLT (x86). */
enum vcpu_halt_kind { VCPU_HALT_WFI, VCPU_HALT_HLT };

enum vcpu_verdict {
	VCPU_WFI_TRAPS,		 /* "WFI traps" */
	VCPU_WFI_NOTRAP_POLICY,	 /* kvm-arm.wfi_trap_policy=notrap, and no WFI exit */
	VCPU_WFI_NOTRAP_IGNORED, /* notrap on the command line, yet WFI exits: not in force */
	VCPU_WFI_LIKELY_NOTRAP,	 /* default policy, vLPIs mapped, the thread alone (or no exit) */
	VCPU_WFI_TRAPS_SHARED,	 /* default policy, vLPIs mapped, but the thread shares its CPU */
	VCPU_WFI_TRAPS_AT_TIMES, /* default policy, vLPIs mapped, "alone" unknown, WFI exits counted */
	VCPU_WFI_UNKNOWN,	 /* default policy, vLPIs unreadable, no WFI exit: cannot tell */
	VCPU_HLT_EXITS,		 /* "HLT exits" */
	VCPU_NO_HLT_EXIT,	 /* --no-hlt-exit: HLT stays in the guest */
	VCPU_NR_VERDICTS
};

/* The vCPU thread's scheduling, from /proc/self/task/TID; -1: unknown (the thread has ended, or
 * the kernel has no such field). */
struct vcpu_thread_stat {
	int64_t voluntary; /* context switches it asked for: it blocked (a halt, a wait) */
	int64_t preempted; /* nonvoluntary_ctxt_switches: something else wanted its CPU */
	int64_t run_ns;	   /* schedstat: time on a CPU */
	int64_t wait_ns;   /* schedstat: time runnable, waiting on a run queue for a CPU */
	int cpu;	   /* stat's processor: the host CPU it ran on last */
};

struct vcpu_state {
	int vcpu;
	enum vcpu_halt_kind kind;
	enum hp_trap wfi_policy, wfe_policy; /* the host's command line (WFI kind) */
	bool no_hlt_exit;		     /* HLT kind: --no-hlt-exit */
	const char *since;		     /* the KVM counts' start: "boot-end" or "start" */
	/* KVM's binary stats over the run; -1: the kernel has no such stat */
	int64_t exits, wfi_exits, hlt_exits;
	int64_t polls_tried, polls_ok, polls_invalid; /* halt_attempted_poll, _successful_, _invalid */
	int vlpis;		/* mapped now (arm64 vgic-state); -1 unknown */
	long doorbell_irq;	/* the host IRQ of its GICv4 doorbell; -1 none found */
	int64_t doorbells;	/* that IRQ's count, all CPUs; -1 none found */
	struct vcpu_thread_stat thread;
	int alone;		/* inferred from thread: 1 alone, 0 shared, -1 unknown */
	int hw_ipi, pv_send_ipi; /* HLT kind: the PV policy's IPI path (arch ipi_path); -1 unknown */
	enum vcpu_verdict verdict;
};

/* --- pure parts --- */

/* The host's WFI/WFE trap policies from /proc/cmdline's text (halt_poll/governor.c's parser: the
 * last occurrence wins, absent is HP_TRAP_DEFAULT). */
void vcpu_state_parse_cmdline(const char *cmdline, enum hp_trap *wfi, enum hp_trap *wfe);
/* The thread's counters from the texts of /proc/self/task/TID/status, schedstat and stat (each
 * may be NULL: its fields stay -1). Every number is bounded; a malformed field stays -1. */
void vcpu_state_parse_thread(const char *status, const char *schedstat, const char *stat, struct vcpu_thread_stat *t);
/* Whether the thread had its CPU to itself, inferred: KVM's test (single_task_running() at
 * vcpu_load) is not visible from user space, so "alone" means it waited on a run queue for under
 * 1% of its time on a CPU. -1 without schedstat. */
int vcpu_state_alone(const struct vcpu_thread_stat *t);
/* The verdict: what KVM's kvm_vcpu_should_clear_twi decides under these inputs, with the WFI
 * exits KVM counted as the evidence where the inputs leave it open. */
enum vcpu_verdict vcpu_state_verdict(enum vcpu_halt_kind kind, enum hp_trap wfi_policy, bool no_hlt_exit, int vlpis,
				     int alone, int64_t wfi_exits);
const char *vcpu_verdict_name(enum vcpu_verdict v); /* "wfi-traps", ... (JSON) */
const char *vcpu_verdict_text(enum vcpu_verdict v); /* "WFI traps", ... (people) */
/* Per vCPU, the index in pi->line of its GICv4 doorbell (-1: none): the newest nr_vcpus
 * doorbells by IRQ number, vCPU i the i-th (vmm/attribute.c's rule). Fewer doorbells than vCPUs:
 * the block cannot be this VM's, all -1. */
void vcpu_state_doorbells(const struct proc_interrupts *pi, int nr_vcpus, long *line_of);
/* The exit summary's line, without "vmm: " nor the newline. */
void vcpu_state_line(const struct vcpu_state *s, char *buf, size_t len);
/* One vCPU as a JSON object. */
void vcpu_state_json_one(const struct vcpu_state *s, FILE *f);
/* Back from that object (vmm stat, the client's side): 0, or -EINVAL when it is not one. */
int vcpu_state_from_json(const struct json *o, struct vcpu_state *s);

/* --- the running VM --- */

/* Every vCPU's state now, into s[0..n) (n <= the VM's vCPUs); stats_locked: the caller holds
 * b->stats.lock (hp_run's vmm_json hook). Returns how many were filled. */
int vcpu_state_read(struct board *b, struct vcpu_state *s, int n, bool stats_locked);
/* The exit summary's lines, one per vCPU. */
void vcpu_state_summary(struct board *b, FILE *f);
/* ,"vcpu_state":[...]: for the control socket's stats reply (takes b->stats.lock) ... */
void vcpu_state_json(struct board *b, FILE *f);
/* ... and for the --stats JSON's "vmm" object (board_vmm_json, under b->stats.lock). */
void vcpu_state_json_locked(struct board *b, FILE *f);

#endif
