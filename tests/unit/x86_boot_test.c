// SPDX-License-Identifier: MIT
/* x86 boot: bzImage setup headers (synthetic, corrupt, and Debian's amd64 vmlinuz when the lab's
 * cache has it), the zero page a 64-bit loader builds, and the e820 map. */
#include <asm/bootparam.h>
#include <asm/e820.h>
#include <errno.h>
#include <glob.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

#include "kselftest_harness.h"
#include "x86/x86.h"

#define SETUP_SECTS 7
#define KERNEL_LEN (64 * 1024)
#define FILE_LEN ((SETUP_SECTS + 1) * 512 + KERNEL_LEN)

/* A bzImage as the kernel's build lays out its header (boot.rst), protocol 2.15. */
static uint8_t *make_bzimage(void)
{
	uint8_t *b = calloc(1, FILE_LEN);
	struct setup_header h = {
		.setup_sects = SETUP_SECTS,
		.syssize = KERNEL_LEN / 16,
		.boot_flag = 0xaa55,
		.jump = 0x66eb, /* jmp +0x66: the header ends at 0x202 + 0x66 = 0x268 */
		.header = 0x53726448,
		.version = 0x020f,
		.loadflags = LOADED_HIGH | CAN_USE_HEAP,
		.code32_start = 0x100000,
		.heap_end_ptr = 0xfe00,
		.initrd_addr_max = 0x7fffffff,
		.kernel_alignment = 0x200000,
		.relocatable_kernel = 1,
		.min_alignment = 21,
		.xloadflags = XLF_KERNEL_64 | XLF_CAN_BE_LOADED_ABOVE_4G,
		.cmdline_size = 2047,
		.payload_offset = 0x400,
		.payload_length = 0x8000,
		.pref_address = 0x1000000,
		.init_size = 0x2000000,
	};

	memcpy(b + offsetof(struct boot_params, hdr), &h, sizeof(h));
	for (size_t i = (SETUP_SECTS + 1) * 512; i < FILE_LEN; i++)
		b[i] = (uint8_t)(i * 7);
	return b;
}

static struct setup_header *hdr(uint8_t *b)
{
	return (struct setup_header *)(b + offsetof(struct boot_params, hdr));
}

TEST(synthetic_bzimage)
{
	uint8_t *b = make_bzimage();
	struct x86_bzimage img;

	ASSERT_EQ(0, x86_bzimage_parse(b, FILE_LEN, &img));
	EXPECT_EQ(b, img.setup);
	EXPECT_EQ((SETUP_SECTS + 1) * 512, img.setup_len);
	EXPECT_EQ(b + (SETUP_SECTS + 1) * 512, img.kernel);
	EXPECT_EQ(KERNEL_LEN, img.kernel_len);
	EXPECT_EQ(0x020f, img.version);
	EXPECT_TRUE(img.relocatable);
	EXPECT_EQ(0x1000000, img.pref_address);
	EXPECT_EQ(0x2000000, img.init_size);
	EXPECT_EQ(2047, img.cmdline_size);
	EXPECT_EQ(0x1000200, x86_bzimage_entry64(img.pref_address));
	/* setup_sects 0 means 4 */
	hdr(b)->setup_sects = 0;
	ASSERT_EQ(0, x86_bzimage_parse(b, FILE_LEN, &img));
	EXPECT_EQ(5 * 512, img.setup_len);
	free(b);
}

/* Each corruption on its own is refused. */
TEST(corrupt_bzimages)
{
	struct x86_bzimage img;
#define FIELD(f, v) offsetof(struct setup_header, f), sizeof(((struct setup_header *)0)->f), v
	static const struct {
		const char *what;
		size_t off, size;
		uint64_t value;
	} cases[] = {
		{ "no boot flag", FIELD(boot_flag, 0) },
		{ "no HdrS", FIELD(header, 0x53726449) },
		{ "protocol 2.11", FIELD(version, 0x020b) },
		{ "32-bit only", FIELD(xloadflags, 0) },
		{ "zImage", FIELD(loadflags, 0) },
		{ "setup past end", FIELD(setup_sects, 200) },
		{ "syssize past end", FIELD(syssize, KERNEL_LEN) },
		{ "payload past end", FIELD(payload_length, KERNEL_LEN) },
		{ "alignment not 2^n", FIELD(kernel_alignment, 0x300000) },
		{ "pref_address low", FIELD(pref_address, 0x1000) },
		{ "pref_address unaligned", FIELD(pref_address, 0x1000010) },
		{ "init_size into hole", FIELD(init_size, 0xc0000000) },
		{ "init_size < kernel", FIELD(init_size, 0x1000) },
		{ "cmdline_size 0", FIELD(cmdline_size, 0) },
		/* 2^64 - 64 KiB + 32 MiB wraps to just under 32 MiB: inside RAM by a sum, nowhere really */
		{ "pref_address + init_size wraps", FIELD(pref_address, 0xffffffffffff0000ULL) },
	};
#undef FIELD

	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		uint8_t *b = make_bzimage();

		/* little-endian fields: the value's low bytes */
		memcpy((uint8_t *)hdr(b) + cases[i].off, &cases[i].value, cases[i].size);
		TH_LOG("%s", cases[i].what);
		EXPECT_EQ(-EINVAL, x86_bzimage_parse(b, FILE_LEN, &img));
		free(b);
	}
	uint8_t *b = make_bzimage();

	EXPECT_EQ(-EINVAL, x86_bzimage_parse(b, 0x260, &img)); /* shorter than the header */
	EXPECT_EQ(-EINVAL, x86_bzimage_parse(b, (SETUP_SECTS + 1) * 512, &img)); /* no kernel */
	EXPECT_EQ(-EINVAL, x86_bzimage_parse(b, FILE_LEN - 16, &img)); /* truncated by syssize */
	free(b);
}

/* Debian's amd64 kernel, which the x86 lab boots (scripts/fetch.sh lab-x86 puts it in .cache). */
TEST(debian_vmlinuz)
{
	struct x86_bzimage img;
	glob_t g;
	uint8_t *buf;
	long len;
	FILE *f;

	if (glob(".cache/lab/x86/pkg/boot/vmlinuz-*", 0, NULL, &g) || !g.gl_pathc)
		SKIP(return, "no Debian amd64 vmlinuz in .cache/lab/x86 (scripts/fetch.sh lab-x86)");
	f = fopen(g.gl_pathv[0], "rb");
	ASSERT_NE(NULL, f);
	fseek(f, 0, SEEK_END);
	len = ftell(f);
	rewind(f);
	buf = malloc(len);
	ASSERT_EQ(1, fread(buf, len, 1, f));
	fclose(f);
	TH_LOG("%s", g.gl_pathv[0]);
	ASSERT_EQ(0, x86_bzimage_parse(buf, len, &img));
	EXPECT_GE(img.version, 0x020f); /* 6.12 speaks 2.15 */
	EXPECT_TRUE(img.xloadflags & XLF_KERNEL_64);
	EXPECT_TRUE(img.relocatable);
	EXPECT_EQ(0x1000000, img.pref_address); /* CONFIG_PHYSICAL_START */
	EXPECT_EQ(0x200000, img.kernel_alignment);
	EXPECT_GT(img.init_size, img.kernel_len);
	EXPECT_EQ(2047, img.cmdline_size);
	/* a truncated copy of the real file is refused */
	EXPECT_EQ(-EINVAL, x86_bzimage_parse(buf, len / 2, &img));
	free(buf);
	globfree(&g);
}

/* The whole load into a 64 MiB guest's RAM, as the board runs it: what the file says goes where
 * the protocol puts it, and a header whose sizes lie is refused before anything is copied. */
#define LOAD_RAM (64ULL << 20)

struct loaded {
	struct x86_low_ram ram;
	struct x86_mp_desc mp;
	struct x86_load_in in;
};

static void load_setup(struct loaded *l, uint8_t *file, size_t len)
{
	l->ram.hva = mmap(NULL, LOAD_RAM, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	l->ram.size = LOAD_RAM;
	l->mp = (struct x86_mp_desc){ .nr_cpus = 2 };
	l->in = (struct x86_load_in){ .kernel = file, .kernel_len = len, .params = "console=ttyS0",
				      .mem_size = LOAD_RAM, .mp = &l->mp };
}

TEST(load_into_ram)
{
	static uint8_t initrd[0x3000];
	uint8_t *b = make_bzimage();
	struct loaded l;
	uint64_t entry = 0;

	hdr(b)->pref_address = 0x1000000;
	hdr(b)->init_size = 0x1000000;
	load_setup(&l, b, FILE_LEN);
	ASSERT_NE(MAP_FAILED, l.ram.hva);
	memset(initrd, 0x5a, sizeof(initrd));
	l.in.initrd = initrd;
	l.in.initrd_len = sizeof(initrd);
	ASSERT_EQ(0, x86_boot_load(&l.ram, &l.in, &entry));
	EXPECT_EQ(0x1000200, entry);
	EXPECT_EQ(0, memcmp(l.ram.hva + 0x1000000, b + (SETUP_SECTS + 1) * 512, KERNEL_LEN));
	EXPECT_STREQ("reboot=k console=ttyS0", (char *)l.ram.hva + X86_CMDLINE_ADDR);
	struct boot_params *bp = (struct boot_params *)(l.ram.hva + X86_ZERO_PAGE_ADDR);

	/* the initrd as high as RAM goes, page-aligned, and above what the kernel unpacks into */
	EXPECT_EQ(LOAD_RAM - sizeof(initrd), bp->hdr.ramdisk_image);
	EXPECT_EQ(sizeof(initrd), bp->hdr.ramdisk_size);
	EXPECT_EQ(0, memcmp(l.ram.hva + bp->hdr.ramdisk_image, initrd, sizeof(initrd)));
	munmap(l.ram.hva, LOAD_RAM);
	free(b);
}

TEST(load_refuses_hostile_headers)
{
	static const struct {
		const char *what;
		uint64_t pref_address;
		uint32_t init_size, initrd_addr_max, cmdline_size;
		size_t initrd_len;
		int err;
	} cases[] = {
		/* the sum wraps to 0x1000: past every check, and the copy went to a NULL host address */
		{ "pref_address + init_size wraps", 0xffffffffffff0000ULL, 0x20000, 0x7fffffff, 2047, 0,
		  -EINVAL },
		{ "the same wrap with an initrd", 0xffffffffffff0000ULL, 0x20000, 0x7fffffff, 2047,
		  0x1000, -EINVAL },
		{ "wraps to exactly 0", 0xfffffffffff00000ULL, 0x100000, 0x7fffffff, 2047, 0, -EINVAL },
		{ "kernel past the end of RAM", 0x3000000, 0x2000000, 0x7fffffff, 2047, 0, -E2BIG },
		{ "initrd_addr_max below the kernel", 0x1000000, 0x1000000, 0xfff, 2047, 0x1000, -E2BIG },
		{ "initrd_addr_max 4 GiB - 1", 0x1000000, 0x1000000, 0xffffffff, 2047, 0x1000, 0 },
		{ "initrd bigger than RAM", 0x1000000, 0x1000000, 0x7fffffff, 2047, LOAD_RAM + 1, -E2BIG },
		{ "command line longer than cmdline_size", 0x1000000, 0x1000000, 0x7fffffff, 8, 0,
		  -EINVAL },
	};
	static uint8_t initrd[LOAD_RAM + 1] __attribute__((aligned(4096)));

	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		uint8_t *b = make_bzimage();
		struct loaded l;
		uint64_t entry;

		hdr(b)->pref_address = cases[i].pref_address;
		hdr(b)->init_size = cases[i].init_size;
		hdr(b)->initrd_addr_max = cases[i].initrd_addr_max;
		hdr(b)->cmdline_size = cases[i].cmdline_size;
		load_setup(&l, b, FILE_LEN);
		ASSERT_NE(MAP_FAILED, l.ram.hva);
		l.in.initrd = cases[i].initrd_len ? initrd : NULL;
		l.in.initrd_len = cases[i].initrd_len;
		TH_LOG("%s", cases[i].what);
		EXPECT_EQ(cases[i].err, x86_boot_load(&l.ram, &l.in, &entry));
		munmap(l.ram.hva, LOAD_RAM);
		free(b);
	}
}

TEST(e820_small_and_large)
{
	struct x86_e820_entry m[X86_E820_MAX];
	unsigned int n = x86_e820_build(512ULL << 20, m);

	ASSERT_EQ(4, n);
	EXPECT_EQ(0, m[0].addr);
	EXPECT_EQ(X86_LOWMEM_END, m[0].size);
	EXPECT_EQ(E820_RAM, m[0].type);
	EXPECT_EQ(X86_LOWMEM_END, m[1].addr);
	EXPECT_EQ(X86_HIGHMEM_BASE, m[1].addr + m[1].size);
	EXPECT_EQ(E820_RESERVED, m[1].type);
	EXPECT_EQ(X86_HIGHMEM_BASE, m[2].addr);
	EXPECT_EQ(512ULL << 20, m[2].addr + m[2].size);
	EXPECT_EQ(E820_RAM, m[2].type);
	EXPECT_EQ(X86_PCI_MMCONFIG_BASE, m[3].addr);
	EXPECT_EQ(E820_RESERVED, m[3].type);
	EXPECT_EQ(512ULL << 20, x86_ram_end(512ULL << 20));

	/* 4 GiB: 3 GiB below the hole, 1 GiB from 4 GiB */
	n = x86_e820_build(4ULL << 30, m);
	ASSERT_EQ(5, n);
	EXPECT_EQ(X86_MMIO_HOLE, m[2].addr + m[2].size);
	EXPECT_EQ(X86_4G, m[4].addr);
	EXPECT_EQ(1ULL << 30, m[4].size);
	EXPECT_EQ(E820_RAM, m[4].type);
	EXPECT_EQ(5ULL << 30, x86_ram_end(4ULL << 30));
	/* no overlaps, address order */
	for (unsigned int i = 1; i < n; i++)
		EXPECT_LE(m[i - 1].addr + m[i - 1].size, m[i].addr);
}

TEST(zero_page)
{
	uint8_t *b = make_bzimage();
	uint8_t zp[X86_ZERO_PAGE_SIZE];
	struct boot_params *bp = (struct boot_params *)zp;
	struct x86_bzimage img;
	struct x86_boot_args a = { .ram_size = 1ULL << 30, .cmdline_gpa = 0x20000,
				   .cmdline_len = 30, .initrd_gpa = 0x3f000000,
				   .initrd_len = 0x100000, .acpi_rsdp = X86_ACPI_BASE };

	ASSERT_EQ(0, x86_bzimage_parse(b, FILE_LEN, &img));
	memset(zp, 0xa5, sizeof(zp));
	ASSERT_EQ(0, x86_boot_params_build(zp, &img, &a));
	/* the image's header is copied, then the loader's fields */
	EXPECT_EQ(0x53726448, bp->hdr.header);
	EXPECT_EQ(0x020f, bp->hdr.version);
	EXPECT_EQ(0xaa55, bp->hdr.boot_flag);
	EXPECT_EQ(0x1000000, bp->hdr.pref_address);
	EXPECT_EQ(0xff, bp->hdr.type_of_loader);
	EXPECT_EQ(LOADED_HIGH, bp->hdr.loadflags); /* CAN_USE_HEAP cleared: no real-mode code */
	EXPECT_EQ(0x20000, bp->hdr.cmd_line_ptr);
	EXPECT_EQ(0x3f000000, bp->hdr.ramdisk_image);
	EXPECT_EQ(0x100000, bp->hdr.ramdisk_size);
	EXPECT_EQ(0, bp->ext_ramdisk_image);
	EXPECT_EQ(X86_ACPI_BASE, bp->acpi_rsdp_addr);
	EXPECT_EQ(0, bp->sentinel); /* the rest is zeroed, not left as it was */
	EXPECT_EQ(0, bp->screen_info.orig_video_isVGA);
	ASSERT_EQ(4, bp->e820_entries);
	EXPECT_EQ(X86_HIGHMEM_BASE, bp->e820_table[2].addr);
	EXPECT_EQ((1ULL << 30) - X86_HIGHMEM_BASE, bp->e820_table[2].size);
	EXPECT_EQ(E820_RAM, bp->e820_table[2].type);

	/* no initrd: both fields 0 */
	a.initrd_len = 0;
	ASSERT_EQ(0, x86_boot_params_build(zp, &img, &a));
	EXPECT_EQ(0, bp->hdr.ramdisk_image);
	EXPECT_EQ(0, bp->hdr.ramdisk_size);
	free(b);
}

TEST(zero_page_refusals)
{
	uint8_t *b = make_bzimage();
	uint8_t zp[X86_ZERO_PAGE_SIZE];
	struct x86_bzimage img;
	struct x86_boot_args a = { .ram_size = 1ULL << 30, .cmdline_gpa = 0x20000,
				   .cmdline_len = 2048 };

	ASSERT_EQ(0, x86_bzimage_parse(b, FILE_LEN, &img));
	EXPECT_EQ(-EINVAL, x86_boot_params_build(zp, &img, &a)); /* longer than cmdline_size */
	a.cmdline_len = 10;
	a.initrd_gpa = 0x7ff00000;
	a.initrd_len = 0x200000; /* ends past initrd_addr_max */
	EXPECT_EQ(-EINVAL, x86_boot_params_build(zp, &img, &a));
	a.initrd_len = 0;
	a.ram_size = 32ULL << 20; /* less than pref_address + init_size */
	EXPECT_EQ(-EINVAL, x86_boot_params_build(zp, &img, &a));
	free(b);
}

TEST_HARNESS_MAIN
