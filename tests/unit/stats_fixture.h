/* SPDX-License-Identifier: MIT */
/*
 * Binary stats fixtures for unit tests: files laid out as the kernel lays out a KVM_GET_STATS_FD
 * file (header, id, descriptors each followed by name_size bytes of name, data), built in memory
 * so a test can corrupt any field before writing it to a memfd. Header-only: each test binary
 * includes it once.
 */
#ifndef VMM_TESTS_STATS_FIXTURE_H
#define VMM_TESTS_STATS_FIXTURE_H

#include <linux/kvm.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#define FX_NAME_SIZE 48 /* the kernel's KVM_STATS_NAME_SIZE */
#define FX_MAX 65536

struct fx_stat {
	const char *name;
	uint32_t flags;
	int16_t exponent;
	uint16_t size;
	uint32_t bucket_size;
};

struct fx {
	uint8_t buf[FX_MAX];
	size_t len;
	size_t nstat;
	uint32_t words;
};

#define FX_NS (KVM_STATS_UNIT_SECONDS | KVM_STATS_BASE_POW10)
#define FX_COUNTER(n) { n, KVM_STATS_TYPE_CUMULATIVE, 0, 1, 0 }
#define FX_TIME_NS(n) { n, KVM_STATS_TYPE_CUMULATIVE | FX_NS, -9, 1, 0 }
#define FX_LOGHIST_NS(n, sz) { n, KVM_STATS_TYPE_LOG_HIST | FX_NS, -9, sz, 0 }

/*
 * An arm64 vCPU's stats as 6.12 lays them out: the generic vCPU stats (KVM_GENERIC_VCPU_STATS,
 * histograms of HALT_POLL_HIST_COUNT = 32 log2 buckets), then arm64's own (arch/arm64/kvm/guest.c).
 * preemption_reported/preemption_other are x86's, so they are not here.
 */
static const struct fx_stat fx_arm64_vcpu[] = {
	FX_COUNTER("halt_successful_poll"),
	FX_COUNTER("halt_attempted_poll"),
	FX_COUNTER("halt_poll_invalid"),
	FX_COUNTER("halt_wakeup"),
	FX_TIME_NS("halt_poll_success_ns"),
	FX_TIME_NS("halt_poll_fail_ns"),
	FX_TIME_NS("halt_wait_ns"),
	FX_LOGHIST_NS("halt_poll_success_hist", 32),
	FX_LOGHIST_NS("halt_poll_fail_hist", 32),
	FX_LOGHIST_NS("halt_wait_hist", 32),
	{ "blocking", KVM_STATS_TYPE_INSTANT | KVM_STATS_UNIT_BOOLEAN, 0, 1, 0 },
	FX_COUNTER("hvc_exit_stat"),
	FX_COUNTER("wfe_exit_stat"),
	FX_COUNTER("wfi_exit_stat"),
	FX_COUNTER("mmio_exit_user"),
	FX_COUNTER("mmio_exit_kernel"),
	FX_COUNTER("signal_exits"),
	FX_COUNTER("exits"),
};
#define FX_ARM64_VCPU_N (sizeof(fx_arm64_vcpu) / sizeof(fx_arm64_vcpu[0]))

static inline struct kvm_stats_header *fx_hdr(struct fx *f)
{
	return (struct kvm_stats_header *)f->buf;
}

static inline struct kvm_stats_desc *fx_desc(struct fx *f, size_t i)
{
	struct kvm_stats_header *h = fx_hdr(f);

	return (struct kvm_stats_desc *)(f->buf + h->desc_offset + i * (sizeof(struct kvm_stats_desc) + h->name_size));
}

static inline uint64_t *fx_data(struct fx *f)
{
	return (uint64_t *)(f->buf + fx_hdr(f)->data_offset);
}

/* Lays out stats back to back, data word w = 1000 + w (tests overwrite what they check). */
static inline struct fx *fx_build(const struct fx_stat *s, size_t n, const char *id)
{
	struct fx *f = calloc(1, sizeof(*f));
	struct kvm_stats_header *h = fx_hdr(f);
	size_t dsz = sizeof(struct kvm_stats_desc) + FX_NAME_SIZE;

	h->name_size = FX_NAME_SIZE;
	h->num_desc = n;
	h->id_offset = sizeof(*h);
	h->desc_offset = sizeof(*h) + FX_NAME_SIZE;
	h->data_offset = h->desc_offset + dsz * n;
	strcpy((char *)f->buf + h->id_offset, id);
	f->nstat = n;
	for (size_t i = 0; i < n; i++) {
		struct kvm_stats_desc *d = fx_desc(f, i);

		d->flags = s[i].flags;
		d->exponent = s[i].exponent;
		d->size = s[i].size;
		d->offset = f->words * 8;
		d->bucket_size = s[i].bucket_size;
		strcpy(d->name, s[i].name);
		f->words += s[i].size;
	}
	for (uint32_t w = 0; w < f->words; w++)
		fx_data(f)[w] = 1000 + w;
	f->len = h->data_offset + f->words * 8ull;
	if (f->len > FX_MAX)
		abort();
	return f;
}

/* The data word of stat i, value k. */
static inline uint64_t *fx_val(struct fx *f, size_t i, unsigned int k)
{
	return &fx_data(f)[fx_desc(f, i)->offset / 8 + k];
}

/* Writes the first len bytes (f->len when 0) into a fresh memfd. */
static inline int fx_fd(const struct fx *f, size_t len)
{
	int fd = memfd_create("stats", 0);

	len = len ? len : f->len;
	if (fd < 0 || write(fd, f->buf, len) != (ssize_t)len)
		abort();
	return fd;
}

#endif
