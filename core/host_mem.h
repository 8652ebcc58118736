/* SPDX-License-Identifier: MIT */
/*
 * vmm's own memory, not the guest's: what stays resident once the guest runs is what counts (make
 * bench's memory.rss_beyond_guest_ram). One malloc arena for every thread; start-up's pages given
 * back once the guest has booted.
 */
#ifndef VMM_HOST_MEM_H
#define VMM_HOST_MEM_H

#include <link.h>
#include <stddef.h>
#include <stdint.h>

/* First thing in main: every thread allocates from the main arena (a thread's own arena is a
 * 64 MiB reservation whose first pages stay resident: 44-60 KiB per thread in the lab). */
void host_mem_init(void);
/* After the guest's boot: free heap pages back to the kernel (malloc_trim) and vmm's code and
 * read-only data pages out of its page tables, so only what the running guest uses faults back in
 * (start-up code, the FDT's and the loaders' libraries, the option parser, are most of the text).
 * Main thread. */
void host_mem_release_startup(void);

struct host_mem_range {
	uintptr_t start;
	size_t len;
};
/* The whole pages of the file-backed, non-writable PT_LOAD segments among ph[0..n) (loaded at
 * base) into out (at most max): what host_mem_release_startup drops. A page the segment shares
 * with a writable one is left out. Returns how many. */
size_t host_mem_ro_ranges(const ElfW(Phdr) *ph, size_t n, uintptr_t base, uintptr_t page,
			  struct host_mem_range *out, size_t max);
/* Zeroed memory in a mapping of its own, for the large structures most of which the running guest
 * never touches (the board with its console ring, a virtio device with its 4 KiB config space and
 * MSI-X table): its pages stay zero pages until written. From the heap, calloc reuses what start-up
 * freed (below the mmap threshold, or a free chunk big enough) and clears, so makes resident, all
 * of it. Sanitizer builds take calloc (their allocator sees the bounds). NULL when out of memory. */
void *host_mem_zalloc(size_t len);
/* What host_mem_zalloc gave, with the same len; NULL is fine. */
void host_mem_zfree(void *p, size_t len);
/* memset(p, 0, len) for private anonymous memory (heap, stack, host_mem_zalloc) that leaves the
 * whole pages inside it not resident (MADV_DONTNEED: they read as zeros again): an init function's
 * clearing of a large structure does not make all of it resident. */
void host_mem_clear(void *p, size_t len);
/* Read-only file-backed data that has been copied where it is used (the built-in initramfs, in
 * guest RAM): its whole pages out of the page tables. They are clean: a later read faults them
 * back from the file. */
void host_mem_drop_copied(const void *p, size_t len);

#endif
