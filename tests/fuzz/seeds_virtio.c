// SPDX-License-Identifier: MIT
/* Seeds of the virtio targets (blk, console, net, their PCI config space) and of virtq. */
#include <linux/pci_regs.h>
#include <linux/virtio_blk.h>
#include <linux/virtio_console.h>
#include <linux/virtio_net.h>
#include <stdlib.h>

#include "guest/probe_proto.h"
#include "tests/fuzz/seeds.h"
#include "virtio/virtio.h"

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

void seeds_virtio(void)
{
	const uint32_t cap = console_msix_cap();
	struct out o = { 0 };

	/* virtio-blk: write, read back, flush, ID; a reset in the middle of I/O; BAR moved */
	virtio_up(&o, cap, 1, 128, 1ULL << VIRTIO_BLK_F_FLUSH);
	blk_req(&o, VIRTIO_BLK_T_OUT, 8, 512, false);
	blk_req(&o, VIRTIO_BLK_T_IN, 8, 512, true);
	blk_req(&o, VIRTIO_BLK_T_FLUSH, 0, 0, false);
	blk_req(&o, VIRTIO_BLK_T_GET_ID, 0, 20, true);
	bar_rd(&o, 0, 0x2000, 8); /* capacity */
	seed_save("virtio_blk", "io", &o);
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
	seed_save("virtio_blk", "reset-and-move", &o);

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
	seed_save("virtio_console", "tx-rx", &o);
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
	seed_save("virtio_console", "reset-intx", &o);
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
	seed_save("virtio_console", "multiport", &o);

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
	seed_save("virtio_net", "tx-rx", &o);

	/* issue 19: frames from the host while the guest cannot take them: DRIVER_OK with only the
	 * TX queue (RX enabled later, then buffers), and a TX head past the ring (NEEDS_RESET) */
	o.n = 0;
	virtio_up_queues(&o, cap, 2, 1u << 1, 64, 0);
	input(&o, "a frame with no RX queue", 24);
	poll_dev(&o);
	ring(&o, 1, (struct seg[]){ { 0x20000, 72, false } }, 1);
	kick(&o, 1);
	poll_dev(&o);
	seed_save("virtio_net", "tx-only", &o);
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
	seed_save("virtio_net", "needs-reset", &o);

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
	seed_save("pci_config", "bars", &o);
	o.n = 0;
	for (uint32_t c = 0x40; c < 0xa0; c += 4)
		cfg_wr(&o, c, 0xffffffff, 4);
	for (uint32_t c = 0; c < 0x100; c += 1)
		cfg_rd(&o, c, 1);
	op(&o, FZ_RAW_WR), put(&o, FD_ECAM + (2 << 15) + 4, 4), put(&o, 2, 1), put(&o, 6, 8);
	seed_save("pci_config", "caps", &o);
}

/* virtq: size, ring addresses and mode, then RAM with a 3-segment chain and a 1-segment one. */
void seeds_virtq(void)
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
	seed_save("virtq", "chains", &o);
	/* the same with an indirect table describing the chain */
	o.n = 0;
	put(&o, 8, 2), put(&o, 0, 2), put(&o, 0x1000, 2), put(&o, 0x2000, 2), put(&o, 1, 1);
	d[4] = (struct vring_desc){ FAKE_RAM_BASE + 0x0100, 3 * 16, VRING_DESC_F_INDIRECT, 0 };
	memcpy(ram + 0x100, d, 3 * 16);
	a->ring[1] = 4;
	putb(&o, ram, sizeof(ram));
	seed_save("virtq", "indirect", &o);
}
