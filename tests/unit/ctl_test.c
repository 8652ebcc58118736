// SPDX-License-Identifier: MIT
/* The control socket: its protocol on good and malformed requests, and the server end to end. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <fcntl.h>
#include <grp.h>
#include <pthread.h>
#include <signal.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "kselftest_harness.h"
#include "vmm/ctl.h"
#include "core/vm.h"

#define REQ(s) ctl_parse(s, strlen(s), &r, err, sizeof(err))

TEST(requests_parse_strictly)
{
	struct ctl_req r;
	char err[160];

	ASSERT_EQ(0, REQ("{\"cmd\":\"get\"}"));
	EXPECT_EQ(CTL_GET, r.cmd);
	ASSERT_EQ(0, REQ(" { \"cmd\" : \"set\" , \"halt_poll_ns\" : 500000 } "));
	EXPECT_EQ(CTL_SET, r.cmd);
	EXPECT_EQ(500000, r.halt_poll_ns);
	ASSERT_EQ(0, REQ("{\"halt_poll_ns\":0,\"cmd\":\"set\"}"));
	EXPECT_EQ(0, r.halt_poll_ns);
	ASSERT_EQ(0, REQ("{\"cmd\":\"stats\"}"));
	EXPECT_EQ(CTL_STATS, r.cmd);
	/* each of these is refused with a reason, and nothing is applied */
	static const char *const bad[] = {
		"", "get", "[]", "{", "{}", "{\"cmd\":\"get\"", "{\"cmd\":\"get\"}x", "{\"cmd\":get}",
		"{\"cmd\":\"reboot\"}", "{\"cmd\":\"set\"}", "{\"cmd\":\"get\",\"halt_poll_ns\":1}",
		"{\"cmd\":\"set\",\"halt_poll_ns\":-1}", "{\"cmd\":\"set\",\"halt_poll_ns\":1.5}",
		"{\"cmd\":\"set\",\"halt_poll_ns\":99999999999999999999999}",
		"{\"cmd\":\"set\",\"halt_poll_ns\":4294967296}", "{\"cmd\":\"set\",\"halt_poll_ns\":012}",
		"{\"cmd\":\"set\",\"halt_poll_ns\":\"5\"}", "{\"cmd\":\"get\",\"cmd\":\"get\"}",
		"{\"cmd\":\"get\",\"extra\":1}", "{\"cmd\":\"g\\\"et\"}", "{\"cmd\":\"get\",}",
		"{\"cmd\":\"\x01\"}", "{\"cmdcmdcmdcmdcmdcmdcmdcmdcmdcmdcmdcmd\":\"get\"}",
	};

	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		err[0] = 0;
		EXPECT_EQ(-EINVAL, REQ(bad[i])) TH_LOG("accepted: %s", bad[i]);
		EXPECT_NE(0, err[0]) TH_LOG("no reason for: %s", bad[i]);
	}
	char huge[CTL_LINE_MAX + 10];

	memset(huge, ' ', sizeof(huge));
	EXPECT_EQ(-EINVAL, ctl_parse(huge, sizeof(huge), &r, err, sizeof(err)));
}

/* ns is written by the server thread: atomic accesses, as the socket's ordering is not one
 * ThreadSanitizer sees */
struct fake_vm {
	uint64_t ns;
	int sets, fail;
};

static int f_set(void *o, uint64_t ns)
{
	struct fake_vm *v = o;

	if (v->fail)
		return -EINVAL;
	__atomic_store_n(&v->ns, ns, __ATOMIC_RELEASE);
	v->sets++;
	return 0;
}

static uint64_t f_get(void *o)
{
	return __atomic_load_n(&((struct fake_vm *)o)->ns, __ATOMIC_ACQUIRE);
}

static int f_stats(void *o, FILE *f)
{
	(void)o;
	fputs("{\"a\":\n1}", f); /* a newline inside: the reply must stay one line */
	return 0;
}

static const char *handle(struct ctl_ops *ops, const char *line)
{
	static char buf[4096];
	FILE *f = fmemopen(buf, sizeof(buf), "w");

	ctl_handle(ops, line, strlen(line), f);
	fclose(f);
	return buf;
}

TEST(handling_applies_only_valid_requests)
{
	struct fake_vm vm = { .ns = 200000 };
	struct ctl_ops ops = { f_set, f_get, NULL, f_stats, &vm, SANDBOX_OFF, NULL, NULL };

	EXPECT_STREQ("{\"ok\":true,\"halt_poll_ns\":200000}\n", handle(&ops, "{\"cmd\":\"get\"}"));
	EXPECT_STREQ("{\"ok\":true,\"halt_poll_ns\":0}\n", handle(&ops, "{\"cmd\":\"set\",\"halt_poll_ns\":0}"));
	EXPECT_EQ(1, vm.sets);
	EXPECT_NE(NULL, strstr(handle(&ops, "{\"cmd\":\"set\",\"halt_poll_ns\":x}"), "\"ok\":false"));
	EXPECT_EQ(1, vm.sets);
	vm.fail = 1;
	EXPECT_NE(NULL, strstr(handle(&ops, "{\"cmd\":\"set\",\"halt_poll_ns\":5}"), "KVM refused"));
	EXPECT_EQ(0, vm.ns);
	EXPECT_STREQ("{\"ok\":true,\"stats\":{\"a\": 1}}\n", handle(&ops, "{\"cmd\":\"stats\"}"));
	/* an error message never breaks the JSON it is in */
	const char *e = handle(&ops, "{\"cmd\":\"x\\\"y\"}");

	EXPECT_EQ(NULL, strchr(strstr(e, "error\":\"") + 8, '\\'));
}

TEST(poll_control_requests_parse_strictly)
{
	struct ctl_req r;
	char err[160];

	ASSERT_EQ(0, REQ("{\"cmd\":\"set\",\"poll_control\":0,\"vcpu\":3}"));
	EXPECT_EQ(CTL_SET, r.cmd);
	EXPECT_TRUE(r.has_poll_control);
	EXPECT_FALSE(r.has_halt_poll_ns);
	EXPECT_EQ(0, r.poll_control);
	EXPECT_EQ(3, r.vcpu);
	ASSERT_EQ(0, REQ("{\"vcpu\":\"all\",\"cmd\":\"set\",\"poll_control\":1}"));
	EXPECT_EQ(1, r.poll_control);
	EXPECT_EQ(-1, r.vcpu);
	static const char *const bad[] = {
		"{\"cmd\":\"set\",\"poll_control\":2,\"vcpu\":0}",	/* only 0 or 1 */
		"{\"cmd\":\"set\",\"poll_control\":1}",			/* which vCPU? */
		"{\"cmd\":\"set\",\"vcpu\":1}",				/* set what? */
		"{\"cmd\":\"get\",\"poll_control\":1,\"vcpu\":0}",		/* set only */
		"{\"cmd\":\"set\",\"poll_control\":1,\"vcpu\":\"some\"}",
		"{\"cmd\":\"set\",\"poll_control\":1,\"vcpu\":-1}",
		"{\"cmd\":\"set\",\"poll_control\":1,\"vcpu\":4096}",	/* past CTL_MAX_VCPU */
		"{\"cmd\":\"set\",\"poll_control\":1,\"vcpu\":0,\"vcpu\":1}",
		"{\"cmd\":\"set\",\"poll_control\":1,\"poll_control\":0,\"vcpu\":0}",
		"{\"cmd\":\"set\",\"poll_control\":1,\"vcpu\":0,\"halt_poll_ns\":5}", /* one value */
		"{\"cmd\":\"set\",\"poll_control\":true,\"vcpu\":0}",
	};

	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		err[0] = 0;
		EXPECT_EQ(-EINVAL, REQ(bad[i])) TH_LOG("accepted: %s", bad[i]);
		EXPECT_NE(0, err[0]) TH_LOG("no reason for: %s", bad[i]);
	}
}

/* A two-vCPU VM's switch, as board_poll_control keeps it. */
struct fake_pc {
	int v[2];
	int last_vcpu, sets;
};

static int f_set_pc(void *o, int vcpu, int on, char *err, size_t len)
{
	struct fake_pc *p = o;

	if (vcpu > 1) {
		snprintf(err, len, "poll-control: no vCPU %d", vcpu);
		return -EINVAL;
	}
	p->last_vcpu = vcpu;
	p->sets++;
	for (int i = vcpu < 0 ? 0 : vcpu; i <= (vcpu < 0 ? 1 : vcpu); i++)
		p->v[i] = on;
	return 0;
}

static void f_write_pc(void *o, FILE *f)
{
	struct fake_pc *p = o;

	fprintf(f, ",\"poll_control\":[%d,%d]", p->v[0], p->v[1]);
}

static uint64_t f_get_zero(void *o)
{
	(void)o;
	return 0;
}

TEST(poll_control_handling)
{
	struct fake_pc pc = { .v = { 1, 1 } };
	struct ctl_ops ops = { f_set, f_get_zero, NULL, f_stats, &pc, SANDBOX_OFF, f_set_pc, f_write_pc };
	struct ctl_ops none = { f_set, f_get_zero, NULL, f_stats, &pc, SANDBOX_OFF, NULL, NULL };

	EXPECT_STREQ("{\"ok\":true,\"poll_control\":[1,0]}\n",
		     handle(&ops, "{\"cmd\":\"set\",\"poll_control\":0,\"vcpu\":1}"));
	EXPECT_EQ(1, pc.last_vcpu);
	EXPECT_STREQ("{\"ok\":true,\"poll_control\":[0,0]}\n",
		     handle(&ops, "{\"cmd\":\"set\",\"poll_control\":0,\"vcpu\":\"all\"}"));
	EXPECT_EQ(-1, pc.last_vcpu);
	/* the VM's refusal comes back as the error, nothing changed */
	EXPECT_NE(NULL, strstr(handle(&ops, "{\"cmd\":\"set\",\"poll_control\":1,\"vcpu\":7}"),
			       "\"ok\":false,\"error\":\"poll-control: no vCPU 7\""));
	EXPECT_EQ(2, pc.sets);
	EXPECT_STREQ("{\"ok\":true,\"halt_poll_ns\":0,\"poll_control\":[0,0]}\n", handle(&ops, "{\"cmd\":\"get\"}"));
	/* a server without the switch says so */
	EXPECT_NE(NULL, strstr(handle(&none, "{\"cmd\":\"set\",\"poll_control\":1,\"vcpu\":0}"),
			       "no per-vCPU polling switch"));
	EXPECT_EQ(2, pc.sets);
}

TEST(server_end_to_end_and_path_taken)
{
	struct fake_vm vm = { .ns = 100 };
	struct ctl_ops ops = { f_set, f_get, NULL, f_stats, &vm, SANDBOX_OFF, NULL, NULL };
	struct ctl_server s, s2;
	char path[64], reply[512];

	snprintf(path, sizeof(path), "/tmp/vmm-ctl-test-%d", getpid());
	unlink(path);
	ASSERT_EQ(0, ctl_server_start(&s, path, NULL, &ops));
	ASSERT_EQ(0, ctl_request(path, "{\"cmd\":\"set\",\"halt_poll_ns\":777}", reply, sizeof(reply)));
	EXPECT_STREQ("{\"ok\":true,\"halt_poll_ns\":777}\n", reply);
	ASSERT_EQ(0, ctl_request(path, "{\"cmd\":\"get\"}", reply, sizeof(reply)));
	EXPECT_NE(NULL, strstr(reply, "777"));
	ASSERT_EQ(0, ctl_request(path, "garbage", reply, sizeof(reply)));
	EXPECT_NE(NULL, strstr(reply, "\"ok\":false"));
	EXPECT_EQ(777, __atomic_load_n(&vm.ns, __ATOMIC_ACQUIRE));
	/* a second vmm on the same path is refused while the first listens */
	EXPECT_EQ(-EADDRINUSE, ctl_server_start(&s2, path, NULL, &ops));
	ctl_server_stop(&s);
	EXPECT_NE(0, access(path, F_OK)); /* removed on stop */
	/* a stale socket file (its vmm died) is taken over */
	int fd = socket(AF_UNIX, SOCK_STREAM, 0);
	struct sockaddr_un a = { .sun_family = AF_UNIX };

	strcpy(a.sun_path, path);
	ASSERT_EQ(0, bind(fd, (struct sockaddr *)&a, sizeof(a)));
	close(fd);
	ASSERT_EQ(0, ctl_server_start(&s, path, NULL, &ops));
	ctl_server_stop(&s);
	/* a path that is not a socket is refused */
	FILE *f = fopen(path, "w");

	fclose(f);
	EXPECT_EQ(-EADDRINUSE, ctl_server_start(&s2, path, NULL, &ops));
	unlink(path);
}

#define NOBODY 65534 /* the overflow uid: not vmm's, not root */

static double now_s(void)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return t.tv_sec + t.tv_nsec / 1e9;
}

static int connect_to(const char *path)
{
	struct sockaddr_un a = { .sun_family = AF_UNIX };
	int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);

	snprintf(a.sun_path, sizeof(a.sun_path), "%s", path);
	if (fd >= 0 && connect(fd, (struct sockaddr *)&a, sizeof(a)) < 0) {
		int e = errno;

		close(fd);
		errno = e;
		return -1;
	}
	return fd;
}

/* As uid/gid NOBODY with the supplementary groups[0..n) in a child: 0 when the server answered a
 * "get", 1 when connect was refused (the socket's mode), 2 when it connected and was closed without
 * a reply, 3 otherwise. */
static int as_user(const char *path, const gid_t *groups, size_t n)
{
	pid_t pid = fork();
	int st;

	if (pid == 0) {
		char buf[256];

		if (setgroups(n, groups) < 0 || setgid(NOBODY) < 0 || setuid(NOBODY) < 0)
			_exit(3);
		int fd = connect_to(path);

		if (fd < 0)
			_exit(errno == EACCES ? 1 : 3);
		if (send(fd, "{\"cmd\":\"get\"}\n", 14, MSG_NOSIGNAL) != 14)
			_exit(2); /* closed before it could even ask */
		ssize_t n = read(fd, buf, sizeof(buf));

		_exit(n > 0 && strstr(buf, "\"ok\":true") ? 0 : n <= 0 ? 2 : 3);
	}
	if (pid < 0 || waitpid(pid, &st, 0) != pid || !WIFEXITED(st))
		return -1;
	return WEXITSTATUS(st);
}

static int as_nobody(const char *path)
{
	return as_user(path, NULL, 0);
}

TEST(socket_is_0600_whatever_the_umask)
{
	struct fake_vm vm = { .ns = 1 };
	struct ctl_ops ops = { f_set, f_get, NULL, f_stats, &vm, SANDBOX_OFF, NULL, NULL };
	struct ctl_server s;
	char path[64];
	struct stat st;
	mode_t old = umask(0);

	snprintf(path, sizeof(path), "/tmp/vmm-ctl-mode-%d", getpid());
	unlink(path);
	ASSERT_EQ(0, ctl_server_start(&s, path, NULL, &ops));
	umask(old);
	ASSERT_EQ(0, lstat(path, &st));
	EXPECT_TRUE(S_ISSOCK(st.st_mode));
	EXPECT_EQ(0600, st.st_mode & 07777);
	ctl_server_stop(&s);
	/* with a group: 0660 and that group */
	umask(0);
	const struct ctl_access g = { .group = true, .gid = 4242 };

	ASSERT_EQ(0, ctl_server_start(&s, path, &g, &ops));
	umask(old);
	ASSERT_EQ(0, lstat(path, &st));
	EXPECT_EQ(0660, st.st_mode & 07777);
	EXPECT_EQ(4242, st.st_gid);
	ctl_server_stop(&s);
}

TEST(another_uid_is_refused)
{
	struct fake_vm vm = { .ns = 1 };
	struct ctl_ops ops = { f_set, f_get, NULL, f_stats, &vm, SANDBOX_OFF, NULL, NULL };
	struct ctl_server s;
	char path[64], reply[256];
	mode_t old = umask(0);

	if (geteuid() != 0)
		SKIP(return, "needs root to become another user");
	snprintf(path, sizeof(path), "/tmp/vmm-ctl-peer-%d", getpid());
	unlink(path);
	ASSERT_EQ(0, ctl_server_start(&s, path, NULL, &ops));
	umask(old);
	/* the socket's mode keeps nobody out... */
	EXPECT_EQ(1, as_nobody(path));
	/* ...and were it opened up (a directory's or a group's access), its credentials still do */
	ASSERT_EQ(0, chmod(path, 0666));
	EXPECT_EQ(2, as_nobody(path));
	EXPECT_EQ(2, as_nobody(path));
	/* vmm's own user is served meanwhile */
	ASSERT_EQ(0, ctl_request(path, "{\"cmd\":\"get\"}", reply, sizeof(reply)));
	EXPECT_NE(NULL, strstr(reply, "\"ok\":true"));
	ctl_server_stop(&s);
	EXPECT_EQ(2, s.refused);
	/* a --ctl-group admits its members: nobody's primary group, here */
	const struct ctl_access g = { .group = true, .gid = NOBODY };

	ASSERT_EQ(0, ctl_server_start(&s, path, &g, &ops));
	EXPECT_EQ(0, as_nobody(path));
	ctl_server_stop(&s);
	EXPECT_EQ(0, s.refused);
}

/* Whether this kernel (or emulator: under qemu-user SO_PEERGROUPS fails with ERANGE once the peer
 * has two groups) tells a socket's peer's groups: asked, as root, in a child with three. */
static bool peergroups_served(void)
{
	const gid_t three[] = { 4242, 4243, 4244 };
	pid_t pid = fork();
	int st;

	if (!pid) {
		int sv[2];
		gid_t g[256];
		socklen_t len = sizeof(g);

		_exit(setgroups(3, three) < 0 || socketpair(AF_UNIX, SOCK_STREAM, 0, sv) < 0 ||
		      getsockopt(sv[0], SOL_SOCKET, SO_PEERGROUPS, g, &len) < 0 || len != sizeof(three));
	}
	return pid > 0 && waitpid(pid, &st, 0) == pid && WIFEXITED(st) && !WEXITSTATUS(st);
}

/* A --ctl-group member whose group is a supplementary one only (SO_PEERCRED's gid is its primary
 * group): served, with two groups or with a thousand of five digits, the --ctl-group last (more
 * than 4 KiB of them: /proc/PID/status's Groups line, read into 4 KiB, lost it; the kernel allows
 * 65536); a peer in other groups only: refused, whatever the socket's mode lets in. */
TEST(a_supplementary_member_is_served_however_many_groups)
{
	struct fake_vm vm = { .ns = 1 };
	struct ctl_ops ops = { f_set, f_get, NULL, f_stats, &vm, SANDBOX_OFF, NULL, NULL };
	const struct ctl_access g = { .group = true, .gid = 10999 };
	const gid_t member[] = { 4242, 10999 }, other[] = { 4242, 4244 };
	static gid_t many[1000];
	struct ctl_server s;
	char path[64];

	if (geteuid() != 0)
		SKIP(return, "needs root to become another user with other groups");
	if (!peergroups_served())
		SKIP(return, "SO_PEERGROUPS does not tell more than one group here (qemu-user)");
	for (int i = 0; i < 1000; i++)
		many[i] = 10000 + i; /* "10000 " and on: 6000 bytes of Groups line */
	snprintf(path, sizeof(path), "/tmp/vmm-ctl-supp-%d", getpid());
	unlink(path);
	ASSERT_EQ(0, ctl_server_start(&s, path, &g, &ops));
	EXPECT_EQ(0, as_user(path, member, 2));
	EXPECT_EQ(0, as_user(path, many, 1000));
	ASSERT_EQ(0, chmod(path, 0666));
	EXPECT_EQ(2, as_user(path, other, 2));
	ctl_server_stop(&s);
	EXPECT_EQ(1, s.refused);
}

/*
 * A member whose process is gone (reaped, its PID free for another) by the time the server judges
 * its connection: the connection, still open in its child, is judged by the groups it connected
 * with, not by whatever /proc/PID is then. The server is kept busy meanwhile by a connection that
 * sends nothing (closed at CTL_REQUEST_DEADLINE_MS).
 */
TEST(a_member_gone_before_its_turn_is_judged_by_its_connection)
{
	struct fake_vm vm = { .ns = 3 };
	struct ctl_ops ops = { f_set, f_get, NULL, f_stats, &vm, SANDBOX_OFF, NULL, NULL };
	const struct ctl_access g = { .group = true, .gid = 4243 };
	struct ctl_server s;
	char path[64], reply[256] = "";
	int p[2], st;

	if (geteuid() != 0)
		SKIP(return, "needs root to become another user with other groups");
	if (!peergroups_served())
		SKIP(return, "SO_PEERGROUPS does not tell more than one group here (qemu-user)");
	snprintf(path, sizeof(path), "/tmp/vmm-ctl-gone-%d", getpid());
	unlink(path);
	ASSERT_EQ(0, ctl_server_start(&s, path, &g, &ops));
	int hold = connect_to(path);

	ASSERT_LE(0, hold);
	usleep(100 * 1000); /* the server took it and waits for its request */
	ASSERT_EQ(0, pipe(p));
	pid_t pid = fork();

	if (pid == 0) {
		const gid_t member[] = { 4243 };

		close(p[0]);
		if (setgroups(1, member) < 0 || setgid(NOBODY) < 0 || setuid(NOBODY) < 0)
			_exit(3);
		int fd = connect_to(path);

		if (fd < 0 || send(fd, "{\"cmd\":\"get\"}\n", 14, MSG_NOSIGNAL) != 14)
			_exit(3);
		if (fork() == 0) { /* the connection lives on here; its maker exits at once */
			ssize_t n = read(fd, reply, sizeof(reply) - 1);

			_exit(write(p[1], reply, n > 0 ? n : 0) < 0);
		}
		_exit(0);
	}
	close(p[1]);
	ASSERT_EQ(pid, waitpid(pid, &st, 0));
	ASSERT_TRUE(WIFEXITED(st) && WEXITSTATUS(st) == 0);
	char gone[64];

	snprintf(gone, sizeof(gone), "/proc/%d/status", (int)pid);
	EXPECT_NE(0, access(gone, F_OK)); /* reaped: nothing left there to read */
	ssize_t n = read(p[0], reply, sizeof(reply) - 1); /* once the server got to it */

	close(p[0]);
	close(hold);
	EXPECT_LT(0, n);
	EXPECT_NE(NULL, strstr(reply, "\"halt_poll_ns\":3")) TH_LOG("%s", reply);
	ctl_server_stop(&s);
	EXPECT_EQ(0, s.refused);
}

/* A client that sends one byte of its request every 500 ms and never the newline. */
static void *trickle(void *arg)
{
	int fd = *(int *)arg;
	double end = now_s() + 8;

	while (now_s() < end && send(fd, "{", 1, MSG_NOSIGNAL) == 1)
		usleep(500 * 1000);
	close(fd);
	return NULL;
}

TEST(a_trickling_client_is_dropped_and_the_next_served)
{
	struct fake_vm vm = { .ns = 5 };
	struct ctl_ops ops = { f_set, f_get, NULL, f_stats, &vm, SANDBOX_OFF, NULL, NULL };
	struct ctl_server s;
	char path[64], reply[256];
	pthread_t t;
	int fd;

	signal(SIGPIPE, SIG_IGN); /* as vmm's main does: a reply to a client gone is an error, not death */
	snprintf(path, sizeof(path), "/tmp/vmm-ctl-slow-%d", getpid());
	unlink(path);
	ASSERT_EQ(0, ctl_server_start(&s, path, NULL, &ops));
	fd = connect_to(path);
	ASSERT_LE(0, fd);
	ASSERT_EQ(0, pthread_create(&t, NULL, trickle, &fd));
	usleep(100 * 1000); /* the trickler holds the connection first */
	double t0 = now_s();

	ASSERT_EQ(0, ctl_request(path, "{\"cmd\":\"get\"}", reply, sizeof(reply)));
	double waited = now_s() - t0;

	EXPECT_NE(NULL, strstr(reply, "\"halt_poll_ns\":5"));
	/* served once the trickler's 2 s were up, not when it gave up at 8 s */
	EXPECT_LT(waited, CTL_REQUEST_DEADLINE_MS / 1000.0 + 1) TH_LOG("waited %.1f s", waited);
	EXPECT_GT(waited, CTL_REQUEST_DEADLINE_MS / 1000.0 - 0.5) TH_LOG("waited %.1f s", waited);
	pthread_join(t, NULL);
	ctl_server_stop(&s);
	EXPECT_EQ(1, s.timed_out);
}

/* A vmm that never answers (stopped: the kernel still completes the connection into the listening
 * socket's backlog) costs a client its timeout and an error, not a hang; a live one is answered
 * within it. */
TEST(a_vmm_that_does_not_answer_times_the_client_out)
{
	struct sockaddr_un a = { .sun_family = AF_UNIX };
	char reply[256];
	int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);

	ASSERT_LE(0, fd);
	snprintf(a.sun_path, sizeof(a.sun_path), "/tmp/vmm-ctl-mute-%d", getpid());
	unlink(a.sun_path);
	ASSERT_EQ(0, bind(fd, (struct sockaddr *)&a, sizeof(a)));
	ASSERT_EQ(0, listen(fd, 4)); /* and never accepts */
	double t0 = now_s();

	EXPECT_EQ(-ETIMEDOUT, ctl_request_within(a.sun_path, "{\"cmd\":\"get\"}", reply, sizeof(reply), 300));
	double waited = now_s() - t0;

	EXPECT_GT(waited, 0.29) TH_LOG("waited %.3f s", waited);
	EXPECT_LT(waited, 2.0) TH_LOG("waited %.3f s", waited);
	close(fd);
	unlink(a.sun_path);

	struct fake_vm vm = { .ns = 9 };
	struct ctl_ops ops = { f_set, f_get, NULL, f_stats, &vm, SANDBOX_OFF, NULL, NULL };
	struct ctl_server s;

	ASSERT_EQ(0, ctl_server_start(&s, a.sun_path, NULL, &ops));
	EXPECT_EQ(0, ctl_request_within(a.sun_path, "{\"cmd\":\"get\"}", reply, sizeof(reply), 2000));
	EXPECT_NE(NULL, strstr(reply, "\"halt_poll_ns\":9"));
	ctl_server_stop(&s);
}

/* The server thread under its seccomp allowlist: served, a member served and another refused (their
 * credentials and groups) and timed out, in a child that the filter would stop with VM_EXIT_SANDBOX. */
static bool seccomp_works(void)
{
	int st;
	pid_t pid = fork();

	if (pid == 0)
		_exit(sandbox_init(SANDBOX_ENFORCE) < 0 || sandbox_enter(SANDBOX_ENFORCE, SANDBOX_CTL) < 0);
	return pid > 0 && waitpid(pid, &st, 0) == pid && WIFEXITED(st) && WEXITSTATUS(st) == 0;
}

TEST(ctl_paths_under_the_sandbox)
{
	int st;

	if (!seccomp_works()) /* else the server thread would stop at its filter and nothing answer */
		SKIP(return, "seccomp filters cannot be loaded here (qemu-user)");
	pid_t pid = fork();

	ASSERT_LE(0, pid);
	if (pid == 0) {
		struct fake_vm vm = { .ns = 9 };
		struct ctl_ops ops = { f_set, f_get, NULL, f_stats, &vm, SANDBOX_ENFORCE, NULL, NULL };
		const struct ctl_access g = { .group = true, .gid = 4242 }; /* nobody is not in it */
		struct ctl_server s;
		char path[64], reply[256];

		snprintf(path, sizeof(path), "/tmp/vmm-ctl-sbx-%d", getpid());
		unlink(path);
		if (sandbox_init(SANDBOX_ENFORCE) < 0 || ctl_server_start(&s, path, &g, &ops) < 0)
			_exit(40);
		if (ctl_request(path, "{\"cmd\":\"get\"}", reply, sizeof(reply)) < 0 || !strstr(reply, "\"ok\":true"))
			_exit(41);
		const gid_t member[] = { 4242 };

		if (geteuid() == 0 && (as_user(path, member, 1) != 0 || chmod(path, 0666) < 0 || as_nobody(path) != 2))
			_exit(42);
		int fd = connect_to(path);
		char c;

		if (fd < 0 || send(fd, "{", 1, 0) != 1 || read(fd, &c, 1) != 0) /* closed at 2 s */
			_exit(43);
		close(fd);
		if (ctl_request(path, "{\"cmd\":\"get\"}", reply, sizeof(reply)) < 0)
			_exit(44);
		ctl_server_stop(&s);
		_exit(s.timed_out == 1 ? 0 : 45);
	}
	ASSERT_EQ(pid, waitpid(pid, &st, 0));
	ASSERT_TRUE(WIFEXITED(st));
	EXPECT_EQ(0, WEXITSTATUS(st));
}

TEST_HARNESS_MAIN
