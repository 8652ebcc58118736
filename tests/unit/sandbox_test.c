// SPDX-License-Identifier: MIT
/*
 * The seccomp allowlists, each in a forked child: a call a role allows goes through, one it
 * refuses stops the process with VM_EXIT_SANDBOX and a report naming the thread and the call,
 * and --no-sandbox filters nothing. Then each thread's whole path for what a guest can make it do,
 * not only its main loop's calls: the boot marker a guest prints reaches the stats on every thread
 * that can see it (issue 19: the console thread's drain took the snapshot, a pread64 it may not make).
 * (qemu-user cannot load seccomp filters: skipped there.)
 */
#include <errno.h>
#include <fcntl.h>
#include <linux/kvm.h>
#include <linux/serial_reg.h>
#include <linux/vhost.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/eventfd.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <termios.h>
#include <unistd.h>

#include "halt_poll/halt_poll.h"
#include "kselftest_harness.h"
#include "tests/unit/fake_kvm.h"
#include "tests/unit/stats_fixture.h"
#include "platform/console.h"
#include "core/mmio_ring.h"
#include "core/sandbox.h"
#include "core/sandbox_bpf.h"
#include "core/sandbox_rules.h"
#include "core/term.h"
#include "platform/uart.h"
#include "core/vm.h"

enum action {
	DO_SOCKET, DO_KVM_IOCTL, DO_VHOST_IOCTL, DO_TIOCSTI, DO_OPEN_RO, DO_OPEN_RW, DO_EXECVE, DO_TCSETATTR,
	DO_SOCKOPT,
};

/* The request DO_VHOST_IOCTL makes (set before the fork). */
static unsigned long vhost_req = VHOST_NET_SET_BACKEND;

/* What DO_SOCKOPT does on a socket opened before the filter: get (or set) option at SOL_SOCKET. */
static int sockopt_fd = -1, sockopt_name;
static bool sockopt_set;

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
	case DO_VHOST_IOCTL: /* a vhost request (virtio-net's rings at DRIVER_OK): allowed, EBADF */
		quit(ioctl(1000, vhost_req, NULL) < 0 && errno == EBADF ? 0 : 27);
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
	case DO_SOCKOPT: { /* allowed: it reaches the socket and answers, whatever it answers */
		char v[64] = "";
		socklen_t len = sizeof(v);
		int r = sockopt_set ? setsockopt(sockopt_fd, SOL_SOCKET, sockopt_name, v, sizeof(struct timeval))
				    : getsockopt(sockopt_fd, SOL_SOCKET, sockopt_name, v, &len);

		quit(r == 0 || errno != EBADF ? 0 : 28);
	}
	case DO_EXECVE: {
		char *const argv[] = { "/bin/true", NULL };

		execve(argv[0], argv, NULL);
		quit(25);
	}
	}
	quit(30);
}

/* The child's stderr (read from efd until it closes, then closed) and its status, 128+N for a
 * signal N. */
static void collect(pid_t pid, int efd, struct outcome *o)
{
	size_t got = 0;
	ssize_t n;

	while ((n = read(efd, o->err + got, sizeof(o->err) - 1 - got)) > 0)
		got += n;
	close(efd);
	waitpid(pid, &o->status, 0);
	o->status = WIFEXITED(o->status) ? WEXITSTATUS(o->status) : 128 + WTERMSIG(o->status);
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
	collect(pid, p[0], o);
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

/* vhost-net's ioctls on the threads that hand rings over (vCPU: DRIVER_OK, reset) and take them
 * back (main: exit), nowhere else. */
TEST(vhost_ioctls_on_vcpu_and_main_only)
{
	struct outcome o;

	NEED_SECCOMP();
	run_child(SANDBOX_ENFORCE, SANDBOX_VCPU, DO_VHOST_IOCTL, &o);
	EXPECT_EQ(0, o.status) TH_LOG("stderr: %s", o.err);
	run_child(SANDBOX_ENFORCE, SANDBOX_MAIN, DO_VHOST_IOCTL, &o);
	EXPECT_EQ(0, o.status) TH_LOG("stderr: %s", o.err);
	run_child(SANDBOX_ENFORCE, SANDBOX_DEVICE, DO_VHOST_IOCTL, &o);
	EXPECT_EQ(VM_EXIT_SANDBOX, o.status) TH_LOG("stderr: %s", o.err);
	run_child(SANDBOX_ENFORCE, SANDBOX_CTL, DO_VHOST_IOCTL, &o);
	EXPECT_EQ(VM_EXIT_SANDBOX, o.status) TH_LOG("stderr: %s", o.err);
}

/* Exactly the vhost requests vmm makes once sandboxed (virtio/vhost_net.c: start, stop, a vector
 * moved); the rest of vhost's 0xAF range is refused: the owner and the features were taken before
 * any filter, and vmm never logs dirty pages or gives up ownership. */
TEST(vhost_ioctls_only_those_vmm_makes)
{
	static const unsigned long used[] = {
		VHOST_SET_FEATURES, VHOST_SET_MEM_TABLE, VHOST_SET_VRING_NUM, VHOST_SET_VRING_BASE,
		VHOST_SET_VRING_ADDR, VHOST_SET_VRING_KICK, VHOST_SET_VRING_CALL, VHOST_NET_SET_BACKEND,
		VHOST_GET_VRING_BASE,
	};
	static const unsigned long unused[] = {
		VHOST_SET_LOG_BASE, VHOST_SET_LOG_FD, VHOST_RESET_OWNER, VHOST_SET_OWNER, VHOST_GET_FEATURES,
		VHOST_SET_VRING_ERR, VHOST_VDPA_SET_STATUS,
	};
	static const enum sandbox_role roles[] = { SANDBOX_VCPU, SANDBOX_MAIN };
	struct outcome o;

	NEED_SECCOMP();
	for (size_t r = 0; r < sizeof(roles) / sizeof(roles[0]); r++) {
		for (size_t i = 0; i < sizeof(used) / sizeof(used[0]); i++) {
			vhost_req = used[i];
			run_child(SANDBOX_ENFORCE, roles[r], DO_VHOST_IOCTL, &o);
			EXPECT_EQ(0, o.status) TH_LOG("%s, 0x%lx: %s", sandbox_role_name(roles[r]), used[i], o.err);
		}
		for (size_t i = 0; i < sizeof(unused) / sizeof(unused[0]); i++) {
			vhost_req = unused[i];
			run_child(SANDBOX_ENFORCE, roles[r], DO_VHOST_IOCTL, &o);
			EXPECT_EQ(VM_EXIT_SANDBOX, o.status) TH_LOG("%s, 0x%lx: %s", sandbox_role_name(roles[r]), unused[i], o.err);
		}
	}
	vhost_req = VHOST_NET_SET_BACKEND;
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

/* The ctl thread's socket options: the peer's credentials and groups read, the send timeout set,
 * nothing else (nor at another level). */
TEST(ctl_socket_options_only_the_peers_and_the_timeout)
{
	static const struct { bool set; int name; bool ok; } cases[] = {
		{ false, SO_PEERCRED, true }, { false, SO_PEERGROUPS, true }, { true, SO_SNDTIMEO, true },
		{ false, SO_PEERSEC, false }, { false, SO_TYPE, false }, { true, SO_RCVTIMEO, false },
		{ true, SO_SNDBUF, false }, { false, SO_SNDTIMEO, false },
	};
	struct outcome o;
	int sv[2];

	NEED_SECCOMP();
	ASSERT_EQ(0, socketpair(AF_UNIX, SOCK_STREAM, 0, sv));
	sockopt_fd = sv[0];
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		sockopt_set = cases[i].set;
		sockopt_name = cases[i].name;
		run_child(SANDBOX_ENFORCE, SANDBOX_CTL, DO_SOCKOPT, &o);
		EXPECT_EQ(cases[i].ok ? 0 : VM_EXIT_SANDBOX, o.status)
			TH_LOG("%ssockopt %d: %s", cases[i].set ? "set" : "get", cases[i].name, o.err);
	}
	close(sv[0]);
	close(sv[1]);
	sockopt_fd = -1;
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

/* the terminal restored on every way out, the SIGSYS report's included: every role may */
TEST(every_role_restores_the_terminal)
{
	struct outcome o;
	int m;

	NEED_SECCOMP();
	pty = open_pty(&m);
	ASSERT_LE(0, pty);
	for (int role = 0; role < SANDBOX_NR_ROLES; role++) {
		run_child(SANDBOX_ENFORCE, role, DO_TCSETATTR, &o);
		EXPECT_EQ(0, o.status) TH_LOG("%s: %s", sandbox_role_name(role), o.err);
	}
	close(pty);
	close(m);
	pty = -1;
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

TEST(no_sandbox_filters_nothing)
{
	struct outcome o;

	run_child(SANDBOX_OFF, SANDBOX_VCPU, DO_SOCKET, &o);
	EXPECT_EQ(0, o.status) TH_LOG("stderr: %s", o.err);
	run_child(SANDBOX_OFF, SANDBOX_VCPU, DO_TIOCSTI, &o); /* EBADF: not a trap */
	EXPECT_EQ(0, o.status) TH_LOG("stderr: %s", o.err);
}

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

/*
 * The filters vmm loads were compiled at build time, on the build machine, for this target
 * (buildtools/sandbox_gen.c): each is, instruction for instruction, what libseccomp compiles here from
 * the same lists. On arm64 (the unit run under qemu-user) that checks the x86 machine's
 * cross-compiled filters against the arm64 libseccomp's own; no filter is loaded.
 */
TEST(build_time_filters_are_libseccomps_on_this_target)
{
	for (int m = 0; m < 2; m++)
		for (int role = 0; role < SANDBOX_NR_ROLES; role++) {
			scmp_filter_ctx f = sandbox_rules_build(seccomp_arch_native(), m ? SANDBOX_LOG : SANDBOX_ENFORCE, role);
			void *insns;
			size_t len;

			ASSERT_NE(NULL, f);
			ASSERT_EQ(0, sandbox_rules_export(f, &insns, &len));
			seccomp_release(f);
			const struct sandbox_filter *g = &sandbox_filters[m][role];

			EXPECT_EQ(len, g->len) TH_LOG("%s, mode %d", sandbox_role_name(role), m);
			if (len == g->len) {
				EXPECT_EQ(0, memcmp(insns, g->insns, len * sizeof(struct sock_filter)))
					TH_LOG("%s, mode %d: the instructions differ", sandbox_role_name(role), m);
			}
			free(insns);
		}
	/* and the report's names are this target's */
	for (int nr = 0; nr < SANDBOX_MAX_NR; nr++) {
		char *s = seccomp_syscall_resolve_num_arch(SCMP_ARCH_NATIVE, nr);

		if (s && sandbox_syscall_names[nr]) {
			EXPECT_STREQ(s, sandbox_syscall_names[nr]);
		} else {
			EXPECT_EQ(!s, !sandbox_syscall_names[nr]) TH_LOG("number %d", nr);
		}
		free(s);
	}
	EXPECT_STREQ("socket", sandbox_syscall_names[__NR_socket]);
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
	char here[4096];

	sandbox_rules_describe(seccomp_arch_native(), SANDBOX_VCPU, here, sizeof(here));
	EXPECT_STREQ(here, buf);
	EXPECT_EQ(NULL, strstr(buf, "openat")) TH_LOG("%s", buf);
}

/*
 * The boot marker's path on each thread that can meet it, in a forked child under that thread's
 * filter, with the hooks board_run installs (hp_run_mark_boot_end, hp_run_deferred) on a fake VM:
 * a 16550 at GPA with its exact mode, KVM's coalesced ring, the stats of a fake stats fd.
 *   vcpu:    a trapped THR write (the mode not entered yet) -> uart -> console watch -> hook
 *   device:  a virtio-console port's bytes (board_console_write is console_out_write) -> hook
 *   console: the ring's drain (exact mode) -> uart_ring_write -> console watch -> hook, then
 *            console_out_drain to stdout's stand-in
 *   main:    the last drain at exit -> hook, then the deferred work: the snapshot
 * Each child exits 0 when the marker was seen (vcpu, device, console: the main thread was woken;
 * main: the boot-end snapshot exists), VM_EXIT_SANDBOX when its filter refused a call.
 */
#define BM_GPA 0x09000000ULL

struct bm_rig {
	struct vm vm;
	struct fake_kvm fk;
	struct uart u;
	struct console_out out;
	struct hp_run run;
	int pipe[2];
	void *ring;
	bool vm_made, run_made;
};

static void bm_irq(void *opaque, bool level)
{
	(void)opaque;
	(void)level;
}

static int bm_init(struct bm_rig *r, bool fast)
{
	long page = sysconf(_SC_PAGESIZE);
	struct fx *f = fx_build(fx_arm64_vcpu, FX_ARM64_VCPU_N, "kvm-1/vcpu-0");
	int fd = fx_fd(f, 0);

	free(f);
	memset(r, 0, sizeof(*r));
	r->pipe[0] = r->pipe[1] = r->out.fd = r->out.wake_fd = -1;
	if (fd < 0 || fake_vm_init(&r->vm, &r->fk, 0, 0))
		return -1;
	r->vm_made = true;
	if (pipe2(r->pipe, O_NONBLOCK) || console_out_init(&r->out, r->pipe[1], vm_watch_panic, &r->vm))
		return -1;
	r->vm.defer_fd = eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC); /* vm_create makes it */
	uart_init(&r->u, &r->out, bm_irq, r);
	if (r->vm.defer_fd < 0 || bus_register(&r->vm.mmio, BM_GPA, page, uart_mmio, &r->u, "uart"))
		return -1;
	r->ring = calloc(1, page); /* one page, as KVM's: room for the whole line */
	if (!r->ring)
		return -1;
	mmio_ring_init(&r->vm.coalesced, r->ring, page, r->vm.kvm);
	if (fast && uart_fast_init(&r->u, &r->vm, BM_GPA, page, NULL, NULL))
		return -1;
	/* hp_run_open's work without KVM_GET_STATS_FD: one source, the start snapshot taken */
	r->run.vm = &r->vm;
	pthread_mutex_init(&r->run.lock, NULL);
	pthread_cond_init(&r->run.cond, NULL);
	r->run_made = true;
	if (hp_set_add(&r->run.set, "vcpu0", fd) || hp_run_start(&r->run))
		return -1;
	/* as board_run wires them */
	r->out.on_boot_end = hp_run_mark_boot_end;
	r->out.boot_opaque = &r->run;
	r->vm.deferred = hp_run_deferred;
	r->vm.deferred_opaque = &r->run;
	return 0;
}

static void bm_free(struct bm_rig *r)
{
	if (r->run_made)
		hp_run_close(&r->run);
	if (!r->vm_made)
		return;
	uart_destroy(&r->u);
	console_out_destroy(&r->out);
	for (int i = 0; i < 2; i++)
		if (r->pipe[i] >= 0)
			close(r->pipe[i]);
	if (r->vm.defer_fd >= 0)
		close(r->vm.defer_fd);
	free(r->ring);
	fake_vm_free(&r->vm);
}

/* The guest's THR writes: trapped (handled here, as a vCPU's exit) or queued in the ring. */
static void bm_guest_puts(struct bm_rig *r, const char *s)
{
	for (; *s; s++) {
		uint8_t c = (uint8_t)*s;

		fake_kvm_guest_access(&r->fk, &r->vm, BM_GPA + UART_TX, &c, 1, true);
	}
}

/* Whether the main thread was woken (the eventfd's count), read without blocking. */
static bool bm_woken(struct bm_rig *r)
{
	uint64_t v = 0;

	return read(r->vm.defer_fd, &v, sizeof(v)) == sizeof(v) && v;
}

enum bm_path { BM_VCPU, BM_DEVICE, BM_CONSOLE, BM_MAIN };

static const char *const bm_line = "vmm-boot-end\r\n";

static void __attribute__((noreturn)) bm_child(struct bm_rig *r, enum bm_path p)
{
	switch (p) {
	case BM_VCPU:
		bm_guest_puts(r, bm_line); /* the mode is off: every byte an exit */
		quit(bm_woken(r) ? 0 : 31);
	case BM_DEVICE:
		console_out_write(&r->out, (const uint8_t *)bm_line, strlen(bm_line));
		quit(bm_woken(r) ? 0 : 32);
	case BM_CONSOLE:
		mmio_ring_drain(&r->vm.coalesced);
		console_out_drain(&r->out);
		quit(bm_woken(r) ? 0 : 33);
	case BM_MAIN:
		mmio_ring_drain(&r->vm.coalesced);
		if (r->vm.deferred)
			r->vm.deferred(r->vm.deferred_opaque);
		quit(r->run.have_boot_end ? 0 : 34);
	}
	quit(30);
}

static void bm_run(struct bm_rig *r, enum sandbox_role role, enum bm_path p, struct outcome *o)
{
	int e[2];

	memset(o, 0, sizeof(*o));
	if (pipe(e) < 0)
		abort();
	pid_t pid = fork();

	if (pid == 0) {
		dup2(e[1], STDERR_FILENO);
		close(e[0]);
		if (sandbox_init(SANDBOX_ENFORCE) < 0 || sandbox_enter(SANDBOX_ENFORCE, role) < 0)
			_exit(40);
		bm_child(r, p);
	}
	close(e[1]);
	collect(pid, e[0], o);
}

FIXTURE(boot_marker) {
	struct bm_rig *r;
};
FIXTURE_SETUP(boot_marker)
{
	self->r = calloc(1, sizeof(*self->r)); /* a struct vm: off the stack */
	ASSERT_NE(NULL, self->r);
}
FIXTURE_TEARDOWN(boot_marker)
{
	bm_free(self->r);
	free(self->r);
}

TEST_F(boot_marker, vcpu_thread_trapped_write)
{
	struct outcome o;

	NEED_SECCOMP();
	ASSERT_EQ(0, bm_init(self->r, false));
	bm_run(self->r, SANDBOX_VCPU, BM_VCPU, &o);
	EXPECT_EQ(0, o.status) TH_LOG("stderr: %s", o.err);
}

TEST_F(boot_marker, device_thread_console_port)
{
	struct outcome o;

	NEED_SECCOMP();
	ASSERT_EQ(0, bm_init(self->r, false));
	bm_run(self->r, SANDBOX_DEVICE, BM_DEVICE, &o);
	EXPECT_EQ(0, o.status) TH_LOG("stderr: %s", o.err);
}

/* The case: the line only the console thread's drain of the ring finds. */
TEST_F(boot_marker, console_thread_ring_drain)
{
	struct outcome o;

	NEED_SECCOMP();
	ASSERT_EQ(0, bm_init(self->r, true));
	bm_guest_puts(self->r, "hello\r\n"); /* trapped bytes put the 16550 in its exact mode */
	mmio_ring_drain(&self->r->vm.coalesced);
	ASSERT_TRUE(self->r->u.fast.on) TH_LOG("the exact mode was not entered: %s", self->r->u.fast.why);
	bm_guest_puts(self->r, bm_line);
	ASSERT_NE(__atomic_load_n(&((struct kvm_coalesced_mmio_ring *)self->r->ring)->first, __ATOMIC_RELAXED),
		  __atomic_load_n(&((struct kvm_coalesced_mmio_ring *)self->r->ring)->last, __ATOMIC_RELAXED))
		TH_LOG("the marker did not go to the ring");
	bm_run(self->r, SANDBOX_CONSOLE, BM_CONSOLE, &o);
	EXPECT_EQ(0, o.status) TH_LOG("stderr: %s", o.err);
	EXPECT_EQ(NULL, strstr(o.err, "seccomp allowlist refuses")) TH_LOG("%s", o.err);
}

/* The main thread: the last drain at exit, then the snapshot the others deferred to it. */
TEST_F(boot_marker, main_thread_takes_the_snapshot)
{
	struct outcome o;

	NEED_SECCOMP();
	ASSERT_EQ(0, bm_init(self->r, true));
	bm_guest_puts(self->r, "hello\r\n");
	mmio_ring_drain(&self->r->vm.coalesced);
	bm_guest_puts(self->r, bm_line);
	bm_run(self->r, SANDBOX_MAIN, BM_MAIN, &o);
	EXPECT_EQ(0, o.status) TH_LOG("stderr: %s", o.err);
}

TEST_HARNESS_MAIN
