// SPDX-License-Identifier: MIT
/*
 * Reader for KVM binary stats (Documentation/virt/kvm/api.rst, "KVM_GET_STATS_FD"). The layout is:
 * header, id string, descriptors (each followed by name_size bytes of name), data. The kernel
 * promises descriptors do not change for the life of the fd, so they are read once.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "halt_poll/halt_poll.h"
#include "vmm/vmm.h"

static int pread_full(int fd, void *buf, size_t len, uint64_t off)
{
	uint8_t *p = buf;

	while (len) {
		ssize_t n = pread(fd, p, len, off);

		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			return n < 0 ? -errno : -EIO;
		p += n;
		len -= n;
		off += n;
	}
	return 0;
}

/* Cap what a (possibly corrupt) header may make us allocate. */
#define HP_MAX_DESCS 4096
#define HP_MAX_NAME 256
#define HP_MAX_DATA_WORDS (1u << 20)

int hp_stats_open(struct hp_stats *st, int fd)
{
	struct kvm_stats_header h;
	uint8_t *descs = NULL;
	int r;

	memset(st, 0, sizeof(*st));
	st->fd = fd;
	r = pread_full(fd, &h, sizeof(h), 0);
	if (r < 0)
		goto bad;
	r = -EINVAL;
	if (h.num_desc == 0 || h.num_desc > HP_MAX_DESCS || h.name_size == 0 || h.name_size > HP_MAX_NAME)
		goto bad;
	r = pread_full(fd, st->id, h.name_size < sizeof(st->id) ? h.name_size : sizeof(st->id) - 1,
		       h.id_offset);
	if (r < 0)
		goto bad;
	st->id[sizeof(st->id) - 1] = 0;

	size_t dsz = sizeof(struct kvm_stats_desc) + h.name_size;

	descs = malloc(dsz * h.num_desc);
	st->stat = calloc(h.num_desc, sizeof(*st->stat));
	r = -ENOMEM;
	if (!descs || !st->stat)
		goto bad;
	r = pread_full(fd, descs, dsz * h.num_desc, h.desc_offset);
	if (r < 0)
		goto bad;

	uint64_t words = 0;

	for (uint32_t i = 0; i < h.num_desc; i++) {
		const struct kvm_stats_desc *d = (const void *)(descs + i * dsz);
		struct hp_stat *s = &st->stat[i];

		r = -EINVAL;
		/* offset is in bytes into the data block; values are u64 */
		if (d->offset % 8 || d->size == 0 || (uint64_t)d->offset / 8 + d->size > HP_MAX_DATA_WORDS)
			goto bad;
		size_t n = strnlen(d->name, h.name_size);

		if (n == 0 || n >= sizeof(s->name))
			goto bad;
		memcpy(s->name, d->name, n);
		s->flags = d->flags;
		s->exponent = d->exponent;
		s->size = d->size;
		s->offset = d->offset / 8;
		s->bucket_size = d->bucket_size;
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
		goto bad;
	}
	r = hp_stats_read(st);
	if (r < 0)
		goto bad;
	return 0;
bad:
	pr_err("binary stats: cannot parse the stats file (%s)", strerror(-r));
	free(descs);
	hp_stats_close(st);
	return r;
}

void hp_stats_close(struct hp_stats *st)
{
	free(st->stat);
	free(st->data);
	if (st->fd >= 0)
		close(st->fd);
	memset(st, 0, sizeof(*st));
	st->fd = -1;
}

int hp_stats_read(struct hp_stats *st)
{
	return pread_full(st->fd, st->data, st->data_words * sizeof(uint64_t), st->data_offset);
}

const struct hp_stat *hp_stats_find(const struct hp_stats *st, const char *name)
{
	for (int i = 0; i < st->nr; i++)
		if (!strcmp(st->stat[i].name, name))
			return &st->stat[i];
	return NULL;
}

uint64_t hp_stats_value(const struct hp_stats *st, const struct hp_stat *s, unsigned int i)
{
	if (!s || i >= s->size || s->offset + (uint64_t)i >= st->data_words)
		return 0;
	return st->data[s->offset + i];
}

int hp_stats_get(const struct hp_stats *st, const char *name, uint64_t *val)
{
	const struct hp_stat *s = hp_stats_find(st, name);

	if (!s)
		return -ENOENT;
	*val = hp_stats_value(st, s, 0);
	return 0;
}

const char *hp_stat_type_name(uint32_t flags)
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

const char *hp_stat_unit_name(uint32_t flags)
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
