// SPDX-License-Identifier: MIT
/* virtio-blk driven as a guest on a 64 KiB image: request headers, data and status segments of
 * any shape, reads, writes, flushes and IDs past the end, resets with I/O in flight. The image is
 * on tmpfs (buffered: libaio completes inside io_submit, so each input runs the same way). One
 * device serves every input (fz_guest_reboot): destroying its libaio context waits for an RCU
 * grace period, tens of ms, which would leave the fuzzer a few runs a second. Two request queues
 * (VIRTIO_BLK_F_MQ), so kicks and rings on either, or on none, and VIRTIO_RING_F_EVENT_IDX with
 * any used_event the input writes, are covered. */
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

#include "tests/fuzz/fuzz.h"
#include "virtio/virtio.h"

#define IMG_SIZE (64 << 10)

static struct vm vm;
static struct fake_kvm fk;
static struct pci_host host;
static struct fz_guest g;
static char path[64];
static int img = -1;

static void cleanup(void)
{
	unlink(path);
}

static void setup(void)
{
	snprintf(path, sizeof(path), "%s/vmm-blk-fuzz-XXXXXX", access("/dev/shm", W_OK) ? "/tmp" : "/dev/shm");
	img = mkstemp(path);
	if (img < 0 || ftruncate(img, IMG_SIZE) < 0)
		abort();
	atexit(cleanup);
	fz_vm_init(&g, &vm, &fk, &host);
	g.vd = virtio_blk_create(&vm, &host, path, false, 2); /* MQ: the guest picks any queue */
	if (!g.vd)
		abort();
	g.dev = &g.vd->pci;
	fz_guest_keep(&g);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct fz z = { data, size };

	if (!g.vd)
		setup();
	fz_guest_run(&g, &z);
	/* here, not at the next input's start: a reset that fails is this input's fault */
	fz_guest_reboot(&g);
	if (ftruncate(img, 0) < 0 || ftruncate(img, IMG_SIZE) < 0)
		abort();
	return 0;
}
