// SPDX-License-Identifier: MIT
/*
 * The seccomp allowlists, each in a forked child: a call a role allows goes through, one it
 * refuses stops the process with VM_EXIT_SANDBOX and a report naming the thread and the call,
 * and --no-sandbox filters nothing. (qemu-user cannot load seccomp filters: skipped there.)
 */
#include <errno.h>
#include <fcntl.h>
#include <linux/kvm.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <termios.h>
#include <unistd.h>

#include "kselftest_harness.h"
#include "vmm/sandbox.h"
#include "vmm/vm.h"

enum action { DO_SOCKET, DO_KVM_IOCTL, DO_TIOCSTI, DO_OPEN_RO, DO_OPEN_RW, DO_EXECVE, DO_TCSETATTR };

/* A pty's terminal end, opened before the filter (tcsetattr sets, then reads back). */
static int pty = -1;

/* What the child saw: its exit status and its stderr. */
struct outcome {
	int status;
	char err[1024];
};

/* The raw exit_group: a sanitizer's _exit makes calls of its own that the filter would trap. */
static void __attribute__((noreturn)) quit(int code)
{
	syscall(SYS_exit_group, code);
	__builtin_unreachable();
}

static void act(enum action a)
{
	int fd;

	switch (a) {
	case DO_SOCKET:
		fd = socket(AF_INET, SOCK_DGRAM, 0);
		quit(fd >= 0 ? 0 : 20);
	case DO_KVM_IOCTL: /* a KVM request on a closed fd: allowed, so EBADF and not a trap */
		quit(ioctl(1000, KVM_CHECK_EXTENSION, 0) < 0 && errno == EBADF ? 0 : 21);
	case DO_TIOCSTI: { /* typing into the terminal: the classic escape, never allowed */
		char c = 'x';

		quit(ioctl(1000, TIOCSTI, &c) < 0 ? 0 : 22);
	}
	case DO_OPEN_RO:
		fd = open("/proc/self/status", O_RDONLY);
		quit(fd >= 0 ? 0 : 23);
	case DO_OPEN_RW:
		fd = open("/dev/null", O_WRONLY);
		quit(fd >= 0 ? 0 : 24);
	case DO_TCSETATTR: {
		struct termios t;

		quit(pty >= 0 && tcgetattr(pty, &t) == 0 && tcsetattr(pty, TCSANOW, &t) == 0 ? 0 : 26);
	}
	case DO_EXECVE: {
		char *const argv[] = { "/bin/true", NULL };

		execve(argv[0], argv, NULL);
		quit(25);
	}
	}
	quit(30);
}

static void run_child(enum sandbox_mode mode, enum sandbox_role role, enum action a, struct outcome *o)
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
		act(a);
	}
	close(p[1]);
	size_t got = 0;
	ssize_t n;

	while ((n = read(p[0], o->err + got, sizeof(o->err) - 1 - got)) > 0)
		got += n;
	close(p[0]);
	waitpid(pid, &o->status, 0);
	o->status = WIFEXITED(o->status) ? WEXITSTATUS(o->status) : 128 + WTERMSIG(o->status);
}

/* qemu-user (the arm64 unit run) refuses to load filters: nothing to test there. */
static bool seccomp_works(void)
{
	struct outcome o;

	run_child(SANDBOX_ENFORCE, SANDBOX_CTL, DO_OPEN_RO, &o);
	return o.status != 40;
}

#define NEED_SECCOMP() do { if (!seccomp_works()) SKIP(return, "seccomp filters cannot be loaded here (qemu-user)"); } while (0)

TEST(vcpu_socket_refused_and_reported)
{
	struct outcome o;

	NEED_SECCOMP();
	run_child(SANDBOX_ENFORCE, SANDBOX_VCPU, DO_SOCKET, &o);
	EXPECT_EQ(VM_EXIT_SANDBOX, o.status) TH_LOG("stderr: %s", o.err);
	EXPECT_NE(NULL, strstr(o.err, "the vcpu thread made system call socket (number ")) TH_LOG("%s", o.err);
	EXPECT_NE(NULL, strstr(o.err, "--no-sandbox")) TH_LOG("%s", o.err);
}

TEST(vcpu_kvm_ioctl_allowed_tiocsti_refused)
{
	struct outcome o;

	NEED_SECCOMP();
	run_child(SANDBOX_ENFORCE, SANDBOX_VCPU, DO_KVM_IOCTL, &o);
	EXPECT_EQ(0, o.status) TH_LOG("stderr: %s", o.err);
	run_child(SANDBOX_ENFORCE, SANDBOX_VCPU, DO_TIOCSTI, &o);
	EXPECT_EQ(VM_EXIT_SANDBOX, o.status) TH_LOG("stderr: %s", o.err);
	EXPECT_NE(NULL, strstr(o.err, "system call ioctl")) TH_LOG("%s", o.err);
}

TEST(ctl_opens_read_only_only)
{
	struct outcome o;

	NEED_SECCOMP();
	run_child(SANDBOX_ENFORCE, SANDBOX_CTL, DO_OPEN_RO, &o);
	EXPECT_EQ(0, o.status) TH_LOG("stderr: %s", o.err);
	run_child(SANDBOX_ENFORCE, SANDBOX_CTL, DO_OPEN_RW, &o);
	EXPECT_EQ(VM_EXIT_SANDBOX, o.status) TH_LOG("stderr: %s", o.err);
	EXPECT_NE(NULL, strstr(o.err, "the ctl thread made system call open")) TH_LOG("%s", o.err);
}

TEST(no_role_may_execve)
{
	struct outcome o;

	NEED_SECCOMP();
	for (int role = 0; role < SANDBOX_NR_ROLES; role++) {
		run_child(SANDBOX_ENFORCE, role, DO_EXECVE, &o);
		EXPECT_EQ(VM_EXIT_SANDBOX, o.status) TH_LOG("%s: %s", sandbox_role_name(role), o.err);
		EXPECT_NE(NULL, strstr(o.err, "system call execve")) TH_LOG("%s", o.err);
	}
}

/* the terminal restored on every way out, the SIGSYS report's included: every role may */
TEST(every_role_restores_the_terminal)
{
	struct outcome o;
	int m = posix_openpt(O_RDWR | O_NOCTTY);

	NEED_SECCOMP();
	ASSERT_LE(0, m);
	ASSERT_EQ(0, grantpt(m));
	ASSERT_EQ(0, unlockpt(m));
	pty = open(ptsname(m), O_RDWR | O_NOCTTY);
	ASSERT_LE(0, pty);
	for (int role = 0; role < SANDBOX_NR_ROLES; role++) {
		run_child(SANDBOX_ENFORCE, role, DO_TCSETATTR, &o);
		EXPECT_EQ(0, o.status) TH_LOG("%s: %s", sandbox_role_name(role), o.err);
	}
	close(pty);
	close(m);
	pty = -1;
}

TEST(no_sandbox_filters_nothing)
{
	struct outcome o;

	run_child(SANDBOX_OFF, SANDBOX_VCPU, DO_SOCKET, &o);
	EXPECT_EQ(0, o.status) TH_LOG("stderr: %s", o.err);
	run_child(SANDBOX_OFF, SANDBOX_VCPU, DO_TIOCSTI, &o); /* EBADF: not a trap */
	EXPECT_EQ(0, o.status) TH_LOG("stderr: %s", o.err);
}

/* The note's table of what each thread may call, printed from the lists themselves. */
TEST(describe_lists_each_role)
{
	char buf[4096];

	for (int role = 0; role < SANDBOX_NR_ROLES; role++) {
		sandbox_describe(role, buf, sizeof(buf));
		EXPECT_NE(NULL, strstr(buf, "futex")) TH_LOG("%s", buf);
		EXPECT_EQ(NULL, strstr(buf, "socket ")) TH_LOG("%s", buf);
		EXPECT_EQ(NULL, strstr(buf, "clone")) TH_LOG("%s", buf);
		printf("# SECCOMP-ALLOW %s: %s\n", sandbox_role_name(role), buf);
	}
	sandbox_describe(SANDBOX_VCPU, buf, sizeof(buf));
	EXPECT_NE(NULL, strstr(buf, "ioctl(KVM,VFIO)")) TH_LOG("%s", buf);
	EXPECT_EQ(NULL, strstr(buf, "openat")) TH_LOG("%s", buf);
}

TEST_HARNESS_MAIN
