// SPDX-License-Identifier: MIT
/*
 * The split irqchip's userspace IOAPIC driven by a hostile guest: each op is an MMIO read or
 * write of any size at any offset of its page, a device line going up or down, or an EOI of any
 * vector. After every op the MSI routes of GSIs 0-23 must be exactly what the redirection entries
 * say (x86_ioapic_msi), nothing else may be routed, and every message sent must be a LAPIC MSI
 * with a delivery mode the IOAPIC passes on.
 */
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <unistd.h>

#include "tests/fuzz/fuzz.h"
#include "core/irq.h"
#include "x86/x86.h"

static struct vm vm;
static struct fake_kvm fk;

static void check(struct x86_ioapic *io, int from)
{
	for (unsigned int pin = 0; pin < X86_IOAPIC_PINS; pin++) {
		const struct kvm_irq_routing_entry *e = fake_kvm_route(&fk, pin);
		uint64_t addr;
		uint32_t data;
		bool want = x86_ioapic_msi(io->rte[pin], &addr, &data);

		if (want != (e != NULL))
			abort(); /* a masked pin routed, or an unmasked one not */
		if (e && (e->type != KVM_IRQ_ROUTING_MSI || e->u.msi.address_lo != (uint32_t)addr ||
			  e->u.msi.data != data))
			abort(); /* a stale route */
	}
	for (int i = 0; i < fk.nr_routes; i++)
		if (fk.table[i].gsi >= X86_IOAPIC_PINS)
			abort();
	for (int i = from; i < fk.nr; i++) {
		const struct fake_call *c = &fk.call[i];
		unsigned int dm = (c->irq >> 8) & 7;

		if (c->op != FK_SIGNAL_MSI)
			continue;
		if ((c->addr & ~0xfffffULL) != 0xfee00000ULL || (dm != 0 && dm != 1 && dm != 4) ||
		    (dm != 4 && (c->irq & 0xff) < 16))
			abort();
	}
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct fz z = { data, size };
	struct x86_ioapic io;
	int rfd = eventfd(0, EFD_NONBLOCK), efd = eventfd(0, EFD_NONBLOCK);

	if (rfd < 0 || efd < 0 || fake_vm_init(&vm, &fk, 0, 0) < 0 ||
	    irq_routing_init_reserved(&vm, X86_IOAPIC_PINS) < 0)
		abort();
	vm.msi_needs_devid = false;
	vm.routing.user_resample = true;
	x86_ioapic_init(&io, &vm, 1);
	/* a VFIO-like level irqfd on pin 16, whose resamplefd the EOIs signal */
	if (irq_irqfd(&vm, efd, 16, rfd, true) < 0)
		abort();
	while (z.n) {
		uint8_t op = fz_u8(&z), buf[8] = { 0 };
		int from = fk.nr;

		switch (op & 3) {
		case 0: /* read: any offset of the page, 1/2/4/8 bytes */
		case 1: { /* write */
			uint32_t off = fz_u16(&z) % X86_IOAPIC_SIZE, len = 1u << (op >> 6);
			uint64_t v = fz_u64(&z);

			memcpy(buf, &v, sizeof(v));
			x86_ioapic_mmio(&io, off, buf, len, op & 1);
			break;
		}
		case 2: /* a line (pins past the table included) */
			x86_ioapic_set_irq(&io, fz_u8(&z) % (X86_IOAPIC_PINS + 4), op & 0x80);
			break;
		case 3:
			x86_ioapic_eoi(&io, fz_u8(&z));
			break;
		}
		check(&io, from);
		if (fk.nr > FAKE_MAX_CALLS - 64) /* keep the call log from filling */
			fk.nr = 0;
	}
	irq_irqfd(&vm, efd, 16, -1, false);
	x86_ioapic_destroy(&io);
	close(rfd);
	close(efd);
	return 0;
}
