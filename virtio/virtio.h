/* SPDX-License-Identifier: MIT */
/*
 * virtio: split virtqueues, the modern virtio-pci transport, and the devices (console, blk, net).
 * Each device has a worker thread: queue notifications arrive on ioeventfds and interrupts leave
 * through MSI-X irqfds, so a running device costs no userspace exit.
 */
#ifndef VMM_VIRTIO_H
#define VMM_VIRTIO_H

#include <linux/virtio_config.h>
#include <linux/virtio_pci.h>
#include <linux/virtio_ring.h>
#include <stdio.h>
#include <sys/uio.h>

#include "platform/console.h"
#include "core/pci.h"
#include "core/msix.h"
#include "core/vm.h"

#define VIRTQ_MAX_SIZE 256
/* a chain's buffers (the spec bounds a chain by the queue size; an indirect table can hold that
 * many too): virtio-blk's seg_max + 2 */
#define VIRTQ_MAX_SEGS VIRTQ_MAX_SIZE
#define VIRTQ_MAX_INDIRECT VIRTQ_MAX_SEGS /* descriptors in one indirect table */
#define VIRTIO_MAX_QUEUES 6 /* virtio-console with two ports: 2 data pairs and the control pair */
/* The virtio PCI vendor ID (virtio spec 4.1.2); kernel UAPI does not ship it. */
#define VIRTIO_PCI_VENDOR 0x1af4
#define VIRTIO_PCI_DEVICE_BASE 0x1040

/* virtq.c */
/* Why a ring is broken (virtq.why is virtq_causes[one of these]). */
enum virtq_cause {
	VQ_AVAIL_AHEAD, VQ_HEAD_RANGE, VQ_CHAIN_LOOP, VQ_INDIRECT, VQ_CHAIN_LONG, VQ_OUTSIDE_RAM,
	VQ_READ_AFTER_WRITE, VQ_NEXT_RANGE, VQ_INDIRECT_PLACE, VQ_INDIRECT_LEN, VIRTQ_NR_CAUSES
};
extern const char *const virtq_causes[VIRTQ_NR_CAUSES];

struct virtq {
	struct vm *vm;
	uint16_t size;
	bool ready, broken;
	const char *why; /* what broke it: one of virtq_causes */
	struct vring_desc *desc;
	struct vring_avail *avail;
	struct vring_used *used;
	uint16_t last_avail, used_idx;
	uint16_t signalled_used; /* used_idx when the driver was last interrupted (or declined it) */
	/* VIRTIO_RING_F_EVENT_IDX negotiated: the driver's used_event (avail->ring[size]) says when
	 * it wants an interrupt, and the device's avail_event (used->ring[size]) when it wants a kick */
	bool event_idx;
	/* VIRTIO_RING_F_INDIRECT_DESC negotiated: a chain's head may point at a table of descriptors
	 * in guest RAM, so a request takes one ring entry however many buffers it has */
	bool indirect;
	/* A worker's pass (virtq_pass_begin/end) takes at most the ring's size in chains: a guest
	 * refilling the ring from another vCPU cannot hold the worker, and the device lock, in one */
	bool in_pass, cut; /* cut: a chain was left pending for the next pass */
	uint16_t pass_left;
};

struct virtq_elem {
	uint16_t head;
	unsigned int n_out, n_in; /* iov[0..n_out) device-readable, then n_in writable */
	uint64_t out_len, in_len;
	struct iovec iov[VIRTQ_MAX_SEGS];
};

int virtq_setup(struct virtq *vq, struct vm *vm, uint16_t size, uint64_t desc, uint64_t avail,
		uint64_t used);
/* 1: an element was taken; 0: none pending; <0: the ring is malformed (queue now broken). With
 * event_idx, an empty ring asks for a kick at the next entry (avail_event), so a device that pops
 * until empty sleeps only when the driver will kick, and is not kicked while it is still popping. */
int virtq_pop(struct virtq *vq, struct virtq_elem *e);
void virtq_push(struct virtq *vq, uint16_t head, uint32_t len);
/* virtq_push in two steps: the i-th used entry of a batch written, then count of them published
 * at once, so the driver never sees part of a batch (a frame over several buffers, num_buffers). */
void virtq_fill(struct virtq *vq, unsigned int i, uint16_t head, uint32_t len);
void virtq_flush(struct virtq *vq, unsigned int count);
/* Gives the last popped element back to the ring (the device could not use it yet); its place
 * in the pass's budget is not given back, so popping and unpopping cannot go on for ever. */
void virtq_unpop(struct virtq *vq);
/* A pass of the worker over vq: until virtq_pass_end, virtq_pop takes at most vq->size chains and
 * answers 0 (nothing for now) once they are taken, leaving the rest pending. */
void virtq_pass_begin(struct virtq *vq);
/* Ends it: true when chains were left pending for lack of budget, so the caller must make sure the
 * queue gets another pass (the avail_event a full drain would have set was not). */
bool virtq_pass_end(struct virtq *vq);
/* True when used entries were added since the last interrupt and the driver wants one. */
bool virtq_needs_interrupt(struct virtq *vq);
size_t iov_to_buf(const struct iovec *iov, unsigned int n, size_t skip, void *buf, size_t len);
size_t buf_to_iov(const struct iovec *iov, unsigned int n, size_t skip, const void *buf, size_t len);

/* pci.c: the modern virtio-pci transport. */
struct virtio_dev;

struct virtio_ops {
	const char *name;
	uint16_t device_id; /* VIRTIO_ID_* */
	uint32_t class_rev; /* PCI class code << 8 */
	unsigned int nr_queues;
	uint16_t queue_size;
	uint64_t features; /* device features; the transport adds VIRTIO_F_VERSION_1 */
	uint32_t cfg_size;
	/* All hooks run with the device lock held. */
	void (*cfg_access)(struct virtio_dev *vd, uint32_t off, uint8_t *data, uint32_t len, bool write);
	void (*queue_notify)(struct virtio_dev *vd, unsigned int q);
	void (*fd_ready)(struct virtio_dev *vd, int fd); /* a fd added with virtio_watch_fd() */
	int (*activate)(struct virtio_dev *vd);		 /* DRIVER_OK */
	/* Optional: the driver gave queue q another MSI-X vector (vhost-net's call follows it) */
	void (*vector_changed)(struct virtio_dev *vd, unsigned int q);
	/* Quiesce: 0 when done, 1 when I/O in flight must finish first (then virtio_reset_done()). */
	int (*reset)(struct virtio_dev *vd);
	/* Optional, without the lock: after the worker stopped (blk drains and syncs), and a line of
	 * device-specific counts for the exit summary. */
	void (*close)(struct virtio_dev *vd);
	void (*summary)(struct virtio_dev *vd, FILE *f);
	/* the device's own causes for virtio_report(), after the transport's */
	const char *const *causes;
	unsigned int nr_causes;
};

struct virtio_stats {
	atomic_uint_fast64_t notifies;	   /* queue kicks taken from ioeventfds */
	atomic_uint_fast64_t notify_exits; /* kicks that reached vmm as MMIO exits */
	atomic_uint_fast64_t interrupts;   /* queue interrupts sent */
	atomic_uint_fast64_t bar_exits;	   /* every userspace exit on the device's BAR */
	atomic_uint_fast64_t guest_errors; /* malformed rings, bad queue set-up, failed activation */
	atomic_uint_fast64_t passes_cut;   /* passes that left chains for the next (ring refilled) */
};

/* The causes virtio_report() takes: the transport's (its queues' virtq_causes, then a bad queue
 * set-up), then the device's (ops->causes). Each is logged once per device, all of them: a device
 * whose causes would not fit vd->reported is refused at virtio_pci_init. */
#define VIRTIO_TRANSPORT_CAUSES (VIRTQ_NR_CAUSES + 1)
#define VIRTIO_MAX_CAUSES 64

struct virtio_dev {
	struct pci_dev pci;
	struct msix msix;
	struct vm *vm;
	const struct virtio_ops *ops;
	void *priv;
	pthread_mutex_t lock;
	uint64_t features, drv_features;
	uint32_t dfsel, gfsel;
	uint8_t status, isr;
	bool resetting; /* a reset waits for the device's I/O in flight */
	uint16_t msix_config, qsel;
	uint32_t cfg_cap; /* the VIRTIO_PCI_CAP_PCI_CFG window */
	uint64_t reported; /* causes already logged, by virtio_cause() index (survive resets) */
	struct {
		struct virtq vq;
		uint16_t size, vector;
		uint64_t desc, avail, used;
		int notify_fd;
		bool ioeventfd;
	} q[VIRTIO_MAX_QUEUES];
	uint64_t bar_addr; /* BAR 0 where it is mapped now, 0 when not */
	int epfd, stopfd;
	pthread_t worker;
	bool worker_started;
	struct virtio_stats stats;
};

int virtio_pci_init(struct virtio_dev *vd, struct vm *vm, struct pci_host *h,
		    const struct virtio_ops *ops, void *priv);
int virtio_start(struct virtio_dev *vd);
/* One round of the worker: handles the kicks and fds ready within timeout_ms; -1 once stopped.
 * The worker thread loops on it; unit tests call it to step a device deterministically. */
int virtio_poll(struct virtio_dev *vd, int timeout_ms);
/* Stops the worker, then lets the device finish (ops->close). */
void virtio_stop(struct virtio_dev *vd);
/* The device's lines of vmm's exit summary: transport counters, then ops->summary. */
void virtio_summary(struct virtio_dev *vd, FILE *f);
/* Its rows of the interrupt table: per MSI-X vector (vmm writes the eventfd KVM's irqfd injects
 * from) and INTA# (vmm drives the line), each counted exactly by vmm. */
struct irq_report;
int virtio_irq_rows(struct virtio_dev *vd, struct irq_report *r);
/* Lets a device wait for its own fd (tap, aio completions) in the worker. */
int virtio_watch_fd(struct virtio_dev *vd, int fd);
/* After pushing used elements: interrupts the guest unless it suppressed them. Lock held. */
void virtio_queue_interrupt(struct virtio_dev *vd, unsigned int q);
/* Marks the device DEVICE_NEEDS_RESET and tells the driver. Lock held. */
void virtio_fail(struct virtio_dev *vd);
/* A guest-caused problem: counted always, logged once per device and cause, which is one of
 * virtio_cause()'s (another is logged every time, under the VM's limit: a vmm bug). */
void virtio_report(struct virtio_dev *vd, const char *cause, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));
/* The device's causes, 0 to virtio_nr_causes() - 1: the transport's, then ops->causes. */
unsigned int virtio_nr_causes(const struct virtio_dev *vd);
const char *virtio_cause(const struct virtio_dev *vd, unsigned int i);
/* Ends a reset the device's reset hook left pending. Lock held. */
void virtio_reset_done(struct virtio_dev *vd);
bool virtio_has_feature(const struct virtio_dev *vd, unsigned int bit);
bool virtio_running(const struct virtio_dev *vd);

/* blk.c: a raw image; ro opens it read-only and sets VIRTIO_BLK_F_RO. queues > 1 offers
 * VIRTIO_BLK_F_MQ with that many request queues (at most VIRTIO_MAX_QUEUES; one worker serves all). */
struct virtio_dev *virtio_blk_create(struct vm *vm, struct pci_host *h, const char *path, bool ro,
				     unsigned int queues);

/* net.c: a tap device (created if it does not exist and vmm may), its frames moved by vhost-net
 * where it opens (the default), else by the device's worker. */
enum net_vhost { NET_VHOST_AUTO, NET_VHOST_ON, NET_VHOST_OFF };
#define NET_VHOST_DEV "/dev/vhost-net"

struct virtio_net_opts {
	const char *tap;
	uint8_t mac[6];
	enum net_vhost vhost;
	const char *vhost_dev; /* NULL: NET_VHOST_DEV */
};

struct virtio_dev *virtio_net_create(struct vm *vm, struct pci_host *h, const struct virtio_net_opts *o);

/* vhost_net.c: the plumbing between a virtio-net device and /dev/vhost-net (see there). */
struct vhost_net {
	struct vm *vm;
	int fd;		   /* /dev/vhost-net, -1 when not open */
	uint64_t features; /* what vhost offers (VHOST_GET_FEATURES) */
	bool active;	   /* the rings are vhost's: vmm's worker stays off the data path */
	unsigned int starts; /* driver sessions vhost carried */
};

/* Opens path and becomes its owner; <0 with why set (one line) when it cannot be used. */
int vhost_net_open(struct vhost_net *v, struct vm *vm, const char *path, char *why, size_t len);
void vhost_net_close(struct vhost_net *v);
/* A ring the guest placed, as vhost may be given it: size a power of two at most max, each part
 * aligned and inside guest RAM for its whole length. */
bool vhost_net_ring_ok(const struct vm *vm, uint16_t size, uint16_t max, uint64_t desc, uint64_t avail,
		       uint64_t used);
/* At DRIVER_OK, lock held: features, memory table, vrings, kick and call, backend = tap. <0 with
 * why set: nothing is left with vhost and the userspace path serves. */
int vhost_net_start(struct vhost_net *v, struct virtio_dev *vd, int tap, char *why, size_t len);
/* On reset and at exit, lock held: backend -1 and VHOST_GET_VRING_BASE; kicks back to the worker. */
void vhost_net_stop(struct vhost_net *v, struct virtio_dev *vd);
/* The driver moved queue q to another vector while vhost runs: vhost's call follows (no vector:
 * unbound, as the userspace path raises nothing then). Lock held. */
int vhost_net_set_call(struct vhost_net *v, struct virtio_dev *vd, unsigned int q);

/* console.c */
#define VIRTIO_CONSOLE_MAX_PORTS 2
#define VIRTIO_CONSOLE_NAME_MAX 64

/* A port: what the guest transmits on it goes to write (called from the device's worker, with
 * the device lock held; it must not block for long). */
struct virtio_console_port {
	const char *name; /* PORT_NAME (the guest reads it in /sys/class/virtio-ports/vportNpM/name), or NULL */
	bool console;	  /* CONSOLE_PORT: the guest makes it an hvc console */
	void (*write)(void *opaque, const uint8_t *buf, size_t len);
	void *opaque;
};

struct virtio_console_stats {
	uint64_t ctrl_received, ctrl_bad, ctrl_sent; /* control messages */
	uint64_t port_bytes[VIRTIO_CONSOLE_MAX_PORTS];	/* transmitted by the guest */
	uint64_t guest_opens[VIRTIO_CONSOLE_MAX_PORTS];	/* PORT_OPEN 1 from the driver */
	bool multiport;	      /* the driver sent DEVICE_READY (multiport set up) since creation */
	unsigned int ports_ready; /* bit per port the driver answered PORT_READY 1 for, ever */
};

/* One port, the console (hvc0), no multiport: the console's output goes to out. */
struct virtio_dev *virtio_console_create(struct vm *vm, struct pci_host *h, struct console_out *out);
/* ports[0..n) (n <= VIRTIO_CONSOLE_MAX_PORTS); multiport offers VIRTIO_CONSOLE_F_MULTIPORT and the
 * control queues (required for n > 1). Keyboard input (virtio_console_push) goes to port 0. */
struct virtio_dev *virtio_console_create_ports(struct vm *vm, struct pci_host *h,
					       const struct virtio_console_port *ports, unsigned int n,
					       bool multiport);
void virtio_console_stats(struct virtio_dev *vd, struct virtio_console_stats *st);
/* console_in_sink.push for the device returned above (opaque = vd->priv). */
size_t virtio_console_push(void *opaque, const uint8_t *buf, size_t len);

#endif
