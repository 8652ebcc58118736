// SPDX-License-Identifier: MIT
/*
 * The seccomp allowlists, each in a forked child: a call a role allows goes through, one it
 * refuses stops the process with VM_EXIT_SANDBOX and a report naming the thread and the call,
 * and --no-sandbox filters nothing. (qemu-user cannot load seccomp filters: skipped there.)
 */
#include <errno.h>
#include <fcntl.h>
#include <linux/kvm.h>
#include <linux/vhost.h>
#include <stdio.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <termios.h>
#include <unistd.h>

#include "kselftest_harness.h"
#include "tests/unit/sandbox_child.h"
#include "core/sandbox.h"
#include "core/vm.h"

enum action {
	DO_SOCKET, DO_KVM_IOCTL, DO_VHOST_IOCTL, DO_TIOCSTI, DO_OPEN_RO, DO_OPEN_RW, DO_EXECVE,
	DO_SOCKOPT,
};

/* The request DO_VHOST_IOCTL makes (set before the fork). */
static unsigned long vhost_req = VHOST_NET_SET_BACKEND;

/* What DO_SOCKOPT does on a socket opened before the filter: get (or set) option at SOL_SOCKET. */
static int sockopt_fd = -1, sockopt_name;
static bool sockopt_set;

static void act(const void *arg)
{
	enum action a = *(const enum action *)arg;
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

static void run_child(enum sandbox_mode mode, enum sandbox_role role, enum action a, struct outcome *o)
{
	run_sandboxed(mode, role, act, &a, o);
}

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

TEST(no_sandbox_filters_nothing)
{
	struct outcome o;

	run_child(SANDBOX_OFF, SANDBOX_VCPU, DO_SOCKET, &o);
	EXPECT_EQ(0, o.status) TH_LOG("stderr: %s", o.err);
	run_child(SANDBOX_OFF, SANDBOX_VCPU, DO_TIOCSTI, &o); /* EBADF: not a trap */
	EXPECT_EQ(0, o.status) TH_LOG("stderr: %s", o.err);
}

TEST_HARNESS_MAIN
