/* SPDX-License-Identifier: MIT */
/*
 * The sandbox tests' child: a forked process that enters a role's filter (sandbox_init, then
 * sandbox_enter), does one thing and exits; its exit status (128+N for a signal N) and stderr come
 * back. qemu-user cannot load seccomp filters: NEED_SECCOMP skips there. Header-only: each test
 * binary includes it once.
 */
#ifndef VMM_TESTS_SANDBOX_CHILD_H
#define VMM_TESTS_SANDBOX_CHILD_H

#include <fcntl.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include "core/sandbox.h"

/* What the child saw: its exit status and its stderr. */
struct outcome {
	int status;
	char err[1024];
};

/* The raw exit_group: a sanitizer's _exit makes calls of its own that the filter would trap. */
static inline void __attribute__((noreturn)) quit(int code)
{
	syscall(SYS_exit_group, code);
	__builtin_unreachable();
}

/* The child's stderr (read from efd until it closes, then closed) and its status, 128+N for a
 * signal N. */
static inline void collect(pid_t pid, int efd, struct outcome *o)
{
	size_t got = 0;
	ssize_t n;

	while ((n = read(efd, o->err + got, sizeof(o->err) - 1 - got)) > 0)
		got += n;
	close(efd);
	waitpid(pid, &o->status, 0);
	o->status = WIFEXITED(o->status) ? WEXITSTATUS(o->status) : 128 + WTERMSIG(o->status);
}

/* fn(arg) in a child under role's filter (mode's); fn exits with quit. Exit status 40: the filter
 * could not be loaded. */
static inline void run_sandboxed(enum sandbox_mode mode, enum sandbox_role role, void (*fn)(const void *arg),
				 const void *arg, struct outcome *o)
{
	int p[2];

	memset(o, 0, sizeof(*o));
	if (pipe(p) < 0)
		abort();
	pid_t pid = fork();

	if (pid == 0) {
		dup2(p[1], STDERR_FILENO);
		close(p[0]);
		if (sandbox_init(mode) < 0 || sandbox_enter(mode, role) < 0)
			_exit(40);
		fn(arg);
		quit(30);
	}
	close(p[1]);
	collect(pid, p[0], o);
}

static inline void open_read_only(const void *arg)
{
	(void)arg;
	quit(open("/proc/self/status", O_RDONLY) >= 0 ? 0 : 23);
}

/* qemu-user (the arm64 unit run) refuses to load filters: nothing to test there. */
static inline bool seccomp_works(void)
{
	struct outcome o;

	run_sandboxed(SANDBOX_ENFORCE, SANDBOX_CTL, open_read_only, NULL, &o);
	return o.status != 40;
}

#define NEED_SECCOMP() do { if (!seccomp_works()) SKIP(return, "seccomp filters cannot be loaded here (qemu-user)"); } while (0)

#endif
