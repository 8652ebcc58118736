// SPDX-License-Identifier: MIT
/*
 * The terminal under the sandbox: every role may restore it (the SIGSYS report's way out
 * included), and a thread that crashes while the guest owns it ends the process by its own
 * signal with the terminal back as it was. (qemu-user cannot load seccomp filters: skipped there.)
 */
#include <fcntl.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <termios.h>
#include <unistd.h>

#include "kselftest_harness.h"
#include "tests/unit/sandbox_child.h"
#include "core/sandbox.h"
#include "core/term.h"

/* A new pty: its terminal end (the master in *master), or -1. */
static int open_pty(int *master)
{
	int m = posix_openpt(O_RDWR | O_NOCTTY), t;

	*master = m;
	if (m < 0 || grantpt(m) < 0 || unlockpt(m) < 0 || (t = open(ptsname(m), O_RDWR | O_NOCTTY)) < 0) {
		if (m >= 0)
			close(m);
		return -1;
	}
	return t;
}

/* tcsetattr on the terminal end opened before the filter: sets, then reads back. */
static void set_terminal(const void *arg)
{
	int pty = *(const int *)arg;
	struct termios t;

	quit(tcgetattr(pty, &t) == 0 && tcsetattr(pty, TCSANOW, &t) == 0 ? 0 : 26);
}

/* the terminal restored on every way out, the SIGSYS report's included: every role may */
TEST(every_role_restores_the_terminal)
{
	struct outcome o;
	int m;

	NEED_SECCOMP();
	int pty = open_pty(&m);

	ASSERT_LE(0, pty);
	for (int role = 0; role < SANDBOX_NR_ROLES; role++) {
		run_sandboxed(SANDBOX_ENFORCE, role, set_terminal, &pty, &o);
		EXPECT_EQ(0, o.status) TH_LOG("%s: %s", sandbox_role_name(role), o.err);
	}
	close(pty);
	close(m);
}

#ifdef __SANITIZE_ADDRESS__
/* ASan keeps SIGSEGV for its own report (which reads /proc, refused under a filter) unless told to
 * let a program's handler in: term_raw's is the one under test, as vmm (never built with ASan)
 * installs it. */
const char *__asan_default_options(void);
const char *__asan_default_options(void)
{
	return "allow_user_segv_handler=1";
}
#endif

/* A thread of role that crashes (a fault, or abort) while the guest owns the terminal: the process
 * ends by that signal, not by a SIGSYS report (the fatal-signal path made no call a filter
 * refuses), and the terminal is back in the mode it had. term_raw runs before the filter, as
 * vm_run calls it before any thread starts. The child's status, 128+N for a signal, or -1. */
static int crash_on_terminal(int slave, enum sandbox_role role, int sig, struct outcome *o)
{
	int e[2];

	memset(o, 0, sizeof(*o));
	if (pipe(e) < 0)
		return -1;
	pid_t pid = fork();

	if (pid == 0) {
		struct rlimit none = { 0, 0 };

		setrlimit(RLIMIT_CORE, &none); /* no core file left behind by the test */
		dup2(e[1], STDERR_FILENO);
		close(e[0]);
		/* a page with no access: a real fault, and no null store a sanitizer would catch first */
		volatile int *noaccess = mmap(NULL, 4096, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);

		if (noaccess == MAP_FAILED || dup2(slave, STDIN_FILENO) < 0 || !term_raw())
			_exit(46);
		if (sandbox_init(SANDBOX_ENFORCE) < 0 || sandbox_enter(SANDBOX_ENFORCE, role) < 0)
			_exit(40);
		if (sig == SIGSEGV)
			*noaccess = 1;
		else
			abort();
		quit(47);
	}
	close(e[1]);
	collect(pid, e[0], o);
	return o->status;
}

TEST(a_crash_on_the_terminal_is_its_signal_on_every_role)
{
	static const int sigs[] = { SIGSEGV, SIGABRT };
	struct termios before, after;
	struct outcome o;
	int m;

	NEED_SECCOMP();
	int slave = open_pty(&m);

	ASSERT_LE(0, slave);
	ASSERT_EQ(0, tcgetattr(slave, &before));
	ASSERT_TRUE(before.c_lflag & ICANON);
	for (int role = 0; role < SANDBOX_NR_ROLES; role++)
		for (size_t i = 0; i < sizeof(sigs) / sizeof(sigs[0]); i++) {
			crash_on_terminal(slave, role, sigs[i], &o);
			EXPECT_EQ(128 + sigs[i], o.status)
				TH_LOG("%s, signal %d: status %d, stderr: %s", sandbox_role_name(role), sigs[i], o.status, o.err);
			EXPECT_EQ(NULL, strstr(o.err, "seccomp allowlist refuses")) TH_LOG("%s", o.err);
			ASSERT_EQ(0, tcgetattr(slave, &after));
			EXPECT_EQ(before.c_lflag, after.c_lflag) TH_LOG("%s: the terminal was left raw", sandbox_role_name(role));
			tcsetattr(slave, TCSANOW, &before); /* the next case starts from a cooked terminal */
		}
	close(slave);
	close(m);
}

TEST_HARNESS_MAIN
