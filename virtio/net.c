// SPDX-License-Identifier: MIT
/*
 * virtio-net on a tap device (IFF_TAP | IFF_NO_PI | IFF_VNET_HDR). The virtio 1.x header (12 bytes,
 * virtio_net_hdr_mrg_rxbuf) is the tap's vnet header, so frames move between the tap and guest
 * buffers with one readv/writev each. Checksum and TSO offloads are offered; the tap is told the
 * ones the guest accepted. The tap's EPOLLIN is level-triggered: it is on only while the guest can
 * take frames (device running, RX queue ready, buffers posted), off otherwise until the guest
 * kicks RX with new buffers, so a queued frame never makes the worker spin (a full guest, one that
 * enabled only TX, one whose device needs a reset).
 *
 * With vhost-net (vhost_net.c, the default where /dev/vhost-net opens) the kernel moves the frames
 * from DRIVER_OK to the reset: the worker then watches neither the kicks nor the tap. A driver
 * session vhost cannot carry (no MSI-X, a queue left disabled) runs on the userspace path, and
 * says why once.
 */
#include <errno.h>
#include <fcntl.h>
#include <linux/if.h>
#include <linux/if_tun.h>
#include <linux/virtio_ids.h>
#include <linux/virtio_net.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/ioctl.h>
#include <sys/uio.h>
#include <unistd.h>

#include "virtio/virtio.h"
#include "core/host_mem.h"
#include "core/log.h"
#include "core/pci.h"
#include "core/vm.h"

#define RXQ 0
#define TXQ 1
#define NET_QSIZE 256
/* the largest frame the tap hands over: the 12-byte header, a 64 KiB GSO packet and its headers */
#define NET_FRAME_MAX (65536 + 256)

struct vnet {
	struct virtio_dev vd;
	int tap;
	bool tap_polled;
	uint8_t mac[6];
	char ifname[IFNAMSIZ];
	struct vhost_net vhost;
	bool vhost_said; /* why a session ran without vhost: logged once */
	char vhost_off[160]; /* why vhost-net is not used at all, for the summary ("" when it is) */
	atomic_uint_fast64_t rx_frames, tx_frames, rx_too_big;
	bool mergeable; /* VIRTIO_NET_F_MRG_RXBUF: a frame may take several receive buffers */
	size_t pending;	/* mergeable: a frame read into overflow, waiting for enough buffers */
	/* catches what a frame has beyond the guest's buffer: tun truncates silently otherwise;
	 * mergeable, every frame is read here first (its length decides how many buffers it takes) */
	uint8_t overflow[NET_FRAME_MAX];
};

static void tap_poll(struct vnet *n, bool on)
{
	struct epoll_event e = { .events = on ? EPOLLIN : 0, .data.fd = n->tap };

	if (on != n->tap_polled && epoll_ctl(n->vd.epfd, EPOLL_CTL_MOD, n->tap, &e) == 0)
		n->tap_polled = on;
}

/* Mergeable receive buffers: the pending frame (header included) spread over as many buffers
 * as it needs, each filled in turn, num_buffers in the first one's header, all of them published
 * at once. 1: delivered (or dropped: larger than the whole ring); 0: too few buffers yet (they go
 * back to the ring, the frame waits); <0: the ring is broken. */
static int net_rx_spread(struct vnet *n, struct virtq *vq)
{
	struct virtq_elem first, e;
	uint16_t heads[VIRTQ_MAX_SIZE];
	uint32_t lens[VIRTQ_MAX_SIZE];
	size_t off = 0, len = n->pending;
	unsigned int nb = 0;

	while (off < len) {
		struct virtq_elem *p = nb ? &e : &first;
		int r = virtq_pop(vq, p);

		if (r < 0)
			return r;
		if (r == 0 || nb == vq->size) { /* out of buffers, or the ring's size in them already */
			for (unsigned int i = nb + (r > 0); i > 0; i--)
				virtq_unpop(vq); /* the guest's again, for this frame or the next */
			if (r == 0 && nb < vq->size)
				return 0; /* too few yet: the frame waits */
			atomic_fetch_add(&n->rx_too_big, 1); /* more than the whole ring holds */
			n->pending = 0;
			return 1;
		}
		if (!nb && p->in_len < sizeof(struct virtio_net_hdr_mrg_rxbuf)) {
			virtq_push(vq, p->head, 0); /* too small for the header: returned unused */
			continue;
		}
		size_t chunk = len - off < p->in_len ? len - off : p->in_len;

		buf_to_iov(p->iov + p->n_out, p->n_in, 0, n->overflow + off, chunk);
		heads[nb] = p->head;
		lens[nb++] = (uint32_t)chunk;
		off += chunk;
	}
	uint16_t count = (uint16_t)nb;

	buf_to_iov(first.iov + first.n_out, first.n_in, offsetof(struct virtio_net_hdr_mrg_rxbuf, num_buffers),
		   &count, sizeof(count));
	for (unsigned int i = 0; i < nb; i++)
		virtq_fill(vq, i, heads[i], lens[i]);
	virtq_flush(vq, nb);
	n->pending = 0;
	atomic_fetch_add(&n->rx_frames, 1);
	return 1;
}

static void net_rx_mergeable(struct vnet *n, struct virtq *vq)
{
	for (;;) {
		if (!n->pending) {
			ssize_t len = read(n->tap, n->overflow, sizeof(n->overflow));

			if (len < 0)
				break; /* nothing to read now */
			if ((size_t)len < sizeof(struct virtio_net_hdr_mrg_rxbuf))
				continue; /* no frame behind the header: nothing to give */
			n->pending = (size_t)len;
		}
		int r = net_rx_spread(n, vq);

		if (r <= 0) {
			/* too few buffers (or a broken ring): the tap waits until the guest posts more */
			tap_poll(n, false);
			break;
		}
	}
	/* frames delivered, or buffers too small for a header returned: raised only if used entries
	 * were added and the driver wants one (virtq_needs_interrupt) */
	virtio_queue_interrupt(&n->vd, RXQ);
}

static void net_rx(struct vnet *n)
{
	struct virtq *vq = &n->vd.q[RXQ].vq;
	struct virtq_elem e;
	bool any = false;

	if (!virtio_running(&n->vd) || !vq->ready || vq->broken) {
		/* nowhere to put a frame: the tap stays unpolled until an RX kick (or a reset and
		 * DRIVER_OK again) says there is */
		tap_poll(n, false);
		return;
	}
	if (n->mergeable) {
		net_rx_mergeable(n, vq);
		return;
	}
	for (;;) {
		int r = virtq_pop(vq, &e);

		if (r <= 0) {
			/* no buffers (or a broken ring): stop polling the tap until the guest posts more */
			tap_poll(n, false);
			break;
		}
		if (e.in_len < sizeof(struct virtio_net_hdr_mrg_rxbuf)) {
			virtq_push(vq, e.head, 0); /* too small for even the header: returned unused */
			any = true;
			continue;
		}
		struct iovec iov[VIRTQ_MAX_SEGS + 1];

		memcpy(iov, e.iov + e.n_out, e.n_in * sizeof(iov[0]));
		iov[e.n_in] = (struct iovec){ n->overflow, sizeof(n->overflow) };
		ssize_t len = readv(n->tap, iov, e.n_in + 1);

		if (len < 0) {
			virtq_unpop(vq); /* nothing to read now: the buffer stays the guest's */
			break;
		}
		if ((uint64_t)len > e.in_len) {
			/* larger than the buffer the guest posted (it did not negotiate big enough
			 * buffers): dropped and counted; the buffer takes the next frame */
			atomic_fetch_add(&n->rx_too_big, 1);
			virtq_unpop(vq);
			continue;
		}
		/* The tap writes the 10-byte header; num_buffers is ours (one buffer per frame). */
		uint16_t one = 1;

		buf_to_iov(e.iov + e.n_out, e.n_in, offsetof(struct virtio_net_hdr_mrg_rxbuf, num_buffers),
			   &one, sizeof(one));
		virtq_push(vq, e.head, len);
		atomic_fetch_add(&n->rx_frames, 1);
		any = true;
	}
	if (any)
		virtio_queue_interrupt(&n->vd, RXQ);
}

static void net_tx(struct vnet *n)
{
	struct virtq *vq = &n->vd.q[TXQ].vq;
	struct virtq_elem e;
	bool any = false;

	while (virtq_pop(vq, &e) > 0) {
		/* A frame shorter than the header is dropped; the tap validates the header itself. */
		if (e.out_len > sizeof(struct virtio_net_hdr_mrg_rxbuf) && writev(n->tap, e.iov, e.n_out) > 0)
			atomic_fetch_add(&n->tx_frames, 1);
		virtq_push(vq, e.head, 0);
		any = true;
	}
	if (any)
		virtio_queue_interrupt(&n->vd, TXQ);
}

static void net_notify(struct virtio_dev *vd, unsigned int q)
{
	struct vnet *n = vd->priv;

	if (n->vhost.active)
		return; /* a kick the worker took just before vhost did: the rings are vhost's */
	if (q == TXQ) {
		net_tx(n);
	} else {
		tap_poll(n, true); /* new receive buffers: frames may flow again */
		net_rx(n);
	}
}

static void net_fd_ready(struct virtio_dev *vd, int fd)
{
	struct vnet *n = vd->priv;

	if (fd == n->tap && !n->vhost.active)
		net_rx(n);
}

/* What virtio_report() says about the device itself (after the transport's causes). */
static const char *const net_causes[] = { "offload", "vhost" };

static int net_activate(struct virtio_dev *vd)
{
	struct vnet *n = vd->priv;
	unsigned int off = 0;

	if (virtio_has_feature(vd, VIRTIO_NET_F_GUEST_CSUM)) {
		off |= TUN_F_CSUM;
		if (virtio_has_feature(vd, VIRTIO_NET_F_GUEST_TSO4))
			off |= TUN_F_TSO4;
		if (virtio_has_feature(vd, VIRTIO_NET_F_GUEST_TSO6))
			off |= TUN_F_TSO6;
	}
	n->mergeable = virtio_has_feature(vd, VIRTIO_NET_F_MRG_RXBUF);
	if (ioctl(n->tap, TUNSETOFFLOAD, off) < 0) {
		int err = errno;

		virtio_report(vd, net_causes[0], "TUNSETOFFLOAD 0x%x on %s: %s", off, n->ifname, strerror(err));
		return -err;
	}
	if (n->vhost.fd >= 0) {
		char why[160];
		int r = vhost_net_start(&n->vhost, vd, n->tap, why, sizeof(why));

		if (r == 0) {
			tap_poll(n, false); /* the tap is vhost's */
			return 0;
		}
		if (r == -EFAULT) { /* a ring vhost must not be given: refused, as queue_enable does */
			virtio_report(vd, net_causes[1], "vhost-net refused: %s", why);
			return r;
		}
		if (!n->vhost_said) {
			n->vhost_said = true;
			pr_warn_guest(vd->vm, "virtio-net (00:%02x.0) tap=%s: this driver session runs without "
				      "vhost-net: %s", vd->pci.devfn >> 3, n->ifname, why);
		}
	}
	/* only with an RX queue to fill; one enabled later is armed by its first kick */
	tap_poll(n, vd->q[RXQ].vq.ready);
	return 0;
}

static int net_reset(struct virtio_dev *vd)
{
	struct vnet *n = vd->priv;

	if (n && n->tap >= 0) {
		vhost_net_stop(&n->vhost, vd);
		tap_poll(n, false);
	}
	if (n)
		n->pending = 0; /* a frame read for the old session's buffers: dropped */
	return 0;
}

static void net_vector_changed(struct virtio_dev *vd, unsigned int q)
{
	struct vnet *n = vd->priv;

	vhost_net_set_call(&n->vhost, vd, q);
}

/* At exit, after the worker stopped: vhost lets go of the rings and the tap before RAM goes. */
static void net_close(struct virtio_dev *vd)
{
	struct vnet *n = vd->priv;

	pthread_mutex_lock(&vd->lock);
	vhost_net_stop(&n->vhost, vd);
	vhost_net_close(&n->vhost);
	pthread_mutex_unlock(&vd->lock);
}

static void net_cfg(struct virtio_dev *vd, uint32_t off, uint8_t *data, uint32_t len, bool write)
{
	struct vnet *n = vd->priv;
	struct virtio_net_config c = { .status = VIRTIO_NET_S_LINK_UP };

	memcpy(c.mac, n->mac, sizeof(c.mac));
	if (!write)
		memcpy(data, (uint8_t *)&c + off, len);
}

static void net_summary(struct virtio_dev *vd, FILE *f)
{
	struct vnet *n = vd->priv;

	fprintf(f, "vmm: virtio-net (00:%02x.0): %llu frames received, %llu sent, %llu dropped as larger "
		"than the guest's buffers\n", vd->pci.devfn >> 3, (unsigned long long)atomic_load(&n->rx_frames),
		(unsigned long long)atomic_load(&n->tx_frames), (unsigned long long)atomic_load(&n->rx_too_big));
	if (n->vhost_off[0])
		fprintf(f, "vmm: virtio-net (00:%02x.0): vhost-net off: %s\n", vd->pci.devfn >> 3, n->vhost_off);
	else
		fprintf(f, "vmm: virtio-net (00:%02x.0): vhost-net on: it carried %u driver session(s), "
			"vmm's worker the frames above\n", vd->pci.devfn >> 3, n->vhost.starts);
}

static const struct virtio_ops net_ops = {
	.name = "virtio-net",
	.device_id = VIRTIO_ID_NET,
	.class_rev = 0x020000 << 8, /* ethernet controller */
	.nr_queues = 2,
	.queue_size = NET_QSIZE,
	.features = (1ULL << VIRTIO_NET_F_MAC) | (1ULL << VIRTIO_NET_F_STATUS) |
		    (1ULL << VIRTIO_NET_F_CSUM) | (1ULL << VIRTIO_NET_F_HOST_TSO4) |
		    (1ULL << VIRTIO_NET_F_HOST_TSO6) | (1ULL << VIRTIO_NET_F_GUEST_CSUM) |
		    (1ULL << VIRTIO_NET_F_GUEST_TSO4) | (1ULL << VIRTIO_NET_F_GUEST_TSO6) |
		    /* receive buffers of a page or so, merged for a large frame: without it a driver
		     * that takes GSO frames posts 64 KiB chains (19 descriptors each) and one small
		     * ACK fills one */
		    (1ULL << VIRTIO_NET_F_MRG_RXBUF) |
		    /* a frame of many fragments takes one ring entry */
		    (1ULL << VIRTIO_RING_F_INDIRECT_DESC) |
		    /* fewer kicks and interrupts: the driver says when it wants one, vmm (virtq.c) or
		     * vhost-net says when it wants a kick */
		    (1ULL << VIRTIO_RING_F_EVENT_IDX),
	.cfg_size = sizeof(struct virtio_net_config),
	.cfg_access = net_cfg,
	.causes = net_causes,
	.nr_causes = sizeof(net_causes) / sizeof(net_causes[0]),
	.queue_notify = net_notify,
	.fd_ready = net_fd_ready,
	.activate = net_activate,
	.reset = net_reset,
	.close = net_close,
	.vector_changed = net_vector_changed,
	.summary = net_summary,
};

static int tap_open(const char *name, char *ifname)
{
	struct ifreq ifr = { .ifr_flags = IFF_TAP | IFF_NO_PI | IFF_VNET_HDR };
	int hdr = sizeof(struct virtio_net_hdr_mrg_rxbuf);
	int fd = open("/dev/net/tun", O_RDWR | O_NONBLOCK | O_CLOEXEC);

	if (fd < 0) {
		pr_err("--net: cannot open /dev/net/tun: %s (load the tun module)", strerror(errno));
		return -1;
	}
	snprintf(ifr.ifr_name, sizeof(ifr.ifr_name), "%s", name);
	int r = ioctl(fd, TUNSETIFF, &ifr);

	if (r < 0 && errno == EBUSY) {
		pr_err("--net tap=%s: the tap is attached to another process (another vmm?); stop that one "
		       "or choose another tap", name);
		close(fd);
		return -1;
	}
	if (r < 0 || ioctl(fd, TUNSETVNETHDRSZ, &hdr) < 0) {
		pr_err("--net tap=%s: %s (a tap needs CAP_NET_ADMIN, or one made with 'ip tuntap add "
		       "%s mode tap user $USER vnet_hdr')", name, strerror(errno), name);
		close(fd);
		return -1;
	}
	snprintf(ifname, IFNAMSIZ, "%s", ifr.ifr_name);
	return fd;
}

/* vhost-net where asked and it opens; otherwise one line says why frames go through vmm. */
static void net_vhost_open(struct vnet *n, struct vm *vm, const struct virtio_net_opts *o)
{
	const char *path = o->vhost_dev ? o->vhost_dev : NET_VHOST_DEV;

	n->vhost.fd = -1;
	if (o->vhost == NET_VHOST_OFF) {
		snprintf(n->vhost_off, sizeof(n->vhost_off), "vhost=off");
		return;
	}
	if (vhost_net_open(&n->vhost, vm, path, n->vhost_off, sizeof(n->vhost_off)) == 0) {
		n->vhost_off[0] = 0;
		return;
	}
	/* vhost=on asked for it: a warning; the default only notes the fallback */
	if (o->vhost == NET_VHOST_ON)
		pr_warn("--net tap=%s: vhost-net off, frames go through vmm's worker: %s", o->tap, n->vhost_off);
	else
		pr_info("--net tap=%s: vhost-net off, frames go through vmm's worker: %s", o->tap, n->vhost_off);
}

struct virtio_dev *virtio_net_create(struct vm *vm, struct pci_host *h, const struct virtio_net_opts *o)
{
	struct vnet *n = host_mem_zalloc(sizeof(*n));

	if (!n)
		return NULL;
	n->tap = tap_open(o->tap, n->ifname);
	if (n->tap < 0) {
		host_mem_zfree(n, sizeof(*n));
		return NULL;
	}
	memcpy(n->mac, o->mac, 6);
	net_vhost_open(n, vm, o);
	struct epoll_event e = { .events = 0, .data.fd = n->tap };

	if (virtio_pci_init(&n->vd, vm, h, &net_ops, n) < 0 ||
	    epoll_ctl(n->vd.epfd, EPOLL_CTL_ADD, n->tap, &e) < 0) {
		pr_err("virtio-net: cannot create the device");
		vhost_net_close(&n->vhost);
		close(n->tap);
		host_mem_zfree(n, sizeof(*n));
		return NULL;
	}
	return &n->vd;
}
