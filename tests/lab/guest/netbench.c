// SPDX-License-Identifier: MIT
/*
 * make bench's network load inside the lab's test guest, against the bench's server on the lab
 * host (tests/lab/bench_io.c) over virtio-net and tap: UDP request/response round trips (64-byte
 * datagrams to port 7777, each answered before the next) and TCP bulk (64 KiB writes to port
 * 7778 for the duration; the server answers with the byte count it received once we shut down
 * our side). Each runs `reps` times for `ms` milliseconds; one line per repetition:
 *   GUEST-NETBENCH rr rep=0 ops=1234 ns=500000000
 *   GUEST-NETBENCH bulk rep=0 bytes=123456 ns=500000000
 * Usage: netbench SERVER-ADDRESS%IFACE REPS MS
 */
#include <arpa/inet.h>
#include <net/if.h>
#include <netinet/in.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <time.h>
#include <unistd.h>

static uint64_t now_ns(void)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return (uint64_t)t.tv_sec * 1000000000ULL + t.tv_nsec;
}

/* ADDR%IFACE without the resolver (static binary: no NSS). */
static int resolve(const char *host, int port, struct sockaddr_in6 *sa)
{
	char addr[64];
	const char *pct = strchr(host, '%');

	memset(sa, 0, sizeof(*sa));
	sa->sin6_family = AF_INET6;
	sa->sin6_port = htons(port);
	snprintf(addr, sizeof(addr), "%.*s", pct ? (int)(pct - host) : (int)strlen(host), host);
	if (inet_pton(AF_INET6, addr, &sa->sin6_addr) != 1)
		return -1;
	if (pct && !(sa->sin6_scope_id = if_nametoindex(pct + 1)))
		return -1;
	return 0;
}

static long rr(const struct sockaddr_in6 *sa, unsigned ms, uint64_t *took)
{
	int s = socket(AF_INET6, SOCK_DGRAM, 0);
	struct timeval tv = { 1, 0 };
	char buf[64] = "vmm-bench";
	uint64_t t0, end;
	long ops = 0;

	if (s < 0 || setsockopt(s, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv)) ||
	    connect(s, (const struct sockaddr *)sa, sizeof(*sa)))
		return -1;
	t0 = now_ns();
	end = t0 + ms * 1000000ULL;
	do { /* at least one round trip, however slow the machine */
		if (send(s, buf, sizeof(buf), 0) != sizeof(buf) || recv(s, buf, sizeof(buf), 0) != sizeof(buf)) {
			close(s);
			return -1;
		}
		ops++;
	} while (now_ns() < end);
	*took = now_ns() - t0;
	close(s);
	return ops;
}

static long long bulk(const struct sockaddr_in6 *sa, unsigned ms, uint64_t *took)
{
	static char buf[65536];
	int s = socket(AF_INET6, SOCK_STREAM, 0);
	/* a server that stopped reading fails the run within a minute, not at the bench's limit */
	struct timeval tv = { 60, 0 };
	uint64_t t0, end, got = 0;

	if (s < 0 || setsockopt(s, SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof(tv)) ||
	    setsockopt(s, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv)) ||
	    connect(s, (const struct sockaddr *)sa, sizeof(*sa)))
		return -1;
	/* the clock starts once connected: a slow handshake is not throughput */
	t0 = now_ns();
	end = t0 + ms * 1000000ULL;
	do {
		if (write(s, buf, sizeof(buf)) < 0) {
			close(s);
			return -1;
		}
	} while (now_ns() < end);
	shutdown(s, SHUT_WR);
	if (read(s, &got, sizeof(got)) != sizeof(got)) { /* all of it arrived: the server counted it */
		close(s);
		return -1;
	}
	*took = now_ns() - t0;
	close(s);
	return (long long)got;
}

int main(int argc, char **argv)
{
	struct sockaddr_in6 su, st;

	if (argc != 4) {
		fprintf(stderr, "usage: netbench SERVER%%IFACE REPS MS\n");
		return 2;
	}
	int reps = atoi(argv[2]);
	unsigned ms = atoi(argv[3]);

	if (resolve(argv[1], 7777, &su) || resolve(argv[1], 7778, &st)) {
		fprintf(stderr, "netbench: cannot resolve %s\n", argv[1]);
		return 1;
	}
	/* the host reads the VMM's CPU time at each line: this one opens the first rep's interval */
	printf("GUEST-NETBENCH-START\n");
	fflush(stdout);
	for (int r = 0; r < reps; r++) {
		uint64_t took = 0;
		long ops = rr(&su, ms, &took);

		if (ops < 0) {
			perror("netbench: rr");
			return 1;
		}
		printf("GUEST-NETBENCH rr rep=%d ops=%ld ns=%llu\n", r, ops, (unsigned long long)took);
		fflush(stdout);
	}
	for (int r = 0; r < reps; r++) {
		uint64_t took = 0;
		long long bytes = bulk(&st, ms, &took);

		if (bytes < 0) {
			perror("netbench: bulk");
			return 1;
		}
		printf("GUEST-NETBENCH bulk rep=%d bytes=%lld ns=%llu\n", r, bytes, (unsigned long long)took);
		fflush(stdout);
	}
	return 0;
}
