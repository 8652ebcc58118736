// SPDX-License-Identifier: MIT
/* PCI config-space writes through ECAM on an emulated device (virtio-console's: six BARs' worth
 * of registers, capabilities, the virtio config window): BAR sizing and moves under traffic,
 * command register decode on and off, writes to read-only and reserved bytes, accesses to
 * empty slots and anywhere on the bus. Only config, BAR and raw bus accesses. */
#include "tests/fuzz/fuzz.h"
#include "virtio/virtio.h"
#include "platform/console.h"

static struct vm vm;
static struct fake_kvm fk;
static struct pci_host host;
static struct console_out out;

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
	g.ops = 1u << FZ_CFG_RD | 1u << FZ_CFG_WR | 1u << FZ_BAR_RD | 1u << FZ_BAR_WR | 1u << FZ_RAW_RD |
		1u << FZ_RAW_WR;
	fz_guest_run(&g, &z);
	/* whatever the guest did, the bus still holds the ECAM window and the device's BARs apart */
	struct bus_dev bd;

	if (!bus_find(&vm.mmio, FD_ECAM, 4, &bd) || bd.base != FD_ECAM)
		__builtin_trap();
	virtio_stop(vd);
	fz_virtio_free(vd);
	console_out_destroy(&out);
	return 0;
}
