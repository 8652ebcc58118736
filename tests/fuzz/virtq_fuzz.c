// SPDX-License-Identifier: MIT
/* Split virtqueues alone: the guest's RAM (descriptor table, available and used rings) is the
 * input, with the ring's size and addresses in its first bytes. The device side pops every chain,
 * checks each segment lies in guest RAM, and pushes, unpops and asks for interrupts in between,
 * with and without VIRTIO_RING_F_EVENT_IDX (hostile used_event, avail indices across the wrap) and
 * VIRTIO_RING_F_INDIRECT_DESC (tables anywhere, of any length, nested, looping). */
#include <stdlib.h>
#include <string.h>

#include "tests/fuzz/fuzz.h"
#include "virtio/virtio.h"
#include "core/mem.h"

#define RAM (64 << 10)

static struct vm vm;
static struct fake_kvm fk;

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct fz z = { data, size };
	struct virtq vq;
	struct virtq_elem e;
	size_t n;

	static uint8_t mem[RAM] __attribute__((aligned(4096)));

	if (fake_vm_init(&vm, &fk, 0, 0) < 0)
		abort();
	memset(mem, 0, sizeof(mem));
	vm.mem[0] = (struct mem_region){ FAKE_RAM_BASE, sizeof(mem), mem, 0 };
	vm.nr_mem = 1;
	uint16_t qsize = fz_u16(&z);
	uint64_t desc = FAKE_RAM_BASE + (fz_u16(&z) & ~15u), avail = FAKE_RAM_BASE + (fz_u16(&z) & ~1u),
		 used = FAKE_RAM_BASE + (fz_u16(&z) & ~3u);
	uint8_t mode = fz_u8(&z);
	const uint8_t *ram = fz_bytes(&z, RAM, &n);

	memcpy(vm.mem[0].hva, ram, n);
	if (virtq_setup(&vq, &vm, qsize, desc, avail, used) == 0) {
		/* the guest's used_event and the device's avail_event are in the fuzzed RAM: any index */
		vq.event_idx = mode & 8;
		vq.indirect = mode & 16;
		vq.used_idx = vq.signalled_used = (uint16_t)(mode * 0x1111); /* starts near the wrap too */
		for (int i = 0; i < 2 * VIRTQ_MAX_SIZE && virtq_pop(&vq, &e) > 0; i++) {
			uint8_t sink = 0;

			if (e.n_out + e.n_in > VIRTQ_MAX_SEGS)
				abort();
			for (unsigned int s = 0; s < e.n_out + e.n_in; s++) {
				const uint8_t *b = e.iov[s].iov_base;

				if (e.iov[s].iov_len && (b < vm.mem[0].hva ||
							 b + e.iov[s].iov_len > vm.mem[0].hva + RAM))
					abort(); /* a segment outside guest RAM */
				if (e.iov[s].iov_len)
					sink ^= b[0] ^ b[e.iov[s].iov_len - 1];
			}
			if (e.n_in) {
				uint8_t buf[64];

				memset(buf, sink, sizeof(buf));
				buf_to_iov(e.iov + e.n_out, e.n_in, mode, buf, sizeof(buf));
			}
			iov_to_buf(e.iov, e.n_out, mode, &(uint8_t[32]){ 0 }, 32);
			if ((mode & 3) == 1 && i == 0) {
				virtq_unpop(&vq);
				continue;
			}
			virtq_push(&vq, e.head, (uint32_t)e.in_len);
			if (mode & 4)
				virtq_needs_interrupt(&vq);
		}
		virtq_needs_interrupt(&vq);
	}
	return 0;
}
