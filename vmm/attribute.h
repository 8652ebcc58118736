/* SPDX-License-Identifier: MIT */
/*
 * vmm run --attribute[=FILE] (issue 37): a thread of its own collects this VM's host tracepoints
 * while the guest probe's workloads run (from its first CLOCK frame to the VM's stop), and at exit
 * each timer sample is put on the trace's clock, joined to its vCPU's halt episode and split into
 * stages (trace/trace.h). Attribution off: no thread, no event, nothing read.
 */
#ifndef VMM_ATTRIBUTE_H
#define VMM_ATTRIBUTE_H

#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#include "core/arch.h"
#include "core/sandbox.h"
#include "core/vm.h"
#include "guest/probe_decode.h"
#include "trace/trace.h"

#define ATTRIBUTE_MAX_EVENTS (2u << 20) /* 2 Mi events, 96 MiB at most: the store's cap */

struct vm_attribute {
	bool on;
	const char *json_path;
	struct vm *vm;
	const struct machine *m;
	enum sandbox_mode sandbox;
	pthread_t th;
	bool started;
	int wake_fd;	      /* eventfd: go or stop asked */
	atomic_bool go, stop; /* the probe's first CLOCK frame; the VM's stop */
	struct trace_collect *tc;
	int err;	      /* < 0: no attribution, why says why */
	char why[256];
	struct attrib_vm avm;
	struct arch_clock clock;
	struct clock_pair host[2]; /* (CLOCK_MONOTONIC_RAW, counter) at enable and at disable */
	uint64_t host_window_ns;
	bool enabled;
	const char *capture; /* VMM_ATTRIBUTE_CAPTURE: the first samples' join as text (trace/capture.c) */
	char *json;  /* the report as JSON once made (attribute_report), for --stats and FILE */
	size_t json_len;
};

/* Before the vCPUs start (the thread must exist before the main thread's allowlist, which has no
 * clone). 0, or -errno after a message. */
int attribute_start(struct vm_attribute *a, struct vm *vm, const struct machine *m, enum sandbox_mode sandbox,
		    const char *json_path);
/* Any thread: the probe's first CLOCK frame arrived: collect from now. */
void attribute_go(struct vm_attribute *a);
/* The main thread, once the vCPUs stopped: collection ends, the thread is joined. */
void attribute_stop(struct vm_attribute *a);
/* The report on f (the exit summary) and, with FILE, as JSON there: the probe's timer samples
 * joined to the events. */
void attribute_report(struct vm_attribute *a, const struct probe_decoder *d, FILE *f);
/* The same from the probe's live decoder: its timer series copied under lock, joined without it
 * (the control thread's stats requests take that lock while the join runs). */
void attribute_report_of(struct vm_attribute *a, pthread_mutex_t *lock, const struct probe_decoder *d, FILE *f);
/* ,"attribution":{...} in the --stats JSON's "vmm" object, once the report is made */
void attribute_json(const struct vm_attribute *a, FILE *f);
void attribute_free(struct vm_attribute *a);

#endif
