/* SPDX-License-Identifier: MIT */
/*
 * What the guest latency probe's files share (guest/probe.c: the workloads and the run;
 * guest/probe_spec.c: vmm.probe= parsing; guest/probe_out.c: frames and summary lines). Only the
 * probe's own files and its unit test include it.
 */
#ifndef VMM_GUEST_PROBE_INTERNAL_H
#define VMM_GUEST_PROBE_INTERNAL_H

#include <net/if.h>
#include <sched.h>
#include <stdbool.h>
#include <stdint.h>
#include <time.h>

#include "guest/probe_proto.h"

#define SPEC_MAX 1024

struct workload_spec {
	bool on;
	uint32_t count, interval_us, prio, cpu_a, cpu_b, port;
	bool cpu_a_set, cpu_b_set;
	char dev[IF_NAMESIZE];
};

struct spec {
	struct workload_spec w[PROBE_W_MAX + 1];
	uint8_t order[PROBE_W_MAX]; /* workloads in command-line order */
	unsigned int n;
};

struct sink {
	int fd;
	bool text; /* base64 lines on the console */
	uint32_t seq;
};

struct probe {
	struct spec spec;
	struct sink out;
	cpu_set_t online;
	unsigned int ncpus;
	char peer[64]; /* vmm.probe_peer=: the udp workload's peer (vmm's --probe-peer), "" fe80::1 */
};

static inline uint64_t now_ns(void)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return (uint64_t)t.tv_sec * 1000000000u + (uint64_t)t.tv_nsec;
}

/* probe_spec.c */
/* Parses a vmm.probe= value into sp; 0, or -1 after a line saying what is wrong. */
int parse_spec(struct spec *sp, const char *s);
/* The value of vmm.probe= (or another KEY=) in the command line, into buf; NULL when absent. */
const char *cmdline_value(const char *cmdline, const char *key, char *buf, size_t size);

/* probe_out.c */
/* Frames go to path ("console": text lines), by default to vmm's probe port (PROBE_PORT_NAME)
 * when the guest has it, else to the console as text lines. */
void sink_open(struct sink *o, const char *path);
/* The guest's clock as a workload starts: a CLOCK frame on a port, a "vmm-probe: clock NS" line
 * on the console (the sample clock, CLOCK_MONOTONIC; vmm ab places samples on its own clock by
 * the moment it reads it). */
void emit_clock(struct probe *pr);
/* A COUNTER frame (the clock read beside the raw counter the host shares), as a frame on both
 * sinks: before each workload and after the last. */
void emit_counter(struct probe *pr);
/* Lets what was written reach vmm before measuring, so the console's interrupts stay out of it. */
void settle(const struct sink *o);
void emit_start(struct probe *pr, const struct probe_start *s);
/* The samples in batches, the END, and the summary line for one series. label names it. */
void emit_series(struct probe *pr, uint8_t w, uint16_t cpu, const struct probe_sample *s, uint32_t n,
		 uint32_t overruns, const char *label, const char *extra);
/* A series that did not run: an END with the status, and a line saying why. */
void emit_not_run(struct probe *pr, uint8_t w, uint16_t cpu, uint8_t status, const char *why);

#endif
