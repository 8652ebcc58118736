// SPDX-License-Identifier: MIT
/*
 * virtio-console (virtio 1.x, 5.3) with one port: hvc0. The transmit queue goes to the console
 * output; keyboard input fills receive buffers the guest posted.
 */
#include <linux/virtio_console.h>
#include <linux/virtio_ids.h>
#include <stdlib.h>
#include <string.h>

#include "virtio/virtio.h"
#include "vmm/log.h"
#include "vmm/console.h"
#include "vmm/pci.h"
#include "vmm/vm.h"

#define RXQ 0
#define TXQ 1

struct vconsole {
	struct virtio_dev vd;
	struct console_out *out;
};

static void vcon_tx(struct virtio_dev *vd)
{
	struct vconsole *c = vd->priv;
	struct virtq *vq = &vd->q[TXQ].vq;
	struct virtq_elem e;
	bool any = false;

	while (virtq_pop(vq, &e) > 0) {
		for (unsigned int i = 0; i < e.n_out; i++)
			console_out_write(c->out, e.iov[i].iov_base, e.iov[i].iov_len);
		virtq_push(vq, e.head, 0);
		any = true;
	}
	if (any)
		virtio_queue_interrupt(vd, TXQ);
}

static void vcon_notify(struct virtio_dev *vd, unsigned int q)
{
	if (q == TXQ)
		vcon_tx(vd);
	/* RXQ kicks only mean new empty buffers: input is delivered when it arrives. */
}

static void vcon_cfg(struct virtio_dev *vd, uint32_t off, uint8_t *data, uint32_t len, bool write)
{
	(void)vd;
	(void)off;
	if (!write)
		memset(data, 0, len); /* no size, no multiport: all fields read as zero */
}

size_t virtio_console_push(void *opaque, const uint8_t *buf, size_t len)
{
	struct vconsole *c = opaque;
	struct virtio_dev *vd = &c->vd;
	struct virtq_elem e;
	size_t done = 0;

	pthread_mutex_lock(&vd->lock);
	while (done < len && virtio_running(vd) && vd->q[RXQ].vq.ready &&
	       virtq_pop(&vd->q[RXQ].vq, &e) > 0) {
		size_t n = buf_to_iov(e.iov + e.n_out, e.n_in, 0, buf + done, len - done);

		virtq_push(&vd->q[RXQ].vq, e.head, n);
		done += n;
	}
	if (done)
		virtio_queue_interrupt(vd, RXQ);
	if (vd->q[RXQ].vq.broken)
		virtio_fail(vd);
	pthread_mutex_unlock(&vd->lock);
	return done;
}

static const struct virtio_ops vcon_ops = {
	.name = "virtio-console",
	.device_id = VIRTIO_ID_CONSOLE,
	.class_rev = 0x078000 << 8, /* communication controller, other */
	.nr_queues = 2,
	.queue_size = 64,
	.cfg_size = sizeof(struct virtio_console_config),
	.cfg_access = vcon_cfg,
	.queue_notify = vcon_notify,
};

struct virtio_dev *virtio_console_create(struct vm *vm, struct pci_host *h, struct console_out *out)
{
	struct vconsole *c = calloc(1, sizeof(*c));

	if (!c)
		return NULL;
	c->out = out;
	if (virtio_pci_init(&c->vd, vm, h, &vcon_ops, c) < 0) {
		pr_err("virtio-console: cannot create the device");
		free(c);
		return NULL;
	}
	return &c->vd;
}
