// SPDX-License-Identifier: MIT
/* Guest RAM: anonymous mappings registered as KVM memslots, and checked guest-address translation. */
#include <errno.h>
#include <stdint.h>
#include <string.h>
#include <sys/mman.h>

#include "vmm/log.h"
#include "vmm/mem.h"
#include "vmm/vm.h"

/* 2 MiB: a PMD with 4 KiB pages, so THP and stage-2 block mappings can both use it. */
#define MEM_HUGE_ALIGN (2ULL << 20)

/*
 * Guest RAM's host mapping, 2 MiB aligned (over-map by 2 MiB, then trim both ends) so transparent
 * huge pages line up with guest physical 2 MiB blocks and KVM can map them as stage-2 blocks.
 * No MADV_MERGEABLE: KSM scanning adds latency noise and merged pages are a cross-VM side channel.
 */
int vm_mem_map(uint64_t size, uint8_t **hva)
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
	uint32_t slot = vm->nr_mem;

	r = vm->kvm.ops->set_memslot(vm->kvm.ctx, slot, gpa, size, hva, 0);
	if (r < 0) {
		munmap(hva, size);
		return r;
	}
	vm->mem[vm->nr_mem++] = (struct mem_region){ gpa, size, hva, slot };
	return 0;
}

void *vm_gpa_to_hva(const struct vm *vm, uint64_t gpa, uint64_t len)
{
	for (int i = 0; i < vm->nr_mem; i++) {
		const struct mem_region *r = &vm->mem[i];

		if (gpa >= r->gpa && gpa - r->gpa < r->size && len <= r->size - (gpa - r->gpa))
			return r->hva + (gpa - r->gpa);
	}
	return NULL;
}
