/* SPDX-License-Identifier: MIT */
/*
 * The host side of the guest probe's udp workload (--probe-peer IFNAME[,port=N]): a UDP socket on
 * the host interface's IPv6 link-local address (the tap, or the PF of a passed-through VF) that
 * answers each probe request at once from a thread of its own (the request back, marked as an
 * answer: guest/probe_proto.h). The guest learns the address from the kernel command line
 * (vmm.probe_peer=ADDR, appended by the board). Datagrams come from the guest and are hostile:
 * sizes are the kernel's, never the payload's; an oversized datagram, one from a non-link-local
 * source, from another interface, or from the peer's own address and port, one that is not a
 * request (an answer: another peer's, whose source the guest forged, would otherwise be answered
 * back and forth forever), and one past its source's rate is dropped and counted.
 */
#ifndef VMM_PROBE_PEER_H
#define VMM_PROBE_PEER_H

#include <net/if.h>
#include <netinet/in.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#include "core/sandbox.h"

#define PROBE_PEER_PORT 7777 /* the probe's default port */
/* The largest datagram echoed: the probe sends 16 bytes; anything past an Ethernet MTU is no probe. */
#define PROBE_PEER_MAX 1500
/* Datagrams answered per wake-up before the stop eventfd is looked at again. */
#define PROBE_PEER_BURST 64
/* Answers a second to one source address and port, and how many it may have at once (a token
 * bucket): the probe asks once per interval_us (1000 us by default), each time after the last
 * answer. Whatever a guest sends, or a loop through something that turns answers into requests,
 * is held to this. */
#define PROBE_PEER_RATE 10000
#define PROBE_PEER_RATE_BURST 100
/* Sources with a bucket of their own at once; those past them share one more. */
#define PROBE_PEER_SOURCES 16
/* The kernel command line parameter the guest's probe reads the address from. */
#define PROBE_PEER_PARAM "vmm.probe_peer="

struct probe_peer_counts {
	_Atomic uint64_t answered, bytes; /* requests echoed, and their bytes */
	_Atomic uint64_t oversized;	  /* longer than PROBE_PEER_MAX: not answered */
	_Atomic uint64_t foreign;	  /* not from a link-local address on the interface, or its own */
	_Atomic uint64_t not_request;	  /* not PROBE_UDP_SIZE bytes, or an answer */
	_Atomic uint64_t limited;	  /* past its source's PROBE_PEER_RATE */
	_Atomic uint64_t send_errors;	  /* the echo could not be sent (a full queue, no neighbour) */
};

/* A source's token bucket, kept as the time it is full again (CLOCK_MONOTONIC ns): a bucket full
 * before now holds nothing worth keeping, so its slot may go to another source. */
struct probe_peer_source {
	struct in6_addr addr;
	uint32_t scope;
	uint16_t port;
	uint64_t full_ns;
};

struct probe_peer {
	char ifname[IF_NAMESIZE];
	unsigned int ifindex;
	struct in6_addr addr;
	char addr_str[INET6_ADDRSTRLEN];
	uint16_t port;
	int fd, stopfd;
	bool open, running;
	pthread_t thread;
	enum sandbox_mode sandbox;
	struct probe_peer_counts n;
	/* PROBE_PEER_RATE and PROBE_PEER_RATE_BURST from open (the unit tests lower them), both > 0 */
	uint32_t rate, rate_burst;
	/* the thread's own: a bucket per source, the last shared by the sources that find no slot */
	struct probe_peer_source src[PROBE_PEER_SOURCES + 1];
	/* --attribute: each answer's send time on the trace's clock (CLOCK_MONOTONIC_RAW ns), written
	 * by the thread alone, published by answer_n (release); NULL when not asked */
	uint64_t *answer_ns;
	size_t answer_cap;
	_Atomic size_t answer_n;
};

/* --probe-peer's value: IFNAME[,port=N]; 0, or -EINVAL with a message naming what is wrong. */
int probe_peer_parse(const char *arg, char *ifname, size_t size, uint16_t *port);
/* Checks the interface (exists, up, has an IPv6 link-local address), binds the socket to that
 * address and port on it. 0, or -errno with a message saying what to do. */
int probe_peer_open(struct probe_peer *p, const char *ifname, uint16_t port);
/* As probe_peer_open on a given address (the unit tests' loopback: ::1 on lo), no checks. */
int probe_peer_open_addr(struct probe_peer *p, const char *ifname, const struct in6_addr *addr, uint16_t port);
/* Before the start: keep the send time of the first cap answers (--attribute's udp join: the
 * answer is the sample's target). 0, or -ENOMEM. */
int probe_peer_log_answers(struct probe_peer *p, size_t cap);
/* The answers' times kept so far, ascending; *n of them (any thread). */
const uint64_t *probe_peer_answers(const struct probe_peer *p, size_t *n);
/* Starts the echo thread, which enters the sandbox's peer allowlist. */
int probe_peer_start(struct probe_peer *p, enum sandbox_mode sandbox);
/* Stops the thread (when running) and closes the socket; safe on a zeroed or closed peer. */
void probe_peer_close(struct probe_peer *p);
/* One line of the exit summary; and the same numbers as a JSON object. */
void probe_peer_summary(const struct probe_peer *p, FILE *f);
void probe_peer_json(const struct probe_peer *p, FILE *f);

#endif
