// SPDX-License-Identifier: MIT
/* Guest address translation: every guest-supplied address and length is bounds-checked. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "kselftest_harness.h"
#include "core/mem.h"
#include "core/vm.h"

FIXTURE(mem) {
	struct vm vm;
	uint8_t ram0[0x2000], ram1[0x1000];
};

FIXTURE_SETUP(mem)
{
	memset(&self->vm, 0, sizeof(self->vm));
	self->vm.mem[0] = (struct mem_region){ 0x80000000, sizeof(self->ram0), self->ram0, 0 };
	self->vm.mem[1] = (struct mem_region){ 0x100000000ULL, sizeof(self->ram1), self->ram1, 1 };
	self->vm.nr_mem = 2;
}

FIXTURE_TEARDOWN(mem) {}

TEST_F(mem, inside)
{
	EXPECT_EQ((void *)self->ram0, vm_gpa_to_hva(&self->vm, 0x80000000, 1));
	EXPECT_EQ((void *)self->ram0 + 0x1ff0, vm_gpa_to_hva(&self->vm, 0x80001ff0, 0x10));
	EXPECT_EQ((void *)self->ram1 + 0x800, vm_gpa_to_hva(&self->vm, 0x100000800ULL, 0x800));
	EXPECT_EQ((void *)self->ram0, vm_gpa_to_hva(&self->vm, 0x80000000, sizeof(self->ram0)));
}

TEST_F(mem, outside_or_straddling)
{
	EXPECT_EQ((void *)NULL, vm_gpa_to_hva(&self->vm, 0x7fffffff, 1));
	EXPECT_EQ((void *)NULL, vm_gpa_to_hva(&self->vm, 0x7fffffff, 2));
	EXPECT_EQ((void *)NULL, vm_gpa_to_hva(&self->vm, 0x80001ff0, 0x11));
	EXPECT_EQ((void *)NULL, vm_gpa_to_hva(&self->vm, 0x80002000, 1));
	EXPECT_EQ((void *)NULL, vm_gpa_to_hva(&self->vm, 0x80000000, sizeof(self->ram0) + 1));
	/* lengths and addresses that wrap the 64-bit space */
	EXPECT_EQ((void *)NULL, vm_gpa_to_hva(&self->vm, 0x80000010, UINT64_MAX));
	EXPECT_EQ((void *)NULL, vm_gpa_to_hva(&self->vm, UINT64_MAX, 2));
}

TEST(no_regions)
{
	struct vm vm;

	memset(&vm, 0, sizeof(vm));
	EXPECT_EQ((void *)NULL, vm_gpa_to_hva(&vm, 0, 1));
}

/* The /proc/self/smaps entry of the mapping holding p: its range, VmFlags, and whether it is the
 * kernel's: the caller touched the mapping, so a real Rss is non-zero, while qemu-user emulates
 * smaps with Rss 0 and no advice flags. */
static bool smaps_of(const void *p, uintptr_t *start, uintptr_t *end, char *flags, size_t size, bool *real)
{
	FILE *f = fopen("/proc/self/smaps", "r");
	char line[512];
	bool in = false, found = false;

	*real = false;
	flags[0] = 0;
	while (f && fgets(line, sizeof(line), f)) {
		unsigned long s, e;

		if (sscanf(line, "%lx-%lx ", &s, &e) == 2 && strchr(line, '-') < strchr(line, ' ')) {
			if (in)
				break;
			in = s <= (uintptr_t)p && (uintptr_t)p < e;
			if (in) {
				*start = s;
				*end = e;
				found = true;
			}
		} else if (in && !strncmp(line, "VmFlags:", 8)) {
			line[strcspn(line, "\n")] = 0;
			snprintf(flags, size, "%.400s ", line + 8); /* " rd wr mr ... " */
		} else if (in && !strncmp(line, "Rss:", 4)) {
			*real = strtoul(line + 4, NULL, 10) > 0;
		}
	}
	if (f)
		fclose(f);
	return found;
}

/* Guest RAM's host mapping: 2 MiB aligned and exactly the asked size (the over-allocation used to
 * align it is trimmed), advised for transparent huge pages, and never offered to KSM. */
TEST(guest_ram_mapping)
{
	const uint64_t sizes[] = { 2ULL << 20, (6ULL << 20) + 0x1000, 64ULL << 20 };

	for (size_t i = 0; i < sizeof(sizes) / sizeof(sizes[0]); i++) {
		uint64_t size = sizes[i];
		uint8_t *hva = NULL;
		uintptr_t start = 0, end = 0;
		char flags[512];
		bool real;

		ASSERT_EQ(0, vm_mem_map(size, &hva));
		EXPECT_EQ(0, (uintptr_t)hva % (2ULL << 20)) TH_LOG("size 0x%llx mapped at %p",
								  (unsigned long long)size, hva);
		hva[0] = 1;
		hva[size - 1] = 2;
		ASSERT_TRUE(smaps_of(hva, &start, &end, flags, sizeof(flags), &real));
		EXPECT_EQ((uintptr_t)hva, start);
		EXPECT_EQ((uintptr_t)hva + size, end) TH_LOG("the alignment slack was not trimmed");
		if (real) {
			EXPECT_NE(NULL, strstr(flags, " hg ")) TH_LOG("no MADV_HUGEPAGE; VmFlags:%s", flags);
			EXPECT_EQ(NULL, strstr(flags, " mg ")) TH_LOG("MADV_MERGEABLE set; VmFlags:%s", flags);
		} else {
			TH_LOG("smaps shows Rss 0 for touched memory (qemu-user): advice flags not visible");
		}
		munmap(hva, size);
	}
}

/* vm_mem_copy: every byte lands where memcpy would put it, below and above the size that splits
 * the copy over two threads, at a 2 MiB-aligned destination and at odd ones. */
TEST(copy_into_ram)
{
	const size_t sizes[] = { 0, 1, 4095, (8 << 20) - 1, 8 << 20, (8 << 20) + 12345, (33 << 20) + 7 };
	const size_t offs[] = { 0, 1, 0x1000 - 3, (2 << 20) - 5 };
	size_t max = (33 << 20) + 7 + (2 << 20);
	uint8_t *src = malloc(max), *dst = NULL;

	ASSERT_NE(NULL, src);
	ASSERT_EQ(0, vm_mem_map(max + (2 << 20), &dst));
	for (size_t i = 0; i < max; i++)
		src[i] = (uint8_t)(i * 2654435761u >> 13);
	for (size_t i = 0; i < sizeof(sizes) / sizeof(sizes[0]); i++)
		for (size_t k = 0; k < sizeof(offs) / sizeof(offs[0]); k++) {
			size_t n = sizes[i], o = offs[k];

			memset(dst, 0xa5, max + (2 << 20));
			vm_mem_copy(dst + o, src + k, n);
			EXPECT_EQ(0, memcmp(dst + o, src + k, n)) TH_LOG("%zu bytes at +%zu", n, o);
			EXPECT_EQ(0xa5, dst[o + n]) TH_LOG("%zu bytes at +%zu: wrote past the end", n, o);
			if (o)
				EXPECT_EQ(0xa5, dst[o - 1]) TH_LOG("%zu bytes at +%zu: wrote before", n, o);
		}
	munmap(dst, max + (2 << 20));
	free(src);
}

/* A memfd holding len bytes of a pattern; the same bytes in *copy (malloc'd). */
static int pattern_file(size_t len, uint8_t **copy)
{
	int fd = memfd_create("mem_test", MFD_CLOEXEC);
	uint8_t *b = malloc(len);

	if (fd < 0 || !b)
		abort();
	for (size_t i = 0; i < len; i++)
		b[i] = (uint8_t)(i * 40503u >> 7) ^ 0x5a;
	if (pwrite(fd, b, len, 0) != (ssize_t)len)
		abort();
	*copy = b;
	return fd;
}

/* vm_mem_read: the file's bytes at off land at dst, below and above the size that splits the read
 * over two threads, from odd file offsets to odd destinations, and nothing outside. */
TEST(read_into_ram)
{
	const size_t sizes[] = { 0, 1, 4095, (8 << 20) - 1, 8 << 20, (8 << 20) + 12345, (33 << 20) + 7 };
	const size_t offs[] = { 0, 1, 0x1000 - 3, (2 << 20) - 5 };
	size_t max = (33 << 20) + 7 + (2 << 20);
	uint8_t *src, *dst = NULL;
	int fd = pattern_file(max, &src);

	ASSERT_EQ(0, vm_mem_map(max + (2 << 20), &dst));
	for (size_t i = 0; i < sizeof(sizes) / sizeof(sizes[0]); i++)
		for (size_t k = 0; k < sizeof(offs) / sizeof(offs[0]); k++) {
			size_t n = sizes[i], o = offs[k];

			memset(dst, 0xa5, max + (2 << 20));
			EXPECT_EQ(0, vm_mem_read(dst + o, fd, k * 3, n));
			EXPECT_EQ(0, memcmp(dst + o, src + k * 3, n)) TH_LOG("%zu bytes at +%zu", n, o);
			EXPECT_EQ(0xa5, dst[o + n]) TH_LOG("%zu bytes at +%zu: wrote past the end", n, o);
			if (o)
				EXPECT_EQ(0xa5, dst[o - 1]) TH_LOG("%zu bytes at +%zu: wrote before", n, o);
		}
	munmap(dst, max + (2 << 20));
	free(src);
	close(fd);
}

/* A file that ends before the bytes asked for (it shrank after it was mapped) is an error, in
 * either thread's part, not a short load; so is a file that cannot be read. */
TEST(read_of_a_short_file_fails)
{
	size_t len = 12 << 20;
	uint8_t *src, *dst = NULL;
	int fd = pattern_file(len, &src);

	ASSERT_EQ(0, vm_mem_map(16 << 20, &dst));
	EXPECT_EQ(-ENODATA, vm_mem_read(dst, fd, 0, len + 1));		  /* the second thread's part */
	EXPECT_EQ(-ENODATA, vm_mem_read(dst, fd, len - 10, 20));	  /* one thread */
	ASSERT_EQ(0, ftruncate(fd, 2 << 20));
	EXPECT_EQ(-ENODATA, vm_mem_read(dst, fd, 0, len));		  /* both parts short */
	EXPECT_EQ(-EBADF, vm_mem_read(dst, -2, 0, 100));
	munmap(dst, 16 << 20);
	free(src);
	close(fd);
}

/* vm_mem_load reads a slice of the mapping from the file, not through the mapping: the mapping's
 * private copy is changed here, and the load still gives the file's bytes. A source outside the
 * mapping, or no file, is copied from memory. */
TEST(load_reads_a_slice_from_the_file)
{
	size_t len = 10 << 20;
	uint8_t *src, *dst = NULL, *heap = malloc(4096);
	int fd = pattern_file(len, &src);
	uint8_t *map = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_PRIVATE, fd, 0);
	struct mapped_file f = { map, len, fd };

	ASSERT_NE(MAP_FAILED, map);
	ASSERT_NE(NULL, heap);
	ASSERT_EQ(0, vm_mem_map(len + (2 << 20), &dst));
	memset(map, 0x11, len); /* the mapping's copy differs from the file now */
	memset(heap, 0x22, 4096);

	EXPECT_EQ(0, vm_mem_load(dst, map + 100, len - 100, &f));
	EXPECT_EQ(0, memcmp(dst, src + 100, len - 100));
	EXPECT_EQ(0, vm_mem_load(dst, map, len, &f)); /* the whole file */
	EXPECT_EQ(0, memcmp(dst, src, len));
	EXPECT_EQ(0, vm_mem_load(dst, heap, 4096, &f)); /* not in the mapping: from memory */
	EXPECT_EQ(0x22, dst[0]);
	EXPECT_EQ(0x22, dst[4095]);
	EXPECT_EQ(0, vm_mem_load(dst, map + 8, 4096, NULL)); /* no file: the mapping's bytes */
	EXPECT_EQ(0x11, dst[0]);
	f.fd = -1;
	EXPECT_EQ(0, vm_mem_load(dst, map + 8, 4096, &f));
	EXPECT_EQ(0x11, dst[4095]);
	munmap(dst, len + (2 << 20));
	munmap(map, len);
	free(src);
	free(heap);
	close(fd);
}

TEST_HARNESS_MAIN
