// SPDX-License-Identifier: MIT
/*
 * virtio-blk driven as a guest would, from queue set-up to completion, through the fake KVM seam:
 * requests reach the image, completions come back on the used ring with one MSI-X interrupt per
 * batch, a reset in the middle of I/O is survived, and errors (short writes, read-only) are the
 * guest's IOERR, never a success.
 */
#include <errno.h>
#include <fcntl.h>
#include <libaio.h>
#include <linux/virtio_blk.h>
#include <signal.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <unistd.h>

#include "kselftest_harness.h"
#include "tests/unit/fake_driver.h"
#include "core/pci.h"
#include "core/vm.h"

#define IMG_SIZE (1 << 20)

static struct vm vm;
static struct pci_host host;

FIXTURE(blk) {
	struct fake_kvm fk;
	struct fake_driver f;
	struct virtio_dev *vd;
	char path[64];
	uint64_t hdr, data, status;
};

static struct virtio_dev *blk_open_features(struct __test_metadata *_metadata, FIXTURE_DATA(blk) *self,
					    bool ro, uint64_t features)
{
	struct virtio_dev *vd = virtio_blk_create(&vm, &host, self->path, ro, 1);

	ASSERT_NE(NULL, vd);
	fd_probe(&self->f, &vm, vd);
	EXPECT_NE(0, fd_negotiate(&self->f, features) & VIRTIO_CONFIG_S_FEATURES_OK);
	fd_msix_enable(&self->f, 2);
	fd_queue_setup(&self->f, 0, 128, 0);
	fd_driver_ok(&self->f);
	self->hdr = fd_alloc(&self->f, 16);
	self->data = fd_alloc(&self->f, 64 * 1024);
	self->status = fd_alloc(&self->f, 1);
	return vd;
}

static struct virtio_dev *blk_open(struct __test_metadata *_metadata, FIXTURE_DATA(blk) *self, bool ro)
{
	return blk_open_features(_metadata, self, ro, 0);
}

FIXTURE_SETUP(blk)
{
	io_context_t probe = 0;

	self->vd = NULL;
	self->path[0] = 0;
	if (io_setup(1, &probe) == -ENOSYS) /* qemu-user does not emulate the aio syscalls */
		SKIP(return, "no libaio syscalls here (qemu-user); run natively and in the lab");
	io_destroy(probe);
	ASSERT_EQ(0, fake_vm_init(&vm, &self->fk, 4 << 20, 96));
	ASSERT_EQ(0, pci_host_init(&host, &vm, &fd_layout));
	strcpy(self->path, "/tmp/vmm-blk-test-XXXXXX");
	int fd = mkstemp(self->path);

	ASSERT_LE(0, fd);
	ASSERT_EQ(0, ftruncate(fd, IMG_SIZE));
	close(fd);
	self->vd = NULL;
}

FIXTURE_TEARDOWN(blk)
{
	if (!self->path[0])
		return; /* skipped */
	if (self->vd)
		virtio_stop(self->vd);
	unlink(self->path);
	fake_vm_free(&vm);
}

/* Queues one request: type at sector, len data bytes at self->data. */
static uint16_t blk_req(FIXTURE_DATA(blk) *self, uint32_t type, uint64_t sector, uint32_t len)
{
	struct virtio_blk_outhdr *h = fd_hva(&self->f, self->hdr, sizeof(*h));
	struct fd_seg s[3] = {
		{ self->hdr, sizeof(*h), false },
		{ self->data, len, type == VIRTIO_BLK_T_IN || type == VIRTIO_BLK_T_GET_ID },
		{ self->status, 1, true },
	};

	*h = (struct virtio_blk_outhdr){ .type = type, .sector = sector };
	*(uint8_t *)fd_hva(&self->f, self->status, 1) = 0xff;
	if (len == 0) {
		s[1] = s[2];
		return fd_add(&self->f, 0, s, 2);
	}
	return fd_add(&self->f, 0, s, 3);
}

static uint8_t blk_status(FIXTURE_DATA(blk) *self)
{
	return *(uint8_t *)fd_hva(&self->f, self->status, 1);
}

TEST_F(blk, write_reaches_the_image_and_completes_with_one_interrupt)
{
	uint32_t id, len;

	self->vd = blk_open(_metadata, self, false);
	/* MSI-X routes carry the requester ID as devid; the irqfd comes after its route */
	const struct kvm_irq_routing_entry *e = fake_kvm_route(&self->fk, self->vd->msix.vec[0].route.gsi);

	ASSERT_NE(NULL, e);
	EXPECT_EQ(KVM_MSI_VALID_DEVID, e->flags);
	EXPECT_EQ(self->vd->pci.devfn, e->u.msi.devid);
	EXPECT_EQ(0x40, e->u.msi.data);
	memset(fd_hva(&self->f, self->data, 4096), 0x5a, 4096);
	uint16_t head = blk_req(self, VIRTIO_BLK_T_OUT, 8, 4096);

	fd_kick(&self->f, 0);
	fd_run(&self->f, 100);
	ASSERT_EQ(1, fd_used(&self->f, 0, &id, &len));
	EXPECT_EQ(head, id);
	EXPECT_EQ(1, len); /* the status byte */
	EXPECT_EQ(VIRTIO_BLK_S_OK, blk_status(self));
	EXPECT_EQ(1, fd_irqs(&self->f, 0));
	uint8_t got[4096];
	int fd = open(self->path, O_RDONLY);

	ASSERT_EQ(4096, pread(fd, got, 4096, 8 * 512));
	close(fd);
	EXPECT_EQ(0x5a, got[0]);
	EXPECT_EQ(0x5a, got[4095]);
}

TEST_F(blk, kick_with_nothing_completed_raises_no_interrupt)
{
	uint32_t id, len;

	self->vd = blk_open(_metadata, self, false);
	blk_req(self, VIRTIO_BLK_T_IN, 0, 512);
	fd_kick(&self->f, 0);
	fd_run(&self->f, 100);
	ASSERT_EQ(1, fd_used(&self->f, 0, &id, &len));
	EXPECT_EQ(1, fd_irqs(&self->f, 0));
	/* the kick's and the completion's eventfds are never read (edge-triggered): once served,
	 * nothing is reported again */
	EXPECT_EQ(0, virtio_poll(self->vd, 0));
	/* kicks that bring no new request complete nothing: no interrupt */
	fd_kick(&self->f, 0);
	fd_run(&self->f, 50);
	fd_kick(&self->f, 0);
	fd_run(&self->f, 50);
	EXPECT_EQ(0, fd_used(&self->f, 0, &id, &len));
	EXPECT_EQ(0, fd_irqs(&self->f, 0));
}

TEST_F(blk, reset_with_io_in_flight_survives_and_drops_completions)
{
	uint32_t id, len;

	self->vd = blk_open(_metadata, self, false);
	blk_req(self, VIRTIO_BLK_T_OUT, 0, 4096);
	fd_kick(&self->f, 0);
	/* one round: the kick is taken and the I/O submitted; its completion is not reaped yet */
	virtio_poll(self->vd, 100);
	fd_common_wr(&self->f, offsetof(struct virtio_pci_common_cfg, device_status), 0, 1);
	fd_run(&self->f, 100);
	/* the driver waits for status 0; nothing lands in the (now forgotten) rings */
	EXPECT_EQ(0, fd_status(&self->f));
	EXPECT_EQ(0, fd_used(&self->f, 0, &id, &len));
	/* and the device works again after re-initialisation */
	fd_negotiate(&self->f, 0);
	fd_msix_enable(&self->f, 2);
	fd_queue_setup(&self->f, 0, 128, 0);
	fd_driver_ok(&self->f);
	blk_req(self, VIRTIO_BLK_T_IN, 0, 512);
	fd_kick(&self->f, 0);
	fd_run(&self->f, 100);
	ASSERT_EQ(1, fd_used(&self->f, 0, &id, &len));
	EXPECT_EQ(VIRTIO_BLK_S_OK, blk_status(self));
}

TEST_F(blk, short_write_is_an_io_error)
{
	uint32_t id, len;
	/* the host file may grow to 8 KiB + 512: a 4 KiB write at 8 KiB is cut short (EFBIG past it) */
	struct rlimit rl = { 8192 + 512, RLIM_INFINITY };

	self->vd = blk_open(_metadata, self, false);
	signal(SIGXFSZ, SIG_IGN);
	ASSERT_EQ(0, setrlimit(RLIMIT_FSIZE, &rl));
	blk_req(self, VIRTIO_BLK_T_OUT, 16, 4096);
	fd_kick(&self->f, 0);
	fd_run(&self->f, 100);
	ASSERT_EQ(1, fd_used(&self->f, 0, &id, &len));
	EXPECT_EQ(VIRTIO_BLK_S_IOERR, blk_status(self));
	/* past the limit altogether */
	blk_req(self, VIRTIO_BLK_T_OUT, 64, 4096);
	fd_kick(&self->f, 0);
	fd_run(&self->f, 100);
	ASSERT_EQ(1, fd_used(&self->f, 0, &id, &len));
	EXPECT_EQ(VIRTIO_BLK_S_IOERR, blk_status(self));
}

TEST_F(blk, read_only_disk_refuses_writes_and_keeps_the_image)
{
	uint32_t id, len;
	uint8_t got[512];

	self->vd = blk_open(_metadata, self, true);
	memset(fd_hva(&self->f, self->data, 512), 0x77, 512);
	blk_req(self, VIRTIO_BLK_T_OUT, 0, 512);
	fd_kick(&self->f, 0);
	fd_run(&self->f, 100);
	ASSERT_EQ(1, fd_used(&self->f, 0, &id, &len));
	EXPECT_EQ(VIRTIO_BLK_S_IOERR, blk_status(self));
	int fd = open(self->path, O_RDONLY);

	ASSERT_EQ(512, pread(fd, got, 512, 0));
	close(fd);
	EXPECT_EQ(0, got[0]);
	/* refused by vmm's own check, before any I/O (the read-only fd is only the second line) */
	char line[512] = "";
	FILE *f = fmemopen(line, sizeof(line), "w");

	virtio_summary(self->vd, f);
	fclose(f);
	EXPECT_NE(NULL, strstr(line, "1 writes to the read-only disk refused")) TH_LOG("%s", line);
}

TEST_F(blk, requests_beyond_the_disk_and_odd_lengths_fail)
{
	uint32_t id, len;

	self->vd = blk_open(_metadata, self, false);
	blk_req(self, VIRTIO_BLK_T_IN, IMG_SIZE / 512, 512); /* one sector past the end */
	fd_kick(&self->f, 0);
	fd_run(&self->f, 100);
	ASSERT_EQ(1, fd_used(&self->f, 0, &id, &len));
	EXPECT_EQ(VIRTIO_BLK_S_IOERR, blk_status(self));
	blk_req(self, VIRTIO_BLK_T_IN, 0, 100); /* not a whole sector */
	fd_kick(&self->f, 0);
	fd_run(&self->f, 100);
	ASSERT_EQ(1, fd_used(&self->f, 0, &id, &len));
	EXPECT_EQ(VIRTIO_BLK_S_IOERR, blk_status(self));
	blk_req(self, 0x7777, 0, 512);
	fd_kick(&self->f, 0);
	fd_run(&self->f, 100);
	ASSERT_EQ(1, fd_used(&self->f, 0, &id, &len));
	EXPECT_EQ(VIRTIO_BLK_S_UNSUPP, blk_status(self));
}

TEST_F(blk, flush_and_get_id)
{
	uint32_t id, len;

	self->vd = blk_open(_metadata, self, false);
	blk_req(self, VIRTIO_BLK_T_FLUSH, 0, 0);
	fd_kick(&self->f, 0);
	fd_run(&self->f, 200);
	ASSERT_EQ(1, fd_used(&self->f, 0, &id, &len));
	EXPECT_EQ(VIRTIO_BLK_S_OK, blk_status(self));
	blk_req(self, VIRTIO_BLK_T_GET_ID, 0, VIRTIO_BLK_ID_BYTES);
	fd_kick(&self->f, 0);
	fd_run(&self->f, 100);
	ASSERT_EQ(1, fd_used(&self->f, 0, &id, &len));
	EXPECT_EQ(VIRTIO_BLK_S_OK, blk_status(self));
	EXPECT_EQ(0, strncmp("vmm-", fd_hva(&self->f, self->data, 4), 4));
}

/* The device's own worker thread (as vmm runs it) takes the kicks while the "guest" (this thread)
 * posts requests and then resets the device with one in flight: run under ThreadSanitizer by make
 * check, so the worker's and the vCPU's sides must share nothing but the lock and the rings. */
TEST_F(blk, worker_thread_serves_kicks_and_a_reset)
{
	uint32_t id, len;
	int waited;

	self->vd = blk_open(_metadata, self, false);
	ASSERT_EQ(0, virtio_start(self->vd));
	for (int i = 0; i < 20; i++) {
		uint16_t head = blk_req(self, i % 2 ? VIRTIO_BLK_T_IN : VIRTIO_BLK_T_OUT, i, 4096);

		fd_kick(&self->f, 0);
		for (waited = 0; !fd_used(&self->f, 0, &id, &len) && waited < 5000; waited++)
			usleep(1000);
		ASSERT_LT(waited, 5000) TH_LOG("request %d never completed", i);
		EXPECT_EQ(head, id);
		EXPECT_EQ(VIRTIO_BLK_S_OK, blk_status(self));
	}
	blk_req(self, VIRTIO_BLK_T_FLUSH, 0, 0);
	fd_kick(&self->f, 0);
	fd_common_wr(&self->f, offsetof(struct virtio_pci_common_cfg, device_status), 0, 1);
	for (waited = 0; fd_status(&self->f) && waited < 5000; waited++)
		usleep(1000);
	EXPECT_EQ(0, fd_status(&self->f)) TH_LOG("the reset never finished");
}

/* VIRTIO_RING_F_EVENT_IDX negotiated: completions interrupt only once the used index passes the
 * driver's used_event, and after taking the ring empty the device asks for a kick at the next
 * entry (avail_event). */
TEST_F(blk, event_idx_follows_used_event_and_rearms_avail_event)
{
	uint32_t id, len;

	self->vd = blk_open_features(_metadata, self, false, 1ULL << VIRTIO_RING_F_EVENT_IDX);
	ASSERT_TRUE(virtio_has_feature(self->vd, VIRTIO_RING_F_EVENT_IDX));
	ASSERT_TRUE(self->vd->q[0].vq.event_idx);
	uint16_t *used_event = fd_hva(&self->f, self->f.q[0].avail + 4 + 2 * 128, 2);
	uint16_t *avail_event = fd_hva(&self->f, self->f.q[0].used + 4 + 8 * 128, 2);

	*used_event = 5; /* the driver wants no interrupt before the sixth completion */
	blk_req(self, VIRTIO_BLK_T_OUT, 0, 512);
	fd_kick(&self->f, 0);
	fd_run(&self->f, 100);
	ASSERT_EQ(1, fd_used(&self->f, 0, &id, &len));
	EXPECT_EQ(VIRTIO_BLK_S_OK, blk_status(self));
	EXPECT_EQ(0, fd_irqs(&self->f, 0));
	EXPECT_EQ(1, *avail_event); /* kick me when entry 1 is available */

	*used_event = 1; /* now it wants one at the next completion */
	blk_req(self, VIRTIO_BLK_T_IN, 0, 512);
	fd_kick(&self->f, 0);
	fd_run(&self->f, 100);
	ASSERT_EQ(1, fd_used(&self->f, 0, &id, &len));
	EXPECT_EQ(1, fd_irqs(&self->f, 0));
	EXPECT_EQ(2, *avail_event);

	*used_event = 0x8000; /* a hostile value: no interrupt, nothing else changes */
	blk_req(self, VIRTIO_BLK_T_IN, 0, 512);
	fd_kick(&self->f, 0);
	fd_run(&self->f, 100);
	ASSERT_EQ(1, fd_used(&self->f, 0, &id, &len));
	EXPECT_EQ(0, fd_irqs(&self->f, 0));
	EXPECT_EQ(0, self->vd->status & VIRTIO_CONFIG_S_NEEDS_RESET);
}

/* VIRTIO_BLK_F_MQ: a queue per vCPU, each completing on its own ring and MSI-X vector; a kick on
 * a queue the device does not have does nothing. */
TEST_F(blk, mq_queues_complete_on_their_own_vector)
{
	uint32_t id, len;
	struct virtio_blk_config c;

	self->vd = virtio_blk_create(&vm, &host, self->path, false, 2);
	ASSERT_NE(NULL, self->vd);
	fd_probe(&self->f, &vm, self->vd);
	EXPECT_NE(0, fd_negotiate(&self->f, 1ULL << VIRTIO_BLK_F_MQ) & VIRTIO_CONFIG_S_FEATURES_OK);
	EXPECT_TRUE(virtio_has_feature(self->vd, VIRTIO_BLK_F_MQ));
	EXPECT_EQ(2, fd_common_rd(&self->f, offsetof(struct virtio_pci_common_cfg, num_queues), 2));
	self->vd->ops->cfg_access(self->vd, 0, (uint8_t *)&c, sizeof(c), false);
	EXPECT_EQ(2, c.num_queues);
	fd_msix_enable(&self->f, 3);
	fd_queue_setup(&self->f, 0, 128, 0);
	fd_queue_setup(&self->f, 1, 128, 1);
	fd_driver_ok(&self->f);
	self->hdr = fd_alloc(&self->f, 16);
	self->data = fd_alloc(&self->f, 64 * 1024);
	self->status = fd_alloc(&self->f, 1);

	struct virtio_blk_outhdr *h = fd_hva(&self->f, self->hdr, sizeof(*h));
	struct fd_seg s[3] = {
		{ self->hdr, sizeof(*h), false }, { self->data, 512, true }, { self->status, 1, true },
	};

	*h = (struct virtio_blk_outhdr){ .type = VIRTIO_BLK_T_IN, .sector = 1 };
	uint16_t head = fd_add(&self->f, 1, s, 3);

	fd_kick(&self->f, 1);
	fd_run(&self->f, 100);
	ASSERT_EQ(1, fd_used(&self->f, 1, &id, &len));
	EXPECT_EQ(head, id);
	EXPECT_EQ(513, len);
	EXPECT_EQ(0, fd_used(&self->f, 0, &id, &len)); /* nothing on queue 0 */
	EXPECT_EQ(1, fd_irqs(&self->f, 1));
	EXPECT_EQ(0, fd_irqs(&self->f, 0));

	head = fd_add(&self->f, 0, s, 3);
	fd_kick(&self->f, 0);
	fd_kick(&self->f, 5); /* no such queue */
	fd_run(&self->f, 100);
	ASSERT_EQ(1, fd_used(&self->f, 0, &id, &len));
	EXPECT_EQ(head, id);
	EXPECT_EQ(1, fd_irqs(&self->f, 0));
	EXPECT_EQ(0, fd_irqs(&self->f, 1));
	EXPECT_EQ(0, self->vd->status & VIRTIO_CONFIG_S_NEEDS_RESET);
}

/* One queue (one vCPU): no VIRTIO_BLK_F_MQ offered. */
TEST_F(blk, one_queue_offers_no_mq)
{
	self->vd = blk_open(_metadata, self, false);
	EXPECT_EQ(0, self->vd->features & (1ULL << VIRTIO_BLK_F_MQ));
	EXPECT_EQ(1, self->vd->ops->nr_queues);
}

TEST_HARNESS_MAIN
