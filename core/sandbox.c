// SPDX-License-Identifier: MIT
/*
 * Per-thread seccomp allowlists, loaded. The lists and why they are what they are:
 * core/sandbox_rules.c; their BPF is compiled at build time (buildtools/sandbox_gen.c into
 * build/gen/ARCH/sandbox_bpf.c), so a thread's filter is one seccomp(2) call and start-up compiles
 * nothing. Threads are named vmm-ROLE (/proc, ps, traces).
 */
#include <errno.h>
#include <linux/seccomp.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "core/hot.h"
#include "core/log.h"
#include "core/sandbox.h"
#include "core/sandbox_bpf.h"
#include "core/term.h"
#include "core/vm.h"

static const char *const role_names[SANDBOX_NR_ROLES] = SANDBOX_ROLE_NAMES;
static _Thread_local const char *sandbox_thread = "main";

const char *sandbox_role_name(enum sandbox_role role)
{
	return role < SANDBOX_NR_ROLES ? role_names[role] : "?";
}

static size_t put(char *buf, size_t at, size_t size, const char *s)
{
	while (*s && at + 1 < size)
		buf[at++] = *s++;
	return at;
}

static size_t put_num(char *buf, size_t at, size_t size, long v)
{
	char d[24];
	int n = 0;

	if (v < 0)
		return put(buf, at, size, "-1");
	do
		d[n++] = '0' + v % 10;
	while ((v /= 10) && n < (int)sizeof(d));
	while (n && at + 1 < size)
		buf[at++] = d[--n];
	return at;
}

static void sandbox_sigsys(int sig, siginfo_t *si, void *uc)
{
	char msg[400];
	size_t n = 0;
	int nr = si->si_syscall;

	(void)sig;
	(void)uc;
	n = put(msg, n, sizeof(msg), "\nvmm: error: sandbox: the ");
	n = put(msg, n, sizeof(msg), sandbox_thread);
	n = put(msg, n, sizeof(msg), " thread made system call ");
	n = put(msg, n, sizeof(msg), nr >= 0 && nr < SANDBOX_MAX_NR && sandbox_syscall_names[nr] ?
				     sandbox_syscall_names[nr] : "?");
	n = put(msg, n, sizeof(msg), " (number ");
	n = put_num(msg, n, sizeof(msg), nr);
	n = put(msg, n, sizeof(msg), "), which its seccomp allowlist refuses; vmm stops (exit status ");
	n = put_num(msg, n, sizeof(msg), VM_EXIT_SANDBOX);
	n = put(msg, n, sizeof(msg), "). A vmm bug or a guest exploiting one: report it with the "
				     "command line; --no-sandbox runs without the filters\n");
	if (write(STDERR_FILENO, msg, n) < 0) {
		/* nowhere left to report to */
	}
	term_restore();
	/* the raw call: a sanitizer's _exit runs checks whose system calls would trap again */
	syscall(SYS_exit_group, VM_EXIT_SANDBOX);
}

int sandbox_init(enum sandbox_mode mode)
{
	if (mode != SANDBOX_ENFORCE)
		return 0;
	struct sigaction sa = { .sa_sigaction = sandbox_sigsys, .sa_flags = SA_SIGINFO };

	sigemptyset(&sa.sa_mask);
	if (sigaction(SIGSYS, &sa, NULL) < 0) {
		pr_err("sandbox: cannot install the SIGSYS handler: %s", strerror(errno));
		return -errno;
	}
	return 0;
}

VMM_HOT int sandbox_enter(enum sandbox_mode mode, enum sandbox_role role)
{
	char comm[16];

	/* the thread's name in /proc, ps and traces; the report's name for it */
	snprintf(comm, sizeof(comm), "vmm-%s", role_names[role]);
	pthread_setname_np(pthread_self(), comm);
	sandbox_thread = role_names[role];
	if (mode == SANDBOX_OFF)
		return 0;
	const struct sandbox_filter *b = &sandbox_filters[mode == SANDBOX_LOG][role];
	/* what libseccomp's seccomp_load does with its defaults: no new privileges, no flags */
	struct sock_fprog prog = { .len = b->len, .filter = (struct sock_filter *)b->insns };
	int r = prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) < 0 ||
		syscall(SYS_seccomp, SECCOMP_SET_MODE_FILTER, 0, &prog) < 0 ? -errno : 0;

	if (r < 0)
		pr_err("sandbox: loading the %s thread's seccomp filter failed: %s (a kernel without "
		       "CONFIG_SECCOMP_FILTER? --no-sandbox runs without the filters)", role_names[role],
		       strerror(-r));
	return r;
}

VMM_HOT void sandbox_describe(enum sandbox_role role, char *out, unsigned long size)
{
	snprintf(out, size, "%s", sandbox_allowlists[role]);
}
