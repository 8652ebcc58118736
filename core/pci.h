/* SPDX-License-Identifier: MIT */
/* The PCI host bridge (ECAM, bus 0), config space, BARs and INTx. */
#ifndef VMM_PCI_H
#define VMM_PCI_H

#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>

#include "core/bus.h"

struct vm;

/* Host bridge (ECAM, bus 0) and config space. */
#define PCI_MAX_SLOTS 32
#define PCI_CFG_SIZE 4096

struct pci_host_layout {
	uint64_t ecam_base, ecam_size;
	uint64_t mmio32_base, mmio32_size;
	uint64_t mmio64_base, mmio64_size;
};

/* A part of a backed BAR that stays trapped (the MSI-X table and PBA pages): fn gets offsets
 * relative to the hole. */
#define PCI_BAR_MAX_HOLES 2

struct pci_bar_hole {
	uint64_t off, size;
	bus_fn fn;
	void *opaque;
};

/* A BAR is trapped (fn handles every access, BAR-relative offsets) or backed (hva mapped into
 * the guest as memslots, which follow the guest's BAR moves, except its holes). */
struct pci_bar {
	uint64_t size;
	bool is64;
	bus_fn fn;
	void *opaque;
	const char *name;
	void *hva; /* backed: the host mapping of the whole BAR */
	struct pci_bar_hole hole[PCI_BAR_MAX_HOLES];
	int nr_holes;
	int slot[PCI_BAR_MAX_HOLES + 1];
	int nr_slots;
	bool mapped;
	uint64_t mapped_addr;
	/* optional: told when the BAR leaves (new == 0) or enters (old == 0) the bus */
	void (*moved)(void *opaque, uint64_t old, uint64_t new);
};

struct pci_bar_spec {
	uint64_t size;
	bool is64, prefetch;
	void *hva;  /* NULL: trapped whole through fn */
	bus_fn fn;  /* trapped BARs */
	void *opaque;
	const char *name;
	struct pci_bar_hole hole[PCI_BAR_MAX_HOLES]; /* page-aligned, in order */
	int nr_holes;
};

struct pci_host;

struct pci_dev {
	struct pci_host *host;
	uint8_t devfn;
	uint8_t cfg[PCI_CFG_SIZE];
	uint8_t wmask[PCI_CFG_SIZE]; /* bits the guest may write */
	struct pci_bar bar[6];
	uint32_t cap_last, cap_end;
	/* a leaf lock: taken under the host's or a device's lock. It also guards COMMAND and STATUS
	 * in cfg: pci_intx writes STATUS under it alone, config accesses to them take it as well */
	pthread_mutex_t intx_lock;
	bool intx_level, intx_out; /* what the device asserts; what reaches the line */
	uint64_t intx_asserts;	   /* intx_out raised (intx_lock): interrupts sent on the line */
	/* optional hooks, called under the host lock */
	void (*cfg_read)(struct pci_dev *d, uint32_t off, uint32_t len, uint32_t *val);
	void (*cfg_written)(struct pci_dev *d, uint32_t off, uint32_t len);
	/* A write touched the command register (cfg holds the new value), for a device that passes
	 * it on to hardware: called before the BARs are mapped when memory decode turns on, after
	 * they are unmapped otherwise, so a BAR backed by the device's memory is never in the
	 * guest's memslots while the device does not decode it. Then cfg_written, as for any write. */
	void (*cmd_written)(struct pci_dev *d, uint16_t old_cmd);
};

struct pci_host {
	struct vm *vm;
	struct pci_host_layout layout;
	pthread_mutex_t lock;
	struct pci_dev *slot[PCI_MAX_SLOTS];
	uint64_t mmio32_next, mmio64_next;
	/* the board's INTx wiring: slot's INTA# to an interrupt line, and that line's GSI (for a
	 * device whose INTx KVM drives through an irqfd, e.g. VFIO with a resamplefd) */
	void (*set_intx)(void *opaque, unsigned int slot, bool level);
	int (*intx_gsi)(void *opaque, unsigned int slot);
	void *intx_opaque;
};

int pci_host_init(struct pci_host *h, struct vm *vm, const struct pci_host_layout *l);
int pci_dev_add(struct pci_host *h, struct pci_dev *d, uint16_t vendor, uint16_t device,
		uint32_t class_rev, uint16_t subsys_vendor, uint16_t subsys);
/* The same in a chosen slot (1 to PCI_MAX_SLOTS - 1; -1: the first free one). */
int pci_dev_add_at(struct pci_host *h, struct pci_dev *d, int slot, uint16_t vendor, uint16_t device,
		   uint32_t class_rev, uint16_t subsys_vendor, uint16_t subsys);
/* Allocates a BAR in the 32- or 64-bit window; mapped when the guest enables memory decode. */
int pci_bar_add(struct pci_dev *d, int i, uint64_t size, bool is64, bus_fn fn, void *opaque,
		const char *name);
/* A BAR backed by host memory (a VFIO region's mmap) with trapped holes, or trapped whole. */
int pci_bar_add_backed(struct pci_dev *d, int i, const struct pci_bar_spec *spec);
/* Appends a capability of len bytes; returns its offset. */
int pci_cap_add(struct pci_dev *d, uint8_t id, uint32_t len);
uint32_t pci_dev_rid(const struct pci_dev *d);
/* The device asserts (or releases) INTA#; the line follows unless the guest set INTX_DISABLE.
 * Status.INTERRUPT shows the device's level either way. */
void pci_intx(struct pci_dev *d, bool level);

#endif
