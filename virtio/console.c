// SPDX-License-Identifier: MIT
/*
 * virtio-console (virtio 1.2, 5.3). Single-port (the console, hvc0) as virtio_console_create()
 * makes it, or multiport (VIRTIO_CONSOLE_F_MULTIPORT) with ports the board names: port N's
 * receive/transmit queues are 0/1 for port 0 and 2N+2/2N+3 after it, the control queues 2
 * (device -> driver) and 3 (driver -> device). What the driver sends on the control queue is
 * hostile: short messages, unknown ids and events, replays are refused and counted, and the
 * device answers each port at most once per reset, so its own queue of messages stays bounded.
 */
#include <linux/virtio_console.h>
#include <linux/virtio_ids.h>
#include <stdlib.h>
#include <string.h>

#include "core/hot.h"
#include "virtio/virtio.h"
#include "core/log.h"
#include "platform/console.h"
#include "core/host_mem.h"
#include "core/pci.h"
#include "core/vm.h"

#define RXQ 0
#define TXQ 1
#define CTRL_RXQ 2 /* device -> driver */
#define CTRL_TXQ 3 /* driver -> device */
#define CTRL_HDR sizeof(struct virtio_console_control)
/* Every message the device can owe the driver at once: PORT_ADD, CONSOLE_PORT, PORT_NAME and
 * PORT_OPEN per port, each sent at most once per reset. */
#define PEND_MAX (4 * VIRTIO_CONSOLE_MAX_PORTS)

struct vcon_port {
	struct virtio_console_port cfg;
	bool ready;	 /* the driver answered PORT_READY 1 */
	bool guest_open; /* the driver's last PORT_OPEN */
};

struct vcon_msg {
	uint32_t id;
	uint16_t event, value;
};

struct vconsole {
	struct virtio_dev vd;
	struct virtio_ops ops; /* per device: the queue count follows the port count */
	unsigned int nr_ports;
	bool multiport;
	struct vcon_port port[VIRTIO_CONSOLE_MAX_PORTS];
	bool dev_ready;
	struct vcon_msg pend[PEND_MAX];
	unsigned int npend;
	struct virtio_console_stats st;
};

static unsigned int port_rxq(unsigned int p)
{
	return p ? 2 * p + 2 : RXQ;
}

static bool use_multiport(const struct vconsole *c)
{
	return c->multiport && virtio_has_feature(&c->vd, VIRTIO_CONSOLE_F_MULTIPORT);
}

/* The port whose queue q is (data queues only), or -1. */
static int queue_port(const struct vconsole *c, unsigned int q)
{
	if (q == RXQ || q == TXQ)
		return 0;
	if (q < 4 || !use_multiport(c))
		return -1;
	unsigned int p = (q - 2) / 2;

	return p < c->nr_ports ? (int)p : -1;
}

VMM_HOT_IDLE static void port_tx(struct vconsole *c, unsigned int p, unsigned int q)
{
	struct virtio_dev *vd = &c->vd;
	struct virtq *vq = &vd->q[q].vq;
	const struct virtio_console_port *pc = &c->port[p].cfg;
	struct virtq_elem e;
	bool any = false;

	while (virtq_pop(vq, &e) > 0) {
		for (unsigned int i = 0; i < e.n_out; i++)
			pc->write(pc->opaque, e.iov[i].iov_base, e.iov[i].iov_len);
		c->st.port_bytes[p] += e.out_len;
		virtq_push(vq, e.head, 0);
		any = true;
	}
	if (any)
		virtio_queue_interrupt(vd, q);
}

/* What virtio_report() says about a driver's control traffic (after the transport's causes). */
enum vcon_cause {
	VC_DEV_READY_0, VC_DEV_READY_AGAIN, VC_PORT_NONE, VC_PORT_EARLY, VC_PORT_READY_0,
	VC_PORT_READY_AGAIN, VC_OPEN_BAD, VC_EVENT_UNKNOWN, VC_SHORT, VC_BUF_SMALL, VC_NR_CAUSES
};
static const char *const vcon_causes[VC_NR_CAUSES] = {
	[VC_DEV_READY_0] = "the driver could not set the device up (DEVICE_READY 0)",
	[VC_DEV_READY_AGAIN] = "DEVICE_READY repeated",
	[VC_PORT_NONE] = "PORT_READY for a port that does not exist",
	[VC_PORT_EARLY] = "PORT_READY before DEVICE_READY",
	[VC_PORT_READY_0] = "the driver could not add a port (PORT_READY 0)",
	[VC_PORT_READY_AGAIN] = "PORT_READY repeated",
	[VC_OPEN_BAD] = "PORT_OPEN for a port that does not exist or is not ready",
	[VC_EVENT_UNKNOWN] = "a control event the driver does not send",
	[VC_SHORT] = "a control message shorter than its header",
	[VC_BUF_SMALL] = "control buffer too small",
};

/* Sends what the device owes the driver, as far as it posted buffers. Lock held. */
VMM_HOT static void ctrl_flush(struct vconsole *c)
{
	struct virtio_dev *vd = &c->vd;
	struct virtq *vq = &vd->q[CTRL_RXQ].vq;
	struct virtq_elem e;
	bool any = false;

	if (!vq->ready)
		return;
	while (c->npend && virtq_pop(vq, &e) > 0) {
		const struct vcon_msg *m = &c->pend[0];
		const char *name = m->event == VIRTIO_CONSOLE_PORT_NAME ? c->port[m->id].cfg.name : NULL;
		uint8_t buf[CTRL_HDR + VIRTIO_CONSOLE_NAME_MAX];
		struct virtio_console_control h = { .id = m->id, .event = m->event, .value = m->value };
		size_t len = CTRL_HDR, n;

		memcpy(buf, &h, CTRL_HDR); /* virtio 1.x: little-endian, as both hosts are */
		if (name) {
			memcpy(buf + CTRL_HDR, name, strlen(name));
			len += strlen(name);
		}
		if (e.in_len < len) {
			/* the driver's buffer cannot hold the message: it is given back empty */
			virtio_report(vd, vcon_causes[VC_BUF_SMALL], "a control receive buffer of %llu bytes "
				      "cannot hold a %zu-byte message", (unsigned long long)e.in_len, len);
			c->st.ctrl_bad++;
			virtq_push(vq, e.head, 0);
		} else {
			n = buf_to_iov(e.iov + e.n_out, e.n_in, 0, buf, len);
			virtq_push(vq, e.head, (uint32_t)n);
			c->st.ctrl_sent++;
		}
		any = true;
		memmove(c->pend, c->pend + 1, --c->npend * sizeof(c->pend[0]));
	}
	if (any)
		virtio_queue_interrupt(vd, CTRL_RXQ);
}

static void ctrl_queue(struct vconsole *c, uint32_t id, uint16_t event, uint16_t value)
{
	if (c->npend == PEND_MAX) { /* cannot happen by construction; refused rather than overrun */
		c->st.ctrl_bad++;
		return;
	}
	c->pend[c->npend++] = (struct vcon_msg){ id, event, value };
}

/* One message from the driver: 0, or a static string saying why it is refused. */
static const char *ctrl_handle(struct vconsole *c, const struct virtio_console_control *m)
{
	struct vcon_port *p = m->id < c->nr_ports ? &c->port[m->id] : NULL;

	switch (m->event) {
	case VIRTIO_CONSOLE_DEVICE_READY:
		if (!m->value)
			return vcon_causes[VC_DEV_READY_0];
		if (c->dev_ready)
			return vcon_causes[VC_DEV_READY_AGAIN];
		c->dev_ready = true;
		c->st.multiport = true;
		for (unsigned int i = 0; i < c->nr_ports; i++)
			ctrl_queue(c, i, VIRTIO_CONSOLE_PORT_ADD, 1);
		return NULL;
	case VIRTIO_CONSOLE_PORT_READY:
		if (!p)
			return vcon_causes[VC_PORT_NONE];
		if (!c->dev_ready)
			return vcon_causes[VC_PORT_EARLY];
		if (!m->value)
			return vcon_causes[VC_PORT_READY_0];
		if (p->ready)
			return vcon_causes[VC_PORT_READY_AGAIN];
		p->ready = true;
		c->st.ports_ready |= 1u << m->id;
		if (p->cfg.console)
			ctrl_queue(c, m->id, VIRTIO_CONSOLE_CONSOLE_PORT, 1);
		if (p->cfg.name)
			ctrl_queue(c, m->id, VIRTIO_CONSOLE_PORT_NAME, 1);
		/* vmm listens on every port from the start: the guest's writes never wait for it */
		ctrl_queue(c, m->id, VIRTIO_CONSOLE_PORT_OPEN, 1);
		return NULL;
	case VIRTIO_CONSOLE_PORT_OPEN:
		if (!p || !p->ready)
			return vcon_causes[VC_OPEN_BAD];
		p->guest_open = m->value != 0;
		c->st.guest_opens[m->id] += p->guest_open;
		return NULL;
	default:
		return vcon_causes[VC_EVENT_UNKNOWN];
	}
}

VMM_HOT static void ctrl_tx(struct vconsole *c)
{
	struct virtio_dev *vd = &c->vd;
	struct virtq *vq = &vd->q[CTRL_TXQ].vq;
	struct virtq_elem e;
	bool any = false;

	while (virtq_pop(vq, &e) > 0) {
		struct virtio_console_control m;
		size_t n = iov_to_buf(e.iov, e.n_out, 0, &m, CTRL_HDR);
		const char *why = n < CTRL_HDR ? vcon_causes[VC_SHORT] : ctrl_handle(c, &m);

		c->st.ctrl_received++;
		if (why) {
			c->st.ctrl_bad++;
			virtio_report(vd, why, "control message (id %u, event %u, value %u, %llu bytes) refused: %s",
				      n < CTRL_HDR ? 0 : m.id, n < CTRL_HDR ? 0 : m.event, n < CTRL_HDR ? 0 : m.value,
				      (unsigned long long)e.out_len, why);
		}
		virtq_push(vq, e.head, 0);
		any = true;
	}
	if (any)
		virtio_queue_interrupt(vd, CTRL_TXQ);
	ctrl_flush(c);
}

VMM_HOT_IDLE static void vcon_notify(struct virtio_dev *vd, unsigned int q)
{
	struct vconsole *c = vd->priv;
	int p = queue_port(c, q);

	if (q == CTRL_TXQ && use_multiport(c))
		ctrl_tx(c);
	else if (q == CTRL_RXQ && use_multiport(c))
		ctrl_flush(c); /* new buffers for what the device owes */
	else if (p >= 0 && q == port_rxq((unsigned int)p) + 1)
		port_tx(c, (unsigned int)p, q);
	/* receive queue kicks only mean new empty buffers: input is delivered when it arrives */
}

VMM_HOT static void vcon_cfg(struct virtio_dev *vd, uint32_t off, uint8_t *data, uint32_t len, bool write)
{
	struct vconsole *c = vd->priv;
	struct virtio_console_config cfg = { .max_nr_ports = c->multiport ? c->nr_ports : 0 };

	if (write || off >= sizeof(cfg) || len > sizeof(cfg) - off) {
		if (!write)
			memset(data, 0, len);
		return; /* the fields are read-only (emergency write is not offered) */
	}
	memcpy(data, (const uint8_t *)&cfg + off, len);
}

VMM_HOT static int vcon_reset(struct virtio_dev *vd)
{
	struct vconsole *c = vd->priv;

	c->dev_ready = false;
	c->npend = 0;
	for (unsigned int i = 0; i < c->nr_ports; i++)
		c->port[i].ready = c->port[i].guest_open = false;
	return 0;
}

VMM_HOT static void vcon_summary(struct virtio_dev *vd, FILE *f)
{
	struct vconsole *c = vd->priv;

	if (!c->multiport)
		return;
	/* what the guest set up at some point: at exit it may have reset the device */
	fprintf(f, "vmm: virtio-console: %s, control messages %llu received (%llu refused), %llu sent;",
		c->st.multiport ? "multiport" : "multiport never set up",
		(unsigned long long)c->st.ctrl_received, (unsigned long long)c->st.ctrl_bad,
		(unsigned long long)c->st.ctrl_sent);
	for (unsigned int i = 0; i < c->nr_ports; i++)
		fprintf(f, " port %u %s%s: %llu bytes%s", i, c->port[i].cfg.name ? c->port[i].cfg.name : "",
			c->port[i].cfg.console ? "(console)" : "", (unsigned long long)c->st.port_bytes[i],
			c->st.ports_ready & (1u << i) ? "" : " (never ready)");
	fputc('\n', f);
}

VMM_HOT size_t virtio_console_push(void *opaque, const uint8_t *buf, size_t len)
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

VMM_HOT void virtio_console_stats(struct virtio_dev *vd, struct virtio_console_stats *st)
{
	struct vconsole *c = vd->priv;

	pthread_mutex_lock(&vd->lock);
	*st = c->st;
	pthread_mutex_unlock(&vd->lock);
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
	.reset = vcon_reset,
	.summary = vcon_summary,
	.causes = vcon_causes,
	.nr_causes = VC_NR_CAUSES,
};

VMM_HOT_IDLE static void to_console(void *opaque, const uint8_t *buf, size_t len)
{
	console_out_write(opaque, buf, len);
}

VMM_HOT struct virtio_dev *virtio_console_create_ports(struct vm *vm, struct pci_host *h,
					       const struct virtio_console_port *ports, unsigned int n,
					       bool multiport)
{
	struct vconsole *c;

	if (!n || n > VIRTIO_CONSOLE_MAX_PORTS || (n > 1 && !multiport)) {
		pr_err("virtio-console: %u ports (1 to %d, more than one only with multiport)", n,
		       VIRTIO_CONSOLE_MAX_PORTS);
		return NULL;
	}
	for (unsigned int i = 0; i < n; i++)
		if (!ports[i].write || (ports[i].name && strlen(ports[i].name) > VIRTIO_CONSOLE_NAME_MAX)) {
			pr_err("virtio-console: port %u has no sink or a name over %d bytes", i,
			       VIRTIO_CONSOLE_NAME_MAX);
			return NULL;
		}
	c = host_mem_zalloc(sizeof(*c));
	if (!c)
		return NULL;
	c->nr_ports = n;
	c->multiport = multiport;
	for (unsigned int i = 0; i < n; i++)
		c->port[i].cfg = ports[i];
	c->ops = vcon_ops;
	if (multiport) {
		c->ops.features = 1ULL << VIRTIO_CONSOLE_F_MULTIPORT;
		c->ops.nr_queues = 2 * (n + 1); /* what Linux asks for: (max_nr_ports + 1) pairs */
	}
	if (virtio_pci_init(&c->vd, vm, h, &c->ops, c) < 0) {
		pr_err("virtio-console: cannot create the device");
		host_mem_zfree(c, sizeof(*c));
		return NULL;
	}
	return &c->vd;
}

struct virtio_dev *virtio_console_create(struct vm *vm, struct pci_host *h, struct console_out *out)
{
	const struct virtio_console_port port = { .console = true, .write = to_console, .opaque = out };

	return virtio_console_create_ports(vm, h, &port, 1, false);
}
