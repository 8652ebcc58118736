// SPDX-License-Identifier: MIT
/*
 * The modern virtio-pci transport (virtio 1.x, section 4.1). BAR 0 holds the common, ISR, device
 * and notify structures; BAR 1 the MSI-X table. Queue kicks are KVM ioeventfds on the notify area,
 * re-registered whenever the BAR moves; a kick that still arrives as an MMIO exit (an access size
 * the ioeventfd does not match) is counted and handed to the worker the same way.
 */
#include <errno.h>
#include <linux/pci_regs.h>
#include <linux/virtio_ids.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/eventfd.h>
#include <unistd.h>

#include "core/hot.h"
#include "virtio/virtio.h"
#include "core/host_mem.h"
#include "core/log.h"
#include "core/pci.h"
#include "core/msix.h"
#include "core/irq.h"
#include "core/vm.h"

#define BAR0_SIZE 0x4000
#define COMMON_OFF 0x0000
#define ISR_OFF 0x1000
#define DEVCFG_OFF 0x2000
#define NOTIFY_OFF 0x3000
#define NOTIFY_MULT 4
#define MSIX_BAR 1
#define NO_VECTOR VIRTIO_MSI_NO_VECTOR
#define ISR_QUEUE 0x1 /* virtio 1.x 4.1.4.5: bit 0 of the ISR; UAPI names only the config bit */

#define CC(f) offsetof(struct virtio_pci_common_cfg, f)

static void bar0_access(void *opaque, uint64_t off, uint8_t *data, uint32_t len, bool is_write);

VMM_HOT_IDLE bool virtio_has_feature(const struct virtio_dev *vd, unsigned int bit)
{
	return bit < 64 && (vd->drv_features & (1ULL << bit));
}

VMM_HOT_IDLE bool virtio_running(const struct virtio_dev *vd)
{
	return (vd->status & VIRTIO_CONFIG_S_DRIVER_OK) && !(vd->status & VIRTIO_CONFIG_S_NEEDS_RESET) &&
	       !vd->resetting;
}

/* Lock held. MSI-X when the guest enabled it, else the ISR bit and INTA#. */
static void virtio_raise(struct virtio_dev *vd, uint16_t vector, uint8_t isr_bit)
{
	if (msix_notify(&vd->msix, vector))
		return;
	vd->isr |= isr_bit;
	pci_intx(&vd->pci, true);
}

VMM_HOT_IDLE void virtio_queue_interrupt(struct virtio_dev *vd, unsigned int q)
{
	if (!virtq_needs_interrupt(&vd->q[q].vq))
		return;
	atomic_fetch_add(&vd->stats.interrupts, 1);
	virtio_raise(vd, vd->q[q].vector, ISR_QUEUE);
}

static const char bad_queue[] = "bad queue";

VMM_HOT unsigned int virtio_nr_causes(const struct virtio_dev *vd)
{
	return VIRTIO_TRANSPORT_CAUSES + vd->ops->nr_causes;
}

VMM_HOT const char *virtio_cause(const struct virtio_dev *vd, unsigned int i)
{
	if (i < VIRTQ_NR_CAUSES)
		return virtq_causes[i];
	if (i == VIRTQ_NR_CAUSES)
		return bad_queue;
	i -= VIRTIO_TRANSPORT_CAUSES;
	return i < vd->ops->nr_causes ? vd->ops->causes[i] : NULL;
}

VMM_HOT void virtio_report(struct virtio_dev *vd, const char *cause, const char *fmt, ...)
{
	unsigned int i, n = virtio_nr_causes(vd);

	atomic_fetch_add(&vd->stats.guest_errors, 1);
	for (i = 0; i < n && virtio_cause(vd, i) != cause; i++)
		;
	if (i < n && vd->reported & 1ULL << i)
		return; /* said once per device and cause: a guest cannot flood the log */
	if (i < n)
		vd->reported |= 1ULL << i;
	char msg[256];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	pr_warn_guest(vd->vm, "%s (00:%02x.0): %s (reported once; the exit summary counts them all)",
		      vd->ops->name, vd->pci.devfn >> 3, msg);
}

VMM_HOT void virtio_fail(struct virtio_dev *vd)
{
	if (vd->status & VIRTIO_CONFIG_S_NEEDS_RESET)
		return;
	for (unsigned int q = 0; q < vd->ops->nr_queues; q++)
		if (vd->q[q].vq.broken)
			virtio_report(vd, vd->q[q].vq.why, "queue %u: %s: the device needs a reset", q,
				      vd->q[q].vq.why);
	vd->status |= VIRTIO_CONFIG_S_NEEDS_RESET;
	virtio_raise(vd, vd->msix_config, VIRTIO_PCI_ISR_CONFIG);
}

VMM_HOT static void notify_ioeventfd(struct virtio_dev *vd, unsigned int q, bool on)
{
	if (on == vd->q[q].ioeventfd || (on && !vd->bar_addr))
		return;
	uint64_t a = vd->bar_addr + NOTIFY_OFF + NOTIFY_MULT * q;

	/* Linux writes the queue index as 16 bits; KVM matches the access length exactly. */
	if (irq_ioeventfd(vd->vm, a, 2, vd->q[q].notify_fd, on) == 0)
		vd->q[q].ioeventfd = on;
}

VMM_HOT void virtio_reset_done(struct virtio_dev *vd)
{
	for (unsigned int q = 0; q < vd->ops->nr_queues; q++) {
		memset(&vd->q[q].vq, 0, sizeof(vd->q[q].vq));
		vd->q[q].size = vd->ops->queue_size;
		vd->q[q].vector = NO_VECTOR;
		vd->q[q].desc = vd->q[q].avail = vd->q[q].used = 0;
	}
	vd->resetting = false;
	vd->drv_features = 0;
	vd->dfsel = vd->gfsel = 0;
	vd->status = 0;
	vd->isr = 0;
	vd->msix_config = NO_VECTOR;
	vd->qsel = 0;
	pci_intx(&vd->pci, false);
}

/* Lock held. The device quiesces first (it may still own guest buffers); the queues are cleared
 * only then, at once or, when the device has I/O in flight, once it calls virtio_reset_done(). */
VMM_HOT static void virtio_reset(struct virtio_dev *vd)
{
	for (unsigned int q = 0; q < vd->ops->nr_queues; q++)
		notify_ioeventfd(vd, q, false);
	vd->resetting = true;
	if (vd->ops->reset && vd->ops->reset(vd) > 0)
		return; /* device_status keeps reading non-zero: the driver waits for 0 */
	virtio_reset_done(vd);
}

/* The ring features queue q follows: those negotiated. */
static void vq_take_features(struct virtio_dev *vd, unsigned int q)
{
	vd->q[q].vq.event_idx = virtio_has_feature(vd, VIRTIO_RING_F_EVENT_IDX);
	vd->q[q].vq.indirect = virtio_has_feature(vd, VIRTIO_RING_F_INDIRECT_DESC);
}

static void queue_enable(struct virtio_dev *vd, unsigned int q)
{
	/* the driver may shrink a queue, never grow it past what the device sized itself for */
	if (vd->q[q].size > vd->ops->queue_size || virtq_setup(&vd->q[q].vq, vd->vm, vd->q[q].size, vd->q[q].desc, vd->q[q].avail,
			vd->q[q].used) < 0) {
		virtio_report(vd, bad_queue, "queue %u has a bad size (%u) or rings outside guest memory",
			      q, vd->q[q].size);
		virtio_fail(vd);
		return;
	}
	vq_take_features(vd, q);
	notify_ioeventfd(vd, q, true);
}

static void common_write(struct virtio_dev *vd, uint32_t off, uint64_t v)
{
	unsigned int q = vd->qsel;
	bool qvalid = q < vd->ops->nr_queues;

	if (vd->resetting)
		return; /* the driver must wait for status 0 before touching the device again */
	switch (off) {
	case CC(device_feature_select): vd->dfsel = v; break;
	case CC(guest_feature_select): vd->gfsel = v; break;
	case CC(guest_feature):
		if (vd->gfsel < 2 && !(vd->status & VIRTIO_CONFIG_S_FEATURES_OK)) {
			uint64_t mask = 0xffffffffULL << (32 * vd->gfsel);

			vd->drv_features = (vd->drv_features & ~mask) | ((v << (32 * vd->gfsel)) & mask);
			vd->drv_features &= vd->features; /* never more than offered */
		}
		break;
	case CC(msix_config): vd->msix_config = v; break;
	case CC(device_status):
		if (v == 0) {
			virtio_reset(vd);
			break;
		}
		/* FEATURES_OK only sticks when VERSION_1 was accepted (legacy drivers are refused) */
		if ((v & VIRTIO_CONFIG_S_FEATURES_OK) && !virtio_has_feature(vd, VIRTIO_F_VERSION_1))
			v &= ~VIRTIO_CONFIG_S_FEATURES_OK;
		bool was_ok = vd->status & VIRTIO_CONFIG_S_DRIVER_OK;

		vd->status = (vd->status & VIRTIO_CONFIG_S_NEEDS_RESET) | (v & 0xff & ~VIRTIO_CONFIG_S_NEEDS_RESET);
		if (!was_ok && (vd->status & VIRTIO_CONFIG_S_DRIVER_OK)) {
			/* a queue enabled before FEATURES_OK (out of order) follows the final features */
			for (unsigned int i = 0; i < vd->ops->nr_queues; i++)
				vq_take_features(vd, i);
			if (vd->ops->activate && vd->ops->activate(vd) < 0)
				virtio_fail(vd);
		}
		break;
	case CC(queue_select): vd->qsel = v; break;
	case CC(queue_size):
		if (qvalid && !vd->q[q].vq.ready)
			vd->q[q].size = v;
		break;
	case CC(queue_msix_vector):
		if (qvalid) {
			uint16_t was = vd->q[q].vector;

			vd->q[q].vector = v < vd->msix.nr ? v : NO_VECTOR;
			if (was != vd->q[q].vector && vd->ops->vector_changed)
				vd->ops->vector_changed(vd, q);
		}
		break;
	case CC(queue_enable):
		if (qvalid && v == 1 && !vd->q[q].vq.ready)
			queue_enable(vd, q);
		break;
	case CC(queue_desc_lo): if (qvalid) vd->q[q].desc = (vd->q[q].desc & ~0xffffffffULL) | (uint32_t)v; break;
	case CC(queue_desc_hi): if (qvalid) vd->q[q].desc = (vd->q[q].desc & 0xffffffffULL) | v << 32; break;
	case CC(queue_avail_lo): if (qvalid) vd->q[q].avail = (vd->q[q].avail & ~0xffffffffULL) | (uint32_t)v; break;
	case CC(queue_avail_hi): if (qvalid) vd->q[q].avail = (vd->q[q].avail & 0xffffffffULL) | v << 32; break;
	case CC(queue_used_lo): if (qvalid) vd->q[q].used = (vd->q[q].used & ~0xffffffffULL) | (uint32_t)v; break;
	case CC(queue_used_hi): if (qvalid) vd->q[q].used = (vd->q[q].used & 0xffffffffULL) | v << 32; break;
	}
}

static uint64_t common_read(struct virtio_dev *vd, uint32_t off)
{
	unsigned int q = vd->qsel;
	bool qvalid = q < vd->ops->nr_queues;

	switch (off) {
	case CC(device_feature_select): return vd->dfsel;
	case CC(device_feature): return vd->dfsel < 2 ? (uint32_t)(vd->features >> (32 * vd->dfsel)) : 0;
	case CC(guest_feature_select): return vd->gfsel;
	case CC(guest_feature): return vd->gfsel < 2 ? (uint32_t)(vd->drv_features >> (32 * vd->gfsel)) : 0;
	case CC(msix_config): return vd->msix_config;
	case CC(num_queues): return vd->ops->nr_queues;
	case CC(device_status): return vd->status;
	case CC(config_generation): return 0;
	case CC(queue_select): return vd->qsel;
	case CC(queue_size): return qvalid ? vd->q[q].size : 0;
	case CC(queue_msix_vector): return qvalid ? vd->q[q].vector : NO_VECTOR;
	case CC(queue_enable): return qvalid && vd->q[q].vq.ready;
	case CC(queue_notify_off): return qvalid ? q : 0;
	case CC(queue_desc_lo): return qvalid ? (uint32_t)vd->q[q].desc : 0;
	case CC(queue_desc_hi): return qvalid ? vd->q[q].desc >> 32 : 0;
	case CC(queue_avail_lo): return qvalid ? (uint32_t)vd->q[q].avail : 0;
	case CC(queue_avail_hi): return qvalid ? vd->q[q].avail >> 32 : 0;
	case CC(queue_used_lo): return qvalid ? (uint32_t)vd->q[q].used : 0;
	case CC(queue_used_hi): return qvalid ? vd->q[q].used >> 32 : 0;
	}
	return 0;
}

VMM_HOT static void bar0_access(void *opaque, uint64_t off, uint8_t *data, uint32_t len, bool is_write)
{
	struct virtio_dev *vd = opaque;
	uint64_t v = 0;

	atomic_fetch_add(&vd->stats.bar_exits, 1);
	if (!is_write)
		memset(data, 0, len);
	if (len > 8)
		return;
	if (off >= BAR0_SIZE)
		return;
	if (off >= NOTIFY_OFF) {
		unsigned int q = (off - NOTIFY_OFF) / NOTIFY_MULT;

		/* a kick the ioeventfd did not catch: same path, but it cost an exit */
		if (is_write && q < vd->ops->nr_queues) {
			atomic_fetch_add(&vd->stats.notify_exits, 1);
			eventfd_write(vd->q[q].notify_fd, 1);
		}
		return;
	}
	pthread_mutex_lock(&vd->lock);
	if (off >= DEVCFG_OFF) {
		uint32_t o = off - DEVCFG_OFF;

		if (vd->ops->cfg_access && o < vd->ops->cfg_size && len <= vd->ops->cfg_size - o)
			vd->ops->cfg_access(vd, o, data, len, is_write);
	} else if (off >= ISR_OFF) {
		if (!is_write && off == ISR_OFF) { /* reading ISR clears it and drops INTx */
			data[0] = vd->isr;
			vd->isr = 0;
			pci_intx(&vd->pci, false);
		}
	} else if (off < sizeof(struct virtio_pci_common_cfg)) {
		if (is_write) {
			memcpy(&v, data, len);
			common_write(vd, off, v);
		} else {
			v = common_read(vd, off);
			memcpy(data, &v, len);
		}
	}
	pthread_mutex_unlock(&vd->lock);
}

VMM_HOT static void bar0_moved(void *opaque, uint64_t old, uint64_t new)
{
	struct virtio_dev *vd = opaque;

	(void)old;
	pthread_mutex_lock(&vd->lock);
	for (unsigned int q = 0; q < vd->ops->nr_queues; q++)
		notify_ioeventfd(vd, q, false);
	vd->bar_addr = new;
	for (unsigned int q = 0; q < vd->ops->nr_queues; q++)
		if (vd->q[q].vq.ready)
			notify_ioeventfd(vd, q, true);
	pthread_mutex_unlock(&vd->lock);
}


/* VIRTIO_PCI_CAP_PCI_CFG (virtio 1.x, 4.1.4.9): a window in config space onto BAR 0 for drivers
 * that cannot map it. Lock order: the host's lock (held here), then the device's (bar0_access). */
VMM_HOT static void pci_cfg_window(struct virtio_dev *vd, bool write)
{
	const uint8_t *c = vd->pci.cfg + vd->cfg_cap;
	uint8_t *data = vd->pci.cfg + vd->cfg_cap + offsetof(struct virtio_pci_cfg_cap, pci_cfg_data);
	uint32_t off, len;

	memcpy(&off, c + offsetof(struct virtio_pci_cap, offset), 4);
	memcpy(&len, c + offsetof(struct virtio_pci_cap, length), 4);
	if (c[offsetof(struct virtio_pci_cap, bar)] != 0 || (len != 1 && len != 2 && len != 4) ||
	    off % len || off >= BAR0_SIZE)
		return; /* the spec leaves other values undefined: nothing happens */
	if (!write)
		memset(data, 0, 4);
	bar0_access(vd, off, data, len, write);
}

static bool overlaps_window(const struct virtio_dev *vd, uint32_t off, uint32_t len)
{
	uint32_t d = vd->cfg_cap + offsetof(struct virtio_pci_cfg_cap, pci_cfg_data);

	return vd->cfg_cap && off < d + 4 && off + len > d;
}

static void pci_cfg_window_written(struct virtio_dev *vd, uint32_t off, uint32_t len)
{
	if (overlaps_window(vd, off, len))
		pci_cfg_window(vd, true);
}

VMM_HOT static void cfg_read(struct pci_dev *d, uint32_t off, uint32_t len, uint32_t *val)
{
	struct virtio_dev *vd = (struct virtio_dev *)d;

	if (!overlaps_window(vd, off, len))
		return;
	pci_cfg_window(vd, false);
	*val = 0;
	memcpy(val, d->cfg + off, len);
}

VMM_HOT static void cfg_written(struct pci_dev *d, uint32_t off, uint32_t len)
{
	struct virtio_dev *vd = (struct virtio_dev *)d; /* pci is the first member */

	msix_cfg_written(&vd->msix, off, len);
	if (msix_enabled(&vd->msix)) { /* with MSI-X on, INTx is never asserted (PCI 6.1) */
		pthread_mutex_lock(&vd->lock);
		vd->isr = 0;
		pci_intx(&vd->pci, false);
		pthread_mutex_unlock(&vd->lock);
	}
	pci_cfg_window_written(vd, off, len);
}

static int add_vcap(struct virtio_dev *vd, uint8_t type, uint32_t off, uint32_t len, uint32_t extra)
{
	int c = pci_cap_add(&vd->pci, PCI_CAP_ID_VNDR, sizeof(struct virtio_pci_cap) + extra);

	if (c < 0)
		return c;
	struct virtio_pci_cap cap = {
		.cap_vndr = PCI_CAP_ID_VNDR, .cap_next = vd->pci.cfg[c + 1],
		.cap_len = sizeof(cap) + extra, .cfg_type = type, .bar = 0, .offset = off, .length = len,
	};

	memcpy(vd->pci.cfg + c, &cap, sizeof(cap));
	return c;
}

/* Lock held: every queue's pass starts, whichever hook runs (a device's fd may fill any queue). */
static void passes_begin(struct virtio_dev *vd)
{
	for (unsigned int q = 0; q < vd->ops->nr_queues; q++)
		virtq_pass_begin(&vd->q[q].vq);
}

/* Lock held: a queue whose pass stopped at its budget is kicked again on its own eventfd, so the
 * worker comes back to it after letting go of the lock and serving what else is ready; the guest,
 * whose avail_event was not moved, may not kick for what it already posted. */
static void passes_end(struct virtio_dev *vd)
{
	for (unsigned int q = 0; q < vd->ops->nr_queues; q++)
		if (virtq_pass_end(&vd->q[q].vq)) {
			atomic_fetch_add(&vd->stats.passes_cut, 1);
			eventfd_write(vd->q[q].notify_fd, 1);
		}
}

VMM_HOT_IDLE int virtio_poll(struct virtio_dev *vd, int timeout_ms)
{
	struct epoll_event ev[8];
	int n = epoll_wait(vd->epfd, ev, 8, timeout_ms);

	for (int i = 0; i < n; i++) {
		int fd = ev[i].data.fd;

		if (fd == vd->stopfd)
			return -1;
		pthread_mutex_lock(&vd->lock);
		passes_begin(vd);
		for (unsigned int q = 0; q < vd->ops->nr_queues; q++) {
			if (fd != vd->q[q].notify_fd)
				continue;
			atomic_fetch_add(&vd->stats.notifies, 1); /* one edge: one or more kicks */
			if (virtio_running(vd) && vd->q[q].vq.ready && !vd->q[q].vq.broken) {
				vd->ops->queue_notify(vd, q);
				if (vd->q[q].vq.broken)
					virtio_fail(vd);
			}
			fd = -1;
		}
		if (fd >= 0 && vd->ops->fd_ready)
			vd->ops->fd_ready(vd, fd);
		passes_end(vd);
		pthread_mutex_unlock(&vd->lock);
	}
	return n < 0 ? 0 : n;
}

VMM_HOT_IDLE static void *worker(void *arg)
{
	struct virtio_dev *vd = arg;

	if (sandbox_enter(vd->vm->sandbox, SANDBOX_DEVICE) < 0) {
		vm_request_stop(vd->vm, VM_EXIT_ERROR);
		return NULL;
	}
	while (virtio_poll(vd, -1) >= 0)
		;
	return NULL;
}

static int watch(struct virtio_dev *vd, int fd, uint32_t events)
{
	struct epoll_event e = { .events = events, .data.fd = fd };

	return epoll_ctl(vd->epfd, EPOLL_CTL_ADD, fd, &e) < 0 ? -errno : 0;
}

VMM_HOT int virtio_watch_fd(struct virtio_dev *vd, int fd)
{
	/* edge-triggered: each write to the eventfd (a kick, a completion) is one event, so the
	 * worker never reads the count back: two system calls fewer per request at queue depth 1 */
	return watch(vd, fd, EPOLLIN | EPOLLET);
}

int virtio_pci_init(struct virtio_dev *vd, struct vm *vm, struct pci_host *h,
		    const struct virtio_ops *ops, void *priv)
{
	int r;

	host_mem_clear(vd, sizeof(*vd)); /* most of the 4 KiB config space and MSI-X table stays zero */
	if (VIRTIO_TRANSPORT_CAUSES + ops->nr_causes > VIRTIO_MAX_CAUSES) {
		pr_err("%s: %u causes to report, the transport logs at most %d per device: a vmm bug",
		       ops->name, VIRTIO_TRANSPORT_CAUSES + ops->nr_causes, VIRTIO_MAX_CAUSES);
		return -EINVAL;
	}
	pthread_mutex_init(&vd->lock, NULL);
	vd->vm = vm;
	vd->ops = ops;
	vd->priv = priv;
	vd->features = ops->features | (1ULL << VIRTIO_F_VERSION_1);
	vd->epfd = epoll_create1(EPOLL_CLOEXEC);
	vd->stopfd = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
	if (vd->epfd < 0 || vd->stopfd < 0 || ops->nr_queues > VIRTIO_MAX_QUEUES)
		return -EINVAL;
	watch(vd, vd->stopfd, EPOLLIN); /* level-triggered: every later poll sees the stop */
	for (unsigned int q = 0; q < ops->nr_queues; q++) {
		vd->q[q].notify_fd = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
		if (vd->q[q].notify_fd < 0 || virtio_watch_fd(vd, vd->q[q].notify_fd) < 0)
			return -EMFILE;
	}
	virtio_reset(vd);
	r = pci_dev_add(h, &vd->pci, VIRTIO_PCI_VENDOR, VIRTIO_PCI_DEVICE_BASE + ops->device_id,
			ops->class_rev | 0x01, VIRTIO_PCI_VENDOR, ops->device_id);
	if (r < 0)
		return r;
	vd->pci.cfg_written = cfg_written;
	if ((r = pci_bar_add(&vd->pci, 0, BAR0_SIZE, false, bar0_access, vd, ops->name)) < 0)
		return r;
	vd->pci.bar[0].moved = bar0_moved;
	if ((r = add_vcap(vd, VIRTIO_PCI_CAP_COMMON_CFG, COMMON_OFF, sizeof(struct virtio_pci_common_cfg), 0)) < 0 ||
	    (r = add_vcap(vd, VIRTIO_PCI_CAP_ISR_CFG, ISR_OFF, 4, 0)) < 0 ||
	    (ops->cfg_size && (r = add_vcap(vd, VIRTIO_PCI_CAP_DEVICE_CFG, DEVCFG_OFF, ops->cfg_size, 0)) < 0))
		return r;
	r = add_vcap(vd, VIRTIO_PCI_CAP_NOTIFY_CFG, NOTIFY_OFF, NOTIFY_MULT * ops->nr_queues, 4);
	if (r < 0)
		return r;
	uint32_t mult = NOTIFY_MULT;

	memcpy(vd->pci.cfg + r + sizeof(struct virtio_pci_cap), &mult, 4);
	r = add_vcap(vd, VIRTIO_PCI_CAP_PCI_CFG, 0, 0, 4);
	if (r < 0)
		return r;
	vd->cfg_cap = r;
	/* the driver picks bar, offset and length, and reads or writes the data through it */
	memset(vd->pci.wmask + r + offsetof(struct virtio_pci_cap, bar), 0xff, 1);
	memset(vd->pci.wmask + r + offsetof(struct virtio_pci_cap, offset), 0xff, 8);
	memset(vd->pci.wmask + r + offsetof(struct virtio_pci_cfg_cap, pci_cfg_data), 0xff, 4);
	vd->pci.cfg_read = cfg_read;
	/* one vector per queue plus one for configuration changes */
	return msix_init(&vd->msix, vm, &vd->pci, ops->nr_queues + 1, MSIX_BAR);
}

int virtio_start(struct virtio_dev *vd)
{
	int r = pthread_create(&vd->worker, NULL, worker, vd);

	vd->worker_started = r == 0;
	return -r;
}

VMM_HOT void virtio_stop(struct virtio_dev *vd)
{
	if (vd->worker_started) {
		eventfd_write(vd->stopfd, 1);
		pthread_join(vd->worker, NULL);
		vd->worker_started = false;
	}
	if (vd->ops->close)
		vd->ops->close(vd);
}

VMM_HOT int virtio_irq_rows(struct virtio_dev *vd, struct irq_report *r)
{
	for (unsigned int i = 0; i <= vd->msix.nr; i++) {
		struct irq_row *w = irq_report_add(r);

		if (!w)
			return -ENOMEM;
		snprintf(w->device, sizeof(w->device), "%s", vd->ops->name);
		snprintf(w->pci, sizeof(w->pci), "00:%02x.0", vd->pci.devfn >> 3);
		w->by = IRQ_BY_VMM;
		if (i < vd->msix.nr) {
			snprintf(w->vector, sizeof(w->vector), "msix%u", i);
			w->path = IRQ_PATH_IRQFD;
			w->count = atomic_load(&vd->msix.vec[i].raised);
		} else { /* before the driver enables MSI-X: INTA# and the ISR */
			snprintf(w->vector, sizeof(w->vector), "intx");
			w->path = IRQ_PATH_LINE;
			pthread_mutex_lock(&vd->pci.intx_lock);
			w->count = vd->pci.intx_asserts;
			pthread_mutex_unlock(&vd->pci.intx_lock);
		}
	}
	return 0;
}

VMM_HOT void virtio_summary(struct virtio_dev *vd, FILE *f)
{
	fprintf(f, "vmm: %s (00:%02x.0): %llu kicks by ioeventfd, %llu by MMIO exit, %llu interrupts by "
		"irqfd (%llu MSI-X), %llu exits on its BAR\n", vd->ops->name, vd->pci.devfn >> 3,
		(unsigned long long)atomic_load(&vd->stats.notifies),
		(unsigned long long)atomic_load(&vd->stats.notify_exits),
		(unsigned long long)atomic_load(&vd->stats.interrupts),
		(unsigned long long)atomic_load(&vd->msix.irqs),
		(unsigned long long)atomic_load(&vd->stats.bar_exits));
	if (atomic_load(&vd->stats.guest_errors) || atomic_load(&vd->msix.route_errors))
		fprintf(f, "vmm: %s (00:%02x.0): %llu guest errors (the first of each kind logged), %llu "
			"MSI-X routes KVM refused\n", vd->ops->name, vd->pci.devfn >> 3,
			(unsigned long long)atomic_load(&vd->stats.guest_errors),
			(unsigned long long)atomic_load(&vd->msix.route_errors));
	if (atomic_load(&vd->stats.passes_cut))
		fprintf(f, "vmm: %s (00:%02x.0): %llu worker passes stopped at a ring's size while the guest "
			"refilled it (the rest served on the next; kicks above include the worker's own)\n",
			vd->ops->name, vd->pci.devfn >> 3, (unsigned long long)atomic_load(&vd->stats.passes_cut));
	if (vd->ops->summary)
		vd->ops->summary(vd, f);
}
