// SPDX-License-Identifier: MIT
/* Seeds of the kernel loaders: arm64 Image (plain, gzip, zboot, flat) and x86 bzImage. */
#include <asm/bootparam.h>
#include <stdlib.h>
#include <zlib.h>

#include "tests/fuzz/seeds.h"

static size_t gzip(const uint8_t *in, size_t n, uint8_t *out, size_t cap)
{
	z_stream z = { 0 };

	if (deflateInit2(&z, 9, Z_DEFLATED, 16 + MAX_WBITS, 8, Z_DEFAULT_STRATEGY) != Z_OK)
		abort();
	z.next_in = (uint8_t *)in;
	z.avail_in = n;
	z.next_out = out;
	z.avail_out = cap;
	if (deflate(&z, Z_FINISH) != Z_STREAM_END)
		abort();
	deflateEnd(&z);
	return z.total_out;
}

void seeds_kernel(void)
{
	static uint8_t img[4096], gz[8192];
	struct out o = { 0 };
	uint64_t text = 0, size = sizeof(img);

	memcpy(img + 8, &text, 8);
	memcpy(img + 16, &size, 8);
	memcpy(img + 24, &(uint64_t){ 2 }, 8); /* 4K pages */
	memcpy(img + 56, "ARM\x64", 4);
	put(&o, 0, 1), putb(&o, img, sizeof(img));
	seed_save("kernel", "image", &o);
	size_t n = gzip(img, sizeof(img), gz, sizeof(gz));

	o.n = 0;
	put(&o, 0, 1), putb(&o, gz, n);
	seed_save("kernel", "image-gz", &o);
	uint8_t hdr[64] = { 'M', 'Z', 0, 0, 'z', 'i', 'm', 'g' };
	uint32_t off = sizeof(hdr), len = n;

	memcpy(hdr + 8, &off, 4);
	memcpy(hdr + 12, &len, 4);
	memcpy(hdr + 24, "gzip", 4);
	o.n = 0;
	put(&o, 0, 1), putb(&o, hdr, sizeof(hdr)), putb(&o, gz, n);
	seed_save("kernel", "zboot", &o);
	o.n = 0;
	put(&o, 2, 1), putb(&o, "\x00\x00\x00\x14", 4); /* flat: b . */
	seed_save("kernel", "flat", &o);
	/* an image_size that wraps past 2^64 from text_offset: it must be refused, not "fit" */
	text = 0x1ff000, size = UINT64_MAX - 0x1000;
	memcpy(img + 8, &text, 8);
	memcpy(img + 16, &size, 8);
	o.n = 0;
	put(&o, 1, 1), putb(&o, img, sizeof(img));
	seed_save("kernel", "image-size-wraps", &o);
}

/* A minimal bzImage (protocol 2.15, 64-bit entry, one page of kernel): loadable as it is, and the
 * same with pref_address + init_size wrapping past 2^64 to a small number, which once passed the
 * checks and sent the kernel's copy to a host address outside guest RAM. */
void seeds_bzimage(void)
{
	static uint8_t b[5 * 512 + 4096];
	struct setup_header h = {
		.setup_sects = 4, .syssize = 4096 / 16, .boot_flag = 0xaa55, .jump = 0x66eb,
		.header = 0x53726448, .version = 0x020f, .loadflags = LOADED_HIGH,
		.initrd_addr_max = 0x7fffffff, .kernel_alignment = 0x200000, .relocatable_kernel = 1,
		.xloadflags = XLF_KERNEL_64, .cmdline_size = 2047, .pref_address = 0x1000000,
		.init_size = 0x2000,
	};
	struct out o = { 0 };

	memcpy(b + offsetof(struct boot_params, hdr), &h, sizeof(h));
	putb(&o, b, sizeof(b));
	seed_save("bzimage", "minimal", &o);
	h.pref_address = 0xfffffffffffff000ULL;
	memcpy(b + offsetof(struct boot_params, hdr), &h, sizeof(h));
	o.n = 0;
	putb(&o, b, sizeof(b));
	seed_save("bzimage", "pref-wrap", &o);
}
