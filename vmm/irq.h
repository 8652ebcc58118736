/* SPDX-License-Identifier: MIT */
/* The GSI routing table vmm owns and commits whole; irqfds, ioeventfds and lines. */
#ifndef VMM_IRQ_H
#define VMM_IRQ_H

#include <linux/kvm.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>

struct vm;

#define IRQ_MAX_ROUTES 1024

struct irq_routing {
	pthread_mutex_t lock;
	struct kvm_irq_routing_entry e[IRQ_MAX_ROUTES];
	int nr;
	uint32_t next_gsi;
	atomic_uint_fast64_t commits;
};

/* Starts the table with identity irqchip routes for GSIs [0, n) (on arm64: SPI n = INTID 32 + n). */
int irq_routing_init(struct vm *vm, uint32_t nr_irqchip_gsis);
/* The same with the routes on KVM irqchip id chip (x86: KVM_IRQCHIP_IOAPIC). */
int irq_routing_init_chip(struct vm *vm, uint32_t nr_irqchip_gsis, uint32_t chip);
int irq_gsi_alloc(struct vm *vm);
void irq_msi_entry(const struct vm *vm, struct kvm_irq_routing_entry *e, uint32_t gsi, uint64_t addr,
		   uint32_t data, uint32_t devid);
/* Adds, replaces (e != NULL) or removes (e == NULL) the route of gsi in the table only. */
int irq_table_set(struct irq_routing *rt, uint32_t gsi, const struct kvm_irq_routing_entry *e);
/* irq_table_set(), then commits the whole table with KVM_SET_GSI_ROUTING. */
int irq_route_update(struct vm *vm, uint32_t gsi, const struct kvm_irq_routing_entry *e);
int irq_irqfd(struct vm *vm, int fd, uint32_t gsi, int resample_fd, bool assign);
int irq_ioeventfd(struct vm *vm, uint64_t addr, uint32_t len, int fd, bool assign);
/* Drives an interrupt line (KVM_IRQ_LINE's encoding, chosen by the board). */
int irq_line(struct vm *vm, uint32_t irq, bool level);

#endif
