// SPDX-License-Identifier: MIT
/*
 * The split irqchip's userspace IOAPIC against the fake KVM seam: registers as a guest's driver
 * reads and writes them, the MSI routes it keeps on GSIs 0-23, edge and level delivery with the
 * remote IRR and EOI exits, the resamplefd of a level irqfd (VFIO INTx), and hostile entries.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <unistd.h>

#include "kselftest_harness.h"
#include "tests/unit/fake_kvm.h"
#include "core/irq.h"
#include "x86/x86.h"

#define RTE_LEVEL (1u << 15)
#define RTE_MASK (1u << 16)
#define RTE_REMOTE_IRR (1u << 14)

static uint32_t rd(struct x86_ioapic *io, uint32_t reg)
{
	uint32_t v = reg;

	x86_ioapic_mmio(io, X86_IOAPIC_IOREGSEL, (uint8_t *)&v, 4, true);
	x86_ioapic_mmio(io, X86_IOAPIC_IOWIN, (uint8_t *)&v, 4, false);
	return v;
}

static void wr(struct x86_ioapic *io, uint32_t reg, uint32_t val)
{
	x86_ioapic_mmio(io, X86_IOAPIC_IOREGSEL, (uint8_t *)&reg, 4, true);
	x86_ioapic_mmio(io, X86_IOAPIC_IOWIN, (uint8_t *)&val, 4, true);
}

/* Linux's order: high dword (destination) first, then the low one that unmasks. */
static void rte(struct x86_ioapic *io, unsigned int pin, uint32_t lo, uint32_t hi)
{
	wr(io, 0x11 + 2 * pin, hi);
	wr(io, 0x10 + 2 * pin, lo);
}

static int msis(struct fake_kvm *fk, int from, uint64_t *addr, uint32_t *data)
{
	int n = 0;

	for (int i = from; i < fk->nr; i++)
		if (fk->call[i].op == FK_SIGNAL_MSI) {
			n++;
			*addr = fk->call[i].addr;
			*data = fk->call[i].irq;
		}
	return n;
}

FIXTURE(ioapic)
{
	struct vm *vm;
	struct fake_kvm *fk;
	struct x86_ioapic io;
};

FIXTURE_SETUP(ioapic)
{
	self->vm = calloc(1, sizeof(*self->vm));
	self->fk = calloc(1, sizeof(*self->fk));
	ASSERT_NE(NULL, self->vm);
	ASSERT_NE(NULL, self->fk);
	ASSERT_EQ(0, fake_vm_init(self->vm, self->fk, 0, 0));
	self->vm->msi_needs_devid = false; /* x86: no devid */
	ASSERT_EQ(0, irq_routing_init_reserved(self->vm, X86_IOAPIC_PINS));
	self->vm->routing.user_resample = true;
	x86_ioapic_init(&self->io, self->vm, 2);
}

FIXTURE_TEARDOWN(ioapic)
{
	x86_ioapic_destroy(&self->io);
	fake_vm_free(self->vm);
	free(self->vm);
	free(self->fk);
}

TEST_F(ioapic, reset_state_and_identity_registers)
{
	EXPECT_EQ(2u << 24, rd(&self->io, 0x00));
	EXPECT_EQ(0x00170011u, rd(&self->io, 0x01)); /* 24 entries, version 0x11 */
	for (unsigned int p = 0; p < X86_IOAPIC_PINS; p++)
		EXPECT_EQ(RTE_MASK, rd(&self->io, 0x10 + 2 * p));
	wr(&self->io, 0x00, 0x0f000000);
	EXPECT_EQ(0x0f000000u, rd(&self->io, 0x00));
	wr(&self->io, 0x01, 0); /* VER is read-only */
	EXPECT_EQ(0x00170011u, rd(&self->io, 0x01));
	EXPECT_EQ(0, rd(&self->io, 0x10 + 2 * X86_IOAPIC_PINS)); /* past the table */
	EXPECT_EQ(0, self->fk->commits); /* masked pins have no route */
	EXPECT_EQ(X86_IOAPIC_PINS, irq_gsi_alloc(self->vm)); /* GSIs 0-23 stay the IOAPIC's */
}

TEST_F(ioapic, edge_pin_routes_and_fires_on_rising_edges)
{
	uint64_t addr = 0;
	uint32_t data = 0;
	const struct kvm_irq_routing_entry *e;

	rte(&self->io, 4, 0x30, 1u << 24); /* fixed, physical, edge, vector 0x30 to APIC 1 */
	e = fake_kvm_route(self->fk, 4);
	ASSERT_NE(NULL, e);
	EXPECT_EQ(KVM_IRQ_ROUTING_MSI, e->type);
	EXPECT_EQ(0xfee01000u, e->u.msi.address_lo);
	EXPECT_EQ(0x4030u, e->u.msi.data);
	EXPECT_EQ(0u, e->flags); /* no devid on x86 */
	x86_ioapic_set_irq(&self->io, 4, true);
	ASSERT_EQ(1, msis(self->fk, 0, &addr, &data));
	EXPECT_EQ(0xfee01000u, addr);
	EXPECT_EQ(0x4030u, data);
	x86_ioapic_set_irq(&self->io, 4, true); /* still high: no new edge */
	EXPECT_EQ(1, msis(self->fk, 0, &addr, &data));
	x86_ioapic_set_irq(&self->io, 4, false);
	x86_ioapic_set_irq(&self->io, 4, true);
	EXPECT_EQ(2, msis(self->fk, 0, &addr, &data));
	EXPECT_EQ(0x30u, rd(&self->io, 0x18)); /* no remote IRR on an edge pin */
	/* masked: the route goes, an edge is lost */
	wr(&self->io, 0x18, 0x30 | RTE_MASK);
	EXPECT_EQ(NULL, fake_kvm_route(self->fk, 4));
	x86_ioapic_set_irq(&self->io, 4, false);
	x86_ioapic_set_irq(&self->io, 4, true);
	EXPECT_EQ(2, msis(self->fk, 0, &addr, &data));
}

TEST_F(ioapic, level_pin_waits_for_its_eoi)
{
	uint64_t addr;
	uint32_t data = 0;
	const unsigned int pin = 17;

	rte(&self->io, pin, 0x41 | RTE_LEVEL | 1u << 13, 0); /* level, active low as PCI's INTx */
	ASSERT_NE(NULL, fake_kvm_route(self->fk, pin));
	EXPECT_EQ(0xc041u, fake_kvm_route(self->fk, pin)->u.msi.data); /* trigger + assert */
	x86_ioapic_set_irq(&self->io, pin, true);
	EXPECT_EQ(1, msis(self->fk, 0, &addr, &data));
	EXPECT_EQ(0xc041u, data);
	EXPECT_TRUE(rd(&self->io, 0x10 + 2 * pin) & RTE_REMOTE_IRR);
	x86_ioapic_set_irq(&self->io, pin, true); /* in service: nothing more */
	x86_ioapic_eoi(&self->io, 0x42);	  /* another vector */
	EXPECT_EQ(1, msis(self->fk, 0, &addr, &data));
	x86_ioapic_eoi(&self->io, 0x41); /* still high: again */
	EXPECT_EQ(2, msis(self->fk, 0, &addr, &data));
	x86_ioapic_set_irq(&self->io, pin, false);
	x86_ioapic_eoi(&self->io, 0x41);
	EXPECT_EQ(2, msis(self->fk, 0, &addr, &data));
	EXPECT_FALSE(rd(&self->io, 0x10 + 2 * pin) & RTE_REMOTE_IRR);
	EXPECT_EQ(3u, self->io.stats.eois);
}

/* A message KVM refused leaves no remote IRR behind: no EOI would ever clear it. */
TEST_F(ioapic, refused_message_does_not_wedge_a_level_pin)
{
	rte(&self->io, 19, 0x44 | RTE_LEVEL, 0);
	self->fk->fail_op = FK_SIGNAL_MSI;
	self->fk->fail_nth = 1;
	x86_ioapic_set_irq(&self->io, 19, true);
	EXPECT_FALSE(rd(&self->io, 0x10 + 38) & RTE_REMOTE_IRR);
	EXPECT_EQ(1u, self->io.stats.signal_errors);
	x86_ioapic_set_irq(&self->io, 19, true); /* still high: tried again */
	EXPECT_TRUE(rd(&self->io, 0x10 + 38) & RTE_REMOTE_IRR);
	EXPECT_EQ(2, fake_kvm_count(self->fk, FK_SIGNAL_MSI));
}

TEST_F(ioapic, masked_level_line_fires_when_unmasked)
{
	uint64_t addr;
	uint32_t data;

	rte(&self->io, 20, 0x50 | RTE_LEVEL | RTE_MASK, 0);
	x86_ioapic_set_irq(&self->io, 20, true);
	EXPECT_EQ(0, msis(self->fk, 0, &addr, &data));
	EXPECT_EQ(NULL, fake_kvm_route(self->fk, 20));
	wr(&self->io, 0x10 + 40, 0x50 | RTE_LEVEL);
	EXPECT_EQ(1, msis(self->fk, 0, &addr, &data));
	EXPECT_NE(NULL, fake_kvm_route(self->fk, 20));
}

/* Linux EOIs an IOAPIC without an EOI register by flipping the pin to edge and back. */
TEST_F(ioapic, switching_to_edge_clears_remote_irr)
{
	rte(&self->io, 9, 0x60 | RTE_LEVEL, 0);
	x86_ioapic_set_irq(&self->io, 9, true);
	EXPECT_TRUE(rd(&self->io, 0x22) & RTE_REMOTE_IRR);
	wr(&self->io, 0x22, 0x60 | RTE_MASK);
	EXPECT_FALSE(rd(&self->io, 0x22) & RTE_REMOTE_IRR);
	wr(&self->io, 0x22, 0x60 | RTE_LEVEL);
	EXPECT_TRUE(rd(&self->io, 0x22) & RTE_REMOTE_IRR); /* still high: fired again */
	EXPECT_EQ(2, fake_kvm_count(self->fk, FK_SIGNAL_MSI));
}

TEST_F(ioapic, level_irqfd_resamples_on_eoi)
{
	int fd = eventfd(0, EFD_NONBLOCK), rfd = eventfd(0, EFD_NONBLOCK);
	eventfd_t n = 0;
	int i;

	ASSERT_GE(fd, 0);
	ASSERT_GE(rfd, 0);
	rte(&self->io, 18, 0x70 | RTE_LEVEL, 0);
	ASSERT_EQ(0, irq_irqfd(self->vm, fd, 18, rfd, true));
	i = fake_kvm_find(self->fk, FK_IRQFD_ASSIGN, 0);
	ASSERT_GE(i, 0);
	EXPECT_EQ(-1, self->fk->call[i].resample_fd); /* KVM refuses one with a split irqchip */
	EXPECT_EQ(-1, eventfd_read(rfd, &n));
	x86_ioapic_eoi(&self->io, 0x71);
	EXPECT_EQ(-1, eventfd_read(rfd, &n));
	x86_ioapic_eoi(&self->io, 0x70);
	EXPECT_EQ(0, eventfd_read(rfd, &n));
	EXPECT_EQ(1u, n);
	EXPECT_EQ(1u, self->io.stats.resamples);
	/* unmasking re-checks the source: its interrupt may have come while there was no route */
	wr(&self->io, 0x10 + 36, 0x70 | RTE_LEVEL | RTE_MASK);
	wr(&self->io, 0x10 + 36, 0x70 | RTE_LEVEL);
	EXPECT_EQ(0, eventfd_read(rfd, &n));
	ASSERT_EQ(0, irq_irqfd(self->vm, fd, 18, -1, false));
	x86_ioapic_eoi(&self->io, 0x70);
	EXPECT_EQ(-1, eventfd_read(rfd, &n)); /* deassigned: vmm forgot it */
	close(fd);
	close(rfd);
}

TEST_F(ioapic, hostile_entries_send_nothing)
{
	uint64_t addr;
	uint32_t data;
	/* ExtINT (no PIC), INIT, SMI, reserved modes, and vector 8 with fixed delivery */
	const uint32_t bad[] = { 0x730, 0x530, 0x230, 0x330, 0x630, 0x008, 0x10f };

	for (unsigned int i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		wr(&self->io, 0x10 + 2 * 5, bad[i]);
		EXPECT_EQ(NULL, fake_kvm_route(self->fk, 5));
		x86_ioapic_set_irq(&self->io, 5, true);
		x86_ioapic_set_irq(&self->io, 5, false);
		EXPECT_FALSE(x86_ioapic_msi(bad[i], &addr, &data));
	}
	EXPECT_EQ(0, fake_kvm_count(self->fk, FK_SIGNAL_MSI));
	EXPECT_EQ(sizeof(bad) / sizeof(bad[0]), self->io.stats.refused);
	/* NMI takes any vector; remote IRR and delivery status are not the guest's to set */
	wr(&self->io, 0x10 + 2 * 5, 0x402 | RTE_REMOTE_IRR | 1u << 12);
	EXPECT_EQ(0x402u, rd(&self->io, 0x10 + 2 * 5));
	x86_ioapic_set_irq(&self->io, 5, true);
	EXPECT_EQ(1, msis(self->fk, 0, &addr, &data));
	EXPECT_EQ(0x4402u, data);
	/* lines and EOIs out of range, odd offsets and sizes: ignored */
	x86_ioapic_set_irq(&self->io, X86_IOAPIC_PINS, true);
	x86_ioapic_set_irq(&self->io, ~0u, true);
	uint8_t b[8] = { 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff };

	x86_ioapic_mmio(&self->io, X86_IOAPIC_IOWIN, b, 8, false);
	x86_ioapic_mmio(&self->io, X86_IOAPIC_IOWIN + 1, b, 2, true);
	x86_ioapic_mmio(&self->io, 0x40, b, 4, true);
	x86_ioapic_mmio(&self->io, 0x40, b, 4, false);
	EXPECT_EQ(0, b[0] | b[1] | b[2] | b[3]);
	EXPECT_EQ(1, msis(self->fk, 0, &addr, &data));
}

TEST(msi_destination_fields)
{
	uint64_t addr;
	uint32_t data;

	/* logical destination 0x0f, lowest priority, vector 0xef */
	ASSERT_TRUE(x86_ioapic_msi(0x0f000000000009efULL, &addr, &data));
	EXPECT_EQ(0xfee0f004ULL, addr);
	EXPECT_EQ(0x41efu, data);
	/* KVM's extended destination ID: entry bits 55:49 -> address bits 11:5 */
	ASSERT_TRUE(x86_ioapic_msi(0x01fe000000000031ULL, &addr, &data));
	EXPECT_EQ(0xfee01fe0ULL, addr);
	EXPECT_FALSE(x86_ioapic_msi(0x10031, &addr, &data)); /* masked */
}

TEST(failed_route_commit_is_retried_on_the_next_write)
{
	struct vm *vm = calloc(1, sizeof(*vm));
	struct fake_kvm *fk = calloc(1, sizeof(*fk));
	struct x86_ioapic io;

	ASSERT_EQ(0, fake_vm_init(vm, fk, 0, 0));
	ASSERT_EQ(0, irq_routing_init_reserved(vm, X86_IOAPIC_PINS));
	x86_ioapic_init(&io, vm, 0);
	fk->fail_op = FK_SET_GSI_ROUTING;
	fk->fail_nth = 1;
	rte(&io, 3, 0x33, 0);
	EXPECT_EQ(NULL, fake_kvm_route(fk, 3));
	EXPECT_EQ(1u, io.stats.route_errors);
	rte(&io, 3, 0x33, 0);
	EXPECT_NE(NULL, fake_kvm_route(fk, 3));
	x86_ioapic_destroy(&io);
	fake_vm_free(vm);
	free(vm);
	free(fk);
}

TEST_HARNESS_MAIN
