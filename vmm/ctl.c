// SPDX-License-Identifier: MIT
/*
 * The control socket's server and client. One thread serves the socket, one connection at a time
 * (a request is answered in microseconds; a client that stalls is cut off after 5 s), so nothing a
 * client does reaches a vCPU thread. The path is refused when a live vmm already listens there, and
 * taken over when it is a stale socket file left by a vmm that died.
 */
#include <errno.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#include "vmm/ctl.h"
#include "vmm/log.h"

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

static void serve(struct ctl_server *s, int c)
{
	struct timeval tv = { 5, 0 };
	char line[CTL_LINE_MAX + 2];
	size_t have = 0;

	setsockopt(c, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
	setsockopt(c, SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof(tv));
	FILE *f = fdopen(dup(c), "w");

	if (!f)
		return;
	for (;;) {
		ssize_t n = recv(c, line + have, sizeof(line) - 1 - have, 0);

		if (n <= 0)
			break;
		have += n;
		char *nl;

		while ((nl = memchr(line, '\n', have))) {
			ctl_handle(&s->ops, line, nl - line, f);
			fflush(f);
			have -= nl + 1 - line;
			memmove(line, nl + 1, have);
		}
		if (have == sizeof(line) - 1) { /* a line longer than any request: answered, dropped */
			ctl_handle(&s->ops, line, have, f);
			fflush(f);
			have = 0;
		}
	}
	if (have) /* a last request without its newline */
		ctl_handle(&s->ops, line, have, f);
	fclose(f);
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
			serve(s, c);
			close(c);
		}
	}
	return NULL;
}

int ctl_server_start(struct ctl_server *s, const char *path, const struct ctl_ops *ops)
{
	struct sockaddr_un a;
	int r = addr_of(path, &a);

	memset(s, 0, sizeof(*s));
	s->fd = s->stopfd = -1;
	if (r < 0)
		return r;
	s->ops = *ops;
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

int ctl_request(const char *path, const char *req, char *buf, size_t size)
{
	struct sockaddr_un a;
	int r = addr_of(path, &a);

	if (r < 0)
		return r;
	int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);

	if (fd < 0)
		return -errno;
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
		ssize_t n = read(fd, buf + got, size - 1 - got);

		if (n <= 0)
			break;
		got += n;
		if (memchr(buf, '\n', got))
			break;
	}
	buf[got] = 0;
	close(fd);
	return got ? 0 : -EIO;
}
