// SPDX-License-Identifier: MIT
/* A passed-through device's config space: the input's first 256 bytes are the device's own config
 * space as VFIO shows it (capability lists of any shape, loops included), the rest a guest program
 * of config accesses and raw bus accesses against the virtualized view. The "device" is a memfd
 * (tests/unit/vfio_config_test.c does the same), so what reaches it can be checked: only the
 * command register's MEMORY, MASTER and INTX_DISABLE bits may change. */
#include <linux/pci_regs.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "tests/fuzz/fuzz.h"
#include "vfio/vfio.h"
#include "vfio/vfio_internal.h"

#define HOST_CFG 256
#define FORWARDED (PCI_COMMAND_MEMORY | PCI_COMMAND_MASTER | PCI_COMMAND_INTX_DISABLE)

static struct vm vm;
static struct fake_kvm fk;
static struct pci_host host;
static struct vfio_container c;
static struct vfio_pci v;

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct fz_guest g;
	struct fz z = { data, size };
	uint8_t cfg[4096] = { 0 }, after[4096];
	size_t n;
	const uint8_t *p = fz_bytes(&z, HOST_CFG, &n);

	memcpy(cfg, p, n);
	fz_vm_init(&g, &vm, &fk, &host);
	memset(&c, 0, sizeof(c));
	c.vm = &vm;
	c.fd = c.kvm_dev = -1;
	memset(&v, 0, sizeof(v));
	v.c = &c;
	v.intx_fd = v.intx_resample = -1;
	for (unsigned int i = 0; i < VFIO_MAX_MSI; i++)
		v.msi_fd[i] = -1;
	strcpy(v.bdf, "0000:00:13.0");
	v.fd = memfd_create("vfio-config", MFD_CLOEXEC);
	if (v.fd < 0 || pwrite(v.fd, cfg, sizeof(cfg), 0) != sizeof(cfg))
		abort();
	v.cfg_region = (struct vfio_region_info){ .size = sizeof(cfg), .offset = 0 };
	memcpy(v.host_cfg, cfg, sizeof(cfg));
	v.host_cfg_size = sizeof(cfg);
	/* as vfio_pci_create() does (BARs aside: the memfd has no regions to map) */
	if (vfio_config_setup(&v, &host, 5) == 0 && vfio_irqs_setup(&v) == 0) {
		if (pread(v.fd, cfg, sizeof(cfg), 0) != sizeof(cfg))
			abort();
		g.dev = &v.pci;
		g.ops = 1u << FZ_CFG_RD | 1u << FZ_CFG_WR | 1u << FZ_RAW_RD | 1u << FZ_RAW_WR;
		fz_guest_run(&g, &z);
		if (pread(v.fd, after, sizeof(after), 0) != sizeof(after))
			abort();
		/* the device saw the command register's forwarded bits change, nothing else */
		after[PCI_COMMAND] = (after[PCI_COMMAND] & ~FORWARDED) | (cfg[PCI_COMMAND] & FORWARDED);
		after[PCI_COMMAND + 1] = (after[PCI_COMMAND + 1] & ~(FORWARDED >> 8)) |
					 (cfg[PCI_COMMAND + 1] & (FORWARDED >> 8));
		if (memcmp(cfg, after, sizeof(cfg)))
			abort();
		vfio_irqs_teardown(&v); /* as vfio_pci_destroy(), whatever state the guest left */
	}
	for (unsigned int i = 0; i < v.msix.nr; i++)
		close(v.msix.vec[i].fd);
	close(v.fd);
	return 0;
}
