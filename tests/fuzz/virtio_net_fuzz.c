// SPDX-License-Identifier: MIT
/* virtio-net driven as a guest on a tap inside a network namespace of its own (needs root, as
 * tests/unit/virtio_net_test.c; nothing leaves the namespace): transmit chains with any vnet
 * header, receive buffers of any shape, and frames arriving from the host side (FZ_INPUT: written
 * to the tap through a packet socket). One device serves every input (fz_guest_reboot): a tap per
 * input would create and destroy a network device each time. After each input, in whatever state
 * it left the device (RX never enabled, NEEDS_RESET, no buffers...), a frame from the host may cost
 * the worker a round or two, never a spin (issue 19; the seeds tx-only and needs-reset start
 * there). Frames the earlier inputs left in the tap may cost a round each: a pass takes at most
 * the ring's size in buffers, so a ring of one buffer too small for them drops one a pass (the
 * fuzzer found it: 563 rounds, each dropping a frame). The tap's queue is made short, and more
 * busy rounds in a row than it and the qdisc before it hold frames, and a few more, abort. */
#include <fcntl.h>
#include <linux/if_packet.h>
#include <net/if.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <unistd.h>

#include "tests/fuzz/fuzz.h"
#include "virtio/virtio.h"

#define TAP "vmmfuzz0"
#define TAP_QUEUE 64 /* the tap's tx_queue_len: its ring for the reader, and the qdisc's limit */
#define SPIN_ROUNDS (2 * TAP_QUEUE + 64)

static struct vm vm;
static struct fake_kvm fk;
static struct pci_host host;
static struct fz_guest g;
static int pkt = -1;

/* A frame from the host: the input's bytes after a header addressed to the guest's MAC. */
static void host_frame(struct fz_guest *gg, const uint8_t *buf, size_t len)
{
	uint8_t f[1600] = { 0x02, 0, 0, 0, 0, 1, 0x02, 0, 0, 0, 0, 2, 0x88, 0xb5 };

	(void)gg;
	if (len > sizeof(f) - 14)
		len = sizeof(f) - 14;
	memcpy(f + 14, buf, len);
	if (send(pkt, f, 14 + len, 0) < 0)
		return; /* a full tap queue drops it, as a real one would */
}

static void setup(void)
{
	const uint8_t mac[6] = { 0x02, 0, 0, 0, 0, 1 };
	struct ifreq ifr = { 0 };

	if (unshare(CLONE_NEWNET) < 0) {
		fprintf(stderr, "virtio_net fuzz: needs root (a network namespace and a tap)\n");
		abort();
	}
	fz_vm_init(&g, &vm, &fk, &host);
	struct virtio_net_opts o = { .tap = TAP, .vhost = NET_VHOST_OFF }; /* the userspace path */

	memcpy(o.mac, mac, 6);
	g.vd = virtio_net_create(&vm, &host, &o);
	if (!g.vd)
		abort();
	g.dev = &g.vd->pci;
	g.input = host_frame;
	fz_guest_keep(&g);
	int fd = open("/proc/sys/net/ipv6/conf/" TAP "/disable_ipv6", O_WRONLY);

	if (fd >= 0) { /* no IPv6 chatter of the kernel's own into the guest */
		if (write(fd, "1", 1) != 1)
			abort();
		close(fd);
	}
	int s = socket(AF_INET, SOCK_DGRAM, 0);

	snprintf(ifr.ifr_name, sizeof(ifr.ifr_name), TAP);
	if (s < 0 || ioctl(s, SIOCGIFFLAGS, &ifr) < 0)
		abort();
	ifr.ifr_flags |= IFF_UP;
	if (ioctl(s, SIOCSIFFLAGS, &ifr) < 0)
		abort();
	ifr.ifr_qlen = TAP_QUEUE;
	if (ioctl(s, SIOCSIFTXQLEN, &ifr) < 0)
		abort();
	close(s);
	struct sockaddr_ll a = { .sll_family = AF_PACKET, .sll_ifindex = if_nametoindex(TAP) };

	pkt = socket(AF_PACKET, SOCK_RAW | SOCK_NONBLOCK, 0);
	if (pkt < 0 || bind(pkt, (struct sockaddr *)&a, sizeof(a)) < 0)
		abort();
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct fz z = { data, size };

	if (!g.vd)
		setup();
	fz_guest_run(&g, &z);
	host_frame(&g, (const uint8_t *)"spin?", 5);
	int busy = 0;

	while (busy < SPIN_ROUNDS && virtio_poll(g.vd, 0) > 0)
		busy++;
	if (busy == SPIN_ROUNDS) {
		fprintf(stderr, "virtio_net fuzz: the worker is still woken after %d rounds (status 0x%x, RX "
			"ready %d, ring %u): it spins\n", SPIN_ROUNDS, g.vd->status, g.vd->q[0].vq.ready,
			g.vd->q[0].vq.size);
		abort();
	}
	fz_guest_reboot(&g);
	return 0;
}
