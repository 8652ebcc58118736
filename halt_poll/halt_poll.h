/* SPDX-License-Identifier: MIT */
/*
 * Halt polling and its measurement. For now: the KVM binary stats reader (KVM_GET_STATS_FD).
 * The file is parsed once (header, id, descriptors); later reads fetch the whole data block with
 * one pread. Every offset and size from the file is checked before use.
 */
#ifndef VMM_HALT_POLL_H
#define VMM_HALT_POLL_H

#include <linux/kvm.h>
#include <stddef.h>
#include <stdint.h>

struct hp_stat {
	char name[64];
	uint32_t flags;	 /* KVM_STATS_TYPE_* | KVM_STATS_UNIT_* | KVM_STATS_BASE_* */
	int16_t exponent;
	uint16_t size;	 /* number of u64 values (buckets for histograms) */
	uint32_t offset; /* in u64 units into the data block, after validation */
	uint32_t bucket_size;
};

struct hp_stats {
	int fd;
	char id[64];
	struct hp_stat *stat;
	int nr;
	uint64_t data_offset; /* file offset of the data block */
	uint64_t *data;
	size_t data_words;
};

/* Parses the stats file behind fd (takes ownership of fd). */
int hp_stats_open(struct hp_stats *st, int fd);
void hp_stats_close(struct hp_stats *st);
/* Re-reads the data block (one pread). */
int hp_stats_read(struct hp_stats *st);
const struct hp_stat *hp_stats_find(const struct hp_stats *st, const char *name);
/* Value i of a stat from the last read; 0 for an index outside the stat. */
uint64_t hp_stats_value(const struct hp_stats *st, const struct hp_stat *s, unsigned int i);
/* Convenience: value 0 of a named stat, or -ENOENT when the kernel has no such stat. */
int hp_stats_get(const struct hp_stats *st, const char *name, uint64_t *val);
const char *hp_stat_type_name(uint32_t flags);
const char *hp_stat_unit_name(uint32_t flags);

#endif
