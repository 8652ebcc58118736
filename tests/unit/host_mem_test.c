// SPDX-License-Identifier: MIT
/* What host_mem_release_startup drops: whole pages of the program's read-only PT_LOADs (text and
 * read-only data), never a page that holds writable (copy-on-write) data. */
#include <link.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "kselftest_harness.h"
#include "core/host_mem.h"

#define PG 0x1000u

static ElfW(Phdr) load(uintptr_t vaddr, size_t filesz, size_t memsz, unsigned flags)
{
	return (ElfW(Phdr)){ .p_type = PT_LOAD, .p_vaddr = vaddr, .p_filesz = filesz, .p_memsz = memsz, .p_flags = flags };
}

/* arm64's static vmm: one R+X segment (text, rodata, eh_frame) and the R+W one. */
TEST(static_text_and_rodata)
{
	ElfW(Phdr) ph[] = { load(0x400000, 0x18f7be, 0x18f7be, PF_R | PF_X),
			    load(0x59a9c8, 0x7838, 0x791a8, PF_R | PF_W),
			    { .p_type = PT_GNU_RELRO, .p_vaddr = 0x59a9c8, .p_filesz = 0x5638, .p_flags = PF_R } };
	struct host_mem_range r[4];

	ASSERT_EQ(1, host_mem_ro_ranges(ph, 3, 0, PG, r, 4));
	EXPECT_EQ(0x400000, r[0].start);
	EXPECT_EQ(0x18f000, r[0].len); /* the partial last page stays */
}

/* A PIE with separate code: its R, R+X and R segments, each at the load base; not the R+W one. */
TEST(pie_segments_at_base)
{
	ElfW(Phdr) ph[] = { load(0, 0x2f00, 0x2f00, PF_R), load(0x3000, 0x8800, 0x8800, PF_R | PF_X),
			    load(0xc000, 0x2100, 0x2100, PF_R), load(0xfd10, 0x500, 0x900, PF_R | PF_W) };
	struct host_mem_range r[4];

	ASSERT_EQ(3, host_mem_ro_ranges(ph, 4, 0x5555000000, PG, r, 4));
	EXPECT_EQ(0x5555000000, r[0].start); /* the headers' segment: its whole pages */
	EXPECT_EQ(0x2000, r[0].len);
	EXPECT_EQ(0x5555003000, r[1].start);
	EXPECT_EQ(0x8000, r[1].len);
	EXPECT_EQ(0x555500c000, r[2].start);
	EXPECT_EQ(0x2000, r[2].len);
}

/* A segment that starts mid-page (sharing its first page with the previous one) loses that page;
 * no room: no more ranges than asked for. */
TEST(unaligned_start_and_max)
{
	ElfW(Phdr) ph[] = { load(0x10800, 0x3000, 0x3000, PF_R | PF_X), load(0x20000, 0x2000, 0x2000, PF_R) };
	struct host_mem_range r[1];

	ASSERT_EQ(1, host_mem_ro_ranges(ph, 2, 0, PG, r, 1));
	EXPECT_EQ(0x11000, r[0].start);
	EXPECT_EQ(0x2000, r[0].len);
}

/* This very program: its ranges lie inside its own non-writable mappings, and madvise accepts
 * them (what the release does); code and read-only data still read correctly afterwards. */
static int first(struct dl_phdr_info *info, size_t size, void *arg)
{
	struct host_mem_range *r = arg;

	(void)size;
	return (int)host_mem_ro_ranges(info->dlpi_phdr, info->dlpi_phnum, info->dlpi_addr, (uintptr_t)getpagesize(),
				       r, 8) | 0x100;
}

static const char marker[] = "host_mem_test read-only marker";

TEST(this_program)
{
	struct host_mem_range r[8];
	int n = dl_iterate_phdr(first, r) & 0xff;
	uintptr_t page = (uintptr_t)getpagesize();
	size_t total = 0;

	ASSERT_GE(n, 1);
	for (int i = 0; i < n; i++) {
		EXPECT_EQ(0, r[i].start % page);
		EXPECT_EQ(0, r[i].len % page);
		total += r[i].len;
		EXPECT_EQ(0, madvise((void *)r[i].start, r[i].len, MADV_DONTNEED));
	}
	EXPECT_GT(total, 0); /* a program has whole pages of code */
	host_mem_release_startup();
	EXPECT_STREQ("host_mem_test read-only marker", marker);
}

/* A large structure from host_mem_zalloc: zeroed, and only the pages written become resident
 * (from the heap, calloc would clear, and so make resident, every page of a reused free chunk). */
TEST(zalloc_pages_stay_untouched)
{
	size_t page = (size_t)getpagesize(), len = 64 * page;
	unsigned char *p = host_mem_zalloc(len), vec[64];
	int resident = 0;

	ASSERT_NE(NULL, p);
#if defined(__SANITIZE_ADDRESS__) || defined(__SANITIZE_THREAD__)
	/* sanitizer builds take calloc (the sanitizer's allocator sees every structure): zeroed and
	 * whole, residency is theirs */
	for (size_t i = 0; i < len; i += 997)
		ASSERT_EQ(0, p[i]);
	ASSERT_EQ(0, p[len - 1]);
	p[len - 1] = 1;
	host_mem_zfree(p, len);
	return;
#endif
	p[3 * page + 5] = 1;
	ASSERT_EQ(0, mincore(p, len, vec));
	for (int i = 0; i < 64; i++)
		resident += vec[i] & 1;
	EXPECT_EQ(1, resident);
	EXPECT_EQ(1, vec[3] & 1);
	EXPECT_EQ(0, p[len - 1]);
	host_mem_zfree(p, len);
	host_mem_zfree(NULL, len);
}

/* host_mem_clear zeroes exactly [p, p + len) and leaves the whole pages inside it not resident;
 * the bytes around it are kept. */
TEST(clear_zeroes_without_touching)
{
	size_t page = (size_t)getpagesize(), len = 16 * page;
	unsigned char *m = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0), vec[16];
	size_t from = page + 100, n = 10 * page + 7; /* from mid page 1 to just past page 11's start */
	int resident = 0, bad = 0;

	ASSERT_NE(MAP_FAILED, m);
	memset(m, 0xa5, len);
	host_mem_clear(m + from, n);
	for (size_t i = 0; i < len; i++)
		bad += m[i] != (i >= from && i < from + n ? 0 : 0xa5);
	EXPECT_EQ(0, bad);
	host_mem_clear(m + from, n); /* again: the checks above read the pages back in */
	ASSERT_EQ(0, mincore(m, len, vec));
	for (int i = 2; i < 11; i++) /* pages 2..10 lie wholly inside */
		resident += vec[i] & 1;
	EXPECT_EQ(0, resident);
	EXPECT_EQ(1, vec[1] & 1);
	EXPECT_EQ(1, vec[11] & 1);
	munmap(m, len);
}

/* Small or heap: the same bytes as memset. */
TEST(clear_small_and_heap)
{
	unsigned char small[100], *h = malloc(40000);
	int bad = 0;

	ASSERT_NE(NULL, h);
	memset(small, 1, sizeof(small));
	memset(h, 1, 40000);
	host_mem_clear(small + 10, 50);
	host_mem_clear(h + 3, 39990);
	for (int i = 0; i < 100; i++)
		bad += small[i] != (i >= 10 && i < 60 ? 0 : 1);
	for (int i = 0; i < 40000; i++)
		bad += h[i] != (i >= 3 && i < 39993 ? 0 : 1);
	EXPECT_EQ(0, bad);
	free(h);
}

TEST_HARNESS_MAIN
