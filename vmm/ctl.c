// SPDX-License-Identifier: MIT
/*
 * The control socket's server and client. One thread serves the socket, one connection at a time
 * (a request is answered in microseconds; a connection still sending 2 s after accept is closed),
 * so nothing a client does reaches a vCPU thread. Only vmm's own user and root (or the members of
 * --ctl-group) are served: the socket's mode says so, and each peer's credentials are checked.
 * The path is refused when a live vmm already listens there, and taken over when it is a stale
 * socket file left by a vmm that died.
 */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <time.h>
#include <unistd.h>

#include "vmm/ctl.h"
#include "core/log.h"

static int addr_of(const char *path, struct sockaddr_un *a)
{
	memset(a, 0, sizeof(*a));
	a->sun_family = AF_UNIX;
	if (strlen(path) >= sizeof(a->sun_path)) {
		pr_err("--ctl %s: a socket path is at most %zu characters", path, sizeof(a->sun_path) - 1);
		return -ENAMETOOLONG;
	}
	strcpy(a->sun_path, path);
	return 0;
}

/* end = ms milliseconds from now (CLOCK_MONOTONIC), for ms_left. */
static void deadline_in(struct timespec *end, int ms)
{
	clock_gettime(CLOCK_MONOTONIC, end);
	end->tv_sec += ms / 1000;
	end->tv_nsec += ms % 1000 * 1000000L;
	if (end->tv_nsec >= 1000000000L) {
		end->tv_sec++;
		end->tv_nsec -= 1000000000L;
	}
}

/* Milliseconds until end (CLOCK_MONOTONIC), 0 once it has passed. */
static int ms_left(const struct timespec *end)
{
	struct timespec now;

	clock_gettime(CLOCK_MONOTONIC, &now);
	long long ms = (end->tv_sec - now.tv_sec) * 1000LL + (end->tv_nsec - now.tv_nsec) / 1000000;

	return ms > 0 ? (int)ms : 0;
}

/*
 * Requests until EOF, the deadline, or a reply the client does not take. The deadline counts
 * from accept: a client sending a byte now and then (each recv would wait afresh) is closed at
 * CTL_REQUEST_DEADLINE_MS, whatever it sent, and the next client is served.
 */
static void serve(struct ctl_server *s, int c)
{
	struct timeval tv = { CTL_REQUEST_DEADLINE_MS / 1000, CTL_REQUEST_DEADLINE_MS % 1000 * 1000 };
	char buf[CTL_FEED_SIZE];
	struct timespec end;
	size_t have = 0;

	deadline_in(&end, CTL_REQUEST_DEADLINE_MS);
	setsockopt(c, SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof(tv));
	FILE *f = fdopen(dup(c), "w");

	if (!f)
		return;
	for (;;) {
		struct pollfd p = { c, POLLIN, 0 };
		int left = ms_left(&end), n = left ? poll(&p, 1, left) : 0;

		if (n < 0 && errno == EINTR)
			continue;
		if (n == 0) {
			if (!s->timed_out++)
				pr_warn("--ctl %s: closed a connection that had not sent its request %d ms "
					"after connecting (requests are one line each, sent at once); later ones "
					"are closed silently", s->path, CTL_REQUEST_DEADLINE_MS);
			break;
		}
		ssize_t got = n < 0 ? -1 : recv(c, buf + have, sizeof(buf) - have, MSG_DONTWAIT);

		if (got < 0 && (errno == EAGAIN || errno == EINTR))
			continue;
		if (got > 0)
			have += got;
		if (got < 0 || ctl_feed(&s->ops, buf, &have, got == 0, f) < 0 || got == 0)
			break;
	}
	fclose(f);
}

/*
 * 1 when gid is among the peer's supplementary groups, 0 when not, -errno when they cannot be read.
 * SO_PEERGROUPS (Linux 4.13): the groups the peer had when it connected, kept with the socket, so
 * neither a PID reused since nor a list longer than a buffer decides (SO_PEERCRED has the primary
 * group only). A list longer than the first try holds is read again at the size the kernel says.
 */
static int peer_in_group(int c, gid_t gid)
{
	gid_t some[64], *g = some;
	socklen_t len = sizeof(some);
	int r = 0;

	while (getsockopt(c, SOL_SOCKET, SO_PEERGROUPS, g, &len) < 0) {
		r = -errno;
		if (r != -ERANGE || g != some)
			goto out;
		if (!(g = malloc(len))) {
			r = -ENOMEM;
			goto out;
		}
		r = 0;
	}
	for (size_t i = 0; i < len / sizeof(gid_t) && !r; i++)
		r = g[i] == gid;
out:
	if (g != some)
		free(g);
	return r;
}

/* SO_PEERCRED against access: vmm's own uid, root, and with a group its members. */
static bool peer_admitted(struct ctl_server *s, int c)
{
	struct ucred u;
	socklen_t len = sizeof(u);
	int member = 0;

	if (getsockopt(c, SOL_SOCKET, SO_PEERCRED, &u, &len) < 0 || len != sizeof(u))
		u = (struct ucred){ .pid = 0, .uid = (uid_t)-1, .gid = (gid_t)-1 };
	else if (u.uid == s->uid || u.uid == 0 ||
		 (s->access.group && (u.gid == s->access.gid || (member = peer_in_group(c, s->access.gid)) > 0)))
		return true;
	if (!s->refused++)
		pr_warn("--ctl %s: refused a connection from uid %d (pid %d): the control socket serves "
			"vmm's own uid %d, root%s%s%s; later refusals are counted silently", s->path,
			(int)u.uid, (int)u.pid, (int)s->uid,
			s->access.group ? " and its group's members" : " (and the members of a --ctl-group)",
			member < 0 ? ", and the peer's groups could not be read: SO_PEERGROUPS (Linux 4.13): " : "",
			member < 0 ? strerror(-member) : "");
	return false;
}

static void *server_thread(void *arg)
{
	struct ctl_server *s = arg;

	if (sandbox_enter(s->ops.sandbox, SANDBOX_CTL) < 0)
		return NULL; /* it said why; requests go unanswered, the guest runs on */
	for (;;) {
		struct pollfd p[2] = { { s->fd, POLLIN, 0 }, { s->stopfd, POLLIN, 0 } };

		if (poll(p, 2, -1) < 0 && errno != EINTR)
			break;
		if (p[1].revents)
			break;
		if (!(p[0].revents & POLLIN))
			continue;
		int c = accept4(s->fd, NULL, NULL, SOCK_CLOEXEC);

		if (c >= 0) {
			if (peer_admitted(s, c))
				serve(s, c);
			close(c);
		}
	}
	return NULL;
}

/* The socket's mode and group, whatever the umask gave bind, before it listens (until then a
 * connect is refused, so nobody gets in under the umask's mode). The path is not followed: a
 * symlink put there meanwhile is not what vmm bound. */
static int set_access(const char *path, const struct ctl_access *a)
{
	mode_t mode = a->group ? 0660 : 0600;
	struct stat st;

	if (fchmodat(AT_FDCWD, path, mode, AT_SYMLINK_NOFOLLOW) < 0) {
		/* glibc does it through /proc/self/fd: without /proc, the path itself, a socket */
		if (errno != EOPNOTSUPP || lstat(path, &st) < 0 || !S_ISSOCK(st.st_mode) ||
		    chmod(path, mode) < 0) {
			pr_err("--ctl %s: cannot set the socket's mode to %04o: %s", path, mode, strerror(errno));
			return -errno;
		}
	}
	if (a->group && fchownat(AT_FDCWD, path, (uid_t)-1, a->gid, AT_SYMLINK_NOFOLLOW) < 0) {
		int r = -errno;

		pr_err("--ctl %s: cannot give the socket to group %d: %s (vmm's user must be root or a "
		       "member of the --ctl-group)", path, (int)a->gid, strerror(-r));
		return r;
	}
	return 0;
}

int ctl_server_start(struct ctl_server *s, const char *path, const struct ctl_access *access,
		     const struct ctl_ops *ops)
{
	struct sockaddr_un a;
	int r = addr_of(path, &a);

	memset(s, 0, sizeof(*s));
	s->fd = s->stopfd = -1;
	if (r < 0)
		return r;
	s->ops = *ops;
	if (access)
		s->access = *access;
	s->uid = geteuid();
	snprintf(s->path, sizeof(s->path), "%s", path);
	s->fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (s->fd < 0)
		return -errno;
	if (bind(s->fd, (struct sockaddr *)&a, sizeof(a)) < 0) {
		if (errno != EADDRINUSE)
			goto fail;
		/* someone listening there? then it is taken; else a stale file of a vmm that died */
		int probe = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
		struct stat st;
		bool live = probe >= 0 && connect(probe, (struct sockaddr *)&a, sizeof(a)) == 0;

		if (probe >= 0)
			close(probe);
		if (live || stat(path, &st) < 0 || !S_ISSOCK(st.st_mode)) {
			pr_err("--ctl %s: %s; choose another path", path,
			       live ? "another vmm is listening there" : "the path exists and is not a socket");
			close(s->fd);
			s->fd = -1;
			return -EADDRINUSE;
		}
		unlink(path);
		if (bind(s->fd, (struct sockaddr *)&a, sizeof(a)) < 0)
			goto fail;
	}
	if ((r = set_access(path, &s->access)) < 0) {
		unlink(path);
		close(s->fd);
		s->fd = -1;
		return r;
	}
	if (listen(s->fd, 4) < 0)
		goto fail;
	s->stopfd = eventfd(0, EFD_CLOEXEC);
	if (s->stopfd < 0 || pthread_create(&s->thread, NULL, server_thread, s) != 0)
		goto fail;
	s->started = true;
	return 0;
fail:
	r = -errno;
	pr_err("--ctl %s: cannot listen there: %s", path, strerror(errno));
	ctl_server_stop(s);
	return r ? r : -EIO;
}

void ctl_server_stop(struct ctl_server *s)
{
	if (s->started) {
		eventfd_write(s->stopfd, 1);
		pthread_join(s->thread, NULL);
		s->started = false;
		unlink(s->path);
	}
	if (s->fd >= 0)
		close(s->fd);
	if (s->stopfd >= 0)
		close(s->stopfd);
	s->fd = s->stopfd = -1;
}

int ctl_request_within(const char *path, const char *req, char *buf, size_t size, int timeout_ms)
{
	struct sockaddr_un a;
	struct timespec end;
	int r = addr_of(path, &a);

	if (r < 0)
		return r;
	int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);

	if (fd < 0)
		return -errno;
	deadline_in(&end, timeout_ms);
	/* a full backlog blocks connect, and a full socket buffer write, for at most this long */
	struct timeval tv = { timeout_ms / 1000, timeout_ms % 1000 * 1000 };

	setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof(tv));
	if (connect(fd, (struct sockaddr *)&a, sizeof(a)) < 0) {
		r = -errno;
		pr_err("cannot reach the vmm at %s: %s (is it running with --ctl %s?)", path, strerror(-r), path);
		close(fd);
		return r;
	}
	size_t len = strlen(req), got = 0;

	if (write(fd, req, len) != (ssize_t)len || write(fd, "\n", 1) != 1) {
		close(fd);
		return -EIO;
	}
	shutdown(fd, SHUT_WR);
	while (got + 1 < size) {
		struct pollfd p = { fd, POLLIN, 0 };
		int left = ms_left(&end), n = left ? poll(&p, 1, left) : 0;

		if (n < 0 && errno == EINTR)
			continue;
		if (n == 0) {
			pr_err("the vmm at %s did not answer within %.1f s: is it stopped (SIGSTOP, a debugger) "
			       "or hung?", path, timeout_ms / 1000.0);
			close(fd);
			return -ETIMEDOUT;
		}
		ssize_t k = n < 0 ? -1 : read(fd, buf + got, size - 1 - got);

		if (k < 0 && errno == EINTR)
			continue;
		if (k <= 0)
			break;
		got += k;
		if (memchr(buf, '\n', got))
			break;
	}
	buf[got] = 0;
	close(fd);
	return got ? 0 : -EIO;
}

int ctl_request(const char *path, const char *req, char *buf, size_t size)
{
	return ctl_request_within(path, req, buf, size, CTL_CLIENT_TIMEOUT_MS);
}
