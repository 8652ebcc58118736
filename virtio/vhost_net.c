// SPDX-License-Identifier: MIT
/*
 * vhost-net: the kernel moves virtio-net's frames between the rings and the tap, so no vmm thread
 * is on the data path. The guest's kick reaches vhost straight from KVM: the queue's notify
 * eventfd, already KVM's ioeventfd, is vhost's kick (VHOST_SET_VRING_KICK). vhost's interrupt is
 * the eventfd of the queue's MSI-X vector, which msix.c gives KVM as an irqfd while the vector is
 * live (VHOST_SET_VRING_CALL): a masked vector has no irqfd, so what vhost raises meanwhile waits
 * in the eventfd (the PBA shows it) and is injected on unmask, exactly as for a VFIO device.
 *
 * Everything handed over was written by the guest and is checked first, as strictly as the
 * userspace path checks it: each ring lies inside guest RAM for its whole size (vhost is told host
 * addresses, translated by vm_gpa_to_hva), the size is a power of two within the device's limit,
 * the memory table is guest RAM only (never a BAR's memory). Features are what the guest accepted
 * and vhost offers. The ioctls go through the KVM seam's fd_ioctl, so unit tests play vhost.
 */
#include <errno.h>
#include <fcntl.h>
#include <linux/vhost.h>
#include <linux/virtio_net.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/eventfd.h>
#include <unistd.h>

#include "virtio/virtio.h"
#include "core/log.h"
#include "core/mem.h"
#include "core/vm.h"

static int vh_ioctl(struct vhost_net *v, unsigned long req, void *arg)
{
	return v->vm->kvm.ops->fd_ioctl(v->vm->kvm.ctx, v->fd, req, arg);
}

int vhost_net_open(struct vhost_net *v, struct vm *vm, const char *path, char *why, size_t len)
{
	int r;

	memset(v, 0, sizeof(*v));
	v->vm = vm;
	v->fd = open(path, O_RDWR | O_CLOEXEC);
	if (v->fd < 0) {
		int err = errno;

		snprintf(why, len, "cannot open %s: %s (%s)", path, strerror(err),
			 err == ENOENT ? "modprobe vhost_net" : "vmm needs read-write access to it");
		return -err;
	}
	/* the owner is this process: vhost starts its worker now, before any sandbox */
	if ((r = vh_ioctl(v, VHOST_SET_OWNER, NULL)) < 0) {
		snprintf(why, len, "VHOST_SET_OWNER on %s: %s", path, strerror(-r));
		goto fail;
	}
	if ((r = vh_ioctl(v, VHOST_GET_FEATURES, &v->features)) < 0) {
		snprintf(why, len, "VHOST_GET_FEATURES on %s: %s", path, strerror(-r));
		goto fail;
	}
	/* the 12-byte header and num_buffers written by vhost need virtio 1.x */
	if (!(v->features & (1ULL << VIRTIO_F_VERSION_1))) {
		snprintf(why, len, "%s lacks VIRTIO_F_VERSION_1 (features 0x%llx)", path,
			 (unsigned long long)v->features);
		r = -EOPNOTSUPP;
		goto fail;
	}
	return 0;
fail:
	close(v->fd);
	v->fd = -1;
	return r;
}

void vhost_net_close(struct vhost_net *v)
{
	if (v->fd >= 0)
		close(v->fd);
	v->fd = -1;
}

bool vhost_net_ring_ok(const struct vm *vm, uint16_t size, uint16_t max, uint64_t desc, uint64_t avail,
		       uint64_t used)
{
	/* the layout of a split ring (virtio 1.x 2.7): the avail and used rings carry the
	 * used_event/avail_event word too, which vhost may touch with EVENT_IDX */
	return size && size <= max && !(size & (size - 1)) && !(desc % 16) && !(avail % 2) &&
	       !(used % 4) && vm_gpa_to_hva(vm, desc, 16ULL * size) &&
	       vm_gpa_to_hva(vm, avail, 6 + 2ULL * size) && vm_gpa_to_hva(vm, used, 6 + 8ULL * size);
}

/* The worker stops (or resumes) watching the queues' kicks: with vhost on, a kick is vhost's. */
static void kicks_to_worker(struct virtio_dev *vd, unsigned int nq, bool on)
{
	for (unsigned int q = 0; q < nq; q++) {
		if (on) /* watched as virtio_pci_init watched them first (edge-triggered, never read) */
			virtio_watch_fd(vd, vd->q[q].notify_fd);
		else
			epoll_ctl(vd->epfd, EPOLL_CTL_DEL, vd->q[q].notify_fd, NULL);
	}
}

/* Hands queue q to vhost, up to its backend. */
static int vring_setup(struct vhost_net *v, struct virtio_dev *vd, unsigned int q, char *why, size_t len)
{
	struct virtq *vq = &vd->q[q].vq;
	struct vhost_vring_state num = { .index = q, .num = vq->size };
	struct vhost_vring_state base = { .index = q, .num = vq->last_avail };
	struct vhost_vring_addr addr = {
		.index = q,
		.desc_user_addr = (uintptr_t)vm_gpa_to_hva(vd->vm, vd->q[q].desc, 16ULL * vq->size),
		.avail_user_addr = (uintptr_t)vm_gpa_to_hva(vd->vm, vd->q[q].avail, 6 + 2ULL * vq->size),
		.used_user_addr = (uintptr_t)vm_gpa_to_hva(vd->vm, vd->q[q].used, 6 + 8ULL * vq->size),
	};
	struct vhost_vring_file kick = { .index = q, .fd = vd->q[q].notify_fd };
	struct vhost_vring_file call = { .index = q, .fd = msix_vector_eventfd(&vd->msix, vd->q[q].vector) };
	int r;

	if ((r = vh_ioctl(v, VHOST_SET_VRING_NUM, &num)) < 0)
		snprintf(why, len, "VHOST_SET_VRING_NUM %u on queue %u: %s", num.num, q, strerror(-r));
	else if ((r = vh_ioctl(v, VHOST_SET_VRING_BASE, &base)) < 0)
		snprintf(why, len, "VHOST_SET_VRING_BASE on queue %u: %s", q, strerror(-r));
	else if ((r = vh_ioctl(v, VHOST_SET_VRING_ADDR, &addr)) < 0)
		snprintf(why, len, "VHOST_SET_VRING_ADDR on queue %u: %s", q, strerror(-r));
	else if ((r = vh_ioctl(v, VHOST_SET_VRING_KICK, &kick)) < 0)
		snprintf(why, len, "VHOST_SET_VRING_KICK on queue %u: %s", q, strerror(-r));
	else if ((r = vh_ioctl(v, VHOST_SET_VRING_CALL, &call)) < 0)
		snprintf(why, len, "VHOST_SET_VRING_CALL on queue %u: %s", q, strerror(-r));
	return r;
}

static int mem_table(struct vhost_net *v, char *why, size_t len)
{
	struct vm *vm = v->vm;
	/* the header and its flexible array of regions, on the stack (u64-aligned) */
	uint64_t buf[(sizeof(struct vhost_memory) + VM_MAX_MEM_REGIONS * sizeof(struct vhost_memory_region)) / 8];
	struct vhost_memory *t = (struct vhost_memory *)buf;
	int r;

	memset(buf, 0, sizeof(buf));
	/* guest RAM only: a BAR's memory (vm_mmio_map) is never a target, as for vm_gpa_to_hva */
	for (int i = 0; i < vm->nr_mem && i < VM_MAX_MEM_REGIONS; i++)
		t->regions[t->nregions++] = (struct vhost_memory_region){
			.guest_phys_addr = vm->mem[i].gpa, .memory_size = vm->mem[i].size,
			.userspace_addr = (uintptr_t)vm->mem[i].hva,
		};
	if ((r = vh_ioctl(v, VHOST_SET_MEM_TABLE, t)) < 0)
		snprintf(why, len, "VHOST_SET_MEM_TABLE (%u regions): %s", t->nregions, strerror(-r));
	return r;
}

/* Takes the rings back from vhost: no backend (vhost stops touching them), its position read. */
static void vrings_release(struct vhost_net *v, struct virtio_dev *vd, unsigned int nq)
{
	for (unsigned int q = 0; q < nq; q++) {
		struct vhost_vring_file none = { .index = q, .fd = VHOST_FILE_UNBIND };
		struct vhost_vring_state base = { .index = q };

		vh_ioctl(v, VHOST_NET_SET_BACKEND, &none);
		if (vh_ioctl(v, VHOST_GET_VRING_BASE, &base) == 0 && base.num <= UINT16_MAX)
			vd->q[q].vq.last_avail = base.num;
		vh_ioctl(v, VHOST_SET_VRING_KICK, &none);
		vh_ioctl(v, VHOST_SET_VRING_CALL, &none);
	}
}

int vhost_net_start(struct vhost_net *v, struct virtio_dev *vd, int tap, char *why, size_t len)
{
	unsigned int nq = vd->ops->nr_queues;
	unsigned int q;
	int r;

	if (v->fd < 0 || v->active)
		return v->active ? 0 : -ENODEV;
	/* what vhost cannot serve runs on the userspace path: a driver without MSI-X (INTx needs
	 * vmm to set the ISR), a queue left disabled or without a vector */
	if (!msix_enabled(&vd->msix)) {
		snprintf(why, len, "the driver did not enable MSI-X");
		return -EOPNOTSUPP;
	}
	for (q = 0; q < nq; q++) {
		if (!vd->q[q].vq.ready || vd->q[q].vq.broken) {
			snprintf(why, len, "queue %u is not enabled", q);
			return -EOPNOTSUPP;
		}
		if (msix_vector_eventfd(&vd->msix, vd->q[q].vector) < 0) {
			snprintf(why, len, "queue %u has no MSI-X vector", q);
			return -EOPNOTSUPP;
		}
		/* queue_enable checked them; checked again here, where they leave vmm's hands */
		if (!vhost_net_ring_ok(vd->vm, vd->q[q].vq.size, vd->ops->queue_size, vd->q[q].desc,
				       vd->q[q].avail, vd->q[q].used)) {
			snprintf(why, len, "queue %u: size %u or rings outside guest memory", q, vd->q[q].vq.size);
			return -EFAULT;
		}
	}
	/* What the driver accepted that changes the rings' contents, vhost must do too: a driver
	 * with EVENT_IDX kicks only when avail_event says (a vhost that does not keep it would never
	 * be kicked again), one with INDIRECT_DESC posts descriptor tables, one with MRG_RXBUF posts
	 * buffers too small for a large frame alone. The userspace path does all three. */
	static const struct { unsigned int bit; const char *name; } must[] = {
		{ VIRTIO_RING_F_EVENT_IDX, "VIRTIO_RING_F_EVENT_IDX" },
		{ VIRTIO_RING_F_INDIRECT_DESC, "VIRTIO_RING_F_INDIRECT_DESC" },
		{ VIRTIO_NET_F_MRG_RXBUF, "VIRTIO_NET_F_MRG_RXBUF" },
	};

	for (size_t i = 0; i < sizeof(must) / sizeof(must[0]); i++) {
		uint64_t bit = 1ULL << must[i].bit;

		if ((vd->drv_features & bit) && !(v->features & bit)) {
			snprintf(why, len, "the driver accepted %s, which vhost-net does not offer", must[i].name);
			return -EOPNOTSUPP;
		}
	}
	/* ring features (VERSION_1 and what vhost knows) as the guest accepted them; the device's
	 * own (offloads) are the tap's, set by net.c with TUNSETOFFLOAD */
	uint64_t feat = vd->drv_features & v->features;

	if ((r = vh_ioctl(v, VHOST_SET_FEATURES, &feat)) < 0) {
		snprintf(why, len, "VHOST_SET_FEATURES 0x%llx: %s", (unsigned long long)feat, strerror(-r));
		return r;
	}
	if ((r = mem_table(v, why, len)) < 0)
		return r;
	for (q = 0; q < nq; q++)
		if ((r = vring_setup(v, vd, q, why, len)) < 0)
			goto undo;
	kicks_to_worker(vd, nq, false);
	for (q = 0; q < nq; q++) {
		struct vhost_vring_file be = { .index = q, .fd = tap };

		if ((r = vh_ioctl(v, VHOST_NET_SET_BACKEND, &be)) < 0) {
			snprintf(why, len, "VHOST_NET_SET_BACKEND on queue %u: %s", q, strerror(-r));
			kicks_to_worker(vd, nq, true);
			goto undo;
		}
	}
	v->active = true;
	v->starts++;
	/* buffers posted before DRIVER_OK were kicked to nobody: vhost looks at each ring once */
	for (q = 0; q < nq; q++)
		eventfd_write(vd->q[q].notify_fd, 1);
	return 0;
undo:
	vrings_release(v, vd, nq);
	return r;
}

int vhost_net_set_call(struct vhost_net *v, struct virtio_dev *vd, unsigned int q)
{
	struct vhost_vring_file call = { .index = q, .fd = msix_vector_eventfd(&vd->msix, vd->q[q].vector) };

	if (!v->active || q >= vd->ops->nr_queues)
		return 0;
	return vh_ioctl(v, VHOST_SET_VRING_CALL, &call);
}

void vhost_net_stop(struct vhost_net *v, struct virtio_dev *vd)
{
	if (!v->active)
		return;
	vrings_release(v, vd, vd->ops->nr_queues);
	kicks_to_worker(vd, vd->ops->nr_queues, true);
	v->active = false;
}
