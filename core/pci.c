// SPDX-License-Identifier: MIT
/*
 * A PCI host bridge with ECAM config space (bus 0, function 0 of each slot), and per-device config
 * space emulation: BARs with sizing, the command register gating memory decode, the capability
 * list. BAR addresses are assigned by vmm (the FDT says linux,pci-probe-only) but the guest may
 * move them; a moved BAR leaves the MMIO bus and re-enters at its new address.
 */
#include <errno.h>
#include <linux/pci_regs.h>
#include <string.h>

#include "core/hot.h"
#include "core/log.h"
#include "core/bus.h"
#include "core/mem.h"
#include "core/pci.h"
#include "core/vm.h"

#define ECAM_DEV_SHIFT 15
#define ECAM_FN_SHIFT 12

/* Config space is little-endian, and so are our hosts. Each width is a copy of a fixed size: gcc
 * expands a memcpy whose length is only known to be at most 4 into a byte loop that ThreadSanitizer
 * does not instrument, which hid the guest's config accesses from it. */
static uint32_t cfg_get(const struct pci_dev *d, uint32_t off, uint32_t len)
{
	uint32_t v = 0;

	if (len == 1)
		memcpy(&v, d->cfg + off, 1);
	else if (len == 2)
		memcpy(&v, d->cfg + off, 2);
	else
		memcpy(&v, d->cfg + off, 4);
	return v;
}

static void cfg_put(struct pci_dev *d, uint32_t off, uint32_t v, uint32_t len)
{
	if (len == 1)
		memcpy(d->cfg + off, &v, 1);
	else if (len == 2)
		memcpy(d->cfg + off, &v, 2);
	else
		memcpy(d->cfg + off, &v, 4);
}

static uint64_t bar_addr(const struct pci_dev *d, int i)
{
	uint64_t a = cfg_get(d, PCI_BASE_ADDRESS_0 + 4 * i, 4) & PCI_BASE_ADDRESS_MEM_MASK;

	if (d->bar[i].is64)
		a |= (uint64_t)cfg_get(d, PCI_BASE_ADDRESS_0 + 4 * (i + 1), 4) << 32;
	return a;
}

static bool mem_enabled(const struct pci_dev *d)
{
	return cfg_get(d, PCI_COMMAND, 2) & PCI_COMMAND_MEMORY;
}

/* A backed BAR: memslots for everything but its holes, which go on the bus (trapped). A part
 * that cannot be a memslot (not page-aligned) is trapped through the BAR's fn instead. */
static bool bar_map_backed(struct pci_dev *d, struct pci_bar *b, uint64_t a)
{
	struct vm *vm = d->host->vm;
	struct bus *bus = &vm->mmio;
	uint64_t pos = 0;

	for (int h = 0; h <= b->nr_holes; h++) {
		uint64_t end = h < b->nr_holes ? b->hole[h].off : b->size;

		if (end > pos) {
			int slot = vm_mmio_map(vm, a + pos, end - pos, (uint8_t *)b->hva + pos);

			if (slot < 0)
				return false;
			b->slot[b->nr_slots++] = slot;
		}
		if (h < b->nr_holes) {
			const struct pci_bar_hole *hl = &b->hole[h];

			if (bus_try_register(bus, a + hl->off, hl->size, hl->fn, hl->opaque, b->name) < 0)
				return false;
			pos = hl->off + hl->size;
		}
	}
	return true;
}

static void bar_unmap_backed(struct pci_dev *d, struct pci_bar *b)
{
	struct vm *vm = d->host->vm;

	for (int i = 0; i < b->nr_slots; i++)
		vm_mmio_unmap(vm, b->slot[i]);
	b->nr_slots = 0;
	for (int h = 0; h < b->nr_holes; h++)
		bus_unregister(&vm->mmio, b->mapped_addr + b->hole[h].off, b->hole[h].opaque);
}

/* Puts BAR i on the bus (or into memslots) at its programmed address, or takes it off. */
static void bar_map(struct pci_dev *d, int i, bool on)
{
	struct pci_bar *b = &d->bar[i];
	struct bus *bus = &d->host->vm->mmio;

	if (b->mapped) {
		if (b->hva)
			bar_unmap_backed(d, b);
		else
			bus_unregister(bus, b->mapped_addr, b->opaque);
		b->mapped = false;
		if (b->moved)
			b->moved(b->opaque, b->mapped_addr, 0);
	}
	if (!on)
		return;
	uint64_t a = bar_addr(d, i);

	/* An address the guest made up may overlap another device or wrap: the BAR stays unmapped. */
	if (a == 0 || a + b->size < a)
		return;
	if (b->hva) {
		b->mapped_addr = a;
		if (!bar_map_backed(d, b, a)) {
			bar_unmap_backed(d, b);
			return;
		}
	} else if (bus_try_register(bus, a, b->size, b->fn, b->opaque, b->name) < 0) {
		return;
	}
	b->mapped = true;
	b->mapped_addr = a;
	if (b->moved)
		b->moved(b->opaque, 0, a);
}

static void bars_update(struct pci_dev *d)
{
	bool on = mem_enabled(d);

	for (int i = 0; i < PCI_STD_NUM_BARS; i++) {
		struct pci_bar *b = &d->bar[i];

		if (!b->size)
			continue;
		if (on != b->mapped || (on && b->mapped_addr != bar_addr(d, i)))
			bar_map(d, i, on);
	}
}

/* Whether an access covers a byte of COMMAND or STATUS: intx_update reads COMMAND and writes
 * STATUS from a device's thread under intx_lock alone, so the guest's accesses to them take it too. */
static bool cmd_status(uint32_t off, uint32_t len)
{
	return off < PCI_STATUS + 2 && off + len > PCI_COMMAND;
}

/* The guest's read of a register: under intx_lock where it covers COMMAND or STATUS. */
static uint32_t cfg_guest_get(struct pci_dev *d, uint32_t off, uint32_t len)
{
	bool locked = cmd_status(off, len);

	if (locked)
		pthread_mutex_lock(&d->intx_lock);
	uint32_t v = cfg_get(d, off, len);

	if (locked)
		pthread_mutex_unlock(&d->intx_lock);
	return v;
}

/* The guest's write, its writable bits only. STATUS has none (its error bits are write-1-to-clear
 * ones vmm never sets, Interrupt Status is read-only): what goes back there is read under
 * intx_lock, so a device's raise or lower in between is neither lost nor undone. */
static void cfg_guest_put(struct pci_dev *d, uint32_t off, uint32_t val, uint32_t len)
{
	bool locked = cmd_status(off, len);
	uint32_t mask = 0;

	memcpy(&mask, d->wmask + off, len);
	if (locked)
		pthread_mutex_lock(&d->intx_lock);
	cfg_put(d, off, (cfg_get(d, off, len) & ~mask) | (val & mask), len);
	if (locked)
		pthread_mutex_unlock(&d->intx_lock);
}

/* intx_lock held: drives the line to what the device asserts, unless INTx is disabled. */
VMM_HOT static void intx_update(struct pci_dev *d)
{
	uint16_t cmd = cfg_get(d, PCI_COMMAND, 2), st = cfg_get(d, PCI_STATUS, 2);
	bool out = d->intx_level && !(cmd & PCI_COMMAND_INTX_DISABLE);

	st = d->intx_level ? st | PCI_STATUS_INTERRUPT : st & ~PCI_STATUS_INTERRUPT;
	cfg_put(d, PCI_STATUS, st, 2);
	if (out == d->intx_out)
		return;
	d->intx_out = out;
	d->intx_asserts += out;
	struct pci_host *h = d->host;

	if (h && h->set_intx)
		h->set_intx(h->intx_opaque, d->devfn >> 3, out);
}

VMM_HOT void pci_intx(struct pci_dev *d, bool level)
{
	pthread_mutex_lock(&d->intx_lock);
	d->intx_level = level;
	intx_update(d);
	pthread_mutex_unlock(&d->intx_lock);
}

static void pci_cfg_write(struct pci_dev *d, uint32_t off, uint32_t val, uint32_t len)
{
	/* COMMAND changes only here, under the host lock: read under it alone */
	uint16_t old_cmd = cfg_get(d, PCI_COMMAND, 2);
	bool cmd = off < PCI_COMMAND + 2 && off + len > PCI_COMMAND;

	cfg_guest_put(d, off, val, len);
	/* a device's memory decode on before its BARs' memslots appear, off after they are gone */
	bool mem_on = cmd && !(old_cmd & PCI_COMMAND_MEMORY) && mem_enabled(d);

	if (mem_on && d->cmd_written)
		d->cmd_written(d, old_cmd);
	if (cmd || (off < PCI_BASE_ADDRESS_5 + 4 && off + len > PCI_BASE_ADDRESS_0))
		bars_update(d);
	if (cmd && !mem_on && d->cmd_written)
		d->cmd_written(d, old_cmd);
	if (cmd) { /* INTX_DISABLE may have changed */
		pthread_mutex_lock(&d->intx_lock);
		intx_update(d);
		pthread_mutex_unlock(&d->intx_lock);
	}
	if (d->cfg_written)
		d->cfg_written(d, off, len);
}

/* ECAM: offset = device << 15 | function << 12 | register. Absent devices read all-ones. */
VMM_HOT static void ecam_access(void *opaque, uint64_t off, uint8_t *data, uint32_t len, bool is_write)
{
	struct pci_host *h = opaque;
	uint32_t slot = (off >> ECAM_DEV_SHIFT) & 0x1f, fn = (off >> ECAM_FN_SHIFT) & 7;
	uint32_t reg = off & 0xfff;
	struct pci_dev *d = (fn == 0 && slot < PCI_MAX_SLOTS) ? h->slot[slot] : NULL;

	if (!is_write)
		memset(data, 0xff, len);
	if (!d || (len != 1 && len != 2 && len != 4) || reg % len)
		return; /* unaligned or odd-sized config accesses are not PCI: ignored */
	pthread_mutex_lock(&h->lock);
	if (is_write) {
		uint32_t v = 0;

		memcpy(&v, data, len);
		pci_cfg_write(d, reg, v, len);
	} else {
		uint32_t v = cfg_guest_get(d, reg, len);

		if (d->cfg_read)
			d->cfg_read(d, reg, len, &v);
		memcpy(data, &v, len);
	}
	pthread_mutex_unlock(&h->lock);
}

int pci_host_init(struct pci_host *h, struct vm *vm, const struct pci_host_layout *l)
{
	memset(h, 0, sizeof(*h));
	pthread_mutex_init(&h->lock, NULL);
	h->vm = vm;
	h->layout = *l;
	h->mmio32_next = l->mmio32_base;
	h->mmio64_next = l->mmio64_base;
	return bus_register(&vm->mmio, l->ecam_base, l->ecam_size, ecam_access, h, "pci-ecam");
}

int pci_dev_add_at(struct pci_host *h, struct pci_dev *d, int slot, uint16_t vendor, uint16_t device,
		   uint32_t class_rev, uint16_t subsys_vendor, uint16_t subsys)
{
	if (slot < 0) {
		for (slot = 1; slot < PCI_MAX_SLOTS && h->slot[slot]; slot++) /* 0: the bridge's own */
			;
		if (slot == PCI_MAX_SLOTS) {
			pr_err("pci: no free slot on bus 0");
			return -ENOSPC;
		}
	} else if (slot == 0 || slot >= PCI_MAX_SLOTS || h->slot[slot]) {
		pr_err("pci: slot %d is %s (slots 1 to %d)", slot,
		       slot > 0 && slot < PCI_MAX_SLOTS ? "taken" : "out of range", PCI_MAX_SLOTS - 1);
		return -EBUSY;
	}
	memset(d->cfg, 0, sizeof(d->cfg));
	memset(d->wmask, 0, sizeof(d->wmask));
	pthread_mutex_init(&d->intx_lock, NULL);
	d->intx_level = d->intx_out = false;
	d->host = h;
	d->devfn = slot << 3;
	cfg_put(d, PCI_VENDOR_ID, vendor, 2);
	cfg_put(d, PCI_DEVICE_ID, device, 2);
	cfg_put(d, PCI_CLASS_REVISION, class_rev, 4);
	cfg_put(d, PCI_SUBSYSTEM_VENDOR_ID, subsys_vendor, 2);
	cfg_put(d, PCI_SUBSYSTEM_ID, subsys, 2);
	cfg_put(d, PCI_HEADER_TYPE, PCI_HEADER_TYPE_NORMAL, 1);
	cfg_put(d, PCI_INTERRUPT_PIN, 1, 1); /* INTA#, routed by the host bridge's interrupt-map */
	/* Writable: command (memory, bus master, INTx disable), interrupt line, cache line size. */
	uint16_t cmd_mask = PCI_COMMAND_MEMORY | PCI_COMMAND_MASTER | PCI_COMMAND_INTX_DISABLE |
			    PCI_COMMAND_SERR | PCI_COMMAND_PARITY;

	memcpy(d->wmask + PCI_COMMAND, &cmd_mask, 2);
	d->wmask[PCI_INTERRUPT_LINE] = 0xff;
	d->wmask[PCI_CACHE_LINE_SIZE] = 0xff;
	d->wmask[PCI_LATENCY_TIMER] = 0xff;
	h->slot[slot] = d;
	return 0;
}

/* Places BAR i in the 32- or 64-bit window and makes its address bits writable. */
static int bar_place(struct pci_dev *d, int i, uint64_t size, bool is64, bool prefetch, const char *name)
{
	struct pci_host *h = d->host;

	if (i < 0 || i >= PCI_STD_NUM_BARS - is64 || d->bar[i].size || size < 16 || (size & (size - 1))) {
		pr_err("pci: bad BAR %d (size 0x%llx) for %s", i, (unsigned long long)size, name);
		return -EINVAL;
	}
	/* A board with no 64-bit window (x86: RAM past 4 GiB ends where -m says) gives 64-bit BARs
	 * addresses below 4 GiB, as PC firmware does with BARs that fit there. */
	bool high = is64 && h->layout.mmio64_size;
	uint64_t *next = high ? &h->mmio64_next : &h->mmio32_next;
	uint64_t end = high ? h->layout.mmio64_base + h->layout.mmio64_size
			    : h->layout.mmio32_base + h->layout.mmio32_size;
	uint64_t align = size < 4096 ? 4096 : size; /* BARs never share a page: each can be a memslot */
	uint64_t a = (*next + align - 1) & ~(align - 1);

	if (a + size > end) {
		pr_err("pci: the %s-bit MMIO window is full (BAR %d of %s)", high ? "64" : "32", i, name);
		return -ENOSPC;
	}
	*next = a + align;
	uint32_t lo = (uint32_t)a | (is64 ? PCI_BASE_ADDRESS_MEM_TYPE_64 : 0) |
		      (prefetch ? PCI_BASE_ADDRESS_MEM_PREFETCH : 0);
	uint32_t mask = (uint32_t)~(size - 1) & PCI_BASE_ADDRESS_MEM_MASK;

	cfg_put(d, PCI_BASE_ADDRESS_0 + 4 * i, lo, 4);
	memcpy(d->wmask + PCI_BASE_ADDRESS_0 + 4 * i, &mask, 4);
	if (is64) {
		uint32_t hi = a >> 32, hmask = (uint32_t)(~(size - 1) >> 32);

		cfg_put(d, PCI_BASE_ADDRESS_0 + 4 * (i + 1), hi, 4);
		memcpy(d->wmask + PCI_BASE_ADDRESS_0 + 4 * (i + 1), &hmask, 4);
	}
	return 0;
}

int pci_bar_add(struct pci_dev *d, int i, uint64_t size, bool is64, bus_fn fn, void *opaque,
		const char *name)
{
	if (size < 4096) { /* a trapped BAR of vmm's own devices: a page at least */
		pr_err("pci: BAR %d of %s is smaller than a page", i, name);
		return -EINVAL;
	}
	int r = bar_place(d, i, size, is64, false, name);

	if (r < 0)
		return r;
	d->bar[i] = (struct pci_bar){ .size = size, .is64 = is64, .fn = fn, .opaque = opaque, .name = name };
	return 0;
}

int pci_dev_add(struct pci_host *h, struct pci_dev *d, uint16_t vendor, uint16_t device,
		uint32_t class_rev, uint16_t subsys_vendor, uint16_t subsys)
{
	return pci_dev_add_at(h, d, -1, vendor, device, class_rev, subsys_vendor, subsys);
}

int pci_bar_add_backed(struct pci_dev *d, int i, const struct pci_bar_spec *spec)
{
	if (spec->nr_holes > PCI_BAR_MAX_HOLES || (spec->hva && ((uintptr_t)spec->hva & 4095))) {
		pr_err("pci: BAR %d of %s: too many holes or an unaligned mapping", i, spec->name);
		return -EINVAL;
	}
	for (int h = 0; h < spec->nr_holes; h++) {
		const struct pci_bar_hole *hl = &spec->hole[h];

		/* holes are page-aligned, in order, inside the BAR: everything between is a memslot */
		if ((hl->off | hl->size) & 4095 || !hl->size || hl->off + hl->size > spec->size ||
		    (h && hl->off < spec->hole[h - 1].off + spec->hole[h - 1].size)) {
			pr_err("pci: BAR %d of %s: bad hole 0x%llx+0x%llx", i, spec->name,
			       (unsigned long long)hl->off, (unsigned long long)hl->size);
			return -EINVAL;
		}
	}
	int r = bar_place(d, i, spec->size, spec->is64, spec->prefetch, spec->name);

	if (r < 0)
		return r;
	struct pci_bar *b = &d->bar[i];

	*b = (struct pci_bar){ .size = spec->size, .is64 = spec->is64, .fn = spec->fn,
			       .opaque = spec->opaque, .name = spec->name, .hva = spec->hva,
			       .nr_holes = spec->nr_holes };
	memcpy(b->hole, spec->hole, spec->nr_holes * sizeof(b->hole[0]));
	/* a BAR too small for a memslot, or with no mapping, is trapped whole */
	if (spec->size < 4096)
		b->hva = NULL;
	return 0;
}

int pci_cap_add(struct pci_dev *d, uint8_t id, uint32_t len)
{
	uint32_t off = d->cap_end ? d->cap_end : PCI_CAPABILITY_LIST + 0x0c; /* first cap at 0x40 */

	off = (off + 3) & ~3u;
	if (len < 2 || off + len > PCI_CFG_SPACE_SIZE) {
		pr_err("pci: no room for capability 0x%x", id);
		return -ENOSPC;
	}
	d->cfg[off] = id;
	d->cfg[off + 1] = 0;
	/* append to the list */
	if (!d->cap_last) {
		d->cfg[PCI_CAPABILITY_LIST] = off;
		cfg_put(d, PCI_STATUS, cfg_get(d, PCI_STATUS, 2) | PCI_STATUS_CAP_LIST, 2);
	} else {
		d->cfg[d->cap_last + 1] = off;
	}
	d->cap_last = off;
	d->cap_end = off + len;
	return off;
}

VMM_HOT uint32_t pci_dev_rid(const struct pci_dev *d)
{
	return d->devfn; /* bus 0: the requester ID is the devfn */
}
