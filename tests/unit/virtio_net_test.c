// SPDX-License-Identifier: MIT
/*
 * virtio-net on a real tap, inside a network namespace the test makes (nothing leaves it): frames
 * the host sends reach the guest's buffers, and a frame larger than the buffer the guest posted is
 * dropped and counted, never reported with a length past the buffer; a frame waiting while the
 * guest cannot take it (no RX queue, a device that needs a reset) costs the worker a wake-up or
 * two, not a spin (issue 19). Needs root (CAP_NET_ADMIN).
 */
#include <arpa/inet.h>
#include <fcntl.h>
#include <linux/if_packet.h>
#include <linux/virtio_net.h>
#include <net/ethernet.h>
#include <net/if.h>
#include <sched.h>
#include <stdio.h>
#include <string.h>
#include <sys/ioctl.h>
#include <linux/virtio_ring.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include "kselftest_harness.h"
#include "tests/unit/fake_driver.h"
#include "core/pci.h"
#include "core/vm.h"

#define TAP "vmmtest0"
#define HDR sizeof(struct virtio_net_hdr_mrg_rxbuf)

static struct vm vm;
static struct pci_host host;

FIXTURE(net) {
	struct fake_kvm fk;
	struct fake_driver f;
	struct virtio_dev *vd;
	int pkt;
};

FIXTURE_SETUP(net)
{
	self->vd = NULL;
	self->pkt = -1;
	if (unshare(CLONE_NEWNET) < 0)
		SKIP(return, "needs root for a network namespace and a tap");
	ASSERT_EQ(0, fake_vm_init(&vm, &self->fk, 1 << 20, 96));
	ASSERT_EQ(0, pci_host_init(&host, &vm, &fd_layout));
	const uint8_t mac[6] = { 0x02, 0, 0, 0, 0, 1 };

	struct virtio_net_opts o = { .tap = TAP, .vhost = NET_VHOST_OFF }; /* the userspace path */

	memcpy(o.mac, mac, 6);
	self->vd = virtio_net_create(&vm, &host, &o);
	ASSERT_NE(NULL, self->vd);
	/* the tap up, quiet (no IPv6 chatter), and a packet socket to send frames out of it */
	int fd = open("/proc/sys/net/ipv6/conf/" TAP "/disable_ipv6", O_WRONLY);

	if (fd >= 0) {
		ASSERT_EQ(1, write(fd, "1", 1));
		close(fd);
	}
	int s = socket(AF_INET, SOCK_DGRAM, 0);
	struct ifreq ifr = { 0 };

	snprintf(ifr.ifr_name, sizeof(ifr.ifr_name), TAP);
	ASSERT_EQ(0, ioctl(s, SIOCGIFFLAGS, &ifr));
	ifr.ifr_flags |= IFF_UP;
	ASSERT_EQ(0, ioctl(s, SIOCSIFFLAGS, &ifr));
	close(s);
	self->pkt = socket(AF_PACKET, SOCK_RAW, 0);
	ASSERT_LE(0, self->pkt);
	fd_probe(&self->f, &vm, self->vd);
	fd_negotiate(&self->f, 0);
	fd_msix_enable(&self->f, 3);
	fd_queue_setup(&self->f, 0, 64, 0);
	fd_queue_setup(&self->f, 1, 64, 1);
	fd_driver_ok(&self->f);
	ASSERT_EQ(VIRTIO_CONFIG_S_DRIVER_OK, fd_status(&self->f) & (VIRTIO_CONFIG_S_DRIVER_OK |
								    VIRTIO_CONFIG_S_NEEDS_RESET));
}

FIXTURE_TEARDOWN(net)
{
	if (self->vd)
		virtio_stop(self->vd);
	if (self->pkt >= 0)
		close(self->pkt);
	fake_vm_free(&vm);
}

/* A frame of len bytes whose every byte says where it is: ethernet header (ethertype 0x88b5,
 * local experimental), then (k * 7) & 0xff. */
static void pattern(uint8_t *f, size_t len)
{
	static const uint8_t eth[14] = { 0x02, 0, 0, 0, 0, 1, 0x02, 0, 0, 0, 0, 2, 0x88, 0xb5 };

	memcpy(f, eth, 14);
	for (size_t k = 14; k < len; k++)
		f[k] = (uint8_t)(k * 7);
}

/* Sends that frame out of the tap. */
static void send_frame(FIXTURE_DATA(net) *self, size_t len)
{
	uint8_t f[2048];
	struct sockaddr_ll a = { .sll_family = AF_PACKET, .sll_ifindex = if_nametoindex(TAP),
				 .sll_halen = 6 };

	pattern(f, len);
	sendto(self->pkt, f, len, 0, (struct sockaddr *)&a, sizeof(a));
}

static void post_rx(FIXTURE_DATA(net) *self, uint32_t size)
{
	struct fd_seg s = { fd_alloc(&self->f, size), size, true };

	fd_add(&self->f, 0, &s, 1);
	fd_kick(&self->f, 0);
	fd_run(&self->f, 20);
}

TEST_F(net, frames_reach_guest_buffers)
{
	uint32_t id, len;

	post_rx(self, 2048);
	send_frame(self, 200);
	fd_run(&self->f, 100);
	ASSERT_EQ(1, fd_used(&self->f, 0, &id, &len));
	EXPECT_EQ(HDR + 200, len);
	EXPECT_EQ(1, fd_irqs(&self->f, 0));
}

TEST_F(net, frame_larger_than_the_buffer_is_dropped_not_overreported)
{
	uint32_t id, len, size = HDR + 64;
	int used = 0;

	post_rx(self, size);
	send_frame(self, 600);
	fd_run(&self->f, 100);
	while (fd_used(&self->f, 0, &id, &len)) {
		used++;
		EXPECT_LE(len, size) TH_LOG("used.len %u is past the guest's %u-byte buffer", len, size);
	}
	EXPECT_EQ(0, used) TH_LOG("a truncated frame was handed to the guest");
	/* the buffer is still the guest's and takes the next frame that fits */
	send_frame(self, 60);
	fd_run(&self->f, 100);
	ASSERT_EQ(1, fd_used(&self->f, 0, &id, &len));
	EXPECT_EQ(HDR + 60, len);
}

TEST_F(net, transmit_leaves_through_the_tap)
{
	uint32_t id, len;
	uint64_t buf = fd_alloc(&self->f, HDR + 100);
	struct fd_seg s = { buf, HDR + 100, false };
	uint8_t *p = fd_hva(&self->f, buf, HDR + 100);
	struct sockaddr_ll a = { .sll_family = AF_PACKET, .sll_protocol = htons(0x88b5),
				 .sll_ifindex = if_nametoindex(TAP) };
	int r = socket(AF_PACKET, SOCK_RAW, htons(0x88b5));
	uint8_t got[256];

	ASSERT_LE(0, r);
	ASSERT_EQ(0, bind(r, (struct sockaddr *)&a, sizeof(a)));
	memset(p, 0, HDR);
	memcpy(p + HDR, "\x02\0\0\0\0\x02\x02\0\0\0\0\x01\x88\xb5", 14);
	memset(p + HDR + 14, 0xcd, 86);
	fd_add(&self->f, 1, &s, 1);
	fd_kick(&self->f, 1);
	fd_run(&self->f, 50);
	ASSERT_EQ(1, fd_used(&self->f, 1, &id, &len));
	EXPECT_EQ(100, recv(r, got, sizeof(got), MSG_DONTWAIT));
	EXPECT_EQ(0xcd, got[99]);
	close(r);
}

static double mono(void)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return t.tv_sec + t.tv_nsec / 1e9;
}

/* The worker's loop for ms milliseconds: the events it woke for (a spin is thousands). */
static int wakeups(FIXTURE_DATA(net) *self, int ms)
{
	double end = mono() + ms / 1e3;
	int n = 0;

	while (mono() < end) {
		int r = virtio_poll(self->vd, 10);

		n += r > 0 ? r : 0;
	}
	return n;
}

#define WAKEUPS_MAX 3 /* the frame's arrival, and the one round that turns the tap's poll off */

/* DRIVER_OK with only the TX queue: a frame from the host has nowhere to go and must not keep
 * the tap's level-triggered EPOLLIN firing; it is delivered once the guest enables RX. */
TEST_F(net, frame_without_rx_queue_does_not_spin_the_worker)
{
	uint32_t id, len;

	fd_negotiate(&self->f, 0); /* the fixture's device again, now without RX */
	fd_msix_enable(&self->f, 3);
	fd_queue_setup(&self->f, 1, 64, 1);
	fd_driver_ok(&self->f);
	ASSERT_EQ(VIRTIO_CONFIG_S_DRIVER_OK, fd_status(&self->f) & (VIRTIO_CONFIG_S_DRIVER_OK |
								    VIRTIO_CONFIG_S_NEEDS_RESET));
	send_frame(self, 200);
	int n = wakeups(self, 200);

	TH_LOG("%d wake-ups in 200 ms with a frame queued and no RX queue", n);
	EXPECT_LE(n, WAKEUPS_MAX) TH_LOG("the worker woke %d times in 200 ms for one frame it cannot deliver", n);
	/* the guest enables RX late (after DRIVER_OK) and posts a buffer: the waiting frame arrives */
	fd_queue_setup(&self->f, 0, 64, 0);
	post_rx(self, 2048);
	fd_run(&self->f, 50);
	ASSERT_EQ(1, fd_used(&self->f, 0, &id, &len));
	EXPECT_EQ(HDR + 200, len);
}

/* A TX chain whose head is past the ring: the device needs a reset, and a frame from the host
 * then must not spin the worker either. */
TEST_F(net, frame_after_needs_reset_does_not_spin_the_worker)
{
	struct fd_queue *q = &self->f.q[1];
	struct vring_avail *avail = fd_hva(&self->f, q->avail, 6 + 2ULL * q->size);

	post_rx(self, 2048);
	avail->ring[q->avail_idx % q->size] = q->size + 7; /* no such descriptor */
	__atomic_store_n(&avail->idx, ++q->avail_idx, __ATOMIC_RELEASE);
	fd_kick(&self->f, 1);
	wakeups(self, 20);
	ASSERT_EQ(VIRTIO_CONFIG_S_NEEDS_RESET, fd_status(&self->f) & VIRTIO_CONFIG_S_NEEDS_RESET);
	send_frame(self, 200);
	int n = wakeups(self, 200);

	TH_LOG("%d wake-ups in 200 ms with a frame queued after NEEDS_RESET", n);
	EXPECT_LE(n, WAKEUPS_MAX) TH_LOG("the worker woke %d times in 200 ms after NEEDS_RESET", n);
}

/* VIRTIO_RING_F_EVENT_IDX: an interrupt only once the used index passes the driver's used_event,
 * and a queue taken empty asks for a kick at its next entry (avail_event), RX and TX alike. */
/* The device reset and brought up again with one more feature (a bit number), which it takes. */
static void renegotiate(FIXTURE_DATA(net) *self, struct __test_metadata *_metadata, unsigned int bit)
{
	ASSERT_NE(0, fd_negotiate(&self->f, 1ULL << bit) & VIRTIO_CONFIG_S_FEATURES_OK);
	fd_msix_enable(&self->f, 3);
	fd_queue_setup(&self->f, 0, 64, 0);
	fd_queue_setup(&self->f, 1, 64, 1);
	fd_driver_ok(&self->f);
	ASSERT_TRUE(virtio_has_feature(self->vd, bit));
}

TEST_F(net, event_idx_follows_used_event_and_rearms_avail_event)
{
	uint32_t id, len;

	renegotiate(self, _metadata, VIRTIO_RING_F_EVENT_IDX);
	uint16_t *rx_used_event = fd_hva(&self->f, self->f.q[0].avail + 4 + 2 * 64, 2);
	uint16_t *rx_avail_event = fd_hva(&self->f, self->f.q[0].used + 4 + 8 * 64, 2);
	uint16_t *tx_avail_event = fd_hva(&self->f, self->f.q[1].used + 4 + 8 * 64, 2);

	post_rx(self, 2048); /* used_event 0: the first completion interrupts */
	send_frame(self, 200);
	fd_run(&self->f, 100);
	ASSERT_EQ(1, fd_used(&self->f, 0, &id, &len));
	EXPECT_EQ(1, fd_irqs(&self->f, 0));
	EXPECT_EQ(1, *rx_avail_event); /* out of buffers: kick me at the next one */

	*rx_used_event = 5; /* no interrupt before the sixth frame */
	post_rx(self, 2048);
	send_frame(self, 200);
	fd_run(&self->f, 100);
	ASSERT_EQ(1, fd_used(&self->f, 0, &id, &len));
	EXPECT_EQ(0, fd_irqs(&self->f, 0));
	EXPECT_EQ(2, *rx_avail_event);

	uint64_t buf = fd_alloc(&self->f, HDR + 60);
	struct fd_seg s = { buf, HDR + 60, false };
	uint8_t *p = fd_hva(&self->f, buf, HDR + 60);

	memset(p, 0, HDR + 60);
	memcpy(p + HDR, "\x02\0\0\0\0\x02\x02\0\0\0\0\x01\x88\xb5", 14);
	fd_add(&self->f, 1, &s, 1);
	fd_kick(&self->f, 1);
	fd_run(&self->f, 50);
	ASSERT_EQ(1, fd_used(&self->f, 1, &id, &len));
	EXPECT_EQ(1, *tx_avail_event);
	EXPECT_EQ(0, self->vd->status & VIRTIO_CONFIG_S_NEEDS_RESET);
}

/* count receive buffers of size bytes, one kick; their addresses in gpa[] and heads in head[] */
static void post_many(FIXTURE_DATA(net) *self, unsigned int count, uint32_t size, uint64_t *gpa, uint16_t *head)
{
	for (unsigned int i = 0; i < count; i++) {
		struct fd_seg s = { fd_alloc(&self->f, size), size, true };

		gpa[i] = s.gpa;
		head[i] = fd_add(&self->f, 0, &s, 1);
	}
	fd_kick(&self->f, 0);
	fd_run(&self->f, 20);
}

/* The used entries of one frame spread over buffers gpa[0..n): heads in order, each length what
 * the frame left for it, num_buffers n in the first header, the frame's bytes intact across them. */
static void expect_spread(FIXTURE_DATA(net) *self, struct __test_metadata *_metadata, const uint64_t *gpa,
			  const uint16_t *head, uint32_t size, unsigned int n, size_t frame)
{
	uint8_t want[2048], got[2048 + HDR];
	size_t total = HDR + frame, off = 0;
	uint32_t id, len;

	ASSERT_LE(total, sizeof(got));
	pattern(want, frame);
	for (unsigned int i = 0; i < n; i++) {
		uint32_t expect = total - off < size ? (uint32_t)(total - off) : size;

		ASSERT_EQ(1, fd_used(&self->f, 0, &id, &len)) TH_LOG("buffer %u of %u not used", i, n);
		EXPECT_EQ(head[i], id);
		EXPECT_EQ(expect, len);
		memcpy(got + off, fd_hva(&self->f, gpa[i], len), len);
		off += len;
	}
	EXPECT_EQ(0, fd_used(&self->f, 0, &id, &len)) TH_LOG("a buffer past the frame was used");
	struct virtio_net_hdr_mrg_rxbuf h;

	memcpy(&h, got, HDR);
	EXPECT_EQ(n, h.num_buffers);
	EXPECT_EQ(0, memcmp(got + HDR, want, frame)) TH_LOG("the frame's bytes differ across the buffers");
}

TEST_F(net, mergeable_frame_spans_buffers_with_num_buffers)
{
	uint64_t gpa[4];
	uint16_t head[4];

	renegotiate(self, _metadata, VIRTIO_NET_F_MRG_RXBUF);
	post_many(self, 4, 256, gpa, head);
	send_frame(self, 600); /* with the header 612 bytes: 256 + 256 + 100 */
	fd_run(&self->f, 100);
	expect_spread(self, _metadata, gpa, head, 256, 3, 600);
	EXPECT_EQ(1, fd_irqs(&self->f, 0)); /* one interrupt for the frame */
}

/* Too few buffers for the frame: nothing is used (no part of a frame), and the frame arrives
 * whole once the guest posts more. */
TEST_F(net, mergeable_frame_waits_for_enough_buffers)
{
	uint64_t gpa[3];
	uint16_t head[3];
	uint32_t id, len;

	renegotiate(self, _metadata, VIRTIO_NET_F_MRG_RXBUF);
	post_many(self, 1, 256, gpa, head);
	send_frame(self, 600);
	fd_run(&self->f, 100);
	EXPECT_EQ(0, fd_used(&self->f, 0, &id, &len));
	EXPECT_EQ(0, fd_irqs(&self->f, 0));
	post_many(self, 2, 256, gpa + 1, head + 1);
	fd_run(&self->f, 100);
	expect_spread(self, _metadata, gpa, head, 256, 3, 600);
}

/* A frame more than the whole ring holds is dropped, and the same buffers take the next frame. */
TEST_F(net, mergeable_frame_larger_than_the_ring_is_dropped)
{
	uint64_t gpa[64];
	uint16_t head[64];

	renegotiate(self, _metadata, VIRTIO_NET_F_MRG_RXBUF);
	post_many(self, 64, 16, gpa, head); /* 1 KiB in all */
	send_frame(self, 1500);
	send_frame(self, 60); /* 72 bytes: four buffers of 16 and 8 bytes of a fifth */
	fd_run(&self->f, 200);
	expect_spread(self, _metadata, gpa, head, 16, 5, 60);
}

TEST_HARNESS_MAIN
