// SPDX-License-Identifier: MIT
/*
 * The 16550's exact mode through the fake KVM: when it is entered and left (and in which order the
 * memslot and the zone come and go), the coalesced ring drained in order and its full-ring
 * fallback, hostile ring entries, refusals from KVM, and a long random run of guest accesses that
 * must look the same to the guest as a UART whose every access exits.
 */
#include <fcntl.h>
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
#define RING_ENTRIES 8 /* KVM keeps one unused: 7 writes fit */
#define OUT_MAX 65536

/* One UART on a fake VM, with or without the exact mode, its output on a pipe. */
struct rig {
	struct vm *vm;
	struct fake_kvm *fk;
	struct uart u;
	struct console_out out;
	int pipe[2];
	void *ring;
	bool level;
	int raises, raises_with_page; /* the line went up while the page was still mapped */
	char got[OUT_MAX];
	size_t nr_got;
};

static void rig_irq(void *opaque, bool level)
{
	struct rig *r = opaque;

	if (level && !r->level) {
		r->raises++;
		r->raises_with_page += fake_kvm_slot_at(r->fk, GPA, 1) != NULL;
	}
	r->level = level;
}

/* The arch's publish_to_guest as the UART calls it: what the page held at that moment. Static:
 * the hook has no opaque (cache maintenance needs none); each test runs in its own process. */
static struct {
	int calls;
	const void *p;
	size_t len;
	uint8_t bytes[UART_NR_REGS];
} published;

static void fake_publish(const void *p, size_t len)
{
	published.calls++;
	published.p = p;
	published.len = len;
	memcpy(published.bytes, p, len < UART_NR_REGS ? len : UART_NR_REGS);
}

static int rig_init(struct rig *r, bool fast)
{
	memset(r, 0, sizeof(*r));
	r->vm = calloc(1, sizeof(*r->vm));
	r->fk = calloc(1, sizeof(*r->fk));
	if (!r->vm || !r->fk || fake_vm_init(r->vm, r->fk, 0, 0) || pipe2(r->pipe, O_NONBLOCK) ||
	    console_out_init(&r->out, r->pipe[1], NULL, NULL))
		return -1;
	uart_init(&r->u, &r->out, rig_irq, r);
	if (bus_register(&r->vm->mmio, GPA, 0x1000, uart_mmio, &r->u, "uart"))
		return -1;
	if (!fast)
		return 0;
	size_t bytes = sizeof(struct kvm_coalesced_mmio_ring) + RING_ENTRIES * sizeof(struct kvm_coalesced_mmio);

	r->ring = calloc(1, bytes);
	if (!r->ring)
		return -1;
	mmio_ring_init(&r->vm->coalesced, r->ring, bytes, r->vm->kvm);
	return uart_fast_init(&r->u, r->vm, GPA, sysconf(_SC_PAGESIZE), NULL, fake_publish);
}

static void rig_free(struct rig *r)
{
	uart_destroy(&r->u);
	console_out_destroy(&r->out);
	close(r->pipe[0]);
	close(r->pipe[1]);
	free(r->ring);
	if (r->vm)
		fake_vm_free(r->vm);
	free(r->vm);
	free(r->fk);
}

/* The guest's access; returns 1 when it exited. */
static int rig_access(struct rig *r, uint64_t off, uint8_t *data, uint32_t len, bool is_write)
{
	return fake_kvm_guest_access(r->fk, r->vm, GPA + off, data, len, is_write);
}

static int rig_wr(struct rig *r, uint64_t off, uint8_t v)
{
	return rig_access(r, off, &v, 1, true);
}

static uint8_t rig_rd(struct rig *r, uint64_t off, int *exited)
{
	uint8_t v = 0xee;
	int e = rig_access(r, off, &v, 1, false);

	if (exited)
		*exited = e;
	return v;
}

/* The console thread's part; what reached the fd is appended to r->got. */
static const char *rig_output(struct rig *r)
{
	mmio_ring_drain(&r->vm->coalesced);
	console_out_drain(&r->out);
	for (;;) {
		ssize_t n = read(r->pipe[0], r->got + r->nr_got, sizeof(r->got) - 1 - r->nr_got);

		if (n <= 0)
			break;
		r->nr_got += n;
	}
	r->got[r->nr_got] = 0;
	return r->got;
}

FIXTURE(fast) {
	struct rig r;
};
FIXTURE_SETUP(fast)
{
	ASSERT_EQ(0, rig_init(&self->r, true));
	ASSERT_EQ(NULL, self->r.u.fast.why);
}
FIXTURE_TEARDOWN(fast) { rig_free(&self->r); }

TEST_F(fast, entered_after_thr_writes_by_exit_then_no_exits)
{
	struct rig *r = &self->r;
	struct fake_kvm *fk = r->fk;
	int exited;

	for (int i = 0; i < UART_FAST_ENTER_AFTER - 1; i++) {
		EXPECT_EQ(1, rig_wr(r, 0, 'a' + i));
		EXPECT_FALSE(r->u.fast.on);
	}
	EXPECT_EQ(1, rig_wr(r, 0, 'a' + UART_FAST_ENTER_AFTER - 1));
	ASSERT_TRUE(r->u.fast.on);
	/* the page as a read-only memslot over the whole window, then THR's byte as a zone */
	int ms = fake_kvm_find(fk, FK_SET_MEMSLOT, 0), zone = fake_kvm_find(fk, FK_COALESCED_ASSIGN, 0);

	ASSERT_LE(0, ms);
	ASSERT_LT(ms, zone);
	EXPECT_EQ(GPA, fk->call[ms].addr);
	EXPECT_EQ((uint64_t)sysconf(_SC_PAGESIZE), fk->call[ms].size);
	EXPECT_EQ(KVM_MEM_READONLY, fk->call[ms].flags);
	EXPECT_EQ(GPA, fk->call[zone].addr);
	EXPECT_EQ(1, fk->call[zone].size);
	/* earlycon's loop: LSR, then THR; neither exits */
	for (int i = 0; i < 5; i++) {
		EXPECT_EQ(0x60, rig_rd(r, 5, &exited) & 0x60);
		EXPECT_EQ(0, exited);
		EXPECT_EQ(0, rig_wr(r, 0, '0' + i));
	}
	EXPECT_EQ(0, rig_rd(r, 0, &exited)); /* RBR, nothing received */
	EXPECT_EQ(0, exited);
	/* a write that keeps the mode (receive interrupt on) exits, and the page follows it */
	EXPECT_EQ(1, rig_wr(r, 1, 0x01));
	EXPECT_TRUE(r->u.fast.on);
	EXPECT_EQ(0x01, rig_rd(r, 1, &exited));
	EXPECT_EQ(0, exited);
	EXPECT_EQ(1, rig_wr(r, 7, 0x5a)); /* scratch */
	EXPECT_EQ(0x5a, rig_rd(r, 7, &exited));
	EXPECT_STREQ("abcd01234", rig_output(r));
	EXPECT_EQ(5, r->u.fast.thr_ring);
	EXPECT_EQ(1, r->u.fast.enters);
}

/* Every update of the page is published (the arch's publish_to_guest: arm64 cleans the lines the
 * guest reads uncached) after it is written, over the registers the guest reads. */
TEST_F(fast, page_published_after_each_fill)
{
	struct rig *r = &self->r;
	int exited, before = published.calls;

	EXPECT_LE(1, before); /* the page's first contents */
	EXPECT_EQ(r->u.fast.page, published.p);
	EXPECT_EQ(UART_NR_REGS, published.len);
	EXPECT_EQ(1, rig_wr(r, 7, 0x5a)); /* scratch */
	EXPECT_LT(before, published.calls);
	EXPECT_EQ(0x5a, published.bytes[7]); /* filled, then published */
	before = published.calls;
	EXPECT_EQ(1, rig_wr(r, 7, 0xa5));
	EXPECT_LT(before, published.calls);
	EXPECT_EQ(0xa5, published.bytes[7]);
	EXPECT_EQ(0xa5, rig_rd(r, 7, &exited));
}

/* Each condition: the zone goes, then the memslot, before the writing vCPU resumes; reads exit
 * again; and the mode comes back once the condition is gone. */
TEST_F(fast, left_at_once_for_each_condition)
{
	struct rig *r = &self->r;
	struct fake_kvm *fk = r->fk;
	static const char *const name[UART_NR_LEAVE] = { "input", "THR interrupt", "loopback", "DLAB" };

	r->u.fast.enter_after = 1;
	for (int why = 0; why < UART_NR_LEAVE; why++) {
		int exited;

		rig_wr(r, 0, 'x');
		ASSERT_TRUE(r->u.fast.on) TH_LOG("%s: not entered", name[why]);
		int from = fk->nr;

		switch (why) {
		case UART_LEAVE_INPUT:
			rig_wr(r, 1, 0x01); /* receive interrupt on: the line rises with the input */
			EXPECT_EQ(2, uart_push_input(&r->u, (const uint8_t *)"hi", 2));
			break;
		case UART_LEAVE_THRI:
			rig_wr(r, 1, 0x02);
			break;
		case UART_LEAVE_LOOP:
			rig_wr(r, 4, 0x18);
			break;
		case UART_LEAVE_DLAB:
			rig_wr(r, 3, 0x83);
			break;
		}
		EXPECT_FALSE(r->u.fast.on) TH_LOG("%s did not leave the mode", name[why]);
		EXPECT_EQ(1, r->u.fast.leaves[why]) TH_LOG("%s", name[why]);
		int zone = fake_kvm_find(fk, FK_COALESCED_DEASSIGN, from);
		int ms = fake_kvm_find(fk, FK_SET_MEMSLOT, from);

		ASSERT_LE(0, zone) TH_LOG("%s: zone not unregistered", name[why]);
		ASSERT_LT(zone, ms) TH_LOG("%s: memslot not deleted after the zone", name[why]);
		EXPECT_EQ(0, fk->call[ms].size);
		EXPECT_EQ(NULL, fake_kvm_slot_at(fk, GPA, 1));
		rig_rd(r, 5, &exited);
		EXPECT_EQ(1, exited) TH_LOG("%s: a read did not exit", name[why]);
		EXPECT_EQ(0, r->raises_with_page) TH_LOG("%s: the line rose before the page went", name[why]);
		switch (why) { /* undo it */
		case UART_LEAVE_INPUT:
			EXPECT_EQ(1, r->level);
			EXPECT_EQ('h', rig_rd(r, 0, &exited));
			EXPECT_EQ('i', rig_rd(r, 0, &exited));
			rig_wr(r, 1, 0x00);
			break;
		case UART_LEAVE_THRI:
			rig_wr(r, 1, 0x00);
			break;
		case UART_LEAVE_LOOP:
			rig_wr(r, 4, 0x08);
			break;
		case UART_LEAVE_DLAB:
			rig_wr(r, 3, 0x03);
			break;
		}
		EXPECT_FALSE(r->u.fast.on); /* entered by THR writes only */
		rig_wr(r, 0, 'y');
		EXPECT_TRUE(r->u.fast.on) TH_LOG("%s: not entered again", name[why]);
		EXPECT_EQ(0, rig_wr(r, 0, 'z'));
	}
	EXPECT_EQ(1 + UART_NR_LEAVE, r->u.fast.enters);
	EXPECT_STREQ("xyzxyzxyzxyz", rig_output(r));
}

/* Bytes in the ring come before whatever a later exit does: none loops back once loopback is on,
 * and a byte written by exit after them comes after them. */
TEST_F(fast, ring_drained_in_order_before_an_exit)
{
	struct rig *r = &self->r;
	int exited;

	r->u.fast.enter_after = 1;
	rig_wr(r, 0, 'a');
	ASSERT_TRUE(r->u.fast.on);
	EXPECT_EQ(0, rig_wr(r, 0, 'b'));
	EXPECT_EQ(0, rig_wr(r, 0, 'c'));
	EXPECT_EQ(1, rig_wr(r, 4, 0x18)); /* loopback, by exit: b and c go out first */
	EXPECT_EQ(0, rig_rd(r, 5, &exited) & 0x01);
	EXPECT_EQ(1, rig_wr(r, 0, 'd')); /* looped back */
	EXPECT_EQ(0x01, rig_rd(r, 5, &exited) & 0x01);
	EXPECT_EQ('d', rig_rd(r, 0, &exited));
	rig_wr(r, 4, 0x08);
	rig_wr(r, 0, 'e');
	EXPECT_EQ(0, rig_wr(r, 0, 'f'));
	EXPECT_EQ(1, rig_wr(r, 1, 0x02)); /* THR interrupt on: f out before, g after */
	EXPECT_EQ(1, rig_wr(r, 0, 'g'));
	EXPECT_STREQ("abcefg", rig_output(r));
}

/* KVM finds the ring full: the write exits, the exit drains the ring first, nothing is reordered. */
TEST_F(fast, full_ring_falls_back_to_an_exit_in_order)
{
	struct rig *r = &self->r;
	const char *msg = "0123456789abcdefghij";
	int exits = 0;

	r->u.fast.enter_after = 1;
	rig_wr(r, 0, '>');
	for (const char *p = msg; *p; p++)
		exits += rig_wr(r, 0, (uint8_t)*p);
	EXPECT_TRUE(r->u.fast.on);
	EXPECT_EQ(2, exits); /* 7 fit, the 8th exits; 7 more, the 16th exits */
	EXPECT_STREQ(">0123456789abcdefghij", rig_output(r));
	EXPECT_EQ(2, r->u.fast.thr_exit_on);
	EXPECT_EQ(18, r->u.fast.thr_ring);
}

/* Entries no zone holds, or of a length THR's zone cannot have, reach nobody; a corrupt index is
 * survived. (KVM writes the ring, but vmm trusts no index it did not check.) */
TEST_F(fast, stray_and_malformed_ring_entries_are_dropped)
{
	struct rig *r = &self->r;
	struct kvm_coalesced_mmio_ring *ring = r->ring;
	const struct { uint64_t addr; uint32_t len; } bad[] = {
		{ GPA, 0 }, { GPA, 9 }, { GPA, 2 }, { GPA + 1, 1 }, { GPA - 1, 1 }, { 0, 1 }, { ~0ULL, 1 },
	};
	int n = sizeof(bad) / sizeof(bad[0]);

	ASSERT_LT(n, RING_ENTRIES);
	for (int i = 0; i < n; i++) {
		ring->coalesced_mmio[i].phys_addr = bad[i].addr;
		ring->coalesced_mmio[i].len = bad[i].len;
		memset(ring->coalesced_mmio[i].data, 'B', 8);
	}
	ring->last = n;
	EXPECT_EQ((unsigned int)n, mmio_ring_drain(&r->vm->coalesced));
	EXPECT_EQ((uint64_t)n, atomic_load(&r->vm->coalesced.stray));
	EXPECT_EQ(0, r->u.out->bytes);
	EXPECT_EQ(ring->first, ring->last);
	ring->first = 5000; /* out of range */
	ring->last = 3;
	mmio_ring_drain(&r->vm->coalesced);
	EXPECT_EQ(3, ring->first); /* started over where KVM is */
	ring->last = 7000;
	mmio_ring_drain(&r->vm->coalesced);
	EXPECT_LT(ring->first, RING_ENTRIES);
	ring->last = ring->first;
	EXPECT_EQ(0, r->u.out->bytes);
	EXPECT_STREQ("", rig_output(r));
}

TEST_F(fast, refused_memslot_or_zone_leaves_it_trapping)
{
	struct rig *r = &self->r;
	struct fake_kvm *fk = r->fk;
	int exited;

	r->u.fast.enter_after = 1;
	fk->fail_op = FK_SET_MEMSLOT;
	fk->fail_nth = 1;
	EXPECT_EQ(1, rig_wr(r, 0, 'a'));
	EXPECT_FALSE(r->u.fast.on);
	EXPECT_NE(NULL, r->u.fast.why);
	EXPECT_EQ(1, rig_wr(r, 0, 'b')); /* no second try */
	EXPECT_EQ(1, fake_kvm_count(fk, FK_SET_MEMSLOT));
	EXPECT_EQ(0, fake_kvm_count(fk, FK_COALESCED_ASSIGN));
	rig_rd(r, 5, &exited);
	EXPECT_EQ(1, exited);
	EXPECT_STREQ("ab", rig_output(r));
	char *text = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&text, &len);

	uart_summary(&r->u, f);
	fclose(f);
	EXPECT_NE(NULL, strstr(text, "KVM_MEM_READONLY")) TH_LOG("%s", text);
	free(text);

	/* the zone refused: the memslot is taken back */
	rig_free(r);
	ASSERT_EQ(0, rig_init(r, true));
	fk = r->fk;
	r->u.fast.enter_after = 1;
	fk->fail_op = FK_COALESCED_ASSIGN;
	fk->fail_nth = 1;
	EXPECT_EQ(1, rig_wr(r, 0, 'c'));
	EXPECT_FALSE(r->u.fast.on);
	EXPECT_EQ(2, fake_kvm_count(fk, FK_SET_MEMSLOT)); /* made, then deleted */
	EXPECT_EQ(NULL, fake_kvm_slot_at(fk, GPA, 1));
	EXPECT_EQ(1, rig_wr(r, 0, 'd'));
	EXPECT_STREQ("cd", rig_output(r));
}

TEST(unavailable_mode_says_why)
{
	struct rig r;
	char *text = NULL;
	size_t len = 0;

	ASSERT_EQ(0, rig_init(&r, false));
	/* no ring */
	ASSERT_EQ(0, uart_fast_init(&r.u, r.vm, GPA, sysconf(_SC_PAGESIZE), NULL, NULL));
	EXPECT_NE(NULL, strstr(r.u.fast.why, "KVM_CAP_COALESCED_MMIO"));
	EXPECT_EQ(1, rig_wr(&r, 0, 'a'));
	rig_wr(&r, 0, 'b');
	rig_wr(&r, 0, 'c');
	rig_wr(&r, 0, 'd');
	rig_wr(&r, 0, 'e');
	EXPECT_FALSE(r.u.fast.on);
	EXPECT_EQ(0, r.fk->nr);
	FILE *f = open_memstream(&text, &len);

	uart_summary(&r.u, f);
	fclose(f);
	EXPECT_NE(NULL, strstr(text, "unavailable")) TH_LOG("%s", text);
	free(text);
	rig_free(&r);
}

/* A deterministic PRNG: the run is the same every time, and a failure names its step. */
static uint32_t next(uint64_t *s)
{
	*s = *s * 6364136223846793005ULL + 1442695040888963407ULL;
	return (uint32_t)(*s >> 33);
}

/*
 * 20000 random guest steps (register writes of any value at any offset, reads 1 to 8 bytes wide,
 * input, the console thread's drains) on two UARTs, one trapping, one with the mode on offer: every
 * read, the interrupt line after every step, and the output must be the same.
 */
TEST(random_accesses_look_the_same_as_trapping)
{
	struct rig *t = calloc(1, sizeof(*t)), *f = calloc(1, sizeof(*f));
	uint64_t seed = 0x16550a;
	int page_reads = 0, ring_bytes;

	ASSERT_TRUE(t && f);
	ASSERT_EQ(0, rig_init(t, false));
	ASSERT_EQ(0, rig_init(f, true));
	f->u.fast.enter_after = 2;
	for (int step = 0; step < 20000; step++) {
		uint32_t op = next(&seed) % 100;
		uint64_t off = next(&seed) % 12; /* past the registers too */
		uint8_t v = next(&seed);

		if (op < 40) { /* mostly the console's own pattern: LSR, THR */
			uint8_t a = 0, b = 0;
			int exited = rig_access(f, 5, &b, 1, false);

			rig_access(t, 5, &a, 1, false);
			page_reads += !exited;
			ASSERT_EQ(a, b) TH_LOG("step %d: LSR", step);
			if (a & 0x01) { /* data ready: read it, as the driver does */
				rig_access(t, 0, &a, 1, false);
				rig_access(f, 0, &b, 1, false);
				ASSERT_EQ(a, b) TH_LOG("step %d: RBR", step);
			}
			rig_wr(t, 0, 'A' + v % 26);
			rig_wr(f, 0, 'A' + v % 26);
		} else if (op < 55) { /* a register write; control registers mostly to harmless values */
			if (off == 3 && v & 0x80 && next(&seed) % 4)
				v &= 0x7f;
			if (off == 4 && v & 0x10 && next(&seed) % 4)
				v &= ~0x10;
			if (off == 1 && v & 0x02 && next(&seed) % 2)
				v &= ~0x02;
			rig_wr(t, off, v);
			rig_wr(f, off, v);
		} else if (op < 90) {
			static const uint32_t lens[] = { 1, 1, 1, 2, 4, 8 };
			uint32_t len = lens[next(&seed) % 6];
			uint8_t a[8], b[8];
			int exited;

			memset(a, 0x11, sizeof(a));
			memset(b, 0x22, sizeof(b));
			rig_access(t, off, a, len, false);
			exited = rig_access(f, off, b, len, false);
			page_reads += !exited;
			ASSERT_EQ(0, memcmp(a, b, len)) TH_LOG("step %d: read of %u at %llu: %02x vs %02x", step,
							       len, (unsigned long long)off, a[0], b[0]);
		} else if (op < 93) {
			uint8_t in[3] = { v, v + 1, v + 2 };
			uint32_t n = 1 + next(&seed) % 3;

			ASSERT_EQ(uart_push_input(&t->u, in, n), uart_push_input(&f->u, in, n));
		} else {
			rig_output(t);
			rig_output(f);
		}
		ASSERT_EQ(t->level, f->level) TH_LOG("step %d: interrupt line", step);
	}
	ASSERT_STREQ(rig_output(t), rig_output(f));
	ring_bytes = (int)f->u.fast.thr_ring;
	TH_LOG("%zu bytes out; exact mode entered %llu times, %d reads from the page, %d bytes by ring",
	       f->nr_got, (unsigned long long)f->u.fast.enters, page_reads, ring_bytes);
	/* the run did exercise the mode */
	EXPECT_GT(f->u.fast.enters, 10);
	EXPECT_GT(page_reads, 1000);
	EXPECT_GT(ring_bytes, 1000);
	rig_free(t);
	rig_free(f);
	free(t);
	free(f);
}

TEST_HARNESS_MAIN
