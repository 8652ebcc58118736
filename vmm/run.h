/* SPDX-License-Identifier: MIT */
/* Running a built VM: vCPU threads, the console thread, stop signals. */
#ifndef VMM_RUN_H
#define VMM_RUN_H

#include "platform/console.h"

struct vm;

/* Runs every vCPU in its own thread until the VM stops; returns the exit code. With a
 * console sink, the terminal goes raw and its input is delivered there; out's ring is drained to
 * its fd meanwhile and flushed (bounded) at the end. */
int vm_run(struct vm *vm, const struct console_in_sink *console, struct console_out *out);

#endif
