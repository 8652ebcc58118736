// SPDX-License-Identifier: MIT
/* A passed-through device's config space and BARs: the input's first 256 bytes are the device's
 * own config space as VFIO shows it (capability lists of any shape, loops included); then its
 * layout: optionally an MSI-X capability put first in the list with the input's table size (up to
 * 2048 entries) and table and PBA BIR/offset, and per BAR its region as the fake VFIO reports it
 * (size, MMAP, MSIX_MAPPABLE, sparse-mmap areas); the rest a guest program of config accesses and
 * BAR and raw accesses against the virtualized view, carried out as KVM would (memslots over the
 * mapped parts, exits for the trapped ones). The "device" is a memfd (tests/unit/vfio_bar_test.c
 * does the same), so what reaches it can be checked: only the command register's MEMORY, MASTER and
 * INTX_DISABLE bits may change in its config space, and none of its MSI-X table and PBA bytes. */
#include <linux/pci_regs.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "tests/fuzz/fuzz.h"
#include "tests/unit/fake_vfio.h"
#include "vfio/vfio.h"
#include "vfio/vfio_internal.h"

#define HOST_CFG 256
#define FORWARDED (PCI_COMMAND_MEMORY | PCI_COMMAND_MASTER | PCI_COMMAND_INTX_DISABLE)
#define REGION0 0x100000ULL /* BAR i's region at (i + 1) MiB of the memfd, at most 1 MiB */
#define MEMFD_SIZE (7 * REGION0)
#define FILL 0xa5
#define MSIX_AT 0xf0 /* where the input's MSI-X capability goes */

static struct vm vm;
static struct fake_kvm fk;
static struct pci_host host;
static struct vfio_container c;
static struct vfio_pci v;
static struct fake_vfio fv;
static struct vfio_sys sys;
static uint8_t fill[REGION0];

static void put(uint8_t *cfg, uint32_t off, uint32_t x, int len)
{
	memcpy(cfg + off, &x, len);
}

/* The layout block: an MSI-X capability of the input's, then each BAR's region. */
static void layout(struct fz *z, uint8_t *cfg)
{
	uint8_t flags = fz_u8(z);
	uint16_t qsize = fz_u16(z) & PCI_MSIX_FLAGS_QSIZE;
	uint32_t table = fz_u32(z), pba = fz_u32(z);

	if (flags & 1) {
		put(cfg, MSIX_AT, PCI_CAP_ID_MSIX | cfg[PCI_CAPABILITY_LIST] << 8, 2);
		put(cfg, MSIX_AT + PCI_MSIX_FLAGS, qsize, 2);
		put(cfg, MSIX_AT + PCI_MSIX_TABLE, table, 4);
		put(cfg, MSIX_AT + PCI_MSIX_PBA, pba, 4);
		cfg[PCI_CAPABILITY_LIST] = MSIX_AT;
		cfg[PCI_STATUS] |= PCI_STATUS_CAP_LIST;
	}
	for (int i = 0; i < PCI_STD_NUM_BARS; i++) {
		uint8_t b = fz_u8(z);
		struct fake_vfio_region *r = &fv.region[VFIO_PCI_BAR0_REGION_INDEX + i];

		if ((b & 15) > 8)
			continue; /* no region */
		*r = (struct fake_vfio_region){ .size = 4096ULL << (b & 15), .offset = REGION0 * (i + 1),
			.flags = VFIO_REGION_INFO_FLAG_READ | VFIO_REGION_INFO_FLAG_WRITE |
				 (b & 16 ? VFIO_REGION_INFO_FLAG_MMAP : 0),
			.msix_mappable = b & 32, .sparse = b & 64 };
		if (r->sparse) {
			r->nr_areas = fz_u8(z) % (FAKE_VFIO_MAX_AREAS + 1);
			for (uint32_t k = 0; k < r->nr_areas; k++) /* in pages, any order, overlaps and all */
				r->area[k] = (struct vfio_region_sparse_mmap_area){ 4096ULL * fz_u8(z),
										    4096ULL * fz_u8(z) };
		}
	}
}

/* The device's MSI-X table and PBA bytes inside their BARs' regions are all still FILL. */
static bool msix_untouched(void)
{
	static uint8_t buf[REGION0];
	struct { int bar; uint64_t off, len; } part[2] = {
		{ v.msix_bar, v.msix_table_off, (uint64_t)v.msix_host_nr * PCI_MSIX_ENTRY_SIZE },
		{ v.msix_pba_bar, v.msix_pba_off, ((uint64_t)v.msix_host_nr + 63) / 64 * 8 },
	};

	for (int k = 0; k < 2 && v.msix_nr; k++) {
		uint64_t size = fv.region[part[k].bar].size, off = part[k].off, len = part[k].len;

		if (off >= size)
			continue;
		if (len > size - off)
			len = size - off;
		if (pread(v.fd, buf, len, REGION0 * (part[k].bar + 1) + off) != (ssize_t)len)
			abort();
		for (uint64_t i = 0; i < len; i++)
			if (buf[i] != FILL)
				return false;
	}
	return true;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct fz_guest g;
	struct fz z = { data, size };
	uint8_t cfg[4096] = { 0 }, after[4096];
	size_t n;
	const uint8_t *p = fz_bytes(&z, HOST_CFG, &n);

	memcpy(cfg, p, n);
	fz_vm_init(&g, &vm, &fk, &host);
	fake_vfio_init(&fv);
	sys = fake_vfio_sys(&fv);
	layout(&z, cfg);
	memset(&c, 0, sizeof(c));
	c.vm = &vm;
	c.fd = c.kvm_dev = -1;
	c.sys = &sys;
	memset(&v, 0, sizeof(v));
	v.c = &c;
	v.intx_fd = v.intx_resample = -1;
	for (unsigned int i = 0; i < VFIO_MAX_MSI; i++)
		v.msi_vec[i].fd = -1;
	strcpy(v.bdf, "0000:00:13.0");
	v.fd = memfd_create("vfio-device", MFD_CLOEXEC);
	if (v.fd < 0 || ftruncate(v.fd, MEMFD_SIZE) || pwrite(v.fd, cfg, sizeof(cfg), 0) != sizeof(cfg))
		abort();
	memset(fill, FILL, sizeof(fill));
	for (int i = 0; i < PCI_STD_NUM_BARS; i++)
		if (fv.region[i].size && pwrite(v.fd, fill, fv.region[i].size, REGION0 * (i + 1)) !=
						 (ssize_t)fv.region[i].size)
			abort();
	v.cfg_region = (struct vfio_region_info){ .size = sizeof(cfg), .offset = 0 };
	memcpy(v.host_cfg, cfg, sizeof(cfg));
	v.host_cfg_size = sizeof(cfg);
	/* as vfio_pci_create() does */
	if (vfio_config_setup(&v, &host, 5) == 0 && vfio_bars_setup(&v) == 0 && vfio_irqs_setup(&v) == 0) {
		if (pread(v.fd, cfg, sizeof(cfg), 0) != sizeof(cfg))
			abort();
		g.dev = &v.pci;
		g.ops = 1u << FZ_CFG_RD | 1u << FZ_CFG_WR | 1u << FZ_BAR_RD | 1u << FZ_BAR_WR |
			1u << FZ_RAW_RD | 1u << FZ_RAW_WR;
		g.kvm_access = true;
		fz_guest_run(&g, &z);
		if (pread(v.fd, after, sizeof(after), 0) != sizeof(after))
			abort();
		/* the device saw the command register's forwarded bits change, nothing else */
		after[PCI_COMMAND] = (after[PCI_COMMAND] & ~FORWARDED) | (cfg[PCI_COMMAND] & FORWARDED);
		after[PCI_COMMAND + 1] = (after[PCI_COMMAND + 1] & ~(FORWARDED >> 8)) |
					 (cfg[PCI_COMMAND + 1] & (FORWARDED >> 8));
		if (memcmp(cfg, after, sizeof(cfg)))
			abort();
		/* a guest write never reaches the device's MSI-X table or PBA, mapped or trapped */
		if (!msix_untouched())
			abort();
		vfio_irqs_teardown(&v); /* as vfio_pci_destroy(), whatever state the guest left */
	}
	for (int i = 0; i < PCI_STD_NUM_BARS; i++)
		if (v.bar_map[i])
			munmap(v.bar_map[i], v.bar_region[i].size);
	for (unsigned int i = 0; i < v.msix.nr; i++)
		close(v.msix.vec[i].route.fd);
	close(v.fd);
	return 0;
}
