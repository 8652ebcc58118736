// SPDX-License-Identifier: MIT
/*
 * Reader for KVM binary stats (Documentation/virt/kvm/api.rst, "KVM_GET_STATS_FD"). The layout is:
 * header, id string, descriptors (each followed by name_size bytes of name), data. The kernel
 * promises descriptors do not change for the life of the fd, so they are read once; the data
 * block is then re-read with one pread. Everything the file says is checked before use: a corrupt
 * or future-format file is refused with the reason, never read past.
 */
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "core/hot.h"
#include "halt_poll/halt_poll.h"
#include "core/log.h"

/* Reads up to len bytes; returns what it got (short only at end of file) or -errno. */
VMM_HOT_VF static ssize_t pread_upto(int fd, void *buf, size_t len, uint64_t off)
{
	uint8_t *p = buf;
	size_t got = 0;

	while (got < len) {
		ssize_t n = pread(fd, p + got, len - got, off + got);

		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0)
			return -errno;
		if (n == 0)
			break;
		got += n;
	}
	return got;
}

/* Cap what a (possibly corrupt) header may make us allocate: real files have ~20-60 stats with
 * 48-byte names and a few hundred data words. */
#define HP_MAX_DESCS 4096
#define HP_MAX_NAME 256
#define HP_MAX_DATA_WORDS (1u << 20)
/* Log2 bucket i starts at 2^(i-1): 64 buckets reach 2^62..2^63, which still fits a u64. */
#define HP_MAX_LOG_BUCKETS 64

#define FIX "the stats file is not laid out as api.rst (KVM_GET_STATS_FD) says; report it with the kernel version"

static bool printable(const char *s, size_t n)
{
	for (size_t i = 0; i < n; i++)
		if (s[i] <= ' ' || s[i] > '~')
			return false;
	return true;
}

/* Regions [a, a+al) and [b, b+bl) share a byte. */
static bool overlap(uint64_t a, uint64_t al, uint64_t b, uint64_t bl)
{
	return a < b + bl && b < a + al;
}

static int check_header(const struct kvm_stats_header *h, int fd)
{
	uint64_t dsz = sizeof(struct kvm_stats_desc) + (uint64_t)h->name_size;
	uint64_t descs_end = h->desc_offset + dsz * h->num_desc;
	uint64_t id_end = (uint64_t)h->id_offset + h->name_size;

	if (h->num_desc == 0 || h->num_desc > HP_MAX_DESCS) {
		pr_err("KVM stats fd %d: %u descriptors (expected 1..%u); " FIX, fd, h->num_desc, HP_MAX_DESCS);
		return -EINVAL;
	}
	if (h->name_size == 0 || h->name_size > HP_MAX_NAME) {
		pr_err("KVM stats fd %d: name size %u (expected 1..%u); " FIX, fd, h->name_size, HP_MAX_NAME);
		return -EINVAL;
	}
	if (h->id_offset < sizeof(*h) || h->desc_offset < sizeof(*h) ||
	    overlap(h->id_offset, h->name_size, h->desc_offset, descs_end - h->desc_offset)) {
		pr_err("KVM stats fd %d: id at %u and descriptors at %u..%llu overlap each other or the header; " FIX,
		       fd, h->id_offset, h->desc_offset, (unsigned long long)descs_end);
		return -EINVAL;
	}
	if (h->data_offset < descs_end || h->data_offset < id_end) {
		pr_err("KVM stats fd %d: data at %u starts inside the id or the descriptors (end at %llu); " FIX,
		       fd, h->data_offset, (unsigned long long)(descs_end > id_end ? descs_end : id_end));
		return -EINVAL;
	}
	return 0;
}

static int parse_desc(const struct kvm_stats_desc *d, uint32_t name_size, uint32_t i, int fd, struct hp_stat *s)
{
	uint32_t type = d->flags & KVM_STATS_TYPE_MASK;
	size_t n = strnlen(d->name, name_size);

	if (n == 0 || n == name_size || n >= sizeof(s->name) || !printable(d->name, n)) {
		pr_err("KVM stats fd %d: descriptor %u has an empty, unterminated, non-ASCII or over-long (max %zu) name; " FIX,
		       fd, i, sizeof(s->name) - 1);
		return -EINVAL;
	}
	memcpy(s->name, d->name, n);
	if (type > KVM_STATS_TYPE_MAX || (d->flags & KVM_STATS_UNIT_MASK) > KVM_STATS_UNIT_MAX ||
	    (d->flags & KVM_STATS_BASE_MASK) > KVM_STATS_BASE_MAX) {
		pr_err("KVM stats fd %d: stat %s has an unknown type, unit or base (flags %#x); a newer kernel? "
		       "vmm needs to learn it before it can interpret the values", fd, s->name, d->flags);
		return -EINVAL;
	}
	/* offset is in bytes into the data block; values are u64 */
	if (d->offset % 8 || d->size == 0 || (uint64_t)d->offset / 8 + d->size > HP_MAX_DATA_WORDS) {
		pr_err("KVM stats fd %d: stat %s: offset %u, %u values (expected 8-byte aligned, 1.., ending within %u words); " FIX,
		       fd, s->name, d->offset, d->size, HP_MAX_DATA_WORDS);
		return -EINVAL;
	}
	if ((type == KVM_STATS_TYPE_LINEAR_HIST && d->bucket_size == 0) ||
	    (type == KVM_STATS_TYPE_LOG_HIST && d->size > HP_MAX_LOG_BUCKETS)) {
		pr_err("KVM stats fd %d: histogram %s: %u buckets of size %u (linear needs a size, log2 at most %u buckets); " FIX,
		       fd, s->name, d->size, d->bucket_size, HP_MAX_LOG_BUCKETS);
		return -EINVAL;
	}
	s->flags = d->flags;
	s->exponent = d->exponent;
	s->size = d->size;
	s->offset = d->offset / 8;
	s->bucket_size = d->bucket_size;
	return 0;
}

static int read_id(struct hp_stats *st, const struct kvm_stats_header *h)
{
	char id[HP_MAX_NAME];
	ssize_t got = pread_upto(st->fd, id, h->name_size, h->id_offset);
	size_t n;

	if (got < 0) {
		pr_err("KVM stats fd %d: reading the id: %s", st->fd, strerror((int)-got));
		return (int)got;
	}
	n = strnlen(id, got);
	if ((size_t)got < h->name_size || n == (size_t)got || !printable(id, n)) {
		pr_err("KVM stats fd %d: the id at %u is truncated, unterminated or not ASCII; " FIX, st->fd, h->id_offset);
		return -EINVAL;
	}
	if (n >= sizeof(st->id))
		n = sizeof(st->id) - 1; /* ids are "kvm-PID/vcpu-N": a longer one is only cut in reports */
	memcpy(st->id, id, n);
	return 0;
}

/* The data block's length is not in the header: it is what the descriptors cover. A stat that
 * reaches past the end of the file is named. */
static int check_data_len(struct hp_stats *st, size_t got_words)
{
	for (int i = 0; i < st->nr; i++) {
		const struct hp_stat *s = &st->stat[i];

		if (s->offset + (uint64_t)s->size > got_words) {
			pr_err("KVM stats fd %d (%s): stat %s (words %u..%u) ends past the data block, which has %zu words; " FIX,
			       st->fd, st->id, s->name, s->offset, s->offset + s->size - 1, got_words);
			return -EINVAL;
		}
	}
	return 0;
}

VMM_HOT_VF int hp_stats_open(struct hp_stats *st, int fd)
{
	struct kvm_stats_header h;
	uint8_t *descs = NULL;
	ssize_t got;
	int r;

	memset(st, 0, sizeof(*st));
	st->fd = fd;
	got = pread_upto(fd, &h, sizeof(h), 0);
	if (got != sizeof(h)) {
		r = got < 0 ? (int)got : -EINVAL;
		pr_err("KVM stats fd %d: cannot read the %zu-byte header (%s); is it a KVM_GET_STATS_FD fd?", fd,
		       sizeof(h), got < 0 ? strerror(-r) : "file too short");
		goto bad;
	}
	r = check_header(&h, fd);
	if (r < 0)
		goto bad;
	r = read_id(st, &h);
	if (r < 0)
		goto bad;

	size_t dsz = sizeof(struct kvm_stats_desc) + h.name_size;

	descs = malloc(dsz * h.num_desc);
	st->stat = calloc(h.num_desc, sizeof(*st->stat));
	if (!descs || !st->stat) {
		r = -ENOMEM;
		pr_err("KVM stats fd %d: no memory for %u descriptors", fd, h.num_desc);
		goto bad;
	}
	got = pread_upto(fd, descs, dsz * h.num_desc, h.desc_offset);
	if (got != (ssize_t)(dsz * h.num_desc)) {
		r = got < 0 ? (int)got : -EINVAL;
		pr_err("KVM stats fd %d (%s): the descriptors (%u of %zu bytes at %u) are %s; " FIX, fd, st->id,
		       h.num_desc, dsz, h.desc_offset, got < 0 ? strerror(-r) : "truncated");
		goto bad;
	}

	uint64_t words = 0;
	/* each descriptor is read from an aligned copy: a name size that is not a multiple of 4
	 * leaves the ones after the first misaligned in the file */
	uint32_t one[(sizeof(struct kvm_stats_desc) + HP_MAX_NAME + 3) / 4];

	for (uint32_t i = 0; i < h.num_desc; i++) {
		struct hp_stat *s = &st->stat[i];

		memcpy(one, descs + i * dsz, dsz);
		r = parse_desc((const void *)one, h.name_size, i, fd, s);
		if (r < 0)
			goto bad;
		if (s->offset + (uint64_t)s->size > words)
			words = s->offset + (uint64_t)s->size;
	}
	st->nr = h.num_desc;
	st->data_offset = h.data_offset;
	st->data_words = words;
	st->data = calloc(words, sizeof(uint64_t));
	free(descs);
	descs = NULL;
	if (!st->data) {
		r = -ENOMEM;
		pr_err("KVM stats fd %d: no memory for %llu data words", fd, (unsigned long long)words);
		goto bad;
	}
	got = pread_upto(fd, st->data, words * sizeof(uint64_t), h.data_offset);
	if (got < 0) {
		r = (int)got;
		pr_err("KVM stats fd %d (%s): reading the data block: %s", fd, st->id, strerror(-r));
		goto bad;
	}
	r = check_data_len(st, got / sizeof(uint64_t));
	if (r < 0)
		goto bad;
	return 0;
bad:
	free(descs);
	hp_stats_close(st);
	return r;
}

VMM_HOT_VF void hp_stats_close(struct hp_stats *st)
{
	free(st->stat);
	free(st->data);
	if (st->fd >= 0)
		close(st->fd);
	memset(st, 0, sizeof(*st));
	st->fd = -1;
}

VMM_HOT_VF int hp_stats_read(struct hp_stats *st)
{
	size_t len = st->data_words * sizeof(uint64_t);
	ssize_t got = pread_upto(st->fd, st->data, len, st->data_offset);

	if (got == (ssize_t)len)
		return 0;
	pr_err("KVM stats fd %d (%s): re-reading the data block: %s", st->fd, st->id,
	       got < 0 ? strerror((int)-got) : "the file shrank (was the VM or vCPU destroyed?)");
	return got < 0 ? (int)got : -EIO;
}

VMM_HOT_VF const struct hp_stat *hp_stats_find(const struct hp_stats *st, const char *name)
{
	for (int i = 0; i < st->nr; i++)
		if (!strcmp(st->stat[i].name, name))
			return &st->stat[i];
	return NULL;
}

VMM_HOT_VF const uint64_t *hp_stats_values(const struct hp_stats *st, const struct hp_stat *s)
{
	return st->data + s->offset; /* open() checked offset + size <= data_words */
}

VMM_HOT_VF uint64_t hp_stats_value(const struct hp_stats *st, const struct hp_stat *s, unsigned int i)
{
	if (!s || i >= s->size || s->offset + (uint64_t)i >= st->data_words)
		return 0;
	return st->data[s->offset + i];
}

VMM_HOT_VF int hp_stats_get(const struct hp_stats *st, const char *name, uint64_t *val)
{
	const struct hp_stat *s = hp_stats_find(st, name);

	if (!s)
		return -ENOENT;
	*val = hp_stats_value(st, s, 0);
	return 0;
}

VMM_HOT_VF const char *hp_stat_type_name(uint32_t flags)
{
	switch (flags & KVM_STATS_TYPE_MASK) {
	case KVM_STATS_TYPE_CUMULATIVE: return "cumulative";
	case KVM_STATS_TYPE_INSTANT: return "instant";
	case KVM_STATS_TYPE_PEAK: return "peak";
	case KVM_STATS_TYPE_LINEAR_HIST: return "linear-hist";
	case KVM_STATS_TYPE_LOG_HIST: return "log2-hist";
	default: return "unknown";
	}
}

VMM_HOT_VF const char *hp_stat_unit_name(uint32_t flags)
{
	switch (flags & KVM_STATS_UNIT_MASK) {
	case KVM_STATS_UNIT_NONE: return "";
	case KVM_STATS_UNIT_BYTES: return "bytes";
	case KVM_STATS_UNIT_SECONDS: return "s";
	case KVM_STATS_UNIT_CYCLES: return "cycles";
	case KVM_STATS_UNIT_BOOLEAN: return "bool";
	default: return "?";
	}
}

VMM_HOT_VF bool hp_stat_is_hist(const struct hp_stat *s)
{
	uint32_t t = s->flags & KVM_STATS_TYPE_MASK;

	return t == KVM_STATS_TYPE_LINEAR_HIST || t == KVM_STATS_TYPE_LOG_HIST;
}

VMM_HOT_VF unsigned int hp_stat_base(const struct hp_stat *s)
{
	return (s->flags & KVM_STATS_BASE_MASK) == KVM_STATS_BASE_POW2 ? 2 : 10;
}

VMM_HOT_VF double hp_stat_scale(const struct hp_stat *s)
{
	return pow(hp_stat_base(s), s->exponent);
}

VMM_HOT_VF double hp_stat_to_base_units(const struct hp_stat *s, double raw)
{
	return raw * hp_stat_scale(s);
}

VMM_HOT_VF int hp_hist_bucket(const struct hp_stat *s, unsigned int i, uint64_t *lo, uint64_t *hi)
{
	if (!hp_stat_is_hist(s) || i >= s->size)
		return -EINVAL;
	if ((s->flags & KVM_STATS_TYPE_MASK) == KVM_STATS_TYPE_LINEAR_HIST) {
		*lo = (uint64_t)i * s->bucket_size;
		*hi = *lo + s->bucket_size;
	} else {
		*lo = i ? 1ULL << (i - 1) : 0;
		*hi = 1ULL << i; /* i < 64: open() refuses more log2 buckets */
	}
	if (i == s->size - 1u)
		*hi = UINT64_MAX; /* the kernel clamps larger values into the last bucket */
	return 0;
}

VMM_HOT_VF uint64_t hp_hist_total(const struct hp_stat *s, const uint64_t *buckets)
{
	uint64_t t = 0;

	for (unsigned int i = 0; i < s->size; i++)
		t += buckets[i];
	return t;
}

VMM_HOT_VF int hp_hist_quantile_bucket(const struct hp_stat *s, const uint64_t *buckets, double q, unsigned int *i)
{
	uint64_t total = hp_hist_total(s, buckets);
	double target = q * (double)total, cum = 0;

	if (!hp_stat_is_hist(s) || !(q >= 0 && q <= 1))
		return -EINVAL;
	if (total == 0)
		return -ENODATA;
	for (unsigned int k = 0; k < s->size; k++) {
		cum += (double)buckets[k];
		if (buckets[k] && cum >= target) {
			*i = k;
			return 0;
		}
	}
	return -ENODATA; /* not reached: cum reaches total >= target */
}
