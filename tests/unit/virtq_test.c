// SPDX-License-Identifier: MIT
/* Split virtqueues against good and hostile rings: every guest value is checked, nothing trusted. */
#include <pthread.h>
#include <string.h>

#include "kselftest_harness.h"
#include "virtio/virtio.h"
#include "core/mem.h"
#include "core/vm.h"

#define RAM_GPA 0x40000000ULL
#define QSZ 8
#define DESC_GPA (RAM_GPA)
#define AVAIL_GPA (RAM_GPA + 0x1000)
#define USED_GPA (RAM_GPA + 0x2000)
#define BUF_GPA (RAM_GPA + 0x4000)

FIXTURE(vq) {
	struct vm vm;
	uint8_t ram[0x10000] __attribute__((aligned(16)));
	struct virtq q;
	struct vring_desc *d;
	struct vring_avail *a;
	struct vring_used *u;
	struct virtq_elem e;
};

FIXTURE_SETUP(vq)
{
	memset(&self->vm, 0, sizeof(self->vm));
	memset(self->ram, 0, sizeof(self->ram));
	self->vm.mem[0] = (struct mem_region){ RAM_GPA, sizeof(self->ram), self->ram, 0 };
	self->vm.nr_mem = 1;
	ASSERT_EQ(0, virtq_setup(&self->q, &self->vm, QSZ, DESC_GPA, AVAIL_GPA, USED_GPA));
	self->d = (void *)self->ram;
	self->a = (void *)(self->ram + 0x1000);
	self->u = (void *)(self->ram + 0x2000);
}

FIXTURE_TEARDOWN(vq) {}

static void desc(struct vring_desc *d, int i, uint64_t addr, uint32_t len, uint16_t flags, uint16_t next)
{
	d[i] = (struct vring_desc){ .addr = addr, .len = len, .flags = flags, .next = next };
}

static void post(struct vring_avail *a, uint16_t head)
{
	a->ring[a->idx % QSZ] = head;
	a->idx++;
}

TEST_F(vq, good_chain)
{
	desc(self->d, 0, BUF_GPA, 16, VRING_DESC_F_NEXT, 3);
	desc(self->d, 3, BUF_GPA + 16, 512, VRING_DESC_F_NEXT, 5);
	desc(self->d, 5, BUF_GPA + 528, 1, VRING_DESC_F_WRITE, 0);
	post(self->a, 0);
	ASSERT_EQ(1, virtq_pop(&self->q, &self->e));
	EXPECT_EQ(0, self->e.head);
	EXPECT_EQ(2, self->e.n_out);
	EXPECT_EQ(1, self->e.n_in);
	EXPECT_EQ(528, self->e.out_len);
	EXPECT_EQ(1, self->e.in_len);
	EXPECT_EQ(self->ram + 0x4000, self->e.iov[0].iov_base);
	EXPECT_EQ(0, virtq_pop(&self->q, &self->e)); /* nothing more */
	virtq_push(&self->q, 0, 1);
	EXPECT_EQ(1, self->u->idx);
	EXPECT_EQ(0, self->u->ring[0].id);
	EXPECT_EQ(1, self->u->ring[0].len);
	EXPECT_TRUE(virtq_needs_interrupt(&self->q));
	self->a->flags = VRING_AVAIL_F_NO_INTERRUPT;
	EXPECT_FALSE(virtq_needs_interrupt(&self->q));
}

TEST_F(vq, loop_is_refused)
{
	desc(self->d, 1, BUF_GPA, 16, VRING_DESC_F_NEXT, 2);
	desc(self->d, 2, BUF_GPA, 16, VRING_DESC_F_NEXT, 1);
	post(self->a, 1);
	EXPECT_GT(0, virtq_pop(&self->q, &self->e));
	EXPECT_TRUE(self->q.broken);
	EXPECT_EQ(0, virtq_pop(&self->q, &self->e)); /* broken stays broken until reset */
}

TEST_F(vq, buffers_outside_ram_refused)
{
	const uint64_t bad[][2] = {
		{ RAM_GPA - 1, 2 },			/* starts below RAM */
		{ RAM_GPA + 0xfff0, 0x11 },		/* runs past the end */
		{ 0, 0xffffffff },			/* huge */
		{ UINT64_MAX - 4, 16 },			/* wraps */
	};

	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		ASSERT_EQ(0, virtq_setup(&self->q, &self->vm, QSZ, DESC_GPA, AVAIL_GPA, USED_GPA));
		memset(self->a, 0, 0x100);
		desc(self->d, 0, bad[i][0], (uint32_t)bad[i][1], 0, 0);
		post(self->a, 0);
		EXPECT_GT(0, virtq_pop(&self->q, &self->e)) TH_LOG("bad buffer %zu accepted", i);
	}
}

TEST_F(vq, next_and_head_out_of_range)
{
	desc(self->d, 0, BUF_GPA, 16, VRING_DESC_F_NEXT, QSZ);
	post(self->a, 0);
	EXPECT_GT(0, virtq_pop(&self->q, &self->e));
	ASSERT_EQ(0, virtq_setup(&self->q, &self->vm, QSZ, DESC_GPA, AVAIL_GPA, USED_GPA));
	self->a->idx = 0;
	post(self->a, QSZ + 3);
	EXPECT_GT(0, virtq_pop(&self->q, &self->e));
}

TEST_F(vq, avail_index_too_far_ahead)
{
	desc(self->d, 0, BUF_GPA, 16, 0, 0);
	self->a->idx = QSZ + 1;
	EXPECT_GT(0, virtq_pop(&self->q, &self->e));
}

TEST_F(vq, writable_then_readable_refused)
{
	desc(self->d, 0, BUF_GPA, 16, VRING_DESC_F_NEXT | VRING_DESC_F_WRITE, 1);
	desc(self->d, 1, BUF_GPA, 16, 0, 0);
	post(self->a, 0);
	EXPECT_GT(0, virtq_pop(&self->q, &self->e));
}

TEST_F(vq, indirect_not_negotiated)
{
	desc(self->d, 0, BUF_GPA, 16, VRING_DESC_F_INDIRECT, 0);
	post(self->a, 0);
	EXPECT_GT(0, virtq_pop(&self->q, &self->e));
}

#define TABLE_GPA (RAM_GPA + 0x3000)

/* Negotiated, a chain's head may be a table in guest RAM: its descriptors are the chain. */
TEST_F(vq, indirect_table_is_the_chain)
{
	struct vring_desc *t = (void *)(self->ram + 0x3000);

	self->q.indirect = true;
	desc(t, 0, BUF_GPA, 16, VRING_DESC_F_NEXT, 2); /* links are indices into the table */
	desc(t, 2, BUF_GPA + 16, 4096, VRING_DESC_F_NEXT | VRING_DESC_F_WRITE, 1);
	desc(t, 1, BUF_GPA + 4112, 1, VRING_DESC_F_WRITE, 0);
	desc(self->d, 5, TABLE_GPA, 3 * sizeof(*t), VRING_DESC_F_INDIRECT, 0);
	post(self->a, 5);
	ASSERT_EQ(1, virtq_pop(&self->q, &self->e));
	EXPECT_EQ(5, self->e.head); /* the ring's entry, what the used ring gives back */
	EXPECT_EQ(1, self->e.n_out);
	EXPECT_EQ(2, self->e.n_in);
	EXPECT_EQ(16, self->e.out_len);
	EXPECT_EQ(4097, self->e.in_len);
	EXPECT_EQ(self->ram + 0x4000 + 4112, self->e.iov[2].iov_base);
	EXPECT_FALSE(self->q.broken);
}

/* The spec sets no alignment for a table: one at an odd address is read bytewise (the sanitizer
 * builds fail a misaligned struct access). */
TEST_F(vq, indirect_table_at_any_address)
{
	struct vring_desc t[2] = { { BUF_GPA, 16, VRING_DESC_F_NEXT, 1 }, { BUF_GPA + 16, 8, VRING_DESC_F_WRITE, 0 } };

	self->q.indirect = true;
	memcpy(self->ram + 0x3005, t, sizeof(t));
	desc(self->d, 0, TABLE_GPA + 5, sizeof(t), VRING_DESC_F_INDIRECT, 0);
	post(self->a, 0);
	ASSERT_EQ(1, virtq_pop(&self->q, &self->e));
	EXPECT_EQ(1, self->e.n_out);
	EXPECT_EQ(1, self->e.n_in);
	EXPECT_EQ(8, self->e.in_len);
}

/* A request of more buffers than the ring has entries fits one table (virtio-blk's seg_max). */
TEST_F(vq, indirect_table_longer_than_the_ring)
{
	struct vring_desc *t = (void *)(self->ram + 0x3000);
	int n = VIRTQ_MAX_SEGS;

	self->q.indirect = true;
	for (int i = 0; i < n; i++)
		desc(t, i, BUF_GPA + 16 * i, 16, i + 1 < n ? VRING_DESC_F_NEXT : VRING_DESC_F_WRITE, i + 1);
	desc(self->d, 0, TABLE_GPA, n * sizeof(*t), VRING_DESC_F_INDIRECT, 0);
	post(self->a, 0);
	ASSERT_EQ(1, virtq_pop(&self->q, &self->e));
	EXPECT_EQ(n - 1, self->e.n_out);
	EXPECT_EQ(1, self->e.n_in);
}

/* Each malformed table breaks the queue, with its own reason. */
TEST_F(vq, hostile_indirect_tables_refused)
{
	struct vring_desc *t = (void *)(self->ram + 0x3000);
	const struct {
		uint64_t addr;
		uint32_t len;
		uint16_t flags;
		int cause;
		const char *what;
	} bad[] = {
		{ TABLE_GPA, 0, VRING_DESC_F_INDIRECT, VQ_INDIRECT_LEN, "empty table" },
		{ TABLE_GPA, 24, VRING_DESC_F_INDIRECT, VQ_INDIRECT_LEN, "not a multiple of 16" },
		{ TABLE_GPA, 16 * (VIRTQ_MAX_INDIRECT + 1), VRING_DESC_F_INDIRECT, VQ_INDIRECT_LEN, "too long" },
		{ RAM_GPA + 0xfff0, 32, VRING_DESC_F_INDIRECT, VQ_OUTSIDE_RAM, "runs past RAM" },
		{ UINT64_MAX - 15, 32, VRING_DESC_F_INDIRECT, VQ_OUTSIDE_RAM, "wraps" },
		{ TABLE_GPA, 32, VRING_DESC_F_INDIRECT | VRING_DESC_F_NEXT, VQ_INDIRECT_PLACE, "with NEXT" },
	};

	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		ASSERT_EQ(0, virtq_setup(&self->q, &self->vm, QSZ, DESC_GPA, AVAIL_GPA, USED_GPA));
		self->q.indirect = true;
		memset(self->a, 0, 0x100);
		desc(t, 0, BUF_GPA, 16, 0, 0);
		desc(t, 1, BUF_GPA, 16, 0, 0);
		desc(self->d, 0, bad[i].addr, bad[i].len, bad[i].flags, 1);
		desc(self->d, 1, BUF_GPA, 16, 0, 0);
		post(self->a, 0);
		EXPECT_GT(0, virtq_pop(&self->q, &self->e)) TH_LOG("%s accepted", bad[i].what);
		EXPECT_STREQ(virtq_causes[bad[i].cause], self->q.why) TH_LOG("%s", bad[i].what);
	}
}

/* Inside a table: no second table, no link past its end, no loop. */
TEST_F(vq, indirect_table_links_checked)
{
	struct vring_desc *t = (void *)(self->ram + 0x3000);
	const struct {
		struct vring_desc d[2];
		int cause;
		const char *what;
	} bad[] = {
		{ { { BUF_GPA, 16, VRING_DESC_F_NEXT, 1 }, { TABLE_GPA, 32, VRING_DESC_F_INDIRECT, 0 } },
		  VQ_INDIRECT_PLACE, "nested table" },
		{ { { BUF_GPA, 16, VRING_DESC_F_NEXT, 2 }, { BUF_GPA, 16, 0, 0 } }, VQ_NEXT_RANGE,
		  "link past the table (the ring has 8 entries, the table 2)" },
		{ { { BUF_GPA, 16, VRING_DESC_F_NEXT, 1 }, { BUF_GPA, 16, VRING_DESC_F_NEXT, 0 } },
		  VQ_CHAIN_LOOP, "loop" },
	};

	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		ASSERT_EQ(0, virtq_setup(&self->q, &self->vm, QSZ, DESC_GPA, AVAIL_GPA, USED_GPA));
		self->q.indirect = true;
		memset(self->a, 0, 0x100);
		memcpy(t, bad[i].d, sizeof(bad[i].d));
		desc(self->d, 0, TABLE_GPA, sizeof(bad[i].d), VRING_DESC_F_INDIRECT, 0);
		post(self->a, 0);
		EXPECT_GT(0, virtq_pop(&self->q, &self->e)) TH_LOG("%s accepted", bad[i].what);
		EXPECT_STREQ(virtq_causes[bad[i].cause], self->q.why) TH_LOG("%s", bad[i].what);
	}
	/* and a table after a direct descriptor is not at the chain's head */
	ASSERT_EQ(0, virtq_setup(&self->q, &self->vm, QSZ, DESC_GPA, AVAIL_GPA, USED_GPA));
	self->q.indirect = true;
	memset(self->a, 0, 0x100);
	desc(t, 0, BUF_GPA, 16, 0, 0);
	desc(self->d, 0, BUF_GPA, 16, VRING_DESC_F_NEXT, 1);
	desc(self->d, 1, TABLE_GPA, 16, VRING_DESC_F_INDIRECT, 0);
	post(self->a, 0);
	EXPECT_GT(0, virtq_pop(&self->q, &self->e));
	EXPECT_STREQ(virtq_causes[VQ_INDIRECT_PLACE], self->q.why);
}

/* A table aliasing the ring itself: its entry 0 is the head's own INDIRECT descriptor, which
 * must be refused as nested (a check of "table != ring" would take it as the head again). */
TEST_F(vq, indirect_table_that_is_the_ring_refused)
{
	self->q.indirect = true;
	desc(self->d, 0, DESC_GPA, QSZ * sizeof(struct vring_desc), VRING_DESC_F_INDIRECT, 0);
	post(self->a, 0);
	EXPECT_GT(0, virtq_pop(&self->q, &self->e));
	EXPECT_STREQ(virtq_causes[VQ_INDIRECT_PLACE], self->q.why);
}

TEST_F(vq, zero_length_buffers_skipped)
{
	desc(self->d, 0, 0xdeadbeef000ULL, 0, VRING_DESC_F_NEXT, 1); /* len 0: address never used */
	desc(self->d, 1, BUF_GPA, 8, VRING_DESC_F_WRITE, 0);
	post(self->a, 0);
	ASSERT_EQ(1, virtq_pop(&self->q, &self->e));
	EXPECT_EQ(0, self->e.n_out);
	EXPECT_EQ(1, self->e.n_in);
}

TEST_F(vq, ring_setup_checked)
{
	struct virtq q;

	EXPECT_GT(0, virtq_setup(&q, &self->vm, 3, DESC_GPA, AVAIL_GPA, USED_GPA));	 /* not a power of 2 */
	EXPECT_GT(0, virtq_setup(&q, &self->vm, 0, DESC_GPA, AVAIL_GPA, USED_GPA));
	EXPECT_GT(0, virtq_setup(&q, &self->vm, 1024, DESC_GPA, AVAIL_GPA, USED_GPA)); /* above max */
	EXPECT_GT(0, virtq_setup(&q, &self->vm, QSZ, DESC_GPA + 8, AVAIL_GPA, USED_GPA)); /* misaligned */
	EXPECT_GT(0, virtq_setup(&q, &self->vm, QSZ, RAM_GPA + 0xfff0, AVAIL_GPA, USED_GPA));
	EXPECT_GT(0, virtq_setup(&q, &self->vm, QSZ, DESC_GPA, 0x1000, USED_GPA)); /* not RAM */
}

struct flipper {
	struct vring_desc *d;
	bool stop; /* atomic accesses: the flipper thread reads it */
};

/* The hostile guest: flips a descriptor between a good buffer and one far outside RAM. */
static void *flip(void *arg)
{
	struct flipper *f = arg;

	while (!__atomic_load_n(&f->stop, __ATOMIC_ACQUIRE)) {
		__atomic_store_n(&f->d[0].len, 0x100, __ATOMIC_RELAXED);
		__atomic_store_n(&f->d[0].len, 0x7fffffff, __ATOMIC_RELAXED);
	}
	return NULL;
}

/* A descriptor changed while it is read: whatever the device takes was checked as taken. */
TEST_F(vq, descriptor_changing_under_the_device_is_read_once)
{
	struct flipper f = { .d = self->d };
	pthread_t t;
	int taken = 0, refused = 0;

	desc(self->d, 0, BUF_GPA, 0x100, 0, 0);
	ASSERT_EQ(0, pthread_create(&t, NULL, flip, &f));
	for (int i = 0; i < 20000; i++) {
		post(self->a, 0);
		int r = virtq_pop(&self->q, &self->e);

		if (r == 1) {
			taken++;
			ASSERT_EQ(0x100, self->e.iov[0].iov_len);
			ASSERT_EQ(0x100, self->e.out_len);
			virtq_push(&self->q, self->e.head, 0);
		} else {
			refused++;
			self->q.broken = false; /* start over: the test wants many races */
			self->q.last_avail = self->a->idx;
		}
	}
	__atomic_store_n(&f.stop, true, __ATOMIC_RELEASE);
	pthread_join(t, NULL);
	TH_LOG("%d taken, %d refused", taken, refused);
	EXPECT_GT(taken + refused, 0);
}

/* Where the ring's event fields live in the fixture's RAM (after the rings, virtio 1.x 2.7.10). */
static uint16_t *used_event_of(struct vring_avail *a)
{
	return &a->ring[QSZ];
}

static uint16_t *avail_event_of(struct vring_used *u)
{
	return (uint16_t *)&u->ring[QSZ];
}

/* Pushes n used elements; returns whether the device then interrupts. */
static bool push_n(struct virtq *q, int n)
{
	for (int i = 0; i < n; i++)
		virtq_push(q, 0, 0);
	return virtq_needs_interrupt(q);
}

/* With event_idx the driver's used_event decides, not avail->flags; without it, used_event is
 * ignored. */
TEST_F(vq, event_idx_used_event_decides)
{
	self->q.event_idx = true;
	self->a->flags = VRING_AVAIL_F_NO_INTERRUPT; /* ignored under event_idx */
	*used_event_of(self->a) = 0;
	EXPECT_TRUE(push_n(&self->q, 1)); /* used 0 -> 1 passes used_event 0 */
	*used_event_of(self->a) = 5;
	EXPECT_FALSE(push_n(&self->q, 2)); /* 1 -> 3: not yet at 5 */
	EXPECT_FALSE(push_n(&self->q, 2)); /* 3 -> 5: entry 5 not used yet */
	EXPECT_TRUE(push_n(&self->q, 1));  /* 5 -> 6 */
	EXPECT_FALSE(virtq_needs_interrupt(&self->q)); /* nothing new: never spurious */
	*used_event_of(self->a) = 6;
	EXPECT_TRUE(push_n(&self->q, 3)); /* 6 -> 9 covers 6 */

	self->q.event_idx = false;
	self->a->flags = 0;
	*used_event_of(self->a) = 1000; /* without event_idx only the flag counts */
	EXPECT_TRUE(push_n(&self->q, 1));
}

/* The 16-bit indices wrap: used_event is compared modulo 2^16 (the used index runs from 65534
 * past 0 here). */
TEST_F(vq, event_idx_wraps_around)
{
	self->q.event_idx = true;
	self->q.used_idx = self->q.signalled_used = 65534;
	*used_event_of(self->a) = 65535;
	EXPECT_TRUE(push_n(&self->q, 4)); /* 65534 -> 2 covers 65535 */
	*used_event_of(self->a) = 1; /* behind (2 -> 4 does not cover it) */
	EXPECT_FALSE(push_n(&self->q, 2));
	*used_event_of(self->a) = 4;
	EXPECT_TRUE(push_n(&self->q, 2)); /* 4 -> 6 */
	*used_event_of(self->a) = 65535; /* far behind, across the wrap: no interrupt */
	EXPECT_FALSE(push_n(&self->q, 2));
}

/* Every value a hostile driver can write: the device interrupts exactly when used_event lies in
 * [old, new) modulo 2^16, for batches of 1 to the ring size and starting points across the wrap,
 * and its own state (the indices) never follows the guest's value. */
TEST_F(vq, event_idx_any_used_event)
{
	const uint16_t starts[] = { 0, 1, 100, 32767, 32768, 65530, 65535 };

	self->q.event_idx = true;
	for (size_t s = 0; s < sizeof(starts) / sizeof(starts[0]); s++)
		for (int n = 1; n <= QSZ; n++)
			for (uint32_t ev = 0; ev <= 0xffff; ev++) {
				uint16_t old = starts[s], new = (uint16_t)(old + n);

				self->q.used_idx = self->q.signalled_used = old;
				*used_event_of(self->a) = (uint16_t)ev;
				bool want = (uint16_t)(ev - old) < (uint16_t)n;

				ASSERT_EQ(want, push_n(&self->q, n)) TH_LOG("old %u new %u used_event %u", old, new, ev);
				ASSERT_EQ(new, self->q.used_idx);
				ASSERT_EQ(new, self->q.signalled_used);
			}
}

/* A device that pops until the ring is empty asks to be kicked at the next entry (avail_event =
 * its next index), and not while entries are still pending; without event_idx it writes nothing. */
TEST_F(vq, event_idx_pop_rearms_avail_event)
{
	self->q.event_idx = true;
	*avail_event_of(self->u) = 0xbeef;
	desc(self->d, 0, BUF_GPA, 16, 0, 0);
	desc(self->d, 1, BUF_GPA, 16, 0, 0);
	post(self->a, 0);
	post(self->a, 1);
	ASSERT_EQ(1, virtq_pop(&self->q, &self->e));
	EXPECT_EQ(0xbeef, *avail_event_of(self->u)); /* still popping: no kick wanted yet */
	ASSERT_EQ(1, virtq_pop(&self->q, &self->e));
	EXPECT_EQ(0, virtq_pop(&self->q, &self->e));
	EXPECT_EQ(2, *avail_event_of(self->u)); /* kick when entry 2 is made available */
	EXPECT_TRUE(vring_need_event(*avail_event_of(self->u), 3, 2)); /* what the driver checks */

	ASSERT_EQ(0, virtq_setup(&self->q, &self->vm, QSZ, DESC_GPA, AVAIL_GPA, USED_GPA));
	self->a->idx = 0;
	*avail_event_of(self->u) = 0xbeef;
	EXPECT_EQ(0, virtq_pop(&self->q, &self->e));
	EXPECT_EQ(0xbeef, *avail_event_of(self->u)); /* event_idx off: the field is the guest's */
}

/* A hostile avail index still breaks the queue with event_idx on, also when it appears only on
 * the second look (after the re-arm). */
TEST_F(vq, event_idx_avail_ahead_refused)
{
	self->q.event_idx = true;
	self->a->idx = QSZ + 1;
	EXPECT_GT(0, virtq_pop(&self->q, &self->e));
	EXPECT_TRUE(self->q.broken);
	EXPECT_EQ(0, virtq_pop(&self->q, &self->e));
}

TEST(iov_copies)
{
	uint8_t a[3], b[5], out[8];
	struct iovec iov[2] = { { a, 3 }, { b, 5 } };

	EXPECT_EQ(8, buf_to_iov(iov, 2, 0, "abcdefgh", 8));
	EXPECT_EQ(0, memcmp(a, "abc", 3));
	EXPECT_EQ(0, memcmp(b, "defgh", 5));
	EXPECT_EQ(4, iov_to_buf(iov, 2, 2, out, 4));
	EXPECT_EQ(0, memcmp(out, "cdef", 4));
	EXPECT_EQ(1, iov_to_buf(iov, 2, 7, out, 8));
	EXPECT_EQ(0, iov_to_buf(iov, 2, 9, out, 8));
}

TEST_HARNESS_MAIN
