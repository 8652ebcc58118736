// SPDX-License-Identifier: MIT
/* MSI-X of an emulated device (the model VFIO shares): the input's first byte sets its vector count
 * (1 to MSIX_MAX_VECTORS: a table of up to 1 KiB, the PBA's word full), then table entries and the
 * PBA written and read at any offset and size, the capability's enable and function-mask bits,
 * vectors raised by the device (FZ_INPUT: each byte raises vector byte % (nr + 1), one past the
 * end too) while masked, unmasked, re-addressed, and KVM refusing a route (FZ_INPUT's first byte
 * arms the fake to fail the next commit). The emulated layout is fixed (table at 0 of a 4 KiB BAR,
 * PBA at 0x800); tables of any size and offset, over several pages, are vfio_config_fuzz's. */
#include <linux/pci_regs.h>
#include <string.h>
#include <unistd.h>

#include "tests/fuzz/fuzz.h"
#include "core/msix.h"

static struct vm vm;
static struct fake_kvm fk;
static struct pci_host host;
static struct pci_dev dev;
static struct msix m;

static void raise_vectors(struct fz_guest *g, const uint8_t *buf, size_t len)
{
	if (len && (buf[0] & 0x80)) {
		g->fk->fail_op = FK_SET_GSI_ROUTING;
		g->fk->fail_nth = 1;
	}
	for (size_t i = 0; i < len; i++)
		msix_notify(&m, buf[i] % (m.nr + 1)); /* one past the end too */
}

static void cfg_written(struct pci_dev *d, uint32_t off, uint32_t len)
{
	(void)d;
	msix_cfg_written(&m, off, len);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct fz_guest g;
	struct fz z = { data, size };

	unsigned int nr = 1 + fz_u8(&z) % MSIX_MAX_VECTORS;

	fz_vm_init(&g, &vm, &fk, &host);
	memset(&dev, 0, sizeof(dev));
	if (pci_dev_add(&host, &dev, 0x1af4, 0x10f0, 0xff000001, 0x1af4, 0) < 0 ||
	    msix_init(&m, &vm, &dev, nr, 2) < 0)
		__builtin_trap();
	dev.cfg_written = cfg_written;
	g.dev = &dev;
	g.input = raise_vectors;
	g.ops = 1u << FZ_CFG_RD | 1u << FZ_CFG_WR | 1u << FZ_BAR_RD | 1u << FZ_BAR_WR | 1u << FZ_INPUT;
	fz_guest_run(&g, &z);
	for (unsigned int i = 0; i < m.nr; i++)
		close(m.vec[i].route.fd);
	return 0;
}
