// SPDX-License-Identifier: MIT
/*
 * The probe's UDP peer (vmm/probe_peer.c): --probe-peer's value, the interface checks, and the
 * echo thread: on loopback (::1 on lo) for anyone, and as root on a tap's own IPv6 link-local
 * address in a network namespace the test makes (skipped otherwise). Hostile datagrams: empty,
 * longer than PROBE_PEER_MAX (dropped and counted, the next one still answered).
 */
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <ifaddrs.h>
#include <linux/if_tun.h>
#include <poll.h>
#include <sched.h>
#include <stdio.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include "kselftest_harness.h"
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

/* Echoes, an empty datagram, an oversized one dropped and the next still answered. */
static void exercise(struct __test_metadata *_metadata, struct probe_peer *p, int c)
{
	static uint8_t big[PROBE_PEER_MAX + 500];
	uint8_t rsp[PROBE_PEER_MAX + 600];

	for (uint32_t i = 0; i < 50; i++) {
		uint8_t req[16] = { 0 };

		memcpy(req, &i, sizeof(i));
		ASSERT_EQ(16, ask(c, req, sizeof(req), rsp, sizeof(rsp)));
		ASSERT_EQ(0, memcmp(req, rsp, sizeof(req)));
	}
	EXPECT_EQ(0, ask(c, big, 0, rsp, sizeof(rsp)));
	memset(big, 0xa5, sizeof(big));
	EXPECT_EQ(PROBE_PEER_MAX, ask(c, big, PROBE_PEER_MAX, rsp, sizeof(rsp)));
	EXPECT_EQ(-1, ask(c, big, sizeof(big), rsp, sizeof(rsp))); /* dropped: no answer */
	EXPECT_EQ(4, ask(c, (const uint8_t *)"next", 4, rsp, sizeof(rsp)));
	/* the thread counts an answer just after sending it */
	for (int i = 0; i < 100 && atomic_load(&p->n.answered) < 53; i++)
		usleep(10 * 1000);
	EXPECT_EQ(53, atomic_load(&p->n.answered));
	EXPECT_EQ(50 * 16 + PROBE_PEER_MAX + 4, atomic_load(&p->n.bytes));
	EXPECT_EQ(1, atomic_load(&p->n.oversized));
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
	EXPECT_NE(NULL, strstr(text, "\"answered\":53,")) TH_LOG("%s", text);
	EXPECT_NE(NULL, strstr(text, "\"oversized\":1,")) TH_LOG("%s", text);
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
	uint8_t rsp[64];

	ASSERT_EQ(0, probe_peer_open_addr(&p, "lo", &in6addr_loopback, 0));
	self.sin6_port = htons(p.port);
	ASSERT_EQ(0, probe_peer_start(&p, SANDBOX_OFF));
	ASSERT_EQ(4, sendto(p.fd, "self", 4, 0, (struct sockaddr *)&self, sizeof(self)));
	usleep(200 * 1000);
	EXPECT_EQ(0, atomic_load(&p.n.answered)) TH_LOG("its own datagram echoed %llu times",
		(unsigned long long)atomic_load(&p.n.answered));
	EXPECT_EQ(1, atomic_load(&p.n.foreign));
	/* a real client is still answered */
	int c = client_to(&p);

	ASSERT_GE(c, 0);
	EXPECT_EQ(4, ask(c, (const uint8_t *)"next", 4, rsp, sizeof(rsp)));
	/* a flood of requests while it stops: the stop is seen within a bounded batch */
	uint8_t req[16] = { 0 };

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
	int r = -1;

	for (int i = 0; i < 40 && r; i++) { /* the link-local address comes with the carrier */
		r = probe_peer_open(&p, "vmmpp0", 0);
		if (r)
			usleep(50 * 1000);
	}
	ASSERT_EQ(0, r);
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

TEST_HARNESS_MAIN
