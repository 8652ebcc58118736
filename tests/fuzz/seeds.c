// SPDX-License-Identifier: MIT
/*
 * Writes the seed corpora (tests/fuzz/corpus/NAME/): for each target a few inputs that reach deep
 * into it, so a short run starts from working guests and files rather than from nothing. Device
 * seeds are guest programs in fuzz_guest.c's encoding: a driver bringing the device up, I/O, and
 * the awkward moments (reset mid-I/O, a queue enabled twice, BARs moved under traffic).
 * Run by make fuzz-seeds; the output is committed.
 */
#include <asm/bootparam.h>
#include <errno.h>
#include <linux/pci_regs.h>
#include <linux/virtio_blk.h>
#include <linux/virtio_console.h>
#include <linux/virtio_net.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <zlib.h>

#include "guest/probe_proto.h"
#include "tests/fuzz/fuzz.h"
#include "tests/unit/stats_fixture.h"
#include "virtio/virtio.h"

#define CC(f) offsetof(struct virtio_pci_common_cfg, f)

struct out {
	uint8_t b[1 << 17];
	size_t n;
	unsigned int ops; /* the target's ops, as in struct fz_guest */
};

static void put(struct out *o, uint64_t v, unsigned int bytes)
{
	for (unsigned int i = 0; i < bytes; i++)
		o->b[o->n++] = v >> (8 * i);
}

static void putb(struct out *o, const void *p, size_t n)
{
	memcpy(o->b + o->n, p, n);
	o->n += n;
}

static void save(const char *target, const char *name, const struct out *o)
{
	char path[256];
	FILE *f;

	snprintf(path, sizeof(path), "tests/fuzz/corpus/%s", target);
	if (mkdir(path, 0755) < 0 && errno != EEXIST)
		goto fail;
	snprintf(path, sizeof(path), "tests/fuzz/corpus/%s/%s", target, name);
	f = fopen(path, "wb");
	if (!f || fwrite(o->b, 1, o->n, f) != o->n || fclose(f))
		goto fail;
	return;
fail:
	perror(path);
	exit(1);
}

/* ---- guest programs ---- */

static void op(struct out *o, unsigned int which)
{
	unsigned int idx = 0;

	for (unsigned int i = 0; i < which; i++)
		idx += !o->ops || (o->ops & (1u << i));
	put(o, idx, 1);
}

static unsigned int sz(unsigned int len)
{
	return len == 8 ? 3 : len == 4 ? 2 : len == 2 ? 1 : 0;
}

static void cfg_wr(struct out *o, uint32_t reg, uint32_t v, unsigned int len)
{
	op(o, FZ_CFG_WR), put(o, reg, 2), put(o, sz(len), 1), put(o, v, 4);
}

static void cfg_rd(struct out *o, uint32_t reg, unsigned int len)
{
	op(o, FZ_CFG_RD), put(o, reg, 2), put(o, sz(len), 1);
}

static void bar_wr(struct out *o, unsigned int bar, uint32_t off, uint64_t v, unsigned int len)
{
	op(o, FZ_BAR_WR), put(o, bar, 1), put(o, off, 2), put(o, sz(len), 1), put(o, v, 8);
}

static void bar_rd(struct out *o, unsigned int bar, uint32_t off, unsigned int len)
{
	op(o, FZ_BAR_RD), put(o, bar, 1), put(o, off, 2), put(o, sz(len), 1);
}

static void ram_wr(struct out *o, uint32_t off, const void *p, uint8_t n)
{
	op(o, FZ_RAM_WR), put(o, off, 4), put(o, n, 1), putb(o, p, n);
}

static void kick(struct out *o, unsigned int q)
{
	op(o, FZ_KICK), put(o, q, 1);
}

static void poll_dev(struct out *o)
{
	op(o, FZ_POLL);
}

static void input(struct out *o, const void *p, uint8_t n)
{
	op(o, FZ_INPUT), put(o, n, 1), putb(o, p, n);
}

struct seg {
	uint32_t off; /* from the start of RAM, a multiple of 4 */
	uint16_t len;
	bool write;
};

static void ring(struct out *o, unsigned int q, const struct seg *s, unsigned int n)
{
	op(o, FZ_RING), put(o, q, 1), put(o, n - 1, 1);
	for (unsigned int i = 0; i < n; i++)
		put(o, s[i].off / 4, 2), put(o, s[i].len, 2), put(o, s[i].write, 1);
}

#define Q_DESC(q) (0x1000 + 0x3000 * (q))
#define Q_AVAIL(q) (Q_DESC(q) + 0x1000)
#define Q_USED(q) (Q_DESC(q) + 0x2000)

static void status(struct out *o, uint8_t s)
{
	bar_wr(o, 0, CC(device_status), s, 1);
}

/* A Linux-like driver: decode on, features, MSI-X vectors, the queues in qmask, DRIVER_OK. */
static void virtio_up_queues(struct out *o, uint32_t msix_cap, unsigned int nq, uint32_t qmask,
			     uint16_t qsize, uint64_t feat)
{
	const uint8_t A = VIRTIO_CONFIG_S_ACKNOWLEDGE, D = VIRTIO_CONFIG_S_DRIVER,
		      F = VIRTIO_CONFIG_S_FEATURES_OK;

	feat |= 1ULL << VIRTIO_F_VERSION_1;
	cfg_wr(o, PCI_COMMAND, PCI_COMMAND_MEMORY | PCI_COMMAND_MASTER, 2);
	status(o, 0);
	status(o, A);
	status(o, A | D);
	for (unsigned int sel = 0; sel < 2; sel++) {
		bar_wr(o, 0, CC(device_feature_select), sel, 4);
		bar_rd(o, 0, CC(device_feature), 4);
		bar_wr(o, 0, CC(guest_feature_select), sel, 4);
		bar_wr(o, 0, CC(guest_feature), (uint32_t)(feat >> (32 * sel)), 4);
	}
	status(o, A | D | F);
	for (unsigned int i = 0; i <= nq; i++) {
		bar_wr(o, 1, 16 * i, 0x08090040, 4);
		bar_wr(o, 1, 16 * i + 4, 0, 4);
		bar_wr(o, 1, 16 * i + 8, 0x40 + i, 4);
		bar_wr(o, 1, 16 * i + 12, 0, 4);
	}
	cfg_wr(o, msix_cap + PCI_MSIX_FLAGS, PCI_MSIX_FLAGS_ENABLE, 2);
	bar_wr(o, 0, CC(msix_config), nq, 2);
	for (unsigned int q = 0; q < nq; q++) {
		if (!(qmask & 1u << q))
			continue;
		bar_wr(o, 0, CC(queue_select), q, 2);
		bar_wr(o, 0, CC(queue_size), qsize, 2);
		bar_wr(o, 0, CC(queue_msix_vector), q, 2);
		bar_wr(o, 0, CC(queue_desc_lo), FAKE_RAM_BASE + Q_DESC(q), 4);
		bar_wr(o, 0, CC(queue_desc_hi), 0, 4);
		bar_wr(o, 0, CC(queue_avail_lo), FAKE_RAM_BASE + Q_AVAIL(q), 4);
		bar_wr(o, 0, CC(queue_avail_hi), 0, 4);
		bar_wr(o, 0, CC(queue_used_lo), FAKE_RAM_BASE + Q_USED(q), 4);
		bar_wr(o, 0, CC(queue_used_hi), 0, 4);
		bar_wr(o, 0, CC(queue_enable), 1, 2);
	}
	status(o, A | D | F | VIRTIO_CONFIG_S_DRIVER_OK);
}

/* Every queue. */
static void virtio_up(struct out *o, uint32_t msix_cap, unsigned int nq, uint16_t qsize, uint64_t feat)
{
	virtio_up_queues(o, msix_cap, nq, ~0u, qsize, feat);
}

static void seed_sink(void *opaque, const uint8_t *buf, size_t len)
{
	(void)opaque;
	(void)buf;
	(void)len;
}

/* The device's MSI-X capability offset and BAR 0, from a device made the way the target makes it. */
static uint32_t console_msix_cap(void)
{
	static struct vm vm;
	static struct fake_kvm fk;
	static struct pci_host host;
	static struct console_out co;
	struct fz_guest g;

	fz_vm_init(&g, &vm, &fk, &host);
	console_out_init(&co, -1, NULL, NULL);
	/* as the virtio_console target makes it: the console and the probe's port, multiport */
	const struct virtio_console_port ports[] = {
		{ .console = true, .write = seed_sink }, { .name = "org.vmm.probe", .write = seed_sink },
	};
	struct virtio_dev *vd = virtio_console_create_ports(&vm, &host, ports, 2, true);

	if (!vd)
		abort();
	return vd->msix.cap;
}

static void blk_req(struct out *o, uint32_t type, uint64_t sector, uint16_t len, bool rd)
{
	struct virtio_blk_outhdr h = { .type = type, .sector = sector };
	uint8_t data[64];

	memset(data, 0x5a, sizeof(data));
	ram_wr(o, 0x20000, &h, sizeof(h));
	ram_wr(o, 0x21000, data, sizeof(data));
	struct seg s[3] = { { 0x20000, sizeof(h), false }, { 0x21000, len, rd }, { 0x22000, 1, true } };

	if (len)
		ring(o, 0, s, 3);
	else
		ring(o, 0, (struct seg[]){ s[0], s[2] }, 2);
	kick(o, 0);
	poll_dev(o);
}

static void seeds_virtio(uint32_t cap)
{
	struct out o = { 0 };

	/* virtio-blk: write, read back, flush, ID; a reset in the middle of I/O; BAR moved */
	virtio_up(&o, cap, 1, 128, 1ULL << VIRTIO_BLK_F_FLUSH);
	blk_req(&o, VIRTIO_BLK_T_OUT, 8, 512, false);
	blk_req(&o, VIRTIO_BLK_T_IN, 8, 512, true);
	blk_req(&o, VIRTIO_BLK_T_FLUSH, 0, 0, false);
	blk_req(&o, VIRTIO_BLK_T_GET_ID, 0, 20, true);
	bar_rd(&o, 0, 0x2000, 8); /* capacity */
	save("virtio_blk", "io", &o);
	o.n = 0;
	virtio_up(&o, cap, 1, 128, 0);
	ram_wr(&o, 0x20000, &(struct virtio_blk_outhdr){ .type = VIRTIO_BLK_T_OUT, .sector = 120 }, 16);
	ring(&o, 0, (struct seg[]){ { 0x20000, 16, false }, { 0x21000, 4096, false }, { 0x22000, 1, true } }, 3);
	kick(&o, 0);
	status(&o, 0); /* reset before the worker ran */
	poll_dev(&o);
	bar_rd(&o, 0, CC(device_status), 1);
	virtio_up(&o, cap, 1, 64, 0);
	cfg_wr(&o, PCI_BASE_ADDRESS_0, 0x10200000, 4); /* BAR 0 moved under traffic */
	blk_req(&o, VIRTIO_BLK_T_IN, 127, 512, true);
	bar_wr(&o, 0, CC(queue_enable), 1, 2); /* enabled twice */
	save("virtio_blk", "reset-and-move", &o);

	/* virtio-console: transmit, receive input, queues re-enabled, a reset, traffic again */
	o.n = 0;
	virtio_up(&o, cap, 2, 64, 0);
	ram_wr(&o, 0x20000, "hello, world\n", 13);
	ring(&o, 1, (struct seg[]){ { 0x20000, 13, false } }, 1);
	kick(&o, 1);
	poll_dev(&o);
	ring(&o, 0, (struct seg[]){ { 0x21000, 64, true } }, 1);
	kick(&o, 0);
	poll_dev(&o);
	input(&o, "keys\r", 5);
	bar_rd(&o, 0, 0x1000, 1); /* ISR */
	save("virtio_console", "tx-rx", &o);
	o.n = 0;
	virtio_up(&o, cap, 2, 64, 0);
	ring(&o, 1, (struct seg[]){ { 0x20000, 8, false }, { 0x20010, 8, false } }, 2);
	status(&o, 0);
	kick(&o, 1);
	poll_dev(&o);
	virtio_up(&o, cap, 2, 32, 0);
	cfg_wr(&o, cap + PCI_MSIX_FLAGS, 0, 2); /* MSI-X off: INTx and the ISR */
	ring(&o, 1, (struct seg[]){ { 0x20000, 8, false } }, 1);
	kick(&o, 1);
	poll_dev(&o);
	bar_rd(&o, 0, 0x1000, 1);
	save("virtio_console", "reset-intx", &o);
	/* multiport: control buffers, DEVICE_READY, PORT_READY for both ports, the probe port opened,
	 * a probe frame on its transmit queue, then a replayed PORT_READY and a short message */
	o.n = 0;
	virtio_up(&o, cap, 6, 64, 1ULL << VIRTIO_CONSOLE_F_MULTIPORT);
	for (unsigned int i = 0; i < 6; i++)
		ring(&o, 2, (struct seg[]){ { 0x23000 + 0x100 * i, 128, true } }, 1);
	kick(&o, 2);
	const struct virtio_console_control ctl[] = {
		{ 0, VIRTIO_CONSOLE_DEVICE_READY, 1 }, { 0, VIRTIO_CONSOLE_PORT_READY, 1 },
		{ 1, VIRTIO_CONSOLE_PORT_READY, 1 }, { 1, VIRTIO_CONSOLE_PORT_OPEN, 1 },
		{ 1, VIRTIO_CONSOLE_PORT_READY, 1 },
	};

	for (unsigned int i = 0; i < sizeof(ctl) / sizeof(ctl[0]); i++) {
		ram_wr(&o, 0x24000 + 0x10 * i, &ctl[i], sizeof(ctl[i]));
		ring(&o, 3, (struct seg[]){ { 0x24000 + 0x10 * i, sizeof(ctl[i]), false } }, 1);
		kick(&o, 3);
		poll_dev(&o);
	}
	ring(&o, 3, (struct seg[]){ { 0x24000, 4, false } }, 1);
	kick(&o, 3);
	uint8_t pf[PROBE_HDR_SIZE + PROBE_CLOCK_SIZE], pay[PROBE_CLOCK_SIZE];
	size_t fl = probe_frame(pf, PROBE_T_CLOCK, 0, pay, probe_put_clock(pay, 1000));

	ram_wr(&o, 0x25000, pf, (uint8_t)fl);
	/* the frame split across two descriptors */
	ring(&o, 5, (struct seg[]){ { 0x25000, 12, false }, { 0x2500c, (uint16_t)(fl - 12), false } }, 2);
	kick(&o, 5);
	poll_dev(&o);
	save("virtio_console", "multiport", &o);

	/* virtio-net: a frame out (vnet header + Ethernet), receive buffers, a frame in, one that
	 * does not fit the buffer posted, checksum offload asked for in the header */
	o.n = 0;
	virtio_up(&o, cap, 2, 64, 1ULL << VIRTIO_NET_F_CSUM | 1ULL << VIRTIO_NET_F_GUEST_CSUM |
		  1ULL << VIRTIO_NET_F_MRG_RXBUF);
	static const uint8_t frame[12 + 60] = { [12] = 0x02, [17] = 2, [18] = 0x02, [23] = 1, [24] = 0x88,
						[25] = 0xb5, [26] = 'h', [27] = 'i' };
	ram_wr(&o, 0x20000, frame, sizeof(frame));
	ring(&o, 1, (struct seg[]){ { 0x20000, 12, false }, { 0x2000c, 60, false } }, 2);
	kick(&o, 1);
	for (int i = 0; i < 4; i++)
		ring(&o, 0, (struct seg[]){ { 0x30000 + 0x800 * i, 1526, true } }, 1);
	kick(&o, 0);
	input(&o, "a frame from the host", 21);
	poll_dev(&o);
	ring(&o, 0, (struct seg[]){ { 0x38000, 20, true } }, 1);
	input(&o, "a frame longer than the twenty bytes posted", 43);
	poll_dev(&o);
	const uint8_t csum[12] = { VIRTIO_NET_HDR_F_NEEDS_CSUM, 0, 0, 0, 0, 0, 14, 0, 16, 0 };

	ram_wr(&o, 0x20000, csum, sizeof(csum));
	ring(&o, 1, (struct seg[]){ { 0x20000, 72, false } }, 1);
	kick(&o, 1);
	poll_dev(&o);
	status(&o, 0);
	save("virtio_net", "tx-rx", &o);

	/* issue 19: frames from the host while the guest cannot take them: DRIVER_OK with only the
	 * TX queue (RX enabled later, then buffers), and a TX head past the ring (NEEDS_RESET) */
	o.n = 0;
	virtio_up_queues(&o, cap, 2, 1u << 1, 64, 0);
	input(&o, "a frame with no RX queue", 24);
	poll_dev(&o);
	ring(&o, 1, (struct seg[]){ { 0x20000, 72, false } }, 1);
	kick(&o, 1);
	poll_dev(&o);
	save("virtio_net", "tx-only", &o);
	o.n = 0;
	virtio_up(&o, cap, 2, 64, 0);
	ring(&o, 0, (struct seg[]){ { 0x30000, 1526, true } }, 1);
	kick(&o, 0);
	static const uint8_t bad_head[6] = { 0, 0, 1, 0, 0xe7, 0x03 }; /* avail idx 1, ring[0] = 999 */

	ram_wr(&o, Q_AVAIL(1), bad_head, sizeof(bad_head));
	kick(&o, 1);
	poll_dev(&o);
	input(&o, "a frame after NEEDS_RESET", 25);
	poll_dev(&o);
	save("virtio_net", "needs-reset", &o);

	/* PCI config space: BAR sizing and moves, decode off and on, the virtio config window */
	o.n = 0;
	o.ops = 1u << FZ_CFG_RD | 1u << FZ_CFG_WR | 1u << FZ_BAR_RD | 1u << FZ_BAR_WR | 1u << FZ_RAW_RD |
		1u << FZ_RAW_WR;
	for (int i = 0; i < 6; i++) {
		cfg_wr(&o, PCI_BASE_ADDRESS_0 + 4 * i, 0xffffffff, 4);
		cfg_rd(&o, PCI_BASE_ADDRESS_0 + 4 * i, 4);
	}
	cfg_wr(&o, PCI_BASE_ADDRESS_0, 0x10000000, 4);
	cfg_wr(&o, PCI_BASE_ADDRESS_1, 0x10004000, 4);
	cfg_wr(&o, PCI_COMMAND, PCI_COMMAND_MEMORY, 2);
	bar_rd(&o, 0, CC(num_queues), 2);
	cfg_wr(&o, PCI_BASE_ADDRESS_0, 0x10008000, 4); /* onto... nothing: moved while decoding */
	bar_rd(&o, 0, CC(num_queues), 2);
	cfg_wr(&o, PCI_BASE_ADDRESS_1, 0x10008000, 4); /* onto BAR 0 */
	cfg_wr(&o, PCI_COMMAND, 0, 2);
	cfg_wr(&o, PCI_COMMAND, PCI_COMMAND_MEMORY, 2);
	for (uint32_t c = 0x34; c < 0x100; c += 4)
		cfg_rd(&o, c, 4);
	save("pci_config", "bars", &o);
	o.n = 0;
	for (uint32_t c = 0x40; c < 0xa0; c += 4)
		cfg_wr(&o, c, 0xffffffff, 4);
	for (uint32_t c = 0; c < 0x100; c += 1)
		cfg_rd(&o, c, 1);
	op(&o, FZ_RAW_WR), put(&o, FD_ECAM + (2 << 15) + 4, 4), put(&o, 2, 1), put(&o, 6, 8);
	save("pci_config", "caps", &o);
}

static void seeds_msix(void)
{
	static struct vm vm;
	static struct fake_kvm fk;
	static struct pci_host host;
	static struct pci_dev dev;
	static struct msix m;
	struct fz_guest g;
	struct out o = { .ops = 1u << FZ_CFG_RD | 1u << FZ_CFG_WR | 1u << FZ_BAR_RD | 1u << FZ_BAR_WR |
				1u << FZ_INPUT };

	fz_vm_init(&g, &vm, &fk, &host);
	if (pci_dev_add(&host, &dev, 0x1af4, 0x10f0, 0xff000001, 0x1af4, 0) < 0 ||
	    msix_init(&m, &vm, &dev, 5, 2) < 0)
		abort();
	put(&o, 5 - 1, 1); /* msix_fuzz.c: the vector count */
	cfg_wr(&o, PCI_COMMAND, PCI_COMMAND_MEMORY, 2);
	for (unsigned int i = 0; i < 5; i++) {
		bar_wr(&o, 2, 16 * i, 0x08090040 + 4 * i, 4);
		bar_wr(&o, 2, 16 * i + 8, 0x40 + i, 4);
		bar_wr(&o, 2, 16 * i + 12, 0, 4);
	}
	cfg_wr(&o, m.cap + PCI_MSIX_FLAGS, PCI_MSIX_FLAGS_ENABLE, 2);
	input(&o, "\0\1\2\3\4", 5);
	bar_wr(&o, 2, 12, 1, 4); /* vector 0 masked, raised, pending in the PBA */
	input(&o, "\0\0", 2);
	bar_rd(&o, 2, 0x800, 8);
	bar_wr(&o, 2, 0, 0x08090080, 8); /* re-addressed while masked */
	bar_wr(&o, 2, 12, 0, 4);
	bar_rd(&o, 2, 0x800, 4);
	cfg_wr(&o, m.cap + PCI_MSIX_FLAGS, PCI_MSIX_FLAGS_ENABLE | PCI_MSIX_FLAGS_MASKALL, 2);
	input(&o, "\3", 1);
	cfg_wr(&o, m.cap + PCI_MSIX_FLAGS, PCI_MSIX_FLAGS_ENABLE, 2);
	input(&o, "\x81\1", 2); /* KVM refuses the next route */
	cfg_wr(&o, PCI_BASE_ADDRESS_2, 0x10100000, 4);
	bar_rd(&o, 2, 16, 4);
	save("msix", "table-pba", &o);
	/* all 64 vectors: the table's whole KiB and the PBA's every bit */
	o.n = 0;
	put(&o, MSIX_MAX_VECTORS - 1, 1);
	cfg_wr(&o, PCI_COMMAND, PCI_COMMAND_MEMORY, 2);
	cfg_wr(&o, m.cap + PCI_MSIX_FLAGS, PCI_MSIX_FLAGS_ENABLE | PCI_MSIX_FLAGS_MASKALL, 2);
	for (unsigned int i = 0; i < MSIX_MAX_VECTORS; i += 9)
		bar_wr(&o, 2, 16 * i, 0x08090040, 4), bar_wr(&o, 2, 16 * i + 8, i, 4);
	input(&o, "\0\x3f\x20\x3e", 4);
	bar_rd(&o, 2, 0x800, 8);
	bar_rd(&o, 2, 16 * 63 + 12, 4);
	bar_rd(&o, 2, 16 * 64, 4);
	save("msix", "all-vectors", &o);
}

/* The igb VF of tests/unit/vfio_config_test.c: MSI-X, MSI, PCIe, PM and AER. */
static void seeds_vfio(void)
{
	struct out o = { .ops = 1u << FZ_CFG_RD | 1u << FZ_CFG_WR | 1u << FZ_BAR_RD | 1u << FZ_BAR_WR |
				1u << FZ_RAW_RD | 1u << FZ_RAW_WR };
	uint8_t c[256] = { 0 };
	/* the layout block (vfio_config_fuzz.c): no MSI-X of the input's; BARs 0 and 3, 16 KiB, mapped */
	const uint8_t igb_layout[] = { 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 2 | 16, 0xf, 0xf, 2 | 16, 0xf, 0xf };
#define P(off, v, len) do { uint32_t x_ = (v); memcpy(c + (off), &x_, (len)); } while (0)
	P(PCI_VENDOR_ID, 0x8086, 2);
	P(PCI_DEVICE_ID, 0x10ca, 2);
	P(PCI_CLASS_REVISION, 0x02000001, 4);
	P(PCI_STATUS, PCI_STATUS_CAP_LIST, 2);
	P(PCI_BASE_ADDRESS_0, PCI_BASE_ADDRESS_MEM_TYPE_64, 4);
	P(PCI_BASE_ADDRESS_3, PCI_BASE_ADDRESS_MEM_TYPE_64, 4);
	P(PCI_ROM_ADDRESS, 0xfff00001, 4);
	P(PCI_INTERRUPT_PIN, 1, 1);
	P(PCI_CAPABILITY_LIST, 0x40, 1);
	P(0x40, PCI_CAP_ID_PM | 0x50 << 8, 2);
	P(0x50, PCI_CAP_ID_MSI | 0x70 << 8, 2);
	P(0x52, PCI_MSI_FLAGS_64BIT | PCI_MSI_FLAGS_MASKBIT | (2 << 1), 2);
	P(0x70, PCI_CAP_ID_MSIX | 0xa0 << 8, 2);
	P(0x72, 2, 2);
	P(0x74, 3, 4);
	P(0x78, 0x2000 | 3, 4);
	P(0xa0, PCI_CAP_ID_EXP, 2);
	P(0xa2, PCI_EXP_TYPE_RC_END << 4 | 2, 2);
	P(0xa4, 0x8000, 4);
	putb(&o, c, sizeof(c));
	putb(&o, igb_layout, sizeof(igb_layout));
	for (uint32_t r = 0; r < 0x100; r += 4)
		cfg_rd(&o, r, 4);
	cfg_wr(&o, PCI_COMMAND, PCI_COMMAND_MEMORY | PCI_COMMAND_MASTER | PCI_COMMAND_SERR, 2);
	for (uint32_t e = 0; e < 4; e++) /* the table in BAR 3, one entry past the device's 3 */
		bar_wr(&o, 3, 16 * e, 0x08090040, 4);
	bar_rd(&o, 3, 0x2000, 8);
	bar_wr(&o, 0, 0x100, 0x1234, 4);
	cfg_wr(&o, PCI_COMMAND, PCI_COMMAND_INTX_DISABLE, 2);
	for (uint32_t r = 0x40; r < 0xc0; r += 4) /* the capabilities, wherever vmm put them */
		cfg_wr(&o, r, 0xffffffff, 4);
	for (uint32_t r = 0x40; r < 0xc0; r += 2)
		cfg_wr(&o, r, 0x0001, 2);
	cfg_wr(&o, PCI_ROM_ADDRESS, 0xffffffff, 4);
	cfg_rd(&o, PCI_ROM_ADDRESS, 4);
	cfg_rd(&o, 0x100, 4);
	save("vfio_config", "igb-vf", &o);
	/* a looping capability list and one running off the end */
	o.n = 0;
	P(0x40, PCI_CAP_ID_MSIX | 0x40 << 8, 2);
	P(0xfc, PCI_CAP_ID_MSI | 0x00 << 8, 2);
	P(0x50, PCI_CAP_ID_MSI | 0xfc << 8, 2);
	putb(&o, c, sizeof(c));
	putb(&o, igb_layout, sizeof(igb_layout));
	for (uint32_t r = 0x34; r < 0x100; r += 4)
		cfg_rd(&o, r, 4);
	save("vfio_config", "cap-loop", &o);
	/* the input's MSI-X: 2048 entries at 0x4000 of a 64 KiB BAR 0 (MSIX_MAPPABLE), its PBA right
	 * after; then 40 sparse areas in a 1 MiB BAR 2 */
	o.n = 0;
	P(0x40, PCI_CAP_ID_MSIX | 0x00 << 8, 2);
	P(0x50, 0, 4);
	P(PCI_BASE_ADDRESS_0, PCI_BASE_ADDRESS_MEM_TYPE_64, 4);
	P(PCI_BASE_ADDRESS_2, PCI_BASE_ADDRESS_MEM_TYPE_64, 4);
	P(PCI_BASE_ADDRESS_3, 0, 4);
	P(PCI_CAPABILITY_LIST, 0, 1);
	putb(&o, c, sizeof(c));
	const uint8_t big[] = { 1, 0xff, 0x07, 0x00, 0x40, 0, 0, 0x00, 0xc0, 0, 0, 4 | 16 | 32, 0xf,
				8 | 16 | 64, 40 };

	putb(&o, big, sizeof(big));
	for (uint32_t k = 0; k < 40; k++)
		put(&o, 2 * k + 1, 1), put(&o, 1, 1);
	for (int i = 3; i < 6; i++)
		put(&o, 0xf, 1);
	cfg_wr(&o, PCI_COMMAND, PCI_COMMAND_MEMORY, 2);
	for (uint32_t e = 0; e < 2048; e += 97)
		bar_wr(&o, 0, 0x4000 + 16 * e, 0xfee00000 + e, 4), bar_rd(&o, 0, 0x4000 + 16 * e, 4);
	bar_rd(&o, 0, 0xc000 + 0xf8, 8);
	bar_wr(&o, 0, 0x100, 1, 4);
	bar_wr(&o, 2, 0x3000, 1, 4);
	cfg_wr(&o, PCI_COMMAND, 0, 2);
	cfg_wr(&o, PCI_COMMAND, PCI_COMMAND_MEMORY, 2);
	save("vfio_config", "big-table", &o);
#undef P
}

static void seeds_uart(void)
{
	struct out o = { 0 };
#define W(off, v) (put(&o, 1, 1), put(&o, off, 2), put(&o, v, 8))
#define R(off) (put(&o, 0, 1), put(&o, off, 2))
	W(3, 0x80), W(0, 1), W(1, 0), W(3, 0x03), W(2, 0x07), W(4, 0x0b), W(1, 0x03);
	R(2), W(0, 'o'), W(0, 'k'), R(5), R(2);
	put(&o, 3, 1), put(&o, 4, 2), putb(&o, "abc\n", 4); /* input */
	R(2), R(5), R(0), R(0), R(0), R(0), R(5), W(4, 0x1b), W(0, 'x'), R(0), R(6), R(7), W(7, 0x55), R(7);
	W(1, 0), R(2);
	save("uart", "8250", &o);
#undef W
#undef R
}

/* Linux bringing up the IOAPIC: read VER, program the COM1 pin (edge) and a PCI pin (level,
 * active low), raise both, EOI the level vector while the line stays high, then mask it. */
static void seeds_ioapic(void)
{
	struct out o = { 0 };
#define SEL(r) (put(&o, 0x81, 1), put(&o, 0x00, 2), put(&o, r, 8))
#define WIN_W(v) (put(&o, 0x81, 1), put(&o, 0x10, 2), put(&o, v, 8))
#define WIN_R() (put(&o, 0x80, 1), put(&o, 0x10, 2))
	SEL(0x01), WIN_R(), SEL(0x00), WIN_R();
	SEL(0x19), WIN_W(0x01000000), SEL(0x18), WIN_W(0x31);		/* pin 4: vector 0x31 edge */
	SEL(0x31), WIN_W(0x00000000), SEL(0x30), WIN_W(0xa041);		/* pin 16: level, low */
	put(&o, 0x82, 1), put(&o, 4, 1), put(&o, 0x02, 1), put(&o, 4, 1);	/* COM1 up, down */
	put(&o, 0x82, 1), put(&o, 16, 1);					/* INTA# up */
	put(&o, 3, 1), put(&o, 0x41, 1), put(&o, 3, 1), put(&o, 0x41, 1);	/* EOIs */
	SEL(0x30), WIN_W(0x1a041), WIN_R(), SEL(0x30), WIN_W(0x0041), WIN_W(0xa041);
	save("ioapic", "linux", &o);
#undef SEL
#undef WIN_W
#undef WIN_R
}

static size_t gzip(const uint8_t *in, size_t n, uint8_t *out, size_t cap)
{
	z_stream z = { 0 };

	if (deflateInit2(&z, 9, Z_DEFLATED, 16 + MAX_WBITS, 8, Z_DEFAULT_STRATEGY) != Z_OK)
		abort();
	z.next_in = (uint8_t *)in;
	z.avail_in = n;
	z.next_out = out;
	z.avail_out = cap;
	if (deflate(&z, Z_FINISH) != Z_STREAM_END)
		abort();
	deflateEnd(&z);
	return z.total_out;
}

static void seeds_kernel(void)
{
	static uint8_t img[4096], gz[8192];
	struct out o = { 0 };
	uint64_t text = 0, size = sizeof(img);

	memcpy(img + 8, &text, 8);
	memcpy(img + 16, &size, 8);
	memcpy(img + 24, &(uint64_t){ 2 }, 8); /* 4K pages */
	memcpy(img + 56, "ARM\x64", 4);
	put(&o, 0, 1), putb(&o, img, sizeof(img));
	save("kernel", "image", &o);
	size_t n = gzip(img, sizeof(img), gz, sizeof(gz));

	o.n = 0;
	put(&o, 0, 1), putb(&o, gz, n);
	save("kernel", "image-gz", &o);
	uint8_t hdr[64] = { 'M', 'Z', 0, 0, 'z', 'i', 'm', 'g' };
	uint32_t off = sizeof(hdr), len = n;

	memcpy(hdr + 8, &off, 4);
	memcpy(hdr + 12, &len, 4);
	memcpy(hdr + 24, "gzip", 4);
	o.n = 0;
	put(&o, 0, 1), putb(&o, hdr, sizeof(hdr)), putb(&o, gz, n);
	save("kernel", "zboot", &o);
	o.n = 0;
	put(&o, 2, 1), putb(&o, "\x00\x00\x00\x14", 4); /* flat: b . */
	save("kernel", "flat", &o);
	/* an image_size that wraps past 2^64 from text_offset: it must be refused, not "fit" */
	text = 0x1ff000, size = UINT64_MAX - 0x1000;
	memcpy(img + 8, &text, 8);
	memcpy(img + 16, &size, 8);
	o.n = 0;
	put(&o, 1, 1), putb(&o, img, sizeof(img));
	save("kernel", "image-size-wraps", &o);
}

/* A minimal bzImage (protocol 2.15, 64-bit entry, one page of kernel): loadable as it is, and the
 * same with pref_address + init_size wrapping past 2^64 to a small number, which once passed the
 * checks and sent the kernel's copy to a host address outside guest RAM. */
static void seeds_bzimage(void)
{
	static uint8_t b[5 * 512 + 4096];
	struct setup_header h = {
		.setup_sects = 4, .syssize = 4096 / 16, .boot_flag = 0xaa55, .jump = 0x66eb,
		.header = 0x53726448, .version = 0x020f, .loadflags = LOADED_HIGH,
		.initrd_addr_max = 0x7fffffff, .kernel_alignment = 0x200000, .relocatable_kernel = 1,
		.xloadflags = XLF_KERNEL_64, .cmdline_size = 2047, .pref_address = 0x1000000,
		.init_size = 0x2000,
	};
	struct out o = { 0 };

	memcpy(b + offsetof(struct boot_params, hdr), &h, sizeof(h));
	putb(&o, b, sizeof(b));
	save("bzimage", "minimal", &o);
	h.pref_address = 0xfffffffffffff000ULL;
	memcpy(b + offsetof(struct boot_params, hdr), &h, sizeof(h));
	o.n = 0;
	putb(&o, b, sizeof(b));
	save("bzimage", "pref-wrap", &o);
}

static void seeds_text(void)
{
	static const struct { const char *target, *name; const char *s; size_t n; } t[] = {
#define S(target, name, lit) { target, name, lit, sizeof(lit) - 1 }
		S("cmdline", "full", "-k\0Image.gz\0-i\0initrd.gz\0-p\0console=ttyS0 quiet\0-c\0004\0-m\0002G\0"
		  "-d\0disk.img\0-d\0base.img,ro\0--console\0virtio\0--net\0tap=tap0,mac=02:00:00:00:00:01\0"
		  "--vfio\0000000:00:13.0,addr=5,token=01234567-89ab-cdef-0123-456789abcdef\0"
		  "--halt-poll-ns\000500000\0--ctl\0/run/vm.ctl\0--stats\0run.json\0--vfio-backend\0legacy"),
		S("cmdline", "sizes", "--mem=1GiB\0--cpus=123\0--kernel-format\0flat\0--dump-dtb\0b.dtb\0-m\00064k"),
		S("cmdline", "bad", "-c\0000\0-m\0-1\0--bogus\0stray"),
		S("ctl", "get", "{\"cmd\":\"get\"}"),
		S("ctl", "set", "{ \"cmd\" : \"set\", \"halt_poll_ns\": 500000 }"),
		S("ctl", "stats", "{\"cmd\":\"stats\"}\n"),
		S("ctl", "bad", "{\"cmd\":\"set\",\"halt_poll_ns\":18446744073709551616}"),
#undef S
	};
	struct out o = { 0 };

	for (size_t i = 0; i < sizeof(t) / sizeof(t[0]); i++) {
		o.n = 0;
		putb(&o, t[i].s, t[i].n);
		save(t[i].target, t[i].name, &o);
	}
}

/* Saved A/B runs: a good one, the duplicate "samples" key that overflowed the old reader's heap
 * (issue 19: more than its first allocation of 1024 after the second key), and the old format. */
static void seeds_saved(void)
{
	struct out o = { 0 };
	char buf[64];
	static const char ok[] = "{\"format\":2,\"seed\":1,\"epochs\":["
		"{\"index\":0,\"block\":0,\"arm\":\"hp0\",\"warmup\":true,\"complete\":true,\"workloads\":{}},"
		"{\"index\":1,\"block\":0,\"arm\":\"hp500us\",\"warmup\":false,\"complete\":true,\"workloads\":"
		"{\"timer\":{\"unit\":\"us\",\"n\":6,\"samples\":[12.5,13,11.25,40,12,12.75]}}},"
		"{\"index\":2,\"block\":1,\"arm\":\"hp0\",\"warmup\":false,\"complete\":true,\"workloads\":"
		"{\"timer\":{\"unit\":\"us\",\"samples\":[20,21.5,19,22,80,20.25]},\"pingpong\":{\"unit\":\"us\","
		"\"samples\":[5,6,5.5,7,5,6]}}}],\"verdicts\":[]}";
	static const char dup[] = "{\"format\":2,\"epochs\":[{\"arm\":\"a\",\"warmup\":false,\"complete\":true,"
		"\"workloads\":{\"timer\":{\"unit\":\"us\",\"samples\":[1],\"samples\":[";
	static const char old[] = "{\"seed\":1,\"workloads\":[],\"raw\":[{\"workload\":\"timer\",\"arm\":\"a\","
		"\"unit\":\"us\",\"samples\":[1],\"samples\":[";

	putb(&o, ok, sizeof(ok) - 1);
	save("saved", "ok", &o);
	for (int v = 0; v < 2; v++) {
		o.n = 0;
		putb(&o, v ? old : dup, v ? sizeof(old) - 1 : sizeof(dup) - 1);
		for (int i = 0; i < 2000; i++) {
			int n = snprintf(buf, sizeof(buf), "%s%d", i ? "," : "", i);

			putb(&o, buf, n);
		}
		putb(&o, v ? "]}]}" : "]}}}]}", v ? 4 : 6);
		save("saved", v ? "old-dup-samples" : "dup-samples", &o);
	}
}

static void seeds_stats(void)
{
	struct fx *f = fx_build(fx_arm64_vcpu, FX_ARM64_VCPU_N, "kvm-1234/vcpu-0");
	struct out o = { 0 };

	putb(&o, f->buf, f->len);
	save("stats", "arm64-vcpu", &o);
	free(f);
}

static void seeds_probe(void)
{
	uint8_t p[PROBE_MAX_PAYLOAD], fr[PROBE_MAX_FRAME];
	struct out bin = { 0 }, txt = { 0 };
	uint32_t seq = 0;
	struct probe_start s = { .workload = PROBE_W_TIMER, .ncpus = 1, .count = 3, .interval_ns = 1000000 };
	struct probe_batch b = { .workload = PROBE_W_TIMER, .cpu = 0, .n = 3,
				 .s = { { 1000, 40000 }, { 2000, 12000 }, { 3000, 300000 } } };
	struct probe_end e = { .workload = PROBE_W_TIMER, .status = PROBE_S_OK, .cpu = 0,
			       .sum = { 3, 12000, 40000, 300000, 300000 } };
	size_t lens[3], n;

	lens[0] = probe_put_start(p, &s);
	put(&bin, 0, 1);
	put(&txt, 1, 1);
	putb(&txt, "[    1.000000] booted\n", 22);
	for (int k = 0; k < 3; k++) {
		if (k == 1)
			lens[1] = probe_put_batch(p, &b);
		if (k == 2)
			lens[2] = probe_put_end(p, &e);
		n = probe_frame(fr, k + 1, seq++, p, lens[k]);
		putb(&bin, fr, n);
		char line[PROBE_TEXT_MAX];
		size_t m = probe_b64_encode(line, fr, n);

		putb(&txt, PROBE_TEXT_PREFIX, sizeof(PROBE_TEXT_PREFIX) - 1);
		putb(&txt, line, m);
		putb(&txt, "\n", 1);
	}
	save("probe", "timer-frames", &bin);
	save("probe", "timer-text", &txt);

	/* issue 19: a base64 run longer than the rejoin buffer, then '[' (printf 'VMM-PROBE %s[\n'
	 * with 2700 'A's), as text and as a text program (tests/fuzz/probe_fuzz.c's opcodes) */
	txt.n = 0;
	put(&txt, 1, 1);
	putb(&txt, PROBE_TEXT_PREFIX, sizeof(PROBE_TEXT_PREFIX) - 1);
	for (int i = 0; i < 2700; i++)
		put(&txt, 'A', 1);
	putb(&txt, "[\n", 2);
	save("probe", "long-run-printk", &txt);
	enum { TX_PREFIX, TX_RUN, TX_PRINTK, TX_EOL, TX_RAW, TX_FRAME, TX_CUT, TX_FEED };
	txt.n = 0;
	put(&txt, 3, 1);
	put(&txt, TX_PREFIX, 1);
	put(&txt, TX_RUN, 1), put(&txt, 2700, 2), put(&txt, 0, 1);
	put(&txt, TX_PRINTK, 1);
	put(&txt, TX_EOL, 1), put(&txt, 1, 1);
	save("probe", "prog-long-run-printk", &txt);
	/* the timer frames as a program: START whole, the BATCH cut by a kernel line, END fed a few
	 * bytes at a time; then a run just over a frame's base64, cut by '[' */
	txt.n = 0;
	put(&txt, 3, 1);
	for (int k = 0; k < 3; k++) {
		lens[k] = k == 0 ? probe_put_start(p, &s) : k == 1 ? probe_put_batch(p, &b) : probe_put_end(p, &e);
		if (k == 2)
			put(&txt, TX_FEED, 1), put(&txt, 6, 2);
		put(&txt, TX_PREFIX, 1);
		if (k == 1)
			put(&txt, TX_CUT, 1), put(&txt, 40, 2);
		else
			put(&txt, TX_FRAME, 1);
		put(&txt, k + 1, 1), put(&txt, (uint64_t)k, 1), put(&txt, lens[k], 2);
		putb(&txt, p, lens[k]);
		put(&txt, TX_EOL, 1), put(&txt, 1, 1);
	}
	put(&txt, TX_PREFIX, 1);
	put(&txt, TX_RUN, 1), put(&txt, 4 * ((PROBE_MAX_FRAME + 2) / 3) + 4, 2), put(&txt, 1, 1);
	put(&txt, TX_PRINTK, 1);
	put(&txt, TX_EOL, 1), put(&txt, 0, 1);
	save("probe", "prog-timer", &txt);
}

static void seeds_vlpi(void)
{
	static const char *files[] = { "vgic-state-gic4-vf.txt", "vgic-its-state-mix.txt",
				       "interrupts-gic4-vf.txt", "vgic-state-4.15.txt",
				       "interrupts-lab-gic4.txt" };

	for (size_t i = 0; i < sizeof(files) / sizeof(files[0]); i++) {
		static struct out o;
		char path[128];
		FILE *f;

		snprintf(path, sizeof(path), "tests/unit/fixtures/vlpi/%s", files[i]);
		f = fopen(path, "rb");
		if (!f) {
			perror(path);
			exit(1);
		}
		o.n = 0;
		put(&o, !strncmp(files[i], "vgic-state", 10) ? 0 : !strncmp(files[i], "vgic-its", 8) ? 1 : 2, 1);
		o.n += fread(o.b + o.n, 1, sizeof(o.b) - o.n - 1, f);
		fclose(f);
		save("vlpi", files[i], &o);
	}
}

/* virtq: size, ring addresses and mode, then RAM with a 3-segment chain and a 1-segment one. */
static void seeds_virtq(void)
{
	static struct out o;
	static uint8_t ram[0x3000];
	struct vring_desc *d = (void *)ram;
	struct vring_avail *a = (void *)(ram + 0x1000);

	put(&o, 8, 2), put(&o, 0, 2), put(&o, 0x1000, 2), put(&o, 0x2000, 2), put(&o, 4, 1);
	d[0] = (struct vring_desc){ FAKE_RAM_BASE + 0x2800, 16, VRING_DESC_F_NEXT, 1 };
	d[1] = (struct vring_desc){ FAKE_RAM_BASE + 0x2900, 512, VRING_DESC_F_NEXT | VRING_DESC_F_WRITE, 2 };
	d[2] = (struct vring_desc){ FAKE_RAM_BASE + 0x2b00, 1, VRING_DESC_F_WRITE, 0 };
	d[3] = (struct vring_desc){ FAKE_RAM_BASE + 0x2c00, 64, 0, 0 };
	a->idx = 2;
	a->ring[0] = 0;
	a->ring[1] = 3;
	putb(&o, ram, sizeof(ram));
	save("virtq", "chains", &o);
	/* the same with an indirect table describing the chain */
	o.n = 0;
	put(&o, 8, 2), put(&o, 0, 2), put(&o, 0x1000, 2), put(&o, 0x2000, 2), put(&o, 1, 1);
	d[4] = (struct vring_desc){ FAKE_RAM_BASE + 0x0100, 3 * 16, VRING_DESC_F_INDIRECT, 0 };
	memcpy(ram + 0x100, d, 3 * 16);
	a->ring[1] = 4;
	putb(&o, ram, sizeof(ram));
	save("virtq", "indirect", &o);
}

int main(void)
{
	seeds_virtio(console_msix_cap());
	seeds_msix();
	seeds_vfio();
	seeds_uart();
	seeds_ioapic();
	seeds_kernel();
	seeds_bzimage();
	seeds_text();
	seeds_stats();
	seeds_saved();
	seeds_probe();
	seeds_vlpi();
	seeds_virtq();
	return 0;
}
