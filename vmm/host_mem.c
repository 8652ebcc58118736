// SPDX-License-Identifier: MIT
/* vmm's own memory (vmm/host_mem.h). */
#include <malloc.h>
#include <stdint.h>
#include <sys/mman.h>
#include <unistd.h>

#include "vmm/host_mem.h"

#define HOST_MEM_MMAP_THRESHOLD (16 << 10)

/* The linker's bounds of the program's code (GNU ld and lld define both). */
extern const char __executable_start[], etext[];

void host_mem_init(void)
{
	/* No thread mallocs on a data path (rings, AIO and buffers are set up before the guest
	 * runs), so one arena costs no contention worth having an arena per thread for. */
	mallopt(M_ARENA_MAX, 1);
	/* Large structures (the board with its console ring, virtio-net's buffers, the routing
	 * table) in mappings of their own: zero pages until used, where from the heap a calloc
	 * clears (touches) whatever start-up freed below the top, and keeps it. */
	mallopt(M_MMAP_THRESHOLD, HOST_MEM_MMAP_THRESHOLD);
	/* no 128 KiB of slack with each heap growth: that top is where the large ones came from */
	mallopt(M_TOP_PAD, 0);
}

void host_mem_drop_copied(const void *p, size_t len)
{
	uintptr_t page = (uintptr_t)sysconf(_SC_PAGESIZE);
	uintptr_t lo = ((uintptr_t)p + page - 1) & ~(page - 1), hi = ((uintptr_t)p + len) & ~(page - 1);

	if (hi > lo)
		madvise((void *)lo, hi - lo, MADV_DONTNEED);
}

void host_mem_release_startup(void)
{
	malloc_trim(0);
	/* Clean file pages of a private mapping: MADV_DONTNEED only drops them from the page tables
	 * (the page cache keeps them). A debugger's breakpoints, written into the text, would go. */
	host_mem_drop_copied(__executable_start, (size_t)(etext - __executable_start));
}
