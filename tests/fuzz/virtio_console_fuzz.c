// SPDX-License-Identifier: MIT
/* virtio-console driven as a guest: the transport's common configuration and status transitions,
 * queue set-up, MSI-X, the PCI config window, transmit chains and keyboard input into the guest's
 * receive buffers (FZ_INPUT), with resets and BAR moves anywhere in between. The device is the
 * board's multiport one (the console and the probe's port), so the control queues' messages reach
 * its state machine and the probe port's bytes vmm's probe receiver (its frame decoder). */
#include "tests/fuzz/fuzz.h"
#include "virtio/virtio.h"
#include "platform/console.h"
#include "vmm/probe_rx.h"

static struct vm vm;
static struct fake_kvm fk;
static struct pci_host host;
static struct console_out out;
static struct probe_rx rx;

static void to_console(void *opaque, const uint8_t *buf, size_t len)
{
	console_out_write(opaque, buf, len);
}

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
	if (probe_rx_init(&rx, NULL) < 0)
		__builtin_trap();
	out.on_text = probe_rx_console;
	out.text_opaque = &rx;
	const struct virtio_console_port ports[] = {
		{ .console = true, .write = to_console, .opaque = &out },
		{ .name = "org.vmm.probe", .write = probe_rx_port, .opaque = &rx },
	};
	struct virtio_dev *vd = virtio_console_create_ports(&vm, &host, ports, 2, true);

	if (!vd)
		__builtin_trap();
	g.dev = &vd->pci;
	g.vd = vd;
	g.input = input;
	fz_guest_run(&g, &z);
	virtio_stop(vd);
	fz_virtio_free(vd);
	probe_rx_destroy(&rx);
	console_out_destroy(&out);
	return 0;
}
