// SPDX-License-Identifier: MIT
/*
 * The VM's GSI routing table, irqfds and ioeventfds. KVM_SET_GSI_ROUTING replaces the whole table,
 * so vmm keeps the table itself: the irqchip (SPI) routes the board starts with stay in it when MSI
 * routes come and go, and every change is committed whole. MSI routes carry the requester ID as
 * devid whenever the VM has a vITS (KVM_CAP_MSI_DEVID).
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>

#include "core/hot.h"
#include "core/log.h"
#include "core/irq.h"
#include "core/vm.h"

int irq_routing_init(struct vm *vm, uint32_t nr_irqchip_gsis)
{
	return irq_routing_init_chip(vm, nr_irqchip_gsis, 0);
}

int irq_routing_init_chip(struct vm *vm, uint32_t nr_irqchip_gsis, uint32_t chip)
{
	struct irq_routing *rt = &vm->routing;

	pthread_mutex_init(&rt->lock, NULL);
	rt->nr = 0;
	rt->next_gsi = nr_irqchip_gsis;
	for (uint32_t i = 0; i < nr_irqchip_gsis; i++) {
		if (rt->nr == IRQ_MAX_ROUTES)
			return -ENOSPC;
		rt->e[rt->nr++] = (struct kvm_irq_routing_entry){
			.gsi = i, .type = KVM_IRQ_ROUTING_IRQCHIP, .u.irqchip = { .irqchip = chip, .pin = i },
		};
	}
	return 0;
}

int irq_routing_init_reserved(struct vm *vm, uint32_t nr_reserved_gsis)
{
	int r = irq_routing_init_chip(vm, 0, 0);

	vm->routing.next_gsi = nr_reserved_gsis;
	return r;
}

int irq_gsi_alloc(struct vm *vm)
{
	struct irq_routing *rt = &vm->routing;
	int gsi;

	pthread_mutex_lock(&rt->lock);
	gsi = rt->next_gsi < IRQ_MAX_ROUTES ? (int)rt->next_gsi++ : -ENOSPC;
	pthread_mutex_unlock(&rt->lock);
	if (gsi < 0)
		pr_err("irq: out of GSIs (%d routes)", IRQ_MAX_ROUTES);
	return gsi;
}

void irq_msi_entry(const struct vm *vm, struct kvm_irq_routing_entry *e, uint32_t gsi, uint64_t addr,
		   uint32_t data, uint32_t devid)
{
	memset(e, 0, sizeof(*e));
	e->gsi = gsi;
	e->type = KVM_IRQ_ROUTING_MSI;
	e->u.msi.address_lo = (uint32_t)addr;
	e->u.msi.address_hi = (uint32_t)(addr >> 32);
	e->u.msi.data = data;
	if (vm->msi_needs_devid) {
		e->flags = KVM_MSI_VALID_DEVID;
		e->u.msi.devid = devid;
	}
}

static int irq_commit_locked(struct vm *vm)
{
	struct irq_routing *rt = &vm->routing;
	struct kvm_irq_routing *t = malloc(sizeof(*t) + rt->nr * sizeof(t->entries[0]));

	if (!t)
		return -ENOMEM;
	t->nr = rt->nr;
	t->flags = 0;
	memcpy(t->entries, rt->e, rt->nr * sizeof(t->entries[0]));
	int r = vm->kvm.ops->set_gsi_routing(vm->kvm.ctx, t);

	free(t);
	if (r == 0)
		atomic_fetch_add(&rt->commits, 1);
	return r;
}

int irq_table_set(struct irq_routing *rt, uint32_t gsi, const struct kvm_irq_routing_entry *e)
{
	int i;

	for (i = 0; i < rt->nr && rt->e[i].gsi != gsi; i++)
		;
	if (!e) { /* remove */
		if (i == rt->nr)
			return -ENOENT;
		memmove(&rt->e[i], &rt->e[i + 1], (rt->nr - i - 1) * sizeof(rt->e[0]));
		rt->nr--;
	} else if (i < rt->nr) {
		rt->e[i] = *e;
		rt->e[i].gsi = gsi;
	} else if (rt->nr < IRQ_MAX_ROUTES) {
		rt->e[rt->nr] = *e;
		rt->e[rt->nr++].gsi = gsi;
	} else {
		return -ENOSPC;
	}
	return 0;
}

int irq_route_update(struct vm *vm, uint32_t gsi, const struct kvm_irq_routing_entry *e)
{
	struct irq_routing *rt = &vm->routing;

	pthread_mutex_lock(&rt->lock);
	int r = irq_table_set(rt, gsi, e);

	if (r == 0)
		r = irq_commit_locked(vm);
	pthread_mutex_unlock(&rt->lock);
	return r;
}

/* The user_resample table: gsi's entry set to fd (-1 removes it). Routing lock held. */
static int resample_set(struct irq_routing *rt, uint32_t gsi, int fd)
{
	int i;

	for (i = 0; i < rt->nr_resample && rt->resample[i].gsi != gsi; i++)
		;
	if (fd < 0) {
		if (i < rt->nr_resample)
			rt->resample[i] = rt->resample[--rt->nr_resample];
		return 0;
	}
	if (i == rt->nr_resample) {
		if (rt->nr_resample == IRQ_MAX_USER_RESAMPLE) {
			pr_err("irq: more than %d level irqfds to resample", IRQ_MAX_USER_RESAMPLE);
			return -ENOSPC;
		}
		rt->nr_resample++;
	}
	rt->resample[i] = (struct irq_resample){ gsi, fd };
	return 0;
}

int irq_irqfd(struct vm *vm, int fd, uint32_t gsi, int resample_fd, bool assign)
{
	struct irq_routing *rt = &vm->routing;
	int r;

	if (!rt->user_resample || (assign && resample_fd < 0))
		return vm->kvm.ops->irqfd(vm->kvm.ctx, fd, gsi, resample_fd, assign);
	/* the irqfd itself without KVM_IRQFD_FLAG_RESAMPLE; vmm keeps the resamplefd */
	pthread_mutex_lock(&rt->lock);
	r = resample_set(rt, gsi, assign ? resample_fd : -1);
	pthread_mutex_unlock(&rt->lock);
	if (r < 0)
		return r;
	r = vm->kvm.ops->irqfd(vm->kvm.ctx, fd, gsi, -1, assign);
	if (r < 0 && assign) {
		pthread_mutex_lock(&rt->lock);
		resample_set(rt, gsi, -1);
		pthread_mutex_unlock(&rt->lock);
	}
	return r;
}

int irq_resample_notify(struct vm *vm, uint32_t gsi)
{
	struct irq_routing *rt = &vm->routing;
	int fd = -1;

	pthread_mutex_lock(&rt->lock);
	for (int i = 0; i < rt->nr_resample; i++)
		if (rt->resample[i].gsi == gsi)
			fd = rt->resample[i].fd;
	/* written under the lock: a deassign cannot close the fd in between */
	if (fd >= 0 && eventfd_write(fd, 1) == 0)
		atomic_fetch_add(&rt->resample_notifies, 1);
	pthread_mutex_unlock(&rt->lock);
	return fd >= 0;
}

int irq_ioeventfd(struct vm *vm, uint64_t addr, uint32_t len, int fd, bool assign)
{
	return vm->kvm.ops->ioeventfd(vm->kvm.ctx, addr, len, fd, false, assign);
}

VMM_HOT int irq_line(struct vm *vm, uint32_t irq, bool level)
{
	return vm->kvm.ops->irq_line(vm->kvm.ctx, irq, level);
}
