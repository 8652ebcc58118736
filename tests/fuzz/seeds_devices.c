// SPDX-License-Identifier: MIT
/* Seeds of the interrupt and legacy device targets: MSI-X, the 8250, the IOAPIC, vLPI state. */
#include <linux/pci_regs.h>
#include <stdio.h>
#include <stdlib.h>

#include "tests/fuzz/seeds.h"
#include "core/msix.h"

void seeds_msix(void)
{
	static struct vm vm;
	static struct fake_kvm fk;
	static struct pci_host host;
	static struct pci_dev dev;
	static struct msix m;
	struct fz_guest g;
	struct out o = { .ops = 1u << FZ_CFG_RD | 1u << FZ_CFG_WR | 1u << FZ_BAR_RD | 1u << FZ_BAR_WR |
				1u << FZ_INPUT };

	fz_vm_init(&g, &vm, &fk, &host);
	if (pci_dev_add(&host, &dev, 0x1af4, 0x10f0, 0xff000001, 0x1af4, 0) < 0 ||
	    msix_init(&m, &vm, &dev, 5, 2) < 0)
		abort();
	put(&o, 5 - 1, 1); /* msix_fuzz.c: the vector count */
	cfg_wr(&o, PCI_COMMAND, PCI_COMMAND_MEMORY, 2);
	for (unsigned int i = 0; i < 5; i++) {
		bar_wr(&o, 2, 16 * i, 0x08090040 + 4 * i, 4);
		bar_wr(&o, 2, 16 * i + 8, 0x40 + i, 4);
		bar_wr(&o, 2, 16 * i + 12, 0, 4);
	}
	cfg_wr(&o, m.cap + PCI_MSIX_FLAGS, PCI_MSIX_FLAGS_ENABLE, 2);
	input(&o, "\0\1\2\3\4", 5);
	bar_wr(&o, 2, 12, 1, 4); /* vector 0 masked, raised, pending in the PBA */
	input(&o, "\0\0", 2);
	bar_rd(&o, 2, 0x800, 8);
	bar_wr(&o, 2, 0, 0x08090080, 8); /* re-addressed while masked */
	bar_wr(&o, 2, 12, 0, 4);
	bar_rd(&o, 2, 0x800, 4);
	cfg_wr(&o, m.cap + PCI_MSIX_FLAGS, PCI_MSIX_FLAGS_ENABLE | PCI_MSIX_FLAGS_MASKALL, 2);
	input(&o, "\3", 1);
	cfg_wr(&o, m.cap + PCI_MSIX_FLAGS, PCI_MSIX_FLAGS_ENABLE, 2);
	input(&o, "\x81\1", 2); /* KVM refuses the next route */
	cfg_wr(&o, PCI_BASE_ADDRESS_2, 0x10100000, 4);
	bar_rd(&o, 2, 16, 4);
	seed_save("msix", "table-pba", &o);
	/* all 64 vectors: the table's whole KiB and the PBA's every bit */
	o.n = 0;
	put(&o, MSIX_MAX_VECTORS - 1, 1);
	cfg_wr(&o, PCI_COMMAND, PCI_COMMAND_MEMORY, 2);
	cfg_wr(&o, m.cap + PCI_MSIX_FLAGS, PCI_MSIX_FLAGS_ENABLE | PCI_MSIX_FLAGS_MASKALL, 2);
	for (unsigned int i = 0; i < MSIX_MAX_VECTORS; i += 9)
		bar_wr(&o, 2, 16 * i, 0x08090040, 4), bar_wr(&o, 2, 16 * i + 8, i, 4);
	input(&o, "\0\x3f\x20\x3e", 4);
	bar_rd(&o, 2, 0x800, 8);
	bar_rd(&o, 2, 16 * 63 + 12, 4);
	bar_rd(&o, 2, 16 * 64, 4);
	seed_save("msix", "all-vectors", &o);
}

void seeds_uart(void)
{
	struct out o = { 0 };
#define W(off, v) (put(&o, 1, 1), put(&o, off, 2), put(&o, v, 8))
#define R(off) (put(&o, 0, 1), put(&o, off, 2))
	W(3, 0x80), W(0, 1), W(1, 0), W(3, 0x03), W(2, 0x07), W(4, 0x0b), W(1, 0x03);
	R(2), W(0, 'o'), W(0, 'k'), R(5), R(2);
	put(&o, 3, 1), put(&o, 4, 2), putb(&o, "abc\n", 4); /* input */
	R(2), R(5), R(0), R(0), R(0), R(0), R(5), W(4, 0x1b), W(0, 'x'), R(0), R(6), R(7), W(7, 0x55), R(7);
	W(1, 0), R(2);
	seed_save("uart", "8250", &o);
#undef W
#undef R
}

/* Linux bringing up the IOAPIC: read VER, program the COM1 pin (edge) and a PCI pin (level,
 * active low), raise both, EOI the level vector while the line stays high, then mask it. */
void seeds_ioapic(void)
{
	struct out o = { 0 };
#define SEL(r) (put(&o, 0x81, 1), put(&o, 0x00, 2), put(&o, r, 8))
#define WIN_W(v) (put(&o, 0x81, 1), put(&o, 0x10, 2), put(&o, v, 8))
#define WIN_R() (put(&o, 0x80, 1), put(&o, 0x10, 2))
	SEL(0x01), WIN_R(), SEL(0x00), WIN_R();
	SEL(0x19), WIN_W(0x01000000), SEL(0x18), WIN_W(0x31);		/* pin 4: vector 0x31 edge */
	SEL(0x31), WIN_W(0x00000000), SEL(0x30), WIN_W(0xa041);		/* pin 16: level, low */
	put(&o, 0x82, 1), put(&o, 4, 1), put(&o, 0x02, 1), put(&o, 4, 1);	/* COM1 up, down */
	put(&o, 0x82, 1), put(&o, 16, 1);					/* INTA# up */
	put(&o, 3, 1), put(&o, 0x41, 1), put(&o, 3, 1), put(&o, 0x41, 1);	/* EOIs */
	SEL(0x30), WIN_W(0x1a041), WIN_R(), SEL(0x30), WIN_W(0x0041), WIN_W(0xa041);
	seed_save("ioapic", "linux", &o);
#undef SEL
#undef WIN_W
#undef WIN_R
}

void seeds_vlpi(void)
{
	static const char *files[] = { "vgic-state-gic4-vf.txt", "vgic-its-state-mix.txt",
				       "interrupts-gic4-vf.txt", "vgic-state-4.15.txt",
				       "interrupts-lab-gic4.txt" };

	for (size_t i = 0; i < sizeof(files) / sizeof(files[0]); i++) {
		static struct out o;
		char path[128];
		FILE *f;

		snprintf(path, sizeof(path), "tests/unit/fixtures/vlpi/%s", files[i]);
		f = fopen(path, "rb");
		if (!f) {
			perror(path);
			exit(1);
		}
		o.n = 0;
		put(&o, !strncmp(files[i], "vgic-state", 10) ? 0 : !strncmp(files[i], "vgic-its", 8) ? 1 : 2, 1);
		o.n += fread(o.b + o.n, 1, sizeof(o.b) - o.n - 1, f);
		fclose(f);
		seed_save("vlpi", files[i], &o);
	}
}
