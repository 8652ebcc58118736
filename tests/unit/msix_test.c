// SPDX-License-Identifier: MIT
/*
 * The MSI-X model through the fake KVM seam: routes carry the requester ID, the irqfd follows its
 * route, masked or unroutable vectors keep their interrupts pending in the PBA (never lost),
 * commits happen only when a live vector's message changes, and raising an interrupt never waits
 * for a route commit.
 */
#include <linux/pci_regs.h>
#include <pthread.h>
#include <semaphore.h>
#include <string.h>
#include <sys/eventfd.h>
#include <time.h>

#include "kselftest_harness.h"
#include "tests/unit/fake_kvm.h"
#include "core/bus.h"
#include "core/pci.h"
#include "core/msix.h"
#include "core/vm.h"

#define ECAM 0x3f000000ULL

static struct vm vm;
static struct pci_host host;

struct msix_dev {
	struct pci_dev pci;
	struct msix msix;
};

static void dev_cfg_written(struct pci_dev *d, uint32_t off, uint32_t len)
{
	msix_cfg_written(&((struct msix_dev *)d)->msix, off, len);
}

FIXTURE(msix) {
	struct fake_kvm fk;
	struct msix_dev d;
	uint64_t bar;
};

static uint32_t cfg_rd(FIXTURE_DATA(msix) *self, uint32_t reg, uint32_t len)
{
	uint32_t v = 0;

	bus_access(&vm.mmio, ECAM + ((self->d.pci.devfn >> 3) << 15) + reg, (uint8_t *)&v, len, false);
	return v;
}

static void cfg_wr(FIXTURE_DATA(msix) *self, uint32_t reg, uint32_t v, uint32_t len)
{
	bus_access(&vm.mmio, ECAM + ((self->d.pci.devfn >> 3) << 15) + reg, (uint8_t *)&v, len, true);
}

static void tbl_wr(FIXTURE_DATA(msix) *self, unsigned int i, unsigned int word, uint32_t v)
{
	bus_access(&vm.mmio, self->bar + 16 * i + 4 * word, (uint8_t *)&v, 4, true);
}

static uint64_t pba(FIXTURE_DATA(msix) *self)
{
	uint64_t v = 0;

	bus_access(&vm.mmio, self->bar + MSIX_PBA_OFFSET, (uint8_t *)&v, 8, false);
	return v;
}

static void set_ctrl(FIXTURE_DATA(msix) *self, uint16_t set, uint16_t clear)
{
	uint32_t c = self->d.msix.cap + PCI_MSIX_FLAGS;

	cfg_wr(self, c, (cfg_rd(self, c, 2) | set) & ~clear, 2);
}

static uint64_t fired(FIXTURE_DATA(msix) *self, unsigned int i)
{
	eventfd_t n = 0;

	return eventfd_read(self->d.msix.vec[i].route.fd, &n) < 0 ? 0 : n;
}

/* Programs vector i with data 0x40 + i, unmasked. */
static void program(FIXTURE_DATA(msix) *self, unsigned int i)
{
	tbl_wr(self, i, 0, 0x08090040);
	tbl_wr(self, i, 1, 0);
	tbl_wr(self, i, 2, 0x40 + i);
	tbl_wr(self, i, 3, 0);
}

FIXTURE_SETUP(msix)
{
	const struct pci_host_layout l = { ECAM, 0x100000, 0x10000000, 0x1000000, 0x8000000000ULL,
					   0x100000000ULL };

	ASSERT_EQ(0, fake_vm_init(&vm, &self->fk, 0, 96));
	ASSERT_EQ(0, pci_host_init(&host, &vm, &l));
	memset(&self->d, 0, sizeof(self->d));
	ASSERT_EQ(0, pci_dev_add(&host, &self->d.pci, 0x1234, 0x5678, 0xff000000, 0, 0));
	self->d.pci.cfg_written = dev_cfg_written;
	ASSERT_EQ(0, msix_init(&self->d.msix, &vm, &self->d.pci, 4, 1));
	cfg_wr(self, PCI_COMMAND, PCI_COMMAND_MEMORY | PCI_COMMAND_MASTER, 2);
	self->bar = cfg_rd(self, PCI_BASE_ADDRESS_1, 4) & PCI_BASE_ADDRESS_MEM_MASK;
	ASSERT_NE(0, self->bar);
}

FIXTURE_TEARDOWN(msix) { fake_vm_free(&vm); }

TEST_F(msix, disabled_raises_nothing_and_says_so)
{
	EXPECT_FALSE(msix_notify(&self->d.msix, 0));
	EXPECT_EQ(0, pba(self));
	EXPECT_EQ(0, fake_kvm_count(&self->fk, FK_IRQFD_ASSIGN)); /* no irqfd before a route */
}

TEST_F(msix, unmask_commits_route_with_devid_then_assigns_irqfd)
{
	set_ctrl(self, PCI_MSIX_FLAGS_ENABLE, 0);
	EXPECT_EQ(0, self->fk.commits); /* all vectors still masked */
	program(self, 1);
	int c = fake_kvm_find(&self->fk, FK_SET_GSI_ROUTING, 0);
	int a = fake_kvm_find(&self->fk, FK_IRQFD_ASSIGN, 0);

	ASSERT_LE(0, c);
	ASSERT_LT(c, a) TH_LOG("the irqfd must be assigned after its route exists");
	EXPECT_EQ(self->d.msix.vec[1].route.gsi, self->fk.call[a].gsi);
	const struct kvm_irq_routing_entry *e = fake_kvm_route(&self->fk, self->d.msix.vec[1].route.gsi);

	ASSERT_NE(NULL, e);
	EXPECT_EQ(KVM_IRQ_ROUTING_MSI, e->type);
	EXPECT_EQ(KVM_MSI_VALID_DEVID, e->flags);
	EXPECT_EQ(self->d.pci.devfn, e->u.msi.devid);
	EXPECT_EQ(0x41, e->u.msi.data);
	EXPECT_EQ(0x08090040, e->u.msi.address_lo);
	EXPECT_TRUE(msix_notify(&self->d.msix, 1));
	EXPECT_EQ(1, fired(self, 1));
}

/* The irqfd of vector i is assigned now (the last assign/deassign call for its GSI). */
static bool irqfd_on(FIXTURE_DATA(msix) *self, unsigned int i)
{
	bool on = false;

	for (int k = 0; k < self->fk.nr; k++) {
		const struct fake_call *c = &self->fk.call[k];

		if ((c->op == FK_IRQFD_ASSIGN || c->op == FK_IRQFD_DEASSIGN) &&
		    c->gsi == (uint32_t)self->d.msix.vec[i].route.gsi)
			on = c->op == FK_IRQFD_ASSIGN;
	}
	return on;
}

TEST_F(msix, masked_vector_pends_in_pba_and_is_delivered_on_unmask)
{
	set_ctrl(self, PCI_MSIX_FLAGS_ENABLE, 0);
	program(self, 0);
	EXPECT_TRUE(irqfd_on(self, 0));
	tbl_wr(self, 0, 3, PCI_MSIX_ENTRY_CTRL_MASKBIT);
	EXPECT_FALSE(irqfd_on(self, 0)) TH_LOG("a masked vector must not reach KVM");
	EXPECT_TRUE(msix_notify(&self->d.msix, 0));
	EXPECT_EQ(1, pba(self)); /* waiting in the eventfd, which the PBA read does not consume */
	EXPECT_EQ(1, pba(self));
	/* unmask: the irqfd comes back and KVM injects what the eventfd holds */
	int routes = self->fk.commits;

	tbl_wr(self, 0, 3, 0);
	EXPECT_TRUE(irqfd_on(self, 0));
	EXPECT_EQ(routes, self->fk.commits); /* the message did not change: no commit */
	EXPECT_EQ(0, pba(self));
	EXPECT_EQ(1, fired(self, 0));
	/* function mask: the same */
	set_ctrl(self, PCI_MSIX_FLAGS_MASKALL, 0);
	EXPECT_FALSE(irqfd_on(self, 0));
	msix_notify(&self->d.msix, 0);
	EXPECT_EQ(1, pba(self));
	set_ctrl(self, 0, PCI_MSIX_FLAGS_MASKALL);
	EXPECT_TRUE(irqfd_on(self, 0));
	EXPECT_EQ(0, pba(self));
}

/* What vmm raised, per vector: only what reached an eventfd counts. */
TEST_F(msix, raised_is_counted_per_vector)
{
	EXPECT_FALSE(msix_notify(&self->d.msix, 1)); /* MSI-X off: INTx's business */
	set_ctrl(self, PCI_MSIX_FLAGS_ENABLE, 0);
	program(self, 1);
	msix_notify(&self->d.msix, 1);
	msix_notify(&self->d.msix, 1);
	msix_notify(&self->d.msix, 3); /* masked: waits in the eventfd, still raised */
	msix_notify(&self->d.msix, 9); /* no such vector: nothing */
	EXPECT_EQ(0, atomic_load(&self->d.msix.vec[0].raised));
	EXPECT_EQ(2, atomic_load(&self->d.msix.vec[1].raised));
	EXPECT_EQ(1, atomic_load(&self->d.msix.vec[3].raised));
	EXPECT_EQ(3, atomic_load(&self->d.msix.irqs));
}

TEST_F(msix, failed_route_commit_keeps_the_interrupt_pending)
{
	set_ctrl(self, PCI_MSIX_FLAGS_ENABLE, 0);
	self->fk.fail_op = FK_SET_GSI_ROUTING;
	self->fk.fail_nth = 1;
	program(self, 2);
	EXPECT_EQ(NULL, fake_kvm_route(&self->fk, self->d.msix.vec[2].route.gsi));
	EXPECT_FALSE(irqfd_on(self, 2)) TH_LOG("an irqfd on a GSI with no route loses its interrupts");
	msix_notify(&self->d.msix, 2);
	EXPECT_EQ(1 << 2, pba(self));
	EXPECT_EQ(1, atomic_load(&self->d.msix.route_errors));
	/* the guest's next change retries, and the pending interrupt is delivered */
	tbl_wr(self, 2, 3, PCI_MSIX_ENTRY_CTRL_MASKBIT);
	tbl_wr(self, 2, 3, 0);
	EXPECT_NE(NULL, fake_kvm_route(&self->fk, self->d.msix.vec[2].route.gsi));
	EXPECT_TRUE(irqfd_on(self, 2));
	EXPECT_EQ(0, pba(self));
	EXPECT_EQ(1, fired(self, 2));
}

/* A live vector whose message changes: irqfd off, new route, irqfd on (which re-pairs a VFIO
 * bypass the route change unmapped). */
TEST_F(msix, live_route_change_reassigns_the_irqfd_after_the_commit)
{
	set_ctrl(self, PCI_MSIX_FLAGS_ENABLE, 0);
	program(self, 1);
	int from = self->fk.nr;

	tbl_wr(self, 1, 2, 0x77);
	int off = fake_kvm_find(&self->fk, FK_IRQFD_DEASSIGN, from);
	int c = fake_kvm_find(&self->fk, FK_SET_GSI_ROUTING, from);
	int on = fake_kvm_find(&self->fk, FK_IRQFD_ASSIGN, from);

	ASSERT_LE(0, off);
	ASSERT_LT(off, c);
	ASSERT_LT(c, on);
	EXPECT_EQ(0x77, fake_kvm_route(&self->fk, self->d.msix.vec[1].route.gsi)->u.msi.data);
}

TEST_F(msix, commits_only_when_a_live_message_changes)
{
	set_ctrl(self, PCI_MSIX_FLAGS_ENABLE, 0);
	program(self, 0);
	int commits = self->fk.commits;

	EXPECT_EQ(1, commits);
	/* rewriting the same values, or the same unmasked control word: nothing to commit */
	program(self, 0);
	tbl_wr(self, 0, 3, 0);
	EXPECT_EQ(commits, self->fk.commits);
	/* masked updates are not committed; the unmask commits once */
	tbl_wr(self, 0, 3, PCI_MSIX_ENTRY_CTRL_MASKBIT);
	tbl_wr(self, 0, 0, 0x08090044);
	tbl_wr(self, 0, 2, 0x99);
	EXPECT_EQ(commits, self->fk.commits);
	tbl_wr(self, 0, 3, 0);
	EXPECT_EQ(commits + 1, self->fk.commits);
	EXPECT_EQ(0x99, fake_kvm_route(&self->fk, self->d.msix.vec[0].route.gsi)->u.msi.data);
	/* a 64-bit address write to a live vector is one change */
	uint64_t a = 0x0809004c; /* address_hi 0 */

	bus_access(&vm.mmio, self->bar, (uint8_t *)&a, 8, true);
	EXPECT_EQ(commits + 2, self->fk.commits);
	/* enabling and disabling the function mask with nothing else changed commits nothing */
	set_ctrl(self, PCI_MSIX_FLAGS_MASKALL, 0);
	set_ctrl(self, 0, PCI_MSIX_FLAGS_MASKALL);
	EXPECT_EQ(commits + 2, self->fk.commits);
}

struct held_commit {
	sem_t entered, release;
	bool hold;
};

static void hold_commit(void *arg)
{
	struct held_commit *h = arg;

	if (!h->hold)
		return;
	sem_post(&h->entered);
	sem_wait(&h->release);
}

static void *unmask_thread(void *arg)
{
	FIXTURE_DATA(msix) *self = arg;

	tbl_wr(self, 3, 3, 0); /* commits vector 3's route: held open by the fake */
	return NULL;
}

struct notify_arg {
	struct msix *m;
	sem_t done;
};

static void *notify_thread(void *arg)
{
	struct notify_arg *n = arg;

	msix_notify(n->m, 0);
	sem_post(&n->done);
	return NULL;
}

TEST_F(msix, raising_never_waits_for_a_route_commit)
{
	struct held_commit h = { .hold = false };
	struct notify_arg n = { .m = &self->d.msix };
	pthread_t t1, t2;
	struct timespec ts;

	sem_init(&h.entered, 0, 0);
	sem_init(&h.release, 0, 0);
	sem_init(&n.done, 0, 0);
	set_ctrl(self, PCI_MSIX_FLAGS_ENABLE, 0);
	program(self, 0);
	tbl_wr(self, 3, 0, 0x08090040);
	tbl_wr(self, 3, 2, 0x43);
	self->fk.on_commit = hold_commit;
	self->fk.on_commit_arg = &h;
	h.hold = true;
	ASSERT_EQ(0, pthread_create(&t1, NULL, unmask_thread, self));
	sem_wait(&h.entered);
	/* a commit is in progress: the device raises vector 0 from its own thread */
	ASSERT_EQ(0, pthread_create(&t2, NULL, notify_thread, &n));
	clock_gettime(CLOCK_REALTIME, &ts);
	ts.tv_sec += 2;
	int r = sem_timedwait(&n.done, &ts);

	h.hold = false;
	sem_post(&h.release);
	pthread_join(t1, NULL);
	pthread_join(t2, NULL);
	EXPECT_EQ(0, r) TH_LOG("msix_notify waited for a route commit");
	EXPECT_EQ(1, fired(self, 0));
}

TEST_F(msix, disabling_drops_what_was_pending)
{
	set_ctrl(self, PCI_MSIX_FLAGS_ENABLE, 0);
	program(self, 0);
	tbl_wr(self, 0, 3, PCI_MSIX_ENTRY_CTRL_MASKBIT);
	msix_notify(&self->d.msix, 0);
	EXPECT_EQ(1, pba(self));
	set_ctrl(self, 0, PCI_MSIX_FLAGS_ENABLE);
	EXPECT_FALSE(msix_notify(&self->d.msix, 0));
	set_ctrl(self, PCI_MSIX_FLAGS_ENABLE, 0);
	EXPECT_EQ(0, pba(self));
}

TEST_F(msix, hostile_table_accesses_are_ignored)
{
	uint8_t b[8] = { 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff };

	set_ctrl(self, PCI_MSIX_FLAGS_ENABLE, 0);
	bus_access(&vm.mmio, self->bar + 1, b, 4, true);	/* unaligned */
	bus_access(&vm.mmio, self->bar + 0, b, 2, true);	/* too narrow */
	bus_access(&vm.mmio, self->bar + 16 * 40, b, 8, true); /* past the last vector */
	bus_access(&vm.mmio, self->bar + MSIX_PBA_OFFSET, b, 8, true); /* the PBA is read-only */
	bus_access(&vm.mmio, self->bar + 0xff8, b, 8, false);
	EXPECT_EQ(0, b[0]);
	EXPECT_EQ(0, self->fk.commits);
	EXPECT_EQ(0, pba(self));
	EXPECT_EQ(PCI_MSIX_ENTRY_CTRL_MASKBIT, self->d.msix.vec[0].ctrl);
}

TEST_HARNESS_MAIN
