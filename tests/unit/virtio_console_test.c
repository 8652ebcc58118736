// SPDX-License-Identifier: MIT
/*
 * virtio-console multiport driven as Linux's driver does, through the fake KVM seam: the control
 * handshake (DEVICE_READY -> PORT_ADD per port, PORT_READY -> CONSOLE_PORT / PORT_NAME / PORT_OPEN),
 * messages waiting for the driver's buffers, hostile control messages refused and counted, reset,
 * a driver without multiport; and the probe's port end to end into vmm's probe receiver (frames
 * split across buffers, corrupt and oversized frames refused, console lines counted apart).
 */
#include <fcntl.h>
#include <linux/virtio_console.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "kselftest_harness.h"
#include "tests/unit/fake_driver.h"
#include "tests/unit/log_capture.h"
#include "platform/console.h"
#include "core/pci.h"
#include "vmm/probe_rx.h"
#include "core/vm.h"

#define MULTIPORT (1ULL << VIRTIO_CONSOLE_F_MULTIPORT)
#define DEVCFG 0x2000 /* virtio/pci.c's device configuration window in BAR 0 */
#define CTRL_RX 2
#define CTRL_TX 3
#define PROBE_TX 5

static struct vm vm;
static struct pci_host host;

struct sink {
	uint8_t buf[8192];
	size_t len;
};

static void sink_write(void *opaque, const uint8_t *buf, size_t len)
{
	struct sink *s = opaque;

	if (len > sizeof(s->buf) - s->len)
		len = sizeof(s->buf) - s->len;
	memcpy(s->buf + s->len, buf, len);
	s->len += len;
}

static void to_console(void *opaque, const uint8_t *buf, size_t len)
{
	console_out_write(opaque, buf, len);
}

struct msg {
	uint32_t id;
	uint16_t event, value;
	char name[80];
};

FIXTURE(vcon) {
	struct fake_kvm fk;
	struct fake_driver f;
	struct console_out out;
	struct sink probe;
	struct virtio_dev *vd;
	uint64_t rx_gpa[256]; /* control receive buffers by descriptor head */
};

FIXTURE_SETUP(vcon)
{
	ASSERT_EQ(0, fake_vm_init(&vm, &self->fk, 1 << 20, 96));
	ASSERT_EQ(0, pci_host_init(&host, &vm, &fd_layout));
	memset(&self->out, 0, sizeof(self->out));
	self->out.fd = -1;
	self->probe.len = 0;
	const struct virtio_console_port ports[] = {
		{ .console = true, .write = to_console, .opaque = &self->out },
		{ .name = "org.vmm.probe", .write = sink_write, .opaque = &self->probe },
	};

	self->vd = virtio_console_create_ports(&vm, &host, ports, 2, true);
	ASSERT_NE(NULL, self->vd);
	fd_probe(&self->f, &vm, self->vd);
}

FIXTURE_TEARDOWN(vcon)
{
	virtio_stop(self->vd);
	fake_vm_free(&vm);
}

static void setup_queues(FIXTURE_DATA(vcon) *self, uint64_t features, unsigned int nq)
{
	fd_negotiate(&self->f, features);
	fd_msix_enable(&self->f, 7);
	for (unsigned int q = 0; q < nq; q++)
		fd_queue_setup(&self->f, q, 64, (uint16_t)q);
	fd_driver_ok(&self->f);
}

static void post_rx(FIXTURE_DATA(vcon) *self, unsigned int n, uint32_t size)
{
	for (unsigned int i = 0; i < n; i++) {
		uint64_t gpa = fd_alloc(&self->f, size);
		struct fd_seg s = { gpa, size, true };
		uint16_t head = fd_add(&self->f, CTRL_RX, &s, 1);

		self->rx_gpa[head] = gpa;
	}
	fd_kick(&self->f, CTRL_RX);
	fd_run(&self->f, 20);
}

/* A message from the driver on the control transmit queue, len bytes of it. */
static void send_ctrl(FIXTURE_DATA(vcon) *self, uint32_t id, uint16_t event, uint16_t value, uint32_t len)
{
	struct virtio_console_control m = { .id = id, .event = event, .value = value };
	uint64_t gpa = fd_alloc(&self->f, 16);
	struct fd_seg s = { gpa, len, false };
	uint32_t uid, ulen;

	memcpy(fd_hva(&self->f, gpa, sizeof(m)), &m, sizeof(m));
	fd_add(&self->f, CTRL_TX, &s, 1);
	fd_kick(&self->f, CTRL_TX);
	fd_run(&self->f, 20);
	while (fd_used(&self->f, CTRL_TX, &uid, &ulen) == 1)
		; /* the device gives every message back */
}

/* The messages the device sent since the last call, into m (at most n); returns how many. */
static int recv_ctrl(FIXTURE_DATA(vcon) *self, struct msg *m, int n)
{
	uint32_t id, len;
	int k = 0;

	while (k < n && fd_used(&self->f, CTRL_RX, &id, &len) == 1) {
		const uint8_t *p = fd_hva(&self->f, self->rx_gpa[id], len ? len : 1);
		struct virtio_console_control h = { 0 };

		memset(&m[k], 0, sizeof(m[k]));
		if (len >= sizeof(h)) {
			memcpy(&h, p, sizeof(h));
			snprintf(m[k].name, sizeof(m[k].name), "%.*s", (int)(len - sizeof(h)), (const char *)p + sizeof(h));
		}
		m[k].id = h.id;
		m[k].event = h.event;
		m[k].value = len >= sizeof(h) ? h.value : 0xffff;
		k++;
	}
	return k;
}

static struct virtio_console_stats stats(FIXTURE_DATA(vcon) *self)
{
	struct virtio_console_stats st;

	virtio_console_stats(self->vd, &st);
	return st;
}

/* The handshake up to both ports open. */
static void handshake(struct __test_metadata *_metadata, FIXTURE_DATA(vcon) *self)
{
	struct msg m[8];
	uint64_t opens = stats(self).guest_opens[1], bad = stats(self).ctrl_bad;

	post_rx(self, 16, 128);
	send_ctrl(self, 0, VIRTIO_CONSOLE_DEVICE_READY, 1, 8);
	ASSERT_EQ(2, recv_ctrl(self, m, 8));
	EXPECT_EQ(0, m[0].id);
	EXPECT_EQ(VIRTIO_CONSOLE_PORT_ADD, m[0].event);
	EXPECT_EQ(1, m[1].id);
	EXPECT_EQ(VIRTIO_CONSOLE_PORT_ADD, m[1].event);
	send_ctrl(self, 0, VIRTIO_CONSOLE_PORT_READY, 1, 8);
	ASSERT_EQ(2, recv_ctrl(self, m, 8));
	EXPECT_EQ(VIRTIO_CONSOLE_CONSOLE_PORT, m[0].event);
	EXPECT_EQ(0, m[0].id);
	EXPECT_EQ(VIRTIO_CONSOLE_PORT_OPEN, m[1].event);
	EXPECT_EQ(1, m[1].value);
	send_ctrl(self, 1, VIRTIO_CONSOLE_PORT_READY, 1, 8);
	ASSERT_EQ(2, recv_ctrl(self, m, 8));
	EXPECT_EQ(VIRTIO_CONSOLE_PORT_NAME, m[0].event);
	EXPECT_EQ(1, m[0].id);
	EXPECT_STREQ("org.vmm.probe", m[0].name);
	EXPECT_EQ(VIRTIO_CONSOLE_PORT_OPEN, m[1].event);
	EXPECT_EQ(1, m[1].id);
	send_ctrl(self, 1, VIRTIO_CONSOLE_PORT_OPEN, 1, 8);
	EXPECT_EQ(0, recv_ctrl(self, m, 8));
	EXPECT_EQ(bad, stats(self).ctrl_bad);
	EXPECT_EQ(opens + 1, stats(self).guest_opens[1]);
}

static void tx(FIXTURE_DATA(vcon) *self, unsigned int q, const void *data, uint32_t len)
{
	uint64_t gpa = fd_alloc(&self->f, len);
	struct fd_seg s = { gpa, len, false };
	uint32_t id, ulen;

	memcpy(fd_hva(&self->f, gpa, len), data, len);
	fd_add(&self->f, q, &s, 1);
	fd_kick(&self->f, q);
	fd_run(&self->f, 20);
	while (fd_used(&self->f, q, &id, &ulen) == 1)
		;
}

TEST_F(vcon, config_and_queues_follow_the_ports)
{
	EXPECT_EQ(6, fd_common_rd(&self->f, 0x12 /* num_queues */, 2));
	EXPECT_EQ(2, fd_common_rd(&self->f, DEVCFG + 4, 4)); /* max_nr_ports */
	fd_common_wr(&self->f, 0x14 /* device_status */, 0, 1);
	fd_common_wr(&self->f, 0x00, 0, 4); /* device_feature_select */
	EXPECT_NE(0, fd_common_rd(&self->f, 0x04, 4) & MULTIPORT);
}

TEST_F(vcon, handshake_then_data_on_each_port)
{
	setup_queues(self, MULTIPORT, 6);
	handshake(_metadata, self);
	tx(self, 1, "console", 7);
	tx(self, PROBE_TX, "VPRB-frames", 11);
	EXPECT_EQ(7, self->out.bytes);
	ASSERT_EQ(11, self->probe.len);
	EXPECT_EQ(0, memcmp("VPRB-frames", self->probe.buf, 11));
	EXPECT_EQ(7, stats(self).port_bytes[0]);
	EXPECT_EQ(11, stats(self).port_bytes[1]);
	/* the probe port's receive queue is never written: a kick there moves nothing */
	tx(self, 4, "x", 1);
	EXPECT_EQ(11, self->probe.len);
	EXPECT_EQ(0, fd_status(&self->f) & VIRTIO_CONFIG_S_NEEDS_RESET);
}

TEST_F(vcon, messages_wait_for_the_drivers_buffers)
{
	struct msg m[8];

	setup_queues(self, MULTIPORT, 6);
	send_ctrl(self, 0, VIRTIO_CONSOLE_DEVICE_READY, 1, 8);
	EXPECT_EQ(0, recv_ctrl(self, m, 8));
	post_rx(self, 1, 128);
	ASSERT_EQ(1, recv_ctrl(self, m, 8));
	EXPECT_EQ(VIRTIO_CONSOLE_PORT_ADD, m[0].event);
	EXPECT_EQ(0, m[0].id);
	/* a buffer too small for a message is given back empty, and counted */
	post_rx(self, 1, 4);
	ASSERT_EQ(1, recv_ctrl(self, m, 8));
	EXPECT_EQ(0xffff, m[0].value);
	EXPECT_EQ(1, stats(self).ctrl_bad);
	EXPECT_EQ(1, stats(self).ctrl_sent);
}

TEST_F(vcon, hostile_control_messages_are_refused_and_counted)
{
	struct msg m[8];

	setup_queues(self, MULTIPORT, 6);
	post_rx(self, 16, 128);
	send_ctrl(self, 0, VIRTIO_CONSOLE_PORT_READY, 1, 8);   /* before DEVICE_READY */
	send_ctrl(self, 0, VIRTIO_CONSOLE_DEVICE_READY, 1, 4); /* short */
	send_ctrl(self, 0, VIRTIO_CONSOLE_DEVICE_READY, 0, 8); /* the driver failed */
	EXPECT_EQ(0, recv_ctrl(self, m, 8));
	EXPECT_EQ(3, stats(self).ctrl_bad);
	send_ctrl(self, 0, VIRTIO_CONSOLE_DEVICE_READY, 1, 8);
	EXPECT_EQ(2, recv_ctrl(self, m, 8));
	send_ctrl(self, 0, VIRTIO_CONSOLE_DEVICE_READY, 1, 8);	 /* again: no second round */
	send_ctrl(self, 7, VIRTIO_CONSOLE_PORT_READY, 1, 8);	 /* no such port */
	send_ctrl(self, 0xffffffffu, VIRTIO_CONSOLE_PORT_OPEN, 1, 8);
	send_ctrl(self, 1, VIRTIO_CONSOLE_PORT_OPEN, 1, 8);	 /* not ready yet */
	send_ctrl(self, 0, VIRTIO_CONSOLE_RESIZE, 1, 8);	 /* the device's event */
	send_ctrl(self, 0, VIRTIO_CONSOLE_PORT_NAME, 1, 8);
	send_ctrl(self, 0, 0xffff, 1, 8);
	EXPECT_EQ(0, recv_ctrl(self, m, 8));
	EXPECT_EQ(10, stats(self).ctrl_bad);
	send_ctrl(self, 1, VIRTIO_CONSOLE_PORT_READY, 1, 8);
	EXPECT_EQ(2, recv_ctrl(self, m, 8));
	/* replayed PORT_READY: answered once only, so the device's queue stays bounded */
	for (int i = 0; i < 100; i++)
		send_ctrl(self, 1, VIRTIO_CONSOLE_PORT_READY, 1, 8);
	EXPECT_EQ(0, recv_ctrl(self, m, 8));
	EXPECT_EQ(110, stats(self).ctrl_bad);
	EXPECT_EQ(0, fd_status(&self->f) & VIRTIO_CONFIG_S_NEEDS_RESET);
}

/* Every cause the multiport console can report (its queues', a bad queue set-up, its control
 * messages': 21) is logged once, however often the guest repeats it. The old table held 16
 * causes, so the last 3 were logged every time (issue 19). */
TEST_F(vcon, every_cause_is_logged_once)
{
	unsigned int n = virtio_nr_causes(self->vd);
	struct log_capture cap;

	EXPECT_EQ(VIRTQ_NR_CAUSES + 1 + 10, n);
	for (unsigned int i = 0; i < n; i++) {
		ASSERT_NE(NULL, virtio_cause(self->vd, i));
		for (unsigned int j = 0; j < i; j++)
			EXPECT_NE(virtio_cause(self->vd, j), virtio_cause(self->vd, i));
	}
	EXPECT_EQ(NULL, virtio_cause(self->vd, n));
	uint64_t before = atomic_load(&self->vd->stats.guest_errors);

	/* the VM's own limit (LOG_LIMIT_BURST lines a window, log_limit_test) would cut this burst of
	 * every cause at once short: here only the once-per-cause rule is under test */
	log_limit_init(&self->vd->vm->log_limit, 2 * n, LOG_LIMIT_WINDOW_MS);
	ASSERT_EQ(0, log_capture_start(&cap));
	for (int round = 0; round < 3; round++)
		for (unsigned int i = 0; i < n; i++)
			virtio_report(self->vd, virtio_cause(self->vd, i), "cause %u", i);
	char *t = log_capture_end(&cap);

	ASSERT_NE(NULL, t);
	EXPECT_EQ(n, log_lines(t, "(reported once")) TH_LOG("%s", t);
	EXPECT_EQ(n, log_lines(t, ""));
	EXPECT_EQ(before + 3 * n, atomic_load(&self->vd->stats.guest_errors));
	free(t);
}

TEST_F(vcon, reset_starts_the_handshake_over)
{
	struct msg m[8];

	setup_queues(self, MULTIPORT, 6);
	handshake(_metadata, self);
	fd_common_wr(&self->f, 0x14 /* device_status */, 0, 1);
	memset(self->rx_gpa, 0, sizeof(self->rx_gpa));
	memset(self->f.q, 0, sizeof(self->f.q));
	setup_queues(self, MULTIPORT, 6);
	handshake(_metadata, self);
	EXPECT_EQ(0, recv_ctrl(self, m, 8));
}

TEST_F(vcon, without_multiport_port_0_alone)
{
	setup_queues(self, 0, 2);
	tx(self, 1, "console", 7);
	EXPECT_EQ(7, self->out.bytes);
	EXPECT_EQ(0, self->probe.len);
	EXPECT_FALSE(stats(self).multiport);
}

TEST(vcon_bad_ports_refused)
{
	struct fake_kvm fk;
	const struct virtio_console_port p[3] = { { .write = sink_write }, { .write = sink_write },
						  { .write = sink_write } };

	ASSERT_EQ(0, fake_vm_init(&vm, &fk, 1 << 20, 96));
	ASSERT_EQ(0, pci_host_init(&host, &vm, &fd_layout));
	EXPECT_EQ(NULL, virtio_console_create_ports(&vm, &host, p, 3, true));
	EXPECT_EQ(NULL, virtio_console_create_ports(&vm, &host, p, 2, false));
	EXPECT_EQ(NULL, virtio_console_create_ports(&vm, &host, p, 0, true));
	fake_vm_free(&vm);
}

/*
 * A guest that refills the transmit ring from another vCPU while the worker drains it: here the
 * port's write, called for each chain the worker takes, plays that vCPU (it reaps what was used and
 * posts a new chain for each, without kicking). One pass of the worker takes at most the ring's
 * size in chains, then lets go of the device lock; the rest is not lost: the worker comes back by
 * itself, without another kick, until every chain completed.
 */
#define REFILL_RING 64
#define REFILL_TOTAL (3 * REFILL_RING + 5)

struct refill {
	struct fake_driver *f;
	unsigned int posted, completed, in_pass, bytes;
};

static void refill_post(struct refill *r)
{
	uint64_t gpa = fd_alloc(r->f, 8);
	struct fd_seg s = { gpa, 8, false };

	memcpy(fd_hva(r->f, gpa, 8), "refill!\n", 8);
	fd_add(r->f, 1, &s, 1);
	r->posted++;
}

static void refill_write(void *opaque, const uint8_t *buf, size_t len)
{
	struct refill *r = opaque;
	uint32_t id, ulen;

	(void)buf;
	r->in_pass++;
	r->bytes += len;
	while (fd_used(r->f, 1, &id, &ulen) == 1) {
		r->completed++;
		if (r->posted < REFILL_TOTAL)
			refill_post(r);
	}
}

TEST(a_guest_refilling_the_ring_cannot_hold_the_worker)
{
	struct fake_kvm fk;
	struct fake_driver f;
	struct refill r = { .f = &f };
	const struct virtio_console_port p = { .console = true, .write = refill_write, .opaque = &r };
	unsigned int most = 0, rounds = 0;
	uint32_t id, ulen;

	ASSERT_EQ(0, fake_vm_init(&vm, &fk, 1 << 20, 96));
	ASSERT_EQ(0, pci_host_init(&host, &vm, &fd_layout));
	struct virtio_dev *vd = virtio_console_create_ports(&vm, &host, &p, 1, false);

	ASSERT_NE(NULL, vd);
	fd_probe(&f, &vm, vd);
	fd_negotiate(&f, 0);
	fd_msix_enable(&f, 2);
	fd_queue_setup(&f, 0, REFILL_RING, 0);
	fd_queue_setup(&f, 1, REFILL_RING, 1);
	fd_driver_ok(&f);
	while (r.posted < REFILL_RING)
		refill_post(&r);
	fd_kick(&f, 1); /* the only kick */
	/* each virtio_poll round serves the queue's eventfd once: one pass */
	while (rounds < 100 && virtio_poll(vd, 0) > 0) {
		rounds++;
		if (r.in_pass > most)
			most = r.in_pass;
		r.in_pass = 0;
	}
	while (fd_used(&f, 1, &id, &ulen) == 1)
		r.completed++;
	EXPECT_GE(REFILL_RING, most) TH_LOG("one pass took %u chains, %u rounds", most, rounds);
	EXPECT_EQ(REFILL_TOTAL, r.posted);
	EXPECT_EQ(REFILL_TOTAL, r.completed) TH_LOG("%u rounds", rounds);
	EXPECT_EQ(8 * REFILL_TOTAL, r.bytes);
	EXPECT_LE(4, rounds);
	EXPECT_LE(3, atomic_load(&vd->stats.passes_cut)); /* and the worker kicked itself each time */
	EXPECT_EQ(1, atomic_load(&vd->stats.notify_exits));
	EXPECT_EQ(0, fd_status(&f) & VIRTIO_CONFIG_S_NEEDS_RESET);
	virtio_stop(vd);
	fake_vm_free(&vm);
}

/* --- the probe's port into vmm's receiver --- */

/* A START and a CLOCK frame, as the guest encodes them, into out; returns the length. */
static size_t two_frames(uint8_t *out, uint32_t seq)
{
	uint8_t p[PROBE_MAX_PAYLOAD];
	struct probe_start s = { .workload = PROBE_W_TIMER, .ncpus = 1, .count = 2, .interval_ns = 1000 };
	size_t n = probe_frame(out, PROBE_T_CLOCK, seq, p, probe_put_clock(p, 123456789));

	return n + probe_frame(out + n, PROBE_T_START, seq + 1, p, probe_put_start(p, &s));
}

static void clock_seen(void *opaque)
{
	(*(int *)opaque)++;
}

TEST(probe_rx_port_frames_split_corrupt_and_relayed)
{
	char path[] = "/tmp/vmm-probe-rx-XXXXXX";
	int fd = mkstemp(path), clocks = 0;
	struct probe_rx r;
	uint8_t f[2 * PROBE_MAX_FRAME], back[4 * PROBE_MAX_FRAME];
	size_t n = two_frames(f, 0);

	ASSERT_LE(0, fd);
	ASSERT_EQ(0, probe_rx_init(&r, path));
	r.on_clock = clock_seen;
	r.clock_opaque = &clocks;
	/* a byte at a time: frames are put back together across buffers */
	for (size_t i = 0; i < n; i++)
		probe_rx_port(&r, f + i, 1);
	EXPECT_EQ(2, r.port.frames);
	EXPECT_EQ(n, r.port.bytes);
	EXPECT_EQ(1, clocks);
	EXPECT_EQ(123456789, r.dec->clock_ns);
	/* a corrupt frame (its CRC) and an oversized one are refused; the next still decodes */
	uint8_t g[2 * PROBE_MAX_FRAME], p[PROBE_CLOCK_SIZE];
	size_t m = probe_frame(g, PROBE_T_CLOCK, 2, p, probe_put_clock(p, 5));

	m += probe_frame(g + m, PROBE_T_CLOCK, 3, p, probe_put_clock(p, 7));
	g[PROBE_HDR_SIZE] ^= 1;
	probe_rx_port(&r, g, m);
	uint8_t big[PROBE_HDR_SIZE + 8] = { 0x56, 0x50, 0x52, 0x42, PROBE_T_BATCH, PROBE_PROTO_VERSION, 0xff, 0xff };

	probe_rx_port(&r, big, sizeof(big));
	EXPECT_LT(0, probe_decode_errors(r.dec));
	EXPECT_EQ(3, r.port.frames); /* the second CLOCK */
	EXPECT_EQ(7, r.dec->clock_ns);
	EXPECT_EQ(1, clocks); /* the boot's end is signalled once */
	/* --probe-out holds the port's bytes exactly as they came */
	ssize_t got = pread(fd, back, sizeof(back), 0);

	EXPECT_EQ((ssize_t)(n + m + sizeof(big)), got);
	EXPECT_EQ(0, memcmp(back, f, n));
	EXPECT_EQ(0, r.console.frames);
	probe_rx_destroy(&r);
	close(fd);
	unlink(path);
}

TEST(probe_rx_console_lines_counted_apart)
{
	struct probe_rx r;
	uint8_t f[2 * PROBE_MAX_FRAME];
	size_t n = probe_frame(f, PROBE_T_CLOCK, 0, (const uint8_t *)"\x01\0\0\0\0\0\0\0", PROBE_CLOCK_SIZE);
	char line[PROBE_TEXT_MAX + 1], *j = NULL;
	size_t ll = strlen(PROBE_TEXT_PREFIX), jl = 0;

	memcpy(line, PROBE_TEXT_PREFIX, ll);
	ll += probe_b64_encode(line + ll, f, n);
	line[ll++] = '\n';
	ASSERT_EQ(0, probe_rx_init(&r, NULL));
	static const char other[] = "vmm-guest: hello\n  VMM-PROBE not at the start\n";

	probe_rx_console(&r, (const uint8_t *)other, strlen(other));
	probe_rx_console(&r, (const uint8_t *)line, ll);
	EXPECT_EQ(1, r.console.frames);
	EXPECT_EQ(ll, r.console.bytes);
	EXPECT_EQ(0, r.port.frames);
	FILE *m = open_memstream(&j, &jl);

	probe_rx_json(&r, m);
	fclose(m);
	EXPECT_NE(NULL, strstr(j, "{\"channel\":\"console\",\"port\":{\"frames\":0,\"bytes\":0},\"console\":{\"frames\":1,"))
		TH_LOG("%s", j);
	free(j);
	probe_rx_destroy(&r);
	EXPECT_GT(0, probe_rx_init(&r, "/nonexistent-dir/probe.bin"));
	probe_rx_destroy(&r);
}

TEST_HARNESS_MAIN
