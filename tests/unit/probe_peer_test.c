// SPDX-License-Identifier: MIT
/*
 * The probe's UDP peer (vmm/probe_peer.c): --probe-peer's value, the interface checks, and the
 * echo thread: on loopback (::1 on lo) for anyone, and as root on a tap's own IPv6 link-local
 * address in a network namespace the test makes (skipped otherwise). Hostile datagrams: empty,
 * longer than PROBE_PEER_MAX, not a request, an answer (dropped and counted, the next one still
 * answered); a forged source between two peers (on loopback, and on a veth pair in a namespace);
 * floods from one source and from more sources than the peer keeps buckets for.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <ifaddrs.h>
#include <linux/if_tun.h>
#include <linux/rtnetlink.h>
#include <linux/veth.h>
#include <poll.h>
#include <sched.h>
#include <stdio.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include "kselftest_harness.h"
#include "guest/probe_proto.h"
#include "vmm/probe_peer.h"

TEST(parse)
{
	char name[IF_NAMESIZE];
	uint16_t port;

	ASSERT_EQ(0, probe_peer_parse("eth0", name, sizeof(name), &port));
	EXPECT_STREQ("eth0", name);
	EXPECT_EQ(PROBE_PEER_PORT, port);
	ASSERT_EQ(0, probe_peer_parse("tap-1.2,port=9", name, sizeof(name), &port));
	EXPECT_STREQ("tap-1.2", name);
	EXPECT_EQ(9, port);
	ASSERT_EQ(0, probe_peer_parse("e,port=65535", name, sizeof(name), &port));
	EXPECT_EQ(65535, port);
	static const char *const bad[] = {
		"", ",port=9", "eth0,", "eth0,port=", "eth0,port=0", "eth0,port=65536", "eth0,port=-1",
		"eth0,port=+9", "eth0,port=9x", "eth0,port=9,port=10", "eth0,mtu=9", "a b", "a/b", "a\"b",
		"sixteen-chars-ab", "eth0,port=99999999999999999999",
	};
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		EXPECT_EQ(-EINVAL, probe_peer_parse(bad[i], name, sizeof(name), &port)) TH_LOG("'%s' accepted", bad[i]);
	}
}

TEST(interface_checks)
{
	struct probe_peer p;

	EXPECT_EQ(-ENODEV, probe_peer_open(&p, "vmm-nonesuch0", PROBE_PEER_PORT));
	EXPECT_FALSE(p.open);
	/* lo is up but has no link-local address: refused, nothing left open */
	EXPECT_EQ(-EADDRNOTAVAIL, probe_peer_open(&p, "lo", PROBE_PEER_PORT));
	EXPECT_FALSE(p.open);
	probe_peer_close(&p);
	/* a zeroed peer closes as nothing */
	memset(&p, 0, sizeof(p));
	probe_peer_close(&p);
	EXPECT_FALSE(p.open);
}

/* A request of len bytes to the peer; the answer's length, or -1 when none came within 1 s. */
static ssize_t ask(int c, const uint8_t *req, size_t len, uint8_t *rsp, size_t size)
{
	struct pollfd pf = { c, POLLIN, 0 };

	if (send(c, req, len, 0) != (ssize_t)len)
		return -2;
	if (poll(&pf, 1, 1000) != 1)
		return -1;
	return recv(c, rsp, size, 0);
}

static int client_to(const struct probe_peer *p)
{
	struct sockaddr_in6 to = { .sin6_family = AF_INET6, .sin6_port = htons(p->port), .sin6_addr = p->addr };
	int c = socket(AF_INET6, SOCK_DGRAM | SOCK_CLOEXEC, 0);

	if (IN6_IS_ADDR_LINKLOCAL(&p->addr))
		to.sin6_scope_id = p->ifindex;
	/* a link-local address fresh out of addrconf is tentative a moment: no source to pick yet */
	for (int i = 0; c >= 0 && connect(c, (struct sockaddr *)&to, sizeof(to)) < 0; i++) {
		if (errno != EADDRNOTAVAIL || i == 100) {
			close(c);
			return -1;
		}
		usleep(20 * 1000);
	}
	return c;
}

/* Requests answered, as answers (the request, its last byte PROBE_UDP_ANSWER); and what is not a
 * request dropped and counted: an empty datagram, one a byte short or long, an answer (what two
 * peers would echo each other), one longer than PROBE_PEER_MAX. The peer answers in order, so a
 * request sent after them is answered first if none of them was. */
static void exercise(struct __test_metadata *_metadata, struct probe_peer *p, int c)
{
	static uint8_t big[PROBE_PEER_MAX + 500];
	uint8_t rsp[PROBE_PEER_MAX + 600], answer[PROBE_UDP_SIZE] = { 0 };
	uint8_t next[PROBE_UDP_SIZE] = { 'n', 'e', 'x', 't' };

	for (uint32_t i = 0; i < 50; i++) {
		uint8_t req[PROBE_UDP_SIZE] = { 0 };

		memcpy(req, &i, sizeof(i));
		ASSERT_EQ(PROBE_UDP_SIZE, ask(c, req, sizeof(req), rsp, sizeof(rsp)));
		ASSERT_EQ(0, memcmp(req, rsp, PROBE_UDP_SIZE - 1));
		ASSERT_EQ(PROBE_UDP_ANSWER, rsp[PROBE_UDP_SIZE - 1]);
	}
	answer[PROBE_UDP_SIZE - 1] = PROBE_UDP_ANSWER;
	ASSERT_EQ(0, send(c, big, 0, 0));
	ASSERT_EQ(PROBE_UDP_SIZE - 1, send(c, big, PROBE_UDP_SIZE - 1, 0));
	ASSERT_EQ(PROBE_UDP_SIZE + 1, send(c, big, PROBE_UDP_SIZE + 1, 0));
	ASSERT_EQ(PROBE_UDP_SIZE, send(c, answer, sizeof(answer), 0));
	ASSERT_EQ(sizeof(big), send(c, big, sizeof(big), 0));
	ASSERT_EQ(PROBE_UDP_SIZE, ask(c, next, sizeof(next), rsp, sizeof(rsp)));
	EXPECT_EQ(0, memcmp(next, rsp, PROBE_UDP_SIZE - 1)) TH_LOG("not the answer to the last request");
	/* the thread counts an answer just after sending it */
	for (int i = 0; i < 100 && atomic_load(&p->n.answered) < 51; i++)
		usleep(10 * 1000);
	EXPECT_EQ(51, atomic_load(&p->n.answered));
	EXPECT_EQ(51 * PROBE_UDP_SIZE, atomic_load(&p->n.bytes));
	EXPECT_EQ(1, atomic_load(&p->n.oversized));
	EXPECT_EQ(4, atomic_load(&p->n.not_request));
	EXPECT_EQ(0, atomic_load(&p->n.limited));
	EXPECT_EQ(0, atomic_load(&p->n.send_errors));
}

TEST(echo_on_loopback)
{
	struct probe_peer p;
	char *text = NULL;
	size_t len = 0;

	ASSERT_EQ(0, probe_peer_open_addr(&p, "lo", &in6addr_loopback, 0));
	ASSERT_NE(0, p.port);
	ASSERT_EQ(0, probe_peer_start(&p, SANDBOX_OFF));
	int c = client_to(&p);

	ASSERT_GE(c, 0);
	exercise(_metadata, &p, c);
	close(c);
	FILE *m = open_memstream(&text, &len);

	probe_peer_json(&p, m);
	fclose(m);
	EXPECT_NE(NULL, strstr(text, "\"ifname\":\"lo\",\"addr\":\"::1\"")) TH_LOG("%s", text);
	EXPECT_NE(NULL, strstr(text, "\"answered\":51,")) TH_LOG("%s", text);
	EXPECT_NE(NULL, strstr(text, "\"oversized\":1,")) TH_LOG("%s", text);
	EXPECT_NE(NULL, strstr(text, "\"not_request\":4,\"limited\":0,")) TH_LOG("%s", text);
	free(text);
	probe_peer_close(&p);
	EXPECT_FALSE(p.open);
	EXPECT_FALSE(p.running);
}

static void *closer(void *arg)
{
	probe_peer_close(arg);
	return NULL;
}

/* A datagram whose source is the peer's own address and port (sent here from its own socket; a
 * guest can forge one on the tap): echoing it sends it back to the peer by loopback, forever
 * (issue 19). It is dropped and counted as foreign; and the thread still stops at once while
 * datagrams keep arriving. */
TEST(own_address_not_echoed)
{
	struct probe_peer p;
	struct sockaddr_in6 self = { .sin6_family = AF_INET6, .sin6_addr = in6addr_loopback };
	uint8_t rsp[64], req[PROBE_UDP_SIZE] = { 's', 'e', 'l', 'f' };

	ASSERT_EQ(0, probe_peer_open_addr(&p, "lo", &in6addr_loopback, 0));
	self.sin6_port = htons(p.port);
	ASSERT_EQ(0, probe_peer_start(&p, SANDBOX_OFF));
	ASSERT_EQ(sizeof(req), sendto(p.fd, req, sizeof(req), 0, (struct sockaddr *)&self, sizeof(self)));
	usleep(200 * 1000);
	EXPECT_EQ(0, atomic_load(&p.n.answered)) TH_LOG("its own datagram echoed %llu times",
		(unsigned long long)atomic_load(&p.n.answered));
	EXPECT_EQ(1, atomic_load(&p.n.foreign));
	/* a real client is still answered */
	int c = client_to(&p);

	ASSERT_GE(c, 0);
	EXPECT_EQ(PROBE_UDP_SIZE, ask(c, req, sizeof(req), rsp, sizeof(rsp)));
	/* a flood of requests while it stops: the stop is seen within a bounded batch */
	for (int i = 0; i < 200; i++)
		send(c, req, sizeof(req), MSG_DONTWAIT);
	pthread_t t;
	struct timespec dl;

	ASSERT_EQ(0, pthread_create(&t, NULL, closer, &p));
	clock_gettime(CLOCK_REALTIME, &dl);
	dl.tv_sec += 2;
	ASSERT_EQ(0, pthread_timedjoin_np(t, NULL, &dl)) TH_LOG("probe_peer_close did not return in 2 s");
	EXPECT_FALSE(p.running);
	close(c);
}

/* CPU time a peer's thread has used so far (ns). */
static uint64_t thread_cpu_ns(const struct probe_peer *p)
{
	struct timespec ts = { 0, 0 };
	clockid_t id;

	if (pthread_getcpuclockid(p->thread, &id) == 0)
		clock_gettime(id, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

static uint64_t answers(const struct probe_peer *a, const struct probe_peer *b)
{
	return atomic_load(&a->n.answered) + atomic_load(&b->n.answered);
}

/* Two peers on one link (a, b: both started), and one probe request to a whose source is b's
 * address and port, sent from b's own socket as a guest forges it on its tap (issue 31): a answers
 * b, and b must not answer that answer, or the two echo each other as fast as they can. Over a
 * window of 300 ms at most the one answer, and the two threads idle. */
static void forged_source_between(struct __test_metadata *_metadata, struct probe_peer *a, struct probe_peer *b)
{
	struct sockaddr_in6 to = { .sin6_family = AF_INET6, .sin6_port = htons(a->port), .sin6_addr = a->addr };
	uint8_t req[PROBE_UDP_SIZE] = { 7 };

	if (IN6_IS_ADDR_LINKLOCAL(&a->addr))
		to.sin6_scope_id = b->ifindex; /* out of b's side of the link, in at a's */
	uint64_t cpu0 = thread_cpu_ns(a) + thread_cpu_ns(b);

	ASSERT_EQ(sizeof(req), sendto(b->fd, req, sizeof(req), 0, (struct sockaddr *)&to, sizeof(to)));
	usleep(300 * 1000);
	uint64_t n = answers(a, b), cpu = thread_cpu_ns(a) + thread_cpu_ns(b) - cpu0;

	usleep(100 * 1000);
	uint64_t later = answers(a, b);

	TH_LOG("in 300 ms: %llu answers (a %llu, b %llu), %llu more in the next 100 ms; the threads' CPU %.1f ms",
	       (unsigned long long)n, (unsigned long long)atomic_load(&a->n.answered),
	       (unsigned long long)atomic_load(&b->n.answered), (unsigned long long)(later - n), cpu / 1e6);
	EXPECT_EQ(1, atomic_load(&a->n.answered));
	EXPECT_EQ(0, atomic_load(&b->n.answered));
	EXPECT_EQ(1, atomic_load(&b->n.not_request)); /* a's answer */
	EXPECT_EQ(n, later); /* the exchange is over, not slowed */
	EXPECT_LT(cpu, 50 * 1000000ull); /* not spinning: a few datagrams take microseconds */
}

TEST(two_peers_on_loopback_do_not_echo_each_other)
{
	struct probe_peer a, b;

	ASSERT_EQ(0, probe_peer_open_addr(&a, "lo", &in6addr_loopback, 0));
	ASSERT_EQ(0, probe_peer_open_addr(&b, "lo", &in6addr_loopback, 0));
	ASSERT_EQ(0, probe_peer_start(&a, SANDBOX_OFF));
	ASSERT_EQ(0, probe_peer_start(&b, SANDBOX_OFF));
	forged_source_between(_metadata, &a, &b);
	probe_peer_close(&a);
	probe_peer_close(&b);
}

static double secs_since(const struct timespec *t0)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return (double)(t.tv_sec - t0->tv_sec) + (t.tv_nsec - t0->tv_nsec) / 1e9;
}

/* Waits until the peer has seen n datagrams it answered or limited (at most 1 s). */
static void wait_seen(const struct probe_peer *p, uint64_t n)
{
	for (int i = 0; i < 100 && atomic_load(&p->n.answered) + atomic_load(&p->n.limited) < n; i++)
		usleep(10 * 1000);
}

/* Sockets, each a source (address and port): twice PROBE_PEER_SOURCES, and few enough datagrams
 * for the peer's receive queue (rmem_default) even if its thread falls behind (under TSan). */
#define SOURCES (2 * PROBE_PEER_SOURCES)

/* Answers are capped per source (a token bucket: rate_burst at once, then rate a second), the rest
 * dropped and counted, and the thread stays idle; another source has a bucket of its own; more
 * sources than the table holds share one bucket, so what a guest sends, from whatever source it
 * forges, bounds vmm's answers and its memory. A low rate (20 a second, 5 at once) keeps it short. */
TEST(answers_capped_per_source)
{
	const uint64_t rate = 20, burst = 5, flood = 100;
	struct probe_peer p;
	uint8_t req[PROBE_UDP_SIZE] = { 0 }, rsp[64];
	struct timespec t0;
	int c, d, many[SOURCES];

	ASSERT_EQ(0, probe_peer_open_addr(&p, "lo", &in6addr_loopback, 0));
	p.rate = rate;
	p.rate_burst = burst;
	ASSERT_EQ(0, probe_peer_start(&p, SANDBOX_OFF));
	c = client_to(&p);
	d = client_to(&p);
	ASSERT_GE(c, 0);
	ASSERT_GE(d, 0);
	uint64_t cpu0 = thread_cpu_ns(&p);

	clock_gettime(CLOCK_MONOTONIC, &t0);
	for (uint64_t i = 0; i < flood; i++)
		ASSERT_EQ(sizeof(req), send(c, req, sizeof(req), 0));
	wait_seen(&p, flood);
	uint64_t answered = atomic_load(&p.n.answered), max = burst + (uint64_t)(rate * secs_since(&t0)) + 1;

	TH_LOG("one source, %llu requests: %llu answered (at most %llu), %llu limited", (unsigned long long)flood,
	       (unsigned long long)answered, (unsigned long long)max, (unsigned long long)atomic_load(&p.n.limited));
	EXPECT_GE(answered, burst);
	EXPECT_LE(answered, max);
	EXPECT_EQ(flood, answered + atomic_load(&p.n.limited));
	/* another source: its own bucket, answered at once */
	EXPECT_EQ(PROBE_UDP_SIZE, ask(d, req, sizeof(req), rsp, sizeof(rsp)));
	wait_seen(&p, flood + 1); /* counted just after it is sent */
	/* SOURCES sources, burst + 1 requests each: c and d hold 2 slots, the first others to come get
	 * the PROBE_PEER_SOURCES - 2 left, and the rest share one bucket */
	for (int i = 0; i < SOURCES; i++) {
		many[i] = client_to(&p);
		ASSERT_GE(many[i], 0);
	}
	uint64_t before = atomic_load(&p.n.answered) + atomic_load(&p.n.limited), base = atomic_load(&p.n.answered);

	clock_gettime(CLOCK_MONOTONIC, &t0);
	for (int i = 0; i < SOURCES; i++)
		for (uint64_t j = 0; j <= burst; j++)
			ASSERT_EQ(sizeof(req), send(many[i], req, sizeof(req), 0));
	wait_seen(&p, before + SOURCES * (burst + 1));
	answered = atomic_load(&p.n.answered) - base;
	max = (PROBE_PEER_SOURCES - 2 + 1) * (burst + (uint64_t)(rate * secs_since(&t0)) + 1);
	TH_LOG("%d sources, %llu requests: %llu answered (at most %llu)", SOURCES,
	       (unsigned long long)(SOURCES * (burst + 1)), (unsigned long long)answered, (unsigned long long)max);
	EXPECT_LE(answered, max);
	EXPECT_GE(answered, (PROBE_PEER_SOURCES - 2) * burst);
	uint64_t cpu = thread_cpu_ns(&p) - cpu0;

	TH_LOG("the thread's CPU: %.1f ms", cpu / 1e6);
	EXPECT_LT(cpu, 100 * 1000000ull);
	for (int i = 0; i < SOURCES; i++)
		close(many[i]);
	close(c);
	close(d);
	probe_peer_close(&p);
}

static int set_flags(const char *name, short on)
{
	struct ifreq ifr = { 0 };
	int s = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0), r = -1;

	snprintf(ifr.ifr_name, sizeof(ifr.ifr_name), "%s", name);
	if (s >= 0 && ioctl(s, SIOCGIFFLAGS, &ifr) == 0) {
		ifr.ifr_flags |= on;
		r = ioctl(s, SIOCSIFFLAGS, &ifr);
	}
	if (s >= 0)
		close(s);
	return r;
}

static void put(const char *path, const char *v)
{
	int fd = open(path, O_WRONLY | O_CLOEXEC);

	if (fd >= 0) {
		if (write(fd, v, strlen(v)) < 0) {
			/* the test sees the consequence */
		}
		close(fd);
	}
}

/* A peer on an interface's link-local address, once it has one (a moment after the link is up). */
static int open_link_local(struct probe_peer *p, const char *ifname)
{
	int r = -1;

	for (int i = 0; i < 40 && r; i++) {
		r = probe_peer_open(p, ifname, 0);
		if (r)
			usleep(50 * 1000);
	}
	return r;
}

/* As root, in a network namespace of its own: a tap down, then up with its link-local address. */
TEST(tap_link_local_in_a_namespace)
{
	struct ifreq ifr = { .ifr_flags = IFF_TAP | IFF_NO_PI };
	struct probe_peer p;
	int tfd;

	if (geteuid() != 0 || unshare(CLONE_NEWNET) < 0)
		SKIP(return, "needs root for a network namespace and a tap (unshare: %s)", strerror(errno));
	tfd = open("/dev/net/tun", O_RDWR | O_CLOEXEC);
	if (tfd < 0)
		SKIP(return, "no /dev/net/tun: %s", strerror(errno));
	/* no duplicate address detection: the address is usable at once */
	put("/proc/sys/net/ipv6/conf/default/accept_dad", "0");
	snprintf(ifr.ifr_name, sizeof(ifr.ifr_name), "vmmpp0");
	ASSERT_EQ(0, ioctl(tfd, TUNSETIFF, &ifr)) TH_LOG("TUNSETIFF: %s", strerror(errno));
	EXPECT_EQ(-ENETDOWN, probe_peer_open(&p, "vmmpp0", PROBE_PEER_PORT));
	ASSERT_EQ(0, set_flags("lo", IFF_UP));
	ASSERT_EQ(0, set_flags("vmmpp0", IFF_UP));
	ASSERT_EQ(0, open_link_local(&p, "vmmpp0"));
	char a[INET6_ADDRSTRLEN];

	EXPECT_TRUE(IN6_IS_ADDR_LINKLOCAL(&p.addr)) TH_LOG("%s", inet_ntop(AF_INET6, &p.addr, a, sizeof(a)));
	ASSERT_EQ(0, probe_peer_start(&p, SANDBOX_OFF));
	int c = client_to(&p);

	ASSERT_GE(c, 0);
	exercise(_metadata, &p, c);
	EXPECT_EQ(0, atomic_load(&p.n.foreign));
	close(c);
	/* a second peer on the same port: refused with what to do */
	struct probe_peer q;

	EXPECT_EQ(-EADDRINUSE, probe_peer_open(&q, "vmmpp0", p.port));
	probe_peer_close(&p);
	close(tfd);
}

/* An rtnetlink attribute at the end of the message in buf (its nlmsg_len grown); returns it for
 * nesting (the caller closes a nest by setting rta_len). */
static struct rtattr *nl_put(struct nlmsghdr *h, unsigned short type, const void *data, size_t len)
{
	struct rtattr *a = (struct rtattr *)((char *)h + NLMSG_ALIGN(h->nlmsg_len));

	a->rta_type = type;
	a->rta_len = (unsigned short)RTA_LENGTH(len);
	if (len)
		memcpy(RTA_DATA(a), data, len);
	h->nlmsg_len = NLMSG_ALIGN(h->nlmsg_len) + RTA_ALIGN(a->rta_len);
	return a;
}

static void nl_end(struct nlmsghdr *h, struct rtattr *nest)
{
	nest->rta_len = (unsigned short)((char *)h + h->nlmsg_len - (char *)nest);
}

/* What `ip link add A type veth peer name B` does: 0 or -errno (the kernel's answer). */
static int veth_add(const char *a, const char *b)
{
	union {
		struct nlmsghdr h;
		char buf[512];
	} m = { .h = { .nlmsg_len = NLMSG_LENGTH(sizeof(struct ifinfomsg)), .nlmsg_type = RTM_NEWLINK,
		      .nlmsg_flags = NLM_F_REQUEST | NLM_F_ACK | NLM_F_CREATE | NLM_F_EXCL } };
	struct ifinfomsg peer = { .ifi_family = AF_UNSPEC };
	union {
		struct nlmsghdr h;
		char buf[512];
	} r;
	int fd = socket(AF_NETLINK, SOCK_RAW | SOCK_CLOEXEC, NETLINK_ROUTE), err = -EIO;

	if (fd < 0)
		return -errno;
	nl_put(&m.h, IFLA_IFNAME, a, strlen(a) + 1);
	struct rtattr *info = nl_put(&m.h, IFLA_LINKINFO, NULL, 0);

	nl_put(&m.h, IFLA_INFO_KIND, "veth", 4);
	struct rtattr *data = nl_put(&m.h, IFLA_INFO_DATA, NULL, 0);
	struct rtattr *pa = nl_put(&m.h, VETH_INFO_PEER, &peer, sizeof(peer));

	nl_put(&m.h, IFLA_IFNAME, b, strlen(b) + 1);
	nl_end(&m.h, pa);
	nl_end(&m.h, data);
	nl_end(&m.h, info);
	if (send(fd, &m, m.h.nlmsg_len, 0) == (ssize_t)m.h.nlmsg_len && recv(fd, &r, sizeof(r), 0) > 0 &&
	    r.h.nlmsg_type == NLMSG_ERROR)
		err = ((struct nlmsgerr *)NLMSG_DATA(&r.h))->error;
	close(fd);
	return err;
}

/* As root, in a network namespace of its own: two peers on the two ends of a veth pair, the link
 * two vmm with --probe-peer share, and a request forged with one's address to the other. */
TEST(two_peers_on_a_link_do_not_echo_each_other)
{
	struct probe_peer a, b;
	int r;

	if (geteuid() != 0 || unshare(CLONE_NEWNET) < 0)
		SKIP(return, "needs root for a network namespace (unshare: %s)", strerror(errno));
	put("/proc/sys/net/ipv6/conf/default/accept_dad", "0");
	if ((r = veth_add("vmmppa", "vmmppb")) < 0)
		SKIP(return, "no veth pair: %s", strerror(-r));
	ASSERT_EQ(0, set_flags("vmmppa", IFF_UP));
	ASSERT_EQ(0, set_flags("vmmppb", IFF_UP));
	ASSERT_EQ(0, open_link_local(&a, "vmmppa"));
	ASSERT_EQ(0, open_link_local(&b, "vmmppb"));
	ASSERT_EQ(0, probe_peer_start(&a, SANDBOX_OFF));
	ASSERT_EQ(0, probe_peer_start(&b, SANDBOX_OFF));
	forged_source_between(_metadata, &a, &b);
	EXPECT_EQ(0, atomic_load(&a.n.foreign) + atomic_load(&b.n.foreign)); /* a real exchange */
	probe_peer_close(&a);
	probe_peer_close(&b);
}

TEST_HARNESS_MAIN
