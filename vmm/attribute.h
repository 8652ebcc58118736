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
#define ATTRIBUTE_VFIO_MAX 8
#define ATTRIBUTE_ANSWERS (1u << 18) /* the peer's answers kept: 2 MiB, resident as they come */

struct probe_peer;

/* What the run gives attribution besides the VM: where FILE goes, the passed-through devices
 * (their vectors' host IRQs are found in /proc/interrupts once the guest enabled them), the
 * udp workload's peer (its answers' times are the udp samples' targets). */
struct attribute_opts {
	const char *json_path;
	const char *vfio_bdf[ATTRIBUTE_VFIO_MAX];
	int nr_vfio;
	const struct probe_peer *peer;
};

struct vm_attribute {
	bool on;
	const char *json_path;
	struct attribute_opts opts;
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
	struct {
		int32_t irq;
		char name[24];	      /* "msix0"; "1:msix0" for the second --vfio device */
	} vec[ATTRIB_REPORT_NAMES];  /* the passed-through devices' vectors, for the report */
	size_t nvec;
	uint64_t host_window_ns;
	bool enabled;
	const char *capture; /* VMM_ATTRIBUTE_CAPTURE: the first samples' join as text (trace/capture.c) */
	char *json;  /* the report as JSON once made (attribute_report), for --stats and FILE */
	size_t json_len;
};

/* Before the vCPUs start (the thread must exist before the main thread's allowlist, which has no
 * clone). 0, or -errno after a message. */
int attribute_start(struct vm_attribute *a, struct vm *vm, const struct machine *m, enum sandbox_mode sandbox,
		    const struct attribute_opts *o);
/* Any thread: the probe's first COUNTER frame arrived: the thread reads what the filters need
 * (the vCPUs' threads, the VM's IRQs: by now the guest's drivers have enabled its vectors), opens
 * the events and collects from now. */
void attribute_go(struct vm_attribute *a);
/* The main thread, once the vCPUs stopped: collection ends, the thread is joined. */
void attribute_stop(struct vm_attribute *a);
/* The report on f (the exit summary) and, with FILE, as JSON there: the probe's timer samples,
 * and its udp samples when a passed-through device carried them to the peer, joined to the
 * events. */
void attribute_report(struct vm_attribute *a, const struct probe_decoder *d, FILE *f);
/* The same from the probe's live decoder: its timer and udp series copied under lock, joined without it
 * (the control thread's stats requests take that lock while the join runs). */
void attribute_report_of(struct vm_attribute *a, pthread_mutex_t *lock, const struct probe_decoder *d, FILE *f);
/* ,"attribution":{...} in the --stats JSON's "vmm" object, once the report is made */
void attribute_json(const struct vm_attribute *a, FILE *f);
void attribute_free(struct vm_attribute *a);

#endif
