// SPDX-License-Identifier: MIT
/*
 * The fuzzers' guest: each op byte picks an access, its operands follow (little endian):
 *   CFG_RD  reg:u16 size           CFG_WR  reg:u16 size value:u32       (ECAM, the device's slot)
 *   BAR_RD  bar:u8 off:u16 size    BAR_WR  bar:u8 off:u16 size value:u64 (where the BAR is now)
 *   RAM_WR  off:u32 n:u8 bytes     KICK    q:u8 (a 16-bit write to the queue's notify address)
 *   POLL    (worker rounds until nothing is ready)   INPUT n:u8 bytes (the device's input path)
 *   RAW_RD  addr:u32 size          RAW_WR  addr:u32 size value:u64 (anywhere below 4 GiB)
 *   RING    q:u8 n:u8, n x (off:u16 len:u16 flags:u8)   a chain on the queue the guest set up
 * size is 1 << (byte & 3). The op byte is taken modulo the number of ops the target allows.
 */
#include <linux/pci_regs.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "tests/fuzz/fuzz.h"
#include "virtio/virtio.h"
#include "core/bus.h"
#include "core/mem.h"

void fz_vm_init(struct fz_guest *g, struct vm *vm, struct fake_kvm *fk, struct pci_host *h)
{
	/* RAM of its own, not fake_vm_init's: a fresh allocation per input costs page faults that
	 * would dominate a run */
	static uint8_t ram[FZ_RAM_SIZE] __attribute__((aligned(4096)));

	memset(g, 0, sizeof(*g));
	g->vm = vm;
	g->fk = fk;
	g->host = h;
	if (fake_vm_init(vm, fk, 0, 96) < 0 || pci_host_init(h, vm, &fd_layout) < 0) {
		fprintf(stderr, "fuzz: cannot set up the fake VM\n");
		abort();
	}
	memset(ram, 0, sizeof(ram));
	vm->mem[0] = (struct mem_region){ FAKE_RAM_BASE, sizeof(ram), ram, 0 };
	vm->nr_mem = 1;
	vm->memslot_used[0] = 1;
}

void fz_virtio_free(struct virtio_dev *vd)
{
	close(vd->epfd);
	close(vd->stopfd);
	for (unsigned int q = 0; q < vd->ops->nr_queues; q++)
		close(vd->q[q].notify_fd);
	for (unsigned int i = 0; i < vd->msix.nr; i++)
		close(vd->msix.vec[i].route.fd);
	free(vd->priv);
}

static uint32_t fz_size(struct fz *z)
{
	return 1u << (fz_u8(z) & 3);
}

static uint64_t bar_addr(struct fz_guest *g, unsigned int bar)
{
	uint32_t lo, hi = 0;

	memcpy(&lo, g->dev->cfg + PCI_BASE_ADDRESS_0 + 4 * bar, 4);
	if ((lo & PCI_BASE_ADDRESS_MEM_TYPE_64) && bar < 5)
		memcpy(&hi, g->dev->cfg + PCI_BASE_ADDRESS_0 + 4 * (bar + 1), 4);
	return ((uint64_t)hi << 32) | (lo & PCI_BASE_ADDRESS_MEM_MASK);
}

/* A chain of segments on queue q as the guest's driver would add it: descriptors from the
 * guest's own count of them, the head in the available ring, the index bumped. */
static void ring_add(struct fz_guest *g, struct fz *z)
{
	unsigned int q = fz_u8(z) % VIRTIO_MAX_QUEUES, n = fz_u8(z) % 8 + 1;
	struct virtio_dev *vd = g->vd;
	uint16_t size = vd->q[q].size;

	/* the queue registers as the guest wrote them: the device checks them only on enable */
	if (!size || size > VIRTQ_MAX_SIZE || (size & (size - 1)) || vd->q[q].desc % 16 ||
	    vd->q[q].avail % 2) {
		fz_bytes(z, 5 * n, &(size_t){ 0 });
		return;
	}
	struct vring_desc *desc = vm_gpa_to_hva(g->vm, vd->q[q].desc, 16ULL * size);
	struct vring_avail *avail = vm_gpa_to_hva(g->vm, vd->q[q].avail, 6 + 2ULL * size);
	uint16_t idx = avail ? avail->idx : 0, head = (uint16_t)(idx * 4) % size;

	for (unsigned int i = 0; i < n; i++) {
		uint32_t off = fz_u16(z) * 4u, len = fz_u16(z);
		uint8_t fl = fz_u8(z);
		uint16_t d = (head + i) % size;

		if (!desc)
			continue;
		desc[d].addr = FAKE_RAM_BASE + off;
		desc[d].len = len;
		desc[d].flags = (fl & 1 ? VRING_DESC_F_WRITE : 0) | (i + 1 < n ? VRING_DESC_F_NEXT : 0);
		desc[d].next = (d + 1) % size;
	}
	if (!avail || !desc)
		return;
	avail->ring[idx % size] = head;
	__atomic_store_n(&avail->idx, (uint16_t)(idx + 1), __ATOMIC_RELEASE);
}

static void guest_access(struct fz_guest *g, uint64_t addr, uint32_t size, uint64_t v, bool write)
{
	uint8_t buf[8];

	memcpy(buf, &v, sizeof(buf));
	if (g->kvm_access)
		fake_kvm_guest_access(g->fk, g->vm, addr, buf, size, write);
	else
		bus_access(&g->vm->mmio, addr, buf, size, write);
}

void fz_guest_run(struct fz_guest *g, struct fz *z)
{
	uint64_t ecam = FD_ECAM + ((uint64_t)(g->dev->devfn >> 3) << 15);
	uint8_t allowed[FZ_NR_OPS];
	unsigned int nr = 0;

	/* a target's ops only, so that no input byte is wasted on an op it ignores */
	for (unsigned int i = 0; i < FZ_NR_OPS; i++)
		if (!g->ops || (g->ops & (1u << i)))
			allowed[nr++] = i;
	while (z->n) {
		uint8_t op = allowed[fz_u8(z) % nr];
		uint32_t reg, size, bar, off;
		uint64_t v;
		size_t n;
		const uint8_t *p;

		switch (op) {
		case FZ_CFG_RD:
		case FZ_CFG_WR:
			reg = fz_u16(z) & 0xfff;
			size = fz_size(z);
			v = op == FZ_CFG_WR ? fz_u32(z) : 0;
			guest_access(g, ecam + reg, size, v, op == FZ_CFG_WR);
			break;
		case FZ_BAR_RD:
		case FZ_BAR_WR:
			bar = fz_u8(z) % 6;
			off = fz_u16(z);
			size = fz_size(z);
			v = op == FZ_BAR_WR ? fz_u64(z) : 0;
			if (bar_addr(g, bar))
				guest_access(g, bar_addr(g, bar) + off, size, v, op == FZ_BAR_WR);
			break;
		case FZ_RAW_RD:
		case FZ_RAW_WR:
			v = fz_u32(z);
			size = fz_size(z);
			guest_access(g, v, size, op == FZ_RAW_WR ? fz_u64(z) : 0, op == FZ_RAW_WR);
			break;
		case FZ_RAM_WR:
			off = fz_u32(z) % FZ_RAM_SIZE;
			p = fz_bytes(z, fz_u8(z), &n);
			if (n > FZ_RAM_SIZE - off)
				n = FZ_RAM_SIZE - off;
			memcpy(vm_gpa_to_hva(g->vm, FAKE_RAM_BASE + off, n ? n : 1), p, n);
			break;
		case FZ_KICK:
			v = fz_u8(z) % VIRTIO_MAX_QUEUES;
			if (g->vd && bar_addr(g, 0))
				guest_access(g, bar_addr(g, 0) + 0x3000 + 4 * v, 2, v, true);
			break;
		case FZ_POLL:
			for (int i = 0; g->vd && i < 64 && virtio_poll(g->vd, 0) > 0; i++)
				;
			break;
		case FZ_INPUT:
			p = fz_bytes(z, fz_u8(z), &n);
			if (g->input)
				g->input(g, p, n);
			break;
		case FZ_RING:
			if (g->vd)
				ring_add(g, z);
			break;
		}
	}
}

void fz_guest_keep(struct fz_guest *g)
{
	memcpy(g->bars, g->dev->cfg + PCI_BASE_ADDRESS_0, sizeof(g->bars));
}

static void cfg_wr(struct fz_guest *g, uint32_t reg, uint32_t v, uint32_t len)
{
	guest_access(g, FD_ECAM + ((uint64_t)(g->dev->devfn >> 3) << 15) + reg, len, v, true);
}

void fz_guest_reboot(struct fz_guest *g)
{
	struct virtio_dev *vd = g->vd;
	uint32_t bar[6];

	memcpy(bar, g->bars, sizeof(bar));
	for (int i = 0; i < 64 && virtio_poll(vd, 0) > 0; i++)
		;
	cfg_wr(g, PCI_COMMAND, 0, 2);
	for (int i = 0; i < 6; i++)
		cfg_wr(g, PCI_BASE_ADDRESS_0 + 4 * i, bar[i], 4);
	cfg_wr(g, vd->msix.cap + PCI_MSIX_FLAGS, 0, 2);
	cfg_wr(g, PCI_COMMAND, PCI_COMMAND_MEMORY, 2);
	guest_access(g, (bar[0] & PCI_BASE_ADDRESS_MEM_MASK) +
		     offsetof(struct virtio_pci_common_cfg, device_status), 1, 0, true);
	/* a FLUSH (IOCB_CMD_FDSYNC) completes from a kernel worker even on tmpfs: wait for it */
	for (int i = 0; i < 500 && (vd->resetting || virtio_poll(vd, 0) > 0); i++)
		virtio_poll(vd, 10);
	if (vd->status || vd->resetting) {
		fprintf(stderr, "fuzz: the device's reset did not finish in 5 s\n");
		abort();
	}
	cfg_wr(g, PCI_COMMAND, 0, 2);
	memset(vm_gpa_to_hva(g->vm, FAKE_RAM_BASE, FZ_RAM_SIZE), 0, FZ_RAM_SIZE);
}

uint8_t *fz_loader_ram(size_t size)
{
	static uint8_t *ram;
	static size_t mapped;

	if (!ram) {
		ram = mmap(NULL, size, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
		if (ram == MAP_FAILED)
			abort();
		mapped = size;
	}
	if (size != mapped)
		abort();
	return ram;
}
