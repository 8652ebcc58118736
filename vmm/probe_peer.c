// SPDX-License-Identifier: MIT
/*
 * The probe's UDP peer: checks the host interface, binds its IPv6 link-local address, and answers
 * each request from its own thread (poll on the socket and a stop eventfd; at most PROBE_PEER_BURST
 * datagrams answered between polls, so a flood cannot keep it from seeing the stop), at most
 * PROBE_PEER_RATE a second to each source.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <ifaddrs.h>
#include <poll.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include "core/hot.h"
#include "guest/probe_proto.h"
#include "core/log.h"
#include "vmm/probe_peer.h"

VMM_HOT_VF int probe_peer_parse(const char *arg, char *ifname, size_t size, uint16_t *port)
{
	static const char name_chars[] = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_.-@";
	size_t n = strcspn(arg, ",");
	const char *opt = arg + n;
	char *end = NULL;
	unsigned long v = 0;

	*port = PROBE_PEER_PORT;
	/* the name goes into messages and JSON as it is: the characters interface names use */
	if (!n || n >= size || n >= IF_NAMESIZE || strspn(arg, name_chars) < n) {
		pr_err("--probe-peer %s: expected IFNAME[,port=N]: the host interface the guest's NIC reaches "
		       "(a tap, or a passed-through VF's PF), under %d characters of letters, digits, '_.-@'",
		       arg, IF_NAMESIZE);
		return -EINVAL;
	}
	memcpy(ifname, arg, n);
	ifname[n] = 0;
	if (!*opt)
		return 0;
	if (!strncmp(opt, ",port=", 6) && opt[6] >= '0' && opt[6] <= '9') {
		errno = 0;
		v = strtoul(opt + 6, &end, 10);
	}
	if (!end || errno || *end || v < 1 || v > 65535) {
		pr_err("--probe-peer %s: expected IFNAME[,port=N] with N from 1 to 65535 (the probe's port=, "
		       "default %d)", arg, PROBE_PEER_PORT);
		return -EINVAL;
	}
	*port = (uint16_t)v;
	return 0;
}

/* The interface's first IPv6 link-local address; -ENOENT when it has none. */
static int link_local_of(const char *ifname, struct in6_addr *out)
{
	struct ifaddrs *ifa, *i;
	int r = -ENOENT;

	if (getifaddrs(&ifa) < 0)
		return -errno;
	for (i = ifa; i; i = i->ifa_next) {
		const struct sockaddr_in6 *s = (const struct sockaddr_in6 *)i->ifa_addr;

		if (s && s->sin6_family == AF_INET6 && !strcmp(i->ifa_name, ifname) &&
		    IN6_IS_ADDR_LINKLOCAL(&s->sin6_addr)) {
			*out = s->sin6_addr;
			r = 0;
			break;
		}
	}
	freeifaddrs(ifa);
	return r;
}

VMM_HOT_VF int probe_peer_open_addr(struct probe_peer *p, const char *ifname, const struct in6_addr *addr, uint16_t port)
{
	struct sockaddr_in6 sa = { .sin6_family = AF_INET6, .sin6_port = htons(port), .sin6_addr = *addr };
	int one = 1;

	memset(p, 0, sizeof(*p));
	p->fd = p->stopfd = -1;
	snprintf(p->ifname, sizeof(p->ifname), "%s", ifname);
	p->ifindex = if_nametoindex(ifname);
	p->addr = *addr;
	p->port = port;
	p->rate = PROBE_PEER_RATE;
	p->rate_burst = PROBE_PEER_RATE_BURST;
	inet_ntop(AF_INET6, addr, p->addr_str, sizeof(p->addr_str));
	if (!p->ifindex) {
		pr_err("--probe-peer %s: no such network interface (ip link lists them)", ifname);
		return -ENODEV;
	}
	if (IN6_IS_ADDR_LINKLOCAL(addr))
		sa.sin6_scope_id = p->ifindex;
	p->fd = socket(AF_INET6, SOCK_DGRAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
	if (p->fd < 0) {
		pr_err("--probe-peer %s: cannot open a UDP socket: %s", ifname, strerror(errno));
		return -errno;
	}
	/* the scope already ties a link-local address to the interface; without CAP_NET_RAW this
	 * second tie is refused, which changes nothing */
	setsockopt(p->fd, SOL_SOCKET, SO_BINDTODEVICE, ifname, strlen(ifname) + 1);
	/* an address still in duplicate address detection (a link just up) can be bound already */
	setsockopt(p->fd, IPPROTO_IPV6, IPV6_FREEBIND, &one, sizeof(one));
	if (bind(p->fd, (struct sockaddr *)&sa, sizeof(sa)) < 0) {
		int err = errno;

		pr_err("--probe-peer %s: cannot bind [%s%%%s]:%u: %s%s", ifname, p->addr_str, ifname, port,
		       strerror(err), err == EADDRINUSE ? " (another program holds the port: give another with "
		       ",port=N, and the probe the same port=N)" : "");
		close(p->fd);
		p->fd = -1;
		return -err;
	}
	socklen_t len = sizeof(sa);

	if (!port && getsockname(p->fd, (struct sockaddr *)&sa, &len) == 0)
		p->port = ntohs(sa.sin6_port); /* port 0: the kernel's choice (the unit tests) */
	p->open = true;
	return 0;
}

VMM_HOT_VF int probe_peer_open(struct probe_peer *p, const char *ifname, uint16_t port)
{
	struct ifreq ifr = { 0 };
	struct in6_addr addr;
	unsigned int index = if_nametoindex(ifname);
	int s, r;

	p->open = p->running = false;
	p->fd = p->stopfd = -1;
	p->answer_ns = NULL; /* a refused open leaves nothing for probe_peer_close to free */
	p->answer_cap = 0;
	atomic_store(&p->answer_n, 0);
	if (!index) {
		pr_err("--probe-peer %s: no such network interface (ip link lists them; a tap vmm creates "
		       "for --net exists only while vmm runs: create it first with ip tuntap)", ifname);
		return -ENODEV;
	}
	snprintf(ifr.ifr_name, sizeof(ifr.ifr_name), "%s", ifname);
	s = socket(AF_INET6, SOCK_DGRAM | SOCK_CLOEXEC, 0);
	r = s < 0 ? -errno : ioctl(s, SIOCGIFFLAGS, &ifr) < 0 ? -errno : 0;
	if (s >= 0)
		close(s);
	if (r < 0) {
		pr_err("--probe-peer %s: cannot read its flags: %s", ifname, strerror(-r));
		return r;
	}
	if (!(ifr.ifr_flags & IFF_UP)) {
		pr_err("--probe-peer %s: the interface is down: ip link set %s up (and wait for its IPv6 "
		       "link-local address)", ifname, ifname);
		return -ENETDOWN;
	}
	if ((r = link_local_of(ifname, &addr)) < 0) {
		pr_err("--probe-peer %s: the interface has no IPv6 link-local address (IPv6 off on it? "
		       "sysctl net.ipv6.conf.%s.disable_ipv6=0; one comes a moment after the link is up, or add "
		       "one: ip -6 addr add fe80::1/64 dev %s)", ifname, ifname, ifname);
		return r == -ENOENT ? -EADDRNOTAVAIL : r;
	}
	return probe_peer_open_addr(p, ifname, &addr, port);
}

/* From the link: a link-local source on the peer's interface (any on loopback: the unit tests'
 * peer), not the peer's own address and port (a guest can forge that on the tap). */
static bool from_the_link(const struct probe_peer *p, const struct sockaddr_in6 *src, socklen_t slen)
{
	bool self = src->sin6_port == htons(p->port) && IN6_ARE_ADDR_EQUAL(&src->sin6_addr, &p->addr);

	if (slen < sizeof(*src) || src->sin6_family != AF_INET6 || self)
		return false;
	return IN6_IS_ADDR_LOOPBACK(&p->addr) ||
	       (IN6_IS_ADDR_LINKLOCAL(&src->sin6_addr) && src->sin6_scope_id == p->ifindex);
}

/* A probe request, never an answer: answering answers is what kept two peers echoing each other. */
static bool is_request(const uint8_t *buf, ssize_t n)
{
	return n == PROBE_UDP_SIZE && buf[PROBE_UDP_SIZE - 1] == 0;
}

static uint64_t now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

/* src's bucket: its own, a free slot (one whose bucket is full), or the shared last one when every
 * slot is busy, so a guest forging many sources gets a bounded table and a bounded rate. */
static struct probe_peer_source *bucket_of(struct probe_peer *p, const struct sockaddr_in6 *src, uint64_t now)
{
	struct probe_peer_source *free_slot = NULL;

	for (unsigned int i = 0; i < PROBE_PEER_SOURCES; i++) {
		struct probe_peer_source *s = &p->src[i];

		if (s->port == src->sin6_port && s->scope == src->sin6_scope_id &&
		    IN6_ARE_ADDR_EQUAL(&s->addr, &src->sin6_addr))
			return s;
		if (!free_slot && s->full_ns <= now)
			free_slot = s;
	}
	if (!free_slot)
		return &p->src[PROBE_PEER_SOURCES];
	*free_slot = (struct probe_peer_source){ src->sin6_addr, src->sin6_scope_id, src->sin6_port, now };
	return free_slot;
}

/* One answer from src's bucket: each adds 1/rate s to the time it is full again, allowed while that
 * stays within rate_burst answers' time of now (GCRA, a token bucket in one number). */
static bool take_token(struct probe_peer *p, const struct sockaddr_in6 *src)
{
	uint64_t now = now_ns(), cost = 1000000000u / p->rate;
	struct probe_peer_source *s = bucket_of(p, src, now);
	uint64_t full = (s->full_ns > now ? s->full_ns : now) + cost;

	if (full - now > cost * p->rate_burst)
		return false;
	s->full_ns = full;
	return true;
}

/* The counter of the reason a datagram of n bytes goes unanswered, or NULL to answer it. */
static _Atomic uint64_t *drop_reason(struct probe_peer *p, const struct sockaddr_in6 *src, socklen_t slen,
				     const uint8_t *buf, ssize_t n)
{
	if ((size_t)n > PROBE_PEER_MAX)
		return &p->n.oversized;
	if (!from_the_link(p, src, slen))
		return &p->n.foreign;
	if (!is_request(buf, n))
		return &p->n.not_request;
	if (!take_token(p, src))
		return &p->n.limited;
	return NULL;
}

/* Answers what waits on the socket, up to PROBE_PEER_BURST datagrams so the stop eventfd is
 * polled between bursts whatever arrives; false when the socket failed for good. */
VMM_HOT_VF static bool echo_pending(struct probe_peer *p)
{
	uint8_t buf[PROBE_PEER_MAX];

	for (unsigned int burst = 0; burst < PROBE_PEER_BURST; burst++) {
		struct sockaddr_in6 src;
		socklen_t slen = sizeof(src);
		/* MSG_TRUNC: the datagram's real length, so a longer one is seen as such and dropped */
		ssize_t n = recvfrom(p->fd, buf, sizeof(buf), MSG_TRUNC, (struct sockaddr *)&src, &slen);
		_Atomic uint64_t *drop;

		if (n < 0)
			return errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR;
		if ((drop = drop_reason(p, &src, slen, buf, n))) {
			atomic_fetch_add_explicit(drop, 1, memory_order_relaxed);
			continue;
		}
		buf[PROBE_UDP_SIZE - 1] = PROBE_UDP_ANSWER;
		size_t logged = p->answer_ns ? atomic_load_explicit(&p->answer_n, memory_order_relaxed) : 0;

		if (p->answer_ns && logged < p->answer_cap) { /* the stamp before the send: the target */
			struct timespec ts;

			clock_gettime(CLOCK_MONOTONIC_RAW, &ts);
			p->answer_ns[logged] = (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
		}
		if (sendto(p->fd, buf, (size_t)n, MSG_DONTWAIT, (struct sockaddr *)&src, slen) != n) {
			atomic_fetch_add_explicit(&p->n.send_errors, 1, memory_order_relaxed);
			continue;
		}
		if (p->answer_ns && logged < p->answer_cap)
			atomic_store_explicit(&p->answer_n, logged + 1, memory_order_release);
		atomic_fetch_add_explicit(&p->n.answered, 1, memory_order_relaxed);
		atomic_fetch_add_explicit(&p->n.bytes, (uint64_t)n, memory_order_relaxed);
	}
	return true;
}

VMM_HOT_VF static void *peer_thread(void *arg)
{
	struct probe_peer *p = arg;

	if (sandbox_enter(p->sandbox, SANDBOX_PEER) < 0)
		return NULL; /* said why; the probe sees no answer and reports a skip */
	for (;;) {
		struct pollfd f[2] = { { p->fd, POLLIN, 0 }, { p->stopfd, POLLIN, 0 } };

		if (poll(f, 2, -1) < 0 && errno != EINTR)
			break;
		if (f[1].revents)
			break;
		if (f[0].revents & POLLIN && !echo_pending(p))
			break;
	}
	return NULL;
}

VMM_HOT_VF int probe_peer_start(struct probe_peer *p, enum sandbox_mode sandbox)
{
	int r;

	p->sandbox = sandbox;
	p->stopfd = eventfd(0, EFD_CLOEXEC);
	if (p->stopfd < 0)
		return -errno;
	if ((r = pthread_create(&p->thread, NULL, peer_thread, p)) != 0) {
		pr_err("--probe-peer: cannot start its thread: %s", strerror(r));
		return -r;
	}
	p->running = true;
	pr_info("probe peer: answering UDP on [%s%%%s]:%u (the guest's probe reads %s%s)", p->addr_str,
		p->ifname, p->port, PROBE_PEER_PARAM, p->addr_str);
	return 0;
}

VMM_HOT void probe_peer_close(struct probe_peer *p)
{
	if (p->running) {
		eventfd_write(p->stopfd, 1);
		pthread_join(p->thread, NULL);
		p->running = false;
	}
	if (p->stopfd >= 0 && p->open)
		close(p->stopfd);
	if (p->fd >= 0 && p->open)
		close(p->fd);
	p->fd = p->stopfd = -1;
	p->open = false;
	free(p->answer_ns);
	p->answer_ns = NULL;
	p->answer_cap = 0;
	atomic_store(&p->answer_n, 0);
}

int probe_peer_log_answers(struct probe_peer *p, size_t cap)
{
	if (p->running || !cap)
		return -EINVAL;
	free(p->answer_ns);
	/* untouched pages cost nothing: only the answers sent are resident */
	p->answer_ns = calloc(cap, sizeof(*p->answer_ns));
	p->answer_cap = p->answer_ns ? cap : 0;
	atomic_store(&p->answer_n, 0);
	return p->answer_ns ? 0 : -ENOMEM;
}

const uint64_t *probe_peer_answers(const struct probe_peer *p, size_t *n)
{
	*n = p->answer_ns ? atomic_load_explicit(&((struct probe_peer *)p)->answer_n, memory_order_acquire) : 0;
	return p->answer_ns;
}

VMM_HOT void probe_peer_summary(const struct probe_peer *p, FILE *f)
{
	fprintf(f, "vmm: probe peer [%s%%%s]:%u: answered %llu requests (%llu bytes); dropped %llu oversized, "
		"%llu not from a link-local address on %s (or from its own), %llu not a request (an answer, or "
		"not %d bytes), %llu past %u a second from one source; %llu answers failed to send\n",
		p->addr_str, p->ifname, p->port, (unsigned long long)atomic_load(&p->n.answered), (unsigned long long)atomic_load(&p->n.bytes),
		(unsigned long long)atomic_load(&p->n.oversized), (unsigned long long)atomic_load(&p->n.foreign),
		p->ifname, (unsigned long long)atomic_load(&p->n.not_request), PROBE_UDP_SIZE,
		(unsigned long long)atomic_load(&p->n.limited), p->rate, (unsigned long long)atomic_load(&p->n.send_errors));
}

VMM_HOT void probe_peer_json(const struct probe_peer *p, FILE *f)
{
	fprintf(f, "{\"ifname\":\"%s\",\"addr\":\"%s\",\"port\":%u,\"answered\":%llu,\"bytes\":%llu,\"oversized\":%llu,"
		"\"foreign\":%llu,\"not_request\":%llu,\"limited\":%llu,\"send_errors\":%llu}", p->ifname, p->addr_str,
		p->port, (unsigned long long)atomic_load(&p->n.answered), (unsigned long long)atomic_load(&p->n.bytes),
		(unsigned long long)atomic_load(&p->n.oversized), (unsigned long long)atomic_load(&p->n.foreign),
		(unsigned long long)atomic_load(&p->n.not_request), (unsigned long long)atomic_load(&p->n.limited),
		(unsigned long long)atomic_load(&p->n.send_errors));
}
