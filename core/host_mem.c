// SPDX-License-Identifier: MIT
/* vmm's own memory (core/host_mem.h). */
#include <link.h>
#include <malloc.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "core/host_mem.h"
#include "core/hot.h"

#define HOST_MEM_MMAP_THRESHOLD (16 << 10)

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

/* gcc says so with a macro, clang with __has_feature (the fuzz targets free a device's state) */
#if defined(__SANITIZE_ADDRESS__) || defined(__SANITIZE_THREAD__)
#define HOST_MEM_SANITIZED 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer) || __has_feature(thread_sanitizer)
#define HOST_MEM_SANITIZED 1
#endif
#endif

#ifdef HOST_MEM_SANITIZED
void *host_mem_zalloc(size_t len)
{
	return calloc(1, len);
}

void host_mem_zfree(void *p, size_t len)
{
	(void)len;
	free(p);
}
#else
void *host_mem_zalloc(size_t len)
{
	void *p = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);

	return p == MAP_FAILED ? NULL : p;
}

void host_mem_zfree(void *p, size_t len)
{
	if (p)
		munmap(p, len);
}
#endif

void host_mem_clear(void *p, size_t len)
{
	uintptr_t page = (uintptr_t)sysconf(_SC_PAGESIZE), a = (uintptr_t)p;
	uintptr_t lo = (a + page - 1) & ~(page - 1), hi = (a + len) & ~(page - 1);

	/* a page or two: the syscall costs more than it saves */
	if (hi <= lo || hi - lo < 2 * page || madvise((void *)lo, hi - lo, MADV_DONTNEED) < 0) {
		memset(p, 0, len);
		return;
	}
	memset(p, 0, lo - a);
	memset((void *)hi, 0, a + len - hi);
}

VMM_HOT void host_mem_drop_copied(const void *p, size_t len)
{
	uintptr_t page = (uintptr_t)sysconf(_SC_PAGESIZE);
	uintptr_t lo = ((uintptr_t)p + page - 1) & ~(page - 1), hi = ((uintptr_t)p + len) & ~(page - 1);

	if (hi > lo)
		madvise((void *)lo, hi - lo, MADV_DONTNEED);
}

VMM_HOT_IDLE size_t host_mem_ro_ranges(const ElfW(Phdr) *ph, size_t n, uintptr_t base, uintptr_t page,
			  struct host_mem_range *out, size_t max)
{
	size_t k = 0;

	for (size_t i = 0; i < n && k < max; i++) {
		if (ph[i].p_type != PT_LOAD || (ph[i].p_flags & PF_W) || !ph[i].p_filesz)
			continue;
		/* whole pages only: a page shared with a writable segment (its copy-on-write data) stays */
		uintptr_t lo = (base + ph[i].p_vaddr + page - 1) & ~(page - 1);
		uintptr_t hi = (base + ph[i].p_vaddr + ph[i].p_filesz) & ~(page - 1);

		if (hi > lo)
			out[k++] = (struct host_mem_range){ lo, hi - lo };
	}
	return k;
}

/* The program's own read-only segments (dl_iterate_phdr's first object is the program, static
 * or not): its text and, where they share none of its pages, its read-only data. */
VMM_HOT_IDLE static int drop_ro(struct dl_phdr_info *info, size_t size, void *arg)
{
	struct host_mem_range r[8];
	size_t n = host_mem_ro_ranges(info->dlpi_phdr, info->dlpi_phnum, info->dlpi_addr,
				      (uintptr_t)sysconf(_SC_PAGESIZE), r, 8);

	(void)size, (void)arg;
	for (size_t i = 0; i < n; i++)
		madvise((void *)r[i].start, r[i].len, MADV_DONTNEED);
	return 1; /* the program only, not the libraries of a dynamic build */
}

VMM_HOT_IDLE void host_mem_release_startup(void)
{
	malloc_trim(0);
	/* Clean file pages of a private mapping: MADV_DONTNEED only drops them from the page tables
	 * (the page cache keeps them). The read-only data goes as well as the text: the option
	 * parser's strings, the loaders' tables are start-up's. A debugger's breakpoints, written
	 * into the text, would go. */
	dl_iterate_phdr(drop_ro, NULL);
}
