// SPDX-License-Identifier: MIT
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "tests/unit/fake_kvm.h"
#include "core/kvm_seam.h"
#include "core/bus.h"
#include "core/mem.h"
#include "core/irq.h"
#include "core/vm.h"

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
	return record(ctx, (struct fake_call){ .op = assign ? FK_IRQFD_ASSIGN : FK_IRQFD_DEASSIGN,
					       .gsi = gsi, .fd = fd, .resample_fd = resample_fd });
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
	struct fake_kvm *fk = ctx;

	if (fk->on_memslot)
		fk->on_memslot(fk->on_memslot_arg, slot, gpa, size);
	int r = record(fk, (struct fake_call){ .op = FK_SET_MEMSLOT, .addr = gpa, .size = size,
					       .slot = slot, .flags = flags });

	/* as KVM: a slot may not overlap another one (a BAR the guest put over RAM) */
	for (unsigned int i = 0; r == 0 && size && i < FAKE_MAX_SLOTS; i++)
		if (i != slot && fk->slot[i].size && gpa < fk->slot[i].gpa + fk->slot[i].size &&
		    fk->slot[i].gpa < gpa + size)
			r = -EEXIST;
	if (r == 0 && slot < FAKE_MAX_SLOTS)
		fk->slot[slot] = (struct fake_slot){ gpa, size, hva, flags };
	return r;
}

static int fk_coalesced_mmio(void *ctx, uint64_t addr, uint32_t size, bool assign)
{
	struct fake_kvm *fk = ctx;
	int r = record(fk, (struct fake_call){ .op = assign ? FK_COALESCED_ASSIGN : FK_COALESCED_DEASSIGN,
					       .addr = addr, .size = size });

	if (r < 0)
		return r;
	if (assign) {
		if (fk->nr_zones == FAKE_MAX_ZONES)
			return -ENOSPC;
		fk->zone[fk->nr_zones].addr = addr;
		fk->zone[fk->nr_zones++].size = size;
		return 0;
	}
	for (int i = 0; i < fk->nr_zones; i++) /* KVM drops every zone inside the range */
		if (fk->zone[i].addr >= addr && fk->zone[i].addr + fk->zone[i].size <= addr + size)
			fk->zone[i--] = fk->zone[--fk->nr_zones];
	return 0;
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

static int fk_signal_msi(void *ctx, uint64_t addr, uint32_t data)
{
	return record(ctx, (struct fake_call){ .op = FK_SIGNAL_MSI, .addr = addr, .irq = data });
}

static int fk_vcpu_msr(void *ctx, int fd, uint32_t index, uint64_t *data, bool write)
{
	struct fake_kvm *fk = ctx;
	int r = record(fk, (struct fake_call){ .op = write ? FK_MSR_SET : FK_MSR_GET, .fd = fd, .msr = index,
					       .size = write ? *data : 0 });
	int i;

	if (r < 0)
		return r;
	for (i = 0; i < fk->nr_msrs; i++)
		if (fk->msr[i].fd == fd && fk->msr[i].index == index)
			break;
	if (!write) {
		*data = i < fk->nr_msrs ? fk->msr[i].val : fk->msr_reset;
		return 0;
	}
	if (i == fk->nr_msrs) {
		if (i == FAKE_MAX_MSRS)
			return -ENOSPC;
		fk->nr_msrs++;
	}
	fk->msr[i].fd = fd;
	fk->msr[i].index = index;
	fk->msr[i].val = *data;
	return 0;
}

static int fk_fd_ioctl(void *ctx, int fd, unsigned long req, void *data)
{
	struct fake_kvm *fk = ctx;
	int r = record(fk, (struct fake_call){ .op = FK_FD_IOCTL, .fd = fd, .req = req });

	if (r < 0 || !fk->on_ioctl)
		return r;
	return fk->on_ioctl(fk->on_ioctl_arg, fd, req, data);
}

static const struct kvm_seam_ops fake_ops = {
	.irqfd = fk_irqfd,
	.ioeventfd = fk_ioeventfd,
	.set_gsi_routing = fk_set_gsi_routing,
	.set_memslot = fk_set_memslot,
	.irq_line = fk_irq_line,
	.coalesced_mmio = fk_coalesced_mmio,
	.signal_msi = fk_signal_msi,
	.vcpu_msr = fk_vcpu_msr,
	.fd_ioctl = fk_fd_ioctl,
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

const struct fake_slot *fake_kvm_slot_at(const struct fake_kvm *fk, uint64_t gpa, uint64_t len)
{
	for (int i = 0; i < FAKE_MAX_SLOTS; i++) {
		const struct fake_slot *s = &fk->slot[i];

		if (s->size && gpa >= s->gpa && gpa - s->gpa < s->size && len <= s->size - (gpa - s->gpa))
			return s;
	}
	return NULL;
}

/* KVM's producer side of the ring (virt/kvm/coalesced_mmio.c's behaviour): false when full. */
static bool ring_push(struct mmio_ring *r, uint64_t gpa, const uint8_t *data, uint32_t len)
{
	struct kvm_coalesced_mmio_ring *ring = r->ring;
	uint32_t last = __atomic_load_n(&ring->last, __ATOMIC_RELAXED);
	uint32_t first = __atomic_load_n(&ring->first, __ATOMIC_ACQUIRE);

	if (last >= r->max || (first + r->max - last - 1) % r->max == 0) /* one entry stays unused */
		return false;
	struct kvm_coalesced_mmio *e = &ring->coalesced_mmio[last];

	e->phys_addr = gpa;
	e->len = len;
	e->pio = 0;
	memcpy(e->data, data, len);
	__atomic_store_n(&ring->last, (last + 1) % r->max, __ATOMIC_RELEASE);
	return true;
}

int fake_kvm_guest_access(struct fake_kvm *fk, struct vm *vm, uint64_t gpa, uint8_t *data, uint32_t len,
			  bool is_write)
{
	const struct fake_slot *s = fake_kvm_slot_at(fk, gpa, len);

	if (!is_write && s) {
		memcpy(data, s->hva + (gpa - s->gpa), len);
		return 0;
	}
	if (is_write && s && !(s->flags & KVM_MEM_READONLY)) {
		memcpy(s->hva + (gpa - s->gpa), data, len);
		return 0;
	}
	for (int i = 0; is_write && vm->coalesced.ring && i < fk->nr_zones; i++)
		if (gpa >= fk->zone[i].addr && gpa + len <= fk->zone[i].addr + fk->zone[i].size &&
		    ring_push(&vm->coalesced, gpa, data, len))
			return 0;
	mmio_ring_drain(&vm->coalesced);
	bus_access(&vm->mmio, gpa, data, len, is_write);
	return 1;
}

int fake_vm_init(struct vm *vm, struct fake_kvm *fk, size_t ram_size, uint32_t nr_irqchip)
{
	memset(vm, 0, sizeof(*vm));
	fake_kvm_reset(fk);
	vm->fd = vm->kvm_fd = vm->defer_fd = -1;
	atomic_init(&vm->exit_code, -1);
	pthread_mutex_init(&vm->mem_lock, NULL);
	log_limit_init(&vm->log_limit, LOG_LIMIT_BURST, LOG_LIMIT_WINDOW_MS);
	bus_init(&vm->mmio);
	bus_init(&vm->pio);
	vm->kvm = fake_kvm_seam(fk);
	mmio_ring_init(&vm->coalesced, NULL, 0, vm->kvm); /* a test may give it a ring */
	vm->msi_needs_devid = true;
	if (ram_size) {
		uint8_t *ram = aligned_alloc(4096, ram_size);

		if (!ram)
			return -ENOMEM;
		memset(ram, 0, ram_size);
		vm->mem[0] = (struct mem_region){ FAKE_RAM_BASE, ram_size, ram, 0 };
		fk->slot[0] = (struct fake_slot){ FAKE_RAM_BASE, ram_size, ram, 0 };
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
