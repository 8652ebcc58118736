// SPDX-License-Identifier: MIT
/*
 * vhost-net's plumbing (virtio/vhost_net.c) against a model of /dev/vhost-net played through the
 * fake KVM seam's fd_ioctl: what is handed over at DRIVER_OK and in which order (features, memory
 * table, each vring's size, base, host addresses, kick = the queue's notify eventfd, call = its
 * MSI-X vector's eventfd, then the tap as backend), what is taken back on reset (backend -1,
 * VHOST_GET_VRING_BASE, kicks to the worker again), the rings that are refused before vhost sees
 * them, and the sessions left to the userspace path. The last case drives virtio-net itself on a
 * tap in a namespace of its own (root only).
 */
#include <errno.h>
#include <linux/pci_regs.h>
#include <linux/vhost.h>
#include <linux/virtio_net.h>
#include <sched.h>
#include <stdio.h>
#include <string.h>
#include <sys/eventfd.h>
#include <unistd.h>

#include "kselftest_harness.h"
#include "tests/unit/fake_driver.h"
#include "core/pci.h"
#include "core/sandbox_rules.h"
#include "core/vm.h"

#define RAM (1 << 20)

static struct vm vm;
static struct pci_host host;

/* The model of the kernel's vhost-net: what it was told, in order. */
#define MAX_REQS 64
struct vhost_model {
	uint64_t offer;	   /* GET_FEATURES answers this */
	uint64_t features; /* SET_FEATURES */
	unsigned long req[MAX_REQS];
	int nr;
	unsigned int nregions;
	struct vhost_memory_region region[8];
	unsigned int num[2], base[2];
	struct vhost_vring_addr addr[2];
	int kick[2], call[2], backend[2];
	unsigned int get_base; /* what GET_VRING_BASE answers */
	unsigned long fail_req; /* this request fails with EINVAL */
};

static int vhost_model_ioctl(void *arg, int fd, unsigned long req, void *data)
{
	struct vhost_model *m = arg;

	(void)fd;
	if (m->nr < MAX_REQS)
		m->req[m->nr++] = req;
	if (req == m->fail_req)
		return -EINVAL;
	switch (req) {
	case VHOST_GET_FEATURES: *(uint64_t *)data = m->offer; break;
	case VHOST_SET_FEATURES: m->features = *(uint64_t *)data; break;
	case VHOST_SET_MEM_TABLE: {
		const struct vhost_memory *t = data;

		m->nregions = t->nregions;
		memcpy(m->region, t->regions, t->nregions * sizeof(t->regions[0]));
		break;
	}
	case VHOST_SET_VRING_NUM: { const struct vhost_vring_state *s = data; m->num[s->index] = s->num; break; }
	case VHOST_SET_VRING_BASE: { const struct vhost_vring_state *s = data; m->base[s->index] = s->num; break; }
	case VHOST_GET_VRING_BASE: ((struct vhost_vring_state *)data)->num = m->get_base; break;
	case VHOST_SET_VRING_ADDR: { const struct vhost_vring_addr *a = data; m->addr[a->index] = *a; break; }
	case VHOST_SET_VRING_KICK: { const struct vhost_vring_file *f = data; m->kick[f->index] = f->fd; break; }
	case VHOST_SET_VRING_CALL: { const struct vhost_vring_file *f = data; m->call[f->index] = f->fd; break; }
	case VHOST_NET_SET_BACKEND: { const struct vhost_vring_file *f = data; m->backend[f->index] = f->fd; break; }
	}
	return 0;
}

static int model_find(const struct vhost_model *m, unsigned long req, int from)
{
	for (int i = from; i < m->nr; i++)
		if (m->req[i] == req)
			return i;
	return -1;
}

static int model_count(const struct vhost_model *m, unsigned long req)
{
	int n = 0;

	for (int i = 0; i < m->nr; i++)
		n += m->req[i] == req;
	return n;
}

/* A two-queue device like virtio-net, with no data path of its own. */
static void noop_notify(struct virtio_dev *vd, unsigned int q) { (void)vd; (void)q; }

static const struct virtio_ops two_q_ops = {
	.name = "two-q", .device_id = 1, .class_rev = 0x020000 << 8, .nr_queues = 2, .queue_size = 256,
	/* the ring features as virtio-net offers them; the fixture's driver declines them */
	.features = 1ULL << VIRTIO_RING_F_EVENT_IDX | 1ULL << VIRTIO_RING_F_INDIRECT_DESC |
		    1ULL << VIRTIO_NET_F_MRG_RXBUF,
	.queue_notify = noop_notify,
};

FIXTURE(vh) {
	struct fake_kvm fk;
	struct fake_driver f;
	struct virtio_dev vd;
	struct vhost_model m;
	struct vhost_net v;
	int tap; /* stands in for the tap's fd */
	char why[160];
};

FIXTURE_SETUP(vh)
{
	ASSERT_EQ(0, fake_vm_init(&vm, &self->fk, RAM, 96));
	ASSERT_EQ(0, pci_host_init(&host, &vm, &fd_layout));
	ASSERT_EQ(0, virtio_pci_init(&self->vd, &vm, &host, &two_q_ops, NULL));
	memset(&self->m, 0, sizeof(self->m));
	self->m.offer = 1ULL << VIRTIO_F_VERSION_1 | 1ULL << VIRTIO_RING_F_EVENT_IDX |
			1ULL << VIRTIO_NET_F_MRG_RXBUF | 1ULL << VHOST_NET_F_VIRTIO_NET_HDR;
	self->m.get_base = 17;
	self->fk.on_ioctl = vhost_model_ioctl;
	self->fk.on_ioctl_arg = &self->m;
	self->tap = eventfd(0, EFD_CLOEXEC);
	ASSERT_EQ(0, vhost_net_open(&self->v, &vm, "/dev/null", self->why, sizeof(self->why))) TH_LOG("%s", self->why);
	fd_probe(&self->f, &vm, &self->vd);
	fd_negotiate(&self->f, 0);
}

FIXTURE_TEARDOWN(vh)
{
	vhost_net_close(&self->v);
	close(self->tap);
	fake_vm_free(&vm);
}

static void driver_up(FIXTURE_DATA(vh) *self, unsigned int queues, bool msix)
{
	if (msix)
		fd_msix_enable(&self->f, 3);
	for (unsigned int q = 0; q < queues; q++)
		fd_queue_setup(&self->f, q, 64, q);
	fd_driver_ok(&self->f);
}

TEST_F(vh, open_takes_ownership_then_reads_features)
{
	EXPECT_EQ(2, self->m.nr);
	EXPECT_EQ(VHOST_SET_OWNER, self->m.req[0]);
	EXPECT_EQ(VHOST_GET_FEATURES, self->m.req[1]);
	EXPECT_EQ(self->m.offer, self->v.features);
}

TEST_F(vh, open_refuses_a_vhost_without_version_1)
{
	struct vhost_net w;

	self->m.offer = 1ULL << VIRTIO_NET_F_MRG_RXBUF;
	EXPECT_EQ(-EOPNOTSUPP, vhost_net_open(&w, &vm, "/dev/null", self->why, sizeof(self->why)));
	EXPECT_NE(NULL, strstr(self->why, "VIRTIO_F_VERSION_1")) TH_LOG("%s", self->why);
	EXPECT_EQ(-1, w.fd);
}

TEST_F(vh, open_names_a_missing_device_and_the_module)
{
	struct vhost_net w;

	EXPECT_EQ(-ENOENT, vhost_net_open(&w, &vm, "/nonexistent/vhost-net", self->why, sizeof(self->why)));
	EXPECT_NE(NULL, strstr(self->why, "/nonexistent/vhost-net")) TH_LOG("%s", self->why);
	EXPECT_NE(NULL, strstr(self->why, "modprobe vhost_net")) TH_LOG("%s", self->why);
}

TEST_F(vh, driver_ok_hands_over_in_order)
{
	driver_up(self, 2, true);
	self->m.nr = 0;
	ASSERT_EQ(0, vhost_net_start(&self->v, &self->vd, self->tap, self->why, sizeof(self->why))) TH_LOG("%s", self->why);
	EXPECT_TRUE(self->v.active);
	/* features: what the guest accepted (VERSION_1) and vhost offers, no more */
	EXPECT_EQ(VHOST_SET_FEATURES, self->m.req[0]);
	EXPECT_EQ(1ULL << VIRTIO_F_VERSION_1, self->m.features);
	EXPECT_EQ(VHOST_SET_MEM_TABLE, self->m.req[1]);
	ASSERT_EQ(1, self->m.nregions);
	EXPECT_EQ(FAKE_RAM_BASE, self->m.region[0].guest_phys_addr);
	EXPECT_EQ(RAM, self->m.region[0].memory_size);
	EXPECT_EQ((uintptr_t)vm.mem[0].hva, self->m.region[0].userspace_addr);
	static const unsigned long per_q[] = { VHOST_SET_VRING_NUM, VHOST_SET_VRING_BASE, VHOST_SET_VRING_ADDR,
					       VHOST_SET_VRING_KICK, VHOST_SET_VRING_CALL };

	for (unsigned int q = 0; q < 2; q++) {
		for (unsigned int i = 0; i < 5; i++) {
			unsigned long want = per_q[i];

			EXPECT_EQ(want, self->m.req[2 + 5 * q + i]);
		}
		EXPECT_EQ(64, self->m.num[q]);
		EXPECT_EQ(0, self->m.base[q]);
		EXPECT_EQ((uintptr_t)fd_hva(&self->f, self->f.q[q].desc, 16), self->m.addr[q].desc_user_addr);
		EXPECT_EQ((uintptr_t)fd_hva(&self->f, self->f.q[q].avail, 6), self->m.addr[q].avail_user_addr);
		EXPECT_EQ((uintptr_t)fd_hva(&self->f, self->f.q[q].used, 6), self->m.addr[q].used_user_addr);
		EXPECT_EQ(self->vd.q[q].notify_fd, self->m.kick[q]);
		/* the call is the vector's eventfd: msix.c's irqfd, masked or not */
		EXPECT_EQ(self->vd.msix.vec[q].route.fd, self->m.call[q]);
		EXPECT_EQ(self->tap, self->m.backend[q]);
	}
	/* the backends last, once everything else is in place */
	EXPECT_EQ(12, model_find(&self->m, VHOST_NET_SET_BACKEND, 0));
	EXPECT_EQ(14, self->m.nr);
	/* the kicks are vhost's now: the worker sees none (vhost_net_start kicked each ring once) */
	EXPECT_EQ(0, virtio_poll(&self->vd, 0));
	eventfd_write(self->vd.q[1].notify_fd, 1);
	EXPECT_EQ(0, virtio_poll(&self->vd, 0));
	EXPECT_EQ(0, atomic_load(&self->vd.stats.notifies));
}

TEST_F(vh, reset_takes_the_rings_back)
{
	driver_up(self, 2, true);
	ASSERT_EQ(0, vhost_net_start(&self->v, &self->vd, self->tap, self->why, sizeof(self->why)));
	self->m.nr = 0;
	vhost_net_stop(&self->v, &self->vd);
	EXPECT_FALSE(self->v.active);
	for (unsigned int q = 0; q < 2; q++) {
		EXPECT_EQ(-1, self->m.backend[q]);
		EXPECT_EQ(-1, self->m.kick[q]);
		EXPECT_EQ(-1, self->m.call[q]);
		EXPECT_EQ(17, self->vd.q[q].vq.last_avail);
	}
	/* per queue: the backend goes before vhost's position is read */
	int b = model_find(&self->m, VHOST_NET_SET_BACKEND, 0), g = model_find(&self->m, VHOST_GET_VRING_BASE, 0);

	EXPECT_LE(0, b);
	EXPECT_LT(b, g);
	EXPECT_EQ(2, model_count(&self->m, VHOST_GET_VRING_BASE));
	/* kicks reach the worker again, edge-triggered as virtio_watch_fd has them: the worker never
	 * reads the count, so a level-triggered watch would report the same kick forever (a spin) */
	EXPECT_LT(0, virtio_poll(&self->vd, 0));
	EXPECT_EQ(0, virtio_poll(&self->vd, 0));
	eventfd_write(self->vd.q[0].notify_fd, 1);
	EXPECT_EQ(1, virtio_poll(&self->vd, 0)) TH_LOG("a new kick is a new edge");
	EXPECT_EQ(0, virtio_poll(&self->vd, 0));
	self->m.nr = 0;
	vhost_net_stop(&self->v, &self->vd); /* twice (reset, then exit): nothing more */
	EXPECT_EQ(0, self->m.nr);
}

/* A vector moved while vhost runs: vhost's call follows it, to none as well. */
TEST_F(vh, call_follows_the_queues_vector)
{
	driver_up(self, 2, true);
	ASSERT_EQ(0, vhost_net_start(&self->v, &self->vd, self->tap, self->why, sizeof(self->why)));
	self->vd.q[1].vector = 2;
	EXPECT_EQ(0, vhost_net_set_call(&self->v, &self->vd, 1));
	EXPECT_EQ(self->vd.msix.vec[2].route.fd, self->m.call[1]);
	self->vd.q[1].vector = VIRTIO_MSI_NO_VECTOR;
	EXPECT_EQ(0, vhost_net_set_call(&self->v, &self->vd, 1));
	EXPECT_EQ(-1, self->m.call[1]);
	vhost_net_stop(&self->v, &self->vd);
	self->m.nr = 0;
	EXPECT_EQ(0, vhost_net_set_call(&self->v, &self->vd, 1)); /* not running: nothing asked */
	EXPECT_EQ(0, self->m.nr);
}

/* Every request vhost_net.c makes once the threads are sandboxed (start, a vector moved, stop,
 * a failed start undone) is one the vCPU's and main's seccomp filters allow, which let no other
 * vhost request through (sandbox_allowlist_test: vhost_ioctls_only_those_vmm_makes). */
TEST_F(vh, requests_after_open_are_the_sandboxs)
{
	driver_up(self, 2, true);
	self->m.nr = 0;
	ASSERT_EQ(0, vhost_net_start(&self->v, &self->vd, self->tap, self->why, sizeof(self->why)));
	self->vd.q[1].vector = 2;
	EXPECT_EQ(0, vhost_net_set_call(&self->v, &self->vd, 1));
	vhost_net_stop(&self->v, &self->vd);
	self->m.fail_req = VHOST_NET_SET_BACKEND;
	EXPECT_EQ(-EINVAL, vhost_net_start(&self->v, &self->vd, self->tap, self->why, sizeof(self->why)));
	ASSERT_LT(20, self->m.nr);
	for (int i = 0; i < self->m.nr; i++) {
		EXPECT_TRUE(sandbox_rules_vhost_request(self->m.req[i])) TH_LOG("request 0x%lx", self->m.req[i]);
	}
	EXPECT_FALSE(sandbox_rules_vhost_request(VHOST_SET_OWNER));
}

/* What vhost raises while the guest masks the queue's vector waits (the PBA shows it, no irqfd
 * fires into the masked vector) and is delivered on unmask: vhost's call is msix.c's eventfd. */
TEST_F(vh, a_masked_vector_holds_what_vhost_raises)
{
	uint32_t ctrl = PCI_MSIX_ENTRY_CTRL_MASKBIT, pba = 0;

	driver_up(self, 2, true);
	ASSERT_EQ(0, vhost_net_start(&self->v, &self->vd, self->tap, self->why, sizeof(self->why)));
	ASSERT_TRUE(self->vd.msix.vec[0].route.irqfd);
	msix_table_access(&self->vd.msix, 0 * PCI_MSIX_ENTRY_SIZE + PCI_MSIX_ENTRY_VECTOR_CTRL,
			  (uint8_t *)&ctrl, 4, true);
	EXPECT_FALSE(self->vd.msix.vec[0].route.irqfd) TH_LOG("a masked vector keeps its irqfd");
	int deassigned = fake_kvm_count(&self->fk, FK_IRQFD_DEASSIGN);

	eventfd_write(self->m.call[0], 1); /* vhost's used-buffer interrupt */
	msix_pba_access(&self->vd.msix, 0, (uint8_t *)&pba, 4, false);
	EXPECT_EQ(1, pba & 1) TH_LOG("the PBA must show what vhost raised while masked");
	ctrl = 0;
	int assigned = fake_kvm_count(&self->fk, FK_IRQFD_ASSIGN);

	msix_table_access(&self->vd.msix, 0 * PCI_MSIX_ENTRY_SIZE + PCI_MSIX_ENTRY_VECTOR_CTRL,
			  (uint8_t *)&ctrl, 4, true);
	EXPECT_TRUE(self->vd.msix.vec[0].route.irqfd);
	EXPECT_EQ(assigned + 1, fake_kvm_count(&self->fk, FK_IRQFD_ASSIGN)); /* KVM injects it on assign */
	EXPECT_EQ(deassigned, fake_kvm_count(&self->fk, FK_IRQFD_DEASSIGN));
	int a = fake_kvm_find(&self->fk, FK_IRQFD_ASSIGN, 0);

	while (fake_kvm_find(&self->fk, FK_IRQFD_ASSIGN, a + 1) >= 0)
		a = fake_kvm_find(&self->fk, FK_IRQFD_ASSIGN, a + 1);
	EXPECT_EQ(self->m.call[0], self->fk.call[a].fd) TH_LOG("the irqfd is not on vhost's call eventfd");
}

/* A session vhost cannot carry: refused with a reason naming what (word), no ioctl reaches vhost,
 * the userspace path keeps the rings. */
static void expect_refused(FIXTURE_DATA(vh) *self, struct __test_metadata *_metadata, const char *word)
{
	self->m.nr = 0;
	EXPECT_EQ(-EOPNOTSUPP, vhost_net_start(&self->v, &self->vd, self->tap, self->why, sizeof(self->why)));
	EXPECT_NE(NULL, strstr(self->why, word)) TH_LOG("%s", self->why);
	EXPECT_EQ(0, self->m.nr);
	EXPECT_FALSE(self->v.active);
}

TEST_F(vh, without_msix_the_userspace_path_serves)
{
	driver_up(self, 2, false);
	expect_refused(self, _metadata, "MSI-X");
}

TEST_F(vh, a_disabled_queue_leaves_vhost_untouched)
{
	driver_up(self, 1, true);
	expect_refused(self, _metadata, "queue 1");
}

TEST_F(vh, a_failed_backend_is_undone)
{
	driver_up(self, 2, true);
	self->m.fail_req = VHOST_NET_SET_BACKEND;
	EXPECT_EQ(-EINVAL, vhost_net_start(&self->v, &self->vd, self->tap, self->why, sizeof(self->why)));
	EXPECT_NE(NULL, strstr(self->why, "VHOST_NET_SET_BACKEND")) TH_LOG("%s", self->why);
	EXPECT_FALSE(self->v.active);
	EXPECT_EQ(2, model_count(&self->m, VHOST_GET_VRING_BASE));
	/* the worker has its kicks back */
	eventfd_write(self->vd.q[0].notify_fd, 1);
	EXPECT_LT(0, virtio_poll(&self->vd, 0));
}

/* A driver that accepted EVENT_IDX: vhost gets it, and keeps avail_event and used_event. */
TEST_F(vh, event_idx_goes_to_a_vhost_that_offers_it)
{
	fd_negotiate(&self->f, 1ULL << VIRTIO_RING_F_EVENT_IDX);
	driver_up(self, 2, true);
	ASSERT_EQ(0, vhost_net_start(&self->v, &self->vd, self->tap, self->why, sizeof(self->why))) TH_LOG("%s", self->why);
	EXPECT_EQ(1ULL << VIRTIO_F_VERSION_1 | 1ULL << VIRTIO_RING_F_EVENT_IDX, self->m.features);
}

/* A vhost without EVENT_IDX would never move avail_event, and such a driver would never kick it
 * again: that session stays on the userspace path (which keeps it), nothing handed over. */
TEST_F(vh, event_idx_without_vhost_support_stays_in_userspace)
{
	vhost_net_close(&self->v);
	self->m.offer &= ~(1ULL << VIRTIO_RING_F_EVENT_IDX);
	ASSERT_EQ(0, vhost_net_open(&self->v, &vm, "/dev/null", self->why, sizeof(self->why))) TH_LOG("%s", self->why);
	fd_negotiate(&self->f, 1ULL << VIRTIO_RING_F_EVENT_IDX);
	driver_up(self, 2, true);
	expect_refused(self, _metadata, "EVENT_IDX");
}

/* Indirect tables and mergeable buffers change what the rings hold: a vhost that lacks either
 * is not given the rings (the userspace path does both); one that has both gets both. */
TEST_F(vh, indirect_and_mergeable_go_to_vhost_only_where_offered)
{
	const uint64_t both = 1ULL << VIRTIO_RING_F_INDIRECT_DESC | 1ULL << VIRTIO_NET_F_MRG_RXBUF;

	vhost_net_close(&self->v); /* this vhost has MRG_RXBUF and not INDIRECT_DESC */
	ASSERT_EQ(0, vhost_net_open(&self->v, &vm, "/dev/null", self->why, sizeof(self->why))) TH_LOG("%s", self->why);
	fd_negotiate(&self->f, both);
	driver_up(self, 2, true);
	expect_refused(self, _metadata, "VIRTIO_RING_F_INDIRECT_DESC");

	vhost_net_close(&self->v);
	self->m.offer |= 1ULL << VIRTIO_RING_F_INDIRECT_DESC;
	ASSERT_EQ(0, vhost_net_open(&self->v, &vm, "/dev/null", self->why, sizeof(self->why))) TH_LOG("%s", self->why);
	fd_negotiate(&self->f, both);
	driver_up(self, 2, true);
	ASSERT_EQ(0, vhost_net_start(&self->v, &self->vd, self->tap, self->why, sizeof(self->why))) TH_LOG("%s", self->why);
	EXPECT_EQ(1ULL << VIRTIO_F_VERSION_1 | both, self->m.features);
}

/* A ring outside RAM never reaches vhost: the transport refuses it (needs reset), and a start
 * afterwards finds a queue that is not enabled. */
TEST_F(vh, a_ring_outside_ram_never_reaches_vhost)
{
	fd_msix_enable(&self->f, 3);
	fd_queue_setup(&self->f, 0, 64, 0);
	fd_common_wr(&self->f, offsetof(struct virtio_pci_common_cfg, queue_select), 1, 2);
	fd_common_wr(&self->f, offsetof(struct virtio_pci_common_cfg, queue_size), 64, 2);
	fd_common_wr(&self->f, offsetof(struct virtio_pci_common_cfg, queue_desc_lo),
		     (uint32_t)(FAKE_RAM_BASE + RAM - 512), 4); /* 1 KiB of descriptors: past the end */
	fd_common_wr(&self->f, offsetof(struct virtio_pci_common_cfg, queue_desc_hi), (FAKE_RAM_BASE + RAM) >> 32, 4);
	fd_common_wr(&self->f, offsetof(struct virtio_pci_common_cfg, queue_enable), 1, 2);
	EXPECT_TRUE(fd_status(&self->f) & VIRTIO_CONFIG_S_NEEDS_RESET);
	fd_driver_ok(&self->f);
	self->m.nr = 0;
	EXPECT_GT(0, vhost_net_start(&self->v, &self->vd, self->tap, self->why, sizeof(self->why)));
	EXPECT_EQ(-1, model_find(&self->m, VHOST_SET_VRING_ADDR, 0));
	EXPECT_EQ(-1, model_find(&self->m, VHOST_NET_SET_BACKEND, 0));
}

/* Ring addresses rewritten after the queue was enabled (the registers stay writable) are checked
 * again where they leave vmm: refused before any request reaches vhost. */
TEST_F(vh, a_ring_moved_out_of_ram_after_enable_is_refused)
{
	driver_up(self, 2, true);
	fd_common_wr(&self->f, offsetof(struct virtio_pci_common_cfg, queue_select), 1, 2);
	fd_common_wr(&self->f, offsetof(struct virtio_pci_common_cfg, queue_used_lo),
		     (uint32_t)(FAKE_RAM_BASE + RAM - 8), 4);
	self->m.nr = 0;
	EXPECT_EQ(-EFAULT, vhost_net_start(&self->v, &self->vd, self->tap, self->why, sizeof(self->why)));
	EXPECT_NE(NULL, strstr(self->why, "queue 1")) TH_LOG("%s", self->why);
	EXPECT_EQ(0, self->m.nr);
	EXPECT_FALSE(self->v.active);
}

TEST(ring_checks)
{
	struct fake_kvm fk;
	const uint64_t b = FAKE_RAM_BASE, end = FAKE_RAM_BASE + RAM;

	ASSERT_EQ(0, fake_vm_init(&vm, &fk, RAM, 96));
	EXPECT_TRUE(vhost_net_ring_ok(&vm, 256, 256, b, b + 4096, b + 8192));
	/* whole sizes inside RAM: the last byte of each part counts */
	EXPECT_TRUE(vhost_net_ring_ok(&vm, 256, 256, end - 16 * 256, b, b + 8192));
	EXPECT_FALSE(vhost_net_ring_ok(&vm, 256, 256, end - 16 * 256 + 16, b, b + 8192));
	EXPECT_TRUE(vhost_net_ring_ok(&vm, 256, 256, b, end - (6 + 2 * 256), b + 8192));
	EXPECT_FALSE(vhost_net_ring_ok(&vm, 256, 256, b, end - (6 + 2 * 256) + 2, b + 8192));
	EXPECT_TRUE(vhost_net_ring_ok(&vm, 256, 256, b, b + 4096, end - (6 + 8 * 256) - 2));
	EXPECT_FALSE(vhost_net_ring_ok(&vm, 256, 256, b, b + 4096, end - (6 + 8 * 256) + 4));
	EXPECT_FALSE(vhost_net_ring_ok(&vm, 256, 256, b - 4096, b + 4096, b + 8192)); /* below RAM */
	EXPECT_FALSE(vhost_net_ring_ok(&vm, 256, 256, UINT64_MAX - 15, b + 4096, b + 8192)); /* wraps */
	/* sizes: a power of two, not zero, within the device's limit */
	EXPECT_FALSE(vhost_net_ring_ok(&vm, 0, 256, b, b + 4096, b + 8192));
	EXPECT_FALSE(vhost_net_ring_ok(&vm, 96, 256, b, b + 4096, b + 8192));
	EXPECT_FALSE(vhost_net_ring_ok(&vm, 512, 256, b, b + 8192, b + 16384));
	/* alignment (virtio 1.x 2.7): desc 16, avail 2, used 4 */
	EXPECT_FALSE(vhost_net_ring_ok(&vm, 256, 256, b + 8, b + 4096, b + 8192));
	EXPECT_FALSE(vhost_net_ring_ok(&vm, 256, 256, b, b + 4097, b + 8192));
	EXPECT_FALSE(vhost_net_ring_ok(&vm, 256, 256, b, b + 4096, b + 8194));
	fake_vm_free(&vm);
}

/* virtio-net itself with vhost (the model): DRIVER_OK hands the tap over, the worker moves no
 * frame, a reset takes it back; vhost=off never asks vhost anything. Root: a tap in a namespace. */
TEST(net_device_hands_its_tap_to_vhost)
{
	struct fake_kvm fk;
	struct fake_driver f;
	struct vhost_model m = { .offer = 1ULL << VIRTIO_F_VERSION_1 };
	struct virtio_net_opts o = { .tap = "vmmvh0", .mac = { 2, 0, 0, 0, 0, 1 }, .vhost_dev = "/dev/null" };

	if (unshare(CLONE_NEWNET) < 0)
		SKIP(return, "needs root for a network namespace and a tap");
	ASSERT_EQ(0, fake_vm_init(&vm, &fk, RAM, 96));
	ASSERT_EQ(0, pci_host_init(&host, &vm, &fd_layout));
	fk.on_ioctl = vhost_model_ioctl;
	fk.on_ioctl_arg = &m;
	struct virtio_dev *vd = virtio_net_create(&vm, &host, &o);

	ASSERT_NE(NULL, vd);
	fd_probe(&f, &vm, vd);
	fd_negotiate(&f, 1ULL << VIRTIO_NET_F_GUEST_CSUM);
	fd_msix_enable(&f, 3);
	fd_queue_setup(&f, 0, 64, 0);
	fd_queue_setup(&f, 1, 64, 1);
	m.nr = 0;
	fd_driver_ok(&f);
	EXPECT_EQ(VIRTIO_CONFIG_S_DRIVER_OK, fd_status(&f) & (VIRTIO_CONFIG_S_DRIVER_OK | VIRTIO_CONFIG_S_NEEDS_RESET));
	EXPECT_EQ(2, model_count(&m, VHOST_NET_SET_BACKEND));
	EXPECT_LE(0, m.backend[0]);
	EXPECT_EQ(m.backend[0], m.backend[1]);
	EXPECT_EQ(1ULL << VIRTIO_F_VERSION_1, m.features); /* GUEST_CSUM is the tap's, not vhost's */
	/* the driver moves the RX queue to vector 2: vhost's call follows, through the transport */
	fd_common_wr(&f, offsetof(struct virtio_pci_common_cfg, queue_select), 0, 2);
	fd_common_wr(&f, offsetof(struct virtio_pci_common_cfg, queue_msix_vector), 2, 2);
	EXPECT_EQ(vd->msix.vec[2].route.fd, m.call[0]);
	/* a TX kick: vhost's, not the worker's */
	struct fd_seg s = { fd_alloc(&f, 128), 128, false };

	fd_add(&f, 1, &s, 1);
	fd_kick(&f, 1);
	fd_run(&f, 20);
	uint32_t id, len;

	EXPECT_EQ(0, fd_used(&f, 1, &id, &len)) TH_LOG("vmm's worker took a frame vhost owns");
	/* reset: backend -1, the position read back */
	m.nr = 0;
	fd_common_wr(&f, offsetof(struct virtio_pci_common_cfg, device_status), 0, 1);
	EXPECT_EQ(-1, m.backend[0]);
	EXPECT_EQ(-1, m.backend[1]);
	EXPECT_EQ(2, model_count(&m, VHOST_GET_VRING_BASE));
	char sum[1024] = "";
	FILE *mf = fmemopen(sum, sizeof(sum), "w");

	virtio_summary(vd, mf);
	fclose(mf);
	EXPECT_NE(NULL, strstr(sum, "0 frames received, 0 sent")) TH_LOG("%s", sum);
	EXPECT_NE(NULL, strstr(sum, "vhost-net on: it carried 1 driver session")) TH_LOG("%s", sum);
	virtio_stop(vd);
	EXPECT_EQ(-1, m.backend[0]);

	/* vhost=off: not one vhost request */
	struct virtio_net_opts off = o;

	off.tap = "vmmvh1";
	off.vhost = NET_VHOST_OFF;
	m.nr = 0;
	vd = virtio_net_create(&vm, &host, &off);
	ASSERT_NE(NULL, vd);
	fd_probe(&f, &vm, vd);
	fd_negotiate(&f, 0);
	fd_msix_enable(&f, 3);
	fd_queue_setup(&f, 0, 64, 0);
	fd_queue_setup(&f, 1, 64, 1);
	fd_driver_ok(&f);
	EXPECT_EQ(0, m.nr);
	virtio_stop(vd);
	fake_vm_free(&vm);
}

TEST_HARNESS_MAIN
