// SPDX-License-Identifier: MIT
/*
 * The virtio-pci transport driven through config space and BAR 0 as a guest driver would, with
 * virtio-console as the device: feature negotiation, queue set-up and its failures, reset, the
 * VIRTIO_PCI_CAP_PCI_CFG window, INTx (ISR, INTX_DISABLE, MSI-X taking over), guest-caused
 * messages said once, and the console's own data paths.
 */
#include <fcntl.h>
#include <linux/pci_regs.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "kselftest_harness.h"
#include "tests/unit/fake_driver.h"
#include "virtio/virtio.h"
#include "platform/console.h"
#include "core/irq.h"
#include "core/pci.h"
#include "core/vm.h"

#define CC(f) offsetof(struct virtio_pci_common_cfg, f)

static struct vm vm;
static struct pci_host host;

struct intx_rec {
	int raises;
	bool level;
};

static void rec_intx(void *opaque, unsigned int slot, bool level)
{
	struct intx_rec *r = opaque;

	(void)slot;
	r->raises += level && !r->level;
	r->level = level;
}

FIXTURE(vpci) {
	struct fake_kvm fk;
	struct fake_driver f;
	struct console_out out;
	struct virtio_dev *vd;
	struct intx_rec intx;
};

FIXTURE_SETUP(vpci)
{
	ASSERT_EQ(0, fake_vm_init(&vm, &self->fk, 1 << 20, 96));
	ASSERT_EQ(0, pci_host_init(&host, &vm, &fd_layout));
	memset(&self->intx, 0, sizeof(self->intx));
	host.set_intx = rec_intx;
	host.intx_opaque = &self->intx;
	memset(&self->out, 0, sizeof(self->out));
	self->out.fd = -1;
	self->vd = virtio_console_create(&vm, &host, &self->out);
	ASSERT_NE(NULL, self->vd);
	fd_probe(&self->f, &vm, self->vd);
}

FIXTURE_TEARDOWN(vpci)
{
	virtio_stop(self->vd);
	fake_vm_free(&vm);
}

/* Runs fn with stderr captured; returns how many times needle appears in it. */
static int stderr_count(void (*fn)(FIXTURE_DATA(vpci) *), FIXTURE_DATA(vpci) *self, const char *needle)
{
	char path[] = "/tmp/vmm-stderr-XXXXXX", buf[16384];
	int fd = mkstemp(path), saved = dup(2), n = 0;

	fflush(stderr);
	dup2(fd, 2);
	fn(self);
	fflush(stderr);
	dup2(saved, 2);
	close(saved);
	ssize_t len = pread(fd, buf, sizeof(buf) - 1, 0);

	buf[len > 0 ? len : 0] = 0;
	for (char *p = buf; (p = strstr(p, needle)); p++)
		n++;
	close(fd);
	unlink(path);
	return n;
}

TEST_F(vpci, features_never_exceed_the_offer_and_need_version_1)
{
	fd_common_wr(&self->f, CC(device_status), 0, 1);
	fd_common_wr(&self->f, CC(device_feature_select), 1, 4);
	EXPECT_EQ(1, fd_common_rd(&self->f, CC(device_feature), 4) & 1); /* VERSION_1 is bit 32 */
	/* a legacy driver (no VERSION_1) cannot set FEATURES_OK */
	fd_common_wr(&self->f, CC(device_status), VIRTIO_CONFIG_S_ACKNOWLEDGE | VIRTIO_CONFIG_S_DRIVER, 1);
	fd_common_wr(&self->f, CC(device_status), VIRTIO_CONFIG_S_ACKNOWLEDGE | VIRTIO_CONFIG_S_DRIVER |
		     VIRTIO_CONFIG_S_FEATURES_OK, 1);
	EXPECT_EQ(0, fd_status(&self->f) & VIRTIO_CONFIG_S_FEATURES_OK);
	/* bits the device did not offer are dropped */
	uint8_t st = fd_negotiate(&self->f, 1ULL << 40 | 1ULL << 3);

	EXPECT_NE(0, st & VIRTIO_CONFIG_S_FEATURES_OK);
	fd_common_wr(&self->f, CC(guest_feature_select), 1, 4);
	EXPECT_EQ(1, fd_common_rd(&self->f, CC(guest_feature), 4));
	fd_common_wr(&self->f, CC(guest_feature_select), 0, 4);
	EXPECT_EQ(0, fd_common_rd(&self->f, CC(guest_feature), 4));
	EXPECT_EQ(2, fd_common_rd(&self->f, CC(num_queues), 2));
}

static void bad_queue_twice(FIXTURE_DATA(vpci) *self)
{
	for (int i = 0; i < 3; i++) {
		fd_negotiate(&self->f, 0);
		fd_common_wr(&self->f, CC(queue_select), 0, 2);
		fd_common_wr(&self->f, CC(queue_size), 4096, 2); /* larger than the device offers */
		fd_common_wr(&self->f, CC(queue_enable), 1, 2);
	}
}

TEST_F(vpci, bad_queue_needs_reset_and_is_said_once)
{
	EXPECT_EQ(1, stderr_count(bad_queue_twice, self, "bad size"));
	EXPECT_NE(0, fd_status(&self->f) & VIRTIO_CONFIG_S_NEEDS_RESET);
	EXPECT_EQ(0, fd_common_rd(&self->f, CC(queue_enable), 2));
	EXPECT_EQ(3, atomic_load(&self->vd->stats.guest_errors));
	/* rings outside guest memory: refused too */
	fd_negotiate(&self->f, 0);
	fd_common_wr(&self->f, CC(queue_select), 1, 2);
	fd_common_wr(&self->f, CC(queue_desc_lo), 0x1000, 4);
	fd_common_wr(&self->f, CC(queue_enable), 1, 2);
	EXPECT_EQ(0, fd_common_rd(&self->f, CC(queue_enable), 2));
	EXPECT_NE(0, fd_status(&self->f) & VIRTIO_CONFIG_S_NEEDS_RESET);
}

TEST_F(vpci, reset_forgets_queues_and_status)
{
	fd_negotiate(&self->f, 0);
	fd_queue_setup(&self->f, 0, 64, 0);
	fd_driver_ok(&self->f);
	EXPECT_EQ(1, fd_common_rd(&self->f, CC(queue_enable), 2));
	EXPECT_EQ(1, fake_kvm_count(&self->fk, FK_IOEVENTFD_ASSIGN));
	fd_common_wr(&self->f, CC(device_status), 0, 1);
	EXPECT_EQ(0, fd_status(&self->f));
	fd_common_wr(&self->f, CC(queue_select), 0, 2);
	EXPECT_EQ(0, fd_common_rd(&self->f, CC(queue_enable), 2));
	EXPECT_EQ(0, fd_common_rd(&self->f, CC(queue_desc_lo), 4));
	EXPECT_EQ(64, fd_common_rd(&self->f, CC(queue_size), 2));
	EXPECT_EQ(VIRTIO_MSI_NO_VECTOR, fd_common_rd(&self->f, CC(queue_msix_vector), 2));
	EXPECT_EQ(1, fake_kvm_count(&self->fk, FK_IOEVENTFD_DEASSIGN));
}

/* Offset of the vendor capability of cfg_type, walking the list as a driver does. */
static uint32_t find_vcap(struct fake_driver *f, uint8_t type)
{
	for (uint32_t c = fd_cfg_rd(f, PCI_CAPABILITY_LIST, 1); c; c = fd_cfg_rd(f, c + 1, 1))
		if (fd_cfg_rd(f, c, 1) == PCI_CAP_ID_VNDR &&
		    fd_cfg_rd(f, c + offsetof(struct virtio_pci_cap, cfg_type), 1) == type)
			return c;
	return 0;
}

TEST_F(vpci, pci_cfg_window_reaches_bar0)
{
	uint32_t c = find_vcap(&self->f, VIRTIO_PCI_CAP_PCI_CFG);
	uint32_t data = c + offsetof(struct virtio_pci_cfg_cap, pci_cfg_data);

	ASSERT_NE(0, c) TH_LOG("no VIRTIO_PCI_CAP_PCI_CFG capability");
	EXPECT_LE(sizeof(struct virtio_pci_cfg_cap), fd_cfg_rd(&self->f, c + 2, 1));
	fd_cfg_wr(&self->f, c + offsetof(struct virtio_pci_cap, bar), 0, 1);
	fd_cfg_wr(&self->f, c + offsetof(struct virtio_pci_cap, offset), CC(num_queues), 4);
	fd_cfg_wr(&self->f, c + offsetof(struct virtio_pci_cap, length), 2, 4);
	EXPECT_EQ(2, fd_cfg_rd(&self->f, data, 2));
	/* a write through the window: device_status */
	fd_cfg_wr(&self->f, c + offsetof(struct virtio_pci_cap, offset), CC(device_status), 4);
	fd_cfg_wr(&self->f, c + offsetof(struct virtio_pci_cap, length), 1, 4);
	fd_cfg_wr(&self->f, data, VIRTIO_CONFIG_S_ACKNOWLEDGE, 1);
	EXPECT_EQ(VIRTIO_CONFIG_S_ACKNOWLEDGE, fd_status(&self->f));
	/* nonsense windows do nothing */
	fd_cfg_wr(&self->f, c + offsetof(struct virtio_pci_cap, offset), 0xfffffff0, 4);
	fd_cfg_wr(&self->f, data, 0, 1);
	fd_cfg_wr(&self->f, c + offsetof(struct virtio_pci_cap, length), 3, 4);
	fd_cfg_wr(&self->f, data, 0, 1);
	EXPECT_EQ(VIRTIO_CONFIG_S_ACKNOWLEDGE, fd_status(&self->f));
}

/* Console output: one buffer from the guest, delivered and answered with a used entry. */
static void tx_hello(FIXTURE_DATA(vpci) *self)
{
	uint64_t buf = fd_alloc(&self->f, 16);
	struct fd_seg s = { buf, 5, false };

	memcpy(fd_hva(&self->f, buf, 5), "hello", 5);
	fd_add(&self->f, 1, &s, 1);
	fd_kick(&self->f, 1);
	fd_run(&self->f, 50);
}

TEST_F(vpci, intx_follows_isr_and_intx_disable_and_yields_to_msix)
{
	uint32_t id, len;

	fd_negotiate(&self->f, 0);
	fd_queue_setup(&self->f, 0, 64, VIRTIO_MSI_NO_VECTOR);
	fd_queue_setup(&self->f, 1, 64, VIRTIO_MSI_NO_VECTOR);
	fd_driver_ok(&self->f);
	tx_hello(self);
	ASSERT_EQ(1, fd_used(&self->f, 1, &id, &len));
	EXPECT_EQ(5, self->out.bytes);
	EXPECT_TRUE(self->intx.level);
	EXPECT_NE(0, fd_cfg_rd(&self->f, PCI_STATUS, 2) & PCI_STATUS_INTERRUPT);
	/* reading the ISR acknowledges and drops the line */
	EXPECT_EQ(1, fd_common_rd(&self->f, 0x1000, 1));
	EXPECT_FALSE(self->intx.level);
	/* INTX_DISABLE: the device's interrupt shows in Status but the line stays low */
	fd_cfg_wr(&self->f, PCI_COMMAND, fd_cfg_rd(&self->f, PCI_COMMAND, 2) | PCI_COMMAND_INTX_DISABLE, 2);
	tx_hello(self);
	EXPECT_FALSE(self->intx.level) TH_LOG("INTX_DISABLE ignored");
	EXPECT_NE(0, fd_cfg_rd(&self->f, PCI_STATUS, 2) & PCI_STATUS_INTERRUPT);
	fd_cfg_wr(&self->f, PCI_COMMAND, fd_cfg_rd(&self->f, PCI_COMMAND, 2) & ~PCI_COMMAND_INTX_DISABLE, 2);
	EXPECT_TRUE(self->intx.level);
	/* enabling MSI-X takes INTx away */
	fd_msix_enable(&self->f, 3);
	EXPECT_FALSE(self->intx.level) TH_LOG("INTx still asserted after MSI-X was enabled");
	EXPECT_EQ(0, fd_cfg_rd(&self->f, PCI_STATUS, 2) & PCI_STATUS_INTERRUPT);
}

/* The interrupt table's rows: INTA# assertions, then per MSI-X vector what vmm raised, exactly. */
TEST_F(vpci, irq_rows_count_intx_then_msix_per_vector)
{
	struct irq_report r = { 0 };
	uint32_t id, len;
	char *json = NULL;
	size_t n = 0;

	fd_negotiate(&self->f, 0);
	fd_queue_setup(&self->f, 0, 64, VIRTIO_MSI_NO_VECTOR);
	fd_queue_setup(&self->f, 1, 64, VIRTIO_MSI_NO_VECTOR);
	fd_driver_ok(&self->f);
	tx_hello(self); /* INTA# up */
	ASSERT_EQ(1, fd_used(&self->f, 1, &id, &len));
	tx_hello(self); /* still up: the ISR was not read, no new assertion */
	EXPECT_EQ(1, fd_common_rd(&self->f, 0x1000, 1));
	tx_hello(self); /* up again */
	fd_msix_enable(&self->f, 3);
	fd_common_wr(&self->f, CC(queue_select), 1, 2); /* tx completions now on vector 2 */
	fd_common_wr(&self->f, CC(queue_msix_vector), 2, 2);
	for (int i = 0; i < 3; i++)
		tx_hello(self);
	ASSERT_EQ(0, virtio_irq_rows(self->vd, &r));
	ASSERT_EQ(self->vd->msix.nr + 1, r.nr);
	EXPECT_STREQ("virtio-console", r.row[0].device);
	EXPECT_STREQ("msix2", r.row[2].vector);
	EXPECT_EQ(IRQ_PATH_IRQFD, r.row[2].path);
	EXPECT_EQ(IRQ_BY_VMM, r.row[2].by);
	EXPECT_EQ(3, r.row[2].count);
	EXPECT_EQ(0, r.row[0].count);
	EXPECT_STREQ("intx", r.row[r.nr - 1].vector);
	EXPECT_EQ(IRQ_PATH_LINE, r.row[r.nr - 1].path);
	EXPECT_EQ(2, r.row[r.nr - 1].count);
	FILE *m = open_memstream(&json, &n);

	irq_report_json(m, &r);
	fclose(m);
	EXPECT_NE(NULL, strstr(json, "\"vector\":\"msix2\",\"path\":\"irqfd\",\"via\":\"eventfd write -> KVM irqfd\","
				    "\"signalled_by\":\"vmm\",\"counted_by\":\"vmm\",\"count\":3}")) TH_LOG("%s", json);
	EXPECT_NE(NULL, strstr(json, "\"vector\":\"intx\",\"path\":\"line\",\"via\":\"KVM_IRQ_LINE\"")) TH_LOG("%s", json);
	free(json);
	irq_report_free(&r);
}

TEST_F(vpci, console_input_fills_guest_buffers)
{
	uint32_t id, len;
	uint64_t buf = fd_alloc(&self->f, 64);
	struct fd_seg s = { buf, 64, true };

	fd_negotiate(&self->f, 0);
	fd_msix_enable(&self->f, 3);
	fd_queue_setup(&self->f, 0, 64, 0);
	fd_queue_setup(&self->f, 1, 64, 1);
	fd_driver_ok(&self->f);
	/* no buffer posted yet: nothing taken */
	EXPECT_EQ(0, virtio_console_push(self->vd->priv, (const uint8_t *)"abc", 3));
	fd_add(&self->f, 0, &s, 1);
	EXPECT_EQ(3, virtio_console_push(self->vd->priv, (const uint8_t *)"abc", 3));
	ASSERT_EQ(1, fd_used(&self->f, 0, &id, &len));
	EXPECT_EQ(3, len);
	EXPECT_EQ(0, memcmp("abc", fd_hva(&self->f, buf, 3), 3));
	EXPECT_EQ(1, fd_irqs(&self->f, 0));
	tx_hello(self);
	EXPECT_EQ(1, fd_irqs(&self->f, 1));
}

TEST_HARNESS_MAIN
