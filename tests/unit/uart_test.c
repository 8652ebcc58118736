// SPDX-License-Identifier: MIT
/* The 16550A model: what Linux's 8250 driver depends on, and hostile register values. */
#include <string.h>
#include <unistd.h>

#include "kselftest_harness.h"
#include "vmm/console.h"
#include "vmm/uart.h"

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

static uint8_t rd(struct uart *u, uint64_t off)
{
	uint8_t v = 0xee;

	uart_mmio(u, off, &v, 1, false);
	return v;
}

static void wr(struct uart *u, uint64_t off, uint8_t v)
{
	uart_mmio(u, off, &v, 1, true);
}

FIXTURE(uart) {
	struct uart u;
	struct console_out out;
	struct irq_rec irq;
	int pipe[2];
};

FIXTURE_SETUP(uart)
{
	memset(&self->irq, 0, sizeof(self->irq));
	ASSERT_EQ(0, pipe(self->pipe));
	ASSERT_EQ(0, console_out_init(&self->out, self->pipe[1], NULL, NULL));
	uart_init(&self->u, &self->out, rec_irq, &self->irq);
}

FIXTURE_TEARDOWN(uart)
{
	console_out_destroy(&self->out);
	close(self->pipe[0]);
	close(self->pipe[1]);
}

TEST_F(uart, transmit_reaches_the_fd)
{
	char buf[8] = { 0 };

	wr(&self->u, 0, 'h');
	wr(&self->u, 0, 'i');
	EXPECT_EQ(0, console_out_drain(&self->out)); /* the console thread's part */
	ASSERT_EQ(2, read(self->pipe[0], buf, sizeof(buf)));
	EXPECT_STREQ("hi", buf);
	EXPECT_EQ(0x60, rd(&self->u, 5) & 0x60); /* THRE | TEMT: always ready */
}

TEST_F(uart, thre_interrupt_semantics)
{
	EXPECT_EQ(0x01, rd(&self->u, 2) & 0x0f); /* nothing pending */
	wr(&self->u, 1, 0x02);			 /* enable THRI: fires at once */
	EXPECT_TRUE(self->irq.level);
	EXPECT_EQ(0x02, rd(&self->u, 2) & 0x0f); /* reading IIR acknowledges it */
	EXPECT_FALSE(self->irq.level);
	EXPECT_EQ(0x01, rd(&self->u, 2) & 0x0f);
	wr(&self->u, 0, 'x'); /* a write empties THR again: pending once more */
	EXPECT_TRUE(self->irq.level);
	wr(&self->u, 1, 0x00); /* disabling drops the line */
	EXPECT_FALSE(self->irq.level);
}

TEST_F(uart, receive_fifo_and_interrupt)
{
	const uint8_t in[] = "abc";

	EXPECT_EQ(0, rd(&self->u, 5) & 0x01);
	EXPECT_EQ(3, uart_push_input(&self->u, in, 3));
	EXPECT_FALSE(self->irq.level); /* RDI not enabled yet */
	wr(&self->u, 1, 0x01);
	EXPECT_TRUE(self->irq.level);
	EXPECT_EQ(0x04, rd(&self->u, 2) & 0x0f);
	EXPECT_EQ(1, rd(&self->u, 5) & 0x01);
	EXPECT_EQ('a', rd(&self->u, 0));
	EXPECT_EQ('b', rd(&self->u, 0));
	EXPECT_EQ('c', rd(&self->u, 0));
	EXPECT_EQ(0, rd(&self->u, 5) & 0x01);
	EXPECT_FALSE(self->irq.level);
	EXPECT_EQ(0, rd(&self->u, 0)); /* empty FIFO reads 0 */
}

TEST_F(uart, fifo_is_bounded)
{
	uint8_t big[200];

	memset(big, 'z', sizeof(big));
	EXPECT_EQ(UART_FIFO_SIZE, uart_push_input(&self->u, big, sizeof(big)));
	EXPECT_EQ(0, uart_push_input(&self->u, big, 1));
	wr(&self->u, 2, 0x03); /* FCR: enable + clear RX */
	EXPECT_EQ(0, rd(&self->u, 5) & 0x01);
	EXPECT_EQ(0xc0, rd(&self->u, 2) & 0xc0); /* FIFOs reported enabled */
}

TEST_F(uart, divisor_latch_and_scratch)
{
	wr(&self->u, 3, 0x83); /* DLAB */
	wr(&self->u, 0, 0x12);
	wr(&self->u, 1, 0x34);
	EXPECT_EQ(0x12, rd(&self->u, 0));
	EXPECT_EQ(0x34, rd(&self->u, 1));
	wr(&self->u, 3, 0x03);
	EXPECT_EQ(0, rd(&self->u, 1)); /* IER untouched by the divisor writes */
	wr(&self->u, 7, 0x5a);
	EXPECT_EQ(0x5a, rd(&self->u, 7));
}

TEST_F(uart, hostile_accesses_are_harmless)
{
	uint8_t buf[8];

	memset(buf, 0xff, sizeof(buf));
	uart_mmio(&self->u, 0x800, buf, 8, false); /* past the registers */
	for (int i = 0; i < 8; i++)
		EXPECT_EQ(0, buf[i]);
	uart_mmio(&self->u, 0xfff, buf, 8, true);
	wr(&self->u, 1, 0xff); /* reserved IER bits are dropped */
	EXPECT_EQ(0x0f, rd(&self->u, 1));
	wr(&self->u, 4, 0x10); /* loopback: output comes back as input */
	wr(&self->u, 0, 'L');
	EXPECT_EQ('L', rd(&self->u, 0));
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
		wr(&self->u, 0, (uint8_t)*p);
	EXPECT_EQ(1, hits);
	EXPECT_EQ(strlen(out), self->out.bytes);
}

TEST_HARNESS_MAIN
