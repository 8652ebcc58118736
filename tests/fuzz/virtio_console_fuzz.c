// SPDX-License-Identifier: MIT
/* virtio-console driven as a guest: the transport's common configuration and status transitions,
 * queue set-up, MSI-X, the PCI config window, transmit chains and keyboard input into the guest's
 * receive buffers (FZ_INPUT), with resets and BAR moves anywhere in between. */
#include "tests/fuzz/fuzz.h"
#include "virtio/virtio.h"
#include "vmm/console.h"

static struct vm vm;
static struct fake_kvm fk;
static struct pci_host host;
static struct console_out out;

static void input(struct fz_guest *g, const uint8_t *buf, size_t len)
{
	virtio_console_push(g->vd->priv, buf, len);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct fz_guest g;
	struct fz z = { data, size };

	fz_vm_init(&g, &vm, &fk, &host);
	if (console_out_init(&out, -1, NULL, NULL) < 0)
		__builtin_trap();
	struct virtio_dev *vd = virtio_console_create(&vm, &host, &out);

	if (!vd)
		__builtin_trap();
	g.dev = &vd->pci;
	g.vd = vd;
	g.input = input;
	fz_guest_run(&g, &z);
	virtio_stop(vd);
	fz_virtio_free(vd);
	console_out_destroy(&out);
	return 0;
}
