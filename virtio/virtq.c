// SPDX-License-Identifier: MIT
/*
 * Split virtqueues. Everything in the rings is written by the guest and treated as hostile: ring
 * areas must lie inside guest RAM, indices and chain links are bounded by the queue size (in an
 * indirect table, by the table's length), a chain can visit at most that many descriptors (no
 * loops), every buffer is translated through vm_gpa_to_hva(), and a malformed ring marks the queue
 * broken instead of being trusted. An indirect table is taken only at a chain's head, without
 * NEXT, never nested (virtio 1.x 2.7.5.3.1), and must lie inside guest RAM as a whole.
 */
#include <errno.h>
#include <string.h>

#include "core/hot.h"
#include "virtio/virtio.h"
#include "core/mem.h"
#include "core/vm.h"

VMM_HOT int virtq_setup(struct virtq *vq, struct vm *vm, uint16_t size, uint64_t desc, uint64_t avail,
		uint64_t used)
{
	memset(vq, 0, sizeof(*vq));
	vq->vm = vm;
	if (size == 0 || size > VIRTQ_MAX_SIZE || (size & (size - 1)) || desc % 16 || avail % 2 ||
	    used % 4)
		return -EINVAL;
	vq->desc = vm_gpa_to_hva(vm, desc, 16ULL * size);
	vq->avail = vm_gpa_to_hva(vm, avail, 6 + 2ULL * size);
	vq->used = vm_gpa_to_hva(vm, used, 6 + 8ULL * size);
	if (!vq->desc || !vq->avail || !vq->used)
		return -EFAULT;
	vq->size = size;
	vq->last_avail = 0;
	vq->used_idx = 0;
	vq->ready = true;
	return 0;
}

const char *const virtq_causes[VIRTQ_NR_CAUSES] = {
	[VQ_AVAIL_AHEAD] = "avail index ran more than a ring ahead",
	[VQ_HEAD_RANGE] = "head descriptor index out of range",
	[VQ_CHAIN_LOOP] = "descriptor chain loops",
	[VQ_INDIRECT] = "indirect descriptor without VIRTIO_RING_F_INDIRECT_DESC",
	[VQ_CHAIN_LONG] = "descriptor chain longer than the device's segment limit",
	[VQ_OUTSIDE_RAM] = "buffer outside guest memory",
	[VQ_READ_AFTER_WRITE] = "device-readable buffer after a writable one",
	[VQ_NEXT_RANGE] = "next descriptor index out of range",
	[VQ_INDIRECT_PLACE] = "indirect descriptor not at a chain's head, with NEXT, or inside a table",
	[VQ_INDIRECT_LEN] = "indirect table length not a non-zero multiple of 16 within the limit",
};

/* The transport reports why (once per device and cause) when it marks the device broken. */
static int vq_fail(struct virtq *vq, enum virtq_cause why)
{
	if (!vq->broken)
		vq->why = virtq_causes[why];
	vq->broken = true;
	return -EINVAL;
}

/* Guest memory changes under us: each field is loaded exactly once into a local (the READ_ONCE
 * idea), so no compiler can re-read a value after it was checked. */
static struct vring_desc desc_read(const struct vring_desc *p)
{
	if ((uintptr_t)p % __alignof__(struct vring_desc)) {
		/* an indirect table may sit at any address: copied bytewise, and the barrier keeps
		 * the compiler from reading the guest's copy again in place of ours */
		struct vring_desc d;

		memcpy(&d, p, sizeof(d));
		__asm__ volatile("" ::: "memory");
		return d;
	}
	return (struct vring_desc){
		.addr = __atomic_load_n(&p->addr, __ATOMIC_RELAXED),
		.len = __atomic_load_n(&p->len, __ATOMIC_RELAXED),
		.flags = __atomic_load_n(&p->flags, __ATOMIC_RELAXED),
		.next = __atomic_load_n(&p->next, __ATOMIC_RELAXED),
	};
}

/* The event fields follow the rings (virtio 1.x 2.7.10): virtq_setup mapped room for both. */
static uint16_t *used_event(struct virtq *vq)
{
	return &vq->avail->ring[vq->size];
}

static uint16_t *avail_event(struct virtq *vq)
{
	return (uint16_t *)&vq->used->ring[vq->size];
}

/* Nothing pending at last_avail: with event_idx, asks for a kick when the driver makes that entry
 * available, then looks again, since the driver may have added it before it could see the request
 * (it checks avail_event after publishing its avail index, we check the index after ours). */
static uint16_t avail_rearm(struct virtq *vq)
{
	__atomic_store_n(avail_event(vq), vq->last_avail, __ATOMIC_RELAXED);
	__atomic_thread_fence(__ATOMIC_SEQ_CST);
	return __atomic_load_n(&vq->avail->idx, __ATOMIC_ACQUIRE);
}

VMM_HOT_IDLE int virtq_pop(struct virtq *vq, struct virtq_elem *e)
{
	if (!vq->ready || vq->broken)
		return 0;
	uint16_t avail_idx = __atomic_load_n(&vq->avail->idx, __ATOMIC_ACQUIRE);
	uint16_t pending = avail_idx - vq->last_avail;

	if (pending == 0 && vq->event_idx)
		pending = avail_rearm(vq) - vq->last_avail;
	if (pending == 0)
		return 0;
	if (pending > vq->size)
		return vq_fail(vq, VQ_AVAIL_AHEAD);
	if (vq->in_pass && !vq->pass_left) {
		vq->cut = true; /* the rest waits for the next pass, which the pass's owner arranges */
		return 0;
	}
	uint16_t head = __atomic_load_n(&vq->avail->ring[vq->last_avail % vq->size], __ATOMIC_RELAXED);

	if (head >= vq->size)
		return vq_fail(vq, VQ_HEAD_RANGE);
	e->head = head;
	e->n_out = e->n_in = 0;
	e->out_len = e->in_len = 0;

	const struct vring_desc *table = vq->desc;
	unsigned int entries = vq->size; /* of table: bounds links and the walk */
	/* a flag, not table != vq->desc: a guest may point a table at the ring itself */
	bool indirect = false;
	uint16_t i = head;

	for (unsigned int count = 0;; count++) {
		if (count >= entries)
			return vq_fail(vq, VQ_CHAIN_LOOP);
		struct vring_desc d = desc_read(&table[i]);

		if (d.flags & VRING_DESC_F_INDIRECT) {
			if (!vq->indirect)
				return vq_fail(vq, VQ_INDIRECT);
			if (indirect || count || (d.flags & VRING_DESC_F_NEXT))
				return vq_fail(vq, VQ_INDIRECT_PLACE);
			if (d.len == 0 || d.len % sizeof(struct vring_desc) ||
			    d.len > VIRTQ_MAX_INDIRECT * sizeof(struct vring_desc))
				return vq_fail(vq, VQ_INDIRECT_LEN);
			table = vm_gpa_to_hva(vq->vm, d.addr, d.len);
			if (!table)
				return vq_fail(vq, VQ_OUTSIDE_RAM);
			entries = d.len / sizeof(struct vring_desc);
			indirect = true;
			i = 0;
			count = -1U; /* the table's walk starts again at its entry 0 */
			continue;
		}
		if (e->n_out + e->n_in >= VIRTQ_MAX_SEGS)
			return vq_fail(vq, VQ_CHAIN_LONG);
		if (d.len) {
			void *p = vm_gpa_to_hva(vq->vm, d.addr, d.len);

			if (!p)
				return vq_fail(vq, VQ_OUTSIDE_RAM);
			bool in = d.flags & VRING_DESC_F_WRITE;

			if (!in && e->n_in)
				return vq_fail(vq, VQ_READ_AFTER_WRITE);
			e->iov[e->n_out + e->n_in] = (struct iovec){ p, d.len };
			if (in) {
				e->n_in++;
				e->in_len += d.len;
			} else {
				e->n_out++;
				e->out_len += d.len;
			}
		}
		if (!(d.flags & VRING_DESC_F_NEXT))
			break;
		if (d.next >= entries)
			return vq_fail(vq, VQ_NEXT_RANGE);
		i = d.next;
	}
	vq->last_avail++;
	if (vq->in_pass)
		vq->pass_left--;
	return 1;
}

VMM_HOT_IDLE void virtq_pass_begin(struct virtq *vq)
{
	vq->in_pass = true;
	vq->cut = false;
	vq->pass_left = vq->size;
}

VMM_HOT_IDLE bool virtq_pass_end(struct virtq *vq)
{
	bool cut = vq->cut;

	vq->in_pass = vq->cut = false;
	return cut;
}

VMM_HOT_IDLE void virtq_fill(struct virtq *vq, unsigned int i, uint16_t head, uint32_t len)
{
	struct vring_used_elem *u = &vq->used->ring[(uint16_t)(vq->used_idx + i) % vq->size];

	u->id = head;
	u->len = len;
}

VMM_HOT_IDLE void virtq_flush(struct virtq *vq, unsigned int count)
{
	vq->used_idx += count;
	__atomic_store_n(&vq->used->idx, vq->used_idx, __ATOMIC_RELEASE);
}

VMM_HOT_IDLE void virtq_push(struct virtq *vq, uint16_t head, uint32_t len)
{
	virtq_fill(vq, 0, head, len);
	virtq_flush(vq, 1);
}

VMM_HOT void virtq_unpop(struct virtq *vq)
{
	vq->last_avail--;
}

VMM_HOT_IDLE bool virtq_needs_interrupt(struct virtq *vq)
{
	uint16_t old = vq->signalled_used, new = vq->used_idx;

	if (!vq->ready || new == old)
		return false; /* nothing completed since the last interrupt: it would be spurious */
	vq->signalled_used = new;
	/* order our used->idx store before reading the driver's suppression flag or used_event */
	__atomic_thread_fence(__ATOMIC_SEQ_CST);
	if (!vq->event_idx)
		return !(__atomic_load_n(&vq->avail->flags, __ATOMIC_ACQUIRE) & VRING_AVAIL_F_NO_INTERRUPT);
	/* The driver wants one once the used index passes used_event: used_event in [old, new)
	 * modulo 2^16. Any value is harmless: nonsense only gets too many interrupts or too few. */
	return vring_need_event(__atomic_load_n(used_event(vq), __ATOMIC_RELAXED), new, old);
}

/* Copies between a buffer and [skip, skip+len) of an iovec; to_iov picks the direction. */
VMM_HOT_IDLE static size_t iov_copy(const struct iovec *iov, unsigned int n, size_t skip, uint8_t *buf, size_t len,
		       bool to_iov)
{
	size_t done = 0;

	for (unsigned int i = 0; i < n && done < len; i++) {
		if (skip >= iov[i].iov_len) {
			skip -= iov[i].iov_len;
			continue;
		}
		size_t c = iov[i].iov_len - skip;
		uint8_t *p = (uint8_t *)iov[i].iov_base + skip;

		if (c > len - done)
			c = len - done;
		memcpy(to_iov ? p : buf + done, to_iov ? buf + done : p, c);
		done += c;
		skip = 0;
	}
	return done;
}

VMM_HOT_IDLE size_t iov_to_buf(const struct iovec *iov, unsigned int n, size_t skip, void *buf, size_t len)
{
	return iov_copy(iov, n, skip, buf, len, false);
}

VMM_HOT size_t buf_to_iov(const struct iovec *iov, unsigned int n, size_t skip, const void *buf, size_t len)
{
	return iov_copy(iov, n, skip, (uint8_t *)buf, len, true);
}
