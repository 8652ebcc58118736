/* SPDX-License-Identifier: MIT */
/*
 * The guest latency probe, run by the built-in /init when the kernel command line has
 * vmm.probe=SPEC (syntax in guest/probe.c). Frames per guest/probe_proto.h.
 */
#ifndef VMM_GUEST_PROBE_H
#define VMM_GUEST_PROBE_H

/* Runs the workloads vmm.probe= names in cmdline (the text of /proc/cmdline), writing frames and
 * summary lines; returns 0 when there was nothing to run or all ran, 1 on a bad spec or error. */
int probe_run_cmdline(const char *cmdline);

#endif
