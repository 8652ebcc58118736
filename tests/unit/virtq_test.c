// SPDX-License-Identifier: MIT
/* Split virtqueues against good and hostile rings: every guest value is checked, nothing trusted. */
#include <pthread.h>
#include <string.h>

#include "kselftest_harness.h"
#include "virtio/virtio.h"
#include "vmm/mem.h"
#include "vmm/vm.h"

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
