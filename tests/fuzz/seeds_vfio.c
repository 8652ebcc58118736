// SPDX-License-Identifier: MIT
/* Seeds of the vfio_config target. */
#include <linux/pci_regs.h>

#include "tests/fuzz/seeds.h"

/* The igb VF of tests/unit/vfio_config_test.c: MSI-X, MSI, PCIe, PM and AER. */
void seeds_vfio(void)
{
	struct out o = { .ops = 1u << FZ_CFG_RD | 1u << FZ_CFG_WR | 1u << FZ_BAR_RD | 1u << FZ_BAR_WR |
				1u << FZ_RAW_RD | 1u << FZ_RAW_WR };
	uint8_t c[256] = { 0 };
	/* the layout block (vfio_config_fuzz.c): no MSI-X of the input's; BARs 0 and 3, 16 KiB, mapped */
	const uint8_t igb_layout[] = { 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 2 | 16, 0xf, 0xf, 2 | 16, 0xf, 0xf };
#define P(off, v, len) do { uint32_t x_ = (v); memcpy(c + (off), &x_, (len)); } while (0)
	P(PCI_VENDOR_ID, 0x8086, 2);
	P(PCI_DEVICE_ID, 0x10ca, 2);
	P(PCI_CLASS_REVISION, 0x02000001, 4);
	P(PCI_STATUS, PCI_STATUS_CAP_LIST, 2);
	P(PCI_BASE_ADDRESS_0, PCI_BASE_ADDRESS_MEM_TYPE_64, 4);
	P(PCI_BASE_ADDRESS_3, PCI_BASE_ADDRESS_MEM_TYPE_64, 4);
	P(PCI_ROM_ADDRESS, 0xfff00001, 4);
	P(PCI_INTERRUPT_PIN, 1, 1);
	P(PCI_CAPABILITY_LIST, 0x40, 1);
	P(0x40, PCI_CAP_ID_PM | 0x50 << 8, 2);
	P(0x50, PCI_CAP_ID_MSI | 0x70 << 8, 2);
	P(0x52, PCI_MSI_FLAGS_64BIT | PCI_MSI_FLAGS_MASKBIT | (2 << 1), 2);
	P(0x70, PCI_CAP_ID_MSIX | 0xa0 << 8, 2);
	P(0x72, 2, 2);
	P(0x74, 3, 4);
	P(0x78, 0x2000 | 3, 4);
	P(0xa0, PCI_CAP_ID_EXP, 2);
	P(0xa2, PCI_EXP_TYPE_RC_END << 4 | 2, 2);
	P(0xa4, 0x8000, 4);
	putb(&o, c, sizeof(c));
	putb(&o, igb_layout, sizeof(igb_layout));
	for (uint32_t r = 0; r < 0x100; r += 4)
		cfg_rd(&o, r, 4);
	cfg_wr(&o, PCI_COMMAND, PCI_COMMAND_MEMORY | PCI_COMMAND_MASTER | PCI_COMMAND_SERR, 2);
	for (uint32_t e = 0; e < 4; e++) /* the table in BAR 3, one entry past the device's 3 */
		bar_wr(&o, 3, 16 * e, 0x08090040, 4);
	bar_rd(&o, 3, 0x2000, 8);
	bar_wr(&o, 0, 0x100, 0x1234, 4);
	cfg_wr(&o, PCI_COMMAND, PCI_COMMAND_INTX_DISABLE, 2);
	for (uint32_t r = 0x40; r < 0xc0; r += 4) /* the capabilities, wherever vmm put them */
		cfg_wr(&o, r, 0xffffffff, 4);
	for (uint32_t r = 0x40; r < 0xc0; r += 2)
		cfg_wr(&o, r, 0x0001, 2);
	cfg_wr(&o, PCI_ROM_ADDRESS, 0xffffffff, 4);
	cfg_rd(&o, PCI_ROM_ADDRESS, 4);
	cfg_rd(&o, 0x100, 4);
	seed_save("vfio_config", "igb-vf", &o);
	/* a looping capability list and one running off the end */
	o.n = 0;
	P(0x40, PCI_CAP_ID_MSIX | 0x40 << 8, 2);
	P(0xfc, PCI_CAP_ID_MSI | 0x00 << 8, 2);
	P(0x50, PCI_CAP_ID_MSI | 0xfc << 8, 2);
	putb(&o, c, sizeof(c));
	putb(&o, igb_layout, sizeof(igb_layout));
	for (uint32_t r = 0x34; r < 0x100; r += 4)
		cfg_rd(&o, r, 4);
	seed_save("vfio_config", "cap-loop", &o);
	/* the igb VF with its table at 0x100 of BAR 3 (to 0x130) and its PBA at 0x800, both in the
	 * trapped first page: unaligned accesses across their edges, split there by vmm (an 8-byte
	 * write at 0xff once wrote 7 bytes of the device's entry 0) */
	uint8_t keep[sizeof(c)];

	memcpy(keep, c, sizeof(c));
	o.n = 0;
	P(0x40, PCI_CAP_ID_PM | 0x50 << 8, 2);
	P(0x50, PCI_CAP_ID_MSI | 0x70 << 8, 2);
	P(0xfc, 0, 2);
	P(0x74, 0x100 | 3, 4);
	P(0x78, 0x800 | 3, 4);
	putb(&o, c, sizeof(c));
	putb(&o, igb_layout, sizeof(igb_layout));
	cfg_wr(&o, PCI_COMMAND, PCI_COMMAND_MEMORY, 2);
	bar_wr(&o, 3, 0xff, 0x1122334455667788ULL, 8);
	bar_wr(&o, 3, 0x12c, 0xaabbccdd00000001ULL, 8);
	bar_rd(&o, 3, 0xfc, 8);
	bar_wr(&o, 3, 0x7fc, ~0ULL, 8);
	bar_rd(&o, 3, 0x7fc, 8);
	seed_save("vfio_config", "table-edges", &o);
	memcpy(c, keep, sizeof(c));
	/* the input's MSI-X: 2048 entries at 0x4000 of a 64 KiB BAR 0 (MSIX_MAPPABLE), its PBA right
	 * after; then 40 sparse areas in a 1 MiB BAR 2 */
	o.n = 0;
	P(0x40, PCI_CAP_ID_MSIX | 0x00 << 8, 2);
	P(0x50, 0, 4);
	P(PCI_BASE_ADDRESS_0, PCI_BASE_ADDRESS_MEM_TYPE_64, 4);
	P(PCI_BASE_ADDRESS_2, PCI_BASE_ADDRESS_MEM_TYPE_64, 4);
	P(PCI_BASE_ADDRESS_3, 0, 4);
	P(PCI_CAPABILITY_LIST, 0, 1);
	putb(&o, c, sizeof(c));
	const uint8_t big[] = { 1, 0xff, 0x07, 0x00, 0x40, 0, 0, 0x00, 0xc0, 0, 0, 4 | 16 | 32, 0xf,
				8 | 16 | 64, 40 };

	putb(&o, big, sizeof(big));
	for (uint32_t k = 0; k < 40; k++)
		put(&o, 2 * k + 1, 1), put(&o, 1, 1);
	for (int i = 3; i < 6; i++)
		put(&o, 0xf, 1);
	cfg_wr(&o, PCI_COMMAND, PCI_COMMAND_MEMORY, 2);
	for (uint32_t e = 0; e < 2048; e += 97)
		bar_wr(&o, 0, 0x4000 + 16 * e, 0xfee00000 + e, 4), bar_rd(&o, 0, 0x4000 + 16 * e, 4);
	bar_rd(&o, 0, 0xc000 + 0xf8, 8);
	bar_wr(&o, 0, 0x100, 1, 4);
	bar_wr(&o, 2, 0x3000, 1, 4);
	cfg_wr(&o, PCI_COMMAND, 0, 2);
	cfg_wr(&o, PCI_COMMAND, PCI_COMMAND_MEMORY, 2);
	seed_save("vfio_config", "big-table", &o);
#undef P
}
