// SPDX-License-Identifier: MIT
/* arm64 kernel images: raw Image headers, Image.gz through zlib, EFI zboot, and broken inputs. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>
#include <zlib.h>

#include "arm64/arm64.h"
#include "kselftest_harness.h"
#include "vmm/config.h"

#define IMG_LEN 8192

static void put32(uint8_t *p, uint32_t v)
{
	for (int i = 0; i < 4; i++)
		p[i] = v >> (8 * i);
}

static void put64(uint8_t *p, uint64_t v)
{
	put32(p, v);
	put32(p + 4, v >> 32);
}

/* A minimal Image: header as booting.rst describes it, then a recognisable body. */
static uint8_t *make_image(size_t len, uint64_t text_offset, uint64_t image_size, uint64_t flags)
{
	uint8_t *b = calloc(1, len);

	put64(b + 8, text_offset);
	put64(b + 16, image_size);
	put64(b + 24, flags);
	memcpy(b + 56, "ARM\x64", 4);
	for (size_t i = 64; i < len; i++)
		b[i] = (uint8_t)i;
	return b;
}

static uint8_t *gzip_buf(const uint8_t *in, size_t len, size_t *out_len)
{
	z_stream z = { 0 };
	size_t cap = compressBound(len) + 64;
	uint8_t *out = malloc(cap);

	deflateInit2(&z, 9, Z_DEFLATED, 16 + MAX_WBITS, 8, Z_DEFAULT_STRATEGY);
	z.next_in = (uint8_t *)in;
	z.avail_in = len;
	z.next_out = out;
	z.avail_out = cap;
	deflate(&z, Z_FINISH);
	*out_len = z.total_out;
	deflateEnd(&z);
	return out;
}

/* EFI zboot: "MZ", "zimg", payload offset and size, compression name at 0x18. */
static uint8_t *make_zboot(const uint8_t *payload, size_t plen, const char *comp, size_t *len)
{
	size_t off = 0x200;
	uint8_t *b = calloc(1, off + plen + 64);

	b[0] = 'M';
	b[1] = 'Z';
	memcpy(b + 4, "zimg", 4);
	put32(b + 8, off);
	put32(b + 12, plen);
	strcpy((char *)b + 24, comp);
	memcpy(b + off, payload, plen);
	*len = off + plen + 64;
	return b;
}

TEST(raw_image)
{
	uint8_t *img = make_image(IMG_LEN, 0, 3 * IMG_LEN, 0x2);
	uint8_t *owned;
	struct arm64_image d;

	ASSERT_EQ(0, arm64_kernel_decode(img, IMG_LEN, 1 << 20, &owned, &d));
	EXPECT_EQ(NULL, owned);
	EXPECT_EQ(img, d.data);
	EXPECT_EQ(IMG_LEN, d.len);
	EXPECT_EQ(0, d.text_offset);
	EXPECT_EQ(3 * IMG_LEN, d.image_size);
	free(img);
}

TEST(old_image_without_size)
{
	uint8_t *img = make_image(IMG_LEN, 0, 0, 0);
	struct arm64_image d;

	ASSERT_EQ(0, arm64_image_parse(img, IMG_LEN, &d));
	EXPECT_EQ(0x80000, d.text_offset);
	EXPECT_EQ(IMG_LEN, d.image_size);
	free(img);
}

TEST(bad_headers)
{
	struct arm64_image d;
	uint8_t *img = make_image(IMG_LEN, 0, IMG_LEN, 1); /* big-endian */

	EXPECT_EQ(-EINVAL, arm64_image_parse(img, IMG_LEN, &d));
	free(img);
	img = make_image(IMG_LEN, 0, IMG_LEN / 2, 0); /* claims less than the file */
	EXPECT_EQ(-EINVAL, arm64_image_parse(img, IMG_LEN, &d));
	free(img);
	img = make_image(IMG_LEN, 0x123, IMG_LEN, 0); /* text_offset not a page */
	EXPECT_EQ(-EINVAL, arm64_image_parse(img, IMG_LEN, &d));
	free(img);
	img = make_image(IMG_LEN, 0, IMG_LEN, 0);
	img[56] = 'X'; /* no magic */
	EXPECT_EQ(-EINVAL, arm64_image_parse(img, IMG_LEN, &d));
	EXPECT_EQ(-EINVAL, arm64_image_parse(img, 63, &d)); /* shorter than a header */
	free(img);
}

/* An EFI-stub Image: "MZ", the PE header at 0x40, two sections that together end at IMG_LEN. */
static uint8_t *make_pe_image(void)
{
	uint8_t *b = make_image(IMG_LEN, 0, 2 * IMG_LEN, 0);
	uint32_t pe = 0x40, sec;

	b[0] = 'M';
	b[1] = 'Z';
	put32(b + 60, pe);
	memset(b + pe, 0, 24 + 16 + 2 * 40);
	memcpy(b + pe, "PE\0\0", 4);
	b[pe + 6] = 2;	/* NumberOfSections */
	b[pe + 20] = 16; /* SizeOfOptionalHeader */
	sec = pe + 24 + 16;
	put32(b + sec + 16, 0x1000); /* .text: SizeOfRawData, PointerToRawData */
	put32(b + sec + 20, 0x400);
	put32(b + sec + 40 + 16, IMG_LEN - 0x1400); /* .data ends the file */
	put32(b + sec + 40 + 20, 0x1400);
	return b;
}

TEST(truncated_efi_stub_image_is_refused)
{
	struct arm64_image d;
	uint8_t *img = make_pe_image();

	ASSERT_EQ(0, arm64_image_parse(img, IMG_LEN, &d));
	EXPECT_EQ(-EINVAL, arm64_image_parse(img, IMG_LEN - 1, &d)); /* one byte short */
	EXPECT_EQ(-EINVAL, arm64_image_parse(img, 0x1000, &d));	     /* cut in .text */
	EXPECT_EQ(-EINVAL, arm64_image_parse(img, 0x60, &d));	     /* cut in the section table */
	/* a PE offset that points nowhere readable: no table to check, the header still parses */
	put32(img + 60, IMG_LEN * 4);
	EXPECT_EQ(0, arm64_image_parse(img, IMG_LEN / 2, &d));
	free(img);
}

TEST(gzip_image)
{
	uint8_t *img = make_image(IMG_LEN, 0, IMG_LEN, 0), *owned;
	size_t zlen;
	uint8_t *z = gzip_buf(img, IMG_LEN, &zlen);
	struct arm64_image d;

	ASSERT_EQ(0, arm64_kernel_decode(z, zlen, 1 << 20, &owned, &d));
	ASSERT_NE(NULL, owned);
	EXPECT_EQ(IMG_LEN, d.len);
	EXPECT_EQ(0, memcmp(d.data, img, IMG_LEN));
	free(owned);
	/* truncated stream */
	EXPECT_EQ(-EINVAL, arm64_kernel_decode(z, zlen / 2, 1 << 20, &owned, &d));
	EXPECT_EQ(NULL, owned);
	/* a decompression bomb against a small limit */
	EXPECT_EQ(-EFBIG, arm64_kernel_decode(z, zlen, IMG_LEN / 2, &owned, &d));
	free(z);
	free(img);
}

TEST(gzip_of_garbage)
{
	uint8_t junk[4096], *owned;
	size_t zlen;
	struct arm64_image d;

	for (size_t i = 0; i < sizeof(junk); i++)
		junk[i] = (uint8_t)(i * 31);
	uint8_t *z = gzip_buf(junk, sizeof(junk), &zlen);

	EXPECT_EQ(-EINVAL, arm64_kernel_decode(z, zlen, 1 << 20, &owned, &d));
	EXPECT_EQ(NULL, owned);
	free(z);
}

TEST(zboot_image)
{
	uint8_t *img = make_image(IMG_LEN, 0, IMG_LEN, 0), *owned;
	size_t zlen, blen;
	uint8_t *z = gzip_buf(img, IMG_LEN, &zlen);
	uint8_t *zb = make_zboot(z, zlen, "gzip", &blen);
	struct arm64_image d;

	ASSERT_EQ(0, arm64_kernel_decode(zb, blen, 1 << 20, &owned, &d));
	ASSERT_NE(NULL, owned);
	EXPECT_EQ(0, memcmp(d.data, img, IMG_LEN));
	free(owned);
	/* truncated file: the payload runs past its end */
	EXPECT_EQ(-EINVAL, arm64_kernel_decode(zb, 0x200 + zlen / 2, 1 << 20, &owned, &d));
	free(zb);
	/* compression vmm cannot unpack */
	zb = make_zboot(z, zlen, "zstd22", &blen);
	EXPECT_EQ(-ENOTSUP, arm64_kernel_decode(zb, blen, 1 << 20, &owned, &d));
	free(zb);
	/* says gzip, is not */
	zb = make_zboot(img, IMG_LEN, "gzip", &blen);
	EXPECT_EQ(-EINVAL, arm64_kernel_decode(zb, blen, 1 << 20, &owned, &d));
	free(zb);
	free(z);
	free(img);
}

/* --kernel-format: flat loads any bytes as they are at the default text offset; image takes a raw
 * Image only; auto is the detection above and still refuses what it cannot recognise. */
TEST(flat_binary)
{
	uint8_t junk[4096], *owned = (uint8_t *)1;
	struct arm64_image d;

	for (size_t i = 0; i < sizeof(junk); i++)
		junk[i] = (uint8_t)(i * 7 + 3);
	ASSERT_EQ(0, arm64_kernel_load(junk, sizeof(junk), 1 << 20, KERNEL_FORMAT_FLAT, &owned, &d));
	EXPECT_EQ(NULL, owned);
	EXPECT_EQ((const uint8_t *)junk, d.data);
	EXPECT_EQ(sizeof(junk), d.len);
	EXPECT_EQ(0x80000, d.text_offset);
	EXPECT_EQ(sizeof(junk), d.image_size);
	EXPECT_EQ(0, d.flags);
	EXPECT_EQ(-EINVAL, arm64_kernel_load(junk, sizeof(junk), 1 << 20, KERNEL_FORMAT_AUTO, &owned, &d));
	EXPECT_EQ(-EINVAL, arm64_kernel_load(junk, sizeof(junk), 1 << 20, KERNEL_FORMAT_IMAGE, &owned, &d));
	EXPECT_EQ(-EINVAL, arm64_kernel_load(junk, 0, 1 << 20, KERNEL_FORMAT_FLAT, &owned, &d));
	EXPECT_EQ(-E2BIG, arm64_kernel_load(junk, sizeof(junk), 1024, KERNEL_FORMAT_FLAT, &owned, &d));
}

TEST(flat_ignores_an_image_header)
{
	uint8_t *img = make_image(IMG_LEN, 0, 3 * IMG_LEN, 0), *owned;
	struct arm64_image d;

	ASSERT_EQ(0, arm64_kernel_load(img, IMG_LEN, 1 << 20, KERNEL_FORMAT_FLAT, &owned, &d));
	EXPECT_EQ(0x80000, d.text_offset);
	EXPECT_EQ(IMG_LEN, d.image_size);
	ASSERT_EQ(0, arm64_kernel_load(img, IMG_LEN, 1 << 20, KERNEL_FORMAT_IMAGE, &owned, &d));
	EXPECT_EQ(0, d.text_offset);
	EXPECT_EQ(3 * IMG_LEN, d.image_size);
	free(img);
}

TEST(image_format_takes_no_gzip)
{
	uint8_t *img = make_image(IMG_LEN, 0, IMG_LEN, 0), *owned;
	size_t zlen;
	uint8_t *z = gzip_buf(img, IMG_LEN, &zlen);
	struct arm64_image d;

	EXPECT_EQ(-EINVAL, arm64_kernel_load(z, zlen, 1 << 20, KERNEL_FORMAT_IMAGE, &owned, &d));
	EXPECT_EQ(NULL, owned);
	ASSERT_EQ(0, arm64_kernel_load(z, zlen, 1 << 20, KERNEL_FORMAT_AUTO, &owned, &d));
	EXPECT_NE(NULL, owned);
	free(owned);
	free(z);
	free(img);
}

/* The whole load into a 64 MiB guest's RAM, as the board runs it: the Image at text_offset, the
 * initrd under the top 2 MiB, the FDT's room just after the Image's image_size; a header whose
 * sizes cannot fit is refused. */
#define LOAD_RAM (64ULL << 20)

TEST(load_into_ram)
{
	static uint8_t initrd[0x1800];
	uint8_t *ram = mmap(NULL, LOAD_RAM, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	uint8_t *b = make_image(IMG_LEN, 0x100000, IMG_LEN, 2);
	struct arm64_load_in in = { .kernel = b, .kernel_len = IMG_LEN, .format = KERNEL_FORMAT_AUTO,
				    .initrd = initrd, .initrd_len = sizeof(initrd) };
	struct arm64_boot_layout l;

	ASSERT_NE(MAP_FAILED, ram);
	memset(initrd, 0x5a, sizeof(initrd));
	ASSERT_EQ(0, arm64_boot_load(ram, LOAD_RAM, &in, &l));
	EXPECT_EQ(ARM64_RAM_BASE + 0x100000, l.kernel);
	EXPECT_EQ(0, memcmp(ram + 0x100000, b, IMG_LEN));
	EXPECT_EQ(ARM64_RAM_BASE + 0x100000 + IMG_LEN, l.fdt); /* IMG_LEN: whole pages */
	EXPECT_EQ(ARM64_FDT_ROOM, l.fdt_room);
	EXPECT_EQ((LOAD_RAM - ARM64_FDT_MAX - sizeof(initrd)) & ~0xfffULL, l.initrd - ARM64_RAM_BASE);
	EXPECT_EQ(0, memcmp(ram + (l.initrd - ARM64_RAM_BASE), initrd, sizeof(initrd)));
	free(b);

	static const struct {
		const char *what;
		uint64_t text_offset, image_size;
		size_t initrd_len;
	} bad[] = {
		{ "image_size 2^64 - 1", 0, UINT64_MAX, 0 },
		{ "image_size that wraps past text_offset", 0x1ff000, UINT64_MAX - 0x1000, 0 },
		{ "image_size as big as RAM", 0, LOAD_RAM, 0 },
		{ "image into the initrd", 0x1ff000, LOAD_RAM - ARM64_FDT_MAX - 0x1ff000, 0x1000 },
		{ "initrd bigger than RAM", 0, IMG_LEN, LOAD_RAM + 1 },
		{ "initrd into the FDT", 0, IMG_LEN, LOAD_RAM - ARM64_FDT_MAX + 1 },
	};
	static uint8_t big[LOAD_RAM + 1];

	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		b = make_image(IMG_LEN, bad[i].text_offset, bad[i].image_size, 2);
		in = (struct arm64_load_in){ .kernel = b, .kernel_len = IMG_LEN,
					     .format = KERNEL_FORMAT_IMAGE,
					     .initrd = bad[i].initrd_len ? big : NULL,
					     .initrd_len = bad[i].initrd_len };
		TH_LOG("%s", bad[i].what);
		EXPECT_EQ(-E2BIG, arm64_boot_load(ram, LOAD_RAM, &in, &l));
		free(b);
	}
	/* flat binaries too: bigger than RAM is refused before the copy */
	in = (struct arm64_load_in){ .kernel = big, .kernel_len = LOAD_RAM, .format = KERNEL_FORMAT_FLAT };
	EXPECT_EQ(-E2BIG, arm64_boot_load(ram, LOAD_RAM, &in, &l));
	EXPECT_EQ(-EINVAL, arm64_boot_load(ram, ARM64_FDT_MAX, &in, &l)); /* no room under the FDT */
	munmap(ram, LOAD_RAM);
}

/*
 * Where the FDT goes: after image_size rounded up to a page, not across a 2 MiB boundary (kernels
 * before 4.2 map it with one block), the room the caller asks for; in the top 2 MiB when the Image
 * has no image_size (its BSS unknown: pre-3.17, flat) or the initrd leaves no room after it.
 */
TEST(fdt_after_the_image)
{
	uint8_t *ram = mmap(NULL, LOAD_RAM, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	struct arm64_boot_layout l;
	static uint8_t initrd[0x1000];
	static const struct {
		const char *what;
		uint64_t text_offset, image_size;
		size_t room, initrd_len;
		uint64_t fdt; /* offset into RAM; 0: the top 2 MiB */
	} cases[] = {
		{ "image_size rounded up to a page", 0, 0x5001, 0, 0, 0x6000 },
		{ "room as the caller asks", 0, 0x5001, 0x20000, 0, 0x6000 },
		{ "would cross 2 MiB: the next 2 MiB", 0, 0x1f1000, 0, 0, 0x200000 },
		{ "ends at 2 MiB exactly: stays", 0, 0x1f0000, 0x10000, 0, 0x1f0000 },
		{ "no image_size: the top", 0, 0, 0, 0, 0 },
		{ "initrd right after the image: the top", 0, LOAD_RAM - ARM64_FDT_MAX - 0x2000, 0, 0x1000, 0 },
		{ "a room above 2 MiB: the top", 0, 0x5000, ARM64_FDT_MAX + 1, 0, 0 },
	};

	ASSERT_NE(MAP_FAILED, ram);
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		uint8_t *b = make_image(IMG_LEN, cases[i].text_offset, cases[i].image_size, 2);
		struct arm64_load_in in = { .kernel = b, .kernel_len = IMG_LEN, .format = KERNEL_FORMAT_IMAGE,
					    .initrd = cases[i].initrd_len ? initrd : NULL,
					    .initrd_len = cases[i].initrd_len, .fdt_room = cases[i].room };
		uint64_t want = cases[i].fdt ? cases[i].fdt : LOAD_RAM - ARM64_FDT_MAX;

		TH_LOG("%s", cases[i].what);
		if (cases[i].image_size && cases[i].image_size < IMG_LEN)
			in.kernel_len = cases[i].image_size; /* the header's size covers the file */
		ASSERT_EQ(0, arm64_boot_load(ram, LOAD_RAM, &in, &l));
		EXPECT_EQ(ARM64_RAM_BASE + want, l.fdt);
		EXPECT_EQ(cases[i].fdt ? (cases[i].room ? cases[i].room : ARM64_FDT_ROOM) : ARM64_FDT_MAX, l.fdt_room);
		/* never over the kernel's image_size or the initrd */
		EXPECT_LE(l.kernel + l.kernel_size, l.fdt);
		if (cases[i].initrd_len && cases[i].fdt) {
			EXPECT_LE(l.fdt + l.fdt_room, l.initrd);
		} else if (cases[i].initrd_len) {
			EXPECT_LE(l.initrd + l.initrd_len, l.fdt);
		}
		free(b);
	}
	munmap(ram, LOAD_RAM);
}

/* The board's load: kernel and initrd are files, mapped but read into RAM from their fds. The
 * mappings' private copies are changed here, so the bytes in RAM show they came from the files. A
 * file that shrank after it was mapped fails the load with an error, not a short kernel. */
TEST(load_from_files)
{
	uint8_t *ram = mmap(NULL, LOAD_RAM, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	size_t klen = 3 << 20, ilen = 0x2345;
	uint8_t *b = make_image(klen, 0x80000, klen, 2), *initrd = malloc(ilen);
	int kfd = memfd_create("kernel", MFD_CLOEXEC), ifd = memfd_create("initrd", MFD_CLOEXEC);

	ASSERT_NE(MAP_FAILED, ram);
	ASSERT_NE(NULL, initrd);
	memset(initrd, 0x3c, ilen);
	ASSERT_EQ((ssize_t)klen, pwrite(kfd, b, klen, 0));
	ASSERT_EQ((ssize_t)ilen, pwrite(ifd, initrd, ilen, 0));
	uint8_t *km = mmap(NULL, klen, PROT_READ | PROT_WRITE, MAP_PRIVATE, kfd, 0);
	uint8_t *im = mmap(NULL, ilen, PROT_READ | PROT_WRITE, MAP_PRIVATE, ifd, 0);

	ASSERT_NE(MAP_FAILED, km);
	ASSERT_NE(MAP_FAILED, im);
	memset(km + 4096, 0xee, klen - 4096); /* past the header: the parse still reads the mapping */
	memset(im, 0xee, ilen);
	struct mapped_file kf = { km, klen, kfd }, inf = { im, ilen, ifd };
	struct arm64_load_in in = { .kernel = km, .kernel_len = klen, .format = KERNEL_FORMAT_AUTO,
				    .initrd = im, .initrd_len = ilen, .kernel_file = &kf, .initrd_file = &inf };
	struct arm64_boot_layout l;

	ASSERT_EQ(0, arm64_boot_load(ram, LOAD_RAM, &in, &l));
	EXPECT_EQ(0, memcmp(ram + 0x80000, b, klen));
	EXPECT_EQ(0, memcmp(ram + (l.initrd - ARM64_RAM_BASE), initrd, ilen));

	ASSERT_EQ(0, ftruncate(kfd, 1 << 20)); /* the kernel file shrank under vmm */
	EXPECT_EQ(-ENODATA, arm64_boot_load(ram, LOAD_RAM, &in, &l));
	ASSERT_EQ((ssize_t)klen, pwrite(kfd, b, klen, 0));
	ASSERT_EQ(0, ftruncate(ifd, 16)); /* and the initrd */
	EXPECT_EQ(-ENODATA, arm64_boot_load(ram, LOAD_RAM, &in, &l));
	munmap(km, klen);
	munmap(im, ilen);
	close(kfd);
	close(ifd);
	free(b);
	free(initrd);
	munmap(ram, LOAD_RAM);
}

/* Image.gz and EFI zboot inflate straight into guest RAM at text_offset, no copy between; the
 * exact fit (stream as long as image_size) loads, a stream longer than its header's image_size or
 * than the room under the initrd is refused without a byte past that room written. */
TEST(gzip_inflates_into_ram)
{
	uint8_t *ram = mmap(NULL, LOAD_RAM, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	struct arm64_boot_layout l;
	size_t zlen, zblen;

	ASSERT_NE(MAP_FAILED, ram);
	for (int with_bss = 0; with_bss < 2; with_bss++) {
		uint8_t *b = make_image(IMG_LEN, 0x100000, IMG_LEN + with_bss * 0x3000, 2);
		uint8_t *z = gzip_buf(b, IMG_LEN, &zlen), *zb = make_zboot(z, zlen, "gzip", &zblen);
		struct arm64_load_in in = { .kernel = z, .kernel_len = zlen, .format = KERNEL_FORMAT_AUTO };

		memset(ram, 0xee, 0x200000);
		ASSERT_EQ(0, arm64_boot_load(ram, LOAD_RAM, &in, &l));
		EXPECT_EQ(ARM64_RAM_BASE + 0x100000, l.kernel);
		EXPECT_EQ(IMG_LEN + with_bss * 0x3000, l.kernel_size);
		EXPECT_EQ(0, memcmp(ram + 0x100000, b, IMG_LEN));
		memset(ram + 0x100000, 0, IMG_LEN);
		in = (struct arm64_load_in){ .kernel = zb, .kernel_len = zblen, .format = KERNEL_FORMAT_AUTO };
		ASSERT_EQ(0, arm64_boot_load(ram, LOAD_RAM, &in, &l));
		EXPECT_EQ(0, memcmp(ram + 0x100000, b, IMG_LEN));
		free(zb);
		free(z);
		free(b);
	}
	/* the header says 4 KiB, the stream has 8: corrupt, and nothing after the 4 KiB written */
	uint8_t *b = make_image(IMG_LEN, 0, 4096, 2), *z = gzip_buf(b, IMG_LEN, &zlen);
	struct arm64_load_in in = { .kernel = z, .kernel_len = zlen, .format = KERNEL_FORMAT_AUTO };

	memset(ram, 0xee, 0x10000);
	EXPECT_EQ(-EINVAL, arm64_boot_load(ram, LOAD_RAM, &in, &l));
	EXPECT_EQ(0xee, ram[4096]);
	free(z);
	free(b);
	/* no image_size (pre-3.17: text_offset 0x80000), 1 MiB of stream in a 3 MiB guest: the
	 * room under the FDT's 2 MiB ends at 1 MiB, so 0.5 MiB fit and the rest is refused */
	size_t big = 1 << 20;

	b = make_image(big, 0, 0, 0);
	z = gzip_buf(b, big, &zlen);
	in = (struct arm64_load_in){ .kernel = z, .kernel_len = zlen, .format = KERNEL_FORMAT_AUTO };
	memset(ram, 0xee, 3 << 20);
	EXPECT_EQ(-EFBIG, arm64_boot_load(ram, 3 << 20, &in, &l));
	EXPECT_EQ(0xee, ram[1 << 20]);
	EXPECT_EQ(0, memcmp(ram + 0x80000, b, 0x80000)); /* what fitted went straight in */
	/* a truncated stream: corrupt, said so */
	in.kernel_len = zlen / 2;
	EXPECT_EQ(-EINVAL, arm64_boot_load(ram, LOAD_RAM, &in, &l));
	free(z);
	free(b);
	munmap(ram, LOAD_RAM);
}

TEST_HARNESS_MAIN
