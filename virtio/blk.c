// SPDX-License-Identifier: MIT
/*
 * virtio-blk on a raw image file with libaio: requests become preadv/pwritev iocbs (many in flight),
 * completions arrive on an eventfd the worker waits on. FLUSH waits for everything in flight and
 * then fdatasync()s; a read-only disk refuses writes. Sector ranges and lengths written by the
 * guest are checked against the image before any I/O.
 */
#include <errno.h>
#include <fcntl.h>
#include <libaio.h>
#include <linux/virtio_blk.h>
#include <linux/virtio_ids.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <sys/stat.h>
#include <unistd.h>

#include "virtio/virtio.h"

#define BLK_QSIZE 128
#define BLK_SEG_MAX (VIRTQ_MAX_SEGS - 2) /* header and status take a descriptor each */
#define SECTOR 512

struct blk_req {
	struct iocb cb;
	uint16_t head;
	uint8_t *status;
	uint32_t in_len; /* bytes the device writes into guest buffers, status included */
	bool busy;
	struct iovec iov[VIRTQ_MAX_SEGS];
};

struct vblk {
	struct virtio_dev vd;
	int fd, evfd;
	bool ro;
	uint64_t sectors;
	char id[VIRTIO_BLK_ID_BYTES];
	io_context_t aio;
	unsigned int inflight;
	struct blk_req req[BLK_QSIZE];
	atomic_uint_fast64_t requests;
	struct virtio_ops ops; /* blk_ops, plus VIRTIO_BLK_F_RO for a read-only disk */
};

/* iov view of [skip, skip+len) of a chain's buffers; returns the count, or -1 if it won't fit. */
static int iov_slice(const struct iovec *src, unsigned int n, size_t skip, size_t len,
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

static void blk_complete(struct vblk *b, struct blk_req *r, uint8_t status, uint32_t data_len)
{
	*r->status = status;
	virtq_push(&b->vd.q[0].vq, r->head, data_len + 1);
	r->busy = false;
	atomic_fetch_add(&b->requests, 1);
}

/* Reaps finished iocbs; with wait, blocks until nothing is in flight. */
static void blk_reap(struct vblk *b, bool wait)
{
	struct io_event ev[BLK_QSIZE];
	bool any = false;

	while (b->inflight) {
		struct timespec zero = { 0, 0 };
		int n = io_getevents(b->aio, wait ? 1 : 0, BLK_QSIZE, ev, wait ? NULL : &zero);

		if (n <= 0)
			break;
		for (int i = 0; i < n; i++) {
			struct blk_req *r = ev[i].data;
			long res = (long)ev[i].res;
			bool read = r->cb.aio_lio_opcode == IO_CMD_PREADV;
			size_t want = r->in_len - 1;

			b->inflight--;
			if (res < 0 || (read && (size_t)res != want))
				blk_complete(b, r, VIRTIO_BLK_S_IOERR, 0);
			else
				blk_complete(b, r, VIRTIO_BLK_S_OK, read ? (uint32_t)res : 0);
			any = true;
		}
	}
	if (any)
		virtio_queue_interrupt(&b->vd, 0);
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
		virtq_push(&b->vd.q[0].vq, e->head, 0);
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

		if (write && b->ro) {
			blk_complete(b, r, VIRTIO_BLK_S_IOERR, 0);
			return;
		}
		if (n < 0 || len % SECTOR || h.sector > b->sectors || len / SECTOR > b->sectors - h.sector) {
			blk_complete(b, r, VIRTIO_BLK_S_IOERR, 0);
			return;
		}
		if (len == 0) {
			blk_complete(b, r, VIRTIO_BLK_S_OK, 0);
			return;
		}
		if (write)
			io_prep_pwritev(&r->cb, b->fd, r->iov, n, h.sector * SECTOR);
		else
			io_prep_preadv(&r->cb, b->fd, r->iov, n, h.sector * SECTOR);
		io_set_eventfd(&r->cb, b->evfd);
		r->cb.data = r;
		struct iocb *cbs[1] = { &r->cb };

		if (io_submit(b->aio, 1, cbs) != 1) {
			blk_complete(b, r, VIRTIO_BLK_S_IOERR, 0);
			return;
		}
		b->inflight++;
		return;
	}
	case VIRTIO_BLK_T_FLUSH:
		blk_reap(b, true); /* a flush covers every write completed before it */
		blk_complete(b, r, (b->ro || fdatasync(b->fd) == 0) ? VIRTIO_BLK_S_OK : VIRTIO_BLK_S_IOERR, 0);
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

static void blk_notify(struct virtio_dev *vd, unsigned int q)
{
	struct vblk *b = vd->priv;
	struct virtq_elem e;

	(void)q;
	for (;;) {
		struct blk_req *r = blk_req_get(b);

		if (!r) { /* every slot in flight: reap, the rest stays in the ring */
			unsigned int before = b->inflight;

			blk_reap(b, true);
			if (b->inflight == before)
				break; /* nothing completed (an aio error): try again on the next kick */
			continue;
		}
		if (virtq_pop(&vd->q[0].vq, &e) <= 0)
			break;
		r->busy = true;
		r->head = e.head;
		blk_handle(b, r, &e);
	}
	virtio_queue_interrupt(vd, 0);
}

static void blk_fd_ready(struct virtio_dev *vd, int fd)
{
	struct vblk *b = vd->priv;
	eventfd_t n;

	if (fd == b->evfd) {
		eventfd_read(fd, &n);
		blk_reap(b, false);
	}
}

static void blk_reset(struct virtio_dev *vd)
{
	struct vblk *b = vd->priv;

	if (b) /* the guest's buffers are going away: nothing may still write into them */
		blk_reap(b, true);
}

static void blk_cfg(struct virtio_dev *vd, uint32_t off, uint8_t *data, uint32_t len, bool write)
{
	struct vblk *b = vd->priv;
	struct virtio_blk_config c = { .capacity = b->sectors, .seg_max = BLK_SEG_MAX };

	if (!write)
		memcpy(data, (uint8_t *)&c + off, len);
}

static void blk_close(struct virtio_dev *vd)
{
	struct vblk *b = vd->priv;

	blk_reap(b, true);
	if (!b->ro)
		fdatasync(b->fd); /* nothing the guest wrote is lost when vmm exits */
	io_destroy(b->aio);
	close(b->fd);
	close(b->evfd);
}

static void blk_summary(struct virtio_dev *vd, FILE *f)
{
	struct vblk *b = vd->priv;

	fprintf(f, "vmm: virtio-blk (00:%02x.0): %llu requests\n", vd->pci.devfn >> 3,
		(unsigned long long)atomic_load(&b->requests));
}

static const struct virtio_ops blk_ops = {
	.name = "virtio-blk",
	.device_id = VIRTIO_ID_BLOCK,
	.class_rev = 0x018000 << 8, /* mass storage, other */
	.nr_queues = 1,
	.queue_size = BLK_QSIZE,
	.features = (1ULL << VIRTIO_BLK_F_SEG_MAX) | (1ULL << VIRTIO_BLK_F_FLUSH),
	.cfg_size = sizeof(struct virtio_blk_config),
	.cfg_access = blk_cfg,
	.queue_notify = blk_notify,
	.fd_ready = blk_fd_ready,
	.reset = blk_reset,
	.close = blk_close,
	.summary = blk_summary,
};

struct virtio_dev *virtio_blk_create(struct vm *vm, struct pci_host *h, const char *path, bool ro)
{
	struct vblk *b = calloc(1, sizeof(*b));
	struct stat st;

	if (!b)
		return NULL;
	b->fd = open(path, (ro ? O_RDONLY : O_RDWR) | O_CLOEXEC);
	if (b->fd < 0 || fstat(b->fd, &st) < 0) {
		pr_err("--disk %s: %s%s", path, strerror(errno),
		       errno == EACCES || errno == EROFS ? " (add ,ro for a read-only disk)" : "");
		goto fail;
	}
	if (!S_ISREG(st.st_mode) || st.st_size == 0 || st.st_size % SECTOR) {
		pr_err("--disk %s: a raw image must be a non-empty regular file whose size is a multiple "
		       "of 512 bytes (it is %lld bytes); resize it with truncate -s", path,
		       (long long)st.st_size);
		goto fail;
	}
	b->ro = ro;
	b->sectors = st.st_size / SECTOR;
	snprintf(b->id, sizeof(b->id), "vmm-%llx-%llx", (unsigned long long)st.st_dev,
		 (unsigned long long)st.st_ino);
	b->evfd = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
	if (b->evfd < 0 || io_setup(BLK_QSIZE, &b->aio) < 0) {
		pr_err("--disk %s: cannot set up libaio (io_setup): raise /proc/sys/fs/aio-max-nr", path);
		goto fail;
	}
	b->ops = blk_ops;
	if (ro)
		b->ops.features |= 1ULL << VIRTIO_BLK_F_RO;
	if (virtio_pci_init(&b->vd, vm, h, &b->ops, b) < 0 ||
	    virtio_watch_fd(&b->vd, b->evfd) < 0) {
		pr_err("--disk %s: cannot create the virtio-blk device", path);
		goto fail;
	}
	return &b->vd;
fail:
	if (b->fd >= 0)
		close(b->fd);
	free(b);
	return NULL;
}
