// SPDX-License-Identifier: MIT
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "tests/unit/fake_kvm.h"
#include "vmm/kvm_seam.h"
#include "vmm/bus.h"
#include "vmm/mem.h"
#include "vmm/irq.h"
#include "vmm/vm.h"

static int record(struct fake_kvm *fk, struct fake_call c)
{
	if (fk->nr < FAKE_MAX_CALLS)
		fk->call[fk->nr++] = c;
	if (fk->fail_op == c.op && fk->fail_nth > 0 && --fk->fail_nth == 0)
		return -(fk->fail_errno ? fk->fail_errno : EINVAL);
	return 0;
}

static int fk_irqfd(void *ctx, int fd, uint32_t gsi, int resample_fd, bool assign)
{
	(void)resample_fd;
	return record(ctx, (struct fake_call){ .op = assign ? FK_IRQFD_ASSIGN : FK_IRQFD_DEASSIGN,
					       .gsi = gsi, .fd = fd });
}

static int fk_ioeventfd(void *ctx, uint64_t addr, uint32_t len, int fd, bool pio, bool assign)
{
	(void)len;
	(void)pio;
	return record(ctx, (struct fake_call){ .op = assign ? FK_IOEVENTFD_ASSIGN : FK_IOEVENTFD_DEASSIGN,
					       .addr = addr, .fd = fd });
}

static int fk_set_gsi_routing(void *ctx, const struct kvm_irq_routing *t)
{
	struct fake_kvm *fk = ctx;

	if (fk->on_commit)
		fk->on_commit(fk->on_commit_arg);
	int r = record(fk, (struct fake_call){ .op = FK_SET_GSI_ROUTING });

	if (r == 0) {
		fk->nr_routes = t->nr < IRQ_MAX_ROUTES ? (int)t->nr : IRQ_MAX_ROUTES;
		memcpy(fk->table, t->entries, fk->nr_routes * sizeof(fk->table[0]));
		fk->commits++;
	}
	return r;
}

static int fk_set_memslot(void *ctx, uint32_t slot, uint64_t gpa, uint64_t size, void *hva,
			  uint32_t flags)
{
	(void)slot;
	(void)hva;
	(void)flags;
	return record(ctx, (struct fake_call){ .op = FK_SET_MEMSLOT, .addr = gpa, .size = size });
}

static int fk_irq_line(void *ctx, uint32_t irq, bool level)
{
	struct fake_kvm *fk = ctx;
	int r = record(fk, (struct fake_call){ .op = FK_IRQ_LINE, .irq = irq, .level = level });

	if (r == 0 && irq < 1024) {
		if (level && !fk->line[irq])
			fk->line_raises++;
		fk->line[irq] = level;
	}
	return r;
}

static const struct kvm_seam_ops fake_ops = {
	.irqfd = fk_irqfd,
	.ioeventfd = fk_ioeventfd,
	.set_gsi_routing = fk_set_gsi_routing,
	.set_memslot = fk_set_memslot,
	.irq_line = fk_irq_line,
};

struct kvm_seam fake_kvm_seam(struct fake_kvm *fk)
{
	return (struct kvm_seam){ &fake_ops, fk };
}

void fake_kvm_reset(struct fake_kvm *fk)
{
	memset(fk, 0, sizeof(*fk));
}

const struct kvm_irq_routing_entry *fake_kvm_route(const struct fake_kvm *fk, uint32_t gsi)
{
	for (int i = 0; i < fk->nr_routes; i++)
		if (fk->table[i].gsi == gsi)
			return &fk->table[i];
	return NULL;
}

int fake_kvm_count(const struct fake_kvm *fk, enum fake_op op)
{
	int n = 0;

	for (int i = 0; i < fk->nr; i++)
		n += fk->call[i].op == op;
	return n;
}

int fake_kvm_find(const struct fake_kvm *fk, enum fake_op op, int from)
{
	for (int i = from < 0 ? 0 : from; i < fk->nr; i++)
		if (fk->call[i].op == op)
			return i;
	return -1;
}

int fake_vm_init(struct vm *vm, struct fake_kvm *fk, size_t ram_size, uint32_t nr_irqchip)
{
	memset(vm, 0, sizeof(*vm));
	fake_kvm_reset(fk);
	vm->fd = vm->kvm_fd = -1;
	atomic_init(&vm->exit_code, -1);
	pthread_mutex_init(&vm->mem_lock, NULL);
	bus_init(&vm->mmio);
	bus_init(&vm->pio);
	vm->kvm = fake_kvm_seam(fk);
	vm->msi_needs_devid = true;
	if (ram_size) {
		uint8_t *ram = aligned_alloc(4096, ram_size);

		if (!ram)
			return -ENOMEM;
		memset(ram, 0, ram_size);
		vm->mem[0] = (struct mem_region){ FAKE_RAM_BASE, ram_size, ram, 0 };
		vm->nr_mem = 1;
		vm->memslot_used[0] = 1;
	}
	return irq_routing_init(vm, nr_irqchip);
}

void fake_vm_free(struct vm *vm)
{
	for (int i = 0; i < vm->nr_mem; i++)
		free(vm->mem[i].hva);
	vm->nr_mem = 0;
}
