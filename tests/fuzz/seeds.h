// SPDX-License-Identifier: MIT
/*
 * The seed corpora's generator (tests/fuzz/seeds*.c, one file per target family): the output
 * buffer, the encoders of fuzz_guest.c's guest programs, and each family's writer.
 */
#ifndef VMM_TESTS_FUZZ_SEEDS_H
#define VMM_TESTS_FUZZ_SEEDS_H

#include <linux/virtio_pci.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "tests/fuzz/fuzz.h"

#define CC(f) offsetof(struct virtio_pci_common_cfg, f)

struct out {
	uint8_t b[1 << 17];
	size_t n;
	unsigned int ops; /* the target's ops, as in struct fz_guest */
};

/* Writes o to tests/fuzz/corpus/TARGET/NAME; exits on failure. */
void seed_save(const char *target, const char *name, const struct out *o);

static inline void put(struct out *o, uint64_t v, unsigned int bytes)
{
	for (unsigned int i = 0; i < bytes; i++)
		o->b[o->n++] = v >> (8 * i);
}

static inline void putb(struct out *o, const void *p, size_t n)
{
	memcpy(o->b + o->n, p, n);
	o->n += n;
}

/* ---- guest programs ---- */

static inline void op(struct out *o, unsigned int which)
{
	unsigned int idx = 0;

	for (unsigned int i = 0; i < which; i++)
		idx += !o->ops || (o->ops & (1u << i));
	put(o, idx, 1);
}

static inline unsigned int sz(unsigned int len)
{
	return len == 8 ? 3 : len == 4 ? 2 : len == 2 ? 1 : 0;
}

static inline void cfg_wr(struct out *o, uint32_t reg, uint32_t v, unsigned int len)
{
	op(o, FZ_CFG_WR), put(o, reg, 2), put(o, sz(len), 1), put(o, v, 4);
}

static inline void cfg_rd(struct out *o, uint32_t reg, unsigned int len)
{
	op(o, FZ_CFG_RD), put(o, reg, 2), put(o, sz(len), 1);
}

static inline void bar_wr(struct out *o, unsigned int bar, uint32_t off, uint64_t v, unsigned int len)
{
	op(o, FZ_BAR_WR), put(o, bar, 1), put(o, off, 2), put(o, sz(len), 1), put(o, v, 8);
}

static inline void bar_rd(struct out *o, unsigned int bar, uint32_t off, unsigned int len)
{
	op(o, FZ_BAR_RD), put(o, bar, 1), put(o, off, 2), put(o, sz(len), 1);
}

static inline void ram_wr(struct out *o, uint32_t off, const void *p, uint8_t n)
{
	op(o, FZ_RAM_WR), put(o, off, 4), put(o, n, 1), putb(o, p, n);
}

static inline void kick(struct out *o, unsigned int q)
{
	op(o, FZ_KICK), put(o, q, 1);
}

static inline void poll_dev(struct out *o)
{
	op(o, FZ_POLL);
}

static inline void input(struct out *o, const void *p, uint8_t n)
{
	op(o, FZ_INPUT), put(o, n, 1), putb(o, p, n);
}

struct seg {
	uint32_t off; /* from the start of RAM, a multiple of 4 */
	uint16_t len;
	bool write;
};

static inline void ring(struct out *o, unsigned int q, const struct seg *s, unsigned int n)
{
	op(o, FZ_RING), put(o, q, 1), put(o, n - 1, 1);
	for (unsigned int i = 0; i < n; i++)
		put(o, s[i].off / 4, 2), put(o, s[i].len, 2), put(o, s[i].write, 1);
}

#define Q_DESC(q) (0x1000 + 0x3000 * (q))
#define Q_AVAIL(q) (Q_DESC(q) + 0x1000)
#define Q_USED(q) (Q_DESC(q) + 0x2000)

/* One writer per target family, each in its seeds_FAMILY.c. */
void seeds_virtio(void);
void seeds_virtq(void);
void seeds_msix(void);
void seeds_uart(void);
void seeds_ioapic(void);
void seeds_vlpi(void);
void seeds_vfio(void);
void seeds_kernel(void);
void seeds_bzimage(void);
void seeds_text(void);
void seeds_saved(void);
void seeds_stats(void);
void seeds_probe(void);
void seeds_trace(void);
void seeds_ab_attr(void);

#endif
