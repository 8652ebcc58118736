// SPDX-License-Identifier: MIT
/*
 * arm64 kernel images (Documentation/arch/arm64/booting.rst): a raw Image with its 64-byte header,
 * a gzip-compressed Image.gz (zlib), or an EFI zboot image whose gzip payload is a raw Image.
 * Every size comes from the file and is checked against the file and the caller's limit.
 */
#include <errno.h>
#include <limits.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <zlib.h>

#include "arm64/arm64.h"
#include "core/log.h"

#define IMAGE_MAGIC 0x644d5241u /* "ARM\x64", little-endian, at offset 56 */
#define IMAGE_HDR_SIZE 64
#define ZBOOT_HDR_MIN 0x40
/* Where a kernel without image_size (and so a flat binary) goes: booting.rst's old default. */
#define FLAT_TEXT_OFFSET 0x80000

static uint32_t le32(const uint8_t *p)
{
	return p[0] | p[1] << 8 | p[2] << 16 | (uint32_t)p[3] << 24;
}

static uint64_t le64(const uint8_t *p)
{
	return le32(p) | (uint64_t)le32(p + 4) << 32;
}

/*
 * An EFI-stub Image (booting.rst: "MZ" in code0, the PE header's offset at 60) lists its file's
 * extent in its PE/COFF section table: a copy cut short (an interrupted download or copy) is
 * refused here rather than booted into a hang. Images without the stub have no such table.
 */
static int image_check_pe_extent(const uint8_t *buf, size_t len)
{
	if (buf[0] != 'M' || buf[1] != 'Z')
		return 0;
	uint32_t pe = le32(buf + 60);

	if (pe < IMAGE_HDR_SIZE || pe > len || len - pe < 24 || memcmp(buf + pe, "PE\0\0", 4))
		return 0; /* not a PE header we can read: the checks below still apply */
	unsigned int nsec = buf[pe + 6] | buf[pe + 7] << 8;
	unsigned int opt = buf[pe + 20] | buf[pe + 21] << 8;
	uint64_t sec = (uint64_t)pe + 24 + opt, end = 0;

	for (unsigned int i = 0; i < nsec && i < 96; i++, sec += 40) {
		if (sec + 40 > len) {
			pr_err("kernel: the file ends inside its PE/COFF section table (%zu bytes): "
			       "the Image is truncated; copy it again", len);
			return -EINVAL;
		}
		uint64_t e = (uint64_t)le32(buf + sec + 20) + le32(buf + sec + 16);

		if (e > end)
			end = e;
	}
	if (end > len) {
		pr_err("kernel: the Image is truncated: its PE/COFF sections end at byte %llu but the "
		       "file has %zu; copy it again", (unsigned long long)end, len);
		return -EINVAL;
	}
	return 0;
}

int arm64_image_parse(const uint8_t *buf, size_t len, struct arm64_image *img)
{
	if (len < IMAGE_HDR_SIZE) {
		pr_err("kernel: %zu bytes is too short for an arm64 Image (the header alone is 64)", len);
		return -EINVAL;
	}
	if (le32(buf + 56) != IMAGE_MAGIC) {
		pr_err("kernel: not an arm64 Image (no \"ARM\\x64\" magic at offset 56); vmm takes a raw "
		       "Image, Image.gz or an EFI zboot vmlinuz; for a bare-metal flat binary (no header), "
		       "pass --kernel-format flat");
		return -EINVAL;
	}
	if (image_check_pe_extent(buf, len) < 0)
		return -EINVAL;
	img->text_offset = le64(buf + 8);
	img->image_size = le64(buf + 16);
	img->flags = le64(buf + 24);
	if (img->flags & 1) {
		pr_err("kernel: big-endian Image (flags bit 0): vmm runs little-endian guests only");
		return -EINVAL;
	}
	/* image_size 0 means a pre-3.17 kernel: text_offset is then 0x80000 and the size unknown. */
	img->sized = img->image_size != 0;
	if (img->image_size == 0) {
		img->text_offset = FLAT_TEXT_OFFSET;
		img->image_size = len;
	}
	if (img->image_size < len) {
		pr_err("kernel: Image header says %llu bytes but the file has %zu: corrupt header",
		       (unsigned long long)img->image_size, len);
		return -EINVAL;
	}
	if (img->text_offset >= (2ULL << 20) || img->text_offset % 4096) {
		pr_err("kernel: text_offset 0x%llx is not a page offset inside 2 MiB",
		       (unsigned long long)img->text_offset);
		return -EINVAL;
	}
	img->data = buf;
	img->len = len;
	return 0;
}

/* Inflates a gzip stream into a new buffer, refusing to grow past max_out. */
static int gunzip(const uint8_t *in, size_t in_len, size_t max_out, uint8_t **out, size_t *out_len)
{
	z_stream z = { .next_in = (uint8_t *)in, .avail_in = in_len };
	size_t cap = in_len * 4 < max_out ? in_len * 4 : max_out;
	uint8_t *buf = malloc(cap);
	int r;

	if (!buf || inflateInit2(&z, 16 + MAX_WBITS) != Z_OK) {
		free(buf);
		return -ENOMEM;
	}
	do {
		if (z.total_out == cap) {
			if (cap == max_out) {
				pr_err("kernel: the decompressed image is larger than the %zu-byte limit: "
				       "refusing", max_out);
				r = Z_MEM_ERROR;
				break;
			}
			cap = cap * 2 < max_out ? cap * 2 : max_out;
			uint8_t *nb = realloc(buf, cap);

			if (!nb) {
				r = Z_MEM_ERROR;
				break;
			}
			buf = nb;
		}
		z.next_out = buf + z.total_out;
		z.avail_out = cap - z.total_out;
		r = inflate(&z, Z_NO_FLUSH);
	} while (r == Z_OK);
	*out_len = z.total_out;
	inflateEnd(&z);
	if (r != Z_STREAM_END) {
		if (r != Z_MEM_ERROR)
			pr_err("kernel: the gzip data is corrupt or truncated (zlib: %s)",
			       z.msg ? z.msg : "unexpected end");
		free(buf);
		return r == Z_MEM_ERROR ? -EFBIG : -EINVAL;
	}
	*out = buf;
	return 0;
}

int arm64_kernel_gzip(const uint8_t *buf, size_t len, const uint8_t **gz, size_t *gz_len)
{
	if (len >= 2 && buf[0] == 0x1f && buf[1] == 0x8b) {
		*gz = buf;
		*gz_len = len;
		return 1;
	}
	if (len >= ZBOOT_HDR_MIN && buf[0] == 'M' && buf[1] == 'Z' && !memcmp(buf + 4, "zimg", 4)) {
		uint32_t off = le32(buf + 8), size = le32(buf + 12);
		char comp[33];

		memcpy(comp, buf + 24, 32);
		comp[32] = 0;
		if (off > len || size > len - off) {
			pr_err("kernel: EFI zboot payload (offset %u, size %u) runs past the %zu-byte file: "
			       "truncated image", off, size, len);
			return -EINVAL;
		}
		if (strcmp(comp, "gzip")) {
			pr_err("kernel: EFI zboot image compressed with '%s': vmm unpacks gzip only; "
			       "pass the raw Image instead", comp);
			return -ENOTSUP;
		}
		if (size < 2 || buf[off] != 0x1f || buf[off + 1] != 0x8b) {
			pr_err("kernel: EFI zboot payload says gzip but has no gzip header: corrupt image");
			return -EINVAL;
		}
		*gz = buf + off;
		*gz_len = size;
		return 1;
	}
	return 0;
}

int arm64_kernel_decode(const uint8_t *buf, size_t len, size_t max_out, uint8_t **owned,
			struct arm64_image *img)
{
	const uint8_t *gz;
	size_t gz_len, out_len;
	int r = arm64_kernel_gzip(buf, len, &gz, &gz_len);

	*owned = NULL;
	if (r <= 0)
		return r < 0 ? r : arm64_image_parse(buf, len, img);
	if ((r = gunzip(gz, gz_len, max_out, owned, &out_len)) < 0)
		return r;
	r = arm64_image_parse(*owned, out_len, img);
	if (r < 0) {
		free(*owned);
		*owned = NULL;
	}
	return r;
}

/* inflate() until out is full or the stream ends: Z_OK (full) or Z_STREAM_END, else zlib's error. */
static int inflate_into(z_stream *z, uint8_t *out, size_t len)
{
	int r = Z_OK;

	z->next_out = out;
	z->avail_out = len;
	while (r == Z_OK && z->avail_out)
		r = inflate(z, Z_NO_FLUSH);
	return r == Z_BUF_ERROR && !z->avail_in ? Z_DATA_ERROR : r; /* input ran out: truncated */
}

int arm64_kernel_inflate(const uint8_t *gz, size_t gz_len, uint8_t *ram, uint64_t room, size_t max_out,
			 struct arm64_image *img)
{
	z_stream z = { .next_in = (uint8_t *)gz, .avail_in = gz_len };
	uint8_t hdr[IMAGE_HDR_SIZE];
	struct arm64_image h;
	int r;

	if (gz_len > UINT_MAX || inflateInit2(&z, 16 + MAX_WBITS) != Z_OK)
		return -ENOMEM;
	r = inflate_into(&z, hdr, sizeof(hdr));
	if (r != Z_OK && r != Z_STREAM_END)
		goto corrupt;
	/* the header alone: a short stream or no magic is refused here, with the parse's words */
	int e = arm64_image_parse(hdr, z.total_out, &h);

	if (e < 0) {
		inflateEnd(&z);
		return e;
	}
	uint64_t koff = h.text_offset, cap = room > koff ? room - koff : 0;

	if (cap > max_out)
		cap = max_out;
	if (cap > UINT_MAX) /* zlib counts avail_out in an unsigned int */
		cap = UINT_MAX;
	if (h.sized && h.image_size < cap)
		cap = h.image_size; /* a stream longer than its header says is a corrupt header */
	*img = h;
	if ((h.sized && h.image_size > cap) || cap < sizeof(hdr) || (h.sized && koff + h.image_size > room)) {
		inflateEnd(&z);
		return -E2BIG;
	}
	memcpy(ram + koff, hdr, sizeof(hdr));
	if (r == Z_OK)
		r = inflate_into(&z, ram + koff + sizeof(hdr), cap - sizeof(hdr));
	if (r == Z_OK) { /* full: the stream may still end here (its trailer), or go on */
		uint8_t extra;

		z.next_out = &extra;
		z.avail_out = 1;
		while (r == Z_OK && z.avail_out)
			r = inflate(&z, Z_NO_FLUSH);
		if (r == Z_STREAM_END && !z.avail_out)
			r = Z_OK; /* a byte more than room: Z_OK below says so */
		else if (r == Z_BUF_ERROR)
			r = Z_DATA_ERROR;
	}
	if (r == Z_OK) { /* room for cap bytes and the stream goes on */
		inflateEnd(&z);
		if (h.sized && cap == h.image_size) {
			pr_err("kernel: Image header says %llu bytes but the gzip data decompresses to more: "
			       "corrupt header", (unsigned long long)h.image_size);
			return -EINVAL;
		}
		pr_err("kernel: the decompressed image is larger than the %llu bytes it may take: refusing",
		       (unsigned long long)cap);
		return -EFBIG;
	}
	if (r != Z_STREAM_END)
		goto corrupt;
	size_t out_len = z.total_out;

	inflateEnd(&z);
	return arm64_image_parse(ram + koff, out_len, img);
corrupt:
	pr_err("kernel: the gzip data is corrupt or truncated (zlib: %s)", z.msg ? z.msg : "unexpected end");
	inflateEnd(&z);
	return -EINVAL;
}

int arm64_kernel_load(const uint8_t *buf, size_t len, size_t max_out, enum kernel_format fmt,
		      uint8_t **owned, struct arm64_image *img)
{
	*owned = NULL;
	switch (fmt) {
	case KERNEL_FORMAT_IMAGE:
		return arm64_image_parse(buf, len, img);
	case KERNEL_FORMAT_FLAT:
		if (len == 0 || len > max_out) {
			pr_err("kernel: a flat binary of %zu bytes: it must be non-empty and at most %zu",
			       len, max_out);
			return len ? -E2BIG : -EINVAL;
		}
		*img = (struct arm64_image){ .data = buf, .len = len, .text_offset = FLAT_TEXT_OFFSET,
					     .image_size = len };
		return 0;
	default:
		return arm64_kernel_decode(buf, len, max_out, owned, img);
	}
}
