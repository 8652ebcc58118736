/* SPDX-License-Identifier: MIT */
/*
 * seccomp allowlists per thread role (the lists: core/sandbox_rules.c, compiled at build time).
 * Each thread installs its own filter once its set-up is done, so a filter never has to allow
 * what only set-up needs (open, socket, mmap of devices, thread creation). A refused system call
 * is trapped: SIGSYS names the thread, the call and its number on stderr, restores the terminal
 * and exits with VM_EXIT_SANDBOX (vm.h).
 */
#ifndef VMM_SANDBOX_H
#define VMM_SANDBOX_H

/* OFF is 0: a zeroed struct (a unit test's VM) runs unfiltered; vmm run's default is ENFORCE. */
enum sandbox_mode {
	SANDBOX_OFF,	 /* --no-sandbox */
	SANDBOX_ENFORCE, /* vmm run's default: a refused call stops vmm with its report */
	SANDBOX_LOG,	 /* --sandbox-log: the kernel logs what would be refused (audit), nothing is */
};

enum sandbox_role {
	SANDBOX_MAIN,	 /* the thread that waits for the VM to stop, then tears it down */
	SANDBOX_VCPU,	 /* KVM_RUN and the device emulation it calls */
	SANDBOX_DEVICE,	 /* a virtio device's worker: its queues, AIO, tap */
	SANDBOX_CONSOLE, /* stdin to the guest, the output ring to stdout */
	SANDBOX_CTL,	 /* the control socket */
	SANDBOX_PEER,	 /* the probe's UDP peer (--probe-peer): receive, echo */
	SANDBOX_TRACE,	 /* --attribute's reader: perf rings, their enable and disable */
	SANDBOX_NR_ROLES
};

/* Each role's name: the thread's name and the refusal report's (sandbox.c), and the generated
 * filters' variable names (sandbox_gen.c, which does not link sandbox.c). */
#define SANDBOX_ROLE_NAMES                                                                        \
	{ [SANDBOX_MAIN] = "main", [SANDBOX_VCPU] = "vcpu", [SANDBOX_DEVICE] = "device",          \
	  [SANDBOX_CONSOLE] = "console", [SANDBOX_CTL] = "ctl", [SANDBOX_PEER] = "peer",   \
	  [SANDBOX_TRACE] = "trace" }

/* Once, in the main thread before any thread starts: when enforcing, the SIGSYS report. The
 * filters themselves were compiled at build time (core/sandbox_bpf.h); each thread loads its own. */
int sandbox_init(enum sandbox_mode mode);
/* Installs role's allowlist on the calling thread (and the threads it starts later); names the
 * thread for the report and for /proc. 0, or -errno with a message. */
int sandbox_enter(enum sandbox_mode mode, enum sandbox_role role);
const char *sandbox_role_name(enum sandbox_role role);
/* Writes names into out (comma-separated) for role's allowlist on this architecture: the note
 * "what seccomp allows per thread" comes from the code, not from a copy. */
void sandbox_describe(enum sandbox_role role, char *out, unsigned long size);

#endif
