// SPDX-License-Identifier: MIT
/*
 * The 16550A model: what Linux's 8250 driver depends on, and hostile register values. Every test
 * runs twice: with every access exiting, and in the exact mode (entered by a first THR write that
 * exits), where the guest's accesses are played through the fake KVM: reads from the read-only
 * page, THR writes into a small coalesced ring, until a register write leaves the mode. Reads
 * served by the page are checked against the model's own answer.
 */
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "kselftest_harness.h"
#include "tests/unit/fake_kvm.h"
#include "core/bus.h"
#include "platform/console.h"
#include "core/mmio_ring.h"
#include "platform/uart.h"
#include "core/vm.h"

#define GPA 0x09000000ULL
#define RING_ENTRIES 8 /* small, so long writes fill it */

struct irq_rec {
	int raises, lowers;
	bool level;
};

static void rec_irq(void *opaque, bool level)
{
	struct irq_rec *r = opaque;

	r->level = level;
	if (level)
		r->raises++;
	else
		r->lowers++;
}

FIXTURE(uart) {
	struct uart u;
	struct console_out out;
	struct irq_rec irq;
	int pipe[2];
	struct vm *vm;
	struct fake_kvm *fk;
	void *ring;
	int page_reads; /* reads the page answered without an exit */
};

FIXTURE_VARIANT(uart) {
	bool fast;
};
FIXTURE_VARIANT_ADD(uart, trapping) { .fast = false };
FIXTURE_VARIANT_ADD(uart, exact_mode) { .fast = true };

/* The test's stand-in for the vCPUs and their guest: every access as KVM would carry it out. */
#define GUEST_RD(off) guest_rd(_metadata, self, off)
#define GUEST_WR(off, v) guest_wr(self, off, v)

static uint8_t guest_rd(struct __test_metadata *_metadata, FIXTURE_DATA(uart) *self, uint64_t off)
{
	uint8_t v = 0xee;

	if (fake_kvm_guest_access(self->fk, self->vm, GPA + off, &v, 1, false) == 0) {
		/* from the page: only where no read has a side effect, and what the register holds */
		self->page_reads++;
		EXPECT_TRUE(uart_exact(&self->u, NULL)) TH_LOG("read of %llu from the page of an inexact UART",
							     (unsigned long long)off);
		EXPECT_EQ(uart_peek(&self->u, off), v) TH_LOG("page byte %llu differs from the register",
							    (unsigned long long)off);
	}
	return v;
}

static void guest_wr(FIXTURE_DATA(uart) *self, uint64_t off, uint8_t v)
{
	fake_kvm_guest_access(self->fk, self->vm, GPA + off, &v, 1, true);
}

/* The console thread's part: the ring, then the output ring to the fd. */
static void console_part(FIXTURE_DATA(uart) *self)
{
	mmio_ring_drain(&self->vm->coalesced);
	console_out_drain(&self->out);
}

FIXTURE_SETUP(uart)
{
	memset(&self->irq, 0, sizeof(self->irq));
	self->page_reads = 0;
	self->vm = calloc(1, sizeof(*self->vm));
	self->fk = calloc(1, sizeof(*self->fk));
	ASSERT_TRUE(self->vm && self->fk);
	ASSERT_EQ(0, fake_vm_init(self->vm, self->fk, 0, 0));
	ASSERT_EQ(0, pipe(self->pipe));
	ASSERT_EQ(0, console_out_init(&self->out, self->pipe[1], NULL, NULL));
	uart_init(&self->u, &self->out, rec_irq, &self->irq);
	ASSERT_EQ(0, bus_register(&self->vm->mmio, GPA, 0x1000, uart_mmio, &self->u, "uart"));
	self->ring = NULL;
	if (variant->fast) {
		size_t bytes = sizeof(struct kvm_coalesced_mmio_ring) + RING_ENTRIES * sizeof(struct kvm_coalesced_mmio);

		self->ring = calloc(1, bytes);
		ASSERT_NE(NULL, self->ring);
		mmio_ring_init(&self->vm->coalesced, self->ring, bytes, self->vm->kvm);
		ASSERT_EQ(0, uart_fast_init(&self->u, self->vm, GPA, sysconf(_SC_PAGESIZE), NULL, NULL));
		ASSERT_EQ(NULL, self->u.fast.why);
		self->u.fast.enter_after = 1;
		char c;

		guest_wr(self, 0, '@'); /* in: each test starts in the mode */
		ASSERT_TRUE(self->u.fast.on);
		console_part(self);
		ASSERT_EQ(1, read(self->pipe[0], &c, 1));
		self->out.bytes = 0; /* the set-up's byte is not the test's */
	}
}

FIXTURE_TEARDOWN(uart)
{
	if (variant->fast) /* the mode was really used, where the test's accesses allow it */
		TH_LOG("exact mode: entered %llu times, %d reads from the page, %llu bytes by ring",
		       (unsigned long long)self->u.fast.enters, self->page_reads,
		       (unsigned long long)self->u.fast.thr_ring);
	uart_destroy(&self->u);
	console_out_destroy(&self->out);
	close(self->pipe[0]);
	close(self->pipe[1]);
	free(self->ring);
	fake_vm_free(self->vm);
	free(self->vm);
	free(self->fk);
}

TEST_F(uart, transmit_reaches_the_fd)
{
	char buf[8] = { 0 };

	GUEST_WR(0, 'h');
	GUEST_WR(0, 'i');
	console_part(self);
	ASSERT_EQ(2, read(self->pipe[0], buf, sizeof(buf)));
	EXPECT_STREQ("hi", buf);
	EXPECT_EQ(0x60, GUEST_RD(5) & 0x60); /* THRE | TEMT: always ready */
	if (variant->fast) { /* both bytes went by ring, the status read came from the page */
		EXPECT_EQ(2, self->u.fast.thr_ring);
		EXPECT_EQ(1, self->page_reads);
	}
}

TEST_F(uart, thre_interrupt_semantics)
{
	EXPECT_EQ(0x01, GUEST_RD(2) & 0x0f); /* nothing pending */
	GUEST_WR(1, 0x02);			 /* enable THRI: fires at once */
	EXPECT_TRUE(self->irq.level);
	EXPECT_EQ(0x02, GUEST_RD(2) & 0x0f); /* reading IIR acknowledges it */
	EXPECT_FALSE(self->irq.level);
	EXPECT_EQ(0x01, GUEST_RD(2) & 0x0f);
	GUEST_WR(0, 'x'); /* a write empties THR again: pending once more */
	EXPECT_TRUE(self->irq.level);
	GUEST_WR(1, 0x00); /* disabling drops the line */
	EXPECT_FALSE(self->irq.level);
}

TEST_F(uart, receive_fifo_and_interrupt)
{
	const uint8_t in[] = "abc";

	EXPECT_EQ(0, GUEST_RD(5) & 0x01);
	EXPECT_EQ(3, uart_push_input(&self->u, in, 3));
	EXPECT_FALSE(self->irq.level); /* RDI not enabled yet */
	GUEST_WR(1, 0x01);
	EXPECT_TRUE(self->irq.level);
	EXPECT_EQ(0x04, GUEST_RD(2) & 0x0f);
	EXPECT_EQ(1, GUEST_RD(5) & 0x01);
	EXPECT_EQ('a', GUEST_RD(0));
	EXPECT_EQ('b', GUEST_RD(0));
	EXPECT_EQ('c', GUEST_RD(0));
	EXPECT_EQ(0, GUEST_RD(5) & 0x01);
	EXPECT_FALSE(self->irq.level);
	EXPECT_EQ(0, GUEST_RD(0)); /* empty FIFO reads 0 */
}

TEST_F(uart, fifo_is_bounded)
{
	uint8_t big[200];

	memset(big, 'z', sizeof(big));
	EXPECT_EQ(UART_FIFO_SIZE, uart_push_input(&self->u, big, sizeof(big)));
	EXPECT_EQ(0, uart_push_input(&self->u, big, 1));
	GUEST_WR(2, 0x03); /* FCR: enable + clear RX */
	EXPECT_EQ(0, GUEST_RD(5) & 0x01);
	EXPECT_EQ(0xc0, GUEST_RD(2) & 0xc0); /* FIFOs reported enabled */
}

TEST_F(uart, divisor_latch_and_scratch)
{
	GUEST_WR(3, 0x83); /* DLAB */
	GUEST_WR(0, 0x12);
	GUEST_WR(1, 0x34);
	EXPECT_EQ(0x12, GUEST_RD(0));
	EXPECT_EQ(0x34, GUEST_RD(1));
	GUEST_WR(3, 0x03);
	EXPECT_EQ(0, GUEST_RD(1)); /* IER untouched by the divisor writes */
	GUEST_WR(7, 0x5a);
	EXPECT_EQ(0x5a, GUEST_RD(7));
}

TEST_F(uart, hostile_accesses_are_harmless)
{
	uint8_t buf[8];

	for (int exit = 0; exit < 2; exit++) { /* from the page, then by exit */
		memset(buf, 0xff, sizeof(buf));
		if (exit)
			uart_mmio(&self->u, 0x800, buf, 8, false);
		else
			fake_kvm_guest_access(self->fk, self->vm, GPA + 0x800, buf, 8, false);
		for (int i = 0; i < 8; i++) /* past the registers */
			EXPECT_EQ(0, buf[i]);
	}
	fake_kvm_guest_access(self->fk, self->vm, GPA + 0xffc, buf, 8, true); /* across the end */
	uart_mmio(&self->u, 0xfff, buf, 8, true);
	GUEST_WR(1, 0xff); /* reserved IER bits are dropped */
	EXPECT_EQ(0x0f, GUEST_RD(1));
	GUEST_WR(4, 0x10); /* loopback: output comes back as input */
	GUEST_WR(0, 'L');
	EXPECT_EQ('L', GUEST_RD(0));
}

static void count_watch(void *opaque)
{
	(*(int *)opaque)++;
}

TEST_F(uart, watch_matches_guest_output)
{
	/* only the kernel's line (printk's time prefix) counts; console_test has the rule's cases */
	const char *out = "[    0.5] KKernel pan[    1.234567] Kernel panic - not syncing: VFS\r\n"
			  "[    1.234567] Kernel panic - not syncing: VFS\r\nKernel panic - not syncing";
	int hits = 0;

	self->out.on_panic = count_watch;
	self->out.panic_opaque = &hits;
	for (const char *p = out; *p; p++)
		GUEST_WR(0, (uint8_t)*p);
	console_part(self);
	EXPECT_EQ(1, hits);
	EXPECT_EQ(strlen(out), self->out.bytes);
}

TEST_HARNESS_MAIN
