// SPDX-License-Identifier: MIT
/*
 * virtio-blk on a raw image file or a block device with libaio. Requests become preadv/pwritev
 * iocbs submitted in one batch per kick, so many are really in flight; the image is opened with
 * O_DIRECT where the file system allows it (otherwise libaio completes inside io_submit). FLUSH is
 * an asynchronous IOCB_CMD_FDSYNC, so no vmm thread waits for the disk under the device lock.
 * Completions arrive on an eventfd the worker waits on. A device reset with I/O in flight stays
 * pending (device_status reads non-zero, which the driver polls) until the I/O has finished; those
 * completions are dropped. Sector ranges and lengths written by the guest are checked before any
 * I/O, and a transfer shorter than asked is an I/O error.
 */
#include <errno.h>
#include <fcntl.h>
#include <libaio.h>
#include <linux/fs.h>
#include <linux/virtio_blk.h>
#include <linux/virtio_ids.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <sys/ioctl.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include "core/hot.h"
#include "virtio/virtio.h"
#include "core/host_mem.h"
#include "core/log.h"
#include "core/pci.h"
#include "core/vm.h"

#define BLK_QSIZE 128 /* request slots: in flight at once, over all queues */
/* Each queue's ring, and seg_max as QEMU sizes it (the ring less the header and status): a driver
 * without indirect descriptors can still place the largest request in an empty ring. */
#define BLK_RING VIRTQ_MAX_SIZE
#define BLK_SEG_MAX (BLK_RING - 2)
_Static_assert(BLK_SEG_MAX + 2 <= VIRTQ_MAX_SEGS, "a request's buffers fit a virtq_elem");
#define SECTOR 512

struct blk_req {
	struct iocb cb;
	uint16_t head, q; /* its chain's head, on queue q */
	uint8_t *status;
	uint32_t in_len; /* bytes the device writes into guest buffers, status included */
	size_t want;	 /* bytes the transfer must move */
	bool busy, direct;
	struct iovec iov[VIRTQ_MAX_SEGS];
};

struct vblk {
	struct virtio_dev vd;
	int fd;	       /* O_DIRECT when direct, else the same as bfd */
	int bfd;       /* buffered: for transfers O_DIRECT cannot take (unaligned guest buffers) */
	int evfd;
	bool ro, direct, resetting;
	uint64_t sectors;
	unsigned int align; /* O_DIRECT alignment of buffer addresses and lengths */
	char id[VIRTIO_BLK_ID_BYTES];
	io_context_t aio;
	unsigned int inflight;
	/* the queues share the slots (and the aio context): memory stays that of one queue, and
	 * BLK_QSIZE requests in flight keep any disk busy */
	struct blk_req req[BLK_QSIZE];
	struct iocb *batch[BLK_QSIZE];
	unsigned int nbatch;
	atomic_uint_fast64_t requests, submits, inflight_sum, inflight_max, dropped, ro_refused;
	atomic_uint_fast64_t reaps; /* io_getevents calls that returned completions */
	struct virtio_ops ops; /* blk_ops, plus VIRTIO_BLK_F_RO for a read-only disk */
};

/* iov view of [skip, skip+len) of a chain's buffers; returns the count, or -1 if it won't fit. */
VMM_HOT static int iov_slice(const struct iovec *src, unsigned int n, size_t skip, size_t len,
		     struct iovec *dst, unsigned int max)
{
	unsigned int k = 0;

	for (unsigned int i = 0; i < n && len; i++) {
		if (skip >= src[i].iov_len) {
			skip -= src[i].iov_len;
			continue;
		}
		size_t c = src[i].iov_len - skip;

		if (c > len)
			c = len;
		if (k == max)
			return -1;
		dst[k++] = (struct iovec){ (uint8_t *)src[i].iov_base + skip, c };
		len -= c;
		skip = 0;
	}
	return len ? -1 : (int)k;
}

static bool iov_aligned(const struct iovec *iov, int n, unsigned int align)
{
	for (int i = 0; i < n; i++)
		if (((uintptr_t)iov[i].iov_base | iov[i].iov_len) & (align - 1))
			return false;
	return true;
}

static void blk_complete(struct vblk *b, struct blk_req *r, uint8_t status, uint32_t data_len)
{
	r->busy = false;
	if (b->resetting) { /* the rings are gone: the driver forgot this request */
		atomic_fetch_add(&b->dropped, 1);
		return;
	}
	*r->status = status;
	virtq_push(&b->vd.q[r->q].vq, r->head, data_len + 1);
	atomic_fetch_add(&b->requests, 1);
}

VMM_HOT static void blk_submit(struct vblk *b)
{
	unsigned int done = 0;

	while (done < b->nbatch) {
		int n = io_submit(b->aio, b->nbatch - done, b->batch + done);

		if (n <= 0) { /* the first iocb was refused: fail it and go on with the rest */
			struct blk_req *r = b->batch[done]->data;

			blk_complete(b, r, VIRTIO_BLK_S_IOERR, 0);
			done++;
			continue;
		}
		b->inflight += n;
		done += n;
	}
	if (b->nbatch) {
		atomic_fetch_add(&b->submits, 1);
		atomic_fetch_add(&b->inflight_sum, b->inflight);
		if (b->inflight > atomic_load(&b->inflight_max))
			atomic_store(&b->inflight_max, b->inflight);
	}
	b->nbatch = 0;
}

static void blk_queue_iocb(struct vblk *b, struct blk_req *r)
{
	io_set_eventfd(&r->cb, b->evfd);
	r->cb.data = r;
	b->batch[b->nbatch++] = &r->cb;
}

/* Reaps every finished iocb without waiting: one io_getevents takes them all (at most
 * BLK_QSIZE are in flight), a second only when the first came back full. */
VMM_HOT static void blk_reap(struct vblk *b)
{
	struct io_event ev[BLK_QSIZE];
	int n = BLK_QSIZE;

	while (b->inflight && n == BLK_QSIZE) {
		struct timespec zero = { 0, 0 };

		n = io_getevents(b->aio, 0, BLK_QSIZE, ev, &zero);
		if (n <= 0)
			break;
		atomic_fetch_add(&b->reaps, 1);
		for (int i = 0; i < n; i++) {
			struct blk_req *r = ev[i].data;
			long res = (long)ev[i].res;
			int op = r->cb.aio_lio_opcode;

			b->inflight--;
			/* O_DIRECT refused this transfer (alignment the probe missed): redo it buffered */
			if (res == -EINVAL && r->direct && op != IO_CMD_FDSYNC && !b->resetting) {
				r->direct = false;
				r->cb.aio_fildes = b->bfd;
				blk_queue_iocb(b, r);
				continue;
			}
			if (res < 0 || (op != IO_CMD_FDSYNC && (size_t)res != r->want))
				blk_complete(b, r, VIRTIO_BLK_S_IOERR, 0);
			else
				blk_complete(b, r, VIRTIO_BLK_S_OK, op == IO_CMD_PREADV ? (uint32_t)res : 0);
		}
	}
	blk_submit(b);
}

static struct blk_req *blk_req_get(struct vblk *b)
{
	for (int i = 0; i < BLK_QSIZE; i++)
		if (!b->req[i].busy)
			return &b->req[i];
	return NULL;
}

static void blk_handle(struct vblk *b, struct blk_req *r, const struct virtq_elem *e)
{
	struct virtio_blk_outhdr h;

	if (e->n_in == 0 || e->iov[e->n_out + e->n_in - 1].iov_len == 0 ||
	    iov_to_buf(e->iov, e->n_out, 0, &h, sizeof(h)) != sizeof(h)) {
		/* no header or no status byte: nothing to answer into, return the buffers unused */
		virtq_push(&b->vd.q[r->q].vq, e->head, 0);
		r->busy = false;
		return;
	}
	const struct iovec *last = &e->iov[e->n_out + e->n_in - 1];

	r->status = (uint8_t *)last->iov_base + last->iov_len - 1;
	r->in_len = e->in_len;
	size_t in_data = e->in_len - 1, out_data = e->out_len - sizeof(h);

	switch (h.type) {
	case VIRTIO_BLK_T_IN:
	case VIRTIO_BLK_T_OUT: {
		bool write = h.type == VIRTIO_BLK_T_OUT;
		size_t len = write ? out_data : in_data;
		int n = write ? iov_slice(e->iov, e->n_out, sizeof(h), len, r->iov, VIRTQ_MAX_SEGS)
			      : iov_slice(e->iov + e->n_out, e->n_in, 0, len, r->iov, VIRTQ_MAX_SEGS);

		if (write && b->ro) { /* the guest ignored VIRTIO_BLK_F_RO: refused before any I/O */
			atomic_fetch_add(&b->ro_refused, 1);
			blk_complete(b, r, VIRTIO_BLK_S_IOERR, 0);
			return;
		}
		if (n < 0 || len % SECTOR || h.sector > b->sectors ||
		    len / SECTOR > b->sectors - h.sector) {
			blk_complete(b, r, VIRTIO_BLK_S_IOERR, 0);
			return;
		}
		if (len == 0) {
			blk_complete(b, r, VIRTIO_BLK_S_OK, 0);
			return;
		}
		r->want = len;
		r->direct = b->direct && iov_aligned(r->iov, n, b->align) && (h.sector * SECTOR) % b->align == 0;
		int fd = r->direct ? b->fd : b->bfd;

		if (write)
			io_prep_pwritev(&r->cb, fd, r->iov, n, h.sector * SECTOR);
		else
			io_prep_preadv(&r->cb, fd, r->iov, n, h.sector * SECTOR);
		blk_queue_iocb(b, r);
		return;
	}
	case VIRTIO_BLK_T_FLUSH:
		if (b->ro) {
			blk_complete(b, r, VIRTIO_BLK_S_OK, 0);
			return;
		}
		/* covers every write completed before it; the disk's cache is flushed by the kernel */
		r->direct = false;
		io_prep_fdsync(&r->cb, b->bfd);
		blk_queue_iocb(b, r);
		return;
	case VIRTIO_BLK_T_GET_ID: {
		size_t n = buf_to_iov(e->iov + e->n_out, e->n_in, 0, b->id,
				      in_data < sizeof(b->id) ? in_data : sizeof(b->id));

		blk_complete(b, r, VIRTIO_BLK_S_OK, n);
		return;
	}
	default:
		blk_complete(b, r, VIRTIO_BLK_S_UNSUPP, 0);
	}
}

/* Takes every request queue q holds (while slots last) and submits them as one batch. */
static void blk_process(struct vblk *b, unsigned int q)
{
	struct virtio_dev *vd = &b->vd;
	struct virtq *vq = &vd->q[q].vq;
	struct virtq_elem e;
	struct blk_req *r;

	if (!virtio_running(vd) || !vq->ready || vq->broken)
		return;
	/* no free slot: the rest stays in the ring until completions free some (blk_fd_ready) */
	while ((r = blk_req_get(b)) && virtq_pop(vq, &e) > 0) {
		r->busy = true;
		r->head = e.head;
		r->q = q;
		blk_handle(b, r, &e);
	}
	blk_submit(b);
	if (vq->broken)
		virtio_fail(vd);
	virtio_queue_interrupt(vd, q); /* only if something was completed */
}

VMM_HOT static void blk_notify(struct virtio_dev *vd, unsigned int q)
{
	blk_process(vd->priv, q); /* the transport checked q < nr_queues */
}

VMM_HOT static void blk_fd_ready(struct virtio_dev *vd, int fd)
{
	struct vblk *b = vd->priv;

	if (fd != b->evfd)
		return; /* edge-triggered (virtio_watch_fd): the count is never read back */
	blk_reap(b);
	if (b->resetting) {
		if (b->inflight == 0) {
			b->resetting = false;
			virtio_reset_done(vd);
		}
		return;
	}
	/* one interrupt for the whole batch, and before vmm spends time submitting what the ring
	 * holds: the guest can already reuse the slots meanwhile */
	for (unsigned int q = 0; q < vd->ops->nr_queues; q++)
		virtio_queue_interrupt(vd, q);
	/* completions freed slots, and a ring that was full may hold more */
	for (unsigned int q = 0; q < vd->ops->nr_queues; q++)
		blk_process(b, q);
}

VMM_HOT static int blk_reset(struct virtio_dev *vd)
{
	struct vblk *b = vd->priv;

	if (!b)
		return 0;
	b->nbatch = 0;
	if (b->inflight == 0)
		return 0;
	/* The guest's buffers may still be written by I/O in flight: finish the reset when it is. */
	b->resetting = true;
	return 1;
}

VMM_HOT static void blk_cfg(struct virtio_dev *vd, uint32_t off, uint8_t *data, uint32_t len, bool write)
{
	struct vblk *b = vd->priv;
	struct virtio_blk_config c = { .capacity = b->sectors, .seg_max = BLK_SEG_MAX,
				       .blk_size = SECTOR, .num_queues = vd->ops->nr_queues };

	if (!write)
		memcpy(data, (uint8_t *)&c + off, len);
}

VMM_HOT static void blk_close(struct virtio_dev *vd)
{
	struct vblk *b = vd->priv;
	struct io_event ev[BLK_QSIZE];

	/* nothing may write into guest memory once vmm tears it down */
	while (b->inflight) {
		int n = io_getevents(b->aio, 1, BLK_QSIZE, ev, NULL);

		if (n <= 0)
			break;
		b->inflight -= (unsigned int)n < b->inflight ? (unsigned int)n : b->inflight;
	}
	if (!b->ro)
		fdatasync(b->bfd); /* nothing the guest wrote is lost when vmm exits */
	io_destroy(b->aio);
	if (b->fd != b->bfd)
		close(b->fd);
	close(b->bfd);
	close(b->evfd);
}

VMM_HOT static void blk_summary(struct virtio_dev *vd, FILE *f)
{
	struct vblk *b = vd->priv;
	unsigned long long subs = atomic_load(&b->submits);

	unsigned long long reaps = atomic_load(&b->reaps);

	fprintf(f, "vmm: virtio-blk (00:%02x.0): %llu requests, %.1f in flight on average at submit "
		"(at most %llu), %s, %.1f completions per reap", vd->pci.devfn >> 3,
		(unsigned long long)atomic_load(&b->requests),
		subs ? (double)atomic_load(&b->inflight_sum) / subs : 0.0,
		(unsigned long long)atomic_load(&b->inflight_max), b->direct ? "O_DIRECT" : "buffered",
		reaps ? (double)atomic_load(&b->requests) / reaps : 0.0);
	if (atomic_load(&b->dropped))
		fprintf(f, ", %llu dropped by resets", (unsigned long long)atomic_load(&b->dropped));
	if (atomic_load(&b->ro_refused))
		fprintf(f, ", %llu writes to the read-only disk refused",
			(unsigned long long)atomic_load(&b->ro_refused));
	fputc('\n', f);
}

static const struct virtio_ops blk_ops = {
	.name = "virtio-blk",
	.device_id = VIRTIO_ID_BLOCK,
	.class_rev = 0x018000 << 8, /* mass storage, other */
	.nr_queues = 1,
	.queue_size = BLK_RING,
	.features = (1ULL << VIRTIO_BLK_F_SEG_MAX) | (1ULL << VIRTIO_BLK_F_FLUSH) |
		    (1ULL << VIRTIO_BLK_F_BLK_SIZE) | (1ULL << VIRTIO_RING_F_EVENT_IDX) |
		    /* a request takes one ring entry, not seg_max + 2: without it a large transfer
		     * filled the 128-entry ring alone and big requests went one at a time */
		    (1ULL << VIRTIO_RING_F_INDIRECT_DESC),
	.cfg_size = sizeof(struct virtio_blk_config),
	.cfg_access = blk_cfg,
	.queue_notify = blk_notify,
	.fd_ready = blk_fd_ready,
	.reset = blk_reset,
	.close = blk_close,
	.summary = blk_summary,
};

/* Opens path as a disk: a regular file or a block device. Fills size, ro and the O_DIRECT fd. */
static int blk_open(struct vblk *b, const char *path, bool ro)
{
	struct stat st;
	int flags = (ro ? O_RDONLY : O_RDWR) | O_CLOEXEC;

	/* what it is first: opening a directory or a tty read-write fails with a less useful error */
	if (stat(path, &st) == 0 && !S_ISREG(st.st_mode) && !S_ISBLK(st.st_mode)) {
		pr_err("--disk %s: a disk is a raw image file or a block device, not a %s", path,
		       S_ISDIR(st.st_mode) ? "directory" : S_ISCHR(st.st_mode) ? "character device"
		       : "special file");
		return -EINVAL;
	}
	b->bfd = open(path, flags);
	if (b->bfd < 0 || fstat(b->bfd, &st) < 0) {
		pr_err("--disk %s: %s%s", path, strerror(errno),
		       errno == EACCES || errno == EROFS ? " (add ,ro for a read-only disk)"
		       : errno == ENOENT ? " (check the path; vmm does not create disk images: "
					   "truncate -s SIZE makes one)" : "");
		return -errno;
	}
	/* as QEMU does: two VMs writing one image corrupt it. Shared for ,ro, so read-only users
	 * share; the lock goes with the last fd of the open file, at exit or kill -9 alike. */
	if (flock(b->bfd, (ro ? LOCK_SH : LOCK_EX) | LOCK_NB) < 0) {
		int e = errno;

		pr_err("--disk %s: %s", path, e == EWOULDBLOCK ?
		       "another process holds a lock on it (another vmm using it?); stop that one, or give "
		       "this VM its own copy" : strerror(e));
		return e == EWOULDBLOCK ? -EBUSY : -e;
	}
	b->align = SECTOR;
	if (S_ISBLK(st.st_mode)) {
		uint64_t bytes = 0;
		int dev_ro = 0, ssz = SECTOR;

		if (ioctl(b->bfd, BLKGETSIZE64, &bytes) < 0 || bytes == 0) {
			pr_err("--disk %s: cannot read the block device's size (BLKGETSIZE64): %s", path,
			       bytes ? strerror(errno) : "it is empty");
			return -EINVAL;
		}
		if (ioctl(b->bfd, BLKROGET, &dev_ro) == 0 && dev_ro && !ro) {
			pr_err("--disk %s: the block device is read-only: add ,ro", path);
			return -EROFS;
		}
		if (ioctl(b->bfd, BLKSSZGET, &ssz) == 0 && ssz > SECTOR && !(ssz & (ssz - 1)))
			b->align = ssz;
		st.st_size = bytes;
	} else if (S_ISCHR(st.st_mode) || S_ISDIR(st.st_mode) || !S_ISREG(st.st_mode)) {
		pr_err("--disk %s: a disk is a raw image file or a block device, not a %s", path,
		       S_ISDIR(st.st_mode) ? "directory" : S_ISCHR(st.st_mode) ? "character device"
		       : "special file");
		return -EINVAL;
	}
	if (st.st_size == 0 || st.st_size % SECTOR) {
		pr_err("--disk %s: a raw image must be non-empty and a multiple of 512 bytes (it is %lld "
		       "bytes); resize it with truncate -s", path, (long long)st.st_size);
		return -EINVAL;
	}
	b->sectors = st.st_size / SECTOR;
	snprintf(b->id, sizeof(b->id), "vmm-%llx-%llx", (unsigned long long)st.st_dev,
		 (unsigned long long)st.st_ino);
	/* O_DIRECT: no copy through the host page cache and real asynchronous I/O. tmpfs and some
	 * other file systems refuse it: those disks stay buffered, which the summary says. */
	b->fd = open(path, flags | O_DIRECT);
	b->direct = b->fd >= 0;
	if (!b->direct) {
		pr_info("--disk %s: O_DIRECT refused (%s): using the page cache; I/O completes inside "
			"io_submit", path, strerror(errno));
		b->fd = b->bfd;
	}
	return 0;
}

struct virtio_dev *virtio_blk_create(struct vm *vm, struct pci_host *h, const char *path, bool ro,
				     unsigned int queues)
{
	struct vblk *b = host_mem_zalloc(sizeof(*b));

	if (!b)
		return NULL;
	b->fd = b->bfd = b->evfd = -1;
	if (blk_open(b, path, ro) < 0)
		goto fail;
	b->ro = ro;
	b->evfd = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
	int r = b->evfd < 0 ? -errno : io_setup(BLK_QSIZE, &b->aio);

	if (r < 0) {
		pr_err("--disk %s: cannot set up libaio (io_setup): %s%s", path, strerror(-r),
		       r == -EAGAIN ? " (raise /proc/sys/fs/aio-max-nr)" : "");
		goto fail;
	}
	b->ops = blk_ops;
	/* a queue per vCPU, as QEMU: the guest's blk-mq submits and completes each request on its
	 * own CPU's queue and vector, with no lock or IPI between CPUs */
	if (queues > 1) {
		b->ops.nr_queues = queues < VIRTIO_MAX_QUEUES ? queues : VIRTIO_MAX_QUEUES;
		b->ops.features |= 1ULL << VIRTIO_BLK_F_MQ;
	}
	if (ro)
		b->ops.features |= 1ULL << VIRTIO_BLK_F_RO;
	if (virtio_pci_init(&b->vd, vm, h, &b->ops, b) < 0 ||
	    virtio_watch_fd(&b->vd, b->evfd) < 0) {
		pr_err("--disk %s: cannot create the virtio-blk device", path);
		goto fail;
	}
	return &b->vd;
fail:
	if (b->fd >= 0 && b->fd != b->bfd)
		close(b->fd);
	if (b->bfd >= 0)
		close(b->bfd);
	if (b->evfd >= 0)
		close(b->evfd);
	host_mem_zfree(b, sizeof(*b));
	return NULL;
}
