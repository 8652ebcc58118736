// SPDX-License-Identifier: MIT
/*
 * A passed-through device's config space as the guest sees it, with a fake VFIO device: its config
 * region is a memfd, so what vmm writes through to the "device" can be read back. The capability
 * list keeps MSI-X, MSI and PCI Express only, the extended list AER, DSN and ARI (read-only copies
 * at the device's offsets, relinked around the hidden ones); hostile writes change nothing they should not; only
 * the command register's MEMORY/MASTER/INTX_DISABLE bits reach the device; MSI-X routes carry the
 * guest's requester ID as devid, whatever the host BDF.
 */

#include <linux/pci_regs.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <sys/mman.h>
#include <unistd.h>

#include "kselftest_harness.h"
#include "tests/unit/fake_driver.h"
#include "tests/unit/fake_vfio.h"
#include "tests/unit/log_capture.h"
#include "vfio/vfio.h"
#include "vfio/vfio_internal.h"

static struct vm vm;
static struct pci_host host;

/* An igb VF-like device: MSI-X (3 vectors, table and PBA in BAR 3), MSI, PCIe, power management,
 * and extended capabilities: AER at 0x100 (as QEMU's igb VF), ATS at 0x140 that must not show,
 * ARI at 0x150. */
static void host_config(uint8_t *c)
{
	memset(c, 0, 4096);
	fake_vfio_cfg_put(c, PCI_VENDOR_ID, 0x8086, 2);
	fake_vfio_cfg_put(c, PCI_DEVICE_ID, 0x10ca, 2);
	fake_vfio_cfg_put(c, PCI_CLASS_REVISION, 0x02000001, 4);
	fake_vfio_cfg_put(c, PCI_COMMAND, PCI_COMMAND_PARITY, 2);
	fake_vfio_cfg_put(c, PCI_STATUS, PCI_STATUS_CAP_LIST, 2);
	fake_vfio_cfg_put(c, PCI_BASE_ADDRESS_0, PCI_BASE_ADDRESS_MEM_TYPE_64, 4);
	fake_vfio_cfg_put(c, PCI_BASE_ADDRESS_3, PCI_BASE_ADDRESS_MEM_TYPE_64, 4);
	fake_vfio_cfg_put(c, PCI_ROM_ADDRESS, 0xfff00001, 4);
	fake_vfio_cfg_put(c, PCI_INTERRUPT_PIN, 1, 1);
	fake_vfio_cfg_put(c, PCI_CAPABILITY_LIST, 0x40, 1);
	fake_vfio_cfg_put(c, 0x40, PCI_CAP_ID_PM | 0x50 << 8, 2);
	fake_vfio_cfg_put(c, 0x50, PCI_CAP_ID_MSI | 0x70 << 8, 2);
	fake_vfio_cfg_put(c, 0x52, PCI_MSI_FLAGS_64BIT | PCI_MSI_FLAGS_MASKBIT | (2 << 1), 2); /* 4 vectors */
	fake_vfio_cfg_put(c, 0x70, PCI_CAP_ID_MSIX | 0xa0 << 8, 2);
	fake_vfio_cfg_put(c, 0x72, 2, 2); /* 3 vectors */
	fake_vfio_cfg_put(c, 0x74, 3, 4);	     /* table in BAR 3 at 0 */
	fake_vfio_cfg_put(c, 0x78, 0x2000 | 3, 4); /* PBA in BAR 3 at 0x2000 */
	fake_vfio_cfg_put(c, 0xa0, PCI_CAP_ID_EXP | 0 << 8, 2);
	fake_vfio_cfg_put(c, 0xa2, PCI_EXP_TYPE_RC_END << 4 | 2, 2);
	fake_vfio_cfg_put(c, 0xa4, 0x8000, 4); /* DevCap: FLR */
	fake_vfio_cfg_put(c, 0x100, PCI_EXT_CAP_ID_ERR | 2 << 16 | 0x140 << 20, 4);
	fake_vfio_cfg_put(c, 0x100 + PCI_ERR_UNCOR_SEVER, 0x00462030, 4);
	fake_vfio_cfg_put(c, 0x140, PCI_EXT_CAP_ID_ATS | 1 << 16 | 0x150 << 20, 4);
	fake_vfio_cfg_put(c, 0x144, 0x20, 4);
	fake_vfio_cfg_put(c, 0x150, PCI_EXT_CAP_ID_ARI | 1 << 16, 4);
	fake_vfio_cfg_put(c, 0x154, 0x0100, 4); /* next function 1 */
}

FIXTURE(vcfg) {
	struct fake_kvm fk;
	struct vfio_container c;
	struct vfio_pci *v;
	int slot;
};

FIXTURE_SETUP(vcfg)
{
	uint8_t cfg[4096];

	ASSERT_EQ(0, fake_vm_init(&vm, &self->fk, 1 << 20, 96));
	ASSERT_EQ(0, pci_host_init(&host, &vm, &fd_layout));
	memset(&self->c, 0, sizeof(self->c));
	self->c.vm = &vm;
	self->c.fd = self->c.kvm_dev = -1;
	self->v = calloc(1, sizeof(*self->v));
	struct vfio_pci *v = self->v;

	host_config(cfg);
	ASSERT_EQ(0, fake_vfio_device(v, &self->c, cfg, "0000:00:13.0", 4096));
	ASSERT_EQ(0, vfio_config_setup(v, &host, 5));
	self->slot = 5;
}

FIXTURE_TEARDOWN(vcfg)
{
	close(self->v->fd);
	free(self->v);
	fake_vm_free(&vm);
}

static uint32_t rd(FIXTURE_DATA(vcfg) *self, uint32_t reg, uint32_t len)
{
	uint32_t v = 0;

	bus_access(&vm.mmio, FD_ECAM + (self->slot << 15) + reg, (uint8_t *)&v, len, false);
	return v;
}

static void wr(FIXTURE_DATA(vcfg) *self, uint32_t reg, uint32_t v, uint32_t len)
{
	bus_access(&vm.mmio, FD_ECAM + (self->slot << 15) + reg, (uint8_t *)&v, len, true);
}

static uint16_t device_cmd(FIXTURE_DATA(vcfg) *self)
{
	uint16_t c = 0;

	pread(self->v->fd, &c, 2, PCI_COMMAND);
	return c;
}

TEST_F(vcfg, identity_and_filtered_capabilities)
{
	uint8_t ids[8];
	int n = 0;

	EXPECT_EQ(0x8086, rd(self, PCI_VENDOR_ID, 2));
	EXPECT_EQ(0x10ca, rd(self, PCI_DEVICE_ID, 2));
	EXPECT_EQ(0x020000, rd(self, PCI_CLASS_REVISION, 4) >> 8);
	EXPECT_EQ(1, rd(self, PCI_INTERRUPT_PIN, 1));
	for (uint32_t c = rd(self, PCI_CAPABILITY_LIST, 1); c && n < 8; c = rd(self, c + 1, 1))
		ids[n++] = rd(self, c, 1);
	ASSERT_EQ(3, n);
	EXPECT_EQ(PCI_CAP_ID_MSI, ids[0]); /* the device's order, power management dropped */
	EXPECT_EQ(PCI_CAP_ID_MSIX, ids[1]);
	EXPECT_EQ(PCI_CAP_ID_EXP, ids[2]);
	EXPECT_EQ(PCI_EXT_CAP_ID_ERR | 2 << 16 | 0x150 << 20, rd(self, 0x100, 4)) TH_LOG("AER, then ARI: ATS left out");
	EXPECT_EQ(0x00462030, rd(self, 0x100 + PCI_ERR_UNCOR_SEVER, 4));
	EXPECT_EQ(0, rd(self, 0x140, 4)) TH_LOG("ATS must be hidden");
	EXPECT_EQ(0, rd(self, 0x144, 4));
	EXPECT_EQ(PCI_EXT_CAP_ID_ARI | 1 << 16, rd(self, 0x150, 4));
	EXPECT_EQ(0x0100, rd(self, 0x154, 2));
	EXPECT_EQ(0, rd(self, 0xffc, 4)) TH_LOG("past the device's capabilities config space reads 0");
	EXPECT_EQ(0, rd(self, PCI_ROM_ADDRESS, 4)) TH_LOG("the expansion ROM must be hidden");
	EXPECT_EQ(3, self->v->msix_nr);
	EXPECT_EQ(3, self->v->msix_bar);
	EXPECT_EQ(0x2000, self->v->msix_pba_off);
	EXPECT_EQ(4, self->v->msi_max);
}

TEST_F(vcfg, hostile_writes_change_nothing_they_should_not)
{
	uint8_t before[256], after[256];

	for (int i = 0; i < 256; i += 4) {
		uint32_t x = rd(self, i, 4);

		memcpy(before + i, &x, 4);
	}
	/* everything but the command register, BARs and the MSI/MSI-X controls, at every width */
	for (uint32_t off = 0; off < 256; off++) {
		if (off >= PCI_COMMAND && off < PCI_COMMAND + 2)
			continue;
		wr(self, off, 0xff, 1);
	}
	for (int i = 0; i < 256; i += 4) {
		uint32_t x = rd(self, i, 4);

		memcpy(after + i, &x, 4);
	}
	EXPECT_EQ(0, memcmp(before, after, PCI_COMMAND)); /* identity */
	EXPECT_EQ(0, memcmp(before + PCI_CLASS_REVISION, after + PCI_CLASS_REVISION, 4));
	EXPECT_EQ(before[PCI_CAPABILITY_LIST], after[PCI_CAPABILITY_LIST]);
	uint32_t exp = self->v->pci.cap_last; /* the PCIe copy is read-only */

	EXPECT_EQ(0, memcmp(before + exp, after + exp, 0x30));
	EXPECT_EQ(PCI_COMMAND_PARITY, device_cmd(self)) TH_LOG("a config write other than the command "
							      "register reached the device");
	/* the extended space, through the ECAM only: every byte written, nothing changes */
	uint32_t ext_before = rd(self, 0x100, 4), sever = rd(self, 0x100 + PCI_ERR_UNCOR_SEVER, 4);

	for (uint32_t off = PCI_CFG_SPACE_SIZE; off < PCI_CFG_SPACE_EXP_SIZE; off += 4)
		wr(self, off, 0xffffffff, 4);
	EXPECT_EQ(ext_before, rd(self, 0x100, 4));
	EXPECT_EQ(sever, rd(self, 0x100 + PCI_ERR_UNCOR_SEVER, 4));
	EXPECT_EQ(0, rd(self, 0x800, 4));
	uint32_t dev_ext = 0;

	pread(self->v->fd, &dev_ext, 4, 0x100 + PCI_ERR_UNCOR_SEVER);
	EXPECT_EQ(0x00462030, dev_ext) TH_LOG("an extended config write reached the device");
	/* unaligned and odd-sized accesses are ignored */
	wr(self, PCI_COMMAND + 1, 0xff, 2);
	wr(self, PCI_VENDOR_ID, 0xffffffff, 3);
	EXPECT_EQ(0x8086, rd(self, PCI_VENDOR_ID, 2));
}

TEST_F(vcfg, only_memory_master_and_intx_disable_reach_the_device)
{
	wr(self, PCI_COMMAND, 0xffff, 2);
	EXPECT_EQ(PCI_COMMAND_PARITY | PCI_COMMAND_MEMORY | PCI_COMMAND_MASTER | PCI_COMMAND_INTX_DISABLE,
		  device_cmd(self));
	wr(self, PCI_COMMAND, 0, 2);
	EXPECT_EQ(PCI_COMMAND_PARITY, device_cmd(self));
}

/* uio_pci_generic's handler claims an INTx only when Status.INTERRUPT is set: the guest must see
 * the device's bit at every width, with the copy's other status bits kept. */
TEST_F(vcfg, status_interrupt_is_the_devices_and_intx_masks_are_counted)
{
	uint16_t st = PCI_STATUS_CAP_LIST | PCI_STATUS_INTERRUPT;

	EXPECT_EQ(0, rd(self, PCI_STATUS, 2) & PCI_STATUS_INTERRUPT);
	ASSERT_EQ(2, pwrite(self->v->fd, &st, 2, PCI_STATUS));
	EXPECT_EQ(PCI_STATUS_CAP_LIST | PCI_STATUS_INTERRUPT, rd(self, PCI_STATUS, 2));
	EXPECT_EQ(PCI_STATUS_CAP_LIST | PCI_STATUS_INTERRUPT, rd(self, PCI_STATUS, 1));
	EXPECT_EQ((uint32_t)(PCI_STATUS_CAP_LIST | PCI_STATUS_INTERRUPT) << 16,
		  rd(self, PCI_COMMAND, 4) & 0xffff0000u);
	EXPECT_EQ(0, rd(self, PCI_STATUS + 1, 1)); /* the other byte is the copy's */
	st = PCI_STATUS_CAP_LIST;
	ASSERT_EQ(2, pwrite(self->v->fd, &st, 2, PCI_STATUS));
	EXPECT_EQ(PCI_STATUS_CAP_LIST, rd(self, PCI_STATUS, 2));
	EXPECT_EQ(3, self->v->stats.intx_pending_reads);
	/* the handler's mask, then the unmask: forwarded, and counted */
	wr(self, PCI_COMMAND, PCI_COMMAND_MEMORY | PCI_COMMAND_INTX_DISABLE, 2);
	EXPECT_EQ(PCI_COMMAND_PARITY | PCI_COMMAND_MEMORY | PCI_COMMAND_INTX_DISABLE, device_cmd(self));
	wr(self, PCI_COMMAND + 1, 0, 1);
	EXPECT_EQ(PCI_COMMAND_PARITY | PCI_COMMAND_MEMORY, device_cmd(self));
	EXPECT_EQ(1, self->v->stats.intx_masks);
	EXPECT_EQ(1, self->v->stats.intx_unmasks);
}

TEST_F(vcfg, msix_routes_carry_the_guest_rid_with_external_eventfds)
{
	struct vfio_pci *v = self->v;
	uint32_t entry[4] = { 0x08090040, 0, 0x21, 0 };

	wr(self, v->msix_cap + PCI_MSIX_FLAGS, PCI_MSIX_FLAGS_ENABLE, 2);
	EXPECT_TRUE(msix_enabled(&v->msix));
	for (int k = 0; k < 4; k++)
		msix_table_access(&v->msix, 16 + 4 * k, (uint8_t *)&entry[k], 4, true);
	const struct kvm_irq_routing_entry *e = fake_kvm_route(&self->fk, v->msix.vec[1].route.gsi);

	ASSERT_NE(NULL, e);
	EXPECT_EQ(KVM_MSI_VALID_DEVID, e->flags);
	EXPECT_EQ(5 << 3, e->u.msi.devid) TH_LOG("devid must be the guest's 00:05.0, not the host BDF");
	EXPECT_EQ(0x21, e->u.msi.data);
	/* the irqfd is on the very eventfd VFIO was given as the vector's trigger */
	int a = fake_kvm_find(&self->fk, FK_IRQFD_ASSIGN, 0);

	ASSERT_LE(0, a);
	EXPECT_EQ(msix_vector_eventfd(&v->msix, 1), self->fk.call[a].fd);
	/* partial and out-of-range table accesses do nothing */
	uint16_t half = 0;
	uint32_t word = 0, commits = self->fk.commits;

	msix_table_access(&v->msix, 16 + 8, (uint8_t *)&half, 2, true);
	msix_table_access(&v->msix, 16 * 64, (uint8_t *)&word, 4, true);
	msix_table_access(&v->msix, 16 * 3, (uint8_t *)&word, 4, true); /* past the 3 vectors */
	EXPECT_EQ(commits, self->fk.commits);
	/* the device raises vector 1 by writing its eventfd: nothing for vmm to do (KVM injects) */
	EXPECT_EQ(0, eventfd_write(msix_vector_eventfd(&v->msix, 1), 1));
	uint64_t pba = 0;

	msix_pba_access(&v->msix, 0, (uint8_t *)&pba, 8, false);
	EXPECT_EQ(0, pba); /* live: KVM's, not pending */
}

TEST_F(vcfg, msi_with_several_vectors_routes_each)
{
	struct vfio_pci *v = self->v;
	uint32_t c = v->msi_cap;

	wr(self, c + PCI_MSI_ADDRESS_LO, 0x08090040, 4);
	wr(self, c + PCI_MSI_ADDRESS_HI, 0, 4);
	wr(self, c + PCI_MSI_DATA_64, 0x40, 2);
	ASSERT_EQ(0, vfio_irqs_setup(v));
	wr(self, c + PCI_MSI_FLAGS, PCI_MSI_FLAGS_ENABLE | (2 << 4), 2); /* 4 vectors */
	EXPECT_TRUE(v->msi_enabled);
	ASSERT_EQ(4, v->msi_nr);
	for (int i = 0; i < 4; i++) {
		const struct kvm_irq_routing_entry *e = fake_kvm_route(&self->fk, v->msi_vec[i].gsi);

		ASSERT_NE(NULL, e);
		EXPECT_EQ(0x40 | i, e->u.msi.data);
		EXPECT_EQ(5 << 3, e->u.msi.devid);
	}
	/* a guest asking for more vectors than the device has gets the device's number */
	wr(self, c + PCI_MSI_FLAGS, 0, 2);
	EXPECT_FALSE(v->msi_enabled);
	wr(self, c + PCI_MSI_FLAGS, PCI_MSI_FLAGS_ENABLE | (5 << 4), 2);
	EXPECT_EQ(4, v->msi_nr);
	vfio_irqs_teardown(v);
}

/* A guest toggling MSI and MSI-X as fast as it can write config space: every toggle is a
 * VFIO_DEVICE_SET_IRQS (this fake device refuses them all: a memfd has no such ioctl), and each
 * failure used to warn, 2-3 per config write (issue 19). The warnings now go through the VM's
 * limit: at most its burst, then one "suppressed N" line. */
TEST_F(vcfg, msi_and_msix_toggling_cannot_flood_the_log)
{
	struct vfio_pci *v = self->v;
	struct log_capture cap;
	uint64_t before = v->stats.set_irqs;

	ASSERT_EQ(0, vfio_irqs_setup(v));
	ASSERT_EQ(0, log_capture_start(&cap));
	for (int i = 0; i < 300; i++) {
		wr(self, v->msi_cap + PCI_MSI_FLAGS, PCI_MSI_FLAGS_ENABLE, 2);
		wr(self, v->msi_cap + PCI_MSI_FLAGS, 0, 2);
		wr(self, v->msix_cap + PCI_MSIX_FLAGS, PCI_MSIX_FLAGS_ENABLE, 2);
		wr(self, v->msix_cap + PCI_MSIX_FLAGS, PCI_MSIX_FLAGS_ENABLE | PCI_MSIX_FLAGS_MASKALL, 2);
		wr(self, v->msix_cap + PCI_MSIX_FLAGS, 0, 2);
	}
	log_limit_flush(&vm.log_limit);
	char *t = log_capture_end(&cap);

	ASSERT_NE(NULL, t);
	/* the toggles did reach VFIO */
	EXPECT_LE(before + 600, v->stats.set_irqs);
	EXPECT_GE(LOG_LIMIT_BURST, log_lines(t, "VFIO_DEVICE_SET_IRQS"));
	EXPECT_LE(1, log_lines(t, "VFIO_DEVICE_SET_IRQS")); /* what failed is still said */
	EXPECT_GE(LOG_LIMIT_BURST + 1, log_lines(t, "")) TH_LOG("%u lines", log_lines(t, ""));
	EXPECT_EQ(1, log_lines(t, "suppressed"));
	free(t);
	vfio_irqs_teardown(v);
}

/* QEMU's edu as VFIO shows it: one MSI vector (64-bit, no per-vector mask), INTx, no PCIe. The lab
 * proves its INTx; no guest driver enables its MSI (uio_pci_generic is INTx-only, the guest has no
 * VFIO no-IOMMU), so its MSI layout is covered here. */
TEST(edu_single_msi_vector_routes_with_the_guest_rid)
{
	struct fake_kvm fk;
	struct vfio_container c = { .vm = &vm, .fd = -1, .kvm_dev = -1 };
	struct vfio_pci *v = calloc(1, sizeof(*v));
	uint8_t cfg[4096] = { 0 };
	int slot = 3;

	ASSERT_NE(NULL, v);
	ASSERT_EQ(0, fake_vm_init(&vm, &fk, 1 << 20, 96));
	ASSERT_EQ(0, pci_host_init(&host, &vm, &fd_layout));
	fake_vfio_cfg_put(cfg, PCI_VENDOR_ID, 0x1234, 2);
	fake_vfio_cfg_put(cfg, PCI_DEVICE_ID, 0x11e8, 2);
	fake_vfio_cfg_put(cfg, PCI_CLASS_REVISION, 0x00ff0010, 4);
	fake_vfio_cfg_put(cfg, PCI_STATUS, PCI_STATUS_CAP_LIST, 2);
	fake_vfio_cfg_put(cfg, PCI_INTERRUPT_PIN, 1, 1);
	fake_vfio_cfg_put(cfg, PCI_CAPABILITY_LIST, 0x40, 1);
	fake_vfio_cfg_put(cfg, 0x40, PCI_CAP_ID_MSI, 2);
	fake_vfio_cfg_put(cfg, 0x42, PCI_MSI_FLAGS_64BIT, 2); /* 1 vector */
	ASSERT_EQ(0, fake_vfio_device(v, &c, cfg, "0000:00:05.0", 4096));
	ASSERT_EQ(0, vfio_config_setup(v, &host, slot));
	ASSERT_EQ(0, vfio_irqs_setup(v));
	EXPECT_EQ(1, v->msi_max);
	uint32_t m = v->msi_cap, base = FD_ECAM + (slot << 15);
	uint32_t lo = 0x08090040, hi = 0, en = PCI_MSI_FLAGS_ENABLE | (2 << 4), flags = 0; /* asks 4 */
	uint16_t data = 0x33;

	bus_access(&vm.mmio, base + m + PCI_MSI_FLAGS, (uint8_t *)&flags, 2, false);
	EXPECT_EQ(PCI_MSI_FLAGS_64BIT, flags);
	bus_access(&vm.mmio, base + m + PCI_MSI_ADDRESS_LO, (uint8_t *)&lo, 4, true);
	bus_access(&vm.mmio, base + m + PCI_MSI_ADDRESS_HI, (uint8_t *)&hi, 4, true);
	bus_access(&vm.mmio, base + m + PCI_MSI_DATA_64, (uint8_t *)&data, 2, true);
	bus_access(&vm.mmio, base + m + PCI_MSI_FLAGS, (uint8_t *)&en, 2, true);
	EXPECT_TRUE(v->msi_enabled);
	EXPECT_EQ(1, v->msi_nr) TH_LOG("the guest asked for 4 vectors of a device that has 1");
	const struct kvm_irq_routing_entry *e = fake_kvm_route(&fk, v->msi_vec[0].gsi);

	ASSERT_NE(NULL, e);
	EXPECT_EQ(0x33, e->u.msi.data);
	EXPECT_EQ(0x08090040, e->u.msi.address_lo);
	EXPECT_EQ(KVM_MSI_VALID_DEVID, e->flags);
	EXPECT_EQ((uint32_t)slot << 3, e->u.msi.devid);
	int a = fake_kvm_find(&fk, FK_IRQFD_ASSIGN, 0);

	ASSERT_LE(0, a);
	EXPECT_EQ(v->msi_vec[0].fd, fk.call[a].fd) TH_LOG("the irqfd must be on the vector's VFIO trigger");
	EXPECT_EQ(1, vfio_pci_live_vectors(v));
	vfio_irqs_teardown(v);
	EXPECT_EQ(0, vfio_pci_live_vectors(v));
	close(v->fd);
	free(v);
	fake_vm_free(&vm);
}

/* A hostile or odd extended chain: a hidden capability at 0x100 (the guest gets a null header
 * pointing past it), a shown one whose next pointer goes backwards (the walk ends there), and one
 * only reachable through that pointer (never shown). */
TEST(extended_chain_hidden_first_and_backward_pointer)
{
	struct fake_kvm fk;
	struct vfio_container c = { .vm = &vm, .fd = -1, .kvm_dev = -1 };
	struct vfio_pci *v = calloc(1, sizeof(*v));
	uint8_t cfg[4096] = { 0 };
	uint32_t x = 0, base;
	int slot = 7;

	ASSERT_NE(NULL, v);
	ASSERT_EQ(0, fake_vm_init(&vm, &fk, 1 << 20, 96));
	ASSERT_EQ(0, pci_host_init(&host, &vm, &fd_layout));
	fake_vfio_cfg_put(cfg, PCI_VENDOR_ID, 0x8086, 2);
	fake_vfio_cfg_put(cfg, PCI_DEVICE_ID, 0x10ca, 2);
	fake_vfio_cfg_put(cfg, 0x100, PCI_EXT_CAP_ID_SRIOV | 1 << 16 | 0x200 << 20, 4);
	fake_vfio_cfg_put(cfg, 0x200, PCI_EXT_CAP_ID_DSN | 1 << 16 | 0x180 << 20, 4); /* back: the walk ends */
	fake_vfio_cfg_put(cfg, 0x204, 0x12345678, 4);
	fake_vfio_cfg_put(cfg, 0x208, 0x9abcdef0, 4);
	fake_vfio_cfg_put(cfg, 0x180, PCI_EXT_CAP_ID_ARI | 1 << 16 | 0x200 << 20, 4);
	ASSERT_EQ(0, fake_vfio_device(v, &c, cfg, "0000:00:13.1", 4096));
	ASSERT_EQ(0, vfio_config_setup(v, &host, slot));
	base = FD_ECAM + (slot << 15);
	bus_access(&vm.mmio, base + 0x100, (uint8_t *)&x, 4, false);
	EXPECT_EQ(0x200u << 20, x) TH_LOG("a null header pointing to DSN, SR-IOV hidden");
	bus_access(&vm.mmio, base + 0x200, (uint8_t *)&x, 4, false);
	EXPECT_EQ(PCI_EXT_CAP_ID_DSN | 1 << 16, x) TH_LOG("the chain ends at DSN");
	bus_access(&vm.mmio, base + 0x208, (uint8_t *)&x, 4, false);
	EXPECT_EQ(0x9abcdef0, x);
	bus_access(&vm.mmio, base + 0x180, (uint8_t *)&x, 4, false);
	EXPECT_EQ(0, x) TH_LOG("not on the forward chain: not shown");
	close(v->fd);
	free(v);
	fake_vm_free(&vm);
}

TEST_HARNESS_MAIN

/*
 * MSI and MSI-X take one path per vector (core/msi_route.c): the same KVM calls in the same order
 * for a vector, step by step, with VFIO's triggers set before the first route commit. A step's
 * trace names each fake KVM call and whose it is (v: the vector's GSI and eventfd, ?: another's),
 * each commit with the VFIO_DEVICE_SET_IRQS made so far in the step, and the vector's route after.
 */
struct path_trace {
	struct fake_kvm *fk;
	struct vfio_pci *v;
	uint64_t set_irqs; /* at the step's start */
	char commit[64];   /* what each commit saw, in order */
};

static void trace_commit(void *arg)
{
	struct path_trace *t = arg;
	size_t n = strlen(t->commit);

	snprintf(t->commit + n, sizeof(t->commit) - n, "S%llu;",
		 (unsigned long long)(t->v->stats.set_irqs - t->set_irqs));
}

static void trace_step(struct path_trace *t, int from, const struct msi_route *r, char *out, size_t size)
{
	static const char *const name[] = { [FK_IRQFD_ASSIGN] = "assign", [FK_IRQFD_DEASSIGN] = "deassign",
					    [FK_SET_GSI_ROUTING] = "commit" };
	size_t n = 0;

	for (int i = from; i < t->fk->nr && n < size; i++) {
		const struct fake_call *c = &t->fk->call[i];
		bool mine = c->gsi == (uint32_t)r->gsi && c->fd == r->fd;
		char who = c->op == FK_SET_GSI_ROUTING ? '-' : mine ? 'v' : '?';

		n += snprintf(out + n, size - n, "%s(%c) ",
			      c->op < sizeof(name) / sizeof(name[0]) && name[c->op] ? name[c->op] : "other", who);
	}
	const struct kvm_irq_routing_entry *e = fake_kvm_route(t->fk, r->gsi);

	if (n < size)
		n += snprintf(out + n, size - n, "| %s | route %x irqfd %d set_irqs %llu", t->commit,
			      e ? e->u.msi.data : 0, r->irqfd,
			      (unsigned long long)(t->v->stats.set_irqs - t->set_irqs));
	t->commit[0] = 0;
	t->set_irqs = t->v->stats.set_irqs;
}

enum { STEP_ENABLE_MASKED, STEP_UNMASK, STEP_MOVE, STEP_MASK, STEP_DISABLE, STEP_ENABLE_LIVE,
       STEP_OFF, NR_STEPS };

TEST_F(vcfg, msi_and_msix_vectors_take_the_same_path)
{
	struct vfio_pci *v = self->v;
	struct path_trace t = { .fk = &self->fk, .v = v };
	char msi[NR_STEPS][512], msix[NR_STEPS][512];
	uint32_t c = v->msi_cap, x = v->msix_cap;
	int from;

	ASSERT_EQ(0, vfio_irqs_setup(v));
	self->fk.on_commit = trace_commit;
	self->fk.on_commit_arg = &t;
	t.set_irqs = v->stats.set_irqs;
#define STEP(s, trace, r, ...) do { from = self->fk.nr; __VA_ARGS__; \
				    trace_step(&t, from, r, trace[s], sizeof(trace[s])); } while (0)
	/* MSI, one vector: mask, message, enable; unmask; a new message; mask; disable; then on
	 * again with the vector live from the start, and off */
	const struct msi_route *r = &v->msi_vec[0];

	wr(self, c + PCI_MSI_ADDRESS_LO, 0x08090040, 4);
	wr(self, c + PCI_MSI_DATA_64, 0x21, 2);
	STEP(STEP_ENABLE_MASKED, msi, r, wr(self, c + PCI_MSI_MASK_64, 1, 4);
	     wr(self, c + PCI_MSI_FLAGS, PCI_MSI_FLAGS_ENABLE, 2));
	STEP(STEP_UNMASK, msi, r, wr(self, c + PCI_MSI_MASK_64, 0, 4));
	STEP(STEP_MOVE, msi, r, wr(self, c + PCI_MSI_DATA_64, 0x22, 2));
	STEP(STEP_MASK, msi, r, wr(self, c + PCI_MSI_MASK_64, 1, 4));
	STEP(STEP_DISABLE, msi, r, wr(self, c + PCI_MSI_FLAGS, 0, 2));
	wr(self, c + PCI_MSI_DATA_64, 0x23, 2); /* while off: nothing to KVM until it is live */
	STEP(STEP_ENABLE_LIVE, msi, r, wr(self, c + PCI_MSI_MASK_64, 0, 4);
	     wr(self, c + PCI_MSI_FLAGS, PCI_MSI_FLAGS_ENABLE, 2));
	STEP(STEP_OFF, msi, r, wr(self, c + PCI_MSI_FLAGS, 0, 2));

	/* MSI-X vector 0, the same steps through its table entry */
	uint32_t lo = 0x08090040, data = 0x21, masked = PCI_MSIX_ENTRY_CTRL_MASKBIT, unmasked = 0;

	r = &v->msix.vec[0].route;
	msix_table_access(&v->msix, PCI_MSIX_ENTRY_LOWER_ADDR, (uint8_t *)&lo, 4, true);
	msix_table_access(&v->msix, PCI_MSIX_ENTRY_DATA, (uint8_t *)&data, 4, true);
	STEP(STEP_ENABLE_MASKED, msix, r, wr(self, x + PCI_MSIX_FLAGS, PCI_MSIX_FLAGS_ENABLE, 2));
	STEP(STEP_UNMASK, msix, r,
	     msix_table_access(&v->msix, PCI_MSIX_ENTRY_VECTOR_CTRL, (uint8_t *)&unmasked, 4, true));
	data = 0x22;
	STEP(STEP_MOVE, msix, r, msix_table_access(&v->msix, PCI_MSIX_ENTRY_DATA, (uint8_t *)&data, 4, true));
	STEP(STEP_MASK, msix, r,
	     msix_table_access(&v->msix, PCI_MSIX_ENTRY_VECTOR_CTRL, (uint8_t *)&masked, 4, true));
	STEP(STEP_DISABLE, msix, r, wr(self, x + PCI_MSIX_FLAGS, 0, 2));
	data = 0x23;
	msix_table_access(&v->msix, PCI_MSIX_ENTRY_DATA, (uint8_t *)&data, 4, true);
	STEP(STEP_ENABLE_LIVE, msix, r,
	     msix_table_access(&v->msix, PCI_MSIX_ENTRY_VECTOR_CTRL, (uint8_t *)&unmasked, 4, true);
	     wr(self, x + PCI_MSIX_FLAGS, PCI_MSIX_FLAGS_ENABLE, 2));
	STEP(STEP_OFF, msix, r, wr(self, x + PCI_MSIX_FLAGS, 0, 2));
#undef STEP

	for (int s = 0; s < NR_STEPS; s++) {
		EXPECT_STREQ(msix[s], msi[s]) TH_LOG("step %d", s);
	}
	/* what the path is: VFIO's trigger first, the route committed and the irqfd assigned only
	 * once the vector is live, the irqfd off around a route change */
	EXPECT_STREQ("|  | route 0 irqfd 0 set_irqs 1", msi[STEP_ENABLE_MASKED]);
	EXPECT_STREQ("commit(-) assign(v) | S0; | route 21 irqfd 1 set_irqs 0", msi[STEP_UNMASK]);
	EXPECT_STREQ("deassign(v) commit(-) assign(v) | S0; | route 22 irqfd 1 set_irqs 0", msi[STEP_MOVE]);
	EXPECT_STREQ("deassign(v) |  | route 22 irqfd 0 set_irqs 0", msi[STEP_MASK]);
	EXPECT_STREQ("|  | route 22 irqfd 0 set_irqs 1", msi[STEP_DISABLE]);
	EXPECT_STREQ("commit(-) assign(v) | S1; | route 23 irqfd 1 set_irqs 1", msi[STEP_ENABLE_LIVE]);
	EXPECT_STREQ("deassign(v) |  | route 23 irqfd 0 set_irqs 1", msi[STEP_OFF]);
	self->fk.on_commit = NULL;
	vfio_irqs_teardown(v);
}
