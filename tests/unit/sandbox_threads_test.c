// SPDX-License-Identifier: MIT
/*
 * The filters loaded per thread: each thread of a role has one filter of its own, the thread that
 * started them none, and a refused call is reported as its own thread's while the others run on.
 * (qemu-user cannot load seccomp filters: skipped there.)
 */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include "kselftest_harness.h"
#include "tests/unit/sandbox_child.h"
#include "core/sandbox.h"
#include "core/vm.h"

/* A thread of one role in the per-thread test: enters its sandbox, says so, then waits (futex). */
struct role_thread {
	enum sandbox_role role;
	int ready; /* a pipe's write end */
	int go;	   /* a pipe's read end: the vCPU thread makes its call once main has looked */
	int idle;  /* a pipe's read end nobody writes: the others wait there (read is everyone's) */
	int tid;
	pthread_t t;
};

static void *role_thread_main(void *arg)
{
	struct role_thread *rt = arg;
	char c = sandbox_enter(SANDBOX_ENFORCE, rt->role) == 0 ? 'y' : 'n';

	rt->tid = (int)syscall(SYS_gettid);
	if (write(rt->ready, &c, 1) < 0)
		quit(41);
	if (rt->role == SANDBOX_VCPU) { /* the others idle while it breaks its own filter */
		char b;

		if (read(rt->go, &b, 1) == 1)
			socket(AF_INET, SOCK_DGRAM, 0);
		quit(42);
	}
	char b;

	while (read(rt->idle, &b, 1) != 0)
		;
	return NULL;
}

/* The field of /proc/self/task/TID/status, or -1. */
static long task_status(int tid, const char *field)
{
	char path[64], line[128];
	long v = -1;
	FILE *f;

	snprintf(path, sizeof(path), "/proc/self/task/%d/status", tid);
	if (!(f = fopen(path, "r")))
		return -1;
	while (fgets(line, sizeof(line), f))
		if (!strncmp(line, field, strlen(field)) && line[strlen(field)] == ':')
			v = strtol(line + strlen(field) + 1, NULL, 10);
	fclose(f);
	return v;
}

/*
 * The filters compiled at build time and loaded per thread: every thread of a role has
 * exactly one filter of its own (Seccomp 2, one in Seccomp_filters), the thread that started them
 * none, and a vCPU thread's refused call is still reported as the vCPU thread's while the device,
 * console and ctl threads run on under theirs.
 */
TEST(each_thread_loads_its_own_filter)
{
	NEED_SECCOMP();
	int p[2], e[2];

	ASSERT_EQ(0, pipe(p));
	ASSERT_EQ(0, pipe(e));
	pid_t pid = fork();

	if (pid == 0) {
		enum sandbox_role rs[] = { SANDBOX_DEVICE, SANDBOX_CONSOLE, SANDBOX_CTL, SANDBOX_VCPU };
		struct role_thread t[4];
		char c = 'g';
		int go[2], idle[2];

		dup2(e[1], STDERR_FILENO);
		close(p[0]);
		if (sandbox_init(SANDBOX_ENFORCE) < 0 || pipe(go) < 0 || pipe(idle) < 0)
			_exit(40);
		for (int i = 0; i < 4; i++) {
			int r[2];

			if (pipe(r) < 0)
				_exit(43);
			t[i] = (struct role_thread){ .role = rs[i], .ready = r[1], .go = go[0], .idle = idle[0] };
			if (pthread_create(&t[i].t, NULL, role_thread_main, &t[i]) || read(r[0], &c, 1) != 1 || c != 'y')
				_exit(44);
			/* this thread (unfiltered) reads each thread's status: one filter, mode 2 */
			if (task_status(t[i].tid, "Seccomp") != 2 || task_status(t[i].tid, "Seccomp_filters") != 1)
				_exit(50 + i);
		}
		if (task_status((int)syscall(SYS_gettid), "Seccomp") != 0 || write(go[1], &c, 1) != 1)
			_exit(45);
		for (;;)
			pause(); /* until the vCPU thread's socket stops the process */
	}
	char err[1024] = "";
	size_t got = 0;
	ssize_t n;
	int status;

	close(p[1]);
	close(e[1]);
	while ((n = read(e[0], err + got, sizeof(err) - 1 - got)) > 0)
		got += n;
	close(e[0]);
	close(p[0]);
	waitpid(pid, &status, 0);
	ASSERT_TRUE(WIFEXITED(status)) TH_LOG("signal %d", WTERMSIG(status));
	EXPECT_EQ(VM_EXIT_SANDBOX, WEXITSTATUS(status)) TH_LOG("status %d stderr: %s", WEXITSTATUS(status), err);
	EXPECT_NE(NULL, strstr(err, "the vcpu thread made system call socket (number ")) TH_LOG("%s", err);
}

TEST_HARNESS_MAIN
