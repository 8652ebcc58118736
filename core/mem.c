// SPDX-License-Identifier: MIT
/* Guest RAM: anonymous mappings registered as KVM memslots, and checked guest-address translation. */
#include <errno.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "core/hot.h"
#include "core/log.h"
#include "core/mem.h"
#include "core/vm.h"

/* 2 MiB: a PMD with 4 KiB pages, so THP and stage-2 block mappings can both use it. */
#define MEM_HUGE_ALIGN (2ULL << 20)

/*
 * Guest RAM's host mapping, 2 MiB aligned (over-map by 2 MiB, then trim both ends) so transparent
 * huge pages line up with guest physical 2 MiB blocks and KVM can map them as stage-2 blocks.
 * No MADV_MERGEABLE: KSM scanning adds latency noise and merged pages are a cross-VM side channel.
 */
VMM_HOT int vm_mem_map(uint64_t size, uint8_t **hva)
{
	if (size > SIZE_MAX - MEM_HUGE_ALIGN) {
		pr_err("guest memory: %llu MiB does not fit this host's address space (try a smaller -m)",
		       (unsigned long long)(size >> 20));
		return -ENOMEM;
	}
	size_t len = size + MEM_HUGE_ALIGN;
	uint8_t *p = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE,
			  -1, 0);

	if (p == MAP_FAILED) {
		int err = errno;

		pr_err("guest memory: cannot map %llu MiB: %s (try a smaller -m)",
		       (unsigned long long)(size >> 20), strerror(err));
		return -err;
	}
	size_t head = -(uintptr_t)p & (MEM_HUGE_ALIGN - 1);

	if (head)
		munmap(p, head);
	if (len - head - size)
		munmap(p + head + size, len - head - size);
	/* Only advice: a kernel without THP refuses it (EINVAL) and runs the guest on 4 KiB pages. */
	madvise(p + head, size, MADV_HUGEPAGE);
	*hva = p + head;
	return 0;
}

/* Below this a thread costs more than it saves. */
#define MEM_COPY_SPLIT (8ULL << 20)

/* One part of a fill: from src, or (src NULL) from the file fd at off. */
struct copy_part {
	uint8_t *dst;
	const uint8_t *src;
	int fd;
	uint64_t off;
	size_t len;
	int err;
};

static int read_full(int fd, uint8_t *dst, uint64_t off, size_t len)
{
	while (len) {
		ssize_t n = pread(fd, dst, len < (1U << 30) ? len : (1U << 30), (off_t)off);

		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0)
			return -errno;
		if (n == 0) /* the file ended early: it shrank since vmm mapped it */
			return -ENODATA;
		dst += n, off += (uint64_t)n, len -= (size_t)n;
	}
	return 0;
}

static void *copy_part(void *arg)
{
	struct copy_part *p = arg;

	if (p->src)
		memcpy(p->dst, p->src, p->len);
	else
		p->err = read_full(p->fd, p->dst, p->off, p->len);
	return NULL;
}

/* Fills [dst, dst + len) in two parts on two CPUs from 8 MiB on, split where dst crosses a huge
 * page's boundary near the middle, so no 2 MiB page is faulted by both. */
static int mem_fill(uint8_t *dst, const uint8_t *src, int fd, uint64_t off, size_t len)
{
	size_t head = len / 2 + (-(uintptr_t)(dst + len / 2) & (MEM_HUGE_ALIGN - 1));
	struct copy_part tail = { dst + head, src ? src + head : NULL, fd, off + head, len - head, 0 };
	/* the thread's stack is ours and unmapped after the join: libc would keep its own cached,
	 * resident beyond guest RAM for the VM's life */
	size_t stack_len = 64 << 10;
	void *stack = len >= MEM_COPY_SPLIT && head < len
			      ? mmap(NULL, stack_len, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0)
			      : MAP_FAILED;
	pthread_attr_t a;
	pthread_t t;
	bool split = stack != MAP_FAILED && pthread_attr_init(&a) == 0;

	if (split) {
		split = pthread_attr_setstack(&a, stack, stack_len) == 0 &&
			pthread_create(&t, &a, copy_part, &tail) == 0;
		pthread_attr_destroy(&a);
	}
	struct copy_part first = { dst, src, fd, off, split ? head : len, 0 };

	copy_part(&first);
	if (split)
		pthread_join(t, NULL);
	if (stack != MAP_FAILED)
		munmap(stack, stack_len);
	return first.err ? first.err : split ? tail.err : 0;
}

void vm_mem_copy(uint8_t *dst, const uint8_t *src, size_t len)
{
	mem_fill(dst, src, -1, 0, len);
}

int vm_mem_read(uint8_t *dst, int fd, uint64_t off, size_t len)
{
	return mem_fill(dst, NULL, fd, off, len);
}

int vm_mem_load(uint8_t *dst, const uint8_t *src, size_t len, const struct mapped_file *f)
{
	if (f && f->fd >= 0 && src >= f->map && len <= f->len && (size_t)(src - f->map) <= f->len - len)
		return vm_mem_read(dst, f->fd, (uint64_t)(src - f->map), len);
	vm_mem_copy(dst, src, len);
	return 0;
}

void vm_mem_prefault(const void *p, size_t len)
{
	uintptr_t page = (uintptr_t)sysconf(_SC_PAGESIZE), lo = (uintptr_t)p & ~(page - 1);

	if (len)
		madvise((void *)lo, (uintptr_t)p + len - lo, MADV_POPULATE_READ);
}

/* mem_lock held. */
VMM_HOT static int slot_alloc(struct vm *vm)
{
	for (int i = 0; i < VM_MAX_MEMSLOTS; i++)
		if (!(vm->memslot_used[i / 64] & (1ULL << (i % 64)))) {
			vm->memslot_used[i / 64] |= 1ULL << (i % 64);
			return i;
		}
	pr_err("guest memory: all %d memslots are in use", VM_MAX_MEMSLOTS);
	return -ENOSPC;
}

static void slot_free(struct vm *vm, int slot)
{
	vm->memslot_used[slot / 64] &= ~(1ULL << (slot % 64));
}

VMM_HOT static int mmio_map(struct vm *vm, uint64_t gpa, uint64_t size, void *hva, uint32_t flags)
{
	pthread_mutex_lock(&vm->mem_lock);
	int slot = slot_alloc(vm);

	if (slot >= 0) {
		int r = vm->kvm.ops->set_memslot(vm->kvm.ctx, slot, gpa, size, hva, flags);

		if (r < 0) {
			/* the guest chose gpa (a BAR): as often as it likes, so under the VM's limit */
			pr_warn_guest(vm, "MMIO 0x%llx+0x%llx cannot be mapped (KVM_SET_USER_MEMORY_REGION: %s%s): "
				      "it stays unmapped", (unsigned long long)gpa, (unsigned long long)size,
				      strerror(-r), r == -EEXIST ? ", it overlaps guest RAM or another BAR" : "");
			slot_free(vm, slot);
			slot = r;
		}
	}
	pthread_mutex_unlock(&vm->mem_lock);
	return slot;
}

VMM_HOT int vm_mmio_map(struct vm *vm, uint64_t gpa, uint64_t size, void *hva)
{
	return mmio_map(vm, gpa, size, hva, 0);
}

VMM_HOT int vm_mmio_map_ro(struct vm *vm, uint64_t gpa, uint64_t size, void *hva)
{
	return mmio_map(vm, gpa, size, hva, KVM_MEM_READONLY);
}

VMM_HOT void vm_mmio_unmap(struct vm *vm, int slot)
{
	if (slot < 0 || slot >= VM_MAX_MEMSLOTS)
		return;
	pthread_mutex_lock(&vm->mem_lock);
	vm->kvm.ops->set_memslot(vm->kvm.ctx, slot, 0, 0, NULL, 0);
	slot_free(vm, slot);
	pthread_mutex_unlock(&vm->mem_lock);
}

VMM_HOT int vm_mem_listen(struct vm *vm, const struct mem_listener *l)
{
	int r = 0;

	pthread_mutex_lock(&vm->mem_lock);
	if (vm->nr_mem_listeners == VM_MAX_MEM_LISTENERS) {
		r = -ENOSPC;
	} else {
		vm->mem_listeners[vm->nr_mem_listeners++] = *l;
		for (int i = 0; i < vm->nr_mem && r == 0; i++)
			r = l->ram_added(l->opaque, &vm->mem[i]);
	}
	pthread_mutex_unlock(&vm->mem_lock);
	return r;
}

int vm_mem_add(struct vm *vm, uint64_t gpa, uint64_t size)
{
	if (vm->nr_mem == VM_MAX_MEM_REGIONS) {
		pr_err("guest memory: more than %d regions", VM_MAX_MEM_REGIONS);
		return -ENOSPC;
	}
	if (!size || (gpa | size) & 0xfff || gpa + size < gpa) {
		pr_err("guest memory: region 0x%llx+0x%llx is empty, unaligned or wraps",
		       (unsigned long long)gpa, (unsigned long long)size);
		return -EINVAL;
	}
	for (int i = 0; i < vm->nr_mem; i++) {
		const struct mem_region *r = &vm->mem[i];

		if (gpa < r->gpa + r->size && r->gpa < gpa + size) {
			pr_err("guest memory: region 0x%llx+0x%llx overlaps 0x%llx+0x%llx",
			       (unsigned long long)gpa, (unsigned long long)size,
			       (unsigned long long)r->gpa, (unsigned long long)r->size);
			return -EINVAL;
		}
	}
	uint8_t *hva;
	int r = vm_mem_map(size, &hva);

	if (r < 0)
		return r;
	pthread_mutex_lock(&vm->mem_lock);
	int slot = slot_alloc(vm);

	r = slot < 0 ? slot : vm->kvm.ops->set_memslot(vm->kvm.ctx, slot, gpa, size, hva, 0);
	if (r < 0 && slot >= 0)
		pr_err("guest memory: KVM_SET_USER_MEMORY_REGION for RAM 0x%llx+%llu MiB failed: %s",
		       (unsigned long long)gpa, (unsigned long long)(size >> 20), strerror(-r));
	if (r < 0) {
		if (slot >= 0)
			slot_free(vm, slot);
		pthread_mutex_unlock(&vm->mem_lock);
		munmap(hva, size);
		return r;
	}
	vm->mem[vm->nr_mem++] = (struct mem_region){ gpa, size, hva, slot };
	for (int i = 0; i < vm->nr_mem_listeners && r == 0; i++)
		r = vm->mem_listeners[i].ram_added(vm->mem_listeners[i].opaque, &vm->mem[vm->nr_mem - 1]);
	pthread_mutex_unlock(&vm->mem_lock);
	return r;
}

VMM_HOT_IDLE void *vm_gpa_to_hva(const struct vm *vm, uint64_t gpa, uint64_t len)
{
	for (int i = 0; i < vm->nr_mem; i++) {
		const struct mem_region *r = &vm->mem[i];

		if (gpa >= r->gpa && gpa - r->gpa < r->size && len <= r->size - (gpa - r->gpa))
			return r->hva + (gpa - r->gpa);
	}
	return NULL;
}
