// SPDX-License-Identifier: MIT
/*
 * The IOAPIC of the split irqchip (KVM_CAP_SPLIT_IRQCHIP: only the local APICs stay in the
 * kernel). An 82093AA as KVM's own models it: 24 pins, version 0x11 (no EOI register: Linux then
 * relies on the LAPIC's EOI broadcast), IOREGSEL at +0x00 and IOWIN at +0x10.
 *
 * Each unmasked pin is GSI `pin` with an MSI route built from its redirection entry, so:
 * - an irqfd on the pin's GSI (a VFIO INTx line) reaches the guest without vmm, and
 * - KVM learns the level-triggered vectors (it scans the routes of the first 24 GSIs) and exits
 *   with KVM_EXIT_IOAPIC_EOI when the guest EOIs one: vmm then clears the pin's remote IRR,
 *   delivers again while the line is still high, and signals the resamplefd a level irqfd left
 *   with vmm (core/irq.c), which is how a VFIO INTx line is unmasked.
 * Lines vmm drives itself (the 8250, emulated PCI INTx) go through x86_ioapic_set_irq and leave
 * as KVM_SIGNAL_MSI. Redirection entries are guest-written and hostile: only fixed, lowest-priority
 * and NMI delivery leave the IOAPIC (there is no PIC for ExtINT, and SMI/INIT have no business on
 * an IOAPIC pin); the rest, and vectors below 16 with fixed delivery, are counted and dropped.
 */
#include <errno.h>
#include <string.h>

#include "core/irq.h"
#include "core/log.h"
#include "core/vm.h"
#include "x86/x86.h"

/* 82093AA datasheet, 3.2: the indirect registers and the redirection entry's fields. */
#define REG_ID 0x00
#define REG_VER 0x01
#define REG_ARB 0x02
#define REG_RTE 0x10
#define IOAPIC_VERSION 0x11
#define RTE_VECTOR 0xffULL
#define RTE_DELMODE_SHIFT 8
#define RTE_DELMODE (7ULL << RTE_DELMODE_SHIFT)
#define RTE_DESTMODE (1ULL << 11)
#define RTE_DELIVS (1ULL << 12) /* read-only */
#define RTE_POLARITY (1ULL << 13)
#define RTE_REMOTE_IRR (1ULL << 14) /* read-only */
#define RTE_LEVEL (1ULL << 15)
#define RTE_MASK (1ULL << 16)
#define RTE_EXT_DEST_SHIFT 49	/* KVM's extended destination ID (MSI_EXT_DEST_ID): bits 55:49 */
#define RTE_DEST_SHIFT 56
#define RTE_RO (RTE_DELIVS | RTE_REMOTE_IRR)
#define DM_FIXED 0
#define DM_LOWEST 1
#define DM_NMI 4
/* The MSI the entry becomes (Intel SDM vol. 3, 11.11): address 0xfee, destination 19:12,
 * extended destination 11:5, destination mode 2; data vector 7:0, delivery mode 10:8, level
 * assert 14, trigger 15. */
#define MSI_ADDR_BASE 0xfee00000ULL
#define MSI_ADDR_DEST_SHIFT 12
#define MSI_ADDR_EXT_DEST_SHIFT 5
#define MSI_ADDR_DESTMODE (1u << 2)
#define MSI_DATA_ASSERT (1u << 14)
#define MSI_DATA_LEVEL (1u << 15)

bool x86_ioapic_msi(uint64_t rte, uint64_t *addr, uint32_t *data)
{
	unsigned int dm = (rte & RTE_DELMODE) >> RTE_DELMODE_SHIFT, vector = rte & RTE_VECTOR;

	if (rte & RTE_MASK)
		return false;
	if (dm != DM_FIXED && dm != DM_LOWEST && dm != DM_NMI)
		return false;
	if (dm != DM_NMI && vector < 16) /* the exceptions' vectors: an illegal vector to a LAPIC */
		return false;
	*addr = MSI_ADDR_BASE | ((rte >> RTE_DEST_SHIFT) & 0xff) << MSI_ADDR_DEST_SHIFT |
		((rte >> RTE_EXT_DEST_SHIFT) & 0x7f) << MSI_ADDR_EXT_DEST_SHIFT |
		(rte & RTE_DESTMODE ? MSI_ADDR_DESTMODE : 0);
	*data = vector | dm << 8 | MSI_DATA_ASSERT | (rte & RTE_LEVEL ? MSI_DATA_LEVEL : 0);
	return true;
}

void x86_ioapic_init(struct x86_ioapic *io, struct vm *vm, uint8_t id)
{
	memset(io, 0, sizeof(*io));
	pthread_mutex_init(&io->lock, NULL);
	io->vm = vm;
	io->id = id & 0xf;
	for (unsigned int i = 0; i < X86_IOAPIC_PINS; i++)
		io->rte[i] = RTE_MASK; /* reset: every pin masked */
}

void x86_ioapic_destroy(struct x86_ioapic *io)
{
	pthread_mutex_destroy(&io->lock);
}

/* Keeps GSI pin's MSI route what the entry says: none while the entry sends nothing. */
static void route_pin(struct x86_ioapic *io, unsigned int pin)
{
	struct kvm_irq_routing_entry e;
	uint64_t addr;
	uint32_t data;
	bool want = x86_ioapic_msi(io->rte[pin], &addr, &data);

	if (want == !!(io->routed & 1u << pin) &&
	    (!want || (addr == io->route_addr[pin] && data == io->route_data[pin])))
		return;
	if (want)
		irq_msi_entry(io->vm, &e, pin, addr, data, 0);
	if (irq_route_update(io->vm, pin, want ? &e : NULL) < 0 && want) {
		io->stats.route_errors++;
		return;
	}
	io->stats.route_commits++;
	io->routed = (io->routed & ~(1u << pin)) | (uint32_t)want << pin;
	io->route_addr[pin] = addr;
	io->route_data[pin] = data;
}

/* Sends the pin's interrupt now; a level pin then waits for the EOI (remote IRR). */
static void deliver(struct x86_ioapic *io, unsigned int pin)
{
	uint64_t addr;
	uint32_t data;

	if (!x86_ioapic_msi(io->rte[pin], &addr, &data)) {
		if (!(io->rte[pin] & RTE_MASK))
			io->stats.refused++;
		return;
	}
	if (io->vm->kvm.ops->signal_msi(io->vm->kvm.ctx, addr, data) < 0) {
		io->stats.signal_errors++; /* no EOI will come: the pin must not wait for one */
		return;
	}
	io->stats.delivered++;
	if (io->rte[pin] & RTE_LEVEL)
		io->rte[pin] |= RTE_REMOTE_IRR;
}

/* A level pin that is high, unmasked and not waiting for an EOI fires. */
static void level_check(struct x86_ioapic *io, unsigned int pin)
{
	uint64_t r = io->rte[pin];

	if ((r & RTE_LEVEL) && !(r & (RTE_MASK | RTE_REMOTE_IRR)) && (io->level & 1u << pin))
		deliver(io, pin);
}

void x86_ioapic_set_irq(struct x86_ioapic *io, unsigned int pin, bool level)
{
	if (pin >= X86_IOAPIC_PINS)
		return;
	pthread_mutex_lock(&io->lock);
	bool was = io->level & 1u << pin;

	io->level = (io->level & ~(1u << pin)) | (uint32_t)level << pin;
	if (io->rte[pin] & RTE_LEVEL)
		level_check(io, pin);
	else if (level && !was && !(io->rte[pin] & RTE_MASK)) /* edge: a masked edge is lost */
		deliver(io, pin);
	pthread_mutex_unlock(&io->lock);
}

void x86_ioapic_eoi(struct x86_ioapic *io, uint8_t vector)
{
	pthread_mutex_lock(&io->lock);
	io->stats.eois++;
	for (unsigned int pin = 0; pin < X86_IOAPIC_PINS; pin++) {
		uint64_t r = io->rte[pin];

		if ((r & RTE_VECTOR) != vector || !(r & RTE_LEVEL))
			continue;
		/* a line KVM delivers by irqfd (VFIO INTx): its source re-arms on the resamplefd */
		if (irq_resample_notify(io->vm, pin) > 0)
			io->stats.resamples++;
		io->rte[pin] &= ~RTE_REMOTE_IRR;
		level_check(io, pin);
	}
	pthread_mutex_unlock(&io->lock);
}

static void rte_write(struct x86_ioapic *io, unsigned int pin, bool high, uint32_t val)
{
	uint64_t old = io->rte[pin], r;

	if (high)
		r = (old & 0xffffffffULL) | (uint64_t)val << 32;
	else
		r = (old & ~0xffffffffULL) | (val & ~RTE_RO) | (old & RTE_RO);
	/* switching a pin to edge clears its remote IRR: Linux's way to EOI an IOAPIC without an
	 * EOI register when the LAPIC's broadcast did not reach it */
	if (!(r & RTE_LEVEL))
		r &= ~RTE_REMOTE_IRR;
	io->rte[pin] = r;
	route_pin(io, pin);
	/* unmasked: a level line that stayed high meanwhile fires now, and an irqfd line's source
	 * re-checks it (its interrupt may have come while the pin had no route) */
	if ((old & RTE_MASK) && !(r & RTE_MASK) && (r & RTE_LEVEL) &&
	    irq_resample_notify(io->vm, pin) > 0)
		io->stats.resamples++;
	level_check(io, pin);
}

static uint32_t reg_read(struct x86_ioapic *io, uint32_t reg)
{
	switch (reg) {
	case REG_ID:
	case REG_ARB:
		return (uint32_t)io->id << 24;
	case REG_VER:
		return IOAPIC_VERSION | (X86_IOAPIC_PINS - 1) << 16;
	default:
		if (reg >= REG_RTE && reg < REG_RTE + 2 * X86_IOAPIC_PINS) {
			uint64_t r = io->rte[(reg - REG_RTE) / 2];

			return (reg & 1) ? (uint32_t)(r >> 32) : (uint32_t)r;
		}
		return 0;
	}
}

static void reg_write(struct x86_ioapic *io, uint32_t reg, uint32_t val)
{
	if (reg == REG_ID)
		io->id = (val >> 24) & 0xf;
	else if (reg >= REG_RTE && reg < REG_RTE + 2 * X86_IOAPIC_PINS)
		rte_write(io, (reg - REG_RTE) / 2, reg & 1, val);
	else
		io->stats.bad_accesses++; /* VER and ARB are read-only; the rest is nothing */
}

void x86_ioapic_mmio(void *opaque, uint64_t off, uint8_t *data, uint32_t len, bool is_write)
{
	struct x86_ioapic *io = opaque;
	uint32_t v = 0;

	if (len > 4)
		len = 4;
	if (is_write)
		memcpy(&v, data, len);
	pthread_mutex_lock(&io->lock);
	if (off == X86_IOAPIC_IOREGSEL) { /* 8 bits wide; any access size reaches them */
		if (is_write)
			io->regsel = v & 0xff;
		else
			v = io->regsel;
	} else if (off == X86_IOAPIC_IOWIN && len == 4) {
		if (is_write)
			reg_write(io, io->regsel, v);
		else
			v = reg_read(io, io->regsel);
	} else {
		io->stats.bad_accesses++;
		v = 0;
	}
	pthread_mutex_unlock(&io->lock);
	if (!is_write)
		memcpy(data, &v, len);
}

uint64_t x86_ioapic_rte(struct x86_ioapic *io, unsigned int pin)
{
	uint64_t r;

	if (pin >= X86_IOAPIC_PINS)
		return 0;
	pthread_mutex_lock(&io->lock);
	r = io->rte[pin];
	pthread_mutex_unlock(&io->lock);
	return r;
}

void x86_ioapic_summary(struct x86_ioapic *io, FILE *f)
{
	pthread_mutex_lock(&io->lock);
	fprintf(f, "vmm: ioapic (userspace, split irqchip): %llu interrupts sent, %llu EOI exits, "
		"%llu resamples, %llu route commits, %llu refused entries, %llu bad accesses\n",
		(unsigned long long)io->stats.delivered, (unsigned long long)io->stats.eois,
		(unsigned long long)io->stats.resamples, (unsigned long long)io->stats.route_commits,
		(unsigned long long)io->stats.refused, (unsigned long long)io->stats.bad_accesses);
	pthread_mutex_unlock(&io->lock);
}
